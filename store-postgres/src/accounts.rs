//! Users, devices, refresh tokens and one-time account codes in PostgreSQL. Each function runs
//! inside the transaction the pool gives it; writes that the audit chain records append their
//! row there too.
//!
//! The checks that read before they write (a code still live, a refresh token not yet spent,
//! a password hash still the expected one) rely on the pool's write lock: write transactions
//! run one at a time across every node, so nothing changes between the read and the write,
//! as under SQLite's single writer.
//!
//! Where this differs from SQLite: the column lists are `concat!`ed into each statement at
//! compile time, so every statement is fixed text that the connection prepares once and caches;
//! a parameter that may be NULL and is only compared (`$3 IS NULL OR …`) is cast to `text`,
//! which PostgreSQL needs to know its type.

use chrono::{DateTime, Utc};
use tokio_postgres::Row;

use crate::pool::Conn;
use crate::{Result, opt_time, parse_time, to_u64};
use taxi_fiscal_store::Role;
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash};
use taxi_fiscal_store::{
    Actor, CodePurpose, CodeRefusal, DeviceRow, NewAccountCode, NewDevice, RefreshTokenRow,
    RotateOutcome, SessionState, StoreError, UserRow,
};

macro_rules! user_columns {
    () => {
        "id, username, display_name, role, stand_id, password_hash, active, created_at"
    };
}

fn role_of(text: &str) -> Result<Role> {
    Role::parse(text).ok_or_else(|| crate::corrupt("usuário", format!("papel inválido {text:?}")))
}

/// A row selected as `user_columns!()`.
fn user_from_row(r: &Row) -> Result<UserRow> {
    Ok(UserRow {
        id: r.try_get(0)?,
        username: r.try_get(1)?,
        display_name: r.try_get(2)?,
        role: role_of(r.try_get(3)?)?,
        stand_id: r.try_get(4)?,
        password_hash: r.try_get(5)?,
        active: r.try_get(6)?,
        created_at: parse_time(r.try_get(7)?)?,
    })
}

macro_rules! device_columns {
    () => {
        "id, user_id, label, registered_at, registered_by, revoked_at, revoked_by"
    };
}

/// A row selected as `device_columns!()`.
fn device_from_row(r: &Row) -> Result<DeviceRow> {
    Ok(DeviceRow {
        id: r.try_get(0)?,
        user_id: r.try_get(1)?,
        label: r.try_get(2)?,
        registered_at: parse_time(r.try_get(3)?)?,
        registered_by: r.try_get(4)?,
        revoked_at: opt_time(r.try_get(5)?)?,
        revoked_by: r.try_get(6)?,
    })
}

/// A UNIQUE violation of the statement that failed becomes `Duplicate { what }`.
fn duplicate(what: &'static str) -> impl FnOnce(crate::Error) -> crate::Error {
    move |e| match e {
        crate::Error::Postgres(e) => crate::unique_violation(e, what),
        other => other,
    }
}

fn not_found(what: &'static str) -> crate::Error {
    crate::Error::Store(StoreError::NotFound { what })
}

fn audit(
    tx: &Conn<'_>,
    actor: &Actor,
    action: &str,
    subject: String,
    payload: &serde_json::Value,
) -> Result<()> {
    crate::audit::append(
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

pub(crate) fn count_users(conn: &Conn<'_>) -> Result<u64> {
    let n: i64 = conn
        .query_one("SELECT count(*) FROM users", &[])?
        .try_get(0)?;
    Ok(to_u64(n))
}

pub(crate) fn create_user(tx: &Conn<'_>, user: &UserRow, actor: &Actor) -> Result<UserRow> {
    tx.execute(
        concat!(
            "INSERT INTO users (",
            user_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ),
        &[
            &user.id,
            &user.username,
            &user.display_name,
            &user.role.as_str(),
            &user.stand_id,
            &user.password_hash,
            &user.active,
            &format_at(user.created_at),
        ],
    )
    .map_err(duplicate("usuário"))?;
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

pub(crate) fn user_by_username(conn: &Conn<'_>, username: &str) -> Result<Option<UserRow>> {
    conn.query_opt(
        concat!(
            "SELECT ",
            user_columns!(),
            " FROM users WHERE username = $1"
        ),
        &[&username],
    )?
    .as_ref()
    .map(user_from_row)
    .transpose()
}

pub(crate) fn user_by_id(conn: &Conn<'_>, id: &str) -> Result<Option<UserRow>> {
    conn.query_opt(
        concat!("SELECT ", user_columns!(), " FROM users WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(user_from_row)
    .transpose()
}

pub(crate) fn list_users(conn: &Conn<'_>) -> Result<Vec<UserRow>> {
    conn.query(
        concat!("SELECT ", user_columns!(), " FROM users ORDER BY username"),
        &[],
    )?
    .iter()
    .map(user_from_row)
    .collect()
}

/// See `Store::change_password`. The compare on the old hash makes the check-then-write safe:
/// writes are serialised, so a change verified against a hash another change replaced writes
/// nothing.
pub(crate) fn change_password(
    tx: &Conn<'_>,
    user_id: &str,
    expected_hash: &str,
    new_hash: &str,
    keep_family: Option<&str>,
    actor: &Actor,
) -> Result<bool> {
    let changed = tx.execute(
        "UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2",
        &[&user_id, &expected_hash, &new_hash],
    )?;
    if changed == 0 {
        return Ok(false);
    }
    // Whoever knew the old password may hold a login: all of them end but the caller's. Their
    // access tokens are refused at their next request (the family check of `session`).
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL \
         AND ($3::text IS NULL OR family_id <> $3)",
        &[&user_id, &format_at(actor.at), &keep_family],
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
pub(crate) fn set_user_role(
    tx: &Conn<'_>,
    user_id: &str,
    role: Role,
    stand_id: Option<&str>,
    actor: &Actor,
) -> Result<UserRow> {
    let changed = tx.execute(
        "UPDATE users SET role = $2, stand_id = $3 WHERE id = $1",
        &[&user_id, &role.as_str(), &stand_id],
    )?;
    if changed == 0 {
        return Err(not_found("usuário"));
    }
    audit(
        tx,
        actor,
        "user.role.change",
        format!("user:{user_id}"),
        &serde_json::json!({ "id": user_id, "role": role.as_str(), "stand_id": stand_id }),
    )?;
    user_by_id(tx, user_id)?.ok_or_else(|| not_found("usuário"))
}

/// See `Store::set_user_active`.
pub(crate) fn set_user_active(
    tx: &Conn<'_>,
    user_id: &str,
    active: bool,
    actor: &Actor,
) -> Result<UserRow> {
    let Some(mut user) = user_by_id(tx, user_id)? else {
        return Err(not_found("usuário"));
    };
    if user.active == active {
        return Ok(user);
    }
    tx.execute(
        "UPDATE users SET active = $2 WHERE id = $1",
        &[&user_id, &active],
    )?;
    if !active {
        // Every login of the user ends now, not when its refresh token runs out.
        tx.execute(
            "UPDATE refresh_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL",
            &[&user_id, &format_at(actor.at)],
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
pub(crate) fn create_account_code(
    tx: &Conn<'_>,
    code: &NewAccountCode,
    actor: &Actor,
) -> Result<()> {
    if user_by_id(tx, &code.user_id)?.is_none() {
        return Err(not_found("usuário"));
    }
    let at = format_at(actor.at);
    tx.execute(
        "UPDATE account_codes SET used_at = $3, replaced = TRUE \
         WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL",
        &[&code.user_id, &code.purpose.as_str(), &at],
    )?;
    tx.execute(
        "INSERT INTO account_codes (code_hash, purpose, user_id, created_at, created_by, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &code.code_hash,
            &code.purpose.as_str(),
            &code.user_id,
            &at,
            &actor.user_id,
            &format_at(code.expires_at),
        ],
    )
    .map_err(duplicate("código"))?;
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
    conn: &Conn<'_>,
    code_hash: &str,
    purpose: CodePurpose,
    now: DateTime<Utc>,
) -> Result<Result<(UserRow, Option<String>), CodeRefusal>> {
    let Some(found) = conn.query_opt(
        "SELECT user_id, expires_at, used_at, created_by FROM account_codes \
         WHERE code_hash = $1 AND purpose = $2",
        &[&code_hash, &purpose.as_str()],
    )?
    else {
        return Ok(Err(CodeRefusal::Unknown));
    };
    let user_id: &str = found.try_get(0)?;
    let expires_at: &str = found.try_get(1)?;
    let used_at: Option<&str> = found.try_get(2)?;
    let created_by: Option<String> = found.try_get(3)?;
    if used_at.is_some() {
        return Ok(Err(CodeRefusal::Used));
    }
    if parse_time(expires_at)? <= now {
        return Ok(Err(CodeRefusal::Expired));
    }
    match user_by_id(conn, user_id)? {
        Some(u) if u.active => Ok(Ok((u, created_by))),
        Some(_) => Ok(Err(CodeRefusal::UserInactive)),
        None => Ok(Err(CodeRefusal::Unknown)),
    }
}

/// See `Store::account_code`.
pub(crate) fn account_code(
    conn: &Conn<'_>,
    code_hash: &str,
    purpose: CodePurpose,
    now: DateTime<Utc>,
) -> Result<Result<UserRow, CodeRefusal>> {
    Ok(live_code(conn, code_hash, purpose, now)?.map(|(u, _)| u))
}

fn spend_code(
    tx: &Conn<'_>,
    code_hash: &str,
    at: DateTime<Utc>,
    device_id: Option<&str>,
) -> Result<()> {
    tx.execute(
        "UPDATE account_codes SET used_at = $2, device_id = $3 WHERE code_hash = $1",
        &[&code_hash, &format_at(at), &device_id],
    )?;
    Ok(())
}

/// See `Store::reset_password_with_code`.
pub(crate) fn reset_password_with_code(
    tx: &Conn<'_>,
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
        "UPDATE users SET password_hash = $2 WHERE id = $1",
        &[&user.id, &new_hash],
    )?;
    // Whoever knew the old password may hold a login: every one of them ends.
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL",
        &[&user.id, &format_at(at)],
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
pub(crate) fn enrol_device(
    tx: &Conn<'_>,
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

pub(crate) fn register_device(tx: &Conn<'_>, d: &NewDevice, actor: &Actor) -> Result<DeviceRow> {
    if user_by_id(tx, &d.user_id)?.is_none() {
        return Err(not_found("usuário"));
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
        concat!(
            "INSERT INTO devices (",
            device_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, NULL, NULL)"
        ),
        &[
            &row.id,
            &row.user_id,
            &row.label,
            &format_at(row.registered_at),
            &row.registered_by,
        ],
    )
    .map_err(duplicate("dispositivo"))?;
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
fn refuse_uuid_collision(tx: &Conn<'_>, id: &str) -> Result<()> {
    let uuid = sync_core::sync::device_uuid(id);
    for row in tx.query("SELECT id FROM devices", &[])? {
        let existing: &str = row.try_get(0)?;
        // The same id is the plain duplicate the insert reports.
        if existing != id && sync_core::sync::device_uuid(existing) == uuid {
            return Err(crate::Error::Store(StoreError::DeviceIdCollision {
                id: id.to_owned(),
                existing: existing.to_owned(),
            }));
        }
    }
    Ok(())
}

pub(crate) fn device(conn: &Conn<'_>, id: &str) -> Result<Option<DeviceRow>> {
    conn.query_opt(
        concat!("SELECT ", device_columns!(), " FROM devices WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(device_from_row)
    .transpose()
}

pub(crate) fn list_devices(conn: &Conn<'_>) -> Result<Vec<DeviceRow>> {
    conn.query(
        concat!(
            "SELECT ",
            device_columns!(),
            " FROM devices ORDER BY registered_at, id"
        ),
        &[],
    )?
    .iter()
    .map(device_from_row)
    .collect()
}

/// See `Store::devices_last_received`: one index lookup per device (`record_changes_device`).
pub(crate) fn devices_last_received(conn: &Conn<'_>) -> Result<Vec<(String, DateTime<Utc>)>> {
    let rows = conn.query(
        "SELECT d.id, (SELECT max(c.at) FROM record_changes c WHERE c.device_id = d.id) \
         FROM devices d",
        &[],
    )?;
    let mut out = Vec::new();
    for row in &rows {
        let at: Option<&str> = row.try_get(1)?;
        if let Some(at) = at {
            out.push((row.try_get(0)?, parse_time(at)?));
        }
    }
    Ok(out)
}

pub(crate) fn revoke_device(tx: &Conn<'_>, id: &str, actor: &Actor) -> Result<DeviceRow> {
    let Some(mut row) = device(tx, id)? else {
        return Err(not_found("dispositivo"));
    };
    if row.revoked_at.is_some() {
        return Ok(row);
    }
    let at = format_at(actor.at);
    tx.execute(
        "UPDATE devices SET revoked_at = $2, revoked_by = $3 WHERE id = $1",
        &[&id, &at, &actor.user_id],
    )?;
    tx.execute(
        "UPDATE refresh_tokens SET revoked_at = $2 WHERE device_id = $1 AND revoked_at IS NULL",
        &[&id, &at],
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
pub(crate) fn session(
    conn: &Conn<'_>,
    user_id: &str,
    device_id: &str,
    family: Option<&str>,
) -> Result<Option<SessionState>> {
    let Some(r) = conn.query_opt(
        "SELECT u.active, u.role, u.stand_id, d.user_id, d.revoked_at IS NOT NULL, \
         $3::text IS NULL OR EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = $3 \
             AND t.user_id = $1 AND t.device_id = $2 AND t.revoked_at IS NULL) \
         FROM devices d JOIN users u ON u.id = $1 WHERE d.id = $2",
        &[&user_id, &device_id, &family],
    )?
    else {
        return Ok(None);
    };
    Ok(Some(SessionState {
        user_active: r.try_get(0)?,
        role: role_of(r.try_get(1)?)?,
        stand_id: r.try_get(2)?,
        device_user_id: r.try_get(3)?,
        device_revoked: r.try_get(4)?,
        family_live: r.try_get(5)?,
    }))
}

pub(crate) fn insert_refresh(tx: &Conn<'_>, t: &RefreshTokenRow) -> Result<()> {
    tx.execute(
        "INSERT INTO refresh_tokens (token_hash, family_id, user_id, device_id, issued_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &t.token_hash,
            &t.family_id,
            &t.user_id,
            &t.device_id,
            &format_at(t.issued_at),
            &format_at(t.expires_at),
        ],
    )?;
    Ok(())
}

pub(crate) fn rotate_refresh(
    tx: &Conn<'_>,
    presented: &str,
    next_hash: &str,
    next_expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<RotateOutcome> {
    let Some(found) = tx.query_opt(
        "SELECT family_id, user_id, device_id, expires_at, used_at, revoked_at \
         FROM refresh_tokens WHERE token_hash = $1",
        &[&presented],
    )?
    else {
        return Ok(RotateOutcome::Unknown);
    };
    let family: String = found.try_get(0)?;
    let user_id: String = found.try_get(1)?;
    let device_id: String = found.try_get(2)?;
    let expires_at: &str = found.try_get(3)?;
    let used_at: Option<&str> = found.try_get(4)?;
    let revoked_at: Option<&str> = found.try_get(5)?;
    let at = format_at(now);
    if let Some(used_at) = used_at {
        // A revoked device is told so, whatever it presents.
        match device(tx, &device_id)? {
            Some(d) if d.revoked_at.is_none() => {}
            _ => return Ok(RotateOutcome::DeviceRevoked),
        }
        let window =
            chrono::Duration::seconds(taxi_fiscal_store::limits::REFRESH_REUSE_INTERVAL_SECS);
        if revoked_at.is_none() && parse_time(used_at)? + window >= now {
            // The same successor, still unused and live: the answer was lost, not stolen.
            let successor = tx.query_opt(
                "SELECT expires_at FROM refresh_tokens WHERE token_hash = $1 \
                 AND family_id = $2 AND used_at IS NULL AND revoked_at IS NULL",
                &[&next_hash, &family],
            )?;
            if let Some(successor) = successor {
                let next_expires_at = parse_time(successor.try_get(0)?)?;
                return Ok(match user_by_id(tx, &user_id)? {
                    Some(user) if user.active => RotateOutcome::Repeated {
                        user,
                        device_id,
                        family_id: family,
                        next_expires_at,
                    },
                    Some(_) => RotateOutcome::UserInactive,
                    None => RotateOutcome::Unknown,
                });
            }
        }
        tx.execute(
            "UPDATE refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL",
            &[&family, &at],
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
    if parse_time(expires_at)? <= now {
        return Ok(RotateOutcome::Expired);
    }
    tx.execute(
        "UPDATE refresh_tokens SET used_at = $2 WHERE token_hash = $1",
        &[&presented, &at],
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
    use crate::PgStore;

    /// Revoking a user's refresh tokens (password change or reset, deactivation) looks the user
    /// up by index instead of scanning every token ever issued. Sequential scans are priced out
    /// so that the planner shows the index it may use even on the empty table.
    #[tokio::test]
    async fn a_users_tokens_are_revoked_through_an_index() {
        let store = PgStore::open(&crate::test_db::fresh().await).await.unwrap();
        let plan: Vec<String> = store
            .pool
            .write(|tx| {
                tx.batch_execute("SET LOCAL enable_seqscan = off")?;
                tx.query_dynamic(
                    "EXPLAIN UPDATE refresh_tokens SET revoked_at = $2 \
                     WHERE user_id = $1 AND revoked_at IS NULL",
                    &[&"u", &"t"],
                )?
                .iter()
                .map(|r| Ok(r.try_get::<_, String>(0)?))
                .collect()
            })
            .await
            .unwrap();
        assert!(
            plan.iter().any(|p| p.contains("refresh_tokens_user")),
            "{plan:?}"
        );
    }
}
