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

/// `__complete WORDS…`: candidates one per line, then `:DIRECTIVE` (Cobra's protocol).
pub fn complete(words: &[String]) -> Result<()> {
    let (candidates, directive) = candidates(words);
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
}
