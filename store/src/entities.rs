//! How the registry is stored by every backend: one row per entity, keyed by kind and key, its
//! body the entity's JSON ([`entity_of`]); the law parameters are one row of their own.

use sync_core::feed::{RegistryChange, TransferKey};

/// Kind of the row holding the registry's law parameters (`Registry::parameters`).
pub const LAW_PARAMETERS: &str = "law_parameters";
/// Its only key.
pub const LAW_PARAMETERS_KEY: &str = "current";

/// `(kind, key, body)`: body `None` for a delete.
pub fn entity_of(
    c: &RegistryChange,
) -> Result<(&'static str, String, Option<String>), serde_json::Error> {
    use RegistryChange as C;
    Ok(match c {
        C::UpsertPerson { person } => (
            "person",
            person.id.clone(),
            Some(serde_json::to_string(person)?),
        ),
        C::DeletePerson { id } => ("person", id.clone(), None),
        C::UpsertVehicle { vehicle } => (
            "vehicle",
            vehicle.id.clone(),
            Some(serde_json::to_string(vehicle)?),
        ),
        C::DeleteVehicle { id } => ("vehicle", id.clone(), None),
        C::UpsertStand { stand } => (
            "stand",
            stand.id.clone(),
            Some(serde_json::to_string(stand)?),
        ),
        C::DeleteStand { id } => ("stand", id.clone(), None),
        C::UpsertPermit { permit } => (
            "permit",
            permit.number.clone(),
            Some(serde_json::to_string(permit)?),
        ),
        C::DeletePermit { number } => ("permit", number.clone(), None),
        C::UpsertPenalty { penalty } => (
            "penalty",
            penalty.id.clone(),
            Some(serde_json::to_string(penalty)?),
        ),
        C::DeletePenalty { id } => ("penalty", id.clone(), None),
        C::UpsertFine { fine } => ("fine", fine.id.clone(), Some(serde_json::to_string(fine)?)),
        C::DeleteFine { id } => ("fine", id.clone(), None),
        C::UpsertTransfer { transfer } => (
            "transfer",
            serde_json::to_string(&TransferKey::of(transfer))?,
            Some(serde_json::to_string(transfer)?),
        ),
        C::DeleteTransfer { key } => ("transfer", serde_json::to_string(key)?, None),
        // One value without a key of its own; deleted = the compiled-in defaults.
        C::UpsertLawParameters { parameters } => (
            LAW_PARAMETERS,
            String::from(LAW_PARAMETERS_KEY),
            Some(serde_json::to_string(parameters)?),
        ),
        C::DeleteLawParameters => (LAW_PARAMETERS, String::from(LAW_PARAMETERS_KEY), None),
    })
}

/// Keeps the last change of each entity, in the order of those last changes: what a device that
/// missed several versions needs, each entity once.
pub fn compact(all: Vec<RegistryChange>) -> Result<Vec<RegistryChange>, serde_json::Error> {
    let mut seen: std::collections::HashSet<(&'static str, String)> =
        std::collections::HashSet::new();
    let mut keep = Vec::with_capacity(all.len());
    for change in all.into_iter().rev() {
        let (kind, key, _) = entity_of(&change)?;
        if seen.insert((kind, key)) {
            keep.push(change);
        }
    }
    keep.reverse();
    Ok(keep)
}
