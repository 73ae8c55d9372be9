//! Notifications of penalty and verification codes in PostgreSQL (tables `notifications` and
//! `verification_codes`); the sealing itself is `taxi_fiscal_store::notifications`.
//!
//! [`create`] runs in the pool's write transaction, after the write lock: numbering (the year's
//! largest `seq` plus one), the audit row and both inserts happen together, so two clerks — on
//! two nodes too — never get the same number and a failed insert leaves no audit row.
//!
//! Differs from SQLite: `create` opens no savepoint. The SQLite module rolled back to one on a
//! failure; here any error fails the whole unit of work, which the pool rolls back (and after
//! a failed statement PostgreSQL refuses every further one in the transaction anyway), so a
//! savepoint would cost two round trips for the same outcome.

use crate::pool::Conn;
use crate::{Result, corrupt, parse_time, to_i64, to_u64};
use chrono::{DateTime, Datelike, Utc};
use documents::{NotificationContent, VerificationCode};
use taxi_fiscal_store::audit::{AuditEntry, format_at};
use taxi_fiscal_store::notifications::{
    CodeTarget, NewNotification, NotificationRow, code_of, content_digest, number_of,
};
use taxi_fiscal_store::{Actor, StoreError};

/// The columns [`row_of`] reads, in its order.
macro_rules! columns {
    () => {
        "id, number, record_id, person, decision_event_id, content, content_sha256, code, \
         created_at, created_by, audit_seq"
    };
}

/// A row selected as [`columns!`], its JSON and code decoded.
fn row_of(r: &tokio_postgres::Row) -> Result<NotificationRow> {
    let content: String = r.try_get(5)?;
    let content: NotificationContent =
        serde_json::from_str(&content).map_err(|e| corrupt("notifications", e))?;
    let code: String = r.try_get(7)?;
    let code = VerificationCode::parse(&code)
        .ok_or_else(|| corrupt("notifications", "código de verificação ilegível"))?;
    Ok(NotificationRow {
        id: r.try_get(0)?,
        number: r.try_get(1)?,
        record_id: r.try_get(2)?,
        person: r.try_get(3)?,
        decision_event_id: r.try_get(4)?,
        content,
        content_sha256: r.try_get(6)?,
        code,
        created_at: parse_time(r.try_get(8)?)?,
        created_by: r.try_get(9)?,
        audit_seq: to_u64(r.try_get(10)?),
    })
}

/// Numbers, seals and stores each draft (see the module doc). A draft for a person and
/// decision that already has a notification is [`StoreError::Duplicate`] and nothing is kept.
pub(crate) fn create(
    tx: &Conn<'_>,
    drafts: &[NewNotification],
    actor: &Actor,
) -> Result<Vec<NotificationRow>> {
    let year = sync_core::time::local_datetime(actor.at).year();
    let year_col = i64::from(year);
    let created_by = actor.user_id.clone().unwrap_or_default();
    let mut out = Vec::with_capacity(drafts.len());
    for draft in drafts {
        let taken = tx
            .query_opt(
                "SELECT 1 FROM notifications
                 WHERE record_id = $1 AND person = $2 AND decision_event_id = $3",
                &[&draft.record_id, &draft.person, &draft.decision_event_id],
            )?
            .is_some();
        if taken {
            return Err(crate::Error::Store(StoreError::Duplicate {
                what: "notificação desta decisão para esta pessoa",
            }));
        }
        let seq: i64 = tx
            .query_one(
                "SELECT coalesce(max(seq), 0) + 1 FROM notifications WHERE year = $1",
                &[&year_col],
            )?
            .try_get(0)?;
        let number = number_of(year, to_u64(seq.max(1)));
        let mut content = draft.content.clone();
        content.number = number.clone();
        content.issued_at = actor.at;
        let digest = content_digest(&content);
        let digest_hex = hex::encode(digest);
        let audit = crate::audit::append(
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
        let compact = code.compact();
        tx.execute(
            concat!(
                "INSERT INTO notifications (",
                columns!(),
                ", year, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
            ),
            &[
                &id,
                &number,
                &draft.record_id,
                &draft.person,
                &draft.decision_event_id,
                &json,
                &digest_hex,
                &compact,
                &at,
                &created_by,
                &to_i64(audit.seq),
                &year_col,
                &seq,
            ],
        )?;
        tx.execute(
            "INSERT INTO verification_codes (code, kind, record_id, notification_id, created_at)
             VALUES ($1, 'notification', $2, $3, $4)",
            &[&compact, &draft.record_id, &id, &at],
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
pub(crate) fn of_record(conn: &Conn<'_>, record_id: &str) -> Result<Vec<NotificationRow>> {
    conn.query(
        concat!(
            "SELECT ",
            columns!(),
            " FROM notifications WHERE record_id = $1 ORDER BY year, seq"
        ),
        &[&record_id],
    )?
    .iter()
    .map(row_of)
    .collect()
}

/// One notification by id.
pub(crate) fn by_id(conn: &Conn<'_>, id: &str) -> Result<Option<NotificationRow>> {
    conn.query_opt(
        concat!("SELECT ", columns!(), " FROM notifications WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(row_of)
    .transpose()
}

/// What a verification code names, if anything.
pub(crate) fn lookup(conn: &Conn<'_>, code: &VerificationCode) -> Result<Option<CodeTarget>> {
    let hit = conn.query_opt(
        "SELECT kind, record_id, notification_id FROM verification_codes WHERE code = $1",
        &[&code.compact()],
    )?;
    let Some(hit) = hit else {
        return Ok(None);
    };
    let kind: String = hit.try_get(0)?;
    let record_id: String = hit.try_get(1)?;
    let notification_id: Option<String> = hit.try_get(2)?;
    Ok(match notification_id {
        _ if kind == "auto" => Some(CodeTarget::Auto { record_id }),
        Some(nid) => by_id(conn, &nid)?.map(|n| CodeTarget::Notification(Box::new(n))),
        None => None,
    })
}

/// Registers the verification code printed on an auto, for the public page; call it in the
/// transaction that stores the record's signed evidence. Idempotent for the same record; a code
/// already naming another record is [`StoreError::Duplicate`] (80 bits: only a forged
/// signature gets there). The look-up comes first, as in SQLite, so the duplicate is told
/// apart without a failed statement (which would abort the caller's transaction).
pub(crate) fn register_auto_code(
    conn: &Conn<'_>,
    code: &VerificationCode,
    record_id: &str,
    at: DateTime<Utc>,
) -> Result<()> {
    let compact = code.compact();
    let existing: Option<String> = conn
        .query_opt(
            "SELECT record_id FROM verification_codes WHERE code = $1",
            &[&compact],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    match existing {
        Some(r) if r == record_id => Ok(()),
        Some(_) => Err(crate::Error::Store(StoreError::Duplicate {
            what: "código de verificação",
        })),
        None => {
            conn.execute(
                "INSERT INTO verification_codes (code, kind, record_id, notification_id, created_at)
                 VALUES ($1, 'auto', $2, NULL, $3)",
                &[&compact, &record_id, &format_at(at)],
            )?;
            Ok(())
        }
    }
}

/// The code registered for a record's printed auto, if any.
pub(crate) fn auto_code_of(conn: &Conn<'_>, record_id: &str) -> Result<Option<VerificationCode>> {
    let code: Option<String> = conn
        .query_opt(
            "SELECT code FROM verification_codes WHERE record_id = $1 AND kind = 'auto' \
             ORDER BY created_at LIMIT 1",
            &[&record_id],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    Ok(code.and_then(|c| VerificationCode::parse(&c)))
}
