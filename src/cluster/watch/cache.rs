//! Where a watch's lists come from.
//!
//! Owns: the watcher configuration every watch starts from. Uses: nothing of the crate.

use kube::runtime::watcher;

/// A watch whose (re-)lists are served from the API server's watch cache (`resourceVersion=0`, in one
/// page), as informers' initial lists are (kube-controller-manager's among them), not read from etcd
/// in pages (kube's default): the API server decodes nothing from etcd for them, which spares it most
/// when it is already under stress. The watch then resumes from the list's version, as informers do.
#[must_use]
pub fn from_watch_cache() -> watcher::Config {
    let mut config = watcher::Config::default().any_semantic();
    // kube leaves `resourceVersion=0` out of a limited list (servers before 1.31 ignore the limit on
    // a cache read): unlimited, so that the version is sent.
    config.page_size = None;
    config
}
