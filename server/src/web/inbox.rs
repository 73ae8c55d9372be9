//! `GET /escritorio`: the office's inbox — field records, newest first, with filters, the
//! number of records in each status, sortable columns and the export of the filtered list.
//!
//! Filters (query string, the form `form-filtros`): `busca` (free text: auto number, plate in
//! any spelling, permit number, the name of the permit's holder or an auxiliary driver, the
//! author's name — every word must match, case and accents ignored), `situacao` (status),
//! `ponto` (stand), `autor` (officer or coordinator, user id), `placa` (any spelling), `de` /
//! `ate` (local dates, inclusive), `regra` (rule id in the record's legal basis, e.g. `R24`),
//! `vencendo=1` ("prazos vencendo": the appeal is pending and its last day is within
//! [`DUE_SOON_DAYS`] days from today), `ordem` / `sentido` (the column and `asc` | `desc`,
//! [`COLUMNS`]; anything unknown is the default, newest first), `pagina`. The counts per
//! status apply the other filters, so they answer "how many of *these* wait for what".
//!
//! The "Prazo de recurso" column is the last day to appeal while an appeal is pending — the
//! date the records' replay counted with the law kernel from the ciência (art. 35), read by
//! [`crate::office::pending_appeal_deadline`], never computed here.
//!
//! `GET /escritorio/caixa.csv` with the same query downloads the whole filtered list, in the
//! page's order, as a spreadsheet for a pt-BR Excel ([`super::listing::Csv`]), at most
//! `MAX_EXPORT_ROWS` rows.
//!
//! Element ids: `form-filtros`, `filtro-busca`, `filtro-situacao`, `filtro-ponto`,
//! `filtro-autor`, `filtro-placa`, `filtro-de`, `filtro-ate`, `filtro-regra`,
//! `filtro-vencendo`, `filtrar`, `limpar`, `contagens`, `tabela-registros` (one row per
//! record, `id="linha-{record id}"`, with a link `abrir-{record id}` to the record page, and a
//! cell `prazo-{record id}`), header links `ordenar-{column}`, `total-registros`,
//! `exportar-registros`, `lista-incompleta`.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use chrono::NaiveDate;
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::records::Status;

use super::PageError;
use super::layout::{date_br, date_field, local_time, page, select_field, text_field};
use super::listing::{self, Column, Columns, Csv, Dir, Params, Sort};
use super::session::OfficeUser;
use crate::error::AppError;
use crate::office;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio", get(inbox))
        .route("/escritorio/caixa.csv", get(export))
}

/// Records per page.
const PAGE_SIZE: u32 = 50;

/// "Prazos vencendo": an appeal whose last day is within this many days from today. The
/// appeal term is 10 days (art. 35): its last five are the week in which the office prepares
/// what follows the term (the case file of an appeal, or the penalty becoming final).
pub const DUE_SOON_DAYS: u32 = 5;

/// The inbox's columns (query key, header), in the table's order, and their API order.
pub const COLUMNS: Columns = Columns {
    columns: &[
        Column::asc("numero", "Número"),
        Column::asc("tipo", "Tipo"),
        Column::desc("ocorrencia", "Ocorrência"),
        Column::asc("placa", "Placa"),
        Column::asc("alvara", "Alvará"),
        Column::asc("ponto", "Ponto"),
        Column::asc("autor", "Autor"),
        Column::asc("regras", "Regras"),
        Column::asc("situacao", "Situação"),
        Column::desc("pendencias", "Pendências"),
        Column::asc("prazo", "Prazo de recurso"),
    ],
    default_key: "ocorrencia",
    default_dir: Dir::Desc,
    id_prefix: "ordenar",
};

/// The API's order (`office::InboxQuery::sort`) of a column.
fn api_sort(key: &str) -> &'static str {
    match key {
        "numero" => "number",
        "tipo" => "kind",
        "placa" => "plate",
        "alvara" => "permit",
        "ponto" => "stand",
        "autor" => "author",
        "regras" => "rules",
        "situacao" => "status",
        "pendencias" => "pending",
        "prazo" => "appeal_deadline",
        _ => "occurred_at",
    }
}

pub(crate) use crate::office::STATUSES;

/// The record kind for people.
pub(crate) fn kind_label(kind: &str) -> &'static str {
    match kind {
        "infraction" => "auto de infração",
        "transgression" => "comunicação de transgressão",
        _ => "registro",
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct InboxQuery {
    #[serde(default)]
    busca: Option<String>,
    #[serde(default)]
    situacao: Option<String>,
    #[serde(default)]
    ponto: Option<String>,
    #[serde(default)]
    autor: Option<String>,
    #[serde(default)]
    placa: Option<String>,
    #[serde(default)]
    de: Option<String>,
    #[serde(default)]
    ate: Option<String>,
    #[serde(default)]
    regra: Option<String>,
    #[serde(default)]
    vencendo: Option<String>,
    #[serde(default)]
    ordem: Option<String>,
    #[serde(default)]
    sentido: Option<String>,
    #[serde(default)]
    pagina: Option<u32>,
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl InboxQuery {
    fn due_soon(&self) -> bool {
        non_empty(&self.vencendo).is_some()
    }

    fn sort(&self) -> Sort {
        COLUMNS.parse(self.ordem.as_deref(), self.sentido.as_deref())
    }

    /// The filters (not the status, the order or the page).
    fn params(&self) -> Params {
        let v = |s: &Option<String>| non_empty(s).unwrap_or_default();
        Params::default()
            .with("busca", v(&self.busca))
            .with("ponto", v(&self.ponto))
            .with("autor", v(&self.autor))
            .with("placa", v(&self.placa))
            .with("de", v(&self.de))
            .with("ate", v(&self.ate))
            .with("regra", v(&self.regra))
            .with("vencendo", if self.due_soon() { "1" } else { "" })
    }

    /// The address of these filters with another status, order or page.
    fn link(&self, status: Option<&str>, sort: &Sort, page: Option<u32>) -> String {
        self.params()
            .with("situacao", status.unwrap_or_default())
            .with_sort(&COLUMNS, sort)
            .with(
                "pagina",
                page.filter(|p| *p > 1)
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
            )
            .url("/escritorio")
    }

    /// The office's query for one page (`limit`, `offset`).
    fn office_query(&self, limit: u32, offset: u32) -> office::InboxQuery {
        let sort = self.sort();
        office::InboxQuery {
            status: non_empty(&self.situacao),
            kind: None,
            stand: non_empty(&self.ponto),
            author: non_empty(&self.autor),
            plate: non_empty(&self.placa),
            from: non_empty(&self.de),
            to: non_empty(&self.ate),
            rule: non_empty(&self.regra),
            search: non_empty(&self.busca),
            sort: Some(api_sort(sort.key).to_owned()),
            direction: Some(sort.dir.as_str().to_owned()),
            appeal_due_within_days: self.due_soon().then_some(DUE_SOON_DAYS),
            limit: Some(limit),
            offset: Some(offset),
        }
    }
}

/// Names of stands and authors for the table and the export.
struct Names {
    registry: std::sync::Arc<sync_core::domain::Registry>,
    users: Vec<crate::store::UserRow>,
}

impl Names {
    async fn load(state: &AppState) -> Result<Self, PageError> {
        Ok(Self {
            registry: state.store().registry().await?,
            users: state.store().list_users().await?,
        })
    }

    fn author(&self, id: &str) -> String {
        self.users
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.display_name.clone())
            .unwrap_or_else(|| id.to_owned())
    }

    fn stand(&self, id: Option<&str>) -> String {
        let Some(id) = id else {
            return "—".into();
        };
        self.registry
            .stands
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| id.to_owned())
    }
}

/// The deadline cell: the date, and whether it has passed or ends today.
fn deadline_text(d: Option<NaiveDate>, today: NaiveDate) -> String {
    match d {
        None => "—".into(),
        Some(d) if d < today => format!("{} (vencido)", date_br(d)),
        Some(d) if d == today => format!("{} (vence hoje)", date_br(d)),
        Some(d) => format!("até {}", date_br(d)),
    }
}

/// The pending items of a record, in words.
fn pending_text(r: &crate::store::records::RecordRow) -> String {
    let mut parts = Vec::new();
    if r.conflicts > 0 {
        parts.push(if r.conflicts == 1 {
            "1 conflito".to_owned()
        } else {
            format!("{} conflitos", r.conflicts)
        });
    }
    if r.invalid_events > 0 {
        parts.push(if r.invalid_events == 1 {
            "1 evento recusado".to_owned()
        } else {
            format!("{} eventos recusados", r.invalid_events)
        });
    }
    parts.join(", ")
}

async fn inbox(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<InboxQuery>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let names = Names::load(&state).await?;
    let status = non_empty(&q.situacao);
    let sort = q.sort();
    let page_no = q.pagina.unwrap_or(1).max(1);
    let today = state.clock().today();
    let query = q.office_query(PAGE_SIZE, (page_no - 1).saturating_mul(PAGE_SIZE));
    // Bad filters (a plate or date that is not one, an unknown rule) are said on the page.
    let (problem, found) = match office::inbox(state.services(), &user.auth, query)
        .await
        .map_err(AppError::from)
    {
        Ok(found) => (None, found),
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => (
            Some(e.message),
            office::Inbox {
                total: 0,
                counts: Vec::new(),
                items: Vec::new(),
                incomplete: false,
            },
        ),
        Err(e) => return Err(e.into()),
    };
    let mut counts: Vec<(Status, u64)> = STATUSES
        .iter()
        .map(|st| {
            let n = found
                .counts
                .iter()
                .find(|c| c.status == st.as_str())
                .map_or(0, |c| c.count);
            (*st, n)
        })
        .collect();
    counts.retain(|(st, n)| *n > 0 || status.as_deref() == Some(st.as_str()));
    let total = found.total;
    let rows = found.items;

    let mut status_options = vec![(String::new(), "todas".to_owned())];
    status_options.extend(
        STATUSES
            .iter()
            .map(|s| (s.as_str().to_owned(), s.label_pt().to_owned())),
    );
    let mut stand_options = vec![(String::new(), "todos".to_owned())];
    stand_options.extend(
        names
            .registry
            .stands
            .iter()
            .map(|s| (s.id.clone(), format!("{} — {}", s.id, s.name))),
    );
    let mut author_options = vec![(String::new(), "todos".to_owned())];
    let mut authors: Vec<_> = names
        .users
        .iter()
        .filter(|u| {
            matches!(
                u.role,
                crate::auth::Role::Officer | crate::auth::Role::Coordinator
            )
        })
        .collect();
    authors.sort_by(|a, b| a.display_name.cmp(&b.display_name));
    author_options.extend(authors.iter().map(|u| {
        (
            u.id.clone(),
            format!("{} ({})", u.display_name, u.role.label()),
        )
    }));
    let pages = total.div_ceil(u64::from(PAGE_SIZE)).max(1);
    let export = q
        .params()
        .with("situacao", status.clone().unwrap_or_default())
        .with_sort(&COLUMNS, &sort)
        .url("/escritorio/caixa.csv");
    let order_link = |s: &Sort| q.link(status.as_deref(), s, None);
    let order_text = COLUMNS
        .columns
        .iter()
        .find(|c| c.key == sort.key)
        .map_or("", |c| c.label);

    let body = html! {
        form method="get" action="/escritorio" id="form-filtros" .filtros aria-label="Filtros" {
            div .campo.largo {
                label for="filtro-busca" { "Buscar" }
                input type="search" id="filtro-busca" name="busca" value=(q.busca.as_deref().unwrap_or(""))
                    aria-describedby="dica-busca";
                span #dica-busca .dica { "Nº do auto, placa, alvará, nome do motorista, do titular ou do fiscal." }
            }
            (select_field("filtro-situacao", "situacao", "Situação", &status_options, status.as_deref().unwrap_or("")))
            (select_field("filtro-ponto", "ponto", "Ponto", &stand_options, q.ponto.as_deref().unwrap_or("")))
            (select_field("filtro-autor", "autor", "Fiscal ou coordenador", &author_options, q.autor.as_deref().unwrap_or("")))
            (text_field("filtro-placa", "placa", "Placa", q.placa.as_deref().unwrap_or(""), false))
            (date_field("filtro-de", "de", "De (data da ocorrência)", q.de.as_deref().unwrap_or(""), false))
            (date_field("filtro-ate", "ate", "Até", q.ate.as_deref().unwrap_or(""), false))
            (text_field("filtro-regra", "regra", "Regra (ex.: R24)", q.regra.as_deref().unwrap_or(""), false))
            div .campo.marcar {
                input type="checkbox" id="filtro-vencendo" name="vencendo" value="1" checked[q.due_soon()];
                label for="filtro-vencendo" { "Só prazos de recurso vencendo (próximos " (DUE_SOON_DAYS) " dias)" }
            }
            @if sort != COLUMNS.default() {
                input type="hidden" name="ordem" value=(sort.key);
                input type="hidden" name="sentido" value=(sort.dir.as_str());
            }
            div .acoes {
                button type="submit" id="filtrar" { "Filtrar" }
                a href="/escritorio" id="limpar" { "Limpar filtros" }
            }
        }
        @if let Some(p) = &problem {
            p #erro-filtro role="alert" .erro { (p) }
        }
        h2 #titulo-contagens { "Registros por situação" }
        ul #contagens .contagens aria-labelledby="titulo-contagens" {
            @for (st, n) in &counts {
                li {
                    a id={ "contagem-" (st.as_str()) } href=(q.link(Some(st.as_str()), &sort, None))
                        aria-current=[(status.as_deref() == Some(st.as_str())).then_some("true")] {
                        (st.label_pt()) ": " strong { (n) }
                    }
                }
            }
            li { a id="contagem-todas" href=(q.link(None, &sort, None)) { "todas" } }
        }
        h2 { "Registros" }
        p #total-registros {
            (super::layout::plural(total as usize, "registro", "registros"))
            ", em ordem de " (order_text.to_lowercase())
            @if sort.dir == Dir::Asc { " (crescente)." } @else { " (decrescente)." }
            @if total > 0 {
                " " a #exportar-registros .nao-imprimir href=(export) { "Exportar esta lista para planilha (CSV)" }
            }
        }
        @if found.incomplete {
            p #lista-incompleta role="status" .alerta {
                "Há mais de " (crate::limits::MAX_APPEAL_DEADLINE_SCAN) " registros aguardando recurso: "
                "a lista considerou só os mais recentes. Restrinja os filtros (ponto, datas) para ver todos."
            }
        }
        @if rows.is_empty() {
            p #sem-registros { "Nenhum registro com estes filtros." }
        } @else {
            div .tabela-rolavel role="region" aria-labelledby="legenda-registros" tabindex="0" {
            table #tabela-registros {
                caption #legenda-registros .dica { "Registros — página " (page_no) " de " (pages) }
                thead { (COLUMNS.header(&sort, &order_link)) }
                tbody {
                    @for item in &rows {
                        @let r = &item.row;
                        tr id={ "linha-" (r.id) } {
                            th scope="row" {
                                a id={ "abrir-" (r.id) } href={ "/escritorio/registros/" (r.id) } {
                                    (r.number.as_deref().unwrap_or("(sem número)"))
                                }
                            }
                            td { (kind_label(&r.kind)) }
                            td { (local_time(r.occurred_at)) }
                            td { (r.plate.as_deref().unwrap_or("—")) }
                            td { (r.permit_number.as_deref().unwrap_or("—")) }
                            td { (names.stand(r.stand_id.as_deref())) }
                            td { (names.author(&r.author_user_id)) }
                            td { (item.rules.join(", ")) }
                            td { (item.status_label) }
                            td {
                                @if r.conflicts > 0 {
                                    span .etiqueta.warning { (super::layout::plural(r.conflicts as usize, "conflito", "conflitos")) } " "
                                }
                                @if r.invalid_events > 0 {
                                    span .etiqueta.invalido { (super::layout::plural(r.invalid_events as usize, "evento recusado", "eventos recusados")) }
                                }
                            }
                            td id={ "prazo-" (r.id) } { (deadline_text(item.appeal_deadline, today)) }
                        }
                    }
                }
            }
            }
            @if pages > 1 {
                nav .paginacao aria-label="Páginas" {
                    @if page_no > 1 {
                        a #pagina-anterior href=(q.link(status.as_deref(), &sort, Some(page_no - 1))) { "← Anterior" }
                    }
                    span { "Página " (page_no) " de " (pages) }
                    @if u64::from(page_no) < pages {
                        a #pagina-seguinte href=(q.link(status.as_deref(), &sort, Some(page_no + 1))) { "Seguinte →" }
                    }
                }
            }
        }
    };
    Ok(page(Some(&user), "Caixa de entrada", flash, body))
}

/// Rows fetched per query while exporting (the office's largest page).
const EXPORT_BATCH: u32 = 500;

/// `GET /escritorio/caixa.csv`: the filtered inbox, every page, in the page's order.
async fn export(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<InboxQuery>,
) -> Result<Response, PageError> {
    let names = Names::load(&state).await?;
    let first = office::inbox(
        state.services(),
        &user.auth,
        q.office_query(EXPORT_BATCH, 0),
    )
    .await
    .map_err(AppError::from);
    let first = match first {
        Ok(f) => f,
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => {
            return Err(PageError::Status(
                StatusCode::UNPROCESSABLE_ENTITY,
                e.message,
            ));
        }
        Err(e) => return Err(e.into()),
    };
    listing::check_export(first.total)
        .map_err(|m| PageError::Status(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    let mut items = first.items;
    while (items.len() as u64) < first.total {
        let offset = u32::try_from(items.len()).unwrap_or(u32::MAX);
        let next = office::inbox(
            state.services(),
            &user.auth,
            q.office_query(EXPORT_BATCH, offset),
        )
        .await?;
        if next.items.is_empty() {
            break;
        }
        items.extend(next.items);
    }
    items.truncate(listing::MAX_EXPORT_ROWS);
    let mut csv = Csv::new(&COLUMNS.labels());
    for item in &items {
        let r = &item.row;
        csv.row([
            r.number.clone().unwrap_or_default(),
            kind_label(&r.kind).to_owned(),
            local_time(r.occurred_at),
            r.plate.clone().unwrap_or_default(),
            r.permit_number.clone().unwrap_or_default(),
            r.stand_id
                .as_deref()
                .map(|s| names.stand(Some(s)))
                .unwrap_or_default(),
            names.author(&r.author_user_id),
            item.rules.join(", "),
            item.status_label.clone(),
            pending_text(r),
            item.appeal_deadline.map(date_br).unwrap_or_default(),
        ]);
    }
    Ok(csv.into_response("caixa-de-entrada.csv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_its_own_api_order() {
        let mut seen = Vec::new();
        for c in COLUMNS.columns {
            let s = api_sort(c.key);
            assert!(office::INBOX_SORTS.contains(&s), "{}", c.key);
            assert!(!seen.contains(&s), "{} twice", s);
            seen.push(s);
        }
        assert_eq!(seen.len(), office::INBOX_SORTS.len());
    }

    #[test]
    fn deadlines_say_when_they_pass() {
        let d = |n| NaiveDate::from_ymd_opt(2026, 12, n).unwrap();
        assert_eq!(deadline_text(None, d(10)), "—");
        assert_eq!(deadline_text(Some(d(9)), d(10)), "09/12/2026 (vencido)");
        assert_eq!(deadline_text(Some(d(10)), d(10)), "10/12/2026 (vence hoje)");
        assert_eq!(deadline_text(Some(d(11)), d(10)), "até 11/12/2026");
    }
}
