//! Entry points for fuzzing the decoders an outsider can reach in this crate: the cargo-fuzz
//! targets (`fuzz/fuzz_targets/`) and the bounded property tests that run in CI on stable
//! (`sync-core/tests/fuzz_records.rs`) call the same functions, so a crash found by either is
//! replayed by both. Not an API: hidden from the docs, and every function only exercises code.
//!
//! The contract of each entry point: for any bytes it returns, without panicking, without
//! recursing with the depth of its input and without allocating beyond the limits of
//! `crate::limits`. A panic out of one is a bug to fix (and its input goes into
//! `fuzz/corpus/<target>/`).

use chrono::{DateTime, Utc};

use crate::records::{CheckContext, RecordDoc, check_record};

/// A record document as the server and a device receive one: loaded (`RecordDoc::load`:
/// bounded bytes, contained library panics), then read as each reader does: the view (one
/// walk of the tree, bounded in depth), its conflicts, the sealed flag, the view at its own
/// heads (the vetting's read), and the checks of what it holds.
///
/// Automerge checks each chunk's checksum first, so bytes mutated blindly (as a fuzzer does)
/// rarely reach the decoder behind it: the input is also tried with the checksum of its first
/// chunk recomputed (`with_valid_checksum`).
pub fn record_doc(data: &[u8]) {
    read_record(data);
    if let Some(fixed) = with_valid_checksum(data) {
        read_record(&fixed);
    }
}

/// `data` with the checksum of its first Automerge chunk made to match its contents (`None`
/// when it does not start like a chunk). A chunk is: magic (4 bytes), checksum (the first 4
/// bytes of the SHA-256 of what follows it, up to the chunk's end), type (1 byte), length
/// (unsigned LEB128), contents.
pub fn with_valid_checksum(data: &[u8]) -> Option<Vec<u8>> {
    use sha2::{Digest, Sha256};
    const MAGIC: [u8; 4] = [0x85, 0x6f, 0x4a, 0x83];
    if data.len() < 10 || data[..4] != MAGIC {
        return None;
    }
    let (mut len, mut shift, mut at) = (0usize, 0u32, 9usize);
    loop {
        let b = *data.get(at)?;
        at += 1;
        len |= usize::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 28 {
            return None;
        }
    }
    let end = at.checked_add(len)?.min(data.len());
    let digest = Sha256::digest(&data[8..end]);
    let mut out = data.to_vec();
    out[4..8].copy_from_slice(&digest[..4]);
    (out != data).then_some(out)
}

fn read_record(data: &[u8]) {
    let Ok(mut doc) = RecordDoc::load(data) else {
        return;
    };
    let view = doc.view();
    let _ = doc.conflicts();
    let _ = doc.is_sealed();
    let heads = doc.heads();
    let _ = doc.view_at(&heads);
    if let Ok(view) = view {
        let _ = view.verdict();
        let _ = serde_json::to_string(&view);
        let ctx = CheckContext {
            now: fixed_now(),
            registry: None,
            index: None,
        };
        let _ = check_record(None, &view, &ctx);
    }
    // The save of what was loaded must load again.
    let saved = doc.save();
    let _ = RecordDoc::load(&saved);
}

/// The instant checks are made at: fixed, so that a corpus file replays the same way on any
/// day.
fn fixed_now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_796_000_000, 0).unwrap_or_default()
}
