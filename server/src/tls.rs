//! Built-in TLS: `serve --tls-cert FILE --tls-key FILE` (or `TAXI_FISCAL_TLS_CERT` /
//! `TAXI_FISCAL_TLS_KEY`) serves HTTPS itself, for a city without a reverse proxy in front.
//!
//! Flow: [`server_config`] reads the PEM certificate chain and private key once at start (a
//! wrong file stops the start with a sentence naming it) into a rustls configuration on the
//! `ring` provider, offering HTTP/1.1. [`TlsListener`] wraps the bound TCP listener: a task
//! accepts TCP connections and runs each handshake in its own task, bounded in time
//! ([`TLS_HANDSHAKE_TIMEOUT`]) and in number ([`MAX_PENDING_HANDSHAKES`]); finished handshakes
//! are handed to axum through a channel. So a client that opens a connection and never speaks
//! holds one slot for a few seconds, never the accept loop, and a flood of them waits at the
//! TCP backlog instead of growing memory.
//!
//! Renewing the certificate: replace the files and restart (a graceful restart drains requests
//! in flight; devices retry what a cut connection lost).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client has to finish the TLS handshake after connecting. A phone on a weak link
/// finishes one in well under a second or two; ten leave room for a bad cell and still free
/// the slot of a client that connected and went silent.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Handshakes in progress at once. Each holds a socket and a few KiB of rustls state; beyond
/// this the listener stops accepting until one finishes or times out, and new connections wait
/// in the kernel's backlog.
pub const MAX_PENDING_HANDSHAKES: usize = 256;

/// Finished handshakes waiting for axum to take them. axum takes each at once; the bound only
/// stops a stalled server from queueing connections without end.
const READY_QUEUE: usize = 64;

/// Why the TLS files could not be used; every case names the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    #[error("certificado TLS {path}: {reason}")]
    Certificate { path: String, reason: String },
    #[error("chave privada TLS {path}: {reason}")]
    Key { path: String, reason: String },
    #[error("o certificado TLS e a chave privada não formam um par: {0}")]
    Mismatch(String),
}

/// The rustls configuration of `cert` (PEM chain, the server's certificate first) and `key`
/// (PEM private key, PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsConfigError> {
    let cert_err = |reason: String| TlsConfigError::Certificate {
        path: cert.display().to_string(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| cert_err(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_err(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_err(String::from(
            "nenhum certificado no arquivo (esperado -----BEGIN CERTIFICATE-----)",
        )));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsConfigError::Key {
        path: key.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| TlsConfigError::Mismatch(e.to_string()))?
    .with_no_client_auth()
    .with_single_cert(chain, key_der)
    .map_err(|e| TlsConfigError::Mismatch(e.to_string()))?;
    // axum serves HTTP/1.1 (its `http2` feature is off).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A TCP listener whose connections come out TLS-terminated (see the module doc). Dropping it
/// stops accepting.
#[derive(Debug)]
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor: tokio::task::JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl TlsListener {
    /// Serves `config` on `tcp` with the limits of this module. Must be called on a tokio
    /// runtime.
    pub fn new(tcp: TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<Self> {
        Self::with_limits(tcp, config, TLS_HANDSHAKE_TIMEOUT, MAX_PENDING_HANDSHAKES)
    }

    /// [`TlsListener::new`] with other limits (tests use short ones).
    pub fn with_limits(
        tcp: TcpListener,
        config: Arc<rustls::ServerConfig>,
        handshake_timeout: Duration,
        max_pending: usize,
    ) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(READY_QUEUE);
        let slots = Arc::new(Semaphore::new(max_pending.max(1)));
        let tls = TlsAcceptor::from(config);
        let acceptor = tokio::spawn(async move {
            loop {
                // A slot first: with every slot taken, connections wait in the backlog.
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                let (socket, peer) = match tcp.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little, as axum does.
                        tracing::warn!(error = %e, "aceitando conexão TLS");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let tls = tls.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let handshake = tokio::time::timeout(handshake_timeout, tls.accept(socket));
                    match handshake.await {
                        Ok(Ok(stream)) => {
                            drop(slot);
                            let _ = tx.send((stream, peer)).await;
                        }
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "handshake TLS recusado");
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "handshake TLS não terminou a tempo");
                        }
                    }
                });
            }
        });
        Ok(Self {
            ready,
            local,
            acceptor,
        })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(c) => c,
            // The accepting task ended (only when the runtime shuts down): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::PathBuf;
    use std::time::Instant;

    use axum::serve::Listener;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A CA and a server certificate for 127.0.0.1 from `scripts/test-ca`.
    fn test_ca() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-ca");
        let out = std::process::Command::new("bash")
            .arg(script)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    }

    #[test]
    fn wrong_files_stop_the_start_naming_them() {
        let ca = test_ca();
        let (cert, key) = (ca.path().join("server.pem"), ca.path().join("server.key"));
        assert!(server_config(&cert, &key).is_ok());

        let missing = ca.path().join("nao-existe.pem");
        let e = server_config(&missing, &key).unwrap_err();
        assert!(matches!(e, TlsConfigError::Certificate { .. }), "{e:?}");
        assert!(e.to_string().contains("nao-existe.pem"), "{e}");

        // The key file given as the certificate: no certificate in it.
        let e = server_config(&key, &key).unwrap_err();
        assert!(e.to_string().contains("nenhum certificado"), "{e}");

        // The CA's key with the server's certificate: not a pair.
        let e = server_config(&cert, &ca.path().join("ca.key")).unwrap_err();
        assert!(matches!(e, TlsConfigError::Mismatch(_)), "{e:?}");

        let e = server_config(&cert, &cert).unwrap_err();
        assert!(matches!(e, TlsConfigError::Key { .. }), "{e:?}");
    }

    /// With one handshake slot, a client that connects and stays silent holds it until the
    /// handshake timeout, then is disconnected; the next client's handshake waits for the slot
    /// (at the TCP backlog), then completes and reaches the server.
    #[tokio::test]
    async fn a_silent_client_holds_a_slot_only_until_the_handshake_timeout() {
        let ca = test_ca();
        let config =
            server_config(&ca.path().join("server.pem"), &ca.path().join("server.key")).unwrap();
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let timeout = Duration::from_millis(300);
        let mut listener = TlsListener::with_limits(tcp, config, timeout, 1).unwrap();
        let addr = listener.local_addr().unwrap();

        let mut silent = TcpStream::connect(addr).await.unwrap();
        // Give the acceptor the silent connection first (it holds the only slot after this).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let pem = std::fs::read_to_string(ca.path().join("ca.pem")).unwrap();
        let client = tokio::spawn(async move {
            let config = sync_core::client::tls::client_config(Some(&pem)).unwrap();
            let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
            let tcp = TcpStream::connect(addr).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
            let mut tls = connector.connect(name, tcp).await.unwrap();
            tls.write_all(b"ola").await.unwrap();
            tls.flush().await.unwrap();
            tls
        });
        let (mut served, peer) = tokio::time::timeout(Duration::from_secs(10), listener.accept())
            .await
            .unwrap();
        assert!(
            started.elapsed() >= timeout - Duration::from_millis(60),
            "the second handshake waited for the slot: {:?}",
            started.elapsed()
        );
        assert_eq!(peer.ip(), addr.ip());
        let mut buf = [0u8; 3];
        served.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ola");
        drop(client.await.unwrap());

        // The silent client was disconnected when its time ran out.
        let mut rest = Vec::new();
        let n = tokio::time::timeout(Duration::from_secs(5), silent.read_to_end(&mut rest))
            .await
            .unwrap()
            .unwrap_or(0);
        assert_eq!(n, 0);
    }
}
