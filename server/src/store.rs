//! The store the services are written against: the [`Store`] trait and its types, from the
//! `taxi-fiscal-store` crate, re-exported so that the server's code reads `crate::store::…`.
//!
//! Backends are crates of their own (`taxi-fiscal-store-sqlite`, the embedded default;
//! `taxi-fiscal-store-postgres`, for several nodes on one database); the services, the API and
//! the pages never name one. The binary chooses the backend once, in `cli/server.rs`, by handing
//! [`crate::server::AppState::open`] an opener: [`sqlite::open`], or [`postgres::open`] when the
//! configuration names a database URL.

pub use taxi_fiscal_store::*;

/// The embedded SQLite backend, and its opener for a server configuration.
#[cfg(feature = "sqlite")]
pub mod sqlite {
    use std::sync::Arc;

    pub use taxi_fiscal_store_sqlite::*;

    use super::{Store, StoreError};

    /// Opens the SQLite store of a configuration (`crate::config::DB_FILE` in its data
    /// directory): a [`crate::server::StoreOpener`] the binary may choose.
    pub fn open(config: &crate::Config) -> crate::server::Opening {
        let path = config.db_path();
        Box::pin(async move {
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
                .await
                .map_err(|e| StoreError::Task(e.to_string()))??;
            Ok(Arc::new(store) as Arc<dyn Store>)
        })
    }
}

/// The PostgreSQL backend, and its opener for a server configuration.
#[cfg(feature = "postgres")]
pub mod postgres {
    use std::sync::Arc;

    pub use taxi_fiscal_store_postgres::*;

    use super::{Store, StoreError};

    /// Opens the PostgreSQL store of a configuration (`Config::database_url`): a
    /// [`crate::server::StoreOpener`] the binary may choose.
    pub fn open(config: &crate::Config) -> crate::server::Opening {
        let url = config.database_url.clone();
        Box::pin(async move {
            let url = url.ok_or_else(|| StoreError::Open {
                path: String::from("PostgreSQL"),
                reason: String::from("TAXI_FISCAL_DATABASE_URL não foi informado"),
            })?;
            Ok(Arc::new(PgStore::open(&url).await?) as Arc<dyn Store>)
        })
    }
}
