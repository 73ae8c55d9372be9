//! HTTP as the client needs it: one request in, one whole response out, or a transport error.
//!
//! The client logic talks to a `Transport`, not to reqwest, so that its unit tests script the
//! server's answers (and cut connections) without sockets. `HttpTransport` is the real one:
//! reqwest's blocking client with connect and whole-request timeouts and connection reuse.
//! Bodies are passed through untouched — the client compresses and decompresses them itself —
//! so the byte counts it keeps are the bytes on the wire.

use std::fmt;
use std::time::Duration;

use super::ClientError;

/// The HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
        }
    }
}

/// One request: a path (with query) relative to the server's base URL.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: Method,
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl fmt::Debug for HttpRequest {
    // Never a token or a body in a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} ({} B)",
            self.method.as_str(),
            self.path,
            self.body.len()
        )
    }
}

impl HttpRequest {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.set_header(name, value);
        self
    }

    pub fn set_header(&mut self, name: &str, value: impl Into<String>) {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.into()));
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One whole response.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    /// As received (still compressed if `content-encoding` says so).
    pub body: Vec<u8>,
}

impl fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} ({} B)", self.status, self.body.len())
    }
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// What went wrong below HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportErrorKind {
    /// No connection could be made (server down, no network).
    Connect,
    /// The request or response took longer than the timeout.
    Timeout,
    /// The connection broke mid-way (reset, closed before the whole response arrived).
    Io,
    /// The server's TLS certificate is not trusted (unknown authority, another name, expired):
    /// not a matter of signal, so never retried; the city's IT must look at it.
    Certificate,
}

/// A request that got no (complete) response. Worth retrying, every request of the client
/// being idempotent — but for a refused certificate ([`TransportErrorKind::Certificate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {detail}", match .kind {
    TransportErrorKind::Connect => "sem conexão com o servidor",
    TransportErrorKind::Timeout => "o servidor não respondeu a tempo",
    TransportErrorKind::Certificate => "o aparelho não confia no certificado do servidor",
    TransportErrorKind::Io => "a conexão caiu no meio da troca",
})]
pub struct TransportError {
    pub kind: TransportErrorKind,
    pub detail: String,
}

/// Sends requests to one server.
pub trait Transport: Send + Sync + fmt::Debug {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError>;
    /// The server's base URL (for messages and the stored session).
    fn base_url(&self) -> &str;
}

/// How long the real transport waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    /// The whole exchange: sending the body, the server's work, reading the answer.
    pub request: Duration,
}

impl Default for Timeouts {
    /// 10 s to connect; 120 s for a request, enough for a phone back from days offline sending
    /// thousands of records over a slow link in one exchange.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(120),
        }
    }
}

/// reqwest's blocking client. Must not be created or dropped on an async runtime's thread
/// (reqwest runs its own runtime inside); the app calls the client from a background thread.
#[derive(Debug)]
pub struct HttpTransport {
    base: String,
    client: reqwest::blocking::Client,
}

impl HttpTransport {
    /// A transport that trusts Mozilla's root store (`super::tls`).
    pub fn new(base_url: &str, timeouts: Timeouts) -> Result<Self, ClientError> {
        Self::with_ca(base_url, timeouts, None)
    }

    /// A transport that also trusts the certificates of `extra_ca_pem` (a city's private CA);
    /// a text that holds none, or a broken one, is refused here ([`super::tls::TlsError`]).
    pub fn with_ca(
        base_url: &str,
        timeouts: Timeouts,
        extra_ca_pem: Option<&str>,
    ) -> Result<Self, ClientError> {
        let base = base_url.trim().trim_end_matches('/').to_owned();
        let ok = reqwest::Url::parse(&base)
            .map(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .unwrap_or(false);
        if !ok {
            return Err(ClientError::BadUrl(base_url.to_owned()));
        }
        let tls = super::tls::client_config(extra_ca_pem)?;
        let client = reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(timeouts.connect)
            .timeout(timeouts.request)
            .user_agent(concat!("taxi-fiscal-sync/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::BadUrl(format!("{base_url}: {e}")))?;
        Ok(Self { base, client })
    }
}

fn classify(e: &reqwest::Error) -> TransportErrorKind {
    if refused_certificate(e) {
        TransportErrorKind::Certificate
    } else if e.is_timeout() {
        TransportErrorKind::Timeout
    } else if e.is_connect() {
        TransportErrorKind::Connect
    } else {
        TransportErrorKind::Io
    }
}

/// Whether rustls refused the server's certificate somewhere in the error's chain. rustls'
/// error travels inside `io::Error`s (tokio-rustls wraps it, hyper-rustls wraps that again),
/// and `io::Error::source()` skips the error it wraps, so each one is opened with `get_ref`.
fn refused_certificate(e: &reqwest::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(mut err) = next {
        loop {
            if let Some(tls) = err.downcast_ref::<rustls::Error>() {
                return matches!(
                    tls,
                    rustls::Error::InvalidCertificate(_)
                        | rustls::Error::NoCertificatesPresented
                        | rustls::Error::InvalidCertRevocationList(_)
                );
            }
            match err
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
            {
                Some(inner) => err = inner,
                None => break,
            }
        }
        next = err.source();
    }
    false
}

fn transport_error(e: reqwest::Error) -> TransportError {
    // The full chain ("connection reset by peer", …) without the URL's query.
    let kind = classify(&e);
    let e = e.without_url();
    let mut detail = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    TransportError { kind, detail }
}

impl Transport for HttpTransport {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let url = format!("{}{}", self.base, request.path);
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
        };
        let mut builder = self.client.request(method, url);
        for (n, v) in &request.headers {
            builder = builder.header(n.as_str(), v.as_str());
        }
        if !request.body.is_empty() || request.method != Method::Get {
            builder = builder.body(request.body.clone());
        }
        let response = builder.send().map_err(transport_error)?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        // Read under the client's bound: a server sending without end must not fill the phone.
        let limit = super::MAX_RESPONSE_BYTES;
        let mut body = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(response, limit as u64 + 1),
            &mut body,
        )
        .map_err(|e| TransportError {
            kind: TransportErrorKind::Io,
            detail: e.to_string(),
        })?;
        if body.len() > limit {
            return Err(TransportError {
                kind: TransportErrorKind::Io,
                detail: format!("resposta maior que {limit} bytes, o máximo aceito"),
            });
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }

    fn base_url(&self) -> &str {
        &self.base
    }
}
