//! The registry replica: applying the feed (`crate::feed`) to the `reg_*` tables.
//!
//! A snapshot replaces every row; a batch of changes applies upserts and deletes in order. Each
//! is one `BEGIN IMMEDIATE` transaction that also moves `replica_meta` (version, generated_at,
//! refreshed_at), so the version on the device always names exactly the rows it holds. A batch
//! is accepted only when it starts at the replica's version; references are checked by SQLite's
//! deferred foreign keys at COMMIT, and any failure rolls the whole batch back.
//!
//! Each also rewrites, in the same transaction, the check bundles (module `bundle`) of every
//! permit it touched: a snapshot all of them, a batch those of the permits it changed and of
//! the permits embedding a person, vehicle, stand, penalty or fine it changed; and the law's
//! parameters when they changed (module `parameters`, in force from the new version).

use chrono::{DateTime, SubsecRound, Utc};
use rusqlite::{Connection, ErrorCode, TransactionBehavior, params};
use serde::Serialize;

use super::bundle::{self, Dirty};
use super::parameters;
use super::{Store, StoreError, StoreResult, optional, parse_opt_ts, parse_ts, to_i64, to_u64, ts};
use crate::domain::{Fine, Penalty, Permit, Person, Registry, Stand, Transfer, Vehicle};
use crate::feed::{FeedError, RegistryChange, RegistryChanges, RegistrySnapshot, TransferKey};
use crate::rules::LawParameters;

/// Which registry version the device holds and since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaInfo {
    pub version: u64,
    /// When the office produced this version, if the feed said.
    pub generated_at: Option<DateTime<Utc>>,
    /// When the device last received data or was told its version is current.
    pub refreshed_at: DateTime<Utc>,
}

/// What an apply did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplyReport {
    /// Version before (None: no registry yet).
    pub from_version: Option<u64>,
    pub version: u64,
    pub refreshed_at: DateTime<Utc>,
    /// Entities written (snapshot) or changes applied (batch).
    pub rows: usize,
}

/// The role column of `reg_permit_people`.
pub(super) const ROLE_HOLDER: &str = "holder";
pub(super) const ROLE_AUXILIARY: &str = "auxiliary";
pub(super) const ROLE_ILLNESS: &str = "illness_substitute";

impl Store {
    /// The replica's version and refresh time; `None` before the first snapshot.
    pub fn replica_info(&self) -> StoreResult<Option<ReplicaInfo>> {
        read_meta(&self.conn)
    }

    /// Replaces the whole replica with `snapshot`, in one transaction. A snapshot older than the
    /// replica is refused (it would undo the office's later decisions); the same version is
    /// accepted and only refreshes.
    pub fn apply_snapshot(
        &mut self,
        snapshot: &RegistrySnapshot,
        refreshed_at: DateTime<Utc>,
    ) -> StoreResult<ApplyReport> {
        // Rust-side validation first: its messages name the offending id, SQLite's do not.
        snapshot.validate()?;
        // Stored with microseconds: report exactly what was stored.
        let refreshed_at = refreshed_at.trunc_subsecs(6);
        self.parameters.forget_version();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before = read_meta(&tx)?;
        if let Some(cur) = &before
            && snapshot.version < cur.version
        {
            return Err(StoreError::StaleSnapshot {
                current: cur.version,
                snapshot: snapshot.version,
            });
        }
        let old_version = before.as_ref().map_or(0, |m| m.version);
        let inconsistent = |e| integrity(e, old_version);
        let bundles = bundle::maintained(&tx)?;
        tx.execute_batch(
            "DELETE FROM reg_permit_people; DELETE FROM reg_penalties; DELETE FROM reg_fines;
             DELETE FROM reg_transfers; DELETE FROM reg_permits; DELETE FROM reg_stands;
             DELETE FROM reg_vehicles; DELETE FROM reg_people;",
        )?;
        for p in &snapshot.people {
            put_person(&tx, p).map_err(inconsistent)?;
        }
        for v in &snapshot.vehicles {
            put_vehicle(&tx, v).map_err(inconsistent)?;
        }
        for s in &snapshot.stands {
            put_stand(&tx, s).map_err(inconsistent)?;
        }
        for p in &snapshot.permits {
            put_permit(&tx, p).map_err(inconsistent)?;
        }
        for p in &snapshot.penalties {
            put_penalty(&tx, p).map_err(inconsistent)?;
        }
        for f in &snapshot.fines {
            put_fine(&tx, f).map_err(inconsistent)?;
        }
        for t in &snapshot.transfers {
            put_transfer(&tx, t).map_err(inconsistent)?;
        }
        if bundles {
            // From the snapshot in memory (validated: every reference resolves), not re-read.
            bundle::put_all(&tx, snapshot).map_err(inconsistent)?;
        }
        parameters::write(&tx, snapshot.version, snapshot.parameters.as_ref())?;
        write_meta(&tx, snapshot.version, snapshot.generated_at, refreshed_at)?;
        tx.commit().map_err(|e| inconsistent(StoreError::from(e)))?;
        Ok(ApplyReport {
            from_version: before.map(|m| m.version),
            version: snapshot.version,
            refreshed_at,
            rows: snapshot.people.len()
                + snapshot.vehicles.len()
                + snapshot.stands.len()
                + snapshot.permits.len()
                + snapshot.penalties.len()
                + snapshot.fines.len()
                + snapshot.transfers.len(),
        })
    }

    /// Applies a batch of changes in one transaction. Refused whole (nothing applied, version
    /// unchanged) when it does not start at the replica's version or would break a reference.
    /// An empty batch from the current version to itself just records the refresh.
    pub fn apply_changes(
        &mut self,
        changes: &RegistryChanges,
        refreshed_at: DateTime<Utc>,
    ) -> StoreResult<ApplyReport> {
        changes.check_shape()?;
        let refreshed_at = refreshed_at.trunc_subsecs(6);
        self.parameters.forget_version();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let Some(meta) = read_meta(&tx)? else {
            return Err(StoreError::NoRegistry);
        };
        if changes.from_version != meta.version {
            return Err(FeedError::OutOfOrder {
                current: meta.version,
                from: changes.from_version,
            }
            .into());
        }
        let inconsistent = |e| integrity(e, meta.version);
        let mut dirty = Dirty::default();
        // The law's parameters: the last change to them wins, in force from `to_version`.
        let mut law: Option<Option<&LawParameters>> = None;
        for c in &changes.changes {
            match c {
                RegistryChange::UpsertLawParameters { parameters } => {
                    parameters.check().map_err(|e| StoreError::Integrity {
                        version: meta.version,
                        detail: format!("parâmetros da lei: {e}"),
                    })?;
                    law = Some(Some(parameters));
                }
                RegistryChange::DeleteLawParameters => law = Some(None),
                other => apply_one(&tx, other, &mut dirty).map_err(inconsistent)?,
            }
        }
        if bundle::maintained(&tx)? {
            dirty.refresh(&tx).map_err(inconsistent)?;
        }
        if let Some(value) = law {
            parameters::write(&tx, changes.to_version, value)?;
        }
        write_meta(
            &tx,
            changes.to_version,
            changes.generated_at.or(meta.generated_at),
            refreshed_at,
        )?;
        // Deferred foreign keys are checked here; on failure the transaction is rolled back
        // when `tx` drops.
        tx.commit().map_err(|e| inconsistent(StoreError::from(e)))?;
        Ok(ApplyReport {
            from_version: Some(meta.version),
            version: changes.to_version,
            refreshed_at,
            rows: changes.changes.len(),
        })
    }

    /// The whole replica as a `Registry`, every list sorted by key (`feed::sorted` order).
    pub fn export_registry(&self) -> StoreResult<Registry> {
        export(&self.conn)
    }
}

/// Whether a snapshot was ever applied.
pub(super) fn has_registry(conn: &Connection) -> StoreResult<bool> {
    Ok(read_meta(conn)?.is_some())
}

/// The whole replica as a `Registry` (see `Store::export_registry`).
pub(super) fn export(c: &Connection) -> StoreResult<Registry> {
    let meta = read_meta(c)?.ok_or(StoreError::NoRegistry)?;
    fn all<T: serde::de::DeserializeOwned>(
        conn: &Connection,
        table: &'static str,
        sql: &str,
    ) -> StoreResult<Vec<T>> {
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(decode(table, row, 0)?);
        }
        Ok(out)
    }
    Ok(Registry {
        version: meta.version,
        generated_at: meta.generated_at,
        people: all(c, "reg_people", "SELECT body FROM reg_people ORDER BY id")?,
        vehicles: all(
            c,
            "reg_vehicles",
            "SELECT body FROM reg_vehicles ORDER BY id",
        )?,
        stands: all(c, "reg_stands", "SELECT body FROM reg_stands ORDER BY id")?,
        permits: all(
            c,
            "reg_permits",
            "SELECT body FROM reg_permits ORDER BY number",
        )?,
        penalties: all(
            c,
            "reg_penalties",
            "SELECT body FROM reg_penalties ORDER BY id",
        )?,
        fines: all(c, "reg_fines", "SELECT body FROM reg_fines ORDER BY id")?,
        transfers: all(
            c,
            "reg_transfers",
            "SELECT body FROM reg_transfers
             ORDER BY permit_number, on_date, from_person_id, to_person_id",
        )?,
        parameters: parameters::stored(c)?,
    })
}

pub(super) fn read_meta(conn: &Connection) -> StoreResult<Option<ReplicaInfo>> {
    let row = optional(
        conn.prepare_cached(
            "SELECT version, generated_at, refreshed_at FROM replica_meta WHERE id = 1",
        )?
        .query_row([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
            ))
        }),
    )?;
    row.map(|(version, generated, refreshed)| {
        Ok(ReplicaInfo {
            version: to_u64(version, "replica_meta")?,
            generated_at: parse_opt_ts("replica_meta", "generated_at", generated)?,
            refreshed_at: parse_ts("replica_meta", "refreshed_at", &refreshed)?,
        })
    })
    .transpose()
}

fn write_meta(
    conn: &Connection,
    version: u64,
    generated_at: Option<DateTime<Utc>>,
    refreshed_at: DateTime<Utc>,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO replica_meta (id, version, generated_at, refreshed_at) VALUES (1, ?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET version = excluded.version,
             generated_at = excluded.generated_at, refreshed_at = excluded.refreshed_at",
    )?
    .execute(params![
        to_i64(version, "replica_meta")?,
        generated_at.map(ts),
        ts(refreshed_at)
    ])?;
    Ok(())
}

/// A constraint failure (unique key, deferred foreign key at commit) means the data would be
/// inconsistent: report it as such, with the version the device stays at.
fn integrity(e: StoreError, version: u64) -> StoreError {
    match e {
        StoreError::Sqlite(s) if s.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
            StoreError::Integrity {
                version,
                detail: s.to_string(),
            }
        }
        other => other,
    }
}

/// Serialises an entity for the `body` column.
fn body<T: Serialize>(table: &'static str, key: &str, v: &T) -> StoreResult<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Decode {
        table,
        key: key.to_owned(),
        detail: format!("não serializável: {e}"),
    })
}

/// Deserialises the `body` column at `idx` of `row` straight from SQLite's buffer.
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    table: &'static str,
    row: &rusqlite::Row<'_>,
    idx: usize,
) -> StoreResult<T> {
    let bytes = row
        .get_ref(idx)?
        .as_bytes()
        .map_err(rusqlite::Error::from)?;
    serde_json::from_slice(bytes).map_err(|e| StoreError::Decode {
        table,
        key: String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned(),
        detail: e.to_string(),
    })
}

fn put_person(c: &Connection, p: &Person) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_people (id, cpf, cnh, body) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET cpf = excluded.cpf, cnh = excluded.cnh, body = excluded.body",
    )?
    .execute(params![
        p.id,
        p.cpf.as_str(),
        p.licence.number.as_str(),
        body("reg_people", &p.id, p)?
    ])?;
    Ok(())
}

fn put_vehicle(c: &Connection, v: &Vehicle) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_vehicles (id, plate, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET plate = excluded.plate, body = excluded.body",
    )?
    .execute(params![
        v.id,
        v.plate.canonical(),
        body("reg_vehicles", &v.id, v)?
    ])?;
    Ok(())
}

fn put_stand(c: &Connection, s: &Stand) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_stands (id, coordinator_id, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET coordinator_id = excluded.coordinator_id,
             body = excluded.body",
    )?
    .execute(params![
        s.id,
        s.coordinator_id,
        body("reg_stands", &s.id, s)?
    ])?;
    Ok(())
}

fn put_permit(c: &Connection, p: &Permit) -> StoreResult<()> {
    // An upsert, not INSERT OR REPLACE: REPLACE deletes the row first, which would fire the
    // ON DELETE CASCADE of the links below and count as a delete for the foreign keys.
    c.prepare_cached(
        "INSERT INTO reg_permits (number, holder_id, vehicle_id, stand_id, body)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (number) DO UPDATE SET holder_id = excluded.holder_id,
             vehicle_id = excluded.vehicle_id, stand_id = excluded.stand_id, body = excluded.body",
    )?
    .execute(params![
        p.number,
        p.holder_id,
        p.vehicle_id,
        p.stand_id,
        body("reg_permits", &p.number, p)?
    ])?;
    c.prepare_cached("DELETE FROM reg_permit_people WHERE permit_number = ?1")?
        .execute([&p.number])?;
    let mut link = c.prepare_cached(
        "INSERT OR IGNORE INTO reg_permit_people (permit_number, person_id, role)
         VALUES (?1, ?2, ?3)",
    )?;
    link.execute(params![p.number, p.holder_id, ROLE_HOLDER])?;
    for a in &p.auxiliaries {
        link.execute(params![p.number, a.person_id, ROLE_AUXILIARY])?;
    }
    if let Some(ill) = &p.illness_authorisation {
        link.execute(params![p.number, ill.person_id, ROLE_ILLNESS])?;
    }
    Ok(())
}

fn put_penalty(c: &Connection, p: &Penalty) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_penalties (id, permit_number, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET permit_number = excluded.permit_number,
             body = excluded.body",
    )?
    .execute(params![
        p.id,
        p.permit_number,
        body("reg_penalties", &p.id, p)?
    ])?;
    Ok(())
}

fn put_fine(c: &Connection, f: &Fine) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_fines (id, permit_number, body) VALUES (?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET permit_number = excluded.permit_number,
             body = excluded.body",
    )?
    .execute(params![f.id, f.permit_number, body("reg_fines", &f.id, f)?])?;
    Ok(())
}

fn put_transfer(c: &Connection, t: &Transfer) -> StoreResult<()> {
    c.prepare_cached(
        "INSERT INTO reg_transfers (permit_number, on_date, from_person_id, to_person_id, body)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (permit_number, on_date, from_person_id, to_person_id)
         DO UPDATE SET body = excluded.body",
    )?
    .execute(params![
        t.permit_number,
        t.on.to_string(),
        t.from_person_id,
        t.to_person_id,
        body("reg_transfers", &t.permit_number, t)?
    ])?;
    Ok(())
}

fn delete(c: &Connection, sql: &str, key: &str) -> StoreResult<()> {
    c.prepare_cached(sql)?.execute([key])?;
    Ok(())
}

/// Applies one change and notes in `dirty` what it touched (transfers are not in any bundle:
/// the field check does not read them).
fn apply_one(c: &Connection, change: &RegistryChange, dirty: &mut Dirty) -> StoreResult<()> {
    // Deleting something absent is not an error: the batch's end state is what matters, and
    // the version check already guarantees the batch was computed against this replica.
    match change {
        RegistryChange::UpsertPerson { person } => {
            dirty.person(&person.id);
            put_person(c, person)
        }
        RegistryChange::DeletePerson { id } => {
            dirty.person(id);
            delete(c, "DELETE FROM reg_people WHERE id = ?1", id)
        }
        RegistryChange::UpsertVehicle { vehicle } => {
            dirty.vehicle(&vehicle.id);
            put_vehicle(c, vehicle)
        }
        RegistryChange::DeleteVehicle { id } => {
            dirty.vehicle(id);
            delete(c, "DELETE FROM reg_vehicles WHERE id = ?1", id)
        }
        RegistryChange::UpsertStand { stand } => {
            dirty.stand(&stand.id);
            put_stand(c, stand)
        }
        RegistryChange::DeleteStand { id } => {
            dirty.stand(id);
            delete(c, "DELETE FROM reg_stands WHERE id = ?1", id)
        }
        RegistryChange::UpsertPermit { permit } => {
            dirty.permit(c, &permit.number)?;
            put_permit(c, permit)
        }
        RegistryChange::DeletePermit { number } => {
            dirty.permit(c, number)?;
            // Its reg_permit_people rows go with it (ON DELETE CASCADE).
            delete(c, "DELETE FROM reg_permits WHERE number = ?1", number)
        }
        RegistryChange::UpsertPenalty { penalty } => {
            dirty.penalty(c, &penalty.id)?;
            dirty.bundle(&penalty.permit_number);
            put_penalty(c, penalty)
        }
        RegistryChange::DeletePenalty { id } => {
            dirty.penalty(c, id)?;
            delete(c, "DELETE FROM reg_penalties WHERE id = ?1", id)
        }
        RegistryChange::UpsertFine { fine } => {
            dirty.fine(c, &fine.id)?;
            dirty.bundle(&fine.permit_number);
            put_fine(c, fine)
        }
        RegistryChange::DeleteFine { id } => {
            dirty.fine(c, id)?;
            delete(c, "DELETE FROM reg_fines WHERE id = ?1", id)
        }
        RegistryChange::UpsertTransfer { transfer } => put_transfer(c, transfer),
        RegistryChange::DeleteTransfer { key } => delete_transfer(c, key),
        // Not an entity row: `apply_changes` writes them once, after the batch.
        RegistryChange::UpsertLawParameters { .. } | RegistryChange::DeleteLawParameters => Ok(()),
    }
}

fn delete_transfer(c: &Connection, k: &TransferKey) -> StoreResult<()> {
    c.prepare_cached(
        "DELETE FROM reg_transfers WHERE permit_number = ?1 AND on_date = ?2
         AND from_person_id = ?3 AND to_person_id = ?4",
    )?
    .execute(params![
        k.permit_number,
        k.on.to_string(),
        k.from_person_id,
        k.to_person_id
    ])?;
    Ok(())
}
