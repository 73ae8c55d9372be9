//! The law's parameters page: `/escritorio/lei` shows the rules configuration in force, the
//! IPCA series and the holiday calendar of the registry, with forms to enter the next year's
//! IPCA and to add or remove a holiday. Each form is the same registry write as the API
//! (`registry::law`, audited, a new version the devices receive); a refusal renders the page
//! again with 422, the kernel's message and what was typed.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::NaiveDate;
use maud::{Markup, html};
use rust_decimal::Decimal;
use serde::Deserialize;
use sync_core::domain::Registry;
use sync_core::rules::money::IpcaYear;
use sync_core::rules::parameters::{HolidayDay, NewHoliday};

use super::PageError;
use super::layout::{
    date_br, error_box, page, post_form, see_other, select_field, submit, text_field,
};
use super::session::{OfficeUser, Posted, WebUser};
use crate::api::law::LAW_WRITERS;
use crate::registry::{self, EditError, law};
use crate::server::AppState;

const PAGE: &str = "/escritorio/lei";
const TITLE: &str = "Parâmetros da lei";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(PAGE, get(show))
        .route("/escritorio/lei/ipca", post(add_ipca))
        .route("/escritorio/lei/feriados", post(add_holiday))
        .route("/escritorio/lei/feriados/excluir", post(remove_holiday))
}

/// What the forms held when a change was refused.
#[derive(Debug, Default)]
struct Typed {
    ipca: Option<(String, String)>,
    holiday: Option<HolidayForm>,
    /// (form id, message).
    error: Option<(&'static str, String)>,
}

async fn show(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    let reg = state.store().registry().await?;
    Ok(render(&user, &reg, user.take_flash(), &Typed::default()))
}

fn render(
    user: &WebUser,
    reg: &Registry,
    flash: Option<super::session::Flash>,
    typed: &Typed,
) -> Markup {
    let p = reg.law();
    let rules = &p.rules;
    let cal = p.holidays();
    let next = p.ipca.next_year();
    let error_for = |id: &str| {
        typed
            .error
            .as_ref()
            .filter(|(f, _)| *f == id)
            .map(|(_, m)| error_box(&format!("erro-{id}"), m))
    };
    let (ipca_year, ipca_value) = typed
        .ipca
        .clone()
        .unwrap_or_else(|| (next.to_string(), String::new()));
    let h = typed.holiday.clone().unwrap_or_default();
    let kinds = [
        ("municipal", "Feriado municipal (todo ano)"),
        ("nacional", "Feriado nacional (todo ano)"),
        ("ponto", "Ponto facultativo decretado (uma data)"),
    ]
    .map(|(v, l)| (v.to_owned(), l.to_owned()));
    page(
        Some(user),
        TITLE,
        flash,
        html! {
            p #lei-versao {
                "Em vigor na versão " (reg.version) " do cadastro"
                @if reg.parameters.is_none() { " (valores iniciais: a Unidade ainda não os alterou)" }
                ". Os aparelhos recebem estes parâmetros com o cadastro."
            }
            h2 { "Regras" }
            dl #lei-regras {
                dt { "Habitantes por táxi (art. 14)" } dd { (rules.inhabitants_per_taxi) }
                dt { "População do censo" } dd { (rules.census_population) }
                dt { "Limite de táxis (art. 14)" } dd { (sync_core::rules::office::taxi_cap(rules)) }
                dt { "Categorias de CNH aceitas" } dd { (rules.categories_covering_b.join(", ")) }
                dt { "CNH sem EAR" } dd { @if rules.ear_missing == sync_core::rules::EarMissing::Irregular { "irregular" } @else { "advertência" } }
                dt { "Validade da aferição do taxímetro" } dd { (super::layout::plural(rules.taximeter_period_years as usize, "ano", "anos")) }
                dt { "Tolerância após o vencimento da CNH" } dd { (super::layout::plural(rules.cnh_grace_days as usize, "dia", "dias")) }
                dt { "Idade máxima do veículo" } dd { (rules.max_vehicle_age_years) " anos" }
                dt { "Regras desativadas" } dd { @if rules.disabled_rules.is_empty() { "nenhuma" } @else { (ids(&rules.disabled_rules)) } }
                dt { "Regras ativadas além das padrão" } dd { @if rules.enabled_rules.is_empty() { "nenhuma" } @else { (ids(&rules.enabled_rules)) } }
                dt { "Órgão autuador" } dd { (rules.issuing_body) }
            }
            p .dica { "A configuração das regras é alterada pela API (PUT /v1/law/rules)." }

            h2 { "IPCA (art. 12, § 1º)" }
            p { "Os valores de 2004 são corrigidos pelo IPCA acumulado de janeiro a dezembro de cada ano. "
                "O próximo índice a cadastrar é o de " strong #lei-proximo-ipca { (next) } "." }
            table #lei-ipca {
                thead { tr { th scope="col" { "Ano" } th scope="col" { "IPCA (%)" } } }
                tbody {
                    @for y in p.ipca.years().iter().rev() {
                        tr { td { (y.year) } td { (y.percent.to_string().replace('.', ",")) } }
                    }
                }
            }
            @if let Some(e) = error_for("form-ipca") { (e) }
            (post_form(user, "/escritorio/lei/ipca", "form-ipca", html! {
                (text_field("ipca-ano", "ano", "Ano", &ipca_year, true))
                (text_field("ipca-indice", "indice", "IPCA acumulado do ano (%), ex.: 4,26", &ipca_value, true))
                (submit("cadastrar-ipca", "Cadastrar índice"))
            }))

            h2 { "Feriados e pontos facultativos" }
            p { "Contam para os prazos (recursos do art. 35, seleção do art. 5º). Sexta-feira Santa é sempre observada"
                @if cal.carnival { "; Carnaval" } @if cal.corpus_christi { "; Corpus Christi" }
                @if cal.sao_paulo_state_holiday { "; 9 de julho (estadual)" } "." }
            table #lei-feriados {
                thead { tr { th scope="col" { "Tipo" } th scope="col" { "Dia" } th scope="col" { "Nome" } th scope="col" { "Excluir" } } }
                tbody {
                    @for x in &cal.national {
                        (holiday_row(user, "nacional", &format!("{:02}/{:02}", x.day, x.month), &x.name, &format!("{:02}/{:02}", x.day, x.month)))
                    }
                    @for x in &cal.municipal {
                        (holiday_row(user, "municipal", &format!("{:02}/{:02}", x.day, x.month), &x.name, &format!("{:02}/{:02}", x.day, x.month)))
                    }
                    @for x in &cal.closures {
                        (holiday_row(user, "ponto", &date_br(x.date), &x.name, &x.date.to_string()))
                    }
                }
            }
            @if let Some(e) = error_for("form-feriado") { (e) }
            (post_form(user, "/escritorio/lei/feriados", "form-feriado", html! {
                (select_field("feriado-tipo", "tipo", "Tipo", &kinds, if h.tipo.is_empty() { "municipal" } else { &h.tipo }))
                (text_field("feriado-dia", "dia", "Dia (DD/MM todo ano, ou DD/MM/AAAA para um ponto facultativo)", &h.dia, true))
                (text_field("feriado-nome", "nome", "Nome", &h.nome, true))
                (submit("incluir-feriado", "Incluir"))
            }))
        },
    )
}

fn ids(list: &[sync_core::rules::RuleId]) -> String {
    list.iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn holiday_row(user: &WebUser, kind: &str, shown: &str, name: &str, key: &str) -> Markup {
    let label = match kind {
        "nacional" => "nacional",
        "municipal" => "municipal",
        _ => "ponto facultativo",
    };
    let id = format!("excluir-{kind}-{}", key.replace('/', "-"));
    html! {
        tr {
            td { (label) } td { (shown) } td { (name) }
            td {
                (post_form(user, "/escritorio/lei/feriados/excluir", &format!("form-{id}"), html! {
                    input type="hidden" name="tipo" value=(kind);
                    input type="hidden" name="dia" value=(key);
                    button type="submit" id=(id) { "Excluir" }
                }))
            }
        }
    }
}

/// Commits a parameter change as the user, then back to the page with a message; a refusal
/// renders the page again with 422.
async fn commit<F>(
    state: &AppState,
    user: &WebUser,
    action: &str,
    op: F,
    done: String,
    typed: Typed,
    form_id: &'static str,
) -> Result<Response, PageError>
where
    F: Fn(&Registry) -> Result<Registry, EditError>,
{
    let actor = user.auth.actor(state.clock().now());
    match registry::commit(state.store().as_ref(), actor, action, "law:parameters", op).await {
        Ok(_) => {
            user.flash(true, done);
            Ok(see_other(PAGE))
        }
        Err(e) if e.status.is_client_error() => {
            refused(state, user, typed, form_id, e.message).await
        }
        Err(e) => Err(e.into()),
    }
}

async fn refused(
    state: &AppState,
    user: &WebUser,
    mut typed: Typed,
    form_id: &'static str,
    message: String,
) -> Result<Response, PageError> {
    typed.error = Some((form_id, message));
    let reg = state.store().registry().await?;
    Ok((
        StatusCode::UNPROCESSABLE_ENTITY,
        render(user, &reg, None, &typed),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
struct IpcaForm {
    #[serde(default)]
    ano: String,
    #[serde(default)]
    indice: String,
}

async fn add_ipca(
    State(state): State<AppState>,
    Posted { user, form }: Posted<IpcaForm>,
) -> Result<Response, PageError> {
    user.auth.require(LAW_WRITERS)?;
    let typed = Typed {
        ipca: Some((form.ano.clone(), form.indice.clone())),
        ..Typed::default()
    };
    let year = form.ano.trim().parse::<i32>();
    let percent = form.indice.trim().replace(',', ".").parse::<Decimal>();
    let (Ok(year), Ok(percent)) = (year, percent) else {
        return refused(
            &state,
            &user,
            typed,
            "form-ipca",
            String::from(
                "Informe o ano com quatro dígitos e o índice em porcentagem, por exemplo 4,26.",
            ),
        )
        .await;
    };
    let today = state.clock().today();
    let entry = IpcaYear { year, percent };
    commit(
        &state,
        &user,
        "registry.law.ipca",
        |r| law::add_ipca(r, entry, today),
        format!("IPCA de {year} cadastrado."),
        typed,
        "form-ipca",
    )
    .await
}

#[derive(Debug, Clone, Default, Deserialize)]
struct HolidayForm {
    #[serde(default)]
    tipo: String,
    #[serde(default)]
    dia: String,
    #[serde(default)]
    nome: String,
}

/// `DD/MM` → (month, day).
fn day_month(text: &str) -> Option<(u32, u32)> {
    let (d, m) = text.trim().split_once('/')?;
    Some((m.trim().parse().ok()?, d.trim().parse().ok()?))
}

/// `DD/MM/AAAA` or `AAAA-MM-DD`.
fn full_date(text: &str) -> Option<NaiveDate> {
    let t = text.trim();
    NaiveDate::parse_from_str(t, "%d/%m/%Y")
        .or_else(|_| NaiveDate::parse_from_str(t, "%Y-%m-%d"))
        .ok()
}

const BAD_DAY: &str =
    "Dia inválido: use DD/MM para um feriado de todo ano ou DD/MM/AAAA para um ponto facultativo.";

async fn add_holiday(
    State(state): State<AppState>,
    Posted { user, form }: Posted<HolidayForm>,
) -> Result<Response, PageError> {
    user.auth.require(LAW_WRITERS)?;
    let typed = Typed {
        holiday: Some(form.clone()),
        ..Typed::default()
    };
    let name = form.nome.trim().to_owned();
    let holiday = match form.tipo.as_str() {
        "nacional" | "municipal" => day_month(&form.dia).map(|(month, day)| {
            if form.tipo == "nacional" {
                NewHoliday::National {
                    month,
                    day,
                    name,
                    from_year: None,
                }
            } else {
                NewHoliday::Municipal { month, day, name }
            }
        }),
        "ponto" => full_date(&form.dia).map(|date| NewHoliday::Closure { date, name }),
        _ => None,
    };
    let Some(holiday) = holiday else {
        return refused(&state, &user, typed, "form-feriado", BAD_DAY.to_owned()).await;
    };
    commit(
        &state,
        &user,
        "registry.law.holiday.add",
        |r| law::add_holiday(r, holiday.clone()),
        format!("Feriado {} incluído.", form.dia.trim()),
        typed,
        "form-feriado",
    )
    .await
}

async fn remove_holiday(
    State(state): State<AppState>,
    Posted { user, form }: Posted<HolidayForm>,
) -> Result<Response, PageError> {
    user.auth.require(LAW_WRITERS)?;
    let day = match form.tipo.as_str() {
        "nacional" => day_month(&form.dia).map(|(month, day)| HolidayDay::National { month, day }),
        "municipal" => {
            day_month(&form.dia).map(|(month, day)| HolidayDay::Municipal { month, day })
        }
        "ponto" => full_date(&form.dia).map(|date| HolidayDay::Closure { date }),
        _ => None,
    };
    let Some(day) = day else {
        return refused(
            &state,
            &user,
            Typed::default(),
            "form-feriado",
            BAD_DAY.to_owned(),
        )
        .await;
    };
    commit(
        &state,
        &user,
        "registry.law.holiday.remove",
        |r| law::remove_holiday(r, day),
        format!("Feriado de {} excluído.", form.dia.trim()),
        Typed::default(),
        "form-feriado",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_read_as_people_write_them() {
        assert_eq!(day_month("27/08"), Some((8, 27)));
        assert_eq!(day_month(" 1 / 1 "), Some((1, 1)));
        assert_eq!(day_month("27-08"), None);
        assert_eq!(
            full_date("24/12/2027"),
            NaiveDate::from_ymd_opt(2027, 12, 24)
        );
        assert_eq!(
            full_date("2027-12-24"),
            NaiveDate::from_ymd_opt(2027, 12, 24)
        );
        assert_eq!(full_date("31/02/2027"), None);
    }
}
