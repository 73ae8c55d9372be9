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
