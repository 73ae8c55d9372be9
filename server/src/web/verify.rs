//! `GET /verificar/{code}` and `GET /verificar` (a form; `?codigo=` looks up): the public
//! check of a printed auto or notification of penalty, without login.
//!
//! Flow: each lookup first takes one unit of the client address's budget
//! ([`crate::limits::VERIFY_LOOKUPS_PER_ADDRESS_BURST`], then one every
//! [`crate::limits::VERIFY_LOOKUP_REPLENISH`]; over it 429 with `Retry-After`), then reads the
//! code with `VerificationCode::parse` and finds it in the store's verification codes. A
//! malformed code and an unknown one get the same page and status (404, "Código não
//! encontrado"), so the page tells nothing about which codes exist. A code found shows that the
//! paper is authentic, where its procedure stands now (`office::notices::public_state`) and
//! only what the paper itself shows: number, date, plate, permit, body, legal basis, decision
//! and, for a notification, the notified person's name — never a CPF or any other registry
//! data.
//!
//! | id | what |
//! |---|---|
//! | `form-verificar` (`verificar-codigo`, `verificar`) | the form |
//! | `verificacao-autentica`, `verificacao-situacao`, `verificacao-dados` | a paper found; `verificacao-substituida` when a later decision replaced a notification's |
//! | `verificacao-nao-encontrada` | an unknown or malformed code |
//! | `verificacao-limite` | the address's budget is spent |

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use documents::VerificationCode;
use maud::{Markup, html};
use sync_core::records::{EventKind, RecordView};

use super::PageError;
use super::layout::{date_br, local_time, page};
use crate::auth::throttle::ClientAddr;
use crate::office::notices::{current_decision_event, public_state};
use crate::server::AppState;
use crate::store::notifications::{CodeTarget, NotificationRow};
use crate::store::records::view_of;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/verificar", get(form))
        .route("/verificar/{code}", get(by_path))
}

const TITLE: &str = "Verificação de documento";

fn code_form() -> Markup {
    html! {
        form method="get" action="/verificar" id="form-verificar" {
            div .campo {
                label for="verificar-codigo" { "Código de verificação impresso no documento" }
                input type="text" id="verificar-codigo" name="codigo" required
                    autocomplete="off" placeholder="XXXX-XXXX-XXXX-XXXX";
            }
            button type="submit" id="verificar" { "Verificar" }
        }
    }
}

async fn form(
    State(state): State<AppState>,
    client: ClientAddr,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, PageError> {
    match q.get("codigo").map(|c| c.trim()).filter(|c| !c.is_empty()) {
        Some(code) => lookup(&state, client, code).await,
        None => Ok(page(
            None,
            TITLE,
            None,
            html! {
                p { "Confira se um auto de infração ou uma notificação de penalidade da Unidade de Transportes de Americana é autêntico: digite o código impresso junto ao QR code." }
                (code_form())
            },
        )
        .into_response()),
    }
}

async fn by_path(
    State(state): State<AppState>,
    client: ClientAddr,
    Path(code): Path<String>,
) -> Result<Response, PageError> {
    lookup(&state, client, &code).await
}

fn not_found() -> Response {
    let body = html! {
        p #verificacao-nao-encontrada .erro role="alert" { "Código não encontrado." }
        (code_form())
    };
    (StatusCode::NOT_FOUND, page(None, TITLE, None, body)).into_response()
}

fn throttled(retry_after: u64) -> Response {
    let body = html! {
        p #verificacao-limite .erro role="alert" {
            "Muitas consultas deste endereço: tente de novo em " (retry_after) " segundos."
        }
    };
    let mut res = (StatusCode::TOO_MANY_REQUESTS, page(None, TITLE, None, body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
        res.headers_mut().insert(RETRY_AFTER, v);
    }
    res
}

async fn lookup(state: &AppState, client: ClientAddr, raw: &str) -> Result<Response, PageError> {
    if let Err(retry_after) = state.verify_throttle().check(client) {
        return Ok(throttled(retry_after));
    }
    let Some(code) = VerificationCode::parse(raw) else {
        return Ok(not_found());
    };
    let Some(target) = state.store().verification_code(code.clone()).await? else {
        return Ok(not_found());
    };
    let record_id = match &target {
        CodeTarget::Auto { record_id } => record_id.clone(),
        CodeTarget::Notification(n) => n.record_id.clone(),
    };
    let Some(doc) = state.store().record(record_id).await? else {
        return Ok(not_found());
    };
    let view = view_of(&doc).map_err(|e| PageError::internal(&e))?;
    let body = match &target {
        CodeTarget::Auto { .. } => auto_page(&view, &code),
        CodeTarget::Notification(n) => notification_page(&view, n),
    };
    Ok(page(None, TITLE, None, body).into_response())
}

fn basis(view: &RecordView) -> Vec<String> {
    view.legal_basis
        .iter()
        .map(|b| b.citation.clone())
        .collect()
}

fn auto_page(view: &RecordView, code: &VerificationCode) -> Markup {
    html! {
        p #verificacao-autentica .aviso-ok role="status" {
            "Documento autêntico: " (view.kind.label_pt()) " registrado na Unidade de Transportes."
        }
        p { "Situação atual: " strong #verificacao-situacao { (public_state(view)) } }
        dl #verificacao-dados .dados {
            dt { "Número" } dd { (view.number.as_deref().unwrap_or("(sem número)")) }
            dt { "Data e hora" } dd { (local_time(view.occurred_at)) }
            dt { "Placa" } dd { (view.vehicle.as_ref().map_or("—", |v| v.plate.as_str())) }
            dt { "Alvará" } dd { (view.permit_number.as_deref().unwrap_or("—")) }
            dt { "Órgão" } dd { (view.issuing_body) }
            dt { "Fundamento legal" } dd { (basis(view).join("; ")) }
            dt { "Código" } dd { code { (code) } }
        }
    }
}

/// The date of the ciência registered for this notification, if any.
fn ciencia_of(view: &RecordView, number: &str) -> Option<chrono::NaiveDate> {
    view.events.iter().rev().find_map(|e| match &e.event {
        EventKind::Notified {
            on, notification, ..
        } if e.valid && notification.as_deref() == Some(number) => Some(*on),
        _ => None,
    })
}

fn notification_page(view: &RecordView, n: &NotificationRow) -> Markup {
    let c = &n.content;
    let ciencia = ciencia_of(view, &n.number);
    let superseded = current_decision_event(view).as_deref() != Some(n.decision_event_id.as_str());
    html! {
        p #verificacao-autentica .aviso-ok role="status" {
            "Documento autêntico: notificação de penalidade emitida pela Unidade de Transportes."
        }
        p {
            "Situação atual: " strong #verificacao-situacao { (public_state(view)) }
            @if let Some(d) = ciencia { " Ciência desta notificação em " (date_br(d)) "." }
        }
        @if superseded {
            p #verificacao-substituida .alerta {
                "Uma decisão posterior (reconsideração, recurso ou anulação) substituiu a decisão desta notificação."
            }
        }
        dl #verificacao-dados .dados {
            dt { "Número" } dd { (c.number) }
            dt { "Data" } dd { (local_time(c.issued_at)) }
            dt { "Notificado" } dd { (c.addressee.name) }
            @for a in &c.autos {
                dt { "Auto" } dd { (a.number) " de " (local_time(a.occurred_at)) }
                dt { "Placa" } dd { (a.plate.as_deref().unwrap_or("—")) }
                dt { "Fundamento legal" } dd {
                    (a.legal_basis.iter().map(|b| b.citation.as_str()).collect::<Vec<_>>().join("; "))
                }
            }
            dt { "Alvará" } dd { (view.permit_number.as_deref().unwrap_or("—")) }
            dt { "Decisão" } dd { (c.decision.penalty) " (" (c.decision.citation) "), em " (date_br(c.decision.decided_on)) }
            dt { "Órgão" } dd { (c.authority) }
            dt { "Código" } dd { code { (n.code) } }
        }
    }
}
