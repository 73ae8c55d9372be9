//! `GET /escritorio/duplicatas`: groups of records that look like the same occurrence (same
//! plate, other device, close in time and place: `crate::office::duplicates` has the thresholds
//! and why) and that the office has not settled yet. For each group the office picks the record
//! that stays and merges the others into it, or keeps them all apart; either way nothing is
//! deleted and the group is not proposed again.
//!
//! Element ids: `grupos-duplicatas`; per group (n from 1) the table `grupo-{n}` with a link
//! `abrir-{record id}` per record, the radio `manter-{n}-{record id}` (label "Manter …"), the
//! buttons `juntar-grupo-{n}` and `separar-grupo-{n}`; `sem-duplicatas` when there is nothing
//! to settle. Above each table, `comparar-grupo-{n}` shows the records side by side — time,
//! author, position with its map link and distance to the stand, facts, photo thumbnails
//! (`comparar-{record id}`, `miniatura-{record id}-{k}`; `web::evidence`).

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::inbox::kind_label;
use super::layout::{error_box, local_time, page, post_form, see_other};
use super::session::{OfficeUser, Posted, WebUser};
use crate::error::AppError;
use crate::office;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/duplicatas", get(show))
        .route("/escritorio/duplicatas/juntar", post(merge))
        .route("/escritorio/duplicatas/separar", post(keep_apart))
}

/// `?pagina=N`: the page of plates (1 = the newest occurrences).
#[derive(Debug, Default, Deserialize)]
struct PageQuery {
    #[serde(default)]
    pagina: Option<u32>,
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<PageQuery>,
) -> Result<Markup, PageError> {
    render(&state, &user, None, q.pagina.unwrap_or(1).max(1)).await
}

async fn render(
    state: &AppState,
    user: &WebUser,
    error: Option<String>,
    page_no: u32,
) -> Result<Markup, PageError> {
    let flash = if error.is_none() {
        user.take_flash().await
    } else {
        None
    };
    let per_page = crate::limits::DUPLICATE_PLATES_PER_PAGE;
    let found = office::duplicate_groups(
        state.services(),
        &user.auth,
        office::DuplicatesQuery {
            offset: Some((page_no - 1).saturating_mul(per_page)),
            limit: Some(per_page),
        },
    )
    .await?;
    let next = u64::from(found.offset) + u64::from(found.plates_on_page) < found.plates;
    let groups = found.groups;
    let mut compared = Vec::with_capacity(groups.len());
    for g in &groups {
        compared.push(super::evidence::side_by_side(state, None, &g.records).await?);
    }
    let users = state.store().list_users().await?;
    let name = |id: &str| {
        users
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.display_name.clone())
            .unwrap_or_else(|| id.to_owned())
    };
    let body = html! {
        @if let Some(e) = &error { (error_box("erro-acao", e)) }
        p .dica {
            "Registros da mesma placa, de dispositivos diferentes, com até "
            (office::DUPLICATE_WINDOW_MINUTES) " minutos e " (office::DUPLICATE_RADIUS_M)
            " m de diferença, ainda não juntados nem mantidos separados. Juntar: os outros passam a ser duplicatas do registro mantido (continuam guardados). "
            "Manter separados: são ocorrências diferentes e o grupo não volta a aparecer."
        }
        @if groups.is_empty() {
            p #sem-duplicatas { "Nenhum grupo de possíveis duplicatas para resolver." }
        } @else {
            div #grupos-duplicatas {
                @for (i, g) in groups.iter().enumerate() {
                    @let n = i + 1;
                    @let ids = g.records.iter().map(|m| m.row.id.as_str()).collect::<Vec<_>>().join(",");
                    section aria-labelledby={ "titulo-grupo-" (n) } {
                        h2 id={ "titulo-grupo-" (n) } { "Grupo " (n) ": placa " (g.plate) }
                        ul { @for p in &g.pairs { li { (p.reason) } } }
                        div id={ "comparar-grupo-" (n) } {
                            h3 { "Lado a lado, com as fotos" }
                            (compared[i])
                        }
                        (post_form(user, "/escritorio/duplicatas/juntar", &format!("form-juntar-grupo-{n}"), html! {
                            input type="hidden" name="registros" value=(ids);
                            table id={ "grupo-" (n) } {
                                thead { tr {
                                    th scope="col" { "Manter" }
                                    th scope="col" { "Registro" }
                                    th scope="col" { "Tipo" }
                                    th scope="col" { "Ocorrência" }
                                    th scope="col" { "Autor" }
                                    th scope="col" { "Situação" }
                                } }
                                tbody {
                                    @for (j, m) in g.records.iter().enumerate() {
                                        @let r = &m.row;
                                        @let radio = format!("manter-{n}-{}", r.id);
                                        tr {
                                            td {
                                                input type="radio" id=(radio) name="manter" value=(r.id) checked[j == 0];
                                                label for=(radio) { "Manter " (r.number.as_deref().unwrap_or("este")) }
                                            }
                                            th scope="row" { a id={ "abrir-" (r.id) } href={ "/escritorio/registros/" (r.id) } { (r.number.as_deref().unwrap_or("(sem número)")) } }
                                            td { (kind_label(&r.kind)) }
                                            td { (local_time(r.occurred_at)) }
                                            td { (name(&r.author_user_id)) }
                                            td { (m.status_label) }
                                        }
                                    }
                                }
                            }
                            @if user.may_decide() {
                                button type="submit" id={ "juntar-grupo-" (n) } { "Juntar os demais ao registro marcado" }
                            }
                        }))
                        @if user.may_decide() {
                            (post_form(user, "/escritorio/duplicatas/separar", &format!("form-separar-grupo-{n}"), html! {
                                input type="hidden" name="registros" value=(ids);
                                button type="submit" .secundario id={ "separar-grupo-" (n) } { "Manter todos separados" }
                            }))
                        }
                    }
                }
            }
        }
        @if page_no > 1 || next {
            nav aria-label="Páginas de duplicatas" {
                @if page_no > 1 {
                    a id="pagina-anterior" href={ "/escritorio/duplicatas?pagina=" (page_no - 1) } { "Placas mais recentes" }
                    " "
                }
                @if next {
                    a id="pagina-seguinte" href={ "/escritorio/duplicatas?pagina=" (page_no + 1) } { "Placas mais antigas" }
                }
            }
        }
    };
    Ok(page(Some(user), "Possíveis duplicatas", flash, body))
}

#[derive(Debug, Deserialize)]
struct GroupForm {
    /// The group's record ids, comma-separated.
    #[serde(default)]
    registros: String,
    /// The record that stays (merge only).
    #[serde(default)]
    manter: String,
}

fn ids(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

async fn finish(
    state: &AppState,
    user: &WebUser,
    outcome: Result<String, crate::AppError>,
) -> Result<Response, PageError> {
    match outcome {
        Ok(done) => {
            user.flash(true, done).await;
            Ok(see_other("/escritorio/duplicatas"))
        }
        Err(e) if e.status == StatusCode::FORBIDDEN => Err(PageError::forbidden(user, e.message)),
        Err(e) if e.status.is_client_error() && e.status != StatusCode::NOT_FOUND => {
            let page = render(state, user, Some(e.message), 1).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

async fn merge(
    State(state): State<AppState>,
    Posted { user, form }: Posted<GroupForm>,
) -> Result<Response, PageError> {
    let keep = form.manter.trim().to_owned();
    let others: Vec<String> = ids(&form.registros)
        .into_iter()
        .filter(|id| *id != keep)
        .collect();
    let outcome = office::merge_duplicates(
        state.services(),
        &user.auth,
        office::MergeRequest {
            keep,
            merge: others,
        },
    )
    .await
    .map_err(AppError::from)
    .map(|s| {
        format!(
            "{} ao registro mantido; continuam guardados.",
            super::layout::plural(s.events as usize, "registro juntado", "registros juntados")
        )
    });
    finish(&state, &user, outcome).await
}

async fn keep_apart(
    State(state): State<AppState>,
    Posted { user, form }: Posted<GroupForm>,
) -> Result<Response, PageError> {
    let outcome = office::keep_apart(
        state.services(),
        &user.auth,
        office::KeepApartRequest {
            records: ids(&form.registros),
        },
    )
    .await
    .map_err(AppError::from)
    .map(|_| "Registros mantidos separados.".to_owned());
    finish(&state, &user, outcome).await
}
