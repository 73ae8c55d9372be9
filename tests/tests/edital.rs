//! The story of an edital de chamamento (Lei 4.019/2004, arts. 2–6 and 14; ADR 0030), told
//! through the office's API on the in-process server whose clock the test moves
//! ([`e2e::InProcServer`]): from a registry exactly at the art. 14 cap, through places freed by
//! revocation, the edital, twelve candidates in the three groups of art. 3, the list, a draw
//! that the real binary (`taxi-fiscal lottery verify`) and `sha256sum` reproduce, the result,
//! two appeals, to the grants — with the cap holding at every step and the audit chain
//! verifying at the end.
//!
//! The lottery and audit checks run the real `taxi-fiscal` binary ([`e2e::taxi_fiscal_bin`]):
//! build it first (`cargo build -p taxi-fiscal-server --bin taxi-fiscal`) or set
//! `TAXI_FISCAL_BIN`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use chrono::NaiveDate;
use e2e::api::OFFICE;
use e2e::{Api, InProcServer, taxi_fiscal_bin};
use serde_json::{Value, json};
use sync_core::domain::{
    CnhNumber, Cpf, DriverLicence, LicenceKind, PermitState, Person, Plate, Registry, Renavam,
    Taximeter, Vehicle, VehicleCategory,
};
use sync_core::rules::office;
use sync_core::rules::selection::{
    Certificate, Edital, Group, NewAppeal, NewCandidate, NewEdital, Ranked, Vacancy,
};

/// The edital of the story.
const ID: &str = "2027-01";
/// The five prizes of the Loteria Federal, as the office types them (extra spaces included:
/// the seed is normalised).
const SEED: &str = " 48213 07654  91027 33580 66142 ";
/// Stands with places freed for the edital, two each.
const STAND_A: &str = "S02";
const STAND_B: &str = "S04";

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// The rules a refusal cites (`error.details.findings[].rule_id`).
fn cited(body: &Value) -> Vec<String> {
    body["error"]["details"]["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f["rule_id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A 422 `refused_by_law` citing `rule`; its message.
#[track_caller]
fn assert_refused((status, body): &(u16, Value), rule: &str) -> String {
    assert_eq!(*status, 422, "expected a refusal citing {rule}: {body}");
    assert_eq!(body["error"]["code"], "refused_by_law", "{body}");
    assert!(
        cited(body).iter().any(|r| r == rule),
        "expected {rule} among {:?}: {body}",
        cited(body)
    );
    body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `POST path` refused by the law citing `rule`, with a message that `says` this.
#[track_caller]
fn post_refused(office: &Api, path: &str, body: &Value, rule: &str, says: &str) {
    let message = assert_refused(&office.post(path, body), rule);
    assert!(message.contains(says), "expected {says:?} in {message:?}");
}

/// A stand's places raised by one: refused by the art. 14 cap (R23) while the registry is at it.
#[track_caller]
fn assert_no_place_added(office: &Api, reg: &Registry, stand: &str) {
    let mut s = json!(reg.stands.iter().find(|s| s.id == stand).unwrap());
    s["vacancies"] = json!(s["vacancies"].as_u64().unwrap() + 1);
    assert_refused(&office.put(&format!("/v1/stands/{stand}"), &s), "R23");
}

/// The answer, which must have status `want`.
#[track_caller]
fn ok((status, body): (u16, Value), want: u16) -> Value {
    assert_eq!(status, want, "{body}");
    body
}

/// The registry, with the art. 14 count checked against the cap: never above it. Returns the
/// registry and the count.
#[track_caller]
fn registry_within_cap(office: &Api) -> (Registry, u64) {
    let reg = office.registry();
    let fleet = office::fleet_size(&reg);
    let cap = u64::from(office::taxi_cap(&reg.law().rules));
    assert_eq!(cap, 118, "the demo's cap: 237,240 ÷ 2,000");
    assert!(fleet <= cap, "art. 14: {fleet} taxis over the cap of {cap}");
    (reg, fleet)
}

/// Places of `stand` not taken by a permit in force.
fn free_places(reg: &Registry, stand: &str) -> i64 {
    let places = reg.stands.iter().find(|s| s.id == stand).unwrap().vacancies;
    let live = reg
        .permits
        .iter()
        .filter(|p| p.stand_id == stand && !matches!(p.state, PermitState::Revoked { .. }))
        .count();
    i64::from(places) - i64::try_from(live).unwrap()
}

/// The edital as the server holds it, with its classification.
fn edital(office: &Api) -> (Edital, Vec<Ranked>, Value) {
    let view = ok(office.get(&format!("/v1/editais/{ID}")), 200);
    parse_view(view)
}

fn parse_view(view: Value) -> (Edital, Vec<Ranked>, Value) {
    let e: Edital = serde_json::from_value(view["edital"].clone()).unwrap();
    let c: Vec<Ranked> = serde_json::from_value(view["classification"].clone()).unwrap();
    (e, c, view)
}

fn post_step(office: &Api, step: &str, body: &Value, want: u16) -> (Edital, Vec<Ranked>, Value) {
    parse_view(ok(
        office.post(&format!("/v1/editais/{ID}/{step}"), body),
        want,
    ))
}

fn new_edital(applications_from: NaiveDate, vacancies: &[(&str, u32)]) -> Value {
    json!(NewEdital {
        id: ID.into(),
        number: "001/2027".into(),
        published_on: d(2027, 2, 1),
        applications_from,
        applications_until: d(2027, 3, 5),
        reference_date: None,
        seed_source: "os cinco prêmios da extração da Loteria Federal de 10/03/2027".into(),
        draw_on: d(2027, 3, 10),
        vacancies: vacancies
            .iter()
            .map(|(s, n)| Vacancy {
                stand_id: (*s).into(),
                places: *n,
            })
            .collect(),
        documents: None,
        certificate_validity_days: None,
    })
}

/// A licence that meets art. 2 II, with its own valid number.
fn licence(n: u8) -> DriverLicence {
    DriverLicence {
        number: CnhNumber::from_base([4, 0, 2, 7, 1, 9, 0, n / 10, n % 10]).unwrap(),
        category: "B".into(),
        first_licence_date: d(2012, 5, 10),
        expiry: d(2031, 8, 1),
        kind: LicenceKind::D,
        observations: vec!["EAR".into()],
    }
}

fn certificate() -> Option<Certificate> {
    Some(Certificate {
        issued_on: d(2027, 2, 15),
        favourable: true,
    })
}

/// What a candidate presents, everything in order.
fn candidate(name: &str, cpf: Cpf, birth_date: NaiveDate, licence: DriverLicence) -> NewCandidate {
    NewCandidate {
        name: name.into(),
        cpf,
        birth_date,
        licence,
        residence_since: Some(d(2009, 3, 1)),
        criminal_record: certificate(),
        medical: certificate(),
        activity_proof: false,
        preferences: Vec::new(),
    }
}

/// What a registry person presents: their own identity and licence.
fn candidate_of(p: &Person) -> NewCandidate {
    candidate(&p.name, p.cpf.clone(), p.birth_date, p.licence.clone())
}

/// What newcomer `n` presents: a CPF and a licence of their own.
fn newcomer(reg: &Registry, n: u8, name: &str, birth_date: NaiveDate) -> NewCandidate {
    candidate(name, new_cpf(reg, n), birth_date, licence(n))
}

/// A decided revocation (art. 32 V) recorded, and the permit's state set to revoked.
fn revoke(office: &Api, reg: &Registry, number: &str, on: NaiveDate) {
    let holder = &reg.index().permit(number).unwrap().holder_id;
    let penalty = json!({"permit_number": number, "person_id": holder,
                         "kind": {"kind": "revocation"}, "decided_on": on});
    ok(office.post("/v1/penalties", &penalty), 201);
    let state = json!({"state": "revoked", "on": on});
    ok(
        office.put(&format!("/v1/permits/{number}/state"), &state),
        200,
    );
}

/// A newcomer's own CPF (valid check digits, unknown to the registry).
fn new_cpf(reg: &Registry, n: u8) -> Cpf {
    let cpf = Cpf::from_base([7, 3, 0, 2, 0, 2, 7, n / 10, n % 10]).unwrap();
    assert!(cpf.check_digits_ok());
    assert!(reg.index().person_by_cpf(&cpf).is_none(), "{cpf:?} is new");
    cpf
}

/// A taxi in `owner`'s name (art. 30 III), with a verified taximeter.
fn vehicle(reg: &Registry, id: &str, n: u8, owner: &Cpf) -> Vehicle {
    let plate = Plate::parse(&format!("EDT{}A{:02}", n % 10, n)).unwrap();
    assert!(!reg.vehicles.iter().any(|v| v.plate == plate));
    Vehicle {
        id: id.into(),
        plate,
        renavam: Renavam::from_base([9, 0, 2, 7, 0, 0, 0, 0, n / 10, n % 10]).unwrap(),
        make_model: "Fiat Cronos 1.3".into(),
        colour: "Branco".into(),
        year_of_manufacture: 2026,
        doors: 4,
        capacity_incl_driver: 5,
        licensing_municipality: "AMERICANA".into(),
        licensing_uf: "SP".into(),
        category: VehicleCategory::Aluguel,
        owner_cpf: owner.clone(),
        taximeter: Some(Taximeter {
            certificate_number: Some(format!("IPEM-SP-90{n:04}")),
            verified_on: d(2027, 3, 1),
            valid_until_year: Some(2028),
            seal_intact: true,
        }),
    }
}

/// `sha256sum` of `bytes`, lower-case hex: the check anyone makes without this software.
fn sha256sum(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// The actions of the audit rows about `subject`, in the chain's order (read from the stopped
/// server's database).
fn audit_actions(data: &Path, subject: &str) -> Vec<String> {
    let db = rusqlite::Connection::open_with_flags(
        data.join(taxi_fiscal_server::config::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut q = db
        .prepare("SELECT action FROM audit_log WHERE subject = ?1 ORDER BY seq")
        .unwrap();
    q.query_map([subject], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `taxi-fiscal lottery verify --list LIST --seed SEED --result RESULT`.
fn lottery_verify(list: &Path, seed: &str, result: &Path) -> Output {
    Command::new(taxi_fiscal_bin())
        .args(["lottery", "verify", "--list"])
        .arg(list)
        .args(["--seed", seed, "--result"])
        .arg(result)
        .output()
        .unwrap()
}

/// The registry person and live permit of a current holder fit to move (group I): a permit at
/// S03 in order, its holder meeting art. 2 through the grant.
fn pick_holder(reg: &Registry, on: NaiveDate) -> (Person, String) {
    let rules = &reg.law().rules;
    reg.permits
        .iter()
        .filter(|p| p.stand_id == "S03" && p.state == PermitState::Active)
        .filter(|p| p.renewal_year == 2027 && p.auxiliaries.is_empty())
        .filter(|p| !reg.penalties.iter().any(|x| x.permit_number == p.number))
        .filter(|p| !reg.fines.iter().any(|x| x.permit_number == p.number))
        .find_map(|p| {
            let person = reg.people.iter().find(|x| x.id == p.holder_id)?;
            office::driver_requirements(person, on, rules)
                .is_empty()
                .then(|| (person.clone(), p.number.clone()))
        })
        .expect("a holder in order at S03")
}

/// An authorised auxiliary of a permit of S01 for more than a year before `reference`, meeting
/// art. 2 through the grant: the person and the permit.
fn pick_auxiliary(reg: &Registry, reference: NaiveDate, on: NaiveDate) -> (Person, String) {
    let rules = &reg.law().rules;
    reg.permits
        .iter()
        .filter(|p| p.stand_id == "S01" && p.state == PermitState::Active)
        .filter(|p| !reg.penalties.iter().any(|x| x.permit_number == p.number))
        .flat_map(|p| p.auxiliaries.iter().map(move |a| (p, a)))
        .filter(|(_, a)| a.registered_on < d(2026, 1, 1))
        .find_map(|(p, a)| {
            let person = reg.people.iter().find(|x| x.id == a.person_id)?;
            let fine = office::driver_requirements(person, on, rules).is_empty()
                && office::driver_requirements(person, reference, rules).is_empty();
            fine.then(|| (person.clone(), p.number.clone()))
        })
        .expect("an auxiliary of more than a year at S01")
}

#[test]
fn a_whole_edital_from_vacancies_to_grants() {
    let mut server = InProcServer::start_demo("2027-02-01T15:00:00Z".parse().unwrap());
    assert_eq!(server.today(), d(2027, 2, 1));
    let office = Api::login(&server.url, OFFICE);

    // --- The demo sits exactly at the art. 14 cap, every stand full. -------------------------
    let (reg, fleet) = registry_within_cap(&office);
    assert_eq!(fleet, 118);
    for s in &reg.stands {
        assert_eq!(free_places(&reg, &s.id), 0, "stand {}", s.id);
    }
    let places = [(STAND_A, 2), (STAND_B, 2)];
    let open = "/v1/editais";
    let first = new_edital(d(2027, 2, 22), &places);
    post_refused(&office, open, &first, "R23", "vaga(s) livre(s)");
    assert_no_place_added(&office, &reg, "S01");

    // --- The office frees places the lawful way: decided revocations (art. 32 V). ------------
    for number in ["0024", "0025", "0056", "0057"] {
        revoke(&office, &reg, number, server.today());
    }
    let (reg, fleet) = registry_within_cap(&office);
    assert_eq!(fleet, 118, "a revoked permit's place stays open (art. 7)");
    assert_eq!(free_places(&reg, STAND_A), 2);
    assert_eq!(free_places(&reg, STAND_B), 2);

    // --- Opening: 20 days of notice (art. 4), then the edital; its places are held. ----------
    let short = new_edital(d(2027, 2, 11), &places);
    post_refused(
        &office,
        open,
        &short,
        "R42",
        "antecedência mínima de 20 dias",
    );
    let created = office.post(open, &first);
    let (e, _, view) = parse_view(ok(created, 201));
    assert_eq!(view["stage"], "announced");
    assert_eq!(e.reference_date, d(2027, 3, 5));
    assert_eq!(e.documents.len(), 6, "the art. 2 documents by default");
    let mut other = new_edital(d(2027, 2, 22), &[(STAND_A, 1)]);
    other["id"] = json!("2027-02");
    post_refused(&office, open, &other, "R23", "outros editais");

    // --- Twelve candidates, across the three groups of art. 3. -------------------------------
    let (holder, holder_permit) = pick_holder(&reg, d(2027, 4, 30));
    let (aux, aux_permit) = pick_auxiliary(&reg, e.reference_date, d(2027, 4, 30));
    let mut holder_c = candidate_of(&holder);
    holder_c.preferences = vec![STAND_A.into()];
    let mut aux_c = candidate_of(&aux);
    aux_c.activity_proof = true;
    aux_c.preferences = vec![STAND_B.into()];
    let mut young = newcomer(&reg, 3, "Davi Moreira Lopes", d(2006, 6, 15));
    young.licence.first_licence_date = d(2024, 8, 1);
    let mut uncertified = newcomer(&reg, 4, "Elaine Castro Nunes", d(1988, 4, 2));
    uncertified.criminal_record = None;
    let newcomers = [
        "Gustavo Teixeira Prado",
        "Heloísa Duarte Campos",
        "Ivan Monteiro Reis",
        "Jéssica Farias Lins",
        "Kléber Antunes Sá",
        "Lúcia Brandão Melo",
        "Mauro Peixoto Vidal",
        "Natália Quintas Araújo",
    ];
    let mut presented = vec![holder_c, aux_c, young, uncertified];
    for (i, name) in newcomers.iter().enumerate() {
        let n = u8::try_from(i + 5).unwrap();
        let birth = d(1975 + i32::from(n), 1 + u32::from(n % 12), 10);
        presented.push(newcomer(&reg, n, name, birth));
    }
    let at = |step: &str| format!("/v1/editais/{ID}/{step}");
    post_refused(
        &office,
        &at("candidates"),
        &json!(presented[0]),
        "R42",
        "vão de",
    );
    server.advance_to(d(2027, 2, 22));
    for (i, c) in presented.iter().enumerate() {
        let (e, _, _) = post_step(&office, "candidates", &json!(c), 201);
        assert_eq!(e.candidates[i].inscription, format!("{:03}", i + 1));
    }
    let twice = json!(presented[5]);
    post_refused(
        &office,
        &at("candidates"),
        &twice,
        "R42",
        "já está inscrito",
    );

    // --- The list: each judged once on the reference date, two refused with their reasons. ---
    server.advance_to(d(2027, 3, 5));
    post_refused(
        &office,
        &at("list"),
        &json!({}),
        "R42",
        "só é publicada depois",
    );
    server.advance_to(d(2027, 3, 8));
    let (e, _, view) = post_step(&office, "list", &json!({}), 200);
    assert_eq!(view["stage"], "list_published");
    let list = e.list.clone().unwrap();
    let entry = |i: &str| list.entries.iter().find(|x| x.inscription == i).unwrap();
    assert_eq!(entry("001").group, Some(Group::Holder));
    assert_eq!(entry("001").person_id.as_deref(), Some(holder.id.as_str()));
    assert!(entry("001").evidence.contains(&holder_permit));
    assert_eq!(entry("002").group, Some(Group::Auxiliary));
    assert!(entry("002").evidence.contains(&aux_permit));
    for (i, rule) in [("003", "R06"), ("004", "R41")] {
        let x = entry(i);
        assert_eq!(x.group, None, "{i} refused: {x:?}");
        assert!(x.findings.iter().any(|f| f.rule_id == rule), "{i}: {x:?}");
    }
    for i in 5..=12 {
        assert_eq!(entry(&format!("{i:03}")).group, Some(Group::NewRegistrant));
    }
    assert_eq!(
        list.lottery_text.lines().count(),
        1 + 8,
        "header and group III"
    );

    // --- The draw: not before the seed is known; once; reproducible by anyone. ----------------
    let draw_body = json!({ "seed": SEED });
    post_refused(
        &office,
        &at("draw"),
        &draw_body,
        "R42",
        "não pode ser feito antes",
    );
    server.advance_to(d(2027, 3, 10));
    let (e, _, view) = post_step(&office, "draw", &draw_body, 200);
    assert_eq!(view["stage"], "drawn");
    let drawn = e.draw.clone().unwrap();
    assert_eq!(drawn.seed, "48213 07654 91027 33580 66142");
    assert_eq!(drawn.order.len(), 8);
    post_refused(
        &office,
        &at("draw"),
        &draw_body,
        "R42",
        "não há novo sorteio",
    );

    let (status, text) = office.get_raw(&at("lottery.txt"), None);
    assert_eq!(status, 200);
    assert_eq!(
        text,
        list.lottery_text.as_bytes(),
        "published byte for byte"
    );
    assert_eq!(sha256sum(&text), list.lottery_digest);
    // Each key is SHA-256(digest \n seed \n inscription), the order ascending by key.
    for w in drawn.order.windows(2) {
        assert!(w[0].key < w[1].key);
    }
    for x in &drawn.order {
        let line = format!("{}\n{}\n{}", list.lottery_digest, drawn.seed, x.inscription);
        assert_eq!(sha256sum(line.as_bytes()), x.key, "{}", x.inscription);
    }
    let files = tempfile::tempdir().unwrap();
    let list_file = files.path().join("lista-sorteio.txt");
    std::fs::write(&list_file, &text).unwrap();
    let order: Vec<&str> = drawn.order.iter().map(|x| x.inscription.as_str()).collect();
    let result_file = files.path().join("resultado.txt");
    std::fs::write(&result_file, order.join("\n") + "\n").unwrap();
    let out = lottery_verify(&list_file, SEED, &result_file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["digest"], list.lottery_digest.as_str());
    assert_eq!(report["result"]["reproduced"], true, "{report}");
    let recomputed: Vec<&str> = report["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["inscription"].as_str().unwrap())
        .collect();
    assert_eq!(recomputed, order);
    // A result with two places swapped, and a list with a name changed, do not verify.
    let mut swapped = order.clone();
    swapped.swap(0, 1);
    let tampered = files.path().join("resultado-adulterado.txt");
    std::fs::write(&tampered, swapped.join("\n") + "\n").unwrap();
    let out = lottery_verify(&list_file, SEED, &tampered);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a draw that does not verify fails"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("NÃO confere"));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["result"]["reproduced"], false);
    assert_eq!(report["result"]["first_difference"]["position"], 1);
    let forged = files.path().join("lista-adulterada.txt");
    let changed = String::from_utf8(text.clone())
        .unwrap()
        .replace(newcomers[0], "Gustavo Teixeira Pardo");
    std::fs::write(&forged, changed).unwrap();
    assert!(!lottery_verify(&forged, SEED, &result_file).status.success());

    // --- The result: the places go down the order of art. 3. -------------------------------
    let (e, ranked, view) = post_step(&office, "result", &json!({}), 200);
    assert_eq!(view["stage"], "result_published");
    let window = e.result.clone().unwrap().appeal_deadline;
    assert_eq!(
        window.deadline,
        d(2027, 3, 15),
        "5 calendar days (ADR 0030)"
    );
    let stand_of = |ranked: &[Ranked], i: &str| {
        ranked
            .iter()
            .find(|r| r.inscription == i)
            .unwrap()
            .stand_id
            .clone()
    };
    assert_eq!(ranked[0].inscription, "001");
    assert_eq!(ranked[1].inscription, "002");
    assert_eq!(stand_of(&ranked, "001").as_deref(), Some(STAND_A));
    assert_eq!(stand_of(&ranked, "002").as_deref(), Some(STAND_B));
    let (l1, l2, l3) = (order[0], order[1], order[2]);
    assert_eq!(stand_of(&ranked, l1).as_deref(), Some(STAND_A));
    assert_eq!(stand_of(&ranked, l2).as_deref(), Some(STAND_B));
    assert_eq!(stand_of(&ranked, l3), None, "waiting list");
    assert_eq!(ranked.len(), 10, "the refused take no line");

    // --- Appeals (art. 5): one in time, one after; no grant before they are decided. ----------
    server.advance_to(d(2027, 3, 12));
    let grant_holder = json!({ "inscription": "001" });
    post_refused(
        &office,
        &at("grants"),
        &grant_holder,
        "R42",
        "prazo de recurso",
    );
    let appeal = NewAppeal {
        appellant: "Inscrito nº ".to_owned() + l3,
        inscription: Some(l3.into()),
        filed_on: None,
        grounds: format!("A inscrição {l1} não comprova três anos de residência."),
    };
    let (e, _, _) = post_step(&office, "appeals", &json!(appeal), 201);
    assert!(e.appeals[0].timely);
    server.advance_to(d(2027, 3, 16));
    post_refused(&office, &at("grants"), &grant_holder, "R42", "sem decisão");
    let late = NewAppeal {
        appellant: "Inscrito nº 012".into(),
        inscription: Some("012".into()),
        filed_on: None,
        grounds: "Pede nova classificação.".into(),
    };
    let (e, _, _) = post_step(&office, "appeals", &json!(late), 201);
    assert_eq!(e.appeals[1].number, 2);
    assert!(!e.appeals[1].timely, "recorded as out of time");
    let provido = json!({"granted": true, "reasoning": "Provido."});
    post_refused(
        &office,
        &at("appeals/2/decision"),
        &provido,
        "R42",
        "fora do prazo",
    );
    let denied = json!({"granted": false, "reasoning": "Intempestivo (art. 5º)."});
    ok(office.post(&at("appeals/2/decision"), &denied), 200);
    server.advance_to(d(2027, 3, 17));
    let ruling = json!({"granted": true, "excludes": l1,
                        "reasoning": "Comprovante de residência insuficiente (art. 2º, III)."});
    let (e, ranked, view) = parse_view(ok(office.post(&at("appeals/1/decision"), &ruling), 200));
    assert_eq!(view["stage"], "final");
    assert!(e.appeals.iter().all(|a| a.decision.is_some()));
    let excluded = ranked.iter().find(|r| r.inscription == l1).unwrap();
    assert_eq!(
        (excluded.excluded_by_appeal, excluded.stand_id.clone()),
        (Some(1), None)
    );
    // The order never changes; the places go down it again: l2 now finds a place at the first
    // stand of the edital, and l3 takes the one left.
    assert_eq!(stand_of(&ranked, l2).as_deref(), Some(STAND_A));
    assert_eq!(
        stand_of(&ranked, l3).as_deref(),
        Some(STAND_B),
        "the place passes on"
    );

    // --- Grants (art. 6): registered first (art. 30), then each chosen candidate. -------------
    let grants = at("grants");
    let to_excluded = json!({"inscription": l1, "permit_number": "0122", "vehicle_id": "V9001"});
    post_refused(
        &office,
        &grants,
        &to_excluded,
        "R42",
        "excluída pelo recurso nº 1",
    );
    let chosen = |i: &str| presented[i.parse::<usize>().unwrap() - 1].clone();
    let unregistered = json!({"inscription": l3, "permit_number": "0124", "vehicle_id": "V9003"});
    post_refused(
        &office,
        &grants,
        &unregistered,
        "R42",
        "cadastramento (art. 30)",
    );
    let reg = office.registry();
    let mut new_permits = Vec::new();
    for (k, (i, stand)) in [("002", STAND_B), (l2, STAND_A), (l3, STAND_B)]
        .into_iter()
        .enumerate()
    {
        let c = chosen(i);
        let n = u8::try_from(k + 1).unwrap();
        if reg.index().person_by_cpf(&c.cpf).is_none() {
            let person = Person {
                id: format!("P90{i}"),
                name: c.name.clone(),
                cpf: c.cpf.clone(),
                birth_date: c.birth_date,
                licence: c.licence.clone(),
            };
            ok(office.post("/v1/people", &json!(person)), 201);
        }
        let v = vehicle(&reg, &format!("V900{n}"), n, &c.cpf);
        ok(office.post("/v1/vehicles", &json!(v)), 201);
        new_permits.push((i, stand, format!("{:04}", 121 + u32::from(n)), v.id));
    }

    let outcome = ok(office.post(&grants, &grant_holder), 201);
    assert_eq!(outcome["group"], "holder");
    assert_eq!(outcome["permit_number"], holder_permit.as_str());
    assert_eq!(outcome["stand_id"], STAND_A);
    for (i, stand, number, vehicle_id) in &new_permits {
        let body = json!({"inscription": i, "permit_number": number, "vehicle_id": vehicle_id});
        let outcome = ok(office.post(&grants, &body), 201);
        assert_eq!(outcome["permit_number"], number.as_str(), "{outcome}");
        assert_eq!(outcome["stand_id"], *stand);
        registry_within_cap(&office);
    }
    post_refused(
        &office,
        &grants,
        &grant_holder,
        "R42",
        "já recebeu o alvará",
    );

    // --- The registry after: the holder moved, the auxiliary became a holder. -----------------
    let (reg, fleet) = registry_within_cap(&office);
    assert_eq!(fleet, 118);
    let index = reg.index();
    let moved = index.permit(&holder_permit).unwrap();
    assert_eq!(
        (moved.stand_id.as_str(), moved.holder_id.as_str()),
        (STAND_A, holder.id.as_str())
    );
    assert_eq!(
        index.permits_held_by(&holder.id).len(),
        1,
        "art. 9: one permit"
    );
    assert!(
        index
            .permit(&aux_permit)
            .unwrap()
            .auxiliaries
            .iter()
            .all(|a| a.person_id != aux.id)
    );
    for (i, stand, number, vehicle_id) in &new_permits {
        let p = index.permit(number).unwrap();
        let person = index.person_by_cpf(&chosen(i).cpf).unwrap();
        assert_eq!(p.holder_id, person.id);
        assert_eq!(
            (p.stand_id.as_str(), p.vehicle_id.as_str()),
            (*stand, vehicle_id.as_str())
        );
        assert_eq!(p.edital_date, Some(d(2027, 2, 1)), "art. 13 III");
    }
    assert_eq!(free_places(&reg, STAND_A), 0);
    assert_eq!(free_places(&reg, STAND_B), 0);
    assert_eq!(
        free_places(&reg, "S03"),
        1,
        "the holder's old place is free again"
    );
    let (e, _, _) = edital(&office);
    assert_eq!(e.grants.len(), 4);

    // --- The cap holds at the end: no further place, no edital over a full stand. -------------
    let mut later = new_edital(d(2027, 4, 8), &[(STAND_A, 1)]);
    later["id"] = json!("2027-02");
    later["published_on"] = json!("2027-03-17");
    later["applications_until"] = json!("2027-04-20");
    later["draw_on"] = json!("2027-04-24");
    post_refused(&office, open, &later, "R23", "vaga(s) livre(s)");
    assert_no_place_added(&office, &reg, "S01");

    // --- Every step is in the audit chain, which verifies. -------------------------------------
    server.stop();
    let (passed, report) = server.audit_verify();
    assert!(passed, "{report}");
    let mut steps = vec!["edital.open"];
    steps.extend(["edital.candidate.register"; 12]);
    steps.extend([
        "edital.list.publish",
        "edital.draw",
        "edital.result.publish",
    ]);
    steps.extend(["edital.appeal.file", "edital.appeal.file"]);
    steps.extend(["edital.appeal.decide", "edital.appeal.decide"]);
    steps.extend(["edital.grant"; 4]);
    assert_eq!(
        audit_actions(server.data(), &format!("edital:{ID}")),
        steps,
        "refusals leave no row"
    );
    let moved = format!("permit:{holder_permit}");
    assert_eq!(
        audit_actions(server.data(), &moved),
        ["registry.permit.stand"]
    );
    for (_, _, number, _) in &new_permits {
        let subject = format!("permit:{number}");
        assert_eq!(
            audit_actions(server.data(), &subject),
            ["registry.permit.grant"]
        );
    }
}
