//! `taxi-fiscal-ffi`: the library the Android (Kotlin) and iOS (Swift) apps link, generated
//! with UniFFI proc-macros (no UDL). It holds no logic of its own: every answer comes from
//! `sync-core` — the device store, the rules engine, the field records and the sync client —
//! and this crate only shapes it for apps.
//!
//! # What the app holds
//!
//! One [`FieldSession`] per device database (`session.rs`):
//!
//! ```text
//! FieldSession.open(dbPath, serverUrl, deviceId,     creates/migrates the SQLite file,
//!                   secrets)                        encrypted with a key from the keystore
//!   login(user, password)                            session + device identity stored in the file
//!   pullRegistry()                                   registry replica: snapshot or changes
//!   lookupPlate / lookupPermit / lookupPerson        point queries on the replica (offline)
//!   check(CheckRequest) → Verdict                    rules engine: findings citing rule + article
//!   startInfraction / startTransgression             a record, saved in one transaction (offline)
//!   confirmVehicle(id)                               the officer confirms the vehicle found
//!   issueRecord / addWitness / attachPhoto(File) …   edits, each one transaction
//!   renderRecord(id, PrintFormat) → bytes            an issued record on paper (offline)
//!   listRecords / showRecord                         what the device holds
//!   sync(listener) → SyncReport, cancelSync()        numbers, records, photos, registry
//!   syncStatus()                                     pending work, last sync, registry age
//! ```
//!
//! Values cross as plain records and enums (`types.rs`): instants as timestamps (Kotlin
//! `java.time.Instant`, Swift `Date`, Python `datetime`), calendar dates as `YYYY-MM-DD`
//! strings, money as decimal strings (`"797.02"`). Errors are one enum, [`FiscalError`]
//! (`error.rs`), converted from every sync-core error in one place, without personal data.
//!
//! # Secrets (`secrets.rs`)
//!
//! The app passes its platform keystore as a [`SecretStore`] (a callback interface it
//! implements). The database file is encrypted with SQLCipher under a random key kept there,
//! and the device's signing key and the session's tokens live there too: a copied file gives
//! nothing away. A revoked device deletes the registry and every record the server holds at its
//! next sync, and its tokens with them.
//!
//! # Threads (ADR 0011)
//!
//! Every method blocks the calling thread; none is `async`. The network ones (`login`,
//! `pullRegistry`, `sync`) can take seconds to minutes and must run on a background thread
//! (Kotlin `Dispatchers.IO`, Swift `Task.detached`); `cancelSync` may be called from any
//! thread and stops them at the next request or retry pause. They run on a second SQLite
//! connection of their own, so that lookups, checks and record writes on the first are never
//! queued behind a sync: readers never wait in WAL mode, and a write waits at most for one of
//! the sync's short transactions. The session is `Send + Sync`; one sync runs at a time.

mod error;
mod secrets;
mod session;
mod types;

pub use error::FiscalError;
pub use secrets::{SecretStore, SecretStoreError, memory_secret_store};
pub use session::{FieldSession, SyncListener};
pub use types::*;

uniffi::setup_scaffolding!("taxi_fiscal");
