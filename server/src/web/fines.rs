//! The fines of the registry in the office pages: the list (permit, holder, amount, when it was
//! imposed, paid or not, with a filter for the unpaid ones) and the form that records the
//! payment of an unpaid fine — what lifts the bar of art. 17, § 2º, III on renewal and transfer.
//!
//! The payment goes through the same code as `POST /v1/fines/{id}/payment`:
//! [`crate::api::registry::record_payment`] (role, audit action `registry.fine.pay`, the operation
//! [`crate::registry::ops::pay_fine`] judged by the law, one new registry version). A refusal
//! (unknown fine, a fine already paid, a date in the future or before the fine) is shown above
//! the form, status 422 (409 for a fine already paid), with what was typed kept; success
//! redirects to the list with a message (`#aviso`). The API takes only the date of payment, so
//! the form asks for nothing else; an empty date is today.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/multas?situacao=…&busca=…&ordem=…&sentido=…&multa=…` | `form-filtro-multas`, `filtro-situacao-multas` (`todas`, `nao-pagas`), `busca-multas` (fine, permit or holder, accents ignored), `filtrar-multas`, `total-multas`, `exportar-multas`, `tabela-multas` (header links `ordenar-multa-{column}`, rows `multa-{id}`, links `alvara-da-multa-{id}`, and on unpaid rows `pagar-multa-{id}`), `sem-multas` |
//! | `GET /escritorio/multas.csv?…` | the same list as a spreadsheet ([`super::listing::Csv`]) |
//! | `POST /escritorio/multas/pagamento` | `form-pagamento`, `pagamento-multa` (prefilled from `?multa=`), `pagamento-data`, `pagar`, error `erro-pagamento` |
//!
//! The permit page links each unpaid fine here (`pagar-multa-{id}`), and so does a refused
//! renewal of a permit with an unpaid fine.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::NaiveDate;
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::domain::Fine;

use super::layout::{
    date_br, date_field, money, page, post_form, see_other, select_field, submit, text_field,
};
use super::listing::{self, Column, Columns, Csv, Dir, Key, Params, Search, Sort, sort_rows};
use super::registry::refusal_box;
use super::session::{OfficeUser, Posted};
use super::{PageError, url_encode};
use crate::api::registry::record_payment;
use crate::error::AppError;
use crate::registry::ops;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/multas", get(list))
        .route("/escritorio/multas.csv", get(export))
        .route("/escritorio/multas/pagamento", post(pay))
}

/// The list's filter value for unpaid fines only.
const UNPAID: &str = "nao-pagas";

/// The link that opens the payment form for fine `id`.
pub(crate) fn payment_link(id: &str) -> String {
    format!(
        "/escritorio/multas?situacao={UNPAID}&multa={}#form-pagamento",
        url_encode(id)
    )
}

/// The list's columns; newest first by default (the fine just imposed or just paid).
const COLUMNS: Columns = Columns {
    columns: &[
        Column::asc("numero", "Número"),
        Column::asc("alvara", "Alvará"),
        Column::asc("titular", "Titular"),
        Column::desc("valor", "Valor"),
        Column::desc("lancada", "Lançada em"),
        Column::desc("pagamento", "Pagamento"),
    ],
    default_key: "lancada",
    default_dir: Dir::Desc,
    id_prefix: "ordenar-multa",
};

#[derive(Debug, Clone, Default, Deserialize)]
struct ListQuery {
    #[serde(default)]
    situacao: Option<String>,
    #[serde(default)]
    busca: Option<String>,
    #[serde(default)]
    ordem: Option<String>,
    #[serde(default)]
    sentido: Option<String>,
    #[serde(default)]
    multa: Option<String>,
}

impl ListQuery {
    fn sort(&self) -> Sort {
        COLUMNS.parse(self.ordem.as_deref(), self.sentido.as_deref())
    }

    fn params(&self) -> Params {
        let situacao = self.situacao.as_deref().unwrap_or_default().trim();
        Params::default()
            .with("situacao", if situacao == UNPAID { UNPAID } else { "" })
            .with("busca", self.busca.as_deref().unwrap_or_default().trim())
    }
}

/// The fines the list shows, filtered and sorted, with each one's holder; or the search's
/// refusal.
fn listed<'a>(
    reg: &'a sync_core::domain::Registry,
    q: &ListQuery,
) -> Result<Vec<(&'a Fine, String)>, String> {
    let index = reg.index();
    let search = Search::parse(q.busca.as_deref().unwrap_or_default())?;
    let unpaid_only = q.situacao.as_deref().map(str::trim) == Some(UNPAID);
    let holder = |number: &str| {
        index
            .permit(number)
            .and_then(|p| index.person(&p.holder_id))
            .map_or(String::new(), |x| x.name.clone())
    };
    let mut shown: Vec<(&Fine, String)> = reg
        .fines
        .iter()
        .filter(|f| !unpaid_only || f.paid_on.is_none())
        .map(|f| (f, holder(&f.permit_number)))
        .filter(|(f, h)| search.matches(&[&f.id, &f.permit_number, h]))
        .collect();
    // The default order, then the one asked (stable: ties stay newest first).
    shown.sort_by(|a, b| b.0.issued_on.cmp(&a.0.issued_on).then(b.0.id.cmp(&a.0.id)));
    let sort = q.sort();
    sort_rows(&mut shown, sort.dir, |(f, h)| match sort.key {
        "numero" => Key::text(&f.id),
        "alvara" => Key::text(&f.permit_number),
        "titular" => Key::text(h),
        "valor" => {
            use rust_decimal::prelude::ToPrimitive;
            (f.amount * rust_decimal::Decimal::ONE_HUNDRED)
                .trunc()
                .to_i64()
                .map_or(Key::Blank, Key::Int)
        }
        "pagamento" => f.paid_on.map_or(Key::Blank, Key::Date),
        _ => Key::Date(f.issued_on),
    });
    Ok(shown)
}

/// What the payment form holds, and the refusal to show above it.
#[derive(Debug, Clone, Default)]
struct PaymentForm {
    fine: String,
    date: String,
    error: Option<Markup>,
}

async fn list(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Markup, PageError> {
    let form = PaymentForm {
        fine: q.multa.clone().unwrap_or_default().trim().to_owned(),
        ..PaymentForm::default()
    };
    fines_page(&state, &user, &q, form).await
}

/// `GET /escritorio/multas.csv`: the list as filtered and sorted on the page.
async fn export(
    State(state): State<AppState>,
    _user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let shown =
        listed(&reg, &q).map_err(|m| PageError::Status(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    listing::check_export(shown.len() as u64)
        .map_err(|m| PageError::Status(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    let mut csv = Csv::new(&COLUMNS.labels());
    for (f, h) in &shown {
        csv.row([
            f.id.clone(),
            f.permit_number.clone(),
            h.clone(),
            format!("{:.2}", f.amount.round_dp(2)).replace('.', ","),
            date_br(f.issued_on),
            f.paid_on.map_or_else(
                || "não paga".to_owned(),
                |d| format!("paga em {}", date_br(d)),
            ),
        ]);
    }
    Ok(csv.into_response("multas.csv"))
}

async fn fines_page(
    state: &AppState,
    user: &OfficeUser,
    q: &ListQuery,
    form: PaymentForm,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let (problem, shown) = match listed(&reg, q) {
        Ok(shown) => (None, shown),
        Err(m) => (Some(m), Vec::new()),
    };
    let unpaid_only = q.situacao.as_deref().map(str::trim) == Some(UNPAID);
    let unpaid = reg.fines.iter().filter(|f| f.paid_on.is_none()).count();
    let filters = vec![
        (String::from("todas"), String::from("todas as multas")),
        (UNPAID.to_owned(), String::from("só as não pagas")),
    ];
    let selected = if unpaid_only { UNPAID } else { "todas" };
    let sort = q.sort();
    let order_link = |s: &Sort| q.params().with_sort(&COLUMNS, s).url("/escritorio/multas");
    let export = q
        .params()
        .with_sort(&COLUMNS, &sort)
        .url("/escritorio/multas.csv");
    let body = html! {
        p {
            "Uma multa não paga impede a renovação e a transferência do alvará (art. 17, § 2º, III). "
            "Registre aqui o pagamento comprovado; a alteração gera uma nova versão do cadastro, que os "
            "tablets recebem na próxima sincronização."
        }
        section #pagamento aria-labelledby="h-pagamento" {
            h2 #h-pagamento { "Registrar o pagamento de uma multa" }
            @if let Some(e) = &form.error { (e) }
            (post_form(user, "/escritorio/multas/pagamento", "form-pagamento", html! {
                fieldset .linha-form {
                    legend { "Pagamento" }
                    (text_field("pagamento-multa", "multa", "Número da multa (ex.: MUL-2026-0001)", &form.fine, true))
                    (date_field("pagamento-data", "data", "Data do pagamento (em branco: hoje)", &form.date, false))
                    (submit("pagar", "Registrar o pagamento"))
                }
            }))
        }
        section #lista-multas aria-labelledby="h-lista-multas" {
            h2 #h-lista-multas { "Multas do cadastro" }
            form .filtros method="get" action="/escritorio/multas" id="form-filtro-multas" {
                (select_field("filtro-situacao-multas", "situacao", "Situação", &filters, selected))
                (text_field("busca-multas", "busca", "Multa, alvará ou titular", q.busca.as_deref().unwrap_or_default().trim(), false))
                @if sort != COLUMNS.default() {
                    input type="hidden" name="ordem" value=(sort.key);
                    input type="hidden" name="sentido" value=(sort.dir.as_str());
                }
                div .acoes { (submit("filtrar-multas", "Filtrar")) }
            }
            @if let Some(p) = &problem {
                p #erro-filtro-multas role="alert" .erro { (p) }
            }
            p #total-multas role="status" {
                (count(shown.len(), "multa listada", "multas listadas")) "; "
                (count(unpaid, "não paga", "não pagas")) " no cadastro."
                @if !shown.is_empty() {
                    " " a #exportar-multas .nao-imprimir href=(export) { "Exportar esta lista para planilha (CSV)" }
                }
            }
            @if shown.is_empty() {
                p #sem-multas { "Nenhuma multa nesta situação." }
            } @else {
                div .tabela-rolavel role="region" aria-labelledby="legenda-multas" tabindex="0" {
                table #tabela-multas {
                    caption #legenda-multas { "Multas" }
                    thead { (COLUMNS.header(&sort, &order_link)) }
                    tbody {
                        @for (f, h) in &shown {
                            tr id=(format!("multa-{}", f.id)) {
                                td { (f.id) }
                                td { a id=(format!("alvara-da-multa-{}", f.id)) href=(format!("/escritorio/alvaras/{}", url_encode(&f.permit_number))) { (f.permit_number) } }
                                td { @if h.is_empty() { "—" } @else { (h) } }
                                td { (money(f.amount)) }
                                td { (date_br(f.issued_on)) }
                                td {
                                    @match f.paid_on {
                                        Some(d) => { "paga em " (date_br(d)) }
                                        None => {
                                            strong { "não paga" } " — "
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
        }
    };
    Ok(page(Some(user), "Multas", flash, body))
}

/// "1 multa listada", "2 multas listadas": the count with its noun in the right number.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[derive(Debug, Deserialize)]
struct PayForm {
    #[serde(default)]
    multa: String,
    #[serde(default)]
    data: String,
}

/// The date typed in the form: empty is today (as the API's default), else `aaaa-mm-dd` (what
/// a date input sends) or `dd/mm/aaaa`.
fn parse_paid_on(text: &str) -> Result<Option<NaiveDate>, AppError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(t, "%d/%m/%Y"))
        .map(Some)
        .map_err(|_| {
            AppError::unprocessable(
                "invalid_date",
                format!(
                    "Data de pagamento inválida: «{t}». Informe dia/mês/ano, ou deixe em branco \
                     para hoje."
                ),
            )
        })
}

async fn pay(
    State(state): State<AppState>,
    Posted { user, form }: Posted<PayForm>,
) -> Result<Response, PageError> {
    let id = form.multa.trim().to_owned();
    let result = if id.is_empty() {
        Err(AppError::unprocessable(
            "missing_fine",
            "Informe o número da multa paga.",
        ))
    } else {
        match parse_paid_on(&form.data) {
            Ok(paid_on) => record_payment(&state, &user.auth, &id, ops::PayFine { paid_on }).await,
            Err(e) => Err(e),
        }
    };
    match result {
        Ok(u) => {
            let reg = state.store().registry().await?;
            let fine = reg.fines.iter().find(|f| f.id == id);
            let mut text = match fine {
                Some(f) => format!(
                    "Pagamento da multa {} (alvará {}) registrado{}. Cadastro na versão {}.",
                    f.id,
                    f.permit_number,
                    f.paid_on
                        .map(|d| format!(" em {}", date_br(d)))
                        .unwrap_or_default(),
                    u.version
                ),
                None => format!("Pagamento registrado. Cadastro na versão {}.", u.version),
            };
            // What the law still finds on the permit (it did not refuse the payment).
            for w in &u.warnings {
                text.push_str(&format!(
                    " Atenção ({}, {}): {}",
                    w.rule_id, w.citation, w.message
                ));
            }
            user.flash(true, text).await;
            Ok(see_other("/escritorio/multas"))
        }
        Err(e) if e.status.is_client_error() && e.status != StatusCode::FORBIDDEN => {
            let status = if e.status == StatusCode::NOT_FOUND {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                e.status
            };
            let kept = PaymentForm {
                fine: form.multa.clone(),
                date: form.data.clone(),
                error: Some(refusal_box("erro-pagamento", &e)),
            };
            let markup = fines_page(&state, &user, &ListQuery::default(), kept).await?;
            Ok((status, markup).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payment_date_is_today_when_empty_and_read_in_both_spellings() {
        assert_eq!(parse_paid_on("  ").unwrap(), None);
        let d = NaiveDate::from_ymd_opt(2026, 11, 3);
        assert_eq!(parse_paid_on("2026-11-03").unwrap(), d);
        assert_eq!(parse_paid_on("03/11/2026").unwrap(), d);
        let e = parse_paid_on("ontem").unwrap_err();
        assert!(e.message.contains("«ontem»"), "{}", e.message);
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(0, "multa", "multas"), "0 multas");
        assert_eq!(count(1, "multa", "multas"), "1 multa");
        assert_eq!(count(2, "multa", "multas"), "2 multas");
    }

    #[test]
    fn payment_links_escape_the_id() {
        assert_eq!(
            payment_link("MUL 1"),
            "/escritorio/multas?situacao=nao-pagas&multa=MUL%201#form-pagamento"
        );
    }
}
