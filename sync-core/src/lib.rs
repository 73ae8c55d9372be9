//! sync-core: what the officer's phone and the central server share.
//!
//! Layers, each usable and testable alone:
//! `domain` (registry types; plate, CPF, CNH and RENAVAM normalisation) → `rules` (Lei
//! 4.019/2004 as data plus pure evaluation: facts + an instant → a verdict citing articles) →
//! later `records` (Automerge field records), `store` (device SQLite) and `sync` (sans-IO
//! protocol). `time` pins the reasoning to America/Sao_Paulo while storage stays in UTC.
#![forbid(unsafe_code)]

pub mod domain;
pub mod records;
pub mod rules;
pub mod schemas;
pub mod store;
pub mod time;

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
