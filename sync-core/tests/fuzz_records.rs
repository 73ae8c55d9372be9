//! Bounded fuzzing of the record document decoder, on stable, in every test run: the corpus
//! files that found bugs are replayed, then property tests feed `sync_core::fuzzing::record_doc`
//! mutations of a valid record (bit flips, truncations, splices) and hostile documents built
//! with the Automerge API (deep nesting, huge fields). The entry point must return for every
//! input: a panic, a stack overflow or a runaway allocation fails the test. The same entry
//! point is the cargo-fuzz target `record_doc` for longer runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;

use automerge::transaction::Transactable;
use automerge::{ObjType, ROOT};
use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;
use sync_core::domain::{DriverRole, Plate};
use sync_core::fuzzing::record_doc;
use sync_core::limits::{MAX_DOCUMENT_DEPTH, MAX_FACTS_CHARS};
use sync_core::records::{
    Agent, EventKind, InfractionDraft, LegalBasis, PersonRef, RecordDoc, Signature, UserRole,
    WitnessInput,
};
use uuid::Uuid;

fn t0() -> DateTime<Utc> {
    "2026-11-30T15:00:00Z".parse().unwrap()
}

fn officer() -> Agent {
    Agent::new("U-GM-17", UserRole::GuardaMunicipal, Uuid::from_u128(0xA1))
}

/// An issued auto with a witness, a photo and an office event: every kind of object.
fn seed_doc() -> RecordDoc {
    let agent = officer();
    let mut r = RecordDoc::new_infraction(
        InfractionDraft {
            id: Uuid::now_v7(),
            number: Some("501".into()),
            issuing_body: "Guarda Municipal de Americana".into(),
            occurred_at: t0(),
            monotonic: 1,
            position: None,
            stand_id: Some("S02".into()),
            plate: Plate::parse("GHI7J89").unwrap(),
            driver: PersonRef::Registry("P08".into()),
            driver_role: DriverRole::Auxiliary,
            permit_number: Some("0004".into()),
            holder_id: Some("P07".into()),
            facts: "Motorista auxiliar conduzindo com CNH vencida.".into(),
            legal_basis: vec![LegalBasis {
                rule_id: "R09".into(),
                citation: "Lei 4.019/2004, art. 8".into(),
            }],
            verdict: None,
            witnesses: vec![WitnessInput {
                person: PersonRef::Observed("w1".into()),
                statement: "Vi.".into(),
            }],
            photos: vec!["ab".repeat(32)],
        },
        &agent,
    )
    .unwrap();
    r.confirm_vehicle(&agent, t0()).unwrap();
    r.issue(
        &agent,
        t0() + Duration::minutes(1),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &sync_core::records::DeviceKey::generate().unwrap(),
    )
    .unwrap();
    let office = Agent::new("U-UT-1", UserRole::Office, Uuid::from_u128(0xB1));
    r.append_event(
        &office,
        t0() + Duration::hours(1),
        EventKind::Reviewed { note: None },
    )
    .unwrap();
    r
}

fn seed() -> Vec<u8> {
    seed_doc().save()
}

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn the_corpus_replays_without_a_panic() {
    let files = corpus("record_doc");
    assert!(!files.is_empty(), "the corpus of record_doc is empty");
    for (path, bytes) in files {
        eprintln!("{}", path.display());
        record_doc(&bytes);
    }
}

/// The bytes that made automerge 0.12 panic inside `AutoCommit::load` (found by the byte
/// flips below): loading them is a `Malformed` error, not a panic.
#[test]
fn the_library_panic_in_the_corpus_is_a_malformed_record() {
    for (path, bytes) in corpus("record_doc") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("automerge-panic") {
            continue;
        }
        let panicked = std::panic::catch_unwind(|| automerge::AutoCommit::load(&bytes)).is_err();
        assert!(panicked, "{name}: the library no longer panics on it");
        match RecordDoc::load(&bytes) {
            Err(sync_core::records::RecordError::Malformed { .. }) => {}
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// What a mutation does to the seed.
#[derive(Debug, Clone)]
enum Mutation {
    /// XOR these bytes at these positions (taken modulo the length).
    Flip(Vec<(usize, u8)>),
    Truncate(usize),
    /// Insert bytes at a position.
    Splice(usize, Vec<u8>),
    /// Repeat a slice of the seed (a chunk appended to itself).
    Repeat(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => prop::collection::vec((any::<usize>(), 1u8..), 1..6).prop_map(Mutation::Flip),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        2 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, b)| Mutation::Splice(at, b)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Repeat(a, b)),
    ]
}

fn mutate(seed: &[u8], m: &Mutation) -> Vec<u8> {
    let mut b = seed.to_vec();
    let n = b.len();
    // An earlier mutation of the chain may have truncated everything: only a splice has
    // anything to do on no bytes (the positions below are taken modulo the length).
    if n == 0 {
        return match m {
            Mutation::Splice(_, bytes) => bytes.clone(),
            _ => b,
        };
    }
    match m {
        Mutation::Flip(flips) => {
            for (at, x) in flips {
                b[at % n] ^= x;
            }
        }
        Mutation::Truncate(at) => b.truncate(at % n),
        Mutation::Splice(at, bytes) => {
            let at = at % n;
            b.splice(at..at, bytes.iter().copied());
        }
        Mutation::Repeat(a, len) => {
            let a = a % n;
            let end = (a + len % 256).min(n);
            let part = b[a..end].to_vec();
            b.extend(part);
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_records_never_panic(ms in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = seed();
        for m in &ms {
            bytes = mutate(&bytes, m);
        }
        // `record_doc` also tries the bytes with their checksum made valid.
        record_doc(&bytes);
    }
}

/// A hostile but well-formed document: the seed with `depth` nested maps or lists under a
/// key, and a text of `len` characters in a field.
fn hostile(depth: usize, lists: bool, field: &str, len: usize) -> Vec<u8> {
    let mut r = seed_doc();
    let am = r.automerge_mut();
    let ty = if lists { ObjType::List } else { ObjType::Map };
    if depth > 0 {
        let mut obj = am.put_object(ROOT, "x", ty).unwrap();
        for _ in 1..depth {
            obj = if lists {
                am.insert_object(&obj, 0, ty).unwrap()
            } else {
                am.put_object(&obj, "x", ty).unwrap()
            };
        }
    }
    if len > 0 {
        am.put(ROOT, field, "a".repeat(len)).unwrap();
    }
    am.commit();
    r.save()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn deep_and_huge_documents_never_panic(
        depth in prop_oneof![0..=MAX_DOCUMENT_DEPTH + 2, 300usize..1500],
        lists in any::<bool>(),
        field in prop::sample::select(vec!["facts", "verdict", "legal_basis", "number", "x"]),
        len in prop_oneof![0..=MAX_FACTS_CHARS + 1, Just(300_000usize)],
    ) {
        let bytes = hostile(depth, lists, field, len);
        // A small stack: a walk that recursed with the nesting would overflow it.
        std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(move || record_doc(&bytes))
            .unwrap()
            .join()
            .unwrap();
    }
}

/// How the corpus's `automerge-panic-*` inputs were found: byte flips of a valid record until
/// `AutoCommit::load` panics, written to the corpus. Run by hand
/// (`cargo test -p sync-core --test fuzz_records -- --ignored find_library_panics`).
#[test]
#[ignore = "a search, not a test: writes corpus files"]
fn find_library_panics() {
    use sha2::{Digest, Sha256};
    let seed = seed();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        // xorshift64*: deterministic, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/record_doc");
    std::panic::set_hook(Box::new(|_| {}));
    let mut found = 0;
    for _ in 0..200_000 {
        let mut b = seed.clone();
        for _ in 0..(1 + next() % 4) {
            // Past the chunk header, whose checksum is then made to match.
            let at = 12 + (next() as usize) % (b.len() - 12);
            b[at] ^= (next() % 255 + 1) as u8;
        }
        let b = sync_core::fuzzing::with_valid_checksum(&b).unwrap_or(b);
        if std::panic::catch_unwind(|| automerge::AutoCommit::load(&b)).is_err() {
            let name = format!("automerge-panic-{}", &hex::encode(Sha256::digest(&b))[..16]);
            std::fs::write(dir.join(name), &b).unwrap();
            found += 1;
            if found == 3 {
                break;
            }
        }
    }
    let _ = std::panic::take_hook();
    assert!(found > 0, "no panic in 200,000 mutations");
}
