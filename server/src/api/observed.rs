//! Observed persons of a record (witnesses, drivers the registry does not know): their
//! identity and contact, kept apart from the record's Automerge history (`store::observed`).
//!
//! - `PUT /v1/records/{id}/observed-persons`: the record's author, on the device that wrote it,
//!   sends the whole set (`sync_core::sync::ObservedPersonsUpload`); checked with
//!   `sync_core::sync::check_upload` against the stored record (only ids it names, each once,
//!   texts within `sync_core::limits`), body under [`OBSERVED_PERSONS_BODY_LIMIT`]. Repeating
//!   it stores nothing new; after the office erased them it is 409 `observed_persons_erased`.
//! - `GET /v1/records/{id}/observed-persons`: the office and admins.
//! - `DELETE /v1/records/{id}/observed-persons`: the office erases them once the record is
//!   finished ([`FINISHED`]); an audit row stays, without the personal data.
//!
//! Nobody else reads them: not other officers, not coordinators, not the author (who holds
//! them on the device), and they are in no sync response or registry feed.

use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::records::{PersonRef, RecordView, Status};
use sync_core::sync::{ObservedPersonsUpload, check_upload, device_uuid};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{is_json, parse_json, read_body};
use super::openapi::named_schema;
use super::records::{RECORD_DECIDERS, RECORD_READERS};
use crate::auth::{Auth, Role};
use crate::error::{AppError, ErrorBody};
use crate::limits::OBSERVED_PERSONS_BODY_LIMIT;
use crate::server::AppState;
use crate::store::observed::{Erasure, ObservedPersons, PutObserved, StoredPerson};
use crate::store::records::view_of;

/// Who sends observed persons: the authors of records.
pub const OBSERVED_UPLOADERS: &[Role] = &[Role::Officer, Role::Coordinator];

/// Statuses in which a record's case has ended and its witnesses may be erased: annulled,
/// archived, or merged into another record (whose own witnesses stay). A decided penalty may
/// still be appealed or taken to court, where the witnesses are needed; the office archives
/// the record when the case is over.
pub const FINISHED: &[Status] = &[
    Status::Annulled,
    Status::Archived,
    Status::MergedAsDuplicate,
];

/// The answer to an upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ObservedPersonsReceipt {
    pub record_id: String,
    /// Persons stored for the record.
    pub persons: u64,
    /// False when the server already held this very set.
    pub changed: bool,
}

/// Stand-ins naming schemars schemas (see `openapi::doc`).
#[derive(Debug)]
pub struct ObservedPersonsUploadDoc;

named_schema!(
    ObservedPersonsUploadDoc => "ObservedPersonsUpload",
    ObservedPersonsReceipt => "ObservedPersonsReceipt",
    ObservedPersons => "ObservedPersons",
    Erasure => "Erasure",
);

async fn record_view(state: &AppState, id: &str) -> Result<RecordView, AppError> {
    let doc = state
        .store()
        .record(id.to_owned())
        .await?
        .ok_or_else(|| AppError::not_found("Registro não encontrado."))?;
    view_of(&doc).map_err(|e| AppError::internal(&e))
}

/// The record's author, on the device that wrote it.
fn require_author(auth: &Auth, view: &RecordView) -> Result<(), AppError> {
    auth.require(OBSERVED_UPLOADERS)?;
    if view.author.user_id != auth.user_id || view.author.device_id != device_uuid(&auth.device_id)
    {
        return Err(AppError::forbidden(
            "Só o autor do registro, no aparelho em que o escreveu, envia as testemunhas dele.",
        ));
    }
    Ok(())
}

/// What the person is in the record, in Portuguese.
pub fn role_of(view: &RecordView, person_id: &str) -> String {
    let is = |p: &PersonRef| matches!(p, PersonRef::Observed(id) if id == person_id);
    let mut roles = Vec::new();
    if is(&view.driver.person) {
        roles.push("condutor (fora do cadastro)");
    }
    if view.witnesses.iter().any(|w| is(&w.person)) {
        roles.push("testemunha");
    }
    if view.charged.iter().any(is) && !is(&view.driver.person) {
        roles.push("responde pelo registro");
    }
    if roles.is_empty() {
        roles.push("pessoa do registro");
    }
    roles.join(", ")
}

pub fn documents(p: &StoredPerson) -> String {
    let mut out = Vec::new();
    if let Some(c) = &p.cpf {
        out.push(format!("CPF {c}"));
    }
    if let Some(c) = &p.cnh {
        out.push(format!("CNH {c}"));
    }
    if let Some(d) = &p.document {
        out.push(format!("documento {d}"));
    }
    if out.is_empty() {
        String::from("—")
    } else {
        out.join("; ")
    }
}

/// One line per person for the case file: name, role, documents, phone, address; or the
/// erasure, when it happened.
pub fn contact_lines(view: &RecordView, held: &ObservedPersons) -> Vec<String> {
    if let Some(e) = &held.erasure {
        return vec![format!(
            "Dados pessoais das testemunhas apagados em {}, quando o caso terminou.",
            crate::office::local(e.erased_at)
        )];
    }
    held.persons
        .iter()
        .map(|p| {
            let mut line = format!(
                "{} — {} — {}",
                p.name.as_deref().unwrap_or("(sem nome)"),
                role_of(view, &p.person_id),
                documents(p)
            );
            if let Some(t) = &p.phone {
                line.push_str(&format!("; telefone {t}"));
            }
            if let Some(a) = &p.address {
                line.push_str(&format!("; endereço {a}"));
            }
            line
        })
        .collect()
}

/// What the server holds of a record's observed persons (office and admins).
pub async fn read(state: &AppState, auth: &Auth, id: &str) -> Result<ObservedPersons, AppError> {
    auth.require(RECORD_READERS)?;
    record_view(state, id).await?;
    Ok(state.store().observed_persons(id.to_owned()).await?)
}

/// Erases a finished record's observed persons (office). Idempotent.
pub async fn erase(state: &AppState, auth: &Auth, id: &str) -> Result<Erasure, AppError> {
    auth.require(RECORD_DECIDERS)?;
    let view = record_view(state, id).await?;
    if !FINISHED.contains(&view.status) {
        return Err(AppError::conflict(
            "record_not_finished",
            format!(
                "Os dados das testemunhas só podem ser apagados quando o registro está anulado, \
                 arquivado ou juntado a outro; este está «{}».",
                view.status.label_pt()
            ),
        ));
    }
    let now = state.clock().now();
    Ok(state
        .store()
        .erase_observed_persons(id.to_owned(), auth.actor(now))
        .await?)
}

/// The author's device sends the record's observed persons.
#[utoipa::path(
    put,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "O autor envia a identificação e o contato das testemunhas do registro (fora do histórico)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ObservedPersonsUploadDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "Guardadas (substituem as anteriores)", body = ObservedPersonsReceipt),
        (status = 403, description = "Não é o autor do registro, no aparelho em que o escreveu", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 409, description = "A Unidade já apagou as testemunhas deste registro; nada foi guardado", body = ErrorBody),
        (status = 413, description = "Corpo acima de 128 KiB", body = ErrorBody),
        (status = 422, description = "Pessoa que o registro não nomeia, repetida ou texto acima do limite; nada foi guardado", body = ErrorBody),
    )
)]
async fn put_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    req: Request,
) -> Result<Json<ObservedPersonsReceipt>, AppError> {
    auth.require(OBSERVED_UPLOADERS)?;
    if !is_json(req.headers()) {
        return Err(AppError::unsupported_media_type("application/json"));
    }
    let bytes = read_body(req, &state, OBSERVED_PERSONS_BODY_LIMIT).await?;
    let upload: ObservedPersonsUpload = parse_json(&bytes)?;
    let view = record_view(&state, &id).await?;
    require_author(&auth, &view)?;
    let persons = check_upload(&view, upload)
        .map_err(|e| AppError::unprocessable("invalid_observed_persons", e.0))?;
    let now = state.clock().now();
    match state
        .store()
        .put_observed_persons(id.clone(), persons, auth.actor(now))
        .await?
    {
        PutObserved::Stored { persons, changed } => Ok(Json(ObservedPersonsReceipt {
            record_id: id,
            persons,
            changed,
        })),
        PutObserved::Erased(e) => Err(AppError::conflict(
            "observed_persons_erased",
            format!(
                "A Unidade de Transportes apagou as testemunhas deste registro em {}; elas não \
                 são mais recebidas.",
                crate::office::local(e.erased_at)
            ),
        )),
    }
}

/// The office reads a record's observed persons.
#[utoipa::path(
    get,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "Identificação e contato das testemunhas do registro (só a Unidade e a administração)",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "As pessoas, e o apagamento se houve", body = ObservedPersons),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
    )
)]
async fn get_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ObservedPersons>, AppError> {
    Ok(Json(read(&state, &auth, &id).await?))
}

/// The office erases a finished record's observed persons.
#[utoipa::path(
    delete,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "Apaga os dados pessoais das testemunhas de um registro encerrado (LGPD)",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "Apagados (ou já estavam); fica a linha de auditoria", body = Erasure),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 409, description = "O registro não está anulado, arquivado nem juntado a outro", body = ErrorBody),
    )
)]
async fn delete_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Erasure>), AppError> {
    Ok((StatusCode::OK, Json(erase(&state, &auth, &id).await?)))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_observed, get_observed, delete_observed))
        .layer(DefaultBodyLimit::max(OBSERVED_PERSONS_BODY_LIMIT))
}
