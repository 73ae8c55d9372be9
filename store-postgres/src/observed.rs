//! Observed persons in PostgreSQL (tables `observed_persons` and `observed_person_erasures`):
//! see `taxi_fiscal_store::observed`. Both writes run in the pool's write transaction with their
//! audit row. Also the `record_merges` index of merged duplicates, written with each accepted
//! change's projection ([`note_merge`], called by `records`).
//!
//! Differs from SQLite: the order of insertion, which SQLite read from `rowid`, is the identity
//! column `pos` of both `observed_persons` and `record_merges` (PostgreSQL rows have no stable
//! insertion order of their own). An upsert into `record_merges` keeps the row, so its `pos`,
//! as SQLite's `ON CONFLICT DO UPDATE` keeps the `rowid`.

use crate::pool::Conn;
use crate::{Result, parse_time, to_i64, to_u64};
use sync_core::sync::ObservedIdentity;
use taxi_fiscal_store::Actor;
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::observed::{
    ACTION_ERASE, ACTION_UPLOAD, Erasure, ObservedPersons, PutObserved, StoredPerson,
};

fn erasure(c: &Conn<'_>, record_id: &str) -> Result<Option<Erasure>> {
    c.query_opt(
        "SELECT erased_at, erased_by, persons, audit_seq FROM observed_person_erasures
         WHERE record_id = $1",
        &[&record_id],
    )?
    .map(|r| -> Result<Erasure> {
        Ok(Erasure {
            erased_at: parse_time(r.try_get(0)?)?,
            erased_by: r.try_get(1)?,
            persons: to_u64(r.try_get(2)?),
            audit_seq: to_u64(r.try_get(3)?),
        })
    })
    .transpose()
}

fn persons(c: &Conn<'_>, record_id: &str) -> Result<Vec<StoredPerson>> {
    c.query(
        "SELECT person_id, name, cpf, cnh, document, phone, address, uploaded_at, uploaded_by,
             device_id
         FROM observed_persons WHERE record_id = $1 ORDER BY pos",
        &[&record_id],
    )?
    .iter()
    .map(|r| {
        Ok(StoredPerson {
            person_id: r.try_get(0)?,
            name: r.try_get(1)?,
            cpf: r.try_get(2)?,
            cnh: r.try_get(3)?,
            document: r.try_get(4)?,
            phone: r.try_get(5)?,
            address: r.try_get(6)?,
            uploaded_at: parse_time(r.try_get(7)?)?,
            uploaded_by: r.try_get(8)?,
            device_id: r.try_get(9)?,
        })
    })
    .collect()
}

/// What the server holds for a record.
pub(crate) fn of_record(c: &Conn<'_>, record_id: &str) -> Result<ObservedPersons> {
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

/// Replaces the record's set (see `taxi_fiscal_store::observed`). The caller checked the set
/// against the record.
pub(crate) fn put(
    tx: &Conn<'_>,
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
    tx.execute(
        "DELETE FROM observed_persons WHERE record_id = $1",
        &[&record_id],
    )?;
    let at = format_at(actor.at);
    let by = actor.user_id.clone().unwrap_or_default();
    // One statement per person, as SQLite: a handful per record, and the statement is cached.
    for p in upload {
        tx.execute(
            "INSERT INTO observed_persons (record_id, person_id, name, cpf, cnh, document, phone,
                 address, uploaded_at, uploaded_by, device_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            &[
                &record_id,
                &p.id,
                &p.name,
                &p.cpf,
                &p.cnh,
                &p.document,
                &p.phone,
                &p.address,
                &at,
                &by,
                &actor.device_id,
            ],
        )?;
    }
    // Only the ids are hashed: the chain must stay verifiable after the data is erased, and
    // must not carry a digest of a name and CPF that could be tested against guesses.
    let ids: Vec<&str> = upload.iter().map(|p| p.id.as_str()).collect();
    crate::audit::append(
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
pub(crate) fn erase(tx: &Conn<'_>, record_id: &str, actor: &Actor) -> Result<Erasure> {
    if let Some(e) = erasure(tx, record_id)? {
        return Ok(e);
    }
    let n = tx.execute(
        "DELETE FROM observed_persons WHERE record_id = $1",
        &[&record_id],
    )?;
    let by = actor.user_id.clone().unwrap_or_default();
    let row = crate::audit::append(
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
    tx.execute(
        "INSERT INTO observed_person_erasures (record_id, erased_at, erased_by, persons, audit_seq)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &record_id,
            &format_at(actor.at),
            &by,
            &to_i64(n),
            &to_i64(row.seq),
        ],
    )?;
    Ok(Erasure {
        erased_at: actor.at,
        erased_by: by,
        persons: n,
        audit_seq: row.seq,
    })
}

/// Keeps `record_merges` in step with a record's projection: `kept` is the record it is merged
/// into, if any. Every change of a merged record comes here: the upsert's `WHERE` leaves an
/// unchanged row alone (PostgreSQL would otherwise write a new version of it each time).
pub(crate) fn note_merge(tx: &Conn<'_>, id: &str, kept: Option<&str>) -> Result<()> {
    match kept {
        Some(k) => tx.execute(
            "INSERT INTO record_merges (merged_id, kept_id) VALUES ($1, $2)
             ON CONFLICT (merged_id) DO UPDATE SET kept_id = excluded.kept_id
             WHERE record_merges.kept_id <> excluded.kept_id",
            &[&id, &k],
        )?,
        None => tx.execute("DELETE FROM record_merges WHERE merged_id = $1", &[&id])?,
    };
    Ok(())
}

/// The records merged into `kept_id`, in the order they were recorded.
pub(crate) fn merged_into(c: &Conn<'_>, kept_id: &str) -> Result<Vec<String>> {
    c.query(
        "SELECT merged_id FROM record_merges WHERE kept_id = $1 ORDER BY pos",
        &[&kept_id],
    )?
    .iter()
    .map(|r| Ok(r.try_get(0)?))
    .collect()
}
