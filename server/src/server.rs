//! Start-up and shared state.
//!
//! Flow: [`AppState::open`] creates the data directory if needed (0700, [`create_data_dir`]), loads or generates the JWT
//! secret, opens the store the caller chose (migrating it) and builds the services every handler shares
//! (token signer, password hashing pool, login limiter and per-address throttle, snapshot
//! cache, request metrics) and, with `Config::tls`, reads the certificate (a wrong file stops
//! the start). [`launch_with_state`] serves [`crate::router`] on a bound listener — through
//! [`crate::tls::TlsListener`] when TLS is configured — with each connection's peer address
//! (`ConnectInfo`, for the per-address budgets), until `shutdown` resolves, then lets requests
//! in flight finish (graceful shutdown); the binary passes SIGINT/SIGTERM as `shutdown`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;

use crate::Clock;
use crate::audit;
use crate::auth::limiter::LoginLimiter;
use crate::auth::password::{HashPool, Passwords};
use crate::auth::throttle::AddressThrottle;
use crate::auth::tokens::TokenService;
use crate::config::{Config, ConfigError};
use crate::service::Services;
use crate::store::{Store, StoreError};

/// Opens (creating and migrating when needed) the store of a configuration: how
/// [`AppState::open`] is told which backend to use.
pub type StoreOpener = fn(&Config) -> Opening;

/// A store being opened (what a [`StoreOpener`] returns).
pub type Opening =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Arc<dyn Store>, StoreError>> + Send>>;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    SigningKey(#[from] crate::receipts::KeyFileError),
    // Not `#[from]`: a source would be printed twice in the command line's one-line chain.
    #[error("armazenamento: {0}")]
    Store(StoreError),
    #[error("chave dos tokens: {0}")]
    Token(String),
    #[error("parâmetros de senha: {0}")]
    Password(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("dados de demonstração: {0}")]
    Seed(String),
    #[error("importação de rules-config.json: {0}")]
    Parameters(String),
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsConfigError),
}

/// Creates the data directory (and any missing parent) readable by its owner only (0700): it
/// holds the database (CPFs, names, photos) and the JWT secret. An existing directory is left
/// as it is — it may be an operator's choice, e.g. `--data .` — with a warning when others may
/// enter it; the files inside are 0600 anyway.
pub fn create_data_dir(dir: &std::path::Path) -> Result<(), ServerError> {
    let io = |source| ServerError::Io {
        context: format!("criando {}", dir.display()),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if let Ok(meta) = std::fs::metadata(dir) {
            if meta.permissions().mode() & 0o077 != 0 {
                tracing::warn!(dir = %dir.display(), "data directory is accessible to other users");
            }
            return Ok(());
        }
        builder.mode(0o700);
    }
    builder.create(dir).map_err(io)
}

impl From<StoreError> for ServerError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// A compressed snapshot of one registry version, kept until the version changes.
#[derive(Debug)]
pub struct SnapshotCache {
    pub version: u64,
    /// The `RegistrySnapshot` as JSON.
    pub json: Bytes,
    /// The same, zstd-compressed.
    pub zstd: Bytes,
}

/// Everything handlers share; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// The store, the configuration and what the services share (`crate::service`).
    services: Services,
    tokens: TokenService,
    passwords: Passwords,
    hash_pool: HashPool,
    limiter: LoginLimiter,
    throttle: AddressThrottle,
    /// The per-address budget of the public verification page.
    verify_throttle: AddressThrottle,
    /// The per-address budget of one-time codes (password reset, device enrolment).
    code_throttle: AddressThrottle,
    snapshot: Mutex<Option<Arc<SnapshotCache>>>,
    /// Countersigns receipts of device-sealed records (`crate::receipts`).
    signing_key: Arc<crate::receipts::ServerKey>,
    /// The office pages' browser sessions (kept in the store, shared by every node): here, not
    /// in the pages' router, because a password changed through the API ends them too.
    web_sessions: crate::web::Sessions,
    /// Built-in TLS, read from `Config::tls` at start (`crate::tls`).
    tls: Option<Arc<rustls::ServerConfig>>,
    /// Request and sync counters for `GET /metrics` (`crate::metrics`).
    metrics: crate::metrics::Metrics,
}

impl AppState {
    /// Opens the data directory of `config` (creating it) and the store `open_store` opens
    /// there. The backend is the caller's choice, made once: the binary passes
    /// [`crate::store::sqlite::open`] or [`crate::store::postgres::open`]; nothing else in the
    /// server names a backend.
    pub async fn open(config: Config, open_store: StoreOpener) -> Result<Self, ServerError> {
        create_data_dir(&config.data_dir)?;
        let secret = config.jwt_secret_or_create()?;
        let signing_key = crate::receipts::ServerKey::load_or_create(&config.signing_key_path())?;
        let store = open_store(&config).await.map_err(ServerError::Store)?;
        if let Some(rules) = &config.rules_file {
            let actor = crate::store::Actor::cli(config.clock.now());
            crate::registry::law::import_rules_file(&*store, rules, actor)
                .await
                .map_err(|e| ServerError::Parameters(e.to_string()))?;
        }
        Self::new(config, store, &secret, signing_key)
    }

    /// State over any store.
    pub fn new(
        config: Config,
        store: Arc<dyn Store>,
        secret: &[u8],
        signing_key: crate::receipts::ServerKey,
    ) -> Result<Self, ServerError> {
        let tokens = TokenService::new(secret, config.access_ttl)
            .map_err(|e| ServerError::Token(e.to_string()))?;
        let passwords = Passwords::new(config.password_params)
            .map_err(|e| ServerError::Password(e.to_string()))?;
        let hash_pool = HashPool::new(
            passwords.clone(),
            config.password_hash_slots,
            config.password_hash_wait,
        );
        let limiter = LoginLimiter::new(
            Arc::clone(&store),
            config.login_max_failures,
            config.login_lockout,
            config.login_max_failures_per_username,
        );
        // Read before anything else is set up: a wrong file stops the start, naming it.
        let tls = match &config.tls {
            Some(files) => Some(crate::tls::server_config(&files.cert, &files.key)?),
            None => None,
        };
        let origins = if config.public_origins.is_empty() {
            crate::config::origins_of_listen(config.listen, tls.is_some())
        } else {
            config.public_origins.clone()
        };
        let throttle = AddressThrottle::new(
            config.auth_attempts_per_address_burst,
            config.auth_attempt_replenish,
        );
        let verify_throttle = AddressThrottle::new(
            crate::limits::VERIFY_LOOKUPS_PER_ADDRESS_BURST,
            crate::limits::VERIFY_LOOKUP_REPLENISH,
        );
        let code_throttle = AddressThrottle::new(
            crate::limits::CODE_ATTEMPTS_PER_ADDRESS_BURST,
            crate::limits::CODE_ATTEMPT_REPLENISH,
        );
        let web_sessions = crate::web::Sessions::new(Arc::clone(&store));
        let services = Services::new(config, store, origins);
        Ok(Self(Arc::new(Inner {
            services,
            tokens,
            passwords,
            hash_pool,
            limiter,
            throttle,
            verify_throttle,
            code_throttle,
            snapshot: Mutex::new(None),
            signing_key: Arc::new(signing_key),
            web_sessions,
            tls,
            metrics: crate::metrics::Metrics::default(),
        })))
    }

    /// What `GET /metrics` reports (`crate::metrics`).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.0.metrics
    }

    /// The TLS configuration when the server serves HTTPS itself.
    pub fn tls(&self) -> Option<&Arc<rustls::ServerConfig>> {
        self.0.tls.as_ref()
    }

    /// The scheme browsers and devices use to reach this listener.
    pub fn scheme(&self) -> &'static str {
        if self.0.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Whether session cookies carry `Secure`: when every origin the office pages are reached
    /// at is `https` (built-in TLS, or `TAXI_FISCAL_PUBLIC_URL` naming a proxy's https
    /// address). A browser drops a `Secure` cookie set over plain http, so an http origin
    /// among them keeps it off.
    pub fn secure_cookies(&self) -> bool {
        let origins = self.public_origins();
        !origins.is_empty() && origins.iter().all(|o| o.starts_with("https://"))
    }

    /// The browser sessions of the office pages.
    pub fn web_sessions(&self) -> &crate::web::Sessions {
        &self.0.web_sessions
    }

    /// The server's Ed25519 key, which countersigns record receipts.
    pub fn signing_key(&self) -> &Arc<crate::receipts::ServerKey> {
        &self.0.signing_key
    }

    /// What the office and registry services are handed.
    pub fn services(&self) -> &Services {
        &self.0.services
    }

    pub fn config(&self) -> &Config {
        self.0.services.config()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        self.0.services.store()
    }

    pub fn tokens(&self) -> &TokenService {
        &self.0.tokens
    }

    pub fn passwords(&self) -> &Passwords {
        &self.0.passwords
    }

    /// Where every password hash and verification of a request runs.
    pub fn hash_pool(&self) -> &HashPool {
        &self.0.hash_pool
    }

    pub fn limiter(&self) -> &LoginLimiter {
        &self.0.limiter
    }

    /// The per-address budget of the login and refresh routes.
    pub fn throttle(&self) -> &AddressThrottle {
        &self.0.throttle
    }

    /// The per-address budget of `/verificar`.
    pub fn verify_throttle(&self) -> &AddressThrottle {
        &self.0.verify_throttle
    }

    /// The per-address budget of one-time codes (`auth::admin`).
    pub fn code_throttle(&self) -> &AddressThrottle {
        &self.0.code_throttle
    }

    /// The origins a browser form must come from (`Origin`/`Referer`; `web::session`).
    pub fn public_origins(&self) -> Arc<[String]> {
        self.0.services.public_origins()
    }

    /// Called with the address really bound: without configured public origins, the office
    /// pages accept that address's (loopback names for a loopback or wildcard listen). Warns
    /// when listening on every address with no public origin configured: browsers on other
    /// machines will be refused until `TAXI_FISCAL_PUBLIC_URL` says the server's name.
    pub fn listening_on(&self, addr: SocketAddr) {
        if !self.config().public_origins.is_empty() {
            tracing::info!(origins = ?self.config().public_origins, "origens públicas das páginas");
            return;
        }
        let origins = crate::config::origins_of_listen(addr, self.0.tls.is_some());
        if addr.ip().is_unspecified() {
            tracing::warn!(
                %addr,
                accepted = ?origins,
                "escutando em todos os endereços sem TAXI_FISCAL_PUBLIC_URL: as páginas do \
                 escritório só aceitam formulários destas origens; configure o endereço público"
            );
        } else {
            tracing::info!(origins = ?origins, "origens públicas das páginas");
        }
        self.0.services.set_public_origins(origins);
    }

    pub fn clock(&self) -> &Clock {
        self.0.services.clock()
    }

    /// The snapshot cache slot (see `api::registry`).
    pub fn snapshot_slot(&self) -> &Mutex<Option<Arc<SnapshotCache>>> {
        &self.0.snapshot
    }
}

/// Opens the data directory of `config` with the store `open_store` opens, and serves until
/// `shutdown` resolves.
pub async fn launch_with_listener(
    listener: TcpListener,
    config: Config,
    open_store: StoreOpener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let state = AppState::open(config, open_store).await?;
    launch_with_state(listener, state, shutdown).await
}

/// Serves `state` on `listener` until `shutdown` resolves, then drains requests in flight.
/// The audit chain's head is anchored (logged and written to the data directory's
/// [`audit::ANCHOR_FILE`]) at start, every [`audit::ANCHOR_INTERVAL`] while it moves, and once
/// more after the last request.
pub async fn launch_with_state(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let addr = listener.local_addr().ok();
    let data_dir = state.config().data_dir.clone();
    keep_broken_anchor(state.store().as_ref(), &data_dir).await;
    let first = anchor_audit_head(state.store().as_ref(), &data_dir, "start", None).await;
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let anchoring = {
        let state = state.clone();
        let data_dir = data_dir.clone();
        tokio::spawn(async move {
            let mut last = first;
            let mut tick = tokio::time::interval(audit::ANCHOR_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tick.tick() => {
                        let next = anchor_audit_head(
                            state.store().as_ref(), &data_dir, "periodic", last.as_ref(),
                        ).await;
                        last = next.or(last);
                    }
                    _ = &mut stopped => return,
                }
            }
        })
    };
    tracing::info!(addr = ?addr, "servidor no ar");
    if let Some(addr) = addr {
        state.listening_on(addr);
    }
    // The peer address of each connection reaches handlers as `ConnectInfo` (auth::throttle).
    let app = crate::router(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let served = match state.tls() {
        None => axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| ServerError::Io {
                context: String::from("servindo HTTP"),
                source,
            }),
        Some(config) => match crate::tls::TlsListener::new(listener, Arc::clone(config)) {
            // `tap_io` does nothing to the connection: axum's `ConnectInfo<SocketAddr>` is
            // implemented for a tapped listener of any kind, not for a bare custom one.
            Ok(tls) => axum::serve(tls.tap_io(|_| {}), app)
                .with_graceful_shutdown(shutdown)
                .await
                .map_err(|source| ServerError::Io {
                    context: String::from("servindo HTTPS"),
                    source,
                }),
            Err(source) => Err(ServerError::Io {
                context: String::from("iniciando o TLS"),
                source,
            }),
        },
    };
    let _ = stop.send(());
    let _ = anchoring.await;
    // Logged at shutdown even when unchanged: the log shows the head the server stopped at.
    anchor_audit_head(state.store().as_ref(), &data_dir, "shutdown", None).await;
    served?;
    tracing::info!("servidor encerrado");
    Ok(())
}

/// Before the first anchor of a start overwrites the last one: if the chain no longer holds the
/// anchored head (its tail was cut, or it was rebuilt — or a backup was restored), that is
/// logged as an error and the old anchor is kept beside the new one as
/// `audit-anchor.json.broken-SEQ`, so the evidence survives the restart for `audit verify
/// --anchor`. Starting is not refused: a restored backup is a legitimate reason.
pub async fn keep_broken_anchor(store: &dyn Store, data_dir: &std::path::Path) {
    let path = data_dir.join(audit::ANCHOR_FILE);
    let Ok(Some(anchor)) = audit::read_anchor(&path) else {
        return;
    };
    let (Ok(head), Ok(hash)) = (
        store.audit_head().await,
        store.audit_row_hash(anchor.seq).await,
    ) else {
        return;
    };
    let Some(problem) = audit::anchor_problem(&anchor, head.seq, hash.as_deref()) else {
        return;
    };
    let kept = data_dir.join(format!("{}.broken-{}", audit::ANCHOR_FILE, anchor.seq));
    tracing::error!(
        anchored_seq = anchor.seq,
        anchored_hash = %anchor.hash,
        problem = %problem,
        kept = %kept.display(),
        "the audit chain does not hold the anchored head"
    );
    if let Err(e) = std::fs::rename(&path, &kept) {
        tracing::warn!(error = %e, "could not keep the broken anchor");
    }
}

/// Logs the audit chain's head and writes it to `DIR/audit-anchor.json` unless it is still
/// `previous`; the head, or `None` if it could not be read. A failure is logged, never fatal:
/// the anchor is a check on the chain, not part of it.
pub async fn anchor_audit_head(
    store: &dyn Store,
    data_dir: &std::path::Path,
    moment: &'static str,
    previous: Option<&audit::ChainHead>,
) -> Option<audit::ChainHead> {
    let head = match store.audit_head().await {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(error = %e, moment, "could not read the audit chain head");
            return None;
        }
    };
    if previous == Some(&head) {
        return Some(head);
    }
    tracing::info!(seq = head.seq, hash = %head.hash, moment, "audit chain head");
    let path = data_dir.join(audit::ANCHOR_FILE);
    let written = head.clone();
    let result = tokio::task::spawn_blocking(move || audit::write_anchor(&path, &written)).await;
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "could not write the audit anchor"),
        Err(e) => tracing::warn!(error = %e, "could not write the audit anchor"),
    }
    Some(head)
}
