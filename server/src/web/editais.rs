//! Editais de chamamento in the office pages: how the Unidade fills vacancies at the stands as
//! arts. 2–6 order, from opening to grant, every step on one page.
//!
//! The list page shows every edital with its stage and the form that opens a new one, with
//! each stand's free places (its places, less the permits in force, less what other editais
//! hold) so the clerk sees at once what art. 14 and the stands allow. The edital's page walks
//! its steps in order — candidates and the registration form; the list, with each candidate's
//! group and evidence of seniority or the reasons of refusal; the lottery's published list, its
//! SHA-256 and the seed; the classification with the places; the appeals and their decisions;
//! the grants — and shows only the form of the step that can be taken now, with the date it
//! becomes possible when it cannot yet. Every form posts to the same service as the API
//! ([`crate::selection`]): the law kernel judges, a refusal comes back above the form with its
//! articles and what was typed kept, success redirects with a message (`#aviso`).
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/editais` | `tabela-editais` (rows `edital-{id}`, links `abrir-edital-{id}`), `sem-editais`, `form-abrir-edital`, `edital-id`, `edital-numero`, `edital-publicacao`, `edital-inicio`, `edital-fim`, `edital-referencia`, `edital-sorteio`, `edital-semente-fonte`, `edital-documentos`, `vagas-{stand}`, `abrir-edital`, error `erro-abrir-edital` |
//! | `GET /escritorio/editais/{id}` | `etapa-edital`, `pdf-edital`, `tabela-candidatos` (rows `candidato-{inscrição}`), `form-inscricao` (`inscricao-cpf`, `inscricao-nome`, `inscricao-nascimento`, `inscricao-cnh`, `inscricao-categoria`, `inscricao-primeira`, `inscricao-validade`, `inscricao-tipo`, `inscricao-observacoes`, `inscricao-residencia`, `inscricao-antecedentes`, `inscricao-antecedentes-ok`, `inscricao-atestado`, `inscricao-atestado-ok`, `inscricao-exercicio`, `inscricao-preferencias`, `inscrever`), `form-lista`/`publicar-lista`, `tabela-lista` (rows `lista-{inscrição}`), `lista-sorteio`, `resumo-lista`, `form-sorteio`/`sorteio-semente`/`sortear`, `semente-sorteio`, `form-resultado`/`publicar-resultado`, `pdf-resultado`, `tabela-classificacao` (rows `classificado-{inscrição}`), `prazo-recurso`, `form-recurso` (`recurso-recorrente`, `recurso-inscricao`, `recurso-data`, `recurso-razoes`, `registrar-recurso`), `tabela-recursos` (rows `recurso-{n}`), `form-decisao-{n}` (`decisao-{n}-provido`, `decisao-{n}-fundamentacao`, `decisao-{n}-exclui`, `decidir-{n}`), `form-concessao-{inscrição}` (`concessao-{inscrição}-alvara`, `concessao-{inscrição}-veiculo`, `conceder-{inscrição}`), `tabela-concessoes`; errors `erro-{form}` |
//! | `GET /escritorio/editais/{id}/lista-sorteio.txt` | the lottery's list byte for byte |
//! | `GET /escritorio/editais/{id}/edital.pdf`, `…/resultado.pdf` | the printed edital and result |
//!
//! Decisão: registering a candidate whose CPF is in the registry (a holder or an auxiliary)
//! takes the name, birth date and CNH from the registry when the clerk leaves them blank, so
//! the clerk does not retype what the Unidade already holds.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::NaiveDate;
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::domain::{CnhNumber, Cpf, DriverLicence, LicenceKind, Registry};
use sync_core::rules::selection::{
    self, Certificate, Edital, Group, NewAppeal, NewCandidate, NewEdital, Stage, Vacancy,
};

use super::layout::{
    date_br, date_field, page, plural, post_form, see_other, select_field, submit, text_field,
    textarea_field,
};
use super::registry::{parse_date, refusal_box};
use super::session::{OfficeUser, Posted};
use super::{PageError, url_encode};
use crate::error::AppError;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/editais", get(list).post(open))
        .route("/escritorio/editais/{id}", get(detail))
        .route("/escritorio/editais/{id}/inscricoes", post(register))
        .route("/escritorio/editais/{id}/lista", post(publish_list))
        .route("/escritorio/editais/{id}/sorteio", post(draw))
        .route("/escritorio/editais/{id}/resultado", post(publish_result))
        .route("/escritorio/editais/{id}/recursos", post(file_appeal))
        .route(
            "/escritorio/editais/{id}/recursos/{number}/decisao",
            post(decide_appeal),
        )
        .route("/escritorio/editais/{id}/concessoes", post(grant))
        .route(
            "/escritorio/editais/{id}/lista-sorteio.txt",
            get(lottery_text),
        )
        .route("/escritorio/editais/{id}/edital.pdf", get(edital_pdf))
        .route("/escritorio/editais/{id}/resultado.pdf", get(result_pdf))
}

fn edital_url(id: &str) -> String {
    format!("/escritorio/editais/{}", url_encode(id))
}

/// The refusal of a step: 4xx errors go back on the page above their form (a missing edital
/// too, as 422: the clerk typed it), anything else is a page error.
fn on_page(e: AppError, form: &str) -> Result<(StatusCode, Markup), PageError> {
    if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN {
        let status = if e.status == StatusCode::NOT_FOUND {
            StatusCode::UNPROCESSABLE_ENTITY
        } else {
            e.status
        };
        Ok((status, refusal_box(&format!("erro-{form}"), &e)))
    } else {
        Err(e.into())
    }
}

fn bad(code: &'static str, message: impl Into<String>) -> AppError {
    AppError::unprocessable(code, message.into())
}

fn date_or_none(text: &str, what: &str) -> Result<Option<NaiveDate>, AppError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    parse_date(t).map(Some).ok_or_else(|| {
        bad(
            "invalid_date",
            format!("Data inválida em {what}: «{t}». Informe dia/mês/ano."),
        )
    })
}

fn date_required(text: &str, what: &str) -> Result<NaiveDate, AppError> {
    date_or_none(text, what)?.ok_or_else(|| bad("missing_date", format!("Informe {what}.")))
}

// ---------------------------------------------------------------------------------------------
// The list of editais and the opening form
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Default, Deserialize)]
struct OpenForm {
    #[serde(default)]
    id: String,
    #[serde(default)]
    numero: String,
    #[serde(default)]
    publicacao: String,
    #[serde(default)]
    inicio: String,
    #[serde(default)]
    fim: String,
    #[serde(default)]
    referencia: String,
    #[serde(default)]
    sorteio: String,
    #[serde(default)]
    fonte: String,
    #[serde(default)]
    documentos: String,
    /// `vagas-{stand}` fields, read from the raw form (one per stand).
    #[serde(flatten)]
    places: std::collections::BTreeMap<String, String>,
}

impl OpenForm {
    fn request(&self) -> Result<NewEdital, AppError> {
        let mut vacancies = Vec::new();
        for (key, value) in &self.places {
            let Some(stand) = key.strip_prefix("vagas-") else {
                continue;
            };
            let v = value.trim();
            if v.is_empty() || v == "0" {
                continue;
            }
            let places: u32 = v.parse().map_err(|_| {
                bad(
                    "invalid_places",
                    format!("Número de vagas inválido no ponto {stand}: «{v}»."),
                )
            })?;
            vacancies.push(Vacancy {
                stand_id: stand.to_owned(),
                places,
            });
        }
        let documents: Vec<String> = self
            .documentos
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(NewEdital {
            id: self.id.trim().to_owned(),
            number: self.numero.trim().to_owned(),
            published_on: date_required(&self.publicacao, "a data de publicação")?,
            applications_from: date_required(&self.inicio, "o início das inscrições")?,
            applications_until: date_required(&self.fim, "o fim das inscrições")?,
            reference_date: date_or_none(&self.referencia, "a data de verificação dos requisitos")?,
            seed_source: self.fonte.trim().to_owned(),
            draw_on: date_required(&self.sorteio, "a data em que a semente é conhecida")?,
            vacancies,
            documents: (!documents.is_empty()).then_some(documents),
            certificate_validity_days: None,
        })
    }
}

async fn list(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    list_page(&state, &user, OpenForm::default(), None).await
}

async fn list_page(
    state: &AppState,
    user: &OfficeUser,
    form: OpenForm,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let rows = state.store().list_editais().await?;
    let reg = state.store().registry().await?;
    let rules = reg.law().rules.clone();
    let today = state.clock().today();
    let others: Vec<&Edital> = rows.iter().map(|r| &r.edital).collect();
    let free = free_places(&reg, &others);
    let cap = sync_core::rules::office::taxi_cap(&rules);
    let fleet = sync_core::rules::office::fleet_size(&reg);
    let documents = if form.documentos.trim().is_empty() {
        selection::default_documents().join("\n")
    } else {
        form.documentos.clone()
    };
    let body = html! {
        p {
            "As vagas dos pontos são preenchidas por edital publicado com antecedência mínima de 20 dias "
            "(art. 4º), na ordem do art. 3º: permissionários por antiguidade, motoristas auxiliares com um "
            "ano de exercício, e novos inscritos por sorteio. O cadastro conta " (fleet) " táxis para o limite de "
            (cap) " do art. 14."
        }
        section aria-labelledby="h-editais" {
            h2 #h-editais { "Editais" }
            @if rows.is_empty() {
                p #sem-editais { "Nenhum edital aberto até agora." }
            } @else {
                div .tabela-rolavel role="region" aria-labelledby="legenda-editais" tabindex="0" {
                table #tabela-editais {
                    caption #legenda-editais { "Editais de chamamento" }
                    thead { tr { th scope="col" { "Edital" } th scope="col" { "Publicação" } th scope="col" { "Inscrições" } th scope="col" { "Vagas" } th scope="col" { "Inscritos" } th scope="col" { "Etapa" } } }
                    tbody {
                        @for r in &rows {
                            tr id=(format!("edital-{}", r.id)) {
                                td { a id=(format!("abrir-edital-{}", r.id)) href=(edital_url(&r.id)) { (r.edital.number) } }
                                td { (date_br(r.edital.published_on)) }
                                td { (date_br(r.edital.applications_from)) " a " (date_br(r.edital.applications_until)) }
                                td { (r.edital.places()) }
                                td { (r.edital.candidates.len()) }
                                td { (r.edital.stage(today).label_pt()) }
                            }
                        }
                    }
                }
                }
            }
        }
        section aria-labelledby="h-abrir" {
            h2 #h-abrir { "Abrir um edital" }
            @if let Some(e) = &error { (e) }
            (post_form(user, "/escritorio/editais", "form-abrir-edital", html! {
                fieldset {
                    legend { "Edital" }
                    (text_field("edital-id", "id", "Identificador (letras, algarismos e hífen; ex.: 2027-01)", &form.id, true))
                    (text_field("edital-numero", "numero", "Número impresso (ex.: 001/2027)", &form.numero, true))
                    (date_field("edital-publicacao", "publicacao", "Publicação na imprensa local", &form.publicacao, true))
                    (date_field("edital-inicio", "inicio", "Início das inscrições (20 dias ou mais após a publicação)", &form.inicio, true))
                    (date_field("edital-fim", "fim", "Fim das inscrições", &form.fim, true))
                    (date_field("edital-referencia", "referencia", "Data de verificação dos requisitos (em branco: fim das inscrições)", &form.referencia, false))
                    (text_field("edital-semente-fonte", "fonte", "Fonte pública da semente do sorteio (ex.: os cinco prêmios da extração nº 6.012 da Loteria Federal)", &form.fonte, true))
                    (date_field("edital-sorteio", "sorteio", "Data em que a semente é conhecida (após as inscrições)", &form.sorteio, true))
                    (textarea_field("edital-documentos", "documentos", "Documentos exigidos, um por linha (art. 4º, parágrafo único)", &documents, true))
                }
                fieldset {
                    legend { "Vagas oferecidas por ponto" }
                    @if free.iter().all(|(_, _, n)| *n <= 0) {
                        p #sem-vagas-livres { "Nenhum ponto tem vaga livre: abra vagas no ponto (dentro do limite do art. 14) ou declare vago um alvará antes do edital." }
                    }
                    @for (stand_id, name, n) in &free {
                        @if *n > 0 {
                            @let id = format!("vagas-{stand_id}");
                            div .campo {
                                label for=(id) { (name) " — " (plural(usize::try_from(*n).unwrap_or(0), "vaga livre", "vagas livres")) }
                                input type="number" min="0" max=(n) id=(id) name=(id) value=(form.places.get(&id).cloned().unwrap_or_default());
                            }
                        }
                    }
                }
                div .acoes { (submit("abrir-edital", "Abrir o edital")) }
            }))
        }
    };
    Ok(page(Some(user), "Editais", flash, body))
}

/// Each stand's free places for a new edital: places, less the permits in force, less what the
/// other editais hold there (the kernel's count, so the form offers what `open` accepts).
fn free_places(reg: &Registry, others: &[&Edital]) -> Vec<(String, String, i64)> {
    reg.stands
        .iter()
        .map(|s| {
            let live = reg
                .permits
                .iter()
                .filter(|p| {
                    p.stand_id == s.id
                        && !matches!(p.state, sync_core::domain::PermitState::Revoked { .. })
                })
                .count();
            let held: u64 = others
                .iter()
                .filter_map(|e| e.open_places_at(&s.id))
                .map(u64::from)
                .sum();
            let free = i64::from(s.vacancies)
                - i64::try_from(live).unwrap_or(i64::MAX)
                - i64::try_from(held).unwrap_or(i64::MAX);
            (s.id.clone(), s.name.clone(), free)
        })
        .collect()
}

async fn open(
    State(state): State<AppState>,
    Posted { user, form }: Posted<OpenForm>,
) -> Result<Response, PageError> {
    let result = match form.request() {
        Ok(req) => act::open(&state, &user, req).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(id) => {
            user.flash(
                true,
                format!("Edital {id} aberto. Publique-o na imprensa local na data informada."),
            )
            .await;
            Ok(see_other(&edital_url(&id)))
        }
        Err(e) => {
            let (status, markup) = on_page(e, "abrir-edital")?;
            let page = list_page(&state, &user, form, Some(markup)).await?;
            Ok((status, page).into_response())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The edital's page
// ---------------------------------------------------------------------------------------------

/// What the forms of the edital's page hold after a refusal, and the refusal.
#[derive(Debug, Default)]
struct Kept {
    candidate: CandidateForm,
    appeal: AppealForm,
    /// (form id, refusal)
    error: Option<(String, Markup)>,
}

impl Kept {
    fn error_for(&self, form: &str) -> Option<&Markup> {
        self.error
            .as_ref()
            .filter(|(f, _)| f == form)
            .map(|(_, m)| m)
    }
}

async fn detail(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    detail_page(&state, &user, &id, Kept::default()).await
}

fn group_text(g: Option<Group>) -> &'static str {
    match g {
        Some(Group::Holder) => "I",
        Some(Group::Auxiliary) => "II",
        Some(Group::NewRegistrant) => "III",
        None => "recusado",
    }
}

async fn detail_page(
    state: &AppState,
    user: &OfficeUser,
    id: &str,
    kept: Kept,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let Some(row) = state.store().edital(id.to_owned()).await? else {
        return Err(PageError::not_found(format!("O edital {id} não existe.")));
    };
    let e = &row.edital;
    let reg = state.store().registry().await?;
    let today = state.clock().today();
    let stage = e.stage(today);
    let stand_name = |sid: &str| {
        reg.stands
            .iter()
            .find(|s| s.id == sid)
            .map_or_else(|| sid.to_owned(), |s| s.name.clone())
    };
    let base = edital_url(&e.id);
    let ranked = selection::classification(e);
    let form_id = |f: &str| format!("{base}/{f}");
    let body = html! {
        p #etapa-edital role="status" { strong { "Etapa: " } (stage.label_pt()) "." }
        p {
            "Publicado em " (date_br(e.published_on)) "; inscrições de " (date_br(e.applications_from))
            " a " (date_br(e.applications_until)) "; requisitos verificados em " (date_br(e.reference_date))
            "; semente: " (e.seed_source) ", conhecida em " (date_br(e.draw_on)) ". "
            a #pdf-edital href=(format!("{base}/edital.pdf")) { "Texto do edital (PDF)" }
        }
        ul #vagas-edital {
            @for v in &e.vacancies {
                li { (stand_name(&v.stand_id)) ": " (plural(usize::try_from(v.places).unwrap_or(0), "vaga", "vagas")) }
            }
        }
        details {
            summary { "Documentos exigidos e critérios" }
            ul { @for d in &e.documents { li { (d) } } }
            p { (e.criteria) }
        }

        section aria-labelledby="h-candidatos" {
            h2 #h-candidatos { "Inscritos" }
            @if e.candidates.is_empty() {
                p #sem-candidatos { "Nenhum inscrito." }
            } @else {
                div .tabela-rolavel role="region" aria-labelledby="legenda-candidatos" tabindex="0" {
                table #tabela-candidatos {
                    caption #legenda-candidatos { "Inscritos" }
                    thead { tr { th scope="col" { "Inscrição" } th scope="col" { "Nome" } th scope="col" { "CPF" } th scope="col" { "Inscrito em" } th scope="col" { "Preferências" } } }
                    tbody {
                        @for c in &e.candidates {
                            tr id=(format!("candidato-{}", c.inscription)) {
                                td { (c.inscription) }
                                td { (c.presented.name) }
                                td { (c.presented.cpf.masked()) }
                                td { (date_br(c.registered_on)) }
                                td {
                                    @if c.presented.preferences.is_empty() { "qualquer ponto" }
                                    @else { (c.presented.preferences.iter().map(|s| stand_name(s)).collect::<Vec<_>>().join(", ")) }
                                }
                            }
                        }
                    }
                }
                }
            }
            @if e.list.is_none() {
                @if today < e.applications_from {
                    p #inscricoes-fechadas { "As inscrições abrem em " (date_br(e.applications_from)) "." }
                } @else if today <= e.applications_until {
                    (candidate_form(user, &form_id("inscricoes"), e, &reg, &kept))
                } @else {
                    p { "As inscrições terminaram em " (date_br(e.applications_until)) ". Publique a lista para que cada inscrito seja avaliado." }
                    @if let Some(err) = kept.error_for("lista") { (err) }
                    (post_form(user, &form_id("lista"), "form-lista", html! { (submit("publicar-lista", "Publicar a lista de inscritos")) }))
                }
            }
        }

        @if let Some(list) = &e.list {
            section aria-labelledby="h-lista" {
                h2 #h-lista { "Lista publicada em " (date_br(list.published_on)) }
                p #resumo-lista {
                    (plural(list.entries.iter().filter(|x| x.eligible()).count(), "habilitado", "habilitados")) ", "
                    (plural(list.entries.iter().filter(|x| !x.eligible()).count(), "recusado", "recusados")) "."
                }
                div .tabela-rolavel role="region" aria-labelledby="legenda-lista" tabindex="0" {
                table #tabela-lista {
                    caption #legenda-lista { "Avaliação dos inscritos (art. 2º e art. 3º)" }
                    thead { tr { th scope="col" { "Inscrição" } th scope="col" { "Nome" } th scope="col" { "Grupo" } th scope="col" { "Antiguidade e evidência" } th scope="col" { "Motivos e avisos" } } }
                    tbody {
                        @for x in &list.entries {
                            tr id=(format!("lista-{}", x.inscription)) {
                                td { (x.inscription) }
                                td { (x.name) }
                                td { (group_text(x.group)) }
                                td { @if let Some(s) = x.since { "desde " (date_br(s)) ". " } (x.evidence) }
                                td {
                                    @if x.findings.is_empty() { "—" }
                                    @else { ul { @for f in &x.findings { li { (f.message) " (" (f.rule_id.as_str()) ", " (f.citation) ")" } } } }
                                }
                            }
                        }
                    }
                }
                }
            }
            section aria-labelledby="h-sorteio" {
                h2 #h-sorteio { "Sorteio do grupo III (art. 3º, III)" }
                p {
                    a #lista-sorteio href=(format!("{base}/lista-sorteio.txt")) { "Lista do sorteio (texto publicado)" }
                    " — SHA-256: " code #resumo-sha256 { (list.lottery_digest) }
                }
                @match &e.draw {
                    Some(d) => {
                        p #semente-sorteio { "Sorteio feito em " (date_br(d.drawn_on)) " com a semente «" (d.seed) "». Qualquer pessoa o refaz com a lista e a semente: taxi-fiscal lottery verify." }
                    }
                    None => {
                        @if list.entries.iter().all(|x| x.group != Some(Group::NewRegistrant)) {
                            p { "Não há inscritos no grupo III: não há sorteio." }
                        } @else if today < e.draw_on {
                            p #sorteio-aguarda { "A semente só é conhecida em " (date_br(e.draw_on)) " (" (e.seed_source) ")." }
                        } @else {
                            @if let Some(err) = kept.error_for("sorteio") { (err) }
                            (post_form(user, &form_id("sorteio"), "form-sorteio", html! {
                                (text_field("sorteio-semente", "semente", &format!("Semente: {}", e.seed_source), "", true))
                                p .dica { "O sorteio é feito uma única vez; confira a semente antes de sortear." }
                                (submit("sortear", "Sortear"))
                            }))
                        }
                    }
                }
            }
            section aria-labelledby="h-classificacao" {
                h2 #h-classificacao { "Classificação" }
                div .tabela-rolavel role="region" aria-labelledby="legenda-classificacao" tabindex="0" {
                table #tabela-classificacao {
                    caption #legenda-classificacao { "Ordem do art. 3º e vagas" }
                    thead { tr { th scope="col" { "Posição" } th scope="col" { "Inscrição" } th scope="col" { "Nome" } th scope="col" { "Grupo" } th scope="col" { "Vaga" } } }
                    tbody {
                        @for r in &ranked {
                            tr id=(format!("classificado-{}", r.inscription)) {
                                td { (r.position) }
                                td { (r.inscription) }
                                td { (r.name) }
                                td { (r.group.roman()) }
                                td {
                                    @if let Some(n) = r.excluded_by_appeal { "excluído pelo recurso nº " (n) }
                                    @else if let Some(s) = &r.stand_id { (stand_name(s)) }
                                    @else { "lista de espera" }
                                }
                            }
                        }
                    }
                }
                }
                @if e.result.is_none() {
                    @if e.draw.is_some() || list.entries.iter().all(|x| x.group != Some(Group::NewRegistrant)) {
                        @if let Some(err) = kept.error_for("resultado") { (err) }
                        (post_form(user, &form_id("resultado"), "form-resultado", html! {
                            p .dica { "A publicação abre o prazo de cinco dias para recurso ao Prefeito (art. 5º)." }
                            (submit("publicar-resultado", "Publicar o resultado"))
                        }))
                    }
                }
            }
        }

        @if let Some(result) = &e.result {
            section aria-labelledby="h-recursos" {
                h2 #h-recursos { "Resultado e recursos (art. 5º)" }
                p #prazo-recurso {
                    "Resultado publicado em " (date_br(result.published_on)) "; recursos até "
                    strong { (date_br(result.appeal_deadline.deadline)) }
                    @if !result.appeal_deadline.skipped.is_empty() { " (prorrogado: " (result.appeal_deadline.skipped.join("; ")) ")" }
                    ". " a #pdf-resultado href=(format!("{base}/resultado.pdf")) { "Resultado (PDF)" }
                }
                @if !e.appeals.is_empty() {
                    div .tabela-rolavel role="region" aria-labelledby="legenda-recursos" tabindex="0" {
                    table #tabela-recursos {
                        caption #legenda-recursos { "Recursos" }
                        thead { tr { th scope="col" { "Nº" } th scope="col" { "Recorrente" } th scope="col" { "Protocolo" } th scope="col" { "Razões" } th scope="col" { "Decisão" } } }
                        tbody {
                            @for a in &e.appeals {
                                tr id=(format!("recurso-{}", a.number)) {
                                    td { (a.number) }
                                    td { (a.appellant) @if let Some(i) = &a.inscription { " (inscrição " (i) ")" } }
                                    td { (date_br(a.filed_on)) @if !a.timely { " — " strong { "fora do prazo" } } }
                                    td { (a.grounds) }
                                    td {
                                        @match &a.decision {
                                            Some(d) => {
                                                (if d.granted { "provido" } else { "não provido" }) " em " (date_br(d.decided_on)) ": " (d.reasoning)
                                                @if let Some(x) = &d.excludes { " Exclui a inscrição " (x) "." }
                                            }
                                            None => { (decision_form(user, &base, a.number, a.timely, &ranked, &kept)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    }
                }
                @if let Some(err) = kept.error_for("recurso") { (err) }
                (post_form(user, &form_id("recursos"), "form-recurso", html! {
                    fieldset {
                        legend { "Registrar um recurso" }
                        (text_field("recurso-recorrente", "recorrente", "Quem recorre", &kept.appeal.recorrente, true))
                        (text_field("recurso-inscricao", "inscricao", "Inscrição de quem recorre (se candidato)", &kept.appeal.inscricao, false))
                        (date_field("recurso-data", "data", "Data do protocolo (em branco: hoje)", &kept.appeal.data, false))
                        (textarea_field("recurso-razoes", "razoes", "Razões", &kept.appeal.razoes, true))
                        (submit("registrar-recurso", "Registrar o recurso"))
                    }
                }))
            }
            section aria-labelledby="h-concessoes" {
                h2 #h-concessoes { "Concessão dos alvarás (art. 6º)" }
                @if stage != Stage::Final {
                    p #concessao-aguarda { "O alvará só é concedido depois do prazo de recurso e do julgamento dos recursos em prazo (art. 6º, I)." }
                }
                @if !e.grants.is_empty() {
                    table #tabela-concessoes {
                        caption { "Alvarás concedidos" }
                        thead { tr { th scope="col" { "Inscrição" } th scope="col" { "Alvará" } th scope="col" { "Ponto" } th scope="col" { "Data" } } }
                        tbody {
                            @for g in &e.grants {
                                tr {
                                    td { (g.inscription) }
                                    td { a href=(format!("/escritorio/alvaras/{}", url_encode(&g.permit_number))) { (g.permit_number) } }
                                    td { (stand_name(&g.stand_id)) }
                                    td { (date_br(g.granted_on)) }
                                }
                            }
                        }
                    }
                }
                @if stage == Stage::Final {
                    @for r in ranked.iter().filter(|r| r.stand_id.is_some() && !e.grants.iter().any(|g| g.inscription == r.inscription)) {
                        @let f = format!("concessao-{}", r.inscription);
                        @if let Some(err) = kept.error_for(&f) { (err) }
                        (post_form(user, &form_id("concessoes"), &format!("form-{f}"), html! {
                            fieldset .linha-form {
                                legend { (r.inscription) " — " (r.name) " (grupo " (r.group.roman()) "), vaga em " (stand_name(r.stand_id.as_deref().unwrap_or_default())) }
                                input type="hidden" name="inscricao" value=(r.inscription);
                                @if r.group == Group::Holder {
                                    p .dica { "O alvará do permissionário passa para este ponto (art. 9º: um único alvará)." }
                                } @else {
                                    (text_field(&format!("{f}-alvara"), "alvara", "Número do novo alvará", "", true))
                                    (text_field(&format!("{f}-veiculo"), "veiculo", "Veículo cadastrado (art. 30)", "", true))
                                }
                                (submit(&format!("conceder-{}", r.inscription), "Conceder o alvará"))
                            }
                        }))
                    }
                }
            }
        }
    };
    Ok(page(
        Some(user),
        &format!("Edital {}", e.number),
        flash,
        body,
    ))
}

fn decision_form(
    user: &OfficeUser,
    base: &str,
    number: u32,
    timely: bool,
    ranked: &[selection::Ranked],
    kept: &Kept,
) -> Markup {
    let f = format!("decisao-{number}");
    let mut exclude = vec![(String::new(), String::from("ninguém"))];
    exclude.extend(ranked.iter().filter(|r| r.stand_id.is_some()).map(|r| {
        (
            r.inscription.clone(),
            format!("{} — {}", r.inscription, r.name),
        )
    }));
    let outcomes = if timely {
        vec![
            (String::from("nao"), String::from("não provido")),
            (String::from("sim"), String::from("provido")),
        ]
    } else {
        vec![(
            String::from("nao"),
            String::from("não conhecido (fora do prazo)"),
        )]
    };
    html! {
        @if let Some(err) = kept.error_for(&f) { (err) }
        (post_form(user, &format!("{base}/recursos/{number}/decisao"), &format!("form-{f}"), html! {
            (select_field(&format!("{f}-provido"), "provido", "Decisão", &outcomes, "nao"))
            (textarea_field(&format!("{f}-fundamentacao"), "fundamentacao", "Fundamentação", "", true))
            @if timely { (select_field(&format!("{f}-exclui"), "exclui", "Excluir da escolha", &exclude, "")) }
            (submit(&format!("decidir-{number}"), "Registrar a decisão"))
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Default, Deserialize)]
struct CandidateForm {
    #[serde(default)]
    cpf: String,
    #[serde(default)]
    nome: String,
    #[serde(default)]
    nascimento: String,
    #[serde(default)]
    cnh: String,
    #[serde(default)]
    categoria: String,
    #[serde(default)]
    primeira: String,
    #[serde(default)]
    validade: String,
    #[serde(default)]
    tipo: String,
    #[serde(default)]
    observacoes: String,
    #[serde(default)]
    residencia: String,
    #[serde(default)]
    antecedentes: String,
    #[serde(default)]
    antecedentes_ok: Option<String>,
    #[serde(default)]
    atestado: String,
    #[serde(default)]
    atestado_ok: Option<String>,
    #[serde(default)]
    exercicio: Option<String>,
    #[serde(default)]
    preferencias: String,
}

impl CandidateForm {
    /// The request, with what the registry holds for the CPF where the clerk left blanks.
    fn request(&self, reg: &Registry) -> Result<NewCandidate, AppError> {
        let cpf = Cpf::parse(self.cpf.trim())
            .map_err(|e| bad("invalid_cpf", format!("CPF inválido: {e}.")))?;
        let known = reg.index().person_by_cpf(&cpf).cloned();
        let or_known = |typed: &str, known: Option<String>| {
            if typed.trim().is_empty() {
                known.unwrap_or_default()
            } else {
                typed.trim().to_owned()
            }
        };
        let name = or_known(&self.nome, known.as_ref().map(|p| p.name.clone()));
        let birth_date = match (
            date_or_none(&self.nascimento, "a data de nascimento")?,
            &known,
        ) {
            (Some(d), _) => d,
            (None, Some(p)) => p.birth_date,
            (None, None) => return Err(bad("missing_date", "Informe a data de nascimento.")),
        };
        let licence = if self.cnh.trim().is_empty() {
            match &known {
                Some(p) => p.licence.clone(),
                None => return Err(bad("missing_licence", "Informe o número da CNH.")),
            }
        } else {
            DriverLicence {
                number: CnhNumber::parse(self.cnh.trim())
                    .map_err(|e| bad("invalid_cnh", format!("CNH inválida: {e}.")))?,
                category: self.categoria.trim().to_uppercase(),
                first_licence_date: date_required(&self.primeira, "a data da 1ª habilitação")?,
                expiry: date_required(&self.validade, "a validade da CNH")?,
                kind: if self.tipo.trim() == "P" {
                    LicenceKind::P
                } else {
                    LicenceKind::D
                },
                observations: self
                    .observacoes
                    .split(',')
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .map(str::to_owned)
                    .collect(),
            }
        };
        let certificate =
            |on: &str, ok: &Option<String>, what: &str| -> Result<Option<Certificate>, AppError> {
                Ok(date_or_none(on, what)?.map(|issued_on| Certificate {
                    issued_on,
                    favourable: ok.is_some(),
                }))
            };
        Ok(NewCandidate {
            name,
            cpf,
            birth_date,
            licence,
            residence_since: date_or_none(&self.residencia, "a data do comprovante de residência")?,
            criminal_record: certificate(
                &self.antecedentes,
                &self.antecedentes_ok,
                "a data da certidão de antecedentes",
            )?,
            medical: certificate(
                &self.atestado,
                &self.atestado_ok,
                "a data do atestado médico",
            )?,
            activity_proof: self.exercicio.is_some(),
            preferences: self
                .preferencias
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }
}

fn candidate_form(
    user: &OfficeUser,
    action: &str,
    e: &Edital,
    reg: &Registry,
    kept: &Kept,
) -> Markup {
    let c = &kept.candidate;
    let kinds = vec![
        (String::from("D"), String::from("definitiva (D)")),
        (
            String::from("P"),
            String::from("Permissão para Dirigir (P)"),
        ),
    ];
    let stands: Vec<String> = e
        .vacancies
        .iter()
        .map(|v| {
            let name = reg
                .stands
                .iter()
                .find(|s| s.id == v.stand_id)
                .map_or("", |s| s.name.as_str());
            format!("{} ({name})", v.stand_id)
        })
        .collect();
    html! {
        @if let Some(err) = kept.error_for("inscricao") { (err) }
        (post_form(user, action, "form-inscricao", html! {
            fieldset {
                legend { "Inscrever um candidato (art. 2º)" }
                p .dica { "Para quem já está no cadastro (permissionário ou auxiliar), basta o CPF: nome, nascimento e CNH vêm do cadastro se ficarem em branco." }
                (text_field("inscricao-cpf", "cpf", "CPF", &c.cpf, true))
                (text_field("inscricao-nome", "nome", "Nome (como na identidade)", &c.nome, false))
                (date_field("inscricao-nascimento", "nascimento", "Data de nascimento (identidade)", &c.nascimento, false))
                (text_field("inscricao-cnh", "cnh", "Nº de registro da CNH", &c.cnh, false))
                (text_field("inscricao-categoria", "categoria", "Categoria da CNH", &c.categoria, false))
                (date_field("inscricao-primeira", "primeira", "Data da 1ª habilitação", &c.primeira, false))
                (date_field("inscricao-validade", "validade", "Validade da CNH", &c.validade, false))
                (select_field("inscricao-tipo", "tipo", "Tipo da CNH", &kinds, if c.tipo == "P" { "P" } else { "D" }))
                (text_field("inscricao-observacoes", "observacoes", "Observações da CNH, separadas por vírgula (ex.: EAR)", &c.observacoes, false))
            }
            fieldset {
                legend { "Documentos apresentados" }
                (date_field("inscricao-residencia", "residencia", "Reside no Município desde (comprovante; art. 2º, III)", &c.residencia, false))
                (date_field("inscricao-antecedentes", "antecedentes", "Certidão de antecedentes criminais emitida em (art. 2º, IV)", &c.antecedentes, false))
                div .campo {
                    input type="checkbox" id="inscricao-antecedentes-ok" name="antecedentes_ok" value="sim" checked[c.antecedentes_ok.is_some()];
                    label for="inscricao-antecedentes-ok" { "Certidão negativa (nada consta)" }
                }
                (date_field("inscricao-atestado", "atestado", "Atestado médico emitido em (art. 2º, V)", &c.atestado, false))
                div .campo {
                    input type="checkbox" id="inscricao-atestado-ok" name="atestado_ok" value="sim" checked[c.atestado_ok.is_some()];
                    label for="inscricao-atestado-ok" { "Atestado declara apto para a atividade" }
                }
                div .campo {
                    input type="checkbox" id="inscricao-exercicio" name="exercicio" value="sim" checked[c.exercicio.is_some()];
                    label for="inscricao-exercicio" { "Motorista auxiliar: apresentou comprovante de um ano de exercício (art. 3º, II)" }
                }
                (text_field("inscricao-preferencias", "preferencias", &format!("Pontos de preferência, em ordem, separados por vírgula (em branco: qualquer): {}", stands.join(", ")), &c.preferencias, false))
            }
            (submit("inscrever", "Inscrever"))
        }))
    }
}

async fn register(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<CandidateForm>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let result = match form.request(&reg) {
        Ok(req) => act::register(&state, &user, &id, req).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(inscription) => {
            user.flash(true, format!("Candidato inscrito sob o nº {inscription}."))
                .await;
            Ok(see_other(&format!("{}#h-candidatos", edital_url(&id))))
        }
        Err(e) => {
            let (status, markup) = on_page(e, "inscricao")?;
            let kept = Kept {
                candidate: form,
                error: Some(("inscricao".into(), markup)),
                ..Kept::default()
            };
            Ok((status, detail_page(&state, &user, &id, kept).await?).into_response())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The other steps
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Default, Deserialize)]
struct Empty {}

/// Runs a step and answers as every step does: back to the edital with a message, or the page
/// again with the refusal above form `form`.
async fn step(
    state: &AppState,
    user: &OfficeUser,
    id: &str,
    form: &str,
    kept: Kept,
    result: Result<String, AppError>,
) -> Result<Response, PageError> {
    match result {
        Ok(message) => {
            user.flash(true, message).await;
            Ok(see_other(&edital_url(id)))
        }
        Err(e) => {
            let (status, markup) = on_page(e, form)?;
            let kept = Kept {
                error: Some((form.to_owned(), markup)),
                ..kept
            };
            Ok((status, detail_page(state, user, id, kept).await?).into_response())
        }
    }
}

async fn publish_list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted {
        user,
        form: Empty {},
    }: Posted<Empty>,
) -> Result<Response, PageError> {
    let r = act::publish_list(&state, &user, &id).await.map(|_| {
        String::from(
            "Lista publicada: cada inscrito foi avaliado na data de verificação do edital.",
        )
    });
    step(&state, &user, &id, "lista", Kept::default(), r).await
}

#[derive(Debug, Clone, Default, Deserialize)]
struct DrawForm {
    #[serde(default)]
    semente: String,
}

async fn draw(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<DrawForm>,
) -> Result<Response, PageError> {
    let r = act::draw(&state, &user, &id, form.semente.clone())
        .await
        .map(|_| String::from("Sorteio feito; a ordem está na classificação."));
    step(&state, &user, &id, "sorteio", Kept::default(), r).await
}

async fn publish_result(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted {
        user,
        form: Empty {},
    }: Posted<Empty>,
) -> Result<Response, PageError> {
    let r = act::publish_result(&state, &user, &id)
        .await
        .map(|deadline| {
            format!(
                "Resultado publicado; recursos ao Prefeito até {} (art. 5º).",
                date_br(deadline)
            )
        });
    step(&state, &user, &id, "resultado", Kept::default(), r).await
}

#[derive(Debug, Clone, Default, Deserialize)]
struct AppealForm {
    #[serde(default)]
    recorrente: String,
    #[serde(default)]
    inscricao: String,
    #[serde(default)]
    data: String,
    #[serde(default)]
    razoes: String,
}

async fn file_appeal(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<AppealForm>,
) -> Result<Response, PageError> {
    let req = date_or_none(&form.data, "a data do protocolo").map(|filed_on| NewAppeal {
        appellant: form.recorrente.trim().to_owned(),
        inscription: Some(form.inscricao.trim().to_owned()).filter(|i| !i.is_empty()),
        filed_on,
        grounds: form.razoes.trim().to_owned(),
    });
    let r = match req {
        Ok(req) => act::file_appeal(&state, &user, &id, req).await.map(|(number, timely)| {
            if timely {
                format!("Recurso nº {number} registrado, no prazo: as concessões aguardam a decisão.")
            } else {
                format!("Recurso nº {number} registrado fora do prazo do art. 5º: a escolha já é definitiva para ele.")
            }
        }),
        Err(e) => Err(e),
    };
    let kept = Kept {
        appeal: form,
        ..Kept::default()
    };
    step(&state, &user, &id, "recurso", kept, r).await
}

#[derive(Debug, Clone, Default, Deserialize)]
struct DecisionForm {
    #[serde(default)]
    provido: String,
    #[serde(default)]
    fundamentacao: String,
    #[serde(default)]
    exclui: String,
}

async fn decide_appeal(
    State(state): State<AppState>,
    Path((id, number)): Path<(String, u32)>,
    Posted { user, form }: Posted<DecisionForm>,
) -> Result<Response, PageError> {
    let granted = form.provido == "sim";
    let excludes = Some(form.exclui.trim().to_owned()).filter(|x| !x.is_empty());
    let r = act::decide_appeal(
        &state,
        &user,
        &id,
        number,
        granted,
        form.fundamentacao.clone(),
        excludes,
    )
    .await
    .map(|_| format!("Decisão do recurso nº {number} registrada."));
    step(
        &state,
        &user,
        &id,
        &format!("decisao-{number}"),
        Kept::default(),
        r,
    )
    .await
}

#[derive(Debug, Clone, Default, Deserialize)]
struct GrantForm {
    #[serde(default)]
    inscricao: String,
    #[serde(default)]
    alvara: String,
    #[serde(default)]
    veiculo: String,
}

async fn grant(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<GrantForm>,
) -> Result<Response, PageError> {
    let inscription = form.inscricao.trim().to_owned();
    let permit = Some(form.alvara.trim().to_owned()).filter(|x| !x.is_empty());
    let vehicle = Some(form.veiculo.trim().to_owned()).filter(|x| !x.is_empty());
    let r = act::grant(&state, &user, &id, inscription.clone(), permit, vehicle)
        .await
        .map(|number| format!("Alvará {number} concedido à inscrição {inscription}."));
    step(
        &state,
        &user,
        &id,
        &format!("concessao-{inscription}"),
        Kept::default(),
        r,
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// Published texts
// ---------------------------------------------------------------------------------------------

async fn lottery_text(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let text = crate::selection::lottery_text(state.services(), &user.auth, &id)
        .await
        .map_err(AppError::from)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

async fn edital_pdf(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    Ok(act::edital_pdf(&state, &user, &id).await?)
}

async fn result_pdf(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    Ok(act::result_pdf(&state, &user, &id).await?)
}

/// The pages' calls into the selection service ([`crate::selection`], the same as the API's),
/// in one place, each answering what the page's message needs.
mod act {
    use super::*;
    use crate::selection as svc;

    pub(super) async fn open(
        state: &AppState,
        user: &OfficeUser,
        req: NewEdital,
    ) -> Result<String, AppError> {
        Ok(svc::open(state.services(), &user.auth, req)
            .await?
            .edital
            .id)
    }

    pub(super) async fn register(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
        req: NewCandidate,
    ) -> Result<String, AppError> {
        let view = svc::register(state.services(), &user.auth, id, req).await?;
        Ok(view
            .edital
            .candidates
            .last()
            .map(|c| c.inscription.clone())
            .unwrap_or_default())
    }

    pub(super) async fn publish_list(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
    ) -> Result<(), AppError> {
        svc::publish_list(state.services(), &user.auth, id).await?;
        Ok(())
    }

    pub(super) async fn draw(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
        seed: String,
    ) -> Result<(), AppError> {
        svc::draw(state.services(), &user.auth, id, svc::DrawRequest { seed }).await?;
        Ok(())
    }

    /// The last day of the art. 5 window the result opened.
    pub(super) async fn publish_result(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
    ) -> Result<NaiveDate, AppError> {
        let view = svc::publish_result(state.services(), &user.auth, id).await?;
        Ok(view
            .edital
            .result
            .map(|r| r.appeal_deadline.deadline)
            .unwrap_or(view.updated_at.date_naive()))
    }

    /// The appeal's number and whether it was in time.
    pub(super) async fn file_appeal(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
        req: NewAppeal,
    ) -> Result<(u32, bool), AppError> {
        let view = svc::file_appeal(state.services(), &user.auth, id, req).await?;
        Ok(view
            .edital
            .appeals
            .last()
            .map_or((0, false), |a| (a.number, a.timely)))
    }

    pub(super) async fn decide_appeal(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
        number: u32,
        granted: bool,
        reasoning: String,
        excludes: Option<String>,
    ) -> Result<(), AppError> {
        let ruling = svc::AppealRuling {
            granted,
            reasoning,
            excludes,
        };
        svc::decide_appeal(state.services(), &user.auth, id, number, ruling).await?;
        Ok(())
    }

    /// The permit granted (group I: the holder's, moved).
    pub(super) async fn grant(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
        inscription: String,
        permit_number: Option<String>,
        vehicle_id: Option<String>,
    ) -> Result<String, AppError> {
        let req = svc::GrantRequest {
            inscription,
            permit_number,
            vehicle_id,
        };
        Ok(svc::grant(state.services(), &user.auth, id, req)
            .await?
            .permit_number)
    }

    pub(super) async fn edital_pdf(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
    ) -> Result<Response, AppError> {
        let (name, bytes) = svc::print::edital_pdf(state.services(), &user.auth, id).await?;
        Ok(crate::api::office::pdf_response(&name, bytes))
    }

    pub(super) async fn result_pdf(
        state: &AppState,
        user: &OfficeUser,
        id: &str,
    ) -> Result<Response, AppError> {
        let (name, bytes) = svc::print::result_pdf(state.services(), &user.auth, id).await?;
        Ok(crate::api::office::pdf_response(&name, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_form_reads_each_stands_places() {
        let form: OpenForm = serde_urlencoded::from_str(
            "csrf=x&id=2027-01&numero=001%2F2027&publicacao=2027-01-04&inicio=25%2F01%2F2027\
             &fim=2027-02-05&referencia=&sorteio=2027-02-10&fonte=Loteria\
             &documentos=A%0D%0A%0D%0AB&vagas-S01=2&vagas-S02=0&vagas-S03=",
        )
        .unwrap();
        let req = form.request().unwrap();
        assert_eq!(
            req.vacancies,
            [Vacancy {
                stand_id: "S01".into(),
                places: 2
            }]
        );
        assert_eq!(
            req.applications_from,
            NaiveDate::from_ymd_opt(2027, 1, 25).unwrap()
        );
        assert_eq!(req.reference_date, None);
        assert_eq!(req.documents, Some(vec!["A".to_owned(), "B".to_owned()]));
        let form: OpenForm = serde_urlencoded::from_str("publicacao=ontem&vagas-S01=dois").unwrap();
        let e = form.request().unwrap_err();
        assert!(e.message.contains("«dois»"), "{}", e.message);
    }

    #[test]
    fn a_registered_cpf_fills_what_the_clerk_left_blank() {
        let reg = sync_core::testkit::sample_registry();
        let p01 = &reg.people[0];
        let form = CandidateForm {
            cpf: p01.cpf.as_str().to_owned(),
            residencia: "2000-01-01".into(),
            antecedentes: "2027-01-20".into(),
            antecedentes_ok: Some("sim".into()),
            preferencias: "S01, S02".into(),
            ..CandidateForm::default()
        };
        let req = form.request(&reg).unwrap();
        assert_eq!(req.name, p01.name);
        assert_eq!(req.licence, p01.licence);
        assert_eq!(req.birth_date, p01.birth_date);
        assert_eq!(
            req.criminal_record,
            Some(Certificate {
                issued_on: NaiveDate::from_ymd_opt(2027, 1, 20).unwrap(),
                favourable: true
            })
        );
        assert_eq!(req.medical, None);
        assert_eq!(req.preferences, ["S01", "S02"]);
        // A CPF the registry does not know needs the data typed.
        let stranger = CandidateForm {
            cpf: sync_core::testkit::STRANGER_CPF.into(),
            ..CandidateForm::default()
        };
        let e = stranger.request(&reg).unwrap_err();
        assert!(e.message.contains("nascimento"), "{}", e.message);
    }
}
