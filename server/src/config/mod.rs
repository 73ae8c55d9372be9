//! Server configuration: flags, then environment, then defaults.
//!
//! | setting | flag | environment | default |
//! |---|---|---|---|
//! | data directory | `--data DIR` | `TAXI_FISCAL_DATA` | required for `serve`; `./taxi-fiscal-demo` for `demo` |
//! | listen address | `--listen ADDR` | `TAXI_FISCAL_LISTEN` | `127.0.0.1:8080` |
//! | JWT secret | — | `TAXI_FISCAL_JWT_SECRET` (≥ 32 bytes) | generated once into `DIR/jwt-secret` |
//! | rules configuration (legacy) | — | — | `DIR/rules-config.json` if present: imported once into a registry without law parameters (`registry::law`), then ignored |
//! | log filter | — | `TAXI_FISCAL_LOG` (or `RUST_LOG`) | `info` |
//! | largest request body (bytes, decompressed; photos apart) | — | `TAXI_FISCAL_BODY_LIMIT` (≥ 65536) | 16 MiB |
//! | login and refresh attempts per client address in a burst (then one per 3 s) | — | `TAXI_FISCAL_AUTH_ADDRESS_BURST` (1 to 100 000) | 20 (`limits::AUTH_ATTEMPTS_PER_ADDRESS_BURST`) |
//! | authority named on a notification of penalty | — | `TAXI_FISCAL_NOTICE_AUTHORITY` | `office::notices::DEFAULT_AUTHORITY` |
//! | where and how to file, on a notification | — | `TAXI_FISCAL_NOTICE_FILING_PLACE` | `office::notices::DEFAULT_FILING_PLACE` |
//! | public origin(s) of the office pages | — | `TAXI_FISCAL_PUBLIC_URL` (comma-separated, e.g. `https://fiscal.americana.sp.gov.br`) | see below |
//!
//! The secret file is created with 32 random bytes (hex) and mode 0600 on first start; keeping
//! it in the data directory means a restart does not log everybody out.
//!
//! The public origins are what a browser's `Origin` (or `Referer`) must name for the office's
//! forms to be accepted (login included): the `Host` header is never trusted, since whoever
//! sends the request writes it. Without `TAXI_FISCAL_PUBLIC_URL` the server does not guess a
//! public name: it accepts the address it listens on — `http://127.0.0.1:PORT` and
//! `http://localhost:PORT` (and `http://[::1]:PORT`) for a loopback or wildcard listen,
//! `http://IP:PORT` for a specific address — and warns at start when listening on every
//! address, where other machines' browsers will be refused until it is set.

pub mod file;

pub use file::{FileSettings, Sources};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sync_core::rules::RulesConfig;

use crate::limits;

/// Default listen address: loopback only; expose it on purpose.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// File name of the database inside the data directory.
pub const DB_FILE: &str = "taxi-fiscal.db";
/// File name of the generated JWT secret inside the data directory.
pub const SECRET_FILE: &str = "jwt-secret";
/// File name of the rules configuration inside the data directory.
pub const RULES_FILE: &str = "rules-config.json";

/// Why the configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("endereço de escuta inválido {0:?} (ex.: 127.0.0.1:8080)")]
    Listen(String),
    #[error("TAXI_FISCAL_JWT_SECRET deve ter ao menos 32 bytes")]
    ShortSecret,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} não é uma configuração de regras válida: {reason}")]
    Rules { path: PathBuf, reason: String },
    #[error("não foi possível gerar números aleatórios: {0}")]
    Random(String),
    #[error(
        "TAXI_FISCAL_PUBLIC_URL: {0:?} não é uma origem http(s) (ex.: https://fiscal.exemplo.gov.br)"
    )]
    PublicUrl(String),
    #[error(
        "TAXI_FISCAL_BODY_LIMIT deve ser um número de bytes de ao menos {MIN_BODY_LIMIT} \
         (recebido {0:?})"
    )]
    BodyLimit(String),
    #[error(
        "TAXI_FISCAL_AUTH_ADDRESS_BURST deve ser um número de tentativas entre 1 e \
         {MAX_AUTH_ADDRESS_BURST} (recebido {0:?})"
    )]
    AuthBurst(String),
    #[error(
        "informe os dois arquivos do TLS, --tls-cert e --tls-key (ou TAXI_FISCAL_TLS_CERT e \
         TAXI_FISCAL_TLS_KEY), ou nenhum"
    )]
    TlsPair,
    #[error("arquivo de configuração {path}: {reason}")]
    File { path: PathBuf, reason: String },
    #[error(
        "TAXI_FISCAL_DATABASE_URL deve ser um endereço postgres://usuário:senha@máquina:porta/banco \
         (recebido um que começa por {0:?})"
    )]
    DatabaseUrl(String),
    #[error(
        "TAXI_FISCAL_UPLOAD_TIMEOUT_SECS deve ser um número de segundos entre {min} e {max} \
         (recebido {0:?})",
        min = UPLOAD_TIMEOUT_SECS_RANGE.start(),
        max = UPLOAD_TIMEOUT_SECS_RANGE.end()
    )]
    UploadTimeout(String),
    #[error(
        "TAXI_FISCAL_TRUSTED_PROXIES: {0:?} não é uma lista de endereços ou blocos (ex.: \
         127.0.0.1,10.0.0.0/24), de 1 a {max}",
        max = crate::auth::proxy::MAX_TRUSTED_PROXIES
    )]
    TrustedProxies(String),
    #[error("TAXI_FISCAL_METRICS_TOKEN deve ter ao menos {MIN_METRICS_TOKEN_LEN} caracteres")]
    MetricsToken,
}

/// Shortest `TAXI_FISCAL_METRICS_TOKEN`: 32 characters (e.g. `openssl rand -hex 16`), too many
/// to guess within the per-request cost of a scrape.
pub const MIN_METRICS_TOKEN_LEN: usize = 32;

fn parse_metrics_token(text: &str) -> Result<String, ConfigError> {
    let token = text.trim();
    if token.chars().count() < MIN_METRICS_TOKEN_LEN {
        return Err(ConfigError::MetricsToken);
    }
    Ok(token.to_owned())
}

/// Seconds an upload may take by default: a 10 MiB photo at 300 kbit/s (a weak 3G uplink) takes
/// about 4.5 minutes; five leave room for the server's own work.
pub const DEFAULT_UPLOAD_TIMEOUT_SECS: u64 = 300;

/// Bounds of `TAXI_FISCAL_UPLOAD_TIMEOUT_SECS`: below 30 s an upload times out sooner than any
/// other request; above an hour a stalled upload holds its connection and memory for too long.
pub const UPLOAD_TIMEOUT_SECS_RANGE: std::ops::RangeInclusive<u64> = 30..=3_600;

fn parse_upload_timeout(text: &str) -> Result<Duration, ConfigError> {
    match text.trim().parse::<u64>() {
        Ok(n) if UPLOAD_TIMEOUT_SECS_RANGE.contains(&n) => Ok(Duration::from_secs(n)),
        _ => Err(ConfigError::UploadTimeout(text.to_owned())),
    }
}

/// Largest `TAXI_FISCAL_AUTH_ADDRESS_BURST`: raising the per-address budget is for a deployment
/// behind one proxy address (until a trusted-proxy setting exists) or a load test from one
/// machine; beyond this it no longer bounds anything a client could send.
pub const MAX_AUTH_ADDRESS_BURST: u32 = 100_000;

/// A per-address burst as written in the environment.
fn parse_auth_burst(text: &str) -> Result<u32, ConfigError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_AUTH_ADDRESS_BURST).contains(&n) => Ok(n),
        _ => Err(ConfigError::AuthBurst(text.to_owned())),
    }
}

/// Smallest `TAXI_FISCAL_BODY_LIMIT`: below it ordinary requests (a login, a registry change)
/// would not fit.
pub const MIN_BODY_LIMIT: usize = 64 * 1024;

/// A body limit as written in the environment.
fn parse_body_limit(text: &str) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= MIN_BODY_LIMIT => Ok(n),
        _ => Err(ConfigError::BodyLimit(text.to_owned())),
    }
}

/// The origins (`scheme://host[:port]`, as browsers write `Origin`) of a comma-separated list of
/// URLs; a path, query or user part is refused (it would not be an origin).
pub fn parse_public_urls(text: &str) -> Result<Vec<String>, ConfigError> {
    let mut origins = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || ConfigError::PublicUrl(part.to_owned());
        let url = url::Url::parse(part).map_err(|_| bad())?;
        let plain = matches!(url.scheme(), "http" | "https")
            && url.host().is_some()
            && url.username().is_empty()
            && url.password().is_none()
            && url.path() == "/"
            && url.query().is_none()
            && url.fragment().is_none();
        if !plain {
            return Err(bad());
        }
        let origin = url.origin().ascii_serialization();
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    if origins.is_empty() {
        return Err(ConfigError::PublicUrl(text.to_owned()));
    }
    Ok(origins)
}

/// The origins the office pages accept when none is configured: the listen address's, with
/// `https` when the server serves TLS itself.
pub fn origins_of_listen(listen: SocketAddr, tls: bool) -> Vec<String> {
    let scheme = if tls { "https" } else { "http" };
    let port = listen.port();
    let ip = listen.ip();
    if ip.is_loopback() || ip.is_unspecified() {
        let mut v = vec![
            format!("{scheme}://127.0.0.1:{port}"),
            format!("{scheme}://localhost:{port}"),
            format!("{scheme}://[::1]:{port}"),
        ];
        let own = format!("{scheme}://{listen}");
        if ip.is_loopback() && !v.contains(&own) {
            v.insert(0, own);
        }
        v
    } else {
        vec![format!("{scheme}://{listen}")]
    }
}

/// The certificate and key files of built-in TLS (`crate::tls`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain, the server's own certificate first.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

impl TlsFiles {
    /// Flags first, then `TAXI_FISCAL_TLS_CERT` / `TAXI_FISCAL_TLS_KEY` (environment, then the
    /// configuration file); both or neither.
    pub fn resolve(
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
        src: &Sources<'_>,
    ) -> Result<Option<Self>, ConfigError> {
        let cert = cert.or_else(|| src.get("TAXI_FISCAL_TLS_CERT").map(PathBuf::from));
        let key = key.or_else(|| src.get("TAXI_FISCAL_TLS_KEY").map(PathBuf::from));
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(Self { cert, key })),
            (None, None) => Ok(None),
            _ => Err(ConfigError::TlsPair),
        }
    }
}

/// Argon2id cost parameters for new password hashes (stored hashes carry their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordParams {
    /// Memory in KiB.
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
}

impl Default for PasswordParams {
    /// OWASP's minimum for Argon2id: 19 MiB, 2 iterations, 1 lane.
    fn default() -> Self {
        Self {
            memory_kib: 19_456,
            iterations: 2,
            parallelism: 1,
        }
    }
}

impl PasswordParams {
    /// The cheapest parameters Argon2 accepts: for tests only.
    pub fn insecure_fast() -> Self {
        Self {
            memory_kib: 8,
            iterations: 1,
            parallelism: 1,
        }
    }
}

/// Everything the server needs besides its listener.
#[derive(Debug, Clone)]
pub struct Config {
    /// Data directory: database, JWT secret, rules configuration.
    pub data_dir: PathBuf,
    /// The PostgreSQL database (`TAXI_FISCAL_DATABASE_URL`, `postgres://…`); `None`: the SQLite
    /// file in the data directory. Never logged (it may hold a password).
    pub database_url: Option<String>,
    /// Address `serve` binds (the library's `launch_with_listener` takes a bound listener).
    pub listen: SocketAddr,
    /// HMAC secret of the access tokens; `None` → `DIR/jwt-secret`, generated if absent.
    pub jwt_secret: Option<Vec<u8>>,
    /// Lifetime of an access token.
    pub access_ttl: Duration,
    /// Lifetime of a refresh token (each use replaces it).
    pub refresh_ttl: Duration,
    /// `DIR/rules-config.json`, if present: imported at start into a registry that has no law
    /// parameters yet (`registry::law::import_rules_file`), ignored otherwise. The parameters
    /// in force are the registry's (`Registry::law`), never this.
    pub rules_file: Option<RulesConfig>,
    /// Largest request body of any route but photos.
    pub body_limit: usize,
    /// Largest photo.
    pub photo_limit: usize,
    /// Auto numbers leased per block unless the request asks for fewer.
    pub number_block_size: u64,
    /// Largest block a device may ask for.
    pub number_block_max: u64,
    /// A device more than this many versions behind gets 410 and takes a snapshot.
    pub feed_max_span: u64,
    /// Failed logins of one username from one client address before that pair is locked out.
    pub login_max_failures: u32,
    /// How long a lockout lasts (and the window failures are counted in).
    pub login_lockout: Duration,
    /// Failed logins of one username from all addresses before it is locked out everywhere.
    pub login_max_failures_per_username: u32,
    /// Login and refresh attempts one client address may make in a burst …
    pub auth_attempts_per_address_burst: u32,
    /// … and one more every this long.
    pub auth_attempt_replenish: Duration,
    /// Password hashes running at once (the cores, up to `limits::MAX_CONCURRENT_PASSWORD_HASHES`).
    pub password_hash_slots: usize,
    /// How long a login waits for a hashing slot before 429.
    pub password_hash_wait: Duration,
    /// Cost of new password hashes.
    pub password_params: PasswordParams,
    /// A request running longer is answered 408 …
    pub request_timeout: Duration,
    /// … but an upload (a photo, a sync, a registry import: `api::is_upload`) may run this
    /// long (`TAXI_FISCAL_UPLOAD_TIMEOUT_SECS`).
    pub upload_timeout: Duration,
    /// Origins the office pages accept forms from (`TAXI_FISCAL_PUBLIC_URL`); empty: those of
    /// the address the server listens on ([`origins_of_listen`]).
    pub public_origins: Vec<String>,
    /// Who a notification of penalty speaks for (`TAXI_FISCAL_NOTICE_AUTHORITY`).
    pub notice_authority: String,
    /// Where and how to file a reconsideration or an appeal, as a notification prints it
    /// (`TAXI_FISCAL_NOTICE_FILING_PLACE`).
    pub notice_filing_place: String,
    /// Built-in TLS (`--tls-cert`/`--tls-key`); `None`: plain HTTP, e.g. behind a proxy that
    /// terminates TLS.
    pub tls: Option<TlsFiles>,
    /// Reverse proxies whose `X-Forwarded-For` names the client (`TAXI_FISCAL_TRUSTED_PROXIES`;
    /// `auth::proxy`); empty: the TCP peer is the client.
    pub trusted_proxies: crate::auth::proxy::TrustedProxies,
    /// The bearer token that reads `GET /metrics` (`TAXI_FISCAL_METRICS_TOKEN`); `None`: only
    /// clients on this machine read it (`crate::metrics`).
    pub metrics_token: Option<String>,
    /// Where "now" comes from.
    pub clock: crate::Clock,
}

impl Config {
    /// Defaults for a data directory; reads nothing.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            database_url: None,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            jwt_secret: None,
            access_ttl: Duration::from_secs(15 * 60),
            refresh_ttl: Duration::from_secs(30 * 24 * 3600),
            rules_file: None,
            body_limit: 16 * 1024 * 1024,
            photo_limit: 10 * 1024 * 1024,
            number_block_size: 500,
            number_block_max: 5_000,
            feed_max_span: 1_000,
            login_max_failures: limits::LOGIN_MAX_FAILURES,
            login_lockout: limits::LOGIN_LOCKOUT,
            login_max_failures_per_username: limits::LOGIN_MAX_FAILURES_PER_USERNAME,
            auth_attempts_per_address_burst: limits::AUTH_ATTEMPTS_PER_ADDRESS_BURST,
            auth_attempt_replenish: limits::AUTH_ATTEMPT_REPLENISH,
            password_hash_slots: crate::auth::password::default_pool_size(),
            password_hash_wait: limits::PASSWORD_HASH_WAIT,
            password_params: PasswordParams::default(),
            request_timeout: Duration::from_secs(30),
            upload_timeout: Duration::from_secs(DEFAULT_UPLOAD_TIMEOUT_SECS),
            public_origins: Vec::new(),
            notice_authority: crate::office::notices::DEFAULT_AUTHORITY.to_owned(),
            notice_filing_place: crate::office::notices::DEFAULT_FILING_PLACE.to_owned(),
            tls: None,
            trusted_proxies: crate::auth::proxy::TrustedProxies::default(),
            metrics_token: None,
            clock: crate::Clock::system(),
        }
    }

    /// Flags first, then the settings of `src` (the `TAXI_FISCAL_*` environment, then a
    /// configuration file: `config::file`), then defaults; also reads the rules configuration
    /// of the data directory. `data` must come from somewhere: the caller passes its own default
    /// (the `demo` command has one, `serve` does not).
    pub fn resolve_from(
        data: PathBuf,
        listen: Option<&str>,
        src: &Sources<'_>,
    ) -> Result<Self, ConfigError> {
        let mut c = Self::new(data);
        let listen = match listen {
            Some(l) => l.to_owned(),
            None => src
                .get("TAXI_FISCAL_LISTEN")
                .unwrap_or_else(|| DEFAULT_LISTEN.into()),
        };
        c.listen = listen
            .parse()
            .map_err(|_| ConfigError::Listen(listen.clone()))?;
        c.database_url = database_url(src)?;
        if let Some(secret) = src.get("TAXI_FISCAL_JWT_SECRET") {
            if secret.len() < 32 {
                return Err(ConfigError::ShortSecret);
            }
            c.jwt_secret = Some(secret.into_bytes());
        }
        if let Some(urls) = src.get("TAXI_FISCAL_PUBLIC_URL") {
            c.public_origins = parse_public_urls(&urls)?;
        }
        if let Some(token) = src.get("TAXI_FISCAL_METRICS_TOKEN") {
            c.metrics_token = Some(parse_metrics_token(&token)?);
        }
        if let Some(proxies) = src.get("TAXI_FISCAL_TRUSTED_PROXIES") {
            c.trusted_proxies = crate::auth::proxy::TrustedProxies::parse(&proxies)?;
        }
        if let Some(burst) = src.get("TAXI_FISCAL_AUTH_ADDRESS_BURST") {
            c.auth_attempts_per_address_burst = parse_auth_burst(&burst)?;
        }
        for (var, slot) in [
            ("TAXI_FISCAL_NOTICE_AUTHORITY", &mut c.notice_authority),
            (
                "TAXI_FISCAL_NOTICE_FILING_PLACE",
                &mut c.notice_filing_place,
            ),
        ] {
            if let Some(text) = src.get(var)
                && !text.trim().is_empty()
            {
                *slot = text.trim().to_owned();
            }
        }
        if let Some(secs) = src.get("TAXI_FISCAL_UPLOAD_TIMEOUT_SECS") {
            c.upload_timeout = parse_upload_timeout(&secs)?;
        }
        if let Some(limit) = src.get("TAXI_FISCAL_BODY_LIMIT") {
            c.body_limit = parse_body_limit(&limit)?;
        }
        c.rules_file = load_rules(&c.data_dir)?;
        Ok(c)
    }

    /// Path of the database file.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join(DB_FILE)
    }

    /// Path of the server's Ed25519 signing key (created 0600 at first start).
    pub fn signing_key_path(&self) -> PathBuf {
        self.data_dir.join(crate::receipts::SIGNING_KEY_FILE)
    }

    /// The JWT secret: configured, or read from `DIR/jwt-secret`, or generated there.
    pub fn jwt_secret_or_create(&self) -> Result<Vec<u8>, ConfigError> {
        if let Some(s) = &self.jwt_secret {
            return Ok(s.clone());
        }
        let path = self.data_dir.join(SECRET_FILE);
        let io = |source| ConfigError::Io {
            path: path.clone(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().len() >= 32 => return Ok(text.trim().as_bytes().to_vec()),
            Ok(_) => return Err(ConfigError::ShortSecret),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| ConfigError::Random(e.to_string()))?;
        let text = hex::encode(bytes);
        write_private(&path, text.as_bytes()).map_err(io)?;
        Ok(text.into_bytes())
    }
}

/// Creates the file only if absent (a concurrent first start keeps the first secret), with mode
/// 0600 on Unix.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// `DIR/rules-config.json` if present.
pub fn load_rules(data_dir: &Path) -> Result<Option<RulesConfig>, ConfigError> {
    let path = data_dir.join(RULES_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ConfigError::Rules {
                path,
                reason: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Io { path, source }),
    }
}

/// Writes `DIR/rules-config.json` (what older servers read; tests of the import).
pub fn write_rules(data_dir: &Path, rules: &RulesConfig) -> Result<(), ConfigError> {
    let path = data_dir.join(RULES_FILE);
    let text = serde_json::to_string_pretty(rules).map_err(|e| ConfigError::Rules {
        path: path.clone(),
        reason: e.to_string(),
    })? + "\n";
    std::fs::write(&path, text).map_err(|source| ConfigError::Io { path, source })
}

/// `TAXI_FISCAL_DATABASE_URL`: a PostgreSQL URL, or nothing (empty too) for the SQLite file.
/// Only the scheme is judged here; the driver reads the rest when the store opens, and its
/// error never repeats the URL (which may hold a password).
fn database_url(src: &Sources<'_>) -> Result<Option<String>, ConfigError> {
    let Some(url) = src.get("TAXI_FISCAL_DATABASE_URL") else {
        return Ok(None);
    };
    let url = url.trim();
    if url.is_empty() {
        return Ok(None);
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Some(url.to_owned()))
    } else {
        // The scheme only: what follows may be a password.
        let scheme: String = url.chars().take_while(|c| *c != ':').take(16).collect();
        Err(ConfigError::DatabaseUrl(scheme))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secret_is_generated_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let c = Config::new(dir.path());
        let a = c.jwt_secret_or_create().unwrap();
        let b = c.jwt_secret_or_create().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRET_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn body_limit_is_a_number_of_bytes_not_too_small() {
        assert_eq!(parse_body_limit(" 65536 ").unwrap(), 65_536);
        for bad in ["", "64k", "-1", "1000"] {
            let e = parse_body_limit(bad).unwrap_err();
            assert!(e.to_string().contains("ao menos 65536"), "{bad}: {e}");
        }
    }

    #[test]
    fn auth_burst_is_a_bounded_count() {
        assert_eq!(parse_auth_burst(" 1 ").unwrap(), 1);
        assert_eq!(
            parse_auth_burst(&MAX_AUTH_ADDRESS_BURST.to_string()).unwrap(),
            MAX_AUTH_ADDRESS_BURST
        );
        let over = (MAX_AUTH_ADDRESS_BURST + 1).to_string();
        for bad in ["", "0", "-1", "vinte", over.as_str()] {
            let e = parse_auth_burst(bad).unwrap_err();
            assert!(e.to_string().contains("entre 1 e 100000"), "{bad}: {e}");
        }
    }

    #[test]
    fn public_urls_are_origins() {
        assert_eq!(
            parse_public_urls(" https://Fiscal.Example.gov.br , http://10.0.0.5:8080/ ,").unwrap(),
            ["https://fiscal.example.gov.br", "http://10.0.0.5:8080"]
        );
        assert_eq!(
            parse_public_urls("https://a.example:443").unwrap(),
            ["https://a.example"]
        );
        for bad in [
            "",
            " , ",
            "fiscal.example",
            "ftp://a.example",
            "https://a.example/escritorio",
            "https://a.example/?x=1",
            "https://user@a.example",
            "javascript:alert(1)",
        ] {
            let e = parse_public_urls(bad).unwrap_err();
            assert!(
                e.to_string().contains("TAXI_FISCAL_PUBLIC_URL"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn the_upload_timeout_is_a_number_of_seconds_within_its_range() {
        assert_eq!(
            parse_upload_timeout(" 30 ").unwrap(),
            Duration::from_secs(30)
        );
        assert_eq!(
            parse_upload_timeout("3600").unwrap(),
            Duration::from_secs(3_600)
        );
        for bad in ["29", "3601", "", "5m", "-1"] {
            let e = parse_upload_timeout(bad).unwrap_err();
            assert!(e.to_string().contains("entre 30 e 3600"), "{bad}: {e}");
        }
        assert_eq!(
            Config::new("x").upload_timeout,
            Duration::from_secs(DEFAULT_UPLOAD_TIMEOUT_SECS)
        );
    }

    #[test]
    fn the_metrics_token_has_a_minimum_length() {
        let at = "a".repeat(MIN_METRICS_TOKEN_LEN);
        assert_eq!(parse_metrics_token(&format!(" {at} ")).unwrap(), at);
        let e = parse_metrics_token(&at[1..]).unwrap_err();
        assert!(e.to_string().contains("TAXI_FISCAL_METRICS_TOKEN"), "{e}");
    }

    #[test]
    fn the_database_url_is_postgres_or_nothing_and_its_error_shows_no_password() {
        let with = |url: &'static str| {
            move |var: &str| (var == "TAXI_FISCAL_DATABASE_URL").then(|| url.to_owned())
        };
        let none = |_: &str| None;
        let get = |env: &dyn Fn(&str) -> Option<String>| {
            Config::resolve_from(
                PathBuf::from("x"),
                None,
                &Sources::new(env, FileSettings::default()),
            )
            .map(|c| c.database_url)
        };
        assert_eq!(get(&none).unwrap(), None);
        assert_eq!(get(&with("  ")).unwrap(), None);
        assert_eq!(
            get(&with("postgres://tf:pw@db:5432/tf"))
                .unwrap()
                .as_deref(),
            Some("postgres://tf:pw@db:5432/tf")
        );
        assert!(get(&with("postgresql://db/tf")).unwrap().is_some());
        let e = get(&with("mysql://root:segredo@db/tf")).unwrap_err();
        assert!(e.to_string().contains("TAXI_FISCAL_DATABASE_URL"), "{e}");
        assert!(!e.to_string().contains("segredo"), "{e}");
    }

    #[test]
    fn every_setting_of_the_file_reaches_the_configuration_through_its_checks() {
        let none = |_: &str| None;
        let file = FileSettings::parse(
            "listen = \"127.0.0.1:9443\"\npublic_url = [\"https://taxi.example\"]\n\
             trusted_proxies = [\"127.0.0.1\"]\nupload_timeout_secs = 900\n\
             body_limit = 70000\nauth_address_burst = 40\n\
             notice_authority = \"Prefeitura\"\nmetrics_token = \"0123456789abcdef0123456789abcdef\"",
        )
        .unwrap();
        let c = Config::resolve_from(PathBuf::from("x"), None, &Sources::new(&none, file)).unwrap();
        assert_eq!(c.listen, "127.0.0.1:9443".parse().unwrap());
        assert_eq!(c.public_origins, ["https://taxi.example"]);
        assert!(!c.trusted_proxies.is_empty());
        assert_eq!(c.upload_timeout, Duration::from_secs(900));
        assert_eq!(c.body_limit, 70_000);
        assert_eq!(c.auth_attempts_per_address_burst, 40);
        assert_eq!(c.notice_authority, "Prefeitura");
        assert!(c.metrics_token.is_some());
        // A wrong value is refused as its variable would be; a flag beats the file.
        let file = FileSettings::parse("upload_timeout_secs = 5").unwrap();
        let e =
            Config::resolve_from(PathBuf::from("x"), None, &Sources::new(&none, file)).unwrap_err();
        assert!(
            e.to_string().contains("TAXI_FISCAL_UPLOAD_TIMEOUT_SECS"),
            "{e}"
        );
        let file = FileSettings::parse("listen = \"127.0.0.1:9443\"").unwrap();
        let c = Config::resolve_from(
            PathBuf::from("x"),
            Some("127.0.0.1:7000"),
            &Sources::new(&none, file),
        )
        .unwrap();
        assert_eq!(c.listen.port(), 7000);
    }

    #[test]
    fn tls_origins_are_https() {
        let o = origins_of_listen("127.0.0.1:8443".parse().unwrap(), true);
        assert_eq!(o[0], "https://127.0.0.1:8443");
        assert!(o.iter().all(|o| o.starts_with("https://")), "{o:?}");
    }

    #[test]
    fn tls_needs_both_files_or_neither() {
        let (c, k) = (PathBuf::from("c.pem"), PathBuf::from("k.pem"));
        let none = |_: &str| None;
        let src = Sources::new(&none, FileSettings::default());
        assert_eq!(TlsFiles::resolve(None, None, &src).unwrap(), None);
        let e = TlsFiles::resolve(Some(c.clone()), None, &src).unwrap_err();
        assert!(e.to_string().contains("--tls-key"), "{e}");
        assert!(TlsFiles::resolve(None, Some(k.clone()), &src).is_err());
        assert_eq!(
            TlsFiles::resolve(Some(c.clone()), Some(k.clone()), &src).unwrap(),
            Some(TlsFiles {
                cert: c.clone(),
                key: k.clone()
            })
        );
        // The key from the configuration file completes the certificate given as a flag.
        let file = FileSettings::parse("tls_key = \"k.pem\"").unwrap();
        let src = Sources::new(&none, file);
        assert_eq!(
            TlsFiles::resolve(Some(c.clone()), None, &src).unwrap(),
            Some(TlsFiles { cert: c, key: k })
        );
    }

    #[test]
    fn default_origins_are_the_listen_address() {
        let o = origins_of_listen("127.0.0.1:8080".parse().unwrap(), false);
        assert_eq!(
            o,
            [
                "http://127.0.0.1:8080",
                "http://localhost:8080",
                "http://[::1]:8080"
            ]
        );
        let o = origins_of_listen("0.0.0.0:9000".parse().unwrap(), false);
        assert!(o.contains(&"http://localhost:9000".to_owned()), "{o:?}");
        assert_eq!(
            origins_of_listen("192.168.0.10:8080".parse().unwrap(), false),
            ["http://192.168.0.10:8080"]
        );
    }

    #[test]
    fn rules_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_rules(dir.path()).unwrap(), None);
        let r = RulesConfig {
            inhabitants_per_taxi: 2_000,
            ..RulesConfig::default()
        };
        write_rules(dir.path(), &r).unwrap();
        assert_eq!(load_rules(dir.path()).unwrap(), Some(r));
    }
}
