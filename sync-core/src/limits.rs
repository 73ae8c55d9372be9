//! What one field record may hold: sizes of its texts, lengths of its lists, its nesting and its
//! bytes.
//!
//! The same limits are enforced on the device when recording and on the server when vetting,
//! by the same code (`records::check_record`, called by the device's `FieldRecords` after every
//! write and by the server's vetting after every incoming change), so a record the device saved
//! is never refused by the server for its size, and an outsider cannot make the server hold,
//! store or serve more than this per record. The whole-record byte limit is checked before a
//! document is loaded (`MAX_RECORD_BYTES`), so an oversized upload costs a length comparison.
//!
//! Values are generous for real use: an auto de infração is about 0.5 KB and its longest text,
//! the description of the facts, a paragraph or two. Lengths of texts are counted in
//! characters (what the officer typed), so accented Portuguese is not penalised.

/// Bytes of one record's Automerge document as received (a whole `save()`, or a sync message
/// for it) and as stored. A real record is 0.5–20 KB even after years of office events; 1 MiB
/// is fifty times the largest seen, and bounds what one record can make the server load.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// Bytes one record's Automerge bytes may inflate to. Automerge compresses a save's columns
/// and large changes, and inflates them on load: without this bound a 100 KB save could hold a
/// 100 MB text. A record at every text limit is under 1 MiB uncompressed; twice that leaves
/// room for its history of edits. Checked before loading, by inflating into a counter.
pub const MAX_RECORD_INFLATED_BYTES: usize = 2 * 1024 * 1024;

/// Nesting of objects below the document's root. The layout uses two levels (a list of
/// witnesses or events, each a map); eight leaves room for future layouts while keeping every
/// walk of a document trivially shallow. Deeper documents are refused as malformed before any
/// recursive read.
pub const MAX_DOCUMENT_DEPTH: usize = 8;

/// Characters of the description of the facts. A dense page of an auto is about 3,000
/// characters; 10,000 is three such pages.
pub const MAX_FACTS_CHARS: usize = 10_000;

/// Characters of one witness statement: as long as a description of the facts.
pub const MAX_STATEMENT_CHARS: usize = 10_000;

/// Characters of the office's free texts in events (a review note, the reason of an
/// annulment): a paragraph or a short page.
pub const MAX_NOTE_CHARS: usize = 4_000;

/// Characters of every short text of a record: number, issuing body, ids of people, stands and
/// permits, plate, user ids, citations. The longest real one (an issuing body's name, or a
/// legal citation) is under 100.
pub const MAX_TEXT_FIELD_CHARS: usize = 200;

/// Bytes of one JSON-bearing field (the sealed verdict, the legal basis, the signature, an
/// event's payload). A verdict with every finding of the catalogue is about 6 KB.
pub const MAX_JSON_FIELD_BYTES: usize = 64 * 1024;

/// Witnesses of one record: a crowded stand rarely gives more than a handful.
pub const MAX_WITNESSES: usize = 20;

/// Photos of one record (hashes; the files travel apart).
pub const MAX_PHOTOS_PER_RECORD: usize = 50;

/// Events of one record. A whole procedure — issue, review, classification, penalty, ciência,
/// reconsideration, appeal, decisions, conflict resolutions — is about fifteen.
pub const MAX_EVENTS: usize = 200;

/// Rules cited in a legal basis or a classification: the catalogue has a few dozen.
pub const MAX_LEGAL_BASIS: usize = 50;

/// People charged by one record: the driver and, for an auxiliary, the holder.
pub const MAX_CHARGED: usize = 4;

/// Characters of a plate as typed ("ABC-1D23", "abc 1234"): seven letters and digits plus a
/// few separators.
pub const MAX_PLATE_RAW_CHARS: usize = 16;

/// Metres of the horizontal accuracy a position may claim. A phone's fix is 3–50 m, a coarse
/// network fix a few kilometres; beyond 20 km the position says nothing about where in the
/// city the record was made.
pub const MAX_POSITION_ACCURACY_M: f64 = 20_000.0;

/// How long before the check an occurrence may be, in days. A tablet may stay offline for
/// weeks and a record is synced when it is back; a year is far beyond that, and an
/// occurrence older than it (the epoch, a reset clock) is an error, not a record.
pub const MAX_OCCURRENCE_AGE_DAYS: i64 = 365;

/// How far after the check an occurrence may be, in hours: a device clock a timezone or a day
/// ahead is tolerated, a record from next week is not.
pub const MAX_OCCURRENCE_AHEAD_HOURS: i64 = 24;

// ----- observed persons (identity and contact sent apart from the document) -----------------

/// Observed persons one record may name, and so the most one upload may carry: the driver, every
/// witness and every person charged, each of them possibly someone the registry does not know.
pub const MAX_OBSERVED_PERSONS: usize = 1 + MAX_WITNESSES + MAX_CHARGED;

/// Characters of an observed person's name: a full Brazilian name with every surname is well
/// under 100; 200 is the limit of every short text of a record.
pub const MAX_PERSON_NAME_CHARS: usize = MAX_TEXT_FIELD_CHARS;

/// Characters of a document number (CPF, CNH, RG, passport) as typed, with dots and dashes: the
/// longest, a foreign passport or an RG with its issuer, is under 25.
pub const MAX_PERSON_DOCUMENT_CHARS: usize = 32;

/// Characters of a phone number as typed: `+55 (19) 99999-0000` is 19; 32 leaves room for an
/// extension.
pub const MAX_PERSON_PHONE_CHARS: usize = 32;

/// Characters of a postal address as typed: street, number, complement, district, city and CEP
/// fit in about 150; 300 is two such lines.
pub const MAX_PERSON_ADDRESS_CHARS: usize = 300;

/// A reader that fails once more than `limit` bytes were asked of it, and remembers it
/// ([`BoundedReader::exceeded`]), so that a caller reading a stream (a registry snapshot on the
/// device, a CSV import on the server) can tell "too big" from a broken body.
#[derive(Debug)]
pub struct BoundedReader<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R> BoundedReader<R> {
    pub fn new(inner: R, limit: u64) -> Self {
        Self {
            inner,
            left: limit,
            exceeded: false,
        }
    }

    /// Whether a read went past the limit (the read then failed).
    pub fn exceeded(&self) -> bool {
        self.exceeded
    }
}

impl<R: std::io::Read> std::io::Read for BoundedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the limit is asked for, so that a stream of exactly the limit passes.
        let want = buf
            .len()
            .min(usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => {
                self.exceeded = true;
                Err(std::io::Error::other("stream over its size limit"))
            }
        }
    }
}
