//! A proxy on loopback, as corporate and bastion setups put in front of an API server: it speaks HTTP
//! CONNECT and SOCKS5 (no authentication) on one port, tunnels each request to its target and counts
//! the tunnels it opened. It can also cut every tunnel and refuse new ones for a while, as a network
//! between a client and its API server does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A running proxy; it stops with the test process.
pub struct ConnectProxy {
    port: u16,
    tunnels: Arc<AtomicUsize>,
    /// Set while the network is cut: connections are closed as they come.
    cut: Arc<AtomicBool>,
    /// The clients' sockets, to cut.
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl ConnectProxy {
    /// Listens on a free loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let tunnels = Arc::new(AtomicUsize::new(0));
        let (cut, open): (Arc<AtomicBool>, Arc<Mutex<Vec<TcpStream>>>) = Default::default();
        let (counted, refusing, sockets) = (tunnels.clone(), cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if refusing.load(Ordering::SeqCst) {
                    continue;
                }
                if let Ok(socket) = client.try_clone() {
                    sockets.lock().expect("sockets").push(socket);
                }
                let counted = counted.clone();
                std::thread::spawn(move || tunnel(client, &counted));
            }
        });
        Self { port, tunnels, cut, open }
    }

    /// Cuts every tunnel and refuses new connections until [`ConnectProxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for socket in self.open.lock().expect("sockets").drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `socks5://127.0.0.1:PORT`.
    pub fn socks5_url(&self) -> String {
        format!("socks5://127.0.0.1:{}", self.port)
    }

    /// How many tunnels it opened.
    pub fn tunnels(&self) -> usize {
        self.tunnels.load(Ordering::SeqCst)
    }
}

/// Serves one client: SOCKS5 when its first byte is version 5, else HTTP CONNECT.
fn tunnel(client: TcpStream, tunnels: &AtomicUsize) {
    let mut first = [0u8; 1];
    match client.peek(&mut first) {
        Ok(1) if first[0] == 5 => socks5(client, tunnels),
        Ok(1) => connect(client, tunnels),
        _ => {}
    }
}

/// SOCKS5 (RFC 1928): offers "no authentication", takes one CONNECT to an IPv4 address, a name or an
/// IPv6 address, connects, answers success and copies both ways.
fn socks5(mut client: TcpStream, tunnels: &AtomicUsize) {
    let mut greeting = [0u8; 2];
    let mut methods = [0u8; 255];
    if client.read_exact(&mut greeting).is_err()
        || client.read_exact(&mut methods[..usize::from(greeting[1])]).is_err()
        || client.write_all(&[5, 0]).is_err()
    {
        return;
    }
    let mut request = [0u8; 4];
    if client.read_exact(&mut request).is_err() || request[..3] != [5, 1, 0] {
        return;
    }
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            if client.read_exact(&mut ip).is_err() {
                return;
            }
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut length = [0u8; 1];
            let mut name = vec![0u8; 255];
            if client.read_exact(&mut length).is_err()
                || client.read_exact(&mut name[..usize::from(length[0])]).is_err()
            {
                return;
            }
            String::from_utf8_lossy(&name[..usize::from(length[0])]).into_owned()
        }
        4 => {
            let mut ip = [0u8; 16];
            if client.read_exact(&mut ip).is_err() {
                return;
            }
            format!("[{}]", std::net::Ipv6Addr::from(ip))
        }
        _ => return,
    };
    let mut port = [0u8; 2];
    if client.read_exact(&mut port).is_err() {
        return;
    }
    let Ok(upstream) = TcpStream::connect(format!("{host}:{}", u16::from_be_bytes(port))) else {
        let _ = client.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]);
        return;
    };
    tunnels.fetch_add(1, Ordering::SeqCst);
    if client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).is_ok() {
        copy_both_ways(client.try_clone().expect("a second handle"), client, upstream);
    }
}

/// Reads `CONNECT host:port HTTP/1.1` and its headers, connects, answers 200 and copies both ways.
fn connect(client: TcpStream, tunnels: &AtomicUsize) {
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
    copy_both_ways(reader, client, upstream);
}

/// Copies what `from_client` reads to `upstream` and what `upstream` sends to `to_client`, each half
/// closed when its side ends.
fn copy_both_ways(mut from_client: impl Read + Send + 'static, to_client: TcpStream, upstream: TcpStream) {
    let mut to_upstream = upstream.try_clone().expect("a second handle");
    let (mut from_upstream, mut to_client) = (upstream, to_client);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_upstream);
        let _ = to_upstream.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut from_upstream, &mut to_client);
    let _ = to_client.shutdown(Shutdown::Write);
    let _ = up.join();
}
