//! taxi-fiscal server: the central office's HTTP API over the shared `sync-core`.
//!
//! Flow of a request: [`server::launch_with_listener`] opens the store in the data directory
//! with the backend its caller chose (the binary: SQLite, WAL, migrated on open), builds an
//! [`AppState`] and serves [`router`] over plain HTTP or, with `--tls-cert/--tls-key`, HTTPS
//! ([`tls`]). The router is assembled from one module per area under [`api`] (health, auth,
//! accounts and devices, registry, photos, OpenAPI), each handler annotated for the OpenAPI
//! document, and wrapped in the same layers: request counting ([`metrics`]) → client address
//! (behind a trusted proxy, [`auth::proxy`]) → request id → trace → JSON errors → panic catcher
//! → timeout by route (uploads get their own) → body limit. Settings come from flags, the
//! environment and a TOML file ([`config`]).
//! Handlers authenticate with the [`auth::Auth`] extractor (JWT + a point query on the device
//! row), state their role on their first line, call the registry service ([`registry`]) or the
//! store ([`store::Store`]) and answer JSON; every failure is one [`AppError`] with one JSON
//! shape. Every change is written in one transaction with its audit row ([`audit`]).
//!
//! Layers, top to bottom: transport ([`api`], [`web`]) → services that know nothing of HTTP
//! ([`registry`], [`office`], [`selection`], [`service`]) → the [`store::Store`] trait (crate
//! `taxi-fiscal-store`, with the audit chain and the receipts) → one backend crate
//! (`taxi-fiscal-store-sqlite`), chosen once by the binary.
#![forbid(unsafe_code)]

pub mod api;
pub mod auth;
pub mod clock;
pub mod config;
pub mod demo;
pub mod error;
/// Fuzz entry points (`fuzz/`, `tests/fuzz_*.rs`); not an API.
#[doc(hidden)]
#[cfg(feature = "sqlite")]
pub mod fuzzing;
pub mod limits;
pub mod metrics;
pub mod office;
pub mod registry;
pub mod selection;
pub mod server;
pub mod service;
pub mod store;
pub mod tls;
pub mod web;

pub use api::router;
pub use clock::Clock;
pub use config::Config;
pub use error::AppError;
pub use server::{AppState, ServerError, launch_with_listener, launch_with_state};
pub use taxi_fiscal_store::{audit, receipts};
