//! law: the law kernel of taxi-fiscal — the only crate that knows an article of Lei nº
//! 4.019/2004 of Americana-SP.
//!
//! Flow: `domain` holds the registry's types (permits, people, vehicles, stands; plate, CPF, CNH
//! and RENAVAM normalisation). `rules` is the law as data plus pure evaluation: the catalogue
//! (rule id → provision → citation, once), the parameters the law leaves open, the field check
//! (facts + an instant → a verdict citing articles), the office refusals (a registry write is
//! judged on the whole registry after it), art. 32's penalties, deadlines on the local calendar
//! and IPCA correction of amounts. `time` pins the reasoning to America/Sao_Paulo while
//! storage stays in UTC.
//!
//! Nothing here does I/O, reads the clock, or knows about storage, Automerge or HTTP: the device
//! store, the server and the CLI all depend on this crate and hand it their facts, so the phone
//! and the office judge by the same code.
#![forbid(unsafe_code)]

pub mod domain;
pub mod rules;
pub mod text;
pub mod time;

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
