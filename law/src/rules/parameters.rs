//! The law's parameters as registry data: the rules configuration (with its holiday calendar)
//! and the IPCA series, in one value that travels with the registry.
//!
//! Flow: the office changes them (server: API and page), each change is a registry write like
//! any other — validated here, audited, a new registry version — and the registry feed carries
//! them to every device, whose store evaluates with the parameters of its replica. So a phone
//! and the office judge the same registry version with the same parameters, and a year turning
//! needs an index entered, never a rebuild.
//!
//! A registry that never had parameters set holds none (`Registry::parameters` is `None`) and
//! is judged by [`LawParameters::default`]: the compiled-in tables, which are only the initial
//! data.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::deadline::{CalendarConfig, DatedClosure, RecurringHoliday};
use super::money::{BASE_YEAR, IpcaError, IpcaSeries, IpcaYear};
use super::{RuleId, RulesConfig, spec};

/// Lowest accepted art. 14 ratio (inhabitants per taxi). The law's values were 2,000 and,
/// after amendment, 1,800; a quarter of that would multiply the fleet by eight — a typo, not a
/// municipal decision.
pub const MIN_INHABITANTS_PER_TAXI: u32 = 500;
/// Highest accepted art. 14 ratio: two and a half times the original 2,000.
pub const MAX_INHABITANTS_PER_TAXI: u32 = 5_000;
/// Lowest accepted census population: Americana has had more than 100,000 inhabitants since the
/// 1980 census; below, the figure is a typo (a digit lost).
pub const MIN_CENSUS_POPULATION: u32 = 100_000;
/// Highest accepted census population: four times the 237,240 of 2022, far beyond any
/// projection; above, a digit too many.
pub const MAX_CENSUS_POPULATION: u32 = 1_000_000;
/// Longest accepted CNH grace after expiry: three times the CTB's 30 days for traffic; the
/// municipal law itself has none.
pub const MAX_CNH_GRACE_DAYS: u32 = 90;
/// Oldest vehicle age limit accepted (years): twice the longest age limits in force in São
/// Paulo municipalities' taxi laws (15); the law's own is 10.
pub const MAX_VEHICLE_AGE_LIMIT_YEARS: i32 = 30;
/// Longest taximeter verification period accepted (years): 1 under art. 1 §1, 2 under Portaria
/// Inmetro 433/2025; nothing provides more.
pub const MAX_TAXIMETER_PERIOD_YEARS: u8 = 2;
/// Most holidays in one list (national, municipal, decreed closures): a year has about a dozen
/// national and a handful of municipal ones; 60 leaves room for years of decreed closures while
/// bounding what every device holds and every deadline count scans.
pub const MAX_HOLIDAYS_PER_LIST: usize = 60;
/// Longest holiday name, in characters: the longest national one has 45.
pub const MAX_HOLIDAY_NAME_CHARS: usize = 100;
/// Longest issuing body name, in characters, as printed on records.
pub const MAX_ISSUING_BODY_CHARS: usize = 200;

/// CNH categories a configuration may name (Resolução Contran 789/2020).
const CNH_CATEGORIES: [&str; 9] = ["A", "B", "C", "D", "E", "AB", "AC", "AD", "AE"];

/// Everything the law leaves to data, at one registry version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LawParameters {
    /// Parameters the law leaves open, with the holiday calendar (`rules.calendar`).
    pub rules: RulesConfig,
    /// IPCA accumulated per year, from 2004.
    pub ipca: IpcaSeries,
}

/// The defaults, shared (a registry without parameters borrows them).
pub fn default_parameters() -> &'static LawParameters {
    static DEFAULT: OnceLock<LawParameters> = OnceLock::new();
    DEFAULT.get_or_init(LawParameters::default)
}

/// A holiday the office adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum NewHoliday {
    /// A national holiday every year on that day (e.g. created by a new federal law).
    National {
        month: u32,
        day: u32,
        name: String,
        /// First year observed, if not always.
        #[serde(default)]
        from_year: Option<i32>,
    },
    /// A municipal holiday every year on that day.
    Municipal { month: u32, day: u32, name: String },
    /// A closure on one date (ponto facultativo decreed).
    Closure { date: NaiveDate, name: String },
}

/// Which holiday to remove: its list and day (names are not keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum HolidayDay {
    National { month: u32, day: u32 },
    Municipal { month: u32, day: u32 },
    Closure { date: NaiveDate },
}

/// Why parameters are refused (for the office, in Portuguese, one sentence each).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParameterError {
    #[error("{0}")]
    Ipca(#[from] IpcaError),
    #[error("{what} deve estar entre {min} e {max}; o valor informado foi {value}.")]
    OutOfRange {
        what: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error(
        "As categorias de CNH que habilitam para táxi devem incluir a B e só categorias existentes (A, B, C, D, E, AB, AC, AD, AE)."
    )]
    Categories,
    #[error("A regra {0} aparece ao mesmo tempo entre as desativadas e as ativadas.")]
    EnabledAndDisabled(RuleId),
    #[error("A regra {0} foi revogada e não pode ser ativada.")]
    RepealedEnabled(RuleId),
    #[error("O nome do órgão autuador deve ter de 1 a {MAX_ISSUING_BODY_CHARS} caracteres.")]
    IssuingBody,
    #[error("{0}/{1} não é um dia que se repete todo ano.")]
    NotAnnualDay(u32, u32),
    #[error("O nome do feriado deve ter de 1 a {MAX_HOLIDAY_NAME_CHARS} caracteres.")]
    HolidayName,
    #[error("Já há um feriado cadastrado nesse dia nesta lista: {0}.")]
    HolidayExists(String),
    #[error("Não há feriado cadastrado nesse dia nesta lista.")]
    HolidayNotFound,
    #[error("A lista de feriados já tem o máximo de {MAX_HOLIDAYS_PER_LIST} datas.")]
    TooManyHolidays,
    #[error("A data {0} é anterior à lei ({BASE_YEAR}).")]
    ClosureBeforeLaw(NaiveDate),
}

fn range(what: &'static str, value: i64, min: i64, max: i64) -> Result<(), ParameterError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ParameterError::OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

fn check_name(name: &str) -> Result<(), ParameterError> {
    let n = name.trim().chars().count();
    if n == 0 || n > MAX_HOLIDAY_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(ParameterError::HolidayName);
    }
    Ok(())
}

/// A month and day that exist every year (29 February does not).
fn check_annual(month: u32, day: u32) -> Result<(), ParameterError> {
    // 2023: not a leap year.
    NaiveDate::from_ymd_opt(2023, month, day)
        .map(|_| ())
        .ok_or(ParameterError::NotAnnualDay(day, month))
}

fn check_recurring(list: &[RecurringHoliday]) -> Result<(), ParameterError> {
    if list.len() > MAX_HOLIDAYS_PER_LIST {
        return Err(ParameterError::TooManyHolidays);
    }
    let mut days = BTreeSet::new();
    for h in list {
        check_annual(h.month, h.day)?;
        check_name(&h.name)?;
        if !days.insert((h.month, h.day)) {
            return Err(ParameterError::HolidayExists(h.name.clone()));
        }
    }
    Ok(())
}

fn check_closures(list: &[DatedClosure]) -> Result<(), ParameterError> {
    if list.len() > MAX_HOLIDAYS_PER_LIST {
        return Err(ParameterError::TooManyHolidays);
    }
    let mut days = BTreeSet::new();
    for c in list {
        if c.date.year() < BASE_YEAR {
            return Err(ParameterError::ClosureBeforeLaw(c.date));
        }
        check_name(&c.name)?;
        if !days.insert(c.date) {
            return Err(ParameterError::HolidayExists(c.name.clone()));
        }
    }
    Ok(())
}

/// The rules configuration is within what the law and common sense admit.
pub fn check_rules(r: &RulesConfig) -> Result<(), ParameterError> {
    range(
        "A razão de habitantes por táxi (art. 14)",
        i64::from(r.inhabitants_per_taxi),
        i64::from(MIN_INHABITANTS_PER_TAXI),
        i64::from(MAX_INHABITANTS_PER_TAXI),
    )?;
    range(
        "A população do censo",
        i64::from(r.census_population),
        i64::from(MIN_CENSUS_POPULATION),
        i64::from(MAX_CENSUS_POPULATION),
    )?;
    range(
        "O prazo de validade da aferição do taxímetro, em anos,",
        i64::from(r.taximeter_period_years),
        1,
        i64::from(MAX_TAXIMETER_PERIOD_YEARS),
    )?;
    range(
        "A tolerância após o vencimento da CNH, em dias,",
        i64::from(r.cnh_grace_days),
        0,
        i64::from(MAX_CNH_GRACE_DAYS),
    )?;
    range(
        "A idade máxima do veículo, em anos,",
        i64::from(r.max_vehicle_age_years),
        1,
        i64::from(MAX_VEHICLE_AGE_LIMIT_YEARS),
    )?;
    let known = |c: &String| CNH_CATEGORIES.contains(&c.as_str());
    if !r.categories_covering_b.iter().all(known)
        || !r.categories_covering_b.iter().any(|c| c == "B")
    {
        return Err(ParameterError::Categories);
    }
    if let Some(id) = r
        .enabled_rules
        .iter()
        .find(|id| r.disabled_rules.contains(id))
    {
        return Err(ParameterError::EnabledAndDisabled(*id));
    }
    if let Some(id) = r.enabled_rules.iter().find(|id| spec(**id).repealed) {
        return Err(ParameterError::RepealedEnabled(*id));
    }
    let body = r.issuing_body.trim().chars().count();
    if body == 0 || body > MAX_ISSUING_BODY_CHARS {
        return Err(ParameterError::IssuingBody);
    }
    check_calendar(&r.calendar)
}

fn check_calendar(c: &CalendarConfig) -> Result<(), ParameterError> {
    check_recurring(&c.national)?;
    check_recurring(&c.municipal)?;
    check_closures(&c.closures)
}

impl LawParameters {
    /// Every parameter is well formed (see [`check_rules`] and `IpcaSeries::check`).
    pub fn check(&self) -> Result<(), ParameterError> {
        check_rules(&self.rules)?;
        self.ipca.check()?;
        Ok(())
    }

    /// The holiday calendar deadlines are counted with.
    pub fn holidays(&self) -> &CalendarConfig {
        &self.rules.calendar
    }

    /// Adds the next year's IPCA (see `IpcaSeries::add`).
    pub fn add_ipca(&mut self, entry: IpcaYear, today_year: i32) -> Result<(), ParameterError> {
        Ok(self.ipca.add(entry, today_year)?)
    }

    /// Adds a holiday to its list, refusing a second one on the same day.
    pub fn add_holiday(&mut self, h: NewHoliday) -> Result<(), ParameterError> {
        let cal = &mut self.rules.calendar;
        match h {
            NewHoliday::National {
                month,
                day,
                name,
                from_year,
            } => push_recurring(&mut cal.national, month, day, name, from_year),
            NewHoliday::Municipal { month, day, name } => {
                push_recurring(&mut cal.municipal, month, day, name, None)
            }
            NewHoliday::Closure { date, name } => {
                let mut next = cal.closures.clone();
                if let Some(c) = next.iter().find(|c| c.date == date) {
                    return Err(ParameterError::HolidayExists(c.name.clone()));
                }
                next.push(DatedClosure {
                    date,
                    name: name.trim().to_owned(),
                });
                next.sort_by_key(|c| c.date);
                check_closures(&next)?;
                cal.closures = next;
                Ok(())
            }
        }
    }

    /// Removes the holiday of that list on that day.
    pub fn remove_holiday(&mut self, which: HolidayDay) -> Result<(), ParameterError> {
        let cal = &mut self.rules.calendar;
        let before;
        let after = match which {
            HolidayDay::National { month, day } => {
                before = cal.national.len();
                cal.national.retain(|h| (h.month, h.day) != (month, day));
                cal.national.len()
            }
            HolidayDay::Municipal { month, day } => {
                before = cal.municipal.len();
                cal.municipal.retain(|h| (h.month, h.day) != (month, day));
                cal.municipal.len()
            }
            HolidayDay::Closure { date } => {
                before = cal.closures.len();
                cal.closures.retain(|c| c.date != date);
                cal.closures.len()
            }
        };
        if after == before {
            return Err(ParameterError::HolidayNotFound);
        }
        Ok(())
    }
}

fn push_recurring(
    list: &mut Vec<RecurringHoliday>,
    month: u32,
    day: u32,
    name: String,
    from_year: Option<i32>,
) -> Result<(), ParameterError> {
    if let Some(h) = list.iter().find(|h| (h.month, h.day) == (month, day)) {
        return Err(ParameterError::HolidayExists(h.name.clone()));
    }
    let mut next = list.clone();
    next.push(RecurringHoliday {
        month,
        day,
        name: name.trim().to_owned(),
        from_year,
    });
    next.sort_by_key(|h| (h.month, h.day));
    check_recurring(&next)?;
    *list = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_compiled_in_tables_and_pass_their_own_checks() {
        let p = LawParameters::default();
        p.check().unwrap();
        assert_eq!(p.ipca, IpcaSeries::default());
        assert_eq!(p.rules, RulesConfig::default());
        assert_eq!(
            p.holidays()
                .holiday_name(NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()),
            Some(String::from("Dia Nacional de Zumbi e da Consciência Negra"))
        );
    }

    #[test]
    fn every_numeric_limit_passes_at_its_edge_and_refuses_one_beyond() {
        type Set = fn(&mut RulesConfig, i64);
        let cases: [(Set, i64, i64); 5] = [
            (
                |r, v| r.inhabitants_per_taxi = v as u32,
                i64::from(MIN_INHABITANTS_PER_TAXI),
                i64::from(MAX_INHABITANTS_PER_TAXI),
            ),
            (
                |r, v| r.census_population = v as u32,
                i64::from(MIN_CENSUS_POPULATION),
                i64::from(MAX_CENSUS_POPULATION),
            ),
            (
                |r, v| r.taximeter_period_years = v as u8,
                1,
                i64::from(MAX_TAXIMETER_PERIOD_YEARS),
            ),
            (
                |r, v| r.cnh_grace_days = v as u32,
                0,
                i64::from(MAX_CNH_GRACE_DAYS),
            ),
            (
                |r, v| r.max_vehicle_age_years = v as i32,
                1,
                i64::from(MAX_VEHICLE_AGE_LIMIT_YEARS),
            ),
        ];
        for (set, min, max) in cases {
            for ok in [min, max] {
                let mut r = RulesConfig::default();
                set(&mut r, ok);
                check_rules(&r).unwrap();
            }
            for bad in [min - 1, max + 1] {
                if bad < 0 {
                    continue; // unsigned: not representable, refused by the parser
                }
                let mut r = RulesConfig::default();
                set(&mut r, bad);
                let e = check_rules(&r).unwrap_err();
                assert!(matches!(e, ParameterError::OutOfRange { .. }), "{bad}: {e}");
                assert!(e.to_string().contains(&bad.to_string()), "{e}");
            }
        }
    }

    #[test]
    fn rule_lists_and_categories_are_checked() {
        let mut r = RulesConfig {
            categories_covering_b: vec!["B".into(), "X".into()],
            ..RulesConfig::default()
        };
        assert_eq!(check_rules(&r), Err(ParameterError::Categories));
        r.categories_covering_b = vec!["D".into()];
        assert_eq!(check_rules(&r), Err(ParameterError::Categories));
        let r = RulesConfig {
            disabled_rules: vec![RuleId::R21],
            enabled_rules: vec![RuleId::R21],
            ..RulesConfig::default()
        };
        assert_eq!(
            check_rules(&r),
            Err(ParameterError::EnabledAndDisabled(RuleId::R21))
        );
        let r = RulesConfig {
            enabled_rules: vec![RuleId::R15],
            ..RulesConfig::default()
        };
        assert_eq!(
            check_rules(&r),
            Err(ParameterError::RepealedEnabled(RuleId::R15))
        );
        let mut r = RulesConfig {
            issuing_body: "x".repeat(MAX_ISSUING_BODY_CHARS),
            ..RulesConfig::default()
        };
        check_rules(&r).unwrap();
        r.issuing_body.push('x');
        assert_eq!(check_rules(&r), Err(ParameterError::IssuingBody));
    }

    #[test]
    fn holidays_are_added_once_removed_by_day_and_bounded() {
        let mut p = LawParameters::default();
        let aniversario = || NewHoliday::Municipal {
            month: 8,
            day: 27,
            name: "Aniversário de Americana".into(),
        };
        p.add_holiday(aniversario()).unwrap();
        let d = NaiveDate::from_ymd_opt(2027, 8, 27).unwrap();
        assert!(!p.holidays().is_business_day(d));
        assert!(matches!(
            p.add_holiday(aniversario()),
            Err(ParameterError::HolidayExists(_))
        ));
        assert_eq!(
            p.add_holiday(NewHoliday::Municipal {
                month: 2,
                day: 29,
                name: "x".into()
            }),
            Err(ParameterError::NotAnnualDay(29, 2))
        );
        assert_eq!(
            p.add_holiday(NewHoliday::Closure {
                date: NaiveDate::from_ymd_opt(2027, 1, 2).unwrap(),
                name: "x".repeat(MAX_HOLIDAY_NAME_CHARS + 1),
            }),
            Err(ParameterError::HolidayName)
        );
        p.remove_holiday(HolidayDay::Municipal { month: 8, day: 27 })
            .unwrap();
        assert!(p.holidays().is_business_day(d));
        assert_eq!(
            p.remove_holiday(HolidayDay::Municipal { month: 8, day: 27 }),
            Err(ParameterError::HolidayNotFound)
        );
        // Exactly at the limit passes, one more is refused.
        let start = NaiveDate::from_ymd_opt(2030, 1, 1).unwrap();
        for i in 0..MAX_HOLIDAYS_PER_LIST {
            let date = start + chrono::Days::new(i as u64);
            p.add_holiday(NewHoliday::Closure {
                date,
                name: "Ponto facultativo".into(),
            })
            .unwrap();
        }
        p.check().unwrap();
        assert_eq!(
            p.add_holiday(NewHoliday::Closure {
                date: NaiveDate::from_ymd_opt(2031, 1, 1).unwrap(),
                name: "Ponto facultativo".into(),
            }),
            Err(ParameterError::TooManyHolidays)
        );
    }

    #[test]
    fn a_new_national_holiday_counts_from_its_first_year() {
        let mut p = LawParameters::default();
        p.add_holiday(NewHoliday::National {
            month: 3,
            day: 10,
            name: "Feriado novo".into(),
            from_year: Some(2027),
        })
        .unwrap();
        let cal = p.holidays();
        // 10 March 2026 and 2027 are both weekdays (Tuesday, Wednesday).
        assert!(cal.is_business_day(NaiveDate::from_ymd_opt(2026, 3, 10).unwrap()));
        assert!(!cal.is_business_day(NaiveDate::from_ymd_opt(2027, 3, 10).unwrap()));
    }
}
