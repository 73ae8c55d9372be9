//! The store the services are written against: the [`Store`] trait and its types, from the
//! `taxi-fiscal-store` crate, re-exported so that the server's code reads `crate::store::…`.
//!
//! Backends are crates of their own (`taxi-fiscal-store-sqlite`, the embedded default); the
//! services, the API and the pages never name one. The binary chooses the backend once, in
//! `cli/server.rs`, by handing [`crate::server::launch_with_listener`] an opener such as
//! [`sqlite::open`].

pub use taxi_fiscal_store::*;

/// The embedded SQLite backend, and its opener for a server configuration.
#[cfg(feature = "sqlite")]
pub mod sqlite {
    use std::sync::Arc;

    pub use taxi_fiscal_store_sqlite::*;

    use super::{Store, StoreError};

    /// Opens the SQLite store of a configuration (`crate::config::DB_FILE` in its data
    /// directory): the [`crate::server::StoreOpener`] the binary chooses. Blocking.
    pub fn open(config: &crate::Config) -> Result<Arc<dyn Store>, StoreError> {
        Ok(Arc::new(SqliteStore::open(&config.db_path())?))
    }
}
