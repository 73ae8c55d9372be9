//! A throwaway certificate authority for the HTTPS tests: `scripts/test-ca` (openssl) writes a
//! CA and a server certificate for 127.0.0.1 into a temporary directory; the server is started
//! with the certificate and key, the clients are handed the CA's PEM text.

use std::path::PathBuf;
use std::process::Command;

/// The CA and the server certificate it signed; the files live as long as this value.
#[derive(Debug)]
pub struct TestCa {
    /// The CA certificate, PEM: what a client is told to trust.
    pub ca_pem: String,
    /// The server's certificate (PEM) and key, for `--tls-cert` / `--tls-key`.
    pub cert: PathBuf,
    pub key: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestCa {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-ca");
        let out = Command::new("bash")
            .arg(&script)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/test-ca: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self {
            ca_pem: std::fs::read_to_string(dir.path().join("ca.pem")).unwrap(),
            cert: dir.path().join("server.pem"),
            key: dir.path().join("server.key"),
            _dir: dir,
        }
    }

    /// The environment that makes `taxi-fiscal demo`/`serve` serve HTTPS with this certificate.
    pub fn server_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TAXI_FISCAL_TLS_CERT", self.cert.display().to_string()),
            ("TAXI_FISCAL_TLS_KEY", self.key.display().to_string()),
        ]
    }
}

impl Default for TestCa {
    fn default() -> Self {
        Self::new()
    }
}

/// A blocking HTTP client of the tests, trusting the public roots and `ca_pem` when given.
/// reqwest is built without a TLS provider of its own (the project's is `ring`, chosen in
/// `sync_core::client::tls`), so every client is handed that configuration, even for http.
pub fn http(ca_pem: Option<&str>) -> reqwest::blocking::ClientBuilder {
    reqwest::blocking::Client::builder()
        .tls_backend_preconfigured(sync_core::client::tls::client_config(ca_pem).unwrap())
}
