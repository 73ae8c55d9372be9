//! The law's parameters page: `/escritorio/lei` shows the rules configuration in force, the
//! IPCA series and the holiday calendar of the registry, with forms to change the rules
//! configuration (art. 14 ratio and census, CNH categories, EAR, taximeter period, CNH grace,
//! vehicle age, issuing body, and each rule of the catalogue switched on or off), to enter the
//! next year's IPCA and to add or remove a holiday.
//!
//! Each form calls the API's own write ([`crate::api::law::write`]: the office's role, the
//! law kernel's check, audit, a new registry version the devices receive). The rules form
//! edits everything but the calendar, read at commit time, so it never undoes a holiday
//! added meanwhile. A refusal (the form's own reading of a field, or the kernel's) renders the
//! page again with 422, one Portuguese sentence per mistake and what was typed. Only the
//! office sees the forms; the admin reads the page. Every POST is read under
//! [`REGISTRY_FORM_BODY_LIMIT`].

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use chrono::NaiveDate;
use maud::{Markup, html};
use rust_decimal::Decimal;
use serde::Deserialize;
use sync_core::domain::Registry;
use sync_core::rules::money::IpcaYear;
use sync_core::rules::parameters::{HolidayDay, NewHoliday};
use sync_core::rules::{EarMissing, RuleId, RulesConfig, spec};

use super::PageError;
use super::layout::{
    date_br, error_box, page, post_form, see_other, select_field, submit, text_field,
};
use super::registry::{Fields, done_text, refusal_box};
use super::session::{FormLimit, OfficeUser, Posted, WebUser};
use crate::api::law::{LAW_WRITERS, unknown_rule, write};
use crate::error::AppError;
use crate::limits::{MAX_REGISTRY_TEXT_CHARS, REGISTRY_FORM_BODY_LIMIT};
use crate::registry::RegistryUpdate;
use crate::server::AppState;

const PAGE: &str = "/escritorio/lei";
const TITLE: &str = "Parâmetros da lei";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(PAGE, get(show))
        .route("/escritorio/lei/ipca", post(add_ipca))
        .route("/escritorio/lei/feriados", post(add_holiday))
        .route("/escritorio/lei/feriados/excluir", post(remove_holiday))
        .route("/escritorio/lei/regras", post(set_rules))
        .layer(Extension(FormLimit(REGISTRY_FORM_BODY_LIMIT)))
}

/// What the forms held when a change was refused.
#[derive(Debug, Default)]
struct Typed {
    ipca: Option<(String, String)>,
    holiday: Option<HolidayForm>,
    rules: Option<RulesForm>,
    /// (form id, the error box).
    error: Option<(&'static str, Markup)>,
}

/// Whether the user may change the parameters (the API's role; others read the page).
fn may_change(user: &WebUser) -> bool {
    LAW_WRITERS.contains(&user.auth.role)
}

/// The 403 page for a change by someone who only reads the parameters.
fn require_writer(user: &WebUser) -> Result<(), PageError> {
    if may_change(user) {
        Ok(())
    } else {
        Err(PageError::forbidden(
            user,
            "Só a Unidade de Transportes altera os parâmetros da lei.",
        ))
    }
}

async fn show(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    let reg = state.store().registry().await?;
    Ok(render(
        &user,
        &reg,
        user.take_flash().await,
        &Typed::default(),
    ))
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
    let writer = may_change(user);
    let error_for = |id: &str| {
        typed
            .error
            .as_ref()
            .filter(|(f, _)| *f == id)
            .map(|(_, m)| m.clone())
    };
    let rules_form = typed.rules.clone().unwrap_or_else(|| RulesForm::of(rules));
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
            @if !writer {
                p #somente-leitura .alerta { "Seu perfil pode consultar, mas só a Unidade de Transportes altera os parâmetros da lei." }
            }
            h2 { "Regras" }
            dl #lei-regras {
                dt { "Habitantes por táxi (art. 14)" } dd { (rules.inhabitants_per_taxi) }
                dt { "População do censo" } dd { (thousands(rules.census_population)) }
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
            @if writer {
                h3 { "Alterar a configuração das regras" }
                @if let Some(e) = error_for("form-regras") { (e) }
                (rules_form_markup(user, &rules_form))
            }

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
            @if writer {
                @if let Some(e) = error_for("form-ipca") { (e) }
                (post_form(user, "/escritorio/lei/ipca", "form-ipca", html! {
                    (text_field("ipca-ano", "ano", "Ano", &ipca_year, true))
                    (text_field("ipca-indice", "indice", "IPCA acumulado do ano (%), ex.: 4,26", &ipca_value, true))
                    (submit("cadastrar-ipca", "Cadastrar índice"))
                }))
            }

            h2 { "Feriados e pontos facultativos" }
            p { "Contam para os prazos (recursos do art. 35, seleção do art. 5º). Sexta-feira Santa é sempre observada"
                @if cal.carnival { "; Carnaval" } @if cal.corpus_christi { "; Corpus Christi" }
                @if cal.sao_paulo_state_holiday { "; 9 de julho (estadual)" } "." }
            table #lei-feriados {
                thead { tr { th scope="col" { "Tipo" } th scope="col" { "Dia" } th scope="col" { "Nome" } @if writer { th scope="col" { "Excluir" } } } }
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
            @if writer {
                @if let Some(e) = error_for("form-feriado") { (e) }
                (post_form(user, "/escritorio/lei/feriados", "form-feriado", html! {
                    (select_field("feriado-tipo", "tipo", "Tipo", &kinds, if h.tipo.is_empty() { "municipal" } else { &h.tipo }))
                    (text_field("feriado-dia", "dia", "Dia (DD/MM todo ano, ou DD/MM/AAAA para um ponto facultativo)", &h.dia, true))
                    (text_field("feriado-nome", "nome", "Nome", &h.nome, true))
                    (submit("incluir-feriado", "Incluir"))
                }))
            }
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
            @if may_change(user) {
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
}

/// The end of every form: on success the flash and back to the page; a refusal the user can
/// act on (4xx but 403) renders the page again with 422, its box at the form `form_id`.
async fn outcome(
    state: &AppState,
    user: &WebUser,
    result: Result<RegistryUpdate, AppError>,
    done: &str,
    typed: Typed,
    form_id: &'static str,
) -> Result<Response, PageError> {
    match result {
        Ok(u) => {
            user.flash(true, done_text(done, &u)).await;
            Ok(see_other(PAGE))
        }
        Err(e) if e.status == StatusCode::FORBIDDEN => Err(PageError::forbidden(user, e.message)),
        Err(e) if e.status.is_client_error() => {
            let b = refusal_box(&format!("erro-{form_id}"), &e);
            again(state, user, typed, form_id, b).await
        }
        Err(e) => Err(e.into()),
    }
}

/// A refusal found before the write (a field that does not read), in one sentence.
async fn refused(
    state: &AppState,
    user: &WebUser,
    typed: Typed,
    form_id: &'static str,
    message: String,
) -> Result<Response, PageError> {
    let b = error_box(&format!("erro-{form_id}"), &message);
    again(state, user, typed, form_id, b).await
}

/// The page again, 422, with `error` at the form `form_id` and what was typed.
async fn again(
    state: &AppState,
    user: &WebUser,
    mut typed: Typed,
    form_id: &'static str,
    error: Markup,
) -> Result<Response, PageError> {
    typed.error = Some((form_id, error));
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
    require_writer(&user)?;
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
    let entry = IpcaYear { year, percent };
    let result = write::ipca(&state, &user.auth, entry).await;
    let done = format!("IPCA de {year} cadastrado.");
    outcome(&state, &user, result, &done, typed, "form-ipca").await
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
    require_writer(&user)?;
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
    let result = write::add_holiday(&state, &user.auth, holiday).await;
    let done = format!("Feriado {} incluído.", form.dia.trim());
    outcome(&state, &user, result, &done, typed, "form-feriado").await
}

async fn remove_holiday(
    State(state): State<AppState>,
    Posted { user, form }: Posted<HolidayForm>,
) -> Result<Response, PageError> {
    require_writer(&user)?;
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
    let result = write::remove_holiday(&state, &user.auth, day).await;
    let done = format!("Feriado de {} excluído.", form.dia.trim());
    outcome(
        &state,
        &user,
        result,
        &done,
        Typed::default(),
        "form-feriado",
    )
    .await
}

/// The rules form as typed (every field a `String`, read by [`RulesForm::choice`]); the rules
/// are the values of the checked boxes, `regra=R01&regra=R02…`, so the form is read as pairs.
#[derive(Debug, Clone, Default)]
struct RulesForm {
    habitantes: String,
    censo: String,
    categorias: String,
    ear: String,
    taximetro: String,
    tolerancia: String,
    idade: String,
    orgao: String,
    /// The checked boxes, as sent.
    regras: Vec<String>,
}

/// The EAR options: (value, label).
const EAR_OPTIONS: [(&str, &str, EarMissing); 2] = [
    (
        "advertencia",
        "Advertência (a CNH segue aceita)",
        EarMissing::Warning,
    ),
    (
        "irregular",
        "Irregularidade (o condutor não pode dirigir o táxi)",
        EarMissing::Irregular,
    ),
];

impl RulesForm {
    /// The form filled with the configuration in force.
    fn of(r: &RulesConfig) -> Self {
        Self {
            habitantes: r.inhabitants_per_taxi.to_string(),
            censo: thousands(r.census_population),
            categorias: r.categories_covering_b.join(", "),
            ear: EAR_OPTIONS
                .iter()
                .find(|(_, _, e)| *e == r.ear_missing)
                .map_or("advertencia", |(v, _, _)| v)
                .to_owned(),
            taximetro: r.taximeter_period_years.to_string(),
            tolerancia: r.cnh_grace_days.to_string(),
            idade: r.max_vehicle_age_years.to_string(),
            orgao: r.issuing_body.clone(),
            regras: RuleId::ALL
                .into_iter()
                .filter(|id| r.is_enabled(*id))
                .map(|id| id.as_str().to_owned())
                .collect(),
        }
    }

    /// The form from the posted pairs (the last of a repeated field counts; `csrf` and unknown
    /// names are ignored).
    fn read(pairs: Vec<(String, String)>) -> Self {
        let mut f = Self::default();
        for (name, value) in pairs {
            let slot = match name.as_str() {
                "habitantes" => &mut f.habitantes,
                "censo" => &mut f.censo,
                "categorias" => &mut f.categorias,
                "ear" => &mut f.ear,
                "taximetro" => &mut f.taximetro,
                "tolerancia" => &mut f.tolerancia,
                "idade" => &mut f.idade,
                "orgao" => &mut f.orgao,
                "regra" => {
                    f.regras.push(value);
                    continue;
                }
                _ => continue,
            };
            *slot = value;
        }
        f
    }

    /// What the form asks for, or every mistake of its reading (one sentence each). The ranges
    /// are the kernel's to judge, when the configuration is written.
    fn choice(&self) -> Result<RulesChoice, AppError> {
        let mut f = Fields::default();
        let inhabitants = whole(&mut f, "Habitantes por táxi", &self.habitantes);
        let census = whole(&mut f, "População do censo", &self.censo);
        let categories = f
            .text("Categorias de CNH", &self.categorias, false)
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|c| !c.is_empty())
            .map(str::to_uppercase)
            .fold(Vec::new(), |mut all: Vec<String>, c| {
                if !all.contains(&c) {
                    all.push(c);
                }
                all
            });
        let ear = EAR_OPTIONS
            .iter()
            .find(|(v, _, _)| *v == self.ear.trim())
            .map(|(_, _, e)| *e);
        if ear.is_none() {
            f.error("Escolha se a CNH sem EAR dá advertência ou é irregular.");
        }
        let taximeter = whole(&mut f, "Validade da aferição do taxímetro", &self.taximetro);
        let grace = whole(
            &mut f,
            "Tolerância após o vencimento da CNH",
            &self.tolerancia,
        );
        let max_age = whole(&mut f, "Idade máxima do veículo", &self.idade);
        let issuing_body = f.text("Órgão autuador", &self.orgao, false);
        let mut on = BTreeSet::new();
        for text in &self.regras {
            match RuleId::parse(text.trim()) {
                Some(id) => {
                    on.insert(id);
                }
                None => {
                    f.error(unknown_rule(text));
                    break;
                }
            }
        }
        f.finish()?;
        match (inhabitants, census, ear, taximeter, grace, max_age) {
            (
                Some(inhabitants),
                Some(census),
                Some(ear),
                Some(taximeter),
                Some(grace),
                Some(max_age),
            ) => Ok(RulesChoice {
                inhabitants,
                census,
                categories,
                ear,
                taximeter,
                grace,
                max_age,
                issuing_body,
                on,
            }),
            // Unreachable: a field that did not read left its mistake, and `finish` said it.
            _ => Err(AppError::unprocessable(
                "invalid_form",
                "Confira os campos do formulário.",
            )),
        }
    }

    /// The form as shown again: each text cut to what a field may hold, so a huge input is
    /// not sent back.
    fn shown(&self) -> Self {
        let cut = |s: &String| s.chars().take(MAX_REGISTRY_TEXT_CHARS).collect::<String>();
        Self {
            habitantes: cut(&self.habitantes),
            censo: cut(&self.censo),
            categorias: cut(&self.categorias),
            ear: cut(&self.ear),
            taximetro: cut(&self.taximetro),
            tolerancia: cut(&self.tolerancia),
            idade: cut(&self.idade),
            orgao: cut(&self.orgao),
            regras: self
                .regras
                .iter()
                .filter(|r| RuleId::parse(r).is_some())
                .cloned()
                .collect(),
        }
    }
}

/// A whole number as people write it (`237240` or `237.240`); `None` after saying why.
fn whole<T: std::str::FromStr>(f: &mut Fields, label: &str, value: &str) -> Option<T> {
    let t = f.text(label, value, true);
    if t.is_empty() {
        return None;
    }
    let groups: Vec<&str> = t.split('.').collect();
    let digits = groups
        .iter()
        .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()));
    let grouped =
        groups.len() == 1 || (groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3));
    if !(digits && grouped) {
        f.error(format!(
            "O campo «{label}» deve ser um número inteiro, só com algarismos; foi digitado «{t}»."
        ));
        return None;
    }
    let n = groups.concat().parse::<T>().ok();
    if n.is_none() {
        f.error(format!(
            "O número do campo «{label}» é grande demais: «{t}»."
        ));
    }
    n
}

/// `237240` → `237.240`.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

/// The rules form read: what the office chose.
#[derive(Debug, Clone)]
struct RulesChoice {
    inhabitants: u32,
    census: u32,
    categories: Vec<String>,
    ear: EarMissing,
    taximeter: u8,
    grace: u32,
    max_age: i32,
    issuing_body: String,
    /// The rules checked.
    on: BTreeSet<RuleId>,
}

impl RulesChoice {
    /// The configuration in force with this choice: the calendar kept; a rule off by default
    /// and checked is listed as switched on, one on by default and unchecked as switched off
    /// (the catalogue's defaults stay the reference, so a rule the catalogue later turns on by
    /// default is not pinned off by this form). A repealed rule has no box: one already listed
    /// as off stays listed.
    fn apply(&self, current: &RulesConfig) -> RulesConfig {
        let mut disabled: BTreeSet<RuleId> = current
            .disabled_rules
            .iter()
            .copied()
            .filter(|id| spec(*id).repealed)
            .collect();
        let mut enabled = BTreeSet::new();
        for id in RuleId::ALL {
            let s = spec(id);
            let checked = self.on.contains(&id);
            if checked && (s.repealed || !s.enabled_by_default) {
                enabled.insert(id);
            } else if !checked && s.enabled_by_default {
                disabled.insert(id);
            }
        }
        RulesConfig {
            inhabitants_per_taxi: self.inhabitants,
            census_population: self.census,
            categories_covering_b: self.categories.clone(),
            ear_missing: self.ear,
            taximeter_period_years: self.taximeter,
            cnh_grace_days: self.grace,
            max_vehicle_age_years: self.max_age,
            disabled_rules: disabled.into_iter().collect(),
            enabled_rules: enabled.into_iter().collect(),
            calendar: current.calendar.clone(),
            issuing_body: self.issuing_body.clone(),
        }
    }
}

fn rules_form_markup(user: &WebUser, form: &RulesForm) -> Markup {
    let ear: Vec<(String, String)> = EAR_OPTIONS
        .iter()
        .map(|(v, l, _)| ((*v).to_owned(), (*l).to_owned()))
        .collect();
    let taximeter = [
        ("1", "1 ano (art. 1º, § 1º)"),
        ("2", "2 anos (Portaria Inmetro 433/2025)"),
    ]
    .map(|(v, l)| (v.to_owned(), l.to_owned()));
    let checked: BTreeSet<&str> = form.regras.iter().map(|r| r.trim()).collect();
    let repealed: Vec<RuleId> = RuleId::ALL
        .into_iter()
        .filter(|id| spec(*id).repealed)
        .collect();
    post_form(
        user,
        "/escritorio/lei/regras",
        "form-regras",
        html! {
            fieldset {
                legend { "Valores" }
                (text_field("regras-habitantes", "habitantes", "Habitantes por táxi (art. 14)", &form.habitantes, true))
                (text_field("regras-censo", "censo", "População do último censo", &form.censo, true))
                (text_field("regras-categorias", "categorias", "Categorias de CNH que habilitam a dirigir táxi (separadas por vírgula; a B é obrigatória)", &form.categorias, true))
                (select_field("regras-ear", "ear", "CNH sem a observação EAR (atividade remunerada)", &ear, &form.ear))
                (select_field("regras-taximetro", "taximetro", "Validade da aferição do taxímetro", &taximeter, &form.taximetro))
                (text_field("regras-tolerancia", "tolerancia", "Tolerância após o vencimento da CNH (dias; 0 para nenhuma)", &form.tolerancia, true))
                (text_field("regras-idade", "idade", "Idade máxima do veículo (anos)", &form.idade, true))
                (text_field("regras-orgao", "orgao", "Órgão autuador (impresso nos autos)", &form.orgao, true))
            }
            fieldset #regras-aplicadas {
                legend { "Regras aplicadas (desmarque para desligar uma regra)" }
                ul .lista-regras {
                    @for id in RuleId::ALL.into_iter().filter(|id| !spec(*id).repealed) {
                        @let s = spec(id);
                        @let box_id = format!("regra-{}", id.as_str());
                        li {
                            input type="checkbox" id=(box_id) name="regra" value=(id.as_str()) checked[checked.contains(id.as_str())];
                            " "
                            label for=(box_id) {
                                (id.as_str()) " — " (s.title)
                                @if !s.enabled_by_default { " (desligada por padrão)" }
                            }
                        }
                    }
                }
                @if !repealed.is_empty() {
                    p .dica { "Revogadas, nunca aplicadas: " (ids(&repealed)) "." }
                }
            }
            (submit("salvar-regras", "Salvar a configuração das regras"))
        },
    )
}

async fn set_rules(
    State(state): State<AppState>,
    Posted { user, form }: Posted<Vec<(String, String)>>,
) -> Result<Response, PageError> {
    require_writer(&user)?;
    let form = RulesForm::read(form);
    let typed = Typed {
        rules: Some(form.shown()),
        ..Typed::default()
    };
    let result = match form.choice() {
        Ok(choice) => write::rules(&state, &user.auth, |current| choice.apply(current)).await,
        Err(e) => Err(e),
    };
    let done = "Configuração das regras alterada.";
    outcome(&state, &user, result, done, typed, "form-regras").await
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

    #[test]
    fn whole_numbers_are_read_with_or_without_thousands_dots() {
        let mut f = Fields::default();
        assert_eq!(whole::<u32>(&mut f, "x", "237.240"), Some(237_240));
        assert_eq!(whole::<u32>(&mut f, " 1800 ", " 1800 "), Some(1_800));
        assert_eq!(whole::<u32>(&mut f, "x", "1.000.000"), Some(1_000_000));
        assert!(f.finish().is_ok());
        for bad in ["2.5", "23.72.40", "-3", "1,5", "dez", ".240", "4294967296"] {
            let mut f = Fields::default();
            assert_eq!(whole::<u32>(&mut f, "x", bad), None, "{bad}");
            assert!(f.finish().is_err(), "{bad}");
        }
        assert_eq!(thousands(237_240), "237.240");
        assert_eq!(thousands(100), "100");
        assert_eq!(thousands(1_000_000), "1.000.000");
    }

    #[test]
    fn the_form_of_a_configuration_reads_back_as_the_same_configuration() {
        let r = RulesConfig {
            disabled_rules: vec![RuleId::R24],
            enabled_rules: vec![RuleId::R21],
            ..RulesConfig::default()
        };
        let form = RulesForm::of(&r);
        assert!(!form.regras.iter().any(|x| x == RuleId::R24.as_str()));
        assert!(form.regras.iter().any(|x| x == RuleId::R21.as_str()));
        let choice = form.choice().unwrap();
        assert_eq!(choice.apply(&r), r);
    }
}
