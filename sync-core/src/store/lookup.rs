//! Lookups and checks against the replica.
//!
//! A lookup (by plate, permit number, or a person's CPF/CNH) reads a permit's *bundle* — the
//! permit and its vehicle (one join on an indexed key), then its people, stands, penalties and
//! fines (one `UNION ALL` of four indexed point queries) — and turns it into a [`PermitView`].
//!
//! A check builds a small `Registry` holding only what `rules::check` can touch for this
//! question: the bundle, the driver, and — only when the driver is neither holder nor auxiliary
//! of this permit — the permits the driver holds or is auxiliary on (for `role_on`'s art. 8 §3
//! answer). It indexes that and calls the rules engine, with `registry_refreshed_at` set to the
//! replica's refresh time so the verdict carries the version and its age. All reads of one
//! lookup or check run in one read transaction: every row comes from the same version even if
//! another process applies a batch meanwhile.
//!
//! The test `store_check_matches_in_memory_check` (tests/store.rs) runs every plate × driver ×
//! stand combination of the sample registry through both this and `rules::check` on the whole
//! registry and requires identical verdicts: the small registry must not change any answer.

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::Connection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::replica::{ROLE_AUXILIARY, ROLE_HOLDER, ROLE_ILLNESS, ReplicaInfo, decode};
use super::{Store, StoreError, StoreResult};
use crate::domain::{
    DriverId, Fine, Penalty, PenaltyKind, Permit, PermitState, Person, Plate, Registry, Stand,
    Vehicle,
};
use crate::rules::{self, CheckInput, RegistryStamp, RulesConfig, VehicleQuery, Verdict};

/// A permit with everything an officer reads about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermitView {
    /// Registry version the view comes from, and its age at the lookup.
    pub registry: RegistryStamp,
    /// Canonical plate of the permit's vehicle.
    pub plate: String,
    pub permit: Permit,
    pub holder: Person,
    pub auxiliaries: Vec<Person>,
    /// Person authorised under art. 1 §3, if the permit names one (whatever the dates).
    pub illness_substitute: Option<Person>,
    pub vehicle: Vehicle,
    pub stand: Stand,
    /// Suspensions covering the lookup's local date and revocations started by it (art. 32).
    pub penalties_in_force: Vec<Penalty>,
    /// Fines not paid by the lookup's local date (art. 17 §2 III).
    pub unpaid_fines: Vec<Fine>,
}

/// A person and the permits they are on (as holder, auxiliary or art. 1 §3 substitute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PersonPermits {
    pub registry: RegistryStamp,
    pub person: Person,
    pub permits: Vec<PermitView>,
}

/// What the replica holds about one permit.
struct Bundle {
    permit: Permit,
    vehicle: Vehicle,
    /// (role, person), in the order SQLite returned them.
    people: Vec<(Role, Person)>,
    stands: Vec<Stand>,
    penalties: Vec<Penalty>,
    fines: Vec<Fine>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Holder,
    Auxiliary,
    Illness,
}

impl Bundle {
    fn drives_it_by_right(&self, person_id: &str) -> bool {
        self.people
            .iter()
            .any(|(r, p)| p.id == person_id && matches!(r, Role::Holder | Role::Auxiliary))
    }
}

// No ORDER BY or DISTINCT in these: they would add a sorter to queries that return one to
// three rows; ordering and de-duplication happen in Rust. (What once made checks slow was
// something else: joins re-prepared on every use; see QPSG in `Store::open` and the test
// `hot_statements_are_not_reprepared` below.)

/// Plate → the permit(s) on that vehicle. Usually one; if an old permit still names the same
/// vehicle, one not revoked wins, then the lowest number, so a revoked permit never hides the
/// one in force.
const PERMITS_BY_PLATE: &str = "SELECT p.number, p.body, v.body FROM reg_vehicles v
     JOIN reg_permits p ON p.vehicle_id = v.id WHERE v.plate = ?1";
const PERMIT_BY_NUMBER: &str = "SELECT p.body, v.body FROM reg_permits p
     JOIN reg_vehicles v ON v.id = p.vehicle_id WHERE p.number = ?1";
/// Everything else about a permit in one statement: each arm is an indexed point query
/// (UNION ALL runs them one after the other, without a temporary table). ?2 is the permit's
/// stand, ?3 the stand where the taxi was found (or NULL).
const PERMIT_DETAILS: &str = "SELECT 0, pp.role, x.body FROM reg_permit_people pp
         JOIN reg_people x ON x.id = pp.person_id WHERE pp.permit_number = ?1
     UNION ALL SELECT 1, NULL, body FROM reg_stands WHERE id = ?2
     UNION ALL SELECT 1, NULL, body FROM reg_stands WHERE id = ?3 AND ?3 IS NOT ?2
     UNION ALL SELECT 2, NULL, body FROM reg_penalties WHERE permit_number = ?1
     UNION ALL SELECT 3, NULL, body FROM reg_fines WHERE permit_number = ?1";
const PERSON_BY_CPF: &str = "SELECT id, body FROM reg_people WHERE cpf = ?1";
/// CNH numbers are not unique in the registry: the lowest person id wins, deterministically.
const PERSON_BY_CNH: &str = "SELECT id, body FROM reg_people WHERE cnh = ?1";
/// The permits a person holds or is auxiliary on (art. 8 §3 and "holder of another permit").
const PERMITS_DRIVEN_BY: &str = "SELECT p.number, p.body FROM reg_permit_people pp
     JOIN reg_permits p ON p.number = pp.permit_number
     WHERE pp.person_id = ?1 AND pp.role <> 'illness_substitute'";
const PERMIT_NUMBERS_OF: &str = "SELECT permit_number FROM reg_permit_people WHERE person_id = ?1";

/// A read transaction over prepared BEGIN/COMMIT statements (cheaper than parsing them on
/// every lookup); ends on drop, also on the error path.
struct ReadTx<'c> {
    conn: &'c Connection,
}

impl<'c> ReadTx<'c> {
    fn begin(conn: &'c Connection) -> StoreResult<Self> {
        conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        Ok(Self { conn })
    }
}

impl Drop for ReadTx<'_> {
    fn drop(&mut self) {
        if !self.conn.is_autocommit() {
            // Nothing was written: COMMIT just releases the read snapshot. Should it fail, the
            // next BEGIN reports the problem.
            let _ = self
                .conn
                .prepare_cached("COMMIT")
                .and_then(|mut s| s.execute([]));
        }
    }
}

impl Store {
    /// The permit of the vehicle with this plate (any accepted spelling: the canonical form is
    /// the key), as seen at `at`.
    pub fn lookup_plate(
        &self,
        plate: &Plate,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PermitView>> {
        let _tx = ReadTx::begin(&self.conn)?;
        let meta = self.meta()?;
        let Some(b) = bundle_by_plate(&self.conn, plate.canonical(), None)? else {
            return Ok(None);
        };
        view(b, &meta, at).map(Some)
    }

    /// The permit with this number (prontuário), as seen at `at`.
    pub fn lookup_permit(
        &self,
        number: &str,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PermitView>> {
        let _tx = ReadTx::begin(&self.conn)?;
        let meta = self.meta()?;
        let Some(b) = bundle_by_number(&self.conn, number.trim(), None)? else {
            return Ok(None);
        };
        view(b, &meta, at).map(Some)
    }

    /// The person with this CPF or CNH number (an ambiguous number is tried as CPF first, as in
    /// `DriverId::resolve`) and every permit they are on.
    pub fn lookup_person(
        &self,
        who: &DriverId,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PersonPermits>> {
        let _tx = ReadTx::begin(&self.conn)?;
        let meta = self.meta()?;
        let Some(person) = resolve_driver(&self.conn, who)? else {
            return Ok(None);
        };
        let mut numbers: Vec<String> = self
            .conn
            .prepare_cached(PERMIT_NUMBERS_OF)?
            .query_map([&person.id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        numbers.sort_unstable();
        numbers.dedup();
        let mut permits = Vec::with_capacity(numbers.len());
        for n in numbers {
            if let Some(b) = bundle_by_number(&self.conn, &n, None)? {
                permits.push(view(b, &meta, at)?);
            }
        }
        Ok(Some(PersonPermits {
            registry: stamp(&meta, at),
            person,
            permits,
        }))
    }

    /// Field check against the replica: `rules::check` on the rows this question needs. The
    /// verdict's registry stamp is the replica's version and the time since its last refresh
    /// (`input.registry_refreshed_at` is replaced by it).
    pub fn check(&self, input: &CheckInput, config: &RulesConfig) -> StoreResult<Verdict> {
        let (registry, refreshed_at) = self.check_facts(input)?;
        let input = CheckInput {
            registry_refreshed_at: Some(refreshed_at),
            ..input.clone()
        };
        Ok(rules::check(&registry.index(), &input, config))
    }

    /// The registry facts a check of `input` evaluates — a small `Registry` at the replica's
    /// version with only the rows the rules can reach — and the replica's refresh time. `check`
    /// is `rules::check` on these; a record may keep them as what the officer's device knew.
    pub fn check_facts(&self, input: &CheckInput) -> StoreResult<(Registry, DateTime<Utc>)> {
        let _tx = ReadTx::begin(&self.conn)?;
        let meta = self.meta()?;
        let at_stand = input.observation.at_stand.as_deref();
        let bundle = match &input.vehicle {
            VehicleQuery::Plate(p) => bundle_by_plate(&self.conn, p.canonical(), at_stand)?,
            VehicleQuery::Permit(n) => bundle_by_number(&self.conn, n.trim(), at_stand)?,
        };
        // Usually the driver is on the permit and already loaded; a CPF is unique, so a match
        // among those rows is the answer `resolve_driver` would give (CPF first). A CNH is not
        // unique (lowest id wins), so it is always looked up.
        let on_permit = match &input.driver {
            DriverId::Cpf(cpf) | DriverId::Either { cpf, .. } => bundle.as_ref().and_then(|b| {
                b.people
                    .iter()
                    .find(|(_, p)| p.cpf == *cpf)
                    .map(|(_, p)| p.clone())
            }),
            DriverId::Cnh(_) => None,
        };
        let driver = match on_permit {
            Some(p) => Some(p),
            None => resolve_driver(&self.conn, &input.driver)?,
        };

        let mut reg = Registry {
            version: meta.version,
            generated_at: meta.generated_at,
            ..Registry::default()
        };
        if let Some(d) = &driver {
            // `role_on` answers Holder/Auxiliary from the permit itself; only otherwise does it
            // ask which permits the driver holds or is auxiliary on.
            if !bundle.as_ref().is_some_and(|b| b.drives_it_by_right(&d.id)) {
                let mut stmt = self.conn.prepare_cached(PERMITS_DRIVEN_BY)?;
                let mut rows = stmt.query([&d.id])?;
                let mut others: Vec<(String, Permit)> = Vec::new();
                while let Some(row) = rows.next()? {
                    let number: String = row.get(0)?;
                    let other = bundle.as_ref().is_none_or(|b| b.permit.number != number);
                    if other && !others.iter().any(|(n, _)| *n == number) {
                        others.push((number, decode("reg_permits", row, 1)?));
                    }
                }
                // Permit-number order, so that findings listing them are deterministic.
                others.sort_by(|a, b| a.0.cmp(&b.0));
                reg.permits.extend(others.into_iter().map(|(_, p)| p));
            }
            reg.people.push(d.clone());
        }

        if let Some(b) = bundle {
            for (_, p) in b.people {
                if !reg.people.iter().any(|x| x.id == p.id) {
                    reg.people.push(p);
                }
            }
            reg.vehicles.push(b.vehicle);
            reg.stands = b.stands;
            reg.penalties = b.penalties;
            reg.fines = b.fines;
            // Last, so that the plate index (last one wins) names this permit even if one of
            // the driver's other permits named the same vehicle.
            reg.permits.push(b.permit);
        }
        Ok((reg, meta.refreshed_at))
    }

    fn meta(&self) -> StoreResult<ReplicaInfo> {
        self.replica_info()?.ok_or(StoreError::NoRegistry)
    }
}

fn stamp(meta: &ReplicaInfo, at: DateTime<Utc>) -> RegistryStamp {
    RegistryStamp {
        version: meta.version,
        refreshed_at: Some(meta.refreshed_at),
        age_seconds: Some((at - meta.refreshed_at).num_seconds()),
    }
}

fn bundle_by_plate(
    conn: &Connection,
    canonical: &str,
    at_stand: Option<&str>,
) -> StoreResult<Option<Bundle>> {
    let mut stmt = conn.prepare_cached(PERMITS_BY_PLATE)?;
    let mut rows = stmt.query([canonical])?;
    let mut chosen: Option<(Permit, Vehicle)> = None;
    while let Some(row) = rows.next()? {
        let permit: Permit = decode("reg_permits", row, 1)?;
        let rank = |p: &Permit| {
            (
                matches!(p.state, PermitState::Revoked { .. }),
                p.number.clone(),
            )
        };
        if chosen.as_ref().is_none_or(|(c, _)| rank(&permit) < rank(c)) {
            chosen = Some((permit, decode("reg_vehicles", row, 2)?));
        }
    }
    drop(rows);
    match chosen {
        Some((permit, vehicle)) => details(conn, permit, vehicle, at_stand).map(Some),
        None => Ok(None),
    }
}

fn bundle_by_number(
    conn: &Connection,
    number: &str,
    at_stand: Option<&str>,
) -> StoreResult<Option<Bundle>> {
    let mut stmt = conn.prepare_cached(PERMIT_BY_NUMBER)?;
    let mut rows = stmt.query([number])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let permit: Permit = decode("reg_permits", row, 0)?;
    let vehicle: Vehicle = decode("reg_vehicles", row, 1)?;
    drop(rows);
    details(conn, permit, vehicle, at_stand).map(Some)
}

fn details(
    conn: &Connection,
    permit: Permit,
    vehicle: Vehicle,
    at_stand: Option<&str>,
) -> StoreResult<Bundle> {
    let mut b = Bundle {
        permit,
        vehicle,
        people: Vec::new(),
        stands: Vec::new(),
        penalties: Vec::new(),
        fines: Vec::new(),
    };
    let mut stmt = conn.prepare_cached(PERMIT_DETAILS)?;
    let mut rows = stmt.query(rusqlite::params![
        b.permit.number,
        b.permit.stand_id,
        at_stand
    ])?;
    while let Some(row) = rows.next()? {
        let arm: i64 = row.get(0)?;
        match arm {
            0 => {
                let role = match row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)? {
                    ROLE_HOLDER => Role::Holder,
                    ROLE_AUXILIARY => Role::Auxiliary,
                    ROLE_ILLNESS => Role::Illness,
                    other => {
                        return Err(StoreError::Decode {
                            table: "reg_permit_people",
                            key: b.permit.number.clone(),
                            detail: format!("papel desconhecido {other:?}"),
                        });
                    }
                };
                b.people.push((role, decode("reg_people", row, 2)?));
            }
            1 => b.stands.push(decode("reg_stands", row, 2)?),
            2 => b.penalties.push(decode("reg_penalties", row, 2)?),
            _ => b.fines.push(decode("reg_fines", row, 2)?),
        }
    }
    Ok(b)
}

/// The person with the lowest id among the rows (one row for a CPF, which is unique).
fn person_by(conn: &Connection, sql: &str, key: &str) -> StoreResult<Option<Person>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([key])?;
    let mut best: Option<(String, Person)> = None;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        if best.as_ref().is_none_or(|(b, _)| id < *b) {
            best = Some((id, decode("reg_people", row, 1)?));
        }
    }
    Ok(best.map(|(_, p)| p))
}

/// `DriverId::resolve` against the tables: CPF first, then CNH.
fn resolve_driver(conn: &Connection, who: &DriverId) -> StoreResult<Option<Person>> {
    match who {
        DriverId::Cpf(c) => person_by(conn, PERSON_BY_CPF, c.as_str()),
        DriverId::Cnh(n) => person_by(conn, PERSON_BY_CNH, n.as_str()),
        DriverId::Either { cpf, cnh } => match person_by(conn, PERSON_BY_CPF, cpf.as_str())? {
            Some(p) => Ok(Some(p)),
            None => person_by(conn, PERSON_BY_CNH, cnh.as_str()),
        },
    }
}

fn in_force(p: &Penalty, on: NaiveDate) -> bool {
    match p.kind {
        PenaltyKind::Suspension { .. } => {
            p.starts_on <= on && p.suspension_last_day().is_some_and(|last| on <= last)
        }
        PenaltyKind::Revocation => p.starts_on <= on,
        // A warning or a fine is an act, not a state: the fine's payment is in `fines`.
        PenaltyKind::WrittenWarning | PenaltyKind::Fine => false,
    }
}

fn view(b: Bundle, meta: &ReplicaInfo, at: DateTime<Utc>) -> StoreResult<PermitView> {
    let on = crate::time::local_date(at);
    let missing = |what: &str, id: &str| StoreError::Decode {
        table: "reg_permits",
        key: b.permit.number.clone(),
        detail: format!("{what} {id} ausente do cadastro"),
    };
    let person = |role: Role, id: &str| {
        b.people
            .iter()
            .find(|(r, p)| *r == role && p.id == id)
            .map(|(_, p)| p.clone())
    };
    let holder = person(Role::Holder, &b.permit.holder_id)
        .ok_or_else(|| missing("titular", &b.permit.holder_id))?;
    let auxiliaries = b
        .permit
        .auxiliaries
        .iter()
        .map(|a| {
            person(Role::Auxiliary, &a.person_id).ok_or_else(|| missing("auxiliar", &a.person_id))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let illness_substitute = b
        .permit
        .illness_authorisation
        .as_ref()
        .and_then(|i| person(Role::Illness, &i.person_id));
    let stand = b
        .stands
        .iter()
        .find(|s| s.id == b.permit.stand_id)
        .cloned()
        .ok_or_else(|| missing("ponto", &b.permit.stand_id))?;
    Ok(PermitView {
        registry: stamp(meta, at),
        plate: b.vehicle.plate.canonical().to_owned(),
        holder,
        auxiliaries,
        illness_substitute,
        stand,
        penalties_in_force: b
            .penalties
            .into_iter()
            .filter(|p| in_force(p, on))
            .collect(),
        unpaid_fines: b
            .fines
            .into_iter()
            .filter(|f| f.paid_on.is_none_or(|paid| paid > on))
            .collect(),
        vehicle: b.vehicle,
        permit: b.permit,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rusqlite::StatementStatus;

    use super::*;
    use crate::testkit::sample_registry;

    /// Without the query planner stability guarantee, SQLite re-prepares a join after every
    /// rebinding (rusqlite's cache clears bindings), which tripled the cost of a check.
    #[test]
    fn hot_statements_are_not_reprepared() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("d.db")).unwrap();
        let at: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        store.apply_snapshot(&sample_registry(), at).unwrap();
        let config = RulesConfig::default();
        for (plate, driver) in [
            ("ABC1C34", "cpf:86840102130"),
            ("BRA2E19", "cpf:99940561580"),
        ] {
            let input = CheckInput {
                vehicle: VehicleQuery::Plate(Plate::parse(plate).unwrap()),
                driver: DriverId::parse(driver).unwrap(),
                at,
                observation: crate::rules::Observation {
                    at_stand: Some("S04".into()),
                    idle: true,
                    ..Default::default()
                },
                registry_refreshed_at: None,
            };
            for _ in 0..3 {
                store.check(&input, &config).unwrap();
            }
        }
        for sql in [PERMITS_BY_PLATE, PERMIT_DETAILS, PERMITS_DRIVEN_BY] {
            let stmt = store.conn.prepare_cached(sql).unwrap();
            assert!(stmt.get_status(StatementStatus::Run) >= 3, "{sql}");
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }
}
