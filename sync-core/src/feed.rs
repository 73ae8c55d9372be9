//! The registry feed: how the office's registry reaches devices (ARCHITECTURE.md, Two kinds of data).
//!
//! Two documents, both produced by the server and applied by the device store
//! (`crate::store::Store::apply_snapshot` / `apply_changes`), each in one transaction:
//!
//! 1. a **snapshot** ([`RegistrySnapshot`]): the whole [`Registry`] at one version, for a new
//!    device or one that fell too far behind (the server may compress it on the wire; that is
//!    transport, not format);
//! 2. a **batch of changes** ([`RegistryChanges`]): what changed between `from_version` and
//!    `to_version`, as an ordered list of upserts and deletes per entity kind. A device applies a
//!    batch only when `from_version` is exactly the version it holds; anything else is refused
//!    whole, so a replica is always some version the office really published.
//!
//! Upserts carry the whole entity (no field-level patches): entities are small and a whole value
//! is idempotent, so re-applying an upsert is harmless. Keys: people, vehicles, stands, penalties
//! and fines by `id`, permits by `number`, transfers by (permit, date, from, to) since they have
//! no id of their own. The law's parameters (`Registry::parameters`: rules configuration,
//! holiday calendar, IPCA series) are one more entity, without a key: `UpsertLawParameters`
//! carries the whole value, `DeleteLawParameters` returns to the compiled-in defaults.
//!
//! [`diff`] computes the batch between two registries and [`apply`] applies one in memory; the
//! server will use the first to publish, and tests use both to check the store against the
//! in-memory model.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rules::LawParameters;

use crate::domain::{
    DomainError, Fine, Penalty, Permit, PermitNumber, Person, PersonId, Registry, Stand, StandId,
    Transfer, Vehicle, VehicleId,
};

/// A full snapshot is the registry itself: it carries its `version` and `generated_at`.
pub type RegistrySnapshot = Registry;

/// The changes that turn the registry at `from_version` into the one at `to_version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistryChanges {
    /// The version this batch applies to; the device must be exactly there.
    pub from_version: u64,
    /// The version the device is at after applying it (≥ `from_version`; equal means "nothing
    /// changed", which still tells the device its replica is current).
    pub to_version: u64,
    /// When the office produced `to_version` (UTC).
    pub generated_at: Option<DateTime<Utc>>,
    /// Applied in order.
    #[serde(default)]
    pub changes: Vec<RegistryChange>,
}

/// Identity of a transfer, which has no id of its own.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferKey {
    pub permit_number: PermitNumber,
    pub on: NaiveDate,
    pub from_person_id: PersonId,
    pub to_person_id: PersonId,
}

impl TransferKey {
    /// The key of a transfer.
    pub fn of(t: &Transfer) -> Self {
        Self {
            permit_number: t.permit_number.clone(),
            on: t.on,
            from_person_id: t.from_person_id.clone(),
            to_person_id: t.to_person_id.clone(),
        }
    }
}

/// One change: an upsert (insert or replace, the whole entity) or a delete (by key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RegistryChange {
    UpsertPerson {
        person: Person,
    },
    DeletePerson {
        id: PersonId,
    },
    UpsertVehicle {
        vehicle: Vehicle,
    },
    DeleteVehicle {
        id: VehicleId,
    },
    UpsertStand {
        stand: Stand,
    },
    DeleteStand {
        id: StandId,
    },
    UpsertPermit {
        permit: Permit,
    },
    DeletePermit {
        number: PermitNumber,
    },
    UpsertPenalty {
        penalty: Penalty,
    },
    DeletePenalty {
        id: String,
    },
    UpsertFine {
        fine: Fine,
    },
    DeleteFine {
        id: String,
    },
    UpsertTransfer {
        transfer: Transfer,
    },
    DeleteTransfer {
        key: TransferKey,
    },
    /// The law's parameters in force from this version on (the whole value).
    UpsertLawParameters {
        parameters: LawParameters,
    },
    /// Back to the compiled-in defaults (a registry whose parameters were never set).
    DeleteLawParameters,
}

/// Why a batch cannot even be considered (its shape, before any replica is involved).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    #[error("lote de alterações inválido: versão final {to} anterior à inicial {from}")]
    Backwards { from: u64, to: u64 },
    #[error(
        "lote de alterações inválido: {count} alteração(ões) sem mudança de versão ({version})"
    )]
    ChangesWithoutNewVersion { version: u64, count: usize },
    #[error(
        "lote de alterações fora de ordem: começa na versão {from}, mas o cadastro está na versão {current}"
    )]
    OutOfOrder { current: u64, from: u64 },
    #[error("lote de alterações inválido: {0}")]
    Parse(String),
}

impl RegistryChanges {
    /// Parses a batch and checks its shape.
    pub fn from_json(text: &str) -> Result<Self, FeedError> {
        let c: Self = serde_json::from_str(text).map_err(|e| FeedError::Parse(e.to_string()))?;
        c.check_shape()?;
        Ok(c)
    }

    /// Versions go forward, and a batch that changes something moves the version.
    pub fn check_shape(&self) -> Result<(), FeedError> {
        if self.to_version < self.from_version {
            return Err(FeedError::Backwards {
                from: self.from_version,
                to: self.to_version,
            });
        }
        if self.to_version == self.from_version && !self.changes.is_empty() {
            return Err(FeedError::ChangesWithoutNewVersion {
                version: self.from_version,
                count: self.changes.len(),
            });
        }
        Ok(())
    }
}

/// The batch that turns `old` into `new`: upserts for what is new or different, deletes for
/// what is gone. Upserts come in dependency order (people before the permits that name them)
/// and deletes after them; the store checks references only at commit, so order is a courtesy
/// to readers, not a requirement.
pub fn diff(old: &Registry, new: &Registry) -> RegistryChanges {
    fn keyed<T: Clone, K: Ord>(items: &[T], key: impl Fn(&T) -> K) -> BTreeMap<K, T> {
        items.iter().map(|i| (key(i), i.clone())).collect()
    }
    fn one_kind<T: Clone + PartialEq, K: Ord + Clone>(
        old: &[T],
        new: &[T],
        key: impl Fn(&T) -> K + Copy,
        upsert: impl Fn(T) -> RegistryChange,
        delete: impl Fn(K) -> RegistryChange,
        upserts: &mut Vec<RegistryChange>,
        deletes: &mut Vec<RegistryChange>,
    ) {
        let o = keyed(old, key);
        let n = keyed(new, key);
        for (k, v) in &n {
            if o.get(k) != Some(v) {
                upserts.push(upsert(v.clone()));
            }
        }
        for k in o.keys() {
            if !n.contains_key(k) {
                deletes.push(delete(k.clone()));
            }
        }
    }
    let mut up = Vec::new();
    let mut del = Vec::new();
    one_kind(
        &old.people,
        &new.people,
        |p: &Person| p.id.clone(),
        |person| RegistryChange::UpsertPerson { person },
        |id| RegistryChange::DeletePerson { id },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.vehicles,
        &new.vehicles,
        |v: &Vehicle| v.id.clone(),
        |vehicle| RegistryChange::UpsertVehicle { vehicle },
        |id| RegistryChange::DeleteVehicle { id },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.stands,
        &new.stands,
        |s: &Stand| s.id.clone(),
        |stand| RegistryChange::UpsertStand { stand },
        |id| RegistryChange::DeleteStand { id },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.permits,
        &new.permits,
        |p: &Permit| p.number.clone(),
        |permit| RegistryChange::UpsertPermit { permit },
        |number| RegistryChange::DeletePermit { number },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.penalties,
        &new.penalties,
        |p: &Penalty| p.id.clone(),
        |penalty| RegistryChange::UpsertPenalty { penalty },
        |id| RegistryChange::DeletePenalty { id },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.fines,
        &new.fines,
        |f: &Fine| f.id.clone(),
        |fine| RegistryChange::UpsertFine { fine },
        |id| RegistryChange::DeleteFine { id },
        &mut up,
        &mut del,
    );
    one_kind(
        &old.transfers,
        &new.transfers,
        TransferKey::of,
        |transfer| RegistryChange::UpsertTransfer { transfer },
        |key| RegistryChange::DeleteTransfer { key },
        &mut up,
        &mut del,
    );
    // Dependents are deleted before what they point to (penalties before permits, permits
    // before people), the reverse of the upsert order.
    del.reverse();
    up.extend(del);
    if old.parameters != new.parameters {
        up.push(match &new.parameters {
            Some(parameters) => RegistryChange::UpsertLawParameters {
                parameters: parameters.clone(),
            },
            None => RegistryChange::DeleteLawParameters,
        });
    }
    RegistryChanges {
        from_version: old.version,
        to_version: new.version,
        generated_at: new.generated_at,
        changes: up,
    }
}

/// Applies a batch to an in-memory registry (the model the device store must agree with).
/// Refuses a batch that does not start at the registry's version; integrity is checked by the
/// caller with `Registry::validate`, as the store does at commit.
pub fn apply(registry: &mut Registry, changes: &RegistryChanges) -> Result<(), FeedError> {
    changes.check_shape()?;
    if changes.from_version != registry.version {
        return Err(FeedError::OutOfOrder {
            current: registry.version,
            from: changes.from_version,
        });
    }
    fn put<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T) -> bool) {
        match list.iter_mut().find(|x| same(x)) {
            Some(slot) => *slot = item,
            None => list.push(item),
        }
    }
    for c in &changes.changes {
        match c {
            RegistryChange::UpsertPerson { person } => {
                put(&mut registry.people, person.clone(), |x| x.id == person.id);
            }
            RegistryChange::DeletePerson { id } => registry.people.retain(|x| &x.id != id),
            RegistryChange::UpsertVehicle { vehicle } => {
                put(&mut registry.vehicles, vehicle.clone(), |x| {
                    x.id == vehicle.id
                });
            }
            RegistryChange::DeleteVehicle { id } => registry.vehicles.retain(|x| &x.id != id),
            RegistryChange::UpsertStand { stand } => {
                put(&mut registry.stands, stand.clone(), |x| x.id == stand.id);
            }
            RegistryChange::DeleteStand { id } => registry.stands.retain(|x| &x.id != id),
            RegistryChange::UpsertPermit { permit } => {
                put(&mut registry.permits, permit.clone(), |x| {
                    x.number == permit.number
                });
            }
            RegistryChange::DeletePermit { number } => {
                registry.permits.retain(|x| &x.number != number);
            }
            RegistryChange::UpsertPenalty { penalty } => {
                put(&mut registry.penalties, penalty.clone(), |x| {
                    x.id == penalty.id
                });
            }
            RegistryChange::DeletePenalty { id } => registry.penalties.retain(|x| &x.id != id),
            RegistryChange::UpsertFine { fine } => {
                put(&mut registry.fines, fine.clone(), |x| x.id == fine.id);
            }
            RegistryChange::DeleteFine { id } => registry.fines.retain(|x| &x.id != id),
            RegistryChange::UpsertTransfer { transfer } => {
                let key = TransferKey::of(transfer);
                put(&mut registry.transfers, transfer.clone(), |x| {
                    TransferKey::of(x) == key
                });
            }
            RegistryChange::DeleteTransfer { key } => {
                registry.transfers.retain(|x| &TransferKey::of(x) != key);
            }
            RegistryChange::UpsertLawParameters { parameters } => {
                registry.parameters = Some(parameters.clone());
            }
            RegistryChange::DeleteLawParameters => registry.parameters = None,
        }
    }
    registry.version = changes.to_version;
    registry.generated_at = changes.generated_at.or(registry.generated_at);
    Ok(())
}

/// Sorts every list of a registry by its key, so that two registries holding the same facts
/// compare equal whatever order they were built in (the store exports in this order).
pub fn sorted(mut r: Registry) -> Registry {
    r.people.sort_by(|a, b| a.id.cmp(&b.id));
    r.vehicles.sort_by(|a, b| a.id.cmp(&b.id));
    r.stands.sort_by(|a, b| a.id.cmp(&b.id));
    r.permits.sort_by(|a, b| a.number.cmp(&b.number));
    r.penalties.sort_by(|a, b| a.id.cmp(&b.id));
    r.fines.sort_by(|a, b| a.id.cmp(&b.id));
    r.transfers.sort_by_key(TransferKey::of);
    r
}

/// Parse error of a snapshot, as a domain error (the snapshot is validated like a fixture).
pub fn snapshot_from_json(text: &str) -> Result<RegistrySnapshot, DomainError> {
    Registry::from_json(text)
}

/// [`snapshot_from_json`] from a stream, never holding the text whole.
pub fn snapshot_from_reader(input: impl std::io::Read) -> Result<RegistrySnapshot, DomainError> {
    Registry::from_json_reader(input)
}
