//! [`FieldSession`]: the one object the app holds — a device database, the sync client of
//! one server, and the identity of the device on it.
//!
//! Two SQLite connections to the same file: `local` for what the officer does on the spot
//! (lookups, checks, record writes: micro- to milliseconds, offline) and `net` for what talks
//! to the server (login, registry pull, sync: seconds, blocking on the network). A sync holds
//! only `net`, so the officer keeps looking taxis up and writing autos while it runs; SQLite
//! (WAL) lets `local` read during the sync's transactions and makes a `local` write wait only
//! for the one transaction in progress (busy timeout 5 s). Every write is one transaction of
//! `sync_core::field::FieldRecords`, so the two connections never see half a record.
//!
//! Cancellation: the client's `CancelToken` is reset when a network call starts (holding
//! `net`) and set by `cancel_sync` from any thread; the client checks it before every request
//! and while waiting between retries (ADR 0010, ADR 0011).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use chrono::Utc;
use sync_core::client::{HttpTransport, RetryPolicy, SyncClient, Timeouts};
use sync_core::field::{self, FieldRecords, NewInfraction, NewTransgression, WitnessEntry};
use sync_core::rules::CheckInput;
use sync_core::store::Store;

use crate::error::{FiscalError, FiscalResult, legal_basis, parse_driver, parse_plate};
use crate::types::{
    AttachedPhoto, CheckRequest, CoordinatorStep, EnrolInfo, InfractionInput, LoginInfo,
    PermitInfo, PersonPermits, PrintFormat, RecordDetails, RecordListItem, RegistryUpdate,
    SavedRecord, SignatureInput, SyncProgress, SyncReport, SyncStatus, TransgressionInput,
    VehicleQuery, Verdict, WarningKind, WitnessInput, list_item, non_negative, record_details,
    sat_i64, utc,
};

/// Told as a sync moves on, for a progress bar. Implemented by the app (Kotlin, Swift).
#[uniffi::export(foreign)]
pub trait SyncListener: Send + Sync {
    /// Where the sync is (`SyncProgress`): as each step starts (a new `step`), after each
    /// exchange of records, after each photo, and once at the end. Called on the thread that
    /// runs `sync`: post to the UI thread from here; return quickly (the sync waits for it);
    /// do not call `sync` from it (`cancel_sync` and `sync_status` are fine).
    fn on_progress(&self, progress: SyncProgress);
}

/// A device database with its server: everything the officer's or coordinator's app does.
#[derive(Debug, uniffi::Object)]
pub struct FieldSession {
    /// Lookups, checks and record writes.
    local: Mutex<Store>,
    /// Login, registry pull and sync (one at a time).
    net: Mutex<Store>,
    client: SyncClient,
    /// The device as registered on the server (e.g. `tablet-fiscal-01`); `None` until an
    /// enrolment when the app was opened without one (then the store's own identity is used).
    device_id: Mutex<Option<String>>,
}

/// A store whose previous user panicked is still consistent (every write is one transaction),
/// so the lock is taken over rather than failing every later call.
fn lock(m: &Mutex<Store>) -> MutexGuard<'_, Store> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn at_or_now(at: Option<SystemTime>) -> chrono::DateTime<Utc> {
    at.map(utc).unwrap_or_else(Utc::now)
}

/// The device's monotonic clock when the app gives none: seconds since boot on Linux and
/// Android (`/proc/uptime`), else 0 (unknown). A negative one is refused.
fn monotonic_ms(given: Option<i64>) -> FiscalResult<u64> {
    match given {
        Some(ms) => non_negative("monotonic_ms", ms),
        None => Ok(std::fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|s| s.split_whitespace().next().map(str::to_owned))
            .and_then(|s| s.parse::<f64>().ok())
            .map_or(0, |secs| (secs * 1000.0) as u64)),
    }
}

fn vehicle_query(v: VehicleQuery) -> FiscalResult<sync_core::rules::VehicleQuery> {
    match v {
        VehicleQuery::Plate { plate } => {
            Ok(sync_core::rules::VehicleQuery::Plate(parse_plate(&plate)?))
        }
        VehicleQuery::Permit { number } if !number.trim().is_empty() => Ok(
            sync_core::rules::VehicleQuery::Permit(number.trim().to_owned()),
        ),
        VehicleQuery::Permit { .. } => Err(FiscalError::invalid(
            "vehicle",
            "informe a placa ou o número do alvará",
        )),
    }
}

fn witness_entries(witnesses: Vec<WitnessInput>) -> FiscalResult<Vec<WitnessEntry>> {
    witnesses
        .into_iter()
        .map(|w| {
            if w.name.trim().is_empty() || w.statement.trim().is_empty() {
                return Err(FiscalError::invalid(
                    "witnesses",
                    "cada testemunha precisa de nome e depoimento",
                ));
            }
            let mut entry = WitnessEntry::named(&w.name, &w.statement);
            if let field::PersonInput::Observed(p) = &mut entry.person {
                p.cpf = w.cpf.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
            }
            Ok(entry)
        })
        .collect()
}

fn not_blank(field: &str, value: &str, what: &str) -> FiscalResult<()> {
    if value.trim().is_empty() {
        Err(FiscalError::invalid(field, format!("informe {what}")))
    } else {
        Ok(())
    }
}

impl FieldSession {
    /// The signature as the record holds it; a captured image is stored like a photo first.
    fn signature(
        store: &mut Store,
        s: Option<SignatureInput>,
    ) -> FiscalResult<Option<sync_core::records::Signature>> {
        Ok(match s {
            None => None,
            Some(SignatureInput::Signed { image }) => {
                if image.is_empty() {
                    return Err(FiscalError::invalid(
                        "signature",
                        "imagem da assinatura vazia",
                    ));
                }
                Some(sync_core::records::Signature::Signed {
                    sha256: store.put_photo(&image)?,
                })
            }
            Some(SignatureInput::Missing { reason }) => {
                not_blank("signature", &reason, "por que não há assinatura")?;
                Some(sync_core::records::Signature::Missing {
                    reason: reason.trim().to_owned(),
                })
            }
        })
    }

    /// A write of field records on the `local` connection, as the stored identity.
    fn write<T>(
        &self,
        f: impl FnOnce(&mut FieldRecords<'_>) -> Result<T, sync_core::field::FieldError>,
    ) -> FiscalResult<T> {
        let mut store = lock(&self.local);
        let mut records = FieldRecords::open(&mut store)?;
        Ok(f(&mut records)?)
    }

    /// Takes `net` for a network call and re-arms the cancel flag for it.
    fn net(&self) -> MutexGuard<'_, Store> {
        let guard = lock(&self.net);
        self.client.cancel_token().reset();
        guard
    }
}

#[uniffi::export]
impl FieldSession {
    /// Opens (creating and migrating if needed) the device database at `db_path`, for the
    /// server at `server_url` as the device `device_id` registered there — or, with
    /// `device_id` empty, as the device this file was enrolled as (`enrol`) or last logged in
    /// as. The file is encrypted at rest with a key kept in `secrets` (the platform
    /// keystore, one per database), where the device's signing key and the session's tokens
    /// live too; a file in plain SQLite left by an older build is encrypted in place. Refuses a
    /// file that is not a taxi-fiscal database, is from a newer app, or that the keystore's key
    /// does not open, without touching it.
    #[uniffi::constructor(default(options = None))]
    pub fn open(
        db_path: String,
        server_url: String,
        device_id: String,
        secrets: Arc<dyn crate::secrets::SecretStore>,
        options: Option<crate::types::SessionOptions>,
    ) -> FiscalResult<Arc<Self>> {
        not_blank("db_path", &db_path, "o caminho do banco de dados")?;
        let options = options.unwrap_or_default();
        let connect: u64 =
            non_negative("connect_timeout_seconds", options.connect_timeout_seconds)?;
        let request: u64 =
            non_negative("request_timeout_seconds", options.request_timeout_seconds)?;
        let max_attempts: u32 = non_negative("max_attempts", options.max_attempts)?;
        let transport = HttpTransport::with_ca(
            &server_url,
            Timeouts {
                connect: Duration::from_secs(connect.max(1)),
                request: Duration::from_secs(request.max(1)),
            },
            options.extra_ca_pem.as_deref(),
        )?;
        let client = SyncClient::with_transport(Arc::new(transport)).with_retry(RetryPolicy {
            attempts: max_attempts.max(1),
            ..RetryPolicy::default()
        });
        let path = Path::new(&db_path);
        // `local` first: it creates, migrates or encrypts the file; `net` then opens it as is.
        let vault: Arc<dyn sync_core::store::SecretVault> =
            Arc::new(crate::secrets::Vault(secrets));
        let local = Store::open_encrypted(path, Arc::clone(&vault))?;
        let net = Store::open_encrypted(path, vault)?;
        Ok(Arc::new(Self {
            local: Mutex::new(local),
            net: Mutex::new(net),
            client,
            device_id: Mutex::new(Some(device_id.trim().to_owned()).filter(|d| !d.is_empty())),
        }))
    }

    // ------------------------------------------------------------------ network (background)

    /// Logs the user in on this device (network; background thread). Stores the session and
    /// sets who writes this device's records.
    pub fn login(&self, username: String, password: String) -> FiscalResult<LoginInfo> {
        not_blank("username", &username, "o usuário")?;
        not_blank("password", &password, "a senha")?;
        let mut net = self.net();
        let device = self
            .device_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(self
            .client
            .login(&mut net, &username, &password, device.as_deref())?
            .into())
    }

    /// Registers this device on the server with the administrator's one-time enrolment code
    /// (read from the QR code or typed; network, background thread), named `device_name` on
    /// the devices page. Keeps the device id the server gave: the next `login` uses it.
    pub fn enrol(&self, code: String, device_name: String) -> FiscalResult<EnrolInfo> {
        not_blank("code", &code, "o código de cadastro")?;
        not_blank("device_name", &device_name, "o nome do aparelho")?;
        let mut net = self.net();
        let summary = self.client.enrol(&mut net, &code, &device_name)?;
        *self
            .device_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(summary.server_device_id.clone());
        Ok(summary.into())
    }

    /// Forgets the session (records stay on the device and sync after the next login).
    pub fn logout(&self) -> FiscalResult<()> {
        let mut net = self.net();
        Ok(self.client.logout(&mut net)?)
    }

    /// Brings the registry replica to the server's version (network; background thread):
    /// changes since the held version, or the whole snapshot.
    pub fn pull_registry(&self) -> FiscalResult<RegistryUpdate> {
        let mut net = self.net();
        Ok(self.client.pull_registry(&mut net)?.into())
    }

    /// One sync (network; background thread): session, auto numbers, records, photos, registry.
    /// Raises `Offline`, `LoginRequired`, `Cancelled`, `Untrusted` or `Storage` when that
    /// stopped it; otherwise returns what each step did, steps the server refused included.
    #[uniffi::method(default(listener = None))]
    pub fn sync(&self, listener: Option<Arc<dyn SyncListener>>) -> FiscalResult<SyncReport> {
        let mut net = self.net();
        let summary = match &listener {
            // The client counts only what someone listens to.
            None => self.client.sync(&mut net)?,
            Some(l) => self
                .client
                .sync_with_progress(&mut net, &mut |p| l.on_progress(SyncProgress::from(*p)))?,
        };
        if summary.stopped
            && let Some(e) = summary.errors.last()
        {
            return Err(FiscalError::from_step(e));
        }
        Ok(summary.into())
    }

    /// Stops the login, registry pull or sync in progress (from any thread): before its next
    /// request, or during a pause between retries. A request already on the wire finishes or
    /// times out; what it brought is applied whole or not at all.
    pub fn cancel_sync(&self) {
        self.client.cancel_token().cancel();
    }

    /// Pending records and photos, last sync, registry age, last error (local; readable
    /// during a sync).
    pub fn sync_status(&self) -> FiscalResult<SyncStatus> {
        Ok(lock(&self.local).sync_status(Utc::now())?.into())
    }

    // ------------------------------------------------------------------ registry (offline)

    /// The permit of the vehicle with this plate (any spelling), as in force at `at` (default
    /// now); `None` when the registry has no such plate.
    #[uniffi::method(default(at = None))]
    pub fn lookup_plate(
        &self,
        plate: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<Option<PermitInfo>> {
        let plate = parse_plate(&plate)?;
        Ok(lock(&self.local)
            .lookup_plate(&plate, at_or_now(at))?
            .map(Into::into))
    }

    /// The permit with this number (prontuário).
    #[uniffi::method(default(at = None))]
    pub fn lookup_permit(
        &self,
        number: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<Option<PermitInfo>> {
        not_blank("number", &number, "o número do alvará")?;
        Ok(lock(&self.local)
            .lookup_permit(&number, at_or_now(at))?
            .map(Into::into))
    }

    /// A person by CPF or CNH, with the permits they hold or drive.
    #[uniffi::method(default(at = None))]
    pub fn lookup_person(
        &self,
        document: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<Option<PersonPermits>> {
        let id = parse_driver("document", &document)?;
        Ok(lock(&self.local)
            .lookup_person(&id, at_or_now(at))?
            .map(Into::into))
    }

    /// The field check (art. 8 and the catalogue): a verdict whose findings cite rule and
    /// article, stamped with the registry version and its age.
    pub fn check(&self, request: CheckRequest) -> FiscalResult<Verdict> {
        let input = CheckInput {
            vehicle: vehicle_query(request.vehicle)?,
            driver: parse_driver("driver", &request.driver)?,
            at: at_or_now(request.at),
            observation: request
                .observation
                .map(TryInto::try_into)
                .transpose()?
                .unwrap_or_default(),
            registry_refreshed_at: None,
        };
        Ok(lock(&self.local).check(&input)?.into())
    }

    // ------------------------------------------------------------------ records (offline)

    /// Starts an auto de infração: runs the check, seals its verdict into the record and saves
    /// it with an auto number (or waiting for one) — issued at once if `input.issue` is given.
    pub fn start_infraction(&self, input: InfractionInput) -> FiscalResult<SavedRecord> {
        let vehicle = vehicle_query(input.vehicle)?;
        let driver = parse_driver("driver", &input.driver)?;
        let witnesses = witness_entries(input.witnesses)?;
        let monotonic = monotonic_ms(input.monotonic_ms)?;
        let observation = input
            .observation
            .map(TryInto::try_into)
            .transpose()?
            .unwrap_or_default();
        let mut store = lock(&self.local);
        // What the replica's law parameters disable cannot be cited (the server's gate too).
        let parameters = store.law_parameters()?;
        let extra_legal_basis = legal_basis("extra_rules", &input.extra_rules, &parameters.rules)?;
        let issue = Self::signature(&mut store, input.issue)?;
        let mut records = FieldRecords::open(&mut store)?;
        Ok(records
            .create_infraction(NewInfraction {
                vehicle,
                driver,
                driver_name: input.driver_name,
                at: at_or_now(input.at),
                monotonic,
                observation,
                position: input.position.map(Into::into),
                facts: input.facts,
                extra_legal_basis,
                witnesses,
                photos: input.photos,
                confirm_vehicle: input.confirm_vehicle,
                issue,
            })?
            .into())
    }

    /// Records that the officer confirmed the draft's vehicle (the plate the lookup filled in)
    /// as the one inspected — who, on this device, when. Refused once issued, or for a record
    /// made by someone else or on another device.
    #[uniffi::method(default(at = None))]
    pub fn confirm_vehicle(
        &self,
        record_id: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        self.write(|r| r.confirm_vehicle(&record_id, at_or_now(at)))
            .map(Into::into)
    }

    /// Prints an issued record (offline): ESC/POS bytes to send to a Bluetooth thermal
    /// printer as they are, or a PDF. A draft is refused.
    pub fn render_record(&self, record_id: String, format: PrintFormat) -> FiscalResult<Vec<u8>> {
        Ok(sync_core::print::render_record(
            &lock(&self.local),
            &record_id,
            format.into(),
            Utc::now(),
        )?)
    }

    /// Starts a coordinator's transgression report about a driver of the device's stand
    /// (art. 17), issued and settled or forwarded at once if asked.
    pub fn start_transgression(&self, input: TransgressionInput) -> FiscalResult<SavedRecord> {
        let vehicle = vehicle_query(input.vehicle)?;
        let driver = parse_driver("driver", &input.driver)?;
        not_blank("facts", &input.facts, "a descrição dos fatos")?;
        let parameters = lock(&self.local).law_parameters()?;
        let legal_basis = legal_basis("rules", &input.rules, &parameters.rules)?;
        let witnesses = witness_entries(input.witnesses)?;
        let monotonic = monotonic_ms(input.monotonic_ms)?;
        if input.then.is_some() && input.issue.is_none() {
            return Err(FiscalError::invalid(
                "issue",
                "para resolver ou encaminhar, emita a comunicação (assinatura ou motivo)",
            ));
        }
        let mut store = lock(&self.local);
        let issue = Self::signature(&mut store, input.issue)?;
        let mut records = FieldRecords::open(&mut store)?;
        Ok(records
            .create_transgression(NewTransgression {
                vehicle,
                driver,
                coordinator_stand: None,
                gravity: input.gravity.into(),
                facts: input.facts.trim().to_owned(),
                legal_basis,
                at: at_or_now(input.at),
                monotonic,
                position: input.position.map(Into::into),
                witnesses,
                photos: input.photos,
                issue,
                then: input.then.map(|t| match t {
                    CoordinatorStep::Settle { warning } => {
                        field::CoordinatorStep::Settle(warning.into())
                    }
                    CoordinatorStep::Forward => field::CoordinatorStep::Forward,
                }),
            })?
            .into())
    }

    /// Completes a draft: issues it with the signature (or why there is none); its evidence is
    /// sealed from then on.
    #[uniffi::method(default(at = None))]
    pub fn issue_record(
        &self,
        record_id: String,
        signature: SignatureInput,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        let mut store = lock(&self.local);
        let signature = Self::signature(&mut store, Some(signature))?.ok_or_else(|| {
            FiscalError::invalid("signature", "informe a assinatura ou por que não há")
        })?;
        let mut records = FieldRecords::open(&mut store)?;
        Ok(records.issue(&record_id, at_or_now(at), signature)?.into())
    }

    /// Rewrites the facts of a draft (refused once issued: the evidence is sealed).
    #[uniffi::method(default(at = None))]
    pub fn set_facts(
        &self,
        record_id: String,
        facts: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        not_blank("facts", &facts, "a descrição dos fatos")?;
        self.write(|r| r.set_facts(&record_id, at_or_now(at), facts.trim()))
            .map(Into::into)
    }

    /// Adds a witness (allowed after issuing: the list only grows).
    #[uniffi::method(default(at = None))]
    pub fn add_witness(
        &self,
        record_id: String,
        witness: WitnessInput,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        let entry = witness_entries(vec![witness])?
            .pop()
            .ok_or_else(|| FiscalError::invalid("witness", "informe a testemunha"))?;
        self.write(|r| r.add_witness(&record_id, at_or_now(at), entry))
            .map(Into::into)
    }

    /// Stores a photo (bytes, e.g. the camera's JPEG) and adds its SHA-256 to the record, in
    /// one transaction; the same photo twice changes nothing.
    #[uniffi::method(default(at = None))]
    pub fn attach_photo(
        &self,
        record_id: String,
        photo: Vec<u8>,
        at: Option<SystemTime>,
    ) -> FiscalResult<AttachedPhoto> {
        if photo.is_empty() {
            return Err(FiscalError::invalid("photo", "foto vazia"));
        }
        let size = sat_i64(photo.len());
        let (sha256, out) = self.write(|r| r.attach_photo(&record_id, at_or_now(at), &photo))?;
        Ok(AttachedPhoto {
            sha256,
            size,
            record: out.into(),
        })
    }

    /// `attach_photo` with a file the camera wrote.
    #[uniffi::method(default(at = None))]
    pub fn attach_photo_file(
        &self,
        record_id: String,
        path: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<AttachedPhoto> {
        let path = Path::new(&path);
        let size = std::fs::metadata(path).map_or(0, |m| sat_i64(m.len()));
        let (sha256, out) = self.write(|r| r.attach_photo_file(&record_id, at_or_now(at), path))?;
        Ok(AttachedPhoto {
            sha256,
            size,
            record: out.into(),
        })
    }

    /// Settles a light transgression with a warning (art. 17 §1).
    #[uniffi::method(default(at = None))]
    pub fn settle_transgression(
        &self,
        record_id: String,
        warning: WarningKind,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        self.write(|r| r.settle(&record_id, at_or_now(at), warning.into()))
            .map(Into::into)
    }

    /// Sends a transgression report to the Unidade de Transportes (art. 17 §2).
    #[uniffi::method(default(at = None))]
    pub fn forward_transgression(
        &self,
        record_id: String,
        at: Option<SystemTime>,
    ) -> FiscalResult<SavedRecord> {
        self.write(|r| r.forward(&record_id, at_or_now(at)))
            .map(Into::into)
    }

    /// Every record on the device, oldest first.
    pub fn list_records(&self) -> FiscalResult<Vec<RecordListItem>> {
        let rows = field::list(&lock(&self.local))?;
        rows.into_iter()
            .map(|row| {
                let id = row.id.clone();
                list_item(row).ok_or_else(|| FiscalError::Storage {
                    reason: format!("a linha do registro {id} no banco não pôde ser lida"),
                })
            })
            .collect()
    }

    /// One record: its fields, sealed verdict, witnesses, events, photos re-hashed now.
    pub fn show_record(&self, record_id: String) -> FiscalResult<RecordDetails> {
        let details = field::show(&lock(&self.local), &record_id)?;
        Ok(record_details(details)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_monotonic_clock_is_refused_naming_the_field() {
        let e = monotonic_ms(Some(-1)).unwrap_err();
        assert!(
            matches!(&e, FiscalError::InvalidInput { field, reason }
                if field == "monotonic_ms" && reason.contains("não pode ser negativo")),
            "{e:?}"
        );
        assert_eq!(monotonic_ms(Some(1_234)).unwrap(), 1_234);
    }

    #[test]
    fn negative_session_options_are_refused_before_anything_opens() {
        let options = crate::types::SessionOptions {
            request_timeout_seconds: -5,
            ..Default::default()
        };
        let Err(e) = FieldSession::open(
            String::from("/nonexistent/never-created.db"),
            String::from("http://127.0.0.1:9"),
            String::from("device"),
            crate::secrets::memory_secret_store(),
            Some(options),
        ) else {
            panic!("open accepted a negative timeout");
        };
        assert!(
            matches!(&e, FiscalError::InvalidInput { field, .. } if field == "request_timeout_seconds"),
            "{e:?}"
        );
    }
}
