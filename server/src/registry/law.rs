//! The law's parameters as registry writes: the rules configuration (with its holiday
//! calendar) and the IPCA series live in the registry (`Registry::parameters`), so each change
//! goes through `registry::commit` like any other office change — a new version, its change log
//! and audit row — and reaches devices in the feed (`RegistryChange::UpsertLawParameters`).
//!
//! Every operation here is pure: it takes the current registry and returns the next one, with
//! the new parameters checked by the law kernel (`LawParameters::check`). Refusals are
//! `EditError::Invalid` (422) with the kernel's Portuguese message.
//!
//! Migration from `DIR/rules-config.json`: the server used to read its rules from that file,
//! which never reached a device. At start ([`import_rules_file`]), if the file exists and the
//! registry has no parameters yet, its content is imported once as a registry write (action
//! `registry.law.import`, logged); from then on the registry is the only source and the file is
//! ignored (a warning says so while it is still there).

use chrono::NaiveDate;
use sync_core::domain::Registry;
use sync_core::rules::money::IpcaYear;
use sync_core::rules::parameters::{HolidayDay, NewHoliday, ParameterError};
use sync_core::rules::{LawParameters, RulesConfig};

use super::EditError;
use crate::service::ServiceError;
use crate::store::{Actor, Store};

/// `code` of every refusal of a parameter change.
pub const INVALID: &str = "law_parameters_invalid";

fn invalid(e: ParameterError) -> EditError {
    EditError::Invalid {
        code: INVALID,
        message: e.to_string(),
    }
}

/// The registry with its parameters changed by `change` and checked whole.
fn with_parameters(
    reg: &Registry,
    change: impl FnOnce(&mut LawParameters) -> Result<(), ParameterError>,
) -> Result<Registry, EditError> {
    let mut parameters = reg.law().clone();
    change(&mut parameters).map_err(invalid)?;
    parameters.check().map_err(invalid)?;
    let mut next = reg.clone();
    next.parameters = Some(parameters);
    Ok(next)
}

/// Replaces the rules configuration (its calendar included).
pub fn set_rules(reg: &Registry, rules: RulesConfig) -> Result<Registry, EditError> {
    with_parameters(reg, |p| {
        p.rules = rules;
        Ok(())
    })
}

/// Adds the next year's IPCA; `today` decides which years are over.
pub fn add_ipca(reg: &Registry, entry: IpcaYear, today: NaiveDate) -> Result<Registry, EditError> {
    use chrono::Datelike;
    with_parameters(reg, |p| p.add_ipca(entry, today.year()))
}

/// Adds a holiday or decreed closure.
pub fn add_holiday(reg: &Registry, holiday: NewHoliday) -> Result<Registry, EditError> {
    with_parameters(reg, |p| p.add_holiday(holiday))
}

/// Removes a holiday or decreed closure.
pub fn remove_holiday(reg: &Registry, day: HolidayDay) -> Result<Registry, EditError> {
    with_parameters(reg, |p| p.remove_holiday(day))
}

/// Imports the rules of `DIR/rules-config.json` into a registry that has no parameters yet
/// (see the module doc). Returns the new version, if it imported.
pub async fn import_rules_file(
    store: &dyn Store,
    rules: &RulesConfig,
    actor: Actor,
) -> Result<Option<u64>, ServiceError> {
    let current = store.registry().await?;
    if let Some(p) = &current.parameters {
        if &p.rules != rules {
            tracing::warn!(
                file = crate::config::RULES_FILE,
                version = current.version,
                "rules-config.json ignorado: o cadastro já tem os parâmetros da lei; apague o arquivo"
            );
        }
        return Ok(None);
    }
    let update = super::commit(
        store,
        actor,
        "registry.law.import",
        "law:parameters",
        |reg| {
            if reg.parameters.is_some() {
                // Another start imported meanwhile.
                return Ok(reg.clone());
            }
            set_rules(reg, rules.clone())
        },
    )
    .await?;
    if update.changed {
        tracing::info!(
            file = crate::config::RULES_FILE,
            version = update.version,
            "rules-config.json importado para o cadastro; o arquivo não é mais lido"
        );
        return Ok(Some(update.version));
    }
    Ok(None)
}

/// What `GET /v1/law` answers and the page shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LawParametersView {
    /// Registry version these parameters are in force at.
    pub version: u64,
    /// False while the office never set them: the compiled-in defaults apply.
    pub set_by_office: bool,
    /// The year whose IPCA is to be entered next.
    pub next_ipca_year: i32,
    pub parameters: LawParameters,
}

impl LawParametersView {
    pub fn of(reg: &Registry) -> Self {
        Self {
            version: reg.version,
            set_by_office: reg.parameters.is_some(),
            next_ipca_year: reg.law().ipca.next_year(),
            parameters: reg.law().clone(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rust_decimal::Decimal;
    use sync_core::testkit::sample_registry;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn an_ipca_entry_sets_the_parameters_and_refusals_name_the_problem() {
        let reg = sample_registry();
        assert!(reg.parameters.is_none());
        let entry = IpcaYear {
            year: 2026,
            percent: Decimal::new(410, 2),
        };
        match add_ipca(&reg, entry, d(2026, 12, 31)) {
            Err(EditError::Invalid { code, message }) => {
                assert_eq!(code, INVALID);
                assert!(message.contains("2026"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let next = add_ipca(&reg, entry, d(2027, 1, 1)).unwrap();
        assert_eq!(next.law().ipca.percent(2026), Some(Decimal::new(410, 2)));
        assert!(matches!(
            add_ipca(&next, entry, d(2027, 1, 2)),
            Err(EditError::Invalid { .. })
        ));
    }

    #[test]
    fn absurd_rules_are_refused_and_nothing_changes() {
        let reg = sample_registry();
        let rules = RulesConfig {
            inhabitants_per_taxi: 18,
            ..RulesConfig::default()
        };
        assert!(matches!(
            set_rules(&reg, rules),
            Err(EditError::Invalid { .. })
        ));
    }
}
