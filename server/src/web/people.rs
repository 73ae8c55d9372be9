//! The people of the registry in the office pages (holders, auxiliary drivers, coordinators):
//! the list with a search, the form that adds a person and the page that shows one with the
//! permits they are on and the vehicles in their name, and edits their data and documents (CPF,
//! CNH: number, category, first licence, expiry, kind, observations such as EAR).
//!
//! Every write goes through the same function as the API ([`write::create_person`] for
//! `POST /v1/people`, [`write::update_person`] for `PUT /v1/people/{id}`): the role, the audit
//! action, the registry operation and the law's judgement are the API's. The form is read field
//! by field first ([`Fields`]): every mistake is listed above the form at once, status 422, what
//! was typed kept, nothing written. A refusal of the operation (a CPF already in use: 409; a CPF
//! whose check digits fail) is shown the same way; what the law finds and does not refuse (an
//! expired CNH on a permit) comes back in the flash after the redirect.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/pessoas?busca=…&pagina=…` | `form-busca-pessoas`, `busca-pessoas`, `buscar-pessoas`, `nova-pessoa`, `total-pessoas`, `tabela-pessoas` (rows `pessoa-{id}`, links `abrir-pessoa-{id}`), `sem-pessoas` |
//! | `GET`/`POST /escritorio/pessoas/nova` | the form below |
//! | `GET`/`POST /escritorio/pessoas/{id}` | `dados-pessoa`, `vinculos-pessoa`; the form below |
//!
//! The form: `form-pessoa`, `pessoa-codigo` (new only), `pessoa-nome`, `pessoa-cpf`,
//! `pessoa-nascimento`, `pessoa-cnh`, `pessoa-categoria`, `pessoa-primeira-habilitacao`,
//! `pessoa-validade`, `pessoa-tipo` (`D`, `P`), `pessoa-observacoes` (comma separated),
//! `salvar-pessoa`, error `erro-pessoa`.
//!
//! Search (`busca`): part of the name (accents and case ignored), a CPF in any spelling
//! (`123.456.789-09` or the bare digits) or the person's code.

use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::domain::{CnhNumber, Cpf, DriverLicence, LicenceKind, Person, Registry};

use super::layout::{date_br, date_field, page, post_form, select_field, submit, text_field};
use super::registry::{Fields, after_write, date_value, fold, next_code, pager};
use super::session::{FormLimit, OfficeUser, Posted};
use super::{PageError, url_encode};
use crate::api::registry::write;
use crate::error::AppError;
use crate::limits::{MAX_LICENCE_OBSERVATIONS, REGISTRY_FORM_BODY_LIMIT};
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/pessoas", get(list))
        .route("/escritorio/pessoas/nova", get(new_form).post(create))
        .route("/escritorio/pessoas/{id}", get(show).post(update))
        .layer(Extension(FormLimit(REGISTRY_FORM_BODY_LIMIT)))
}

/// The page of person `id`.
pub(crate) fn person_link(id: &str) -> String {
    format!("/escritorio/pessoas/{}", url_encode(id))
}

#[derive(Debug, Clone, Default, Deserialize)]
struct ListQuery {
    #[serde(default)]
    busca: Option<String>,
    #[serde(default)]
    pagina: Option<usize>,
}

/// Whether `p` matches the search text `q` (see the module doc).
fn matches(p: &Person, q: &str, cpf: Option<&Cpf>) -> bool {
    q.is_empty()
        || cpf.is_some_and(|c| &p.cpf == c)
        || p.id.eq_ignore_ascii_case(q)
        || fold(&p.name).contains(&fold(q))
}

async fn list(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let busca = q.busca.as_deref().unwrap_or_default().trim().to_owned();
    let cpf = Cpf::parse(&busca).ok();
    let mut found: Vec<&Person> = reg
        .people
        .iter()
        .filter(|p| matches(p, &busca, cpf.as_ref()))
        .collect();
    found.sort_by(|a, b| fold(&a.name).cmp(&fold(&b.name)).then(a.id.cmp(&b.id)));
    let (skip, nav) = pager(found.len(), q.pagina.unwrap_or(1), |n| {
        format!(
            "/escritorio/pessoas?busca={}&pagina={n}",
            url_encode(&busca)
        )
    });
    let body = html! {
        p {
            "Titulares, motoristas auxiliares e coordenadores de ponto. O CPF e a CNH cadastrados "
            "aqui são os que os tablets conferem na fiscalização (art. 2º)."
        }
        p { a #nova-pessoa href="/escritorio/pessoas/nova" { "Cadastrar uma pessoa" } }
        form .filtros method="get" action="/escritorio/pessoas" id="form-busca-pessoas" role="search" {
            (text_field("busca-pessoas", "busca", "Nome, CPF ou código", &busca, false))
            div .acoes { (submit("buscar-pessoas", "Buscar")) }
        }
        p #total-pessoas role="status" {
            @if found.len() == 1 { "1 pessoa encontrada." } @else { (found.len()) " pessoas encontradas." }
        }
        @if found.is_empty() {
            p #sem-pessoas { "Nenhuma pessoa corresponde à busca." }
        } @else {
            table #tabela-pessoas {
                caption { "Pessoas do cadastro" }
                thead { tr {
                    th scope="col" { "Nome" } th scope="col" { "CPF" } th scope="col" { "Código" }
                    th scope="col" { "CNH válida até" } th scope="col" { "Alvarás" }
                } }
                tbody {
                    @for p in found.iter().skip(skip).take(super::registry::PAGE_SIZE) {
                        tr id=(format!("pessoa-{}", p.id)) {
                            td { a id=(format!("abrir-pessoa-{}", p.id)) href=(person_link(&p.id)) { (p.name) } }
                            td { (p.cpf.masked()) }
                            td { (p.id) }
                            td { (date_br(p.licence.expiry)) }
                            td { (roles_of(&reg, &p.id).join("; ")) }
                        }
                    }
                }
            }
            (nav)
        }
    };
    Ok(page(Some(&user), "Pessoas", flash, body))
}

/// "titular do 0001", "auxiliar do 0002": the permits person `id` is on.
fn roles_of(reg: &Registry, id: &str) -> Vec<String> {
    reg.permits
        .iter()
        .filter_map(|p| {
            if p.holder_id == id {
                Some(format!("titular do {}", p.number))
            } else if p.auxiliaries.iter().any(|a| a.person_id == id) {
                Some(format!("auxiliar do {}", p.number))
            } else {
                None
            }
        })
        .collect()
}

/// What the person form holds: the typed values, as typed.
#[derive(Debug, Clone, Default, Deserialize)]
struct PersonForm {
    #[serde(default)]
    codigo: String,
    #[serde(default)]
    nome: String,
    #[serde(default)]
    cpf: String,
    #[serde(default)]
    nascimento: String,
    #[serde(default)]
    cnh: String,
    #[serde(default)]
    categoria: String,
    #[serde(default)]
    primeira_habilitacao: String,
    #[serde(default)]
    validade: String,
    #[serde(default)]
    tipo: String,
    #[serde(default)]
    observacoes: String,
}

impl PersonForm {
    fn of(p: &Person) -> Self {
        Self {
            codigo: p.id.clone(),
            nome: p.name.clone(),
            cpf: p.cpf.masked(),
            nascimento: date_value(p.birth_date),
            cnh: p.licence.number.as_str().to_owned(),
            categoria: p.licence.category.clone(),
            primeira_habilitacao: date_value(p.licence.first_licence_date),
            validade: date_value(p.licence.expiry),
            tipo: match p.licence.kind {
                LicenceKind::D => "D".into(),
                LicenceKind::P => "P".into(),
            },
            observacoes: p.licence.observations.join(", "),
        }
    }

    /// The person the form describes, with code `id`, or every mistake.
    fn person(&self, id: &str) -> Result<Person, AppError> {
        let mut f = Fields::default();
        let id = f.text("Código", id, true);
        let name = f.text("Nome", &self.nome, true);
        let cpf = f.parsed("CPF", &self.cpf, Cpf::parse_strict);
        let birth = f.date("Data de nascimento", &self.nascimento, true);
        let number = f.parsed("Número da CNH", &self.cnh, CnhNumber::parse);
        let category = f
            .text("Categoria da CNH", &self.categoria, true)
            .to_uppercase();
        let first = f.date("Primeira habilitação", &self.primeira_habilitacao, true);
        let expiry = f.date("Validade da CNH", &self.validade, true);
        let kind = match self.tipo.trim() {
            "D" => Some(LicenceKind::D),
            "P" => Some(LicenceKind::P),
            _ => {
                f.error("Escolha o tipo da CNH: definitiva ou permissão para dirigir.");
                None
            }
        };
        let observations: Vec<String> = f
            .text("Observações da CNH", &self.observacoes, false)
            .split([',', ';'])
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_uppercase)
            .collect();
        if observations.len() > MAX_LICENCE_OBSERVATIONS {
            f.error(format!(
                "A CNH tem no máximo {MAX_LICENCE_OBSERVATIONS} observações; foram digitadas {}.",
                observations.len()
            ));
        }
        f.finish()?;
        match (cpf, birth, number, first, expiry, kind) {
            (Some(cpf), Some(birth_date), Some(number), Some(first), Some(expiry), Some(kind)) => {
                Ok(Person {
                    id,
                    name,
                    cpf,
                    birth_date,
                    licence: DriverLicence {
                        number,
                        category,
                        first_licence_date: first,
                        expiry,
                        kind,
                        observations,
                    },
                })
            }
            // `finish` has said what is missing.
            _ => Err(AppError::unprocessable(
                "invalid_form",
                "Confira os campos do formulário.",
            )),
        }
    }
}

/// The form, new (`id` None: the code is asked) or of person `id`.
fn person_form(user: &OfficeUser, id: Option<&str>, form: &PersonForm) -> Markup {
    let action = id.map_or(String::from("/escritorio/pessoas/nova"), person_link);
    let kinds = vec![
        (String::from("D"), String::from("definitiva (D)")),
        (
            String::from("P"),
            String::from("permissão para dirigir (P)"),
        ),
    ];
    let kind = if form.tipo.is_empty() {
        "D"
    } else {
        &form.tipo
    };
    post_form(
        user,
        &action,
        "form-pessoa",
        html! {
            fieldset {
                legend { "Identificação" }
                @if id.is_none() {
                    (text_field("pessoa-codigo", "codigo", "Código no cadastro (ex.: P0123)", &form.codigo, true))
                }
                (text_field("pessoa-nome", "nome", "Nome completo", &form.nome, true))
                (text_field("pessoa-cpf", "cpf", "CPF", &form.cpf, true))
                (date_field("pessoa-nascimento", "nascimento", "Data de nascimento", &form.nascimento, true))
            }
            fieldset {
                legend { "CNH (art. 2º)" }
                (text_field("pessoa-cnh", "cnh", "Número de registro da CNH (11 dígitos)", &form.cnh, true))
                (text_field("pessoa-categoria", "categoria", "Categoria (ex.: B, AB, D)", &form.categoria, true))
                (date_field("pessoa-primeira-habilitacao", "primeira_habilitacao", "Data da 1ª habilitação", &form.primeira_habilitacao, true))
                (date_field("pessoa-validade", "validade", "Validade", &form.validade, true))
                (select_field("pessoa-tipo", "tipo", "Tipo", &kinds, kind))
                (text_field("pessoa-observacoes", "observacoes", "Observações impressas, separadas por vírgula (ex.: EAR)", &form.observacoes, false))
            }
            (submit("salvar-pessoa", if id.is_some() { "Salvar as alterações" } else { "Cadastrar a pessoa" }))
        },
    )
}

async fn new_page(
    state: &AppState,
    user: &OfficeUser,
    form: PersonForm,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let mut form = form;
    if form.codigo.is_empty() && error.is_none() {
        let reg = state.store().registry().await?;
        form.codigo = next_code("P", reg.people.iter().map(|p| p.id.as_str()));
    }
    let body = html! {
        p { a href="/escritorio/pessoas" { "← Voltar à lista de pessoas" } }
        @if let Some(e) = error { (e) }
        (person_form(user, None, &form))
    };
    Ok(page(Some(user), "Cadastrar uma pessoa", flash, body))
}

async fn new_form(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    new_page(&state, &user, PersonForm::default(), None).await
}

async fn create(
    State(state): State<AppState>,
    Posted { user, form }: Posted<PersonForm>,
) -> Result<Response, PageError> {
    let result = match form.person(&form.codigo) {
        Ok(p) => write::create_person(&state, &user.auth, p).await,
        Err(e) => Err(e),
    };
    let id = form.codigo.trim().to_owned();
    let done = format!("{} cadastrada.", form.nome.trim());
    after_write(
        &user,
        result,
        &done,
        &person_link(&id),
        "erro-pessoa",
        |e| new_page(&state, &user, form.clone(), Some(e)),
    )
    .await
}

async fn person_page(
    state: &AppState,
    user: &OfficeUser,
    id: &str,
    form: Option<PersonForm>,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let Some(p) = reg.index().person(id) else {
        return Err(PageError::not_found(format!(
            "A pessoa {id} não consta do cadastro."
        )));
    };
    let today = state.clock().today();
    let form = form.unwrap_or_else(|| PersonForm::of(p));
    let held: Vec<_> = reg.permits.iter().filter(|x| x.holder_id == p.id).collect();
    let drives: Vec<_> = reg
        .permits
        .iter()
        .filter(|x| x.auxiliaries.iter().any(|a| a.person_id == p.id))
        .collect();
    let owns: Vec<_> = reg
        .vehicles
        .iter()
        .filter(|v| v.owner_cpf == p.cpf)
        .collect();
    let coordinates: Vec<_> = reg
        .stands
        .iter()
        .filter(|s| s.coordinator_id.as_deref() == Some(p.id.as_str()))
        .collect();
    let permit_link = |n: &str| format!("/escritorio/alvaras/{}", url_encode(n));
    let body = html! {
        p { a href="/escritorio/pessoas" { "← Voltar à lista de pessoas" } }
        section #dados-pessoa aria-labelledby="h-dados-pessoa" {
            h2 #h-dados-pessoa { "Dados" }
            dl {
                dt { "Código" } dd { (p.id) }
                dt { "CPF" } dd { (p.cpf.masked()) }
                dt { "Nascimento" } dd { (date_br(p.birth_date)) }
                dt { "CNH" } dd {
                    (p.licence.number.as_str()) ", categoria " (p.licence.category)
                    ", validade " (date_br(p.licence.expiry))
                    @if p.licence.expiry < today { strong { " — vencida" } }
                    @if p.licence.has_ear() { ", exerce atividade remunerada (EAR)" }
                    @else { strong { ", sem a observação EAR (art. 2º, II)" } }
                }
            }
        }
        section #vinculos-pessoa aria-labelledby="h-vinculos-pessoa" {
            h2 #h-vinculos-pessoa { "Alvarás, veículos e pontos" }
            ul {
                @for x in &held { li { "Titular do alvará " a href=(permit_link(&x.number)) { (x.number) } } }
                @for x in &drives { li { "Motorista auxiliar do alvará " a href=(permit_link(&x.number)) { (x.number) } } }
                @for v in &owns { li { "Proprietário do veículo " a href=(super::vehicles::vehicle_link(&v.id)) { (v.plate.canonical()) } } }
                @for s in &coordinates { li { "Coordenador do ponto " a href=(super::stands::stand_link(&s.id)) { (s.id) " – " (s.name) } } }
                @if held.is_empty() && drives.is_empty() && owns.is_empty() && coordinates.is_empty() {
                    li { "Nenhum alvará, veículo ou ponto." }
                }
            }
        }
        section #alterar-pessoa aria-labelledby="h-alterar-pessoa" {
            h2 #h-alterar-pessoa { "Alterar os dados" }
            p .dica { "A alteração gera uma nova versão do cadastro, que os tablets recebem na próxima sincronização." }
            @if let Some(e) = error { (e) }
            (person_form(user, Some(&p.id), &form))
        }
    };
    Ok(page(Some(user), &p.name, flash, body))
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    person_page(&state, &user, &id, None, None).await
}

async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<PersonForm>,
) -> Result<Response, PageError> {
    let result = match form.person(&id) {
        Ok(p) => write::update_person(&state, &user.auth, &id, p).await,
        Err(e) => Err(e),
    };
    let done = format!("Dados de {} alterados.", form.nome.trim());
    after_write(
        &user,
        result,
        &done,
        &person_link(&id),
        "erro-pessoa",
        |e| person_page(&state, &user, &id, Some(form.clone()), Some(e)),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mistake_of_the_form_is_said_at_once() {
        let form = PersonForm {
            nome: String::new(),
            cpf: "111.111.111-11".into(),
            nascimento: "31/02/1980".into(),
            cnh: "x".repeat(201),
            tipo: "Z".into(),
            ..PersonForm::default()
        };
        let e = form.person("P1").unwrap_err();
        let errors = e.details.unwrap()["errors"].clone();
        let text = errors.to_string();
        for says in [
            "«Nome»",
            "CPF inválido",
            "«Data de nascimento» não é uma data válida: «31/02/1980»",
            "«Número da CNH» tem mais de 200",
            "tipo da CNH",
        ] {
            assert!(text.contains(says), "{says}: {text}");
        }
    }
}
