//! The stands (pontos) of the registry in the office pages: the list with places, permits in
//! force and coordinator, the form that creates a stand, and the page of one stand that edits
//! it (name, address, mandatory hours of art. 16, I, common or radio-taxi service of art. 28,
//! places, position) and sets or clears its coordinator (art. 17).
//!
//! Every write goes through the same function as the API ([`write::create_stand`],
//! [`write::update_stand`], [`write::set_coordinator`] for `POST /v1/stands`,
//! `PUT /v1/stands/{id}` and `PUT /v1/stands/{id}/coordinator`): places added are judged against
//! the art. 14 cap over the whole registry, a stand may not keep fewer places than permits in
//! force, nor change service under permits of the other (art. 28) — each refusal shown above its
//! form with rule and article, 422, the typed values kept.
//!
//! The coordinator of art. 17 is a person of the registry (the API's `person_id`), chosen among
//! the people; the page also lists the user accounts with the coordinator role for that stand
//! (who reports from it on the app), so the office sees both.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/pontos` | `novo-ponto`, `resumo-pontos`, `tabela-pontos` (rows `ponto-{id}`, links `abrir-ponto-{id}`) |
//! | `GET`/`POST /escritorio/pontos/novo` | the form below |
//! | `GET`/`POST /escritorio/pontos/{id}` | `dados-ponto`, `contas-coordenador`; the form below |
//! | `POST /escritorio/pontos/{id}/coordenador` | `form-coordenador`, `coordenador-pessoa` (empty: none), `salvar-coordenador`, error `erro-coordenador` |
//!
//! The form: `form-ponto`, `ponto-codigo` (new only), `ponto-nome`, `ponto-endereco`,
//! `ponto-horario` (`06-20`, `06-24`), `ponto-servico` (`comum`, `radio-taxi`), `ponto-vagas`,
//! `ponto-latitude`, `ponto-longitude`, `salvar-ponto`, error `erro-ponto`.

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Router};
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::domain::{PermitState, Registry, ServiceKind, Stand, StandSchedule};

use super::layout::{page, post_form, select_field, submit, text_field};
use super::registry::{Fields, after_write, next_code, people_options};
use super::session::{FormLimit, OfficeUser, Posted};
use super::{PageError, url_encode};
use crate::api::registry::write;
use crate::auth::Role;
use crate::error::AppError;
use crate::limits::REGISTRY_FORM_BODY_LIMIT;
use crate::registry::ops::SetCoordinator;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/pontos", get(list))
        .route("/escritorio/pontos/novo", get(new_form).post(create))
        .route("/escritorio/pontos/{id}", get(show).post(update))
        .route("/escritorio/pontos/{id}/coordenador", post(coordinator))
        .layer(Extension(FormLimit(REGISTRY_FORM_BODY_LIMIT)))
}

/// The page of stand `id`.
pub(crate) fn stand_link(id: &str) -> String {
    format!("/escritorio/pontos/{}", url_encode(id))
}

/// Mandatory hours: (form value, label, schedule).
const SCHEDULES: &[(&str, &str, StandSchedule)] = &[
    ("06-20", "06h às 20h (art. 16, I)", StandSchedule::Day),
    ("06-24", "06h às 24h (art. 16, I)", StandSchedule::Extended),
];

/// Service: (form value, label, kind).
pub(super) const SERVICES: &[(&str, &str, ServiceKind)] = &[
    ("comum", "táxi comum", ServiceKind::Common),
    ("radio-taxi", "rádio-táxi (art. 23)", ServiceKind::RadioTaxi),
];

fn options<T>(table: &[(&str, &str, T)]) -> Vec<(String, String)> {
    table
        .iter()
        .map(|(v, l, _)| ((*v).to_owned(), (*l).to_owned()))
        .collect()
}

fn value_of<T: PartialEq>(table: &[(&'static str, &str, T)], x: &T) -> &'static str {
    table
        .iter()
        .find(|(_, _, t)| t == x)
        .map_or("", |(v, _, _)| v)
}

fn live_at(reg: &Registry, id: &str) -> usize {
    reg.permits
        .iter()
        .filter(|p| p.stand_id == id && !matches!(p.state, PermitState::Revoked { .. }))
        .count()
}

async fn list(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let cap = sync_core::rules::office::taxi_cap(&reg.law().rules);
    let places: u64 = reg.stands.iter().map(|s| u64::from(s.vacancies)).sum();
    let name_of = |id: &str| {
        reg.index()
            .person(id)
            .map_or(id.to_owned(), |p| p.name.clone())
    };
    let body = html! {
        p #resumo-pontos {
            (reg.stands.len()) " pontos com " (places) " vagas; limite de táxis do art. 14: " (cap) "."
        }
        p { a #novo-ponto href="/escritorio/pontos/novo" { "Criar um ponto" } }
        table #tabela-pontos {
            caption { "Pontos de estacionamento (art. 15)" }
            thead { tr {
                th scope="col" { "Ponto" } th scope="col" { "Endereço" } th scope="col" { "Horário" }
                th scope="col" { "Serviço" } th scope="col" { "Vagas" } th scope="col" { "Alvarás vigentes" }
                th scope="col" { "Coordenador (art. 17)" }
            } }
            tbody {
                @for s in &reg.stands {
                    tr id=(format!("ponto-{}", s.id)) {
                        td { a id=(format!("abrir-ponto-{}", s.id)) href=(stand_link(&s.id)) { (s.id) " – " (s.name) } }
                        td { (s.address) }
                        td { (SCHEDULES.iter().find(|x| x.2 == s.schedule).map_or("", |x| x.1)) }
                        td { (SERVICES.iter().find(|x| x.2 == s.service).map_or("", |x| x.1)) }
                        td { (s.vacancies) }
                        td { (live_at(&reg, &s.id)) }
                        td { @match &s.coordinator_id { Some(c) => { (name_of(c)) }, None => { "nenhum" } } }
                    }
                }
            }
        }
    };
    Ok(page(Some(&user), "Pontos", flash, body))
}

/// What the stand form holds, as typed.
#[derive(Debug, Clone, Default, Deserialize)]
struct StandForm {
    #[serde(default)]
    codigo: String,
    #[serde(default)]
    nome: String,
    #[serde(default)]
    endereco: String,
    #[serde(default)]
    horario: String,
    #[serde(default)]
    servico: String,
    #[serde(default)]
    vagas: String,
    #[serde(default)]
    latitude: String,
    #[serde(default)]
    longitude: String,
}

impl StandForm {
    fn of(s: &Stand) -> Self {
        Self {
            codigo: s.id.clone(),
            nome: s.name.clone(),
            endereco: s.address.clone(),
            horario: value_of(SCHEDULES, &s.schedule).into(),
            servico: value_of(SERVICES, &s.service).into(),
            vagas: s.vacancies.to_string(),
            latitude: s.latitude.map_or_else(String::new, |x| x.to_string()),
            longitude: s.longitude.map_or_else(String::new, |x| x.to_string()),
        }
    }

    /// The stand the form describes, with code `id` and `coordinator`, or every mistake.
    fn stand(&self, id: &str, coordinator: Option<String>) -> Result<Stand, AppError> {
        let mut f = Fields::default();
        let id = f.text("Código", id, true);
        let name = f.text("Nome", &self.nome, true);
        let address = f.text("Endereço", &self.endereco, true);
        let schedule = SCHEDULES
            .iter()
            .find(|x| x.0 == self.horario.trim())
            .map(|x| x.2);
        if schedule.is_none() {
            f.error("Escolha o horário obrigatório do ponto.");
        }
        let service = SERVICES
            .iter()
            .find(|x| x.0 == self.servico.trim())
            .map(|x| x.2);
        if service.is_none() {
            f.error("Escolha o tipo de serviço do ponto.");
        }
        let vacancies = f.number("Vagas", &self.vagas, 0..=1_000u32);
        let mut coordinate = |label: &str, text: &str, bound: f64| {
            let t = f.text(label, text, false).replace(',', ".");
            if t.is_empty() {
                return None;
            }
            match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x.abs() <= bound => Some(x),
                _ => {
                    f.error(format!(
                        "O campo «{label}» deve ser um número de -{bound} a {bound} (graus, \
                         ex.: -22.7394); foi digitado «{t}»."
                    ));
                    None
                }
            }
        };
        let latitude = coordinate("Latitude", &self.latitude, 90.0);
        let longitude = coordinate("Longitude", &self.longitude, 180.0);
        if latitude.is_some() != longitude.is_some()
            && !(self.latitude.trim().is_empty() && self.longitude.trim().is_empty())
        {
            f.error("Informe a latitude e a longitude juntas, ou nenhuma das duas.");
        }
        f.finish()?;
        match (schedule, service, vacancies) {
            (Some(schedule), Some(service), Some(vacancies)) => Ok(Stand {
                id,
                name,
                address,
                schedule,
                service,
                vacancies,
                coordinator_id: coordinator,
                latitude,
                longitude,
            }),
            // `finish` has said what is missing.
            _ => Err(AppError::unprocessable(
                "invalid_form",
                "Confira os campos do formulário.",
            )),
        }
    }
}

fn stand_form(user: &OfficeUser, id: Option<&str>, form: &StandForm) -> Markup {
    let action = id.map_or(String::from("/escritorio/pontos/novo"), stand_link);
    let horario = if form.horario.is_empty() {
        "06-20"
    } else {
        &form.horario
    };
    let servico = if form.servico.is_empty() {
        "comum"
    } else {
        &form.servico
    };
    post_form(
        user,
        &action,
        "form-ponto",
        html! {
            fieldset {
                legend { "Ponto" }
                @if id.is_none() {
                    (text_field("ponto-codigo", "codigo", "Código no cadastro (ex.: S09)", &form.codigo, true))
                }
                (text_field("ponto-nome", "nome", "Nome", &form.nome, true))
                (text_field("ponto-endereco", "endereco", "Endereço", &form.endereco, true))
                (select_field("ponto-horario", "horario", "Horário obrigatório", &options(SCHEDULES), horario))
                (select_field("ponto-servico", "servico", "Serviço (art. 28)", &options(SERVICES), servico))
                (text_field("ponto-vagas", "vagas", "Vagas (contam no limite do art. 14)", &form.vagas, true))
                (text_field("ponto-latitude", "latitude", "Latitude (opcional, ex.: -22.7394)", &form.latitude, false))
                (text_field("ponto-longitude", "longitude", "Longitude (opcional, ex.: -47.3314)", &form.longitude, false))
            }
            (submit("salvar-ponto", if id.is_some() { "Salvar as alterações" } else { "Criar o ponto" }))
        },
    )
}

async fn new_page(
    state: &AppState,
    user: &OfficeUser,
    form: StandForm,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let mut form = form;
    if form.codigo.is_empty() && error.is_none() {
        let reg = state.store().registry().await?;
        let next = next_code("S", reg.stands.iter().map(|s| s.id.as_str()));
        // Stands are few: `S09`, not `S0009`.
        form.codigo = format!("S{:02}", next[1..].parse::<u32>().unwrap_or(1));
    }
    let body = html! {
        p { a href="/escritorio/pontos" { "← Voltar à lista de pontos" } }
        @if let Some(e) = error { (e) }
        (stand_form(user, None, &form))
    };
    Ok(page(Some(user), "Criar um ponto", flash, body))
}

async fn new_form(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    new_page(&state, &user, StandForm::default(), None).await
}

async fn create(
    State(state): State<AppState>,
    Posted { user, form }: Posted<StandForm>,
) -> Result<Response, PageError> {
    let result = match form.stand(&form.codigo, None) {
        Ok(s) => write::create_stand(&state, &user.auth, s).await,
        Err(e) => Err(e),
    };
    let id = form.codigo.trim().to_owned();
    let done = format!("Ponto {id} criado.");
    after_write(&user, result, &done, &stand_link(&id), "erro-ponto", |e| {
        new_page(&state, &user, form.clone(), Some(e))
    })
    .await
}

/// The stand page; `error` is (form id, box) of the form that was refused.
async fn stand_page(
    state: &AppState,
    user: &OfficeUser,
    id: &str,
    form: Option<StandForm>,
    coordinator: Option<String>,
    error: Option<(&str, Markup)>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let Some(s) = reg.index().stand(id) else {
        return Err(PageError::not_found(format!(
            "O ponto {id} não consta do cadastro."
        )));
    };
    let users = state.store().list_users().await?;
    let accounts: Vec<_> = users
        .iter()
        .filter(|u| u.role == Role::Coordinator && u.stand_id.as_deref() == Some(s.id.as_str()))
        .collect();
    let form = form.unwrap_or_else(|| StandForm::of(s));
    let chosen = coordinator.unwrap_or_else(|| s.coordinator_id.clone().unwrap_or_default());
    let mut people = vec![(String::new(), String::from("nenhum coordenador"))];
    people.extend(people_options(&reg));
    let error_for = |form: &str| {
        error
            .as_ref()
            .filter(|(f, _)| *f == form)
            .map(|(_, m)| m.clone())
    };
    let coordinator_name = s.coordinator_id.as_deref().map(|c| {
        reg.index()
            .person(c)
            .map_or(c.to_owned(), |p| p.name.clone())
    });
    let body = html! {
        p { a href="/escritorio/pontos" { "← Voltar à lista de pontos" } }
        section #dados-ponto aria-labelledby="h-dados-ponto" {
            h2 #h-dados-ponto { "Situação" }
            dl {
                dt { "Vagas" } dd { (s.vacancies) ", " (live_at(&reg, &s.id)) " com alvará vigente" }
                dt { "Coordenador (art. 17)" } dd {
                    @match (&s.coordinator_id, &coordinator_name) {
                        (Some(c), Some(n)) => { a href=(super::people::person_link(c)) { (n) } }
                        _ => { "nenhum" }
                    }
                }
                dt { "Alvarás" } dd { a href=(format!("/escritorio/alvaras?ponto={}", url_encode(&s.id))) { "ver os alvarás deste ponto" } }
            }
        }
        section #coordenador aria-labelledby="h-coordenador" {
            h2 #h-coordenador { "Coordenador do ponto (art. 17)" }
            @if let Some(m) = error_for("form-coordenador") { (m) }
            (post_form(user, &format!("{}/coordenador", stand_link(&s.id)), "form-coordenador", html! {
                fieldset .linha-form {
                    legend { "Coordenador" }
                    (select_field("coordenador-pessoa", "pessoa", "Pessoa do cadastro", &people, &chosen))
                    (submit("salvar-coordenador", "Salvar o coordenador"))
                }
            }))
            div #contas-coordenador {
                @if accounts.is_empty() {
                    p { "Nenhuma conta de coordenador deste ponto no sistema (as contas são criadas pela administração)." }
                } @else {
                    p { "Contas com o perfil de coordenador deste ponto, que relatam pelo aplicativo: "
                        (accounts.iter().map(|u| format!("{} ({}{})", u.display_name, u.username, if u.active { "" } else { ", desativada" })).collect::<Vec<_>>().join("; "))
                        "." }
                }
            }
        }
        section #alterar-ponto aria-labelledby="h-alterar-ponto" {
            h2 #h-alterar-ponto { "Alterar o ponto" }
            p .dica { "Vagas acrescentadas contam no limite do art. 14; a alteração gera uma nova versão do cadastro." }
            @if let Some(m) = error_for("form-ponto") { (m) }
            (stand_form(user, Some(&s.id), &form))
        }
    };
    Ok(page(
        Some(user),
        &format!("Ponto {} – {}", s.id, s.name),
        flash,
        body,
    ))
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    stand_page(&state, &user, &id, None, None, None).await
}

async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<StandForm>,
) -> Result<Response, PageError> {
    // The coordinator is set by its own form: the stand keeps the one it has.
    let reg = state.store().registry().await?;
    let current = reg
        .index()
        .stand(&id)
        .and_then(|s| s.coordinator_id.clone());
    let result = match form.stand(&id, current) {
        Ok(s) => write::update_stand(&state, &user.auth, &id, s).await,
        Err(e) => Err(e),
    };
    let done = format!("Ponto {id} alterado.");
    after_write(&user, result, &done, &stand_link(&id), "erro-ponto", |e| {
        stand_page(
            &state,
            &user,
            &id,
            Some(form.clone()),
            None,
            Some(("form-ponto", e)),
        )
    })
    .await
}

#[derive(Debug, Clone, Deserialize)]
struct CoordinatorForm {
    #[serde(default)]
    pessoa: String,
}

async fn coordinator(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<CoordinatorForm>,
) -> Result<Response, PageError> {
    let mut f = Fields::default();
    let person = f.text("Coordenador", &form.pessoa, false);
    let result = match f.finish() {
        Ok(()) => {
            let req = SetCoordinator {
                person_id: (!person.is_empty()).then(|| person.clone()),
            };
            write::set_coordinator(&state, &user.auth, &id, req).await
        }
        Err(e) => Err(e),
    };
    let reg = state.store().registry().await?;
    let done = match reg.index().person(&person) {
        Some(p) => format!("{} é o coordenador do ponto {id}.", p.name),
        None => format!("O ponto {id} ficou sem coordenador."),
    };
    after_write(
        &user,
        result,
        &done,
        &stand_link(&id),
        "erro-coordenador",
        |e| {
            stand_page(
                &state,
                &user,
                &id,
                None,
                Some(form.pessoa.clone()),
                Some(("form-coordenador", e)),
            )
        },
    )
    .await
}
