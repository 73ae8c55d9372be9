//! In-process tests of every route: `tower::ServiceExt::oneshot` on `router(state)` over a
//! temporary data directory seeded with the demo registry and users, with a fixed clock
//! (2026-11-30 12:00 in Americana) and cheap password hashing. Each area has its module; every
//! rejected request is also checked to have stored nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod common;

mod accounts;
mod audit;
mod auth;
mod errors;
mod feed;
mod import;
mod law;
mod metrics;
mod notices;
mod observed;
mod office;
mod openapi;
mod photos;
mod records;
mod registry;
mod schemas;
mod selection;
