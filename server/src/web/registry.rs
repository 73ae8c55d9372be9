//! The registry of alvarás in the office pages: the list with search, one permit with its
//! holder, auxiliaries, vehicle, stand, penalties and fines, the forms for an auxiliary driver
//! (add, art. 8; remove), the permit's state (suspension, revocation, succession,
//! reinstatement), renewal (art. 7), transfer (art. 10) and swap of stands (art. 11), the grant
//! of a new permit, and the CSV import and export (`docs/registry-csv.md`).
//!
//! Every change goes through the same function as the JSON API, one of
//! [`crate::api::registry::write`] (the CSV import too) — the role, today's date, the server's rules, the session's
//! user and device as the audit actor, the same audit action, one new registry version. A form
//! is read field by field first ([`Fields`], every mistake listed at once); a refusal by the
//! law is shown above its form with every finding (rule, article, message), status 422, the
//! typed values kept ([`after_write`], which the people, vehicles and stands pages use too).
//! Every POST of these pages is read under `limits::REGISTRY_FORM_BODY_LIMIT`.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/alvaras?busca=…&ponto=…&situacao=…&ordem=…&sentido=…&pagina=…` | `form-busca-alvaras`, `busca-alvaras`, `filtro-ponto-alvaras`, `filtro-situacao-alvaras` (`ativo`, `suspenso`, `cassado`, `sucessao`, `nao-renovado`), `buscar-alvaras`, `resumo-cadastro`, `total-alvaras`, `exportar-alvaras`, `tabela-alvaras` (header links `ordenar-alvara-{column}`, rows `alvara-{número}`, links `abrir-alvara-{número}`), `sem-resultados` |
//! | `GET /escritorio/alvaras.csv?…` | the list as filtered and sorted, as a spreadsheet ([`super::listing::Csv`]) |
//! | `GET /escritorio/alvaras/{número}` | `situacao-alvara`, `titular`, `auxiliares` (rows `auxiliar-{pessoa}`), `veiculo`, `ponto`, `penalidades` (`tabela-penalidades`, rows `penalidade-{id}`), `multas` (`tabela-multas`, rows `multa-{id}`, on unpaid ones `pagar-multa-{id}` to the fines page), `transferencias` |
//! | `POST …/auxiliares` | `form-auxiliar`, `auxiliar-pessoa` (a person's code), `auxiliar-alvara` (prefilled `{número}-A{n}`), `auxiliar-data`, `incluir-auxiliar`, error `erro-auxiliar`; `auxiliares-no-limite` when the permit has two |
//! | `POST …/auxiliares/{pessoa}/remover` | one form per auxiliary row, button `remover-auxiliar-{pessoa}`; error `erro-remover-auxiliar` |
//! | `POST …/situacao` | `form-situacao`, `situacao-nova` (`ativo`, `suspenso`, `cassado`, `sucessao`), `situacao-inicio` (empty: today), `situacao-fim` (a suspension's last day), `mudar-situacao`, error `erro-situacao` |
//! | `GET`/`POST /escritorio/alvaras/novo` | linked from the list as `conceder-alvara`; `form-concessao`, `concessao-numero` (prefilled with the next number), `concessao-titular`, `concessao-veiculo`, `concessao-ponto`, `concessao-servico` (empty: the stand's), `concessao-expedicao` (empty: today), `concessao-edital`, `conceder`, error `erro-concessao` |
//! | `POST …/renovacao` | `form-renovacao`, `renovacao-ano`, `renovar`, error `erro-renovacao` (with `multas-pendentes`, links `erro-renovacao-multa-{id}`, when the permit has an unpaid fine) |
//! | `POST …/transferencia` | `form-transferencia`, `transferencia-para`, `transferencia-motivo`, `transferir`, error `erro-transferencia` |
//! | `POST …/permuta` | `form-permuta`, `permuta-com`, `permuta-taxa`, `permutar`, error `erro-permuta` |
//! | `GET`/`POST /escritorio/cadastro/importar` | `form-importar` (multipart), `arquivo-csv`, `importar`, `baixar-csv`; on bad rows `erro-importacao`, `total-erros`, `tabela-erros-csv` (rows `erro-linha-{n}`) |
//! | `GET /escritorio/cadastro/exportar` | the registry as CSV (the import layout) |
//!
//! Search (`busca`): a plate in any spelling (old or Mercosul form), a permit number (`7` finds
//! `0007`), a CPF, or part of the name of the holder or of an auxiliary (accents and case
//! ignored). Success redirects to the permit page with a message (`#aviso`).

use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use chrono::{Datelike, NaiveDate};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;
use sync_core::domain::{
    Cpf, Permit, PermitState, Person, Plate, Registry, RegistryIndex, ServiceKind, StandSchedule,
    TransferReason,
};

use super::fines::payment_link;
use super::layout::{
    date_br, date_field, money, page, penalty_label, post_form, see_other, select_field, submit,
    text_field,
};
use super::listing::{self, Column, Columns, Csv, Dir, Key, Params, Sort, sort_rows};
use super::session::{FormLimit, OfficeUser, Posted, check_origin};
use super::{PageError, url_encode};
use crate::api::registry::write;
use crate::auth::roles;
use crate::error::AppError;
use crate::limits::{MAX_REGISTRY_TEXT_CHARS, REGISTRY_FORM_BODY_LIMIT};
use crate::registry::{RegistryUpdate, ops};
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/alvaras", get(list))
        .route("/escritorio/alvaras.csv", get(export_list))
        .route("/escritorio/alvaras/{number}", get(show))
        .route("/escritorio/alvaras/{number}/renovacao", post(renew))
        .route("/escritorio/alvaras/{number}/transferencia", post(transfer))
        .route("/escritorio/alvaras/{number}/permuta", post(swap))
        .route("/escritorio/alvaras/novo", get(grant_form).post(grant))
        .route(
            "/escritorio/alvaras/{number}/auxiliares",
            post(add_auxiliary),
        )
        .route(
            "/escritorio/alvaras/{number}/auxiliares/{person}/remover",
            post(remove_auxiliary),
        )
        .route("/escritorio/alvaras/{number}/situacao", post(set_state))
        .route(
            "/escritorio/cadastro/importar",
            get(import_form).post(import),
        )
        .route("/escritorio/cadastro/exportar", get(export))
        .layer(Extension(FormLimit(REGISTRY_FORM_BODY_LIMIT)))
}

/// Rows per page of the lists (permits, people, vehicles).
pub(super) const PAGE_SIZE: usize = 50;

// ---------------------------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------------------------

fn state_label(state: &PermitState) -> String {
    match state {
        PermitState::Active => "ativo".into(),
        PermitState::Suspended { from, until } => {
            format!("suspenso de {} a {}", date_br(*from), date_br(*until))
        }
        PermitState::Revoked { on } => format!("cassado em {}", date_br(*on)),
        PermitState::InSuccession { since } => {
            format!("em sucessão desde {} (art. 1º, § 4º)", date_br(*since))
        }
    }
}

fn schedule_label(s: StandSchedule) -> &'static str {
    match s {
        StandSchedule::Day => "06h às 20h (art. 16, I)",
        StandSchedule::Extended => "06h às 24h (art. 16, I)",
    }
}

fn service_label(s: ServiceKind) -> &'static str {
    match s {
        ServiceKind::Common => "táxi comum",
        ServiceKind::RadioTaxi => "rádio-táxi (art. 23)",
    }
}

/// The states the state form offers: (form value, label). The dates come from the form.
const STATES: &[(&str, &str)] = &[
    ("ativo", "ativo (reativar)"),
    ("suspenso", "suspenso (de/até)"),
    ("cassado", "cassado (art. 32, V)"),
    ("sucessao", "em sucessão: titular falecido (art. 1º, § 4º)"),
];

fn state_value(state: &PermitState) -> &'static str {
    match state {
        PermitState::Active => "ativo",
        PermitState::Suspended { .. } => "suspenso",
        PermitState::Revoked { .. } => "cassado",
        PermitState::InSuccession { .. } => "sucessao",
    }
}

/// Transfer reasons as the form offers them: (form value, label, reason).
const REASONS: &[(&str, &str, TransferReason)] = &[
    (
        "voluntaria",
        "voluntária (após 2 anos de exercício, art. 10, I)",
        TransferReason::Voluntary,
    ),
    (
        "falecimento",
        "falecimento do titular",
        TransferReason::Death,
    ),
    (
        "aposentadoria",
        "aposentadoria do titular",
        TransferReason::Retirement,
    ),
    (
        "doenca",
        "doença que impede o trabalho por mais de 6 meses",
        TransferReason::Illness,
    ),
];

fn reason_label(r: TransferReason) -> &'static str {
    REASONS
        .iter()
        .find(|(_, _, x)| *x == r)
        .map_or("", |(_, l, _)| l)
}

// ---------------------------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------------------------

/// Lower case without the accents of Portuguese, for name search.
pub(super) fn fold(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            other => other,
        })
        .collect()
}

/// The search text, parsed once for the whole list (see the module doc).
struct Search {
    text: String,
    /// The digits of the text, when it is nothing but digits and punctuation.
    digits: String,
    plate: Option<Plate>,
    /// Folded, for names.
    needle: String,
}

impl Search {
    fn new(q: &str) -> Self {
        let text = q.trim().to_owned();
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        Self {
            plate: Plate::parse(&text).ok(),
            needle: fold(&text),
            digits,
            text,
        }
    }

    /// Whether permit `p` matches.
    fn matches(&self, index: &RegistryIndex<'_>, p: &Permit) -> bool {
        if self.text.is_empty() {
            return true;
        }
        // Permit number: exact, or digits padded to the registry's four places.
        let only_digits = !self.digits.is_empty() && self.digits.len() == self.text.len();
        if p.number.eq_ignore_ascii_case(&self.text)
            || (only_digits && p.number == format!("{:0>4}", self.digits))
        {
            return true;
        }
        if let Some(plate) = &self.plate
            && index
                .vehicle(&p.vehicle_id)
                .is_some_and(|v| v.plate.same_vehicle(plate))
        {
            return true;
        }
        let people = std::iter::once(p.holder_id.as_str())
            .chain(p.auxiliaries.iter().map(|a| a.person_id.as_str()))
            .filter_map(|id| index.person(id));
        people.into_iter().any(|x| {
            (self.digits.len() == 11 && x.cpf.as_str() == self.digits)
                || fold(&x.name).contains(&self.needle)
        })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
struct ListQuery {
    #[serde(default)]
    busca: Option<String>,
    #[serde(default)]
    ponto: Option<String>,
    #[serde(default)]
    situacao: Option<String>,
    #[serde(default)]
    ordem: Option<String>,
    #[serde(default)]
    sentido: Option<String>,
    #[serde(default)]
    pagina: Option<usize>,
}

/// The permits list's columns; by number by default (the prontuário order of the counter).
const PERMIT_COLUMNS: Columns = Columns {
    columns: &[
        Column::asc("alvara", "Alvará"),
        Column::asc("titular", "Titular"),
        Column::asc("placa", "Placa"),
        Column::asc("ponto", "Ponto"),
        Column::asc("situacao", "Situação"),
        Column::desc("renovado", "Renovado para"),
    ],
    default_key: "alvara",
    default_dir: Dir::Asc,
    id_prefix: "ordenar-alvara",
};

/// A permit's situation for the list's filter: its state, except that a permit not renewed by
/// the law's deadline (R11, art. 7, judged by the kernel) is "não renovado" until its cassação
/// is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Situation {
    Active,
    Suspended,
    Revoked,
    InSuccession,
    Lapsed,
}

impl Situation {
    const ALL: [Situation; 5] = [
        Situation::Active,
        Situation::Suspended,
        Situation::Revoked,
        Situation::InSuccession,
        Situation::Lapsed,
    ];

    fn of(p: &Permit, today: NaiveDate, reg: &Registry) -> Self {
        match p.state {
            PermitState::Revoked { .. } => Situation::Revoked,
            _ if sync_core::rules::office::permit_lapsed(p, today, &reg.law().rules) => {
                Situation::Lapsed
            }
            PermitState::Active => Situation::Active,
            PermitState::Suspended { .. } => Situation::Suspended,
            PermitState::InSuccession { .. } => Situation::InSuccession,
        }
    }

    /// The query value (`situacao=`).
    fn key(self) -> &'static str {
        match self {
            Situation::Active => "ativo",
            Situation::Suspended => "suspenso",
            Situation::Revoked => "cassado",
            Situation::InSuccession => "sucessao",
            Situation::Lapsed => "nao-renovado",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Situation::Active => "ativos",
            Situation::Suspended => "suspensos",
            Situation::Revoked => "cassados",
            Situation::InSuccession => "em sucessão",
            Situation::Lapsed => "não renovados no prazo (art. 7º)",
        }
    }
}

/// The situation shown in the list's cell.
fn situation_text(p: &Permit, situation: Situation) -> String {
    match situation {
        Situation::Lapsed => format!(
            "{}, mas não renovado para {} no prazo (art. 7º)",
            state_label(&p.state),
            p.renewal_year.saturating_add(1)
        ),
        _ => state_label(&p.state),
    }
}

/// One row of the permits list: the permit and the texts it is shown and sorted by.
struct PermitRow<'a> {
    permit: &'a Permit,
    holder: String,
    plate: String,
    stand: String,
    situation: String,
}

impl ListQuery {
    fn sort(&self) -> Sort {
        PERMIT_COLUMNS.parse(self.ordem.as_deref(), self.sentido.as_deref())
    }

    fn situation(&self) -> Option<Situation> {
        let asked = trimmed(&self.situacao);
        Situation::ALL.into_iter().find(|s| s.key() == asked)
    }

    fn params(&self) -> Params {
        Params::default()
            .with("busca", trimmed(&self.busca))
            .with("ponto", trimmed(&self.ponto))
            .with("situacao", self.situation().map_or("", Situation::key))
    }

    /// The permits matching the filters, sorted.
    fn rows<'a>(&self, reg: &'a Registry, today: NaiveDate) -> Vec<PermitRow<'a>> {
        let index = reg.index();
        let ponto = trimmed(&self.ponto);
        let search = Search::new(&trimmed(&self.busca));
        let situation = self.situation();
        let mut rows: Vec<PermitRow<'a>> = reg
            .permits
            .iter()
            .filter(|p| ponto.is_empty() || p.stand_id == ponto)
            .filter(|p| search.matches(&index, p))
            .filter_map(|p| {
                let s = Situation::of(p, today, reg);
                situation.is_none_or(|want| want == s).then(|| PermitRow {
                    permit: p,
                    holder: index
                        .person(&p.holder_id)
                        .map_or_else(|| "?".to_owned(), |x| x.name.clone()),
                    plate: index
                        .vehicle(&p.vehicle_id)
                        .map_or_else(|| "?".to_owned(), |v| v.plate.canonical().to_owned()),
                    stand: index
                        .stand(&p.stand_id)
                        .map_or(p.stand_id.clone(), |s| format!("{} – {}", s.id, s.name)),
                    situation: situation_text(p, s),
                })
            })
            .collect();
        rows.sort_by(|a, b| a.permit.number.cmp(&b.permit.number));
        let sort = self.sort();
        sort_rows(&mut rows, sort.dir, |r| match sort.key {
            "titular" => Key::text(&r.holder),
            "placa" => Key::text(&r.plate),
            "ponto" => Key::text(&r.stand),
            "situacao" => Key::text(&r.situation),
            "renovado" => Key::Int(i64::from(r.permit.renewal_year)),
            _ => Key::text(&r.permit.number),
        });
        rows
    }
}

fn trimmed(s: &Option<String>) -> String {
    s.as_deref().map(str::trim).unwrap_or_default().to_owned()
}

async fn list(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let busca = trimmed(&q.busca);
    let ponto = trimmed(&q.ponto);
    let sort = q.sort();
    let found = q.rows(&reg, state.clock().today());
    let pages = found.len().div_ceil(PAGE_SIZE).max(1);
    let page_no = q.pagina.unwrap_or(1).clamp(1, pages);
    let shown = found.iter().skip((page_no - 1) * PAGE_SIZE).take(PAGE_SIZE);
    let live = reg
        .permits
        .iter()
        .filter(|p| !matches!(p.state, PermitState::Revoked { .. }))
        .count();
    let cap = sync_core::rules::office::taxi_cap(&reg.law().rules);
    let mut stands = vec![(String::new(), String::from("todos os pontos"))];
    stands.extend(
        reg.stands
            .iter()
            .map(|s| (s.id.clone(), format!("{} – {}", s.id, s.name))),
    );
    let mut situations = vec![(String::new(), String::from("todas"))];
    situations.extend(
        Situation::ALL
            .iter()
            .map(|s| (s.key().to_owned(), s.label().to_owned())),
    );
    let link = |n: usize| {
        q.params()
            .with_sort(&PERMIT_COLUMNS, &sort)
            .with("pagina", n.to_string())
            .url("/escritorio/alvaras")
    };
    let order_link = |s: &Sort| {
        q.params()
            .with_sort(&PERMIT_COLUMNS, s)
            .url("/escritorio/alvaras")
    };
    let export = q
        .params()
        .with_sort(&PERMIT_COLUMNS, &sort)
        .url("/escritorio/alvaras.csv");
    let body = html! {
        p #resumo-cadastro {
            "Cadastro na versão " (reg.version) ": " (live) " alvarás vigentes (não cassados) de "
            (reg.permits.len()) "; limite do art. 14: " (cap) "."
        }
        p {
            a #conceder-alvara href="/escritorio/alvaras/novo" { "Conceder um alvará" } " · "
            a href="/escritorio/cadastro/importar" { "Importar o cadastro (CSV)" } " · "
            a href="/escritorio/cadastro/exportar" { "Baixar o cadastro em CSV" }
        }
        form .filtros method="get" action="/escritorio/alvaras" id="form-busca-alvaras" role="search" {
            (text_field("busca-alvaras", "busca", "Placa, número do alvará, CPF ou nome", &busca, false))
            (select_field("filtro-ponto-alvaras", "ponto", "Ponto", &stands, &ponto))
            (select_field("filtro-situacao-alvaras", "situacao", "Situação", &situations, q.situation().map_or("", Situation::key)))
            @if sort != PERMIT_COLUMNS.default() {
                input type="hidden" name="ordem" value=(sort.key);
                input type="hidden" name="sentido" value=(sort.dir.as_str());
            }
            div .acoes { (submit("buscar-alvaras", "Buscar")) }
        }
        p #total-alvaras role="status" {
            (super::layout::plural(found.len(), "alvará encontrado", "alvarás encontrados"))
            @if pages > 1 { " — página " (page_no) " de " (pages) }
            @if !found.is_empty() {
                ". " a #exportar-alvaras .nao-imprimir href=(export) { "Exportar esta lista para planilha (CSV)" }
            }
        }
        @if found.is_empty() {
            p #sem-resultados { "Nenhum alvará corresponde à busca." }
        } @else {
            div .tabela-rolavel role="region" aria-labelledby="legenda-alvaras" tabindex="0" {
            table #tabela-alvaras {
                caption #legenda-alvaras { "Alvarás (prontuários)" }
                thead { (PERMIT_COLUMNS.header(&sort, &order_link)) }
                tbody {
                    @for r in shown {
                        @let p = r.permit;
                        tr id=(format!("alvara-{}", p.number)) {
                            td { a id=(format!("abrir-alvara-{}", p.number)) href=(format!("/escritorio/alvaras/{}", url_encode(&p.number))) { (p.number) } }
                            td { (r.holder) }
                            td { (r.plate) }
                            td { (r.stand) }
                            td { (r.situation) }
                            td { (p.renewal_year) }
                        }
                    }
                }
            }
            }
            @if pages > 1 {
                nav aria-label="Páginas" {
                    @if page_no > 1 { a id="pagina-anterior" href=(link(page_no - 1)) { "Página anterior" } " " }
                    @if page_no < pages { a id="pagina-seguinte" href=(link(page_no + 1)) { "Próxima página" } }
                }
            }
        }
    };
    Ok(page(Some(&user), "Alvarás", flash, body))
}

/// `GET /escritorio/alvaras.csv`: the permits list as filtered and sorted on the page.
async fn export_list(
    State(state): State<AppState>,
    _user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let rows = q.rows(&reg, state.clock().today());
    listing::check_export(rows.len() as u64)
        .map_err(|m| PageError::Status(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    let mut csv = Csv::new(&PERMIT_COLUMNS.labels());
    for r in &rows {
        csv.row([
            r.permit.number.clone(),
            r.holder.clone(),
            r.plate.clone(),
            r.stand.clone(),
            r.situation.clone(),
            r.permit.renewal_year.to_string(),
        ]);
    }
    Ok(csv.into_response("alvaras.csv"))
}

// ---------------------------------------------------------------------------------------------
// One permit
// ---------------------------------------------------------------------------------------------

/// What the forms of the permit page hold, and the error to show above one of them.
#[derive(Debug, Clone, Default)]
struct Forms {
    year: String,
    transfer_to: String,
    transfer_reason: String,
    swap_with: String,
    swap_fee: bool,
    aux_person: String,
    aux_licence: String,
    aux_date: String,
    state_kind: String,
    state_from: String,
    state_until: String,
    /// (form id, error markup)
    error: Option<(&'static str, Markup)>,
}

/// The error of a refused change: every finding of a legal refusal (rule, article, message),
/// else the message. Only for 4xx errors; the caller turns 5xx into a page error.
pub(super) fn refusal_box(id: &str, e: &AppError) -> Markup {
    let findings: Vec<Value> = e
        .details
        .as_ref()
        .and_then(|d| d.get("findings"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let s = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let errors: Vec<String> = e
        .details
        .as_ref()
        .and_then(|d| d.get("errors"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    html! {
        div id=(id) .erro role="alert" tabindex="-1" {
            @if !errors.is_empty() {
                p { strong { "Não foi feito: " } (e.message) }
                ul { @for m in &errors { li { (m) } } }
            } @else if findings.is_empty() {
                p { strong { "Não foi feito: " } (e.message) }
            } @else {
                p { strong { "Não foi feito: " } "a Lei 4.019/2004 não permite esta alteração." }
                ul {
                    @for f in &findings {
                        li {
                            strong { (s(f, "rule_id")) } " (" (s(f, "citation")) "): " (s(f, "message"))
                        }
                    }
                }
            }
            p .dica { "Nada foi gravado; o que foi digitado continua no formulário." }
        }
    }
}

fn person_block(p: Option<&Person>, today: NaiveDate) -> Markup {
    let Some(p) = p else {
        return html! { p { "Pessoa ausente do cadastro." } };
    };
    let expired = p.licence.expiry < today;
    html! {
        dl {
            dt { "Nome" } dd { (p.name) " (" (p.id) ")" }
            dt { "CPF" } dd { (p.cpf.masked()) }
            dt { "Nascimento" } dd { (date_br(p.birth_date)) }
            dt { "CNH" } dd {
                (p.licence.number.as_str()) ", categoria " (p.licence.category)
                ", validade " (date_br(p.licence.expiry))
                @if expired { strong { " — vencida" } }
                @if !p.licence.observations.is_empty() {
                    ", observações: " (p.licence.observations.join(", "))
                }
            }
        }
    }
}

async fn permit_page(
    state: &AppState,
    user: &OfficeUser,
    number: &str,
    forms: Forms,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let index = reg.index();
    let Some(p) = index.permit(number) else {
        return Err(PageError::not_found(format!(
            "O alvará {number} não consta do cadastro."
        )));
    };
    let today = state.clock().today();
    let vehicle = index.vehicle(&p.vehicle_id);
    let stand = index.stand(&p.stand_id);
    let penalties = index.penalties_of(&p.number);
    let fines = index.fines_of(&p.number);
    let unpaid: Vec<_> = fines.iter().filter(|f| f.paid_on.is_none()).collect();
    let transfers: Vec<_> = reg
        .transfers
        .iter()
        .filter(|t| t.permit_number == p.number)
        .collect();
    let name_of = |id: &str| index.person(id).map_or(id.to_owned(), |x| x.name.clone());
    let base = format!("/escritorio/alvaras/{}", url_encode(&p.number));
    let error_for = |form: &str| {
        forms
            .error
            .as_ref()
            .filter(|(f, _)| *f == form)
            .map(|(_, m)| m.clone())
    };
    let year = if forms.year.is_empty() {
        today.year().to_string()
    } else {
        forms.year.clone()
    };
    let reasons: Vec<(String, String)> = REASONS
        .iter()
        .map(|(v, l, _)| ((*v).to_owned(), (*l).to_owned()))
        .collect();
    let reason = if forms.transfer_reason.is_empty() {
        "voluntaria"
    } else {
        forms.transfer_reason.as_str()
    };
    let mut aux_people = vec![(String::new(), String::from("— escolha a pessoa —"))];
    aux_people.extend(people_options(&reg));
    let aux_licence = if forms.aux_licence.is_empty() && forms.error.is_none() {
        format!("{}-A{}", p.number, p.auxiliaries.len() + 1)
    } else {
        forms.aux_licence.clone()
    };
    let state_options: Vec<(String, String)> = STATES
        .iter()
        .map(|(v, l)| ((*v).to_owned(), (*l).to_owned()))
        .collect();
    let state_kind = if forms.state_kind.is_empty() {
        state_value(&p.state).to_owned()
    } else {
        forms.state_kind.clone()
    };
    let body = html! {
        p { a href="/escritorio/alvaras" { "← Voltar à lista de alvarás" } }
        section #situacao-alvara aria-labelledby="h-situacao" {
            h2 #h-situacao { "Situação" }
            dl {
                dt { "Situação" } dd { (state_label(&p.state)) }
                dt { "Serviço" } dd { (service_label(p.service)) }
                dt { "Expedido em" } dd { (date_br(p.issued_on)) }
                dt { "Renovado para" } dd {
                    (p.renewal_year)
                    @if p.renewal_year < today.year() {
                        strong { " — não renovado para " (today.year()) " (art. 7º)" }
                    }
                }
                @if let Some(d) = p.edital_date { dt { "Edital de chamamento" } dd { (date_br(d)) } }
            }
        }
        section #titular aria-labelledby="h-titular" {
            h2 #h-titular { "Titular (permissionário)" }
            (person_block(index.person(&p.holder_id), today))
        }
        section #auxiliares aria-labelledby="h-auxiliares" {
            h2 #h-auxiliares { "Motoristas auxiliares (art. 8º: no máximo 2)" }
            @if let Some(m) = error_for("form-remover-auxiliar") { (m) }
            @if p.auxiliaries.is_empty() {
                p { "Nenhum motorista auxiliar registrado." }
            } @else {
                table {
                    thead { tr {
                        th scope="col" { "Nome" } th scope="col" { "Alvará do auxiliar" }
                        th scope="col" { "Registrado em" } th scope="col" { "CNH válida até" }
                        th scope="col" { "Remover" }
                    } }
                    tbody {
                        @for a in &p.auxiliaries {
                            @let person = index.person(&a.person_id);
                            @let name = person.map_or(a.person_id.clone(), |x| x.name.clone());
                            tr id=(format!("auxiliar-{}", a.person_id)) {
                                td { (name) }
                                td { (a.licence_number) }
                                td { (date_br(a.registered_on)) }
                                td {
                                    @if let Some(x) = person {
                                        (date_br(x.licence.expiry))
                                        @if x.licence.expiry < today { strong { " — vencida" } }
                                    }
                                }
                                td {
                                    (post_form(user, &format!("{base}/auxiliares/{}/remover", url_encode(&a.person_id)), &format!("form-remover-{}", a.person_id), html! {
                                        button type="submit" id=(format!("remover-auxiliar-{}", a.person_id)) { "Remover " (name) " deste alvará" }
                                    }))
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(m) = error_for("form-auxiliar") { (m) }
            @if p.auxiliaries.len() >= 2 {
                p .dica #auxiliares-no-limite { "Este alvará já tem os dois motoristas auxiliares que o art. 8º permite: remova um antes de incluir outro." }
            }
            (post_form(user, &format!("{base}/auxiliares"), "form-auxiliar", html! {
                fieldset .linha-form {
                    legend { "Incluir um motorista auxiliar (art. 8º)" }
                    (select_field("auxiliar-pessoa", "pessoa", "Pessoa do cadastro (cadastre-a antes em Pessoas)", &aux_people, &forms.aux_person))
                    (text_field("auxiliar-alvara", "alvara", "Número do alvará do auxiliar", &aux_licence, true))
                    (date_field("auxiliar-data", "data", "Registrado em (em branco: hoje)", &forms.aux_date, false))
                    (submit("incluir-auxiliar", "Incluir o motorista auxiliar"))
                }
            }))
        }
        section #veiculo aria-labelledby="h-veiculo" {
            h2 #h-veiculo { "Veículo" }
            @if let Some(v) = vehicle {
                dl {
                    dt { "Placa" } dd { (v.plate.canonical()) @if v.plate.raw() != v.plate.canonical() { " (" (v.plate.raw()) ")" } }
                    dt { "Marca/modelo" } dd { (v.make_model) ", " (v.colour) ", fabricado em " (v.year_of_manufacture) }
                    dt { "RENAVAM" } dd { (v.renavam.as_str()) }
                    dt { "Portas / lotação" } dd { (v.doors) " portas, " (v.capacity_incl_driver) " lugares com o condutor" }
                    dt { "Licenciamento" } dd { (v.licensing_municipality) "/" (v.licensing_uf) }
                    dt { "Taxímetro" } dd {
                        @match &v.taximeter {
                            Some(t) => {
                                "aferido em " (date_br(t.verified_on))
                                @if let Some(y) = t.valid_until_year { ", válido até " (y) }
                                @if let Some(c) = &t.certificate_number { ", certificado " (c) }
                                @if !t.seal_intact { strong { ", lacre rompido" } }
                            }
                            None => { strong { "sem aferição registrada" } }
                        }
                    }
                }
            } @else {
                p { "Veículo ausente do cadastro." }
            }
        }
        section #ponto aria-labelledby="h-ponto" {
            h2 #h-ponto { "Ponto" }
            @if let Some(s) = stand {
                dl {
                    dt { "Ponto" } dd { (s.id) " – " (s.name) }
                    dt { "Endereço" } dd { (s.address) }
                    dt { "Horário obrigatório" } dd { (schedule_label(s.schedule)) }
                    dt { "Coordenador (art. 17)" } dd {
                        @match &s.coordinator_id { Some(c) => { (name_of(c)) }, None => { "nenhum" } }
                    }
                }
            } @else {
                p { "Ponto " (p.stand_id) " ausente do cadastro." }
            }
        }
        section #penalidades aria-labelledby="h-penalidades" {
            h2 #h-penalidades { "Penalidades (art. 32)" }
            @if penalties.is_empty() {
                p { "Nenhuma penalidade registrada." }
            } @else {
                table #tabela-penalidades {
                    thead { tr {
                        th scope="col" { "Número" } th scope="col" { "Penalidade" } th scope="col" { "Pessoa" }
                        th scope="col" { "Decidida em" } th scope="col" { "Início" } th scope="col" { "Registro de campo" }
                    } }
                    tbody {
                        @for pen in &penalties {
                            tr id=(format!("penalidade-{}", pen.id)) {
                                td { (pen.id) }
                                td {
                                    (penalty_label(&pen.kind))
                                    @if let Some(last) = pen.suspension_last_day() {
                                        ", até " (date_br(last))
                                        @if pen.starts_on <= today && today <= last { strong { " — em vigor" } }
                                    }
                                }
                                td { (pen.person_id.as_deref().map_or(String::from("—"), name_of)) }
                                td { (date_br(pen.decided_on)) }
                                td { (date_br(pen.starts_on)) }
                                td {
                                    @match &pen.record_id {
                                        Some(r) => { a href=(format!("/escritorio/registros/{}", url_encode(r))) { "abrir registro" } }
                                        None => { "—" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section #multas aria-labelledby="h-multas" {
            h2 #h-multas { "Multas" }
            @if fines.is_empty() {
                p { "Nenhuma multa registrada." }
            } @else {
                table #tabela-multas {
                    thead { tr {
                        th scope="col" { "Número" } th scope="col" { "Valor" }
                        th scope="col" { "Lançada em" } th scope="col" { "Pagamento" }
                    } }
                    tbody {
                        @for f in &fines {
                            tr id=(format!("multa-{}", f.id)) {
                                td { (f.id) }
                                td { (money(f.amount)) }
                                td { (date_br(f.issued_on)) }
                                td {
                                    @match f.paid_on {
                                        Some(d) => { "paga em " (date_br(d)) }
                                        None => {
                                            strong { "não paga" } " (impede a renovação, art. 17, § 2º, III) — "
                                            a id=(format!("pagar-multa-{}", f.id)) href=(payment_link(&f.id)) { "registrar o pagamento" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !transfers.is_empty() {
            section #transferencias aria-labelledby="h-transferencias" {
                h2 #h-transferencias { "Transferências (art. 10)" }
                ul {
                    @for t in &transfers {
                        li { (date_br(t.on)) ": de " (name_of(&t.from_person_id)) " para " (name_of(&t.to_person_id)) " — " (reason_label(t.reason)) }
                    }
                }
            }
        }
        section #alteracoes aria-labelledby="h-alteracoes" {
            h2 #h-alteracoes { "Alterações do alvará" }
            p .dica { "Cada alteração é conferida com a lei antes de gravada e gera uma nova versão do cadastro, que os tablets recebem na próxima sincronização." }
            @if let Some(m) = error_for("form-situacao") { (m) }
            (post_form(user, &format!("{base}/situacao"), "form-situacao", html! {
                fieldset .linha-form {
                    legend { "Situação do alvará (suspensão, cassação, sucessão, reativação)" }
                    (select_field("situacao-nova", "situacao", "Nova situação", &state_options, &state_kind))
                    (date_field("situacao-inicio", "inicio", "A partir de (em branco: hoje)", &forms.state_from, false))
                    (date_field("situacao-fim", "fim", "Último dia da suspensão (só para suspensão)", &forms.state_until, false))
                    (submit("mudar-situacao", "Mudar a situação"))
                }
            }))
            @if let Some(m) = error_for("form-renovacao") {
                (m)
                // The unpaid fines that bar it (art. 17, § 2º, III), one click from their payment.
                @if !unpaid.is_empty() {
                    p #multas-pendentes {
                        "Para renovar, registre antes o pagamento: "
                        @for f in &unpaid {
                            a id=(format!("erro-renovacao-multa-{}", f.id)) href=(payment_link(&f.id)) { "multa " (f.id) } " "
                        }
                    }
                }
            }
            (post_form(user, &format!("{base}/renovacao"), "form-renovacao", html! {
                fieldset .linha-form {
                    legend { "Renovação anual (art. 7º)" }
                    (text_field("renovacao-ano", "ano", "Ano da renovação", &year, true))
                    (submit("renovar", "Renovar o alvará"))
                }
            }))
            @if let Some(m) = error_for("form-transferencia") { (m) }
            (post_form(user, &format!("{base}/transferencia"), "form-transferencia", html! {
                fieldset .linha-form {
                legend { "Transferência (art. 10)" }
                (text_field("transferencia-para", "para", "Novo titular: CPF ou código da pessoa no cadastro (ex.: P0123)", &forms.transfer_to, true))
                (select_field("transferencia-motivo", "motivo", "Motivo", &reasons, reason))
                (submit("transferir", "Transferir o alvará"))
                }
            }))
            @if let Some(m) = error_for("form-permuta") { (m) }
            (post_form(user, &format!("{base}/permuta"), "form-permuta", html! {
                fieldset .linha-form {
                    legend { "Permuta de ponto (art. 11)" }
                    (text_field("permuta-com", "com", "Alvará do outro permissionário", &forms.swap_with, true))
                    p {
                        input type="checkbox" id="permuta-taxa" name="taxa" value="sim" checked[forms.swap_fee];
                        " "
                        label for="permuta-taxa" { "Taxa de permuta paga (art. 11)" }
                    }
                    (submit("permutar", "Permutar os pontos"))
                }
            }))
        }
    };
    Ok(page(
        Some(user),
        &format!("Alvará {}", p.number),
        flash,
        body,
    ))
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(number): Path<String>,
) -> Result<Markup, PageError> {
    permit_page(&state, &user, &number, Forms::default()).await
}

/// After a change: a message and back to the permit page; on a 4xx, the page again with the
/// error above `form_id` and what was typed.
async fn answer(
    state: &AppState,
    user: &OfficeUser,
    number: &str,
    result: Result<RegistryUpdate, AppError>,
    done: String,
    form_id: &'static str,
    mut forms: Forms,
) -> Result<Response, PageError> {
    let error = format!("erro-{}", form_id.trim_start_matches("form-"));
    let to = format!("/escritorio/alvaras/{}", url_encode(number));
    after_write(user, result, &done, &to, &error, |shown| async move {
        forms.error = Some((form_id, shown));
        permit_page(state, user, number, forms).await
    })
    .await
}

/// What the flash says after a write: `done` and the new version (or that nothing changed),
/// then what the law still finds and did not refuse, each with its rule and article.
pub(super) fn done_text(done: &str, u: &RegistryUpdate) -> String {
    let mut text = if u.changed {
        format!("{done} Cadastro na versão {}.", u.version)
    } else {
        format!(
            "Nada mudou: o cadastro já estava assim (versão {}).",
            u.version
        )
    };
    for w in &u.warnings {
        text.push_str(&format!(
            " Atenção ({}, {}): {}",
            w.rule_id, w.citation, w.message
        ));
    }
    text
}

/// The end of every registry form's POST: on success the flash ([`done_text`]) and a 303 to
/// `to`; on a refusal the user can act on (4xx but 403: the law, a conflict, bad input, a
/// missing entity) the page again from `again`, given the error box (id `error_id`), status 422
/// (409 for a conflict); anything else is a page error.
pub(super) async fn after_write<Fut>(
    user: &OfficeUser,
    result: Result<RegistryUpdate, AppError>,
    done: &str,
    to: &str,
    error_id: &str,
    again: impl FnOnce(Markup) -> Fut,
) -> Result<Response, PageError>
where
    Fut: std::future::Future<Output = Result<Markup, PageError>>,
{
    match result {
        Ok(u) => {
            user.flash(true, done_text(done, &u)).await;
            Ok(see_other(to))
        }
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => {
            // A missing entity named in a form is the form's mistake, not a missing page.
            let status = if e.status == StatusCode::NOT_FOUND {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                e.status
            };
            let markup = again(refusal_box(error_id, &e)).await?;
            Ok((status, markup).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// The fields of a registry form read one by one, each mistake kept with the field's label, so
/// that the page says every one at once ([`Fields::finish`]) and nothing is written until all
/// are right. Every text is checked against [`MAX_REGISTRY_TEXT_CHARS`] before anything else
/// reads it (so no message echoes a huge input).
#[derive(Debug, Default)]
pub(super) struct Fields {
    errors: Vec<String>,
}

impl Fields {
    /// A mistake found outside the helpers (one sentence).
    pub(super) fn error(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }

    /// The trimmed text; empty when too long (said) or, if `required`, missing (said).
    pub(super) fn text(&mut self, label: &str, value: &str, required: bool) -> String {
        let t = value.trim();
        if t.chars().count() > MAX_REGISTRY_TEXT_CHARS {
            self.error(format!(
                "O campo «{label}» tem mais de {MAX_REGISTRY_TEXT_CHARS} caracteres."
            ));
            return String::new();
        }
        if required && t.is_empty() {
            self.error(format!("Preencha o campo «{label}»."));
        }
        t.to_owned()
    }

    /// A date as a date input sends it (`aaaa-mm-dd`) or as typed (`dd/mm/aaaa`); `None` when
    /// empty (said if `required`) or invalid (said).
    pub(super) fn date(&mut self, label: &str, value: &str, required: bool) -> Option<NaiveDate> {
        let t = self.text(label, value, required);
        if t.is_empty() {
            return None;
        }
        let d = parse_date(&t);
        if d.is_none() {
            self.error(format!(
                "O campo «{label}» não é uma data válida: «{t}» (use dia/mês/ano)."
            ));
        }
        d
    }

    /// A whole number in `range` (required).
    pub(super) fn number<T>(
        &mut self,
        label: &str,
        value: &str,
        range: std::ops::RangeInclusive<T>,
    ) -> Option<T>
    where
        T: std::str::FromStr + PartialOrd + std::fmt::Display,
    {
        let t = self.text(label, value, true);
        if t.is_empty() {
            return None;
        }
        match t.parse::<T>() {
            Ok(n) if range.contains(&n) => Some(n),
            _ => {
                self.error(format!(
                    "O campo «{label}» deve ser um número de {} a {}; foi digitado «{t}».",
                    range.start(),
                    range.end()
                ));
                None
            }
        }
    }

    /// A document number or plate read by the kernel's parser (CPF, CNH, RENAVAM, plate),
    /// whose Portuguese reason is shown (required).
    pub(super) fn parsed<T>(
        &mut self,
        label: &str,
        value: &str,
        parse: impl Fn(&str) -> Result<T, sync_core::domain::DomainError>,
    ) -> Option<T> {
        let t = self.text(label, value, true);
        if t.is_empty() {
            return None;
        }
        match parse(&t) {
            Ok(v) => Some(v),
            Err(e) => {
                let m = e.to_string();
                let mut chars = m.chars();
                let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
                self.error(format!("{}{}.", first.unwrap_or_default(), chars.as_str()));
                None
            }
        }
    }

    /// `Ok` when every field was right, else a 422 listing every mistake.
    pub(super) fn finish(self) -> Result<(), AppError> {
        if self.errors.is_empty() {
            return Ok(());
        }
        let message = if self.errors.len() == 1 {
            String::from("confira o campo abaixo.")
        } else {
            format!("confira os {} campos abaixo.", self.errors.len())
        };
        Err(AppError::unprocessable("invalid_form", message)
            .with_details(serde_json::json!({ "errors": self.errors })))
    }
}

/// `aaaa-mm-dd` (what a date input sends) or `dd/mm/aaaa`.
pub(super) fn parse_date(t: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(t, "%d/%m/%Y"))
        .ok()
}

/// A date for a date input's `value` (`aaaa-mm-dd`).
pub(super) fn date_value(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// The people of the registry as select options, by name: "Nome — CPF (código)", valued by id.
pub(super) fn people_options(reg: &Registry) -> Vec<(String, String)> {
    let mut people: Vec<&Person> = reg.people.iter().collect();
    people.sort_by(|a, b| fold(&a.name).cmp(&fold(&b.name)).then(a.id.cmp(&b.id)));
    people
        .into_iter()
        .map(|p| {
            (
                p.id.clone(),
                format!("{} — CPF {} ({})", p.name, p.cpf.masked(), p.id),
            )
        })
        .collect()
}

/// The next free code `PREFIX` + four digits after the highest in use (`P0243`), offered in a
/// new entity's form (the office may type another).
pub(super) fn next_code<'a>(prefix: &str, ids: impl Iterator<Item = &'a str>) -> String {
    let max = ids
        .filter_map(|id| id.strip_prefix(prefix))
        .filter_map(|n| n.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("{prefix}{:04}", max.saturating_add(1))
}

/// "Página anterior · Próxima página" of a list of `total` rows shown [`PAGE_SIZE`] at a time;
/// returns the rows to skip on page `page` (clamped) and the links (`link(n)` is page n's URL).
pub(super) fn pager(total: usize, page: usize, link: impl Fn(usize) -> String) -> (usize, Markup) {
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page = page.clamp(1, pages);
    let nav = html! {
        @if pages > 1 {
            nav aria-label="Páginas" {
                "Página " (page) " de " (pages) ". "
                @if page > 1 { a id="pagina-anterior" href=(link(page - 1)) { "Página anterior" } " " }
                @if page < pages { a id="pagina-seguinte" href=(link(page + 1)) { "Próxima página" } }
            }
        }
    };
    ((page - 1) * PAGE_SIZE, nav)
}

#[derive(Debug, Deserialize)]
struct RenewForm {
    #[serde(default)]
    ano: String,
}

async fn renew(
    State(state): State<AppState>,
    Path(number): Path<String>,
    Posted { user, form }: Posted<RenewForm>,
) -> Result<Response, PageError> {
    user.auth.require(roles::REGISTRY_WRITERS)?;
    let forms = Forms {
        year: form.ano.clone(),
        ..Forms::default()
    };
    let result = match form.ano.trim().parse::<i32>() {
        Ok(year) if (2000..=2100).contains(&year) => {
            write::renew(&state, &user.auth, &number, ops::Renew { year }).await
        }
        _ => Err(AppError::unprocessable(
            "invalid_year",
            format!(
                "Ano inválido: «{}». Informe o ano com quatro dígitos, por exemplo {}.",
                form.ano.trim(),
                state.clock().today().year()
            ),
        )),
    };
    let done = format!("Alvará {number} renovado para {}.", form.ano.trim());
    answer(
        &state,
        &user,
        &number,
        result,
        done,
        "form-renovacao",
        forms,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct TransferForm {
    #[serde(default)]
    para: String,
    #[serde(default)]
    motivo: String,
}

/// A person of the registry by id (`P0123`) or CPF (any punctuation).
fn find_person<'r>(reg: &'r Registry, input: &str) -> Option<&'r Person> {
    let input = input.trim();
    let index = reg.index();
    index
        .person(input)
        .or_else(|| Cpf::parse(input).ok().and_then(|c| index.person_by_cpf(&c)))
}

async fn transfer(
    State(state): State<AppState>,
    Path(number): Path<String>,
    Posted { user, form }: Posted<TransferForm>,
) -> Result<Response, PageError> {
    user.auth.require(roles::REGISTRY_WRITERS)?;
    let forms = Forms {
        transfer_to: form.para.clone(),
        transfer_reason: form.motivo.clone(),
        ..Forms::default()
    };
    let reg = state.store().registry().await?;
    let reason = REASONS.iter().find(|(v, _, _)| *v == form.motivo.trim());
    let to = find_person(&reg, &form.para);
    let (result, done) = match (to, reason) {
        (Some(person), Some((_, _, reason))) => {
            let req = ops::TransferPermit {
                to_person_id: person.id.clone(),
                reason: *reason,
                // The permit keeps its vehicle, whose CRLV the office updates first.
                vehicle_id: None,
            };
            let done = format!("Alvará {number} transferido para {}.", person.name);
            let result = write::transfer(&state, &user.auth, &number, req).await;
            (result, done)
        }
        (None, _) => (
            Err(AppError::unprocessable(
                "person_not_found",
                format!(
                    "Ninguém no cadastro com o CPF ou código «{}»: cadastre a pessoa antes \
                     (ela precisa cumprir o art. 2º) ou confira o número.",
                    form.para.trim()
                ),
            )),
            String::new(),
        ),
        (_, None) => (
            Err(AppError::unprocessable(
                "invalid_reason",
                "Escolha o motivo da transferência.",
            )),
            String::new(),
        ),
    };
    answer(
        &state,
        &user,
        &number,
        result,
        done,
        "form-transferencia",
        forms,
    )
    .await
}

#[derive(Debug, Deserialize)]
struct SwapForm {
    #[serde(default)]
    com: String,
    #[serde(default)]
    taxa: Option<String>,
}

async fn swap(
    State(state): State<AppState>,
    Path(number): Path<String>,
    Posted { user, form }: Posted<SwapForm>,
) -> Result<Response, PageError> {
    user.auth.require(roles::REGISTRY_WRITERS)?;
    let other = form.com.trim().to_owned();
    let fee_paid = form.taxa.as_deref() == Some("sim");
    let forms = Forms {
        swap_with: form.com.clone(),
        swap_fee: fee_paid,
        ..Forms::default()
    };
    let result = if other.is_empty() {
        Err(AppError::unprocessable(
            "missing_permit",
            "Informe o número do alvará com que o ponto será permutado.",
        ))
    } else {
        let req = ops::Swap {
            permit_a: number.clone(),
            permit_b: other.clone(),
            fee_paid,
        };
        write::swap(&state, &user.auth, req).await
    };
    let done = format!("Pontos dos alvarás {number} e {other} permutados.");
    answer(&state, &user, &number, result, done, "form-permuta", forms).await
}

#[derive(Debug, Deserialize)]
struct AuxiliaryForm {
    #[serde(default)]
    pessoa: String,
    #[serde(default)]
    alvara: String,
    #[serde(default)]
    data: String,
}

async fn add_auxiliary(
    State(state): State<AppState>,
    Path(number): Path<String>,
    Posted { user, form }: Posted<AuxiliaryForm>,
) -> Result<Response, PageError> {
    let forms = Forms {
        aux_person: form.pessoa.clone(),
        aux_licence: form.alvara.clone(),
        aux_date: form.data.clone(),
        ..Forms::default()
    };
    let mut f = Fields::default();
    let person = f.text("Pessoa", &form.pessoa, false);
    if person.is_empty() {
        f.error("Escolha a pessoa que será motorista auxiliar.");
    }
    let licence_number = f.text("Número do alvará do auxiliar", &form.alvara, true);
    let registered_on = f.date("Registrado em", &form.data, false);
    let result = match f.finish() {
        Ok(()) => {
            let req = ops::AddAuxiliary {
                person_id: person.clone(),
                licence_number,
                registered_on,
            };
            write::add_auxiliary(&state, &user.auth, &number, req).await
        }
        Err(e) => Err(e),
    };
    let reg = state.store().registry().await?;
    let name = reg
        .index()
        .person(&person)
        .map_or(person.clone(), |p| p.name.clone());
    let done = format!("{name} incluído como motorista auxiliar do alvará {number}.");
    answer(&state, &user, &number, result, done, "form-auxiliar", forms).await
}

async fn remove_auxiliary(
    State(state): State<AppState>,
    Path((number, person)): Path<(String, String)>,
    Posted { user, .. }: Posted<serde::de::IgnoredAny>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let name = reg
        .index()
        .person(&person)
        .map_or(person.clone(), |p| p.name.clone());
    let result = write::remove_auxiliary(&state, &user.auth, &number, &person).await;
    let done = format!("{name} deixou de ser motorista auxiliar do alvará {number}.");
    answer(
        &state,
        &user,
        &number,
        result,
        done,
        "form-remover-auxiliar",
        Forms::default(),
    )
    .await
}

#[derive(Debug, Deserialize)]
struct StateForm {
    #[serde(default)]
    situacao: String,
    #[serde(default)]
    inicio: String,
    #[serde(default)]
    fim: String,
}

/// The state the form asks for: the kind, from the start date (empty: today), and for a
/// suspension its last day.
fn state_of(form: &StateForm, today: NaiveDate) -> Result<PermitState, AppError> {
    let mut f = Fields::default();
    let from = f.date("A partir de", &form.inicio, false).unwrap_or(today);
    let kind = form.situacao.trim();
    let until = f.date("Último dia da suspensão", &form.fim, kind == "suspenso");
    let state = match kind {
        "ativo" => Some(PermitState::Active),
        "suspenso" => until.map(|until| PermitState::Suspended { from, until }),
        "cassado" => Some(PermitState::Revoked { on: from }),
        "sucessao" => Some(PermitState::InSuccession { since: from }),
        _ => {
            f.error("Escolha a nova situação do alvará.");
            None
        }
    };
    f.finish()?;
    state.ok_or_else(|| AppError::unprocessable("invalid_form", "Escolha a nova situação."))
}

async fn set_state(
    State(state): State<AppState>,
    Path(number): Path<String>,
    Posted { user, form }: Posted<StateForm>,
) -> Result<Response, PageError> {
    let forms = Forms {
        state_kind: form.situacao.clone(),
        state_from: form.inicio.clone(),
        state_until: form.fim.clone(),
        ..Forms::default()
    };
    let result = match state_of(&form, state.clock().today()) {
        Ok(new_state) => {
            let done = format!(
                "Alvará {number}: situação agora {}.",
                state_label(&new_state)
            );
            let r = write::set_permit_state(&state, &user.auth, &number, new_state).await;
            (r, done)
        }
        Err(e) => (Err(e), String::new()),
    };
    answer(
        &state,
        &user,
        &number,
        result.0,
        result.1,
        "form-situacao",
        forms,
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// Grant
// ---------------------------------------------------------------------------------------------

/// What the grant form holds, as typed.
#[derive(Debug, Clone, Default, Deserialize)]
struct GrantForm {
    #[serde(default)]
    numero: String,
    #[serde(default)]
    titular: String,
    #[serde(default)]
    veiculo: String,
    #[serde(default)]
    ponto: String,
    #[serde(default)]
    servico: String,
    #[serde(default)]
    expedicao: String,
    #[serde(default)]
    edital: String,
}

impl GrantForm {
    fn request(&self) -> Result<ops::GrantPermit, AppError> {
        let mut f = Fields::default();
        let number = f.text("Número do alvará", &self.numero, true);
        let holder_id = f.text("Titular", &self.titular, true);
        let vehicle_id = f.text("Veículo", &self.veiculo, true);
        let stand_id = f.text("Ponto", &self.ponto, true);
        let service = match self.servico.trim() {
            "" => None,
            v => {
                let s = super::stands::SERVICES
                    .iter()
                    .find(|x| x.0 == v)
                    .map(|x| x.2);
                if s.is_none() {
                    f.error("Escolha o tipo de serviço do alvará.");
                }
                s
            }
        };
        let issued_on = f.date("Expedido em", &self.expedicao, false);
        let edital_date = f.date("Edital de chamamento", &self.edital, false);
        f.finish()?;
        Ok(ops::GrantPermit {
            number,
            holder_id,
            vehicle_id,
            stand_id,
            service,
            issued_on,
            renewal_year: None,
            edital_date,
        })
    }
}

async fn grant_page(
    state: &AppState,
    user: &OfficeUser,
    form: GrantForm,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let mut form = form;
    if form.numero.is_empty() && error.is_none() {
        let max = reg
            .permits
            .iter()
            .filter_map(|p| p.number.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        form.numero = format!("{:04}", max.saturating_add(1));
    }
    let live = |p: &&Permit| !matches!(p.state, PermitState::Revoked { .. });
    let mut holders = vec![(String::new(), String::from("— escolha o titular —"))];
    holders.extend(people_options(&reg));
    let mut vehicles = vec![(String::new(), String::from("— escolha o veículo —"))];
    let mut sorted: Vec<_> = reg.vehicles.iter().collect();
    sorted.sort_by(|a, b| a.plate.canonical().cmp(b.plate.canonical()));
    vehicles.extend(sorted.into_iter().map(|v| {
        let on = reg
            .permits
            .iter()
            .filter(live)
            .find(|p| p.vehicle_id == v.id)
            .map(|p| format!(", no alvará {}", p.number))
            .unwrap_or_default();
        (
            v.id.clone(),
            format!("{} — {} ({}){on}", v.plate.canonical(), v.make_model, v.id),
        )
    }));
    let mut stands = vec![(String::new(), String::from("— escolha o ponto —"))];
    stands.extend(reg.stands.iter().map(|s| {
        let used = reg
            .permits
            .iter()
            .filter(live)
            .filter(|p| p.stand_id == s.id)
            .count();
        let free = usize::try_from(s.vacancies)
            .unwrap_or(usize::MAX)
            .saturating_sub(used);
        (
            s.id.clone(),
            format!(
                "{} – {} ({} de {})",
                s.id,
                s.name,
                match free {
                    0 => String::from("nenhuma vaga livre"),
                    1 => String::from("1 vaga livre"),
                    n => format!("{n} vagas livres"),
                },
                s.vacancies
            ),
        )
    }));
    let mut services = vec![(String::new(), String::from("o do ponto"))];
    services.extend(
        super::stands::SERVICES
            .iter()
            .map(|(v, l, _)| ((*v).to_owned(), (*l).to_owned())),
    );
    let cap = sync_core::rules::office::taxi_cap(&reg.law().rules);
    let body = html! {
        p { a href="/escritorio/alvaras" { "← Voltar à lista de alvarás" } }
        p {
            "O alvará é concedido ao titular (art. 9º: um só por pessoa; art. 2º: CNH com EAR há mais "
            "de dois anos), com o veículo no nome dele (art. 30, III) e aferição do taxímetro, num "
            "ponto com vaga livre; o total de táxis não passa do limite do art. 14 (" (cap) "). "
            "Cadastre antes a pessoa e o veículo."
        }
        @if let Some(e) = error { (e) }
        (post_form(user, "/escritorio/alvaras/novo", "form-concessao", html! {
            fieldset {
                legend { "Concessão" }
                (text_field("concessao-numero", "numero", "Número do alvará (prontuário)", &form.numero, true))
                (select_field("concessao-titular", "titular", "Titular", &holders, &form.titular))
                (select_field("concessao-veiculo", "veiculo", "Veículo", &vehicles, &form.veiculo))
                (select_field("concessao-ponto", "ponto", "Ponto", &stands, &form.ponto))
                (select_field("concessao-servico", "servico", "Serviço", &services, &form.servico))
                (date_field("concessao-expedicao", "expedicao", "Expedido em (em branco: hoje)", &form.expedicao, false))
                (date_field("concessao-edital", "edital", "Publicação do edital de chamamento (art. 13, III)", &form.edital, false))
            }
            (submit("conceder", "Conceder o alvará"))
        }))
    };
    Ok(page(Some(user), "Conceder um alvará", flash, body))
}

async fn grant_form(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    grant_page(&state, &user, GrantForm::default(), None).await
}

async fn grant(
    State(state): State<AppState>,
    Posted { user, form }: Posted<GrantForm>,
) -> Result<Response, PageError> {
    let result = match form.request() {
        Ok(req) => write::grant_permit(&state, &user.auth, req).await,
        Err(e) => Err(e),
    };
    let number = form.numero.trim().to_owned();
    let done = format!("Alvará {number} concedido.");
    after_write(
        &user,
        result,
        &done,
        &format!("/escritorio/alvaras/{}", url_encode(&number)),
        "erro-concessao",
        |e| grant_page(&state, &user, form.clone(), Some(e)),
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

fn import_body(user: &OfficeUser, outcome: Option<Markup>) -> Markup {
    html! {
        @if let Some(o) = outcome { (o) }
        p {
            "Um arquivo CSV com uma linha por alvará (titular, veículo, ponto e até dois auxiliares) "
            "substitui o cadastro de pessoas, veículos, pontos e alvarás. É tudo ou nada: se "
            "alguma linha tiver problema, nada é importado e cada problema aparece com a sua linha. "
            "Penalidades, multas e transferências são mantidas. O leiaute está em "
            code { "docs/registry-csv.md" } "; o arquivo baixado abaixo já está nele."
        }
        p { a #baixar-csv href="/escritorio/cadastro/exportar" { "Baixar o cadastro atual em CSV" } }
        @if user.may_write() {
            form method="post" action="/escritorio/cadastro/importar" id="form-importar" enctype="multipart/form-data" {
                input type="hidden" name="csrf" value=(user.csrf());
                div .campo {
                    label for="arquivo-csv" { "Arquivo CSV (UTF-8, separado por vírgula ou ponto e vírgula)" }
                    input type="file" id="arquivo-csv" name="arquivo" accept=".csv,text/csv" required;
                }
                (submit("importar", "Importar"))
            }
        } @else {
            (super::layout::read_only_notice("form-importar-somente-leitura"))
        }
    }
}

async fn import_form(user: OfficeUser) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    Ok(page(
        Some(&user),
        "Importar o cadastro",
        flash,
        import_body(&user, None),
    ))
}

fn upload_error(e: impl std::fmt::Display) -> PageError {
    PageError::Status(
        StatusCode::BAD_REQUEST,
        format!("O envio do arquivo falhou ({e}); nada foi importado. Tente de novo."),
    )
}

/// The bad rows of a refused import, one table row each.
fn csv_errors(e: &AppError) -> Markup {
    let rows: Vec<Value> = e
        .details
        .as_ref()
        .and_then(|d| d.get("errors"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    html! {
        div #erro-importacao .erro role="alert" tabindex="-1" {
            p { strong { "Nada foi importado: " } (e.message) }
            @if !rows.is_empty() {
                p #total-erros { (super::layout::plural(rows.len(), "problema", "problemas")) " no arquivo:" }
                table #tabela-erros-csv {
                    thead { tr {
                        th scope="col" { "Linha" } th scope="col" { "Coluna" } th scope="col" { "Problema" }
                    } }
                    tbody {
                        @for r in &rows {
                            @let line = r.get("line").and_then(Value::as_u64);
                            tr id=[line.map(|l| format!("erro-linha-{l}"))] {
                                td { @match line { Some(l) => { (l) }, None => { "arquivo" } } }
                                td { (r.get("column").and_then(Value::as_str).unwrap_or("—")) }
                                td { (r.get("message").and_then(Value::as_str).unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
            p .dica { "Corrija o arquivo e envie de novo." }
        }
    }
}

/// `POST /escritorio/cadastro/importar`: the CSV as a file upload (`multipart/form-data`),
/// checked like every form of the pages (origin, then the session's CSRF token) before anything
/// is imported.
async fn import(
    State(state): State<AppState>,
    user: OfficeUser,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, PageError> {
    if !check_origin(&headers, &state, "/escritorio/cadastro/importar") {
        return Err(PageError::Csrf);
    }
    let mut multipart = multipart.map_err(upload_error)?;
    let mut csrf = String::new();
    let mut file: Option<Vec<u8>> = None;
    while let Some(field) = multipart.next_field().await.map_err(upload_error)? {
        match field.name() {
            Some("csrf") => csrf = field.text().await.map_err(upload_error)?,
            Some("arquivo") => file = Some(field.bytes().await.map_err(upload_error)?.to_vec()),
            _ => {}
        }
    }
    if !super::session::same_token(&csrf, user.csrf()) {
        return Err(PageError::Csrf);
    }
    user.auth.require(roles::REGISTRY_WRITERS)?;
    let data = file.unwrap_or_default();
    let result = if data.iter().all(u8::is_ascii_whitespace) {
        Err(AppError::unprocessable(
            "empty_file",
            "Escolha um arquivo CSV com o cabeçalho e uma linha por alvará.",
        ))
    } else {
        write::import(&state, &user.auth, &data).await
    };
    match result {
        Ok(u) => {
            let reg = state.store().registry().await?;
            let text = if u.changed {
                format!(
                    "Cadastro importado: versão {}, {} alteração(ões); {} alvarás, {} pessoas, \
                     {} veículos, {} pontos.",
                    u.version,
                    u.changes.len(),
                    reg.permits.len(),
                    reg.people.len(),
                    reg.vehicles.len(),
                    reg.stands.len()
                )
            } else {
                format!(
                    "O arquivo descreve o cadastro como ele já está: nada mudou (versão {}).",
                    u.version
                )
            };
            user.flash(true, text).await;
            Ok(see_other("/escritorio/cadastro/importar"))
        }
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => {
            let outcome = if e.code == "refused_by_law" {
                refusal_box("erro-importacao", &e)
            } else {
                csv_errors(&e)
            };
            let markup = page(
                Some(&user),
                "Importar o cadastro",
                None,
                import_body(&user, Some(outcome)),
            );
            Ok((StatusCode::UNPROCESSABLE_ENTITY, markup).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /escritorio/cadastro/exportar`: the registry as CSV, as `GET /v1/registry/export`.
async fn export(State(state): State<AppState>, user: OfficeUser) -> Result<Response, PageError> {
    user.auth.require(roles::REGISTRY_WRITERS)?;
    let reg = state.store().registry().await?;
    let bytes = crate::registry::csv::export(&reg).map_err(AppError::from)?;
    let name = format!(
        "attachment; filename=\"cadastro-taxis-v{}.csv\"",
        reg.version
    );
    let mut res = (
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            ),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        bytes,
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&name) {
        res.headers_mut().insert(CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_accents_and_case() {
        assert_eq!(fold("João Antônio SÉRGIO"), "joao antonio sergio");
        assert_eq!(fold("Conceição"), "conceicao");
    }

    #[test]
    fn reasons_round_trip() {
        for (v, l, r) in REASONS {
            assert_eq!(reason_label(*r), *l, "{v}");
        }
    }
}
