//! sync-core: what the officer's phone and the central server share.
//!
//! Layers, each usable and testable alone: the law kernel (crate `law`, re-exported here as
//! `domain`, `rules` and `time`: registry types and Lei 4.019/2004 as data plus pure evaluation)
//! → `records` (Automerge field records), `store` (device SQLite) and `sync` (sans-IO
//! protocol). `field` joins records to the store: what the device writes, one transaction per
//! change, with auto numbers and photos. `time` pins the reasoning to America/Sao_Paulo while
//! storage stays in UTC. `client` (feature `client`, the only part doing network I/O) drives
//! the store against the server over HTTP: login, numbers, record sync, photos, registry feed.
//! `print` puts an issued record on paper from the device store alone (ESC/POS or PDF, through
//! the `documents` crate).
#![forbid(unsafe_code)]

#[cfg(feature = "client")]
pub mod client;
pub mod feed;
pub mod field;
/// Fuzz entry points (`fuzz/`, `tests/fuzz_*.rs`); not an API.
#[doc(hidden)]
pub mod fuzzing;
pub mod limits;
pub mod print;
pub mod records;
pub mod schemas;
pub mod store;
pub mod sync;

pub use law::{domain, rules, text, time};

#[cfg(feature = "testkit")]
pub use law::testkit;
