//! The checks of what a record holds, shared by the device and the server: the limits of
//! `crate::limits` (sizes of texts, lengths of lists) and the validity of the evidence (a
//! canonical plate, a position on the globe with a sane accuracy, a verdict that decodes, an
//! occurrence near the time of the check, a permit the registry knows, well-formed references
//! and hashes).
//!
//! The device runs `check_record` after every write of `FieldRecords` (the write is refused,
//! nothing saved); the server runs it in the vetting after every incoming change (that change
//! and the ones after it are refused, the rest of the batch goes on). Same code, so a record a
//! device saved is one the server accepts, and what an outsider sends by hand is judged like
//! what the app wrote.
//!
//! Only what changed between `before` and `after` is checked: a record the office keeps working
//! on for months must stay editable when its occurrence leaves the time window, or when the
//! registry later drops its permit. The check reads the views the caller already has; it never
//! walks the document again.

use chrono::{DateTime, Duration, Utc};

use super::RecordError;
use super::events::EventKind;
use super::model::{LegalBasis, PersonRef, RecordView, normalise_sha256};
use crate::domain::{Plate, Registry, RegistryIndex};
use crate::limits::{
    MAX_CHARGED, MAX_EVENTS, MAX_FACTS_CHARS, MAX_JSON_FIELD_BYTES, MAX_LEGAL_BASIS,
    MAX_NOTE_CHARS, MAX_OCCURRENCE_AGE_DAYS, MAX_OCCURRENCE_AHEAD_HOURS, MAX_PHOTOS_PER_RECORD,
    MAX_PLATE_RAW_CHARS, MAX_POSITION_ACCURACY_M, MAX_STATEMENT_CHARS, MAX_TEXT_FIELD_CHARS,
    MAX_WITNESSES,
};

/// What a record is checked against.
#[derive(Debug, Clone, Copy)]
pub struct CheckContext<'a> {
    /// The time of the check: the server's clock when vetting, the instant of the write on
    /// the device. An occurrence must lie within the window of `crate::limits` around it.
    pub now: DateTime<Utc>,
    /// The registry a permit number must exist in (scanned: it is looked up only when a
    /// change sets the permit); `None`: not checked (the device took the permit from its own
    /// registry replica).
    pub registry: Option<&'a Registry>,
    /// The same registry's indexes, when the caller keeps them: the permit is then a point
    /// lookup instead of a scan (a server's city has hundreds of thousands of permits).
    pub index: Option<&'a RegistryIndex<'a>>,
}

/// Checks `after` (the record after a write or an incoming change) where it differs from
/// `before` (`None`: a new record, checked whole). `Err` says what is wrong, in Portuguese:
/// `TooLarge` for a limit, `Invalid`/`InvalidHash`/`UnknownPermit` for invalid evidence.
pub fn check_record(
    before: Option<&RecordView>,
    after: &RecordView,
    ctx: &CheckContext<'_>,
) -> Result<(), RecordError> {
    let changed = |f: &dyn Fn(&RecordView) -> bool| before.is_none_or(|b| !f(b));

    if changed(&|b| b.number == after.number)
        && let Some(n) = &after.number
    {
        short_text("o número do auto", n)?;
    }
    if changed(&|b| b.issuing_body == after.issuing_body) {
        short_text("o órgão autuador", &after.issuing_body)?;
    }
    if changed(&|b| b.author.user_id == after.author.user_id) {
        short_text("o usuário autor", &after.author.user_id)?;
    }
    if changed(&|b| b.occurred_at == after.occurred_at) {
        occurrence(after.occurred_at, ctx.now)?;
    }
    if changed(&|b| b.position == after.position)
        && let Some(p) = &after.position
    {
        p.validate()?;
        if p.accuracy_m > MAX_POSITION_ACCURACY_M {
            return Err(RecordError::Invalid {
                field: "posição",
                reason: format!(
                    "precisão de {} m, acima do máximo de {MAX_POSITION_ACCURACY_M} m",
                    p.accuracy_m
                ),
            });
        }
    }
    for (what, before_value, value) in [
        (
            "o ponto",
            before.map(|b| &b.stand_id),
            after.stand_id.as_ref(),
        ),
        (
            "o alvará",
            before.map(|b| &b.permit_number),
            after.permit_number.as_ref(),
        ),
        (
            "o titular",
            before.map(|b| &b.holder_id),
            after.holder_id.as_ref(),
        ),
    ] {
        if before_value.is_none_or(|b| b.as_ref() != value)
            && let Some(v) = value
        {
            short_text(what, v)?;
        }
    }
    if changed(&|b| b.permit_number == after.permit_number)
        && let (Some(permit), Some(registry)) = (&after.permit_number, ctx.registry)
        && !match ctx.index {
            Some(index) => index.permit(permit).is_some(),
            None => registry.permits.iter().any(|p| p.number == *permit),
        }
    {
        return Err(RecordError::UnknownPermit {
            permit: permit.clone(),
        });
    }
    if changed(&|b| b.vehicle == after.vehicle)
        && let Some(v) = &after.vehicle
    {
        plate(&v.plate_raw, &v.plate)?;
    }
    if changed(&|b| {
        b.vehicle_confirmation == after.vehicle_confirmation && b.vehicle == after.vehicle
    }) && let Some(c) = &after.vehicle_confirmation
    {
        vehicle_confirmation(after, c)?;
    }
    if changed(&|b| b.driver == after.driver) {
        person(&after.driver.person)?;
    }
    if changed(&|b| b.charged == after.charged) {
        count("as pessoas autuadas", after.charged.len(), MAX_CHARGED)?;
        for p in &after.charged {
            person(p)?;
        }
    }
    if changed(&|b| b.facts == after.facts) {
        chars("a descrição dos fatos", &after.facts, MAX_FACTS_CHARS)?;
    }
    if changed(&|b| b.legal_basis == after.legal_basis) {
        legal_basis(&after.legal_basis)?;
    }
    if changed(&|b| b.verdict == after.verdict)
        && let Some(v) = &after.verdict
    {
        if v.len() > MAX_JSON_FIELD_BYTES {
            return Err(too_large("o veredito", bytes_limit(MAX_JSON_FIELD_BYTES)));
        }
        after.verdict().map_err(|e| RecordError::Invalid {
            field: "veredito",
            reason: match e {
                RecordError::Malformed { reason } => reason,
                other => other.to_string(),
            },
        })?;
    }
    if changed(&|b| b.signature == after.signature) {
        match &after.signature {
            None => {}
            Some(super::model::Signature::Signed { sha256 }) => {
                normalise_sha256(sha256)?;
            }
            Some(super::model::Signature::Missing { reason }) => {
                chars("o motivo da falta de assinatura", reason, MAX_NOTE_CHARS)?;
            }
        }
    }
    if changed(&|b| b.witnesses == after.witnesses) {
        count("as testemunhas", after.witnesses.len(), MAX_WITNESSES)?;
        for w in &after.witnesses {
            person(&w.person)?;
            chars(
                "o depoimento da testemunha",
                &w.statement,
                MAX_STATEMENT_CHARS,
            )?;
            short_text("o usuário que registrou a testemunha", &w.added_by)?;
        }
    }
    if changed(&|b| b.photos == after.photos) {
        count("as fotos", after.photos.len(), MAX_PHOTOS_PER_RECORD)?;
        for h in &after.photos {
            normalise_sha256(h)?;
        }
    }
    let events = after.events.len() + after.invalid_events.len();
    if changed(&|b| b.events.len() + b.invalid_events.len() == events) {
        count("os eventos", events, MAX_EVENTS)?;
        for e in &after.events {
            if before.is_some_and(|b| b.events.iter().any(|x| x.id == e.id)) {
                continue;
            }
            match &e.event {
                EventKind::Reviewed { note: Some(note) } => {
                    chars("a observação da análise", note, MAX_NOTE_CHARS)?;
                }
                EventKind::Annulled { reason } => {
                    chars("o motivo da anulação", reason, MAX_NOTE_CHARS)?;
                }
                EventKind::Classified { legal_basis: basis } => legal_basis(basis)?,
                _ => {}
            }
        }
    }
    Ok(())
}

fn too_large(what: &'static str, limit: String) -> RecordError {
    RecordError::TooLarge { what, limit }
}

fn bytes_limit(n: usize) -> String {
    format!("{} KB", n / 1024)
}

/// At most `max` characters (bytes are at least as many: the common short case costs no
/// count).
fn chars(what: &'static str, s: &str, max: usize) -> Result<(), RecordError> {
    if s.len() > max && s.chars().count() > max {
        return Err(too_large(what, format!("{max} caracteres")));
    }
    Ok(())
}

fn count(what: &'static str, n: usize, max: usize) -> Result<(), RecordError> {
    if n > max {
        return Err(too_large(what, format!("{max} itens")));
    }
    Ok(())
}

/// An identifier or name: bounded, and free of control characters (a NUL or a line break in
/// an id is never typed by anyone).
fn short_text(what: &'static str, s: &str) -> Result<(), RecordError> {
    chars(what, s, MAX_TEXT_FIELD_CHARS)?;
    if s.chars().any(char::is_control) {
        return Err(RecordError::Invalid {
            field: what,
            reason: String::from("contém caracteres de controle"),
        });
    }
    Ok(())
}

fn person(p: &PersonRef) -> Result<(), RecordError> {
    let (PersonRef::Registry(id) | PersonRef::Observed(id)) = p;
    chars("a identificação da pessoa", id, MAX_TEXT_FIELD_CHARS)?;
    p.validate()
}

/// A legal basis names rules the law lets an auto rest on (`rules::penalty::citable_in_law`:
/// known, in force, an infraction): the same gate as the app, the command line and the
/// office's classification, so a repealed rule sent by hand is refused like one typed in the
/// app. The configuration's disabled rules are judged where the configuration is at hand
/// (the writer and the office), not here, so that a device and the server never disagree on a
/// record's contents.
fn legal_basis(basis: &[LegalBasis]) -> Result<(), RecordError> {
    count("o fundamento legal", basis.len(), MAX_LEGAL_BASIS)?;
    for b in basis {
        short_text("a regra do fundamento legal", &b.rule_id)?;
        short_text("a citação do fundamento legal", &b.citation)?;
        crate::rules::penalty::citable_in_law(&b.rule_id).map_err(|e| RecordError::Invalid {
            field: "fundamento legal (tipificação da infração)",
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// A vehicle confirmation is the author's, from the record's device, for the vehicle the
/// record names.
fn vehicle_confirmation(
    view: &RecordView,
    c: &super::model::VehicleConfirmation,
) -> Result<(), RecordError> {
    short_text("o usuário que confirmou o veículo", &c.user_id)?;
    short_text("a placa confirmada", &c.plate)?;
    let invalid = |reason: &str| RecordError::Invalid {
        field: "confirmação do veículo",
        reason: reason.to_owned(),
    };
    if c.user_id != view.author.user_id || c.device_id != view.author.device_id {
        return Err(invalid(
            "só o autor, no aparelho em que lavrou o registro, confirma o veículo",
        ));
    }
    if view.vehicle.as_ref().map(|v| v.plate.as_str()) != Some(c.plate.as_str()) {
        return Err(invalid("a placa confirmada não é a do veículo do registro"));
    }
    Ok(())
}

/// The plate as typed must read as a plate (letters, digits and separators only) whose
/// canonical form is the one stored.
fn plate(raw: &str, canonical: &str) -> Result<(), RecordError> {
    let invalid = |reason: String| RecordError::Invalid {
        field: "placa",
        reason,
    };
    chars("a placa", raw, MAX_PLATE_RAW_CHARS)?;
    if !raw
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '.'))
    {
        return Err(invalid(format!(
            "{raw:?} tem caracteres que não são letras, dígitos ou separadores"
        )));
    }
    match Plate::parse(raw) {
        Ok(p) if p.canonical() == canonical => Ok(()),
        Ok(p) => Err(invalid(format!(
            "a forma canônica de {raw:?} é {}, não {canonical:?}",
            p.canonical()
        ))),
        Err(e) => Err(invalid(e.to_string())),
    }
}

/// The occurrence must be within the window of `crate::limits` around `now`.
fn occurrence(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), RecordError> {
    let earliest = now - Duration::days(MAX_OCCURRENCE_AGE_DAYS);
    let latest = now + Duration::hours(MAX_OCCURRENCE_AHEAD_HOURS);
    if at < earliest || at > latest {
        return Err(RecordError::Invalid {
            field: "data da ocorrência",
            reason: format!(
                "{} está fora do intervalo aceito ({MAX_OCCURRENCE_AGE_DAYS} dias antes a \
                 {MAX_OCCURRENCE_AHEAD_HOURS} horas depois de agora)",
                at.format("%d/%m/%Y %H:%M UTC")
            ),
        });
    }
    Ok(())
}
