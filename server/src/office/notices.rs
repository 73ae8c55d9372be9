//! The papers of the procedure: the notification of penalty, the case file, and what the public
//! verification page may say about a paper.
//!
//! # Flow
//!
//! 1. **Notification** ([`generate`]): from a record whose decision is in force — the law
//!    kernel's procedure (`rules::procedure`, through `records::procedure_of`) is at a decision
//!    (of the penalty, of a reconsideration or of the appeal) or at the ciência that followed
//!    it, and the decision leaves a penalty — the office generates one notification per person
//!    charged (the driver and, for an auxiliary, the holder: art. 32 § 2), or for the one named.
//!    Each is a [`documents::NotificationContent`] with what Lei 9.784/99 art. 26 § 1 asks of an
//!    intimação: who is notified, the auto, the decision and its article, the fine's amount in
//!    force on the notification's date (art. 32 II corrected by the IPCA of the registry's law
//!    parameters), the ten days of art. 35, where to file (configuration:
//!    `Config::notice_authority`, `Config::notice_filing_place`) and the verification code.
//!    The store numbers it, writes its audit row and derives the code from both
//!    (`store::notifications`). A person and decision get one notification: asking again is a
//!    409 naming the one that exists; a later decision (a reconsideration, the appeal) needs
//!    its own.
//! 2. **Ciência** ([`check_ciencia`]): a ciência by signature or postal receipt names the
//!    notification signed or delivered, which must be one of this record's for the decision in
//!    force; a signature without one is accepted only when the auto itself was signed on the
//!    spot. A publication names none.
//! 3. **Case file** ([`case_file`]): the auto as [`documents::AutoContent`], the photos the
//!    server holds, the verdict the officer saw (one line per finding), the events in
//!    Portuguese and the notifications, for the appeal to the Prefeito (art. 33).
//! 4. **Public state** ([`public_state`]): the one sentence `/verificar` shows about a
//!    record's procedure.

use chrono::{DateTime, Utc};
use documents::{
    AmountLine, AutoContent, AutoRef, BasisLine, CaseFileContent, DecisionLine,
    NotificationContent, Party, PhotoContent, TimelineEntry, Verification,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::Registry;
use sync_core::records::{
    EventKind, EventView, NotificationMethod, PersonRef, RecordView, Signature, Status,
    procedure_of,
};
use sync_core::rules::penalty;
use sync_core::rules::procedure::{APPEAL_DAYS, Phase};

use super::{OFFICE_DECIDERS, OFFICE_READERS, bad, load_view};
use crate::auth::Auth;
use crate::service::{ServiceError, Services};
use crate::store::notifications::{NewNotification, NotificationRow, unsealed_code};
use crate::store::{Actor, StoreError, UserRow};

/// The authority a notification speaks for, when the configuration names none.
pub const DEFAULT_AUTHORITY: &str = "Prefeitura Municipal de Americana — Secretaria de \
                                     Mobilidade Urbana, Unidade de Transportes";

/// Where and how to file, when the configuration says nothing: the Unidade's own counter,
/// which is where the law's procedure runs (art. 32 § 1, arts. 33–35).
pub const DEFAULT_FILING_PLACE: &str = "No protocolo da Unidade de Transportes da Prefeitura \
     Municipal de Americana, em dias úteis, no horário de expediente, com petição assinada e \
     cópia desta notificação.";

/// `POST /v1/office/records/{id}/notifications`: for whom.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationRequest {
    /// A person charged, as the case lists them (`registry:P02`); absent: every person charged
    /// who has no notification of the decision in force yet.
    #[serde(default)]
    pub person: Option<String>,
}

/// The notifications just generated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GeneratedNotifications {
    pub notifications: Vec<NotificationRow>,
}

/// The decision a notification is for: the latest valid decision event, and what the
/// procedure says is in force.
struct InForce<'a> {
    event: &'a EventView,
    penalty: sync_core::domain::PenaltyKind,
    decided_on: chrono::NaiveDate,
}

/// Phases where a decision has been taken and not yet challenged.
fn notifiable(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::PenaltyDecided
            | Phase::Notified
            | Phase::ReconsiderationDecided
            | Phase::AppealDecided
    )
}

/// The event of the decision a notification of this record would be for now, if any.
pub fn current_decision_event(view: &RecordView) -> Option<String> {
    if matches!(view.status, Status::Annulled | Status::MergedAsDuplicate) {
        return None;
    }
    // Whatever the phase now: an appeal filed (not yet ruled on) leaves the decision in force.
    latest_decision(view).map(|e| e.id.clone())
}

/// The record's latest valid decision: of the penalty, a reconsideration or an appeal.
fn latest_decision(view: &RecordView) -> Option<&EventView> {
    view.events.iter().rev().find(|e| {
        e.valid
            && matches!(
                e.event,
                EventKind::PenaltyDecided { .. }
                    | EventKind::ReconsiderationDecided { .. }
                    | EventKind::AppealDecided { .. }
            )
    })
}

/// Whether the record has a decision in force a notification can be generated for.
pub fn can_notify(view: &RecordView) -> bool {
    decision_in_force(view).is_ok()
}

fn decision_in_force(view: &RecordView) -> Result<InForce<'_>, ServiceError> {
    if matches!(view.status, Status::Annulled | Status::MergedAsDuplicate) {
        return Err(bad(
            "nothing_to_notify",
            format!(
                "O registro está «{}»: não há penalidade a notificar.",
                view.status.label_pt()
            ),
        ));
    }
    let procedure = procedure_of(view);
    if !notifiable(procedure.phase) {
        return Err(bad(
            "nothing_to_notify",
            format!(
                "A notificação de penalidade só pode ser gerada depois da decisão da \
                 penalidade; este registro está na situação «{}».",
                view.status.label_pt()
            ),
        ));
    }
    let (Some(penalty), Some(decided_on)) = (procedure.penalty, procedure.decided_on) else {
        return Err(bad(
            "nothing_to_notify",
            "A decisão em vigor cancelou a penalidade: não há penalidade a notificar.",
        ));
    };
    let event = latest_decision(view).ok_or_else(|| {
        bad(
            "nothing_to_notify",
            "O registro não tem decisão a notificar.",
        )
    })?;
    Ok(InForce {
        event,
        penalty,
        decided_on,
    })
}

/// A clerk as the paper names them: "Maria Souza, Unidade de Transportes" (the office's
/// shared account is already called so).
fn with_office(name: &str) -> String {
    if name.contains("Unidade de Transportes") {
        name.to_owned()
    } else {
        format!("{name}, Unidade de Transportes")
    }
}

/// "Name (role)", or the name alone when it already says the role.
fn who(name: &str, role: &str) -> String {
    if name == role {
        name.to_owned()
    } else {
        format!("{name} ({role})")
    }
}

fn user_name(users: &[UserRow], id: &str) -> String {
    users
        .iter()
        .find(|u| u.id == id)
        .map_or_else(|| id.to_owned(), |u| u.display_name.clone())
}

/// A person as named on paper: the registry's name; someone the officer identified on the
/// spot but who is not in the registry is described, since their data stays on the device.
fn person_name(reg: &Registry, p: &PersonRef) -> String {
    match p {
        PersonRef::Registry(id) => reg
            .people
            .iter()
            .find(|x| &x.id == id)
            .map_or_else(|| format!("pessoa {id} do cadastro"), |x| x.name.clone()),
        PersonRef::Observed(_) => String::from("condutor identificado pelo agente no auto"),
    }
}

/// Why `p` is charged, as printed on their notification.
fn charged_role(view: &RecordView, p: &PersonRef) -> String {
    let permit = view
        .permit_number
        .as_deref()
        .map(|n| format!(" nº {n}"))
        .unwrap_or_default();
    if *p == view.driver.person {
        format!(
            "{}{permit}",
            sync_core::print::driver_role_pt(view.driver.role)
        )
    } else {
        format!("titular do alvará{permit}, que responde junto com o condutor (art. 32, § 2º)")
    }
}

fn basis_lines(view: &RecordView) -> Vec<BasisLine> {
    let basis = view.classification.as_ref().unwrap_or(&view.legal_basis);
    basis
        .iter()
        .map(|b| BasisLine {
            citation: b.citation.clone(),
            description: sync_core::rules::lookup(&b.rule_id)
                .map(|s| s.title.to_owned())
                .unwrap_or_default(),
        })
        .collect()
}

/// The verification page's base address: the first public origin.
fn base_url(svc: &Services) -> String {
    svc.public_origins()
        .first()
        .cloned()
        .unwrap_or_else(|| String::from("http://localhost"))
}

/// The notification of `view`'s decision in force to `person`, before the store numbers and
/// seals it.
fn content_for(
    svc: &Services,
    view: &RecordView,
    reg: &Registry,
    users: &[UserRow],
    decision: &InForce<'_>,
    person: &PersonRef,
    today: chrono::NaiveDate,
) -> Result<NotificationContent, ServiceError> {
    let amount = match decision.penalty {
        sync_core::domain::PenaltyKind::Fine => {
            let c = penalty::fine_amount(today, &reg.law().ipca)
                .map_err(|e| bad("fine_amount_unavailable", super::sentence(&e.to_string())))?;
            Some(AmountLine {
                amount: c.amount,
                basis: format!(
                    "R$ 240,00 de 2004 (art. 32, II) corrigidos pelo IPCA, valor em vigor em {}",
                    c.year
                ),
            })
        }
        _ => None,
    };
    Ok(NotificationContent {
        number: String::new(),
        authority: svc.config().notice_authority.clone(),
        issued_at: svc.clock().now(),
        addressee: Party {
            name: person_name(reg, person),
            role: charged_role(view, person),
            // Name and role identify the person on paper; a CPF is never printed here.
            document: None,
        },
        addressee_address: None,
        autos: vec![AutoRef {
            number: view
                .number
                .clone()
                .unwrap_or_else(|| String::from("(sem número)")),
            occurred_at: view.occurred_at,
            plate: view.vehicle.as_ref().map(|v| v.plate.clone()),
            facts: view.facts.clone(),
            legal_basis: basis_lines(view),
        }],
        decision: DecisionLine {
            penalty: penalty::penalty_label_pt(decision.penalty),
            citation: penalty::penalty_citation(decision.penalty),
            decided_on: decision.decided_on,
            decided_by: with_office(&user_name(users, &decision.event.by.user_id)),
        },
        amount,
        filing_place: svc.config().notice_filing_place.clone(),
        appeal_days: APPEAL_DAYS,
        verification: Verification {
            code: unsealed_code(),
            base_url: base_url(svc),
        },
    })
}

/// Generates the notifications of the decision in force (see the module doc).
pub async fn generate(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: NotificationRequest,
) -> Result<GeneratedNotifications, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let (doc, view) = load_view(svc, id).await?;
    let record_id = doc.row.id.clone();
    let decision = decision_in_force(&view)?;
    let wanted: Vec<&PersonRef> = match req.person.as_deref().map(str::trim) {
        None | Some("") => view.charged.iter().collect(),
        Some(p) => {
            let found = view
                .charged
                .iter()
                .find(|c| c.encode() == p)
                .ok_or_else(|| {
                    bad(
                        "not_charged",
                        format!("A pessoa «{p}» não responde por este registro."),
                    )
                })?;
            vec![found]
        }
    };
    if wanted.is_empty() {
        return Err(bad(
            "nothing_to_notify",
            "O registro não indica quem responde por ele.",
        ));
    }
    let existing = svc.store().record_notifications(record_id.clone()).await?;
    let done = |p: &PersonRef| {
        existing
            .iter()
            .find(|n| n.person == p.encode() && n.decision_event_id == decision.event.id)
    };
    let pending: Vec<&PersonRef> = wanted
        .iter()
        .copied()
        .filter(|p| done(p).is_none())
        .collect();
    if pending.is_empty() {
        let numbers: Vec<&str> = wanted
            .iter()
            .filter_map(|p| done(p).map(|n| n.number.as_str()))
            .collect();
        return Err(ServiceError::conflict(
            "notification_exists",
            format!(
                "Esta decisão já foi notificada a quem responde: {}.",
                numbers.join(", ")
            ),
        ));
    }
    let reg = svc.store().registry().await?;
    let users = svc.store().list_users().await?;
    let today = svc.clock().today();
    let mut drafts = Vec::with_capacity(pending.len());
    for p in pending {
        drafts.push(NewNotification {
            record_id: record_id.clone(),
            person: p.encode(),
            decision_event_id: decision.event.id.clone(),
            content: content_for(svc, &view, &reg, &users, &decision, p, today)?,
        });
    }
    let actor = Actor {
        user_id: Some(auth.user_id.clone()),
        device_id: Some(auth.device_id.clone()),
        at: svc.clock().now(),
    };
    let notifications = svc
        .store()
        .create_notifications(drafts, actor)
        .await
        .map_err(|e| match e {
            // Another clerk generated it at the same moment.
            StoreError::Duplicate { .. } => ServiceError::conflict(
                "notification_exists",
                "Esta decisão acabou de ser notificada por outra pessoa; recarregue o registro.",
            ),
            other => other.into(),
        })?;
    Ok(GeneratedNotifications { notifications })
}

/// The notifications of a record.
pub async fn of_record(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<Vec<NotificationRow>, ServiceError> {
    auth.require(OFFICE_READERS)?;
    Ok(svc
        .store()
        .record_notifications(id.trim().to_owned())
        .await?)
}

/// One notification.
pub async fn get(svc: &Services, auth: &Auth, id: &str) -> Result<NotificationRow, ServiceError> {
    auth.require(OFFICE_READERS)?;
    svc.store()
        .notification(id.trim().to_owned())
        .await?
        .ok_or_else(|| ServiceError::not_found("Notificação não encontrada."))
}

/// A notification as a PDF: its number (for the file name) and bytes.
pub async fn pdf(svc: &Services, auth: &Auth, id: &str) -> Result<(String, Vec<u8>), ServiceError> {
    let n = get(svc, auth, id).await?;
    let bytes =
        documents::render_notification(&n.content).map_err(|e| ServiceError::internal(&e))?;
    Ok((n.number, bytes))
}

/// Refuses a ciência by signature or postal receipt that does not name a notification of this
/// record's decision in force (an auto signed on the spot stands for a signature).
pub async fn check_ciencia(
    svc: &Services,
    view: &RecordView,
    method: NotificationMethod,
    notification: Option<&str>,
) -> Result<Option<String>, ServiceError> {
    let number = notification.map(str::trim).filter(|n| !n.is_empty());
    if method == NotificationMethod::Publication {
        return Ok(number.map(str::to_owned));
    }
    let signed_on_spot = matches!(view.signature, Some(Signature::Signed { .. }));
    let Some(number) = number else {
        if method == NotificationMethod::PersonalSignature && signed_on_spot {
            return Ok(None);
        }
        return Err(bad(
            "notification_required",
            "Para registrar a ciência por assinatura ou por aviso de recebimento, indique a \
             notificação de penalidade gerada para este registro que foi assinada ou entregue.",
        ));
    };
    let record_id = view.id.to_string();
    let mine = svc.store().record_notifications(record_id).await?;
    let Some(n) = mine.iter().find(|n| n.number == number) else {
        return Err(bad(
            "notification_required",
            format!("A notificação {number} não foi gerada para este registro."),
        ));
    };
    // Each person takes notice once: the paper they signed names them.
    let already = view.events.iter().any(|e| {
        e.valid
            && matches!(&e.event, EventKind::Notified { notification: Some(x), .. } if x == number)
    });
    if already {
        return Err(bad(
            "already_notified",
            format!("A ciência da notificação {number} já foi registrada."),
        ));
    }
    let current = current_decision_event(view);
    if current.as_deref() != Some(n.decision_event_id.as_str()) {
        return Err(bad(
            "notification_outdated",
            format!(
                "A notificação {number} é de uma decisão anterior: gere a notificação da decisão \
                 em vigor."
            ),
        ));
    }
    Ok(Some(n.number.clone()))
}

/// What an event says besides its name, in Portuguese (the record page and the case file).
/// `record_name` names another record by its number ("Auto nº 501"), never by its id.
pub fn event_detail(e: &EventKind, record_name: &dyn Fn(&str) -> String) -> String {
    let penalty = |p: &sync_core::domain::PenaltyKind| {
        format!(
            "{} ({})",
            penalty::penalty_label_pt(*p),
            penalty::penalty_citation(*p)
        )
    };
    let outcome = |o: &sync_core::records::Outcome| match o {
        sync_core::records::Outcome::Upheld => "penalidade mantida",
        sync_core::records::Outcome::Reversed => "penalidade cancelada",
        sync_core::records::Outcome::Modified => "penalidade substituída",
    };
    let br = |d: &chrono::NaiveDate| d.format("%d/%m/%Y").to_string();
    match e {
        EventKind::Reviewed { note } => note.clone().unwrap_or_default(),
        EventKind::Classified { legal_basis } => legal_basis
            .iter()
            .map(|b| b.citation.clone())
            .collect::<Vec<_>>()
            .join("; "),
        EventKind::PenaltyProposed { penalty: p } | EventKind::PenaltyDecided { penalty: p } => {
            penalty(p)
        }
        EventKind::Notified {
            on,
            method,
            notification,
            ..
        } => {
            let how = method_label(*method);
            match notification {
                Some(n) => format!("em {} ({how}, notificação {n})", br(on)),
                None => format!("em {} ({how})", br(on)),
            }
        }
        EventKind::ReconsiderationFiled { on } | EventKind::AppealFiled { on } => {
            format!("em {}", br(on))
        }
        EventKind::ReconsiderationDecided {
            outcome: o,
            penalty: p,
        }
        | EventKind::AppealDecided {
            outcome: o,
            penalty: p,
        } => match p {
            Some(p) => format!("{}: {}", outcome(o), penalty(p)),
            None => outcome(o).to_owned(),
        },
        EventKind::Annulled { reason } => reason.clone(),
        EventKind::DuplicateMerged { into_record_id } => {
            format!("juntado a {}", record_name(into_record_id))
        }
        EventKind::DuplicateKeptApart { other_record_id } => {
            format!("mantido separado de {}", record_name(other_record_id))
        }
        EventKind::ConflictResolved { field, value } => {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!(
                "{}: {shown}",
                capitalised(&sync_core::records::field_label_pt(field))
            )
        }
        _ => String::new(),
    }
}

/// How a ciência was given, as staff read it.
pub fn method_label(m: NotificationMethod) -> &'static str {
    match m {
        NotificationMethod::PersonalSignature => "assinatura",
        NotificationMethod::PostalReceipt => "aviso de recebimento",
        NotificationMethod::Publication => "publicação oficial",
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The people of a record as the server knows them: the registry's names; someone the officer
/// identified on the spot but who is not in the registry is described, since their data stays
/// on the device. No document numbers in the office's papers.
struct RegistryNames<'a>(&'a Registry);

impl sync_core::print::PartyNames for RegistryNames<'_> {
    fn name_of(&self, p: &PersonRef) -> Result<Option<String>, sync_core::print::PrintError> {
        Ok(Some(person_name(self.0, p)))
    }
    fn document_of(&self, _: &PersonRef) -> Result<Option<String>, sync_core::print::PrintError> {
        Ok(None)
    }
}

/// The auto as printed, from the record and the registry's names (the mapping is the device's,
/// `sync_core::print::content_of`, so the office's copy states what the officer's paper did).
pub fn auto_content(
    view: &RecordView,
    reg: &Registry,
    users: &[UserRow],
    now: DateTime<Utc>,
) -> Result<AutoContent, ServiceError> {
    let place = view.stand_id.as_deref().map(|s| {
        reg.stands.iter().find(|x| x.id == s).map_or_else(
            || format!("Ponto {s}"),
            |x| format!("Ponto {}, {}", x.name, x.address),
        )
    });
    let paper = sync_core::print::Paper {
        officer_name: user_name(users, &view.author.user_id),
        officer_document: None,
        place,
        verification: None,
        printed_at: now,
    };
    sync_core::print::content_of(view, &RegistryNames(reg), paper)
        .map_err(|e| ServiceError::internal(&e))
}

/// The verdict the officer saw, one line per finding.
fn verdict_lines(view: &RecordView) -> Vec<String> {
    use sync_core::rules::Severity;
    match view.verdict() {
        Err(_) => vec![String::from("Veredito do dispositivo ilegível.")],
        Ok(None) => vec![String::from("O registro não traz veredito do dispositivo.")],
        Ok(Some(v)) if v.findings.is_empty() => vec![String::from("Sem achados.")],
        Ok(Some(v)) => v
            .findings
            .iter()
            .map(|f| {
                let severity = match f.severity {
                    Severity::Irregular => "irregular",
                    Severity::Warning => "aviso",
                    Severity::Info => "informação",
                };
                format!("{} ({severity}) — {}", f.citation, f.message)
            })
            .collect(),
    }
}

/// The case file of a record (see the module doc).
pub async fn case_file(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<CaseFileContent, ServiceError> {
    auth.require(OFFICE_READERS)?;
    let (doc, view) = load_view(svc, id).await?;
    let reg = svc.store().registry().await?;
    let users = svc.store().list_users().await?;
    let now = svc.clock().now();
    let mut photos = Vec::with_capacity(view.photos.len());
    for sha in &view.photos {
        let jpeg = svc.store().photo(sha.clone()).await?.map(|(_, b)| b);
        photos.push(PhotoContent {
            sha256: sha.clone(),
            jpeg,
        });
    }
    // Records this one's events name, by their number ("Auto nº 501"): the paper never shows
    // an internal id.
    let mut linked: Vec<(String, String)> = Vec::new();
    for e in &view.events {
        let other = match &e.event {
            EventKind::DuplicateMerged { into_record_id } => into_record_id,
            EventKind::DuplicateKeptApart { other_record_id } => other_record_id,
            _ => continue,
        };
        if linked.iter().any(|(i, _)| i == other) {
            continue;
        }
        if let Some(doc) = svc.store().record(other.clone()).await? {
            let name = crate::web::layout::record_name(&doc.row.kind, doc.row.number.as_deref());
            linked.push((other.clone(), name));
        }
    }
    let record_name = |id: &str| {
        linked
            .iter()
            .find(|(i, _)| i == id)
            .map_or_else(|| "outro registro".to_owned(), |(_, n)| n.clone())
    };
    let timeline = view
        .events
        .iter()
        .map(|e| {
            let detail = event_detail(&e.event, &record_name);
            let mut what = capitalised(e.event.label_pt());
            if !detail.is_empty() {
                what.push_str(": ");
                what.push_str(&detail);
            }
            if !e.valid {
                what.push_str(" (recusado pelo sistema)");
            }
            TimelineEntry {
                at: e.at,
                who: who(&user_name(&users, &e.by.user_id), e.by.role.label_pt()),
                what,
            }
        })
        .collect();
    let notifications = svc
        .store()
        .record_notifications(doc.row.id.clone())
        .await?
        .into_iter()
        .map(|n| {
            format!(
                "{} — {} ({}), gerada em {}, código {}",
                n.number,
                n.content.addressee.name,
                n.content.addressee.role,
                super::local(n.created_at),
                n.code
            )
        })
        .collect();
    let mut auto = auto_content(&view, &reg, &users, now)?;
    // The code printed on the auto, once its signed evidence reached the server.
    auto.verification = svc
        .store()
        .record_auto_code(doc.row.id.clone())
        .await?
        .map(|code| Verification {
            code,
            base_url: base_url(svc),
        });
    let held = svc.store().observed_persons(doc.row.id.clone()).await?;
    Ok(CaseFileContent {
        witness_contacts: super::witnesses::contact_lines(&view, &held),
        auto,
        verdict: verdict_lines(&view),
        timeline,
        photos,
        notifications,
        generated_at: now,
        generated_by: user_name(&users, &auth.user_id),
    })
}

/// The case file as a PDF: the record's number (for the file name) and bytes.
pub async fn case_file_pdf(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<(String, Vec<u8>), ServiceError> {
    let content = case_file(svc, auth, id).await?;
    let bytes = documents::render_case_file(&content).map_err(|e| ServiceError::internal(&e))?;
    Ok((
        content
            .auto
            .number
            .clone()
            .unwrap_or_else(|| id.trim().to_owned()),
        bytes,
    ))
}

/// Where a record's procedure stands, in one sentence for the public page: issued, in review,
/// penalty decided, ciência on a date, appealed, annulled, archived.
pub fn public_state(view: &RecordView) -> String {
    let br = |d: chrono::NaiveDate| d.format("%d/%m/%Y").to_string();
    match view.status {
        Status::Draft => String::from("Em elaboração."),
        Status::Issued | Status::ForwardedToOffice => {
            String::from("Lavrado; aguarda análise da Unidade de Transportes.")
        }
        Status::SettledByCoordinator => String::from("Resolvido pela coordenação do ponto."),
        Status::UnderReview | Status::PenaltyProposed => {
            String::from("Em análise na Unidade de Transportes.")
        }
        Status::PenaltyDecided => String::from("Penalidade decidida; aguarda a ciência."),
        Status::Notified => match view.notified_on {
            Some(d) => format!("Penalidade decidida; ciência em {}.", br(d)),
            None => String::from("Penalidade decidida; ciência registrada."),
        },
        Status::ReconsiderationFiled => String::from("Pedido de reconsideração em análise."),
        Status::ReconsiderationDecided => String::from("Reconsideração decidida."),
        Status::AppealFiled => String::from("Recurso ao Prefeito em análise."),
        Status::AppealDecided => String::from("Recurso ao Prefeito decidido."),
        Status::Annulled => String::from("Anulado: não produz efeitos."),
        Status::Archived => String::from("Arquivado."),
        Status::MergedAsDuplicate => {
            String::from("Juntado a outro auto da mesma ocorrência (duplicata).")
        }
    }
}
