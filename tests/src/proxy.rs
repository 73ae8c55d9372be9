//! A TCP proxy between devices and the server that breaks requests on purpose.
//!
//! It runs on its own tokio runtime. Each connection carries exactly one HTTP/1.1 request: the
//! proxy reads the request head and its `Content-Length` body from the device, rewrites the
//! head with `connection: close` (so the server closes after answering and the client opens a
//! new connection for its next request), then looks for the first queued [`Fault`] whose
//! pattern prefixes `"METHOD /path"` and applies it — or forwards faithfully when none does.
//! Every connection ends with a [`ProxyEvent`] on a channel that the test reads with a
//! deadline; `Pause…` faults wait for [`Proxy::resume`], so the test can kill the server at a
//! known point of an exchange.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// What to do to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forward the request head and only the first `n` bytes of its body, then close both
    /// connections (cut on the way up: the server never sees the whole request).
    CutRequest(usize),
    /// Forward the whole request; relay only the first `n` bytes of the server's answer (0:
    /// none), then close (cut on the way down: the server did the work, the device never
    /// learns it).
    CutResponse(usize),
    /// Send the request to the server twice: a copy first (its answer discarded), then the
    /// request itself, whose answer is relayed (a replayed request).
    Duplicate,
    /// Forward the head and half of the body, report `Paused`, wait for `resume`, then try to
    /// send the rest and relay whatever comes back (the test kills the server meanwhile).
    PauseMidRequest,
}

/// What the proxy did with one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyEvent {
    /// Forwarded faithfully (`status`: first line of the answer, empty if none).
    Forwarded { request: String, status: String },
    /// A fault was applied.
    Faulted { request: String, fault: Fault },
    /// A `PauseMidRequest` is waiting for `resume`.
    Paused { request: String },
    /// The server could not be reached; the device's connection was closed.
    UpstreamDown { request: String },
}

#[derive(Debug)]
struct Shared {
    upstream: SocketAddr,
    rules: Mutex<VecDeque<(String, Fault)>>,
    events: Mutex<Sender<ProxyEvent>>,
    resume: Semaphore,
}

/// The running proxy; stopped on drop.
#[derive(Debug)]
pub struct Proxy {
    pub url: String,
    shared: Arc<Shared>,
    events: Receiver<ProxyEvent>,
    _runtime: tokio::runtime::Runtime,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub fn start(upstream: SocketAddr) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (tx, rx) = channel();
        let shared = Arc::new(Shared {
            upstream,
            rules: Mutex::new(VecDeque::new()),
            events: Mutex::new(tx),
            resume: Semaphore::new(0),
        });
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let s = shared.clone();
        runtime.spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    continue;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    handle(s, conn).await;
                });
            }
        });
        Self {
            url: format!("http://{addr}"),
            shared,
            events: rx,
            _runtime: runtime,
        }
    }

    /// Queues `fault` for the next request starting with `pattern` (e.g. `"POST /v1/sync"`).
    pub fn push(&self, pattern: &str, fault: Fault) {
        self.shared
            .rules
            .lock()
            .unwrap()
            .push_back((pattern.to_owned(), fault));
    }

    /// Faults not yet applied.
    pub fn pending(&self) -> usize {
        self.shared.rules.lock().unwrap().len()
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_event(&self, timeout: Duration) -> ProxyEvent {
        self.events
            .recv_timeout(timeout)
            .expect("no proxy event within the deadline")
    }

    /// Events so far, without waiting.
    pub fn drain_events(&self) -> Vec<ProxyEvent> {
        self.events.try_iter().collect()
    }

    /// Lets one paused connection go on.
    pub fn resume(&self) {
        self.shared.resume.add_permits(1);
    }
}

fn emit(s: &Shared, e: ProxyEvent) {
    let _ = s.events.lock().unwrap().send(e);
}

/// One request as read from the device, rewritten for the server.
struct Request {
    /// `"METHOD /path?query"`.
    name: String,
    bytes: Vec<u8>,
    /// Where the body starts in `bytes`.
    body_at: usize,
}

/// Reads one request (head + `Content-Length` body). `None` if the device closed first.
async fn read_request(conn: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p + 4;
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    let mut kept = vec![request_line.clone()];
    for l in lines.filter(|l| !l.is_empty()) {
        let lower = l.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("connection:") {
            continue;
        }
        kept.push(l.to_owned());
    }
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    kept.push("connection: close".into());
    let mut out = kept.join("\r\n").into_bytes();
    out.extend_from_slice(b"\r\n\r\n");
    let body_at = out.len();
    out.extend_from_slice(&buf[head_end..head_end + length]);
    // "POST /v1/sync HTTP/1.1" → "POST /v1/sync"
    let name = request_line
        .rsplit_once(' ')
        .map(|(a, _)| a.to_owned())
        .unwrap_or(request_line);
    Some(Request {
        name,
        bytes: out,
        body_at,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn handle(s: Arc<Shared>, mut device: TcpStream) {
    let Some(Request {
        name,
        bytes: request,
        body_at,
    }) = read_request(&mut device).await
    else {
        return;
    };
    let fault = {
        let mut rules = s.rules.lock().unwrap();
        let i = rules.iter().position(|(p, _)| name.starts_with(p.as_str()));
        i.and_then(|i| rules.remove(i)).map(|(_, f)| f)
    };
    let Ok(mut server) = TcpStream::connect(s.upstream).await else {
        emit(&s, ProxyEvent::UpstreamDown { request: name });
        return;
    };
    match fault {
        None => {
            let status = forward(&mut server, &mut device, &request).await;
            emit(
                &s,
                ProxyEvent::Forwarded {
                    request: name,
                    status,
                },
            );
        }
        Some(f @ Fault::CutRequest(n)) => {
            let _ = server
                .write_all(&request[..(body_at + n).min(request.len())])
                .await;
            let _ = server.flush().await;
            // Both sides just go away: the server sees a truncated body, the device a reset.
            drop(server);
            drop(device);
            emit(
                &s,
                ProxyEvent::Faulted {
                    request: name,
                    fault: f,
                },
            );
        }
        Some(f @ Fault::CutResponse(n)) => {
            let _ = server.write_all(&request).await;
            let mut answer = Vec::new();
            let _ = server.read_to_end(&mut answer).await;
            let _ = device.write_all(&answer[..n.min(answer.len())]).await;
            let _ = device.flush().await;
            drop(device);
            emit(
                &s,
                ProxyEvent::Faulted {
                    request: name,
                    fault: f,
                },
            );
        }
        Some(f @ Fault::Duplicate) => {
            // The copy first, to completion; then the request itself on the first connection.
            if let Ok(mut copy) = TcpStream::connect(s.upstream).await {
                let _ = copy.write_all(&request).await;
                let mut discard = Vec::new();
                let _ = copy.read_to_end(&mut discard).await;
            }
            forward(&mut server, &mut device, &request).await;
            emit(
                &s,
                ProxyEvent::Faulted {
                    request: name,
                    fault: f,
                },
            );
        }
        Some(f @ Fault::PauseMidRequest) => {
            let half = body_at + (request.len() - body_at) / 2;
            let _ = server.write_all(&request[..half]).await;
            let _ = server.flush().await;
            emit(
                &s,
                ProxyEvent::Paused {
                    request: name.clone(),
                },
            );
            if let Ok(permit) = s.resume.acquire().await {
                permit.forget();
            }
            let _ = server.write_all(&request[half..]).await;
            let mut answer = Vec::new();
            let _ = server.read_to_end(&mut answer).await;
            let _ = device.write_all(&answer).await;
            drop(device);
            emit(
                &s,
                ProxyEvent::Faulted {
                    request: name,
                    fault: f,
                },
            );
        }
    }
}

/// Sends the request, relays the whole answer; returns the answer's status line.
async fn forward(server: &mut TcpStream, device: &mut TcpStream, request: &[u8]) -> String {
    if server.write_all(request).await.is_err() {
        return String::new();
    }
    let mut answer = Vec::new();
    let _ = server.read_to_end(&mut answer).await;
    let _ = device.write_all(&answer).await;
    let _ = device.flush().await;
    let _ = device.shutdown().await;
    let end = find(&answer, b"\r\n").unwrap_or(0);
    String::from_utf8_lossy(&answer[..end]).into_owned()
}
