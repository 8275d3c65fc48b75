//! `kubectl taint-evict profile`, and `audit --profile-from DUMP` and `--profile-from-cluster`: a
//! cluster's profile taken from a dump (read as `plan -f` reads one) or from the live cluster (one
//! LIST of nodes, one of each control-plane pod, `/version`), printed as the YAML `audit --profile`
//! reads (docs/audit.md, "The cluster's profile").

use std::io::{BufWriter, Write};

use crate::cluster::NodeSelection;
use crate::config::{Input, ProfileConfig};
use crate::decode::api_server;
use crate::decode::cluster_profile::{Shown, Taken, take};
use crate::decode::controller_manager::Found;
use crate::engine::lifecycle::{Flags, Settings, Source};
use crate::error::{Error, Result};
use crate::output::profile::{ProfileText, write_profile};

use super::prepare::input::{Want, check_dump, load};

/// `kubectl taint-evict profile`.
///
/// # Errors
/// A dump that does not read, or a cluster that cannot be read, as `plan` says them.
pub fn profile(config: &ProfileConfig) -> Result<()> {
    let (taken, source) = taken(&config.input)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    write_profile(&text(&taken, &source), &mut out)?;
    out.flush()?;
    Ok(())
}

/// The profile `input` gives (a dump when it names a file, else the live cluster), the warnings of
/// its reading said, and where it came from (the dump's path, the server's address).
///
/// # Errors
/// As [`profile`].
pub fn taken(input: &Input) -> Result<(Taken, String)> {
    let (taken, source) = match input.file.as_deref() {
        Some(_) => from_dump(input)?,
        None => from_cluster(input)?,
    };
    for warning in &taken.warnings {
        eprintln!("warning: {warning}");
    }
    Ok((taken, source))
}

/// From a dump, read as `plan -f` reads it: a dump without nodes, or one that does not read, is an
/// error.
fn from_dump(input: &Input) -> Result<(Taken, String)> {
    let (loaded, _) = load(input, Want::Nodes(&NodeSelection::All), &|_, _| false)?;
    check_dump(&loaded, true)?;
    let health = match loaded.health {
        Some(Ok(health)) => health,
        Some(Err(source)) => return Err(Error::BadDump { path: loaded.origin, source }),
        None => return Err(Error::IncompleteDump { path: loaded.origin, kind: "Node" }),
    };
    let zones: Vec<String> = health.nodes.iter().map(|node| node.zone.name().to_owned()).collect();
    let found = |pod: Option<(String, Vec<String>)>| match pod {
        Some((name, args)) => Found::Pod { name, args },
        None => Found::NoPod,
    };
    let (controller_manager, api_server) = (found(health.controller_manager), found(health.api_server));
    let shown = Shown {
        zones: &zones,
        minor: loaded.minor,
        live: false,
        controller_manager: &controller_manager,
        api_server: &api_server,
    };
    Ok((take(&shown), loaded.origin))
}

/// From the live cluster: connected as every command connects, then one LIST of nodes, one of each
/// control-plane pod, and `/version`.
fn from_cluster(input: &Input) -> Result<(Taken, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    runtime.block_on(async {
        let mut connection = crate::cluster::connect(&input.connect).await?;
        if input.quorum_read {
            connection.read = crate::cluster::ReadFrom::Quorum;
        }
        let read = crate::cluster::snapshot::read_profile(&connection).await?;
        let shown = Shown {
            zones: &read.zones,
            minor: read.minor,
            live: true,
            controller_manager: &read.controller_manager,
            api_server: &read.api_server,
        };
        Ok((take(&shown), connection.server.clone()))
    })
}

/// The profile to write: each part with where it came from.
#[must_use]
pub fn text<'a>(taken: &'a Taken, source: &'a str) -> ProfileText<'a> {
    let profile = &taken.profile;
    let part = |origin: &'a std::result::Result<String, String>| match origin {
        Ok(from) => Ok(from.as_str()),
        Err(why) => Err(why.as_str()),
    };
    let kube_version = match (profile.kube_version, part(&taken.kube_version)) {
        (Some(minor), Ok(from)) => Ok((minor, from)),
        (_, Err(why)) => Err(why),
        (None, Ok(_)) => Err("not read"),
    };
    // The settings its pod sets, in the order the documents list them, each by its flag's name.
    let settings = match (profile.settings.as_ref(), part(&taken.settings)) {
        (Some(given), Ok(from)) => {
            let read = Settings::resolve(Flags::defaults_for(crate::config::DEFAULT_MINOR), &[(Source::Pod, given)]);
            let set = read.each().into_iter().filter(|(_, _, source)| *source == Source::Pod);
            Ok((set.map(|(name, value, _)| (name, value)).collect(), from))
        }
        (_, Err(why)) => Err(why),
        (None, Ok(_)) => Err("not read"),
    };
    let admission = match (profile.admission, part(&taken.admission)) {
        (Some(admission), Ok(from)) => {
            let [not_ready, unreachable] = taken.admission_given;
            Ok((
                [
                    (api_server::NOT_READY, admission.not_ready_seconds, not_ready),
                    (api_server::UNREACHABLE, admission.unreachable_seconds, unreachable),
                ],
                from,
            ))
        }
        (_, Err(why)) => Err(why),
        (None, Ok(_)) => Err("not read"),
    };
    let zones = match (profile.zones.as_ref(), part(&taken.zones)) {
        (Some(zones), Ok(from)) => Ok((zones, from)),
        (_, Err(why)) => Err(why),
        (None, Ok(_)) => Err("not read"),
    };
    ProfileText { source, kube_version, settings, admission, zones }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::decode::profile::read_profile;

    fn written(taken: &Taken) -> String {
        let mut out = Vec::new();
        write_profile(&text(taken, "dump.json"), &mut out).expect("written");
        String::from_utf8(out).expect("UTF-8")
    }

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn what_is_written_reads_back_as_the_profile_taken() {
        let zones: Vec<String> = ["", "1", "eu-west-1a", "eu-west-1a", "yes", "a b"].map(str::to_owned).to_vec();
        let manager = Found::Pod {
            name: "kube-controller-manager-cp".into(),
            args: words(
                "kube-controller-manager --node-monitor-grace-period=1m30s --node-monitor-period=500ms \
                 --node-eviction-rate=0.1 --secondary-node-eviction-rate=0.01 --unhealthy-zone-threshold=0.55 \
                 --large-cluster-size-threshold=20 --kube-api-qps=33.3 --kube-api-burst=7 \
                 --node-startup-grace-period=1000000001ns",
            ),
        };
        let api = Found::Pod {
            name: "kube-apiserver-cp".into(),
            args: words("kube-apiserver --default-not-ready-toleration-seconds=-1"),
        };
        for (minor, manager, api) in [
            (Some(33), &manager, &api),
            (None, &Found::NoPod, &Found::Unreadable("forbidden".into())),
            (Some(29), &Found::Pod { name: "kcm".into(), args: words("kube-controller-manager") }, &Found::NoPod),
        ] {
            let shown = Shown { zones: &zones, minor, live: true, controller_manager: manager, api_server: api };
            let taken = take(&shown);
            let text = written(&taken);
            let read = read_profile(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
            assert_eq!(read, taken.profile, "{text}");
        }
        // Each of the nine settings the pod sets is written, durations exactly.
        let taken =
            take(&Shown { zones: &zones, minor: Some(33), live: true, controller_manager: &manager, api_server: &api });
        let given = taken.profile.settings.expect("read");
        assert_eq!(given.node_monitor_grace_period, Some(Duration::from_secs(90)));
        assert_eq!(given.node_startup_grace_period, Some(Duration::from_nanos(1_000_000_001)));
        assert!(written(&taken).contains("  node-monitor-grace-period: 90s\n"));
    }
}
