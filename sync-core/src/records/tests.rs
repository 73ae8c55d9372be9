//! Unit tests of field records: creation, sealing, scope, merges, conflicts, replay, bytes.

use automerge::ROOT;
use automerge::transaction::Transactable;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::*;
use crate::domain::{DriverId, DriverRole, PenaltyKind, Plate};
use crate::rules::{CheckInput, Observation, RulesConfig, VehicleQuery, Verdict};
use crate::testkit::sample_registry;

/// A fresh device key (each test's device seals with its own).
fn test_key() -> DeviceKey {
    DeviceKey::generate().unwrap()
}

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

const T0: &str = "2026-11-30T15:04:05Z";

fn at(minutes: i64) -> DateTime<Utc> {
    t(T0) + Duration::minutes(minutes)
}

fn officer() -> Agent {
    Agent::new("U-GM-17", UserRole::GuardaMunicipal, Uuid::from_u128(0xA1))
}
/// Same officer, second device.
fn officer_tablet() -> Agent {
    Agent::new("U-GM-17", UserRole::GuardaMunicipal, Uuid::from_u128(0xA2))
}
fn other_officer() -> Agent {
    Agent::new("U-GM-99", UserRole::GuardaMunicipal, Uuid::from_u128(0xA9))
}
fn office() -> Agent {
    Agent::new("U-UT-1", UserRole::Office, Uuid::from_u128(0xB1))
}
fn office2() -> Agent {
    Agent::new("U-UT-2", UserRole::Office, Uuid::from_u128(0xB2))
}
fn coordinator() -> Agent {
    Agent::new("U-COORD-P10", UserRole::Coordinator, Uuid::from_u128(0xC1))
}

fn sha(n: u8) -> String {
    hex::encode(Sha256::digest([n]))
}

/// A real verdict: auxiliary P08 (CNH expired) driving GHI7J89, whose permit 0004 was not
/// renewed and has an unpaid fine.
fn verdict() -> Verdict {
    let reg = sample_registry();
    let input = CheckInput {
        vehicle: VehicleQuery::Plate(Plate::parse("GHI7J89").unwrap()),
        driver: DriverId::parse("cpf:78000751925").unwrap(),
        at: t(T0),
        observation: Observation::default(),
        registry_refreshed_at: Some(t("2026-11-30T08:00:00Z")),
    };
    crate::rules::check_registry(&reg.index(), &input, &RulesConfig::default())
}

fn draft() -> InfractionDraft {
    let v = verdict();
    InfractionDraft {
        id: Uuid::now_v7(),
        number: Some("GM-2026-000123".into()),
        issuing_body: "Guarda Municipal de Americana".into(),
        occurred_at: t(T0),
        monotonic: 987_654_321,
        position: Some(Position {
            lat: -22.7395,
            lon: -47.3317,
            accuracy_m: 8.5,
        }),
        stand_id: Some("S02".into()),
        plate: Plate::parse("ghi 7j89").unwrap(),
        driver: PersonRef::Registry("P08".into()),
        driver_role: DriverRole::Auxiliary,
        permit_number: Some("0004".into()),
        holder_id: Some("P07".into()),
        facts: "Motorista auxiliar conduzindo o táxi com CNH vencida; alvará sem renovação.".into(),
        legal_basis: LegalBasis::from_findings(&v.findings),
        verdict: Some(v),
        witnesses: Vec::new(),
        photos: vec![sha(1), sha(2).to_uppercase()],
    }
}

/// A draft auto whose vehicle the officer has not confirmed yet.
fn unconfirmed() -> RecordDoc {
    RecordDoc::new_infraction(draft(), &officer()).unwrap()
}

/// A draft auto with its vehicle confirmed by the officer (ready to issue).
fn infraction() -> RecordDoc {
    let mut r = unconfirmed();
    r.confirm_vehicle(&officer(), at(1)).unwrap();
    r
}

fn issued() -> RecordDoc {
    let mut r = infraction();
    r.issue(
        &officer(),
        at(5),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &test_key(),
    )
    .unwrap();
    r
}

fn transgression_draft(permit: &str, driver: &str, gravity: Gravity) -> TransgressionDraft {
    TransgressionDraft {
        id: Uuid::now_v7(),
        occurred_at: t(T0),
        monotonic: 42,
        position: None,
        permit_number: permit.into(),
        driver_id: driver.into(),
        gravity,
        facts: "Discussão e gritaria no ponto (art. 19, VII).".into(),
        legal_basis: vec![LegalBasis {
            rule_id: "R28".into(),
            citation: "Lei 4.019/2004, art. 19, VII".into(),
        }],
        witnesses: Vec::new(),
        photos: Vec::new(),
    }
}

fn witness(id: &str) -> WitnessInput {
    WitnessInput {
        person: PersonRef::Observed(id.into()),
        statement: "Vi o condutor gritando com um colega.".into(),
    }
}

fn copy(doc: &mut RecordDoc) -> RecordDoc {
    RecordDoc::load(&doc.save()).unwrap()
}

fn merged(a: &RecordDoc, b: &RecordDoc) -> RecordDoc {
    let mut a = a.clone();
    let mut b = b.clone();
    a.merge(&mut b).unwrap();
    a
}

fn sorted_heads(doc: &mut RecordDoc) -> Vec<automerge::ChangeHash> {
    let mut h = doc.heads();
    h.sort();
    h
}

fn next_status(events: &[EventKind], doc: &mut RecordDoc, start: i64) {
    for (i, e) in events.iter().enumerate() {
        doc.append_event(&office(), at(start + i as i64), e.clone())
            .unwrap_or_else(|err| panic!("{e:?}: {err}"));
    }
}

fn to_decision() -> Vec<EventKind> {
    vec![
        EventKind::Reviewed { note: None },
        EventKind::PenaltyProposed {
            penalty: PenaltyKind::Fine,
        },
        EventKind::PenaltyDecided {
            penalty: PenaltyKind::Fine,
        },
    ]
}

// ------------------------------------------------------------------ creation and round trip

#[test]
fn infraction_fields_round_trip_through_save_and_load() {
    let d = draft();
    let mut r = RecordDoc::new_infraction(d.clone(), &officer()).unwrap();
    let v = r.view().unwrap();
    assert_eq!(v.schema_version, SCHEMA_VERSION);
    assert_eq!(v.id, d.id);
    assert_eq!(r.id(), d.id);
    assert_eq!(v.kind, RecordKind::Infraction);
    assert_eq!(v.number.as_deref(), Some("GM-2026-000123"));
    assert_eq!(v.issuing_body, "Guarda Municipal de Americana");
    assert_eq!(v.author, officer());
    assert_eq!(v.occurred_at, t(T0));
    assert_eq!(v.monotonic, 987_654_321);
    assert_eq!(v.position, d.position);
    assert_eq!(v.stand_id.as_deref(), Some("S02"));
    let vehicle = v.vehicle.clone().unwrap();
    assert_eq!(
        (vehicle.plate_raw.as_str(), vehicle.plate.as_str()),
        ("ghi 7j89", "GHI7J89")
    );
    assert_eq!(v.driver.person, PersonRef::Registry("P08".into()));
    assert_eq!(v.driver.role, DriverRole::Auxiliary);
    assert_eq!(v.permit_number.as_deref(), Some("0004"));
    assert_eq!(v.holder_id.as_deref(), Some("P07"));
    // R33: the auxiliary and the holder are both charged.
    assert_eq!(
        v.charged,
        vec![
            PersonRef::Registry("P08".into()),
            PersonRef::Registry("P07".into())
        ]
    );
    assert_eq!(v.facts, d.facts);
    assert!(!v.legal_basis.is_empty());
    assert_eq!(v.legal_basis, d.legal_basis);
    assert_eq!(v.verdict().unwrap(), d.verdict);
    let stamp = v.verdict().unwrap().unwrap().registry;
    assert_eq!(stamp.version, 7);
    assert!(stamp.age_seconds.is_some());
    // Hashes are normalised to lower case.
    assert_eq!(v.photos, vec![sha(1), sha(2)]);
    assert_eq!(v.signature, None);
    assert_eq!(v.status, Status::Draft);
    assert!(!v.sealed);
    assert!(v.events.is_empty() && v.invalid_events.is_empty() && v.conflicts.is_empty());

    let bytes = r.save();
    let mut loaded = RecordDoc::load(&bytes).unwrap();
    assert_eq!(loaded.view().unwrap(), v);
    assert_eq!(loaded.kind(), RecordKind::Infraction);
    assert_eq!(sorted_heads(&mut loaded), sorted_heads(&mut r));
    // What was loaded counts as persisted.
    assert!(loaded.save_incremental().is_empty());
}

#[test]
fn incremental_chunks_restore_the_record() {
    let mut r = infraction();
    let mut log = r.save_incremental();
    assert!(!log.is_empty());
    assert!(
        r.save_incremental().is_empty(),
        "nothing new since the last chunk"
    );
    r.issue(
        &officer(),
        at(5),
        Signature::Signed { sha256: sha(9) },
        &test_key(),
    )
    .unwrap();
    let chunk = r.save_incremental();
    assert!(!chunk.is_empty());
    log.extend_from_slice(&chunk);
    r.add_photo(&officer(), at(6), &sha(3)).unwrap();
    log.extend_from_slice(&r.save_incremental());
    let restored = RecordDoc::load(&log).unwrap();
    assert_eq!(restored.view().unwrap(), r.view().unwrap());

    // A snapshot followed by later chunks, and load_incremental into an older copy.
    let mut old = RecordDoc::load(&r.save()).unwrap();
    r.append_event(&office(), at(10), EventKind::Reviewed { note: None })
        .unwrap();
    let chunk = r.save_incremental();
    old.load_incremental(&chunk).unwrap();
    assert_eq!(old.view().unwrap(), r.view().unwrap());
    // Bytes of another record are refused and leave the copy as it was.
    let mut other = infraction();
    let before = old.view().unwrap();
    assert!(matches!(
        old.load_incremental(&other.save()),
        Err(RecordError::DifferentRecords { .. }) | Err(RecordError::Malformed { .. })
    ));
    assert_eq!(old.view().unwrap(), before);
}

#[test]
fn transgression_fields_round_trip_and_come_from_the_registry() {
    let reg = sample_registry();
    let idx = reg.index();
    let mut d = transgression_draft("0001", "P02", Gravity::Serious);
    d.witnesses = vec![witness("obs-1")];
    let mut r = RecordDoc::new_transgression(d.clone(), &coordinator(), &idx, "S01").unwrap();
    let v = r.view().unwrap();
    assert_eq!(v.kind, RecordKind::Transgression);
    assert_eq!(v.gravity, Some(Gravity::Serious));
    assert_eq!(v.stand_id.as_deref(), Some("S01"));
    assert_eq!(v.holder_id.as_deref(), Some("P01"));
    assert_eq!(v.driver.role, DriverRole::Auxiliary);
    assert_eq!(
        v.vehicle.as_ref().map(|x| x.plate.as_str()),
        Some("BRA2E19")
    );
    assert_eq!(
        v.charged,
        vec![
            PersonRef::Registry("P02".into()),
            PersonRef::Registry("P01".into())
        ]
    );
    assert!(
        v.issuing_body.contains("Terminal Urbano"),
        "{}",
        v.issuing_body
    );
    assert_eq!(v.number, None);
    assert_eq!(v.witnesses.len(), 1);
    assert_eq!(v.witnesses[0].person, PersonRef::Observed("obs-1".into()));
    assert_eq!(v.witnesses[0].added_by, "U-COORD-P10");
    assert_eq!(v.author, coordinator());
    assert_eq!(RecordDoc::load(&r.save()).unwrap().view().unwrap(), v);
    assert_eq!(transgression_in_scope(&v, &idx, "S01"), Ok(()));
    assert!(matches!(
        transgression_in_scope(&v, &idx, "S02"),
        Err(RecordError::OutsideStand { .. })
    ));
}

#[test]
fn only_art_36_bodies_issue_autos() {
    for agent in [coordinator(), office()] {
        let err = RecordDoc::new_infraction(draft(), &agent).unwrap_err();
        assert!(matches!(err, RecordError::RoleNotAllowed { .. }), "{err:?}");
        assert!(err.to_string().contains("art. 36"), "{err}");
    }
    let inspector = Agent::new(
        "U-SETRANS-3",
        UserRole::SecretariaInspector,
        Uuid::from_u128(7),
    );
    assert!(RecordDoc::new_infraction(draft(), &inspector).is_ok());

    let mut d = draft();
    d.holder_id = None;
    assert!(matches!(
        RecordDoc::new_infraction(d, &officer()),
        Err(RecordError::MissingField { .. })
    ));
    let mut d = draft();
    d.id = Uuid::from_u128(5);
    assert!(matches!(
        RecordDoc::new_infraction(d, &officer()),
        Err(RecordError::Invalid { field: "id", .. })
    ));
    let mut d = draft();
    d.photos.push("not-a-hash".into());
    assert!(matches!(
        RecordDoc::new_infraction(d, &officer()),
        Err(RecordError::InvalidHash { .. })
    ));
    let mut d = draft();
    d.position = Some(Position {
        lat: 123.0,
        lon: 0.0,
        accuracy_m: 1.0,
    });
    assert!(RecordDoc::new_infraction(d, &officer()).is_err());
    // A third party at the wheel: recorded, not charged; the holder is (art. 31).
    let mut d = draft();
    d.driver = PersonRef::Observed("obs-77".into());
    d.driver_role = DriverRole::Unauthorised;
    let v = RecordDoc::new_infraction(d, &officer())
        .unwrap()
        .view()
        .unwrap();
    assert_eq!(v.charged, vec![PersonRef::Registry("P07".into())]);
    assert_eq!(v.driver.person, PersonRef::Observed("obs-77".into()));
}

// ------------------------------------------------------------------ sealing

#[test]
fn evidence_is_editable_before_issue_and_sealed_after() {
    let mut r = infraction();
    r.set_facts(&officer(), at(1), "Fatos revistos antes da emissão.")
        .unwrap();
    r.set_legal_basis(
        &officer(),
        at(1),
        &[LegalBasis {
            rule_id: "R10".into(),
            citation: "Lei 4.019/2004, art. 2, II".into(),
        }],
    )
    .unwrap();
    r.set_verdict(&officer(), at(1), &verdict()).unwrap();
    // Only the author edits the draft.
    assert!(matches!(
        r.set_facts(&other_officer(), at(1), "outro texto"),
        Err(RecordError::NotAuthor { .. })
    ));
    assert_eq!(r.view().unwrap().facts, "Fatos revistos antes da emissão.");

    r.issue(
        &officer(),
        at(5),
        Signature::Signed { sha256: sha(9) },
        &test_key(),
    )
    .unwrap();
    let v = r.view().unwrap();
    assert!(v.sealed);
    assert_eq!(v.status, Status::Issued);
    assert_eq!(v.signature, Some(Signature::Signed { sha256: sha(9) }));

    let err = r
        .set_facts(&officer(), at(6), "alteração tardia")
        .unwrap_err();
    assert_eq!(err, RecordError::Sealed { field: "facts" });
    assert!(err.to_string().contains("lacrado"), "{err}");
    assert_eq!(
        r.set_verdict(&officer(), at(6), &verdict()),
        Err(RecordError::Sealed { field: "verdict" })
    );
    assert_eq!(
        r.set_legal_basis(&officer(), at(6), &[]),
        Err(RecordError::Sealed {
            field: "legal_basis"
        })
    );
    assert_eq!(
        r.issue(
            &officer(),
            at(7),
            Signature::Signed { sha256: sha(9) },
            &test_key()
        ),
        Err(RecordError::AlreadyIssued)
    );
    assert_eq!(r.view().unwrap().facts, "Fatos revistos antes da emissão.");

    // Late evidence is appended, never replacing what was sealed.
    r.add_witness(&officer(), at(8), &witness("obs-2")).unwrap();
    assert!(r.add_photo(&officer(), at(8), &sha(3)).unwrap());
    assert!(
        !r.add_photo(&officer(), at(8), &sha(3)).unwrap(),
        "same photo twice"
    );
    assert!(matches!(
        r.add_photo(&other_officer(), at(8), &sha(4)),
        Err(RecordError::NotAuthor { .. })
    ));
    let v = r.view().unwrap();
    assert_eq!(v.photos, vec![sha(1), sha(2), sha(3)]);
    assert_eq!(v.witnesses.len(), 1);
    assert_eq!(
        r.assign_number(&officer(), at(9), "GM-2026-000999"),
        Err(RecordError::NumberAlreadyAssigned {
            number: "GM-2026-000123".into()
        })
    );
}

#[test]
fn a_record_waits_for_a_number_and_is_issued_without_one() {
    let mut d = draft();
    d.number = None;
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    r.confirm_vehicle(&officer(), at(1)).unwrap();
    r.issue(
        &officer(),
        at(5),
        Signature::Signed { sha256: sha(9) },
        &test_key(),
    )
    .unwrap();
    assert_eq!(r.view().unwrap().number, None);
    // The number is not evidence: it arrives after issuing, once.
    r.assign_number(&officer(), at(60), "GM-2026-000200")
        .unwrap();
    assert_eq!(r.view().unwrap().number.as_deref(), Some("GM-2026-000200"));
    assert!(r.assign_number(&office(), at(61), "UT-1").is_err());
}

#[test]
fn issue_needs_facts_and_legal_basis() {
    let mut d = draft();
    d.legal_basis.clear();
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    let sig = Signature::Missing {
        reason: "condutor evadiu-se".into(),
    };
    assert!(matches!(
        r.issue(&officer(), at(5), sig.clone(), &test_key()),
        Err(RecordError::MissingField { .. })
    ));
    assert!(!r.is_sealed().unwrap());
    let mut d = draft();
    d.facts = "   ".into();
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    assert!(matches!(
        r.issue(&officer(), at(5), sig, &test_key()),
        Err(RecordError::MissingField { .. })
    ));
    assert!(matches!(
        infraction().issue(
            &officer(),
            at(5),
            Signature::Missing { reason: " ".into() },
            &test_key()
        ),
        Err(RecordError::MissingField { .. })
    ));
    assert!(matches!(
        infraction().issue(
            &other_officer(),
            at(5),
            Signature::Signed { sha256: sha(1) },
            &test_key()
        ),
        Err(RecordError::NotAuthor { .. })
    ));
}

// ------------------------------------------------------------------ coordinators (art. 17)

#[test]
fn coordinator_outside_their_stand_is_refused() {
    let reg = sample_registry();
    let idx = reg.index();
    // P10 coordinates S01; permit 0002 is at S02.
    let err = RecordDoc::new_transgression(
        transgression_draft("0002", "P05", Gravity::Light),
        &coordinator(),
        &idx,
        "S01",
    )
    .unwrap_err();
    assert_eq!(
        err,
        RecordError::OutsideStand {
            permit: "0002".into(),
            permit_stand: "S02".into(),
            coordinator_stand: "S01".into(),
        }
    );
    assert!(err.to_string().contains("art. 17"), "{err}");
    // A driver who is not on the stand's permit.
    assert!(matches!(
        RecordDoc::new_transgression(
            transgression_draft("0001", "P04", Gravity::Light),
            &coordinator(),
            &idx,
            "S01"
        ),
        Err(RecordError::NotDriverOfPermit { .. })
    ));
    assert!(matches!(
        RecordDoc::new_transgression(
            transgression_draft("9999", "P01", Gravity::Light),
            &coordinator(),
            &idx,
            "S01"
        ),
        Err(RecordError::UnknownPermit { .. })
    ));
    // An officer is not a coordinator.
    assert!(matches!(
        RecordDoc::new_transgression(
            transgression_draft("0001", "P01", Gravity::Light),
            &officer(),
            &idx,
            "S01"
        ),
        Err(RecordError::RoleNotAllowed { .. })
    ));
}

#[test]
fn serious_report_needs_witnesses_and_light_one_is_settled_by_the_coordinator() {
    let reg = sample_registry();
    let idx = reg.index();
    let c = coordinator();

    let mut serious = RecordDoc::new_transgression(
        transgression_draft("0001", "P01", Gravity::Serious),
        &c,
        &idx,
        "S01",
    )
    .unwrap();
    let sig = Signature::Missing {
        reason: "comunicação por escrito do coordenador".into(),
    };
    let err = serious
        .issue(&c, at(5), sig.clone(), &test_key())
        .unwrap_err();
    assert_eq!(err, RecordError::WitnessRequired);
    assert!(err.to_string().contains("testemunha"), "{err}");
    assert_eq!(serious.view().unwrap().status, Status::Draft);
    assert!(!serious.is_sealed().unwrap());
    serious.add_witness(&c, at(6), &witness("obs-3")).unwrap();
    serious.issue(&c, at(7), sig.clone(), &test_key()).unwrap();
    assert_eq!(
        serious.settle_by_coordinator(&c, at(8), WarningKind::Verbal),
        Err(RecordError::OnlyLightSettled)
    );
    serious.forward_to_office(&c, at(8)).unwrap();
    assert_eq!(serious.view().unwrap().status, Status::ForwardedToOffice);
    serious
        .append_event(&office(), at(60), EventKind::Reviewed { note: None })
        .unwrap();
    assert_eq!(serious.view().unwrap().status, Status::UnderReview);

    let mut light = RecordDoc::new_transgression(
        transgression_draft("0001", "P03", Gravity::Light),
        &c,
        &idx,
        "S01",
    )
    .unwrap();
    light.issue(&c, at(5), sig, &test_key()).unwrap();
    // The office cannot settle on the coordinator's behalf.
    assert!(matches!(
        light.append_event(
            &office(),
            at(6),
            EventKind::SettledByCoordinator {
                warning: WarningKind::Written
            }
        ),
        Err(RecordError::RoleNotAllowed { .. })
    ));
    light
        .settle_by_coordinator(&c, at(6), WarningKind::Written)
        .unwrap();
    let v = light.view().unwrap();
    assert_eq!(v.status, Status::SettledByCoordinator);
    assert!(matches!(
        v.events.last().map(|e| &e.event),
        Some(EventKind::SettledByCoordinator {
            warning: WarningKind::Written
        })
    ));
    assert!(v.invalid_events.is_empty());
}

// ------------------------------------------------------------------ merging

#[test]
fn copies_edited_apart_keep_both_edits_after_merge_either_way() {
    let mut a = issued();
    let mut b = copy(&mut a); // the office's copy
    a.add_witness(&officer(), at(30), &witness("obs-5"))
        .unwrap();
    b.append_event(
        &office(),
        at(60),
        EventKind::Reviewed {
            note: Some("ok".into()),
        },
    )
    .unwrap();

    let mut ab = merged(&a, &b);
    let mut ba = merged(&b, &a);
    assert_eq!(sorted_heads(&mut ab), sorted_heads(&mut ba));
    assert_eq!(sorted_heads(&mut ab).len(), 2, "two concurrent heads");
    let (vab, vba) = (ab.view().unwrap(), ba.view().unwrap());
    assert_eq!(vab, vba);
    assert_eq!(vab.witnesses.len(), 1);
    assert_eq!(vab.witnesses[0].added_by, "U-GM-17");
    assert_eq!(vab.events.len(), 2);
    assert_eq!(vab.status, Status::UnderReview);
    assert!(vab.conflicts.is_empty());
    // Merging other records is refused.
    assert!(matches!(
        ab.merge(&mut infraction()),
        Err(RecordError::DifferentRecords { .. })
    ));
}

#[test]
fn concurrent_events_both_survive_and_a_second_appeal_is_flagged() {
    let mut r = issued();
    next_status(&to_decision(), &mut r, 10);
    r.append_event(
        &office(),
        at(20),
        EventKind::Notified {
            method: NotificationMethod::PersonalSignature,
            on: NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
            appeal_deadline: None,
            notification: None,
        },
    )
    .unwrap();
    let mut a = copy(&mut r);
    let mut b = copy(&mut r);
    let on = NaiveDate::from_ymd_opt(2026, 12, 5).unwrap();
    a.append_event(&office(), at(30), EventKind::AppealFiled { on })
        .unwrap();
    b.append_event(&office2(), at(31), EventKind::AppealFiled { on })
        .unwrap();
    let v = merged(&a, &b).view().unwrap();
    assert_eq!(v.events.len(), 7);
    assert_eq!(v.status, Status::AppealFiled);
    assert_eq!(v.invalid_events.len(), 1);
    let bad = &v.invalid_events[0];
    assert_eq!(bad.kind, "appeal_filed");
    assert!(bad.reason.contains("art. 33"), "{}", bad.reason);
    // The later one (by timestamp) is the flagged one, on every copy.
    assert_eq!(bad.at, Some(at(31)));
    assert_eq!(merged(&b, &a).view().unwrap(), v);
}

#[test]
fn concurrent_scalar_edits_are_conflicts_and_the_office_resolves_them() {
    let mut d = draft();
    d.number = None;
    let mut phone = RecordDoc::new_infraction(d, &officer()).unwrap();
    let mut desk = copy(&mut phone);
    let mut tablet = copy(&mut phone);

    phone
        .assign_number(&officer(), at(1), "GM-2026-000124")
        .unwrap();
    desk.assign_number(&office(), at(2), "UT-2026-900001")
        .unwrap();
    phone
        .set_facts(&officer(), at(3), "Versão do celular.")
        .unwrap();
    tablet
        .set_facts(&officer_tablet(), at(4), "Versão do tablet.")
        .unwrap();

    let mut m = merged(&merged(&phone, &desk), &tablet);
    let conflicts = m.conflicts().unwrap();
    let fields: Vec<&str> = conflicts.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, vec!["facts", "number"], "{conflicts:?}");
    let number = &conflicts[1];
    let values: Vec<&serde_json::Value> = number.values.iter().map(|v| &v.value).collect();
    assert!(values.contains(&&serde_json::json!("GM-2026-000124")));
    assert!(values.contains(&&serde_json::json!("UT-2026-900001")));
    let devices: Vec<Option<Uuid>> = number.values.iter().map(|v| v.device_id).collect();
    assert!(devices.contains(&Some(officer().device_id)));
    assert!(devices.contains(&Some(office().device_id)));
    let facts_devices: Vec<Option<Uuid>> =
        conflicts[0].values.iter().map(|v| v.device_id).collect();
    assert!(facts_devices.contains(&Some(officer_tablet().device_id)));
    let v = m.view().unwrap();
    assert_eq!(v.conflicts, conflicts);
    assert!(["GM-2026-000124", "UT-2026-900001"].contains(&v.number.as_deref().unwrap_or("")));

    // Resolution: office only, one of the shown values, recorded as an event.
    let chosen = serde_json::json!("GM-2026-000124");
    assert!(matches!(
        m.resolve_conflict(&officer(), at(50), "number", &chosen),
        Err(RecordError::RoleNotAllowed { .. })
    ));
    assert!(matches!(
        m.resolve_conflict(&office(), at(50), "number", &serde_json::json!("X-1")),
        Err(RecordError::Invalid { .. })
    ));
    assert!(matches!(
        m.resolve_conflict(&office(), at(50), "stand_id", &serde_json::json!("S02")),
        Err(RecordError::NoConflict { .. })
    ));
    let before = m.view().unwrap();
    let mut server = m.fork();
    server
        .resolve_conflict(&office(), at(50), "number", &chosen)
        .unwrap();
    let after = server.view().unwrap();
    assert_eq!(after.number.as_deref(), Some("GM-2026-000124"));
    assert_eq!(
        after
            .conflicts
            .iter()
            .map(|c| c.field.as_str())
            .collect::<Vec<_>>(),
        vec!["facts"]
    );
    assert!(matches!(
        after.events.last().map(|e| &e.event),
        Some(EventKind::ConflictResolved { field, value }) if field == "number" && *value == chosen
    ));
    // The server accepts it: the number only narrowed to a value it already had.
    assert_eq!(sealed_changes(&before, &after), Vec::<&str>::new());
    assert_eq!(vet(Some(&before), &after, &office()), vec![]);
}

#[test]
fn conflict_on_sealed_facts_can_be_resolved_but_not_replaced() {
    // Two devices of the officer rewrite the facts before issuing; one of them issues.
    let mut phone = infraction();
    let mut tablet = copy(&mut phone);
    phone.set_facts(&officer(), at(1), "Versão A.").unwrap();
    tablet
        .set_facts(&officer_tablet(), at(2), "Versão B.")
        .unwrap();
    phone
        .issue(
            &officer(),
            at(3),
            Signature::Signed { sha256: sha(9) },
            &test_key(),
        )
        .unwrap();
    let mut m = merged(&phone, &tablet);
    let v = m.view().unwrap();
    assert!(v.sealed);
    assert_eq!(v.conflicts.len(), 1);
    assert!(matches!(
        m.set_facts(&officer(), at(4), "Versão C."),
        Err(RecordError::Sealed { field: "facts" })
    ));
    let mut server = m.fork();
    server
        .resolve_conflict(&office(), at(9), "facts", &serde_json::json!("Versão B."))
        .unwrap();
    let after = server.view().unwrap();
    assert_eq!(after.facts, "Versão B.");
    assert!(after.conflicts.is_empty());
    assert_eq!(vet(Some(&v), &after, &office()), vec![]);
    // Narrowing without the resolution event is not accepted.
    let mut sneaky = m.fork();
    sneaky
        .automerge_mut()
        .put(ROOT, "facts", "Versão B.")
        .unwrap();
    let after = sneaky.view().unwrap();
    assert_eq!(sealed_changes(&v, &after), Vec::<&str>::new());
    assert_eq!(
        vet(Some(&v), &after, &office()),
        vec![Violation::UnrecordedResolution {
            field: "facts".into()
        }]
    );
}

#[test]
fn a_draft_conflict_is_settled_by_its_author_or_by_the_office() {
    let mut phone = infraction();
    let mut tablet = copy(&mut phone);
    phone.set_facts(&officer(), at(1), "Versão A.").unwrap();
    tablet
        .set_facts(&officer_tablet(), at(2), "Versão B.")
        .unwrap();
    let m = merged(&phone, &tablet);
    let before = m.view().unwrap();
    assert!(!before.sealed);
    assert_eq!(before.conflicts.len(), 1);
    // The author rewrites the draft: allowed, and the conflict is gone.
    let mut by_author = m.clone();
    by_author
        .set_facts(&officer(), at(3), "Versão final.")
        .unwrap();
    let after = by_author.view().unwrap();
    assert!(after.conflicts.is_empty());
    assert_eq!(vet(Some(&before), &after, &officer()), vec![]);
    // The office picks one of the versions (with its event); it may not write its own text.
    let mut by_office = m.clone();
    by_office
        .resolve_conflict(&office(), at(3), "facts", &serde_json::json!("Versão A."))
        .unwrap();
    assert_eq!(
        vet(Some(&before), &by_office.view().unwrap(), &office()),
        vec![]
    );
    let mut office_text = m.clone();
    office_text.automerge_mut().set_actor(office().actor_id());
    office_text
        .automerge_mut()
        .put(ROOT, "facts", "Texto da Unidade.")
        .unwrap();
    assert_eq!(
        vet(Some(&before), &office_text.view().unwrap(), &office()),
        vec![Violation::NotAuthor {
            field: "facts".into()
        }]
    );
}

// ------------------------------------------------------------------ replay

#[test]
fn an_invalid_event_order_is_kept_and_flagged() {
    let mut r = issued();
    next_status(&to_decision(), &mut r, 10);
    let decided = EventKind::AppealDecided {
        outcome: Outcome::Upheld,
        penalty: None,
    };
    // The local API refuses it…
    assert!(matches!(
        r.append_event(&office(), at(20), decided.clone()),
        Err(RecordError::EventRefused { .. })
    ));
    // …but an old or faulty client may still write it; it is kept and flagged.
    let bad_id = r
        .append_event_unchecked(&office(), at(20), decided)
        .unwrap();
    r.append_event(
        &office(),
        at(21),
        EventKind::Notified {
            method: NotificationMethod::PostalReceipt,
            on: NaiveDate::from_ymd_opt(2026, 12, 3).unwrap(),
            appeal_deadline: None,
            notification: None,
        },
    )
    .unwrap();
    let v = copy(&mut r).view().unwrap();
    assert_eq!(v.status, Status::Notified);
    assert_eq!(v.penalty, Some(PenaltyKind::Fine));
    assert_eq!(v.notified_on, NaiveDate::from_ymd_opt(2026, 12, 3));
    assert_eq!(v.events.len(), 6);
    assert_eq!(v.invalid_events.len(), 1);
    assert_eq!(v.invalid_events[0].id, bad_id);
    assert_eq!(v.invalid_events[0].kind, "appeal_decided");
    assert!(
        v.invalid_events[0]
            .reason
            .contains("exige antes um recurso interposto")
    );
    let flagged = v.events.iter().find(|e| e.id == bad_id).unwrap();
    assert!(!flagged.valid);
    assert!(v.events.iter().filter(|e| e.id != bad_id).all(|e| e.valid));

    // An event from a role that may not write it is flagged too.
    let mut r2 = issued();
    r2.append_event_unchecked(
        &coordinator(),
        at(10),
        EventKind::PenaltyDecided {
            penalty: PenaltyKind::Revocation,
        },
    )
    .unwrap();
    let v2 = r2.view().unwrap();
    assert_eq!(v2.status, Status::Issued);
    assert_eq!(v2.penalty, None);
    assert!(
        v2.invalid_events[0].reason.contains("coordenador"),
        "{:?}",
        v2.invalid_events
    );

    // Back-dating an event before accepted ones is refused locally.
    let mut r3 = issued();
    assert!(matches!(
        r3.append_event(&office(), at(-60), EventKind::Reviewed { note: None }),
        Err(RecordError::EventRefused { .. })
    ));
}

#[test]
fn replay_is_deterministic_whatever_the_merge_order() {
    let base = {
        let mut r = issued();
        copy(&mut r)
    };
    let mut a = base.clone();
    let mut b = base.clone();
    let mut c = base.clone();
    // Office 1 reviews at 10:00; office 2 annuls at 09:30 on another copy; office 1 also
    // proposes a penalty at 10:05. Replayed by time: annulled first, the rest flagged.
    a.append_event(&office(), at(60), EventKind::Reviewed { note: None })
        .unwrap();
    a.append_event(
        &office(),
        at(65),
        EventKind::PenaltyProposed {
            penalty: PenaltyKind::WrittenWarning,
        },
    )
    .unwrap();
    b.append_event(
        &office2(),
        at(30),
        EventKind::Annulled {
            reason: "placa digitada errada".into(),
        },
    )
    .unwrap();
    c.add_witness(&officer(), at(40), &witness("obs-9"))
        .unwrap();

    let orders: [[&RecordDoc; 3]; 4] = [[&a, &b, &c], [&c, &b, &a], [&b, &a, &c], [&c, &a, &b]];
    let views: Vec<RecordView> = orders
        .iter()
        .map(|[x, y, z]| merged(&merged(x, y), z).view().unwrap())
        .collect();
    for v in &views[1..] {
        assert_eq!(v, &views[0]);
    }
    let v = &views[0];
    assert_eq!(v.status, Status::Annulled);
    let kinds: Vec<&str> = v.events.iter().map(|e| e.event.name()).collect();
    assert_eq!(
        kinds,
        ["issued", "annulled", "reviewed", "penalty_proposed"]
    );
    assert_eq!(
        v.invalid_events
            .iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>(),
        ["reviewed", "penalty_proposed"]
    );
    assert_eq!(v.witnesses.len(), 1);
}

#[test]
fn full_office_workflow_reaches_a_final_decision() {
    let mut r = issued();
    next_status(&to_decision(), &mut r, 10);
    let d = |day| NaiveDate::from_ymd_opt(2026, 12, day).unwrap();
    let steps = [
        EventKind::Notified {
            method: NotificationMethod::PersonalSignature,
            on: d(1),
            appeal_deadline: None,
            notification: None,
        },
        EventKind::ReconsiderationFiled { on: d(3) },
        EventKind::ReconsiderationDecided {
            outcome: Outcome::Modified,
            penalty: Some(PenaltyKind::WrittenWarning),
        },
        EventKind::Notified {
            method: NotificationMethod::PostalReceipt,
            on: d(10),
            appeal_deadline: None,
            notification: None,
        },
        EventKind::AppealFiled { on: d(12) },
        EventKind::AppealDecided {
            outcome: Outcome::Reversed,
            penalty: None,
        },
        EventKind::Archived,
    ];
    // Each step recorded on the day it happened: a ruling never before the filing it rules on.
    let days = [1, 3, 4, 10, 12, 15, 16];
    for (e, day) in steps.iter().zip(days) {
        let when = t(&format!("2026-12-{day:02}T15:00:00Z"));
        r.append_event(&office(), when, e.clone())
            .unwrap_or_else(|err| panic!("{e:?}: {err}"));
    }
    let v = r.view().unwrap();
    assert_eq!(v.status, Status::Archived);
    assert_eq!(v.penalty, None);
    assert_eq!(v.notified_on, Some(d(10)));
    assert!(v.invalid_events.is_empty());
    // Nothing follows an archived record.
    assert!(
        r.append_event(&office(), at(40), EventKind::Reviewed { note: None })
            .is_err()
    );
}

// ------------------------------------------------------------------ bytes

#[test]
fn garbage_and_truncated_bytes_are_errors_not_panics() {
    let mut r = issued();
    r.add_witness(&officer(), at(8), &witness("obs-2")).unwrap();
    let full = r.save();
    for len in 0..full.len() {
        assert!(
            RecordDoc::load(&full[..len]).is_err(),
            "prefix of {len} bytes loaded"
        );
    }
    let mut flips_loaded = 0;
    for i in 0..full.len() {
        let mut bytes = full.clone();
        bytes[i] ^= 0x55;
        if let Ok(doc) = RecordDoc::load(&bytes) {
            // A flip the checksum does not cover must still yield a readable record.
            doc.view().unwrap();
            flips_loaded += 1;
        }
    }
    assert!(
        flips_loaded < full.len() / 10,
        "{flips_loaded} corrupted copies loaded"
    );
    let mut x: u32 = 0x1234_5678;
    let garbage: Vec<u8> = (0..600)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect();
    assert!(RecordDoc::load(&garbage).is_err());
    let mut with_magic = full[..8].to_vec();
    with_magic.extend_from_slice(&garbage);
    assert!(RecordDoc::load(&with_magic).is_err());

    // A valid Automerge document that is not a record.
    let mut other = automerge::AutoCommit::new();
    other.put(ROOT, "hello", "world").unwrap();
    assert!(matches!(
        RecordDoc::load(&other.save()),
        Err(RecordError::Malformed { .. })
    ));
    // A record from a newer app.
    let mut newer = r.fork();
    newer
        .automerge_mut()
        .put(ROOT, "schema_version", 99_u64)
        .unwrap();
    assert_eq!(
        RecordDoc::load(&newer.save()).unwrap_err(),
        RecordError::UnsupportedSchema { version: 99 }
    );
}

#[test]
fn a_malformed_event_is_kept_and_flagged_not_fatal() {
    let mut r = issued();
    let events = match automerge::ReadDoc::get(r.automerge(), ROOT, "events").unwrap() {
        Some((automerge::Value::Object(_), id)) => id,
        _ => panic!("no events list"),
    };
    let d = r.automerge_mut();
    let e = d
        .insert_object(&events, 1, automerge::ObjType::Map)
        .unwrap();
    d.put(&e, "id", "x-1").unwrap();
    d.put(&e, "kind", "teleported").unwrap();
    let v = RecordDoc::load(&r.save()).unwrap().view().unwrap();
    assert_eq!(v.status, Status::Issued);
    assert_eq!(v.invalid_events.len(), 1);
    assert_eq!(v.invalid_events[0].id, "x-1");
    assert_eq!(v.invalid_events[0].kind, "teleported");
}

#[test]
fn typical_infraction_document_is_small() {
    let mut r = infraction();
    let created = r.save().len();
    r.add_witness(&officer(), at(2), &witness("obs-1")).unwrap();
    r.issue(
        &officer(),
        at(5),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &test_key(),
    )
    .unwrap();
    let _ = r.save_incremental();
    r.append_event(&office(), at(60), EventKind::Reviewed { note: None })
        .unwrap();
    let event_chunk = r.save_incremental().len();
    let full = r.save().len();
    let verdict_json = serde_json::to_string(&verdict()).unwrap().len();
    let mut d = draft();
    d.verdict = None;
    let bare = RecordDoc::new_infraction(d, &officer())
        .unwrap()
        .save()
        .len();
    println!(
        "infraction: created {created} B (verdict JSON alone {verdict_json} B, without it {bare} B); \
         issued + witness + review {full} B; one event as incremental chunk {event_chunk} B"
    );
    assert!(full < 4096, "{full} bytes");
    assert!(bare < 1024, "{bare} bytes");
    assert!(event_chunk < 512, "{event_chunk} bytes");
}

// ------------------------------------------------------------------ server vetting

#[test]
fn vetting_accepts_role_conforming_changes_and_refuses_the_rest() {
    // Creation.
    let mut r = infraction();
    let created = r.view().unwrap();
    assert_eq!(vet(None, &created, &officer()), vec![]);
    let v = vet(None, &created, &coordinator());
    assert!(v.contains(&Violation::KindNotAllowed {
        kind: RecordKind::Infraction,
        role: UserRole::Coordinator
    }));
    assert!(v.contains(&Violation::AuthorMismatch));
    assert!(vet(None, &created, &officer_tablet()).contains(&Violation::AuthorMismatch));

    r.issue(
        &officer(),
        at(5),
        Signature::Signed { sha256: sha(9) },
        &test_key(),
    )
    .unwrap();
    let before = r.view().unwrap();
    assert_eq!(vet(Some(&created), &before, &officer()), vec![]);
    assert!(
        vet(Some(&created), &before, &other_officer())
            .iter()
            .any(|x| matches!(
                x,
                Violation::NotAuthor { .. } | Violation::EventNotAllowed { .. }
            ))
    );

    // The office reviews; the officer adds a witness: both fine for their senders.
    let mut fork = r.fork();
    fork.append_event(&office(), at(60), EventKind::Reviewed { note: None })
        .unwrap();
    let after = fork.view().unwrap();
    let d = diff(Some(&before), &after);
    assert_eq!(d.new_events.len(), 1);
    assert!(d.changed_fields.is_empty() && d.sealed_changes.is_empty());
    assert_eq!(vet(Some(&before), &after, &office()), vec![]);
    // The same bytes sent by someone else: events in another's name.
    assert!(matches!(
        vet(Some(&before), &after, &officer()).as_slice(),
        [
            Violation::EventAuthorMismatch { .. },
            Violation::EventNotAllowed { .. }
        ]
    ));
    let mut fork = r.fork();
    fork.add_witness(&officer(), at(61), &witness("obs-4"))
        .unwrap();
    let after = fork.view().unwrap();
    assert_eq!(diff(Some(&before), &after).new_witnesses.len(), 1);
    assert_eq!(vet(Some(&before), &after, &officer()), vec![]);
    assert!(vet(Some(&before), &after, &other_officer()).contains(
        &Violation::EvidenceNotAllowed {
            role: UserRole::GuardaMunicipal
        }
    ));

    // Tampering through raw Automerge: sealed field rewritten, photo removed.
    let mut fork = r.fork();
    fork.automerge_mut()
        .put(ROOT, "facts", "reescrito")
        .unwrap();
    let photos = match automerge::ReadDoc::get(fork.automerge(), ROOT, "photos").unwrap() {
        Some((automerge::Value::Object(_), id)) => id,
        _ => panic!("no photos list"),
    };
    fork.automerge_mut().delete(&photos, 0_usize).unwrap();
    fork.automerge_mut()
        .put(ROOT, "occurred_at", automerge::ScalarValue::Timestamp(0))
        .unwrap();
    let after = fork.view().unwrap();
    assert_eq!(
        sealed_changes(&before, &after),
        vec!["occurred_at", "facts", "photos"]
    );
    let violations = vet(Some(&before), &after, &officer());
    assert!(violations.contains(&Violation::Sealed {
        field: "facts".into()
    }));
    assert!(violations.contains(&Violation::Sealed {
        field: "photos".into()
    }));

    // An event the coordinator may not write, sent by the coordinator in their own name.
    let mut fork = r.fork();
    fork.append_event_unchecked(
        &coordinator(),
        at(70),
        EventKind::PenaltyDecided {
            penalty: PenaltyKind::Fine,
        },
    )
    .unwrap();
    let after = fork.view().unwrap();
    assert!(matches!(
        vet(Some(&before), &after, &coordinator()).as_slice(),
        [Violation::EventNotAllowed { kind, .. }] if kind == "penalty_decided"
    ));
}

#[test]
fn a_concurrent_pre_issue_edit_arriving_after_issue_is_a_sealed_change() {
    // The server holds the issued record; a second device of the officer edited the facts
    // offline before it learned of the issue. Whichever value Automerge keeps, the sealed
    // field gained a value and the change is refused.
    let mut phone = infraction();
    let mut tablet = copy(&mut phone);
    phone
        .issue(
            &officer(),
            at(5),
            Signature::Signed { sha256: sha(9) },
            &test_key(),
        )
        .unwrap();
    let mut server = copy(&mut phone);
    let before = server.view().unwrap();
    tablet
        .set_facts(&officer_tablet(), at(6), "Reescrito offline.")
        .unwrap();
    let mut fork = server.fork();
    fork.merge(&mut tablet).unwrap();
    let after = fork.view().unwrap();
    assert_eq!(sealed_changes(&before, &after), vec!["facts"]);
    assert!(
        vet(Some(&before), &after, &officer_tablet()).contains(&Violation::Sealed {
            field: "facts".into()
        })
    );
    // Messages are Portuguese.
    assert!(
        Violation::Sealed {
            field: "facts".into()
        }
        .to_string()
        .contains("lacrado")
    );
}

#[test]
fn actor_ids_map_back_to_devices() {
    let dev = Uuid::from_u128(0xDEAD_BEEF);
    assert_eq!(device_of_actor(&actor_for_device(&dev)), Some(dev));
    assert_eq!(
        device_of_actor(&automerge::ActorId::from([1_u8, 2, 3])),
        None
    );
    let mut r = infraction();
    let change = r.automerge_mut().get_last_local_change().unwrap();
    assert_eq!(
        device_of_actor(change.actor_id()),
        Some(officer().device_id)
    );
    let before = r.heads();
    let mut fork = r.fork();
    // A draft cannot be reviewed.
    assert!(
        fork.append_event(&office(), at(1), EventKind::Reviewed { note: None })
            .is_err()
    );
    fork.issue(
        &officer(),
        at(2),
        Signature::Signed { sha256: sha(9) },
        &test_key(),
    )
    .unwrap();
    fork.append_event(&office(), at(3), EventKind::Reviewed { note: None })
        .unwrap();
    assert_eq!(
        fork.change_devices_since(&before),
        vec![Some(officer().device_id), Some(office().device_id)]
    );
    // The fork's incremental save holds exactly the changes since the fork.
    let chunk = fork.save_incremental();
    let mut server = RecordDoc::load(&r.save()).unwrap();
    server.load_incremental(&chunk).unwrap();
    assert_eq!(server.view().unwrap(), fork.view().unwrap());

    let summary = fork.view().unwrap().summary();
    assert_eq!(summary["status"], "under_review");
    assert_eq!(summary["plate"], "GHI7J89");
    assert_eq!(summary["photos"], 2);
    let text = summary.to_string();
    assert!(!text.contains("P08") && !text.contains("CNH"), "{text}");
}

// ------------------------------------------------------------------ appeal deadlines (R34)

#[test]
fn a_ciencia_names_its_notification_and_older_ones_read_without() {
    let older: EventKind = serde_json::from_str(
        r#"{"kind":"notified","method":"personal_signature","on":"2026-11-30"}"#,
    )
    .unwrap();
    assert!(matches!(
        older,
        EventKind::Notified {
            notification: None,
            ..
        }
    ));
    let named = EventKind::Notified {
        method: NotificationMethod::PostalReceipt,
        on: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
        appeal_deadline: None,
        notification: Some("NP-2026-000012".into()),
    };
    let json = serde_json::to_value(&named).unwrap();
    assert_eq!(json["notification"], "NP-2026-000012");
    assert_eq!(serde_json::from_value::<EventKind>(json).unwrap(), named);
    // Absent, the field is not written: older readers see the same payload as before.
    assert!(
        !serde_json::to_string(&older)
            .unwrap()
            .contains("notification")
    );
}

fn notified(on: NaiveDate, appeal_deadline: Option<NaiveDate>) -> EventKind {
    EventKind::Notified {
        method: NotificationMethod::PersonalSignature,
        on,
        appeal_deadline,
        notification: None,
    }
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// When the records of the deadline tests occurred and were decided: before every ciência
/// of November those tests date.
const OCTOBER: &str = "2026-10-01T12:00:00Z";

/// An auto of 1 Oct 2026, issued, reviewed, proposed and decided (a fine) the same day.
fn decided_in_october() -> RecordDoc {
    let mut d = draft();
    d.occurred_at = t(OCTOBER);
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    r.confirm_vehicle(&officer(), t(OCTOBER) + Duration::minutes(1))
        .unwrap();
    r.issue(
        &officer(),
        t(OCTOBER) + Duration::minutes(5),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &test_key(),
    )
    .unwrap();
    for (i, e) in to_decision().into_iter().enumerate() {
        r.append_event(&office(), t(OCTOBER) + Duration::minutes(10 + i as i64), e)
            .unwrap();
    }
    r
}

/// Appends office events, each recorded on its day of November 2026 at 15:00 UTC.
fn on_days(doc: &mut RecordDoc, events: &[(u32, EventKind)]) {
    for (day, e) in events {
        let when = t(&format!("2026-11-{day:02}T15:00:00Z"));
        doc.append_event(&office(), when, e.clone())
            .unwrap_or_else(|err| panic!("{e:?}: {err}"));
    }
}

/// A record decided (a fine) in October and notified on `on` (recorded that day).
fn decided_and_notified(on: NaiveDate, deadline: Option<NaiveDate>) -> RecordDoc {
    let mut r = decided_in_october();
    let when = on.and_hms_opt(15, 0, 0).unwrap().and_utc();
    r.append_event(&office(), when, notified(on, deadline))
        .unwrap();
    r
}

fn refusal(r: Result<String, RecordError>) -> String {
    match r {
        Err(RecordError::EventRefused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_ciencia_before_the_decision_or_the_occurrence_is_refused_on_every_copy() {
    // Occurred 30 Nov, decided 2 Dec: a ciência of 1 Dec (or of 29 Nov) would make the appeal period run
    // before there was anything to appeal against.
    let mut r = issued();
    let dec2 = t("2026-12-02T15:00:00Z");
    for (i, e) in to_decision().into_iter().enumerate() {
        r.append_event(&office(), dec2 + Duration::minutes(i as i64), e)
            .unwrap();
    }
    let later = dec2 + Duration::minutes(10);
    let why = refusal(r.append_event(&office(), later, notified(ymd(2026, 12, 1), None)));
    assert_eq!(
        why,
        "a data da ciência (01/12/2026) é anterior à decisão notificada (02/12/2026)"
    );
    let why = refusal(r.append_event(&office(), later, notified(ymd(2026, 11, 29), None)));
    assert!(
        why.contains("(29/11/2026) é anterior à decisão notificada (02/12/2026)"),
        "{why}"
    );
    // Written anyway by an old client: kept, flagged, and the appeal period never opens.
    r.append_event_unchecked(&office(), later, notified(ymd(2026, 12, 1), None))
        .unwrap();
    let v = copy(&mut r).view().unwrap();
    assert_eq!(v.status, Status::PenaltyDecided);
    assert_eq!(v.appeal_deadline, None);
    assert_eq!(v.invalid_events.len(), 1);
    // On the day of the decision: accepted.
    r.append_event(&office(), later, notified(ymd(2026, 12, 2), None))
        .unwrap();
    assert_eq!(r.view().unwrap().status, Status::Notified);
}

#[test]
fn a_decision_needs_a_recorded_review_and_proposal() {
    let mut r = issued();
    let decide = EventKind::PenaltyDecided {
        penalty: PenaltyKind::Fine,
    };
    let why = refusal(r.append_event(&office(), at(10), decide.clone()));
    assert!(why.contains("exige antes a análise"), "{why}");
    next_status(&[EventKind::Reviewed { note: None }], &mut r, 10);
    let why = refusal(r.append_event(&office(), at(11), decide.clone()));
    assert!(why.contains("proposta de penalidade registrada"), "{why}");
    // A penalty art. 32 does not provide is refused even when written by hand.
    let thirty = EventKind::PenaltyProposed {
        penalty: PenaltyKind::Suspension { days: 30 },
    };
    let why = refusal(r.append_event(&office(), at(11), thirty));
    assert!(why.contains("15 dias (art. 32, III)"), "{why}");
}

#[test]
fn a_repealed_or_non_infraction_rule_is_never_a_legal_basis() {
    for (id, word) in [
        ("R15", "revogada"),
        ("R39", "revogada"),
        ("R43", "não descreve"),
    ] {
        let mut d = draft();
        d.legal_basis = vec![LegalBasis {
            rule_id: id.into(),
            citation: crate::rules::lookup(id).unwrap().citation(),
        }];
        let v = RecordDoc::new_infraction(d, &officer())
            .unwrap()
            .view()
            .unwrap();
        let ctx = super::CheckContext {
            now: t(T0),
            registry: None,
            index: None,
        };
        match super::check_record(None, &v, &ctx) {
            Err(RecordError::Invalid { reason, .. }) => assert!(reason.contains(word), "{reason}"),
            other => panic!("{id}: {other:?}"),
        }
    }
}

#[test]
fn appeal_on_the_deadline_day_is_accepted_and_the_day_after_refused() {
    // Ciência Monday 2 Nov 2026 (Finados: the day of ciência never counts); D+10 is Thursday
    // 12 Nov, a business day: the deadline.
    let r = decided_and_notified(ymd(2026, 11, 2), None);
    assert_eq!(r.view().unwrap().appeal_deadline, Some(ymd(2026, 11, 12)));
    let mut ok = r.clone();
    ok.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 12),
        },
    )
    .unwrap();
    assert_eq!(ok.view().unwrap().status, Status::AppealFiled);
    let mut late = r.clone();
    let why = refusal(late.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 13),
        },
    ));
    assert!(why.contains("intempestivo"), "{why}");
    assert!(why.contains("art. 35") && why.contains("R34"), "{why}");
    assert!(why.contains("12/11/2026"), "{why}");
    // An old or faulty client that writes it anyway: kept and flagged on every copy.
    late.append_event_unchecked(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 13),
        },
    )
    .unwrap();
    let v = copy(&mut late).view().unwrap();
    assert_eq!(v.status, Status::Notified);
    assert_eq!(v.invalid_events.len(), 1);
    assert!(v.invalid_events[0].reason.contains("intempestivo"));
}

#[test]
fn late_appeal_is_judged_after_rolling_to_the_next_business_day() {
    // Ciência Thursday 19 Nov 2026: D+10 is Sunday 29 Nov, so the deadline rolls to Monday
    // 30 Nov (D+11): accepted on that day, refused on Tuesday 1 Dec.
    let r = decided_and_notified(ymd(2026, 11, 19), None);
    assert_eq!(r.view().unwrap().appeal_deadline, Some(ymd(2026, 11, 30)));
    let mut ok = r.clone();
    ok.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 30),
        },
    )
    .unwrap();
    let mut late = r.clone();
    let why = refusal(late.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 12, 1),
        },
    ));
    assert!(why.contains("30/11/2026"), "{why}");
    // Ciência Monday 9 Nov: D+10 is Thursday 19 Nov, D+11 Friday 20 Nov (a holiday since 2024)
    // is already late: rolling only moves a deadline that falls on a closed day.
    let mut r = decided_and_notified(ymd(2026, 11, 9), None);
    let why = refusal(r.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 20),
        },
    ));
    assert!(why.contains("19/11/2026"), "{why}");
}

#[test]
fn a_stored_deadline_may_extend_the_period_but_never_shorten_it() {
    // The server's calendar knows a municipal holiday on 12 Nov: its deadline is 13 Nov, and
    // every copy accepts an appeal on the 13th.
    let mut r = decided_and_notified(ymd(2026, 11, 2), Some(ymd(2026, 11, 13)));
    let v = r.view().unwrap();
    assert_eq!(v.appeal_deadline, Some(ymd(2026, 11, 13)));
    r.append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 13),
        },
    )
    .unwrap();
    // A deadline shorter than the 10 days of art. 35 is refused.
    let mut r = decided_in_october();
    let why = refusal(r.append_event(
        &office(),
        at(20),
        notified(ymd(2026, 11, 2), Some(ymd(2026, 11, 11))),
    ));
    assert!(why.contains("10 dias"), "{why}");
}

#[test]
fn a_second_appeal_and_an_appeal_before_ciencia_are_refused_citing_the_law() {
    let mut r = decided_and_notified(ymd(2026, 11, 19), None);
    let early = refusal(r.clone().append_event(
        &office(),
        at(30),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 18),
        },
    ));
    assert!(early.contains("anterior à ciência"), "{early}");
    on_days(
        &mut r,
        &[
            (
                23,
                EventKind::AppealFiled {
                    on: ymd(2026, 11, 23),
                },
            ),
            (
                24,
                EventKind::AppealDecided {
                    outcome: Outcome::Upheld,
                    penalty: None,
                },
            ),
            (25, notified(ymd(2026, 11, 25), None)),
        ],
    );
    let why = refusal(r.append_event(
        &office(),
        t("2026-11-26T15:00:00Z"),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 26),
        },
    ));
    assert!(
        why.contains("única vez") && why.contains("art. 33"),
        "{why}"
    );
}

#[test]
fn reconsideration_then_appeal_counts_from_the_new_ciencia() {
    let mut r = decided_and_notified(ymd(2026, 11, 2), None);
    on_days(
        &mut r,
        &[
            (
                5,
                EventKind::ReconsiderationFiled {
                    on: ymd(2026, 11, 5),
                },
            ),
            (
                20,
                EventKind::ReconsiderationDecided {
                    outcome: Outcome::Modified,
                    penalty: Some(PenaltyKind::WrittenWarning),
                },
            ),
            (23, notified(ymd(2026, 11, 23), None)),
        ],
    );
    let v = r.view().unwrap();
    assert_eq!(v.penalty, Some(PenaltyKind::WrittenWarning));
    assert_eq!(v.appeal_deadline, Some(ymd(2026, 12, 3)));
    // Past the first ciência's deadline (12 Nov), within the second's: accepted.
    r.append_event(
        &office(),
        at(40),
        EventKind::AppealFiled {
            on: ymd(2026, 12, 1),
        },
    )
    .unwrap();
    r.append_event(
        &office(),
        // Ruled on the next day: never before the appeal it rules on.
        t("2026-12-02T15:00:00Z"),
        EventKind::AppealDecided {
            outcome: Outcome::Reversed,
            penalty: None,
        },
    )
    .unwrap();
    let v = r.view().unwrap();
    assert_eq!(v.status, Status::AppealDecided);
    assert_eq!(v.penalty, None);
    assert!(v.invalid_events.is_empty(), "{:?}", v.invalid_events);
}

#[test]
fn an_appeal_without_a_penalty_in_force_is_refused() {
    let mut r = decided_and_notified(ymd(2026, 11, 2), None);
    next_status(
        &[
            EventKind::ReconsiderationFiled {
                on: ymd(2026, 11, 3),
            },
            EventKind::ReconsiderationDecided {
                outcome: Outcome::Reversed,
                penalty: None,
            },
        ],
        &mut r,
        30,
    );
    let why = refusal(r.append_event(
        &office(),
        at(40),
        EventKind::AppealFiled {
            on: ymd(2026, 11, 4),
        },
    ));
    assert!(why.contains("não há penalidade"), "{why}");
}

#[test]
fn the_office_classifies_without_touching_the_sealed_basis() {
    let mut r = issued();
    let basis = vec![LegalBasis {
        rule_id: "R24".into(),
        citation: "Lei 4.019/2004, art. 16, I; art. 31, VI".into(),
    }];
    r.append_event(
        &office(),
        at(10),
        EventKind::Classified {
            legal_basis: basis.clone(),
        },
    )
    .unwrap();
    let v = copy(&mut r).view().unwrap();
    assert_eq!(v.classification, Some(basis));
    assert_ne!(v.legal_basis, v.classification.clone().unwrap());
    assert_eq!(
        v.status,
        Status::Issued,
        "classifying does not move the status"
    );
    // Empty classifications and officers' ones are refused.
    assert!(
        r.append_event(
            &office(),
            at(11),
            EventKind::Classified {
                legal_basis: vec![]
            }
        )
        .is_err()
    );
    assert!(
        r.append_event(
            &officer(),
            at(11),
            EventKind::Classified {
                legal_basis: vec![LegalBasis {
                    rule_id: "R01".into(),
                    citation: "x".into()
                }]
            }
        )
        .is_err()
    );
}

/// `vet` compares fields one by one (`field_json`) instead of serialising whole views: each
/// must equal that field of the serialised view, or the sealed-evidence check would drift
/// from what the schemas and the office see.
#[test]
fn field_json_matches_the_serialised_view() {
    let mut draft_doc = infraction();
    let mut issued_doc = issued();
    for doc in [&mut draft_doc, &mut issued_doc] {
        let view = doc.view().unwrap();
        let whole = serde_json::to_value(&view).unwrap();
        for name in super::vet::IMMUTABLE_FIELDS
            .iter()
            .chain(super::vet::DRAFT_FIELDS.iter())
            .chain(std::iter::once(&"number"))
        {
            assert_eq!(
                super::vet::field_json(&view, name),
                whole.get(*name).cloned().unwrap_or(serde_json::Value::Null),
                "field {name}"
            );
        }
    }
}

#[test]
fn a_view_at_earlier_heads_is_the_view_of_that_state() {
    // Two copies edited apart, merged: a conflict on the facts, a witness, the issue event.
    let mut a = infraction();
    let created = sorted_heads(&mut a);
    let mut b = copy(&mut a);
    a.add_witness(&officer(), at(2), &witness("W1")).unwrap();
    let with_witness = sorted_heads(&mut a);
    a.automerge_mut()
        .put(ROOT, "facts", "Versão A dos fatos")
        .unwrap();
    a.automerge_mut().commit();
    b.automerge_mut().set_actor(officer_tablet().actor_id());
    b.automerge_mut()
        .put(ROOT, "facts", "Outra redação dos fatos")
        .unwrap();
    b.automerge_mut().commit();
    let mut m = merged(&a, &b);
    m.issue(
        &officer(),
        at(5),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &test_key(),
    )
    .unwrap();
    let mut conflicted = sorted_heads(&mut a);
    conflicted.extend(sorted_heads(&mut b));
    conflicted.sort();

    for heads in [&created, &with_witness, &conflicted] {
        let forked = RecordDoc::from_automerge(m.automerge_mut().fork_at(heads).unwrap()).unwrap();
        assert_eq!(m.view_at(heads).unwrap(), forked.view().unwrap());
    }
    let at_conflict = m.view_at(&conflicted).unwrap();
    assert_eq!(
        at_conflict.conflicts.len(),
        1,
        "the facts, before any resolution"
    );
    assert!(!at_conflict.sealed && m.view().unwrap().sealed);
    // Reading at earlier heads leaves the document as it was.
    assert_eq!(m.view().unwrap().witnesses.len(), 1);
    // Before the record existed there is no record to read.
    assert!(m.view_at(&[]).is_err());
}

// ------------------------------------------------------------------ limits and evidence checks

mod checks {
    use super::*;
    use crate::limits::*;

    fn ctx(reg: &crate::domain::Registry) -> CheckContext<'_> {
        CheckContext {
            now: at(60),
            registry: Some(reg),
            index: None,
        }
    }

    /// The permit a record names must be in the registry; with the registry's index (the
    /// server's case) the answer is the scan's, for a permit that exists and one that does not.
    #[test]
    fn a_permit_is_known_alike_by_scan_and_by_index() {
        let reg = sample_registry();
        let index = reg.index();
        let known = reg.permits[0].number.clone();
        for (permit, exists) in [(known, true), (String::from("9999"), false)] {
            let mut v = infraction().view().unwrap();
            v.permit_number = Some(permit.clone());
            for index in [None, Some(&index)] {
                let ctx = CheckContext { index, ..ctx(&reg) };
                let r = check_record(None, &v, &ctx);
                if exists {
                    r.unwrap();
                } else {
                    assert!(
                        matches!(r, Err(RecordError::UnknownPermit { .. })),
                        "{permit}: {r:?}"
                    );
                }
            }
        }
    }

    /// `check_record(None, view)` after `edit` of a valid infraction's view.
    fn check(edit: impl FnOnce(&mut RecordView)) -> Result<(), RecordError> {
        let reg = sample_registry();
        let mut v = infraction().view().unwrap();
        edit(&mut v);
        check_record(None, &v, &ctx(&reg))
    }

    fn too_large(r: Result<(), RecordError>) -> bool {
        matches!(r, Err(RecordError::TooLarge { .. }))
    }

    #[test]
    fn a_valid_record_passes() {
        check(|_| {}).unwrap();
        let mut v = issued().view().unwrap();
        v.verdict = Some(serde_json::to_string(&verdict()).unwrap());
        let reg = sample_registry();
        check_record(None, &v, &ctx(&reg)).unwrap();
    }

    #[test]
    fn texts_are_bounded_at_their_limits() {
        check(|v| v.facts = "é".repeat(MAX_FACTS_CHARS)).unwrap();
        assert!(too_large(check(
            |v| v.facts = "é".repeat(MAX_FACTS_CHARS + 1)
        )));
        check(|v| v.issuing_body = "a".repeat(MAX_TEXT_FIELD_CHARS)).unwrap();
        assert!(too_large(check(
            |v| v.issuing_body = "a".repeat(MAX_TEXT_FIELD_CHARS + 1)
        )));
        check(|v| v.number = Some("9".repeat(MAX_TEXT_FIELD_CHARS))).unwrap();
        assert!(too_large(check(
            |v| v.number = Some("9".repeat(MAX_TEXT_FIELD_CHARS + 1))
        )));
        let statement = |n: usize| {
            move |v: &mut RecordView| {
                v.witnesses = vec![Witness {
                    person: PersonRef::Observed("w1".into()),
                    statement: "x".repeat(n),
                    added_at: at(0),
                    added_by: "U-GM-17".into(),
                }]
            }
        };
        check(statement(MAX_STATEMENT_CHARS)).unwrap();
        assert!(too_large(check(statement(MAX_STATEMENT_CHARS + 1))));
        let e = check(|v| v.facts = "x".repeat(MAX_FACTS_CHARS + 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a descrição dos fatos excede o limite de 10000 caracteres"
        );
    }

    #[test]
    fn lists_are_bounded_at_their_limits() {
        let witnesses = |n: usize| {
            move |v: &mut RecordView| {
                v.witnesses = (0..n)
                    .map(|i| Witness {
                        person: PersonRef::Observed(format!("w{i}")),
                        statement: String::new(),
                        added_at: at(0),
                        added_by: "U-GM-17".into(),
                    })
                    .collect()
            }
        };
        check(witnesses(MAX_WITNESSES)).unwrap();
        assert!(too_large(check(witnesses(MAX_WITNESSES + 1))));
        let photos =
            |n: usize| move |v: &mut RecordView| v.photos = (0..n).map(|i| sha(i as u8)).collect();
        check(photos(MAX_PHOTOS_PER_RECORD)).unwrap();
        assert!(too_large(check(photos(MAX_PHOTOS_PER_RECORD + 1))));
        let basis = |n: usize| {
            move |v: &mut RecordView| {
                v.legal_basis = (0..n)
                    .map(|_| LegalBasis {
                        rule_id: "R24".into(),
                        citation: "Lei 4.019/2004".into(),
                    })
                    .collect()
            }
        };
        check(basis(MAX_LEGAL_BASIS)).unwrap();
        assert!(too_large(check(basis(MAX_LEGAL_BASIS + 1))));
        let events = |n: usize| {
            move |v: &mut RecordView| {
                v.invalid_events = (0..n)
                    .map(|i| InvalidEvent {
                        id: format!("#{i}"),
                        kind: String::new(),
                        at: None,
                        reason: String::new(),
                    })
                    .collect()
            }
        };
        check(events(MAX_EVENTS)).unwrap();
        assert!(too_large(check(events(MAX_EVENTS + 1))));
    }

    #[test]
    fn evidence_is_validated() {
        let invalid = |r: Result<(), RecordError>| {
            assert!(
                matches!(
                    r,
                    Err(RecordError::Invalid { .. }
                        | RecordError::UnknownPermit { .. }
                        | RecordError::InvalidHash { .. })
                ),
                "{r:?}"
            )
        };
        let plate = |raw: &str, canonical: &str| {
            let (raw, canonical) = (raw.to_owned(), canonical.to_owned());
            move |v: &mut RecordView| {
                v.vehicle = Some(VehicleRef {
                    plate_raw: raw,
                    plate: canonical,
                })
            }
        };
        check(plate("ghi-7j89", "GHI7J89")).unwrap();
        check(plate("GHI 7989", "GHI7J89")).unwrap();
        invalid(check(plate("GHI7J89\0", "GHI7J89")));
        invalid(check(plate("<script>GHI7J89", "GHI7J89")));
        invalid(check(plate("GHI7J89", "ABC1D23")));
        invalid(check(|v| v.permit_number = Some("9999".into())));
        let pos = |lat: f64, lon: f64, accuracy_m: f64| {
            move |v: &mut RecordView| {
                v.position = Some(Position {
                    lat,
                    lon,
                    accuracy_m,
                })
            }
        };
        check(pos(90.0, -180.0, 0.0)).unwrap();
        check(pos(-22.7, -47.3, MAX_POSITION_ACCURACY_M)).unwrap();
        invalid(check(pos(999.0, -47.3, 5.0)));
        invalid(check(pos(-22.7, -47.3, -5.0)));
        invalid(check(pos(-22.7, -47.3, MAX_POSITION_ACCURACY_M + 0.5)));
        invalid(check(pos(f64::NAN, -47.3, 5.0)));
        invalid(check(|v| v.verdict = Some("{não é json".into())));
        invalid(check(|v| v.verdict = Some("{}".into())));
        assert!(too_large(check(|v| {
            v.verdict = Some(" ".repeat(MAX_JSON_FIELD_BYTES + 1))
        })));
        invalid(check(|v| v.photos = vec!["not-a-hash".into()]));
        invalid(check(|v| {
            v.driver.person = PersonRef::Observed("a\0b".into())
        }));
        invalid(check(|v| v.stand_id = Some("S01\n".into())));
    }

    #[test]
    fn the_occurrence_must_be_near_the_check() {
        let now = at(60);
        let occurred = |t: DateTime<Utc>| move |v: &mut RecordView| v.occurred_at = t;
        let earliest = now - Duration::days(MAX_OCCURRENCE_AGE_DAYS);
        let latest = now + Duration::hours(MAX_OCCURRENCE_AHEAD_HOURS);
        check(occurred(earliest)).unwrap();
        check(occurred(latest)).unwrap();
        assert!(check(occurred(earliest - Duration::milliseconds(1))).is_err());
        assert!(check(occurred(latest + Duration::milliseconds(1))).is_err());
        assert!(check(occurred(DateTime::UNIX_EPOCH)).is_err());
    }

    #[test]
    fn only_what_changed_is_checked() {
        // A record whose occurrence left the window, or whose permit left the registry, stays
        // editable: the check looks at the fields a change touches.
        let reg = sample_registry();
        let mut before = infraction().view().unwrap();
        before.occurred_at = DateTime::UNIX_EPOCH;
        before.permit_number = Some("9999".into());
        let mut after = before.clone();
        after.facts = "Descrição revista.".into();
        check_record(Some(&before), &after, &ctx(&reg)).unwrap();
        assert!(check_record(None, &after, &ctx(&reg)).is_err());
    }

    #[test]
    fn record_bytes_are_bounded_before_loading() {
        let doc = infraction().save();
        assert!(doc.len() < MAX_RECORD_BYTES);
        assert!(super::super::doc::check_record_bytes(MAX_RECORD_BYTES).is_ok());
        let over = vec![0u8; MAX_RECORD_BYTES + 1];
        assert!(matches!(
            RecordDoc::load(&over),
            Err(RecordError::TooLarge { .. })
        ));
    }

    /// A record with maps nested `depth` levels below its root (under `x`).
    fn nested(depth: usize) -> Vec<u8> {
        let mut r = infraction();
        let am = r.automerge_mut();
        let mut obj = am.put_object(ROOT, "x", automerge::ObjType::Map).unwrap();
        for _ in 1..depth {
            obj = am.put_object(&obj, "x", automerge::ObjType::Map).unwrap();
        }
        am.commit();
        r.save()
    }

    #[test]
    fn nesting_is_bounded_before_any_recursive_walk() {
        RecordDoc::load(&nested(MAX_DOCUMENT_DEPTH)).unwrap();
        // Run on a small stack: a walk that recursed with the nesting would overflow it.
        let deep = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(|| {
                [MAX_DOCUMENT_DEPTH + 1, 2_000].map(|d| RecordDoc::load(&nested(d)).map(|_| ()))
            })
            .unwrap()
            .join()
            .unwrap();
        for r in deep {
            match r {
                Err(RecordError::Malformed { reason }) => {
                    assert!(reason.contains("aninhados"), "{reason}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// A conflict's losing value is not in the view's tree: its JSON walk is bounded too.
    #[test]
    fn a_deep_losing_value_of_a_conflict_is_bounded_too() {
        let mut a = infraction();
        let mut b = a.fork();
        b.automerge_mut().set_actor(officer_tablet().actor_id());
        a.automerge_mut().put(ROOT, "x", 1).unwrap();
        a.automerge_mut().commit();
        let am = b.automerge_mut();
        let mut obj = am.put_object(ROOT, "x", automerge::ObjType::Map).unwrap();
        for _ in 0..2_000 {
            obj = am.put_object(&obj, "x", automerge::ObjType::Map).unwrap();
        }
        am.commit();
        a.merge(&mut b).unwrap();
        let r = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(move || a.conflicts().map(|c| c.len()))
            .unwrap()
            .join()
            .unwrap();
        assert!(matches!(r, Err(RecordError::Malformed { .. })), "{r:?}");
    }
}

// -------------------------------------------------------------------- device seal

/// A record with every optional sealed field set, issued with a witness and a photo.
fn fully_sealed(key: &DeviceKey) -> RecordDoc {
    let mut d = draft();
    d.position = Some(Position {
        lat: -22.74,
        lon: -47.33,
        accuracy_m: 8.0,
    });
    d.witnesses = vec![witness("w-1")];
    d.photos = vec![sha(1)];
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    r.confirm_vehicle(&officer(), at(2)).unwrap();
    r.issue(&officer(), at(5), Signature::Signed { sha256: sha(9) }, key)
        .unwrap();
    r
}

#[test]
fn the_canonical_evidence_is_deterministic_and_the_seal_verifies_after_a_reload() {
    let key = test_key();
    let mut r = fully_sealed(&key);
    let view = r.view().unwrap();
    let seal = view.seal.clone().expect("sealed at issue");
    assert_eq!(seal.public_key, hex::encode(key.public_key()));
    assert_eq!(seal.device_id, officer().device_id);
    assert_eq!(seal.photos, vec![sha(1)]);
    assert_eq!(seal.witnesses.len(), 1);
    let covered = seal::Covered {
        number: seal.number.as_deref(),
        photos: &seal.photos,
        witnesses: &seal.witnesses,
    };
    let bytes = seal::canonical_evidence(&view, &covered);
    assert_eq!(bytes, seal::canonical_evidence(&view, &covered));
    assert!(bytes.starts_with(seal::EVIDENCE_DOMAIN));
    assert_eq!(seal.evidence_sha256, hex::encode(Sha256::digest(&bytes)));
    let reloaded = RecordDoc::load(&r.save()).unwrap().view().unwrap();
    assert_eq!(
        seal::canonical_evidence(&reloaded, &covered),
        bytes,
        "same bytes on every copy"
    );
    let verified = verify_seal(&reloaded).unwrap();
    assert_eq!(verified.public_key, key.public_key());
    // The auto's code is derived from the device signature, under the auto's domain.
    assert_eq!(
        seal.verification_code().unwrap(),
        documents::VerificationCode::derive(seal::AUTO_CODE_DOMAIN, &verified.signature)
    );
}

#[test]
fn changing_any_sealed_field_breaks_the_seal() {
    let key = test_key();
    let view = fully_sealed(&key).view().unwrap();
    verify_seal(&view).unwrap();
    type Tamper = fn(&mut RecordView);
    let tampers: Vec<(&str, Tamper)> = vec![
        ("id", |v| v.id = Uuid::now_v7()),
        ("kind", |v| v.kind = RecordKind::Transgression),
        ("issuing_body", |v| v.issuing_body.push('!')),
        ("author.user_id", |v| v.author.user_id.push('x')),
        ("author.role", |v| {
            v.author.role = UserRole::SecretariaInspector
        }),
        ("occurred_at", |v| v.occurred_at += Duration::seconds(1)),
        ("monotonic", |v| v.monotonic += 1),
        ("position", |v| v.position.as_mut().unwrap().lat += 1e-9),
        ("position removed", |v| v.position = None),
        ("stand_id", |v| v.stand_id = Some("S09".into())),
        ("vehicle", |v| {
            v.vehicle.as_mut().unwrap().plate = "XYZ9Z99".into()
        }),
        ("vehicle_confirmation", |v| {
            v.vehicle_confirmation.as_mut().unwrap().at += Duration::seconds(1)
        }),
        ("vehicle_confirmation removed", |v| {
            v.vehicle_confirmation = None
        }),
        ("driver", |v| v.driver.role = DriverRole::Holder),
        ("permit_number", |v| v.permit_number = Some("9999".into())),
        ("holder_id", |v| v.holder_id = Some("P99".into())),
        ("charged", |v| v.charged.clear()),
        ("gravity", |v| v.gravity = Some(Gravity::Light)),
        ("facts", |v| v.facts.push_str(" (corrigido)")),
        ("legal_basis", |v| v.legal_basis[0].citation.push('.')),
        ("verdict", |v| v.verdict = None),
        ("signature", |v| {
            v.signature = Some(Signature::Missing {
                reason: "ausente".into(),
            })
        }),
        ("seal photos", |v| v.seal.as_mut().unwrap().photos.clear()),
        ("seal witnesses", |v| {
            v.seal.as_mut().unwrap().witnesses.clear()
        }),
        ("seal signature", |v| {
            let s = v.seal.as_mut().unwrap();
            let flipped = if s.signature.starts_with('0') {
                "1"
            } else {
                "0"
            };
            s.signature.replace_range(..1, flipped);
        }),
        ("seal digest", |v| {
            v.seal.as_mut().unwrap().evidence_sha256 = "0".repeat(64);
        }),
    ];
    for (name, tamper) in tampers {
        let mut v = view.clone();
        tamper(&mut v);
        assert_eq!(
            verify_seal(&v).unwrap_err(),
            SealError::BadSignature,
            "{name}"
        );
    }
    // Evidence the seal covers must still be there; the number it sealed must not change.
    let mut v = view.clone();
    v.photos.clear();
    assert_eq!(verify_seal(&v).unwrap_err(), SealError::MissingEvidence);
    let mut v = view.clone();
    v.witnesses[0].statement.push('!');
    assert_eq!(verify_seal(&v).unwrap_err(), SealError::MissingEvidence);
    let mut v = view.clone();
    v.number = Some("77".into());
    assert_eq!(verify_seal(&v).unwrap_err(), SealError::NumberChanged);
    let mut v = view;
    v.seal.as_mut().unwrap().device_id = other_officer().device_id;
    assert_eq!(verify_seal(&v).unwrap_err(), SealError::WrongDevice);
}

#[test]
fn evidence_added_after_issue_and_a_late_number_keep_the_seal_valid() {
    let key = test_key();
    let mut d = draft();
    d.number = None;
    let mut r = RecordDoc::new_infraction(d, &officer()).unwrap();
    r.add_photo(&officer(), at(1), &sha(1)).unwrap();
    r.confirm_vehicle(&officer(), at(2)).unwrap();
    r.issue(
        &officer(),
        at(5),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        &key,
    )
    .unwrap();
    // Late evidence from two copies, merged: the lists interleave, the sealed items stay.
    let mut other = copy(&mut r);
    r.add_photo(&officer(), at(6), &sha(2)).unwrap();
    other
        .add_witness(&office(), at(7), &witness("w-late"))
        .unwrap();
    r.merge(&mut other).unwrap();
    r.assign_number(&office(), at(8), "501").unwrap();
    let view = r.view().unwrap();
    assert_eq!(view.photos.len(), 2);
    assert_eq!(view.number.as_deref(), Some("501"));
    assert_eq!(view.seal.as_ref().unwrap().number, None);
    verify_seal(&view).unwrap();
}

#[test]
fn the_device_key_does_not_show_its_secret_and_a_draft_is_issued_only_on_its_device() {
    let key = test_key();
    let shown = format!("{key:?}");
    assert!(shown.contains(&hex::encode(key.public_key())));
    assert!(!shown.contains(&hex::encode(key.secret())), "{shown}");
    let mut r = infraction();
    let e = r
        .issue(
            &officer_tablet(),
            at(5),
            Signature::Missing {
                reason: "ausente".into(),
            },
            &key,
        )
        .unwrap_err();
    assert!(matches!(e, RecordError::NotAuthor { .. }), "{e:?}");
    assert!(!r.is_sealed().unwrap());
}

#[test]
fn public_keys_are_read_in_hex_or_base64_and_checked() {
    use base64::Engine;
    let key = test_key().public_key();
    assert_eq!(seal::parse_public_key(&hex::encode(key)).unwrap(), key);
    let b64 = base64::engine::general_purpose::STANDARD.encode(key);
    assert_eq!(seal::parse_public_key(&b64).unwrap(), key);
    // 31 and 33 bytes: the edge of the one valid length.
    for len in [31, 33] {
        let e = seal::parse_public_key(&hex::encode(vec![7u8; len])).unwrap_err();
        assert!(e.contains("32 bytes"), "{e}");
    }
    assert!(seal::parse_public_key("não é chave").is_err());
}

// -------------------------------------------------------------------- vehicle confirmation

#[test]
fn an_auto_is_not_issued_until_the_officer_confirms_the_vehicle() {
    let mut r = unconfirmed();
    let sig = Signature::Missing {
        reason: "recusou-se a assinar".into(),
    };
    assert!(r.view().unwrap().vehicle_confirmation.is_none());
    let err = r
        .issue(&officer(), at(5), sig.clone(), &test_key())
        .unwrap_err();
    assert_eq!(
        err,
        RecordError::VehicleNotConfirmed {
            plate: "GHI7J89".into()
        }
    );
    assert!(err.to_string().contains("GHI7J89"), "{err}");
    assert!(!r.view().unwrap().sealed);

    let c = r.confirm_vehicle(&officer(), at(2)).unwrap();
    let view = r.view().unwrap();
    assert_eq!(view.vehicle_confirmation.as_ref(), Some(&c));
    assert_eq!(c.user_id, "U-GM-17");
    assert_eq!(c.device_id, officer().device_id);
    assert_eq!(c.at, at(2));
    assert_eq!(c.plate, "GHI7J89");
    assert!(view.vehicle_confirmed());
    r.issue(&officer(), at(5), sig, &test_key()).unwrap();
    assert!(r.view().unwrap().sealed);
    // Kept through a save and a load.
    let back = RecordDoc::load(&r.save()).unwrap().view().unwrap();
    assert_eq!(back.vehicle_confirmation, Some(c));
}

#[test]
fn only_the_author_on_the_records_device_confirms_and_never_after_issue() {
    let mut r = unconfirmed();
    assert!(matches!(
        r.confirm_vehicle(&other_officer(), at(1)),
        Err(RecordError::NotAuthor { .. })
    ));
    assert!(matches!(
        r.confirm_vehicle(&office(), at(1)),
        Err(RecordError::NotAuthor { .. })
    ));
    // The same officer on another device: the record was made on the first one.
    assert!(matches!(
        r.confirm_vehicle(&officer_tablet(), at(1)),
        Err(RecordError::NotAuthor { .. })
    ));
    assert!(r.view().unwrap().vehicle_confirmation.is_none());
    let mut done = issued();
    assert_eq!(
        done.confirm_vehicle(&officer(), at(9)),
        Err(RecordError::Sealed {
            field: "vehicle_confirmation"
        })
    );
}

#[test]
fn a_transgression_report_is_issued_without_a_confirmation() {
    // Its plate is the permit's vehicle in the registry, not an identification made in the
    // street: the coordinator reports the driver and the permit.
    let reg = sample_registry();
    let mut r = RecordDoc::new_transgression(
        transgression_draft("0002", "P05", Gravity::Light),
        &coordinator(),
        &reg.index(),
        "S02",
    )
    .unwrap();
    let view = r.view().unwrap();
    assert!(view.vehicle.is_some() && view.vehicle_confirmation.is_none());
    r.issue(
        &coordinator(),
        at(5),
        Signature::Missing {
            reason: "ausente".into(),
        },
        &test_key(),
    )
    .unwrap();
}

#[test]
fn a_confirmation_is_vetted_like_sealed_evidence_and_bound_to_its_device() {
    let mut r = unconfirmed();
    let before = r.view().unwrap();
    let mut good = r.fork();
    good.confirm_vehicle(&officer(), at(1)).unwrap();
    let after = good.view().unwrap();
    assert_eq!(vet(Some(&before), &after, &officer()), Vec::new());
    assert_eq!(
        diff(Some(&before), &after).changed_fields,
        ["vehicle_confirmation"]
    );
    // Sent from the officer's other device, or by someone else: refused.
    assert!(
        vet(Some(&before), &after, &officer_tablet())
            .contains(&Violation::VehicleConfirmationNotAllowed)
    );
    assert!(
        vet(Some(&before), &after, &other_officer())
            .contains(&Violation::VehicleConfirmationNotAllowed)
    );
    // Written by hand in another device's name: refused by the vetting and by the check.
    let mut forged = r.fork();
    let json = serde_json::json!({
        "user_id": "U-GM-17",
        "device_id": officer_tablet().device_id,
        "at": at(1),
        "plate": "GHI7J89",
    })
    .to_string();
    forged
        .automerge_mut()
        .put(ROOT, "vehicle_confirmation", json)
        .unwrap();
    forged.automerge_mut().commit();
    let forged = forged.view().unwrap();
    assert!(
        vet(Some(&before), &forged, &officer()).contains(&Violation::VehicleConfirmationNotAllowed)
    );
    let ctx = CheckContext {
        now: at(2),
        registry: None,
        index: None,
    };
    assert!(matches!(
        check_record(Some(&before), &forged, &ctx),
        Err(RecordError::Invalid {
            field: "confirmação do veículo",
            ..
        })
    ));
    // A confirmation of another plate does not confirm this vehicle.
    let mut other = r.fork();
    let json = serde_json::json!({
        "user_id": "U-GM-17",
        "device_id": officer().device_id,
        "at": at(1),
        "plate": "ABC1D23",
    })
    .to_string();
    other
        .automerge_mut()
        .put(ROOT, "vehicle_confirmation", json)
        .unwrap();
    other.automerge_mut().commit();
    let other_view = other.view().unwrap();
    assert!(!other_view.vehicle_confirmed());
    assert!(matches!(
        check_record(Some(&before), &other_view, &ctx),
        Err(RecordError::Invalid {
            field: "confirmação do veículo",
            ..
        })
    ));
    assert!(matches!(
        other.issue(
            &officer(),
            at(5),
            Signature::Missing {
                reason: "ausente".into()
            },
            &test_key()
        ),
        Err(RecordError::VehicleNotConfirmed { .. })
    ));
    // After issue the confirmation is sealed: a new one sent is a sealed change.
    let mut done = issued();
    let sealed_before = done.view().unwrap();
    let mut late = done.fork();
    let json = serde_json::json!({
        "user_id": "U-GM-17",
        "device_id": officer().device_id,
        "at": at(30),
        "plate": "GHI7J89",
    })
    .to_string();
    late.automerge_mut()
        .put(ROOT, "vehicle_confirmation", json)
        .unwrap();
    late.automerge_mut().commit();
    let late = late.view().unwrap();
    assert!(
        vet(Some(&sealed_before), &late, &officer()).contains(&Violation::Sealed {
            field: "vehicle_confirmation".into()
        })
    );
}

#[test]
fn the_office_is_offered_what_the_state_machine_and_the_kernel_accept_next() {
    use crate::rules::procedure::StepKind;
    let kinds = |r: &RecordDoc| {
        let n = super::office_next(&r.view().unwrap(), t(T0).date_naive());
        (
            n.steps.iter().map(|s| s.kind).collect::<Vec<_>>(),
            n.classify,
            n.annul,
            n.archive,
        )
    };
    // A draft: nothing for the office.
    assert_eq!(kinds(&infraction()), (vec![], false, false, false));
    // An issued auto: the review, and the classification; it may be annulled or archived.
    let mut auto = issued();
    assert_eq!(kinds(&auto), (vec![StepKind::Review], true, true, true));
    auto.append_event(&office(), at(10), EventKind::Reviewed { note: None })
        .unwrap();
    assert_eq!(kinds(&auto), (vec![StepKind::Propose], true, true, true));
    auto.append_event(
        &office(),
        at(11),
        EventKind::Annulled {
            reason: "placa trocada".into(),
        },
    )
    .unwrap();
    // Annulled: nothing of the procedure; archiving stays possible.
    assert_eq!(kinds(&auto), (vec![], false, false, true));

    // A report waits for its coordinator to forward it (art. 17).
    let reg = sample_registry();
    let idx = reg.index();
    let mut d = transgression_draft("0001", "P02", Gravity::Serious);
    d.witnesses = vec![witness("obs-1")];
    let mut report = RecordDoc::new_transgression(d, &coordinator(), &idx, "S01").unwrap();
    report
        .issue(
            &coordinator(),
            at(5),
            Signature::Missing {
                reason: "comunicação do coordenador".into(),
            },
            &test_key(),
        )
        .unwrap();
    assert_eq!(kinds(&report), (vec![], false, true, true));
    report.forward_to_office(&coordinator(), at(6)).unwrap();
    assert_eq!(kinds(&report), (vec![StepKind::Review], true, true, true));
}
