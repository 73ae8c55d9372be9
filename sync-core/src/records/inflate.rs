//! A bound on what the Automerge bytes of one record inflate to, checked before the document
//! library loads them.
//!
//! Automerge compresses (DEFLATE) the columns of a saved document and whole changes once they
//! pass 256 bytes, and inflates them on load without a bound: a 2 KB save can hold a
//! 2 MB `facts`, a 100 KB one a 100 MB text, which the server would hold in memory, for every
//! record of a request at once, before any check of the view could refuse it. So the chunks
//! are walked first (magic, checksum, type, length; for a document, its column metadata) and
//! every compressed part is inflated into a counter, stopping at `MAX_RECORD_INFLATED_BYTES`.
//! Inflating twice costs little: a record's columns are mostly under the compression threshold.
//!
//! Bytes this walk cannot follow are left to the library to judge (it refuses them with an
//! error), except that bundle chunks — an experimental format records never use — are refused.

use std::io::Read;

use super::RecordError;
use super::doc::malformed;
use crate::limits::MAX_RECORD_INFLATED_BYTES;

const MAGIC: [u8; 4] = [0x85, 0x6f, 0x4a, 0x83];
const DOCUMENT: u8 = 0;
const CHANGE: u8 = 1;
const COMPRESSED_CHANGE: u8 = 2;
/// The deflate bit of a column specification.
const DEFLATE: u32 = 0b1000;

/// Refuses `bytes` (one or more concatenated chunks) whose parts inflate beyond
/// `MAX_RECORD_INFLATED_BYTES` in all.
pub(crate) fn check_inflated(bytes: &[u8]) -> Result<(), RecordError> {
    check_inflated_parts([bytes])
}

/// `check_inflated` over several byte strings sharing one budget (the changes of a sync
/// message).
pub(crate) fn check_inflated_parts<'a>(
    parts: impl IntoIterator<Item = &'a [u8]>,
) -> Result<(), RecordError> {
    let mut budget = Budget(MAX_RECORD_INFLATED_BYTES);
    for part in parts {
        check_part(part, &mut budget)?;
    }
    Ok(())
}

fn check_part(bytes: &[u8], budget: &mut Budget) -> Result<(), RecordError> {
    let mut rest = bytes;
    while rest.len() >= 4 && rest[..4] == MAGIC {
        let Some((kind, data, after)) = chunk(rest) else {
            return Ok(());
        };
        match kind {
            DOCUMENT => document(data, budget)?,
            CHANGE => budget.spend(data.len())?,
            COMPRESSED_CHANGE => budget.inflate(data)?,
            _ => {
                return Err(malformed(
                    "formato de documento que os registros não usam (pacote de alterações)",
                ));
            }
        }
        rest = after;
    }
    Ok(())
}

/// What is left of the budget.
struct Budget(usize);

impl Budget {
    fn spend(&mut self, n: usize) -> Result<(), RecordError> {
        self.0 = self.0.checked_sub(n).ok_or_else(|| RecordError::TooLarge {
            what: "o registro descompactado",
            limit: format!("{} KB", MAX_RECORD_INFLATED_BYTES / 1024),
        })?;
        Ok(())
    }

    /// Inflates a raw DEFLATE stream into a counter, within the budget. A stream that does not
    /// inflate is the library's to refuse.
    fn inflate(&mut self, compressed: &[u8]) -> Result<(), RecordError> {
        let limit = u64::try_from(self.0).unwrap_or(u64::MAX).saturating_add(1);
        let mut decoder = flate2::bufread::DeflateDecoder::new(compressed).take(limit);
        let n = std::io::copy(&mut decoder, &mut std::io::sink()).unwrap_or(0);
        self.spend(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

/// One chunk: its type, its contents, and the bytes after it.
fn chunk(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let kind = *b.get(8)?;
    let (len, at) = uleb(b, 9)?;
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    let data = b.get(at..end)?;
    Some((kind, data, &b[end..]))
}

/// A document chunk: actors, heads, the metadata of the change and op columns, then their
/// data; each column whose specification has the deflate bit is inflated within the budget.
fn document(d: &[u8], budget: &mut Budget) -> Result<(), RecordError> {
    let Some((columns, data_at)) = document_columns(d) else {
        return Ok(());
    };
    let mut at = data_at;
    for (spec, len) in columns {
        let Some(end) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
            return Ok(());
        };
        let Some(data) = d.get(at..end) else {
            return Ok(());
        };
        if spec & DEFLATE != 0 {
            budget.inflate(data)?;
        } else {
            budget.spend(data.len())?;
        }
        at = end;
    }
    Ok(())
}

/// The `(specification, length)` of every column of a document chunk, change columns first,
/// and where their data starts.
fn document_columns(d: &[u8]) -> Option<(Vec<(u32, u64)>, usize)> {
    let (actors, mut at) = uleb(d, 0)?;
    for _ in 0..actors {
        let (len, next) = uleb(d, at)?;
        at = next.checked_add(usize::try_from(len).ok()?)?;
    }
    let (heads, next) = uleb(d, at)?;
    at = next.checked_add(usize::try_from(heads).ok()?.checked_mul(32)?)?;
    let mut columns = Vec::new();
    for _ in 0..2 {
        let (n, next) = uleb(d, at)?;
        at = next;
        for _ in 0..n {
            let (spec, next) = uleb(d, at)?;
            let (len, next) = uleb(d, next)?;
            at = next;
            columns.push((u32::try_from(spec).ok()?, len));
        }
    }
    (at <= d.len()).then_some((columns, at))
}

/// An unsigned LEB128 at `at`: its value and the position after it.
fn uleb(b: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(at)?;
        at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some((value, at));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use automerge::transaction::Transactable;
    use automerge::{AutoCommit, ROOT};

    use super::check_inflated;
    use crate::limits::MAX_RECORD_INFLATED_BYTES;
    use crate::records::RecordError;

    fn doc_with(text_len: usize) -> AutoCommit {
        let mut am = AutoCommit::new();
        am.put(ROOT, "facts", "a".repeat(text_len)).unwrap();
        am.commit();
        am
    }

    #[test]
    fn the_budget_holds_exactly_the_limit() {
        let mut b = super::Budget(MAX_RECORD_INFLATED_BYTES);
        b.spend(MAX_RECORD_INFLATED_BYTES).unwrap();
        assert!(b.spend(1).is_err());
    }

    #[test]
    fn a_compressed_document_is_counted_inflated() {
        // Comfortably under: passes. Far over, though the save is a few kilobytes: refused.
        let small = doc_with(MAX_RECORD_INFLATED_BYTES / 2).save();
        check_inflated(&small).unwrap();
        let huge = doc_with(MAX_RECORD_INFLATED_BYTES + 1).save();
        assert!(huge.len() < 64 * 1024, "{}", huge.len());
        assert!(matches!(
            check_inflated(&huge),
            Err(RecordError::TooLarge { .. })
        ));
    }

    #[test]
    fn compressed_changes_are_counted_inflated() {
        use std::io::Write;
        // A compressed change chunk (type 2) of a few kilobytes inflating past the limit.
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(&vec![b'a'; MAX_RECORD_INFLATED_BYTES + 1])
            .unwrap();
        let data = enc.finish().unwrap();
        assert!(data.len() < 64 * 1024, "{}", data.len());
        let mut chunk = vec![0x85, 0x6f, 0x4a, 0x83, 0, 0, 0, 0, 2];
        let mut len = data.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                chunk.push(byte);
                break;
            }
            chunk.push(byte | 0x80);
        }
        chunk.extend(&data);
        assert!(matches!(
            check_inflated(&chunk),
            Err(RecordError::TooLarge { .. })
        ));
        // Uncompressed change chunks count as they are; a save followed by changes passes.
        let mut am = doc_with(10);
        let mut both = am.save();
        let base = am.get_heads();
        am.put(ROOT, "facts", "b").unwrap();
        am.commit();
        both.extend(am.save_after(&base));
        check_inflated(&both).unwrap();
    }
}
