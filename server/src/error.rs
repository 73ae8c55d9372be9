//! One error type for the whole API, with one JSON shape:
//! `{"error": {"code": "...", "message": "... (em português)", "details": ...}}`.
//!
//! Flow: handlers and extractors return [`AppError`]; its `IntoResponse` writes the status, the
//! body and headers such as `Retry-After`. What does not pass through a handler — unknown
//! routes, wrong methods, bodies over a limit rejected by a layer, timeouts, panics — is turned
//! into the same shape by [`json_error_for_status`], used by the router's fallbacks and by a
//! response mapper that rewrites any non-JSON error response (see `api::ensure_json_errors`).
//!
//! `code` is a stable English identifier for programs; `message` is for people and is in
//! Portuguese. Neither carries internal detail (SQL, paths) or personal data (CPF, names):
//! internal errors are logged with their cause and answered with a generic 500. The one
//! exception by design is a legal refusal of an office change ([`AppError::refused`]): its
//! findings are the law's reasons as `sync_core::rules::office` writes them, addressed to the
//! office staff who administer that registry (they may name a person, never a CPF); they are
//! never logged (logs carry only the rule ids).

use std::borrow::Cow;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sync_core::rules::office::Refusal;

use crate::service::ServiceError;
use crate::store::StoreError;

/// The JSON body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    pub error: ErrorObject,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    /// Stable identifier, e.g. `token_expired`, `refused_by_law`, `csv_invalid`.
    pub code: String,
    /// For people, in Brazilian Portuguese.
    pub message: String,
    /// Structured detail: the findings of a legal refusal, the bad rows of a CSV, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// An error answered to the client.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct AppError {
    pub status: StatusCode,
    pub code: Cow<'static, str>,
    pub message: String,
    pub details: Option<Value>,
    /// Seconds for a `Retry-After` header (429).
    pub retry_after: Option<u64>,
}

impl AppError {
    /// Every `code` the server answers, sorted. Codes are plain strings chosen where the error
    /// is made, so this list is what programs outside the server (the mobile app, the error
    /// table of `docs/mobile.md`) can rely on. `tests/mobile_error_table.rs` keeps it true:
    /// a code written at a call site but missing here, a code here written nowhere, or a code
    /// without its row in `docs/mobile.md` fails.
    pub const CODES: &'static [&'static str] = &[
        "already_at_stand",
        "already_exists",
        "already_notified",
        "already_paid",
        "amount_invalid",
        "author_mismatch",
        "bad_credentials",
        "bad_request",
        "body_unreadable",
        "code_expired",
        "code_unknown",
        "code_used",
        "cpf_taken",
        "csv_export",
        "csv_invalid",
        "device_id_collision",
        "device_key_taken",
        "device_mismatch",
        "device_not_active",
        "device_not_yours",
        "device_revoked",
        "device_unknown",
        "disabled_rule",
        "duplicate_decided",
        "duplicate_record",
        "edital_busy",
        "edital_exists",
        "empty_file",
        "event_refused",
        "fine_amount_unavailable",
        "fine_amount_unknown",
        "forbidden",
        "foreign_actor",
        "hash_mismatch",
        "id_mismatch",
        "internal",
        "invalid_amount",
        "invalid_body",
        "invalid_cnh",
        "invalid_cpf",
        "invalid_date",
        "invalid_device_key",
        "invalid_event",
        "invalid_field",
        "invalid_form",
        "invalid_hash",
        "invalid_id",
        "invalid_label",
        "invalid_licence_number",
        "invalid_name",
        "invalid_observed_persons",
        "invalid_penalty",
        "invalid_period",
        "invalid_places",
        "invalid_plate",
        "invalid_query",
        "invalid_reason",
        "invalid_record_id",
        "invalid_request",
        "invalid_role",
        "invalid_size",
        "invalid_text",
        "invalid_username",
        "invalid_year",
        "ipca_missing",
        "law_parameters_invalid",
        "malformed_json",
        "method_not_allowed",
        "metrics_forbidden",
        "missing_date",
        "missing_fine",
        "missing_licence",
        "missing_permit",
        "not_an_infraction",
        "not_charged",
        "not_found",
        "nothing_to_notify",
        "notification_exists",
        "notification_outdated",
        "notification_required",
        "number_not_leased",
        "number_taken",
        "observed_persons_erased",
        "outside_stand",
        "own_account",
        "password_changed",
        "payload_too_large",
        "permit_mismatch",
        "permit_number_required",
        "permit_revoked",
        "person_not_found",
        "plate_taken",
        "protocol_unsupported",
        "quota_exceeded",
        "record_not_finished",
        "record_without_permit",
        "refresh_expired",
        "refresh_invalid",
        "refresh_reused",
        "refused_by_law",
        "registry_busy",
        "registry_integrity",
        "registry_unavailable",
        "repealed_rule",
        "role_forbidden",
        "route_not_found",
        "same_password",
        "seal_invalid",
        "sealed_field",
        "server_busy",
        "session_revoked",
        "snapshot_required",
        "stand_not_allowed",
        "stand_required",
        "text_too_long",
        "timeout",
        "token_expired",
        "token_invalid",
        "token_missing",
        "too_large",
        "too_many_attempts",
        "too_many_editais",
        "too_many_hashes",
        "too_many_observations",
        "too_many_requests",
        "unavailable",
        "unknown_permit",
        "unknown_rule",
        "unknown_stand",
        "unsupported_media_type",
        "user_inactive",
        "vehicle_in_use",
        "vehicle_not_used",
        "vehicle_required",
        "weak_password",
        "wrong_password",
    ];

    /// Any status, code and message.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    /// Adds structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 400.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401.
    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 403: authenticated, but this role may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 for a thing that does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 409.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 410.
    pub fn gone(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::GONE, code, message)
    }

    /// 413.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!(
                "O corpo da requisição excede o limite de {} bytes.",
                limit_text(limit)
            ),
        )
        .with_details(serde_json::json!({ "limit_bytes": limit }))
    }

    /// 415.
    pub fn unsupported_media_type(expected: &str) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("Tipo de conteúdo não suportado: envie {expected}."),
        )
    }

    /// 422 for input that is well-formed but not acceptable.
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    /// 422: the law forbids the change. Details carry every finding with its rule id, citation
    /// and Portuguese message.
    pub fn refused(refusal: &Refusal) -> Self {
        tracing::info!(rules = ?refusal.rule_ids(), "alteração recusada pela lei");
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "refused_by_law",
            refusal.to_string(),
        )
        .with_details(serde_json::json!({ "findings": refusal.findings }))
    }

    /// 429 with `Retry-After`: too many failed logins.
    pub fn too_many_requests(retry_after_seconds: u64) -> Self {
        Self::retry_later(
            "too_many_attempts",
            format!(
                "Muitas tentativas de login sem sucesso: tente de novo em {retry_after_seconds} s."
            ),
            retry_after_seconds,
        )
    }

    /// 429 with `Retry-After` and `details.retry_after_seconds`, any code and message.
    pub fn retry_later(
        code: &'static str,
        message: impl Into<String>,
        retry_after_seconds: u64,
    ) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, code, message)
            .with_details(serde_json::json!({ "retry_after_seconds": retry_after_seconds }));
        e.retry_after = Some(retry_after_seconds);
        e
    }

    /// 500: logs the cause, answers nothing about it.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "erro interno");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Erro interno do servidor; a operação não foi concluída.",
        )
    }

    /// The body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorObject {
                code: self.code.to_string(),
                message: self.message.clone(),
                details: self.details.clone(),
            },
        }
    }
}

fn limit_text(limit: usize) -> String {
    let digits = limit.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let retry = self.retry_after;
        let mut res = (self.status, Json(self.body())).into_response();
        if let Some(secs) = retry
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { what } => Self::not_found(format!("{what} não encontrado(a).")),
            StoreError::Duplicate { what } => {
                Self::conflict("already_exists", format!("{what} já existe."))
            }
            StoreError::DeviceIdCollision { id, existing } => Self::conflict(
                "device_id_collision",
                format!(
                    "O identificador {id} representaria, na sincronização, o mesmo aparelho que o \
                     dispositivo {existing} já registrado: escolha outro identificador."
                ),
            )
            .with_details(serde_json::json!({ "id": id, "existing": existing })),
            StoreError::DeviceNotActive => Self::conflict(
                "device_not_active",
                "O dispositivo foi revogado: não recebe mais números nem sessões.",
            ),
            StoreError::QuotaExceeded {
                message,
                retry_after,
            } => {
                let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "quota_exceeded", message);
                e.retry_after = retry_after;
                e
            }
            other => Self::internal(&other),
        }
    }
}

impl From<ServiceError> for AppError {
    /// The one mapping from what a service answers to what the API and pages answer.
    fn from(e: ServiceError) -> Self {
        let with = |e: AppError, details: Option<Value>| match details {
            Some(d) => e.with_details(d),
            None => e,
        };
        match e {
            ServiceError::Invalid { code, message } => Self::bad_request(code, message),
            ServiceError::Forbidden { role, allowed } => {
                let message = ServiceError::Forbidden { role, allowed }.to_string();
                Self::forbidden(message)
                    .with_details(serde_json::json!({ "role": role, "allowed": allowed }))
            }
            ServiceError::NotPermitted(message) => Self::forbidden(message),
            ServiceError::NotFound(message) => Self::not_found(message),
            ServiceError::Conflict {
                code,
                message,
                details,
            } => with(Self::conflict(code, message), details),
            ServiceError::Unprocessable {
                code,
                message,
                details,
            } => with(Self::unprocessable(code, message), details),
            ServiceError::Refused(refusal) => Self::refused(&refusal),
            ServiceError::Store(e) => e.into(),
            ServiceError::Internal(cause) => Self::internal(&cause),
        }
    }
}

impl From<crate::registry::EditError> for AppError {
    fn from(e: crate::registry::EditError) -> Self {
        ServiceError::from(e).into()
    }
}

/// The JSON error for a bare status produced outside a handler (404 route, 405, 413, 408, 500).
pub fn json_error_for_status(status: StatusCode) -> AppError {
    match status {
        StatusCode::NOT_FOUND => AppError::new(
            status,
            "route_not_found",
            "Rota inexistente. A documentação da API está em /openapi.json.",
        ),
        StatusCode::METHOD_NOT_ALLOWED => AppError::new(
            status,
            "method_not_allowed",
            "Método HTTP não permitido nesta rota.",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => AppError::new(
            status,
            "payload_too_large",
            "O corpo da requisição excede o limite permitido.",
        ),
        StatusCode::REQUEST_TIMEOUT => AppError::new(
            status,
            "timeout",
            "A requisição demorou demais e foi interrompida.",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => AppError::new(
            status,
            "unsupported_media_type",
            "Tipo de conteúdo não suportado.",
        ),
        s if s.is_server_error() => AppError::new(
            s,
            "internal",
            "Erro interno do servidor; a operação não foi concluída.",
        ),
        s => AppError::new(s, "bad_request", "Requisição inválida."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_written_the_brazilian_way() {
        assert_eq!(limit_text(16_777_216), "16.777.216");
        assert_eq!(limit_text(999), "999");
    }
}
