//! The fuzz targets `csv_import` and `api_json` on stable, within a fixed budget: every input
//! checked in under `fuzz/corpus/<target>/` is replayed, then proptest runs a fixed number of
//! mutations of valid seeds (a real CSV export of the sample registry, real API bodies) —
//! byte flips, truncations, splices, cells replaced by hostile text — and structured inputs
//! (JSON nested far past serde_json's recursion limit). Longer runs: `fuzz/README.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;

use proptest::prelude::*;
use taxi_fiscal_server::fuzzing::{api_json, csv_import};
use taxi_fiscal_server::registry::csv::export;

/// Cases per property: with each case a few milliseconds in debug, each test stays well under
/// 20 s on a CI machine.
const CASES: u32 = 192;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fuzz")
        .join("corpus")
        .join(target);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// A CSV export that imports into an empty registry (as the fuzz target does): the sample's
/// coordinator must be one of the file's people.
fn csv_seed() -> Vec<u8> {
    let mut reg = sync_core::testkit::sample_registry();
    reg.stands[0].coordinator_id = Some("P01".into());
    export(&reg).unwrap()
}

/// Representative bodies of the routes `api_json` decodes.
fn json_seeds() -> Vec<Vec<u8>> {
    [
        r#"{"username":"fiscal","password":"fiscal-demo","device_id":"tablet-fiscal-01"}"#,
        r#"{"refresh_token":"abc"}"#,
        r#"{"username":"novo","display_name":"Novo","role":"officer","password":"12345678"}"#,
        r#"{"size":100}"#,
        r#"{"hashes":["00"]}"#,
        r#"{"permit_number":"0011","amount":"240.00"}"#,
        r#"{"person_id":"P0002","licence_number":"0003-A3"}"#,
        r#"{"protocol":1,"device_id":"0190b3c0-0000-7000-8000-000000000001","cursor":0}"#,
        r#"{"id":"P9","name":"=HYPERLINK(\"x\")","cpf":"11144477735","birth_date":"1980-01-01"}"#,
        r#"[1, {"a": [null, true, -1e308, "\u0000"]}]"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// Text a spreadsheet, a CSV reader or a validator may trip on.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::from("=HYPERLINK(\"http://evil.example\",\"x\")")),
        Just(String::from("+55 19 3475-9000")),
        Just(String::from("-1+1")),
        Just(String::from("@SUM(A1)")),
        Just(String::from("\t=1")),
        Just(String::from("'=já")),
        Just(String::from("\"a,b\";c\r\nd")),
        Just(String::from("99999999999999999999999")),
        Just(String::from("-0")),
        Just(String::from("NaN")),
        Just(String::from("31/02/2026")),
        Just("x".repeat(10_000)),
        "\\PC{0,40}",
        any::<String>(),
    ]
}

/// One way to damage a seed.
#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Splice {
        at: usize,
        bytes: Vec<u8>,
    },
    Remove {
        at: usize,
        len: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
    },
    /// Replace one CSV cell (the `n`-th, counting commas) by text.
    Cell {
        n: usize,
        text: String,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..64)
        )
            .prop_map(|(at, bytes)| Mutation::Splice { at, bytes }),
        (any::<usize>(), 1usize..200).prop_map(|(at, len)| Mutation::Remove { at, len }),
        (any::<usize>(), 1usize..2_000).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), hostile_text()).prop_map(|(n, text)| Mutation::Cell { n, text }),
    ]
}

fn apply(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = seed.to_vec();
    for m in mutations {
        let len = out.len().max(1);
        match m {
            Mutation::Flip { at, bit } => {
                if let Some(b) = out.get_mut(at % len) {
                    *b ^= 1 << bit;
                }
            }
            Mutation::Truncate { at } => out.truncate(at % len),
            Mutation::Splice { at, bytes } => {
                let at = (at % len).min(out.len());
                out.splice(at..at, bytes.iter().copied());
            }
            Mutation::Remove { at, len: n } => {
                let at = (at % len).min(out.len());
                let end = (at + n).min(out.len());
                out.drain(at..end);
            }
            Mutation::Duplicate { at, len: n } => {
                let at = (at % len).min(out.len());
                let end = (at + n).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(end..end, copy);
            }
            Mutation::Cell { n, text } => {
                // A cell of the rows, not of the header (which only has to be right once).
                let body = out.iter().position(|b| *b == b'\n').unwrap_or(0);
                let commas: Vec<usize> = out
                    .iter()
                    .enumerate()
                    .filter(|(i, b)| *i > body && **b == b',')
                    .map(|(i, _)| i)
                    .collect();
                if commas.len() >= 2 {
                    let i = n % (commas.len() - 1);
                    let (start, end) = (commas[i] + 1, commas[i + 1]);
                    // Quoted, as a spreadsheet would write it.
                    let cell = format!("\"{}\"", text.replace('"', "\"\""));
                    out.splice(start..end, cell.into_bytes());
                }
            }
        }
    }
    out
}

#[test]
fn csv_import_corpus_replays() {
    let inputs = corpus("csv_import");
    assert!(!inputs.is_empty(), "no corpus checked in");
    for (path, data) in inputs {
        eprintln!("{}", path.display());
        csv_import(&data);
    }
}

#[test]
fn api_json_corpus_replays() {
    let inputs = corpus("api_json");
    assert!(!inputs.is_empty(), "no corpus checked in");
    for (path, data) in inputs {
        eprintln!("{}", path.display());
        api_json(&data);
    }
}

#[test]
fn the_csv_seed_imports_and_round_trips() {
    // The seed must be a real, good file, or the mutations below test only the header check.
    let rules = sync_core::rules::RulesConfig::default();
    let ctx = taxi_fiscal_server::registry::Ctx {
        today: chrono::NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
        rules: &rules,
    };
    let imported = taxi_fiscal_server::registry::csv::import(
        &sync_core::domain::Registry::default(),
        &csv_seed(),
        &ctx,
    )
    .unwrap();
    assert_eq!(imported.permits.len(), 5);
    csv_import(&csv_seed());
}

#[test]
fn every_cell_takes_hostile_text() {
    let seed = String::from_utf8(csv_seed()).unwrap();
    let (header, rows) = seed.split_once('\n').unwrap();
    let (first, rest) = rows.split_once('\n').unwrap();
    let texts = [
        "=HYPERLINK(\"http://evil.example\",\"x\")",
        "'=1+1",
        "''",
        "'",
        " ' -1 ",
        "+55 19 3475-9000",
        "-22,7",
        "@",
        "\"",
        "a\r\nb",
    ];
    let mut cells: Vec<String> = csv::Reader::from_reader(format!("{header}\n{first}").as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    for i in 0..cells.len() {
        let kept = cells[i].clone();
        for t in texts {
            cells[i] = t.to_owned();
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(&cells).unwrap();
            let row = String::from_utf8(w.into_inner().unwrap()).unwrap();
            csv_import(format!("{header}\n{row}{rest}").as_bytes());
        }
        cells[i] = kept;
    }
}

#[test]
fn json_nested_far_past_the_recursion_limit_is_refused_not_a_crash() {
    for depth in [127usize, 128, 129, 1_000, 100_000] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let body = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            api_json(body.as_bytes());
            let r =
                taxi_fiscal_server::api::extract::parse_json::<serde_json::Value>(body.as_bytes());
            // serde_json's limit: 128 levels.
            if depth <= 127 {
                assert!(r.is_ok(), "depth {depth}");
            } else {
                assert_eq!(r.unwrap_err().code, "malformed_json", "depth {depth}");
            }
        }
        // Inside a typed body too.
        let body = format!(
            r#"{{"protocol":1,"device_id":"d","cursor":0,"new_records":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        api_json(body.as_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn csv_import_survives_mutations(ms in proptest::collection::vec(mutation(), 1..6)) {
        csv_import(&apply(&csv_seed(), &ms));
    }

    #[test]
    fn csv_import_survives_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..4_096)) {
        csv_import(&data);
    }

    #[test]
    fn api_json_survives_mutations(
        seed in 0usize..10,
        ms in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seeds = json_seeds();
        api_json(&apply(&seeds[seed % seeds.len()], &ms));
    }

    #[test]
    fn api_json_survives_arbitrary_json(v in arbitrary_json()) {
        api_json(v.to_string().as_bytes());
    }
}

/// JSON values of any shape, a few levels deep.
fn arbitrary_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        hostile_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just(String::from("username")),
                    Just(String::from("records")),
                    Just(String::from("cpf")),
                    Just(String::from("permit_number")),
                    "[a-z_]{1,12}",
                ],
                inner,
                0..8,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Regenerates the checked-in seeds: `cargo test -p taxi-fiscal-server --test fuzz_data --
/// --ignored write_seed_corpus`.
#[test]
#[ignore = "writes fuzz/corpus"]
fn write_seed_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let csv = root.join("csv_import");
    std::fs::create_dir_all(&csv).unwrap();
    std::fs::write(csv.join("seed-sample-export.csv"), csv_seed()).unwrap();
    let semi = String::from_utf8(csv_seed()).unwrap().replace(',', ";");
    std::fs::write(csv.join("seed-semicolons.csv"), semi).unwrap();
    let json = root.join("api_json");
    std::fs::create_dir_all(&json).unwrap();
    for (i, s) in json_seeds().iter().enumerate() {
        std::fs::write(json.join(format!("seed-{i:02}.json")), s).unwrap();
    }
    std::fs::write(
        json.join("seed-deep.json"),
        format!("{}1{}", "[".repeat(200), "]".repeat(200)),
    )
    .unwrap();
}
