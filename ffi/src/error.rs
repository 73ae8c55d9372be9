//! The one error the app sees, [`FiscalError`], and every conversion into it — from the sync
//! client, the field records, the records layer, the device store and the input parsers — in
//! this file and nowhere else.
//!
//! Each case is something the app can act on: retry later (`Offline`), ask for the password
//! (`LoginRequired`), say the law forbids it citing rule and article (`RefusedByLaw`), show the
//! server's reason (`RefusedByServer`), fetch the registry (`RegistryMissing`), refresh a stale
//! screen (`NotFound`), highlight a field (`InvalidInput`), or report a broken device
//! (`Storage`). Reasons are Portuguese and carry no personal data: where sync-core's message
//! would repeat a CPF or CNH the officer typed, a message of our own replaces it.

use sync_core::client::{ClientError, ErrorKind, StepError, TransportErrorKind};
use sync_core::domain::DomainError;
use sync_core::field::FieldError as CoreFieldError;
use sync_core::print::{PrintError, RenderError};
use sync_core::records::RecordError;
use sync_core::rules;
use sync_core::store::StoreError;

/// Why a call failed. Kotlin: `FiscalException.Offline` …; Swift: `FiscalError.offline` ….
///
/// Its text is one Portuguese sentence the app can show the officer as it is: Kotlin's
/// `toString()`, Swift's `description` and `localizedDescription` (Rust: `Display`, exported).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
#[uniffi::export(Display)]
pub enum FiscalError {
    /// No answer from the server after the retries (no signal, server down). Nothing was lost:
    /// try again later; `sync_status` shows what is pending.
    #[error("sem conexão com o servidor: {reason}")]
    Offline { reason: String },
    /// No session on this device, or it expired or was revoked: ask for the password
    /// (`login`).
    #[error("é preciso entrar de novo: {reason}")]
    LoginRequired { reason: String },
    /// The law does not allow it: the rule of the catalogue and the article it rests on.
    #[error("{reason} ({rule_id}: {citation})")]
    RefusedByLaw {
        rule_id: String,
        citation: String,
        reason: String,
    },
    /// The server refused the request (`status` is `None` when its answer did not decode).
    #[error("o servidor recusou: {reason}")]
    RefusedByServer {
        status: Option<i32>,
        /// Stable code of the server's error shape, e.g. `bad_credentials`.
        code: String,
        reason: String,
    },
    /// The device has no registry yet: `pull_registry` (needs the network once).
    #[error("{reason}")]
    RegistryMissing { reason: String },
    /// The thing asked for is not on this device (`what`: `record`, `permit`).
    #[error("{reason}")]
    NotFound { what: String, reason: String },
    /// An input the app passed is wrong; `field` names it: `plate`, `driver`, `document`,
    /// `vehicle`, `facts`, `legal_basis` (an auto with no irregular finding needs
    /// `extra_rules`), `position`, `witnesses`, `path`, `server_url`, `device_id`,
    /// `vehicle_confirmation` (an auto issued before `confirm_vehicle`), `status` (e.g. a draft
    /// sent to `render_record`), `format`, … or the sealed field an issued record refuses to
    /// change.
    #[error("{field}: {reason}")]
    InvalidInput { field: String, reason: String },
    /// The operation was cancelled (`cancel_sync`); what was applied before stays applied.
    #[error("operação cancelada")]
    Cancelled,
    /// The device database or its files: unreadable, full, from a newer app, inconsistent.
    #[error("problema no armazenamento do aparelho: {reason}")]
    Storage { reason: String },
    /// The server's certificate is not trusted by this device (another address, something in
    /// between, or the city's own CA not passed in `SessionOptions.extra_ca_pem`). Not a
    /// matter of signal and not retried: the city's IT must look at it.
    #[error("conexão insegura recusada: {reason}")]
    Untrusted { reason: String },
    /// The administrator revoked this device. It deleted the registry and every record the
    /// server already had; what the server had not received is kept on the device for the
    /// office to collect. Show `reason` to the officer as it is.
    #[error("{reason}")]
    Revoked { reason: String },
}

pub(crate) type FiscalResult<T> = Result<T, FiscalError>;

impl FiscalError {
    pub(crate) fn invalid(field: &str, reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            field: field.to_owned(),
            reason: reason.into(),
        }
    }

    fn by_law(rule_id: rules::RuleId, reason: impl Into<String>) -> Self {
        Self::RefusedByLaw {
            rule_id: rule_id.to_string(),
            // The catalogue's own citation.
            citation: rules::spec(rule_id).citation(),
            reason: reason.into(),
        }
    }

    fn storage(e: impl std::fmt::Display) -> Self {
        Self::Storage {
            reason: e.to_string(),
        }
    }

    /// The error that stopped a sync, from the step that reported it (the sync client keeps
    /// only its kind and message in the summary).
    pub(crate) fn from_step(e: &StepError) -> Self {
        let reason = e.message.clone();
        match e.kind {
            ErrorKind::Offline => Self::Offline { reason },
            ErrorKind::LoginRequired => Self::LoginRequired { reason },
            ErrorKind::Cancelled => Self::Cancelled,
            ErrorKind::Device => Self::Storage { reason },
            ErrorKind::Untrusted => Self::Untrusted { reason },
            ErrorKind::Revoked => Self::Revoked { reason },
            ErrorKind::Server => Self::RefusedByServer {
                status: None,
                code: String::from("sync_step_failed"),
                reason,
            },
        }
    }
}

// Transgression reports are art. 17 matters (R27).
const ART_17: rules::RuleId = rules::RuleId::R27;

impl From<ClientError> for FiscalError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Transport(t) if t.kind == TransportErrorKind::Certificate => {
                Self::Untrusted {
                    reason: t.to_string(),
                }
            }
            ClientError::Transport(t) => Self::Offline {
                reason: t.to_string(),
            },
            ClientError::Http {
                status,
                code,
                message,
                ..
            } => Self::RefusedByServer {
                status: Some(i32::from(status)),
                code,
                reason: message,
            },
            ClientError::LoginRequired(reason) => Self::LoginRequired { reason },
            e @ ClientError::DeviceRevoked(_) => Self::Revoked {
                reason: e.to_string(),
            },
            ClientError::Cancelled => Self::Cancelled,
            e @ ClientError::BadResponse { .. } => Self::RefusedByServer {
                status: None,
                code: String::from("bad_response"),
                reason: e.to_string(),
            },
            e @ ClientError::NotConverged(_) => Self::RefusedByServer {
                status: None,
                code: String::from("not_converged"),
                reason: e.to_string(),
            },
            ClientError::BadUrl(_) => Self::invalid(
                "server_url",
                "endereço do servidor inválido (esperado http:// ou https:// e o nome do servidor)",
            ),
            e @ ClientError::NoDevice => Self::invalid("device_id", e.to_string()),
            ClientError::Tls(e) => Self::invalid("extra_ca_pem", e.to_string()),
            ClientError::Store(e) => e.into(),
            ClientError::Field(e) => e.into(),
            e @ ClientError::Sync(_) => Self::storage(e),
        }
    }
}

impl From<CoreFieldError> for FiscalError {
    fn from(e: CoreFieldError) -> Self {
        match e {
            CoreFieldError::Store(e) => e.into(),
            CoreFieldError::Record(e) => e.into(),
            e @ CoreFieldError::NoIdentity => Self::LoginRequired {
                reason: e.to_string(),
            },
            e
            @ (CoreFieldError::PermitUnknown { .. } | CoreFieldError::NoPermitForPlate { .. }) => {
                Self::NotFound {
                    what: String::from("permit"),
                    reason: e.to_string(),
                }
            }
            // sync-core's message repeats the document typed: said here without it.
            CoreFieldError::DriverNotRegistered { .. } => Self::by_law(
                ART_17,
                "o condutor informado não consta do cadastro: a comunicação de transgressão \
                 (art. 17) é só para titulares e auxiliares do ponto",
            ),
            e @ CoreFieldError::StandMismatch { .. } => Self::by_law(ART_17, e.to_string()),
            // The session passes no stand: the device's is used, and only coordinators have
            // one.
            CoreFieldError::StandRequired => Self::by_law(
                ART_17,
                "só o coordenador do ponto comunica transgressões (art. 17); este aparelho não \
                 está com um coordenador",
            ),
            CoreFieldError::Io { .. } => {
                Self::invalid("path", "não foi possível ler o arquivo da foto")
            }
            e @ (CoreFieldError::AlreadyExists { .. } | CoreFieldError::Registry(_)) => {
                Self::storage(e)
            }
        }
    }
}

impl From<RecordError> for FiscalError {
    fn from(e: RecordError) -> Self {
        match e {
            // sync-core names the rule that gives the action to another role.
            RecordError::RoleNotAllowed { rule, .. } => Self::by_law(rule, e.to_string()),
            e @ (RecordError::OutsideStand { .. }
            | RecordError::WitnessRequired
            | RecordError::OnlyLightSettled) => Self::by_law(ART_17, e.to_string()),
            // sync-core names the person; the permit is enough for the officer.
            RecordError::NotDriverOfPermit { permit, .. } => Self::by_law(
                ART_17,
                format!(
                    "o condutor informado não é titular nem motorista auxiliar do alvará {permit}"
                ),
            ),
            e @ RecordError::UnknownPermit { .. } => Self::NotFound {
                what: String::from("permit"),
                reason: e.to_string(),
            },
            e @ RecordError::Sealed { field } => Self::invalid(field, e.to_string()),
            e @ (RecordError::AlreadyIssued | RecordError::EventRefused { .. }) => {
                Self::invalid("status", e.to_string())
            }
            e @ RecordError::NotAuthor { .. } => Self::invalid("record_id", e.to_string()),
            // The app asks the officer to confirm the vehicle (`confirm_vehicle`).
            e @ RecordError::VehicleNotConfirmed { .. } => {
                Self::invalid("vehicle_confirmation", e.to_string())
            }
            e @ (RecordError::MissingField { field } | RecordError::Invalid { field, .. }) => {
                Self::invalid(input_field(field), e.to_string())
            }
            e @ RecordError::InvalidHash { .. } => Self::invalid("sha256", e.to_string()),
            e @ RecordError::TooLarge { what, .. } => {
                Self::invalid(too_large_field(what), e.to_string())
            }
            e @ RecordError::NoConflict { .. } => Self::invalid("field", e.to_string()),
            e @ (RecordError::NumberAlreadyAssigned { .. }
            | RecordError::Malformed { .. }
            | RecordError::UnsupportedSchema { .. }
            | RecordError::DifferentRecords { .. }
            | RecordError::Document { .. }) => Self::storage(e),
        }
    }
}

impl From<PrintError> for FiscalError {
    fn from(e: PrintError) -> Self {
        match e {
            e @ PrintError::NotIssued => Self::invalid("status", e.to_string()),
            PrintError::Field(e) => e.into(),
            PrintError::Store(e) => e.into(),
            PrintError::Record(e) => e.into(),
            e @ PrintError::Render(RenderError::Unsupported(_)) => {
                Self::invalid("format", e.to_string())
            }
            e @ PrintError::Render(_) => Self::storage(e),
        }
    }
}

impl From<StoreError> for FiscalError {
    fn from(e: StoreError) -> Self {
        match e {
            e @ StoreError::NoRegistry => Self::RegistryMissing {
                reason: e.to_string(),
            },
            e @ StoreError::RecordNotFound(_) => Self::NotFound {
                what: String::from("record"),
                reason: e.to_string(),
            },
            e @ StoreError::PhotoHash(_) => Self::invalid("sha256", e.to_string()),
            // The database signed records as another device than the one the app opened it
            // with.
            e @ StoreError::DeviceIdChange { .. } => Self::invalid("device_id", e.to_string()),
            e => Self::storage(e),
        }
    }
}

/// The name of the app's input that a record-layer field label (Portuguese, for people)
/// stands for, so that the app can highlight it.
fn input_field(label: &str) -> &str {
    match label {
        "descrição dos fatos" => "facts",
        "fundamento legal (tipificação da infração)" => "legal_basis",
        "posição" => "position",
        "pessoa" => "person",
        "titular/papel do condutor" => "driver",
        "valor escolhido" => "value",
        "placa" => "plate",
        "veredito" => "verdict",
        "data da ocorrência" => "occurred_at",
        l if l.starts_with("alvará") || l.starts_with("titular do alvará") => "vehicle",
        other => other,
    }
}

/// The input field a record limit (`RecordError::TooLarge`) is about.
fn too_large_field(what: &str) -> &str {
    match what {
        "a descrição dos fatos" => "facts",
        "o depoimento da testemunha" | "as testemunhas" => "witnesses",
        "as fotos" => "photos",
        "o fundamento legal" | "a regra do fundamento legal" | "a citação do fundamento legal" => {
            "legal_basis"
        }
        "a placa" => "plate",
        "o motivo da falta de assinatura" => "signature",
        _ => "record",
    }
}

/// A plate in any accepted spelling.
pub(crate) fn parse_plate(input: &str) -> FiscalResult<sync_core::domain::Plate> {
    sync_core::domain::Plate::parse(input).map_err(|e| FiscalError::invalid("plate", e.to_string()))
}

/// A CPF or CNH number (`cpf:`/`cnh:` to disambiguate). The input is not repeated in the
/// message: it is a person's document.
pub(crate) fn parse_driver(field: &str, input: &str) -> FiscalResult<sync_core::domain::DriverId> {
    sync_core::domain::DriverId::parse(input).map_err(|e| {
        let reason = match e {
            DomainError::Cpf { .. } | DomainError::Cnh { .. } => e.to_string(),
            _ => String::from(
                "não é um CPF nem um número de CNH válido: confira os dígitos (cpf:… ou cnh:… \
                 para forçar)",
            ),
        };
        FiscalError::invalid(field, reason)
    })
}

/// Rule ids of the catalogue as a record's legal basis, with their citations: only rules the
/// law lets an auto rest on under the device's configuration (`rules::citable`: not unknown,
/// repealed, disabled or a counter refusal); the input `field` is named otherwise.
pub(crate) fn legal_basis(
    field: &str,
    ids: &[String],
    config: &rules::RulesConfig,
) -> FiscalResult<Vec<sync_core::records::LegalBasis>> {
    ids.iter()
        .map(|id| {
            rules::citable(id, config)
                .map(|r| sync_core::records::LegalBasis {
                    rule_id: r.id.to_string(),
                    citation: r.citation(),
                })
                .map_err(|e| FiscalError::invalid(field, e.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The case's name as the app's documentation writes it. Exhaustive on purpose: a new case
    /// does not compile until it is named here, and the test below then asks for its row.
    fn case_name(e: &FiscalError) -> &'static str {
        match e {
            FiscalError::Offline { .. } => "Offline",
            FiscalError::LoginRequired { .. } => "LoginRequired",
            FiscalError::RefusedByLaw { .. } => "RefusedByLaw",
            FiscalError::RefusedByServer { .. } => "RefusedByServer",
            FiscalError::RegistryMissing { .. } => "RegistryMissing",
            FiscalError::NotFound { .. } => "NotFound",
            FiscalError::InvalidInput { .. } => "InvalidInput",
            FiscalError::Cancelled => "Cancelled",
            FiscalError::Storage { .. } => "Storage",
            FiscalError::Untrusted { .. } => "Untrusted",
            FiscalError::Revoked { .. } => "Revoked",
        }
    }

    /// The README's table for the app team has one row per case of `FiscalError`, and no row
    /// for a case that does not exist.
    #[test]
    fn the_readmes_error_table_has_a_row_per_case() {
        let r = || String::from("x");
        let all = [
            FiscalError::Offline { reason: r() },
            FiscalError::LoginRequired { reason: r() },
            FiscalError::by_law(ART_17, "x"),
            FiscalError::RefusedByServer {
                status: None,
                code: r(),
                reason: r(),
            },
            FiscalError::RegistryMissing { reason: r() },
            FiscalError::NotFound {
                what: r(),
                reason: r(),
            },
            FiscalError::invalid("x", "x"),
            FiscalError::Cancelled,
            FiscalError::Storage { reason: r() },
            FiscalError::Untrusted { reason: r() },
            FiscalError::Revoked { reason: r() },
        ];
        let readme = include_str!("../../README.md");
        let section = readme
            .split("### Errors")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("README has a section ### Errors");
        let rows: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .map(|l| l.split(['(', '`']).next().unwrap_or_default())
            .collect();
        let mut named: Vec<&str> = all.iter().map(case_name).collect();
        named.sort_unstable();
        named.dedup();
        assert_eq!(named.len(), all.len(), "one sample per case");
        let mut documented = rows.clone();
        documented.sort_unstable();
        assert_eq!(documented, named, "README rows {rows:?}");
    }

    #[test]
    fn every_rule_cited_by_a_refusal_is_in_the_catalogue() {
        use sync_core::records::{EventKind, RecordKind, WarningKind};
        let events = [
            EventKind::Issued,
            EventKind::SettledByCoordinator {
                warning: WarningKind::Verbal,
            },
            EventKind::ForwardedToOffice,
            EventKind::Archived,
        ];
        let competence = events.iter().flat_map(|e| {
            [RecordKind::Infraction, RecordKind::Transgression].map(|k| e.competence_rule(k))
        });
        for id in competence.chain([ART_17]) {
            let FiscalError::RefusedByLaw { citation, .. } = FiscalError::by_law(id, "x") else {
                panic!("not a refusal by law");
            };
            assert!(
                citation.starts_with("Lei 4.019/2004, art."),
                "{id}: {citation}"
            );
        }
    }

    #[test]
    fn an_auto_by_a_coordinator_cites_art_36_and_a_report_by_an_officer_art_17() {
        let auto = RecordError::RoleNotAllowed {
            role: "coordenador de ponto",
            action: "lavrar auto de infração (art. 36: só a Guarda Municipal e a Secretaria de \
                     Transportes fiscalizam)",
            rule: rules::RuleId::R35,
        };
        let report = RecordError::RoleNotAllowed {
            role: "agente da Guarda Municipal",
            action: "comunicar transgressão (art. 17: atribuição do coordenador do ponto)",
            rule: rules::RuleId::R27,
        };
        assert!(
            matches!(FiscalError::from(auto), FiscalError::RefusedByLaw { rule_id, citation, .. }
            if rule_id == "R35" && citation.contains("art. 36"))
        );
        assert!(
            matches!(FiscalError::from(report), FiscalError::RefusedByLaw { rule_id, citation, .. }
            if rule_id == "R27" && citation.contains("art. 17"))
        );
    }

    #[test]
    fn the_rule_cited_is_the_one_the_error_carries_not_a_word_in_its_text() {
        // An office step whose label happens to mention art. 36: the rule carried counts.
        let e = RecordError::RoleNotAllowed {
            role: "agente da Guarda Municipal",
            action: "decisão (art. 36)",
            rule: rules::RuleId::R32,
        };
        assert!(
            matches!(FiscalError::from(e), FiscalError::RefusedByLaw { rule_id, citation, .. }
            if rule_id == "R32" && citation.contains("art. 32")),
        );
        // What sync-core writes for an office event appended by an officer.
        let event = sync_core::records::EventKind::PenaltyDecided {
            penalty: sync_core::domain::PenaltyKind::Fine,
        };
        assert_eq!(
            event.competence_rule(sync_core::records::RecordKind::Infraction),
            rules::RuleId::R32
        );
    }

    #[test]
    fn repealed_disabled_and_unknown_rules_are_no_legal_basis() {
        let config = rules::RulesConfig::default();
        let ok = legal_basis("extra_rules", &[String::from(" r24 ")], &config).unwrap();
        assert_eq!(ok[0].rule_id, "R24");
        assert_eq!(ok[0].citation, rules::spec(rules::RuleId::R24).citation());
        for (id, word) in [
            ("R15", "revogada"),
            ("R39", "revogada"),
            ("R21", "desativada"),
            ("R43", "não descreve"),
            ("R99", "não consta"),
        ] {
            let e = legal_basis("extra_rules", &[String::from(id)], &config).unwrap_err();
            assert!(
                matches!(&e, FiscalError::InvalidInput { field, reason }
                    if field == "extra_rules" && reason.contains(word)),
                "{id}: {e:?}"
            );
        }
        let config = rules::RulesConfig {
            disabled_rules: vec![rules::RuleId::R24],
            ..rules::RulesConfig::default()
        };
        assert!(legal_basis("rules", &[String::from("R24")], &config).is_err());
    }

    #[test]
    fn a_mistyped_document_is_not_repeated_in_the_error() {
        // Ten digits (neither document), and a CPF whose check digits fail.
        for typed in ["123.456.789-0", "cpf:123.456.789-00"] {
            let e = parse_driver("driver", typed).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, FiscalError::InvalidInput { ref field, .. } if field == "driver"));
            assert!(!text.contains("123"), "{text}");
        }
        let e = FiscalError::from(CoreFieldError::DriverNotRegistered {
            document: String::from("99940561580"),
        });
        assert!(!e.to_string().contains("99940561580"), "{e}");
        let e = FiscalError::from(RecordError::NotDriverOfPermit {
            person: String::from("Pedro Silva"),
            permit: String::from("0002"),
        });
        assert!(!e.to_string().contains("Pedro"), "{e}");
        assert!(e.to_string().contains("0002"), "{e}");
    }

    #[test]
    fn record_field_labels_become_the_apps_input_names() {
        let e = FiscalError::from(RecordError::MissingField {
            field: "fundamento legal (tipificação da infração)",
        });
        assert!(
            matches!(&e, FiscalError::InvalidInput { field, reason } if field == "legal_basis"
                && reason.contains("fundamento legal")),
            "{e:?}"
        );
        let e = FiscalError::from(RecordError::Invalid {
            field: "posição",
            reason: String::from("fora do intervalo"),
        });
        assert!(matches!(e, FiscalError::InvalidInput { field, .. } if field == "position"));
    }

    #[test]
    fn store_errors_the_app_can_act_on_keep_their_kind() {
        assert!(matches!(
            FiscalError::from(StoreError::NoRegistry),
            FiscalError::RegistryMissing { .. }
        ));
        assert!(matches!(
            FiscalError::from(StoreError::RecordNotFound(String::from("x"))),
            FiscalError::NotFound { what, .. } if what == "record"
        ));
        assert!(matches!(
            FiscalError::from(ClientError::Cancelled),
            FiscalError::Cancelled
        ));
        assert!(matches!(
            FiscalError::from(ClientError::LoginRequired(String::from("expirou"))),
            FiscalError::LoginRequired { .. }
        ));
    }

    /// The exported `Display` is what the apps show (Swift `localizedDescription`, Kotlin
    /// `toString()`): for every case one line that carries the reason the library gave, with
    /// no field list or Rust syntax (`reason=`, `{ … }`) of the generated default texts.
    #[test]
    fn every_case_reads_as_one_presentable_line() {
        let reason = || String::from("o servidor não respondeu");
        let all = [
            FiscalError::Offline { reason: reason() },
            FiscalError::LoginRequired { reason: reason() },
            FiscalError::by_law(ART_17, reason()),
            FiscalError::RefusedByServer {
                status: Some(401),
                code: String::from("bad_credentials"),
                reason: reason(),
            },
            FiscalError::RegistryMissing { reason: reason() },
            FiscalError::NotFound {
                what: String::from("record"),
                reason: reason(),
            },
            FiscalError::invalid("plate", reason()),
            FiscalError::Cancelled,
            FiscalError::Storage { reason: reason() },
            FiscalError::Untrusted { reason: reason() },
            FiscalError::Revoked { reason: reason() },
        ];
        let mut named: Vec<&str> = all.iter().map(case_name).collect();
        named.sort_unstable();
        named.dedup();
        assert_eq!(named.len(), all.len(), "one sample per case");
        for e in &all {
            let text = e.to_string();
            assert!(!text.trim().is_empty(), "{e:?}");
            assert!(!text.contains('\n'), "{e:?}: {text}");
            for syntax in ["reason", "code=", "status", "what=", "{", "}", "Some("] {
                assert!(!text.contains(syntax), "{e:?}: {text}");
            }
            if *e != FiscalError::Cancelled {
                assert!(text.contains(&reason()), "{e:?}: {text}");
            }
        }
        let law = FiscalError::by_law(ART_17, reason()).to_string();
        assert!(law.contains("R27") && law.contains("art. 17"), "{law}");
    }
}
