//! Check bundles and driver rows: what a field check reads, precomputed (migration 6).
//!
//! - `reg_check_bundles`: per permit, one compact row with the permit, its vehicle, the people
//!   on it (holder, auxiliaries, art. 1 §3 substitute — each its own byte string after its role
//!   and CPF, so a check decodes only the holder and the driver), its stand, penalties and fines;
//!   keyed by (canonical plate, number).
//! - `reg_check_drivers`: per person, keyed by CPF, the person and the permits they hold or are
//!   auxiliary on — what a check needs when the driver is not on the permit (art. 8 §3).
//!
//! Why: a check used to read ~8 rows by key and parse as many JSON bodies (≈11× a bare indexed
//! query on the 40,000-permit bench); now it is one point query (by plate or permit number) and
//! one binary decode, plus one more for a driver from elsewhere. The `reg_*` rows stay the
//! source of truth (export, lookups by person, foreign keys); these rows are derived from them
//! and written in the same transaction as every snapshot or batch of changes (module
//! `replica`), so a committed version always has exactly its rows.
//!
//! Encoding (module `codec`): postcard over mirror types — postcard cannot read what needs
//! `deserialize_any` (internally tagged enums, `Decimal`), and dates as day numbers decode
//! without parsing. The rows are a cache of the JSON rows: a fingerprint of the layout and of the
//! domain types' JSON schemas is kept in `reg_bundle_format`, and [`ensure`] rebuilds every row
//! when it differs (first open after the migration, or a build whose types changed). A row that
//! still fails to decode is read from the entity rows instead (`lookup`), never answered wrongly.
//!
//! Maintenance on a batch of changes ([`Dirty`]): a permit's bundle is rebuilt when the permit,
//! its vehicle, its stand, anyone on it, or one of its penalties or fines changes (for a penalty
//! or fine that moves between permits, both); a person's driver row when the person changes or
//! a permit they are on (before or after the batch) does.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::replica::{ROLE_AUXILIARY, ROLE_HOLDER, ROLE_ILLNESS, decode as decode_json};
use super::{StoreError, StoreResult};
use crate::domain::{Fine, Penalty, Permit, PermitState, Person, Registry, Stand, Vehicle};

/// A person's role on a permit, as in `reg_permit_people`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Role {
    Holder,
    Auxiliary,
    Illness,
}

/// What the replica holds about one permit: what a check or a lookup of it reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Bundle {
    pub(super) permit: Permit,
    pub(super) vehicle: Vehicle,
    /// (role, person) in `reg_permit_people` key order: role text, then person id. Decoded
    /// for a check: only the holder and whoever has the driver's CPF.
    pub(super) people: Vec<(Role, Person)>,
    /// The permit's own stand (absent only inside a batch about to fail its foreign keys).
    pub(super) stand: Option<Stand>,
    /// Penalties and fines of the permit, each in id order.
    pub(super) penalties: Vec<Penalty>,
    pub(super) fines: Vec<Fine>,
}

impl Bundle {
    /// Holder or registered auxiliary of this permit (art. 8): `role_on` then never needs the
    /// driver's other permits. Answered from the permit itself, whose links `reg_permit_people`
    /// mirrors: a bundle decoded for a check does not carry every person.
    pub(super) fn drives_it_by_right(&self, person_id: &str) -> bool {
        self.permit.holder_id == person_id
            || self
                .permit
                .auxiliaries
                .iter()
                .any(|a| a.person_id == person_id)
    }
}

// --- Encoding (module `codec`) -----------------------------------------------------------------

mod codec;

use codec::Parts;
#[cfg(test)]
use codec::recycle;
pub(super) use codec::recycle_facts;

const TABLE: &str = "reg_check_bundles";

/// Decodes a `reg_check_bundles.body`, every person on the permit included.
pub(super) fn decode(bytes: &[u8]) -> StoreResult<Bundle> {
    codec::decode(bytes, |_, _| true).map_err(|e| undecodable(bytes, &e))
}

/// Decodes what a check of the permit reads: everything but the people, of whom only the
/// holder (art. 30 III compares the vehicle's owner with them) and whoever has the CPF `driver`.
pub(super) fn decode_for_check(bytes: &[u8], driver: Option<&str>) -> StoreResult<Bundle> {
    codec::decode(bytes, |role, cpf| {
        role == Role::Holder || driver.is_some_and(|d| d.as_bytes() == cpf)
    })
    .map_err(|e| undecodable(bytes, &e))
}

fn undecodable(bytes: &[u8], e: &postcard::Error) -> StoreError {
    StoreError::Decode {
        table: TABLE,
        key: format!("{} bytes", bytes.len()),
        detail: e.to_string(),
    }
}

/// A driver row (`reg_check_drivers.body`): the person, if `with_person`, and the permits they
/// hold or are auxiliary on, in number order.
pub(super) fn decode_driver(
    bytes: &[u8],
    with_person: bool,
) -> StoreResult<(Option<Person>, Vec<Permit>)> {
    codec::decode_driver(bytes, with_person).map_err(|e| undecodable(bytes, &e))
}

fn encode(parts: &Parts<'_>) -> StoreResult<Vec<u8>> {
    parts.encode().map_err(|e| StoreError::Decode {
        table: TABLE,
        key: parts.permit.number.clone(),
        detail: format!("não serializável: {e}"),
    })
}

/// Fingerprint of the encoding: `LAYOUT` and the JSON schemas of the encoded domain types.
fn fingerprint() -> &'static str {
    static FP: OnceLock<String> = OnceLock::new();
    FP.get_or_init(|| {
        let mut h = Sha256::new();
        h.update(codec::LAYOUT.as_bytes());
        for schema in [
            schemars::schema_for!(Permit),
            schemars::schema_for!(Vehicle),
            schemars::schema_for!(Person),
            schemars::schema_for!(Stand),
            schemars::schema_for!(Penalty),
            schemars::schema_for!(Fine),
        ] {
            h.update(b"\n");
            h.update(schema.as_value().to_string().as_bytes());
        }
        hex::encode(h.finalize())
    })
}

// --- Reading a bundle from the rows -----------------------------------------------------------

// No ORDER BY or DISTINCT: they would add a sorter to queries that return one to three rows.

const PERMIT_BY_NUMBER: &str = "SELECT p.body, v.body FROM reg_permits p
     JOIN reg_vehicles v ON v.id = p.vehicle_id WHERE p.number = ?1";
/// Plate → the permit(s) on that vehicle.
pub(super) const PERMITS_BY_PLATE: &str = "SELECT p.number, p.body, v.body FROM reg_vehicles v
     JOIN reg_permits p ON p.vehicle_id = v.id WHERE v.plate = ?1";
/// Everything else about a permit in one statement: each arm is an indexed point query
/// (UNION ALL runs them one after the other, without a temporary table). ?2 is the permit's
/// stand.
pub(super) const PERMIT_DETAILS: &str = "SELECT 0, pp.role, x.body FROM reg_permit_people pp
         JOIN reg_people x ON x.id = pp.person_id WHERE pp.permit_number = ?1
     UNION ALL SELECT 1, NULL, body FROM reg_stands WHERE id = ?2
     UNION ALL SELECT 2, NULL, body FROM reg_penalties WHERE permit_number = ?1
     UNION ALL SELECT 3, NULL, body FROM reg_fines WHERE permit_number = ?1";

/// The bundle of permit `number` as the rows say (None: no such permit or vehicle).
pub(super) fn from_rows_by_number(conn: &Connection, number: &str) -> StoreResult<Option<Bundle>> {
    let mut stmt = conn.prepare_cached(PERMIT_BY_NUMBER)?;
    let mut rows = stmt.query([number])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let permit: Permit = decode_json("reg_permits", row, 0)?;
    let vehicle: Vehicle = decode_json("reg_vehicles", row, 1)?;
    drop(rows);
    details(conn, permit, vehicle).map(Some)
}

/// The bundle for a canonical plate as the rows say: if an old permit still names the same
/// vehicle, one not revoked wins, then the lowest number, so a revoked permit never hides the
/// one in force.
pub(super) fn from_rows_by_plate(
    conn: &Connection,
    canonical: &str,
) -> StoreResult<Option<Bundle>> {
    let mut stmt = conn.prepare_cached(PERMITS_BY_PLATE)?;
    let mut rows = stmt.query([canonical])?;
    let mut chosen: Option<(Permit, Vehicle)> = None;
    while let Some(row) = rows.next()? {
        let permit: Permit = decode_json("reg_permits", row, 1)?;
        let rank = |p: &Permit| {
            (
                matches!(p.state, PermitState::Revoked { .. }),
                p.number.clone(),
            )
        };
        if chosen.as_ref().is_none_or(|(c, _)| rank(&permit) < rank(c)) {
            chosen = Some((permit, decode_json("reg_vehicles", row, 2)?));
        }
    }
    drop(rows);
    match chosen {
        Some((permit, vehicle)) => details(conn, permit, vehicle).map(Some),
        None => Ok(None),
    }
}

fn details(conn: &Connection, permit: Permit, vehicle: Vehicle) -> StoreResult<Bundle> {
    let mut b = Bundle {
        permit,
        vehicle,
        people: Vec::new(),
        stand: None,
        penalties: Vec::new(),
        fines: Vec::new(),
    };
    let mut stmt = conn.prepare_cached(PERMIT_DETAILS)?;
    let mut rows = stmt.query(params![b.permit.number, b.permit.stand_id])?;
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
                b.people.push((role, decode_json("reg_people", row, 2)?));
            }
            1 => b.stand = Some(decode_json("reg_stands", row, 2)?),
            2 => b.penalties.push(decode_json("reg_penalties", row, 2)?),
            _ => b.fines.push(decode_json("reg_fines", row, 2)?),
        }
    }
    // Id order, however the rows arrived (see `put_all`).
    b.penalties.sort_by(|x, y| x.id.cmp(&y.id));
    b.fines.sort_by(|x, y| x.id.cmp(&y.id));
    Ok(b)
}

// --- Writing bundles ---------------------------------------------------------------------------

fn put(conn: &Connection, parts: &Parts<'_>) -> StoreResult<()> {
    let body = encode(parts)?;
    conn.prepare_cached(
        "INSERT INTO reg_check_bundles (permit_number, plate, revoked, body)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (permit_number) DO UPDATE SET plate = excluded.plate,
             revoked = excluded.revoked, body = excluded.body",
    )?
    .execute(params![
        parts.permit.number,
        parts.vehicle.plate.canonical(),
        matches!(parts.permit.state, PermitState::Revoked { .. }),
        body
    ])?;
    Ok(())
}

/// Writes the driver row of `person`, who holds or is auxiliary on `permits` (any order,
/// repeats allowed). REPLACE: it also drops the row of the person's former CPF, and the row of
/// another person who had this CPF before this batch (they are refreshed in the same batch, or
/// `reg_people`'s unique CPF fails it).
fn put_driver(conn: &Connection, person: &Person, permits: &mut Vec<&Permit>) -> StoreResult<()> {
    permits.sort_unstable_by(|a, b| a.number.cmp(&b.number));
    permits.dedup_by(|a, b| a.number == b.number);
    let body = codec::encode_driver(person, permits).map_err(|e| StoreError::Decode {
        table: DRIVERS,
        key: person.id.clone(),
        detail: format!("não serializável: {e}"),
    })?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO reg_check_drivers (cpf, person_id, cnh, body)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        person.cpf.as_str(),
        person.id,
        person.licence.number.as_str(),
        body
    ])?;
    Ok(())
}

const DRIVERS: &str = "reg_check_drivers";

/// The schema version that added the bundles (migration 6).
const SINCE_VERSION: i64 = 6;

/// Whether this file has bundles to maintain: always, except a store deliberately opened at
/// an older schema (`Store::open_at_version`, for migration tests), which keeps the layout an
/// older app wrote.
pub(super) fn maintained(conn: &Connection) -> StoreResult<bool> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(v >= SINCE_VERSION)
}

/// Writes the bundle of every permit of `reg` (a snapshot just written to the emptied tables),
/// built in memory in exactly the order `from_rows_by_number` would read it back.
pub(super) fn put_all(conn: &Connection, reg: &Registry) -> StoreResult<()> {
    conn.execute_batch("DELETE FROM reg_check_bundles; DELETE FROM reg_check_drivers;")?;
    let people: HashMap<&str, &Person> = reg.people.iter().map(|p| (p.id.as_str(), p)).collect();
    let vehicles: HashMap<&str, &Vehicle> =
        reg.vehicles.iter().map(|v| (v.id.as_str(), v)).collect();
    let stands: HashMap<&str, &Stand> = reg.stands.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut penalties: HashMap<&str, Vec<&Penalty>> = HashMap::new();
    for p in &reg.penalties {
        penalties.entry(&p.permit_number).or_default().push(p);
    }
    let mut fines: HashMap<&str, Vec<&Fine>> = HashMap::new();
    for f in &reg.fines {
        fines.entry(&f.permit_number).or_default().push(f);
    }
    // Id order: the same bytes whatever order the snapshot or the rows came in.
    for list in penalties.values_mut() {
        list.sort_by(|x, y| x.id.cmp(&y.id));
    }
    for list in fines.values_mut() {
        list.sort_by(|x, y| x.id.cmp(&y.id));
    }
    // Validated snapshots always have the vehicle; without it there is no plate to key by.
    let mut keyed: Vec<(&str, &Permit, &Vehicle)> = reg
        .permits
        .iter()
        .filter_map(|p| {
            let v = vehicles.get(p.vehicle_id.as_str())?;
            Some((v.plate.canonical(), p, *v))
        })
        .collect();
    // Key order: each insert appends to the table's B-tree instead of splitting pages at random.
    keyed.sort_unstable_by(|a, b| (a.0, &a.1.number).cmp(&(b.0, &b.1.number)));
    for (_, permit, vehicle) in keyed {
        // `reg_permit_people` rows: unique (role text, person id), in that key order.
        let mut links: Vec<(&str, &str, Role)> = Vec::with_capacity(4);
        links.push((ROLE_HOLDER, &permit.holder_id, Role::Holder));
        for a in &permit.auxiliaries {
            links.push((ROLE_AUXILIARY, &a.person_id, Role::Auxiliary));
        }
        if let Some(ill) = &permit.illness_authorisation {
            links.push((ROLE_ILLNESS, &ill.person_id, Role::Illness));
        }
        links.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        links.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
        let parts = Parts {
            permit,
            vehicle,
            people: links
                .iter()
                .filter_map(|(_, id, role)| people.get(id).map(|p| (*role, *p)))
                .collect(),
            stand: stands.get(permit.stand_id.as_str()).copied(),
            penalties: penalties
                .get(permit.number.as_str())
                .cloned()
                .unwrap_or_default(),
            fines: fines
                .get(permit.number.as_str())
                .cloned()
                .unwrap_or_default(),
        };
        put(conn, &parts)?;
    }
    // Driver rows, in CPF (key) order.
    let mut driven: HashMap<&str, Vec<&Permit>> = HashMap::new();
    for permit in &reg.permits {
        driven.entry(&permit.holder_id).or_default().push(permit);
        for a in &permit.auxiliaries {
            driven.entry(&a.person_id).or_default().push(permit);
        }
    }
    let mut by_cpf: Vec<&Person> = reg.people.iter().collect();
    by_cpf.sort_unstable_by(|a, b| a.cpf.as_str().cmp(b.cpf.as_str()));
    for person in by_cpf {
        let mut permits = driven.remove(person.id.as_str()).unwrap_or_default();
        put_driver(conn, person, &mut permits)?;
    }
    Ok(())
}
/// What a batch of changes touched; [`Dirty::refresh`] rebuilds the bundles that embed it.
#[derive(Debug, Default)]
pub(super) struct Dirty {
    permits: BTreeSet<String>,
    /// Permits whose own row changed (their people's driver rows list them).
    permit_rows: BTreeSet<String>,
    /// People whose driver row must be rewritten.
    drivers: BTreeSet<String>,
    people: BTreeSet<String>,
    vehicles: BTreeSet<String>,
    stands: BTreeSet<String>,
}

impl Dirty {
    /// A permit about to be upserted or deleted: its bundle, and the driver rows of whoever is
    /// on it now (called before the change) and after the batch.
    pub(super) fn permit(&mut self, conn: &Connection, number: &str) -> StoreResult<()> {
        self.permits.insert(number.to_owned());
        self.permit_rows.insert(number.to_owned());
        self.people_driving(conn, number)
    }
    pub(super) fn person(&mut self, id: &str) {
        self.people.insert(id.to_owned());
        self.drivers.insert(id.to_owned());
    }
    /// A permit whose bundle embeds something that changed (a penalty or fine).
    pub(super) fn bundle(&mut self, number: &str) {
        self.permits.insert(number.to_owned());
    }
    pub(super) fn vehicle(&mut self, id: &str) {
        self.vehicles.insert(id.to_owned());
    }
    pub(super) fn stand(&mut self, id: &str) {
        self.stands.insert(id.to_owned());
    }

    /// The permit a penalty row names *now*: called before the row changes or goes, so that
    /// the permit it leaves is refreshed too.
    pub(super) fn penalty(&mut self, conn: &Connection, id: &str) -> StoreResult<()> {
        self.owner(
            conn,
            "SELECT permit_number FROM reg_penalties WHERE id = ?1",
            id,
        )
    }

    /// Same for a fine.
    pub(super) fn fine(&mut self, conn: &Connection, id: &str) -> StoreResult<()> {
        self.owner(
            conn,
            "SELECT permit_number FROM reg_fines WHERE id = ?1",
            id,
        )
    }

    fn owner(&mut self, conn: &Connection, sql: &str, id: &str) -> StoreResult<()> {
        let owner: Option<String> = conn
            .prepare_cached(sql)?
            .query_row([id], |r| r.get(0))
            .optional()?;
        if let Some(n) = owner {
            self.permits.insert(n);
        }
        Ok(())
    }

    fn people_driving(&mut self, conn: &Connection, number: &str) -> StoreResult<()> {
        let mut stmt = conn.prepare_cached(
            "SELECT person_id FROM reg_permit_people
             WHERE permit_number = ?1 AND role <> 'illness_substitute'",
        )?;
        let mut rows = stmt.query([number])?;
        while let Some(row) = rows.next()? {
            self.drivers.insert(row.get(0)?);
        }
        Ok(())
    }

    /// Rebuilds, from the rows as the batch left them, the bundle of every permit that is or
    /// embeds something touched (deleting those of permits that are gone), and the driver row
    /// of every person touched or on a permit that changed.
    pub(super) fn refresh(mut self, conn: &Connection) -> StoreResult<usize> {
        for number in std::mem::take(&mut self.permit_rows) {
            self.people_driving(conn, &number)?;
        }
        for id in std::mem::take(&mut self.drivers) {
            refresh_driver(conn, &id)?;
        }
        let mut collect = |sql: &str, keys: &BTreeSet<String>| -> StoreResult<()> {
            let mut stmt = conn.prepare_cached(sql)?;
            for k in keys {
                let mut rows = stmt.query([k])?;
                while let Some(row) = rows.next()? {
                    self.permits.insert(row.get(0)?);
                }
            }
            Ok(())
        };
        collect(
            "SELECT permit_number FROM reg_permit_people WHERE person_id = ?1",
            &self.people,
        )?;
        collect(
            "SELECT number FROM reg_permits WHERE vehicle_id = ?1",
            &self.vehicles,
        )?;
        collect(
            "SELECT number FROM reg_permits WHERE stand_id = ?1",
            &self.stands,
        )?;
        for number in &self.permits {
            match from_rows_by_number(conn, number)? {
                Some(b) => put(conn, &Parts::of(&b))?,
                None => {
                    conn.prepare_cached("DELETE FROM reg_check_bundles WHERE permit_number = ?1")?
                        .execute([number])?;
                }
            }
        }
        Ok(self.permits.len())
    }
}

/// Rewrites person `id`'s driver row from the rows (deletes it if the person is gone).
fn refresh_driver(conn: &Connection, id: &str) -> StoreResult<()> {
    let person: Option<Person> = {
        let mut stmt = conn.prepare_cached("SELECT body FROM reg_people WHERE id = ?1")?;
        let mut rows = stmt.query([id])?;
        match rows.next()? {
            Some(row) => Some(decode_json("reg_people", row, 0)?),
            None => None,
        }
    };
    let Some(person) = person else {
        conn.prepare_cached("DELETE FROM reg_check_drivers WHERE person_id = ?1")?
            .execute([id])?;
        return Ok(());
    };
    let mut stmt = conn.prepare_cached(
        "SELECT p.body FROM reg_permit_people pp
         JOIN reg_permits p ON p.number = pp.permit_number
         WHERE pp.person_id = ?1 AND pp.role <> 'illness_substitute'",
    )?;
    let mut rows = stmt.query([id])?;
    let mut permits: Vec<Permit> = Vec::new();
    while let Some(row) = rows.next()? {
        permits.push(decode_json("reg_permits", row, 0)?);
    }
    drop(rows);
    put_driver(conn, &person, &mut permits.iter().collect())
}

/// Makes the bundles match this code's encoding: when `reg_bundle_format` names another
/// fingerprint (or none: the first open after migration 6), rebuilds every bundle from the rows
/// in one transaction. A no-op read otherwise.
pub(super) fn ensure(conn: &mut Connection) -> StoreResult<()> {
    const READ: &str = "SELECT fingerprint FROM reg_bundle_format WHERE id = 1";
    let current: Option<String> = conn.query_row(READ, [], |r| r.get(0)).optional()?;
    if current.as_deref() == Some(fingerprint()) {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have rebuilt them meanwhile.
    let current: Option<String> = tx.query_row(READ, [], |r| r.get(0)).optional()?;
    if current.as_deref() != Some(fingerprint()) {
        if super::replica::has_registry(&tx)? {
            let reg = super::replica::export(&tx)?;
            put_all(&tx, &reg)?;
        } else {
            tx.execute_batch("DELETE FROM reg_check_bundles; DELETE FROM reg_check_drivers;")?;
        }
        tx.execute(
            "INSERT INTO reg_bundle_format (id, fingerprint) VALUES (1, ?1)
             ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint",
            [fingerprint()],
        )?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rust_decimal::Decimal;

    use super::*;
    use crate::domain::PenaltyKind;
    use crate::store::Store;
    use crate::testkit::sample_registry;

    /// The snapshot path (built in memory) and the batch path (read back from the rows) must
    /// write the same bytes, or a permit's check would depend on how its data arrived.
    #[test]
    fn snapshot_bundles_equal_bundles_read_from_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("d.db")).unwrap();
        let reg = sample_registry();
        store
            .apply_snapshot(&reg, "2026-11-30T12:00:00Z".parse().unwrap())
            .unwrap();
        let conn = &store.conn;
        let mut stmt = conn
            .prepare("SELECT permit_number, plate, revoked, body FROM reg_check_bundles")
            .unwrap();
        let rows: Vec<(String, String, bool, Vec<u8>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), reg.permits.len());
        for (number, plate, revoked, body) in rows {
            let from_rows = from_rows_by_number(conn, &number).unwrap().unwrap();
            assert_eq!(encode(&Parts::of(&from_rows)).unwrap(), body, "{number}");
            let decoded = decode(&body).unwrap();
            assert_eq!(decoded, from_rows, "{number}");
            assert_eq!(plate, decoded.vehicle.plate.canonical());
            assert_eq!(
                revoked,
                matches!(decoded.permit.state, PermitState::Revoked { .. })
            );
        }
    }

    /// Same for the driver rows: written from the snapshot in memory, then rewritten from the
    /// rows as a batch would, byte for byte.
    #[test]
    fn snapshot_driver_rows_equal_driver_rows_from_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("d.db")).unwrap();
        let reg = sample_registry();
        store
            .apply_snapshot(&reg, "2026-11-30T12:00:00Z".parse().unwrap())
            .unwrap();
        let conn = &store.conn;
        let rows = |c: &Connection| -> Vec<(String, String, String, Vec<u8>)> {
            c.prepare("SELECT cpf, person_id, cnh, body FROM reg_check_drivers ORDER BY cpf")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let from_snapshot = rows(conn);
        assert_eq!(from_snapshot.len(), reg.people.len());
        for p in &reg.people {
            refresh_driver(conn, &p.id).unwrap();
        }
        assert_eq!(rows(conn), from_snapshot);
        // Sérgio (P09) holds 0005 only; Carlos (P03) is auxiliary on 0001.
        for (id, numbers) in [
            ("P09", vec!["0005"]),
            ("P03", vec!["0001"]),
            ("P10", vec![]),
        ] {
            let (_, _, _, body) = from_snapshot.iter().find(|r| r.1 == id).unwrap();
            let (person, permits) = decode_driver(body, true).unwrap();
            assert_eq!(person.unwrap().id, id);
            let got: Vec<&str> = permits.iter().map(|p| p.number.as_str()).collect();
            assert_eq!(got, numbers, "{id}");
        }
    }

    /// Permit `number` of `reg` with all its people, as a bundle.
    fn bundle_of(reg: &Registry, number: &str) -> Bundle {
        let index = reg.index();
        let permit = index.permit(number).unwrap().clone();
        let mut people = vec![(
            Role::Holder,
            index.person(&permit.holder_id).unwrap().clone(),
        )];
        for a in &permit.auxiliaries {
            people.push((Role::Auxiliary, index.person(&a.person_id).unwrap().clone()));
        }
        Bundle {
            vehicle: index.vehicle(&permit.vehicle_id).unwrap().clone(),
            stand: index.stand(&permit.stand_id).cloned(),
            penalties: index.penalties_of(number).into_iter().cloned().collect(),
            fines: index.fines_of(number).into_iter().cloned().collect(),
            people,
            permit,
        }
    }

    /// Every field of every encoded type, each optional one both present and absent, every
    /// enum variant: decode(encode(b)) == b.
    #[test]
    fn every_field_survives_the_encoding() {
        let reg = sample_registry();
        let date = |s: &str| s.parse::<chrono::NaiveDate>().unwrap();
        for (n, permit) in reg.permits.iter().enumerate() {
            let mut b = bundle_of(&reg, &permit.number);
            for (i, kind) in [
                PenaltyKind::WrittenWarning,
                PenaltyKind::Fine,
                PenaltyKind::Suspension { days: 60 },
                PenaltyKind::Revocation,
            ]
            .into_iter()
            .enumerate()
            {
                b.penalties.push(Penalty {
                    id: format!("X{i}"),
                    permit_number: permit.number.clone(),
                    person_id: (i % 2 == 0).then(|| permit.holder_id.clone()),
                    kind,
                    decided_on: date("2026-01-02"),
                    starts_on: date("2026-01-05"),
                    record_id: (i == 1).then(|| "rec-1".to_owned()),
                });
            }
            for (id, amount, paid_on) in [
                ("F1", Decimal::new(79_702, 2), None),
                ("F2", Decimal::new(-1, 28), Some(date("2026-04-01"))),
                ("F3", Decimal::MAX, None),
            ] {
                b.fines.push(Fine {
                    id: id.into(),
                    permit_number: permit.number.clone(),
                    amount,
                    issued_on: date("2026-03-04"),
                    paid_on,
                });
            }
            b.permit.state = match n % 4 {
                0 => PermitState::Active,
                1 => PermitState::Suspended {
                    from: date("2026-01-01"),
                    until: date("2026-01-15"),
                },
                2 => PermitState::Revoked {
                    on: date("2026-02-01"),
                },
                _ => PermitState::InSuccession {
                    since: date("2026-03-01"),
                },
            };
            if n % 2 == 0 {
                b.permit.edital_date = None;
                b.vehicle.taximeter = None;
                b.people[0].1.licence.observations.clear();
                b.permit.illness_authorisation = Some(crate::domain::IllnessAuthorisation {
                    person_id: "P10".into(),
                    medical_proof_on_file: n == 0,
                    valid_from: date("2026-11-01"),
                    valid_until: date("2026-12-31"),
                });
                let helena = reg.people.iter().find(|p| p.id == "P10").unwrap();
                b.people.push((Role::Illness, helena.clone()));
            } else if let Some(t) = &mut b.vehicle.taximeter {
                t.certificate_number = None;
                t.valid_until_year = None;
                b.people[0].1.licence.kind = crate::domain::LicenceKind::P;
                b.people[0]
                    .1
                    .licence
                    .observations
                    .push("VEDADA ATIVIDADE REMUNERADA".into());
            }
            let bytes = encode(&Parts::of(&b)).unwrap();
            assert_eq!(decode(&bytes).unwrap(), b);
            // Far smaller than the same facts as JSON: that is what a check reads.
            let json = serde_json::to_vec(&b.permit).unwrap().len()
                + serde_json::to_vec(&b.vehicle).unwrap().len()
                + serde_json::to_vec(&b.people[0].1).unwrap().len();
            assert!(bytes.len() < json, "{} vs {json}", bytes.len());
        }
    }

    /// Decoding into spare strings (those `Store::check` recycles) decodes the same values as
    /// into new ones, whatever the spare strings held.
    #[test]
    fn decoding_into_spare_strings_changes_nothing() {
        let reg = sample_registry();
        for permit in &reg.permits {
            let b = bundle_of(&reg, &permit.number);
            let bytes = encode(&Parts::of(&b)).unwrap();
            let fresh = decode(&bytes).unwrap();
            assert_eq!(fresh, b);
            let mut junk = sample_registry();
            for (i, p) in junk.people.iter_mut().enumerate() {
                p.name = "x".repeat(i * 40);
            }
            recycle(junk);
            assert_eq!(decode(&bytes).unwrap(), fresh, "{}", permit.number);
            assert_eq!(decode_for_check(&bytes, None).unwrap().permit, b.permit);
        }
    }

    #[test]
    fn garbage_is_a_decode_error_not_a_panic() {
        for bytes in [&b""[..], b"\xff\xff\xff", b"not a bundle at all"] {
            assert!(matches!(decode(bytes), Err(StoreError::Decode { .. })));
        }
    }

    #[test]
    fn fingerprint_is_stable_within_a_build() {
        assert_eq!(fingerprint(), fingerprint());
        assert_eq!(fingerprint().len(), 64);
    }
}
