//! The GitHub workflows parse, and say what the release and CI need; they cannot run here.

use serde_json::Value;

use crate::repository::krew_manifest::{archive_target, template_archives};
use crate::util::repo;

fn workflow(name: &str) -> Value {
    let path = repo().join(".github/workflows").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// Every step of every job, with its job's name.
fn steps(workflow: &Value) -> Vec<(&str, &Value)> {
    let jobs = workflow["jobs"].as_object().expect("jobs");
    jobs.iter()
        .flat_map(|(job, body)| body["steps"].as_array().expect("steps").iter().map(move |s| (job.as_str(), s)))
        .collect()
}

fn assert_actions_pinned(workflow: &Value) {
    for (job, step) in steps(workflow) {
        if let Some(uses) = step["uses"].as_str() {
            let (_, version) = uses.split_once('@').unwrap_or_else(|| panic!("{job}: {uses} is not pinned"));
            assert!(version.starts_with('v') || version.len() == 40, "{job}: {uses} is not pinned to a release");
        }
    }
}

#[test]
fn release_workflow_runs_on_version_tags_and_builds_every_manifest_platform_on_its_own_runner() {
    let release = workflow("release.yml");
    assert_eq!(release["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let matrix = release["jobs"]["build"]["strategy"]["matrix"]["include"].as_array().expect("build matrix");
    let built: Vec<&str> = matrix.iter().map(|m| m["target"].as_str().expect("target")).collect();
    let mut wanted: Vec<String> = template_archives().iter().map(|a| archive_target(a).to_owned()).collect();
    let mut have: Vec<String> = built.iter().map(|t| (*t).to_owned()).collect();
    wanted.sort();
    have.sort();
    assert_eq!(have, wanted, "the build matrix and krew-manifest.yaml's platforms differ");
    for entry in matrix {
        let (target, runner) = (entry["target"].as_str().expect("target"), entry["runner"].as_str().expect("runner"));
        let native = match target {
            t if t.contains("-apple-") => "macos-",
            t if t.contains("-windows-") => "windows-",
            _ => "ubuntu-",
        };
        assert!(runner.starts_with(native), "{target} builds on {runner}, not on a {native}* runner");
        let arm_linux = target.starts_with("aarch64-") && target.contains("-linux-");
        assert_eq!(runner.ends_with("-arm"), arm_linux, "{target} builds on {runner}");
    }
    assert_actions_pinned(&release);
}

#[test]
fn release_workflow_archives_with_the_release_script_publishes_and_opens_the_krew_index_pull_request() {
    let release = workflow("release.yml");
    let all = steps(&release);
    let runs: Vec<&str> = all.iter().filter_map(|(_, s)| s["run"].as_str()).collect();
    assert!(runs.iter().any(|r| r.contains("--target ${{ matrix.target }}")), "the target is not installed: {runs:?}");
    assert!(runs.iter().any(|r| r.contains("scripts/release binary ${{ matrix.target }}")), "{runs:?}");
    assert!(runs.iter().any(|r| r.contains("scripts/release archive ")), "{runs:?}");
    assert!(
        runs.iter().any(|r| r.contains("scripts/release manifest dist --tag \"$GITHUB_REF_NAME\" --all-platforms")),
        "{runs:?}"
    );
    assert!(runs.iter().any(|r| r.contains("gh release create") && r.contains("dist/*")), "{runs:?}");
    let bot = all
        .iter()
        .find(|(_, s)| s["uses"].as_str().is_some_and(|u| u.starts_with("rajatjindal/krew-release-bot@")))
        .expect("a krew-release-bot step");
    assert_eq!(bot.1["with"]["krew_template_file"], "krew-manifest.yaml");
    assert!(repo().join("krew-manifest.yaml").is_file());
    assert_eq!(release["jobs"][bot.0]["permissions"]["contents"], "write");
    assert_eq!(release["permissions"]["contents"], "read");
}

#[test]
fn release_workflow_builds_the_image_from_the_dockerfile_and_pushes_it_as_the_version() {
    let release = workflow("release.yml");
    let all = steps(&release);
    let uses = |job: &str, action: &str| {
        all.iter()
            .find(|(j, s)| *j == job && s["uses"].as_str().is_some_and(|u| u.starts_with(action)))
            .map(|(_, s)| *s)
    };
    let (job, _) = all
        .iter()
        .find(|(_, s)| s["uses"].as_str().is_some_and(|u| u.starts_with("docker/build-push-action@")))
        .expect("a docker/build-push-action step");
    let build = uses(job, "docker/build-push-action@").expect("the build");
    assert_eq!((&build["with"]["context"], &build["with"]["file"]), (&".".into(), &"Dockerfile".into()));
    assert_eq!((&build["with"]["pull"], &build["with"]["push"]), (&true.into(), &true.into()), "{build}");
    // What deploy/in-cluster.yaml runs (tests/fake_api/in_cluster.rs): the repository's name and the version.
    let tags = build["with"]["tags"].as_str().expect("tags");
    assert_eq!(tags, "ghcr.io/${{ github.repository }}:${{ steps.version.outputs.version }}");
    let version = all.iter().find(|(j, s)| j == job && s["id"] == "version").expect("a step with id version");
    assert_eq!(version.1["run"], "echo \"version=${GITHUB_REF_NAME#v}\" >> \"$GITHUB_OUTPUT\"");
    assert!(uses(job, "docker/setup-buildx-action@").is_some(), "{job}: no buildx");
    let login = uses(job, "docker/login-action@").expect("a login to the registry");
    assert_eq!(
        (&login["with"]["registry"], &login["with"]["password"]),
        (&"ghcr.io".into(), &"${{ github.token }}".into())
    );
    assert_eq!(release["jobs"][job]["permissions"]["packages"], "write");
    assert_actions_pinned(&release);
}

#[test]
fn ci_workflow_runs_the_ci_script_on_pushes() {
    let ci = workflow("ci.yml");
    assert!(ci["on"].as_object().is_some_and(|on| on.contains_key("push")), "ci.yml does not run on push");
    let runs: Vec<&str> = steps(&ci).iter().filter_map(|(_, s)| s["run"].as_str()).collect();
    assert_eq!(runs.last(), Some(&"bash .ci/run"), "{runs:?}");
    assert_actions_pinned(&ci);
}

/// The time limits of `.config/nextest.toml`'s default profile, in seconds (`slow-timeout`'s period
/// times its `terminate-after`; `None`: a test there may run forever): the profile's own, then each
/// override's filter with its limit (`None`: the profile's).
fn time_limits(config: &str) -> (Option<u64>, Vec<(String, Option<u64>)>) {
    let limit = |value: &str| {
        let field = |name: &str| {
            let at = value.find(name)? + name.len();
            let rest = value[at..].trim_start().strip_prefix('=')?.trim_start().trim_start_matches('"');
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let unit = match &rest[digits..] {
                minutes if minutes.starts_with('m') && !minutes.starts_with("ms") => 60,
                _ => 1,
            };
            Some(rest[..digits].parse::<u64>().ok()? * unit)
        };
        Some(field("period")? * field("terminate-after")?)
    };
    let (mut profile, mut overrides) = (None, Vec::new());
    let mut section = "";
    for line in config.lines().map(str::trim).filter(|line| !line.starts_with('#')) {
        if line.starts_with('[') {
            section = line;
            if section == "[[profile.default.overrides]]" {
                overrides.push((String::new(), None));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        match (section, key.trim(), overrides.last_mut()) {
            ("[profile.default]", "slow-timeout", _) => profile = limit(value),
            ("[[profile.default.overrides]]", "filter", Some(last)) => last.0 = value.trim().to_owned(),
            ("[[profile.default.overrides]]", "slow-timeout", Some(last)) => last.1 = limit(value),
            _ => {}
        }
    }
    (profile, overrides)
}

#[test]
fn every_test_has_a_time_limit_and_the_real_tier_and_the_long_run_longer_ones() {
    // A hung test fails the run instead of hanging CI (`.ci/run` runs the default profile).
    let config = std::fs::read_to_string(repo().join(".config/nextest.toml")).expect(".config/nextest.toml");
    let (default, overrides) = time_limits(&config);
    let default = default.expect("the default profile has a slow-timeout with a terminate-after");
    assert!(default >= 300, "{default} s: the slowest offline test took 152 s on a loaded machine");
    for tier in ["/real_apiserver::/", "/soak::/"] {
        let limit = overrides.iter().find(|(filter, _)| filter.contains(tier)).and_then(|(_, limit)| *limit);
        assert!(limit.is_some_and(|limit| limit > default), "{tier}: {limit:?} s, not longer than {default} s");
    }

    let seeded = "[profile.default]\nretries = 0\n# slow-timeout = { period = \"60s\", terminate-after = 4 }\n\
                  [[profile.default.overrides]]\nfilter = 'test(/soak::/)'\nslow-timeout = \"60s\"\n\
                  [[profile.default.overrides]]\nfilter = 'test(/real_apiserver::/)'\n\
                  slow-timeout = { period = \"2m\", terminate-after = 5 }\n";
    assert_eq!(
        time_limits(seeded),
        (None, vec![("'test(/soak::/)'".to_owned(), None), ("'test(/real_apiserver::/)'".to_owned(), Some(600))])
    );
}
