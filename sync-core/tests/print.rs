//! The printed auto's content, built on the device from its store alone: names from the
//! replica and the observed people, the officer from the session, the legal basis with the
//! catalogue's titles, witnesses, the signature state and the vehicle confirmation; a draft is
//! refused and no full CPF reaches the paper.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use chrono::{DateTime, Duration, Utc};
use documents::{AutoKind, SignatureLine};
use sync_core::domain::{DriverId, Plate};
use sync_core::field::{FieldRecords, NewInfraction, NewTransgression, WitnessEntry};
use sync_core::print::{self, PrintError};
use sync_core::records::{Gravity, Position, Signature, UserRole};
use sync_core::rules::{self, Observation, RuleId, VehicleQuery};
use sync_core::store::{ClientSession, DeviceIdentity, ObservedPerson, Store};
use sync_core::testkit::{STRANGER_CPF, sample_registry};
use uuid::Uuid;

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

/// A device with the sample registry, the officer's identity, numbers and a session.
fn device(dir: &tempfile::TempDir) -> Store {
    let mut store = Store::open(dir.path().join("device.db")).unwrap();
    store
        .apply_snapshot(&sample_registry(), t("2026-11-30T08:00:00Z"))
        .unwrap();
    store.set_device_identity(&officer(), at(0)).unwrap();
    store.add_number_block(1, 100).unwrap();
    store
        .save_client_session(&ClientSession {
            server_url: "https://fiscal.americana.sp.gov.br".into(),
            server_device_id: "tablet-gm-07".into(),
            user_id: "U-GM-17".into(),
            username: "fiscal.joao".into(),
            role: "officer".into(),
            stand_id: None,
            access_token: "a".into(),
            access_valid_until: at(60),
            refresh_token: "r".into(),
            refresh_valid_until: at(600),
            updated_at: at(0),
        })
        .unwrap();
    store
}

/// Auxiliary P08 (CNH expired) driving GHI7J89 (permit 0004, holder P07), at stand S02.
fn auxiliary_auto() -> NewInfraction {
    NewInfraction {
        vehicle: VehicleQuery::Plate(Plate::parse("ghi-7j89").unwrap()),
        driver: DriverId::parse("cpf:78000751925").unwrap(),
        driver_name: None,
        at: at(0),
        monotonic: 1,
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
        witnesses: vec![WitnessEntry {
            person: sync_core::field::PersonInput::Observed(ObservedPerson {
                name: Some("Maria Souza".into()),
                cpf: Some("111.444.777-35".into()),
                cnh: None,
                details: serde_json::json!({}),
            }),
            statement: "Vi o condutor chegar ao ponto.".into(),
        }],
        photos: Vec::new(),
        confirm_vehicle: true,
        issue: Some(Signature::Missing {
            reason: "recusou-se a assinar".into(),
        }),
    }
}

#[test]
fn an_issued_auto_with_an_auxiliary_names_driver_holder_witness_and_the_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = device(&dir);
    let out = FieldRecords::open(&mut store)
        .unwrap()
        .create_infraction(auxiliary_auto())
        .unwrap();
    let c = print::auto_content(&store, &out.id, at(10)).unwrap();

    assert_eq!(c.kind, AutoKind::Infraction);
    assert_eq!(c.number.as_deref(), Some("1"));
    assert_eq!(c.issuing_body, "Guarda Municipal de Americana");
    assert_eq!(c.occurred_at, at(0));
    assert_eq!(c.issued_at, Some(at(0)));
    assert_eq!(
        c.place.as_deref(),
        Some("Ponto Praça Basílio Rangel, Americana-SP")
    );
    assert_eq!(c.position, Some((-22.7395, -47.3317, Some(8.5))));
    assert_eq!(c.plate.as_deref(), Some("GHI7J89"));
    assert_eq!(c.permit_number.as_deref(), Some("0004"));
    // Confirmed by the officer, named as the session knows them.
    assert_eq!(
        c.vehicle_confirmed,
        Some((String::from("fiscal.joao"), at(0)))
    );
    assert_eq!(c.driver.name, "Rafael Lima");
    assert!(c.driver.role.contains("auxiliar"), "{}", c.driver.role);
    assert!(
        c.driver.document.as_deref().unwrap().starts_with("CNH "),
        "{:?}",
        c.driver.document
    );
    // Art. 32 § 2: the holder answers with the auxiliary.
    let holder = c.holder.as_ref().expect("holder charged");
    assert_eq!(holder.name, "Beatriz Costa");
    assert_eq!(holder.role, "titular do alvará");
    assert_eq!(c.officer.name, "fiscal.joao");
    assert_eq!(c.officer.role, UserRole::GuardaMunicipal.label_pt());
    assert_eq!(c.officer.document.as_deref(), Some("usuário U-GM-17"));
    assert_eq!(c.gravity, None);
    // Every basis the record holds, with the catalogue's own short description.
    assert_eq!(c.legal_basis.len(), out.view.legal_basis.len());
    for (line, basis) in c.legal_basis.iter().zip(&out.view.legal_basis) {
        assert_eq!(line.citation, basis.citation);
        assert_eq!(
            line.description,
            rules::lookup(&basis.rule_id).unwrap().title
        );
    }
    assert_eq!(c.facts, "Auxiliar conduzindo com CNH vencida.");
    assert_eq!(c.witnesses.len(), 1);
    assert_eq!(c.witnesses[0].party.name, "Maria Souza");
    assert_eq!(c.witnesses[0].party.role, "testemunha");
    assert_eq!(
        c.witnesses[0].party.document.as_deref(),
        Some("CPF ***.444.777-**")
    );
    assert_eq!(c.witnesses[0].statement, "Vi o condutor chegar ao ponto.");
    assert_eq!(
        c.signature,
        SignatureLine::Missing {
            reason: "recusou-se a assinar".into()
        }
    );
    // The code is the seal's (derived from the device signature), at the session's server.
    let seal = out.view.seal.clone().expect("sealed at issue");
    let v = c
        .verification
        .as_ref()
        .expect("a sealed auto carries its code");
    assert_eq!(v.code, seal.verification_code().unwrap());
    assert_eq!(
        v.url(),
        format!(
            "https://fiscal.americana.sp.gov.br/verificar/{}",
            v.code.compact()
        )
    );
    assert_eq!(c.printed_at, at(10));
    // No full CPF anywhere on the paper (the driver's, the holder's or the witness's).
    let text = serde_json::to_string(&c).unwrap();
    for cpf in [
        "78000751925",
        "780.007.519-25",
        "11144477735",
        "111.444.777-35",
    ] {
        assert!(!text.contains(cpf), "{cpf} in {text}");
    }
}

#[test]
fn a_stranger_at_the_wheel_is_named_from_the_device_with_a_masked_cpf() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = device(&dir);
    let out = FieldRecords::open(&mut store)
        .unwrap()
        .create_infraction(NewInfraction {
            vehicle: VehicleQuery::Permit("0001".into()),
            driver: DriverId::parse(&format!("cpf:{STRANGER_CPF}")).unwrap(),
            driver_name: Some("Fulano de Tal".into()),
            observation: Observation::default(),
            witnesses: Vec::new(),
            issue: Some(Signature::Signed {
                sha256: "ab".repeat(32),
            }),
            ..auxiliary_auto()
        })
        .unwrap();
    let c = print::auto_content(&store, &out.id, at(10)).unwrap();
    assert_eq!(c.driver.name, "Fulano de Tal");
    let masked = print::masked_cpf(STRANGER_CPF).unwrap();
    assert_eq!(c.driver.document, Some(format!("CPF {masked}")));
    assert!(!serde_json::to_string(&c).unwrap().contains(STRANGER_CPF));
    assert_eq!(c.place, None);
    assert_eq!(
        c.signature,
        SignatureLine::Signed {
            sha256: "ab".repeat(32)
        }
    );
    // The holder of 0001 is charged for a stranger driving it.
    assert!(c.holder.is_some());
}

#[test]
fn a_draft_is_not_printed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = device(&dir);
    let out = FieldRecords::open(&mut store)
        .unwrap()
        .create_infraction(NewInfraction {
            issue: None,
            confirm_vehicle: false,
            ..auxiliary_auto()
        })
        .unwrap();
    let e = print::auto_content(&store, &out.id, at(1)).unwrap_err();
    assert!(matches!(e, PrintError::NotIssued), "{e:?}");
    assert_eq!(
        e.to_string(),
        "o registro ainda é um rascunho: emita-o antes de imprimir"
    );
    for format in documents::Format::ALL {
        assert!(matches!(
            print::render_record(&store, &out.id, format, at(1)),
            Err(PrintError::NotIssued)
        ));
    }
    assert!(matches!(
        print::auto_content(&store, "no-such-record", at(1)),
        Err(PrintError::Field(_))
    ));
}

#[test]
fn a_coordinators_report_prints_its_gravity_and_an_unconfirmed_registry_plate() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("coord.db")).unwrap();
    store
        .apply_snapshot(&sample_registry(), t("2026-11-30T08:00:00Z"))
        .unwrap();
    let coordinator = DeviceIdentity {
        device_id: Uuid::from_u128(0xC1),
        user_id: "U-COORD".into(),
        role: UserRole::Coordinator,
        stand_id: Some("S02".into()),
        issuing_body: None,
    };
    store.set_device_identity(&coordinator, at(0)).unwrap();
    store.add_number_block(1, 10).unwrap();
    let out = FieldRecords::open(&mut store)
        .unwrap()
        .create_transgression(NewTransgression {
            vehicle: VehicleQuery::Permit("0002".into()),
            driver: DriverId::parse("cnh:71049964159").unwrap(),
            coordinator_stand: None,
            gravity: Gravity::Light,
            facts: "Discussão no ponto.".into(),
            legal_basis: vec![sync_core::records::LegalBasis::of(RuleId::R28)],
            at: at(0),
            monotonic: 1,
            position: None,
            witnesses: Vec::new(),
            photos: Vec::new(),
            issue: Some(Signature::Missing {
                reason: "ausente".into(),
            }),
            then: None,
        })
        .unwrap();
    let c = print::auto_content(&store, &out.id, at(3)).unwrap();
    assert_eq!(c.kind, AutoKind::Transgression);
    assert_eq!(c.gravity.as_deref(), Some("leve"));
    assert_eq!(c.plate.as_deref(), Some("ABC1C34"));
    assert_eq!(c.vehicle_confirmed, None);
    // No session on this device: the officer is named by user id.
    assert_eq!(c.officer.name, "U-COORD");
    assert_eq!(c.driver.name, "Pedro Santos");
    assert_eq!(c.legal_basis[0].description, rules::spec(RuleId::R28).title);
}

#[test]
fn an_issued_auto_prints_in_every_format_with_what_it_states() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = device(&dir);
    let out = FieldRecords::open(&mut store)
        .unwrap()
        .create_infraction(auxiliary_auto())
        .unwrap();
    for format in [documents::Format::EscPos58, documents::Format::EscPos80] {
        let bytes = print::render_record(&store, &out.id, format, at(10)).unwrap();
        assert!(bytes.starts_with(b"\x1b@"), "{format:?}");
        let decoded = documents::escpos::decode(&bytes).unwrap();
        assert_eq!(decoded.copies.len(), 2, "{format:?}: two copies");
        for (copy, label) in decoded
            .copies
            .iter()
            .zip(["VIA DO AUTUADO", "VIA DO ÓRGÃO"])
        {
            // Words may wrap at the paper's width: compare without line breaks.
            let text = copy.text().replace('\n', " ");
            for said in [
                label,
                "GHI7J89",
                "0004",
                "Rafael Lima",
                "Beatriz Costa",
                "Maria Souza",
                "fiscal.joao",
                "recusou-se a assinar",
            ] {
                assert!(text.contains(said), "{format:?}: {said:?} not in {text}");
            }
            for cpf in ["78000751925", "780.007.519-25", "111.444.777-35"] {
                assert!(!text.contains(cpf), "{format:?}: {cpf}");
            }
        }
    }
    for format in [documents::Format::PdfA4, documents::Format::PdfReceipt] {
        let bytes = print::render_record(&store, &out.id, format, at(10)).unwrap();
        assert!(bytes.starts_with(b"%PDF"), "{format:?}");
    }
}
