//! Auto-number blocks and photos in PostgreSQL.
//!
//! Both are bounded per device (`taxi_fiscal_store::limits`), checked in the write's own
//! transaction: a device holding `MAX_UNUSED_NUMBERS_PER_DEVICE` unused numbers gets no new
//! block, and photos beyond the quotas of a sliding window are refused (429 with
//! `Retry-After`).
//!
//! A lease reads `max(end_no)` and inserts the next block in the same write transaction, after
//! the pool's write lock, so two leases — from two nodes too — can never overlap (and a unique
//! index on `end_no` guards it again). A photo's metadata and bytes are inserted together with
//! the audit row, whose payload hash is the photo's own SHA-256.
//!
//! Where this differs from SQLite, each to save round trips (a statement is a function call
//! in SQLite, a network exchange here): a device's leased and used numbers are counted by one
//! statement; a photo's metadata and bytes are read by one join; the "which of these photos are
//! stored" question is one `= ANY($1)` lookup instead of one query per hash.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use tokio_postgres::Row;

use crate::pool::Conn;
use crate::{Result, parse_time, to_i64, to_u64};
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::limits::{
    MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW, MAX_PHOTOS_PER_DEVICE_PER_WINDOW,
    MAX_UNUSED_NUMBERS_PER_DEVICE, PHOTO_QUOTA_WINDOW_HOURS,
};
use taxi_fiscal_store::{Actor, NumberBlock, PhotoMeta, PutPhoto, StoreError};

pub(crate) fn lease(
    tx: &Conn<'_>,
    device_id: &str,
    size: u64,
    actor: &Actor,
) -> Result<NumberBlock> {
    let revoked: Option<bool> = tx
        .query_opt(
            "SELECT revoked_at IS NOT NULL FROM devices WHERE id = $1",
            &[&device_id],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
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
    let max: i64 = tx
        .query_one("SELECT coalesce(max(end_no), 0) FROM number_blocks", &[])?
        .try_get(0)?;
    let size = size.max(1);
    let start = to_u64(max) + 1;
    let end = start + size - 1;
    tx.execute(
        "INSERT INTO number_blocks (device_id, start_no, end_no, leased_at, leased_by) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &device_id,
            &to_i64(start),
            &to_i64(end),
            &format_at(actor.at),
            &actor.user_id,
        ],
    )
    .map_err(|e| match e {
        crate::Error::Postgres(e) => crate::unique_violation(e, "bloco de números"),
        other => other,
    })?;
    crate::audit::append(
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
///
/// The used numbers are counted from the device's blocks, each a range scan of
/// `record_numbers_value`: the blocks are disjoint (see [`lease`]), so a stored number falls in
/// at most one of them and the join counts it once — the count SQLite's `EXISTS` gives.
pub(crate) fn unused_numbers(conn: &Conn<'_>, device_id: &str) -> Result<u64> {
    let row = conn.query_one(
        "SELECT \
         (SELECT coalesce(sum(end_no - start_no + 1), 0)::bigint FROM number_blocks \
             WHERE device_id = $1), \
         (SELECT count(*) FROM number_blocks b JOIN record_numbers n \
             ON n.value BETWEEN b.start_no AND b.end_no WHERE b.device_id = $1)",
        &[&device_id],
    )?;
    let leased: i64 = row.try_get(0)?;
    let used: i64 = row.try_get(1)?;
    Ok(to_u64(leased.saturating_sub(used)))
}

/// Refuses a new photo of `device_id` past the photo quotas of `taxi_fiscal_store::limits`
/// over the sliding window ending at `now`.
fn check_photo_quota(
    conn: &Conn<'_>,
    device_id: &str,
    size: u64,
    now: DateTime<Utc>,
) -> Result<()> {
    let since = now - Duration::hours(PHOTO_QUOTA_WINDOW_HOURS);
    let row = conn.query_one(
        "SELECT count(*), coalesce(sum(size), 0)::bigint, min(uploaded_at) FROM photos \
         WHERE device_id = $1 AND uploaded_at > $2",
        &[&device_id, &format_at(since)],
    )?;
    let count = to_u64(row.try_get(0)?);
    let bytes = to_u64(row.try_get(1)?);
    let oldest: Option<&str> = row.try_get(2)?;
    if count < MAX_PHOTOS_PER_DEVICE_PER_WINDOW
        && bytes.saturating_add(size) <= MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW
    {
        return Ok(());
    }
    // When the oldest upload of the window leaves it.
    let retry_after = oldest
        .and_then(|t| parse_time(t).ok())
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

macro_rules! photo_columns {
    () => {
        "sha256, size, content_type, uploaded_at, user_id, device_id, record_id"
    };
}

/// The first seven columns of a row selected as `photo_columns!()`.
fn photo_from_row(r: &Row) -> Result<PhotoMeta> {
    Ok(PhotoMeta {
        sha256: r.try_get(0)?,
        size: to_u64(r.try_get(1)?),
        content_type: r.try_get(2)?,
        uploaded_at: parse_time(r.try_get(3)?)?,
        user_id: r.try_get(4)?,
        device_id: r.try_get(5)?,
        record_id: r.try_get(6)?,
    })
}

fn photo_meta(conn: &Conn<'_>, sha256: &str) -> Result<Option<PhotoMeta>> {
    conn.query_opt(
        concat!(
            "SELECT ",
            photo_columns!(),
            " FROM photos WHERE sha256 = $1"
        ),
        &[&sha256],
    )?
    .as_ref()
    .map(photo_from_row)
    .transpose()
}

pub(crate) fn put_photo(
    tx: &Conn<'_>,
    meta: &PhotoMeta,
    bytes: &[u8],
    actor: &Actor,
) -> Result<PutPhoto> {
    if let Some(existing) = photo_meta(tx, &meta.sha256)? {
        return Ok(PutPhoto::AlreadyStored(existing));
    }
    check_photo_quota(tx, &meta.device_id, meta.size, meta.uploaded_at)?;
    tx.execute(
        concat!(
            "INSERT INTO photos (",
            photo_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7)"
        ),
        &[
            &meta.sha256,
            &to_i64(meta.size),
            &meta.content_type,
            &format_at(meta.uploaded_at),
            &meta.user_id,
            &meta.device_id,
            &meta.record_id,
        ],
    )?;
    tx.execute(
        "INSERT INTO photo_blobs (sha256, bytes) VALUES ($1, $2)",
        &[&meta.sha256, &bytes],
    )?;
    crate::audit::append(
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

/// A photo's metadata and bytes, read by one join. Metadata without its blob is an error, as
/// SQLite's second query finding no row is.
pub(crate) fn photo(conn: &Conn<'_>, sha256: &str) -> Result<Option<(PhotoMeta, Vec<u8>)>> {
    let Some(row) = conn.query_opt(
        "SELECT p.sha256, p.size, p.content_type, p.uploaded_at, p.user_id, p.device_id, \
         p.record_id, b.bytes FROM photos p LEFT JOIN photo_blobs b ON b.sha256 = p.sha256 \
         WHERE p.sha256 = $1",
        &[&sha256],
    )?
    else {
        return Ok(None);
    };
    let meta = photo_from_row(&row)?;
    let bytes: Option<Vec<u8>> = row.try_get(7)?;
    let bytes = bytes.ok_or_else(|| crate::corrupt("foto", "metadados sem os bytes"))?;
    Ok(Some((meta, bytes)))
}

/// Which of `hashes` are stored (the sync client's "have" question before uploading), in the
/// order asked. Metadata rows only: no blob is read.
pub(crate) fn photos_present(conn: &Conn<'_>, hashes: &[String]) -> Result<Vec<String>> {
    if hashes.is_empty() {
        return Ok(Vec::new());
    }
    let rows = conn.query(
        "SELECT sha256 FROM photos WHERE sha256 = ANY($1)",
        &[&hashes],
    )?;
    let stored = rows
        .iter()
        .map(|r| r.try_get::<_, String>(0))
        .collect::<Result<HashSet<_>, _>>()?;
    Ok(hashes
        .iter()
        .filter(|h| stored.contains(*h))
        .cloned()
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use super::check_photo_quota;
    use crate::PgStore;
    use crate::pool::Conn;
    use taxi_fiscal_store::StoreError;
    use taxi_fiscal_store::audit::format_at;
    use taxi_fiscal_store::limits::{
        MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW, MAX_PHOTOS_PER_DEVICE_PER_WINDOW,
        PHOTO_QUOTA_WINDOW_HOURS,
    };

    fn now() -> DateTime<Utc> {
        "2026-11-30T15:00:00Z".parse().unwrap()
    }

    async fn db() -> PgStore {
        PgStore::open(&crate::test_db::fresh().await).await.unwrap()
    }

    fn photo(conn: &Conn<'_>, n: u64, device: &str, size: u64, at: DateTime<Utc>) {
        conn.execute(
            "INSERT INTO photos (sha256, size, content_type, uploaded_at, user_id, device_id) \
             VALUES ($1, $2, 'image/jpeg', $3, 'u', $4)",
            &[
                &format!("{n:064x}"),
                &(size as i64),
                &format_at(at),
                &device,
            ],
        )
        .unwrap();
    }

    fn refused(r: crate::Result<()>) -> bool {
        matches!(
            r,
            Err(crate::Error::Store(StoreError::QuotaExceeded { .. }))
        )
    }

    /// The join over the device's blocks counts what SQLite's `EXISTS` over every stored
    /// number counts: each stored number inside one of the device's blocks, once.
    #[tokio::test]
    async fn unused_numbers_count_each_stored_number_of_the_devices_blocks_once() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                conn.batch_execute(
                    "INSERT INTO users (id, username, display_name, role, password_hash, \
                     created_at) VALUES ('u', 'u', 'U', 'officer', 'h', 't'); \
                     INSERT INTO devices (id, user_id, label, registered_at) \
                     VALUES ('d1', 'u', 'a', 't'), ('d2', 'u', 'b', 't'); \
                     INSERT INTO number_blocks (device_id, start_no, end_no, leased_at) \
                     VALUES ('d1', 1, 10, 't'), ('d2', 11, 20, 't'), ('d1', 21, 30, 't'); \
                     INSERT INTO records (id, kind, seq, doc, heads, status, author_user_id, \
                     author_role, author_device_id, occurred_at, sealed, created_at, \
                     updated_at) VALUES ('r', 'infraction', 1, '', '[]', 'draft', 'u', \
                     'officer', 'd1', 't', FALSE, 't', 't'); \
                     INSERT INTO record_numbers (number, record_id, value) VALUES \
                     ('2', 'r', 2), ('5', 'r', 5), ('0005', 'r', 5), ('12', 'r', 12), \
                     ('25', 'r', 25), ('31', 'r', 31), ('X-1', 'r', NULL);",
                )?;
                let exists = |device: &str| -> i64 {
                    conn.query_one(
                        "SELECT count(*) FROM record_numbers n WHERE EXISTS (SELECT 1 \
                         FROM number_blocks b WHERE b.device_id = $1 \
                         AND n.value BETWEEN b.start_no AND b.end_no)",
                        &[&device],
                    )
                    .unwrap()
                    .get(0)
                };
                assert_eq!(exists("d1"), 4);
                assert_eq!(super::unused_numbers(conn, "d1").unwrap(), 20 - 4);
                assert_eq!(exists("d2"), 1);
                assert_eq!(super::unused_numbers(conn, "d2").unwrap(), 10 - 1);
                assert_eq!(super::unused_numbers(conn, "d3").unwrap(), 0);
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn photos_per_device_are_bounded_in_count_over_the_window() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                for n in 0..MAX_PHOTOS_PER_DEVICE_PER_WINDOW - 1 {
                    photo(conn, n, "d1", 1, now() - Duration::minutes(1));
                }
                // One under the quota: one more may come in.
                check_photo_quota(conn, "d1", 1, now()).unwrap();
                photo(conn, 1_000_000, "d1", 1, now() - Duration::minutes(1));
                // At the quota: refused, saying when to retry; another device is not affected.
                match check_photo_quota(conn, "d1", 1, now()) {
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
                check_photo_quota(conn, "d2", 1, now()).unwrap();
                // Past the window, the same uploads no longer count.
                check_photo_quota(
                    conn,
                    "d1",
                    1,
                    now() + Duration::hours(PHOTO_QUOTA_WINDOW_HOURS),
                )
                .unwrap();
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn photos_per_device_are_bounded_in_bytes_over_the_window() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                photo(
                    conn,
                    1,
                    "d1",
                    MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW - 10,
                    now() - Duration::hours(1),
                );
                check_photo_quota(conn, "d1", 10, now()).unwrap();
                assert!(refused(check_photo_quota(conn, "d1", 11, now())));
                Ok(())
            })
            .await
            .unwrap();
    }
}
