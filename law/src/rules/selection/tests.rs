//! The edital's steps on the sample registry (testkit): stands S01–S04 have 10 places each;
//! P01 holds 0001 at S01 since 2015-06-01, with auxiliaries P02 and P03 since 2020-02-10.

use super::*;
use crate::domain::{CnhNumber, LicenceKind, Transfer, TransferReason};
use crate::testkit::sample_registry;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn config() -> RulesConfig {
    RulesConfig::default()
}

/// Published Monday 2027-01-04; applications from 2027-01-25 (21 days later) to 2027-02-05;
/// the seed is known on 2027-02-10.
fn new_edital() -> NewEdital {
    NewEdital {
        id: "2027-01".into(),
        number: "001/2027".into(),
        published_on: d(2027, 1, 4),
        applications_from: d(2027, 1, 25),
        applications_until: d(2027, 2, 5),
        reference_date: None,
        seed_source: "os cinco prêmios da extração nº 6.012 da Loteria Federal".into(),
        draw_on: d(2027, 2, 10),
        vacancies: vec![
            Vacancy {
                stand_id: "S01".into(),
                places: 2,
            },
            Vacancy {
                stand_id: "S02".into(),
                places: 1,
            },
        ],
        documents: None,
        certificate_validity_days: None,
    }
}

fn opened() -> Edital {
    open(
        &sample_registry(),
        new_edital(),
        &[],
        d(2027, 1, 4),
        &config(),
    )
    .unwrap()
}

fn cpf(n: u32) -> Cpf {
    let digits: Vec<u8> = format!("{:09}", 700_000_000 + n)
        .bytes()
        .map(|b| b - b'0')
        .collect();
    Cpf::from_base(digits.try_into().unwrap()).unwrap()
}

/// A candidate who meets art. 2 on the reference date, with a CPF in no registry.
fn candidate(name: &str, n: u32) -> NewCandidate {
    NewCandidate {
        name: name.into(),
        cpf: cpf(n),
        birth_date: d(1980, 5, 1),
        licence: DriverLicence {
            number: CnhNumber::parse("41491906696").unwrap(),
            category: "B".into(),
            first_licence_date: d(2005, 1, 1),
            expiry: d(2031, 1, 1),
            kind: LicenceKind::D,
            observations: vec!["EAR".into()],
        },
        residence_since: Some(d(2010, 1, 1)),
        criminal_record: Some(Certificate {
            issued_on: d(2027, 1, 20),
            favourable: true,
        }),
        medical: Some(Certificate {
            issued_on: d(2027, 1, 20),
            favourable: true,
        }),
        activity_proof: false,
        preferences: Vec::new(),
    }
}

/// The registry person `id` as a candidate, with what they present.
fn from_registry(id: &str, activity_proof: bool) -> NewCandidate {
    let reg = sample_registry();
    let p = reg.people.iter().find(|p| p.id == id).unwrap();
    NewCandidate {
        name: p.name.clone(),
        cpf: p.cpf.clone(),
        birth_date: p.birth_date,
        licence: p.licence.clone(),
        activity_proof,
        ..candidate("x", 0)
    }
}

fn rule_ids(r: &Refusal) -> Vec<&str> {
    r.rule_ids()
}

#[test]
fn notice_of_twenty_days_is_the_minimum() {
    let reg = sample_registry();
    let mut req = new_edital();
    req.applications_from = d(2027, 1, 24); // exactly 20 days after 4 January
    assert!(open(&reg, req.clone(), &[], d(2027, 1, 4), &config()).is_ok());
    req.applications_from = d(2027, 1, 23); // 19 days
    let err = open(&reg, req, &[], d(2027, 1, 4), &config()).unwrap_err();
    assert_eq!(rule_ids(&err), ["R42"]);
    assert!(
        err.to_string().contains("antecedência mínima de 20 dias"),
        "{err}"
    );
}

#[test]
fn the_seed_must_come_after_the_applications() {
    let mut req = new_edital();
    req.draw_on = req.applications_until;
    let err = open(&sample_registry(), req, &[], d(2027, 1, 4), &config()).unwrap_err();
    assert_eq!(rule_ids(&err), ["R42"]);
    assert!(err.to_string().contains("semente"), "{err}");
}

#[test]
fn places_are_bounded_by_the_stand_and_other_editais() {
    let reg = sample_registry();
    let mut req = new_edital();
    // S01: 10 places, permit 0001 there: 9 free.
    req.vacancies = vec![Vacancy {
        stand_id: "S01".into(),
        places: 9,
    }];
    let first = open(&reg, req.clone(), &[], d(2027, 1, 4), &config()).unwrap();
    req.vacancies[0].places = 10;
    let err = open(&reg, req.clone(), &[], d(2027, 1, 4), &config()).unwrap_err();
    assert_eq!(rule_ids(&err), ["R23"]);
    assert!(err.to_string().contains("9 vaga(s) livre(s)"), "{err}");
    // Another edital holding 9 places there leaves none.
    req.vacancies[0].places = 1;
    req.id = "2027-02".into();
    let err = open(&reg, req, &[&first], d(2027, 1, 4), &config()).unwrap_err();
    assert!(err.to_string().contains("0 vaga(s) livre(s)"), "{err}");
}

#[test]
fn no_edital_while_the_registry_is_over_the_cap() {
    let reg = sample_registry(); // 4 stands × 10 places = 40 taxis
    let mut cfg = config();
    cfg.census_population = 39 * cfg.inhabitants_per_taxi; // cap 39
    let err = open(&reg, new_edital(), &[], d(2027, 1, 4), &cfg).unwrap_err();
    assert_eq!(rule_ids(&err), ["R23"]);
    assert!(err.to_string().contains("acima do limite de 39"), "{err}");
    cfg.census_population = 40 * cfg.inhabitants_per_taxi; // at the cap: allowed
    assert!(open(&reg, new_edital(), &[], d(2027, 1, 4), &cfg).is_ok());
}

#[test]
fn registration_only_in_the_window_and_once_per_cpf() {
    let e = opened();
    let err = register(&e, candidate("Ana", 1), d(2027, 1, 24)).unwrap_err();
    assert!(
        err.to_string().contains("vão de 25/01/2027 a 05/02/2027"),
        "{err}"
    );
    let e = register(&e, candidate("Ana", 1), d(2027, 1, 25)).unwrap();
    let e = register(&e, candidate("Bruno", 2), d(2027, 2, 5)).unwrap();
    assert_eq!(e.candidates[1].inscription, "002");
    let err = register(&e, candidate("Ana de novo", 1), d(2027, 2, 1)).unwrap_err();
    assert!(err.to_string().contains("já está inscrito"), "{err}");
    assert!(register(&e, candidate("Carla", 3), d(2027, 2, 6)).is_err());
    let mut bad = candidate("Dora;Lima", 4);
    bad.preferences = vec!["S03".into()];
    let err = register(&e, bad, d(2027, 2, 1)).unwrap_err();
    assert_eq!(err.findings.len(), 2, "{err}");
}

fn entry<'a>(e: &'a Edital, inscription: &str) -> &'a ListEntry {
    e.list
        .as_ref()
        .unwrap()
        .entries
        .iter()
        .find(|x| x.inscription == inscription)
        .unwrap()
}

#[test]
fn the_list_judges_art_2_and_finds_the_groups() {
    let reg = sample_registry();
    let mut e = opened();
    let day = d(2027, 1, 26);
    e = register(&e, from_registry("P01", false), day).unwrap(); // 001 holder
    e = register(&e, from_registry("P02", true), day).unwrap(); // 002 auxiliary, proof
    e = register(&e, from_registry("P03", false), day).unwrap(); // 003 auxiliary, no proof
    e = register(&e, candidate("Ana", 1), day).unwrap(); // 004 new
    let mut young = candidate("Bia", 2);
    young.birth_date = d(2006, 2, 6); // 21 on 06/02/2027, a day after the reference date
    e = register(&e, young, day).unwrap(); // 005 refused R06
    let mut no_medical = candidate("Caio", 3);
    no_medical.medical = None;
    e = register(&e, no_medical, day).unwrap(); // 006 refused R41
    let mut resident = candidate("Davi", 4);
    resident.residence_since = Some(d(2024, 2, 5)); // exactly 3 years on 05/02/2027
    e = register(&e, resident, day).unwrap(); // 007 eligible
    let mut old_certificate = candidate("Eva", 5);
    old_certificate.criminal_record = Some(Certificate {
        issued_on: d(2026, 11, 6), // 91 days before 05/02/2027
        favourable: true,
    });
    e = register(&e, old_certificate, day).unwrap(); // 008 refused R41

    assert!(publish_list(&e, &reg.index(), d(2027, 2, 5), &config()).is_err());
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();

    let holder = entry(&e, "001");
    assert_eq!(holder.group, Some(Group::Holder));
    assert_eq!(holder.since, Some(d(2015, 6, 1)));
    assert!(holder.evidence.contains("0001"), "{}", holder.evidence);
    assert_eq!(entry(&e, "002").group, Some(Group::Auxiliary));
    assert_eq!(entry(&e, "002").since, Some(d(2020, 2, 10)));
    let no_proof = entry(&e, "003");
    assert_eq!(no_proof.group, Some(Group::NewRegistrant));
    assert!(
        no_proof.evidence.contains("sem comprovante"),
        "{}",
        no_proof.evidence
    );
    assert_eq!(entry(&e, "004").group, Some(Group::NewRegistrant));
    let young = entry(&e, "005");
    assert_eq!(young.group, None);
    assert!(young.findings.iter().any(|f| f.rule_id == RuleId::R06));
    let no_medical = entry(&e, "006");
    assert_eq!(no_medical.group, None);
    assert!(
        no_medical
            .findings
            .iter()
            .any(|f| f.rule_id == RuleId::R41 && f.message.contains("atestado médico"))
    );
    assert_eq!(entry(&e, "007").group, Some(Group::NewRegistrant));
    assert_eq!(entry(&e, "008").group, None);

    let list = e.list.as_ref().unwrap();
    assert_eq!(
        list.lottery_text,
        "Edital 001/2027: inscritos habilitados ao sorteio (art. 3º, III)\n\
         003;Carlos Souza\n004;Ana\n007;Davi\n"
    );
    assert_eq!(list.lottery_digest, sha256_hex(&list.lottery_text));
    assert!(register(&e, candidate("Fábio", 9), d(2027, 2, 5)).is_err());
}

#[test]
fn a_transferor_is_barred_for_three_years() {
    let mut reg = sample_registry();
    reg.transfers.push(Transfer {
        permit_number: "0002".into(),
        from_person_id: "P10".into(),
        to_person_id: "P04".into(),
        on: d(2024, 2, 6),
        reason: TransferReason::Voluntary,
    });
    let mut e = register(&opened(), from_registry("P10", false), d(2027, 1, 26)).unwrap();
    let e2 = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let barred = entry(&e2, "001");
    assert_eq!(barred.group, None);
    assert!(barred.findings.iter().any(|f| f.rule_id == RuleId::R43));
    // Three years on the reference date: the bar is lifted.
    reg.transfers[0].on = d(2024, 2, 5);
    e.list = None;
    let e3 = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    assert_eq!(entry(&e3, "001").group, Some(Group::NewRegistrant));
}

#[test]
fn the_draw_is_the_sha256_order_and_happens_once() {
    let digest = sha256_hex("x");
    let inscriptions: Vec<String> = ["001", "002", "003"].map(String::from).to_vec();
    let order = draw_order(&digest, " 12345   67890 ", &inscriptions);
    for o in &order {
        assert_eq!(
            o.key,
            sha256_hex(&format!("{digest}\n12345 67890\n{}", o.inscription))
        );
    }
    assert!(order.windows(2).all(|w| w[0].key < w[1].key));
    assert_eq!(order, draw_order(&digest, "12345 67890", &inscriptions));
    assert_ne!(
        order.iter().map(|o| &o.inscription).collect::<Vec<_>>(),
        draw_order(&digest, "12345 67891", &inscriptions)
            .iter()
            .map(|o| &o.inscription)
            .collect::<Vec<_>>(),
        "another seed, another order (for these three inscriptions)"
    );

    let reg = sample_registry();
    let mut e = opened();
    for (i, name) in ["Ana", "Bruno", "Carla"].iter().enumerate() {
        e = register(&e, candidate(name, i as u32 + 1), d(2027, 2, 1)).unwrap();
    }
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let err = draw(&e, "1", d(2027, 2, 9)).unwrap_err();
    assert!(
        err.to_string().contains("só é conhecida em 10/02/2027"),
        "{err}"
    );
    let drawn = draw(&e, "12345 67890", d(2027, 2, 10)).unwrap();
    let list = drawn.list.as_ref().unwrap();
    let expected = draw_order(
        &list.lottery_digest,
        "12345 67890",
        &lottery_inscriptions(&list.lottery_text).unwrap(),
    );
    assert_eq!(drawn.draw.as_ref().unwrap().order, expected);
    let err = draw(&drawn, "99999", d(2027, 2, 11)).unwrap_err();
    assert!(err.to_string().contains("não há novo sorteio"), "{err}");
}

#[test]
fn lottery_text_is_read_back_or_refused() {
    let text = "Edital 1/2027: x\n001;Ana\n002;Bruno\n";
    assert_eq!(lottery_inscriptions(text).unwrap(), ["001", "002"]);
    assert!(lottery_inscriptions("001;Ana\n").is_err());
    assert!(lottery_inscriptions("Edital 1: x\n001;Ana").is_err());
    assert!(lottery_inscriptions("Edital 1: x\n001;Ana\n001;Bia\n").is_err());
    assert!(lottery_inscriptions("Edital 1: x\nAna\n").is_err());
}

/// An edital with a holder, an auxiliary and three new registrants (one preferring S02),
/// drawn and with its result published on Monday 2027-02-15.
fn with_result() -> (Registry, Edital) {
    let mut reg = sample_registry();
    let mut e = opened();
    let day = d(2027, 1, 26);
    e = register(&e, from_registry("P04", false), day).unwrap(); // 001 holder of 0002 (S02)
    e = register(&e, from_registry("P02", true), day).unwrap(); // 002 auxiliary of 0001
    for (i, name) in ["Ana", "Bruno", "Carla"].iter().enumerate() {
        let mut c = candidate(name, i as u32 + 1);
        if *name == "Carla" {
            c.preferences = vec!["S02".into()];
        }
        e = register(&e, c, day).unwrap(); // 003–005
    }
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let e = draw(&e, "12345 67890", d(2027, 2, 10)).unwrap();
    let e = publish_result(&e, d(2027, 2, 15), &config()).unwrap();
    // The new registrants register in the registry (art. 30) before their grant.
    for (i, name) in ["Ana", "Bruno", "Carla"].iter().enumerate() {
        let c = candidate(name, i as u32 + 1);
        reg.people.push(Person {
            id: format!("N{}", i + 1),
            name: c.name,
            cpf: c.cpf,
            birth_date: c.birth_date,
            licence: c.licence,
        });
    }
    (reg, e)
}

#[test]
fn classification_follows_art_3_and_preferences() {
    let (_, e) = with_result();
    let ranked = classification(&e);
    let groups: Vec<Group> = ranked.iter().map(|r| r.group).collect();
    assert_eq!(
        groups,
        [
            Group::Holder,
            Group::Auxiliary,
            Group::NewRegistrant,
            Group::NewRegistrant,
            Group::NewRegistrant
        ]
    );
    assert_eq!(ranked[0].inscription, "001");
    assert_eq!(ranked[1].inscription, "002");
    let draw = e.draw.as_ref().unwrap();
    let third: Vec<&str> = ranked[2..].iter().map(|r| r.inscription.as_str()).collect();
    let drawn: Vec<&str> = draw.order.iter().map(|o| o.inscription.as_str()).collect();
    assert_eq!(third, drawn);
    // Three places (S01 ×2, S02 ×1) in order: 001 and 002 take S01 (no preference: the first
    // stand with a place), the first drawn takes S02 unless it is Carla, who only wants S02.
    assert_eq!(ranked[0].stand_id.as_deref(), Some("S01"));
    assert_eq!(ranked[1].stand_id.as_deref(), Some("S01"));
    assert_eq!(ranked[2].stand_id.as_deref(), Some("S02"));
    assert!(ranked[3..].iter().all(|r| r.stand_id.is_none()));
}

#[test]
fn ties_in_seniority_go_to_the_older() {
    let reg = sample_registry(); // P01 (1975) and P04 (1970) both since 2015-06-01
    let mut e = opened();
    e = register(&e, from_registry("P01", false), d(2027, 1, 26)).unwrap();
    e = register(&e, from_registry("P04", false), d(2027, 1, 26)).unwrap();
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let ranked = classification(&e);
    assert_eq!(
        ranked[0].inscription, "002",
        "Ana (1970) before João (1975)"
    );
}

#[test]
fn result_needs_the_draw_and_opens_five_calendar_days() {
    let reg = sample_registry();
    let e = register(&opened(), candidate("Ana", 1), d(2027, 2, 1)).unwrap();
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let err = publish_result(&e, d(2027, 2, 9), &config()).unwrap_err();
    assert!(err.to_string().contains("faça o sorteio"), "{err}");
    let e = draw(&e, "1", d(2027, 2, 10)).unwrap();
    // Published Monday 15/02/2027: day 5 is Saturday 20/02, rolled to Monday 22/02.
    let e = publish_result(&e, d(2027, 2, 15), &config()).unwrap();
    let deadline = &e.result.as_ref().unwrap().appeal_deadline;
    assert_eq!(deadline.nominal, d(2027, 2, 20));
    assert_eq!(deadline.deadline, d(2027, 2, 22));
    assert_eq!(e.stage(d(2027, 2, 22)), Stage::ResultPublished);
    assert_eq!(e.stage(d(2027, 2, 23)), Stage::Final);
}

#[test]
fn appeals_in_and_out_of_time() {
    let (reg, e) = with_result();
    let appeal = |filed_on| NewAppeal {
        appellant: "Bruno".into(),
        inscription: Some("004".into()),
        filed_on: Some(filed_on),
        grounds: "A candidata escolhida não reside no Município.".into(),
    };
    let e = file_appeal(&e, appeal(d(2027, 2, 22)), d(2027, 2, 22)).unwrap();
    let e = file_appeal(&e, appeal(d(2027, 2, 23)), d(2027, 2, 23)).unwrap();
    assert!(e.appeals[0].timely);
    assert!(!e.appeals[1].timely);
    let err = decide_appeal(&e, 2, true, "Provido.", None, d(2027, 2, 24)).unwrap_err();
    assert!(err.to_string().contains("fora do prazo"), "{err}");

    // Within the window, and while appeal 1 waits, nothing is granted.
    let err = plan_grant(&e, &reg.index(), "001", d(2027, 2, 22), &config()).unwrap_err();
    assert!(err.to_string().contains("prazo de recurso"), "{err}");
    let err = plan_grant(&e, &reg.index(), "001", d(2027, 2, 23), &config()).unwrap_err();
    assert!(err.to_string().contains("sem decisão (nº 1)"), "{err}");
    assert_eq!(e.stage(d(2027, 2, 23)), Stage::ResultPublished);

    // Appeal 1 granted, excluding whoever took S02; the place passes to the next in order.
    let before = classification(&e);
    let excluded = before[2].inscription.clone();
    let err = decide_appeal(
        &e,
        1,
        true,
        "Provido.",
        Some(before[3].inscription.clone()),
        d(2027, 2, 24),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("não está entre os escolhidos"),
        "{err}"
    );
    let e = decide_appeal(
        &e,
        1,
        true,
        "Provido.",
        Some(excluded.clone()),
        d(2027, 2, 24),
    )
    .unwrap();
    let after = classification(&e);
    assert_eq!(after[2].excluded_by_appeal, Some(1));
    assert_eq!(after[2].stand_id, None);
    let next_with_place = after[3..].iter().find(|r| r.stand_id.is_some()).unwrap();
    assert_eq!(next_with_place.stand_id.as_deref(), Some("S02"));
    assert_eq!(e.final_on(), Some(d(2027, 2, 24)));
    let err = plan_grant(&e, &reg.index(), &excluded, d(2027, 2, 24), &config()).unwrap_err();
    assert!(
        err.to_string().contains("excluída pelo recurso nº 1"),
        "{err}"
    );
}

#[test]
fn grants_follow_art_6() {
    let (reg, e) = with_result();
    let idx = reg.index();
    let day = d(2027, 2, 23);
    // Group I: Ana Pereira's permit 0002 moves to S01.
    let holder = plan_grant(&e, &idx, "001", day, &config()).unwrap();
    assert_eq!(holder.group, Group::Holder);
    assert_eq!(holder.moves_permit.as_deref(), Some("0002"));
    assert_eq!(holder.stand_id, "S01");
    // Group II: Maria's auxiliary registration on 0001 ends.
    let aux = plan_grant(&e, &idx, "002", day, &config()).unwrap();
    assert_eq!(aux.ends_auxiliary_on, ["0001"]);
    assert_eq!(aux.moves_permit, None);
    assert_eq!(aux.edital_date, d(2027, 1, 4));
    // Not chosen: refused.
    let ranked = classification(&e);
    let waiting = &ranked[3].inscription;
    assert!(plan_grant(&e, &idx, waiting, day, &config()).is_err());
    // Not registered in the registry (art. 30): refused.
    let chosen_new = &ranked[2].inscription;
    let bare = sample_registry();
    let err = plan_grant(&e, &bare.index(), chosen_new, day, &config()).unwrap_err();
    assert!(err.to_string().contains("cadastramento (art. 30)"), "{err}");
    // Thirty days after the choice became final (23/02): the last day is 25/03.
    assert!(plan_grant(&e, &idx, chosen_new, d(2027, 3, 25), &config()).is_ok());
    let err = plan_grant(&e, &idx, chosen_new, d(2027, 3, 26), &config()).unwrap_err();
    assert!(err.to_string().contains("30 dias"), "{err}");

    // Granted once; the edital then holds one place fewer at S01.
    assert_eq!(e.open_places_at("S01"), Some(2));
    let e = record_grant(&e, &holder, "0002", day);
    assert_eq!(e.open_places_at("S01"), Some(1));
    let err = plan_grant(&e, &idx, "001", day, &config()).unwrap_err();
    assert!(
        err.to_string().contains("já recebeu o alvará 0002"),
        "{err}"
    );
}

#[test]
fn a_licence_lapsed_since_the_list_refuses_the_grant() {
    let (mut reg, e) = with_result();
    let ranked = classification(&e);
    let chosen_new = ranked[2].inscription.clone();
    let at = usize::from(chosen_new.as_bytes()[2] - b'3'); // 003 → N1 …
    reg.people
        .iter_mut()
        .find(|p| p.id == format!("N{}", at + 1))
        .unwrap()
        .licence
        .expiry = d(2027, 2, 20);
    let err = plan_grant(&e, &reg.index(), &chosen_new, d(2027, 2, 23), &config()).unwrap_err();
    assert_eq!(rule_ids(&err), ["R10"]);
}

#[test]
fn text_limits_are_enforced_at_their_edge() {
    let e = opened();
    let name = "a".repeat(MAX_NAME_CHARS);
    assert!(register(&e, candidate(&name, 1), d(2027, 2, 1)).is_ok());
    let name = "a".repeat(MAX_NAME_CHARS + 1);
    let err = register(&e, candidate(&name, 1), d(2027, 2, 1)).unwrap_err();
    assert!(err.to_string().contains("o máximo é 200"), "{err}");
    let mut req = new_edital();
    req.documents = Some(vec!["x".into(); MAX_DOCUMENTS + 1]);
    assert!(open(&sample_registry(), req, &[], d(2027, 1, 4), &config()).is_err());
}

#[test]
fn inscriptions_sort_as_numbers() {
    let mut v = vec!["1000", "999", "001", "010"];
    v.sort_by(|a, b| inscription_order(a, b));
    assert_eq!(v, ["001", "010", "999", "1000"]);
    let entry = |i: &str| ListEntry {
        inscription: i.into(),
        name: format!("N{i}"),
        group: Some(Group::NewRegistrant),
        since: None,
        birth_date: d(1980, 1, 1),
        evidence: String::new(),
        person_id: None,
        findings: Vec::new(),
    };
    let text = lottery_text("1/2027", &[entry("1000"), entry("999")]);
    assert!(text.ends_with("999;N999\n1000;N1000\n"), "{text}");
}

#[test]
fn a_seed_may_carry_any_printed_character() {
    let reg = sample_registry();
    let e = register(&opened(), candidate("Ana", 1), d(2027, 2, 1)).unwrap();
    let e = publish_list(&e, &reg.index(), d(2027, 2, 6), &config()).unwrap();
    let drawn = draw(&e, "12345;67890 – 1º prêmio", d(2027, 2, 10)).unwrap();
    assert_eq!(drawn.draw.unwrap().seed, "12345;67890 – 1º prêmio");
    assert!(draw(&e, &"9".repeat(MAX_SEED_CHARS + 1), d(2027, 2, 10)).is_err());
    assert!(draw(&e, &"9".repeat(MAX_SEED_CHARS), d(2027, 2, 10)).is_ok());
    assert!(draw(&e, "   ", d(2027, 2, 10)).is_err());
}
