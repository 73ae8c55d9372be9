//! Auto-number blocks and photos in SQLite.
//!
//! Both are bounded per device (`taxi_fiscal_store::limits`), checked in the write's own transaction: a
//! device holding `MAX_UNUSED_NUMBERS_PER_DEVICE` unused numbers gets no new block, and photos
//! beyond the quotas of a sliding window are refused (429 with `Retry-After`).
//!
//! A lease reads `max(end_no)` and inserts the next block in the same `IMMEDIATE` transaction,
//! so two leases can never overlap (and a unique index on `end_no` guards it again). A photo's
//! metadata and bytes are inserted together with the audit row, whose payload hash is the
//! photo's own SHA-256.

use crate::Result;
use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction};

use super::{parse_time, unique_violation};
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::limits::{
    MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW, MAX_PHOTOS_PER_DEVICE_PER_WINDOW,
    MAX_UNUSED_NUMBERS_PER_DEVICE, PHOTO_QUOTA_WINDOW_HOURS,
};
use taxi_fiscal_store::{Actor, NumberBlock, PhotoMeta, PutPhoto, StoreError};

pub(super) fn lease(
    tx: &Transaction<'_>,
    device_id: &str,
    size: u64,
    actor: &Actor,
) -> Result<NumberBlock> {
    let revoked: Option<bool> = tx
        .query_row(
            "SELECT revoked_at IS NOT NULL FROM devices WHERE id = ?1",
            [device_id],
            |r| r.get(0),
        )
        .optional()?;
    match revoked {
        None => {
            return Err(crate::Error::Store(StoreError::NotFound {
                what: "dispositivo",
            }));
        }
        Some(true) => return Err(crate::Error::Store(StoreError::DeviceNotActive)),
        Some(false) => {}
    }
    let unused = unused_numbers(tx, device_id)?;
    if unused >= MAX_UNUSED_NUMBERS_PER_DEVICE {
        return Err(crate::Error::Store(StoreError::QuotaExceeded {
            message: format!(
                "O dispositivo ainda tem {unused} números de auto sem uso (o máximo é \
                 {MAX_UNUSED_NUMBERS_PER_DEVICE}): use-os antes de pedir outro bloco."
            ),
            retry_after: None,
        }));
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

/// Numbers leased to `device_id` that no stored record holds yet (numbers a device used in
/// records it has not synced count as unused until they arrive).
pub(super) fn unused_numbers(conn: &Connection, device_id: &str) -> Result<u64> {
    let leased: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(end_no - start_no + 1), 0) FROM number_blocks WHERE device_id = ?1",
        )?
        .query_row([device_id], |r| r.get(0))?;
    let used: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM record_numbers n WHERE EXISTS (SELECT 1 FROM number_blocks b
                 WHERE b.device_id = ?1 AND n.value BETWEEN b.start_no AND b.end_no)",
        )?
        .query_row([device_id], |r| r.get(0))?;
    Ok(u64::try_from(leased.saturating_sub(used)).unwrap_or(0))
}

/// Refuses a new photo of `device_id` past the photo quotas of `taxi_fiscal_store::limits` over the
/// sliding window ending at `now`.
fn check_photo_quota(
    conn: &Connection,
    device_id: &str,
    size: u64,
    now: DateTime<Utc>,
) -> Result<()> {
    let since = now - Duration::hours(PHOTO_QUOTA_WINDOW_HOURS);
    let (count, bytes, oldest): (i64, i64, Option<String>) = conn
        .prepare_cached(
            "SELECT count(*), coalesce(sum(size), 0), min(uploaded_at) FROM photos
             WHERE device_id = ?1 AND uploaded_at > ?2",
        )?
        .query_row(rusqlite::params![device_id, format_at(since)], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    let count = u64::try_from(count).unwrap_or(0);
    let bytes = u64::try_from(bytes).unwrap_or(0);
    if count < MAX_PHOTOS_PER_DEVICE_PER_WINDOW
        && bytes.saturating_add(size) <= MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW
    {
        return Ok(());
    }
    // When the oldest upload of the window leaves it.
    let retry_after = oldest
        .and_then(|t| parse_time(&t).ok())
        .map(|t| {
            (t + Duration::hours(PHOTO_QUOTA_WINDOW_HOURS) - now)
                .num_seconds()
                .max(1)
        })
        .and_then(|s| u64::try_from(s).ok());
    Err(crate::Error::Store(StoreError::QuotaExceeded {
        message: format!(
            "Este dispositivo atingiu o limite de fotos enviadas em {PHOTO_QUOTA_WINDOW_HOURS} \
             horas ({MAX_PHOTOS_PER_DEVICE_PER_WINDOW} fotos ou {} MB): tente mais tarde.",
            MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW / (1024 * 1024)
        ),
        retry_after,
    }))
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

fn photo_meta(conn: &Connection, sha256: &str) -> Result<Option<PhotoMeta>> {
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
) -> Result<PutPhoto> {
    if let Some(existing) = photo_meta(tx, &meta.sha256)? {
        return Ok(PutPhoto::AlreadyStored(existing));
    }
    check_photo_quota(tx, &meta.device_id, meta.size, meta.uploaded_at)?;
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

pub(super) fn photo(conn: &Connection, sha256: &str) -> Result<Option<(PhotoMeta, Vec<u8>)>> {
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
pub(super) fn photos_present(conn: &Connection, hashes: &[String]) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM photos WHERE sha256 = ?1")?;
    let mut out = Vec::new();
    for h in hashes {
        if stmt.exists([h])? {
            out.push(h.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use chrono::{DateTime, Duration, Utc};
    use rusqlite::Connection;

    use super::check_photo_quota;
    use taxi_fiscal_store::StoreError;
    use taxi_fiscal_store::audit::format_at;
    use taxi_fiscal_store::limits::{
        MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW, MAX_PHOTOS_PER_DEVICE_PER_WINDOW,
        PHOTO_QUOTA_WINDOW_HOURS,
    };

    fn now() -> DateTime<Utc> {
        "2026-11-30T15:00:00Z".parse().unwrap()
    }

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        conn
    }

    fn photo(conn: &Connection, n: u64, device: &str, size: u64, at: DateTime<Utc>) {
        conn.execute(
            "INSERT INTO photos (sha256, size, content_type, uploaded_at, user_id, device_id)
             VALUES (?1, ?2, 'image/jpeg', ?3, 'u', ?4)",
            rusqlite::params![format!("{n:064x}"), size as i64, format_at(at), device],
        )
        .unwrap();
    }

    fn refused(r: crate::Result<()>) -> bool {
        matches!(
            r,
            Err(crate::Error::Store(StoreError::QuotaExceeded { .. }))
        )
    }

    #[test]
    fn photos_per_device_are_bounded_in_count_over_the_window() {
        let conn = db();
        for n in 0..MAX_PHOTOS_PER_DEVICE_PER_WINDOW - 1 {
            photo(&conn, n, "d1", 1, now() - Duration::minutes(1));
        }
        // One under the quota: one more may come in.
        check_photo_quota(&conn, "d1", 1, now()).unwrap();
        photo(&conn, 1_000_000, "d1", 1, now() - Duration::minutes(1));
        // At the quota: refused, saying when to retry; another device is not affected.
        match check_photo_quota(&conn, "d1", 1, now()) {
            Err(crate::Error::Store(StoreError::QuotaExceeded {
                message,
                retry_after,
            })) => {
                assert!(message.contains("limite de fotos"), "{message}");
                let secs = retry_after.unwrap();
                assert!(secs > 0 && secs <= 3600 * PHOTO_QUOTA_WINDOW_HOURS as u64);
            }
            other => panic!("{other:?}"),
        }
        check_photo_quota(&conn, "d2", 1, now()).unwrap();
        // Past the window, the same uploads no longer count.
        check_photo_quota(
            &conn,
            "d1",
            1,
            now() + Duration::hours(PHOTO_QUOTA_WINDOW_HOURS),
        )
        .unwrap();
    }

    #[test]
    fn photos_per_device_are_bounded_in_bytes_over_the_window() {
        let conn = db();
        photo(
            &conn,
            1,
            "d1",
            MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW - 10,
            now() - Duration::hours(1),
        );
        check_photo_quota(&conn, "d1", 10, now()).unwrap();
        assert!(refused(check_photo_quota(&conn, "d1", 11, now())));
    }
}
