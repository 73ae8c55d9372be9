//! `taxi-fiscal device --db FILE …`: the device store from the command line — what the app does
//! on a phone, for tests, demos and support.
//!
//! Every subcommand opens the store (creating and migrating it if needed; refusing a corrupt,
//! foreign or too-new file without touching it), does one thing, and prints JSON. Registry
//! feed files are the JSON documents of `schemas/registry-snapshot.schema.json` and
//! `schemas/registry-changes.schema.json`.
//!
//! Field records go through `sync_core::field::FieldRecords`, written as the identity stored in
//! the file by `init` (device id, user, role, stand): `record infraction` runs the check and
//! seals its verdict into the auto, `record transgression` is the coordinator's report, and
//! every record command is one store transaction (auto number included). The vehicle the check
//! finds is the auto's only once the officer confirms it (`--confirm-vehicle` or `record
//! confirm-vehicle`); `record print` renders an issued record offline (`sync_core::print`).
//! Instants are the machine's clock unless `--at` says otherwise.

use std::path::PathBuf;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use sync_core::domain::{DriverId, Plate, Registry};
use sync_core::feed::RegistryChanges;
use sync_core::field::{
    self, CoordinatorStep, FieldRecords, NewInfraction, NewTransgression, RecordOutcome,
    WitnessEntry,
};
use sync_core::print::Format;
use sync_core::records::{Gravity, LegalBasis, Position, Signature, UserRole, WarningKind};
use sync_core::rules::{CheckInput, Observation, RulesConfig, VehicleQuery};
use sync_core::store::{DeviceIdentity, PhotoStatus, Store, StoreStatus};
use uuid::Uuid;

use super::{print_json, read_json};

#[derive(Debug, Args)]
pub(crate) struct DeviceArgs {
    /// Device database file (created if absent).
    #[arg(long)]
    db: PathBuf,
    #[command(subcommand)]
    command: DeviceCommand,
}

#[derive(Debug, Subcommand)]
enum DeviceCommand {
    /// Replace the registry replica with a snapshot (JSON).
    LoadSnapshot {
        /// Snapshot file (schema registry-snapshot.schema.json).
        file: PathBuf,
    },
    /// Apply a batch of registry changes (JSON); refused whole unless it starts at the
    /// replica's version.
    ApplyChanges {
        /// Changes file (schema registry-changes.schema.json).
        file: PathBuf,
    },
    /// Look up a permit by plate, permit number, or a person's CPF/CNH.
    Lookup(LookupArgs),
    /// Field check against the replica; prints the Verdict stamped with the registry version
    /// and age.
    Check(CheckArgs),
    /// Add a block of auto numbers leased by the server (inclusive); records waiting for a
    /// number get one from it.
    AddNumbers {
        #[arg(long)]
        start: u64,
        #[arg(long)]
        end: u64,
    },
    /// Store a photo; prints its SHA-256. With --record, adds it to that record (same
    /// transaction).
    AttachPhoto {
        file: PathBuf,
        /// Record (id) the photo belongs to.
        #[arg(long)]
        record: Option<String>,
        /// Instant of the capture, RFC 3339 (default: now).
        #[arg(long)]
        at: Option<String>,
    },
    /// Re-hash every stored photo; fails if any no longer matches its hash.
    VerifyPhotos,
    /// Registry version, refresh time, counts and the device's identity.
    Status,
    /// Set who this device is: the identity every record is written as.
    Init(InitArgs),
    /// Create and edit field records (autos de infração, transgression reports).
    #[command(subcommand)]
    Record(RecordCommand),
    /// Every record on the device, oldest first.
    List,
    /// One record: the document, its status and events, photos re-hashed, people it names.
    Show { id: String },
    /// Register this device on the server with the administrator's one-time enrolment code
    /// (the device id the server gives is kept for the next login).
    Enrol(super::device_sync::EnrolArgs),
    /// Log in on the server (session stored in the device file).
    Login(super::device_sync::LoginArgs),
    /// Sync with the server: numbers, records, photos, registry; prints a JSON summary.
    Sync(super::device_sync::SyncArgs),
}

#[derive(Debug, Args)]
struct InitArgs {
    /// Registered device id (UUID; its bytes sign every change). Default: a new one, or the
    /// one already stored.
    #[arg(long)]
    device_id: Option<Uuid>,
    /// User signed in.
    #[arg(long)]
    user: String,
    #[arg(long, value_enum)]
    role: RoleArg,
    /// The coordinator's stand (required for coordinators).
    #[arg(long)]
    stand: Option<String>,
    /// Órgão autuador printed on autos (default: by role).
    #[arg(long)]
    issuing_body: Option<String>,
}

/// Field roles (art. 36 bodies, art. 17 coordinators).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoleArg {
    /// Officer of the Guarda Municipal.
    #[value(alias = "guarda-municipal", alias = "guarda_municipal")]
    Officer,
    /// Inspector of the Secretaria de Transportes.
    #[value(alias = "secretaria-inspector", alias = "secretaria_inspector")]
    Inspector,
    /// Stand coordinator.
    Coordinator,
}

impl From<RoleArg> for UserRole {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::Officer => UserRole::GuardaMunicipal,
            RoleArg::Inspector => UserRole::SecretariaInspector,
            RoleArg::Coordinator => UserRole::Coordinator,
        }
    }
}

#[derive(Debug, Subcommand)]
enum RecordCommand {
    /// Auto de infração: runs the field check and seals its verdict into the record.
    Infraction(InfractionArgs),
    /// Coordinator's transgression report about a driver of the own stand (art. 17).
    Transgression(TransgressionArgs),
    /// Confirm that the vehicle of a draft (the plate the lookup filled in) is the one
    /// inspected: recorded in the record; an auto is not issued without it.
    ConfirmVehicle {
        id: String,
        #[arg(long)]
        at: Option<String>,
    },
    /// Print an issued record: ESC/POS bytes for a thermal printer, or a PDF.
    Print {
        id: String,
        #[arg(long, value_enum)]
        format: FormatArg,
        /// File to write the bytes to.
        #[arg(long)]
        out: PathBuf,
    },
    /// Issue a record: evidence sealed from then on.
    Issue {
        id: String,
        #[command(flatten)]
        signature: SignatureArgs,
        #[arg(long)]
        at: Option<String>,
    },
    /// Add witnesses ("NAME:STATEMENT"), also after issuing.
    AddWitness {
        id: String,
        #[arg(required = true, value_name = "NAME:STATEMENT")]
        witnesses: Vec<String>,
        #[arg(long)]
        at: Option<String>,
    },
    /// Rewrite the facts of a draft (refused once issued).
    SetFacts {
        id: String,
        facts: String,
        #[arg(long)]
        at: Option<String>,
    },
    /// Settle a light transgression with a warning (art. 17 §1).
    Settle {
        id: String,
        #[arg(value_enum)]
        warning: WarningArg,
        #[arg(long)]
        at: Option<String>,
    },
    /// Send a transgression report to the Unidade (art. 17 §2).
    Forward {
        id: String,
        #[arg(long)]
        at: Option<String>,
    },
    /// Give records waiting for an auto number one from the device's blocks.
    AssignNumbers,
}

/// Paper formats of `record print`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    /// 58 mm thermal printer (ESC/POS).
    Escpos58,
    /// 80 mm thermal printer (ESC/POS).
    Escpos80,
    /// A4 PDF.
    Pdf,
    /// Receipt-sized PDF (80 mm wide).
    PdfReceipt,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Escpos58 => Format::EscPos58,
            FormatArg::Escpos80 => Format::EscPos80,
            FormatArg::Pdf => Format::PdfA4,
            FormatArg::PdfReceipt => Format::PdfReceipt,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum WarningArg {
    Verbal,
    Written,
}

impl From<WarningArg> for WarningKind {
    fn from(w: WarningArg) -> Self {
        match w {
            WarningArg::Verbal => WarningKind::Verbal,
            WarningArg::Written => WarningKind::Written,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum GravityArg {
    Light,
    Serious,
}

#[derive(Debug, Args)]
struct SignatureArgs {
    /// Why the offender's signature is missing (a captured signature is the app's).
    #[arg(long, default_value = "assinatura não colhida")]
    unsigned_reason: String,
}

impl SignatureArgs {
    fn signature(&self) -> Signature {
        Signature::Missing {
            reason: self.unsigned_reason.clone(),
        }
    }
}

#[derive(Debug, Args)]
struct PositionArgs {
    /// Latitude (decimal degrees).
    #[arg(long, requires_all = ["lon", "accuracy"], allow_hyphen_values = true)]
    lat: Option<f64>,
    /// Longitude (decimal degrees).
    #[arg(long, requires_all = ["lat", "accuracy"], allow_hyphen_values = true)]
    lon: Option<f64>,
    /// Horizontal accuracy, metres.
    #[arg(long, requires_all = ["lat", "lon"])]
    accuracy: Option<f64>,
}

impl PositionArgs {
    fn position(&self) -> Option<Position> {
        match (self.lat, self.lon, self.accuracy) {
            (Some(lat), Some(lon), Some(accuracy_m)) => Some(Position {
                lat,
                lon,
                accuracy_m,
            }),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
struct InfractionArgs {
    #[command(flatten)]
    target: CheckTarget,
    /// Driver's CPF or CNH number (prefix cpf: or cnh: to disambiguate).
    #[arg(long)]
    driver: String,
    /// Name of a driver the registry does not know (kept on the device, not in the record).
    #[arg(long)]
    driver_name: Option<String>,
    /// Description of the facts (default: the irregular findings of the check).
    #[arg(long)]
    facts: Option<String>,
    /// Further legal basis, by rule id of the catalogue (`taxi-fiscal rules`).
    #[arg(long = "rule", value_name = "RULE_ID")]
    rules: Vec<String>,
    #[command(flatten)]
    position: PositionArgs,
    /// Instant of the facts and the check, RFC 3339 (default: now).
    #[arg(long)]
    at: Option<String>,
    /// Stand where the taxi was found (id).
    #[arg(long)]
    at_stand: Option<String>,
    /// The taxi was parked/waiting (not in motion, no passenger).
    #[arg(long)]
    idle: bool,
    /// Witness as "NAME:STATEMENT" (repeatable).
    #[arg(long = "witness", value_name = "NAME:STATEMENT")]
    witnesses: Vec<String>,
    /// Photo file taken at the scene (repeatable).
    #[arg(long = "photo", value_name = "FILE")]
    photos: Vec<PathBuf>,
    /// The officer confirms that the vehicle the check finds (by plate, or the permit's
    /// vehicle) is the one inspected; recorded in the auto, which is not issued without it.
    #[arg(long)]
    confirm_vehicle: bool,
    /// Issue at once (evidence sealed; needs --confirm-vehicle).
    #[arg(long)]
    issue: bool,
    #[command(flatten)]
    signature: SignatureArgs,
}

#[derive(Debug, Args)]
struct TransgressionArgs {
    /// The coordinator's stand (default: the device's; another one is refused).
    #[arg(long)]
    coordinator_stand: Option<String>,
    #[command(flatten)]
    target: CheckTarget,
    /// Driver's CPF or CNH number: the holder or an auxiliary of the permit.
    #[arg(long)]
    driver: String,
    #[arg(long, value_enum)]
    gravity: GravityArg,
    #[arg(long)]
    facts: String,
    /// Legal basis, by rule id of the catalogue.
    #[arg(long = "rule", value_name = "RULE_ID")]
    rules: Vec<String>,
    /// Witness as "NAME:STATEMENT" (repeatable; a serious report needs one).
    #[arg(long = "witness", value_name = "NAME:STATEMENT")]
    witnesses: Vec<String>,
    #[arg(long = "photo", value_name = "FILE")]
    photos: Vec<PathBuf>,
    #[command(flatten)]
    position: PositionArgs,
    #[arg(long)]
    at: Option<String>,
    /// Issue at once (implied by --settle and --forward).
    #[arg(long)]
    issue: bool,
    /// Settle a light fault with a warning (issues the report).
    #[arg(long, value_enum, conflicts_with = "forward")]
    settle: Option<WarningArg>,
    /// Send to the Unidade (issues the report).
    #[arg(long)]
    forward: bool,
    #[command(flatten)]
    signature: SignatureArgs,
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct LookupTarget {
    /// Plate in any spelling: ABC-1234, ABC1234, ABC1C34.
    #[arg(long)]
    plate: Option<String>,
    /// Permit number (prontuário).
    #[arg(long)]
    permit: Option<String>,
    /// CPF or CNH number of a holder or auxiliary (prefix cpf: or cnh: to disambiguate).
    #[arg(long)]
    person: Option<String>,
}

#[derive(Debug, Args)]
struct LookupArgs {
    #[command(flatten)]
    target: LookupTarget,
    /// Instant for "in force" and the registry age, RFC 3339 (default: now).
    #[arg(long)]
    at: Option<String>,
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct CheckTarget {
    /// Plate in any spelling.
    #[arg(long)]
    plate: Option<String>,
    /// Permit number (prontuário), instead of the plate.
    #[arg(long)]
    permit: Option<String>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    target: CheckTarget,
    /// Driver's CPF or CNH number (prefix cpf: or cnh: to disambiguate).
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
    /// Observations as a JSON file (schema observation.schema.json); overrides
    /// --at-stand/--idle.
    #[arg(long)]
    observation: Option<PathBuf>,
}

pub(crate) fn run(a: DeviceArgs) -> anyhow::Result<()> {
    let mut store = Store::open(&a.db)?;
    match a.command {
        DeviceCommand::LoadSnapshot { file } => {
            let text = read_text(&file)?;
            let snapshot =
                Registry::from_json(&text).with_context(|| file.display().to_string())?;
            print_json(&store.apply_snapshot(&snapshot, Utc::now())?)
        }
        DeviceCommand::ApplyChanges { file } => {
            let text = read_text(&file)?;
            let changes =
                RegistryChanges::from_json(&text).with_context(|| file.display().to_string())?;
            print_json(&store.apply_changes(&changes, Utc::now())?)
        }
        DeviceCommand::Lookup(l) => lookup(&store, l),
        DeviceCommand::Check(c) => check(&store, c),
        DeviceCommand::AddNumbers { start, end } => {
            store.add_number_block(start, end)?;
            // Records that waited for a number get one now (only a configured device has any).
            let numbered = match store.device_identity()? {
                Some(_) => FieldRecords::open(&mut store)?.assign_pending_numbers(Utc::now())?,
                None => Vec::new(),
            };
            print_json(&NumbersAdded {
                start,
                end,
                numbers_left: store.numbers_left()?,
                numbered: numbered
                    .into_iter()
                    .map(|(id, number)| Numbered { id, number })
                    .collect(),
            })
        }
        DeviceCommand::AttachPhoto { file, record, at } => {
            let bytes = std::fs::read(&file)
                .with_context(|| format!("não foi possível ler {}", file.display()))?;
            let Some(id) = record else {
                let hash = store.put_photo(&bytes)?;
                return print_json(&PhotoAttached {
                    hash,
                    size: bytes.len(),
                    record: None,
                });
            };
            let at = parse_instant(at.as_deref())?;
            let (hash, out) = FieldRecords::open(&mut store)?.attach_photo(&id, at, &bytes)?;
            print_json(&PhotoAttached {
                hash,
                size: bytes.len(),
                record: Some(out),
            })
        }
        DeviceCommand::VerifyPhotos => {
            let report = store.verify_photos()?;
            let bad = report
                .iter()
                .filter(|r| r.status != PhotoStatus::Intact)
                .count();
            print_json(&report)?;
            if bad > 0 {
                bail!("{bad} foto(s) não conferem com o hash registrado na captura");
            }
            Ok(())
        }
        DeviceCommand::Status => print_json(&StatusOut {
            status: store.status()?,
            identity: store.device_identity()?,
        }),
        DeviceCommand::Init(i) => init(&mut store, i),
        DeviceCommand::Record(r) => record(&mut store, r),
        DeviceCommand::List => print_json(&field::list(&store)?),
        DeviceCommand::Show { id } => print_json(&field::show(&store, &id)?),
        DeviceCommand::Enrol(e) => super::device_sync::enrol(&mut store, e),
        DeviceCommand::Login(l) => super::device_sync::login(&mut store, l),
        DeviceCommand::Sync(s) => super::device_sync::sync(&mut store, s),
    }
}

#[derive(Debug, Serialize)]
struct NumbersAdded {
    start: u64,
    end: u64,
    numbers_left: u64,
    /// Records that were waiting and got a number from this block.
    numbered: Vec<Numbered>,
}

#[derive(Debug, Serialize)]
struct Printed {
    id: String,
    format: &'static str,
    out: String,
    bytes: usize,
}

#[derive(Debug, Serialize)]
struct Numbered {
    id: String,
    number: u64,
}

#[derive(Debug, Serialize)]
struct PhotoAttached {
    hash: String,
    size: usize,
    /// The record it was added to, after the write.
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<RecordOutcome>,
}

#[derive(Debug, Serialize)]
struct StatusOut {
    #[serde(flatten)]
    status: StoreStatus,
    identity: Option<DeviceIdentity>,
}

fn init(store: &mut Store, a: InitArgs) -> anyhow::Result<()> {
    let stored = store.device_identity()?;
    let device_id = a
        .device_id
        .or_else(|| stored.as_ref().map(|s| s.device_id))
        .unwrap_or_else(Uuid::now_v7);
    let role = UserRole::from(a.role);
    if role != UserRole::Coordinator && a.stand.is_some() {
        bail!("--stand é só para coordenadores de ponto");
    }
    let identity = DeviceIdentity {
        device_id,
        user_id: a.user.trim().to_owned(),
        role,
        stand_id: a.stand.map(|s| s.trim().to_owned()),
        issuing_body: a.issuing_body,
    };
    store.set_device_identity(&identity, Utc::now())?;
    print_json(&identity)
}

fn record(store: &mut Store, r: RecordCommand) -> anyhow::Result<()> {
    match r {
        RecordCommand::Infraction(a) => {
            // The rules are the replica's: the law parameters the feed delivered.
            let parameters = store.law_parameters()?;
            let input = NewInfraction {
                vehicle: vehicle_query(&a.target)?,
                driver: DriverId::parse(&a.driver)?,
                driver_name: a.driver_name,
                at: parse_instant(a.at.as_deref())?,
                monotonic: monotonic_ms(),
                observation: Observation {
                    at_stand: a.at_stand,
                    idle: a.idle,
                    ..Observation::default()
                },
                position: a.position.position(),
                facts: a.facts,
                extra_legal_basis: legal_basis(&a.rules, &parameters.rules)?,
                witnesses: witnesses(&a.witnesses)?,
                photos: read_photos(&a.photos)?,
                confirm_vehicle: a.confirm_vehicle,
                issue: a.issue.then(|| a.signature.signature()),
            };
            let out = FieldRecords::open(store)?.create_infraction(input)?;
            print_json(&out)
        }
        RecordCommand::Transgression(a) => {
            let then = match (a.settle, a.forward) {
                (Some(w), _) => Some(CoordinatorStep::Settle(w.into())),
                (None, true) => Some(CoordinatorStep::Forward),
                (None, false) => None,
            };
            let input = NewTransgression {
                vehicle: vehicle_query(&a.target)?,
                driver: DriverId::parse(&a.driver)?,
                coordinator_stand: a.coordinator_stand,
                gravity: match a.gravity {
                    GravityArg::Light => Gravity::Light,
                    GravityArg::Serious => Gravity::Serious,
                },
                facts: a.facts,
                // The replica's law parameters, as the report's own check uses.
                legal_basis: legal_basis(&a.rules, &store.law_parameters()?.rules)?,
                at: parse_instant(a.at.as_deref())?,
                monotonic: monotonic_ms(),
                position: a.position.position(),
                witnesses: witnesses(&a.witnesses)?,
                photos: read_photos(&a.photos)?,
                issue: (a.issue || then.is_some()).then(|| a.signature.signature()),
                then,
            };
            print_json(&FieldRecords::open(store)?.create_transgression(input)?)
        }
        RecordCommand::ConfirmVehicle { id, at } => {
            let at = parse_instant(at.as_deref())?;
            print_json(&FieldRecords::open(store)?.confirm_vehicle(&id, at)?)
        }
        RecordCommand::Print { id, format, out } => {
            let bytes = sync_core::print::render_record(store, &id, format.into(), Utc::now())?;
            std::fs::write(&out, &bytes)
                .with_context(|| format!("não foi possível gravar {}", out.display()))?;
            print_json(&Printed {
                id,
                format: Format::from(format).as_str(),
                out: out.display().to_string(),
                bytes: bytes.len(),
            })
        }
        RecordCommand::Issue { id, signature, at } => {
            let at = parse_instant(at.as_deref())?;
            print_json(&FieldRecords::open(store)?.issue(&id, at, signature.signature())?)
        }
        RecordCommand::AddWitness {
            id,
            witnesses: w,
            at,
        } => {
            let at = parse_instant(at.as_deref())?;
            let mut f = FieldRecords::open(store)?;
            let mut last = None;
            // One write per witness: each is a statement of its own.
            for entry in witnesses(&w)? {
                last = Some(f.add_witness(&id, at, entry)?);
            }
            print_json(&last)
        }
        RecordCommand::SetFacts { id, facts, at } => {
            let at = parse_instant(at.as_deref())?;
            print_json(&FieldRecords::open(store)?.set_facts(&id, at, &facts)?)
        }
        RecordCommand::Settle { id, warning, at } => {
            let at = parse_instant(at.as_deref())?;
            print_json(&FieldRecords::open(store)?.settle(&id, at, warning.into())?)
        }
        RecordCommand::Forward { id, at } => {
            let at = parse_instant(at.as_deref())?;
            print_json(&FieldRecords::open(store)?.forward(&id, at)?)
        }
        RecordCommand::AssignNumbers => {
            let numbered = FieldRecords::open(store)?.assign_pending_numbers(Utc::now())?;
            print_json(
                &numbered
                    .into_iter()
                    .map(|(id, number)| Numbered { id, number })
                    .collect::<Vec<_>>(),
            )
        }
    }
}

fn vehicle_query(t: &CheckTarget) -> anyhow::Result<VehicleQuery> {
    match (&t.plate, &t.permit) {
        (Some(p), _) => Ok(VehicleQuery::Plate(Plate::parse(p)?)),
        (None, Some(n)) if !n.trim().is_empty() => Ok(VehicleQuery::Permit(n.trim().to_owned())),
        _ => bail!("informe --plate ou --permit"),
    }
}

/// `NAME:STATEMENT` → a witness known by name (kept on the device, not in the record).
fn witnesses(args: &[String]) -> anyhow::Result<Vec<WitnessEntry>> {
    args.iter()
        .map(|w| match w.split_once(':') {
            Some((name, statement)) if !name.trim().is_empty() && !statement.trim().is_empty() => {
                Ok(WitnessEntry::named(name, statement))
            }
            _ => bail!("testemunha {w:?}: use NOME:DEPOIMENTO"),
        })
        .collect()
}

/// Rule ids of the catalogue → legal basis with their citations: only rules the law lets an
/// auto rest on under `config` (`rules::citable`, the same gate as the app and the office).
fn legal_basis(ids: &[String], config: &RulesConfig) -> anyhow::Result<Vec<LegalBasis>> {
    ids.iter()
        .map(|id| match sync_core::rules::citable(id, config) {
            Ok(r) => Ok(LegalBasis {
                rule_id: r.id.to_string(),
                citation: r.citation(),
            }),
            Err(e) => bail!("{e} (veja `taxi-fiscal rules`)"),
        })
        .collect()
}

fn read_photos(paths: &[PathBuf]) -> anyhow::Result<Vec<Vec<u8>>> {
    paths
        .iter()
        .map(|p| std::fs::read(p).with_context(|| format!("não foi possível ler {}", p.display())))
        .collect()
}

/// The machine's monotonic clock in milliseconds (Linux: seconds since boot), which the record
/// keeps beside the wall clock so that a clock changed between records shows; 0 where unknown.
fn monotonic_ms() -> u64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(0, |secs| (secs * 1000.0) as u64)
}

fn lookup(store: &Store, a: LookupArgs) -> anyhow::Result<()> {
    let at = parse_instant(a.at.as_deref())?;
    let t = a.target;
    if let Some(p) = t.plate {
        let plate = Plate::parse(&p)?;
        match store.lookup_plate(&plate, at)? {
            Some(v) => print_json(&v),
            None => bail!(
                "nenhum alvará cadastrado para a placa {}",
                plate.canonical()
            ),
        }
    } else if let Some(n) = t.permit {
        match store.lookup_permit(&n, at)? {
            Some(v) => print_json(&v),
            None => bail!("alvará nº {} não consta do cadastro", n.trim()),
        }
    } else if let Some(who) = t.person {
        let id = DriverId::parse(&who)?;
        match store.lookup_person(&id, at)? {
            Some(v) => print_json(&v),
            None => bail!("nenhuma pessoa cadastrada com o documento {}", id.as_str()),
        }
    } else {
        bail!("informe --plate, --permit ou --person")
    }
}

fn check(store: &Store, a: CheckArgs) -> anyhow::Result<()> {
    let vehicle = vehicle_query(&a.target)?;
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
        driver: DriverId::parse(&a.driver)?,
        at: parse_instant(a.at.as_deref())?,
        observation,
        // The store puts its own refresh time here.
        registry_refreshed_at: None,
    };
    // Under the replica's own law parameters, as the server judges the same version.
    print_json(&store.check(&input)?)
}

fn read_text(path: &PathBuf) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("não foi possível ler {}", path.display()))
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
