//! Whether the reader of `run`'s lines went away: every deletion is recorded on stdout, so `run`
//! stops enforcing as soon as its lines cannot reach anyone (docs/run.md). A pipe says so when its
//! reader closes it (`run | head -1`), before the next line is written, so no deletion starts
//! after it; anything else (a file, a terminal, a socket) says so when a write fails.

/// Resolves when stdout is a pipe whose reader has closed it; otherwise never.
pub async fn closed() {
    #[cfg(unix)]
    if let Some(pipe) = watched() {
        // A pipe without readers is an error to epoll (EPOLLERR), with no write needed.
        if let Ok(ready) = pipe.ready(tokio::io::Interest::ERROR).await
            && (ready.is_error() || ready.is_write_closed())
        {
            return;
        }
    }
    std::future::pending().await
}

/// A copy of stdout, registered to be told when its reader goes, if it is a pipe.
#[cfg(unix)]
fn watched() -> Option<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;

    let copy = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    if !copy.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    // Never written through, only watched: left blocking, as stdout shares its flags
    // (`Sender::from_file` would make stdout's writes fail with WouldBlock when the pipe is full).
    tokio::net::unix::pipe::Sender::from_file_unchecked(copy).ok()
}
