//! Command line of `taxi-fiscal`. Every command prints JSON on stdout (`serve` and `demo` print
//! where they listen, then log to stderr); errors are one line on stderr and a non-zero exit
//! (see `main.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde::Serialize;
use sync_core::rules::RulesConfig;

mod device;
mod device_sync;
mod engine;
mod lottery;
mod server;

#[derive(Debug, Parser)]
#[command(
    name = "taxi-fiscal",
    version,
    about = "Fiscalização de táxis — Lei 4.019/2004 de Americana-SP"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Field check of a taxi and its driver against a registry fixture; prints the Verdict.
    Check(engine::CheckArgs),
    /// Appeal deadline (arts. 33–35): notification date + 10 calendar days, rolled to a business day.
    Deadline(engine::DeadlineArgs),
    /// A fee or fine of 2004 corrected by the IPCA to the amount in force in a year (R22).
    Amount(engine::AmountArgs),
    /// The rule catalogue (R01–R44, D01–D04) with citations and whether each is enabled.
    Rules(engine::RulesArgs),
    /// The officer's device store without a phone: registry replica, lookups, checks, records.
    Device(device::DeviceArgs),
    /// Run the central server on a data directory (SQLite inside; nothing else to install).
    Serve(server::ServeArgs),
    /// Run the server with a demo registry of Americana and demo users (seeded once).
    Demo(server::DemoArgs),
    /// Replace the server's registry with a CSV file (one row per permit), all or nothing.
    Import(server::ImportArgs),
    /// The audit chain: `audit verify --data DIR` (chain, anchors, derived tables), `audit head`.
    Audit(server::AuditArgs),
    /// Accounts from the command line: `admin add-user` (first administrator of a `serve`).
    Admin(server::AdminArgs),
    /// A consistent copy of the server's database, taken while it runs, checked like `audit
    /// verify` before it is kept.
    Backup(server::BackupArgs),
    /// Puts a backup in place as the server's database (only where there is none), checked
    /// first.
    Restore(server::RestoreArgs),
    /// An edital's lottery (art. 3, III): `lottery verify` recomputes the draw from the published
    /// list and seed, and compares it with the published result.
    Lottery(lottery::LotteryArgs),
}

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Check(a) => engine::check(a),
        Command::Deadline(a) => engine::deadline(a),
        Command::Amount(a) => engine::amount(a),
        Command::Rules(a) => engine::rules(a),
        Command::Device(a) => device::run(a),
        Command::Serve(a) => server::serve(a),
        Command::Demo(a) => server::demo(a),
        Command::Import(a) => server::import(a),
        Command::Audit(a) => server::audit(a),
        Command::Admin(a) => server::admin(a),
        Command::Backup(a) => server::backup(a),
        Command::Restore(a) => server::restore(a),
        Command::Lottery(a) => lottery::run(a),
    }
}

/// Prints a value as pretty JSON on stdout.
pub(crate) fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).context("escrevendo a saída")?;
    writeln!(out).context("escrevendo a saída")?;
    Ok(())
}

/// Reads a JSON file into `T`, naming the file in the error.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("não foi possível ler {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} não é um JSON válido", path.display()))
}

/// The rules configuration: defaults, or a JSON file (schema `rules-config.schema.json`).
pub(crate) fn load_config(path: Option<&PathBuf>) -> anyhow::Result<RulesConfig> {
    match path {
        None => Ok(RulesConfig::default()),
        Some(p) => read_json(p),
    }
}
