//! The record page's section "Identificação das testemunhas" and the office's erasure of them.
//!
//! [`section`] is rendered by the record page (`record.rs`, one call): the identity and
//! contact of every observed person of the record (witness, driver the registry does not
//! know), as the author's device sent them apart from the record's history
//! (`api::observed`), so the clerk can summon a witness. Once the record is finished
//! (annulled, archived, merged) the office may erase them: `POST
//! /escritorio/registros/{id}/testemunhas/apagar` with the confirmation box ticked, through the
//! API's one path (`office::witnesses::erase`). Afterwards the section says they were erased, when
//! and by whom; the audit trail keeps the act without the data.
//!
//! | id | what |
//! |---|---|
//! | `identificacao-testemunhas` | the section |
//! | `tabela-identificacao`, rows `pessoa-{n}` (n from 1) | the persons |
//! | `testemunhas-nao-enviadas`, `testemunhas-nenhuma` | nothing received / nobody to identify |
//! | `testemunhas-apagadas` | the erasure (date, clerk) |
//! | `form-apagar-testemunhas` (`apagar-confirmo`, `apagar-testemunhas`) | the erasure form |

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::post;
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::records::RecordView;
use sync_core::sync::observed_ids;

use super::layout::{local_time, post_form, see_other};
use super::{PageError, Posted, WebUser};
use crate::error::AppError;
use crate::office::witnesses::{FINISHED, documents, erase, read, role_of};
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(
        "/escritorio/registros/{id}/testemunhas/apagar",
        post(post_erase),
    )
}

fn or_dash(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("—")
}

/// The section of the record page (module docs).
pub(crate) async fn section(
    state: &AppState,
    user: &WebUser,
    id: &str,
    view: &RecordView,
) -> Result<Markup, PageError> {
    let held = read(state.services(), &user.auth, id).await?;
    let names: Vec<(String, String)> = state
        .store()
        .list_users()
        .await?
        .into_iter()
        .map(|u| (u.id, u.display_name))
        .collect();
    let name_of = |uid: &str| {
        names
            .iter()
            .find(|(id, _)| id == uid)
            .map_or_else(|| uid.to_owned(), |(_, n)| n.clone())
    };
    let referenced = observed_ids(view);
    let finished = FINISHED.contains(&view.status);
    Ok(html! {
        section #identificacao-testemunhas aria-labelledby="titulo-identificacao" {
            h2 #titulo-identificacao { "Identificação das testemunhas" }
            @if let Some(e) = &held.erasure {
                p #testemunhas-apagadas {
                    "Os dados pessoais das testemunhas deste registro foram apagados em "
                    (local_time(e.erased_at)) " por " (name_of(&e.erased_by))
                    " (" (e.persons) " " @if e.persons == 1 { "pessoa" } @else { "pessoas" }
                    "), quando o caso terminou. O registro e as declarações continuam guardados."
                }
            } @else if referenced.is_empty() {
                p #testemunhas-nenhuma { "O registro não nomeia pessoa fora do cadastro." }
            } @else if held.persons.is_empty() {
                p #testemunhas-nao-enviadas {
                    "O dispositivo do autor ainda não enviou a identificação das "
                    (referenced.len()) " pessoas fora do cadastro que o registro nomeia; ela chega na próxima sincronização."
                }
            } @else {
                p .dica {
                    "Dados para intimar as testemunhas, enviados pelo dispositivo do autor à parte do registro. "
                    "Só a Unidade de Transportes os vê; são apagados quando o caso termina (LGPD)."
                }
                table #tabela-identificacao {
                    thead { tr {
                        th scope="col" { "Nome" }
                        th scope="col" { "Papel" }
                        th scope="col" { "Documento" }
                        th scope="col" { "Telefone" }
                        th scope="col" { "Endereço" }
                        th scope="col" { "Recebido em" }
                    } }
                    tbody {
                        @for (i, p) in held.persons.iter().enumerate() {
                            tr id={ "pessoa-" (i + 1) } {
                                th scope="row" { (or_dash(&p.name)) }
                                td { (role_of(view, &p.person_id)) }
                                td { (documents(p)) }
                                td { (or_dash(&p.phone)) }
                                td { (or_dash(&p.address)) }
                                td { (local_time(p.uploaded_at)) }
                            }
                        }
                    }
                }
                @if held.persons.len() < referenced.len() {
                    p .dica { "Faltam " (referenced.len() - held.persons.len()) " pessoas: o dispositivo não guarda dados delas." }
                }
            }
            @if held.erasure.is_none() && finished && user.may_decide() && !held.persons.is_empty() {
                (post_form(user, &format!("/escritorio/registros/{id}/testemunhas/apagar"), "form-apagar-testemunhas", html! {
                    p .dica { "O caso terminou: os dados pessoais das testemunhas podem ser apagados. Não há como desfazer." }
                    p {
                        input type="checkbox" id="apagar-confirmo" name="confirmo" value="sim" required;
                        " " label for="apagar-confirmo" { "Confirmo que o caso terminou e que estes dados não são mais necessários." }
                    }
                    button type="submit" id="apagar-testemunhas" { "Apagar dados pessoais das testemunhas" }
                }))
            }
        }
    })
}

#[derive(Debug, Clone, Deserialize)]
struct EraseForm {
    #[serde(default)]
    confirmo: String,
}

async fn post_erase(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<EraseForm>,
) -> Result<Response, PageError> {
    if !user.may_decide() {
        return Err(PageError::forbidden(
            &user,
            "Só a Unidade de Transportes apaga os dados das testemunhas.",
        ));
    }
    let back = format!("/escritorio/registros/{id}");
    if form.confirmo != "sim" {
        user.flash(
            false,
            "Nada foi apagado: marque a confirmação de que o caso terminou.",
        )
        .await;
        return Ok(see_other(&back));
    }
    match erase(state.services(), &user.auth, &id)
        .await
        .map_err(AppError::from)
    {
        Ok(e) => {
            user.flash(
                true,
                format!(
                    "Dados pessoais de {} {} apagados; fica o registro do apagamento.",
                    e.persons,
                    if e.persons == 1 {
                        "testemunha"
                    } else {
                        "testemunhas"
                    }
                ),
            )
            .await
        }
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => {
            return Err(PageError::not_found("Registro não encontrado."));
        }
        Err(e) => {
            user.flash(false, format!("Nada foi apagado: {}", e.message))
                .await
        }
    }
    Ok(see_other(&back))
}
