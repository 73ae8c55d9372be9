//! Identity and contact of the observed persons of a record (a witness, a driver the registry
//! does not know), as the device sends them to the server: apart from the Automerge history,
//! in `PUT /v1/records/{id}/observed-persons`, so the office can summon a witness and the data
//! can be erased when the case ends without rewriting the record.
//!
//! The record names these people only as `PersonRef::Observed(id)`; the device store keeps
//! their data under that id (`observed_people`). An upload is the whole set of one record (it
//! replaces what the server held), so sending it again is harmless. [`check_upload`] is the
//! one validation, run by the device before it sends and by the server before it stores: only
//! ids the record references, each once, within the limits of [`crate::limits`].

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::limits::{
    MAX_OBSERVED_PERSONS, MAX_PERSON_ADDRESS_CHARS, MAX_PERSON_DOCUMENT_CHARS,
    MAX_PERSON_NAME_CHARS, MAX_PERSON_PHONE_CHARS,
};
use crate::records::ObservedPerson;
use crate::records::{PersonRef, RecordView};

/// One observed person: the id the record names and what the device store keeps of them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedIdentity {
    /// The id of `observed:<id>` in the record.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpf: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnh: Option<String>,
    /// A document typed without saying which (e.g. eleven digits valid as CPF and as CNH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// `PUT /v1/records/{id}/observed-persons`: every observed person of the record the device
/// still holds data of (an empty list: the device erased them all).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedPersonsUpload {
    pub persons: Vec<ObservedIdentity>,
}

/// Why an upload is refused, in Portuguese (one sentence, no internal names).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UploadRefused(pub String);

/// Keys of `ObservedPerson::details` the device fills (the app's form) and the upload carries.
pub const DETAIL_PHONE: &str = "telefone";
pub const DETAIL_ADDRESS: &str = "endereco";
pub const DETAIL_DOCUMENT: &str = "documento_informado";

impl ObservedIdentity {
    /// What the device store keeps of person `id`. `None` when nothing is left (erased).
    pub fn from_store(id: &str, p: &ObservedPerson) -> Option<Self> {
        let detail = |k: &str| {
            p.details
                .get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        let out = Self {
            id: id.to_owned(),
            name: p.name.clone(),
            cpf: p.cpf.clone(),
            cnh: p.cnh.clone(),
            document: detail(DETAIL_DOCUMENT),
            phone: detail(DETAIL_PHONE),
            address: detail(DETAIL_ADDRESS),
        };
        let out = normalised(out);
        (!out.is_empty()).then_some(out)
    }

    /// No field but the id.
    pub fn is_empty(&self) -> bool {
        self.fields().iter().all(|(_, v, _)| v.is_none())
    }

    /// (label in Portuguese, value, limit) of each field.
    fn fields(&self) -> [(&'static str, &Option<String>, usize); 6] {
        [
            ("o nome", &self.name, MAX_PERSON_NAME_CHARS),
            ("o CPF", &self.cpf, MAX_PERSON_DOCUMENT_CHARS),
            ("a CNH", &self.cnh, MAX_PERSON_DOCUMENT_CHARS),
            ("o documento", &self.document, MAX_PERSON_DOCUMENT_CHARS),
            ("o telefone", &self.phone, MAX_PERSON_PHONE_CHARS),
            ("o endereço", &self.address, MAX_PERSON_ADDRESS_CHARS),
        ]
    }
}

/// Trimmed, with empty texts as absent.
fn normalised(mut p: ObservedIdentity) -> ObservedIdentity {
    for f in [
        &mut p.name,
        &mut p.cpf,
        &mut p.cnh,
        &mut p.document,
        &mut p.phone,
        &mut p.address,
    ] {
        *f = f
            .take()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
    }
    p.id = p.id.trim().to_owned();
    p
}

/// The observed ids a record names (driver, witnesses, people charged), each once, in order.
pub fn observed_ids(view: &RecordView) -> Vec<String> {
    let mut seen = BTreeSet::new();
    std::iter::once(&view.driver.person)
        .chain(view.witnesses.iter().map(|w| &w.person))
        .chain(view.charged.iter())
        .filter_map(|p| match p {
            PersonRef::Observed(id) => Some(id.clone()),
            PersonRef::Registry(_) => None,
        })
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

/// Checks an upload against the record it is for, and returns it normalised (trimmed, empty
/// texts absent, people with nothing left dropped). Refused: more people than
/// [`MAX_OBSERVED_PERSONS`], an id the record does not name or named twice, a text over its
/// limit or with control characters.
pub fn check_upload(
    view: &RecordView,
    upload: ObservedPersonsUpload,
) -> Result<Vec<ObservedIdentity>, UploadRefused> {
    if upload.persons.len() > MAX_OBSERVED_PERSONS {
        return Err(UploadRefused(format!(
            "Um registro nomeia no máximo {MAX_OBSERVED_PERSONS} pessoas; foram enviadas {}.",
            upload.persons.len()
        )));
    }
    let named = observed_ids(view);
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(upload.persons.len());
    for (i, p) in upload.persons.into_iter().enumerate() {
        let p = normalised(p);
        let which = i + 1;
        if !named.contains(&p.id) {
            return Err(UploadRefused(format!(
                "A pessoa {which} da lista não é testemunha nem condutor deste registro."
            )));
        }
        if !seen.insert(p.id.clone()) {
            return Err(UploadRefused(format!(
                "A pessoa {which} da lista aparece mais de uma vez."
            )));
        }
        for (label, value, limit) in p.fields() {
            let Some(v) = value else { continue };
            if v.chars().count() > limit {
                return Err(UploadRefused(format!(
                    "Na pessoa {which} da lista, {label} passa de {limit} caracteres."
                )));
            }
            if v.chars().any(char::is_control) {
                return Err(UploadRefused(format!(
                    "Na pessoa {which} da lista, {label} tem caracteres de controle."
                )));
            }
        }
        if !p.is_empty() {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::limits::{
        MAX_PERSON_ADDRESS_CHARS, MAX_PERSON_DOCUMENT_CHARS, MAX_PERSON_PHONE_CHARS,
    };

    /// A record view naming `observed:w1` as witness (built from a real document).
    fn view() -> RecordView {
        use crate::domain::{DriverRole, Plate};
        use crate::records::{Agent, InfractionDraft, RecordDoc, UserRole, WitnessInput};
        let agent = Agent::new("U1", UserRole::GuardaMunicipal, uuid::Uuid::from_u128(7));
        let draft = InfractionDraft {
            id: uuid::Uuid::now_v7(),
            number: None,
            issuing_body: "Guarda Municipal de Americana".into(),
            occurred_at: chrono::Utc::now(),
            monotonic: 1,
            position: None,
            stand_id: None,
            plate: Plate::parse("ABC1D23").unwrap(),
            driver: PersonRef::Registry("P01".into()),
            driver_role: DriverRole::Holder,
            permit_number: None,
            holder_id: None,
            facts: "Fatos.".into(),
            legal_basis: Vec::new(),
            verdict: None,
            witnesses: vec![WitnessInput {
                person: PersonRef::Observed("w1".into()),
                statement: "Vi.".into(),
            }],
            photos: Vec::new(),
        };
        RecordDoc::new_infraction(draft, &agent)
            .unwrap()
            .view()
            .unwrap()
    }

    fn one(p: ObservedIdentity) -> ObservedPersonsUpload {
        ObservedPersonsUpload { persons: vec![p] }
    }

    fn w1() -> ObservedIdentity {
        ObservedIdentity {
            id: "w1".into(),
            name: Some("Maria".into()),
            ..Default::default()
        }
    }

    #[test]
    fn every_text_passes_at_its_limit_and_is_refused_one_over() {
        type Set = fn(&mut ObservedIdentity, String);
        let cases: [(Set, usize, &str); 4] = [
            (|p, v| p.cpf = Some(v), MAX_PERSON_DOCUMENT_CHARS, "o CPF"),
            (
                |p, v| p.document = Some(v),
                MAX_PERSON_DOCUMENT_CHARS,
                "o documento",
            ),
            (
                |p, v| p.phone = Some(v),
                MAX_PERSON_PHONE_CHARS,
                "o telefone",
            ),
            (
                |p, v| p.address = Some(v),
                MAX_PERSON_ADDRESS_CHARS,
                "o endereço",
            ),
        ];
        for (set, limit, label) in cases {
            let mut at = w1();
            set(&mut at, "ç".repeat(limit));
            assert_eq!(check_upload(&view(), one(at)).unwrap().len(), 1, "{label}");
            let mut over = w1();
            set(&mut over, "ç".repeat(limit + 1));
            let e = check_upload(&view(), one(over)).unwrap_err();
            assert!(e.0.contains(&format!("{label} passa de {limit}")), "{e}");
        }
    }

    #[test]
    fn texts_are_trimmed_and_a_person_with_nothing_left_is_dropped() {
        let p = ObservedIdentity {
            id: " w1 ".into(),
            name: Some("  Maria  ".into()),
            phone: Some("   ".into()),
            ..Default::default()
        };
        let out = check_upload(&view(), one(p)).unwrap();
        assert_eq!(out[0].id, "w1");
        assert_eq!(out[0].name.as_deref(), Some("Maria"));
        assert_eq!(out[0].phone, None);
        let empty = ObservedIdentity {
            id: "w1".into(),
            ..Default::default()
        };
        assert!(check_upload(&view(), one(empty)).unwrap().is_empty());
    }
}
