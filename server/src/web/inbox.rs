//! `GET /escritorio`: the office's inbox — field records, newest first, with filters and the
//! number of records in each status.
//!
//! Filters (query string, the form `form-filtros`): `situacao` (status), `ponto` (stand),
//! `autor` (officer or coordinator, user id), `placa` (any spelling), `de` / `ate` (local dates,
//! inclusive), `regra` (rule id in the record's legal basis, e.g. `R24`), `pagina`. The counts
//! per status apply the other filters, so they answer "how many of *these* wait for what".
//!
//! Element ids: `form-filtros`, `filtro-situacao`, `filtro-ponto`, `filtro-autor`,
//! `filtro-placa`, `filtro-de`, `filtro-ate`, `filtro-regra`, `filtrar`, `limpar`,
//! `contagens`, `tabela-registros` (one row per record, `id="linha-{record id}"`, with a link
//! `abrir-{record id}` to the record page), `total-registros`.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::records::Status;

use super::PageError;
use super::layout::{date_field, local_time, page, select_field, text_field};
use super::session::OfficeUser;
use super::url_encode;
use crate::office;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/escritorio", get(inbox))
}

/// Records per page.
const PAGE_SIZE: u32 = 50;

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
    pagina: Option<u32>,
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl InboxQuery {
    /// The query string of these filters with another page or status.
    fn link(&self, status: Option<&str>, page: Option<u32>) -> String {
        let mut parts = Vec::new();
        let mut add = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                parts.push(format!("{k}={}", url_encode(&v)));
            }
        };
        add("situacao", status.map(str::to_owned));
        add("ponto", non_empty(&self.ponto));
        add("autor", non_empty(&self.autor));
        add("placa", non_empty(&self.placa));
        add("de", non_empty(&self.de));
        add("ate", non_empty(&self.ate));
        add("regra", non_empty(&self.regra));
        add("pagina", page.filter(|p| *p > 1).map(|p| p.to_string()));
        if parts.is_empty() {
            "/escritorio".to_owned()
        } else {
            format!("/escritorio?{}", parts.join("&"))
        }
    }
}

async fn inbox(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<InboxQuery>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash();
    let registry = state.store().registry().await?;
    let users = state.store().list_users().await?;
    let status = non_empty(&q.situacao);
    let rule = non_empty(&q.regra);
    let page_no = q.pagina.unwrap_or(1).max(1);
    let query = office::InboxQuery {
        status: status.clone(),
        kind: None,
        stand: non_empty(&q.ponto),
        author: non_empty(&q.autor),
        plate: non_empty(&q.placa),
        from: non_empty(&q.de),
        to: non_empty(&q.ate),
        rule: rule.clone(),
        limit: Some(PAGE_SIZE),
        offset: Some((page_no - 1) * PAGE_SIZE),
    };
    // Bad filters (a plate or date that is not one, an unknown rule) are said on the page.
    let (problem, found) = match office::inbox(&state, &user.auth, query).await {
        Ok(found) => (None, found),
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => (
            Some(e.message),
            office::Inbox {
                total: 0,
                counts: Vec::new(),
                items: Vec::new(),
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
        registry
            .stands
            .iter()
            .map(|s| (s.id.clone(), format!("{} — {}", s.id, s.name))),
    );
    let mut author_options = vec![(String::new(), "todos".to_owned())];
    let mut authors: Vec<_> = users
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
    let author_name = |id: &str| {
        users
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.display_name.clone())
            .unwrap_or_else(|| id.to_owned())
    };
    let stand_name = |id: &str| {
        registry
            .stands
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| id.to_owned())
    };
    let pages = total.div_ceil(u64::from(PAGE_SIZE)).max(1);

    let body = html! {
        form method="get" action="/escritorio" id="form-filtros" .filtros aria-label="Filtros" {
            (select_field("filtro-situacao", "situacao", "Situação", &status_options, status.as_deref().unwrap_or("")))
            (select_field("filtro-ponto", "ponto", "Ponto", &stand_options, q.ponto.as_deref().unwrap_or("")))
            (select_field("filtro-autor", "autor", "Fiscal ou coordenador", &author_options, q.autor.as_deref().unwrap_or("")))
            (text_field("filtro-placa", "placa", "Placa", q.placa.as_deref().unwrap_or(""), false))
            (date_field("filtro-de", "de", "De (data da ocorrência)", q.de.as_deref().unwrap_or(""), false))
            (date_field("filtro-ate", "ate", "Até", q.ate.as_deref().unwrap_or(""), false))
            (text_field("filtro-regra", "regra", "Regra (ex.: R24)", q.regra.as_deref().unwrap_or(""), false))
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
                @if *n > 0 || status.as_deref() == Some(st.as_str()) {
                    li {
                        a id={ "contagem-" (st.as_str()) } href=(q.link(Some(st.as_str()), None))
                            aria-current=[(status.as_deref() == Some(st.as_str())).then_some("true")] {
                            (st.label_pt()) ": " strong { (n) }
                        }
                    }
                }
            }
            li { a id="contagem-todas" href=(q.link(None, None)) { "todas" } }
        }
        h2 { "Registros" }
        p #total-registros { (super::layout::plural(total as usize, "registro", "registros")) ", do mais recente ao mais antigo." }
        @if rows.is_empty() {
            p #sem-registros { "Nenhum registro com estes filtros." }
        } @else {
            table #tabela-registros {
                caption .dica { "Página " (page_no) " de " (pages) }
                thead {
                    tr {
                        th scope="col" { "Número" }
                        th scope="col" { "Tipo" }
                        th scope="col" { "Ocorrência" }
                        th scope="col" { "Placa" }
                        th scope="col" { "Alvará" }
                        th scope="col" { "Ponto" }
                        th scope="col" { "Autor" }
                        th scope="col" { "Regras" }
                        th scope="col" { "Situação" }
                        th scope="col" { "Pendências" }
                    }
                }
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
                            td { (r.stand_id.as_deref().map(stand_name).unwrap_or_else(|| "—".into())) }
                            td { (author_name(&r.author_user_id)) }
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
                        }
                    }
                }
            }
            @if pages > 1 {
                nav .paginacao aria-label="Páginas" {
                    @if page_no > 1 {
                        a #pagina-anterior href=(q.link(status.as_deref(), Some(page_no - 1))) { "← Anterior" }
                    }
                    span { "Página " (page_no) " de " (pages) }
                    @if u64::from(page_no) < pages {
                        a #pagina-seguinte href=(q.link(status.as_deref(), Some(page_no + 1))) { "Seguinte →" }
                    }
                }
            }
        }
    };
    Ok(page(Some(&user), "Caixa de entrada", flash, body))
}
