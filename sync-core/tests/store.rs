//! Device store: migrations and file recognition, the registry feed, lookups and checks,
//! records with auto numbers, photos, observed people.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::Connection;
use sync_core::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverId, DriverLicence, LicenceKind, Person, Plate, Registry,
};
use sync_core::feed::{self, RegistryChange, RegistryChanges};
use sync_core::rules::{self, CheckInput, LawParameters, Observation, RulesConfig, VehicleQuery};
use sync_core::store::{
    APPLICATION_ID, LATEST_VERSION, ObservedPerson, PhotoStatus, RecordMeta, RecordWrite, Store,
    StoreError,
};
use sync_core::testkit::{STRANGER_CPF, sample_registry};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

const REFRESHED: &str = "2026-11-30T09:00:00Z";

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    Fixture { _dir: dir, path }
}

fn loaded(f: &Fixture) -> Store {
    let mut s = Store::open(&f.path).unwrap();
    s.apply_snapshot(&sample_registry(), t(REFRESHED)).unwrap();
    s
}

/// (type, name, tbl_name, sql) of every schema object, sorted: the schema as SQLite sees it.
fn schema_of(path: &Path) -> Vec<(String, String, String, Option<String>)> {
    let c = Connection::open(path).unwrap();
    let mut stmt = c
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn pragma_i64(path: &Path, name: &str) -> i64 {
    let c = Connection::open(path).unwrap();
    c.pragma_query_value(None, name, |r| r.get(0)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Migrations and file recognition

#[test]
fn fresh_store_is_ours_at_latest_version_in_wal() {
    let f = fixture();
    let s = Store::open(&f.path).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
    const {
        assert!(
            LATEST_VERSION >= 2,
            "the v1→latest test needs at least two migrations"
        )
    };
    drop(s);
    assert_eq!(
        pragma_i64(&f.path, "application_id"),
        i64::from(APPLICATION_ID)
    );
    assert_eq!(pragma_i64(&f.path, "user_version"), LATEST_VERSION);
    let c = Connection::open(&f.path).unwrap();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Re-opening is a no-op.
    drop(c);
    let s = Store::open(&f.path).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
}

#[test]
fn migrated_from_v1_equals_fresh() {
    let old = fixture();
    {
        let mut s = Store::open_at_version(&old.path, 1).unwrap();
        assert_eq!(s.schema_version().unwrap(), 1);
        // Version 1 has the replica: fill it, the migration must carry the data over.
        s.apply_snapshot(&sample_registry(), t(REFRESHED)).unwrap();
    }
    assert_eq!(pragma_i64(&old.path, "user_version"), 1);
    let v1_schema = schema_of(&old.path);
    assert!(
        !v1_schema.iter().any(|o| o.1 == "records"),
        "v1 has no records table"
    );

    let migrated = Store::open(&old.path).unwrap();
    assert_eq!(migrated.schema_version().unwrap(), LATEST_VERSION);
    let kept = migrated.export_registry().unwrap();
    assert_eq!(kept, feed::sorted(sample_registry()));
    // The check bundles (migration 6) were built from the carried-over rows on open.
    assert_store_is(&migrated, &sample_registry(), t(REFRESHED));
    drop(migrated);

    let fresh = fixture();
    drop(Store::open(&fresh.path).unwrap());
    let (a, b) = (schema_of(&old.path), schema_of(&fresh.path));
    assert!(a.len() > v1_schema.len());
    assert_eq!(a, b, "a file migrated from v1 must have the fresh schema");
}

#[test]
fn newer_file_is_refused_and_untouched() {
    let f = fixture();
    drop(Store::open(&f.path).unwrap());
    {
        let c = Connection::open(&f.path).unwrap();
        c.pragma_update(None, "user_version", LATEST_VERSION + 1)
            .unwrap();
    }
    let before = std::fs::read(&f.path).unwrap();
    let err = Store::open(&f.path).unwrap_err();
    match &err {
        StoreError::TooNew {
            found, supported, ..
        } => {
            assert_eq!(*found, LATEST_VERSION + 1);
            assert_eq!(*supported, LATEST_VERSION);
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert!(err.to_string().contains("atualize o aplicativo"), "{err}");
    assert_eq!(std::fs::read(&f.path).unwrap(), before);
}

#[test]
fn corrupt_files_are_refused_and_untouched() {
    let text: Vec<u8> = b"este arquivo nao e um banco de dados\n".repeat(200);
    let mut fake_sqlite = b"SQLite format 3\0".to_vec();
    fake_sqlite.extend((0..8192u32).map(|i| (i * 7 + 13) as u8));
    for (name, bytes) in [
        ("texto", text),
        ("cabecalho-falso", fake_sqlite),
        ("curto", b"SQLite".to_vec()),
    ] {
        let f = fixture();
        std::fs::write(&f.path, &bytes).unwrap();
        let err = Store::open(&f.path).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{name}: {err:?}");
        assert!(
            err.to_string().contains("não foi alterado"),
            "{name}: {err}"
        );
        assert_eq!(
            std::fs::read(&f.path).unwrap(),
            bytes,
            "{name}: file changed"
        );
    }
}

#[test]
fn foreign_sqlite_files_are_refused_and_untouched() {
    // Unknown tables, no application id.
    let a = fixture();
    {
        let c = Connection::open(&a.path).unwrap();
        c.execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');")
            .unwrap();
    }
    // Another application's id, no tables.
    let b = fixture();
    {
        let c = Connection::open(&b.path).unwrap();
        c.pragma_update(None, "application_id", 0x0F0F_0F0F)
            .unwrap();
        c.execute_batch("CREATE TABLE t (x); DROP TABLE t;")
            .unwrap();
    }
    for f in [&a, &b] {
        let before = std::fs::read(&f.path).unwrap();
        assert!(!before.is_empty());
        let err = Store::open(&f.path).unwrap_err();
        assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
        assert!(err.to_string().contains("outro aplicativo"), "{err}");
        assert_eq!(
            std::fs::read(&f.path).unwrap(),
            before,
            "foreign file changed"
        );
        // Refusing twice is stable (the first attempt left nothing behind).
        assert!(matches!(
            Store::open(&f.path),
            Err(StoreError::Foreign { .. })
        ));
    }
}

#[test]
fn empty_file_becomes_a_store() {
    let f = fixture();
    std::fs::write(&f.path, b"").unwrap();
    let s = Store::open(&f.path).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
}

// ---------------------------------------------------------------------------------------------
// Registry feed

fn person(id: &str, cpf: &str, cnh: &str) -> Person {
    Person {
        id: id.into(),
        name: format!("Pessoa {id}"),
        cpf: Cpf::parse(cpf).unwrap(),
        birth_date: d(1980, 5, 5),
        licence: DriverLicence {
            number: CnhNumber::parse(cnh).unwrap(),
            category: "B".into(),
            first_licence_date: d(2005, 1, 1),
            expiry: d(2031, 1, 1),
            kind: LicenceKind::D,
            observations: vec!["EAR".into()],
        },
    }
}

/// Version 8 of the sample: 0002 moves to stand S01, a new auxiliary on 0005, fine FINE-1 paid
/// off the books (deleted), V03 gets a Mercosul plate, P08 renamed.
fn version_8() -> Registry {
    let mut r = sample_registry();
    r.version = 8;
    r.generated_at = Some(t("2026-11-30T08:00:00Z"));
    r.people.push(person("P11", "11144477735", "02650306461"));
    r.people.iter_mut().find(|p| p.id == "P08").unwrap().name = "Rafael Lima Jr.".into();
    r.permits
        .iter_mut()
        .find(|p| p.number == "0002")
        .unwrap()
        .stand_id = "S01".into();
    r.permits
        .iter_mut()
        .find(|p| p.number == "0005")
        .unwrap()
        .auxiliaries
        .push(AuxiliaryDriver {
            person_id: "P11".into(),
            licence_number: "0005-A1".into(),
            registered_on: d(2026, 11, 29),
        });
    r.fines.clear();
    r.vehicles.iter_mut().find(|v| v.id == "V03").unwrap().plate = Plate::parse("DEF4H56").unwrap();
    r.validate().unwrap();
    r
}

#[test]
fn snapshot_then_changes_match_the_in_memory_model() {
    let f = fixture();
    let mut s = loaded(&f);
    let info = s.replica_info().unwrap().unwrap();
    assert_eq!(info.version, 7);
    assert_eq!(info.refreshed_at, t(REFRESHED));
    assert_eq!(info.generated_at, sample_registry().generated_at);
    assert_eq!(
        s.export_registry().unwrap(),
        feed::sorted(sample_registry())
    );

    let v8 = version_8();
    let changes = feed::diff(&sample_registry(), &v8);
    assert_eq!(changes.from_version, 7);
    assert!(
        changes
            .changes
            .iter()
            .any(|c| matches!(c, RegistryChange::DeleteFine { id } if id == "FINE-1"))
    );
    // The batch survives JSON (what the server will send).
    let changes = RegistryChanges::from_json(&serde_json::to_string(&changes).unwrap()).unwrap();
    let later = t("2026-11-30T10:00:00Z");
    let report = s.apply_changes(&changes, later).unwrap();
    assert_eq!((report.from_version, report.version), (Some(7), 8));
    assert_eq!(report.rows, changes.changes.len());

    let mut model = sample_registry();
    feed::apply(&mut model, &changes).unwrap();
    assert_eq!(feed::sorted(model.clone()), feed::sorted(v8.clone()));
    assert_eq!(s.export_registry().unwrap(), feed::sorted(v8));
    let info = s.replica_info().unwrap().unwrap();
    assert_eq!((info.version, info.refreshed_at), (8, later));

    // Upserts and deletes are visible through lookups.
    let at = t("2026-11-30T15:00:00Z");
    let p2 = s.lookup_permit("0002", at).unwrap().unwrap();
    assert_eq!(p2.stand.id, "S01");
    assert_eq!(p2.registry.version, 8);
    let p4 = s.lookup_permit("0004", at).unwrap().unwrap();
    assert!(p4.unpaid_fines.is_empty(), "deleted fine still visible");
    assert_eq!(p4.auxiliaries[0].name, "Rafael Lima Jr.");
    let p5 = s.lookup_permit("0005", at).unwrap().unwrap();
    assert_eq!(
        p5.auxiliaries
            .iter()
            .map(|p| p.id.as_str())
            .collect::<Vec<_>>(),
        ["P11"]
    );
    assert!(
        s.lookup_plate(&Plate::parse("DEF4G56").unwrap(), at)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        s.lookup_plate(&Plate::parse("def-4756").unwrap(), at)
            .unwrap()
            .unwrap()
            .permit
            .number,
        "0003"
    );
    let stranger = s
        .lookup_person(&DriverId::parse("11144477735").unwrap(), at)
        .unwrap()
        .unwrap();
    assert_eq!(stranger.permits.len(), 1);
    assert_eq!(stranger.permits[0].permit.number, "0005");

    // An empty batch at the current version only refreshes.
    let empty = RegistryChanges {
        from_version: 8,
        to_version: 8,
        generated_at: None,
        changes: vec![],
    };
    let even_later = t("2026-12-01T10:00:00Z");
    s.apply_changes(&empty, even_later).unwrap();
    let info = s.replica_info().unwrap().unwrap();
    assert_eq!((info.version, info.refreshed_at), (8, even_later));
    assert_eq!(info.generated_at, Some(t("2026-11-30T08:00:00Z")));
}

fn assert_unchanged(s: &Store, expected: &Registry, refreshed: DateTime<Utc>) {
    let info = s.replica_info().unwrap().unwrap();
    assert_eq!(info.version, expected.version);
    assert_eq!(info.refreshed_at, refreshed);
    assert_eq!(s.export_registry().unwrap(), feed::sorted(expected.clone()));
}

#[test]
fn out_of_order_batches_are_refused_with_nothing_applied() {
    let f = fixture();
    let mut s = loaded(&f);
    let good = feed::diff(&sample_registry(), &version_8());
    for from in [6, 8, 0] {
        let mut bad = good.clone();
        bad.from_version = from;
        bad.to_version = from.max(9);
        let err = s
            .apply_changes(&bad, t("2026-12-01T00:00:00Z"))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::Feed(feed::FeedError::OutOfOrder { current: 7, from: f }) if f == from),
            "{err:?}"
        );
        assert!(err.to_string().contains("fora de ordem"), "{err}");
        assert_unchanged(&s, &sample_registry(), t(REFRESHED));
    }
    // A backwards batch is refused by shape.
    let mut backwards = good.clone();
    backwards.to_version = 6;
    assert!(matches!(
        s.apply_changes(&backwards, t("2026-12-01T00:00:00Z")),
        Err(StoreError::Feed(feed::FeedError::Backwards { .. }))
    ));
    assert_unchanged(&s, &sample_registry(), t(REFRESHED));
}

#[test]
fn a_batch_that_breaks_a_reference_is_rolled_back_whole() {
    let f = fixture();
    let mut s = loaded(&f);
    let mut renamed = sample_registry().stands[0].clone();
    renamed.name = "Terminal Renomeado".into();
    let batch = RegistryChanges {
        from_version: 7,
        to_version: 8,
        generated_at: None,
        changes: vec![
            // Valid on its own, applied first …
            RegistryChange::UpsertStand { stand: renamed },
            RegistryChange::DeleteFine {
                id: "FINE-1".into(),
            },
            // … then P01 is deleted while permit 0001 still names them as holder.
            RegistryChange::DeletePerson { id: "P01".into() },
        ],
    };
    let err = s
        .apply_changes(&batch, t("2026-12-01T00:00:00Z"))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Integrity { version: 7, .. }),
        "{err:?}"
    );
    assert_unchanged(&s, &sample_registry(), t(REFRESHED));

    // A duplicate plate fails immediately, same outcome.
    let mut clash = sample_registry().vehicles[1].clone();
    clash.plate = Plate::parse("BRA2E19").unwrap();
    let batch = RegistryChanges {
        from_version: 7,
        to_version: 8,
        generated_at: None,
        changes: vec![RegistryChange::UpsertVehicle { vehicle: clash }],
    };
    assert!(matches!(
        s.apply_changes(&batch, t("2026-12-01T00:00:00Z")),
        Err(StoreError::Integrity { .. })
    ));
    assert_unchanged(&s, &sample_registry(), t(REFRESHED));

    // Deleting the holder together with their permit (and its links) is fine.
    let batch = RegistryChanges {
        from_version: 7,
        to_version: 8,
        generated_at: None,
        changes: vec![
            RegistryChange::DeletePerson { id: "P01".into() },
            RegistryChange::DeletePermit {
                number: "0001".into(),
            },
        ],
    };
    s.apply_changes(&batch, t("2026-12-01T00:00:00Z")).unwrap();
    let at = t("2026-12-01T12:00:00Z");
    assert!(s.lookup_permit("0001", at).unwrap().is_none());
    // P02 was auxiliary on 0001 only: still registered, on no permit now.
    let p02 = s
        .lookup_person(&DriverId::parse("36084852955").unwrap(), at)
        .unwrap()
        .unwrap();
    assert!(p02.permits.is_empty());
}

#[test]
fn snapshots_older_than_the_replica_are_refused_and_changes_need_a_snapshot() {
    let f = fixture();
    let mut s = Store::open(&f.path).unwrap();
    let batch = feed::diff(&sample_registry(), &version_8());
    assert!(matches!(
        s.apply_changes(&batch, t(REFRESHED)),
        Err(StoreError::NoRegistry)
    ));
    assert!(matches!(
        s.lookup_permit("0001", t(REFRESHED)),
        Err(StoreError::NoRegistry)
    ));
    s.apply_snapshot(&version_8(), t(REFRESHED)).unwrap();
    let err = s
        .apply_snapshot(&sample_registry(), t(REFRESHED))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::StaleSnapshot {
                current: 8,
                snapshot: 7
            }
        ),
        "{err:?}"
    );
    assert_unchanged(&s, &version_8(), t(REFRESHED));
    // A new snapshot replaces everything, including rows the old one had.
    let mut v9 = sample_registry();
    v9.version = 9;
    s.apply_snapshot(&v9, t("2026-12-02T00:00:00Z")).unwrap();
    assert_unchanged(&s, &v9, t("2026-12-02T00:00:00Z"));
}

// ---------------------------------------------------------------------------------------------
// Lookups

#[test]
fn every_plate_spelling_finds_permit_0002() {
    let f = fixture();
    let s = loaded(&f);
    let at = t("2026-11-30T15:00:00Z");
    for spelling in ["ABC-1234", "abc1234", "ABC1C34", "abc 1c34", " Abc-1C34 "] {
        let v = s
            .lookup_plate(&Plate::parse(spelling).unwrap(), at)
            .unwrap()
            .unwrap_or_else(|| panic!("{spelling} not found"));
        assert_eq!(v.permit.number, "0002", "{spelling}");
        assert_eq!(v.plate, "ABC1C34");
        assert_eq!(v.holder.id, "P04");
        assert_eq!(
            v.auxiliaries
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>(),
            ["P05"]
        );
        assert_eq!(v.vehicle.id, "V02");
        assert_eq!(v.stand.id, "S02");
        assert!(v.penalties_in_force.is_empty() && v.unpaid_fines.is_empty());
        assert_eq!(v.registry.version, 7);
        assert_eq!(v.registry.age_seconds, Some(6 * 3600));
    }
    assert!(
        s.lookup_plate(&Plate::parse("ZZZ9Z99").unwrap(), at)
            .unwrap()
            .is_none()
    );
}

#[test]
fn lookup_by_permit_shows_penalties_and_fines_in_force() {
    let f = fixture();
    let s = loaded(&f);
    let during = t("2026-11-25T15:00:00Z");
    let v3 = s.lookup_permit(" 0003 ", during).unwrap().unwrap();
    assert_eq!(v3.plate, "DEF4G56");
    assert_eq!(
        v3.penalties_in_force
            .iter()
            .map(|p| p.id.as_str())
            .collect::<Vec<_>>(),
        ["PEN-1"]
    );
    // The suspension ran 20 Nov – 4 Dec: over by the 10th.
    let after = t("2026-12-10T15:00:00Z");
    assert!(
        s.lookup_permit("0003", after)
            .unwrap()
            .unwrap()
            .penalties_in_force
            .is_empty()
    );
    let v4 = s.lookup_permit("0004", during).unwrap().unwrap();
    assert_eq!(
        v4.unpaid_fines
            .iter()
            .map(|f| f.id.as_str())
            .collect::<Vec<_>>(),
        ["FINE-1"]
    );
    assert!(s.lookup_permit("9999", during).unwrap().is_none());
}

#[test]
fn lookup_by_cpf_and_cnh_of_holders_and_auxiliaries() {
    let f = fixture();
    let s = loaded(&f);
    let at = t("2026-11-30T15:00:00Z");
    let numbers = |who: &str| -> Option<Vec<String>> {
        s.lookup_person(&DriverId::parse(who).unwrap(), at)
            .unwrap()
            .map(|pp| pp.permits.into_iter().map(|v| v.permit.number).collect())
    };
    // P05 Pedro, auxiliary of 0002, by CPF (masked) and by CNH.
    assert_eq!(numbers("999.405.615-80"), Some(vec!["0002".to_owned()]));
    assert_eq!(numbers("cnh:71049964159"), Some(vec!["0002".to_owned()]));
    // P01 João, holder of 0001, by CNH; by CPF.
    assert_eq!(numbers("cnh:41491906696"), Some(vec!["0001".to_owned()]));
    assert_eq!(numbers("cpf:45074952883"), Some(vec!["0001".to_owned()]));
    // P10 Helena coordinates a stand and is on no permit.
    assert_eq!(numbers("87257178127"), Some(vec![]));
    assert_eq!(numbers(STRANGER_CPF), None);
    let pp = s
        .lookup_person(&DriverId::parse("cpf:36084852955").unwrap(), at)
        .unwrap()
        .unwrap();
    assert_eq!(pp.person.id, "P02");
    assert_eq!(pp.permits[0].holder.id, "P01");
}

// ---------------------------------------------------------------------------------------------
// Checks

fn input(vehicle: VehicleQuery, driver: &str, at: &str, obs: Observation) -> CheckInput {
    CheckInput {
        vehicle,
        driver: DriverId::parse(driver).unwrap(),
        at: t(at),
        observation: obs,
        registry_refreshed_at: None,
    }
}

#[test]
fn verdict_is_stamped_with_version_and_age() {
    let f = fixture();
    let s = loaded(&f);
    // Refreshed at 09:00Z, checked three hours later.
    let i = input(
        VehicleQuery::Plate(Plate::parse("ABC-1234").unwrap()),
        "cpf:86840102130",
        "2026-11-30T12:00:00Z",
        Observation::default(),
    );
    let v = s.check(&i).unwrap();
    assert_eq!(v.registry.version, 7);
    assert_eq!(v.registry.refreshed_at, Some(t(REFRESHED)));
    assert_eq!(v.registry.age_seconds, Some(10_800));
    assert_eq!(v.permit_number.as_deref(), Some("0002"));
    assert_eq!(v.driver_person_id.as_deref(), Some("P04"));
    // The caller's refresh time is ignored: the replica knows when it was refreshed.
    let mut lying = i.clone();
    lying.registry_refreshed_at = Some(t("2026-11-30T11:59:00Z"));
    assert_eq!(s.check(&lying).unwrap().registry.age_seconds, Some(10_800));
}

#[test]
fn device_check_stand_rules_and_a_deceased_holder() {
    let f = fixture();
    let mut s = loaded(&f);
    let abc = || VehicleQuery::Plate(Plate::parse("ABC-1234").unwrap());
    let ids = |v: &rules::Verdict| v.findings.iter().map(|f| f.rule_id).collect::<Vec<_>>();
    // 12:00 local: idle away from any stand, in the mandatory hours of its own (06–20).
    let idle = Observation {
        idle: true,
        ..Observation::default()
    };
    let v = s
        .check(&input(
            abc(),
            "cpf:86840102130",
            "2026-11-30T15:00:00Z",
            idle.clone(),
        ))
        .unwrap();
    assert_eq!(ids(&v), vec![rules::RuleId::R24]);
    assert!(v.findings[0].message.contains("fora de qualquer ponto"));
    // A stand the replica does not know: said, as a warning.
    let unknown = Observation {
        at_stand: Some("S99".into()),
        ..idle
    };
    let v = s
        .check(&input(
            abc(),
            "cpf:86840102130",
            "2026-11-30T15:00:00Z",
            unknown,
        ))
        .unwrap();
    assert_eq!(ids(&v), vec![rules::RuleId::R24]);
    assert_eq!(v.overall, rules::Overall::Warning);
    assert!(v.findings[0].message.contains("não consta"));

    // Ana (holder of 0002) dies; the feed brings the succession. Her CPF at the wheel is R12.
    let before = sample_registry();
    let mut after = before.clone();
    after.version += 1;
    after
        .permits
        .iter_mut()
        .find(|p| p.number == "0002")
        .unwrap()
        .state = sync_core::domain::PermitState::InSuccession {
        since: d(2026, 10, 1),
    };
    s.apply_changes(&feed::diff(&before, &after), t(REFRESHED))
        .unwrap();
    for plate in ["ABC-1234", "BRA2E19"] {
        let v = s
            .check(&input(
                VehicleQuery::Plate(Plate::parse(plate).unwrap()),
                "cpf:86840102130",
                "2026-11-30T15:00:00Z",
                Observation::default(),
            ))
            .unwrap();
        assert_eq!(v.overall, rules::Overall::Irregular, "{plate}: {v:#?}");
        assert_eq!(ids(&v)[0], rules::RuleId::R12, "{plate}");
        assert!(v.findings[0].message.contains("falecido"), "{plate}");
    }
}

#[test]
fn store_check_matches_in_memory_check() {
    let f = fixture();
    let s = loaded(&f);
    let reg = sample_registry();
    let index = reg.index();
    let config = RulesConfig::default();
    let mut drivers: Vec<String> = reg
        .people
        .iter()
        .map(|p| format!("cpf:{}", p.cpf))
        .collect();
    drivers.push(format!("cnh:{}", reg.people[4].licence.number));
    drivers.push(STRANGER_CPF.to_owned());
    let mut vehicles: Vec<VehicleQuery> = reg
        .vehicles
        .iter()
        .map(|v| VehicleQuery::Plate(Plate::parse(v.plate.raw()).unwrap()))
        .collect();
    vehicles.push(VehicleQuery::Plate(Plate::parse("ZZZ9Z99").unwrap()));
    vehicles.extend(["0001", "0004", "0005", "4242"].map(|n| VehicleQuery::Permit(n.into())));
    let observations = [
        Observation::default(),
        Observation {
            at_stand: Some("S01".into()),
            idle: true,
            ..Observation::default()
        },
        Observation {
            at_stand: Some("S04".into()),
            idle: true,
            ..Observation::default()
        },
        Observation {
            at_stand: Some("S99".into()),
            idle: true,
            ..Observation::default()
        },
    ];
    let mut compared = 0;
    let mut rule_ids = std::collections::BTreeSet::new();
    for at in [
        "2026-11-30T15:00:00Z",
        "2026-11-25T02:30:00Z",
        "2027-01-15T12:00:00Z",
    ] {
        for vq in &vehicles {
            for drv in &drivers {
                for obs in &observations {
                    let mut i = input(vq.clone(), drv, at, obs.clone());
                    let from_store = s.check(&i).unwrap();
                    i.registry_refreshed_at = Some(t(REFRESHED));
                    let in_memory = rules::check_registry(&index, &i, &config);
                    assert_eq!(from_store, in_memory, "{vq:?} {drv} {at} {obs:?}");
                    rule_ids.extend(in_memory.rule_ids().into_iter().map(str::to_owned));
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000);
    // The comparison covered the roles that need the driver's other permits.
    for id in ["R01", "R12", "R14", "R32", "R11"] {
        assert!(rule_ids.contains(id), "{id} never fired: {rule_ids:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Check bundles (store::bundle) stay in step with the rows

/// Every plate, permit number and driver of `reg` (plus an unknown plate and number, a CNH and a
/// stranger), with and without stands seen, at two instants: the store's verdict must be the
/// in-memory engine's on `reg`, and every permit's lookup must show `reg`'s facts. Returns the
/// verdicts by (query, driver, stand, instant), for the caller to assert what changed.
fn assert_store_is(
    s: &Store,
    reg: &Registry,
    refreshed: DateTime<Utc>,
) -> std::collections::BTreeMap<String, rules::Verdict> {
    let index = reg.index();
    // The model registry's own parameters: what the replica must have received with it.
    let config = reg.law().rules.clone();
    let mut drivers: Vec<String> = reg
        .people
        .iter()
        .map(|p| format!("cpf:{}", p.cpf))
        .collect();
    drivers.extend(
        reg.people
            .iter()
            .take(3)
            .map(|p| format!("cnh:{}", p.licence.number)),
    );
    drivers.push(STRANGER_CPF.to_owned());
    let mut vehicles: Vec<VehicleQuery> = reg
        .vehicles
        .iter()
        .map(|v| VehicleQuery::Plate(Plate::parse(v.plate.raw()).unwrap()))
        .collect();
    vehicles.push(VehicleQuery::Plate(Plate::parse("ZZZ9Z99").unwrap()));
    vehicles.extend(
        reg.permits
            .iter()
            .map(|p| VehicleQuery::Permit(p.number.clone())),
    );
    vehicles.push(VehicleQuery::Permit("4242".into()));
    let mut observations = vec![Observation::default()];
    observations.extend(reg.stands.iter().map(|st| Observation {
        at_stand: Some(st.id.clone()),
        idle: true,
        ..Observation::default()
    }));
    let mut verdicts = std::collections::BTreeMap::new();
    // Noon and 22:00 local (R24 vs R25), 30 Nov 2026.
    for at in ["2026-11-30T15:00:00Z", "2026-12-01T01:00:00Z"] {
        for vq in &vehicles {
            for drv in &drivers {
                for obs in &observations {
                    let mut i = input(vq.clone(), drv, at, obs.clone());
                    let from_store = s.check(&i).unwrap();
                    i.registry_refreshed_at = Some(refreshed);
                    let in_memory = rules::check_registry(&index, &i, &config);
                    assert_eq!(from_store, in_memory, "{vq:?} {drv} {at} {obs:?}");
                    let key = format!("{vq:?} {drv} {:?} {at}", obs.at_stand);
                    verdicts.insert(key, in_memory);
                }
            }
        }
    }
    let at = t("2026-11-30T15:00:00Z");
    let on = d(2026, 11, 30);
    for p in &reg.permits {
        let v = s.lookup_permit(&p.number, at).unwrap().unwrap();
        assert_eq!(v.permit, *p);
        assert_eq!(Some(&v.vehicle), index.vehicle(&p.vehicle_id));
        assert_eq!(Some(&v.holder), index.person(&p.holder_id));
        let auxiliaries: Vec<&Person> = p
            .auxiliaries
            .iter()
            .map(|a| index.person(&a.person_id).unwrap())
            .collect();
        assert_eq!(v.auxiliaries.iter().collect::<Vec<_>>(), auxiliaries);
        assert_eq!(Some(&v.stand), index.stand(&p.stand_id));
        let mut unpaid: Vec<_> = index
            .fines_of(&p.number)
            .into_iter()
            .filter(|f| f.paid_on.is_none_or(|paid| paid > on))
            .cloned()
            .collect();
        unpaid.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(v.unpaid_fines, unpaid, "{}", p.number);
        let mut penalties: Vec<&str> = index
            .penalties_of(&p.number)
            .iter()
            .map(|x| x.id.as_str())
            .collect();
        penalties.sort_unstable();
        assert!(
            v.penalties_in_force
                .iter()
                .all(|x| penalties.contains(&x.id.as_str())),
            "{}: {:?} not among {penalties:?}",
            p.number,
            v.penalties_in_force
        );
        let by_plate = s
            .lookup_plate(&index.vehicle(&p.vehicle_id).unwrap().plate, at)
            .unwrap()
            .unwrap();
        assert_eq!(by_plate.permit.number, p.number);
    }
    verdicts
}

/// Applies `next` as the batch `feed::diff` makes from `prev`, checks that the batch has the
/// expected kind of change, and that the store answers as `next` everywhere.
fn step(
    s: &mut Store,
    prev: &Registry,
    next: &Registry,
    expect: impl Fn(&RegistryChange) -> bool,
) -> std::collections::BTreeMap<String, rules::Verdict> {
    let changes = feed::diff(prev, next);
    assert!(changes.changes.iter().any(expect), "{:?}", changes.changes);
    let refreshed = t("2026-11-30T10:00:00Z") + chrono::Duration::seconds(next.version as i64);
    s.apply_changes(&changes, refreshed).unwrap();
    assert_store_is(s, next, refreshed)
}

fn changed_rule(
    before: &std::collections::BTreeMap<String, rules::Verdict>,
    after: &std::collections::BTreeMap<String, rules::Verdict>,
    key_part: &str,
    rule: &str,
) -> bool {
    after.iter().any(|(k, v)| {
        k.contains(key_part)
            && v.rule_ids().contains(&rule)
            && before.get(k).is_some_and(|b| !b.rule_ids().contains(&rule))
    })
}

#[test]
fn bundles_follow_batches_touching_people_stands_penalties_fines_and_auxiliaries() {
    let f = fixture();
    let mut s = loaded(&f);
    let v7 = sample_registry();
    let base = assert_store_is(&s, &v7, t(REFRESHED));

    // A person: Ana (holder of 0002) — licence expired, renamed.
    let mut v8 = v7.clone();
    v8.version = 8;
    let ana = v8.people.iter_mut().find(|p| p.id == "P04").unwrap();
    ana.licence.expiry = d(2026, 11, 1);
    ana.name = "Ana Pereira Lima".into();
    let after = step(
        &mut s,
        &v7,
        &v8,
        |c| matches!(c, RegistryChange::UpsertPerson { person } if person.id == "P04"),
    );
    assert!(changed_rule(&base, &after, "cpf:86840102130", "R10"));
    let view = s
        .lookup_permit("0002", t("2026-11-30T15:00:00Z"))
        .unwrap()
        .unwrap();
    assert_eq!(view.holder.name, "Ana Pereira Lima");

    // A stand: S02 (own stand of 0002 and 0004) renamed and open until 24:00 — at 22:00 an
    // idle taxi elsewhere is now inside its mandatory hours (R24, was R25).
    let mut v9 = v8.clone();
    v9.version = 9;
    let s02 = v9.stands.iter_mut().find(|x| x.id == "S02").unwrap();
    s02.name = "Praça Basílio Rangel (Centro)".into();
    s02.schedule = sync_core::domain::StandSchedule::Extended;
    let before = after;
    let after = step(
        &mut s,
        &v8,
        &v9,
        |c| matches!(c, RegistryChange::UpsertStand { stand } if stand.id == "S02"),
    );
    assert!(changed_rule(&before, &after, "Permit(\"0004\")", "R24"));
    assert!(
        after
            .values()
            .any(|v| v.findings.iter().any(|f| f.message.contains("(Centro)")))
    );

    // A penalty: revocation of 0002 from 25 Nov, and PEN-1 moved from 0003 to 0005.
    let mut v10 = v9.clone();
    v10.version = 10;
    v10.penalties.push(sync_core::domain::Penalty {
        id: "PEN-2".into(),
        permit_number: "0002".into(),
        person_id: Some("P04".into()),
        kind: sync_core::domain::PenaltyKind::Revocation,
        decided_on: d(2026, 11, 24),
        starts_on: d(2026, 11, 25),
        record_id: None,
    });
    v10.penalties[0].permit_number = "0005".into();
    let before = after;
    let after = step(
        &mut s,
        &v9,
        &v10,
        |c| matches!(c, RegistryChange::UpsertPenalty { penalty } if penalty.id == "PEN-1"),
    );
    assert!(changed_rule(&before, &after, "Permit(\"0002\")", "R32"));
    assert!(changed_rule(&before, &after, "Permit(\"0005\")", "R32"));
    let at = t("2026-11-30T15:00:00Z");
    assert!(
        s.lookup_permit("0003", at)
            .unwrap()
            .unwrap()
            .penalties_in_force
            .is_empty(),
        "the moved penalty stayed in 0003's bundle"
    );

    // A fine: FINE-1 paid, a new unpaid one on 0001; then a penalty deleted.
    let mut v11 = v10.clone();
    v11.version = 11;
    v11.fines[0].paid_on = Some(d(2026, 11, 29));
    v11.fines.push(sync_core::domain::Fine {
        id: "FINE-2".into(),
        permit_number: "0001".into(),
        amount: rust_decimal::Decimal::new(12_345, 2),
        issued_on: d(2026, 11, 2),
        paid_on: None,
    });
    step(
        &mut s,
        &v10,
        &v11,
        |c| matches!(c, RegistryChange::UpsertFine { fine } if fine.id == "FINE-1"),
    );
    assert!(
        s.lookup_permit("0004", at)
            .unwrap()
            .unwrap()
            .unpaid_fines
            .is_empty()
    );
    assert_eq!(
        s.lookup_permit("0001", at).unwrap().unwrap().unpaid_fines[0].id,
        "FINE-2"
    );
    let mut v12 = v11.clone();
    v12.version = 12;
    v12.penalties.retain(|p| p.id != "PEN-2");
    let before = assert_store_is(&s, &v11, t("2026-11-30T10:00:11Z"));
    let after = step(
        &mut s,
        &v11,
        &v12,
        |c| matches!(c, RegistryChange::DeletePenalty { id } if id == "PEN-2"),
    );
    assert!(changed_rule(&after, &before, "Permit(\"0002\")", "R32"));

    // An auxiliary removed: Carlos (P03) leaves 0001 and is on no permit any more (R12 when
    // he drives it); then deleted from the registry with a permit deleted in the same batch.
    let mut v13 = v12.clone();
    v13.version = 13;
    v13.permits[0].auxiliaries.retain(|a| a.person_id != "P03");
    let before = after;
    let after = step(
        &mut s,
        &v12,
        &v13,
        |c| matches!(c, RegistryChange::UpsertPermit { permit } if permit.number == "0001"),
    );
    assert!(changed_rule(&before, &after, "cpf:51131154444", "R12"));
    let mut v14 = v13.clone();
    v14.version = 14;
    v14.people.retain(|p| p.id != "P03");
    v14.permits.retain(|p| p.number != "0005");
    v14.vehicles.retain(|v| v.id != "V05");
    v14.penalties.retain(|p| p.permit_number != "0005");
    step(
        &mut s,
        &v13,
        &v14,
        |c| matches!(c, RegistryChange::DeletePermit { number } if number == "0005"),
    );
    assert!(s.lookup_permit("0005", at).unwrap().is_none());
    assert!(
        s.lookup_plate(&Plate::parse("JKL1M23").unwrap(), at)
            .unwrap()
            .is_none()
    );
}

#[test]
fn bundles_follow_a_snapshot_that_replaces_everything() {
    let f = fixture();
    let mut s = loaded(&f);
    s.apply_changes(
        &feed::diff(&sample_registry(), &version_8()),
        t("2026-11-30T10:00:00Z"),
    )
    .unwrap();
    assert_store_is(&s, &version_8(), t("2026-11-30T10:00:00Z"));

    // Version 20, sent whole: another holder on 0001, 0002's vehicle with a new plate, stand
    // S03 gone (0003 moves to S04), a new revocation on 0004.
    let mut v20 = version_8();
    v20.version = 20;
    v20.permits[0].holder_id = "P10".into();
    v20.vehicles[1].plate = Plate::parse("ABC1C99").unwrap();
    v20.permits[2].stand_id = "S04".into();
    v20.stands.retain(|x| x.id != "S03");
    v20.penalties.push(sync_core::domain::Penalty {
        id: "PEN-9".into(),
        permit_number: "0004".into(),
        person_id: None,
        kind: sync_core::domain::PenaltyKind::Revocation,
        decided_on: d(2026, 11, 1),
        starts_on: d(2026, 11, 2),
        record_id: None,
    });
    v20.validate().unwrap();
    let refreshed = t("2026-11-30T11:00:00Z");
    s.apply_snapshot(&v20, refreshed).unwrap();
    let verdicts = assert_store_is(&s, &v20, refreshed);
    let at = t("2026-11-30T15:00:00Z");
    assert!(
        s.lookup_plate(&Plate::parse("ABC-1234").unwrap(), at)
            .unwrap()
            .is_none(),
        "the old plate still finds a bundle"
    );
    assert!(
        verdicts
            .iter()
            .any(|(k, v)| k.contains("Permit(\"0004\")") && v.rule_ids().contains(&"R32"))
    );
    // And back to a smaller snapshot: nothing of version 20 lingers.
    let mut v21 = sample_registry();
    v21.version = 21;
    s.apply_snapshot(&v21, refreshed).unwrap();
    assert_store_is(&s, &v21, refreshed);
}

/// A bundle or driver row this build cannot decode (another build's encoding, a damaged row) is
/// never answered from: the check reads the entity rows instead and gives the same verdict.
#[test]
fn an_unreadable_bundle_falls_back_to_the_rows() {
    let f = fixture();
    let s = loaded(&f);
    {
        let c = Connection::open(&f.path).unwrap();
        let n = c
            .execute(
                "UPDATE reg_check_bundles SET body = x'ff00ff' WHERE permit_number IN ('0001', '0002')",
                [],
            )
            .unwrap();
        assert_eq!(n, 2);
        // And the driver rows of the people of 0004 (checked as drivers of other taxis).
        let n = c
            .execute(
                "UPDATE reg_check_drivers SET body = x'01ff' WHERE person_id IN ('P07', 'P08')",
                [],
            )
            .unwrap();
        assert_eq!(n, 2);
    }
    assert_store_is(&s, &sample_registry(), t(REFRESHED));
}

/// Reopening with the same build rebuilds nothing; a file whose bundles were written by
/// another encoding (here: a forged fingerprint and emptied bundles) gets them rebuilt on open.
#[test]
fn bundles_are_rebuilt_when_the_encoding_changes() {
    let f = fixture();
    drop(loaded(&f));
    {
        let c = Connection::open(&f.path).unwrap();
        c.execute_batch(
            "DELETE FROM reg_check_bundles;
             UPDATE reg_bundle_format SET fingerprint = 'another build';",
        )
        .unwrap();
    }
    let s = Store::open(&f.path).unwrap();
    let c = Connection::open(&f.path).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM reg_check_bundles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5);
    assert_store_is(&s, &sample_registry(), t(REFRESHED));
}

#[test]
fn check_without_registry_is_an_error() {
    let f = fixture();
    let s = Store::open(&f.path).unwrap();
    let i = input(
        VehicleQuery::Permit("0001".into()),
        STRANGER_CPF,
        "2026-11-30T12:00:00Z",
        Observation::default(),
    );
    let err = s.check(&i).unwrap_err();
    assert!(matches!(err, StoreError::NoRegistry));
    assert!(err.to_string().contains("nenhum cadastro"));
}

// ---------------------------------------------------------------------------------------------
// Records and auto numbers

fn meta(status: &str, at: &str) -> RecordMeta {
    RecordMeta {
        status: status.into(),
        summary: serde_json::json!({ "plate": "ABC1C34" }),
        heads: vec![1, 2, 3],
        at: t(at),
    }
}

#[test]
fn number_blocks_refuse_overlaps_and_hand_out_unique_numbers() {
    let f = fixture();
    let mut s = Store::open(&f.path).unwrap();
    let m = meta("draft", "2026-11-30T12:00:00Z");
    // No block yet: the record waits.
    assert_eq!(
        s.write_record("r0", "infraction", &m, b"c", true).unwrap(),
        None
    );
    assert_eq!(s.take_number().unwrap(), None);

    s.add_number_block(1, 3).unwrap();
    for (a, b) in [(3, 10), (2, 2), (0, 1), (1, 3)] {
        let err = s.add_number_block(a, b).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NumberBlockOverlap { .. } | StoreError::NumberBlockInvalid { .. }
            ),
            "{a}-{b}: {err:?}"
        );
    }
    assert!(matches!(
        s.add_number_block(9, 5),
        Err(StoreError::NumberBlockInvalid { .. })
    ));
    assert_eq!(s.numbers_left().unwrap(), 3);

    // r0 waited: its next write takes the first number even without asking again.
    assert_eq!(s.records_waiting_for_number().unwrap(), ["r0"]);
    assert_eq!(
        s.write_record("r0", "infraction", &m, b"c2", false)
            .unwrap(),
        Some(1)
    );
    assert!(s.records_waiting_for_number().unwrap().is_empty());
    assert_eq!(
        s.write_record("r1", "infraction", &m, b"c", true).unwrap(),
        Some(2)
    );
    // Writing r1 again keeps its number.
    assert_eq!(
        s.write_record("r1", "infraction", &m, b"c2", true).unwrap(),
        Some(2)
    );
    // A record that does not want a number gets none.
    assert_eq!(
        s.write_record("t1", "transgression", &m, b"c", false)
            .unwrap(),
        None
    );
    // A failed write (the closure errs) rolls back the number it took.
    let err = s
        .write_record_with("r2", "infraction", true, |n| {
            assert_eq!(n, Some(3));
            Err::<RecordWrite, _>("documento inválido")
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::RecordWrite { .. }));
    assert!(s.record_summary("r2").unwrap().is_none());
    assert_eq!(
        s.write_record("r2", "infraction", &m, b"c", true).unwrap(),
        Some(3)
    );
    assert_eq!(
        s.write_record("r3", "infraction", &m, b"c", true).unwrap(),
        None
    );
    assert_eq!(s.records_waiting_for_number().unwrap(), ["r3"]);

    // Numbers survive closing the file; the next block continues.
    drop(s);
    let mut s = Store::open(&f.path).unwrap();
    s.add_number_block(100, 101).unwrap();
    assert_eq!(s.numbers_left().unwrap(), 2);
    let n = s
        .write_record_with("r3", "infraction", true, |n| {
            Ok::<_, String>(RecordWrite {
                meta: meta(
                    &format!("numbered {}", n.unwrap_or(0)),
                    "2026-11-30T13:00:00Z",
                ),
                incremental: b"n".to_vec(),
            })
        })
        .unwrap();
    assert_eq!(n, Some(100));
    assert_eq!(s.take_number().unwrap(), Some(101));
    assert_eq!(s.take_number().unwrap(), None);
    assert_eq!(s.numbers_left().unwrap(), 0);

    let list = s.list_records().unwrap();
    let mut numbers: Vec<u64> = list.iter().filter_map(|r| r.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [1, 2, 3, 100]);
    let r3 = s.record_summary("r3").unwrap().unwrap();
    assert_eq!(r3.status, "numbered 100");
    assert!(!r3.waiting_for_number);
    let status = s.status().unwrap();
    assert_eq!(status.counts.records, 5);
    assert_eq!(status.counts.records_waiting_for_number, 0);
}

#[test]
fn records_append_chunks_and_compact() {
    use automerge::transaction::Transactable;
    use automerge::{AutoCommit, ROOT, ReadDoc};

    let f = fixture();
    let mut s = Store::open(&f.path).unwrap();
    let mut doc = AutoCommit::new();
    doc.put(ROOT, "plate", "ABC1C34").unwrap();
    let first = doc.save_incremental();
    s.write_record(
        "rec",
        "infraction",
        &meta("draft", "2026-11-30T12:00:00Z"),
        &first,
        false,
    )
    .unwrap();
    doc.put(ROOT, "status", "issued").unwrap();
    let second = doc.save_incremental();
    s.write_record(
        "rec",
        "infraction",
        &meta("issued", "2026-11-30T12:05:00Z"),
        &second,
        false,
    )
    .unwrap();
    // An empty save (nothing changed) appends no chunk.
    s.write_record(
        "rec",
        "infraction",
        &meta("issued", "2026-11-30T12:06:00Z"),
        &[],
        false,
    )
    .unwrap();

    let parts = s.load_record_bytes("rec").unwrap();
    assert_eq!(parts, vec![first.clone(), second.clone()]);
    let loaded = AutoCommit::load(&parts.concat()).unwrap();
    assert_eq!(
        loaded
            .get(ROOT, "status")
            .unwrap()
            .map(|(v, _)| v.to_string()),
        Some("\"issued\"".to_owned())
    );
    let summary = s.record_summary("rec").unwrap().unwrap();
    assert_eq!((summary.chunks, summary.status.as_str()), (2, "issued"));
    assert_eq!(summary.created_at, t("2026-11-30T12:00:00Z"));
    assert_eq!(summary.updated_at, t("2026-11-30T12:06:00Z"));

    // Compact what was loaded; meanwhile a third change arrives and must survive.
    let bytes = s.load_record("rec").unwrap();
    assert_eq!(bytes.last_chunk_seq, 2);
    let full = AutoCommit::load(&bytes.clone().parts().concat())
        .unwrap()
        .save();
    doc.put(ROOT, "note", "late").unwrap();
    let third = doc.save_incremental();
    s.write_record(
        "rec",
        "infraction",
        &meta("issued", "2026-11-30T12:07:00Z"),
        &third,
        false,
    )
    .unwrap();
    s.compact_record("rec", &full, bytes.last_chunk_seq)
        .unwrap();
    let after = s.load_record("rec").unwrap();
    assert_eq!(after.full, full);
    assert_eq!(after.chunks, vec![third]);
    let merged = AutoCommit::load(&after.parts().concat()).unwrap();
    assert!(merged.get(ROOT, "note").unwrap().is_some());
    assert!(merged.get(ROOT, "plate").unwrap().is_some());

    assert!(matches!(
        s.write_record(
            "rec",
            "transgression",
            &meta("x", "2026-11-30T12:08:00Z"),
            b"x",
            false
        ),
        Err(StoreError::RecordKind { .. })
    ));
    assert!(matches!(
        s.load_record_bytes("nope"),
        Err(StoreError::RecordNotFound(_))
    ));
    assert!(matches!(
        s.compact_record("nope", b"", 0),
        Err(StoreError::RecordNotFound(_))
    ));

    // Sync state round-trips and goes with its record's id.
    s.save_sync_state("rec", "server", b"state", 3).unwrap();
    assert_eq!(
        s.load_sync_state("rec", "server").unwrap(),
        Some((b"state".to_vec(), 3))
    );
    assert_eq!(s.load_sync_state("rec", "other").unwrap(), None);
}

// ---------------------------------------------------------------------------------------------
// Photos and observed people

#[test]
fn photos_are_content_addressed_and_tampering_is_detected() {
    let f = fixture();
    let mut s = Store::open(&f.path).unwrap();
    let h = s.put_photo(b"abc").unwrap();
    assert_eq!(
        h,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(s.put_photo(b"abc").unwrap(), h, "idempotent");
    let jpeg: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let h2 = s.put_photo(&jpeg).unwrap();
    assert_eq!(s.status().unwrap().counts.photos, 2);
    assert_eq!(s.photo(&h2).unwrap().as_deref(), Some(jpeg.as_slice()));
    assert_eq!(
        s.verify_photo(&h.to_uppercase()).unwrap(),
        PhotoStatus::Intact
    );
    assert_eq!(
        s.verify_photo(&"0".repeat(64)).unwrap(),
        PhotoStatus::Missing
    );
    assert!(matches!(
        s.verify_photo("xyz"),
        Err(StoreError::PhotoHash(_))
    ));

    // Someone edits the stored bytes of the big one.
    {
        let c = Connection::open(&f.path).unwrap();
        c.execute(
            "UPDATE photos SET bytes = CAST(? AS BLOB) WHERE hash = ?",
            rusqlite::params![b"edited".to_vec(), h2],
        )
        .unwrap();
    }
    match s.verify_photo(&h2).unwrap() {
        PhotoStatus::Tampered { actual } => {
            assert_eq!(actual, sync_core::store::sha256_hex(b"edited"))
        }
        other => panic!("tampering not detected: {other:?}"),
    }
    let report = s.verify_photos().unwrap();
    assert_eq!(report.len(), 2);
    let bad: Vec<_> = report
        .iter()
        .filter(|r| r.status != PhotoStatus::Intact)
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].hash, h2);
    // Storing the original again repairs it.
    s.put_photo(&jpeg).unwrap();
    assert_eq!(s.verify_photo(&h2).unwrap(), PhotoStatus::Intact);
}

#[test]
fn observed_people_are_erasable_by_id() {
    let f = fixture();
    let mut s = Store::open(&f.path).unwrap();
    let p = ObservedPerson {
        name: Some("Fulano de Tal".into()),
        cpf: Some(STRANGER_CPF.into()),
        cnh: None,
        details: serde_json::json!({ "telefone": "19 99999-0000" }),
    };
    let id = s
        .put_observed_person(&p, t("2026-11-30T12:00:00Z"))
        .unwrap();
    assert_eq!(s.observed_person(&id).unwrap(), Some(p));
    assert!(
        s.erase_observed_person(&id, t("2026-12-30T12:00:00Z"))
            .unwrap()
    );
    let erased = s.observed_person(&id).unwrap().unwrap();
    assert_eq!((erased.name, erased.cpf), (None, None));
    assert_eq!(erased.details, serde_json::json!({}));
    assert!(
        !s.erase_observed_person("unknown", t("2026-12-30T12:00:00Z"))
            .unwrap()
    );
    assert_eq!(s.status().unwrap().counts.observed_people, 0);
}

#[test]
fn status_reports_version_and_counts() {
    let f = fixture();
    let mut s = loaded(&f);
    s.add_number_block(10, 19).unwrap();
    let st = s.status().unwrap();
    let reg = st.registry.unwrap();
    assert_eq!((reg.version, reg.refreshed_at), (7, t(REFRESHED)));
    assert_eq!(st.counts.permits, 5);
    assert_eq!(st.counts.people, 10);
    assert_eq!(st.counts.penalties, 1);
    assert_eq!(st.counts.numbers_left, 10);
    assert!(s.integrity_check().unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// The law's parameters travel with the replica

/// The device judges with the parameters its replica received, never with the compiled-in
/// defaults: a batch that sets them changes the next check, a second batch changes them again,
/// and the exported replica carries them.
#[test]
fn checks_use_the_parameters_the_feed_delivered() {
    let f = fixture();
    let mut s = loaded(&f);
    let base = sample_registry();
    assert_eq!(*s.law_parameters().unwrap(), LawParameters::default());
    // P08's CNH expired on 2026-10-01, 60 days before: R10 fires under the defaults.
    let i = input(
        VehicleQuery::Plate(Plate::parse("GHI7J89").unwrap()),
        "cpf:78000751925",
        "2026-11-30T15:00:00Z",
        Observation::default(),
    );
    assert!(s.check(&i).unwrap().rule_ids().contains(&"R10"));

    // Version 8: the office allows 90 days of grace after the CNH's expiry.
    let mut v8 = base.clone();
    v8.version = 8;
    let mut p = LawParameters::default();
    p.rules.cnh_grace_days = 90;
    v8.parameters = Some(p);
    let batch = feed::diff(&base, &v8);
    assert!(matches!(
        batch.changes.as_slice(),
        [RegistryChange::UpsertLawParameters { .. }]
    ));
    s.apply_changes(&batch, t(REFRESHED)).unwrap();
    let v = s.check(&i).unwrap();
    assert!(!v.rule_ids().contains(&"R10"), "{:?}", v.rule_ids());
    let mut j = i.clone();
    j.registry_refreshed_at = Some(t(REFRESHED));
    assert_eq!(v, rules::check_registry(&v8.index(), &j, &v8.law().rules));
    assert_eq!(s.export_registry().unwrap(), feed::sorted(v8.clone()));

    // Version 9: back to the defaults; the memo of version 8's parameters is not reused.
    let mut v9 = v8.clone();
    v9.version = 9;
    v9.parameters = None;
    s.apply_changes(&feed::diff(&v8, &v9), t(REFRESHED))
        .unwrap();
    assert!(s.check(&i).unwrap().rule_ids().contains(&"R10"));
    assert_eq!(s.export_registry().unwrap().parameters, None);

    // A snapshot carrying parameters sets them too, and a second store on the same file (the
    // app and a CLI) sees them.
    let mut v10 = v8.clone();
    v10.version = 10;
    s.apply_snapshot(&v10, t(REFRESHED)).unwrap();
    let other = Store::open(&f.path).unwrap();
    assert_eq!(other.law_parameters().unwrap().rules.cnh_grace_days, 90);
    assert!(!other.check(&i).unwrap().rule_ids().contains(&"R10"));

    // The store remembers the parameters of the version it last checked at; a snapshot of the
    // same version number with other parameters (a reset, a test fixture) is not answered from
    // that memory.
    assert!(!s.check(&i).unwrap().rule_ids().contains(&"R10"));
    let mut v10_defaults = v10.clone();
    v10_defaults.parameters = None;
    s.apply_snapshot(&v10_defaults, t(REFRESHED)).unwrap();
    assert!(s.check(&i).unwrap().rule_ids().contains(&"R10"));
}

/// Malformed parameters in a batch are refused whole: the replica stays where it was.
#[test]
fn a_batch_with_malformed_parameters_is_refused() {
    let f = fixture();
    let mut s = loaded(&f);
    let base = sample_registry();
    let mut bad = LawParameters::default();
    bad.rules.inhabitants_per_taxi = 1;
    let batch = feed::RegistryChanges {
        from_version: base.version,
        to_version: base.version + 1,
        generated_at: None,
        changes: vec![RegistryChange::UpsertLawParameters { parameters: bad }],
    };
    assert!(s.apply_changes(&batch, t(REFRESHED)).is_err());
    assert_eq!(s.replica_info().unwrap().unwrap().version, base.version);
    assert_eq!(*s.law_parameters().unwrap(), LawParameters::default());
}

/// The server's build (plain SQLite) refuses an encrypted open before creating anything or
/// asking the vault: it must never store in plain text what the app believes encrypted. (The
/// mobile library's build, with SQLCipher, is tested in ffi/tests/encryption.rs.)
#[cfg(not(feature = "encryption"))]
#[test]
fn without_sqlcipher_an_encrypted_open_is_refused_and_nothing_is_written() {
    let f = fixture();
    let vault = std::sync::Arc::new(sync_core::store::MemoryVault::default());
    let e = Store::open_encrypted(&f.path, vault.clone()).unwrap_err();
    assert!(matches!(e, StoreError::EncryptionUnavailable), "{e:?}");
    assert!(!f.path.exists());
    assert!(vault.names().is_empty());
}
