//! Observed persons in SQLite (migration 012): see `taxi_fiscal_store::observed`. Both writes run in
//! the pool's `IMMEDIATE` transaction with their audit row. Also the `record_merges` index of
//! merged duplicates, written with each accepted change's projection.

use crate::Result;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use sync_core::sync::ObservedIdentity;

use super::parse_time;
use taxi_fiscal_store::Actor;
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::observed::{
    ACTION_ERASE, ACTION_UPLOAD, Erasure, ObservedPersons, PutObserved, StoredPerson,
};

fn erasure(c: &Connection, record_id: &str) -> Result<Option<Erasure>> {
    Ok(c.prepare_cached(
        "SELECT erased_at, erased_by, persons, audit_seq FROM observed_person_erasures
         WHERE record_id = ?1",
    )?
    .query_row([record_id], |r| {
        Ok(Erasure {
            erased_at: parse_time(&r.get::<_, String>(0)?)?,
            erased_by: r.get(1)?,
            persons: r.get::<_, i64>(2)?.max(0) as u64,
            audit_seq: r.get::<_, i64>(3)?.max(0) as u64,
        })
    })
    .optional()?)
}

fn persons(c: &Connection, record_id: &str) -> Result<Vec<StoredPerson>> {
    Ok(c.prepare_cached(
        "SELECT person_id, name, cpf, cnh, document, phone, address, uploaded_at, uploaded_by,
             device_id
         FROM observed_persons WHERE record_id = ?1 ORDER BY rowid",
    )?
    .query_map([record_id], |r| {
        Ok(StoredPerson {
            person_id: r.get(0)?,
            name: r.get(1)?,
            cpf: r.get(2)?,
            cnh: r.get(3)?,
            document: r.get(4)?,
            phone: r.get(5)?,
            address: r.get(6)?,
            uploaded_at: parse_time(&r.get::<_, String>(7)?)?,
            uploaded_by: r.get(8)?,
            device_id: r.get(9)?,
        })
    })?
    .collect::<Result<Vec<_>, _>>()?)
}

/// What the server holds for a record.
pub(super) fn of_record(c: &Connection, record_id: &str) -> Result<ObservedPersons> {
    Ok(ObservedPersons {
        persons: persons(c, record_id)?,
        erasure: erasure(c, record_id)?,
    })
}

fn same(a: &StoredPerson, b: &ObservedIdentity) -> bool {
    a.person_id == b.id
        && a.name == b.name
        && a.cpf == b.cpf
        && a.cnh == b.cnh
        && a.document == b.document
        && a.phone == b.phone
        && a.address == b.address
}

/// Replaces the record's set (module docs). The caller checked the set against the record.
pub(super) fn put(
    tx: &Transaction<'_>,
    record_id: &str,
    upload: &[ObservedIdentity],
    actor: &Actor,
) -> Result<PutObserved> {
    if let Some(e) = erasure(tx, record_id)? {
        return Ok(PutObserved::Erased(e));
    }
    let count = upload.len() as u64;
    let held = persons(tx, record_id)?;
    if held.len() == upload.len() && held.iter().zip(upload).all(|(a, b)| same(a, b)) {
        return Ok(PutObserved::Stored {
            persons: count,
            changed: false,
        });
    }
    tx.prepare_cached("DELETE FROM observed_persons WHERE record_id = ?1")?
        .execute([record_id])?;
    let at = format_at(actor.at);
    let by = actor.user_id.clone().unwrap_or_default();
    for p in upload {
        tx.prepare_cached(
            "INSERT INTO observed_persons (record_id, person_id, name, cpf, cnh, document, phone,
                 address, uploaded_at, uploaded_by, device_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?
        .execute(params![
            record_id,
            p.id,
            p.name,
            p.cpf,
            p.cnh,
            p.document,
            p.phone,
            p.address,
            at,
            by,
            actor.device_id
        ])?;
    }
    // Only the ids are hashed: the chain must stay verifiable after the data is erased, and
    // must not carry a digest of a name and CPF that could be tested against guesses.
    let ids: Vec<&str> = upload.iter().map(|p| p.id.as_str()).collect();
    super::audit::append(
        tx,
        &AuditEntry {
            at: actor.at,
            user_id: actor.user_id.clone(),
            device_id: actor.device_id.clone(),
            action: ACTION_UPLOAD.to_owned(),
            subject: format!("record:{record_id}"),
            payload_hash: payload_hash(ids.join("\n").as_bytes()),
        },
    )?;
    Ok(PutObserved::Stored {
        persons: count,
        changed: true,
    })
}

/// Deletes the record's persons and records the erasure; the erasure already made when there is
/// one (idempotent).
pub(super) fn erase(tx: &Transaction<'_>, record_id: &str, actor: &Actor) -> Result<Erasure> {
    if let Some(e) = erasure(tx, record_id)? {
        return Ok(e);
    }
    let n = tx
        .prepare_cached("DELETE FROM observed_persons WHERE record_id = ?1")?
        .execute([record_id])? as u64;
    let by = actor.user_id.clone().unwrap_or_default();
    let row = super::audit::append(
        tx,
        &AuditEntry {
            at: actor.at,
            user_id: actor.user_id.clone(),
            device_id: actor.device_id.clone(),
            action: ACTION_ERASE.to_owned(),
            subject: format!("record:{record_id}"),
            payload_hash: payload_hash(format!("{n}").as_bytes()),
        },
    )?;
    tx.prepare_cached(
        "INSERT INTO observed_person_erasures (record_id, erased_at, erased_by, persons, audit_seq)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        record_id,
        format_at(actor.at),
        by,
        n as i64,
        row.seq as i64
    ])?;
    Ok(Erasure {
        erased_at: actor.at,
        erased_by: by,
        persons: n,
        audit_seq: row.seq,
    })
}

/// Keeps `record_merges` in step with a record's projection: `kept` is the record it is merged
/// into, if any.
pub(super) fn note_merge(tx: &Transaction<'_>, record_id: &str, kept: Option<&str>) -> Result<()> {
    match kept {
        Some(k) => tx
            .prepare_cached(
                "INSERT INTO record_merges (merged_id, kept_id) VALUES (?1, ?2)
                 ON CONFLICT (merged_id) DO UPDATE SET kept_id = excluded.kept_id",
            )?
            .execute([record_id, k])?,
        None => tx
            .prepare_cached("DELETE FROM record_merges WHERE merged_id = ?1")?
            .execute([record_id])?,
    };
    Ok(())
}

/// The records merged into `kept_id`, in the order they were recorded.
pub(super) fn merged_into(c: &Connection, kept_id: &str) -> Result<Vec<String>> {
    Ok(
        c.prepare_cached("SELECT merged_id FROM record_merges WHERE kept_id = ?1 ORDER BY rowid")?
            .query_map([kept_id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?,
    )
}
