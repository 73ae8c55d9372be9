//! The registry of alvarás in the office pages: the list with search, one permit with its
//! holder, auxiliaries, vehicle, stand, penalties and fines, the forms for renewal (art. 7),
//! transfer (art. 10) and swap of stands (art. 11), and the CSV import and export
//! (`docs/registry-csv.md`).
//!
//! Every change goes through the same code as the JSON API: the operation of
//! [`crate::registry::ops`] (or [`crate::registry::csv::import`]) run by
//! [`crate::api::registry::edit`] — today's date, the server's rules, the session's user and
//! device as the audit actor, one new registry version. A refusal by the law is shown above its
//! form with every finding (rule, article, message), status 422, the typed values kept.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/alvaras?busca=…&ponto=…&situacao=…&ordem=…&sentido=…&pagina=…` | `form-busca-alvaras`, `busca-alvaras`, `filtro-ponto-alvaras`, `filtro-situacao-alvaras` (`ativo`, `suspenso`, `cassado`, `sucessao`, `nao-renovado`), `buscar-alvaras`, `resumo-cadastro`, `total-alvaras`, `exportar-alvaras`, `tabela-alvaras` (header links `ordenar-alvara-{column}`, rows `alvara-{número}`, links `abrir-alvara-{número}`), `sem-resultados` |
//! | `GET /escritorio/alvaras.csv?…` | the list as filtered and sorted, as a spreadsheet ([`super::listing::Csv`]) |
//! | `GET /escritorio/alvaras/{número}` | `situacao-alvara`, `titular`, `auxiliares` (rows `auxiliar-{pessoa}`), `veiculo`, `ponto`, `penalidades` (`tabela-penalidades`, rows `penalidade-{id}`), `multas` (`tabela-multas`, rows `multa-{id}`, on unpaid ones `pagar-multa-{id}` to the fines page), `transferencias` |
//! | `POST …/renovacao` | `form-renovacao`, `renovacao-ano`, `renovar`, error `erro-renovacao` (with `multas-pendentes`, links `erro-renovacao-multa-{id}`, when the permit has an unpaid fine) |
//! | `POST …/transferencia` | `form-transferencia`, `transferencia-para`, `transferencia-motivo`, `transferir`, error `erro-transferencia` |
//! | `POST …/permuta` | `form-permuta`, `permuta-com`, `permuta-taxa`, `permutar`, error `erro-permuta` |
//! | `GET`/`POST /escritorio/cadastro/importar` | `form-importar` (multipart), `arquivo-csv`, `importar`, `baixar-csv`; on bad rows `erro-importacao`, `total-erros`, `tabela-erros-csv` (rows `erro-linha-{n}`) |
//! | `GET /escritorio/cadastro/exportar` | the registry as CSV (the import layout) |
//!
//! Search (`busca`): a plate in any spelling (old or Mercosul form), a permit number (`7` finds
//! `0007`), a CPF, or part of the name of the holder or of an auxiliary (accents and case
//! ignored). Success redirects to the permit page with a message (`#aviso`).

use axum::Router;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
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
    date_br, money, page, penalty_label, post_form, see_other, select_field, submit, text_field,
};
use super::listing::{self, Column, Columns, Csv, Dir, Key, Params, Sort, sort_rows};
use super::session::{OfficeUser, Posted, check_origin};
use super::{PageError, url_encode};
use crate::api::registry::edit;
use crate::auth::roles;
use crate::error::AppError;
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
        .route(
            "/escritorio/cadastro/importar",
            get(import_form).post(import),
        )
        .route("/escritorio/cadastro/exportar", get(export))
}

/// Permits per page of the list.
const PAGE_SIZE: usize = 50;

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
fn fold(s: &str) -> String {
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
    let flash = user.take_flash();
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
            (found.len()) @if found.len() == 1 { " alvará encontrado" } @else { " alvarás encontrados" }
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
    html! {
        div id=(id) .erro role="alert" tabindex="-1" {
            @if findings.is_empty() {
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
    let flash = user.take_flash();
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
            @if p.auxiliaries.is_empty() {
                p { "Nenhum motorista auxiliar registrado." }
            } @else {
                table {
                    thead { tr {
                        th scope="col" { "Nome" } th scope="col" { "Alvará do auxiliar" }
                        th scope="col" { "Registrado em" } th scope="col" { "CNH válida até" }
                    } }
                    tbody {
                        @for a in &p.auxiliaries {
                            @let person = index.person(&a.person_id);
                            tr id=(format!("auxiliar-{}", a.person_id)) {
                                td { (person.map_or(a.person_id.clone(), |x| x.name.clone())) }
                                td { (a.licence_number) }
                                td { (date_br(a.registered_on)) }
                                td {
                                    @if let Some(x) = person {
                                        (date_br(x.licence.expiry))
                                        @if x.licence.expiry < today { strong { " — vencida" } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
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
    match result {
        Ok(u) => {
            let mut text = if u.changed {
                format!("{done} Cadastro na versão {}.", u.version)
            } else {
                format!(
                    "Nada mudou: o cadastro já estava assim (versão {}).",
                    u.version
                )
            };
            // What the law still finds on the permit (it did not refuse the change).
            for w in &u.warnings {
                text.push_str(&format!(
                    " Atenção ({}, {}): {}",
                    w.rule_id, w.citation, w.message
                ));
            }
            user.flash(true, text);
            Ok(see_other(&format!(
                "/escritorio/alvaras/{}",
                url_encode(number)
            )))
        }
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => {
            let error = format!("erro-{}", form_id.trim_start_matches("form-"));
            forms.error = Some((form_id, refusal_box(&error, &e)));
            let status = if e.status == StatusCode::NOT_FOUND {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                e.status
            };
            let markup = permit_page(state, user, number, forms).await?;
            Ok((status, markup).into_response())
        }
        Err(e) => Err(e.into()),
    }
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
            let subject = format!("permit:{number}");
            edit(
                &state,
                &user.auth,
                "registry.permit.renew",
                &subject,
                |reg, ctx| ops::renew(reg, &number, ops::Renew { year }, ctx),
            )
            .await
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
            let subject = format!("permit:{number}");
            let req = ops::TransferPermit {
                to_person_id: person.id.clone(),
                reason: *reason,
                // The permit keeps its vehicle, whose CRLV the office updates first.
                vehicle_id: None,
            };
            let done = format!("Alvará {number} transferido para {}.", person.name);
            let result = edit(
                &state,
                &user.auth,
                "registry.permit.transfer",
                &subject,
                |reg, ctx| ops::transfer(reg, &number, req.clone(), ctx),
            )
            .await;
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
        let subject = format!("permits:{number}+{other}");
        edit(
            &state,
            &user.auth,
            "registry.permit.swap",
            &subject,
            |reg, ctx| ops::swap(reg, req.clone(), ctx),
        )
        .await
    };
    let done = format!("Pontos dos alvarás {number} e {other} permutados.");
    answer(&state, &user, &number, result, done, "form-permuta", forms).await
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
        form method="post" action="/escritorio/cadastro/importar" id="form-importar" enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(user.csrf());
            div .campo {
                label for="arquivo-csv" { "Arquivo CSV (UTF-8, separado por vírgula ou ponto e vírgula)" }
                input type="file" id="arquivo-csv" name="arquivo" accept=".csv,text/csv" required;
            }
            (submit("importar", "Importar"))
        }
    }
}

async fn import_form(user: OfficeUser) -> Result<Markup, PageError> {
    let flash = user.take_flash();
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
                p #total-erros { (rows.len()) " problema(s) no arquivo:" }
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
        edit(
            &state,
            &user.auth,
            "registry.import",
            "registry",
            |reg, ctx| crate::registry::csv::import(reg, &data, ctx),
        )
        .await
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
            user.flash(true, text);
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
