//! Users, devices and refresh tokens in SQLite. Each function runs inside the transaction the
//! pool gives it; writes that the audit chain records append their row there too.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction};

use super::{bad_text, opt_time, parse_time, unique_violation};
use crate::audit::{AuditEntry, format_at, payload_hash};
use crate::auth::Role;
use crate::store::{
    Actor, DeviceRow, NewDevice, RefreshTokenRow, RotateOutcome, SessionState, StoreError, UserRow,
};

const USER_COLUMNS: &str =
    "id, username, display_name, role, stand_id, password_hash, active, created_at";

fn user_from_row(r: &Row<'_>) -> rusqlite::Result<UserRow> {
    let role: String = r.get(3)?;
    Ok(UserRow {
        id: r.get(0)?,
        username: r.get(1)?,
        display_name: r.get(2)?,
        role: Role::parse(&role).ok_or_else(|| bad_text(3, "role"))?,
        stand_id: r.get(4)?,
        password_hash: r.get(5)?,
        active: r.get::<_, i64>(6)? != 0,
        created_at: parse_time(&r.get::<_, String>(7)?)?,
    })
}

const DEVICE_COLUMNS: &str =
    "id, user_id, label, registered_at, registered_by, revoked_at, revoked_by";

fn device_from_row(r: &Row<'_>) -> rusqlite::Result<DeviceRow> {
    Ok(DeviceRow {
        id: r.get(0)?,
        user_id: r.get(1)?,
        label: r.get(2)?,
        registered_at: parse_time(&r.get::<_, String>(3)?)?,
        registered_by: r.get(4)?,
        revoked_at: opt_time(r.get(5)?)?,
        revoked_by: r.get(6)?,
    })
}

fn audit(
    tx: &Transaction<'_>,
    actor: &Actor,
    action: &str,
    subject: String,
    payload: &serde_json::Value,
) -> Result<(), StoreError> {
    super::audit::append(
        tx,
        &AuditEntry {
            at: actor.at,
            user_id: actor.user_id.clone(),
            device_id: actor.device_id.clone(),
            action: action.to_owned(),
            subject,
            payload_hash: payload_hash(payload.to_string().as_bytes()),
        },
    )?;
    Ok(())
}

pub(super) fn count_users(conn: &Connection) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

pub(super) fn create_user(
    tx: &Transaction<'_>,
    user: &UserRow,
    actor: &Actor,
) -> Result<UserRow, StoreError> {
    tx.execute(
        &format!("INSERT INTO users ({USER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        rusqlite::params![
            user.id,
            user.username,
            user.display_name,
            user.role.as_str(),
            user.stand_id,
            user.password_hash,
            i64::from(user.active),
            format_at(user.created_at)
        ],
    )
    .map_err(|e| unique_violation(e, "usuário"))?;
    // The payload is what defines the account's powers; never the password hash.
    audit(
        tx,
        actor,
        "user.create",
        format!("user:{}", user.id),
        &serde_json::json!({
            "id": user.id, "username": user.username, "role": user.role.as_str(),
            "stand_id": user.stand_id,
        }),
    )?;
    Ok(user.clone())
}

pub(super) fn user_by_username(
    conn: &Connection,
    username: &str,
) -> Result<Option<UserRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {USER_COLUMNS} FROM users WHERE username = ?1"),
            [username],
            user_from_row,
        )
        .optional()?)
}

fn user_by_id(conn: &Connection, id: &str) -> Result<Option<UserRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
            [id],
            user_from_row,
        )
        .optional()?)
}

pub(super) fn list_users(conn: &Connection) -> Result<Vec<UserRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {USER_COLUMNS} FROM users ORDER BY username"
    ))?;
    let rows = stmt.query_map([], user_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// See `Store::change_password`. The compare on the old hash makes the check-then-write safe:
/// writes are serialised, so a change verified against a hash another change replaced writes
/// nothing.
pub(super) fn change_password(
    tx: &Transaction<'_>,
    user_id: &str,
    expected_hash: &str,
    new_hash: &str,
    keep_family: Option<&str>,
    actor: &Actor,
) -> Result<bool, StoreError> {
    let changed = tx.execute(
        "UPDATE users SET password_hash = ?3 WHERE id = ?1 AND password_hash = ?2",
        rusqlite::params![user_id, expected_hash, new_hash],
    )?;
    if changed == 0 {
        return Ok(false);
    }
    // Whoever knew the old password may hold a login: all of them end but the caller's. Their
    // access tokens are refused at their next request (the family check of `session`).
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL \
         AND (?3 IS NULL OR family_id <> ?3)",
        rusqlite::params![user_id, format_at(actor.at), keep_family],
    )?;
    audit(
        tx,
        actor,
        "user.password.change",
        format!("user:{user_id}"),
        &serde_json::json!({ "id": user_id }),
    )?;
    Ok(true)
}

pub(super) fn register_device(
    tx: &Transaction<'_>,
    d: &NewDevice,
    actor: &Actor,
) -> Result<DeviceRow, StoreError> {
    if user_by_id(tx, &d.user_id)?.is_none() {
        return Err(StoreError::NotFound { what: "usuário" });
    }
    refuse_uuid_collision(tx, &d.id)?;
    let row = DeviceRow {
        id: d.id.clone(),
        user_id: d.user_id.clone(),
        label: d.label.clone(),
        registered_at: actor.at,
        registered_by: actor.user_id.clone(),
        revoked_at: None,
        revoked_by: None,
    };
    tx.execute(
        &format!("INSERT INTO devices ({DEVICE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)"),
        rusqlite::params![
            row.id,
            row.user_id,
            row.label,
            format_at(row.registered_at),
            row.registered_by
        ],
    )
    .map_err(|e| unique_violation(e, "dispositivo"))?;
    audit(
        tx,
        actor,
        "device.register",
        format!("device:{}", row.id),
        &serde_json::json!({ "id": row.id, "user_id": row.user_id, "label": row.label }),
    )?;
    Ok(row)
}

/// A device's records carry `device_uuid(id)` as their Automerge actor, and the mapping is not
/// one-to-one: a UUID-shaped id stands for itself (in any spelling: upper case, without
/// hyphens), any other id for a hash. So an id whose UUID is an existing device's would let a
/// new device write as the old one. Checked inside the registering transaction (writes are
/// serialised), against every device ever registered, revoked ones included.
fn refuse_uuid_collision(tx: &Transaction<'_>, id: &str) -> Result<(), StoreError> {
    let uuid = sync_core::sync::device_uuid(id);
    let mut stmt = tx.prepare_cached("SELECT id FROM devices")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let existing: String = row.get(0)?;
        // The same id is the plain duplicate the insert reports.
        if existing != id && sync_core::sync::device_uuid(&existing) == uuid {
            return Err(StoreError::DeviceIdCollision {
                id: id.to_owned(),
                existing,
            });
        }
    }
    Ok(())
}

pub(super) fn device(conn: &Connection, id: &str) -> Result<Option<DeviceRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?1"),
            [id],
            device_from_row,
        )
        .optional()?)
}

pub(super) fn list_devices(conn: &Connection) -> Result<Vec<DeviceRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {DEVICE_COLUMNS} FROM devices ORDER BY registered_at, id"
    ))?;
    let rows = stmt.query_map([], device_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(super) fn revoke_device(
    tx: &Transaction<'_>,
    id: &str,
    actor: &Actor,
) -> Result<DeviceRow, StoreError> {
    let Some(mut row) = device(tx, id)? else {
        return Err(StoreError::NotFound {
            what: "dispositivo",
        });
    };
    if row.revoked_at.is_some() {
        return Ok(row);
    }
    let at = format_at(actor.at);
    tx.execute(
        "UPDATE devices SET revoked_at = ?2, revoked_by = ?3 WHERE id = ?1",
        rusqlite::params![id, at, actor.user_id],
    )?;
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = ?2 WHERE device_id = ?1 AND revoked_at IS NULL",
        rusqlite::params![id, at],
    )?;
    audit(
        tx,
        actor,
        "device.revoke",
        format!("device:{id}"),
        &serde_json::json!({ "id": id }),
    )?;
    row.revoked_at = Some(actor.at);
    row.revoked_by = actor.user_id.clone();
    Ok(row)
}

/// One indexed read: the user, the device and, when `family` is given, whether that login still
/// has a refresh token that is not revoked (a replay or a device revocation revokes them all;
/// spent tokens keep their row, so a family is live until then).
pub(super) fn session(
    conn: &Connection,
    user_id: &str,
    device_id: &str,
    family: Option<&str>,
) -> Result<Option<SessionState>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT u.active, u.role, u.stand_id, d.user_id, d.revoked_at IS NOT NULL, \
             ?3 IS NULL OR EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = ?3 \
                 AND t.user_id = ?1 AND t.device_id = ?2 AND t.revoked_at IS NULL) \
             FROM devices d JOIN users u ON u.id = ?1 WHERE d.id = ?2",
        )?
        .query_row(rusqlite::params![user_id, device_id, family], |r| {
            let role: String = r.get(1)?;
            Ok(SessionState {
                user_active: r.get::<_, i64>(0)? != 0,
                role: Role::parse(&role).ok_or_else(|| bad_text(1, "role"))?,
                stand_id: r.get(2)?,
                device_user_id: r.get(3)?,
                device_revoked: r.get(4)?,
                family_live: r.get(5)?,
            })
        })
        .optional()?)
}

pub(super) fn insert_refresh(tx: &Transaction<'_>, t: &RefreshTokenRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO refresh_tokens (token_hash, family_id, user_id, device_id, issued_at, \
         expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        rusqlite::params![
            t.token_hash,
            t.family_id,
            t.user_id,
            t.device_id,
            format_at(t.issued_at),
            format_at(t.expires_at)
        ],
    )?;
    Ok(())
}

pub(super) fn rotate_refresh(
    tx: &Transaction<'_>,
    presented: &str,
    next_hash: &str,
    next_expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<RotateOutcome, StoreError> {
    type Found = (
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
    );
    let found: Option<Found> = tx
        .query_row(
            "SELECT family_id, user_id, device_id, expires_at, used_at, revoked_at \
             FROM refresh_tokens WHERE token_hash = ?1",
            [presented],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .optional()?;
    let Some((family, user_id, device_id, expires_at, used_at, revoked_at)) = found else {
        return Ok(RotateOutcome::Unknown);
    };
    let at = format_at(now);
    if used_at.is_some() {
        tx.execute(
            "UPDATE refresh_tokens SET revoked_at = ?2 WHERE family_id = ?1 AND revoked_at IS NULL",
            rusqlite::params![family, at],
        )?;
        return Ok(RotateOutcome::Reused);
    }
    match device(tx, &device_id)? {
        Some(d) if d.revoked_at.is_none() => {}
        _ => return Ok(RotateOutcome::DeviceRevoked),
    }
    if revoked_at.is_some() {
        return Ok(RotateOutcome::Unknown);
    }
    let Some(user) = user_by_id(tx, &user_id)? else {
        return Ok(RotateOutcome::Unknown);
    };
    if !user.active {
        return Ok(RotateOutcome::UserInactive);
    }
    if parse_time(&expires_at)? <= now {
        return Ok(RotateOutcome::Expired);
    }
    tx.execute(
        "UPDATE refresh_tokens SET used_at = ?2 WHERE token_hash = ?1",
        rusqlite::params![presented, at],
    )?;
    insert_refresh(
        tx,
        &RefreshTokenRow {
            token_hash: next_hash.to_owned(),
            family_id: family.clone(),
            user_id,
            device_id: device_id.clone(),
            issued_at: now,
            expires_at: next_expires_at,
        },
    )?;
    Ok(RotateOutcome::Rotated {
        user,
        device_id,
        family_id: family,
    })
}
