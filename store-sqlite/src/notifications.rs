//! Notifications of penalty and verification codes in SQLite (migration 010); the sealing
//! itself is `taxi_fiscal_store::notifications`.
//!
//! [`create`] runs in the pool's `IMMEDIATE` write transaction: numbering (the year's largest
//! `seq` plus one), the audit row and both inserts happen together, so two clerks never get the
//! same number and a failed insert leaves no audit row.

use crate::Result;
use chrono::{DateTime, Datelike, Utc};
use documents::{NotificationContent, VerificationCode};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::parse_time;
use super::records::corrupt;
use taxi_fiscal_store::audit::{AuditEntry, format_at};
use taxi_fiscal_store::notifications::{
    CodeTarget, NewNotification, NotificationRow, code_of, content_digest, number_of,
};
use taxi_fiscal_store::{Actor, StoreError};

const COLUMNS: &str = "id, number, record_id, person, decision_event_id, content, \
                       content_sha256, code, created_at, created_by, audit_seq";

/// A row as read, before its JSON and code are decoded.
struct Raw {
    id: String,
    number: String,
    record_id: String,
    person: String,
    decision_event_id: String,
    content: String,
    content_sha256: String,
    code: String,
    created_at: DateTime<Utc>,
    created_by: String,
    audit_seq: u64,
}

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw {
        id: r.get(0)?,
        number: r.get(1)?,
        record_id: r.get(2)?,
        person: r.get(3)?,
        decision_event_id: r.get(4)?,
        content: r.get(5)?,
        content_sha256: r.get(6)?,
        code: r.get(7)?,
        created_at: parse_time(&r.get::<_, String>(8)?)?,
        created_by: r.get(9)?,
        audit_seq: r.get::<_, i64>(10)?.max(0) as u64,
    })
}

fn decode(raw: Raw) -> Result<NotificationRow> {
    let content: NotificationContent =
        serde_json::from_str(&raw.content).map_err(|e| corrupt("notifications", e))?;
    let code = VerificationCode::parse(&raw.code)
        .ok_or_else(|| corrupt("notifications", "código de verificação ilegível"))?;
    Ok(NotificationRow {
        id: raw.id,
        number: raw.number,
        record_id: raw.record_id,
        person: raw.person,
        decision_event_id: raw.decision_event_id,
        content,
        content_sha256: raw.content_sha256,
        code,
        created_at: raw.created_at,
        created_by: raw.created_by,
        audit_seq: raw.audit_seq,
    })
}

/// Numbers, seals and stores each draft (see the module doc). A draft for a person and
/// decision that already has a notification is [`StoreError::Duplicate`] and nothing is kept.
pub(super) fn create(
    tx: &Transaction<'_>,
    drafts: &[NewNotification],
    actor: &Actor,
) -> Result<Vec<NotificationRow>> {
    tx.execute_batch("SAVEPOINT notifications")?;
    match create_all(tx, drafts, actor) {
        Ok(rows) => {
            tx.execute_batch("RELEASE notifications")?;
            Ok(rows)
        }
        Err(e) => {
            tx.execute_batch("ROLLBACK TO notifications; RELEASE notifications")?;
            Err(e)
        }
    }
}

fn create_all(
    tx: &Transaction<'_>,
    drafts: &[NewNotification],
    actor: &Actor,
) -> Result<Vec<NotificationRow>> {
    let year = sync_core::time::local_datetime(actor.at).year();
    let created_by = actor.user_id.clone().unwrap_or_default();
    let mut out = Vec::with_capacity(drafts.len());
    for draft in drafts {
        let taken: bool = tx
            .prepare_cached(
                "SELECT 1 FROM notifications
                 WHERE record_id = ?1 AND person = ?2 AND decision_event_id = ?3",
            )?
            .exists(params![
                draft.record_id,
                draft.person,
                draft.decision_event_id
            ])?;
        if taken {
            return Err(crate::Error::Store(StoreError::Duplicate {
                what: "notificação desta decisão para esta pessoa",
            }));
        }
        let seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM notifications WHERE year = ?1",
            [year],
            |r| r.get(0),
        )?;
        let number = number_of(year, seq.max(1) as u64);
        let mut content = draft.content.clone();
        content.number = number.clone();
        content.issued_at = actor.at;
        let digest = content_digest(&content);
        let digest_hex = hex::encode(digest);
        let audit = super::audit::append(
            tx,
            &AuditEntry {
                at: actor.at,
                user_id: actor.user_id.clone(),
                device_id: actor.device_id.clone(),
                action: String::from("office.notification"),
                subject: format!("record:{}", draft.record_id),
                payload_hash: digest_hex.clone(),
            },
        )?;
        let code = code_of(&digest, &audit.hash);
        content.verification.code = code.clone();
        let id = uuid::Uuid::now_v7().to_string();
        let json = serde_json::to_string(&content).map_err(|e| corrupt("notifications", e))?;
        let at = format_at(actor.at);
        tx.execute(
            &format!("INSERT INTO notifications ({COLUMNS}, year, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"),
            params![
                id,
                number,
                draft.record_id,
                draft.person,
                draft.decision_event_id,
                json,
                digest_hex,
                code.compact(),
                at,
                created_by,
                audit.seq as i64,
                year,
                seq
            ],
        )?;
        tx.execute(
            "INSERT INTO verification_codes (code, kind, record_id, notification_id, created_at)
             VALUES (?1, 'notification', ?2, ?3, ?4)",
            params![code.compact(), draft.record_id, id, at],
        )?;
        out.push(NotificationRow {
            id,
            number,
            record_id: draft.record_id.clone(),
            person: draft.person.clone(),
            decision_event_id: draft.decision_event_id.clone(),
            content,
            content_sha256: digest_hex,
            code,
            created_at: actor.at,
            created_by: created_by.clone(),
            audit_seq: audit.seq,
        });
    }
    Ok(out)
}

/// The notifications of a record, oldest first.
pub(super) fn of_record(conn: &Connection, record_id: &str) -> Result<Vec<NotificationRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM notifications WHERE record_id = ?1 ORDER BY year, seq"
    ))?;
    let rows = stmt
        .query_map([record_id], row_of)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(decode).collect()
}

/// One notification by id.
pub(super) fn by_id(conn: &Connection, id: &str) -> Result<Option<NotificationRow>> {
    let raw = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM notifications WHERE id = ?1"
        ))?
        .query_row([id], row_of)
        .optional()?;
    raw.map(decode).transpose()
}

/// What a verification code names, if anything.
pub(super) fn lookup(conn: &Connection, code: &VerificationCode) -> Result<Option<CodeTarget>> {
    let hit: Option<(String, String, Option<String>)> = conn
        .prepare_cached(
            "SELECT kind, record_id, notification_id FROM verification_codes WHERE code = ?1",
        )?
        .query_row([code.compact()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    Ok(match hit {
        None => None,
        Some((kind, record_id, _)) if kind == "auto" => Some(CodeTarget::Auto { record_id }),
        Some((_, _, Some(nid))) => {
            by_id(conn, &nid)?.map(|n| CodeTarget::Notification(Box::new(n)))
        }
        Some(_) => None,
    })
}

/// Registers the verification code printed on an auto, for the public page; call it in the
/// transaction that stores the record's signed evidence. Idempotent for the same record; a code
/// already naming another record is [`StoreError::Duplicate`] (80 bits: only a forged
/// signature gets there).
pub(crate) fn register_auto_code(
    conn: &Connection,
    code: &VerificationCode,
    record_id: &str,
    at: DateTime<Utc>,
) -> Result<()> {
    let existing: Option<String> = conn
        .prepare_cached("SELECT record_id FROM verification_codes WHERE code = ?1")?
        .query_row([code.compact()], |r| r.get(0))
        .optional()?;
    match existing {
        Some(r) if r == record_id => Ok(()),
        Some(_) => Err(crate::Error::Store(StoreError::Duplicate {
            what: "código de verificação",
        })),
        None => {
            conn.prepare_cached(
                "INSERT INTO verification_codes (code, kind, record_id, notification_id, created_at)
                 VALUES (?1, 'auto', ?2, NULL, ?3)",
            )?
            .execute(params![code.compact(), record_id, format_at(at)])?;
            Ok(())
        }
    }
}

/// The code registered for a record's printed auto, if any.
pub(super) fn auto_code_of(conn: &Connection, record_id: &str) -> Result<Option<VerificationCode>> {
    let code: Option<String> = conn
        .prepare_cached(
            "SELECT code FROM verification_codes WHERE record_id = ?1 AND kind = 'auto' \
             ORDER BY created_at LIMIT 1",
        )?
        .query_row([record_id], |r| r.get(0))
        .optional()?;
    Ok(code.and_then(|c| VerificationCode::parse(&c)))
}
