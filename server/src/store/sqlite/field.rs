//! Auto-number blocks and photos in SQLite.
//!
//! A lease reads `max(end_no)` and inserts the next block in the same `IMMEDIATE` transaction,
//! so two leases can never overlap (and a unique index on `end_no` guards it again). A photo's
//! metadata and bytes are inserted together with the audit row, whose payload hash is the
//! photo's own SHA-256.

use rusqlite::{Connection, OptionalExtension, Row, Transaction};

use super::{parse_time, unique_violation};
use crate::audit::{AuditEntry, format_at, payload_hash};
use crate::store::{Actor, NumberBlock, PhotoMeta, PutPhoto, StoreError};

pub(super) fn lease(
    tx: &Transaction<'_>,
    device_id: &str,
    size: u64,
    actor: &Actor,
) -> Result<NumberBlock, StoreError> {
    let revoked: Option<bool> = tx
        .query_row(
            "SELECT revoked_at IS NOT NULL FROM devices WHERE id = ?1",
            [device_id],
            |r| r.get(0),
        )
        .optional()?;
    match revoked {
        None => {
            return Err(StoreError::NotFound {
                what: "dispositivo",
            });
        }
        Some(true) => return Err(StoreError::DeviceNotActive),
        Some(false) => {}
    }
    let max: i64 = tx.query_row(
        "SELECT coalesce(max(end_no), 0) FROM number_blocks",
        [],
        |r| r.get(0),
    )?;
    let size = size.max(1);
    let start = max.max(0) as u64 + 1;
    let end = start + size - 1;
    tx.execute(
        "INSERT INTO number_blocks (device_id, start_no, end_no, leased_at, leased_by) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        rusqlite::params![
            device_id,
            start as i64,
            end as i64,
            format_at(actor.at),
            actor.user_id
        ],
    )
    .map_err(|e| unique_violation(e, "bloco de números"))?;
    super::audit::append(
        tx,
        &AuditEntry {
            at: actor.at,
            user_id: actor.user_id.clone(),
            device_id: actor.device_id.clone(),
            action: "numbers.lease".into(),
            subject: format!("device:{device_id}"),
            payload_hash: payload_hash(format!("{start}-{end}").as_bytes()),
        },
    )?;
    Ok(NumberBlock {
        device_id: device_id.to_owned(),
        start,
        end,
        leased_at: actor.at,
    })
}

const PHOTO_COLUMNS: &str =
    "sha256, size, content_type, uploaded_at, user_id, device_id, record_id";

fn photo_from_row(r: &Row<'_>) -> rusqlite::Result<PhotoMeta> {
    Ok(PhotoMeta {
        sha256: r.get(0)?,
        size: r.get::<_, i64>(1)?.max(0) as u64,
        content_type: r.get(2)?,
        uploaded_at: parse_time(&r.get::<_, String>(3)?)?,
        user_id: r.get(4)?,
        device_id: r.get(5)?,
        record_id: r.get(6)?,
    })
}

fn photo_meta(conn: &Connection, sha256: &str) -> Result<Option<PhotoMeta>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {PHOTO_COLUMNS} FROM photos WHERE sha256 = ?1"),
            [sha256],
            photo_from_row,
        )
        .optional()?)
}

pub(super) fn put_photo(
    tx: &Transaction<'_>,
    meta: &PhotoMeta,
    bytes: &[u8],
    actor: &Actor,
) -> Result<PutPhoto, StoreError> {
    if let Some(existing) = photo_meta(tx, &meta.sha256)? {
        return Ok(PutPhoto::AlreadyStored(existing));
    }
    tx.execute(
        &format!("INSERT INTO photos ({PHOTO_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        rusqlite::params![
            meta.sha256,
            meta.size as i64,
            meta.content_type,
            format_at(meta.uploaded_at),
            meta.user_id,
            meta.device_id,
            meta.record_id
        ],
    )?;
    tx.execute(
        "INSERT INTO photo_blobs (sha256, bytes) VALUES (?1, ?2)",
        rusqlite::params![meta.sha256, bytes],
    )?;
    super::audit::append(
        tx,
        &AuditEntry {
            at: actor.at,
            user_id: actor.user_id.clone(),
            device_id: actor.device_id.clone(),
            action: "photo.upload".into(),
            subject: match &meta.record_id {
                Some(r) => format!("photo:{} record:{r}", meta.sha256),
                None => format!("photo:{}", meta.sha256),
            },
            payload_hash: meta.sha256.clone(),
        },
    )?;
    Ok(PutPhoto::Stored(meta.clone()))
}

pub(super) fn photo(
    conn: &Connection,
    sha256: &str,
) -> Result<Option<(PhotoMeta, Vec<u8>)>, StoreError> {
    let Some(meta) = photo_meta(conn, sha256)? else {
        return Ok(None);
    };
    let bytes: Vec<u8> = conn.query_row(
        "SELECT bytes FROM photo_blobs WHERE sha256 = ?1",
        [sha256],
        |r| r.get(0),
    )?;
    Ok(Some((meta, bytes)))
}

/// Which of `hashes` are stored (the sync client's "have" question before uploading). Metadata
/// rows only: no blob is read.
pub(super) fn photos_present(
    conn: &Connection,
    hashes: &[String],
) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM photos WHERE sha256 = ?1")?;
    let mut out = Vec::new();
    for h in hashes {
        if stmt.exists([h])? {
            out.push(h.clone());
        }
    }
    Ok(out)
}
