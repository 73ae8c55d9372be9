//! End-to-end harness of taxi-fiscal: the real `taxi-fiscal` server process, real device stores
//! driven by the real sync client (`sync_core::client`), the office acting through the HTTP
//! API, and a proxy that cuts, drops and duplicates requests between them.
//!
//! Flow of a test:
//! 1. [`Server::start_demo`] runs `taxi-fiscal demo --listen 127.0.0.1:0 --data DIR` (a temporary
//!    directory), reads the address it prints and polls `/health` (bounded) until it answers;
//!    [`Server::kill`] sends SIGKILL and [`Server::restart`] starts it again on the same data
//!    and port; [`Server::audit_verify`] runs `taxi-fiscal audit verify --data DIR`.
//! 2. [`Api`] logs in as the demo admin or office user and calls the API (users, devices,
//!    records, penalties) with reqwest.
//! 3. [`Device`] is one phone: a store in a temporary file, logged in through the client,
//!    writing records with `FieldRecords` at its own (injectable) clock, syncing through the
//!    server or through a [`Proxy`].
//! 4. [`Proxy`] forwards one request per connection and applies the next matching [`Fault`],
//!    reporting what it did on a channel the test waits on (bounded), so nothing depends on
//!    timing.
//! 5. [`browser::Browser`] is headless Chromium driven through chromedriver (W3C WebDriver over
//!    reqwest) for the office's web pages; it polls for elements with a deadline.
//!
//! 6. [`inproc::InProcServer`] is the same server inside the test process, on a clock the test
//!    moves (`Clock::fixed`): the real router, TCP on loopback and SQLite in a temporary
//!    directory, for stories the law stretches over weeks (an edital, `tests/tests/edital.rs`).
//!
//! 8. [`TestCa`] is a throwaway certificate authority (`scripts/test-ca`) for the HTTPS tests:
//!    [`Server::start_demo_tls`] serves with its certificate, clients trust its PEM.
//!
//! 9. [`pg::fresh_database`] makes a new database on the test PostgreSQL server for
//!    [`Server::start_demo_pg`]: servers on PostgreSQL, two nodes on one database among them
//!    (`tests/tests/two_nodes.rs`).
//!
//! 7. [`bench`] is what the benchmarks share: devices on a RAM disk, a big registry imported
//!    through the command line, autos written quickly, latency statistics.
//!
//! Everything waits with a deadline; nothing sleeps to synchronise.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a panic is the failure report

pub mod api;
pub mod bench;
pub mod browser;
pub mod device;
pub mod inproc;
pub mod pg;
pub mod proxy;
pub mod registry_gen;
pub mod server;
pub mod tls;

pub use api::Api;
pub use device::{Device, NoSleep};
pub use inproc::InProcServer;
pub use proxy::{Fault, Proxy, ProxyEvent};
pub use server::{Server, taxi_fiscal_bin};
pub use tls::TestCa;
