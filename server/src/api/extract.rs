//! Request extractors that fail with the API's JSON error instead of axum's plain-text
//! rejections.
//!
//! - [`JsonBody`] checks `Content-Type` (415), reads the body under the router's limit (413),
//!   and parses it with the failing field's path: syntax errors are 400 `malformed_json`, wrong
//!   or missing fields 422 `invalid_body` with `details.path`. Messages describe the problem
//!   (missing field, unknown field, wrong type) but never echo the value sent, which may be a
//!   CPF or a name.
//! - [`OptionalJsonBody`] is the same for a body that may be empty.
//! - [`QueryParams`] maps a bad query string to 400 `invalid_query`.
//! - [`CsvBody`] accepts `text/csv` for the registry import.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::error::AppError;
use crate::server::AppState;

/// A JSON request body.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

/// A JSON request body that may be absent (empty).
#[derive(Debug, Clone)]
pub struct OptionalJsonBody<T>(pub Option<T>);

/// Query-string parameters.
#[derive(Debug, Clone)]
pub struct QueryParams<T>(pub T);

/// A CSV request body (`text/csv`).
#[derive(Debug, Clone)]
pub struct CsvBody(pub Bytes);

fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
}

pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|ct| {
        ct == "application/json" || (ct.starts_with("application/") && ct.ends_with("+json"))
    })
}

/// Reads the whole body under the route's `DefaultBodyLimit`.
pub async fn read_body(req: Request, state: &AppState, limit: usize) -> Result<Bytes, AppError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::payload_too_large(limit)
        } else {
            AppError::bad_request(
                "body_unreadable",
                "Não foi possível ler o corpo da requisição.",
            )
        }
    })
}

/// Text of a serde_json error without its position and without any echoed value.
fn describe(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => text.as_str(),
    };
    let ticked = || text.split('`').nth(1).unwrap_or_default().to_owned();
    if text.starts_with("missing field") {
        format!("campo obrigatório ausente: {}", ticked())
    } else if text.starts_with("unknown field") {
        format!("campo desconhecido: {}", ticked())
    } else if text.starts_with("invalid type") {
        String::from("tipo de valor inválido")
    } else if text.starts_with("unknown variant") {
        String::from("valor não reconhecido")
    } else if text.starts_with("invalid length") {
        String::from("quantidade de elementos inválida")
    } else if ["CPF inválido", "número da CNH inválido", "RENAVAM inválido"]
        .iter()
        .any(|p| text.starts_with(p))
    {
        // sync-core's document errors give the reason, never the number.
        text.to_owned()
    } else if text.starts_with("placa inválida") {
        String::from("placa inválida (formatos aceitos: ABC-1234 ou ABC1C34)")
    } else {
        String::from("valor inválido")
    }
}

/// Parses JSON, mapping errors as the module doc says.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    let malformed = |line: usize, column: usize| {
        AppError::bad_request(
            "malformed_json",
            format!("JSON malformado (linha {line}, coluna {column})."),
        )
        .with_details(json!({ "line": line, "column": column }))
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = parsed.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = (inner.line(), inner.column());
        match inner.classify() {
            serde_json::error::Category::Data => {
                let what = describe(&inner);
                let message = if path.is_empty() || path == "." {
                    format!("Corpo JSON inválido: {what}.")
                } else {
                    format!("Corpo JSON inválido em `{path}`: {what}.")
                };
                AppError::unprocessable("invalid_body", message).with_details(json!({
                    "path": path, "line": line, "column": column,
                }))
            }
            _ => malformed(line, column),
        }
    })?;
    // Anything but whitespace after the value is malformed too.
    de.end().map_err(|e| malformed(e.line(), e.column()))?;
    Ok(value)
}

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        if !is_json(req.headers()) {
            return Err(AppError::unsupported_media_type("application/json"));
        }
        let bytes = read_body(req, state, state.config().body_limit).await?;
        parse_json(&bytes).map(JsonBody)
    }
}

impl<T: DeserializeOwned> FromRequest<AppState> for OptionalJsonBody<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        let typed = req.headers().contains_key(CONTENT_TYPE);
        if typed && !is_json(req.headers()) {
            return Err(AppError::unsupported_media_type("application/json"));
        }
        let bytes = read_body(req, state, state.config().body_limit).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJsonBody(None));
        }
        if !typed {
            return Err(AppError::unsupported_media_type("application/json"));
        }
        parse_json(&bytes).map(|v| OptionalJsonBody(Some(v)))
    }
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| QueryParams(v))
            .map_err(|_| {
                AppError::bad_request(
                    "invalid_query",
                    "Parâmetros de consulta ausentes ou inválidos; veja /openapi.json.",
                )
            })
    }
}

impl FromRequest<AppState> for CsvBody {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        let ok = content_type(req.headers())
            .is_some_and(|ct| ct == "text/csv" || ct == "application/csv");
        if !ok {
            return Err(AppError::unsupported_media_type("text/csv"));
        }
        read_body(req, state, state.config().body_limit)
            .await
            .map(CsvBody)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        name: String,
        cpf: sync_core::domain::Cpf,
    }

    #[test]
    fn errors_name_the_field_not_the_value() {
        let e = parse_json::<T>(br#"{"name": "Fulano", "cpf": "123"}"#).unwrap_err();
        assert_eq!(e.code, "invalid_body");
        assert!(e.message.contains("`cpf`"), "{}", e.message);
        assert!(e.message.contains("CPF inválido"), "{}", e.message);
        assert!(!e.message.contains("123"), "{}", e.message);

        let e = parse_json::<T>(br#"{"name": 7, "cpf": "11144477735"}"#).unwrap_err();
        assert!(!e.message.contains('7'), "{}", e.message);
        let e = parse_json::<T>(br#"{"cpf": "11144477735"}"#).unwrap_err();
        assert!(
            e.message.contains("campo obrigatório ausente: name"),
            "{}",
            e.message
        );
        let e = parse_json::<T>(br#"{"name": "x", "cpf": "11144477735", "z": 1}"#).unwrap_err();
        assert!(e.message.contains("campo desconhecido: z"), "{}", e.message);

        let e = parse_json::<T>(b"{\"name\": ").unwrap_err();
        assert_eq!(
            (e.status, e.code.as_ref()),
            (StatusCode::BAD_REQUEST, "malformed_json")
        );
        let e = parse_json::<T>(br#"{"name": "x", "cpf": "11144477735"} trailing"#).unwrap_err();
        assert_eq!(e.code, "malformed_json");
    }
}
