//! Field records through the device store: creation of both kinds, refusals, numbers, photos,
//! compaction and merging copies kept in two stores.

use chrono::{DateTime, Duration, Utc};
use rusqlite::Connection;
use tempfile::TempDir;
use uuid::Uuid;

use super::*;
use crate::domain::{DriverId, Plate};
use crate::records::{Gravity, Position, RecordError, Status};
use crate::rules::Observation;
use crate::store::{DeviceIdentity, StoreError};
use crate::testkit::{STRANGER_CPF, sample_registry};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

const T0: &str = "2026-11-30T15:04:05Z";

fn at(minutes: i64) -> DateTime<Utc> {
    t(T0) + Duration::minutes(minutes)
}

fn officer() -> DeviceIdentity {
    DeviceIdentity {
        device_id: Uuid::from_u128(0xA1),
        user_id: "U-GM-17".into(),
        role: UserRole::GuardaMunicipal,
        stand_id: None,
        issuing_body: None,
    }
}

/// Same officer on a second device.
fn officer_tablet() -> DeviceIdentity {
    DeviceIdentity {
        device_id: Uuid::from_u128(0xA2),
        ..officer()
    }
}

/// Coordinator of stand S02 (permits 0002 and 0004).
fn coordinator(stand: &str) -> DeviceIdentity {
    DeviceIdentity {
        device_id: Uuid::from_u128(0xC1),
        user_id: "U-COORD".into(),
        role: UserRole::Coordinator,
        stand_id: Some(stand.into()),
        issuing_body: None,
    }
}

struct Dev {
    _dir: TempDir,
    path: std::path::PathBuf,
    store: Store,
}

/// A device store with the sample registry (version 7) and, if `numbers`, the block 1..=100.
fn device(identity: &DeviceIdentity, numbers: bool) -> Dev {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    let mut store = Store::open(&path).unwrap();
    store
        .apply_snapshot(&sample_registry(), t("2026-11-30T08:00:00Z"))
        .unwrap();
    store.set_device_identity(identity, at(0)).unwrap();
    if numbers {
        store.add_number_block(1, 100).unwrap();
    }
    Dev {
        _dir: dir,
        path,
        store,
    }
}

/// Auxiliary P08 (CNH expired) driving GHI7J89 (permit 0004, not renewed, holder P07).
fn infraction_input() -> NewInfraction {
    NewInfraction {
        vehicle: VehicleQuery::Plate(Plate::parse("ghi-7j89").unwrap()),
        driver: DriverId::parse("cpf:78000751925").unwrap(),
        driver_name: None,
        at: at(0),
        monotonic: 987_654,
        observation: Observation {
            at_stand: Some("S02".into()),
            ..Observation::default()
        },
        position: Some(Position {
            lat: -22.7395,
            lon: -47.3317,
            accuracy_m: 8.5,
        }),
        facts: Some("Auxiliar conduzindo com CNH vencida.".into()),
        extra_legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: Vec::new(),
        confirm_vehicle: true,
        issue: None,
    }
}

fn unsigned() -> Signature {
    Signature::Missing {
        reason: "recusou-se a assinar".into(),
    }
}

/// Pedro (P05), auxiliary of permit 0002 (ABC-1234, stand S02).
fn transgression_input(gravity: Gravity) -> NewTransgression {
    NewTransgression {
        vehicle: VehicleQuery::Plate(Plate::parse("ABC-1234").unwrap()),
        driver: DriverId::parse("cpf:99940561580").unwrap(),
        coordinator_stand: None,
        gravity,
        facts: "Discussão e gritaria no ponto.".into(),
        legal_basis: Vec::new(),
        at: at(0),
        monotonic: 7,
        position: None,
        witnesses: Vec::new(),
        photos: Vec::new(),
        issue: Some(Signature::Missing {
            reason: "comunicação do coordenador".into(),
        }),
        then: None,
    }
}

fn stored_doc(store: &Store, id: &str) -> RecordDoc {
    let mut all = Vec::new();
    for p in store.load_record_bytes(id).unwrap() {
        all.extend(p);
    }
    RecordDoc::load(&all).unwrap()
}

#[test]
fn infraction_from_a_check_carries_verdict_basis_plate_driver_and_number() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let out = f.create_infraction(infraction_input()).unwrap();
    assert_eq!(out.kind, RecordKind::Infraction);
    assert_eq!(out.number, Some(1));
    assert!(!out.waiting_for_number);
    assert_eq!(out.status, Status::Draft);

    // What the store holds loads into the same record.
    let v = stored_doc(&d.store, &out.id).view().unwrap();
    assert_eq!(v, out.view);
    assert_eq!(v.number.as_deref(), Some("1"));
    assert_eq!(v.author, officer().agent());
    assert_eq!(v.issuing_body, GUARDA_MUNICIPAL);
    let veh = v.vehicle.as_ref().unwrap();
    assert_eq!(
        (veh.plate_raw.as_str(), veh.plate.as_str()),
        ("ghi-7j89", "GHI7J89")
    );
    assert_eq!(v.driver.person, PersonRef::Registry("P08".into()));
    assert_eq!(v.driver.role, DriverRole::Auxiliary);
    assert_eq!(v.permit_number.as_deref(), Some("0004"));
    assert_eq!(v.holder_id.as_deref(), Some("P07"));
    assert_eq!(v.stand_id.as_deref(), Some("S02"));
    assert_eq!(v.position.unwrap().accuracy_m, 8.5);
    assert_eq!(v.monotonic, 987_654);

    // The verdict is the store's check at that instant, stamped with the replica's version.
    let verdict = v.verdict().unwrap().unwrap();
    let expected = d
        .store
        .check(&CheckInput {
            vehicle: VehicleQuery::Plate(Plate::parse("GHI7J89").unwrap()),
            driver: DriverId::parse("cpf:78000751925").unwrap(),
            at: at(0),
            observation: Observation {
                at_stand: Some("S02".into()),
                ..Observation::default()
            },
            registry_refreshed_at: None,
        })
        .unwrap();
    assert_eq!(verdict, expected);
    assert_eq!(verdict.registry.version, 7);
    assert_eq!(v.legal_basis, LegalBasis::from_findings(&verdict.findings));
    assert!(v.legal_basis.iter().any(|b| b.rule_id == "R10"), "{v:?}");

    let row = d.store.record_summary(&out.id).unwrap().unwrap();
    assert_eq!(row.number, Some(1));
    assert_eq!(row.status, "draft");
    assert_eq!(row.summary["plate"], "GHI7J89");
    assert_eq!(d.store.numbers_left().unwrap(), 99);
}

#[test]
fn unknown_driver_is_an_observed_person_outside_the_document() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let mut input = infraction_input();
    input.driver = DriverId::parse(&format!("cpf:{STRANGER_CPF}")).unwrap();
    input.driver_name = Some("Fulano de Tal".into());
    input.witnesses = vec![WitnessEntry::named("Beltrana Souza", "Vi tudo.")];
    input.facts = None;
    input.issue = Some(unsigned());
    let out = f.create_infraction(input).unwrap();
    assert_eq!(out.status, Status::Issued);
    let PersonRef::Observed(oid) = &out.view.driver.person else {
        panic!("{:?}", out.view.driver)
    };
    assert_eq!(out.view.driver.role, DriverRole::Unauthorised);
    // Default facts: the irregular findings, R13 (unauthorised driver) among them.
    assert!(
        out.view.facts.contains("não consta do cadastro"),
        "{}",
        out.view.facts
    );

    let details = f.show(&out.id).unwrap();
    let p = &details.observed_people[oid];
    assert_eq!(p.name.as_deref(), Some("Fulano de Tal"));
    assert_eq!(p.cpf.as_deref(), Some(STRANGER_CPF));
    let PersonRef::Observed(wid) = &details.view.witnesses[0].person else {
        panic!()
    };
    assert_eq!(
        details.observed_people[wid].name.as_deref(),
        Some("Beltrana Souza")
    );

    // Neither the name nor the CPF is anywhere in the document's history.
    let mut doc = f.load(&out.id).unwrap();
    let raw = doc.automerge_mut().save_nocompress();
    for secret in ["Fulano", "Beltrana", STRANGER_CPF] {
        assert!(
            !raw.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} leaked into the document"
        );
    }
    // Erasure blanks the row; the record still shows and still names the id.
    d.store.erase_observed_person(oid, at(9)).unwrap();
    let f = FieldRecords::open(&mut d.store).unwrap();
    assert_eq!(f.show(&out.id).unwrap().observed_people[oid].name, None);
}

#[test]
fn observed_people_are_due_for_upload_until_confirmed_and_again_after_an_erasure() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let mut input = infraction_input();
    input.driver = DriverId::parse(&format!("cpf:{STRANGER_CPF}")).unwrap();
    input.driver_name = Some("Fulano de Tal".into());
    input.witnesses = vec![WitnessEntry::named("Beltrana Souza", "Vi tudo.")];
    input.issue = Some(unsigned());
    let out = f.create_infraction(input).unwrap();
    let view = out.view.clone();
    let ids = crate::sync::observed_ids(&view);
    assert_eq!(ids.len(), 2, "the driver and the witness");

    // Written with the record: due, and what the device would send passes the server's check.
    assert_eq!(
        d.store.records_with_pending_observed().unwrap(),
        vec![out.id.clone()]
    );
    let rows = d.store.observed_people_of_record(&out.id).unwrap();
    let persons: Vec<_> = rows
        .iter()
        .filter_map(|(id, p)| crate::sync::ObservedIdentity::from_store(id, p))
        .collect();
    let checked =
        crate::sync::check_upload(&view, crate::sync::ObservedPersonsUpload { persons }).unwrap();
    assert_eq!(checked.len(), 2);
    assert!(
        checked
            .iter()
            .any(|p| p.cpf.as_deref() == Some(STRANGER_CPF))
    );

    // Confirmed: nothing due. Erased here: due again, with that person left out.
    let all: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(
        d.store
            .mark_observed_uploaded(&out.id, &all, at(8))
            .unwrap(),
        2
    );
    assert!(d.store.records_with_pending_observed().unwrap().is_empty());
    let PersonRef::Observed(wid) = &view.witnesses[0].person else {
        panic!()
    };
    d.store.erase_observed_person(wid, at(9)).unwrap();
    assert_eq!(
        d.store.records_with_pending_observed().unwrap(),
        vec![out.id.clone()]
    );
    let rows = d.store.observed_people_of_record(&out.id).unwrap();
    let left: Vec<_> = rows
        .iter()
        .filter_map(|(id, p)| crate::sync::ObservedIdentity::from_store(id, p))
        .collect();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].name.as_deref(), Some("Fulano de Tal"));
}

#[test]
fn infraction_by_permit_number_takes_the_plate_from_the_registry() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let mut input = infraction_input();
    input.vehicle = VehicleQuery::Permit("0004".into());
    let v = f.create_infraction(input).unwrap().view;
    let veh = v.vehicle.unwrap();
    assert_eq!(
        (veh.plate_raw.as_str(), veh.plate.as_str()),
        ("GHI7J89", "GHI7J89")
    );

    let mut input = infraction_input();
    input.vehicle = VehicleQuery::Permit("9999".into());
    let e = f.create_infraction(input).unwrap_err();
    assert!(matches!(e, FieldError::PermitUnknown { .. }), "{e}");
}

#[test]
fn a_coordinator_may_not_write_autos_nor_an_officer_reports() {
    let mut d = device(&coordinator("S02"), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f.create_infraction(infraction_input()).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::RoleNotAllowed { .. })),
        "{e}"
    );

    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let mut input = transgression_input(Gravity::Light);
    input.coordinator_stand = Some("S02".into());
    let e = f.create_transgression(input).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::RoleNotAllowed { .. })),
        "{e}"
    );
    assert_eq!(d.store.numbers_left().unwrap(), 100);
    assert!(d.store.list_records().unwrap().is_empty());
}

#[test]
fn transgression_reports_of_the_own_stand_are_settled_or_forwarded() {
    let mut d = device(&coordinator("S02"), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();

    let mut light = transgression_input(Gravity::Light);
    light.then = Some(CoordinatorStep::Settle(WarningKind::Verbal));
    let out = f.create_transgression(light).unwrap();
    assert_eq!(out.status, Status::SettledByCoordinator);
    assert_eq!(out.number, Some(1));
    let v = &out.view;
    assert_eq!(v.kind, RecordKind::Transgression);
    assert_eq!(v.stand_id.as_deref(), Some("S02"));
    assert_eq!(v.permit_number.as_deref(), Some("0002"));
    assert_eq!(v.holder_id.as_deref(), Some("P04"));
    assert_eq!(v.driver.person, PersonRef::Registry("P05".into()));
    assert_eq!(v.vehicle.as_ref().unwrap().plate, "ABC1C34");
    assert_eq!(v.number.as_deref(), Some("1"));

    // Serious without witnesses: refused, nothing written, no number used.
    let mut serious = transgression_input(Gravity::Serious);
    serious.then = Some(CoordinatorStep::Forward);
    let e = f.create_transgression(serious.clone()).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::WitnessRequired)),
        "{e}"
    );
    assert_eq!(f.list().unwrap().len(), 1);

    serious.witnesses = vec![WitnessEntry::named("Passageira", "Ouvi os gritos.")];
    let out = f.create_transgression(serious).unwrap();
    assert_eq!(out.status, Status::ForwardedToOffice);
    assert_eq!(
        out.number,
        Some(2),
        "the refused report did not burn a number"
    );

    // A serious draft can be neither issued nor forwarded until a witness is added.
    let mut draft = transgression_input(Gravity::Serious);
    draft.vehicle = VehicleQuery::Permit("0004".into());
    draft.driver = DriverId::parse("cpf:92624395717").unwrap(); // P07, holder of 0004
    draft.issue = None;
    let out = f.create_transgression(draft).unwrap();
    assert_eq!(out.status, Status::Draft);
    let e = f.issue(&out.id, at(5), unsigned()).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::WitnessRequired)),
        "{e}"
    );
    f.add_witness(
        &out.id,
        at(6),
        WitnessEntry::named("Lojista", "Presenciei."),
    )
    .unwrap();
    f.issue(&out.id, at(7), unsigned()).unwrap();
    assert_eq!(
        f.forward(&out.id, at(8)).unwrap().status,
        Status::ForwardedToOffice
    );
}

#[test]
fn a_coordinator_outside_their_stand_is_refused() {
    // Coordinator of S01 (permit 0001) about permit 0002, which is of S02.
    let mut d = device(&coordinator("S01"), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f
        .create_transgression(transgression_input(Gravity::Light))
        .unwrap_err();
    match e {
        FieldError::Record(RecordError::OutsideStand {
            permit,
            permit_stand,
            coordinator_stand,
        }) => {
            assert_eq!((permit.as_str(), permit_stand.as_str()), ("0002", "S02"));
            assert_eq!(coordinator_stand, "S01");
        }
        other => panic!("{other}"),
    }
    // Claiming another stand than the device's is refused before the registry is asked.
    let mut input = transgression_input(Gravity::Light);
    input.coordinator_stand = Some("S02".into());
    let e = f.create_transgression(input).unwrap_err();
    assert!(matches!(e, FieldError::StandMismatch { .. }), "{e}");
    assert!(e.to_string().contains("ponto S01"), "{e}");
    // A driver unknown to the registry cannot be reported either.
    let mut input = transgression_input(Gravity::Light);
    input.vehicle = VehicleQuery::Permit("0001".into());
    input.driver = DriverId::parse(&format!("cpf:{STRANGER_CPF}")).unwrap();
    let e = f.create_transgression(input).unwrap_err();
    assert!(matches!(e, FieldError::DriverNotRegistered { .. }), "{e}");

    assert!(f.list().unwrap().is_empty());
    assert_eq!(d.store.numbers_left().unwrap(), 100);
}

#[test]
fn sealed_fields_are_refused_and_nothing_is_written() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let id = f.create_infraction(infraction_input()).unwrap().id;
    // Editable while a draft.
    f.set_facts(&id, at(1), "Fatos corrigidos antes da emissão.")
        .unwrap();
    f.issue(&id, at(2), unsigned()).unwrap();
    let before = d.store.record_summary(&id).unwrap().unwrap();
    let bytes_before = d.store.load_record_bytes(&id).unwrap();

    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f.set_facts(&id, at(3), "Outra versão.").unwrap_err();
    assert!(
        matches!(
            e,
            FieldError::Record(RecordError::Sealed { field: "facts" })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("lacrado"), "{e}");
    let e = f.set_legal_basis(&id, at(3), &[]).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::Sealed { .. })),
        "{e}"
    );
    let e = f.issue(&id, at(3), unsigned()).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::AlreadyIssued)),
        "{e}"
    );
    assert_eq!(d.store.record_summary(&id).unwrap().unwrap(), before);
    assert_eq!(d.store.load_record_bytes(&id).unwrap(), bytes_before);

    // Late evidence is still accepted (append-only lists).
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let out = f
        .add_witness(&id, at(4), WitnessEntry::named("Ana", "Vi."))
        .unwrap();
    assert_eq!(out.view.witnesses.len(), 1);
    assert_eq!(out.view.facts, "Fatos corrigidos antes da emissão.");
}

#[test]
fn without_numbers_a_record_waits_and_is_numbered_when_a_block_arrives() {
    let mut d = device(&officer(), false);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let a = f.create_infraction(infraction_input()).unwrap();
    let b = f.create_infraction(infraction_input()).unwrap();
    let c = f.create_infraction(infraction_input()).unwrap();
    for r in [&a, &b, &c] {
        assert_eq!(r.number, None);
        assert!(r.waiting_for_number);
        assert_eq!(r.view.number, None);
    }
    assert_eq!(d.store.records_waiting_for_number().unwrap().len(), 3);

    // A block of two: the next write of `b` takes one, then the pending pass numbers `a`;
    // `c` keeps waiting.
    d.store.add_number_block(500, 501).unwrap();
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let out = f
        .add_witness(&b.id, at(1), WitnessEntry::named("Ana", "Vi."))
        .unwrap();
    assert_eq!(out.number, Some(500));
    assert_eq!(out.view.number.as_deref(), Some("500"));
    assert_eq!(
        f.assign_pending_numbers(at(2)).unwrap(),
        vec![(a.id.clone(), 501)]
    );
    let pending = d.store.records_waiting_for_number().unwrap();
    assert_eq!(pending, vec![c.id.clone()]);

    d.store.add_number_block(900, 999).unwrap();
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    assert_eq!(
        f.assign_pending_numbers(at(3)).unwrap(),
        vec![(c.id.clone(), 900)]
    );
    for (id, n) in [(&a.id, "501"), (&b.id, "500"), (&c.id, "900")] {
        assert_eq!(
            stored_doc(&d.store, id).view().unwrap().number.as_deref(),
            Some(n)
        );
        assert_eq!(
            d.store.record_summary(id).unwrap().unwrap().number,
            Some(n.parse().unwrap())
        );
    }
    assert!(d.store.records_waiting_for_number().unwrap().is_empty());
    // A numbered record never takes a second number.
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    assert_eq!(f.issue(&a.id, at(4), unsigned()).unwrap().number, Some(501));
    assert_eq!(d.store.numbers_left().unwrap(), 99);
}

#[test]
fn chunks_are_compacted_past_the_threshold() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store)
        .unwrap()
        .with_compaction_after(3);
    let id = f.create_infraction(infraction_input()).unwrap().id;
    let mut compactions = 0;
    for i in 0..10 {
        let out = f
            .add_witness(
                &id,
                at(i),
                WitnessEntry::named("T", &format!("depoimento {i}")),
            )
            .unwrap();
        compactions += usize::from(out.compacted);
        let row = f.store().record_summary(&id).unwrap().unwrap();
        assert!(row.chunks <= 3, "{} chunks after write {i}", row.chunks);
        assert_eq!(out.view.witnesses.len(), i as usize + 1);
    }
    assert!(compactions >= 2, "{compactions}");
    let v = f.load(&id).unwrap().view().unwrap();
    assert_eq!(v.witnesses.len(), 10);
    assert_eq!(v.witnesses[9].statement, "depoimento 9");
}

#[test]
fn photos_are_stored_with_the_record_and_verified_on_show() {
    let mut d = device(&officer(), true);
    let mut input = infraction_input();
    input.photos = vec![b"foto-1".to_vec()];
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let id = f.create_infraction(input).unwrap().id;
    let (h2, out) = f.attach_photo(&id, at(1), b"foto-2").unwrap();
    assert_eq!(h2, sha256_hex(b"foto-2"));
    assert_eq!(out.view.photos, vec![sha256_hex(b"foto-1"), h2.clone()]);
    // The same photo again: nothing new in the document.
    let (_, again) = f.attach_photo(&id, at(2), b"foto-2").unwrap();
    assert_eq!(again.view.photos.len(), 2);

    let details = f.show(&id).unwrap();
    assert!(details.photos_intact);
    assert_eq!(details.photos.len(), 2);

    // Bytes changed behind the store's back are reported.
    let raw = Connection::open(&d.path).unwrap();
    raw.execute(
        "UPDATE photos SET bytes = x'00' WHERE hash = ?1",
        [sha256_hex(b"foto-1")],
    )
    .unwrap();
    let f = FieldRecords::open(&mut d.store).unwrap();
    let details = f.show(&id).unwrap();
    assert!(!details.photos_intact);
    assert!(matches!(
        details.photos[0].status,
        PhotoStatus::Tampered { .. }
    ));

    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f
        .attach_photo_file(&id, at(3), Path::new("/nonexistent/photo.jpg"))
        .unwrap_err();
    assert!(e.to_string().contains("não foi possível ler"), "{e}");
}

#[test]
fn copies_in_two_stores_edited_apart_keep_both_edits_after_merging() {
    let mut phone = device(&officer(), true);
    let mut tablet = device(&officer_tablet(), true);
    let mut fp = FieldRecords::open(&mut phone.store).unwrap();
    let id = fp.create_infraction(infraction_input()).unwrap().id;
    let copy = fp.export(&id).unwrap();
    let mut ft = FieldRecords::open(&mut tablet.store).unwrap();
    let got = ft.merge_copy(&copy, at(1)).unwrap();
    assert_eq!(got.id, id);
    assert!(!got.waiting_for_number, "a received record takes no number");

    // Apart: the phone adds a witness, the tablet a photo.
    let mut fp = FieldRecords::open(&mut phone.store).unwrap();
    fp.add_witness(&id, at(2), WitnessEntry::named("Ana", "Vi."))
        .unwrap();
    let mut ft = FieldRecords::open(&mut tablet.store).unwrap();
    let (hash, _) = ft.attach_photo(&id, at(3), b"foto do tablet").unwrap();

    // Both ways.
    let from_tablet = ft.export(&id).unwrap();
    let mut fp = FieldRecords::open(&mut phone.store).unwrap();
    let on_phone = fp.merge_copy(&from_tablet, at(4)).unwrap().view;
    let from_phone = fp.export(&id).unwrap();
    let mut ft = FieldRecords::open(&mut tablet.store).unwrap();
    let on_tablet = ft.merge_copy(&from_phone, at(4)).unwrap().view;

    for v in [&on_phone, &on_tablet] {
        assert_eq!(v.witnesses.len(), 1);
        assert_eq!(v.photos, vec![hash.clone()]);
        assert_eq!(v.number.as_deref(), Some("1"));
        assert!(v.conflicts.is_empty());
    }
    let fp = FieldRecords::open(&mut phone.store).unwrap();
    let mut a = fp.load(&id).unwrap();
    let ft = FieldRecords::open(&mut tablet.store).unwrap();
    let mut b = ft.load(&id).unwrap();
    let (mut ha, mut hb) = (a.heads(), b.heads());
    ha.sort();
    hb.sort();
    assert_eq!(ha, hb);
    // The tablet holds the photo's bytes; the phone only its hash (photos travel apart).
    assert!(!ft.show(&id).unwrap().photos.is_empty());
    assert!(ft.show(&id).unwrap().photos_intact);
    assert_eq!(fp.show(&id).unwrap().photos[0].status, PhotoStatus::Missing);
}

#[test]
fn identity_is_required_and_its_device_id_is_fixed_once_records_exist() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("d.db")).unwrap();
    let e = FieldRecords::open(&mut store).unwrap_err();
    assert!(matches!(e, FieldError::NoIdentity), "{e}");
    assert!(e.to_string().contains("device init"), "{e}");

    let mut bad = coordinator("S01");
    bad.stand_id = None;
    assert!(matches!(
        store.set_device_identity(&bad, at(0)),
        Err(StoreError::IdentityInvalid { .. })
    ));

    let mut d = device(&officer(), true);
    // Before any record the id may still change.
    d.store
        .set_device_identity(&officer_tablet(), at(0))
        .unwrap();
    d.store.set_device_identity(&officer(), at(0)).unwrap();
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    f.create_infraction(infraction_input()).unwrap();
    let e = d
        .store
        .set_device_identity(&officer_tablet(), at(1))
        .unwrap_err();
    assert!(
        matches!(e, StoreError::DeviceIdChange { records: 1, .. }),
        "{e}"
    );
    // Another user signing in on the same device is fine.
    let other = DeviceIdentity {
        user_id: "U-GM-99".into(),
        ..officer()
    };
    d.store.set_device_identity(&other, at(1)).unwrap();
    assert_eq!(d.store.device_identity().unwrap(), Some(other));
}

#[test]
fn unknown_records_are_reported() {
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f.issue("nope", at(0), unsigned()).unwrap_err();
    assert!(
        matches!(e, FieldError::Store(StoreError::RecordNotFound(_))),
        "{e}"
    );
    assert!(f.show("nope").is_err());
}

#[test]
fn over_limit_inputs_are_refused_on_the_device_and_nothing_is_written() {
    use crate::limits::{MAX_FACTS_CHARS, MAX_STATEMENT_CHARS, MAX_WITNESSES};
    let mut d = device(&officer(), true);
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    // Creation with facts one character over the limit: refused, no record, no number taken.
    let mut input = infraction_input();
    input.facts = Some("é".repeat(MAX_FACTS_CHARS + 1));
    let e = f.create_infraction(input).unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::TooLarge { .. })),
        "{e}"
    );
    assert!(f.list().unwrap().is_empty());
    // At the limit: written.
    let mut input = infraction_input();
    input.facts = Some("é".repeat(MAX_FACTS_CHARS));
    let id = f.create_infraction(input).unwrap().id;
    let bytes_before = d.store.load_record_bytes(&id).unwrap();

    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let e = f
        .set_facts(&id, at(1), &"x".repeat(MAX_FACTS_CHARS + 1))
        .unwrap_err();
    assert!(e.to_string().contains("excede o limite"), "{e}");
    let long = "x".repeat(MAX_STATEMENT_CHARS + 1);
    let e = f
        .add_witness(&id, at(1), WitnessEntry::named("Ana", &long))
        .unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::TooLarge { .. })),
        "{e}"
    );
    assert_eq!(d.store.load_record_bytes(&id).unwrap(), bytes_before);

    // Witnesses up to the limit, and not one more.
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    for i in 0..MAX_WITNESSES {
        f.add_witness(&id, at(2), WitnessEntry::named(&format!("T{i}"), "Vi."))
            .unwrap();
    }
    let e = f
        .add_witness(&id, at(3), WitnessEntry::named("Mais um", "Vi."))
        .unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::TooLarge { .. })),
        "{e}"
    );
    assert_eq!(f.show(&id).unwrap().view.witnesses.len(), MAX_WITNESSES);
}

#[test]
fn issuing_seals_with_the_stores_own_key_which_survives_a_reopen() {
    let mut d = device(&officer(), true);
    let key = d.store.device_public_key().unwrap();
    let mut f = FieldRecords::open(&mut d.store).unwrap();
    let id = f.create_infraction(infraction_input()).unwrap().id;
    f.issue(&id, at(2), unsigned()).unwrap();
    let view = stored_doc(&d.store, &id).view().unwrap();
    let seal = view.seal.as_ref().expect("sealed at issue");
    assert_eq!(seal.public_key, hex::encode(key));
    crate::records::verify_seal(&view).unwrap();
    drop(d.store);
    let reopened = Store::open(&d.path).unwrap();
    assert_eq!(
        reopened.device_public_key().unwrap(),
        key,
        "one key per store"
    );
}

#[test]
fn the_vehicle_found_by_the_check_is_confirmed_before_the_auto_is_issued() {
    let mut dev = device(&officer(), true);
    let mut f = FieldRecords::open(&mut dev.store).unwrap();
    // Created and issued at once without the officer's confirmation: refused, nothing saved.
    let e = f
        .create_infraction(NewInfraction {
            confirm_vehicle: false,
            issue: Some(unsigned()),
            ..infraction_input()
        })
        .unwrap_err();
    assert!(
        matches!(e, FieldError::Record(RecordError::VehicleNotConfirmed { ref plate }) if plate == "GHI7J89"),
        "{e:?}"
    );
    assert!(f.list().unwrap().is_empty());
    let draft = f
        .create_infraction(NewInfraction {
            confirm_vehicle: false,
            ..infraction_input()
        })
        .unwrap();
    assert!(draft.view.vehicle_confirmation.is_none());
    assert!(matches!(
        f.issue(&draft.id, at(2), unsigned()),
        Err(FieldError::Record(RecordError::VehicleNotConfirmed { .. }))
    ));
    let confirmed = f.confirm_vehicle(&draft.id, at(3)).unwrap();
    let c = confirmed.view.vehicle_confirmation.clone().unwrap();
    assert_eq!(
        (c.user_id.as_str(), c.at, c.plate.as_str()),
        ("U-GM-17", at(3), "GHI7J89")
    );
    assert_eq!(c.device_id, officer().device_id);
    let out = f.issue(&draft.id, at(4), unsigned()).unwrap();
    assert!(out.view.sealed);
    assert!(matches!(
        f.confirm_vehicle(&draft.id, at(5)),
        Err(FieldError::Record(RecordError::Sealed { .. }))
    ));
}
