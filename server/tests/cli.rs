//! The `taxi-fiscal` binary as a user runs it: the commands of the README on the example fixture,
//! and bad input, which must give one line on stderr and a non-zero exit, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_taxi-fiscal"))
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/examples/registry.json")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn ok_json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs a command expected to fail; returns its stderr after checking the failure shape.
fn err_line(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail with 2");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("erro: "), "{stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr:?}");
    assert!(out.stdout.is_empty());
    stderr
}

fn check(plate: &str, driver: &str, at: &str) -> Value {
    let f = fixture();
    ok_json(&[
        "check",
        "--registry",
        f.to_str().unwrap(),
        "--plate",
        plate,
        "--driver",
        driver,
        "--at",
        at,
    ])
}

fn rule_ids(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule_id"].as_str().unwrap().to_owned())
        .collect()
}

const AT: &str = "2026-11-30T15:00:00-03:00";

#[test]
fn holder_of_the_taxi_is_regular() {
    let v = check("BRA-2E19", "45074952883", AT);
    assert_eq!(v["overall"], "regular", "{v:#}");
    assert_eq!(v["permit_number"], "0001");
    assert_eq!(v["driver_role"], "holder");
    assert_eq!(v["registry"]["version"], 7);
    assert_eq!(v["checked_at_local"], "2026-11-30T15:00:00-03:00");
}

#[test]
fn registered_auxiliary_of_that_taxi_is_regular_by_old_plate_spelling() {
    let v = check("abc-1234", "cpf:999.405.615-80", AT);
    assert_eq!(v["overall"], "regular", "{v:#}");
    assert_eq!(v["driver_role"], "auxiliary");
}

#[test]
fn auxiliary_of_another_taxi_is_art_8_par_3() {
    let v = check("BRA2E19", "99940561580", AT);
    assert_eq!(v["overall"], "irregular");
    assert!(rule_ids(&v).contains(&"R14".to_owned()), "{v:#}");
    let f = &v["findings"][0];
    assert!(
        f["citation"].as_str().unwrap().contains("art. 8, § 3"),
        "{f}"
    );
    assert_eq!(f["consequence"], "revoke_auxiliary_licence");
}

#[test]
fn stranger_at_the_wheel_is_art_8_par_4_unverified_wording() {
    let v = check("BRA2E19", "111.444.777-35", AT);
    assert_eq!(v["overall"], "irregular");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "R12")
        .unwrap();
    assert_eq!(f["citation"], "Lei 4.019/2004, art. 8, § 4");
    assert_eq!(f["wording_verified"], false);
    assert_eq!(f["consequence"], "revoke_permit");
}

#[test]
fn suspended_permit_is_irregular_until_its_last_day() {
    let v = check("DEF4G56", "59765613148", "2026-12-04T23:59:00-03:00");
    assert_eq!(v["overall"], "irregular", "{v:#}");
    assert!(rule_ids(&v).contains(&"R32".to_owned()));
    let v = check("DEF4G56", "59765613148", "2026-12-05T00:00:00-03:00");
    assert_eq!(v["overall"], "regular", "{v:#}");
}

#[test]
fn unknown_plate_is_clandestine() {
    let v = check("ZZZ9Z99", "111.444.777-35", AT);
    assert_eq!(v["overall"], "irregular");
    assert_eq!(rule_ids(&v)[0], "R01");
}

#[test]
fn deadline_examples_of_the_issue() {
    let v = ok_json(&["deadline", "--notified", "2026-11-19"]);
    assert_eq!(v["deadline"], "2026-11-30");
    let v = ok_json(&["deadline", "--notified", "2026-11-10"]);
    assert_eq!(v["deadline"], "2026-11-23");
}

#[test]
fn amount_examples_of_the_issue() {
    let v = ok_json(&["amount", "--base", "240.00", "--year", "2026"]);
    assert_eq!(v["amount"], "797.02");
    let v = ok_json(&["amount", "--base", "5,00", "--year", "2026"]);
    assert_eq!(v["amount"], "16.60");
}

#[test]
fn rules_lists_the_whole_catalogue() {
    let v = ok_json(&["rules"]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 48);
    let r21 = rows.iter().find(|r| r["id"] == "R21").unwrap();
    assert_eq!(r21["enabled"], false);
}

/// `rules --markdown` prints the checked-in rule catalogue document, byte for byte.
#[test]
fn rules_markdown_is_the_checked_in_catalogue_document() {
    let out = run(&["rules", "--markdown"]);
    assert!(out.status.success(), "{out:?}");
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md"),
    )
    .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), doc);
}

#[test]
fn bad_input_is_one_line_and_nonzero() {
    let f = fixture();
    let f = f.to_str().unwrap();
    let e = err_line(&[
        "check",
        "--registry",
        f,
        "--plate",
        "XYZ",
        "--driver",
        "45074952883",
    ]);
    assert!(e.contains("placa inválida"), "{e}");
    let e = err_line(&[
        "check",
        "--registry",
        f,
        "--plate",
        "BRA2E19",
        "--driver",
        "cpf:12345678901",
    ]);
    assert!(e.contains("CPF inválido"), "{e}");
    let e = err_line(&[
        "check",
        "--registry",
        f,
        "--plate",
        "BRA2E19",
        "--driver",
        "45074952883",
        "--at",
        "ontem",
    ]);
    assert!(e.contains("RFC 3339"), "{e}");
    let e = err_line(&["deadline", "--notified", "19/11/2026"]);
    assert!(e.contains("AAAA-MM-DD"), "{e}");
    let e = err_line(&["amount", "--base", "dez", "--year", "2026"]);
    assert!(e.contains("--base"), "{e}");
    let e = err_line(&["amount", "--base", "240", "--year", "2030"]);
    assert!(e.contains("IPCA"), "{e}");
}

#[test]
fn malformed_or_inconsistent_fixture_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"version\": 1, \"people\": [").unwrap();
    let e = err_line(&[
        "check",
        "--registry",
        bad.to_str().unwrap(),
        "--plate",
        "BRA2E19",
        "--driver",
        "45074952883",
    ]);
    assert!(e.contains("cadastro inválido"), "{e}");

    // A permit pointing at a vehicle that does not exist.
    let mut reg: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    reg["permits"][0]["vehicle_id"] = Value::from("V99");
    std::fs::write(&bad, serde_json::to_string(&reg).unwrap()).unwrap();
    let e = err_line(&[
        "check",
        "--registry",
        bad.to_str().unwrap(),
        "--plate",
        "BRA2E19",
        "--driver",
        "45074952883",
    ]);
    assert!(e.contains("V99"), "{e}");

    let missing = dir.path().join("nope.json");
    let e = err_line(&[
        "check",
        "--registry",
        missing.to_str().unwrap(),
        "--plate",
        "BRA2E19",
        "--driver",
        "45074952883",
    ]);
    assert!(e.contains("não foi possível ler"), "{e}");
}

/// The example fixture changed by `edit`, written to a temporary file, and a `check` on it.
fn check_edited(edit: impl FnOnce(&mut Value), args: &[&str]) -> Value {
    let mut reg: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    edit(&mut reg);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.json");
    std::fs::write(&path, serde_json::to_string(&reg).unwrap()).unwrap();
    let mut all = vec!["check", "--registry", path.to_str().unwrap()];
    all.extend_from_slice(args);
    ok_json(&all)
}

fn finding<'v>(v: &'v Value, rule: &str) -> &'v Value {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == rule)
        .unwrap_or_else(|| panic!("{rule} missing in {v:#}"))
}

fn person_mut<'v>(reg: &'v mut Value, id: &str) -> &'v mut Value {
    reg["people"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["id"] == id)
        .unwrap()
}

#[test]
fn a_first_licence_of_29_february_is_more_than_two_years_old_from_2_march() {
    // Código Civil art. 132 § 3: the two years expire on 1 Mar 2026 (no 29 Feb that year);
    // art. 2 II asks for *more than* two years.
    let first_licence = |reg: &mut Value| {
        person_mut(reg, "P05")["licence"]["first_licence_date"] = Value::from("2024-02-29");
    };
    for (at, fires) in [
        ("2026-02-28T12:00:00-03:00", true),
        ("2026-03-01T23:59:00-03:00", true),
        ("2026-03-02T00:00:00-03:00", false),
    ] {
        let v = check_edited(
            first_licence,
            &["--plate", "ABC-1234", "--driver", "99940561580", "--at", at],
        );
        assert_eq!(
            rule_ids(&v).contains(&"R08".to_owned()),
            fires,
            "{at}: {v:#}"
        );
        if fires {
            let m = finding(&v, "R08")["message"].as_str().unwrap();
            assert!(m.contains("01/03/2026") && m.contains("02/03/2026"), "{m}");
        }
    }
}

#[test]
fn an_idle_taxi_away_from_any_stand_in_mandatory_hours_is_art_16() {
    let f = fixture();
    let v = ok_json(&[
        "check",
        "--registry",
        f.to_str().unwrap(),
        "--plate",
        "ABC-1234",
        "--driver",
        "86840102130",
        "--at",
        AT,
        "--idle",
    ]);
    assert_eq!(v["overall"], "irregular", "{v:#}");
    assert_eq!(rule_ids(&v), vec!["R24"]);
    let r24 = finding(&v, "R24");
    assert_eq!(r24["citation"], "Lei 4.019/2004, art. 16, I; art. 31, VI");
    assert!(
        r24["message"]
            .as_str()
            .unwrap()
            .contains("fora de qualquer ponto"),
        "{r24}"
    );
}

#[test]
fn an_unknown_stand_is_a_warning_that_says_so() {
    let f = fixture();
    let v = ok_json(&[
        "check",
        "--registry",
        f.to_str().unwrap(),
        "--plate",
        "ABC-1234",
        "--driver",
        "86840102130",
        "--at",
        AT,
        "--at-stand",
        "S99",
        "--idle",
    ]);
    assert_eq!(v["overall"], "warning", "{v:#}");
    assert_eq!(rule_ids(&v), vec!["R24"]);
    let r24 = finding(&v, "R24");
    assert_eq!(r24["severity"], "warning");
    assert_eq!(r24["consequence"], "office_review");
    assert!(
        r24["message"].as_str().unwrap().contains("não consta"),
        "{r24}"
    );
}

#[test]
fn a_deceased_holders_cpf_at_the_wheel_is_irregular() {
    let v = check_edited(
        |reg| {
            let permits = reg["permits"].as_array_mut().unwrap();
            let p = permits.iter_mut().find(|p| p["number"] == "0002").unwrap();
            p["state"] = serde_json::json!({"state": "in_succession", "since": "2026-10-01"});
        },
        &["--plate", "ABC-1234", "--driver", "86840102130", "--at", AT],
    );
    assert_eq!(v["overall"], "irregular", "{v:#}");
    assert_eq!(rule_ids(&v), vec!["R12", "R05"]);
    assert_eq!(v["driver_role"], "unauthorised");
    let r12 = finding(&v, "R12");
    assert_eq!(r12["severity"], "irregular");
    assert!(
        r12["message"].as_str().unwrap().contains("falecido"),
        "{r12}"
    );
}

/// `amount` for a year whose previous index is not entered says which index is missing; with a
/// registry whose series the office extended it computes, with no rebuild.
#[test]
fn amount_names_the_missing_index_until_the_registry_has_it() {
    let e = err_line(&["amount", "--base", "240.00", "--year", "2027"]);
    assert!(e.contains("IPCA de 2026") && e.contains("2027"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut reg = sync_core::domain::Registry::from_json(&text).unwrap();
    let mut p = sync_core::rules::LawParameters::default();
    let entry = sync_core::rules::money::IpcaYear {
        year: 2026,
        percent: rust_decimal::Decimal::new(450, 2),
    };
    p.add_ipca(entry, 2027).unwrap();
    reg.parameters = Some(p);
    let file = dir.path().join("registry.json");
    std::fs::write(&file, serde_json::to_string(&reg).unwrap()).unwrap();
    let f = file.to_str().unwrap();
    let c = ok_json(&[
        "amount",
        "--base",
        "240.00",
        "--year",
        "2027",
        "--registry",
        f,
    ]);
    assert_eq!(c["amount"], "832.88");
    let e = err_line(&[
        "amount",
        "--base",
        "240.00",
        "--year",
        "2028",
        "--registry",
        f,
    ]);
    assert!(e.contains("IPCA de 2027"), "{e}");
    // A server data directory that does not exist is said, not an empty series.
    let missing = dir.path().join("nada");
    let e = err_line(&[
        "amount",
        "--base",
        "240.00",
        "--year",
        "2026",
        "--data",
        missing.to_str().unwrap(),
    ]);
    assert!(e.contains("não há banco de dados"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// lottery verify
// ---------------------------------------------------------------------------------------------

/// The published list of the worked example in docs/selection.md, byte for byte.
const LOTTERY_LIST: &str = "Edital 001/2026: inscritos habilitados ao sorteio (art. 3º, III)\n\
                            001;Irene Sá\n\
                            003;Otávio Lemos\n\
                            004;Luís Estêvão Magalhães\n\
                            006;Cláudio Ribeiro\n\
                            007;Maria da Conceição Gonçalves\n";
const LOTTERY_SEED: &str = "12345 67890 11111 22222 33333";
/// `sha256sum` of the list, computed with coreutils (docs/selection.md).
const LOTTERY_DIGEST: &str = "66c95b8a6dc8542b74f62003277990804829939d96a5a41954e6866f53946cf1";
/// The order and first key computed with `printf … | sha256sum` and `sort` (docs/selection.md).
const LOTTERY_ORDER: [&str; 5] = ["004", "006", "007", "001", "003"];
const LOTTERY_FIRST_KEY: &str = "86db52e1f4e745e14f8ae1920e83a4b6f4cf1b33e032c54a3fd3072a2c17796a";

/// Writes `name` with `content` into `dir`, returning its path as a string.
fn write_in(dir: &tempfile::TempDir, name: &str, content: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, content).unwrap();
    p.to_str().unwrap().to_owned()
}

fn inscriptions_of(v: &Value) -> Vec<String> {
    v["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["inscription"].as_str().unwrap().to_owned())
        .collect()
}

/// A `lottery verify` that must fail at the comparison: exit 2, the JSON of the recomputed
/// draw on stdout, one line on stderr; returns both.
fn lottery_mismatch(args: &[&str]) -> (Value, String) {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail with 2");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("erro: "), "{stderr:?}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

#[test]
fn the_example_list_is_what_the_kernel_publishes() {
    use sync_core::rules::selection::{self, Group, ListEntry};
    let entry = |inscription: &str, name: &str| ListEntry {
        inscription: inscription.to_owned(),
        name: name.to_owned(),
        group: Some(Group::NewRegistrant),
        since: None,
        birth_date: chrono::NaiveDate::from_ymd_opt(1990, 1, 1).unwrap(),
        evidence: String::new(),
        person_id: None,
        findings: Vec::new(),
    };
    // Out of order on purpose: the list is in inscription order whatever the entries' order.
    let entries = [
        entry("004", "Luís Estêvão Magalhães"),
        entry("001", "Irene Sá"),
        entry("007", "Maria da Conceição Gonçalves"),
        entry("003", "Otávio Lemos"),
        entry("006", "Cláudio Ribeiro"),
    ];
    assert_eq!(selection::lottery_text("001/2026", &entries), LOTTERY_LIST);
    assert_eq!(selection::sha256_hex(LOTTERY_LIST), LOTTERY_DIGEST);
}

#[test]
fn lottery_verify_reproduces_the_published_draw() {
    let dir = tempfile::tempdir().unwrap();
    let list = write_in(&dir, "lista.txt", LOTTERY_LIST.as_bytes());
    // The published result as an office would type it: a trailing blank line, CRLF endings.
    let result = write_in(
        &dir,
        "resultado.txt",
        b"004\r\n006\r\n007\r\n001\r\n003\r\n\r\n",
    );
    let v = ok_json(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        &result,
    ]);
    assert_eq!(v["digest"], LOTTERY_DIGEST, "{v:#}");
    assert_eq!(v["bytes"], LOTTERY_LIST.len());
    assert_eq!(v["inscriptions"], 5);
    assert_eq!(inscriptions_of(&v), LOTTERY_ORDER);
    assert_eq!(v["order"][0]["position"], 1);
    assert_eq!(v["order"][0]["name"], "Luís Estêvão Magalhães");
    assert_eq!(v["order"][0]["key"], LOTTERY_FIRST_KEY);
    assert_eq!(v["result"]["reproduced"], true);
    assert!(v["result"]["first_difference"].is_null());
    let msg = v["message"].as_str().unwrap();
    assert!(msg.starts_with("Sorteio reproduzido"), "{msg}");
    assert!(v["warnings"].as_array().unwrap().is_empty());

    // The same order as the kernel's own draw.
    let inscriptions = sync_core::rules::selection::lottery_inscriptions(LOTTERY_LIST).unwrap();
    let kernel: Vec<String> =
        sync_core::rules::selection::draw_order(LOTTERY_DIGEST, LOTTERY_SEED, &inscriptions)
            .into_iter()
            .map(|d| d.inscription)
            .collect();
    assert_eq!(inscriptions_of(&v), kernel);
}

#[test]
fn lottery_verify_names_the_first_position_of_a_tampered_result() {
    let dir = tempfile::tempdir().unwrap();
    let list = write_in(&dir, "lista.txt", LOTTERY_LIST.as_bytes());
    // Positions 2 and 3 swapped.
    let result = write_in(&dir, "resultado.txt", b"004\n007\n006\n001\n003\n");
    let (v, e) = lottery_mismatch(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        &result,
    ]);
    assert!(
        e.contains("NÃO confere")
            && e.contains("na posição 2 o resultado traz a inscrição 007")
            && e.contains("o sorteio refeito dá a inscrição 006"),
        "{e}"
    );
    assert_eq!(v["result"]["reproduced"], false);
    assert_eq!(v["result"]["first_difference"]["position"], 2);
    assert_eq!(v["result"]["first_difference"]["published"], "007");
    assert_eq!(v["result"]["first_difference"]["recomputed"], "006");

    // A result that stops short, and one with an inscription too many.
    let short = write_in(&dir, "curto.txt", b"004\n006\n007\n001\n");
    let (_, e) = lottery_mismatch(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        &short,
    ]);
    assert!(
        e.contains("termina antes da posição 5") && e.contains("003"),
        "{e}"
    );
    let long = write_in(&dir, "longo.txt", b"004\n006\n007\n001\n003\n002\n");
    let (_, e) = lottery_mismatch(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        &long,
    ]);
    assert!(
        e.contains("posição 6 a inscrição 002") && e.contains("só 5"),
        "{e}"
    );
}

#[test]
fn a_tampered_list_has_another_digest_and_so_another_order() {
    let dir = tempfile::tempdir().unwrap();
    // One accent dropped from one name: the inscriptions are the same, the bytes are not.
    let tampered = LOTTERY_LIST.replace("Irene Sá", "Irene Sa");
    let list = write_in(&dir, "lista.txt", tampered.as_bytes());
    let result = write_in(&dir, "resultado.txt", b"004\n006\n007\n001\n003\n");
    let (v, e) = lottery_mismatch(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        &result,
    ]);
    assert_ne!(v["digest"], LOTTERY_DIGEST);
    assert_eq!(v["inscriptions"], 5);
    assert_ne!(inscriptions_of(&v), LOTTERY_ORDER);
    assert!(
        e.contains("na posição 1 o resultado traz a inscrição 004"),
        "{e}"
    );

    // The same list saved with Windows line endings: read, but warned about, and not the
    // published digest.
    let crlf = write_in(
        &dir,
        "crlf.txt",
        LOTTERY_LIST.replace('\n', "\r\n").as_bytes(),
    );
    let v = ok_json(&["lottery", "verify", "--list", &crlf, "--seed", LOTTERY_SEED]);
    assert_ne!(v["digest"], LOTTERY_DIGEST);
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings.len() == 1 && warnings[0].as_str().unwrap().contains("CRLF"),
        "{v:#}"
    );
}

#[test]
fn an_unreadable_or_foreign_list_is_one_line_and_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nada.txt");
    let e = err_line(&[
        "lottery",
        "verify",
        "--list",
        missing.to_str().unwrap(),
        "--seed",
        LOTTERY_SEED,
    ]);
    assert!(e.contains("não foi possível abrir a lista"), "{e}");

    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "sem-cabecalho.txt",
            b"001;Irene\n".to_vec(),
            "não está no formato publicado",
        ),
        (
            "binario.bin",
            vec![0xff, 0xfe, 0x00, 0x41],
            "não é texto UTF-8",
        ),
        (
            "bom.txt",
            format!("\u{feff}{LOTTERY_LIST}").into_bytes(),
            "marca BOM",
        ),
        (
            "grande.txt",
            vec![b'a'; 4 * 1024 * 1024 + 1],
            "tem mais de 4194304 bytes",
        ),
    ];
    for (name, bytes, says) in cases {
        let list = write_in(&dir, name, &bytes);
        let e = err_line(&["lottery", "verify", "--list", &list, "--seed", LOTTERY_SEED]);
        assert!(e.contains(says), "{name}: {e}");
    }
    // An unreadable result file is said too, before any comparison.
    let list = write_in(&dir, "lista.txt", LOTTERY_LIST.as_bytes());
    let e = err_line(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        LOTTERY_SEED,
        "--result",
        missing.to_str().unwrap(),
    ]);
    assert!(e.contains("não foi possível abrir o resultado"), "{e}");
    // And a seed of spaces only.
    let e = err_line(&["lottery", "verify", "--list", &list, "--seed", "   "]);
    assert!(e.contains("informe a semente"), "{e}");
}

#[test]
fn a_seed_typed_with_extra_spaces_gives_the_same_order() {
    let dir = tempfile::tempdir().unwrap();
    let list = write_in(&dir, "lista.txt", LOTTERY_LIST.as_bytes());
    let plain = ok_json(&["lottery", "verify", "--list", &list, "--seed", LOTTERY_SEED]);
    let spaced = ok_json(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        "  12345   67890 11111\t22222  33333 ",
    ]);
    assert_eq!(spaced["seed"], LOTTERY_SEED);
    assert_eq!(spaced["order"], plain["order"]);
    assert_eq!(inscriptions_of(&spaced), LOTTERY_ORDER);
    // A different seed is a different draw.
    let other = ok_json(&[
        "lottery",
        "verify",
        "--list",
        &list,
        "--seed",
        "12345 67890",
    ]);
    assert_ne!(other["order"], plain["order"]);
}
