//! The law's parameters over HTTP: `/v1/law/…`, thin handlers over [`crate::registry::law`].
//!
//! | route | what |
//! |---|---|
//! | `GET /v1/law` | the parameters in force: rules configuration, holiday calendar, IPCA series |
//! | `PUT /v1/law/rules` | replace the rules configuration (its calendar included) |
//! | `POST /v1/law/ipca` | enter the next year's IPCA |
//! | `POST /v1/law/holidays`, `POST /v1/law/holidays/remove` | add or remove a holiday or closure |
//! | `GET /v1/law/amount?base=&year=` | a 2004 amount corrected by the registry's IPCA series |
//!
//! Reading is for every authenticated role (devices receive the same parameters in the feed);
//! changing them is for the office only. Every change is a registry write, one function of
//! [`write`] each (the law's page calls the same ones): checked by the law kernel (422 `law_parameters_invalid` with its Portuguese message), audited, a new registry
//! version that devices receive as `UpsertLawParameters`.

use axum::Json;
use axum::extract::State;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::rules::money::{self, Corrected, IpcaYear};
use sync_core::rules::parameters::{HolidayDay, NewHoliday};
use sync_core::rules::{RuleId, RulesConfig};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, QueryParams, parse_json};
use super::openapi::named_schema;
use crate::auth::{Auth, Role, roles};
use crate::error::{AppError, ErrorBody};
use crate::registry::law::{self, LawParametersView};
use crate::registry::{self as reg, RegistryUpdate};
use crate::server::AppState;

/// Who changes the law's parameters: the office (the municipal decision is theirs; admins
/// manage accounts, not the law).
pub(crate) const LAW_WRITERS: &[Role] = crate::auth::roles::OFFICE_WRITERS;

/// `sync_core::rules::RulesConfig`.
#[derive(Debug)]
pub struct RulesConfigDoc;
/// `sync_core::rules::money::IpcaYear`.
#[derive(Debug)]
pub struct IpcaYearDoc;
/// `sync_core::rules::parameters::NewHoliday`.
#[derive(Debug)]
pub struct NewHolidayDoc;
/// `sync_core::rules::parameters::HolidayDay`.
#[derive(Debug)]
pub struct HolidayDayDoc;
/// `sync_core::rules::money::Corrected`.
#[derive(Debug)]
pub struct CorrectedDoc;

named_schema!(
    LawParametersView => "LawParametersView",
    RulesConfigDoc => "RulesConfig",
    IpcaYearDoc => "IpcaYear",
    NewHolidayDoc => "NewHoliday",
    HolidayDayDoc => "HolidayDay",
    CorrectedDoc => "Corrected",
    AmountQuery => "AmountQuery",
);

/// `GET /v1/law/amount` query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AmountQuery {
    /// Value in 2004 reais, e.g. `240.00`.
    pub base: Decimal,
    /// Year the amount is in force.
    pub year: i32,
}

/// The payload schemas of this module (`schemas/api/`).
pub(crate) fn payload_schemas() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "law-parameters-view",
            schemars::schema_for!(LawParametersView).to_value(),
        ),
        (
            "law-amount-query",
            schemars::schema_for!(AmountQuery).to_value(),
        ),
    ]
}

/// The components this module's paths refer to.
pub(crate) fn add_components(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<LawParametersView>();
    let _ = generator.subschema_for::<RulesConfig>();
    let _ = generator.subschema_for::<IpcaYear>();
    let _ = generator.subschema_for::<NewHoliday>();
    let _ = generator.subschema_for::<HolidayDay>();
    let _ = generator.subschema_for::<Corrected>();
    let _ = generator.subschema_for::<AmountQuery>();
}

/// The parameter changes, one function each, which the API handlers and the law's page
/// (`web::law`) both call: the role, the audit action and subject, and the kernel's check are
/// written once, so a change made on the page and one made through the API cannot differ.
pub(crate) mod write {
    use super::*;
    use sync_core::domain::Registry;

    /// Runs a parameter change as `auth` (the office only) and commits it as a registry version.
    async fn change<F>(
        state: &AppState,
        auth: &Auth,
        action: &str,
        op: F,
    ) -> Result<RegistryUpdate, AppError>
    where
        F: Fn(&Registry) -> Result<Registry, reg::EditError>,
    {
        auth.require(LAW_WRITERS)?;
        let actor = auth.actor(state.clock().now());
        Ok(reg::commit(state.store().as_ref(), actor, action, "law:parameters", op).await?)
    }

    /// Replaces the rules configuration by `edit` of the one in force, read at commit time (so
    /// the page, which edits all but the calendar, cannot undo a holiday added meanwhile).
    pub(crate) async fn rules(
        state: &AppState,
        auth: &Auth,
        edit: impl Fn(&RulesConfig) -> RulesConfig,
    ) -> Result<RegistryUpdate, AppError> {
        change(state, auth, "registry.law.rules", |r| {
            law::set_rules(r, edit(&r.law().rules))
        })
        .await
    }

    /// Enters the next year's IPCA (today decides which years are over).
    pub(crate) async fn ipca(
        state: &AppState,
        auth: &Auth,
        entry: IpcaYear,
    ) -> Result<RegistryUpdate, AppError> {
        let today = state.clock().today();
        change(state, auth, "registry.law.ipca", |r| {
            law::add_ipca(r, entry, today)
        })
        .await
    }

    /// Adds a holiday or decreed closure.
    pub(crate) async fn add_holiday(
        state: &AppState,
        auth: &Auth,
        holiday: NewHoliday,
    ) -> Result<RegistryUpdate, AppError> {
        change(state, auth, "registry.law.holiday.add", |r| {
            law::add_holiday(r, holiday.clone())
        })
        .await
    }

    /// Removes a holiday or decreed closure.
    pub(crate) async fn remove_holiday(
        state: &AppState,
        auth: &Auth,
        day: HolidayDay,
    ) -> Result<RegistryUpdate, AppError> {
        change(state, auth, "registry.law.holiday.remove", |r| {
            law::remove_holiday(r, day)
        })
        .await
    }
}

#[utoipa::path(
    get,
    path = "/v1/law",
    tag = "law",
    summary = "Parâmetros da lei em vigor: configuração das regras, calendário de feriados e série do IPCA",
    responses(
        (status = 200, description = "Os parâmetros e a versão do cadastro", body = LawParametersView),
    )
)]
async fn get_parameters(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<LawParametersView>, AppError> {
    auth.require(roles::ANY)?;
    let reg = state.store().registry().await?;
    Ok(Json(LawParametersView::of(&reg)))
}

#[utoipa::path(
    put,
    path = "/v1/law/rules",
    tag = "law",
    summary = "Substitui a configuração das regras (com o calendário de feriados)",
    request_body = RulesConfigDoc,
    responses(
        (status = 200, description = "Nova versão do cadastro", body = RegistryUpdate),
        (status = 403, description = "Só a Unidade altera os parâmetros", body = ErrorBody),
        (status = 422, description = "Regra desconhecida ou valor fora do aceito", body = ErrorBody),
    )
)]
async fn put_rules(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(body): JsonBody<serde_json::Value>,
) -> Result<Json<RegistryUpdate>, AppError> {
    auth.require(LAW_WRITERS)?;
    let rules = rules_of(&body)?;
    write::rules(&state, &auth, |_| rules.clone())
        .await
        .map(Json)
}

/// The body as a `RulesConfig`, naming an unknown rule id in words (the generic parse error
/// would only say "valor não reconhecido").
fn rules_of(body: &serde_json::Value) -> Result<RulesConfig, AppError> {
    for list in ["disabled_rules", "enabled_rules"] {
        let ids = body.get(list).and_then(|v| v.as_array());
        for id in ids.into_iter().flatten() {
            if let Some(text) = id.as_str()
                && RuleId::parse(text).is_none()
            {
                return Err(AppError::unprocessable(law::INVALID, unknown_rule(text)));
            }
        }
    }
    let bytes = serde_json::to_vec(body)
        .map_err(|_| AppError::unprocessable("invalid_body", "Corpo JSON inválido."))?;
    parse_json(&bytes)
}

/// Most characters of an unknown rule id repeated in its refusal: ids have three (`R24`), so
/// sixteen show any typo whole, while a long input sent as an id is not sent back.
pub const MAX_UNKNOWN_RULE_SHOWN_CHARS: usize = 16;

/// The refusal of a rule id the catalogue lacks (what was sent, cut short: it is echoed).
pub(crate) fn unknown_rule(text: &str) -> String {
    let shown: String = text.chars().take(MAX_UNKNOWN_RULE_SHOWN_CHARS).collect();
    format!("A regra «{shown}» não existe no catálogo.")
}

#[utoipa::path(
    post,
    path = "/v1/law/ipca",
    tag = "law",
    summary = "Cadastra o IPCA acumulado do ano seguinte ao último da série",
    request_body = IpcaYearDoc,
    responses(
        (status = 200, description = "Nova versão do cadastro", body = RegistryUpdate),
        (status = 403, description = "Só a Unidade altera os parâmetros", body = ErrorBody),
        (status = 422, description = "Ano já cadastrado, fora de sequência, ainda não encerrado ou valor absurdo", body = ErrorBody),
    )
)]
async fn post_ipca(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(entry): JsonBody<IpcaYear>,
) -> Result<Json<RegistryUpdate>, AppError> {
    write::ipca(&state, &auth, entry).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/v1/law/holidays",
    tag = "law",
    summary = "Inclui um feriado nacional ou municipal, ou um ponto facultativo decretado",
    request_body = NewHolidayDoc,
    responses(
        (status = 200, description = "Nova versão do cadastro", body = RegistryUpdate),
        (status = 403, description = "Só a Unidade altera os parâmetros", body = ErrorBody),
        (status = 422, description = "Dia inválido, já cadastrado ou nome inválido", body = ErrorBody),
    )
)]
async fn post_holiday(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(holiday): JsonBody<NewHoliday>,
) -> Result<Json<RegistryUpdate>, AppError> {
    write::add_holiday(&state, &auth, holiday).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/v1/law/holidays/remove",
    tag = "law",
    summary = "Exclui um feriado ou ponto facultativo",
    request_body = HolidayDayDoc,
    responses(
        (status = 200, description = "Nova versão do cadastro", body = RegistryUpdate),
        (status = 403, description = "Só a Unidade altera os parâmetros", body = ErrorBody),
        (status = 422, description = "Não há feriado nesse dia", body = ErrorBody),
    )
)]
async fn post_remove_holiday(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(day): JsonBody<HolidayDay>,
) -> Result<Json<RegistryUpdate>, AppError> {
    write::remove_holiday(&state, &auth, day).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/v1/law/amount",
    tag = "law",
    summary = "Valor de 2004 corrigido pelo IPCA do cadastro até o ano pedido (art. 12, § 1º)",
    params(
        ("base" = String, Query, description = "Valor de 2004, ex.: 240.00"),
        ("year" = i32, Query, description = "Ano em que o valor vigora"),
    ),
    responses(
        (status = 200, description = "O valor e como foi calculado", body = CorrectedDoc),
        (status = 422, description = "Falta o IPCA de um ano anterior (diz qual)", body = ErrorBody),
    )
)]
async fn get_amount(
    State(state): State<AppState>,
    auth: Auth,
    QueryParams(q): QueryParams<AmountQuery>,
) -> Result<Json<Corrected>, AppError> {
    auth.require(roles::ANY)?;
    let reg = state.store().registry().await?;
    money::corrected(q.base, q.year, &reg.law().ipca)
        .map(Json)
        .map_err(|e| AppError::unprocessable(amount_code(&e), capitalised(&e.to_string())))
}

fn amount_code(e: &money::MoneyError) -> &'static str {
    match e {
        money::MoneyError::MissingIndex(..) => "ipca_missing",
        _ => "amount_invalid",
    }
}

/// The kernel's message as one sentence: capital first, full stop last.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    out.push_str(chars.as_str());
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_parameters))
        .routes(routes!(put_rules))
        .routes(routes!(post_ipca))
        .routes(routes!(post_holiday))
        .routes(routes!(post_remove_holiday))
        .routes(routes!(get_amount))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_rule_is_repeated_up_to_its_limit() {
        let at = "X".repeat(MAX_UNKNOWN_RULE_SHOWN_CHARS);
        assert!(unknown_rule(&at).contains(&format!("«{at}»")));
        let over = format!("{at}Y");
        assert!(unknown_rule(&over).contains(&format!("«{at}»")));
        assert!(!unknown_rule(&over).contains('Y'));
    }
}
