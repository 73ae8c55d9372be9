//! Lookups and checks against the replica.
//!
//! A lookup (by plate, permit number, or a person's CPF/CNH) reads a permit's *check bundle*
//! (module `bundle`: the permit, its vehicle, people, stand, penalties and fines, precomputed as
//! one binary row) and turns it into a [`PermitView`].
//!
//! A check fills the kernel's `rules::Facts` — the one input of `rules::check`, which the
//! server and the CLI fill from their whole registry — from what this question needs: the
//! bundle's permit, vehicle, holder, stand and penalties, the driver, the stand where the taxi
//! was found (or that no stand has that id), and — only when the driver is neither holder nor
//! auxiliary of this permit — the permits the driver holds or is auxiliary on (art. 8 §3). The
//! facts carry the replica's version and refresh time, so the verdict carries its age. In the
//! usual case (the driver is on the permit, identified by CPF) that is one statement — meta
//! row, bundle and found stand joined — atomic by itself; otherwise all reads run in one read
//! transaction. Either way every row comes from the same version even if another process
//! applies a batch meanwhile.
//!
//! The test `store_check_matches_in_memory_check` (tests/store.rs) runs every plate × driver ×
//! stand combination of the sample registry through both this and `rules::check_registry` on
//! the whole registry and requires identical verdicts, and tests/conformance.rs does the same
//! for generated registries, drivers and instants.

use std::cell::RefCell;
use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bundle::{self, Bundle, Role};
use super::replica::{ReplicaInfo, decode};
use super::{Store, StoreError, StoreResult, parse_ts, to_u64};
use crate::domain::{DriverId, Fine, Penalty, PenaltyKind, Permit, Person, Plate, Stand, Vehicle};
use crate::rules::{
    self, CheckInput, DriverFacts, Facts, RegistryStamp, StandSeen, TaxiFacts, VehicleQuery,
    Verdict,
};

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

// Every lookup starts with one statement: the replica's meta row (no row: no registry) and the
// permit's check bundle (module `bundle`) by canonical plate or number — plus, for a check, the
// stand where the taxi was found. Being one statement it is atomic without an explicit read
// transaction. No ORDER BY: a plate usually names one bundle, and ranking happens in Rust.

/// Meta + the bundle(s) of a canonical plate (?1).
const BUNDLE_BY_PLATE: &str = "SELECT m.version, m.generated_at, m.refreshed_at,
         b.revoked, b.permit_number, b.body, NULL
     FROM replica_meta m
     LEFT JOIN reg_check_bundles b ON b.plate = ?1
     WHERE m.id = 1";
/// Same, with the stand where the taxi was found (?2).
const BUNDLE_BY_PLATE_AT: &str = "SELECT m.version, m.generated_at, m.refreshed_at,
         b.revoked, b.permit_number, b.body, s.body
     FROM replica_meta m
     LEFT JOIN reg_check_bundles b ON b.plate = ?1
     LEFT JOIN reg_stands s ON s.id = ?2
     WHERE m.id = 1";
/// Meta + the bundle of a permit number (?1).
const BUNDLE_BY_NUMBER: &str = "SELECT m.version, m.generated_at, m.refreshed_at,
         b.revoked, b.permit_number, b.body, NULL
     FROM replica_meta m
     LEFT JOIN reg_check_bundles b ON b.permit_number = ?1
     WHERE m.id = 1";
/// Same, with the stand where the taxi was found (?2).
const BUNDLE_BY_NUMBER_AT: &str = "SELECT m.version, m.generated_at, m.refreshed_at,
         b.revoked, b.permit_number, b.body, s.body
     FROM replica_meta m
     LEFT JOIN reg_check_bundles b ON b.permit_number = ?1
     LEFT JOIN reg_stands s ON s.id = ?2
     WHERE m.id = 1";
const ONE_BUNDLE: &str = "SELECT body FROM reg_check_bundles WHERE permit_number = ?1";
const STAND_BY_ID: &str = "SELECT body FROM reg_stands WHERE id = ?1";
/// The driver row of the person with this CPF (?1), with the replica's version (one row with
/// NULLs when nobody matches).
const DRIVER_BY_CPF: &str = "SELECT m.version, d.person_id, d.body
     FROM replica_meta m LEFT JOIN reg_check_drivers d ON d.cpf = ?1 WHERE m.id = 1";
/// Same by CNH (not unique: every match comes back; the lowest id wins).
const DRIVER_BY_CNH: &str = "SELECT m.version, d.person_id, d.body
     FROM replica_meta m LEFT JOIN reg_check_drivers d ON d.cnh = ?1 WHERE m.id = 1";
const PERSON_BY_CPF: &str = "SELECT id, body FROM reg_people WHERE cpf = ?1";
const PERSON_BY_ID: &str = "SELECT id, body FROM reg_people WHERE id = ?1";
/// CNH numbers are not unique in the registry: the lowest person id wins, deterministically.
const PERSON_BY_CNH: &str = "SELECT id, body FROM reg_people WHERE cnh = ?1";
/// The permits a person holds or is auxiliary on (art. 8 §3 and "holder of another permit").
const PERMITS_DRIVEN_BY: &str = "SELECT p.number, p.body FROM reg_permit_people pp
     JOIN reg_permits p ON p.number = pp.permit_number
     WHERE pp.person_id = ?1 AND pp.role <> 'illness_substitute'";
const PERMIT_NUMBERS_OF: &str = "SELECT permit_number FROM reg_permit_people WHERE person_id = ?1";

/// How the taxi was named.
#[derive(Clone, Copy)]
enum Key<'a> {
    /// Canonical plate.
    Plate(&'a str),
    Number(&'a str),
}

impl<'a> Key<'a> {
    fn of(q: &'a VehicleQuery) -> Self {
        match q {
            VehicleQuery::Plate(p) => Self::Plate(p.canonical()),
            VehicleQuery::Permit(n) => Self::Number(n.trim()),
        }
    }
}

/// What the first statement of a lookup found.
struct Found {
    meta: ReplicaInfo,
    bundle: Option<Bundle>,
    /// The stand where the taxi was found, against the permit's own and the replica's stands
    /// (resolved only with a bundle, as the rules look at it only for a permit).
    found_at: StandSeen,
}

/// Which people of the permit a lookup decodes.
#[derive(Clone, Copy)]
enum People<'a> {
    /// All of them (a `PermitView` shows them).
    All,
    /// The holder and whoever has this CPF (a check reads no one else).
    ForCheck(Option<&'a str>),
}

/// The first statement, over the bundles. `Ok(None)`: a bundle is there but does not decode
/// (written by a build with another encoding that is still running): read the rows instead.
fn from_bundles(
    conn: &Connection,
    key: Key<'_>,
    at_stand: Option<&str>,
    people: People<'_>,
) -> StoreResult<Option<Found>> {
    let (sql, k) = match (key, at_stand) {
        (Key::Plate(p), None) => (BUNDLE_BY_PLATE, p),
        (Key::Plate(p), Some(_)) => (BUNDLE_BY_PLATE_AT, p),
        (Key::Number(n), None) => (BUNDLE_BY_NUMBER, n),
        (Key::Number(n), Some(_)) => (BUNDLE_BY_NUMBER_AT, n),
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = match at_stand {
        Some(st) => stmt.query(rusqlite::params![k, st])?,
        None => stmt.query([k])?,
    };
    let mut meta: Option<ReplicaInfo> = None;
    // (revoked, number) of the bundle kept: one not revoked wins, then the lowest number, so a
    // revoked permit never hides the one in force on the same vehicle.
    let mut best: Option<(bool, Bundle)> = None;
    let mut stand: Option<Stand> = None;
    while let Some(row) = rows.next()? {
        if meta.is_none() {
            meta = Some(meta_of(row)?);
        }
        let body = row.get_ref(5)?;
        if body == ValueRef::Null {
            continue;
        }
        let revoked: bool = row.get(3)?;
        let number = row.get_ref(4)?.as_str().map_err(rusqlite::Error::from)?;
        if best
            .as_ref()
            .is_none_or(|(r, b)| (revoked, number) < (*r, b.permit.number.as_str()))
        {
            let body = body.as_blob().map_err(rusqlite::Error::from)?;
            let decoded = match people {
                People::All => bundle::decode(body),
                People::ForCheck(cpf) => bundle::decode_for_check(body, cpf),
            };
            let Ok(b) = decoded else {
                return Ok(None);
            };
            best = Some((revoked, b));
        }
        if stand.is_none()
            && let Some(id) = at_stand
            && best.as_ref().is_some_and(|(_, b)| b.permit.stand_id != id)
            && let ValueRef::Text(json) | ValueRef::Blob(json) = row.get_ref(6)?
        {
            stand = Some(stand_from_json(id, json)?);
        }
    }
    let meta = meta.ok_or(StoreError::NoRegistry)?;
    let bundle = best.map(|(_, b)| b);
    // Against the permit kept (a later row may have changed it); the stand row was parsed for
    // any kept permit whose stand is another, and is absent only when no stand has that id.
    let found_at = match &bundle {
        Some(b) => StandSeen::resolve(at_stand, &b.permit, |id| stand.filter(|st| st.id == id)),
        None => StandSeen::NotAtStand,
    };
    Ok(Some(Found {
        meta,
        bundle,
        found_at,
    }))
}

/// The same answer as `from_bundles`, from the `reg_*` rows (several statements: call inside a
/// read transaction).
fn from_rows(conn: &Connection, key: Key<'_>, at_stand: Option<&str>) -> StoreResult<Found> {
    let meta = read_meta(conn)?;
    let bundle = match key {
        Key::Plate(p) => bundle::from_rows_by_plate(conn, p)?,
        Key::Number(n) => bundle::from_rows_by_number(conn, n)?,
    };
    let other_stand = match (&bundle, at_stand) {
        (Some(b), Some(id)) if id != b.permit.stand_id => {
            let mut stmt = conn.prepare_cached(STAND_BY_ID)?;
            let mut rows = stmt.query([id])?;
            match rows.next()? {
                Some(row) => Some(decode("reg_stands", row, 0)?),
                None => None,
            }
        }
        _ => None,
    };
    let found_at = match &bundle {
        Some(b) => StandSeen::resolve(at_stand, &b.permit, |_| other_stand),
        None => StandSeen::NotAtStand,
    };
    Ok(Found {
        meta,
        bundle,
        found_at,
    })
}

/// `from_bundles`, or `from_rows` when a bundle does not decode. Inside a read transaction.
fn found(
    conn: &Connection,
    key: Key<'_>,
    at_stand: Option<&str>,
    people: People<'_>,
) -> StoreResult<Found> {
    match from_bundles(conn, key, at_stand, people)? {
        Some(f) => Ok(f),
        None => from_rows(conn, key, at_stand),
    }
}

// Memos of parsing, per thread, keyed by the exact text or bytes parsed: a hit returns what
// parsing those bytes gave before, so they can never be stale. Every check reads the meta row's
// two timestamps (unchanged between refreshes) and, at a stand, that stand's JSON (a city has
// about a hundred stands).
/// A timestamp's text and what it parsed to.
type ParsedTs = Option<(String, DateTime<Utc>)>;

thread_local! {
    static TIMESTAMPS: RefCell<[ParsedTs; 2]> = const { RefCell::new([None, None]) };
    static STANDS: RefCell<HashMap<String, (Vec<u8>, Stand)>> = RefCell::new(HashMap::new());
}

/// Stands kept by the memo at most (then it starts over).
const STAND_MEMO: usize = 1024;

fn stand_from_json(id: &str, json: &[u8]) -> StoreResult<Stand> {
    STANDS.with_borrow_mut(|memo| {
        if let Some((bytes, stand)) = memo.get(id)
            && bytes.as_slice() == json
        {
            return Ok(stand.clone());
        }
        let stand: Stand = serde_json::from_slice(json).map_err(|e| StoreError::Decode {
            table: "reg_stands",
            key: id.to_owned(),
            detail: e.to_string(),
        })?;
        if memo.len() >= STAND_MEMO {
            memo.clear();
        }
        memo.insert(id.to_owned(), (json.to_vec(), stand.clone()));
        Ok(stand)
    })
}

/// `parse_ts` of a `replica_meta` column, through the memo (`slot` 0: generated_at, 1:
/// refreshed_at).
fn meta_ts(slot: usize, column: &'static str, text: &str) -> StoreResult<DateTime<Utc>> {
    TIMESTAMPS.with_borrow_mut(|memo| {
        if let Some(Some((t, parsed))) = memo.get(slot)
            && t == text
        {
            return Ok(*parsed);
        }
        let parsed = parse_ts("replica_meta", column, text)?;
        if let Some(m) = memo.get_mut(slot) {
            *m = Some((text.to_owned(), parsed));
        }
        Ok(parsed)
    })
}

fn meta_of(row: &rusqlite::Row<'_>) -> StoreResult<ReplicaInfo> {
    let text = |i| -> StoreResult<Option<&str>> {
        Ok(row
            .get_ref(i)?
            .as_str_or_null()
            .map_err(rusqlite::Error::from)?)
    };
    let refreshed = text(2)?.unwrap_or_default();
    Ok(ReplicaInfo {
        version: to_u64(row.get(0)?, "replica_meta")?,
        generated_at: text(1)?
            .map(|g| meta_ts(0, "generated_at", g))
            .transpose()?,
        refreshed_at: meta_ts(1, "refreshed_at", refreshed)?,
    })
}

fn read_meta(conn: &Connection) -> StoreResult<ReplicaInfo> {
    super::replica::read_meta(conn)?.ok_or(StoreError::NoRegistry)
}

/// The bundle of permit `number` (inside a read transaction).
fn bundle_by_number(conn: &Connection, number: &str) -> StoreResult<Option<Bundle>> {
    let mut stmt = conn.prepare_cached(ONE_BUNDLE)?;
    let mut rows = stmt.query([number])?;
    let decoded = match rows.next()? {
        Some(row) => bundle::decode(row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?),
        None => return Ok(None),
    };
    match decoded {
        Ok(b) => Ok(Some(b)),
        Err(_) => bundle::from_rows_by_number(conn, number),
    }
}

/// A read transaction over prepared BEGIN/COMMIT statements (cheaper than parsing them on
/// every lookup); ends on drop, also on the error path. Inside another one it is that one (the
/// outer read snapshot already covers it).
pub(super) struct ReadTx<'c> {
    conn: &'c Connection,
    began: bool,
}

impl<'c> ReadTx<'c> {
    pub(super) fn begin(conn: &'c Connection) -> StoreResult<Self> {
        let began = conn.is_autocommit();
        if began {
            conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        }
        Ok(Self { conn, began })
    }
}

impl Drop for ReadTx<'_> {
    fn drop(&mut self) {
        if self.began && !self.conn.is_autocommit() {
            // Nothing was written: COMMIT just releases the read snapshot. Should it fail, the
            // next BEGIN reports the problem.
            let _ = self
                .conn
                .prepare_cached("COMMIT")
                .and_then(|mut s| s.execute([]));
        }
    }
}

/// Where the check's driver was found.
enum Driver {
    /// `bundle.people[i]`: the CPF matched someone on the permit.
    OnPermit(usize),
    Elsewhere(Person),
    Unknown,
}

impl Store {
    /// The permit of the vehicle with this plate (any accepted spelling: the canonical form is
    /// the key), as seen at `at`.
    pub fn lookup_plate(
        &self,
        plate: &Plate,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PermitView>> {
        self.lookup(Key::Plate(plate.canonical()), at)
    }

    /// The permit with this number (prontuário), as seen at `at`.
    pub fn lookup_permit(
        &self,
        number: &str,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PermitView>> {
        self.lookup(Key::Number(number.trim()), at)
    }

    fn lookup(&self, key: Key<'_>, at: DateTime<Utc>) -> StoreResult<Option<PermitView>> {
        let _tx = ReadTx::begin(&self.conn)?;
        let f = found(&self.conn, key, None, People::All)?;
        match f.bundle {
            Some(b) => view(b, &f.meta, at).map(Some),
            None => Ok(None),
        }
    }

    /// The registry person with this id (records name people by id: the printed auto reads
    /// their name here).
    pub fn person(&self, id: &str) -> StoreResult<Option<Person>> {
        person_by(&self.conn, PERSON_BY_ID, id)
    }

    /// The stand with this id.
    pub fn stand(&self, id: &str) -> StoreResult<Option<Stand>> {
        let mut stmt = self.conn.prepare_cached(STAND_BY_ID)?;
        let mut rows = stmt.query([id])?;
        match rows.next()? {
            Some(row) => Ok(Some(decode("reg_stands", row, 0)?)),
            None => Ok(None),
        }
    }

    /// The person with this CPF or CNH number (an ambiguous number is tried as CPF first, as in
    /// `DriverId::resolve`) and every permit they are on.
    pub fn lookup_person(
        &self,
        who: &DriverId,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<PersonPermits>> {
        let _tx = ReadTx::begin(&self.conn)?;
        let meta = read_meta(&self.conn)?;
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
            if let Some(b) = bundle_by_number(&self.conn, &n)? {
                permits.push(view(b, &meta, at)?);
            }
        }
        Ok(Some(PersonPermits {
            registry: stamp(&meta, at),
            person,
            permits,
        }))
    }

    /// Field check against the replica: `rules::check` on the facts of this question
    /// ([`Store::check_facts`]) under the law's parameters the replica holds for the same
    /// version. The verdict's registry stamp is the replica's version and the time since its
    /// last refresh (`input.registry_refreshed_at` is replaced by it).
    pub fn check(&self, input: &CheckInput) -> StoreResult<Verdict> {
        // The replica's own parameters, of the facts' version: the server's for that version.
        let (facts, parameters) = self.check_facts_and_parameters(input)?;
        let verdict = rules::check(&facts, &parameters.rules);
        // Its strings go to the next check's decode (device bench).
        bundle::recycle_facts(facts);
        Ok(verdict)
    }

    /// The facts a check of `input` evaluates, at the replica's version, stamped with the
    /// replica's refresh time: the same [`Facts`] the server builds from its whole registry
    /// (`Facts::from_registry`), here from the permit's bundle. `check` is `rules::check` on
    /// these; a record may keep them as what the officer's device knew.
    ///
    /// People: the driver and the permit's holder (no one else is read by the rules).
    ///
    /// Usually one statement: the permit's bundle holds the driver (holder or auxiliary, by
    /// CPF). Otherwise — an unknown plate, a CNH, someone not on the permit — a second statement
    /// reads the driver's row (with the permits they hold or are auxiliary on) and is accepted
    /// only if the replica's version did not move in between; if it did, or a row does not
    /// decode, everything is read again inside one read transaction from the entity rows. Every
    /// fact of one check comes from one version either way.
    pub fn check_facts(&self, input: &CheckInput) -> StoreResult<Facts> {
        let key = Key::of(&input.vehicle);
        let at_stand = input.observation.at_stand.as_deref();
        let people = People::ForCheck(match &input.driver {
            DriverId::Cpf(cpf) | DriverId::Either { cpf, .. } => Some(cpf.as_str()),
            DriverId::Cnh(_) => None,
        });
        if let Some(f) = from_bundles(&self.conn, key, at_stand, people)? {
            let on_permit = driver_on_permit(f.bundle.as_ref(), &input.driver);
            if let (Some(i), Some(b)) = (on_permit, &f.bundle)
                && b.drives_it_by_right(&b.people[i].1.id)
            {
                return Ok(assemble(f, Driver::OnPermit(i), Vec::new(), input));
            }
            if let Some((driver, others)) =
                driver_elsewhere(&self.conn, &f, on_permit, &input.driver)?
            {
                return Ok(assemble(f, driver, others, input));
            }
        }

        // Rare: a bundle that does not decode, or a batch applied between the two statements.
        // Everything again, inside one read transaction.
        let _tx = ReadTx::begin(&self.conn)?;
        let f = found(&self.conn, key, at_stand, people)?;
        let driver = match driver_on_permit(f.bundle.as_ref(), &input.driver) {
            Some(i) => Driver::OnPermit(i),
            None => match resolve_driver(&self.conn, &input.driver)? {
                Some(p) => Driver::Elsewhere(p),
                None => Driver::Unknown,
            },
        };
        let driver_id = match (&driver, &f.bundle) {
            (Driver::OnPermit(i), Some(b)) => Some(b.people[*i].1.id.as_str()),
            (Driver::Elsewhere(p), _) => Some(p.id.as_str()),
            _ => None,
        };
        let mut others: Vec<(String, Permit)> = Vec::new();
        // `role_on` answers Holder/Auxiliary from the permit itself; only otherwise does it
        // ask which permits the driver holds or is auxiliary on.
        if let Some(id) = driver_id
            && !f.bundle.as_ref().is_some_and(|b| b.drives_it_by_right(id))
        {
            let mut stmt = self.conn.prepare_cached(PERMITS_DRIVEN_BY)?;
            let mut rows = stmt.query([id])?;
            while let Some(row) = rows.next()? {
                let number: String = row.get(0)?;
                let other = f.bundle.as_ref().is_none_or(|b| b.permit.number != number);
                if other && !others.iter().any(|(n, _)| *n == number) {
                    others.push((number, decode("reg_permits", row, 1)?));
                }
            }
            // Permit-number order, so that findings listing them are deterministic.
            others.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Ok(assemble(
            f,
            driver,
            others.into_iter().map(|(_, p)| p).collect(),
            input,
        ))
    }
}

/// The driver and the permits they hold or are auxiliary on, for a driver who is not holder or
/// auxiliary of the permit found (or when no permit was found): one statement per identifier
/// over the driver rows (`reg_check_drivers`, module `bundle`), with the meta row. `None` when
/// the replica's version moved since `f` was read or a row does not decode: the caller then
/// reads everything in one transaction. Same answer as `resolve_driver` + `PERMITS_DRIVEN_BY`.
fn driver_elsewhere(
    conn: &Connection,
    f: &Found,
    on_permit: Option<usize>,
    who: &DriverId,
) -> StoreResult<Option<(Driver, Vec<Permit>)>> {
    let tries: [Option<(&str, &str)>; 2] = match who {
        DriverId::Cpf(c) => [Some((DRIVER_BY_CPF, c.as_str())), None],
        DriverId::Cnh(n) => [Some((DRIVER_BY_CNH, n.as_str())), None],
        DriverId::Either { cpf, cnh } => [
            Some((DRIVER_BY_CPF, cpf.as_str())),
            Some((DRIVER_BY_CNH, cnh.as_str())),
        ],
    };
    for (sql, key) in tries.into_iter().flatten() {
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query([key])?;
        // The lowest person id among the matches (one for a CPF).
        let mut best: Option<(String, Option<Person>, Vec<Permit>)> = None;
        let mut seen_meta = false;
        while let Some(row) = rows.next()? {
            if !seen_meta {
                seen_meta = true;
                if to_u64(row.get(0)?, "replica_meta")? != f.meta.version {
                    return Ok(None);
                }
            }
            let Some(id) = row
                .get_ref(1)?
                .as_str_or_null()
                .map_err(rusqlite::Error::from)?
            else {
                continue;
            };
            if best.as_ref().is_none_or(|(b, _, _)| id < b.as_str()) {
                let body = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                // A CPF match on the permit is that same person, already decoded.
                let Ok((person, permits)) = bundle::decode_driver(body, on_permit.is_none()) else {
                    return Ok(None);
                };
                best = Some((id.to_owned(), person, permits));
            }
        }
        if !seen_meta {
            return Err(StoreError::NoRegistry);
        }
        let Some((id, person, permits)) = best else {
            continue;
        };
        // `role_on` answers Holder/Auxiliary from the permit itself; only otherwise does it
        // ask which permits the driver holds or is auxiliary on (number order: findings that
        // list them are deterministic).
        let others = if f.bundle.as_ref().is_some_and(|b| b.drives_it_by_right(&id)) {
            Vec::new()
        } else {
            permits
                .into_iter()
                .filter(|p| {
                    f.bundle
                        .as_ref()
                        .is_none_or(|b| b.permit.number != p.number)
                })
                .collect()
        };
        let driver = match (on_permit, person) {
            (Some(i), _) => Driver::OnPermit(i),
            (None, Some(p)) => Driver::Elsewhere(p),
            (None, None) => return Ok(None),
        };
        return Ok(Some((driver, others)));
    }
    if on_permit.is_some() {
        // On the permit yet not found by the same CPF: the rows moved; read them again.
        return Ok(None);
    }
    Ok(Some((Driver::Unknown, Vec::new())))
}

/// Usually the driver is on the permit and already loaded; a CPF is unique, so a match among
/// those rows is the answer `resolve_driver` would give (CPF first). A CNH is not unique
/// (lowest id wins), so it is always looked up.
fn driver_on_permit(bundle: Option<&Bundle>, who: &DriverId) -> Option<usize> {
    match who {
        DriverId::Cpf(cpf) | DriverId::Either { cpf, .. } => {
            bundle.and_then(|b| b.people.iter().position(|(_, p)| p.cpf == *cpf))
        }
        DriverId::Cnh(_) => None,
    }
}

/// The facts of a check from what the statements read: the driver (with their other permits,
/// in number order), and for a permit its bundle's permit, vehicle, holder, stand and
/// penalties, with the stand where the taxi was found.
fn assemble(f: Found, driver: Driver, others: Vec<Permit>, input: &CheckInput) -> Facts {
    let Found {
        meta,
        bundle,
        found_at,
    } = f;
    let (driver, taxi) = match bundle {
        None => {
            let driver = match driver {
                Driver::Elsewhere(person) => Some(person),
                Driver::OnPermit(_) | Driver::Unknown => None,
            };
            (driver, None)
        }
        Some(b) => {
            let mut people = b.people;
            let driver = match driver {
                Driver::Elsewhere(person) => Some(person),
                Driver::OnPermit(i) if i < people.len() => Some(people.remove(i).1),
                Driver::OnPermit(_) | Driver::Unknown => None,
            };
            let holder_id = &b.permit.holder_id;
            let holder = match &driver {
                Some(d) if d.id == *holder_id => Some(d.clone()),
                _ => people
                    .into_iter()
                    .find(|(role, p)| *role == Role::Holder && p.id == *holder_id)
                    .map(|(_, p)| p),
            };
            let taxi = TaxiFacts {
                vehicle: Some(b.vehicle),
                holder,
                own_stand: b.stand,
                penalties: b.penalties,
                found_at,
                permit: b.permit,
            };
            (driver, Some(taxi))
        }
    };
    Facts {
        vehicle: input.vehicle.clone(),
        at: input.at,
        observation: input.observation.clone(),
        registry_version: meta.version,
        registry_refreshed_at: Some(meta.refreshed_at),
        driver: driver.map(|person| DriverFacts {
            person,
            other_permits: others,
        }),
        taxi,
    }
}

fn stamp(meta: &ReplicaInfo, at: DateTime<Utc>) -> RegistryStamp {
    RegistryStamp {
        version: meta.version,
        refreshed_at: Some(meta.refreshed_at),
        age_seconds: Some((at - meta.refreshed_at).num_seconds()),
    }
}

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
        .stand
        .clone()
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
                store.check(&input).unwrap();
            }
        }
        for sql in [BUNDLE_BY_PLATE_AT, DRIVER_BY_CPF] {
            let stmt = store.conn.prepare_cached(sql).unwrap();
            assert!(stmt.get_status(StatementStatus::Run) >= 3, "{sql}");
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }
}
