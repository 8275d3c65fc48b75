//! The signals that stop a live command: the first SIGINT or SIGTERM stops it gracefully, a second
//! ends the process at once.

/// Resolves at the first SIGINT or SIGTERM; a second one ends the process at once with 130.
pub async fn interrupted() {
    wait_for_signal().await;
    tokio::spawn(async {
        wait_for_signal().await;
        eprintln!("interrupted again: quitting without waiting");
        std::process::exit(130);
    });
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            Some(()) = async { match term.as_mut() { Some(term) => term.recv().await, None => None } } => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
