//! The API's JSON body decode (`api::extract::parse_json`, what `JsonBody` and
//! `OptionalJsonBody` run) on arbitrary bytes, for a set of representative POST bodies: each
//! must parse or fail as 400 `malformed_json` / 422 `invalid_body`, never panic, whatever the
//! nesting (serde_json's recursion limit of 128 stops a deep body before the stack does).

use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::api::extract::parse_json;

/// The body types [`api_json`] decodes every input as (`POST` routes: login, refresh, password change, new user,
/// number block, photo "have", record event, sync, fine, permit grant, auxiliary, person,
/// vehicle, office classification, the editais' opening, candidate, appeal and grant), plus a
/// bare JSON value.
pub const API_BODY_TYPES: &[&str] = &[
    "LoginRequest",
    "RefreshRequest",
    "PasswordChangeRequest",
    "NewUserRequest",
    "NumberBlockRequest",
    "PhotoHaveRequest",
    "NewEventRequest",
    "SyncRequest",
    "NewFine",
    "GrantPermit",
    "AddAuxiliary",
    "Person",
    "Vehicle",
    "ClassifyRequest",
    "NewEdital",
    "NewCandidate",
    "NewAppeal",
    "GrantRequest",
    "Value",
];

fn decode<T: DeserializeOwned>(data: &[u8]) {
    if let Err(e) = parse_json::<T>(data) {
        let expected = matches!(
            (e.status, e.code.as_ref()),
            (StatusCode::BAD_REQUEST, "malformed_json")
                | (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body")
        );
        assert!(expected, "unexpected rejection {} {}", e.status, e.code);
        assert!(!e.message.is_empty());
    }
}

/// Decodes `data` as every type of [`API_BODY_TYPES`]; panics only on a bug.
pub fn api_json(data: &[u8]) {
    decode::<crate::api::auth::LoginRequest>(data);
    decode::<crate::api::auth::RefreshRequest>(data);
    decode::<crate::api::auth::PasswordChangeRequest>(data);
    decode::<crate::api::accounts::NewUserRequest>(data);
    decode::<crate::api::accounts::NumberBlockRequest>(data);
    decode::<crate::api::photos::PhotoHaveRequest>(data);
    decode::<crate::api::records::NewEventRequest>(data);
    decode::<sync_core::sync::SyncRequest>(data);
    decode::<crate::registry::ops::NewFine>(data);
    decode::<crate::registry::ops::GrantPermit>(data);
    decode::<crate::registry::ops::AddAuxiliary>(data);
    decode::<sync_core::domain::Person>(data);
    decode::<sync_core::domain::Vehicle>(data);
    decode::<crate::office::ClassifyRequest>(data);
    decode::<sync_core::rules::selection::NewEdital>(data);
    decode::<sync_core::rules::selection::NewCandidate>(data);
    decode::<sync_core::rules::selection::NewAppeal>(data);
    decode::<crate::selection::GrantRequest>(data);
    decode::<serde_json::Value>(data);
}
