//! Login and tokens (server ADR 0007): `POST /v1/auth/login` with username, password and the
//! device's server id gives a 15-minute access token and a single-use refresh token;
//! `POST /v1/auth/refresh` spends the refresh token for a new pair.
//!
//! Both tokens are stored in the device store (`client_session`) with their validity turned
//! into *device-clock* instants at receipt (now + `expires_in`, minus a margin): the server's
//! `expires_at` is on the server's clock, and a phone whose clock is a day off would otherwise
//! refresh on every request or never. A 401 on any request forces one refresh anyway.
//!
//! Login always sends the device's public key (`Store::device_public_key`, the key created on
//! first use): the server registers it for the device and then accepts the seals of the
//! records this device issues. A reinstalled app brings a new key with its first password
//! login. The store remembers where its key was registered (`mark_device_key_registered`):
//! an app updated from a version without keys, whose session was opened without one, is asked
//! for a password login before it sends records, instead of having its sealed autos refused.
//!
//! Enrolment ([`SyncClient::enrol`]): instead of a device id typed into the app, the
//! administrator's one-time enrolment code is exchanged at `POST /v1/devices/enrol` (no login)
//! for a device registration whose id the server makes (a UUID). The store then takes that id as
//! its device identity and forgets any session of another device, so the next login (without an
//! explicit device) is on the enrolled device.
//!
//! Login also makes sure the store knows who writes its records (`DeviceIdentity`): the user id
//! and role the server returned, and the device id whose bytes are the Automerge actor — the
//! server's device id when it is a UUID, otherwise the UUID derived from it
//! (`crate::sync::device_uuid`, which the server uses too). A store that already signed records
//! as another device refuses the change (`StoreError::DeviceIdChange`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{ClientError, HttpResponse, Method, SyncClient, http_error, json_body, json_request};
use crate::records::UserRole;
use crate::store::{ClientSession, DeviceIdentity, Store};
use crate::sync::device_uuid;

/// Refresh this long before the access token's end (network time, a slow request).
const ACCESS_MARGIN_SECONDS: i64 = 60;

#[derive(Debug, Serialize)]
struct LoginRequest<'a> {
    username: &'a str,
    password: &'a str,
    device_id: &'a str,
    /// Hex of the device's Ed25519 public key (`Store::device_public_key`), registered by the
    /// server so that it can check the seals of the records this device issues.
    device_public_key: String,
}

#[derive(Debug, Serialize)]
struct RefreshRequest<'a> {
    refresh_token: &'a str,
}

/// The server's `TokenResponse` (the fields the client uses).
#[derive(Debug, Deserialize)]
struct TokenResponse {
    access_token: String,
    expires_in: i64,
    expires_at: DateTime<Utc>,
    refresh_token: String,
    refresh_expires_at: DateTime<Utc>,
    user: UserView,
    device_id: String,
}

#[derive(Debug, Deserialize)]
struct UserView {
    id: String,
    username: String,
    role: String,
    #[serde(default)]
    stand_id: Option<String>,
}

#[derive(Debug, Serialize)]
struct EnrolRequest<'a> {
    code: &'a str,
    device_name: &'a str,
}

/// The server's `EnrolmentView` (the fields the client uses).
#[derive(Debug, Deserialize)]
struct EnrolResponse {
    device_id: String,
    user: UserView,
}

/// What `enrol` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnrolSummary {
    pub server_url: String,
    /// The device's id on the server, which the next login uses.
    pub server_device_id: String,
    /// The device's id in its records (Automerge actor): the same UUID.
    pub device_id: Uuid,
    /// Whose device it is: only this user logs in on it.
    pub user_id: String,
    pub username: String,
    pub role: String,
}

/// What `login` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoginSummary {
    pub server_url: String,
    pub username: String,
    pub user_id: String,
    pub role: String,
    pub stand_id: Option<String>,
    /// The device's id on the server.
    pub server_device_id: String,
    /// The device's id in its records (Automerge actor).
    pub device_id: Uuid,
    pub access_valid_until: DateTime<Utc>,
    pub refresh_valid_until: DateTime<Utc>,
}

impl SyncClient {
    /// Logs `username` in on this device and stores the session. `device`: the device's id on
    /// the server; default the stored session's, else the store's device identity (a UUID).
    pub fn login(
        &self,
        store: &mut Store,
        username: &str,
        password: &str,
        device: Option<&str>,
    ) -> Result<LoginSummary, ClientError> {
        let device_id = match device {
            Some(d) => d.trim().to_owned(),
            None => match store.client_session()? {
                Some(s) => s.server_device_id,
                None => store
                    .device_identity()?
                    .map(|i| i.device_id.to_string())
                    .ok_or(ClientError::NoDevice)?,
            },
        };
        let request = json_request(
            Method::Post,
            "/v1/auth/login",
            &LoginRequest {
                username: username.trim(),
                password,
                device_id: &device_id,
                device_public_key: hex::encode(store.device_public_key()?),
            },
        )?;
        let response = self.call(store, request, false)?;
        if response.status != 200 {
            return Err(revoked_or(store, http_error("o login", &response))?);
        }
        let session = self.session_from(&response, "o login")?;
        store.save_client_session(&session)?;
        store.mark_device_key_registered(&key_registration(&session), self.clock.now())?;
        let identity = ensure_identity(store, &session, self.clock.now())?;
        Ok(LoginSummary {
            server_url: session.server_url,
            username: session.username,
            user_id: session.user_id,
            role: session.role,
            stand_id: session.stand_id,
            server_device_id: session.server_device_id,
            device_id: identity.device_id,
            access_valid_until: session.access_valid_until,
            refresh_valid_until: session.refresh_valid_until,
        })
    }

    /// Exchanges the administrator's one-time enrolment `code` for this device's registration
    /// on the server, named `device_name`, and stores the device id the server gave as the
    /// store's device identity, so the next [`SyncClient::login`] without a device uses it. A
    /// session of another device is forgotten (the user logs in again, on this one). A store
    /// that already signed records as another device refuses the new id
    /// (`StoreError::DeviceIdChange`): such a device keeps its registration.
    pub fn enrol(
        &self,
        store: &mut Store,
        code: &str,
        device_name: &str,
    ) -> Result<EnrolSummary, ClientError> {
        let request = json_request(
            Method::Post,
            "/v1/devices/enrol",
            &EnrolRequest {
                code: code.trim(),
                device_name: device_name.trim(),
            },
        )?;
        let response = self.call(store, request, false)?;
        if response.status != 201 {
            return Err(http_error("o cadastro do aparelho", &response));
        }
        let enrolled: EnrolResponse = json_body("o cadastro do aparelho", &response)?;
        let now = self.clock.now();
        let current = store.device_identity()?;
        let role = record_role(&enrolled.user.role, current.as_ref().map(|i| i.role));
        let identity = DeviceIdentity {
            device_id: device_uuid(&enrolled.device_id),
            user_id: enrolled.user.id.clone(),
            role,
            stand_id: enrolled.user.stand_id.clone(),
            issuing_body: current.and_then(|i| i.issuing_body),
        };
        store.set_device_identity(&identity, now)?;
        if store
            .client_session()?
            .is_some_and(|s| s.server_device_id != enrolled.device_id)
        {
            store.clear_client_session()?;
        }
        Ok(EnrolSummary {
            server_url: self.transport.base_url().to_owned(),
            server_device_id: enrolled.device_id,
            device_id: identity.device_id,
            user_id: enrolled.user.id,
            username: enrolled.user.username,
            role: enrolled.user.role,
        })
    }

    /// Forgets the session (the records stay).
    pub fn logout(&self, store: &mut Store) -> Result<(), ClientError> {
        Ok(store.clear_client_session()?)
    }

    /// A session must exist and be refreshable; refreshes the access token if it ran out.
    pub(super) fn ensure_access(&self, store: &mut Store) -> Result<(), ClientError> {
        self.access_token(store, false).map(|_| ())
    }

    /// The access token, refreshed first if it ran out on the device clock (or `force`).
    pub(super) fn access_token(
        &self,
        store: &mut Store,
        force: bool,
    ) -> Result<String, ClientError> {
        let session = store.client_session()?.ok_or_else(|| {
            ClientError::LoginRequired(String::from("nenhuma sessão neste aparelho"))
        })?;
        let now = self.clock.now();
        if !force && now < session.access_valid_until {
            return Ok(session.access_token);
        }
        if now >= session.refresh_valid_until {
            store.clear_client_session()?;
            return Err(ClientError::LoginRequired(String::from("a sessão expirou")));
        }
        let request = json_request(
            Method::Post,
            "/v1/auth/refresh",
            &RefreshRequest {
                refresh_token: &session.refresh_token,
            },
        )?;
        // Not through `call` with auth (that would recurse); retries as any request. A refresh
        // whose answer was lost leaves a spent token here: repeated within the server's reuse
        // interval it gets the same successor (ADR 0032); later, it is refused as reused and the
        // user logs in again.
        let response = self.call(store, request, false)?;
        match response.status {
            200 => {
                let mut fresh = self.session_from(&response, "a renovação da sessão")?;
                // Keep the URL the session was opened on (the same server behind a proxy).
                fresh.server_url = session.server_url;
                store.save_client_session(&fresh)?;
                Ok(fresh.access_token)
            }
            400 | 401 | 403 => {
                let e = revoked_or(store, http_error("a renovação da sessão", &response))?;
                store.clear_client_session()?;
                Err(match e {
                    e @ ClientError::DeviceRevoked(_) => e,
                    ClientError::Http { message, .. } => ClientError::LoginRequired(message),
                    other => ClientError::LoginRequired(other.to_string()),
                })
            }
            _ => Err(http_error("a renovação da sessão", &response)),
        }
    }

    fn session_from(
        &self,
        response: &HttpResponse,
        what: &'static str,
    ) -> Result<ClientSession, ClientError> {
        let t: TokenResponse = json_body(what, response)?;
        let now = self.clock.now();
        // Validity on the device clock: how long the server granted, from now.
        let access_for = Duration::seconds(t.expires_in.max(0));
        let refresh_for = t.refresh_expires_at - t.expires_at + access_for;
        let margin = Duration::seconds(ACCESS_MARGIN_SECONDS.min(t.expires_in / 4));
        Ok(ClientSession {
            server_url: self.transport.base_url().to_owned(),
            server_device_id: t.device_id,
            user_id: t.user.id,
            username: t.user.username,
            role: t.user.role,
            stand_id: t.user.stand_id,
            access_token: t.access_token,
            access_valid_until: now + access_for - margin,
            refresh_token: t.refresh_token,
            refresh_valid_until: now + refresh_for - margin,
            updated_at: now,
        })
    }
}

/// What a login registered the device key with: the server and the device's id there.
pub(super) fn key_registration(session: &ClientSession) -> String {
    format!("{} {}", session.server_url, session.server_device_id)
}

/// The record role of a server role; an officer who is a Secretaria inspector stays one.
fn record_role(server_role: &str, current: Option<UserRole>) -> UserRole {
    match server_role {
        "coordinator" => UserRole::Coordinator,
        "office" => UserRole::Office,
        "admin" => UserRole::Admin,
        _ => match current {
            Some(UserRole::SecretariaInspector) => UserRole::SecretariaInspector,
            _ => UserRole::GuardaMunicipal,
        },
    }
}

/// Brings the store's identity in line with the session: device, user, role and stand from the
/// server (the store refuses a new device id once records were signed with the old one).
fn ensure_identity(
    store: &mut Store,
    session: &ClientSession,
    at: DateTime<Utc>,
) -> Result<DeviceIdentity, ClientError> {
    let current = store.device_identity()?;
    let role = record_role(&session.role, current.as_ref().map(|i| i.role));
    let wanted = match current.clone() {
        Some(id) => DeviceIdentity {
            device_id: device_uuid(&session.server_device_id),
            user_id: session.user_id.clone(),
            role,
            stand_id: session.stand_id.clone(),
            ..id
        },
        None => DeviceIdentity {
            device_id: device_uuid(&session.server_device_id),
            user_id: session.user_id.clone(),
            role,
            stand_id: session.stand_id.clone(),
            issuing_body: None,
        },
    };
    if current.as_ref() != Some(&wanted) {
        store.set_device_identity(&wanted, at)?;
    }
    Ok(wanted)
}

/// The server's refusal, or — when it says this device was revoked — the device purged of what
/// the server already has (`Store::purge_after_revocation`) and `DeviceRevoked`.
fn revoked_or(store: &mut Store, e: ClientError) -> Result<ClientError, ClientError> {
    match &e {
        ClientError::Http { code, .. } if code == "device_revoked" => {
            let report = store.purge_after_revocation()?;
            Ok(ClientError::DeviceRevoked(report))
        }
        _ => Ok(e),
    }
}
