//! The committed completion scripts match what the code says.

use crate::util::{repo, run};

#[test]
fn committed_completions_are_up_to_date() {
    for (shell, file) in [
        ("bash", "kubectl-taint_evict.bash"),
        ("zsh", "_kubectl-taint_evict"),
        ("fish", "kubectl-taint_evict.fish"),
        ("kubectl", "kubectl_complete-taint_evict"),
    ] {
        let generated = run(&["completion", shell], None);
        assert_eq!(generated.code, 0, "{}", generated.stderr);
        let path = repo().join("completions").join(file);
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            committed == generated.stdout,
            "{} is stale: regenerate it with `kubectl-taint_evict completion {shell} > completions/{file}`",
            path.display()
        );
    }
}

#[test]
fn kubectl_completion_protocol_answers_with_a_directive() {
    let result = run(&["__complete", "plan", "-o", ""], None);
    assert_eq!(result.code, 0);
    assert_eq!(
        result.stdout,
        "table\nwide\njson\nyaml\nname\njsonpath=\njsonpath-file=\ncustom-columns=\ncustom-columns-file=\n:4\n"
    );
}

/// Sources the committed bash script and asks it to complete, as bash would on <TAB>.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source completions/kubectl-taint_evict.bash; COMP_WORDS=({}); COMP_CWORD={}; \
         _kubectl__taint_evict kubectl-taint_evict '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let output =
        std::process::Command::new("bash").arg("-c").arg(script).current_dir(repo()).output().expect("bash runs");
    String::from_utf8(output.stdout).expect("UTF-8").lines().map(str::to_owned).collect()
}

#[test]
fn bash_script_completes_past_the_first_word() {
    assert_eq!(
        bash_complete(&["kubectl-taint_evict", "plan", "-o", ""]),
        [
            "table",
            "wide",
            "json",
            "yaml",
            "name",
            "jsonpath=",
            "jsonpath-file=",
            "custom-columns=",
            "custom-columns-file="
        ]
    );
    assert_eq!(bash_complete(&["kubectl-taint_evict", "plan", "-o", "js"]), ["json", "jsonpath=", "jsonpath-file="]);
    assert_eq!(bash_complete(&["kubectl-taint_evict", "plan", "--rem"]), ["--remove-taint"]);
    assert_eq!(bash_complete(&["kubectl-taint_evict", "completion", "k"]), ["kubectl"]);
    let commands = bash_complete(&["kubectl-taint_evict", ""]);
    assert!(commands.contains(&"plan".to_owned()) && !commands.iter().any(|c| c.starts_with("__")), "{commands:?}");
    assert!(commands.contains(&"record".to_owned()), "{commands:?}");
    assert_eq!(
        bash_complete(&["kubectl-taint_evict", "record", "--max-"]),
        ["--max-size", "--max-age", "--max-response-size"]
    );
}

#[test]
fn contexts_clusters_and_users_complete_from_the_kubeconfig_alone() {
    let dir = crate::util::scratch("complete-kubeconfig-names");
    let kubeconfig = dir.join("config");
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: staging\n  cluster:\n    server: http://127.0.0.1:9\n\
                - name: prod\n  cluster:\n    server: http://127.0.0.1:9\ncontexts:\n- name: staging\n  context:\n    \
                cluster: staging\n    user: dev\n- name: prod\n  context:\n    cluster: prod\n    user: sre\n\
                current-context: prod\nusers:\n- name: sre\n  user:\n    token: t\n- name: dev\n  user:\n    token: t\n";
    std::fs::write(&kubeconfig, text).expect("the kubeconfig");
    let complete = |words: &[&str]| {
        let command = crate::util::command().arg("__complete").args(words).env("KUBECONFIG", &kubeconfig).output();
        let output = command.expect("runs");
        assert!(output.status.success() && output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    assert_eq!(complete(&["plan", "--context", ""]), "prod\nstaging\n:4\n");
    assert_eq!(complete(&["run", "--context", "s"]), "staging\n:4\n");
    assert_eq!(complete(&["record", "--context", "s"]), "staging\n:4\n");
    assert_eq!(complete(&["explain", "--cluster", ""]), "prod\nstaging\n:4\n");
    assert_eq!(complete(&["plan", "--user", ""]), "dev\nsre\n:4\n");
    // Nothing to read: nothing offered, nothing said.
    let none = crate::util::command().args(["__complete", "plan", "--context", ""]).output().expect("runs");
    assert_eq!((String::from_utf8_lossy(&none.stdout).as_ref(), none.stderr.is_empty()), (":4\n", true));
}
