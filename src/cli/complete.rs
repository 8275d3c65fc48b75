//! Shell completion: scripts generated from the clap definition, and the line protocol kubectl
//! (>= 1.26) speaks with `kubectl_complete-taint_evict` to complete plugin arguments.

use std::io::Write;

use clap::{Arg, Command as ClapCommand, CommandFactory};
use clap_complete::Shell;

use super::args::{Cli, CompletionShell};
use crate::error::Result;

/// The hidden first argument that switches to kubectl's completion protocol (kept out of the clap
/// definition so no completion script or help page offers it).
pub const COMPLETE: &str = "__complete";

/// The binary's file name, which the generated scripts complete.
pub const BIN: &str = "kubectl-taint_evict";

/// The helper kubectl runs to complete `kubectl taint-evict …`.
pub const KUBECTL_HELPER: &str = "#!/usr/bin/env sh\n# kubectl (>= 1.26) runs this to complete `kubectl taint-evict ...`.\n# Install it on PATH next to kubectl-taint_evict.\nexec kubectl-taint_evict __complete \"$@\"\n";

/// Cobra's `ShellCompDirectiveNoFileComp`: complete nothing but the candidates.
const NO_FILE_COMPLETION: u8 = 4;
/// Cobra's default directive: the shell may complete file names.
const FILE_COMPLETION: u8 = 0;

/// Writes the completion script for `shell` into `out`.
pub fn write_script(shell: CompletionShell, out: &mut impl Write) -> std::io::Result<()> {
    let shell = match shell {
        CompletionShell::Kubectl => return out.write_all(KUBECTL_HELPER.as_bytes()),
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN, &mut script);
    if shell == Shell::Bash {
        // clap_complete names the states of a hyphenated binary inconsistently (`kubectl__taint_evict`
        // in the dispatch loop, `kubectl__subcmd__taint_evict` in the cases; clap-rs/clap#6421), so
        // nothing past the first word would complete. Align the cases with the loop.
        let fixed = String::from_utf8_lossy(&script).replace("kubectl__subcmd__taint_evict", "kubectl__taint_evict");
        script = fixed.into_bytes();
    }
    out.write_all(&script)
}

/// `completion SHELL`.
pub fn print_script(shell: CompletionShell) -> Result<()> {
    write_script(shell, &mut std::io::stdout().lock())?;
    Ok(())
}

/// The candidates for the last of `words` (the word being completed; empty for a new word), and
/// Cobra's directive.
#[must_use]
pub fn candidates(words: &[String]) -> (Vec<String>, u8) {
    let root = Cli::command();
    let (current, typed) = words.split_last().map_or(("", &[][..]), |(last, rest)| (last.as_str(), rest));
    let Some((sub, after)) = typed.split_first() else {
        let names = root.get_subcommands().filter(|c| !c.is_hide_set()).map(|c| c.get_name().to_owned());
        return (names.filter(|n| n.starts_with(current)).collect(), NO_FILE_COMPLETION);
    };
    let Some(command) = root.find_subcommand(sub) else { return (Vec::new(), NO_FILE_COMPLETION) };
    if let Some(arg) =
        after.last().and_then(|previous| flag(command, previous)).filter(|a| a.get_action().takes_values())
    {
        return values(arg, current);
    }
    if current.starts_with('-') {
        let mut flags: Vec<String> = command
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|s| format!("-{s}"));
                long.into_iter().chain(short)
            })
            .filter(|f| f.starts_with(current))
            .collect();
        flags.sort();
        return (flags, NO_FILE_COMPLETION);
    }
    match command.get_positionals().next() {
        Some(positional) => values(positional, current),
        None => (Vec::new(), NO_FILE_COMPLETION),
    }
}

fn flag<'a>(command: &'a ClapCommand, word: &str) -> Option<&'a Arg> {
    if let Some(long) = word.strip_prefix("--") {
        command.get_arguments().find(|a| a.get_long() == Some(long))
    } else {
        let short = word.strip_prefix('-')?.chars().next()?;
        (word.len() == 2).then(|| command.get_arguments().find(|a| a.get_short() == Some(short)))?
    }
}

fn values(arg: &Arg, current: &str) -> (Vec<String>, u8) {
    let possible = arg.get_possible_values();
    if possible.is_empty() {
        let directive =
            if arg.get_value_hint() == clap::ValueHint::FilePath { FILE_COMPLETION } else { NO_FILE_COMPLETION };
        return (Vec::new(), directive);
    }
    let names = possible.iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_owned());
    (names.filter(|n| n.starts_with(current)).collect(), NO_FILE_COMPLETION)
}

/// Names completed from the live cluster, or from the kubeconfig.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Node names (`plan NODE`, `run NODE`).
    Nodes,
    /// Pod names of a namespace (`explain POD`); `None`: the kubeconfig context's.
    Pods(Option<String>),
    /// Namespace names (`-n`), as kubectl completes them: from the cluster.
    Namespaces,
    /// Node names in `--down`'s comma-separated list: the list typed before the name being completed
    /// (with its last comma; empty for the first name), which every candidate starts with and whose
    /// names are not offered again.
    DownNodes(String),
    /// The kubeconfig's contexts (`--context`), as kubectl completes them: no request.
    Contexts,
    /// The kubeconfig's clusters (`--cluster`).
    Clusters,
    /// The kubeconfig's users (`--user`).
    Users,
}

impl Lookup {
    /// Whether the names come from the cluster (not from a dump given with `-f`, nor the kubeconfig).
    fn asks_the_cluster(&self) -> bool {
        !matches!(self, Self::Contexts | Self::Clusters | Self::Users)
    }
}

/// The cluster the words being completed name, and which names to look up there; `None` when the
/// word is not a name to look up (a flag, another flag's value, a name of a dump given with `-f`).
#[must_use]
pub fn lookup(words: &[String]) -> Option<(Lookup, super::args::ClusterArgs)> {
    let (current, typed) = words.split_last()?;
    let (sub, after) = typed.split_first()?;
    let command = Cli::command();
    let command = command.find_subcommand(sub)?;
    if current.starts_with('-') {
        return None;
    }
    let value_of = after.last().and_then(|previous| flag(command, previous)).filter(|a| a.get_action().takes_values());
    let mut cluster = super::args::ClusterArgs::default();
    let mut namespace = None;
    let mut dump = false;
    let mut words = after.iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| words.next().cloned());
        match name {
            "--kubeconfig" => cluster.kubeconfig = value(),
            "--context" => cluster.context = value(),
            "--cluster" => cluster.cluster = value(),
            "--user" => cluster.user = value(),
            "-s" | "--server" => cluster.server = value(),
            "--token" => cluster.token = value(),
            "--as" => cluster.impersonate = value(),
            "--as-group" => cluster.impersonate_groups.extend(value()),
            "--as-uid" => cluster.impersonate_uid = value(),
            "--certificate-authority" => cluster.certificate_authority = value(),
            "--client-certificate" => cluster.client_certificate = value(),
            "--client-key" => cluster.client_key = value(),
            "--tls-server-name" => cluster.tls_server_name = value(),
            "-n" | "--namespace" => namespace = value(),
            "--insecure-skip-tls-verify" => cluster.insecure_skip_tls_verify = true,
            "--disable-compression" => cluster.disable_compression = true,
            "--content-type" => {
                use clap::ValueEnum as _;
                let given = value().and_then(|v| crate::cluster::protobuf::ContentType::from_str(&v, false).ok());
                cluster.content_type = given.unwrap_or_default();
            }
            // Names come from the dump, not the cluster.
            "-f" | "--filename" => dump = true,
            _ => {}
        }
    }
    let lookup = match value_of.map(|arg| arg.get_long()) {
        Some(Some("namespace")) => Lookup::Namespaces,
        Some(Some("context")) => Lookup::Contexts,
        Some(Some("cluster")) => Lookup::Clusters,
        Some(Some("user")) => Lookup::Users,
        Some(Some("down")) => {
            Lookup::DownNodes(current.rsplit_once(',').map_or_else(String::new, |(list, _)| format!("{list},")))
        }
        Some(_) => return None,
        None => match command.get_name() {
            "plan" | "run" => Lookup::Nodes,
            "explain" => Lookup::Pods(namespace.filter(|ns| super::args::parse_namespace(ns).is_ok())),
            _ => return None,
        },
    };
    if dump && lookup.asks_the_cluster() {
        return None;
    }
    Some((lookup, cluster))
}

/// How long completion may wait for the cluster before it offers nothing.
pub const LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The names `lookup` asks for, for the word `current`; empty on any failure (completion stays
/// silent: no message may reach the shell's line).
fn names(lookup: &Lookup, cluster: &super::args::ClusterArgs, current: &str) -> Vec<String> {
    let named = |kubeconfig: &kube::config::Kubeconfig| -> Vec<String> {
        match lookup {
            Lookup::Contexts => kubeconfig.contexts.iter().map(|c| c.name.clone()).collect(),
            Lookup::Clusters => kubeconfig.clusters.iter().map(|c| c.name.clone()).collect(),
            _ => kubeconfig.auth_infos.iter().map(|u| u.name.clone()).collect(),
        }
    };
    if !lookup.asks_the_cluster() {
        let kubeconfig = crate::cluster::client::read_kubeconfig(cluster.kubeconfig.as_deref()).ok().flatten();
        let mut names = kubeconfig.as_ref().map(named).unwrap_or_default();
        // A name goes to the shell's line as is: none that would break it, or write to the terminal.
        names.retain(|n| {
            n.starts_with(current) && !n.is_empty() && !n.chars().any(|c| c.is_control() || c.is_whitespace())
        });
        names.sort();
        names.dedup();
        return names;
    }
    let Some(names) = live_names(lookup, cluster) else { return Vec::new() };
    // A name from the server goes to the shell's line as is: only plain ones are offered.
    let plain = |name: &String| match lookup {
        Lookup::Namespaces => super::args::parse_namespace(name).is_ok(),
        _ => super::args::parse_node_name(name).is_ok(),
    };
    match lookup {
        Lookup::DownNodes(list) => {
            let typed = current.strip_prefix(list.as_str()).unwrap_or(current);
            let given: Vec<&str> = list.split(',').collect();
            let fresh = |name: &String| name.starts_with(typed) && !given.contains(&name.as_str()) && plain(name);
            names.iter().filter(|name| fresh(name)).map(|name| format!("{list}{name}")).collect()
        }
        _ => names.into_iter().filter(|name| name.starts_with(current) && plain(name)).collect(),
    }
}

/// The names `lookup` asks the cluster for; `None` on any failure.
fn live_names(lookup: &Lookup, cluster: &super::args::ClusterArgs) -> Option<Vec<String>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
    let options = crate::cluster::ConnectOptions {
        request_timeout: Some(LOOKUP_TIMEOUT),
        ..super::config::connect_options(cluster)
    };
    let read = async {
        let connection = crate::cluster::connect(&options).await.ok()?;
        let names = match lookup {
            Lookup::Pods(namespace) => {
                let namespace = namespace.as_deref().unwrap_or(&connection.default_namespace);
                crate::cluster::snapshot::pod_names(&connection, namespace).await
            }
            Lookup::Namespaces => crate::cluster::snapshot::namespace_names(&connection).await,
            _ => crate::cluster::snapshot::node_names(&connection).await,
        };
        names.ok()
    };
    runtime.block_on(async { tokio::time::timeout(LOOKUP_TIMEOUT, read).await }).ok().flatten()
}

/// `__complete WORDS…`: candidates one per line, then `:DIRECTIVE` (Cobra's protocol).
pub fn complete(words: &[String]) -> Result<()> {
    let (mut candidates, directive) = candidates(words);
    if let Some((lookup, cluster)) = lookup(words) {
        let current = words.last().map_or("", String::as_str);
        candidates = names(&lookup, &cluster, current);
    }
    let mut out = std::io::stdout().lock();
    for candidate in candidates {
        writeln!(out, "{candidate}")?;
    }
    writeln!(out, ":{directive}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &[&str]) -> Vec<String> {
        text.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn completes_subcommands_flags_and_values() {
        assert_eq!(candidates(&words(&["p"])), (vec!["plan".to_owned(), "profile".to_owned()], 4));
        assert_eq!(candidates(&words(&["re"])), (vec!["record".to_owned(), "review".to_owned()], 4));
        assert_eq!(candidates(&words(&["plan", "-o", "y"])), (vec!["yaml".to_owned()], 4));
        let (flags, _) = candidates(&words(&["plan", "--rem"]));
        assert_eq!(flags, ["--remove-taint"]);
        assert_eq!(candidates(&words(&["plan", "-f", ""])), (vec![], 0), "files for -f");
        assert_eq!(candidates(&words(&["completion", "f"])), (vec!["fish".to_owned()], 4));
    }

    #[test]
    fn node_and_pod_names_are_looked_up_in_the_cluster_the_line_names() {
        let (lookup_of, cluster) =
            lookup(&words(&["plan", "--kubeconfig", "k.yaml", "--context=prod", "w"])).expect("nodes");
        assert_eq!(lookup_of, Lookup::Nodes);
        assert_eq!((cluster.kubeconfig.as_deref(), cluster.context.as_deref()), (Some("k.yaml"), Some("prod")));
        assert_eq!(lookup(&words(&["run", ""])).map(|l| l.0), Some(Lookup::Nodes));
        let (pods, _) = lookup(&words(&["explain", "-n", "web", ""])).expect("pods");
        assert_eq!(pods, Lookup::Pods(Some("web".into())));
        assert_eq!(lookup(&words(&["explain", ""])).map(|l| l.0), Some(Lookup::Pods(None)));
        for not_a_name in [&["plan", "-o", ""][..], &["plan", "--"], &["plan", "-f", "d.json", ""], &["completion", ""]]
        {
            assert_eq!(lookup(&words(not_a_name)).map(|l| l.0), None, "{not_a_name:?}");
        }
    }

    #[test]
    fn flag_values_are_looked_up_as_kubectl_completes_them() {
        let of = |line: &[&str]| lookup(&words(line)).map(|l| l.0);
        assert_eq!(of(&["plan", "-n", ""]), Some(Lookup::Namespaces));
        assert_eq!(of(&["run", "--namespace", "sh"]), Some(Lookup::Namespaces));
        assert_eq!(of(&["explain", "-n", ""]), Some(Lookup::Namespaces));
        assert_eq!(of(&["run", "--context", ""]), Some(Lookup::Contexts));
        assert_eq!(of(&["explain", "web-0", "--cluster", "p"]), Some(Lookup::Clusters));
        assert_eq!(of(&["plan", "--user", ""]), Some(Lookup::Users));
        assert_eq!(of(&["plan", "--down", ""]), Some(Lookup::DownNodes(String::new())));
        assert_eq!(of(&["plan", "--down", "w1,w2,w"]), Some(Lookup::DownNodes("w1,w2,".into())));
        // The kubeconfig's names whatever the input; the cluster's not for a dump.
        assert_eq!(of(&["plan", "-f", "d.json", "--context", ""]), Some(Lookup::Contexts));
        for not_looked_up in [
            &["plan", "-f", "d.json", "--down", ""][..],
            &["plan", "-f", "d.json", "-n", ""],
            &["plan", "--down-selector", ""],
            &["run", "--leader-elect-namespace", ""],
            &["plan", "--context", "-"],
        ] {
            assert_eq!(of(not_looked_up), None, "{not_looked_up:?}");
        }
        let (_, cluster) = lookup(&words(&["plan", "--kubeconfig=k.yaml", "--context", ""])).expect("contexts");
        assert_eq!(cluster.kubeconfig.as_deref(), Some("k.yaml"), "the kubeconfig the line names");
    }
}
