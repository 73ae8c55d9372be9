//! What a device does with the registry feed a server sends it (`client::registry`): undo
//! `Content-Encoding: zstd` under the client's bound, read the text as UTF-8, parse a snapshot
//! (`feed::snapshot_from_json`) or a batch of changes (`RegistryChanges::from_json`), and apply
//! it to the device store in one transaction (`Store::apply_snapshot` / `apply_changes`), then
//! look permits up as an inspection would. A hostile server must not crash the phone: every
//! step may refuse, none may panic, and what the store accepted is exactly what was sent.
//!
//! Input layout ([`FeedInput`]): one flag byte (bit 0: the snapshot part is zstd, bit 1: the
//! changes part is), a little-endian `u32` length of the snapshot part, the snapshot part, and
//! the changes part (the rest). The snapshot is applied to a new, empty store; the changes to
//! whatever the store then holds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};

use crate::client::{MAX_RESPONSE_BYTES, decode_zstd};
use crate::feed::{self, RegistryChanges};
use crate::store::Store;

/// The two bodies a device receives, as the fuzz input carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedInput {
    pub snapshot: Vec<u8>,
    pub snapshot_zstd: bool,
    pub changes: Vec<u8>,
    pub changes_zstd: bool,
}

impl FeedInput {
    /// Splits fuzz bytes as the module doc says (short input: empty parts).
    pub fn parse(data: &[u8]) -> Self {
        let flags = data.first().copied().unwrap_or(0);
        let len = data
            .get(1..5)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, u32::from_le_bytes) as usize;
        let rest = data.get(5..).unwrap_or_default();
        let (snapshot, changes) = rest.split_at(len.min(rest.len()));
        Self {
            snapshot: snapshot.to_vec(),
            snapshot_zstd: flags & 1 != 0,
            changes: changes.to_vec(),
            changes_zstd: flags & 2 != 0,
        }
    }

    /// The fuzz bytes of this input (inverse of [`FeedInput::parse`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let flags = u8::from(self.snapshot_zstd) | (u8::from(self.changes_zstd) << 1);
        let len = u32::try_from(self.snapshot.len()).unwrap_or(u32::MAX);
        let mut out = vec![flags];
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&self.snapshot);
        out.extend_from_slice(&self.changes);
        out
    }
}

/// A store in its own directory, removed on drop.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("taxi-fiscal-fuzz-feed-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("scratch directory {}: {e}", dir.display());
        }
        Self { dir }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The body as the client would read it: decoded, UTF-8, or `None` where it refuses.
fn body_text(bytes: &[u8], zstd: bool) -> Option<String> {
    let bytes = if zstd {
        let out = decode_zstd(bytes, MAX_RESPONSE_BYTES).ok()?;
        assert!(out.len() <= MAX_RESPONSE_BYTES);
        out
    } else {
        bytes.to_vec()
    };
    String::from_utf8(bytes).ok()
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_796_000_000, 0).unwrap_or_default()
}

/// Every permit of the replica must be found by number and by plate.
fn lookups_work(store: &Store) {
    let reg = match store.export_registry() {
        Ok(r) => r,
        Err(e) => panic!("an accepted replica cannot be read back: {e}"),
    };
    let index = reg.index();
    for p in &reg.permits {
        match store.lookup_permit(&p.number, now()) {
            Ok(Some(_)) => {}
            other => panic!("permit {:?} of the replica not found: {other:?}", p.number),
        }
        if let Some(v) = index.vehicle(&p.vehicle_id)
            && let Err(e) = store.lookup_plate(&v.plate, now())
        {
            panic!("plate lookup failed on an accepted replica: {e}");
        }
    }
}

/// Runs one input; panics only on a bug (see the module doc).
pub fn registry_feed(data: &[u8]) {
    let input = FeedInput::parse(data);
    let scratch = Scratch::new();
    let mut store = match Store::open(scratch.dir.join("device.db")) {
        Ok(s) => s,
        Err(e) => panic!("a new device store could not be opened: {e}"),
    };
    // What the store should hold, by the in-memory model of the feed.
    let mut expected = None;
    if let Some(text) = body_text(&input.snapshot, input.snapshot_zstd)
        && let Ok(snapshot) = feed::snapshot_from_json(&text)
        && store.apply_snapshot(&snapshot, now()).is_ok()
    {
        let held = store.export_registry().ok();
        assert_eq!(
            held.as_ref(),
            Some(&feed::sorted(snapshot.clone())),
            "the replica is not the snapshot it accepted"
        );
        lookups_work(&store);
        expected = Some(snapshot);
    }
    let Some(text) = body_text(&input.changes, input.changes_zstd) else {
        return;
    };
    let Ok(changes) = RegistryChanges::from_json(&text) else {
        return;
    };
    let before = store.replica_info().ok().flatten();
    match store.apply_changes(&changes, now()) {
        Ok(report) => {
            assert_eq!(report.version, changes.to_version);
            if let Some(mut model) = expected {
                if let Err(e) = feed::apply(&mut model, &changes) {
                    panic!("the store accepted a batch the model refuses: {e}");
                }
                let held = store.export_registry().ok();
                let mut want = feed::sorted(model);
                // The store keeps the version and production time the batch names.
                want.version = changes.to_version;
                assert_eq!(
                    held.map(|h| (h.people, h.vehicles, h.stands, h.permits)),
                    Some((want.people, want.vehicles, want.stands, want.permits)),
                    "the replica is not the model after the batch"
                );
            }
            lookups_work(&store);
        }
        Err(_) => {
            // Refused whole: the replica is still the version it was.
            let after = store.replica_info().ok().flatten();
            assert_eq!(
                after.map(|a| a.version),
                before.map(|b| b.version),
                "a refused batch moved the replica"
            );
        }
    }
}
