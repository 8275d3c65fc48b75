# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_taint_evict_global_optspecs
    string join \n h/help V/version
end

function __fish_kubectl_taint_evict_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_taint_evict_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_taint_evict_using_subcommand
    set -l cmd (__fish_kubectl_taint_evict_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "plan" -d 'Show each pod\'s verdict and eviction deadline on NoExecute-tainted nodes'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "explain" -d 'Say, for one pod, which toleration matched which taint and why'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "audit" -d 'Predict every zone\'s and every node\'s outage, and find what the tolerations leave exposed'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "profile" -d 'Print the cluster\'s profile as the YAML `audit --profile` reads'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "run" -d 'Enforce NoExecute evictions: watch nodes and pods, delete pods when they are due'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "record" -d 'Record what the taint-eviction decisions depend on, as it changes, into files for review'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "review" -d 'After an incident: each deletion a record saw, against when the controller should have made it'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "completion" -d 'Print a shell completion script (or kubectl\'s completion helper)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s l -l selector -d 'Select nodes by label (`zone=a,!gpu`)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s f -l filename -d 'Read a `kubectl get nodes,pods -A -o json` dump instead of the live cluster (`-` for stdin)' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l now -d 'Evaluate at this instant (RFC 3339) instead of the current time' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l at -d 'With -f RECORD (what `record` wrote): the state it holds at this instant (RFC 3339), evaluated then; its last line\'s when left out' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l taint -d 'What if this taint were added (or replaced) now: KEY[=VALUE]:EFFECT. Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l remove-taint -d 'What if this taint were removed now: KEY[:EFFECT] (every effect when left out). Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l down -d 'What if these nodes\' kubelets stopped heartbeating now (a zone\'s power work, a rack lost): the node lifecycle controller\'s taints and the deletions they bring. Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l down-selector -d 'What if the kubelets of the nodes this label selector selects stopped heartbeating now (`topology.kubernetes.io/zone=za`: a zone going dark), as --down does' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s n -l namespace -d 'Only show pods of this namespace' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s o -l output -d 'Output format' -r -f -a "table\t'A table per node, fitted to the terminal'
wide\t'The table with every value in full, and `SINCE BASIS TOLERATION UID`'
json\t'The `EvictionPlan` document as JSON'
yaml\t'The same document as YAML'
name\t'`pod/NAME`, one per line, as kubectl prints it'
jsonpath=\t'jsonpath=TEMPLATE: kubectl\'s JSONPath template over the JSON document'
jsonpath-file=\t'jsonpath-file=FILE: the JSONPath template in FILE'
custom-columns=\t'custom-columns=NAME:.path,…: a table of these columns'
custom-columns-file=\t'custom-columns-file=FILE: headers on FILE\'s first line, paths on its second'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l allow-missing-template-keys -d 'Missing keys in a jsonpath template print nothing (`false`: they are an error), as in kubectl' -r -f -a "true\t''
false\t''"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l sort-by -d 'The pods\' order in the table and in `-o name`' -r -f -a "deadline\t'Deadline (pods without one last), then namespace, then name: the document\'s order'
namespace\t'Namespace, then name'
name\t'Name, then namespace'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l color -d 'When to colour the table' -r -f -a "auto\t'Colour when stdout is a terminal and `NO_COLOR` is not set'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l node-monitor-grace-period -d 'Silence after which the controller marks a node Ready=Unknown [default: 40s before Kubernetes 1.32, 50s from 1.32; a dump: 40s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l node-monitor-period -d 'The controller\'s node health pass period [default: 5s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l node-eviction-rate -d 'Nodes tainted per second per zone while the zone is healthy [default: 0.1]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l secondary-node-eviction-rate -d 'Nodes tainted per second in a large partially disrupted zone [default: 0.01]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l unhealthy-zone-threshold -d 'The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l large-cluster-size-threshold -d 'A zone with more nodes than this is large (tainted at the secondary rate when disrupted) [default: 50]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l kube-api-qps -d 'Requests a second kube-controller-manager\'s own client makes at most: the pass that marks many nodes silent writes each one\'s status and its ready pods\' through it [default: 20]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l kube-api-burst -d 'The burst of that client [default: 30]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l silent-after -d 'A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent (kubelets renew every 10s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l feature-gates -d 'kube-controller-manager\'s feature gates this tool follows, in its flag\'s form: `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default: on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API server with the gate on; off before 1.35]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l kube-version -d 'The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster\'s; for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest version modelled, 1.37]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l controller-settings -d 'The node lifecycle controller\'s settings, from a file: kube-controller-manager\'s manifest (its static pod\'s YAML), or a YAML or JSON map of the settings by flag name (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a cluster that does not show it); a flag given wins (docs/node-lifecycle.md)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s w -l watch -d 'Keep watching: redraw the plan in place as deadlines pass and the cluster changes (one JSON line per change when piped or with -o json); reads only. Ctrl-C ends it'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l quorum-read -d 'Read from etcd (a quorum read, paged) instead of the API server\'s watch cache: the latest objects, at the cost of etcd scanning every pod for each node\'s pod list'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s A -l all-namespaces -d 'Show pods of all namespaces (the default: a node\'s pods span namespaces)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l no-headers -d 'Print the pods\' rows only: no column headers, node headings or summaries'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l summary -d 'Print only the summary lines: the whole plan\'s, then one per node, most urgent first'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -l timeline -d 'Show how many pods are deleted per interval over the coming window (in JSON and YAML: the `timeline` field)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -s n -l namespace -d 'The pod\'s namespace (default: the kubeconfig context\'s, or "default" for a dump)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -s f -l filename -d 'Read a `kubectl get nodes,pods -A -o json` dump instead of the live cluster (`-` for stdin)' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l now -d 'Evaluate at this instant (RFC 3339) instead of the current time' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l at -d 'With -f RECORD (what `record` wrote): the state it holds at this instant (RFC 3339), evaluated then; its last line\'s when left out' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l taint -d 'What if this taint were added (or replaced) now: KEY[=VALUE]:EFFECT. Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l remove-taint -d 'What if this taint were removed now: KEY[:EFFECT] (every effect when left out). Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l down -d 'What if these nodes\' kubelets stopped heartbeating now (a zone\'s power work, a rack lost): the node lifecycle controller\'s taints and the deletions they bring. Repeatable' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l down-selector -d 'What if the kubelets of the nodes this label selector selects stopped heartbeating now (`topology.kubernetes.io/zone=za`: a zone going dark), as --down does' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -s o -l output -d 'Output format' -r -f -a "text\t'Sentences'
json\t'An `EvictionExplanation` document'
yaml\t'The same document as YAML'
jsonpath=\t'jsonpath=TEMPLATE: kubectl\'s JSONPath template over the JSON document'
jsonpath-file=\t'jsonpath-file=FILE: the JSONPath template in FILE'
custom-columns=\t'custom-columns=NAME:.path,…: a table of these columns'
custom-columns-file=\t'custom-columns-file=FILE: headers on FILE\'s first line, paths on its second'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l allow-missing-template-keys -d 'Missing keys in a jsonpath template print nothing (`false`: they are an error), as in kubectl' -r -f -a "true\t''
false\t''"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l node-monitor-grace-period -d 'Silence after which the controller marks a node Ready=Unknown [default: 40s before Kubernetes 1.32, 50s from 1.32; a dump: 40s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l node-monitor-period -d 'The controller\'s node health pass period [default: 5s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l node-eviction-rate -d 'Nodes tainted per second per zone while the zone is healthy [default: 0.1]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l secondary-node-eviction-rate -d 'Nodes tainted per second in a large partially disrupted zone [default: 0.01]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l unhealthy-zone-threshold -d 'The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l large-cluster-size-threshold -d 'A zone with more nodes than this is large (tainted at the secondary rate when disrupted) [default: 50]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l kube-api-qps -d 'Requests a second kube-controller-manager\'s own client makes at most: the pass that marks many nodes silent writes each one\'s status and its ready pods\' through it [default: 20]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l kube-api-burst -d 'The burst of that client [default: 30]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l silent-after -d 'A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent (kubelets renew every 10s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l feature-gates -d 'kube-controller-manager\'s feature gates this tool follows, in its flag\'s form: `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default: on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API server with the gate on; off before 1.35]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l kube-version -d 'The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster\'s; for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest version modelled, 1.37]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l controller-settings -d 'The node lifecycle controller\'s settings, from a file: kube-controller-manager\'s manifest (its static pod\'s YAML), or a YAML or JSON map of the settings by flag name (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a cluster that does not show it); a flag given wins (docs/node-lifecycle.md)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l quorum-read -d 'Read from etcd (a quorum read, paged) instead of the API server\'s watch cache: the latest objects, at the cost of etcd scanning every pod for each node\'s pod list'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s l -l selector -d 'Only the outages of the nodes this label selector selects, and of their zones (`zone=a,!gpu`)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s f -l filename -d 'Read a `kubectl get nodes,pods,leases -A -o json` dump instead of the live cluster (`-` for stdin); or rendered manifests to check before they are deployed: YAML or JSON objects, a file or a directory of them (JSON that names a Node is a dump)' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l now -d 'The instant the kubelets stop, in every scenario (RFC 3339), instead of the current time' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l at -d 'With -f RECORD (what `record` wrote): the state it holds at this instant (RFC 3339), the kubelets stopping then; its last line\'s when left out' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s n -l namespace -d 'Only this namespace\'s pods and owners' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s o -l output -d 'Output format' -r -f -a "table\t'The findings, then each outage\'s owners left with none'
json\t'An `EvictionAudit` document'
yaml\t'The same document as YAML'
sarif\t'SARIF 2.1.0, as code-scanning tools read it: rendered manifests\' findings only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l fail-on -d 'End with exit code 3 when a finding is at or above this severity (for CI)' -r -f -a "low\t'Every finding'
medium\t'Medium and high findings'
high\t'High findings only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l color -d 'When to colour the table' -r -f -a "auto\t'Colour when stdout is a terminal and `NO_COLOR` is not set'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l profile -d 'Rendered manifests: the cluster they will run on (its Kubernetes version, the controller\'s settings, the API server\'s default tolerations, its zones and their node counts), a YAML file' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l profile-from -d 'Rendered manifests: the cluster they will run on, taken from a dump (`kubectl get nodes,pods -A -o json`) as `profile -f DUMP` takes it' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l node-monitor-grace-period -d 'Silence after which the controller marks a node Ready=Unknown [default: 40s before Kubernetes 1.32, 50s from 1.32; a dump: 40s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l node-monitor-period -d 'The controller\'s node health pass period [default: 5s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l node-eviction-rate -d 'Nodes tainted per second per zone while the zone is healthy [default: 0.1]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l secondary-node-eviction-rate -d 'Nodes tainted per second in a large partially disrupted zone [default: 0.01]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l unhealthy-zone-threshold -d 'The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l large-cluster-size-threshold -d 'A zone with more nodes than this is large (tainted at the secondary rate when disrupted) [default: 50]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l kube-api-qps -d 'Requests a second kube-controller-manager\'s own client makes at most: the pass that marks many nodes silent writes each one\'s status and its ready pods\' through it [default: 20]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l kube-api-burst -d 'The burst of that client [default: 30]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l silent-after -d 'A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent (kubelets renew every 10s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l feature-gates -d 'kube-controller-manager\'s feature gates this tool follows, in its flag\'s form: `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default: on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API server with the gate on; off before 1.35]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l kube-version -d 'The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster\'s; for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest version modelled, 1.37]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l controller-settings -d 'The node lifecycle controller\'s settings, from a file: kube-controller-manager\'s manifest (its static pod\'s YAML), or a YAML or JSON map of the settings by flag name (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a cluster that does not show it); a flag given wins (docs/node-lifecycle.md)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l quorum-read -d 'Read from etcd (a quorum read, paged) instead of the API server\'s watch cache'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s A -l all-namespaces -d 'Every namespace\'s (the default)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l summary -d 'Print the findings\' count by severity and one line per outage'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -l profile-from-cluster -d 'Rendered manifests: the cluster they will run on, taken from the cluster kubectl connects to, as `profile` takes it'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand audit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -s f -l filename -d 'Take it from a `kubectl get nodes,pods -A -o json` dump instead of the live cluster (`-` for stdin)' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l quorum-read -d 'Read from etcd (a quorum read, paged) instead of the API server\'s watch cache'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand profile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l device-taints -d 'Also enforce DRA device taints (Kubernetes 1.33+), as kube-controller-manager\'s device-taint-eviction-controller does; false leaves them to the cluster' -r -f -a "true\t''
false\t''"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s l -l selector -d 'Only enforce on nodes matching this label selector' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s n -l namespace -d 'Only enforce on pods of this namespace: the pods are listed and watched in it alone' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l mode -d 'How a due pod goes: `delete` (upstream\'s controller) or `evict` (the Eviction API, which respects PodDisruptionBudgets)' -r -f -a "delete\t'DELETE, after the DisruptionTarget condition: what the cluster\'s controller does; PodDisruptionBudgets are not consulted'
evict\t'The Eviction API (policy/v1): a pod whose PodDisruptionBudget allows no disruption waits, retried until the budget allows it'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l concurrency -d 'Deletions in flight at once' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l max-deletions -d 'A brake: at most this many deletions per `--max-deletions-window`; past it the due pods are held (and listed) until the window frees a slot [default: no cap]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l max-deletions-window -d 'The sliding window `--max-deletions` counts in' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l qps -d 'Writes per second to the API server (DELETE, status PATCH, event POST); 0: unlimited' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l burst -d 'Writes that may go at once before `--qps` paces them (kube-controller-manager\'s `--kube-api-burst`: 30)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s o -l output -d 'Output format (default: text on a terminal, JSON Lines otherwise)' -r -f -a "text\t'One line per event for people (coloured on a terminal, with a status line)'
json\t'One JSON object per line'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l color -d 'When to colour the output' -r -f -a "auto\t'Colour when stdout is a terminal and `NO_COLOR` is not set'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l log-format -d 'Structured log records instead of the terminal view (for running in a cluster): one record per event on stdout; diagnostics (`RUST_LOG`) on stderr in the same format' -r -f -a "text\t'`TIME LEVEL EVENT text` lines, no colour'
json\t'One JSON object per line, with `level` and `msg`'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect-lease-name -d 'The Lease\'s name (default: kubectl-taint-evict for the whole cluster, else with a suffix derived from the scope: NODE…, -l and -n, so that runs over different scopes do not share one)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect-namespace -d 'The Lease\'s namespace (default: the kubeconfig context\'s, or the pod\'s in a cluster)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect-lease-duration -d 'How long a leader\'s claim lasts without renewal; others wait this long before taking over' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect-renew-deadline -d 'How long a leader keeps trying to renew before it stops deciding (less than the lease duration)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect-retry-period -d 'How often the lease is tried and renewed' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l metrics-bind-address -d 'Serve /metrics, /healthz and /readyz on this address (`:8080`, `127.0.0.1:9100`); off when unset' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l node-monitor-grace-period -d 'Silence after which the controller marks a node Ready=Unknown [default: 40s before Kubernetes 1.32, 50s from 1.32; a dump: 40s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l node-monitor-period -d 'The controller\'s node health pass period [default: 5s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l node-eviction-rate -d 'Nodes tainted per second per zone while the zone is healthy [default: 0.1]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l secondary-node-eviction-rate -d 'Nodes tainted per second in a large partially disrupted zone [default: 0.01]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l unhealthy-zone-threshold -d 'The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l large-cluster-size-threshold -d 'A zone with more nodes than this is large (tainted at the secondary rate when disrupted) [default: 50]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l kube-api-qps -d 'Requests a second kube-controller-manager\'s own client makes at most: the pass that marks many nodes silent writes each one\'s status and its ready pods\' through it [default: 20]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l kube-api-burst -d 'The burst of that client [default: 30]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l silent-after -d 'A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent (kubelets renew every 10s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l feature-gates -d 'kube-controller-manager\'s feature gates this tool follows, in its flag\'s form: `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default: on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API server with the gate on; off before 1.35]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l kube-version -d 'The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster\'s; for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest version modelled, 1.37]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l controller-settings -d 'The node lifecycle controller\'s settings, from a file: kube-controller-manager\'s manifest (its static pod\'s YAML), or a YAML or JSON map of the settings by flag name (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a cluster that does not show it); a flag given wins (docs/node-lifecycle.md)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s A -l all-namespaces -d 'Pods of all namespaces (the default: a node\'s pods span namespaces)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l dry-run -d 'Decide and report everything, write nothing (no condition, no deletion, no event)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l restart-countdowns -d 'Restart every countdown at start, as upstream\'s controller does when it starts, instead of continuing the deadlines `plan` shows'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l keep-last-ready -d 'A guard: never delete the last ready replica of a workload (the pods of one controller); its deletion is held (and listed) until another replica is ready'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -l leader-elect -d 'Decide and delete only while holding a Lease, so that several instances can run and one acts'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l out -d 'The directory the record\'s files are written in (created when missing)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l leases-every -d 'Each node Lease\'s renewal is written at most this often (and at once before a line of its node); the controller manager\'s Lease on every change' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l file-size -d 'A file this large ends and the next begins, with its header and every kind listed again, so that each file stands alone' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l max-size -d 'The files together stay under this: the oldest are removed; 0 keeps them all' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l max-age -d 'Files whose last line is older than this are removed (`7d`, `72h`) [default: kept]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l cluster -d 'The kubeconfig cluster to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l user -d 'The kubeconfig user to use (instead of the context\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -s s -l server -d 'The address and port of the API server (instead of the cluster\'s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l token -d 'A bearer token to authenticate with (instead of the user\'s credentials)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l as -d 'Act as this user (impersonation)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l as-group -d 'Act as this group, with --as (repeatable)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l as-uid -d 'Act as this UID, with --as' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l certificate-authority -d 'A certificate file of the certificate authority to verify the server with' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l client-certificate -d 'A client certificate file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l client-key -d 'A client key file for TLS' -r -F
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l tls-server-name -d 'The server name to verify the server\'s certificate with (instead of the server\'s host)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l request-timeout -d 'The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l max-response-size -d 'The most bytes one answer of the API server (a list page, an object) or a dump (-f) may hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l content-type -d 'What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as kube-controller-manager reads; the server encodes it several times cheaper than JSON) or json. A server that cannot answer protobuf answers JSON' -r -f -a "protobuf\t'Protobuf, with JSON as the fallback: the API server\'s cheapest encoding'
json\t'JSON only'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l insecure-skip-tls-verify -d 'Do not verify the server\'s TLS certificate (insecure: anyone on the path can read and change the traffic, the credentials included)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -l disable-compression -d 'Do not ask the API server to compress its answers (gzip), as kubectl\'s flag and the kubeconfig cluster\'s `disable-compression`: it spends less CPU on each list, and the answers cross the network several times larger. For a client near the API server (in the cluster, on its network) during an incident'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand record" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l slack -d 'A deletion within this much of when it was due is on time (the record\'s instants are to the second)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -s n -l namespace -d 'Only this namespace\'s pods' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -s o -l output -d 'Output format' -r -f -a "table\t'Each pod\'s verdict, then the leader changes and the gaps'
json\t'A `Review` document'
yaml\t'The same document as YAML'"
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l node-monitor-grace-period -d 'Silence after which the controller marks a node Ready=Unknown [default: 40s before Kubernetes 1.32, 50s from 1.32; a dump: 40s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l node-monitor-period -d 'The controller\'s node health pass period [default: 5s]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l node-eviction-rate -d 'Nodes tainted per second per zone while the zone is healthy [default: 0.1]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l secondary-node-eviction-rate -d 'Nodes tainted per second in a large partially disrupted zone [default: 0.01]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l unhealthy-zone-threshold -d 'The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l large-cluster-size-threshold -d 'A zone with more nodes than this is large (tainted at the secondary rate when disrupted) [default: 50]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l kube-api-qps -d 'Requests a second kube-controller-manager\'s own client makes at most: the pass that marks many nodes silent writes each one\'s status and its ready pods\' through it [default: 20]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l kube-api-burst -d 'The burst of that client [default: 30]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l silent-after -d 'A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent (kubelets renew every 10s)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l feature-gates -d 'kube-controller-manager\'s feature gates this tool follows, in its flag\'s form: `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default: on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API server with the gate on; off before 1.35]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l kube-version -d 'The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster\'s; for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest version modelled, 1.37]' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -l controller-settings -d 'The node lifecycle controller\'s settings, from a file: kube-controller-manager\'s manifest (its static pod\'s YAML), or a YAML or JSON map of the settings by flag name (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a cluster that does not show it); a flag given wins (docs/node-lifecycle.md)' -r
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand review" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "plan" -d 'Show each pod\'s verdict and eviction deadline on NoExecute-tainted nodes'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "explain" -d 'Say, for one pod, which toleration matched which taint and why'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "audit" -d 'Predict every zone\'s and every node\'s outage, and find what the tolerations leave exposed'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "profile" -d 'Print the cluster\'s profile as the YAML `audit --profile` reads'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "run" -d 'Enforce NoExecute evictions: watch nodes and pods, delete pods when they are due'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "record" -d 'Record what the taint-eviction decisions depend on, as it changes, into files for review'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "review" -d 'After an incident: each deletion a record saw, against when the controller should have made it'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "completion" -d 'Print a shell completion script (or kubectl\'s completion helper)'
complete -c kubectl-taint_evict -n "__fish_kubectl_taint_evict_using_subcommand help; and not __fish_seen_subcommand_from plan explain audit profile run record review completion help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
