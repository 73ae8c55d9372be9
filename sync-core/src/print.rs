//! An issued record on paper, from the device alone (no network): the auto de infração or the
//! coordinator's report the officer hands over on the spot, on a thermal printer or as a PDF.
//!
//! Flow: [`auto_content`] loads the record from the device store and fills a
//! [`documents::AutoContent`] with display-ready values — names from the registry replica
//! (`Store::person`, `Store::stand`) or from the observed people the device keeps apart from
//! the document, the officer from the device identity and the client session, the legal basis
//! with the catalogue's short title (`rules::lookup`), the signature or why it is missing, the
//! officer's vehicle confirmation, and the verification code and address. [`render_record`]
//! hands that content to `documents::render_auto` for the format asked. Nothing legal is
//! decided here: what the auto states is what the sealed record holds.
//!
//! Only an issued record is printed (a draft can still change: a paper of it would state what
//! the record may no longer say). A full CPF never goes on paper: a person is shown by CNH
//! where the device knows it, else by a CPF with its first three and last two digits hidden.

use chrono::{DateTime, Utc};
/// What callers of this module name: the content, the formats, the code.
pub use documents::{AutoContent, Format, RenderError, VerificationCode};
use documents::{AutoKind, BasisLine, Party, SignatureLine, Verification, WitnessLine};

use crate::domain::DriverRole;
use crate::field::{self, FieldError};
use crate::records::{
    EventKind, Gravity, PersonRef, RecordError, RecordKind, RecordView, Signature,
};
use crate::rules;
use crate::store::{Store, StoreError};

/// Why a record could not be printed. Officers read these: Portuguese.
#[derive(Debug, thiserror::Error)]
pub enum PrintError {
    #[error("o registro ainda é um rascunho: emita-o antes de imprimir")]
    NotIssued,
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Render(#[from] documents::RenderError),
}

/// The record `id` of `store`, rendered in `format` as printed at `printed_at`.
pub fn render_record(
    store: &Store,
    id: &str,
    format: Format,
    printed_at: DateTime<Utc>,
) -> Result<Vec<u8>, PrintError> {
    let content = auto_content(store, id, printed_at)?;
    Ok(documents::render_auto(&content, format)?)
}

/// The verification code printed on a record: derived from the record's seal (the device's
/// signature over its sealed evidence), so the server can find the record from it.
/// `None` for a record issued without a device key (an app from before keys): the paper then
/// says it carries no code.
pub fn verification_code_of(view: &RecordView) -> Option<VerificationCode> {
    view.seal.as_ref()?.verification_code().ok()
}

/// What the issued record `id` of `store` states on paper.
pub fn auto_content(
    store: &Store,
    id: &str,
    printed_at: DateTime<Utc>,
) -> Result<AutoContent, PrintError> {
    let view = field::load(store, id)?.view()?;
    if !view.sealed {
        return Err(PrintError::NotIssued);
    }
    let place = match &view.stand_id {
        Some(s) => Some(match store.stand(s)? {
            Some(stand) if stand.address.starts_with(&stand.name) => {
                format!("Ponto {}", stand.address)
            }
            Some(stand) => format!("Ponto {}, {}", stand.name, stand.address),
            None => format!("Ponto {s}"),
        }),
        None => None,
    };
    let base_url = store.client_session()?.map(|s| s.server_url);
    let verification = match (verification_code_of(&view), base_url) {
        (Some(code), Some(base_url)) => Some(Verification { code, base_url }),
        _ => None,
    };
    let paper = Paper {
        officer_name: officer_name(store, &view)?,
        officer_document: Some(format!("usuário {}", view.author.user_id)),
        place,
        verification,
        printed_at,
    };
    content_of(&view, &StoreNames { store }, paper)
}

/// Who the people a record names are, wherever their names live: the device's replica and the
/// observed people it keeps apart from the document, or the server's registry.
pub trait PartyNames {
    /// The person's name; `None` when unknown (or erased).
    fn name_of(&self, person: &PersonRef) -> Result<Option<String>, PrintError>;
    /// A document to print beside the name (never a full CPF); `None` for none.
    fn document_of(&self, person: &PersonRef) -> Result<Option<String>, PrintError>;
}

/// What a paper needs besides the record and the names: who the officer is as printed, the
/// place in words, the verification code and address, and when it is printed.
#[derive(Debug, Clone)]
pub struct Paper {
    pub officer_name: String,
    pub officer_document: Option<String>,
    pub place: Option<String>,
    pub verification: Option<Verification>,
    pub printed_at: DateTime<Utc>,
}

/// The auto as the sealed record `view` states it: the one mapping from a record to its paper,
/// used by the device (`auto_content`) and by the server's case file.
pub fn content_of(
    view: &RecordView,
    names: &dyn PartyNames,
    paper: Paper,
) -> Result<AutoContent, PrintError> {
    let Paper {
        officer_name,
        officer_document,
        place,
        verification,
        printed_at,
    } = paper;
    let driver = Party {
        name: names
            .name_of(&view.driver.person)?
            .unwrap_or_else(|| String::from("condutor não identificado")),
        role: driver_role_pt(view.driver.role).to_owned(),
        document: names.document_of(&view.driver.person)?,
    };
    let holder = match &view.holder_id {
        // The holder answers too whenever someone else drove (art. 32 § 2): charged beside the
        // driver.
        Some(h)
            if view.driver.person != PersonRef::Registry(h.clone())
                && view.charged.contains(&PersonRef::Registry(h.clone())) =>
        {
            let p = PersonRef::Registry(h.clone());
            Some(Party {
                name: names
                    .name_of(&p)?
                    .unwrap_or_else(|| String::from("titular do alvará")),
                // The layout explains, under the holder, why they answer (art. 32 § 2).
                role: String::from("titular do alvará"),
                document: names.document_of(&p)?,
            })
        }
        _ => None,
    };
    let mut witnesses = Vec::with_capacity(view.witnesses.len());
    for w in &view.witnesses {
        witnesses.push(WitnessLine {
            party: Party {
                name: names
                    .name_of(&w.person)?
                    .unwrap_or_else(|| String::from("testemunha não identificada")),
                role: String::from("testemunha"),
                document: names.document_of(&w.person)?,
            },
            statement: w.statement.clone(),
        });
    }
    Ok(AutoContent {
        kind: match view.kind {
            RecordKind::Infraction => AutoKind::Infraction,
            RecordKind::Transgression => AutoKind::Transgression,
        },
        number: view.number.clone(),
        issuing_body: view.issuing_body.clone(),
        occurred_at: view.occurred_at,
        issued_at: view
            .events
            .iter()
            .find(|e| matches!(e.event, EventKind::Issued))
            .map(|e| e.at),
        place,
        position: view.position.map(|p| (p.lat, p.lon, Some(p.accuracy_m))),
        plate: view.vehicle.as_ref().map(|v| v.plate.clone()),
        vehicle_confirmed: view
            .vehicle_confirmation
            .as_ref()
            .filter(|_| view.vehicle_confirmed())
            .map(|c| {
                let who = if c.user_id == view.author.user_id {
                    officer_name.clone()
                } else {
                    c.user_id.clone()
                };
                (who, c.at)
            }),
        permit_number: view.permit_number.clone(),
        driver,
        holder,
        officer: Party {
            name: officer_name,
            role: view.author.role.label_pt().to_owned(),
            document: officer_document,
        },
        gravity: view.gravity.map(|g| {
            match g {
                Gravity::Light => "leve",
                Gravity::Serious => "grave",
            }
            .to_owned()
        }),
        legal_basis: view
            .legal_basis
            .iter()
            .map(|b| BasisLine {
                citation: b.citation.clone(),
                description: rules::lookup(&b.rule_id)
                    .map(|r| r.title.to_owned())
                    .unwrap_or_default(),
            })
            .collect(),
        facts: view.facts.clone(),
        witnesses,
        signature: match &view.signature {
            Some(Signature::Signed { sha256 }) => SignatureLine::Signed {
                sha256: sha256.clone(),
            },
            Some(Signature::Missing { reason }) => SignatureLine::Missing {
                reason: reason.clone(),
            },
            None => SignatureLine::Missing {
                reason: String::from("assinatura não registrada"),
            },
        },
        verification,
        printed_at,
    })
}

/// The author as printed: their username when they are the one signed in on this device (the
/// client session knows it), else the user id the record holds.
fn officer_name(store: &Store, view: &RecordView) -> Result<String, PrintError> {
    Ok(store
        .client_session()?
        .filter(|s| s.user_id == view.author.user_id && !s.username.trim().is_empty())
        .map_or_else(|| view.author.user_id.clone(), |s| s.username))
}

/// The driver's relation to the permit, as printed (art. 8).
pub fn driver_role_pt(role: DriverRole) -> &'static str {
    match role {
        DriverRole::Holder => "condutor, titular do alvará",
        DriverRole::Auxiliary => "condutor, motorista auxiliar do alvará",
        DriverRole::IllnessSubstitute => "condutor, substituto do titular doente",
        DriverRole::AuxiliaryOfAnotherPermit => "condutor, motorista auxiliar de outro alvará",
        DriverRole::HolderOfAnotherPermit => "condutor, titular de outro alvará",
        DriverRole::Unauthorised => "condutor sem autorização para este alvará",
    }
}

/// Names and documents of the people a record names: registry people from the replica,
/// observed people from the store (an erased one has none).
struct StoreNames<'s> {
    store: &'s Store,
}

impl PartyNames for StoreNames<'_> {
    fn name_of(&self, p: &PersonRef) -> Result<Option<String>, PrintError> {
        Ok(match p {
            PersonRef::Registry(id) => self.store.person(id)?.map(|p| p.name),
            PersonRef::Observed(id) => self
                .store
                .observed_person(id)?
                .and_then(|p| p.name)
                .filter(|n| !n.trim().is_empty()),
        })
    }

    fn document_of(&self, p: &PersonRef) -> Result<Option<String>, PrintError> {
        Ok(match p {
            PersonRef::Registry(id) => self
                .store
                .person(id)?
                .map(|p| format!("CNH {}", p.licence.number.as_str())),
            PersonRef::Observed(id) => {
                self.store
                    .observed_person(id)?
                    .and_then(|p| match (p.cnh, p.cpf) {
                        (Some(cnh), _) if !cnh.trim().is_empty() => {
                            Some(format!("CNH {}", cnh.trim()))
                        }
                        (_, Some(cpf)) => masked_cpf(&cpf).map(|m| format!("CPF {m}")),
                        _ => p
                            .details
                            .get("documento_informado")
                            .and_then(|d| d.as_str())
                            .and_then(masked_cpf)
                            .map(|m| format!("CPF ou CNH {m}")),
                    })
            }
        })
    }
}

/// A CPF as an auto may show it: `***.456.789-**` (the middle six digits, as public notices
/// print it). `None` unless it has exactly eleven digits.
pub fn masked_cpf(cpf: &str) -> Option<String> {
    let digits: Vec<char> = cpf.chars().filter(char::is_ascii_digit).collect();
    if digits.len() != 11 {
        return None;
    }
    let mid: String = digits[3..9].iter().collect();
    Some(format!("***.{}.{}-**", &mid[..3], &mid[3..]))
}
