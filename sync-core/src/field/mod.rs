//! Field records on the device: the layer that joins the Automerge records (`crate::records`)
//! to the device store (`crate::store`). The app and the `taxi-fiscal device` command line
//! create and edit autos de infração and transgression reports only through `FieldRecords`.
//!
//! # Flow of every write
//!
//! One store transaction (`Store::edit_record_with`, `BEGIN IMMEDIATE`) holds all of it:
//! 1. the store takes an auto number from the leased blocks if the record wants one and has
//!    none (a new record always wants one);
//! 2. inside the transaction the record's bytes are read as persisted and loaded into a
//!    `RecordDoc` — never a copy kept in memory across writes, so a failed commit cannot leave
//!    a live document ahead of the store, and two processes on the same file never continue the
//!    device's Automerge actor from the same sequence number (the second waits for the lock);
//! 3. the operation runs (`new_infraction`, `add_witness`, `issue`, …) under the device's
//!    agent; the number, if one was just taken, is written into the document as part of it;
//! 4. `save_incremental()` is appended as a chunk, with the row's status, summary and number —
//!    or, once the chunks would exceed `compact_after`, a full `save()` replaces the stored
//!    save and every chunk in the same commit;
//! 5. observed people and photos the change names are inserted in the same commit.
//!
//! A crash before COMMIT loses the whole write, number included; after COMMIT all of it is on
//! disk (`synchronous=FULL`). A number is therefore never handed out twice (test
//! `tests/field_crash.rs` kills a writer process mid-write, repeatedly).
//!
//! With no numbers left a record is still saved, marked as waiting; any later write of it takes
//! one if a block has arrived meanwhile, and `assign_pending_numbers` numbers every waiting
//! record after `Store::add_number_block`.
//!
//! # What goes into a record
//!
//! An auto de infração comes from a field check run here (`Store::check_facts`, then
//! `rules::check` on those facts): the verdict (with the registry version and its age) is sealed into the
//! record, the legal basis is its irregular findings (plus any the officer adds), the plate is
//! kept as typed and canonical, the permit and holder come from the registry. The driver is a
//! registry id, or — for someone the registry does not know — an `observed_people` row in the
//! store referenced by id, so that personal data never enters the document's history and can
//! be erased (ARCHITECTURE.md, Records). Witnesses typed on the spot are observed people too.
//!
//! A transgression report is the coordinator's (art. 17): the stand is the device's, the
//! records layer refuses permits of other stands, and a serious one needs a witness before it
//! is forwarded to the Unidade.

mod error;
mod types;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use automerge::ChangeHash;
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub use error::FieldError;
pub use types::{
    CoordinatorStep, NewInfraction, NewTransgression, PersonInput, PhotoCheck, RecordDetails,
    RecordOutcome, WitnessEntry,
};

use crate::domain::{DriverId, DriverRole, Plate};
use crate::limits::MAX_RECORD_BYTES;
use crate::records::{
    Agent, CheckContext, EventKind, InfractionDraft, LegalBasis, PersonRef, RecordDoc, RecordError,
    RecordKind, RecordView, Signature, TransgressionDraft, UserRole, WarningKind, WitnessInput,
    check_record,
};
use crate::rules::{self, CheckInput, Severity, VehicleQuery, Verdict};
use crate::store::{
    DeviceIdentity, ObservedPerson, PhotoStatus, RecordBytes, RecordEdit, RecordExtras, RecordMeta,
    RecordSummary, Store, sha256_hex,
};

/// Chunks a record may accumulate before a write compacts it into one full save. Each chunk is
/// a few hundred bytes and loading replays them all; 32 keeps a record's load well under a
/// millisecond while compaction (rewriting the whole document) stays rare.
pub const DEFAULT_COMPACT_AFTER: usize = 32;

/// Issuing body of autos written by the Guarda Municipal when the device names none (art. 36).
const GUARDA_MUNICIPAL: &str = "Guarda Municipal de Americana";

/// The device's field records: creation, edits, lists, over one store.
#[derive(Debug)]
pub struct FieldRecords<'s> {
    store: &'s mut Store,
    identity: DeviceIdentity,
    compact_after: usize,
}

/// What the closure of a write hands back besides the store's edit.
struct Written<T> {
    view: RecordView,
    compacted: bool,
    value: T,
}

impl<T> Written<T> {
    /// The caller's outcome; `wanted`: whether the record wants an auto number.
    fn outcome(self, id: String, number: Option<u64>, wanted: bool) -> (RecordOutcome, T) {
        let out = RecordOutcome {
            waiting_for_number: wanted && number.is_none() && self.view.number.is_none(),
            id,
            kind: self.view.kind,
            number,
            status: self.view.status,
            compacted: self.compacted,
            view: self.view,
        };
        (out, self.value)
    }
}

impl<'s> FieldRecords<'s> {
    /// Field records of the device whose identity is stored in `store` (`device init`).
    pub fn open(store: &'s mut Store) -> Result<Self, FieldError> {
        let identity = store.device_identity()?.ok_or(FieldError::NoIdentity)?;
        Ok(Self::with_identity(store, identity))
    }

    /// Field records written as `identity` (tests, tools that pass it explicitly).
    pub fn with_identity(store: &'s mut Store, identity: DeviceIdentity) -> Self {
        Self {
            store,
            identity,
            compact_after: DEFAULT_COMPACT_AFTER,
        }
    }

    /// Compacts a record once its chunks would exceed `n` (at least 1).
    pub fn with_compaction_after(mut self, n: usize) -> Self {
        self.compact_after = n.max(1);
        self
    }

    pub fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    /// The store underneath, read-only.
    pub fn store(&self) -> &Store {
        self.store
    }

    fn agent(&self) -> Agent {
        self.identity.agent()
    }

    // ------------------------------------------------------------------ creation

    /// An auto de infração from a field check: runs the check against the replica, seals its
    /// verdict into the record with the legal basis of its irregular findings, and saves the
    /// record with an auto number (or waiting for one), issuing it if `input.issue` says so —
    /// one transaction.
    pub fn create_infraction(&mut self, input: NewInfraction) -> Result<RecordOutcome, FieldError> {
        let agent = self.agent();
        if !RecordKind::Infraction.may_be_created_by(agent.role) {
            // `RecordDoc::new_infraction` refuses it too (same words); refusing before the
            // check saves the work.
            return Err(RecordError::RoleNotAllowed {
                role: agent.role.label_pt(),
                action: "lavrar auto de infração (art. 36: só a Guarda Municipal e a Secretaria \
                         de Transportes fiscalizam)",
                rule: crate::rules::RuleId::R35,
            }
            .into());
        }
        let check = CheckInput {
            vehicle: input.vehicle.clone(),
            driver: input.driver.clone(),
            at: input.at,
            observation: input.observation.clone(),
            registry_refreshed_at: None,
        };
        // The replica's own law parameters, as the check of the same version elsewhere.
        let (facts, parameters) = self.store.check_facts_and_parameters(&check)?;
        let verdict = rules::check(&facts, &parameters.rules);
        let plate = match (&input.vehicle, &verdict.plate) {
            (VehicleQuery::Plate(p), _) => p.clone(),
            (VehicleQuery::Permit(_), Some(canonical)) => Plate::parse(canonical)
                .map_err(|e| FieldError::Registry(format!("placa do cadastro: {e}")))?,
            (VehicleQuery::Permit(n), None) => {
                return Err(FieldError::PermitUnknown {
                    permit: n.trim().to_owned(),
                });
            }
        };
        let holder_id = facts.taxi.as_ref().map(|t| t.permit.holder_id.clone());

        let mut extras = RecordExtras::default();
        let driver = match &verdict.driver_person_id {
            Some(id) => PersonRef::Registry(id.clone()),
            None => {
                let oid = Uuid::now_v7().to_string();
                extras.observed_people.push((
                    oid.clone(),
                    observed_driver(&input.driver, input.driver_name),
                ));
                PersonRef::Observed(oid)
            }
        };
        let witnesses = self.witness_inputs(input.witnesses, &mut extras);
        let photos: Vec<String> = input.photos.iter().map(|p| sha256_hex(p)).collect();
        extras.photos = input.photos.iter().map(Vec::as_slice).collect();

        let mut legal_basis = LegalBasis::from_findings(&verdict.findings);
        for b in input.extra_legal_basis {
            if !legal_basis.iter().any(|x| x.rule_id == b.rule_id) {
                legal_basis.push(b);
            }
        }
        let facts = input
            .facts
            .filter(|f| !f.trim().is_empty())
            .unwrap_or_else(|| facts_from(&verdict));
        let id = Uuid::now_v7();
        let draft = InfractionDraft {
            id,
            number: None,
            issuing_body: self.issuing_body()?,
            occurred_at: input.at,
            monotonic: input.monotonic,
            position: input.position,
            stand_id: input.observation.at_stand.clone(),
            plate,
            driver,
            driver_role: verdict.driver_role.unwrap_or(DriverRole::Unauthorised),
            permit_number: verdict.permit_number.clone(),
            holder_id,
            facts,
            legal_basis,
            verdict: Some(verdict),
            witnesses,
            photos,
        };
        let (issue, confirm_vehicle) = (input.issue, input.confirm_vehicle);
        let at = input.at;
        let key = self.store.device_key()?;
        self.create(
            id,
            RecordKind::Infraction,
            &extras,
            at,
            move |number, agent| {
                let mut doc = RecordDoc::new_infraction(
                    InfractionDraft {
                        number: number.map(|n| n.to_string()),
                        ..draft
                    },
                    agent,
                )?;
                if confirm_vehicle {
                    doc.confirm_vehicle(agent, at)?;
                }
                if let Some(signature) = issue {
                    doc.issue(agent, at, signature, &key)?;
                }
                Ok(doc)
            },
        )
    }

    /// A coordinator's transgression report (art. 17) about a driver of their own stand: the
    /// permit (by plate or number) and the driver (CPF/CNH) are found in the replica, the
    /// records layer checks the stand; then issued and settled or forwarded if asked.
    pub fn create_transgression(
        &mut self,
        input: NewTransgression,
    ) -> Result<RecordOutcome, FieldError> {
        let stand = match (&input.coordinator_stand, &self.identity.stand_id) {
            (Some(given), Some(own)) if given.trim() != own.trim() => {
                return Err(FieldError::StandMismatch {
                    device_stand: own.clone(),
                    given: given.clone(),
                });
            }
            (Some(s), _) | (None, Some(s)) => s.trim().to_owned(),
            (None, None) => return Err(FieldError::StandRequired),
        };
        let check = CheckInput {
            vehicle: input.vehicle.clone(),
            driver: input.driver.clone(),
            at: input.at,
            observation: rules::Observation::default(),
            registry_refreshed_at: None,
        };
        let registry = self.store.check_facts(&check)?.into_registry();
        let index = registry.index();
        let permit_number = match &input.vehicle {
            VehicleQuery::Permit(n) => n.trim().to_owned(),
            VehicleQuery::Plate(p) => index
                .permit_by_plate(p)
                .map(|p| p.number.clone())
                .ok_or_else(|| FieldError::NoPermitForPlate {
                    plate: p.canonical().to_owned(),
                })?,
        };
        let driver_id = input
            .driver
            .resolve(&index)
            .map(|p| p.id.clone())
            .ok_or_else(|| FieldError::DriverNotRegistered {
                document: input.driver.as_str().to_owned(),
            })?;
        let mut extras = RecordExtras::default();
        let witnesses = self.witness_inputs(input.witnesses, &mut extras);
        let photos: Vec<String> = input.photos.iter().map(|p| sha256_hex(p)).collect();
        extras.photos = input.photos.iter().map(Vec::as_slice).collect();
        let id = Uuid::now_v7();
        let draft = TransgressionDraft {
            id,
            occurred_at: input.at,
            monotonic: input.monotonic,
            position: input.position,
            permit_number,
            driver_id,
            gravity: input.gravity,
            facts: input.facts,
            legal_basis: input.legal_basis,
            witnesses,
            photos,
        };
        // Scope (own stand, driver of the permit) is checked by `new_transgression` inside the
        // write: a refusal rolls the transaction back, number included.
        let (issue, then, at) = (input.issue, input.then, input.at);
        let key = self.store.device_key()?;
        self.create(
            id,
            RecordKind::Transgression,
            &extras,
            at,
            move |number, agent| {
                let mut doc = RecordDoc::new_transgression(draft, agent, &index, &stand)?;
                if let Some(n) = number {
                    doc.assign_number(agent, at, &n.to_string())?;
                }
                if let Some(signature) = issue {
                    doc.issue(agent, at, signature, &key)?;
                }
                match then {
                    None => {}
                    Some(CoordinatorStep::Settle(w)) => {
                        doc.settle_by_coordinator(agent, at, w)?;
                    }
                    Some(CoordinatorStep::Forward) => {
                        doc.forward_to_office(agent, at)?;
                    }
                }
                Ok(doc)
            },
        )
    }

    /// Writes a new record built by `build` (which receives the auto number, if any).
    fn create(
        &mut self,
        id: Uuid,
        kind: RecordKind,
        extras: &RecordExtras<'_>,
        at: DateTime<Utc>,
        build: impl FnOnce(Option<u64>, &Agent) -> Result<RecordDoc, FieldError>,
    ) -> Result<RecordOutcome, FieldError> {
        let agent = self.agent();
        let sid = id.to_string();
        let (number, w) = self.store.edit_record_with(
            &sid,
            kind.as_str(),
            true,
            extras,
            |number, existing| {
                if existing.is_some() {
                    return Err(FieldError::AlreadyExists { id: sid.clone() });
                }
                let mut doc = build(number, &agent)?;
                // A new record is stored as one full save: the columnar format is smaller
                // than the same changes as an incremental chunk, and there is nothing to
                // append to yet.
                let full = doc.save();
                let view = doc.view()?;
                check_write(None, &view, full.len(), at)?;
                let meta = meta_of(&mut doc, &view, at);
                Ok((
                    RecordEdit {
                        meta,
                        incremental: Vec::new(),
                        full: Some(full),
                    },
                    Written {
                        view,
                        compacted: false,
                        value: (),
                    },
                ))
            },
        )?;
        Ok(w.outcome(sid, number, true).0)
    }

    // ------------------------------------------------------------------ edits

    /// Issues the record (signature or why it is missing), sealing its evidence with this
    /// device's key (`records::seal`): evidence sealed from now on.
    pub fn issue(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        signature: Signature,
    ) -> Result<RecordOutcome, FieldError> {
        let key = self.store.device_key()?;
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            doc.issue(agent, at, signature, &key)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Records that the author confirmed the record's vehicle (the plate a lookup filled in) as
    /// the one inspected; refused once issued, for another user or on another device.
    pub fn confirm_vehicle(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            doc.confirm_vehicle(agent, at)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Rewrites the facts; refused once the record is issued (`RecordError::Sealed`).
    pub fn set_facts(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        facts: &str,
    ) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            Ok(doc.set_facts(agent, at, facts)?)
        })?;
        Ok(out)
    }

    /// Replaces the legal basis; refused once issued.
    pub fn set_legal_basis(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        basis: &[LegalBasis],
    ) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            Ok(doc.set_legal_basis(agent, at, basis)?)
        })?;
        Ok(out)
    }

    /// Adds a witness (allowed after issuing: the list is append-only). A witness typed on the
    /// spot becomes an observed person, stored in the same transaction.
    pub fn add_witness(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        witness: WitnessEntry,
    ) -> Result<RecordOutcome, FieldError> {
        let mut extras = RecordExtras::default();
        let input = self
            .witness_inputs(vec![witness], &mut extras)
            .into_iter()
            .next();
        let (out, _) = self.edit(id, at, extras, |doc, agent| match &input {
            Some(w) => Ok(doc.add_witness(agent, at, w)?),
            None => Ok(()),
        })?;
        Ok(out)
    }

    /// Stores a photo (content-addressed) and adds its hash to the record, in one transaction.
    /// Returns the hash; attaching the same photo twice changes nothing.
    pub fn attach_photo(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        bytes: &[u8],
    ) -> Result<(String, RecordOutcome), FieldError> {
        let hash = sha256_hex(bytes);
        let extras = RecordExtras {
            photos: vec![bytes],
            ..RecordExtras::default()
        };
        let (out, _) = self.edit(id, at, extras, |doc, agent| {
            doc.add_photo(agent, at, &hash)?;
            Ok(())
        })?;
        Ok((hash, out))
    }

    /// `attach_photo` with the bytes of a file.
    pub fn attach_photo_file(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        path: &Path,
    ) -> Result<(String, RecordOutcome), FieldError> {
        let bytes = std::fs::read(path).map_err(|source| FieldError::Io {
            path: path.to_owned(),
            source,
        })?;
        self.attach_photo(id, at, &bytes)
    }

    /// A light transgression settled at the stand with a warning (art. 17 §1).
    pub fn settle(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        warning: WarningKind,
    ) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            doc.settle_by_coordinator(agent, at, warning)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// A transgression report sent to the Unidade (art. 17 §2; serious ones need a witness).
    pub fn forward(&mut self, id: &str, at: DateTime<Utc>) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            doc.forward_to_office(agent, at)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Any other event the device's role may append (the records layer checks it).
    pub fn append_event(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        event: EventKind,
    ) -> Result<RecordOutcome, FieldError> {
        let (out, _) = self.edit(id, at, RecordExtras::default(), |doc, agent| {
            doc.append_event(agent, at, event)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Gives every record waiting for an auto number one from the leased blocks, oldest first,
    /// each in its own transaction, until the numbers run out. Returns `(id, number)` of those
    /// numbered now.
    pub fn assign_pending_numbers(
        &mut self,
        at: DateTime<Utc>,
    ) -> Result<Vec<(String, u64)>, FieldError> {
        let mut done = Vec::new();
        for id in self.store.records_waiting_for_number()? {
            if self.store.numbers_left()? == 0 {
                break;
            }
            // The write itself takes the number (the row wants one) and `edit` writes it
            // into the document.
            let (out, _) = self.edit(&id, at, RecordExtras::default(), |_, _| Ok(()))?;
            if let Some(n) = out.number {
                done.push((id, n));
            }
        }
        Ok(done)
    }

    /// Merges a copy of a record received by other means (another device's export, a file):
    /// a record new to this device is inserted whole, a known one gets the changes it lacks
    /// as one chunk. The device's own changes are never rewritten.
    pub fn merge_copy(
        &mut self,
        bytes: &[u8],
        at: DateTime<Utc>,
    ) -> Result<RecordOutcome, FieldError> {
        let mut incoming = RecordDoc::load(bytes)?;
        let id = incoming.id().to_string();
        let kind = incoming.kind();
        let compact_after = self.compact_after;
        let (number, w) = self.store.edit_record_with(
            &id,
            kind.as_str(),
            false,
            &RecordExtras::default(),
            |_, existing| {
                let (mut doc, edit_full, chunks, stored, before) = match existing {
                    None => {
                        let full = incoming.save();
                        (incoming, Some(full), 0, 0, None)
                    }
                    Some(bytes) => {
                        let chunks = bytes.chunks.len();
                        let stored = stored_len(&bytes);
                        let mut local = load_doc(bytes)?;
                        let before = local.view()?;
                        local.merge(&mut incoming)?;
                        (local, None, chunks, stored, Some(before))
                    }
                };
                let incremental = doc.save_incremental();
                let compact =
                    edit_full.is_none() && !incremental.is_empty() && chunks + 1 > compact_after;
                let full = edit_full.or_else(|| compact.then(|| doc.save()));
                let view = doc.view()?;
                let size = full.as_ref().map_or(stored + incremental.len(), Vec::len);
                check_write(before.as_ref(), &view, size, at)?;
                let meta = meta_of(&mut doc, &view, at);
                Ok::<_, FieldError>((
                    RecordEdit {
                        meta,
                        incremental,
                        full,
                    },
                    Written {
                        view,
                        compacted: compact,
                        value: (),
                    },
                ))
            },
        )?;
        Ok(w.outcome(id, number, false).0)
    }

    /// One write of an existing record: load it as persisted (inside the transaction), apply
    /// `op` as the device's agent, write the auto number in if the store just took one,
    /// append the incremental save or compact.
    fn edit<T>(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
        extras: RecordExtras<'_>,
        op: impl FnOnce(&mut RecordDoc, &Agent) -> Result<T, FieldError>,
    ) -> Result<(RecordOutcome, T), FieldError> {
        let row = self
            .store
            .record_summary(id)?
            .ok_or_else(|| crate::store::StoreError::RecordNotFound(id.to_owned()))?;
        if row.waiting_for_number && row.summary.get("number").is_some_and(|n| n.is_string()) {
            // Numbered elsewhere (the office, through sync): taking a device number now would
            // burn it, and the document keeps its number anyway.
            self.store.stop_waiting_for_number(id)?;
        }
        let agent = self.agent();
        let device = self.identity.device_id;
        let compact_after = self.compact_after;
        let (number, w) =
            self.store
                .edit_record_with(id, &row.kind, false, &extras, |number, existing| {
                    let Some(bytes) = existing else {
                        return Err(FieldError::from(crate::store::StoreError::RecordNotFound(
                            id.to_owned(),
                        )));
                    };
                    let chunks = bytes.chunks.len();
                    let stored = stored_len(&bytes);
                    let mut doc = load_doc(bytes)?;
                    let before = doc.view()?;
                    let value = op(&mut doc, &agent)?;
                    if let Some(n) = number {
                        let view = doc.view()?;
                        if view.number.is_none() {
                            // The number belongs to the record's author, written by this device
                            // (whoever is signed in now: a number is not a statement of theirs).
                            let by = Agent::new(view.author.user_id, view.author.role, device);
                            doc.assign_number(&by, at, &n.to_string())?;
                        }
                    }
                    let incremental = doc.save_incremental();
                    let compacted = !incremental.is_empty() && chunks + 1 > compact_after;
                    let full = compacted.then(|| doc.save());
                    let view = doc.view()?;
                    let size = full.as_ref().map_or(stored + incremental.len(), Vec::len);
                    check_write(Some(&before), &view, size, at)?;
                    let meta = meta_of(&mut doc, &view, at);
                    Ok((
                        RecordEdit {
                            meta,
                            incremental,
                            full,
                        },
                        Written {
                            view,
                            compacted,
                            value,
                        },
                    ))
                })?;
        Ok(w.outcome(id.to_owned(), number, row.waiting_for_number))
    }

    // ------------------------------------------------------------------ reading

    /// Every record on the device, oldest first.
    pub fn list(&self) -> Result<Vec<RecordSummary>, FieldError> {
        list(self.store)
    }

    /// The record as an Automerge document, loaded from its full save and chunks.
    pub fn load(&self, id: &str) -> Result<RecordDoc, FieldError> {
        load(self.store, id)
    }

    /// The whole record as one `save()`, e.g. to hand to another device (`merge_copy`).
    pub fn export(&self, id: &str) -> Result<Vec<u8>, FieldError> {
        Ok(self.load(id)?.save())
    }

    /// One record (see the free function `show`).
    pub fn show(&self, id: &str) -> Result<RecordDetails, FieldError> {
        show(self.store, id)
    }

    // ------------------------------------------------------------------ helpers

    fn issuing_body(&self) -> Result<String, FieldError> {
        Ok(match (&self.identity.issuing_body, self.identity.role) {
            (Some(b), _) if !b.trim().is_empty() => b.trim().to_owned(),
            (_, UserRole::GuardaMunicipal) => String::from(GUARDA_MUNICIPAL),
            _ => self.store.law_parameters()?.rules.issuing_body.clone(),
        })
    }

    /// Witnesses as the document holds them: observed people get a new id and a row in
    /// `extras` (written with the record), registry people are referenced by id.
    fn witness_inputs(
        &self,
        witnesses: Vec<WitnessEntry>,
        extras: &mut RecordExtras<'_>,
    ) -> Vec<WitnessInput> {
        witnesses
            .into_iter()
            .map(|w| {
                let person = match w.person {
                    PersonInput::Registry(id) => PersonRef::Registry(id),
                    PersonInput::Observed(p) => {
                        let oid = Uuid::now_v7().to_string();
                        extras.observed_people.push((oid.clone(), p));
                        PersonRef::Observed(oid)
                    }
                };
                WitnessInput {
                    person,
                    statement: w.statement,
                }
            })
            .collect()
    }
}

/// Every record in `store`, oldest first. Reading needs no identity.
pub fn list(store: &Store) -> Result<Vec<RecordSummary>, FieldError> {
    Ok(store.list_records()?)
}

/// A record of `store` as an Automerge document, loaded from its full save and chunks.
pub fn load(store: &Store, id: &str) -> Result<RecordDoc, FieldError> {
    load_doc(store.load_record(id)?)
}

/// One record: its row, the document's view, each photo re-hashed, and the observed people it
/// names (from the store; they are not in the document).
pub fn show(store: &Store, id: &str) -> Result<RecordDetails, FieldError> {
    let record = store
        .record_summary(id)?
        .ok_or_else(|| crate::store::StoreError::RecordNotFound(id.to_owned()))?;
    let view = load(store, id)?.view()?;
    let mut photos = Vec::with_capacity(view.photos.len());
    for hash in &view.photos {
        photos.push(PhotoCheck {
            hash: hash.clone(),
            status: store.verify_photo(hash)?,
        });
    }
    let mut observed_people = BTreeMap::new();
    let refs = std::iter::once(&view.driver.person)
        .chain(view.witnesses.iter().map(|w| &w.person))
        .chain(view.charged.iter());
    for r in refs {
        if let PersonRef::Observed(oid) = r
            && !observed_people.contains_key(oid)
            && let Some(p) = store.observed_person(oid)?
        {
            observed_people.insert(oid.clone(), p);
        }
    }
    Ok(RecordDetails {
        photos_intact: photos.iter().all(|p| p.status == PhotoStatus::Intact),
        record,
        view,
        photos,
        observed_people,
    })
}

/// Checks a record about to be written (`after`, `bytes` long once stored) with the checks the
/// server's vetting makes of it (`records::check_record`, the limits of `crate::limits`), so
/// the device never saves a record the server would refuse for what it holds. The permit is
/// not looked up again: it came from this device's registry.
fn check_write(
    before: Option<&RecordView>,
    after: &RecordView,
    bytes: usize,
    at: DateTime<Utc>,
) -> Result<(), FieldError> {
    if bytes > MAX_RECORD_BYTES {
        return Err(RecordError::TooLarge {
            what: "o registro",
            limit: format!("{} KB", MAX_RECORD_BYTES / 1024),
        }
        .into());
    }
    let ctx = CheckContext {
        now: at,
        registry: None,
        index: None,
    };
    Ok(check_record(before, after, &ctx)?)
}

/// Bytes of a record as stored (full save and chunks).
fn stored_len(bytes: &RecordBytes) -> usize {
    bytes.full.len() + bytes.chunks.iter().map(Vec::len).sum::<usize>()
}

/// Loads the stored parts (full save, then chunks) as one document.
fn load_doc(bytes: RecordBytes) -> Result<RecordDoc, FieldError> {
    let parts = bytes.parts();
    let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in parts {
        all.extend_from_slice(&p);
    }
    Ok(RecordDoc::load(&all)?)
}

/// The row the store keeps for lists. Heads are the 32-byte hashes, sorted and concatenated,
/// as the sync layer writes them (`sync::device::heads_bytes`).
fn meta_of(doc: &mut RecordDoc, view: &RecordView, at: DateTime<Utc>) -> RecordMeta {
    let mut heads: Vec<ChangeHash> = doc.heads();
    heads.sort();
    heads.dedup();
    RecordMeta {
        status: view.status.as_str().to_owned(),
        summary: view.summary(),
        heads: heads.iter().flat_map(|h| h.0).collect(),
        at,
    }
}

/// The driver the registry does not know, as typed: the documents go to the store, never into
/// the document.
fn observed_driver(driver: &DriverId, name: Option<String>) -> ObservedPerson {
    let (cpf, cnh, details) = match driver {
        DriverId::Cpf(c) => (Some(c.as_str().to_owned()), None, serde_json::json!({})),
        DriverId::Cnh(n) => (None, Some(n.as_str().to_owned()), serde_json::json!({})),
        // Eleven digits valid as both: kept as typed, not claimed to be either.
        DriverId::Either { cpf, .. } => (
            None,
            None,
            serde_json::json!({ "documento_informado": cpf.as_str(), "tipo": "CPF ou CNH" }),
        ),
    };
    ObservedPerson {
        name: name
            .filter(|n| !n.trim().is_empty())
            .map(|n| n.trim().to_owned()),
        cpf,
        cnh,
        details,
    }
}

/// Default description of the facts: what the check found irregular, in the officer's words
/// of the catalogue (no personal data: messages name permits and plates, not people).
fn facts_from(verdict: &Verdict) -> String {
    let lines: Vec<&str> = verdict
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Irregular)
        .map(|f| f.message.as_str())
        .collect();
    lines.join(" ")
}
