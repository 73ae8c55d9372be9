//! Start-up and shared state.
//!
//! Flow: [`AppState::open`] creates the data directory if needed, loads or generates the JWT
//! secret, opens the SQLite store (migrating it) and builds the services every handler shares
//! (token signer, password hasher, login limiter, snapshot cache). [`launch_with_state`] serves
//! [`crate::router`] on a bound listener until `shutdown` resolves, then lets requests in flight
//! finish (graceful shutdown); the binary passes SIGINT/SIGTERM as `shutdown`.

use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use sync_core::rules::RulesConfig;
use tokio::net::TcpListener;

use crate::Clock;
use crate::auth::limiter::LoginLimiter;
use crate::auth::password::Passwords;
use crate::auth::tokens::TokenService;
use crate::config::{Config, ConfigError};
use crate::store::sqlite::SqliteStore;
use crate::store::{Store, StoreError};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("armazenamento: {0}")]
    Store(#[from] StoreError),
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
    config: Config,
    store: Arc<dyn Store>,
    tokens: TokenService,
    passwords: Passwords,
    limiter: LoginLimiter,
    snapshot: Mutex<Option<Arc<SnapshotCache>>>,
}

impl AppState {
    /// Opens the data directory of `config` (creating it) with the SQLite store.
    pub async fn open(config: Config) -> Result<Self, ServerError> {
        let dir = config.data_dir.clone();
        std::fs::create_dir_all(&dir).map_err(|source| ServerError::Io {
            context: format!("criando {}", dir.display()),
            source,
        })?;
        let secret = config.jwt_secret_or_create()?;
        let path = config.db_path();
        let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
            .await
            .map_err(|e| ServerError::Store(StoreError::Task(e.to_string())))??;
        Self::new(config, Arc::new(store), &secret)
    }

    /// State over any store.
    pub fn new(config: Config, store: Arc<dyn Store>, secret: &[u8]) -> Result<Self, ServerError> {
        let tokens = TokenService::new(secret, config.access_ttl)
            .map_err(|e| ServerError::Token(e.to_string()))?;
        let passwords = Passwords::new(config.password_params)
            .map_err(|e| ServerError::Password(e.to_string()))?;
        let limiter = LoginLimiter::new(config.login_max_failures, config.login_lockout);
        Ok(Self(Arc::new(Inner {
            config,
            store,
            tokens,
            passwords,
            limiter,
            snapshot: Mutex::new(None),
        })))
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.0.store
    }

    pub fn tokens(&self) -> &TokenService {
        &self.0.tokens
    }

    pub fn passwords(&self) -> &Passwords {
        &self.0.passwords
    }

    pub fn limiter(&self) -> &LoginLimiter {
        &self.0.limiter
    }

    pub fn clock(&self) -> &Clock {
        &self.0.config.clock
    }

    pub fn rules(&self) -> &RulesConfig {
        &self.0.config.rules
    }

    /// The snapshot cache slot (see `api::registry`).
    pub fn snapshot_slot(&self) -> &Mutex<Option<Arc<SnapshotCache>>> {
        &self.0.snapshot
    }
}

/// Opens the data directory of `config` and serves until `shutdown` resolves.
pub async fn launch_with_listener(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let state = AppState::open(config).await?;
    launch_with_state(listener, state, shutdown).await
}

/// Serves `state` on `listener` until `shutdown` resolves, then drains requests in flight.
pub async fn launch_with_state(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let addr = listener.local_addr().ok();
    tracing::info!(addr = ?addr, "servidor no ar");
    axum::serve(listener, crate::router(state))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|source| ServerError::Io {
            context: String::from("servindo HTTP"),
            source,
        })?;
    tracing::info!("servidor encerrado");
    Ok(())
}
