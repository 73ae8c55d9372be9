//! Users, devices and refresh tokens in SQLite. Each function runs inside the transaction the
//! pool gives it; writes that the audit chain records append their row there too.

use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction};

use super::{bad_text, opt_time, parse_time, unique_violation};
use taxi_fiscal_store::Role;
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::{
    Actor, CodePurpose, CodeRefusal, DeviceRow, NewAccountCode, NewDevice, RefreshTokenRow,
    RotateOutcome, SessionState, StoreError, UserRow,
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
) -> Result<()> {
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

pub(super) fn count_users(conn: &Connection) -> Result<u64> {
    let n: i64 = conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

pub(super) fn create_user(tx: &Transaction<'_>, user: &UserRow, actor: &Actor) -> Result<UserRow> {
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

pub(super) fn user_by_username(conn: &Connection, username: &str) -> Result<Option<UserRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {USER_COLUMNS} FROM users WHERE username = ?1"),
            [username],
            user_from_row,
        )
        .optional()?)
}

pub(super) fn user_by_id(conn: &Connection, id: &str) -> Result<Option<UserRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
            [id],
            user_from_row,
        )
        .optional()?)
}

pub(super) fn list_users(conn: &Connection) -> Result<Vec<UserRow>> {
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
) -> Result<bool> {
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

/// See `Store::set_user_role`.
pub(super) fn set_user_role(
    tx: &Transaction<'_>,
    user_id: &str,
    role: Role,
    stand_id: Option<&str>,
    actor: &Actor,
) -> Result<UserRow> {
    let changed = tx.execute(
        "UPDATE users SET role = ?2, stand_id = ?3 WHERE id = ?1",
        rusqlite::params![user_id, role.as_str(), stand_id],
    )?;
    if changed == 0 {
        return Err(crate::Error::Store(StoreError::NotFound {
            what: "usuário",
        }));
    }
    audit(
        tx,
        actor,
        "user.role.change",
        format!("user:{user_id}"),
        &serde_json::json!({ "id": user_id, "role": role.as_str(), "stand_id": stand_id }),
    )?;
    user_by_id(tx, user_id)?.ok_or(crate::Error::Store(StoreError::NotFound {
        what: "usuário",
    }))
}

/// See `Store::set_user_active`.
pub(super) fn set_user_active(
    tx: &Transaction<'_>,
    user_id: &str,
    active: bool,
    actor: &Actor,
) -> Result<UserRow> {
    let Some(mut user) = user_by_id(tx, user_id)? else {
        return Err(crate::Error::Store(StoreError::NotFound {
            what: "usuário",
        }));
    };
    if user.active == active {
        return Ok(user);
    }
    tx.execute(
        "UPDATE users SET active = ?2 WHERE id = ?1",
        rusqlite::params![user_id, i64::from(active)],
    )?;
    if !active {
        // Every login of the user ends now, not when its refresh token runs out.
        tx.execute(
            "UPDATE refresh_tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL",
            rusqlite::params![user_id, format_at(actor.at)],
        )?;
    }
    let action = if active {
        "user.reactivate"
    } else {
        "user.deactivate"
    };
    audit(
        tx,
        actor,
        action,
        format!("user:{user_id}"),
        &serde_json::json!({ "id": user_id }),
    )?;
    user.active = active;
    Ok(user)
}

/// See `Store::create_account_code`.
pub(super) fn create_account_code(
    tx: &Transaction<'_>,
    code: &NewAccountCode,
    actor: &Actor,
) -> Result<()> {
    if user_by_id(tx, &code.user_id)?.is_none() {
        return Err(crate::Error::Store(StoreError::NotFound {
            what: "usuário",
        }));
    }
    let at = format_at(actor.at);
    tx.execute(
        "UPDATE account_codes SET used_at = ?3, replaced = 1 \
         WHERE user_id = ?1 AND purpose = ?2 AND used_at IS NULL",
        rusqlite::params![code.user_id, code.purpose.as_str(), at],
    )?;
    tx.execute(
        "INSERT INTO account_codes (code_hash, purpose, user_id, created_at, created_by, \
         expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        rusqlite::params![
            code.code_hash,
            code.purpose.as_str(),
            code.user_id,
            at,
            actor.user_id,
            format_at(code.expires_at)
        ],
    )
    .map_err(|e| unique_violation(e, "código"))?;
    audit(
        tx,
        actor,
        "user.code.create",
        format!("user:{}", code.user_id),
        &serde_json::json!({ "id": code.user_id, "purpose": code.purpose.as_str() }),
    )?;
    Ok(())
}

/// A live code: its user and the administrator who made it; or why it is not live.
fn live_code(
    conn: &Connection,
    code_hash: &str,
    purpose: CodePurpose,
    now: DateTime<Utc>,
) -> Result<Result<(UserRow, Option<String>), CodeRefusal>> {
    let found: Option<(String, String, Option<String>, Option<String>)> = conn
        .prepare_cached(
            "SELECT user_id, expires_at, used_at, created_by FROM account_codes \
             WHERE code_hash = ?1 AND purpose = ?2",
        )?
        .query_row(rusqlite::params![code_hash, purpose.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    let Some((user_id, expires_at, used_at, created_by)) = found else {
        return Ok(Err(CodeRefusal::Unknown));
    };
    if used_at.is_some() {
        return Ok(Err(CodeRefusal::Used));
    }
    if parse_time(&expires_at)? <= now {
        return Ok(Err(CodeRefusal::Expired));
    }
    match user_by_id(conn, &user_id)? {
        Some(u) if u.active => Ok(Ok((u, created_by))),
        Some(_) => Ok(Err(CodeRefusal::UserInactive)),
        None => Ok(Err(CodeRefusal::Unknown)),
    }
}

/// See `Store::account_code`.
pub(super) fn account_code(
    conn: &Connection,
    code_hash: &str,
    purpose: CodePurpose,
    now: DateTime<Utc>,
) -> Result<Result<UserRow, CodeRefusal>> {
    Ok(live_code(conn, code_hash, purpose, now)?.map(|(u, _)| u))
}

fn spend_code(
    tx: &Transaction<'_>,
    code_hash: &str,
    at: DateTime<Utc>,
    device_id: Option<&str>,
) -> Result<()> {
    tx.execute(
        "UPDATE account_codes SET used_at = ?2, device_id = ?3 WHERE code_hash = ?1",
        rusqlite::params![code_hash, format_at(at), device_id],
    )?;
    Ok(())
}

/// See `Store::reset_password_with_code`.
pub(super) fn reset_password_with_code(
    tx: &Transaction<'_>,
    code_hash: &str,
    new_hash: &str,
    at: DateTime<Utc>,
) -> Result<Result<UserRow, CodeRefusal>> {
    let (mut user, _) = match live_code(tx, code_hash, CodePurpose::PasswordReset, at)? {
        Ok(found) => found,
        Err(refusal) => return Ok(Err(refusal)),
    };
    spend_code(tx, code_hash, at, None)?;
    tx.execute(
        "UPDATE users SET password_hash = ?2 WHERE id = ?1",
        rusqlite::params![user.id, new_hash],
    )?;
    // Whoever knew the old password may hold a login: every one of them ends.
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL",
        rusqlite::params![user.id, format_at(at)],
    )?;
    let actor = Actor {
        user_id: Some(user.id.clone()),
        device_id: None,
        at,
    };
    audit(
        tx,
        &actor,
        "user.password.reset",
        format!("user:{}", user.id),
        &serde_json::json!({ "id": user.id }),
    )?;
    new_hash.clone_into(&mut user.password_hash);
    Ok(Ok(user))
}

/// See `Store::enrol_device`.
pub(super) fn enrol_device(
    tx: &Transaction<'_>,
    code_hash: &str,
    device_id: &str,
    label: &str,
    at: DateTime<Utc>,
) -> Result<Result<DeviceRow, CodeRefusal>> {
    let (user, created_by) = match live_code(tx, code_hash, CodePurpose::DeviceEnrolment, at)? {
        Ok(found) => found,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let actor = Actor {
        user_id: created_by,
        device_id: None,
        at,
    };
    let row = register_device(
        tx,
        &NewDevice {
            id: device_id.to_owned(),
            user_id: user.id,
            label: label.to_owned(),
        },
        &actor,
    )?;
    spend_code(tx, code_hash, at, Some(&row.id))?;
    Ok(Ok(row))
}

pub(super) fn register_device(
    tx: &Transaction<'_>,
    d: &NewDevice,
    actor: &Actor,
) -> Result<DeviceRow> {
    if user_by_id(tx, &d.user_id)?.is_none() {
        return Err(crate::Error::Store(StoreError::NotFound {
            what: "usuário",
        }));
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
fn refuse_uuid_collision(tx: &Transaction<'_>, id: &str) -> Result<()> {
    let uuid = sync_core::sync::device_uuid(id);
    let mut stmt = tx.prepare_cached("SELECT id FROM devices")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let existing: String = row.get(0)?;
        // The same id is the plain duplicate the insert reports.
        if existing != id && sync_core::sync::device_uuid(&existing) == uuid {
            return Err(crate::Error::Store(StoreError::DeviceIdCollision {
                id: id.to_owned(),
                existing,
            }));
        }
    }
    Ok(())
}

pub(super) fn device(conn: &Connection, id: &str) -> Result<Option<DeviceRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {DEVICE_COLUMNS} FROM devices WHERE id = ?1"),
            [id],
            device_from_row,
        )
        .optional()?)
}

pub(super) fn list_devices(conn: &Connection) -> Result<Vec<DeviceRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {DEVICE_COLUMNS} FROM devices ORDER BY registered_at, id"
    ))?;
    let rows = stmt.query_map([], device_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// See `Store::devices_last_received`: one index lookup per device (`record_changes_device`).
pub(super) fn devices_last_received(conn: &Connection) -> Result<Vec<(String, DateTime<Utc>)>> {
    let mut stmt = conn.prepare(
        "SELECT d.id, (SELECT max(c.at) FROM record_changes c WHERE c.device_id = d.id) \
         FROM devices d",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, at) = row?;
        if let Some(at) = opt_time(at)? {
            out.push((id, at));
        }
    }
    Ok(out)
}

pub(super) fn revoke_device(tx: &Transaction<'_>, id: &str, actor: &Actor) -> Result<DeviceRow> {
    let Some(mut row) = device(tx, id)? else {
        return Err(crate::Error::Store(StoreError::NotFound {
            what: "dispositivo",
        }));
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
) -> Result<Option<SessionState>> {
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

pub(super) fn insert_refresh(tx: &Transaction<'_>, t: &RefreshTokenRow) -> Result<()> {
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
) -> Result<RotateOutcome> {
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
    if let Some(used_at) = used_at {
        // A revoked device is told so, whatever it presents.
        match device(tx, &device_id)? {
            Some(d) if d.revoked_at.is_none() => {}
            _ => return Ok(RotateOutcome::DeviceRevoked),
        }
        let window =
            chrono::Duration::seconds(taxi_fiscal_store::limits::REFRESH_REUSE_INTERVAL_SECS);
        if revoked_at.is_none() && parse_time(&used_at)? + window >= now {
            // The same successor, still unused and live: the answer was lost, not stolen.
            let successor: Option<String> = tx
                .query_row(
                    "SELECT expires_at FROM refresh_tokens WHERE token_hash = ?1 \
                     AND family_id = ?2 AND used_at IS NULL AND revoked_at IS NULL",
                    rusqlite::params![next_hash, family],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(next_expires_at) = successor {
                return Ok(match user_by_id(tx, &user_id)? {
                    Some(user) if user.active => RotateOutcome::Repeated {
                        user,
                        device_id,
                        family_id: family,
                        next_expires_at: parse_time(&next_expires_at)?,
                    },
                    Some(_) => RotateOutcome::UserInactive,
                    None => RotateOutcome::Unknown,
                });
            }
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rusqlite::Connection;

    /// Revoking a user's refresh tokens (password change or reset, deactivation) looks the user
    /// up by index instead of scanning every token ever issued.
    #[test]
    fn a_users_tokens_are_revoked_through_an_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        let plan: Vec<String> = conn
            .prepare(
                "EXPLAIN QUERY PLAN UPDATE refresh_tokens SET revoked_at = ?2 \
                 WHERE user_id = ?1 AND revoked_at IS NULL",
            )
            .unwrap()
            .query_map(["u", "t"], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.contains("USING INDEX refresh_tokens_user")),
            "{plan:?}"
        );
    }
}
