//! `RecordDoc`: one field record as one Automerge document (layout in the module docs).

use automerge::transaction::{CommitOptions, Transactable};
use automerge::{
    AutoCommit, AutomergeError, ChangeHash, ObjId, ObjType, ROOT, ReadDoc, ScalarValue, Value,
};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::RecordError;
use super::events::{EventKind, EventView, RawEvent, WarningKind, replay};
use super::model::{
    Agent, DriverRef, FieldConflict, Gravity, InfractionDraft, LegalBasis, PersonRef, Position,
    RecordKind, RecordView, SCHEMA_VERSION, Signature, TransgressionDraft, UserRole,
    VehicleConfirmation, VehicleRef, WitnessInput, charged_people, device_of_actor,
    normalise_sha256,
};
use super::read::{
    opt_str, parse_uuid, person_ref, read_str_list, req_obj, req_str, scalar, scalar_json,
};
use super::seal::{DeviceKey, EvidenceSeal};
use super::tree::{self, read_tree};
use crate::domain::{DriverRole, Plate, RegistryIndex};
use crate::limits::MAX_RECORD_BYTES;
use crate::rules::Verdict;

/// What users read for a field of the document (`facts`, `witnesses[0].statement`, …): the
/// one table every message that names a field goes through, so no page or device shows a key.
/// An unknown path reads as "um campo do registro" rather than leaking the key.
pub fn field_label_pt(path: &str) -> String {
    let (head, rest) = match path.find(['.', '[']) {
        Some(i) => (&path[..i], &path[i..]),
        None => (path, ""),
    };
    let index = rest
        .strip_prefix('[')
        .and_then(|r| r.split(']').next())
        .and_then(|n| n.parse::<usize>().ok());
    let sub = rest.rsplit('.').next().filter(|_| rest.contains('.'));
    let base = match head {
        key::NUMBER => "o número",
        key::ISSUING_BODY => "o órgão autuador",
        key::AUTHOR => "o autor",
        key::OCCURRED_AT => "a data e hora da ocorrência",
        key::MONOTONIC => "o relógio do dispositivo",
        key::POSITION => "a posição",
        key::STAND_ID => "o ponto",
        key::VEHICLE => "o veículo",
        key::VEHICLE_CONFIRMATION => "a confirmação do veículo",
        key::DRIVER => "o condutor",
        key::PERMIT_NUMBER => "o alvará",
        key::HOLDER_ID => "o titular",
        key::CHARGED => "quem responde",
        key::GRAVITY => "a gravidade",
        key::FACTS => "os fatos",
        key::LEGAL_BASIS => "o fundamento legal",
        key::VERDICT => "o veredito",
        key::SIGNATURE => "a assinatura do autuado",
        key::SEAL => "o selo do dispositivo",
        key::WITNESSES => {
            let what = match sub {
                Some(key::STATEMENT) => "a declaração da testemunha",
                _ => "a testemunha",
            };
            return match index {
                Some(i) => format!("{what} {}", i + 1),
                None => "as testemunhas".to_owned(),
            };
        }
        key::PHOTOS => {
            return match index {
                Some(i) => format!("a foto {}", i + 1),
                None => "as fotos".to_owned(),
            };
        }
        key::EVENTS => "os eventos",
        _ => "um campo do registro",
    };
    base.to_owned()
}

/// Keys of the document. Names are spelled out (not abbreviated) because the office and the
/// audit read raw documents too; Automerge compresses repeated keys.
pub(crate) mod key {
    pub(crate) const SCHEMA_VERSION: &str = "schema_version";
    pub(crate) const ID: &str = "id";
    pub(crate) const KIND: &str = "kind";
    pub(crate) const NUMBER: &str = "number";
    pub(crate) const ISSUING_BODY: &str = "issuing_body";
    pub(crate) const AUTHOR: &str = "author";
    pub(crate) const USER_ID: &str = "user_id";
    pub(crate) const ROLE: &str = "role";
    pub(crate) const DEVICE_ID: &str = "device_id";
    pub(crate) const OCCURRED_AT: &str = "occurred_at";
    pub(crate) const MONOTONIC: &str = "monotonic";
    pub(crate) const POSITION: &str = "position";
    pub(crate) const LAT: &str = "lat";
    pub(crate) const LON: &str = "lon";
    pub(crate) const ACCURACY_M: &str = "accuracy_m";
    pub(crate) const STAND_ID: &str = "stand_id";
    pub(crate) const VEHICLE: &str = "vehicle";
    pub(crate) const VEHICLE_CONFIRMATION: &str = "vehicle_confirmation";
    pub(crate) const PLATE_RAW: &str = "plate_raw";
    pub(crate) const PLATE: &str = "plate";
    pub(crate) const DRIVER: &str = "driver";
    pub(crate) const PERSON: &str = "person";
    pub(crate) const PERMIT_NUMBER: &str = "permit_number";
    pub(crate) const HOLDER_ID: &str = "holder_id";
    pub(crate) const CHARGED: &str = "charged";
    pub(crate) const GRAVITY: &str = "gravity";
    pub(crate) const FACTS: &str = "facts";
    pub(crate) const LEGAL_BASIS: &str = "legal_basis";
    pub(crate) const VERDICT: &str = "verdict";
    pub(crate) const SIGNATURE: &str = "signature";
    pub(crate) const SEAL: &str = "seal";
    pub(crate) const WITNESSES: &str = "witnesses";
    pub(crate) const STATEMENT: &str = "statement";
    pub(crate) const AT: &str = "at";
    pub(crate) const BY: &str = "by";
    pub(crate) const PHOTOS: &str = "photos";
    pub(crate) const EVENTS: &str = "events";
    pub(crate) const EVENT_KIND: &str = "kind";
    pub(crate) const PAYLOAD: &str = "payload";
    /// String fields that hold JSON; `conflicts()` shows their values decoded.
    pub(crate) const JSON_FIELDS: [&str; 6] = [
        LEGAL_BASIS,
        VERDICT,
        SIGNATURE,
        SEAL,
        VEHICLE_CONFIRMATION,
        PAYLOAD,
    ];
}

impl From<AutomergeError> for RecordError {
    fn from(e: AutomergeError) -> Self {
        RecordError::Document {
            reason: e.to_string(),
        }
    }
}

fn json_err(e: serde_json::Error) -> RecordError {
    RecordError::Document {
        reason: e.to_string(),
    }
}

pub(super) fn malformed(reason: impl Into<String>) -> RecordError {
    RecordError::Malformed {
        reason: reason.into(),
    }
}

/// What a contained panic of the document library is reported as (one Portuguese sentence).
pub(crate) const LIBRARY_PANIC: &str =
    "a biblioteca de documentos falhou ao ler estes bytes (dados corrompidos)";

/// Runs `f`, which decodes bytes from outside with the document library, turning a panic
/// inside it into `Malformed`.
///
/// Automerge 0.12 and its column codec panic on some corrupt inputs instead of returning an
/// error; one such record must be refused alone, not take down the server's whole exchange or
/// the app. `f` may only build and return new values (a scratch document): on a panic they are
/// dropped half-built and nothing outside `f` has changed, which is why asserting unwind safety
/// is sound here.
pub(crate) fn contain<T>(f: impl FnOnce() -> Result<T, RecordError>) -> Result<T, RecordError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(malformed(LIBRARY_PANIC)))
}

/// One field record (auto de infração or transgression report) as an Automerge document.
///
/// All mutators take the acting `Agent` and the instant, write under the agent's device actor,
/// and commit one Automerge change (rolled back entirely if the call fails). Nothing here reads
/// the clock, except `Uuid::now_v7()` for event ids.
///
/// A device must hold one live instance per record (the store serialises access): two
/// instances edited by the same device would write the same actor's sequence numbers twice,
/// and their changes could then never be merged. For the same reason, when persisting a change
/// fails, drop the instance and reload the record from the store before editing again.
#[derive(Debug, Clone)]
pub struct RecordDoc {
    doc: AutoCommit,
    id: Uuid,
    kind: RecordKind,
    /// Heads already persisted by the caller (after `load`, `save`, `save_incremental`).
    /// Kept here rather than relying on `AutoCommit`'s own cursor, which `AutoCommit::load`
    /// leaves empty: the first incremental save after a load would repeat the whole document.
    saved: Vec<ChangeHash>,
}

/// Everything a new document is written from; both constructors validate into this.
struct NewRecord {
    id: Uuid,
    kind: RecordKind,
    number: Option<String>,
    issuing_body: String,
    occurred_at: DateTime<Utc>,
    monotonic: u64,
    position: Option<Position>,
    stand_id: Option<String>,
    vehicle: Option<VehicleRef>,
    driver: DriverRef,
    permit_number: Option<String>,
    holder_id: Option<String>,
    charged: Vec<PersonRef>,
    gravity: Option<Gravity>,
    facts: String,
    legal_basis: Vec<LegalBasis>,
    verdict: Option<String>,
    witnesses: Vec<WitnessInput>,
    photos: Vec<String>,
}

impl RecordDoc {
    // ---------------------------------------------------------------- creation

    /// A new auto de infração, in draft (not yet issued), by an officer or inspector.
    ///
    /// Refused when the agent is not of a body art. 36 names (R35), the id is not a UUID v7,
    /// a reference or hash is malformed, or the driver is an auxiliary and the holder is
    /// missing (art. 32 §2, R33: both are charged).
    pub fn new_infraction(draft: InfractionDraft, agent: &Agent) -> Result<Self, RecordError> {
        if !RecordKind::Infraction.may_be_created_by(agent.role) {
            return Err(RecordError::RoleNotAllowed {
                role: agent.role.label_pt(),
                action: "lavrar auto de infração (art. 36: só a Guarda Municipal e a Secretaria de Transportes fiscalizam)",
                rule: crate::rules::RuleId::R35,
            });
        }
        non_empty("órgão autuador", &draft.issuing_body)?;
        let charged = charged_people(&draft.driver, draft.driver_role, draft.holder_id.as_deref())?;
        let verdict = draft
            .verdict
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(json_err)?;
        let rec = NewRecord {
            id: draft.id,
            kind: RecordKind::Infraction,
            number: draft.number,
            issuing_body: draft.issuing_body,
            occurred_at: draft.occurred_at,
            monotonic: draft.monotonic,
            position: draft.position,
            stand_id: draft.stand_id,
            vehicle: Some(VehicleRef::from(&draft.plate)),
            driver: DriverRef {
                person: draft.driver,
                role: draft.driver_role,
            },
            permit_number: draft.permit_number,
            holder_id: draft.holder_id,
            charged,
            gravity: None,
            facts: draft.facts,
            legal_basis: draft.legal_basis,
            verdict,
            witnesses: draft.witnesses,
            photos: draft.photos,
        };
        Self::create(rec, agent)
    }

    /// A new transgression report (art. 17), in draft, by the coordinator of `coordinator_stand`.
    ///
    /// The registry decides scope: the permit must exist and belong to the coordinator's stand,
    /// and the driver must be its holder or a registered auxiliary (`RecordError::OutsideStand`,
    /// `RecordError::NotDriverOfPermit` otherwise). Holder, plate and the driver's role are
    /// taken from the registry, not typed.
    pub fn new_transgression(
        draft: TransgressionDraft,
        agent: &Agent,
        index: &RegistryIndex<'_>,
        coordinator_stand: &str,
    ) -> Result<Self, RecordError> {
        if !RecordKind::Transgression.may_be_created_by(agent.role) {
            return Err(RecordError::RoleNotAllowed {
                role: agent.role.label_pt(),
                action: "comunicar transgressão (art. 17: atribuição do coordenador do ponto)",
                rule: crate::rules::RuleId::R27,
            });
        }
        let scope = transgression_scope(
            index,
            coordinator_stand,
            &draft.permit_number,
            &draft.driver_id,
            draft.occurred_at,
        )?;
        let driver = PersonRef::Registry(draft.driver_id.clone());
        let charged = charged_people(&driver, scope.role, Some(&scope.holder_id))?;
        let rec = NewRecord {
            id: draft.id,
            kind: RecordKind::Transgression,
            number: None,
            issuing_body: scope.issuing_body,
            occurred_at: draft.occurred_at,
            monotonic: draft.monotonic,
            position: draft.position,
            stand_id: Some(coordinator_stand.to_owned()),
            vehicle: scope.plate.as_ref().map(VehicleRef::from),
            driver: DriverRef {
                person: driver,
                role: scope.role,
            },
            permit_number: Some(draft.permit_number),
            holder_id: Some(scope.holder_id),
            charged,
            gravity: Some(draft.gravity),
            facts: draft.facts,
            legal_basis: draft.legal_basis,
            verdict: None,
            witnesses: draft.witnesses,
            photos: draft.photos,
        };
        Self::create(rec, agent)
    }

    fn create(rec: NewRecord, agent: &Agent) -> Result<Self, RecordError> {
        if rec.id.get_version_num() != 7 {
            return Err(RecordError::Invalid {
                field: "id",
                reason: format!("{} não é um UUID v7", rec.id),
            });
        }
        if let Some(n) = &rec.number {
            non_empty("número do auto", n)?;
        }
        if let Some(p) = &rec.position {
            p.validate()?;
        }
        rec.driver.person.validate()?;
        for w in &rec.witnesses {
            w.person.validate()?;
        }
        let photos = rec
            .photos
            .iter()
            .map(|h| normalise_sha256(h))
            .collect::<Result<Vec<_>, _>>()?;

        let mut doc = AutoCommit::new().with_actor(agent.actor_id());
        let d = &mut doc;
        d.put(ROOT, key::SCHEMA_VERSION, SCHEMA_VERSION)?;
        d.put(ROOT, key::ID, rec.id.to_string())?;
        d.put(ROOT, key::KIND, rec.kind.as_str())?;
        if let Some(n) = rec.number {
            d.put(ROOT, key::NUMBER, n.trim())?;
        }
        d.put(ROOT, key::ISSUING_BODY, rec.issuing_body.trim())?;
        let author = d.put_object(ROOT, key::AUTHOR, ObjType::Map)?;
        d.put(&author, key::USER_ID, agent.user_id.as_str())?;
        d.put(&author, key::ROLE, agent.role.as_str())?;
        d.put(&author, key::DEVICE_ID, agent.device_id.to_string())?;
        d.put(
            ROOT,
            key::OCCURRED_AT,
            ScalarValue::Timestamp(rec.occurred_at.timestamp_millis()),
        )?;
        d.put(ROOT, key::MONOTONIC, rec.monotonic)?;
        if let Some(p) = rec.position {
            let pos = d.put_object(ROOT, key::POSITION, ObjType::Map)?;
            d.put(&pos, key::LAT, p.lat)?;
            d.put(&pos, key::LON, p.lon)?;
            d.put(&pos, key::ACCURACY_M, p.accuracy_m)?;
        }
        if let Some(s) = rec.stand_id {
            d.put(ROOT, key::STAND_ID, s)?;
        }
        if let Some(v) = rec.vehicle {
            let veh = d.put_object(ROOT, key::VEHICLE, ObjType::Map)?;
            d.put(&veh, key::PLATE_RAW, v.plate_raw)?;
            d.put(&veh, key::PLATE, v.plate)?;
        }
        let drv = d.put_object(ROOT, key::DRIVER, ObjType::Map)?;
        d.put(&drv, key::PERSON, rec.driver.person.encode())?;
        d.put(&drv, key::ROLE, driver_role_str(rec.driver.role)?)?;
        if let Some(p) = rec.permit_number {
            d.put(ROOT, key::PERMIT_NUMBER, p)?;
        }
        if let Some(h) = rec.holder_id {
            d.put(ROOT, key::HOLDER_ID, h)?;
        }
        let charged = d.put_object(ROOT, key::CHARGED, ObjType::List)?;
        for (i, p) in rec.charged.iter().enumerate() {
            d.insert(&charged, i, p.encode())?;
        }
        if let Some(g) = rec.gravity {
            d.put(ROOT, key::GRAVITY, g.as_str())?;
        }
        d.put(ROOT, key::FACTS, rec.facts.trim())?;
        d.put(
            ROOT,
            key::LEGAL_BASIS,
            serde_json::to_string(&rec.legal_basis).map_err(json_err)?,
        )?;
        if let Some(v) = rec.verdict {
            d.put(ROOT, key::VERDICT, v)?;
        }
        let witnesses = d.put_object(ROOT, key::WITNESSES, ObjType::List)?;
        for w in &rec.witnesses {
            insert_witness(d, &witnesses, w, agent, rec.occurred_at)?;
        }
        let list = d.put_object(ROOT, key::PHOTOS, ObjType::List)?;
        let mut seen = Vec::new();
        for h in photos {
            if !seen.contains(&h) {
                d.insert(&list, seen.len(), h.as_str())?;
                seen.push(h);
            }
        }
        d.put_object(ROOT, key::EVENTS, ObjType::List)?;
        doc.commit_with(commit_opts("create", rec.occurred_at));
        Ok(Self {
            doc,
            id: rec.id,
            kind: rec.kind,
            saved: Vec::new(),
        })
    }

    // ---------------------------------------------------------------- bytes

    /// Loads a document from `save()` bytes, or from `save()` bytes followed by any number of
    /// `save_incremental()` chunks. Garbage, truncated bytes, documents that are not records
    /// and records of a newer layout are errors; this never panics. What was loaded counts as
    /// persisted: the next `save_incremental()` holds only later changes.
    ///
    /// Bytes over `MAX_RECORD_BYTES`, or inflating beyond `MAX_RECORD_INFLATED_BYTES`, are
    /// refused before the library sees them, and a panic of
    /// the library on corrupt bytes is contained (`contain`).
    pub fn load(bytes: &[u8]) -> Result<Self, RecordError> {
        check_record_bytes(bytes.len())?;
        super::inflate::check_inflated(bytes)?;
        contain(|| {
            let doc = AutoCommit::load(bytes).map_err(|e| malformed(e.to_string()))?;
            let mut rec = Self::from_automerge(doc)?;
            rec.saved = rec.doc.get_heads();
            Ok(rec)
        })
    }

    /// Wraps a document received by other means (the sync protocol), checking it is a record.
    /// Nothing of it counts as persisted yet.
    pub fn from_automerge(doc: AutoCommit) -> Result<Self, RecordError> {
        Self::from_automerge_viewed(doc).map(|(rec, _)| rec)
    }

    /// `from_automerge`, also returning the view computed to check the document: a caller that
    /// needs the view anyway (the server's vetting, once per incoming change) does not
    /// materialise the record twice (sync bench).
    pub fn from_automerge_viewed(doc: AutoCommit) -> Result<(Self, RecordView), RecordError> {
        Self::try_from_automerge_viewed(doc).map_err(|(_, e)| e)
    }

    /// `from_automerge_viewed`, handing the document back when it is not a record: the
    /// server's vetting then walks its changes one by one to find the one that broke it.
    pub(crate) fn try_from_automerge_viewed(
        doc: AutoCommit,
    ) -> Result<(Self, RecordView), (Box<AutoCommit>, RecordError)> {
        let (id, kind) = match Self::identity(&doc) {
            Ok(x) => x,
            Err(e) => return Err((Box::new(doc), e)),
        };
        let rec = Self {
            doc,
            id,
            kind,
            saved: Vec::new(),
        };
        // Read everything once: a document that loads is a document that can be shown.
        match rec.view() {
            Ok(view) => Ok((rec, view)),
            Err(e) => Err((Box::new(rec.doc), e)),
        }
    }

    /// The record id a document claims (its root `id`), without checking that it is a record:
    /// what the sync decode compares with the id the bytes came under, for the price of one
    /// key read instead of a view.
    pub(crate) fn claimed_id(doc: &AutoCommit) -> Option<Uuid> {
        opt_str(doc, &ROOT, key::ID)
            .ok()
            .flatten()
            .and_then(|s| Uuid::parse_str(&s).ok())
    }

    /// Every text the root `number` holds (several after concurrent writes), without a view:
    /// the numbers the server looks up in its leases before vetting a document.
    pub(crate) fn claimed_numbers(doc: &AutoCommit) -> Vec<String> {
        doc.get_all(ROOT, key::NUMBER)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(v, _)| match v {
                Value::Scalar(s) => match s.as_ref() {
                    ScalarValue::Str(t) => Some(t.to_string()),
                    _ => None,
                },
                Value::Object(_) => None,
            })
            .collect()
    }

    /// The id and kind of a document that claims to be a record of a layout this build reads.
    fn identity(doc: &AutoCommit) -> Result<(Uuid, RecordKind), RecordError> {
        let version = match scalar(doc, &ROOT, key::SCHEMA_VERSION)? {
            Some(ScalarValue::Uint(v)) => v,
            Some(ScalarValue::Int(v)) if v >= 0 => v.unsigned_abs(),
            _ => {
                return Err(malformed(
                    "não é um registro de fiscalização (sem schema_version)",
                ));
            }
        };
        if version > SCHEMA_VERSION {
            return Err(RecordError::UnsupportedSchema { version });
        }
        let id = parse_uuid(&req_str(doc, &ROOT, key::ID)?, "id")?;
        let kind_s = req_str(doc, &ROOT, key::KIND)?;
        let kind = RecordKind::parse(&kind_s)
            .ok_or_else(|| malformed(format!("tipo de registro desconhecido: {kind_s:?}")))?;
        Ok((id, kind))
    }

    /// Applies `save_incremental()` chunks (or a whole `save()`) of the same record, checked on
    /// a fork first so that bytes of another record, or bytes that break the layout, leave this
    /// copy untouched. The applied changes count as not yet persisted.
    pub fn load_incremental(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        check_record_bytes(bytes.len())?;
        super::inflate::check_inflated(bytes)?;
        let mut probe = self.doc.fork();
        let probe = contain(move || {
            probe
                .load_incremental(bytes)
                .map_err(|e| malformed(e.to_string()))?;
            Self::from_automerge(probe)
        })?;
        self.ensure_same(&probe)?;
        self.doc = probe.doc;
        Ok(())
    }

    /// The whole document, compacted.
    pub fn save(&mut self) -> Vec<u8> {
        let bytes = self.doc.save();
        self.saved = self.doc.get_heads();
        bytes
    }

    /// The changes made or received since the last `load`/`save`/`save_incremental` (empty if
    /// none), for the store to append to its log. `load(save() ++ chunks…)` restores the record.
    pub fn save_incremental(&mut self) -> Vec<u8> {
        let bytes = self.doc.save_after(&self.saved);
        if !bytes.is_empty() {
            self.saved = self.doc.get_heads();
        }
        bytes
    }

    /// Current heads (hashes of the latest changes).
    pub fn heads(&mut self) -> Vec<ChangeHash> {
        self.doc.get_heads()
    }

    /// The device behind each change this copy has beyond `heads` (`None`: an actor that is not
    /// a device UUID). The server compares them with the authenticated device before vetting.
    pub fn change_devices_since(&mut self, heads: &[ChangeHash]) -> Vec<Option<Uuid>> {
        self.doc
            .get_changes(heads)
            .iter()
            .map(|c| device_of_actor(c.actor_id()))
            .collect()
    }

    /// Merges another copy of the same record into this one; both edits survive. The merge
    /// runs on a fork, contained (`contain`): a copy that makes the library panic leaves this
    /// one as it was.
    pub fn merge(&mut self, other: &mut RecordDoc) -> Result<(), RecordError> {
        self.ensure_same(other)?;
        // A fork takes a fresh actor; this copy keeps writing as its device.
        let mut merged = self.doc.fork().with_actor(self.doc.get_actor().clone());
        let theirs = &mut other.doc;
        let merged = contain(move || {
            merged.merge(theirs)?;
            Ok(merged)
        })?;
        self.doc = merged;
        Ok(())
    }

    /// An independent copy (same history), e.g. for the server to apply incoming changes to
    /// before vetting them. The fork's `save_incremental()` holds only what happens after the
    /// fork: exactly the incoming changes.
    pub fn fork(&mut self) -> RecordDoc {
        let saved = self.doc.get_heads();
        Self {
            doc: self.doc.fork(),
            id: self.id,
            kind: self.kind,
            saved,
        }
    }

    /// The underlying document, for the sync protocol (`AutoCommit::sync`). Changes written
    /// through it bypass this API's checks; the server vets them like any other.
    pub fn automerge_mut(&mut self) -> &mut AutoCommit {
        &mut self.doc
    }

    /// The underlying document, read-only.
    pub fn automerge(&self) -> &AutoCommit {
        &self.doc
    }

    /// The underlying document, given up (the server's vetting of its own edit reads it).
    pub(crate) fn into_automerge(self) -> AutoCommit {
        self.doc
    }

    pub fn id(&self) -> Uuid {
        self.id
    }

    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    fn ensure_same(&self, other: &RecordDoc) -> Result<(), RecordError> {
        if self.id != other.id || self.kind != other.kind {
            return Err(RecordError::DifferentRecords {
                ours: self.id.to_string(),
                theirs: other.id.to_string(),
            });
        }
        Ok(())
    }

    // ---------------------------------------------------------------- reading

    /// Every field, the derived status, the events (valid and flagged) and the conflicts.
    pub fn view(&self) -> Result<RecordView, RecordError> {
        self.view_heads(None)
    }

    /// The record as it was at `heads` (an earlier state of this copy), read without isolating
    /// or forking the document: the server vets each incoming change on the state it produced
    /// (sync bench: isolating and integrating again cost a tenth of a sync). The
    /// state must still be this record (same id and kind), else `Malformed`.
    pub fn view_at(&self, heads: &[ChangeHash]) -> Result<RecordView, RecordError> {
        let root = read_tree(&self.doc, Some(heads))?;
        let id = parse_uuid(root.req_str(key::ID)?, "id")?;
        if id != self.id || root.req_str(key::KIND)? != self.kind.as_str() {
            return Err(malformed("a alteração troca a identidade do registro"));
        }
        self.view_tree(Some(heads), &root)
    }

    fn view_heads(&self, heads: Option<&[ChangeHash]>) -> Result<RecordView, RecordError> {
        // One walk over the document, then field reads from the tree (see `tree.rs`).
        let root = read_tree(&self.doc, heads)?;
        self.view_tree(heads, &root)
    }

    fn view_tree(
        &self,
        heads: Option<&[ChangeHash]>,
        root: &tree::Map<'_>,
    ) -> Result<RecordView, RecordError> {
        let d = &self.doc;
        let schema_version = root
            .opt_u64(key::SCHEMA_VERSION)?
            .ok_or_else(|| malformed("schema_version"))?;
        let author = tree::read_agent(root.req_map(key::AUTHOR)?)?;
        let position = match root.opt_map(key::POSITION)? {
            None => None,
            Some(p) => Some(Position {
                lat: p.req_f64(key::LAT)?,
                lon: p.req_f64(key::LON)?,
                accuracy_m: p.req_f64(key::ACCURACY_M)?,
            }),
        };
        let vehicle = match root.opt_map(key::VEHICLE)? {
            None => None,
            Some(v) => Some(VehicleRef {
                plate_raw: v.req_str(key::PLATE_RAW)?.to_owned(),
                plate: v.req_str(key::PLATE)?.to_owned(),
            }),
        };
        let vehicle_confirmation: Option<VehicleConfirmation> = root
            .opt_str(key::VEHICLE_CONFIRMATION)?
            .map(|s| {
                serde_json::from_str(s)
                    .map_err(|e| malformed(format!("confirmação do veículo: {e}")))
            })
            .transpose()?;
        let drv = root.req_map(key::DRIVER)?;
        let driver = DriverRef {
            person: person_ref(drv.req_str(key::PERSON)?)?,
            role: parse_driver_role(drv.req_str(key::ROLE)?)?,
        };
        let charged = root
            .str_list(key::CHARGED)?
            .iter()
            .map(|s| person_ref(s))
            .collect::<Result<Vec<_>, _>>()?;
        let gravity = match root.opt_str(key::GRAVITY)? {
            None => None,
            Some(g) => {
                Some(Gravity::parse(g).ok_or_else(|| malformed(format!("gravidade {g:?}")))?)
            }
        };
        let legal_basis: Vec<LegalBasis> = match root.opt_str(key::LEGAL_BASIS)? {
            None => Vec::new(),
            Some(s) => {
                serde_json::from_str(s).map_err(|e| malformed(format!("fundamento legal: {e}")))?
            }
        };
        let signature: Option<Signature> = root
            .opt_str(key::SIGNATURE)?
            .map(|s| serde_json::from_str(s).map_err(|e| malformed(format!("assinatura: {e}"))))
            .transpose()?;
        let seal: Option<EvidenceSeal> = root
            .opt_str(key::SEAL)?
            .map(|s| serde_json::from_str(s).map_err(|e| malformed(format!("selo: {e}"))))
            .transpose()?;
        let witnesses = tree::read_witnesses(root)?;
        let photos = root.str_list(key::PHOTOS)?;
        let raw_events = tree::read_events(root)?;
        let sealed = raw_events
            .iter()
            .any(|e| matches!(e, RawEvent::Ok(ev) if matches!(ev.event, EventKind::Issued)));
        let occurred_at = root.req_time(key::OCCURRED_AT)?;
        let replayed = replay(self.kind, gravity, occurred_at, raw_events);
        let conflicts = tree::conflicts(d, heads, root)?;
        Ok(RecordView {
            schema_version,
            id: self.id,
            kind: self.kind,
            number: root.opt_string(key::NUMBER)?,
            issuing_body: root.req_str(key::ISSUING_BODY)?.to_owned(),
            author,
            occurred_at,
            monotonic: root.req_u64(key::MONOTONIC)?,
            position,
            stand_id: root.opt_string(key::STAND_ID)?,
            vehicle,
            vehicle_confirmation,
            driver,
            permit_number: root.opt_string(key::PERMIT_NUMBER)?,
            holder_id: root.opt_string(key::HOLDER_ID)?,
            charged,
            gravity,
            facts: root.opt_string(key::FACTS)?.unwrap_or_default(),
            legal_basis,
            verdict: root.opt_string(key::VERDICT)?,
            signature,
            seal,
            witnesses,
            photos,
            sealed,
            status: replayed.status,
            penalty: replayed.penalty,
            notified_on: replayed.notified_on,
            appeal_deadline: replayed.appeal_deadline,
            classification: replayed.classification,
            duplicate_of: replayed.duplicate_of,
            events: replayed.events,
            invalid_events: replayed.invalid,
            conflicts,
        })
    }

    /// Fields holding more than one value after concurrent edits (see `FieldConflict`).
    pub fn conflicts(&self) -> Result<Vec<FieldConflict>, RecordError> {
        tree::conflicts(&self.doc, None, &read_tree(&self.doc, None)?)
    }

    /// True once the record has been issued (an `issued` event exists on this copy).
    pub fn is_sealed(&self) -> Result<bool, RecordError> {
        Ok(tree::read_events(&read_tree(&self.doc, None)?)?
            .iter()
            .any(|e| matches!(e, RawEvent::Ok(ev) if matches!(ev.event, EventKind::Issued))))
    }

    // ---------------------------------------------------------------- editing

    /// Runs `f` as one Automerge change by `agent`'s device; rolls back if it fails.
    fn edit<T>(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        what: &str,
        f: impl FnOnce(&mut AutoCommit) -> Result<T, RecordError>,
    ) -> Result<T, RecordError> {
        self.doc.set_actor(agent.actor_id());
        match f(&mut self.doc) {
            Ok(v) => {
                self.doc.commit_with(commit_opts(what, at));
                Ok(v)
            }
            Err(e) => {
                self.doc.rollback();
                Err(e)
            }
        }
    }

    fn author(&self) -> Result<Agent, RecordError> {
        tree::read_agent(read_tree(&self.doc, None)?.req_map(key::AUTHOR)?)
    }

    /// Draft fields are the author's: the same user, in the same role.
    fn require_author(&self, agent: &Agent, action: &'static str) -> Result<(), RecordError> {
        let author = self.author()?;
        if author.user_id != agent.user_id || author.role != agent.role {
            return Err(RecordError::NotAuthor { action });
        }
        Ok(())
    }

    fn require_unsealed(&self, field: &'static str) -> Result<(), RecordError> {
        if self.is_sealed()? {
            return Err(RecordError::Sealed { field });
        }
        Ok(())
    }

    /// Gives the record its auto number (from the device's leased block, or by the office).
    /// A number is written once; a record may be issued before it has one.
    pub fn assign_number(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        number: &str,
    ) -> Result<(), RecordError> {
        if agent.role != UserRole::Office {
            self.require_author(agent, "atribuir número ao registro")?;
        }
        non_empty("número do auto", number)?;
        if let Some(current) = opt_str(&self.doc, &ROOT, key::NUMBER)? {
            return Err(RecordError::NumberAlreadyAssigned { number: current });
        }
        self.edit(agent, at, "number", |d| {
            Ok(d.put(ROOT, key::NUMBER, number.trim())?)
        })
    }

    /// Rewrites the description of the facts. Author only; refused once sealed.
    pub fn set_facts(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        facts: &str,
    ) -> Result<(), RecordError> {
        self.require_author(agent, "alterar os fatos")?;
        self.require_unsealed(key::FACTS)?;
        self.edit(agent, at, "facts", |d| {
            Ok(d.put(ROOT, key::FACTS, facts.trim())?)
        })
    }

    /// Replaces the legal basis. Author only; refused once sealed.
    pub fn set_legal_basis(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        basis: &[LegalBasis],
    ) -> Result<(), RecordError> {
        self.require_author(agent, "alterar o fundamento legal")?;
        self.require_unsealed(key::LEGAL_BASIS)?;
        let json = serde_json::to_string(basis).map_err(json_err)?;
        self.edit(agent, at, "legal_basis", |d| {
            Ok(d.put(ROOT, key::LEGAL_BASIS, json)?)
        })
    }

    /// Replaces the verdict snapshot (e.g. after a fresh check). Author only; refused once sealed.
    pub fn set_verdict(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        verdict: &Verdict,
    ) -> Result<(), RecordError> {
        self.require_author(agent, "alterar o veredito")?;
        self.require_unsealed(key::VERDICT)?;
        let json = serde_json::to_string(verdict).map_err(json_err)?;
        self.edit(agent, at, "verdict", |d| {
            Ok(d.put(ROOT, key::VERDICT, json)?)
        })
    }

    /// The author confirms that the vehicle the record names (filled by a lookup) is the one
    /// inspected: who, on which device, when, and which plate. Only the author, on the device
    /// the record was made on, and only before issuing (the confirmation is sealed with the
    /// evidence); confirming again replaces the confirmation. An auto is not issued without it.
    pub fn confirm_vehicle(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
    ) -> Result<VehicleConfirmation, RecordError> {
        self.require_author(agent, "confirmar a identificação do veículo")?;
        self.require_unsealed(key::VEHICLE_CONFIRMATION)?;
        let view = self.view()?;
        if view.author.device_id != agent.device_id {
            return Err(RecordError::NotAuthor {
                action: "confirmar o veículo, e só no aparelho em que o registro foi lavrado",
            });
        }
        let vehicle = view.vehicle.ok_or(RecordError::MissingField {
            field: "veículo (placa)",
        })?;
        let confirmation = VehicleConfirmation {
            user_id: agent.user_id.clone(),
            device_id: agent.device_id,
            at,
            plate: vehicle.plate,
        };
        let json = serde_json::to_string(&confirmation).map_err(json_err)?;
        self.edit(agent, at, "vehicle_confirmation", |d| {
            Ok(d.put(ROOT, key::VEHICLE_CONFIRMATION, json)?)
        })?;
        Ok(confirmation)
    }

    /// Who may add evidence (witnesses, photos): the author at any time, and the office.
    fn require_evidence_writer(&self, agent: &Agent) -> Result<(), RecordError> {
        if agent.role == UserRole::Office {
            return Ok(());
        }
        self.require_author(agent, "acrescentar prova ao registro")
    }

    /// Adds a witness. Allowed after issuing too: the list is append-only, so what was sealed
    /// stays as it was while late evidence (a witness found later) can still be attached.
    pub fn add_witness(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        witness: &WitnessInput,
    ) -> Result<(), RecordError> {
        self.require_evidence_writer(agent)?;
        witness.person.validate()?;
        self.edit(agent, at, "witness", |d| {
            let list = req_obj(d, &ROOT, key::WITNESSES, ObjType::List)?;
            insert_witness(d, &list, witness, agent, at)
        })
    }

    /// Adds a photo by its SHA-256 (hex). Append-only like witnesses; returns false when the
    /// photo is already in the record.
    pub fn add_photo(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        sha256: &str,
    ) -> Result<bool, RecordError> {
        self.require_evidence_writer(agent)?;
        let hash = normalise_sha256(sha256)?;
        let list = req_obj(&self.doc, &ROOT, key::PHOTOS, ObjType::List)?;
        if read_str_list(&self.doc, &ROOT, key::PHOTOS)?.contains(&hash) {
            return Ok(false);
        }
        self.edit(agent, at, "photo", |d| {
            let len = d.length(&list);
            d.insert(&list, len, hash.as_str())?;
            Ok(true)
        })
    }

    /// Issues the record: writes the signature (or why it is missing), the device's seal over
    /// the evidence (module `seal`, signed with `key`) and the `issued` event in one change.
    /// From then on the evidence is sealed.
    ///
    /// Refused when already issued, when the facts are empty, when an auto has no legal basis,
    /// when a serious transgression report names no witness (art. 17 §2), and when the agent's
    /// device is not the author's (the server accepts a seal only from the author's device).
    pub fn issue(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        signature: Signature,
        key: &DeviceKey,
    ) -> Result<String, RecordError> {
        if self.author()?.device_id != agent.device_id {
            return Err(RecordError::NotAuthor {
                action: "emitir o registro em outro aparelho que não o do rascunho",
            });
        }
        self.issue_with(agent, at, signature, Some(key))
    }

    /// `issue` as an app before device keys did it: no seal. What such records look like, for
    /// tests of how the server treats them (accepted only from a device with no registered key).
    #[doc(hidden)]
    pub fn issue_unsealed(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        signature: Signature,
    ) -> Result<String, RecordError> {
        self.issue_with(agent, at, signature, None)
    }

    fn issue_with(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        signature: Signature,
        key: Option<&DeviceKey>,
    ) -> Result<String, RecordError> {
        self.require_author(agent, "emitir o registro")?;
        if self.is_sealed()? {
            return Err(RecordError::AlreadyIssued);
        }
        let view = self.view()?;
        if view.facts.trim().is_empty() {
            return Err(RecordError::MissingField {
                field: "descrição dos fatos",
            });
        }
        if self.kind == RecordKind::Infraction && view.legal_basis.is_empty() {
            return Err(RecordError::MissingField {
                field: "fundamento legal (tipificação da infração)",
            });
        }
        if view.gravity == Some(Gravity::Serious) && view.witnesses.is_empty() {
            return Err(RecordError::WitnessRequired);
        }
        // An auto names the vehicle the officer identified: never one a lookup filled in alone.
        if let (RecordKind::Infraction, Some(v)) = (self.kind, &view.vehicle)
            && !view.vehicle_confirmed()
        {
            return Err(RecordError::VehicleNotConfirmed {
                plate: v.plate.clone(),
            });
        }
        let signature = match signature {
            Signature::Signed { sha256 } => Signature::Signed {
                sha256: normalise_sha256(&sha256)?,
            },
            Signature::Missing { reason } => {
                non_empty("motivo da falta de assinatura", &reason)?;
                Signature::Missing {
                    reason: reason.trim().to_owned(),
                }
            }
        };
        let json = serde_json::to_string(&signature).map_err(json_err)?;
        // The seal covers the record exactly as issued: the view with the signature in place.
        let seal = key
            .map(|k| {
                let mut sealed = view.clone();
                sealed.signature = Some(signature.clone());
                serde_json::to_string(&super::seal::seal(&sealed, k)).map_err(json_err)
            })
            .transpose()?;
        let id = Uuid::now_v7().to_string();
        self.check_event(&view, agent, at, &EventKind::Issued, &id)?;
        self.edit(agent, at, "issue", |d| {
            d.put(ROOT, key::SIGNATURE, json)?;
            if let Some(seal) = seal {
                d.put(ROOT, key::SEAL, seal)?;
            }
            insert_event(d, agent, at, &EventKind::Issued, id)
        })
    }

    /// A light transgression settled by the coordinator with a verbal or written warning
    /// (art. 17 §1, §2 I–II). Serious ones cannot be settled at the stand.
    pub fn settle_by_coordinator(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        warning: WarningKind,
    ) -> Result<String, RecordError> {
        let view = self.view()?;
        if view.gravity != Some(Gravity::Light) {
            return Err(RecordError::OnlyLightSettled);
        }
        self.append_event(agent, at, EventKind::SettledByCoordinator { warning })
    }

    /// Sends a transgression report to the Unidade (art. 17 §2): a serious one needs a witness.
    pub fn forward_to_office(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
    ) -> Result<String, RecordError> {
        let view = self.view()?;
        if view.gravity == Some(Gravity::Serious) && view.witnesses.is_empty() {
            return Err(RecordError::WitnessRequired);
        }
        self.append_event(agent, at, EventKind::ForwardedToOffice)
    }

    /// Appends an event after checking the agent's role and that the state machine accepts it
    /// now without invalidating any event already accepted. Returns the event id.
    ///
    /// `issued` goes through `issue` (it needs a signature) and `conflict_resolved` through
    /// `resolve_conflict` (it must write the chosen value too).
    pub fn append_event(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        event: EventKind,
    ) -> Result<String, RecordError> {
        if matches!(
            event,
            EventKind::Issued | EventKind::ConflictResolved { .. }
        ) {
            return Err(RecordError::EventRefused {
                event: event.label_pt(),
                reason: String::from("use a operação própria (emitir / resolver conflito)"),
            });
        }
        let view = self.view()?;
        let id = Uuid::now_v7().to_string();
        self.check_event(&view, agent, at, &event, &id)?;
        self.edit(agent, at, event.name(), |d| {
            insert_event(d, agent, at, &event, id)
        })
    }

    /// Role and state-machine check of a new event (with the id it will be stored under, which
    /// decides its place among events of the same instant) against the current view.
    fn check_event(
        &self,
        view: &RecordView,
        agent: &Agent,
        at: DateTime<Utc>,
        event: &EventKind,
        id: &str,
    ) -> Result<(), RecordError> {
        if !event.allowed_for(agent.role, self.kind) {
            return Err(RecordError::RoleNotAllowed {
                role: agent.role.label_pt(),
                action: event.label_pt(),
                rule: event.competence_rule(self.kind),
            });
        }
        // Replay with the candidate in its place in the order: it must be valid and must not
        // turn any accepted event into a refused one (an event back-dated before others).
        let mut raw: Vec<RawEvent> = view.events.iter().cloned().map(RawEvent::Ok).collect();
        let candidate_id = id.to_owned();
        raw.push(RawEvent::Ok(EventView {
            id: candidate_id.clone(),
            at,
            by: agent.clone(),
            event: event.clone(),
            valid: true,
        }));
        let after = replay(self.kind, view.gravity, view.occurred_at, raw);
        if let Some(bad) = after.invalid.iter().find(|i| i.id == candidate_id) {
            return Err(RecordError::EventRefused {
                event: event.label_pt(),
                reason: bad.reason.clone(),
            });
        }
        let before: Vec<&str> = view.invalid_events.iter().map(|i| i.id.as_str()).collect();
        if after
            .invalid
            .iter()
            .any(|i| !before.contains(&i.id.as_str()))
        {
            return Err(RecordError::EventRefused {
                event: event.label_pt(),
                reason: String::from("a data do evento é anterior a eventos já registrados"),
            });
        }
        Ok(())
    }

    /// The office settles a conflict: `chosen` must be one of the values `conflicts()` shows for
    /// `field` (a top-level field). Writes that value over all of them and records the choice
    /// as a `conflict_resolved` event, in one change. Allowed on sealed fields, since no new
    /// value enters the record.
    pub fn resolve_conflict(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        field: &str,
        chosen: &serde_json::Value,
    ) -> Result<String, RecordError> {
        let event = EventKind::ConflictResolved {
            field: field.to_owned(),
            value: chosen.clone(),
        };
        if !event.allowed_for(agent.role, self.kind) {
            return Err(RecordError::RoleNotAllowed {
                role: agent.role.label_pt(),
                action: event.label_pt(),
                rule: event.competence_rule(self.kind),
            });
        }
        let all = self.doc.get_all(ROOT, field)?;
        if all.len() < 2 {
            return Err(RecordError::NoConflict {
                field: field.to_owned(),
            });
        }
        let mut pick = None;
        for (value, _) in &all {
            if let Value::Scalar(s) = value
                && scalar_json(field, s) == *chosen
            {
                pick = Some(s.clone().into_owned());
            }
        }
        let Some(pick) = pick else {
            return Err(RecordError::Invalid {
                field: "valor escolhido",
                reason: format!(
                    "não é um dos valores em conflito de {}",
                    field_label_pt(field)
                ),
            });
        };
        let field = field.to_owned();
        let id = Uuid::now_v7().to_string();
        self.edit(agent, at, "resolve", |d| {
            d.put(ROOT, field.as_str(), pick)?;
            insert_event(d, agent, at, &event, id)
        })
    }

    /// Test hook: appends an event with no check at all, as a faulty or old client might.
    #[cfg(test)]
    pub(crate) fn append_event_unchecked(
        &mut self,
        agent: &Agent,
        at: DateTime<Utc>,
        event: EventKind,
    ) -> Result<String, RecordError> {
        let id = Uuid::now_v7().to_string();
        self.edit(agent, at, event.name(), |d| {
            insert_event(d, agent, at, &event, id)
        })
    }
}

// -------------------------------------------------------------------- registry scope

/// What the registry says about a transgression's driver, once it is in the coordinator's scope.
pub(crate) struct Scope {
    pub(crate) role: DriverRole,
    pub(crate) holder_id: String,
    pub(crate) plate: Option<Plate>,
    pub(crate) issuing_body: String,
}

/// Art. 17: a coordinator reports only drivers of their own stand. The permit must exist and be
/// assigned to `coordinator_stand`, and the driver must be its holder or registered auxiliary.
pub(crate) fn transgression_scope(
    index: &RegistryIndex<'_>,
    coordinator_stand: &str,
    permit_number: &str,
    driver_id: &str,
    at: DateTime<Utc>,
) -> Result<Scope, RecordError> {
    let permit = index
        .permit(permit_number.trim())
        .ok_or_else(|| RecordError::UnknownPermit {
            permit: permit_number.to_owned(),
        })?;
    if permit.stand_id != coordinator_stand {
        return Err(RecordError::OutsideStand {
            permit: permit.number.clone(),
            permit_stand: permit.stand_id.clone(),
            coordinator_stand: coordinator_stand.to_owned(),
        });
    }
    let person = index
        .person(driver_id)
        .ok_or_else(|| RecordError::NotDriverOfPermit {
            person: driver_id.to_owned(),
            permit: permit.number.clone(),
        })?;
    let role = index.role_on(permit, person, crate::time::local_date(at));
    if !matches!(role, DriverRole::Holder | DriverRole::Auxiliary) {
        return Err(RecordError::NotDriverOfPermit {
            person: driver_id.to_owned(),
            permit: permit.number.clone(),
        });
    }
    let stand_name = index
        .stand(coordinator_stand)
        .map_or(coordinator_stand, |s| s.name.as_str());
    Ok(Scope {
        role,
        holder_id: permit.holder_id.clone(),
        plate: index.vehicle(&permit.vehicle_id).map(|v| v.plate.clone()),
        issuing_body: format!("Coordenação do ponto {coordinator_stand} – {stand_name}"),
    })
}

// -------------------------------------------------------------------- writing helpers

/// Refuses bytes of one record over `MAX_RECORD_BYTES` before any decoding.
pub(crate) fn check_record_bytes(len: usize) -> Result<(), RecordError> {
    if len > MAX_RECORD_BYTES {
        return Err(RecordError::TooLarge {
            what: "o registro",
            limit: format!("{} KB", MAX_RECORD_BYTES / 1024),
        });
    }
    Ok(())
}

fn commit_opts(what: &str, at: DateTime<Utc>) -> CommitOptions {
    // The message names the operation for the audit trail; the time is the caller's instant
    // (advisory in Automerge, never used to order anything).
    CommitOptions::default()
        .with_message(what)
        .with_time(at.timestamp())
}

fn non_empty(field: &'static str, value: &str) -> Result<(), RecordError> {
    if value.trim().is_empty() {
        return Err(RecordError::MissingField { field });
    }
    Ok(())
}

fn insert_witness(
    d: &mut AutoCommit,
    list: &ObjId,
    w: &WitnessInput,
    agent: &Agent,
    at: DateTime<Utc>,
) -> Result<(), RecordError> {
    let len = d.length(list);
    let obj = d.insert_object(list, len, ObjType::Map)?;
    d.put(&obj, key::PERSON, w.person.encode())?;
    d.put(&obj, key::STATEMENT, w.statement.trim())?;
    d.put(&obj, key::AT, ScalarValue::Timestamp(at.timestamp_millis()))?;
    d.put(&obj, key::BY, agent.user_id.as_str())?;
    Ok(())
}

/// Inserts an event at the end of the list. Insertion (never a rewrite of the list) is what
/// lets two devices append concurrently and both keep their event after a merge.
fn insert_event(
    d: &mut AutoCommit,
    agent: &Agent,
    at: DateTime<Utc>,
    event: &EventKind,
    id: String,
) -> Result<String, RecordError> {
    let (kind, payload) = event.to_stored().map_err(json_err)?;
    let list = req_obj(d, &ROOT, key::EVENTS, ObjType::List)?;
    let len = d.length(&list);
    let obj = d.insert_object(&list, len, ObjType::Map)?;
    d.put(&obj, key::ID, id.as_str())?;
    d.put(&obj, key::EVENT_KIND, kind)?;
    d.put(&obj, key::AT, ScalarValue::Timestamp(at.timestamp_millis()))?;
    d.put(&obj, key::USER_ID, agent.user_id.as_str())?;
    d.put(&obj, key::ROLE, agent.role.as_str())?;
    d.put(&obj, key::DEVICE_ID, agent.device_id.to_string())?;
    if let Some(p) = payload {
        d.put(&obj, key::PAYLOAD, p)?;
    }
    Ok(id)
}

fn driver_role_str(role: DriverRole) -> Result<String, RecordError> {
    match serde_json::to_value(role).map_err(json_err)? {
        serde_json::Value::String(s) => Ok(s),
        other => Err(malformed(format!("papel do condutor: {other}"))),
    }
}

fn parse_driver_role(s: &str) -> Result<DriverRole, RecordError> {
    serde_json::from_value(serde_json::Value::String(s.to_owned()))
        .map_err(|_| malformed(format!("papel do condutor desconhecido: {s:?}")))
}
