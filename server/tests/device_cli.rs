//! `taxi-fiscal device --db FILE …` as a user runs it: feed, lookups, check, numbers, photos,
//! and refusals (one line on stderr, exit 2, the file untouched).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/examples/registry.json")
}

fn device(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taxi-fiscal"))
        .arg("device")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn ok(db: &Path, args: &[&str]) -> Value {
    let out = device(db, args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fails(db: &Path, args: &[&str]) -> String {
    let out = device(db, args);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail with 2");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("erro: "), "{stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr:?}");
    stderr
}

#[test]
fn feed_lookup_check_numbers_and_photos() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("device.db");
    let f = fixture();
    let f = f.to_str().unwrap();

    assert_eq!(ok(&db, &["status"])["registry"], Value::Null);
    let applied = ok(&db, &["load-snapshot", f]);
    assert_eq!(applied["version"], 7);

    for plate in ["ABC-1234", "abc1234", "ABC1C34"] {
        let v = ok(&db, &["lookup", "--plate", plate]);
        assert_eq!(v["permit"]["number"], "0002", "{plate}");
        assert_eq!(v["holder"]["id"], "P04");
        assert_eq!(v["auxiliaries"][0]["id"], "P05");
    }
    assert_eq!(
        ok(&db, &["lookup", "--permit", "0004"])["unpaid_fines"][0]["id"],
        "FINE-1"
    );
    let person = ok(&db, &["lookup", "--person", "cnh:71049964159"]);
    assert_eq!(person["person"]["id"], "P05");
    assert_eq!(person["permits"][0]["permit"]["number"], "0002");
    assert!(fails(&db, &["lookup", "--plate", "ZZZ9Z99"]).contains("nenhum alvará"));

    // Auxiliary of 0002 driving 0001 (art. 8 §3).
    let v = ok(
        &db,
        &[
            "check",
            "--plate",
            "BRA2E19",
            "--driver",
            "cpf:99940561580",
            "--at",
            "2030-01-01T12:00:00Z",
        ],
    );
    assert_eq!(v["permit_number"], "0001");
    assert_eq!(v["driver_role"], "auxiliary_of_another_permit");
    assert_eq!(v["registry"]["version"], 7);
    assert!(v["registry"]["age_seconds"].as_i64().unwrap() > 86_400);

    // Changes: out of order refused, then a good batch.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        json!({"from_version": 3, "to_version": 4, "changes": []}).to_string(),
    )
    .unwrap();
    assert!(fails(&db, &["apply-changes", bad.to_str().unwrap()]).contains("fora de ordem"));
    let good = dir.path().join("good.json");
    let batch = json!({"from_version": 7, "to_version": 8, "generated_at": null,
                       "changes": [{"op": "delete_fine", "id": "FINE-1"}]});
    std::fs::write(&good, batch.to_string()).unwrap();
    assert_eq!(
        ok(&db, &["apply-changes", good.to_str().unwrap()])["version"],
        8
    );
    assert_eq!(
        ok(&db, &["lookup", "--permit", "0004"])["unpaid_fines"],
        json!([])
    );

    assert_eq!(
        ok(&db, &["add-numbers", "--start", "1", "--end", "10"])["numbers_left"],
        10
    );
    assert!(fails(&db, &["add-numbers", "--start", "10", "--end", "20"]).contains("sobrepõe"));

    let photo = dir.path().join("p.jpg");
    std::fs::write(&photo, b"abc").unwrap();
    let h = ok(&db, &["attach-photo", photo.to_str().unwrap()]);
    assert_eq!(
        h["hash"],
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(ok(&db, &["verify-photos"])[0]["status"], "intact");

    let st = ok(&db, &["status"]);
    assert_eq!(st["registry"]["version"], 8);
    assert_eq!(st["counts"]["photos"], 1);
    assert_eq!(st["counts"]["fines"], 0);
}

#[test]
fn corrupt_or_foreign_files_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.txt");
    std::fs::write(&db, b"lista de compras\n".repeat(50)).unwrap();
    let before = std::fs::read(&db).unwrap();
    assert!(fails(&db, &["status"]).contains("não foi alterado"));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn records_infraction_with_verdict_list_show_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("officer.db");
    let f = fixture();
    ok(&db, &["load-snapshot", f.to_str().unwrap()]);
    assert!(
        fails(
            &db,
            &[
                "record",
                "infraction",
                "--plate",
                "GHI7J89",
                "--driver",
                "78000751925"
            ]
        )
        .contains("device init")
    );
    let me = ok(
        &db,
        &[
            "init",
            "--device-id",
            "0190a0a0-0000-7000-8000-0000000000a1",
            "--user",
            "U-GM-17",
            "--role",
            "officer",
        ],
    );
    assert_eq!(me["role"], "guarda_municipal");
    assert_eq!(ok(&db, &["status"])["identity"]["user_id"], "U-GM-17");
    ok(&db, &["add-numbers", "--start", "100", "--end", "199"]);

    let photo = dir.path().join("cena.jpg");
    std::fs::write(&photo, b"jpeg da cena").unwrap();
    // Auxiliary P08 (CNH expired) driving GHI7J89, whose permit 0004 was not renewed.
    let auto = ok(
        &db,
        &[
            "record",
            "infraction",
            "--plate",
            "ghi-7j89",
            "--driver",
            "cpf:78000751925",
            "--at",
            "2026-11-30T15:00:00-03:00",
            "--lat",
            "-22.7395",
            "--lon",
            "-47.3317",
            "--accuracy",
            "8.5",
            "--witness",
            "Maria Souza:Vi o condutor chegar ao ponto",
            "--photo",
            photo.to_str().unwrap(),
            "--confirm-vehicle",
            "--issue",
        ],
    );
    let id = auto["id"].as_str().unwrap().to_owned();
    assert_eq!(auto["number"], 100);
    assert_eq!(auto["status"], "issued");
    let v = &auto["view"];
    assert_eq!(v["number"], "100");
    assert_eq!(
        v["vehicle"],
        json!({"plate_raw": "ghi-7j89", "plate": "GHI7J89"})
    );
    assert_eq!(
        v["driver"]["person"],
        json!({"source": "registry", "id": "P08"})
    );
    assert_eq!(v["holder_id"], "P07");
    assert_eq!(v["position"]["accuracy_m"], 8.5);
    assert_eq!(v["sealed"], true);
    // The verdict of the check is sealed in the record, with the registry version it used.
    let verdict: Value = serde_json::from_str(v["verdict"].as_str().unwrap()).unwrap();
    assert_eq!(verdict["overall"], "irregular");
    assert_eq!(verdict["registry"]["version"], 7);
    let rules: Vec<&str> = v["legal_basis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rule_id"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"R10") && rules.contains(&"R11"),
        "{rules:?}"
    );
    // The witness's name stays on the device: the record names an id.
    assert_eq!(v["witnesses"][0]["person"]["source"], "observed");
    assert!(!auto.to_string().contains("Maria Souza"));

    // Printed offline, in every format, to a file.
    for (format, magic) in [
        ("escpos58", &b"\x1b@"[..]),
        ("escpos80", &b"\x1b@"[..]),
        ("pdf", &b"%PDF"[..]),
        ("pdf-receipt", &b"%PDF"[..]),
    ] {
        let file = dir.path().join(format!("auto.{format}"));
        let printed = ok(
            &db,
            &[
                "record",
                "print",
                &id,
                "--format",
                format,
                "--out",
                file.to_str().unwrap(),
            ],
        );
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(printed["bytes"], bytes.len(), "{format}");
        assert_eq!(printed["format"], format);
        assert!(bytes.starts_with(magic), "{format}");
        if !format.starts_with("pdf") {
            // Plate and copy label are ASCII, the same bytes in the printer's code page.
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains("GHI7J89"), "{format}");
            assert!(text.contains("VIA DO AUTUADO"), "{format}");
            assert!(!text.contains("78000751925"), "{format}: a full CPF");
        }
    }

    // Sealed: the facts cannot change; late evidence can be added.
    assert!(fails(&db, &["record", "set-facts", &id, "outra versão"]).contains("lacrado"));
    let more = dir.path().join("depois.jpg");
    std::fs::write(&more, b"outra foto").unwrap();
    let attached = ok(
        &db,
        &["attach-photo", more.to_str().unwrap(), "--record", &id],
    );
    assert_eq!(
        attached["record"]["view"]["photos"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let w = ok(&db, &["record", "add-witness", &id, "José:Também vi"]);
    assert_eq!(w["view"]["witnesses"].as_array().unwrap().len(), 2);

    // A driver the registry does not know, by permit number; left as a draft.
    let draft = ok(
        &db,
        &[
            "record",
            "infraction",
            "--permit",
            "0001",
            "--driver",
            "cpf:11144477735",
            "--driver-name",
            "Fulano de Tal",
            "--facts",
            "Terceiro dirigindo o táxi.",
        ],
    );
    assert_eq!(draft["status"], "draft");
    assert_eq!(draft["number"], 101);
    assert_eq!(draft["view"]["vehicle"]["plate"], "BRA2E19");
    assert_eq!(draft["view"]["driver"]["role"], "unauthorised");
    let draft_id = draft["id"].as_str().unwrap();
    ok(&db, &["record", "set-facts", draft_id, "Fatos revistos."]);
    // The plate came from the permit's registry entry: not the auto's until the officer
    // confirms it; a draft does not print either.
    assert_eq!(draft["view"]["vehicle_confirmation"], Value::Null);
    assert!(
        fails(&db, &["record", "issue", draft_id])
            .contains("confirme que o veículo de placa BRA2E19")
    );
    let out = dir.path().join("rascunho.bin");
    let out_s = out.to_str().unwrap();
    assert!(
        fails(
            &db,
            &[
                "record", "print", draft_id, "--format", "pdf", "--out", out_s
            ]
        )
        .contains("rascunho")
    );
    assert!(!out.exists());
    let confirmed = ok(
        &db,
        &[
            "record",
            "confirm-vehicle",
            draft_id,
            "--at",
            "2026-11-30T15:05:00-03:00",
        ],
    );
    assert_eq!(
        confirmed["view"]["vehicle_confirmation"],
        json!({
            "user_id": "U-GM-17",
            "device_id": "0190a0a0-0000-7000-8000-0000000000a1",
            "at": "2026-11-30T18:05:00Z",
            "plate": "BRA2E19"
        })
    );
    let issued = ok(&db, &["record", "issue", draft_id]);
    assert_eq!(
        issued["view"]["signature"]["reason"],
        "assinatura não colhida"
    );

    let list = ok(&db, &["list"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    let row = list.iter().find(|r| r["id"] == id.as_str()).unwrap();
    assert_eq!(row["number"], 100);
    assert_eq!(row["status"], "issued");
    assert_eq!(row["summary"]["plate"], "GHI7J89");
    assert!(list.iter().all(|r| r["status"] == "issued"));

    let shown = ok(&db, &["show", &id]);
    assert_eq!(shown["record"]["number"], 100);
    assert_eq!(shown["photos_intact"], true);
    assert_eq!(shown["photos"].as_array().unwrap().len(), 2);
    assert_eq!(shown["view"]["events"][0]["event"]["kind"], "issued");
    let people = shown["observed_people"].as_object().unwrap();
    assert!(people.values().any(|p| p["name"] == "Maria Souza"));
    let shown = ok(&db, &["show", draft_id]);
    let people = shown["observed_people"].as_object().unwrap();
    assert!(people.values().any(|p| p["cpf"] == "11144477735"));
    assert!(fails(&db, &["show", "nenhum"]).contains("não encontrado"));

    // An officer writes no transgression reports.
    assert!(
        fails(
            &db,
            &[
                "record",
                "transgression",
                "--coordinator-stand",
                "S02",
                "--plate",
                "ABC1234",
                "--driver",
                "99940561580",
                "--gravity",
                "light",
                "--facts",
                "x"
            ]
        )
        .contains("não pode")
    );
}

#[test]
fn transgression_reports_only_for_the_own_stand() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coord.db");
    let f = fixture();
    ok(&db, &["load-snapshot", f.to_str().unwrap()]);
    // A coordinator needs a stand.
    assert!(fails(&db, &["init", "--user", "U-COORD", "--role", "coordinator"]).contains("ponto"));
    ok(
        &db,
        &[
            "init",
            "--user",
            "U-COORD",
            "--role",
            "coordinator",
            "--stand",
            "S01",
        ],
    );
    let report = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "record",
            "transgression",
            "--gravity",
            "light",
            "--facts",
            "Discussão no ponto.",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let run = |extra: &[&str], good: bool| {
        let args = report(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if good {
            ok(&db, &args)
        } else {
            Value::String(fails(&db, &args))
        }
    };

    // Permit 0002 is of stand S02: outside the coordinator's stand.
    let e = run(
        &["--plate", "ABC-1234", "--driver", "cpf:99940561580"],
        false,
    );
    assert!(e.as_str().unwrap().contains("art. 17"), "{e}");
    assert!(e.as_str().unwrap().contains("S02"), "{e}");
    // Claiming S02 instead of the device's S01.
    let e = run(
        &[
            "--coordinator-stand",
            "S02",
            "--plate",
            "ABC-1234",
            "--driver",
            "cpf:99940561580",
        ],
        false,
    );
    assert!(
        e.as_str().unwrap().contains("coordenador do ponto S01"),
        "{e}"
    );

    // Maria (P02), auxiliary of 0001 at S01: settled with a verbal warning. No numbers yet.
    let ok1 = run(
        &[
            "--plate",
            "BRA2E19",
            "--driver",
            "cpf:36084852955",
            "--settle",
            "verbal",
        ],
        true,
    );
    assert_eq!(ok1["status"], "settled_by_coordinator");
    assert_eq!(ok1["waiting_for_number"], true);
    assert_eq!(ok1["view"]["stand_id"], "S01");
    assert_eq!(ok1["view"]["gravity"], "light");

    // Serious without a witness cannot be forwarded; with one it goes to the Unidade.
    let args = [
        "record",
        "transgression",
        "--plate",
        "BRA2E19",
        "--driver",
        "cpf:51131154444",
        "--gravity",
        "serious",
        "--facts",
        "Agressão verbal a passageiro.",
        "--forward",
    ];
    assert!(fails(&db, &args).contains("testemunha"));
    let mut with_witness = args.to_vec();
    with_witness.extend(["--witness", "Passageira:Fui ofendida"]);
    let fwd = ok(&db, &with_witness);
    assert_eq!(fwd["status"], "forwarded_to_office");

    // A block arrives: both waiting reports get numbers.
    let added = ok(&db, &["add-numbers", "--start", "1", "--end", "10"]);
    assert_eq!(added["numbered"].as_array().unwrap().len(), 2);
    let list = ok(&db, &["list"]);
    assert_eq!(list[0]["number"], 1);
    assert_eq!(list[1]["number"], 2);
    assert_eq!(list[1]["waiting_for_number"], false);
    let shown = ok(&db, &["show", list[0]["id"].as_str().unwrap()]);
    assert_eq!(shown["view"]["number"], "1");
}

#[test]
fn a_repealed_or_disabled_rule_is_no_legal_basis_of_an_auto() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("officer.db");
    let f = fixture();
    ok(&db, &["load-snapshot", f.to_str().unwrap()]);
    ok(
        &db,
        &[
            "init",
            "--device-id",
            "0190a0a0-0000-7000-8000-0000000000a2",
            "--user",
            "U-GM-18",
            "--role",
            "officer",
        ],
    );
    ok(&db, &["add-numbers", "--start", "100", "--end", "199"]);
    let auto = |rule: &str, extra: &[&str]| {
        let mut args = vec![
            "record",
            "infraction",
            "--permit",
            "0001",
            "--driver",
            "cpf:11144477735",
            "--facts",
            "Terceiro dirigindo o táxi.",
            "--rule",
        ];
        args.push(rule);
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(&db, &refs)
    };
    // R15 and R39 were repealed; R43 is a counter refusal, not an infraction.
    for (rule, word) in [
        ("R15", "revogada"),
        ("r39", "revogada"),
        ("R43", "não descreve"),
    ] {
        let e = run(auto(rule, &[]));
        assert!(e.contains(word), "{rule}: {e}");
    }
    // Disabled by the law parameters the replica received with the registry (the office's
    // configuration): a device loaded with them refuses R24 as a basis.
    let strict_db = dir.path().join("strict.db");
    let mut reg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    reg["parameters"] = serde_json::json!({"rules": {"disabled_rules": ["R24"]}});
    let strict = dir.path().join("registry-r24-off.json");
    std::fs::write(&strict, serde_json::to_string(&reg).unwrap()).unwrap();
    ok(&strict_db, &["load-snapshot", strict.to_str().unwrap()]);
    ok(
        &strict_db,
        &[
            "init",
            "--device-id",
            "0190a0a0-0000-7000-8000-0000000000a3",
            "--user",
            "U-GM-19",
            "--role",
            "officer",
        ],
    );
    let args = auto("R24", &[]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let e = fails(&strict_db, &refs);
    assert!(e.contains("desativada"), "{e}");
    assert!(ok(&strict_db, &["list"]).as_array().unwrap().is_empty());
    // Nothing was saved; the same auto under R24 with the default parameters is.
    assert!(ok(&db, &["list"]).as_array().unwrap().is_empty());
    let a = ok(
        &db,
        &auto("R24", &[])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(
        a["view"]["legal_basis"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["rule_id"] == "R24")
    );
}
