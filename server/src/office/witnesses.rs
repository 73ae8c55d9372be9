//! The observed persons of a record (witnesses, drivers the registry does not know), as a
//! service: the author's device sends them ([`put`]), the office reads them ([`read`]) and,
//! once the case is over, erases them ([`erase`]); the case file lists them
//! ([`contact_lines`]). Their identity and contact are kept apart from the record's Automerge
//! history (`store::observed`), and nobody else reads them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::records::{PersonRef, RecordView, Status};
use sync_core::sync::{ObservedPersonsUpload, check_upload, device_uuid};

use super::{OFFICE_DECIDERS as RECORD_DECIDERS, OFFICE_READERS as RECORD_READERS};
use crate::auth::{Auth, Role};
use crate::service::{ServiceError, Services};
use crate::store::observed::{Erasure, ObservedPersons, PutObserved, StoredPerson};
use crate::store::records::view_of;

/// Who sends observed persons: the authors of records.
pub const OBSERVED_UPLOADERS: &[Role] = &[Role::Officer, Role::Coordinator];

/// Statuses in which a record's case has ended and its witnesses may be erased: annulled,
/// archived, or merged into another record (whose own witnesses stay). A decided penalty may
/// still be appealed or taken to court, where the witnesses are needed; the office archives
/// the record when the case is over.
pub const FINISHED: &[Status] = &[
    Status::Annulled,
    Status::Archived,
    Status::MergedAsDuplicate,
];

/// The answer to an upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ObservedPersonsReceipt {
    pub record_id: String,
    /// Persons stored for the record.
    pub persons: u64,
    /// False when the server already held this very set.
    pub changed: bool,
}

async fn record_view(svc: &Services, id: &str) -> Result<RecordView, ServiceError> {
    let doc = svc
        .store()
        .record(id.to_owned())
        .await?
        .ok_or_else(|| ServiceError::not_found("Registro não encontrado."))?;
    view_of(&doc).map_err(|e| ServiceError::internal(&e))
}

/// The record's author, on the device that wrote it.
fn require_author(auth: &Auth, view: &RecordView) -> Result<(), ServiceError> {
    auth.require(OBSERVED_UPLOADERS)?;
    if view.author.user_id != auth.user_id || view.author.device_id != device_uuid(&auth.device_id)
    {
        return Err(ServiceError::forbidden(
            "Só o autor do registro, no aparelho em que o escreveu, envia as testemunhas dele.",
        ));
    }
    Ok(())
}

/// What the person is in the record, in Portuguese.
pub fn role_of(view: &RecordView, person_id: &str) -> String {
    let is = |p: &PersonRef| matches!(p, PersonRef::Observed(id) if id == person_id);
    let mut roles = Vec::new();
    if is(&view.driver.person) {
        roles.push("condutor (fora do cadastro)");
    }
    if view.witnesses.iter().any(|w| is(&w.person)) {
        roles.push("testemunha");
    }
    if view.charged.iter().any(is) && !is(&view.driver.person) {
        roles.push("responde pelo registro");
    }
    if roles.is_empty() {
        roles.push("pessoa do registro");
    }
    roles.join(", ")
}

pub fn documents(p: &StoredPerson) -> String {
    let mut out = Vec::new();
    if let Some(c) = &p.cpf {
        out.push(format!("CPF {c}"));
    }
    if let Some(c) = &p.cnh {
        out.push(format!("CNH {c}"));
    }
    if let Some(d) = &p.document {
        out.push(format!("documento {d}"));
    }
    if out.is_empty() {
        String::from("—")
    } else {
        out.join("; ")
    }
}

/// One line per person for the case file: name, role, documents, phone, address; or the
/// erasure, when it happened.
pub fn contact_lines(view: &RecordView, held: &ObservedPersons) -> Vec<String> {
    if let Some(e) = &held.erasure {
        return vec![format!(
            "Dados pessoais das testemunhas apagados em {}, quando o caso terminou.",
            crate::office::local(e.erased_at)
        )];
    }
    held.persons
        .iter()
        .map(|p| {
            let mut line = format!(
                "{} — {} — {}",
                p.name.as_deref().unwrap_or("(sem nome)"),
                role_of(view, &p.person_id),
                documents(p)
            );
            if let Some(t) = &p.phone {
                line.push_str(&format!("; telefone {t}"));
            }
            if let Some(a) = &p.address {
                line.push_str(&format!("; endereço {a}"));
            }
            line
        })
        .collect()
}

/// What the server holds of a record's observed persons (office and admins).
pub async fn read(svc: &Services, auth: &Auth, id: &str) -> Result<ObservedPersons, ServiceError> {
    auth.require(RECORD_READERS)?;
    record_view(svc, id).await?;
    Ok(svc.store().observed_persons(id.to_owned()).await?)
}

/// Erases a finished record's observed persons (office). Idempotent.
pub async fn erase(svc: &Services, auth: &Auth, id: &str) -> Result<Erasure, ServiceError> {
    auth.require(RECORD_DECIDERS)?;
    let view = record_view(svc, id).await?;
    if !FINISHED.contains(&view.status) {
        return Err(ServiceError::conflict(
            "record_not_finished",
            format!(
                "Os dados das testemunhas só podem ser apagados quando o registro está anulado, \
                 arquivado ou juntado a outro; este está «{}».",
                view.status.label_pt()
            ),
        ));
    }
    let now = svc.clock().now();
    Ok(svc
        .store()
        .erase_observed_persons(id.to_owned(), auth.actor(now))
        .await?)
}

/// The author's device sends the record's observed persons (the whole set): checked against
/// the stored record, then stored; the same set again stores nothing new.
pub async fn put(
    svc: &Services,
    auth: &Auth,
    id: &str,
    upload: ObservedPersonsUpload,
) -> Result<ObservedPersonsReceipt, ServiceError> {
    auth.require(OBSERVED_UPLOADERS)?;
    let view = record_view(svc, id).await?;
    require_author(auth, &view)?;
    let persons = check_upload(&view, upload)
        .map_err(|e| ServiceError::unprocessable("invalid_observed_persons", e.0))?;
    let now = svc.clock().now();
    match svc
        .store()
        .put_observed_persons(id.to_owned(), persons, auth.actor(now))
        .await?
    {
        PutObserved::Stored { persons, changed } => Ok(ObservedPersonsReceipt {
            record_id: id.to_owned(),
            persons,
            changed,
        }),
        PutObserved::Erased(e) => Err(ServiceError::conflict(
            "observed_persons_erased",
            format!(
                "A Unidade de Transportes apagou as testemunhas deste registro em {}; elas não \
                 são mais recebidas.",
                crate::office::local(e.erased_at)
            ),
        )),
    }
}
