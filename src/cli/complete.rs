//! Shell completion: scripts generated from the clap definition, and the line protocol kubectl
//! (>= 1.26) speaks with `kubectl_complete-taint_evict` to complete plugin arguments.

use std::io::Write;

use clap::{Arg, Command as ClapCommand, CommandFactory};
use clap_complete::Shell;

use super::{Cli, CompletionShell};
use crate::error::Result;

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

/// Names completed from the live cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Node names (`plan NODE`, `run NODE`).
    Nodes,
    /// Pod names of a namespace (`explain POD`); `None`: the kubeconfig context's.
    Pods(Option<String>),
}

/// The cluster the words being completed name, and which names to look up there; `None` when the
/// word is not a node or pod name (a flag, a flag's value, a dump given with `-f`).
#[must_use]
pub fn lookup(words: &[String]) -> Option<(Lookup, super::ClusterArgs)> {
    let (current, typed) = words.split_last()?;
    let (sub, after) = typed.split_first()?;
    let command = Cli::command();
    let command = command.find_subcommand(sub)?;
    if current.starts_with('-')
        || after.last().and_then(|previous| flag(command, previous)).is_some_and(|a| a.get_action().takes_values())
    {
        return None;
    }
    let mut cluster = super::ClusterArgs::default();
    let mut namespace = None;
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
            "--content-type" => {
                use clap::ValueEnum as _;
                let given = value().and_then(|v| crate::cluster::protobuf::ContentType::from_str(&v, false).ok());
                cluster.content_type = given.unwrap_or_default();
            }
            // Names come from the dump, not the cluster.
            "-f" | "--filename" => return None,
            _ => {}
        }
    }
    let lookup = match command.get_name() {
        "plan" | "run" => Lookup::Nodes,
        "explain" => Lookup::Pods(namespace.filter(|ns| super::parse_namespace(ns).is_ok())),
        _ => return None,
    };
    Some((lookup, cluster))
}

/// How long completion may wait for the cluster before it offers nothing.
pub const LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The names `lookup` asks for, starting with `prefix`; empty on any failure (completion stays
/// silent: no message may reach the shell's line).
fn live_names(lookup: &Lookup, cluster: &super::ClusterArgs, prefix: &str) -> Vec<String> {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return Vec::new() };
    let options = crate::cluster::ConnectOptions {
        request_timeout: Some(LOOKUP_TIMEOUT),
        ..super::config::connect_options(cluster)
    };
    let read = async {
        let connection = crate::cluster::connect(&options).await.ok()?;
        let names = match lookup {
            Lookup::Nodes => crate::cluster::snapshot::node_names(&connection).await,
            Lookup::Pods(namespace) => {
                let namespace = namespace.as_deref().unwrap_or(&connection.default_namespace);
                crate::cluster::snapshot::pod_names(&connection, namespace).await
            }
        };
        names.ok()
    };
    let names = runtime.block_on(async { tokio::time::timeout(LOOKUP_TIMEOUT, read).await });
    let names = names.ok().flatten().unwrap_or_default();
    // A name from the server goes to the shell's line as is: only plain ones are offered.
    names.into_iter().filter(|n| n.starts_with(prefix) && super::parse_node_name(n).is_ok()).collect()
}

/// `__complete WORDS…`: candidates one per line, then `:DIRECTIVE` (Cobra's protocol).
pub fn complete(words: &[String]) -> Result<()> {
    let (mut candidates, directive) = candidates(words);
    if let Some((lookup, cluster)) = lookup(words) {
        let current = words.last().map_or("", String::as_str);
        candidates = live_names(&lookup, &cluster, current);
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
        assert_eq!(candidates(&words(&["p"])), (vec!["plan".to_owned()], 4));
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
}
