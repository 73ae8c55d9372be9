//! Commands on the rules engine alone: `check`, `deadline`, `amount`, `rules`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use chrono::{DateTime, NaiveDate, Utc};
use clap::Args;
use rust_decimal::Decimal;
use serde::Serialize;
use sync_core::domain::{DriverId, Plate, Registry};
use sync_core::rules::{self, CheckInput, Facts, Observation, VehicleQuery};

use super::{load_config, print_json, read_json};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Registry fixture (JSON, schema `schemas/registry.schema.json`).
    #[arg(long)]
    registry: PathBuf,
    /// Plate in any spelling: ABC-1234, ABC1234, ABC1C34.
    #[arg(long, conflicts_with = "permit", required_unless_present = "permit")]
    plate: Option<String>,
    /// Permit number (prontuário), instead of the plate.
    #[arg(long)]
    permit: Option<String>,
    /// Driver's CPF or CNH number (prefix with cpf: or cnh: to disambiguate).
    #[arg(long)]
    driver: String,
    /// Instant of the check, RFC 3339 (default: now).
    #[arg(long)]
    at: Option<String>,
    /// Stand where the taxi was found (id), for art. 16 / art. 28.
    #[arg(long)]
    at_stand: Option<String>,
    /// The taxi was parked/waiting (not in motion, no passenger).
    #[arg(long)]
    idle: bool,
    /// Observations as a JSON file (schema `observation.schema.json`); overrides --at-stand/--idle.
    #[arg(long)]
    observation: Option<PathBuf>,
    /// Rules configuration (JSON, schema `rules-config.schema.json`).
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) fn check(a: CheckArgs) -> anyhow::Result<()> {
    let vehicle = match (&a.plate, &a.permit) {
        (Some(p), _) => VehicleQuery::Plate(Plate::parse(p)?),
        (None, Some(n)) if !n.trim().is_empty() => VehicleQuery::Permit(n.trim().to_owned()),
        _ => bail!("informe --plate ou --permit"),
    };
    let driver = DriverId::parse(&a.driver)?;
    let at = parse_instant(a.at.as_deref())?;
    let text = std::fs::read_to_string(&a.registry)
        .with_context(|| format!("não foi possível ler {}", a.registry.display()))?;
    let registry = Registry::from_json(&text).with_context(|| a.registry.display().to_string())?;
    // The registry's own law parameters unless a configuration file overrides them.
    let config = match &a.config {
        Some(_) => load_config(a.config.as_ref())?,
        None => registry.law().rules.clone(),
    };
    let observation = match &a.observation {
        Some(p) => read_json::<Observation>(p)?,
        None => Observation {
            at_stand: a.at_stand.clone(),
            idle: a.idle,
            ..Observation::default()
        },
    };
    let input = CheckInput {
        vehicle,
        driver,
        at,
        observation,
        registry_refreshed_at: None,
    };
    // The same facts a device fills from its replica, then the same check.
    let facts = Facts::from_registry(&registry.index(), &input);
    print_json(&rules::check(&facts, &config))
}

fn parse_instant(at: Option<&str>) -> anyhow::Result<DateTime<Utc>> {
    match at {
        None => Ok(Utc::now()),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .with_context(|| {
                format!("--at {s:?} não é uma data-hora RFC 3339 (ex.: 2026-11-30T14:00:00-03:00)")
            }),
    }
}

fn parse_date(flag: &str, s: &str) -> anyhow::Result<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .with_context(|| format!("{flag} {s:?} não é uma data AAAA-MM-DD"))
}

#[derive(Debug, Args)]
pub(crate) struct DeadlineArgs {
    /// Date of ciência (notification), YYYY-MM-DD.
    #[arg(long)]
    notified: String,
    /// Days of the deadline (art. 35: 10; art. 5: 5).
    #[arg(long, default_value_t = 10)]
    days: u32,
    /// Rules configuration with the holiday calendar.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) fn deadline(a: DeadlineArgs) -> anyhow::Result<()> {
    let notified = parse_date("--notified", &a.notified)?;
    let config = load_config(a.config.as_ref())?;
    let d = rules::deadline::count(notified, a.days, &config.calendar)?;
    print_json(&d)
}

#[derive(Debug, Args)]
pub(crate) struct AmountArgs {
    /// Base value in 2004 reais, e.g. 240.00.
    #[arg(long)]
    base: String,
    /// Year the amount is in force.
    #[arg(long)]
    year: i32,
    /// The server's data directory: the IPCA series of its registry (what the office entered).
    #[arg(long, conflicts_with = "registry")]
    data: Option<PathBuf>,
    /// A registry file (snapshot or fixture): its IPCA series.
    #[arg(long)]
    registry: Option<PathBuf>,
}

/// Amount in force in a year by the IPCA series of a registry: the server's (`--data`), a
/// file's (`--registry`) or, without either, the initial series (up to 2025's index). Until the
/// office enters the index of the year before, it says which year's index is missing.
pub(crate) fn amount(a: AmountArgs) -> anyhow::Result<()> {
    let base: Decimal =
        a.base.trim().replace(',', ".").parse().with_context(|| {
            format!("--base {:?} não é um valor em reais (ex.: 240.00)", a.base)
        })?;
    let registry = match (&a.data, &a.registry) {
        (Some(dir), _) => super::server::registry_of(dir)?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("não foi possível ler {}", path.display()))?;
            Registry::from_json(&text).with_context(|| path.display().to_string())?
        }
        (None, None) => Registry::default(),
    };
    let c = rules::money::corrected(base, a.year, &registry.law().ipca)?;
    print_json(&c)
}

#[derive(Debug, Args)]
pub(crate) struct RulesArgs {
    /// Rules configuration, to show which rules it enables.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Print the catalogue as the Markdown document `docs/rules.md` instead of JSON.
    #[arg(long, conflicts_with = "config")]
    markdown: bool,
}

#[derive(Debug, Serialize)]
struct RuleRow<'a> {
    #[serde(flatten)]
    spec: &'a rules::RuleSpec,
    citation: String,
    enabled: bool,
}

pub(crate) fn rules(a: RulesArgs) -> anyhow::Result<()> {
    if a.markdown {
        print!("{}", rules::reference::markdown());
        return Ok(());
    }
    let config = load_config(a.config.as_ref())?;
    let rows: Vec<RuleRow<'_>> = rules::CATALOGUE
        .iter()
        .map(|spec| RuleRow {
            spec,
            citation: spec.citation(),
            enabled: config.is_enabled(spec.id),
        })
        .collect();
    print_json(&rows)
}
