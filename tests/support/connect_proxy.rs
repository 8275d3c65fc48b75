//! An HTTP CONNECT proxy on loopback, as corporate and bastion setups put in front of an API server: it
//! tunnels each CONNECT to its target and counts the tunnels it opened.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running proxy; it stops with the test process.
pub struct ConnectProxy {
    port: u16,
    tunnels: Arc<AtomicUsize>,
}

impl ConnectProxy {
    /// Listens on a free loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let tunnels = Arc::new(AtomicUsize::new(0));
        let counted = tunnels.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let counted = counted.clone();
                std::thread::spawn(move || tunnel(client, &counted));
            }
        });
        Self { port, tunnels }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many tunnels it opened.
    pub fn tunnels(&self) -> usize {
        self.tunnels.load(Ordering::SeqCst)
    }
}

/// Reads `CONNECT host:port HTTP/1.1` and its headers, connects, answers 200 and copies both ways.
fn tunnel(client: TcpStream, tunnels: &AtomicUsize) {
    let mut reader = BufReader::new(client.try_clone().expect("a second handle"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let target = match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["CONNECT", target, _] => target.to_owned(),
        _ => return,
    };
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    let Ok(upstream) = TcpStream::connect(&target) else {
        let _ = (&client).write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n");
        return;
    };
    tunnels.fetch_add(1, Ordering::SeqCst);
    let _ = (&client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
    let (mut from_client, mut to_upstream) = (reader, upstream.try_clone().expect("a second handle"));
    let (mut from_upstream, mut to_client) = (upstream, client);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_upstream);
        let _ = to_upstream.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut from_upstream, &mut to_client);
    let _ = to_client.shutdown(Shutdown::Write);
    let _ = up.join();
}
