//! `/escritorio/dispositivos` — the devices, for the administrator: who uses each, when it was
//! registered, when its last record arrived (a silent tablet may be lost), whether it is revoked; revoking one (after a confirmation page); and the
//! enrolment code that a new tablet exchanges for its registration, so nobody types a device id.
//!
//! Revoking is the API's `POST /v1/devices/{id}/revoke` (`Store::revoke_device`): the device's
//! refresh tokens are revoked in the same transaction and every request of the device (API or
//! a browser session on it) is refused from the next one on; its records already synced stay.
//!
//! "Gerar código de cadastro" makes a one-time enrolment code for a user
//! ([`crate::auth::admin::issue_code`]) and shows it once, as text and as a QR code drawn as
//! inline SVG (the pages' CSP forbids scripts and foreign images; an `<svg>` in the page is
//! neither). The app reads it and calls `POST /v1/devices/enrol`, then logs the user in.
//!
//! Element ids: `tabela-dispositivos`, rows `dispositivo-{id}`, links `revogar-{id}`; the
//! confirmation page `confirmar-revogacao`, `cancelar-revogacao`; the enrolment form
//! `codigo-usuario`, `gerar-codigo-cadastro`; the code's page `codigo-cadastro`, `qr-cadastro`,
//! `validade-codigo`.

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::layout::{error_box, local_time, page, post_form, see_other, select_field, submit};
use super::session::{AdminUser, Posted};
use crate::auth::admin;
use crate::server::AppState;
use crate::store::{CodePurpose, DeviceRow, UserRow};

const PATH: &str = "/escritorio/dispositivos";
const TITLE: &str = "Dispositivos";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(PATH, get(list))
        .route(
            "/escritorio/dispositivos/{id}/revogar",
            get(confirm_revoke).post(revoke),
        )
        .route("/escritorio/dispositivos/codigo", post(enrolment_code))
}

fn user_label(users: &HashMap<&str, &UserRow>, id: &str) -> String {
    users.get(id).map_or_else(
        || id.to_owned(),
        |u| format!("{} ({})", u.display_name, u.username),
    )
}

async fn render(
    state: &AppState,
    user: &AdminUser,
    error: Option<&str>,
) -> Result<Markup, PageError> {
    let devices = state.store().list_devices().await?;
    let users = state.store().list_users().await?;
    let by_id: HashMap<&str, &UserRow> = users.iter().map(|u| (u.id.as_str(), u)).collect();
    let last: HashMap<String, chrono::DateTime<chrono::Utc>> = state
        .store()
        .devices_last_received()
        .await?
        .into_iter()
        .collect();
    let active: Vec<(String, String)> = users
        .iter()
        .filter(|u| u.active)
        .map(|u| (u.id.clone(), format!("{} ({})", u.display_name, u.username)))
        .collect();
    let body = html! {
        @if let Some(e) = error { (error_box("erro-dispositivos", e)) }
        p {
            "Os aparelhos e computadores que entram no sistema, cada um de um usuário. Revogar "
            "um aparelho perdido o tira do sistema na hora; o que ele já sincronizou fica."
        }
        table #tabela-dispositivos {
            caption { "Dispositivos" }
            thead { tr {
                th scope="col" { "Usuário" }
                th scope="col" { "Nome" }
                th scope="col" { "Cadastrado em" }
                th scope="col" { "Último registro recebido" }
                th scope="col" { "Situação" }
                th scope="col" { "Ação" }
            } }
            tbody {
                @for d in &devices {
                    tr id=(format!("dispositivo-{}", d.id)) {
                        td { (user_label(&by_id, &d.user_id)) }
                        th scope="row" { (d.label) br; small .dica { "id " code { (d.id) } } }
                        td { (local_time(d.registered_at)) }
                        td {
                            @match last.get(&d.id) {
                                Some(at) => { (local_time(*at)) }
                                None => { "nenhum" }
                            }
                        }
                        td {
                            @match d.revoked_at {
                                Some(at) => { strong { "Revogado" } " em " (local_time(at)) }
                                None => { "Ativo" }
                            }
                        }
                        td {
                            @if d.revoked_at.is_none() {
                                a id=(format!("revogar-{}", d.id)) href=(format!("{PATH}/{}/revogar", d.id)) {
                                    "Revogar"
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Cadastrar um aparelho" }
        p {
            "Gere um código de cadastro para o usuário do aparelho: no aplicativo, em "
            "«Cadastrar aparelho», leia o QR code ou digite o código. O código vale uma vez, por "
            (crate::limits::ENROLMENT_CODE_TTL_MINUTES) " minutos."
        }
        (post_form(user, &format!("{PATH}/codigo"), "form-codigo-cadastro", html! {
            (select_field("codigo-usuario", "usuario", "Usuário do aparelho", &active, ""))
            (submit("gerar-codigo-cadastro", "Gerar código de cadastro"))
        }))
    };
    Ok(page(Some(user), TITLE, user.take_flash().await, body))
}

async fn list(State(state): State<AppState>, user: AdminUser) -> Result<Markup, PageError> {
    render(&state, &user, None).await
}

async fn device_or_404(state: &AppState, id: &str) -> Result<DeviceRow, PageError> {
    state
        .store()
        .device(id.to_owned())
        .await?
        .ok_or_else(|| PageError::not_found("Este dispositivo não existe."))
}

async fn confirm_revoke(
    State(state): State<AppState>,
    Path(id): Path<String>,
    user: AdminUser,
) -> Result<Markup, PageError> {
    let device = device_or_404(&state, &id).await?;
    let owner = state.store().list_users().await?;
    let by_id: HashMap<&str, &UserRow> = owner.iter().map(|u| (u.id.as_str(), u)).collect();
    let body = html! {
        @if device.revoked_at.is_some() {
            p { "Este dispositivo já está revogado." }
        } @else {
            p {
                "Revogar " strong { (device.label) } " de " (user_label(&by_id, &device.user_id)) "? "
                "O aparelho sai do sistema na hora: não entra mais, não sincroniza mais, e as "
                "sessões abertas nele terminam. Os registros que ele já sincronizou ficam. "
                "Não é possível desfazer: para voltar a usá-lo, cadastre-o de novo."
            }
            (post_form(&user, &format!("{PATH}/{}/revogar", device.id), "form-revogar", html! {
                (submit("confirmar-revogacao", "Revogar o dispositivo"))
            }))
        }
        p { a #cancelar-revogacao href=(PATH) { "Voltar sem revogar" } }
    };
    Ok(page(Some(&user), "Revogar dispositivo", None, body))
}

#[derive(Debug, Deserialize)]
struct EmptyForm {}

async fn revoke(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, .. }: Posted<EmptyForm, AdminUser>,
) -> Result<Response, PageError> {
    device_or_404(&state, &id).await?;
    let now = state.clock().now();
    let row = state
        .store()
        .revoke_device(id, user.auth.actor(now))
        .await?;
    tracing::info!(device = %row.id, "dispositivo revogado pela página");
    user.flash(
        true,
        format!(
            "Dispositivo «{}» revogado: não entra mais no sistema.",
            row.label
        ),
    )
    .await;
    Ok(see_other(PATH))
}

#[derive(Debug, Deserialize)]
struct CodeForm {
    #[serde(default)]
    usuario: String,
}

/// The QR code of `text` as an inline SVG: one path of unit squares, with the quiet zone the
/// standard asks (4 modules). `None` only if the text cannot be encoded (it always fits: a code
/// is 39 characters).
pub(crate) fn qr_svg(text: &str, label: &str) -> Option<Markup> {
    let code = qrcode::QrCode::new(text.as_bytes()).ok()?;
    let width = code.width();
    let quiet = 4;
    let size = width + 2 * quiet;
    let mut path = String::new();
    for (i, color) in code.to_colors().iter().enumerate() {
        if *color == qrcode::Color::Dark {
            let (x, y) = (i % width + quiet, i / width + quiet);
            path.push_str(&format!("M{x} {y}h1v1h-1z"));
        }
    }
    let view_box = format!("0 0 {size} {size}");
    Some(html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(view_box) role="img" aria-label=(label)
            shape-rendering="crispEdges" {
            rect width=(size) height=(size) fill="#fff" {}
            path fill="#000" d=(path) {}
        }
    })
}

async fn enrolment_code(
    State(state): State<AppState>,
    Posted { user, form }: Posted<CodeForm, AdminUser>,
) -> Result<Response, PageError> {
    let issued = match admin::issue_code(
        &state,
        &user.auth,
        form.usuario.trim(),
        CodePurpose::DeviceEnrolment,
    )
    .await
    {
        Ok(i) => i,
        Err(e) if e.status.is_client_error() && e.status != StatusCode::UNAUTHORIZED => {
            let markup = render(&state, &user, Some(&e.message)).await?;
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, markup).into_response());
        }
        Err(e) => return Err(e.into()),
    };
    let qr = qr_svg(&issued.code, "QR code do código de cadastro");
    let body = html! {
        p {
            "Código de cadastro de um aparelho para " strong { (issued.user.display_name) }
            " (usuário " (issued.user.username) "). No aplicativo, em «Cadastrar aparelho», "
            "leia o QR code ou digite o código; depois o usuário entra com a senha dele."
        }
        @if let Some(svg) = qr {
            div #qr-cadastro .qr { (svg) }
        }
        p #codigo-cadastro .codigo { (issued.code) }
        p {
            "Vale uma vez, até " span #validade-codigo { (local_time(issued.expires_at)) } ". "
            "Este é o único momento em que ele aparece: gerar outro para o mesmo usuário "
            "invalida este."
        }
        p { a #voltar-dispositivos href=(PATH) { "Voltar aos dispositivos" } }
    };
    Ok(page(Some(&user), "Código de cadastro", None, body).into_response())
}
