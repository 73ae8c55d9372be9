//! `GET /escritorio/registros/{id}`: one field record for the office, and its forms.
//!
//! The page shows the sealed evidence (time in America/Sao_Paulo, position, plate, driver,
//! officer, legal basis, facts, witnesses), the photos inline, the Verdict the officer saw
//! beside it (registry version and how old the officer's copy was), conflicts side by side
//! with a choice, possible duplicates with merge / keep apart, and the procedure as a guided
//! one:
//!
//! 1. "Andamento do processo": what was done, one dated line per accepted step (the law's
//!    date: the ciência's or the filing's, else the day it was recorded), who, and what it
//!    decided.
//! 2. The decision's context: classification, the permit's penalty history, the fine in force,
//!    the system's proposal (until the penalty is decided), the notifications, the ciência and
//!    the art. 35 deadline.
//! 3. "Próximo passo": only the forms of what may come next, as `records::office_next` says —
//!    the state machine's conditions and the law kernel's `Procedure::next_steps`; the page
//!    decides nothing itself. Annulment and archiving, where allowed, are folded away.
//! 4. Every event, refused ones marked (folded, open when something was refused), changes
//!    refused at sync, and the audit trail in Portuguese.
//!
//! Every form posts to this record and appends one office event through the office workflow
//! (`crate::office`) — the API's path: same vetting, audit row, one transaction. A refusal
//! renders this page again (422) with the reason and the typed values; nothing is stored.
//!
//! A decision, a ruling or an annulment that would change the registry is not stored on its
//! first post: the page answers with a confirmation of what changes in the registry and from
//! when, computed by `office::preview_effect` (the write's own `effects::reconcile`, on a copy
//! of the record in memory; nothing is written). "Confirmar" posts the same values with a
//! token bound to the record's heads, the registry version and those values
//! (`confirmation_token`); a token that no longer matches shows the confirmation again.
//! "Voltar e corrigir" (`…/corrigir`) renders this page with the values in their form. The
//! API has no such step: its callers are programs that have read the effect in the answer.
//!
//! # Element ids (stable; the browser test drives them)
//!
//! | id | what |
//! |---|---|
//! | `registro-numero`, `registro-situacao`, `registro-tipo` | header facts |
//! | `prova` | evidence section (`prova-ocorrencia`, `prova-posicao`, `prova-placa`, `prova-condutor`, `prova-autor`, `prova-fundamento`, `prova-fatos`, `tabela-testemunhas`) |
//! | `fotos`, `foto-{n}` | photos (n from 1), `foto-ausente-{n}` when not yet uploaded |
//! | `veredito`, `veredito-resultado`, `veredito-versao`, `veredito-idade`, `tabela-achados` | the officer's Verdict |
//! | `andamento`, `linha-do-tempo`, items `passo-{n}` (n from 1) | dated timeline of accepted steps |
//! | `eventos`, `eventos-todos` (details), `tabela-eventos`, rows `evento-{event id}` (class `invalido` when refused) | every event |
//! | `recusas-sincronizacao` | changes refused at sync (quarantine) |
//! | `conflitos`, `conflito-{field slug}`, buttons `conflito-{field slug}-escolher-{n}` | conflicts (n from 1) |
//! | `duplicatas`, `duplicata-{other id}`, buttons `juntar-{other id}`, `separar-{other id}` | duplicates |
//! | `decisao`, `historico-penalidades`, `valor-multa`, `proposta-sistema` | decision context |
//! | `proximo-passo`, `sem-proximo-passo` | the forms of the next steps, or why there are none |
//! | `form-analise` (`analise-nota`, `analisar`) | review |
//! | `form-classificacao` (`classificacao-regras`, `classificar`) | classification, until the decision |
//! | `form-proposta` (`proposta-penalidade`, `propor`) | proposal |
//! | `form-decisao` (`decisao-penalidade`, `decidir`) | decision |
//! | `form-ciencia` (`ciencia-data`, `ciencia-meio`, `registrar-ciencia`), `prazo-recurso` | ciência and deadline |
//! | `form-reconsideracao` (`reconsideracao-data`, `pedir-reconsideracao`) | reconsideration filed |
//! | `form-decisao-reconsideracao` (`reconsideracao-resultado`, `reconsideracao-penalidade`, `decidir-reconsideracao`) | its decision |
//! | `form-recurso` (`recurso-data`, `interpor-recurso`), `recurso-prazo` | appeal filed, until when |
//! | `form-decisao-recurso` (`recurso-resultado`, `recurso-penalidade`, `decidir-recurso`) | its decision |
//! | `encerramento` (details): `form-anulacao` (`anulacao-motivo`, `anular`), `form-arquivamento` (`arquivar`) | closing |
//! | `confirmacao`, `confirmacao-ato`, `efeitos-cadastro`, `confirmacao-quando`, `confirmacao-desatualizada`, `form-confirmacao` (`confirmar`), `form-corrigir` (`voltar-corrigir`) | the confirmation page |
//! | `sem-notificacoes`, `tabela-notificacoes`, rows `notificacao-{number}`, links `pdf-{number}` | notifications of penalty |
//! | `form-notificacao` (`notificacao-pessoa`, `gerar-notificacao`) | generate the notification of the decision in force |
//! | `ciencia-notificacao` | the notification a ciência refers to |
//! | `link-processo` | the case file (PDF) |
//! | `erro-acao` | the refusal of the last action, if any; `aviso` the confirmation after success |
//! | `auditoria`, `tabela-auditoria` | audit rows |

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;
use sync_core::domain::{DriverRole, PenaltyKind, Registry};
use sync_core::records::{
    EventKind, FieldConflict, NotificationMethod, Outcome, PersonRef, RecordKind, RecordView,
    Signature, Status, field_label_pt, office_next,
};
use sync_core::rules::procedure::StepKind;
use sync_core::rules::{Overall, Severity};

use super::PageError;
use super::inbox::kind_label;
use super::layout::{
    age_text, date_br, date_field, error_box, local_time, money, page, parse_penalty,
    penalty_label, penalty_options, penalty_value, plural, post_form, record_name, see_other,
    select_field, submit, text_field, textarea_field,
};
use super::session::{OfficeUser, Posted, WebUser};
use crate::audit::{AuditRow, payload_hash};
use crate::error::AppError;
use crate::office;
use crate::office::effects::EffectChange;
use crate::server::AppState;
use crate::service::ServiceError;
use crate::store::records::{QuarantineRow, RecordDoc, view_of};
use crate::store::{DeviceRow, UserRow};

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/registros/{id}", get(show))
        .route("/escritorio/registros/{id}/evento", post(post_event))
        .route("/escritorio/registros/{id}/corrigir", post(correct))
        .route(
            "/escritorio/registros/{id}/conflito",
            post(resolve_conflict),
        )
        .route(
            "/escritorio/registros/{id}/duplicata",
            post(settle_duplicate),
        )
        .route("/escritorio/fotos/{sha256}", get(photo))
        .route("/escritorio/notificacoes/{id}/pdf", get(notification_pdf))
        .route("/escritorio/registros/{id}/processo", get(case_file_pdf))
}

/// Photo types shown inline (raster images only: no SVG, which can carry script).
const IMAGE_TYPES: &[&str] = &[
    "image/jpeg",
    "image/png",
    "image/webp",
    "image/gif",
    "image/heic",
    "image/heif",
];

/// The fields of every form of the page (each form sends the ones it has).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ActionForm {
    /// Which action: `analisar`, `classificar`, `propor`, `decidir`, `ciencia`, `reconsideracao`,
    /// `decisao-reconsideracao`, `recurso`, `decisao-recurso`, `anular`, `arquivar`.
    #[serde(default)]
    acao: String,
    #[serde(default)]
    nota: String,
    #[serde(default)]
    penalidade: String,
    #[serde(default)]
    data: String,
    #[serde(default)]
    meio: String,
    #[serde(default)]
    resultado: String,
    #[serde(default)]
    motivo: String,
    #[serde(default)]
    regras: String,
    /// The notification a ciência refers to (its number).
    #[serde(default)]
    notificacao: String,
    /// Whom a notification is generated for (`PersonRef::encode`; empty: everyone charged).
    #[serde(default)]
    pessoa: String,
    /// The token of the confirmation page ([`confirmation_token`]): present when the office
    /// confirmed the registry effect shown for exactly these values.
    #[serde(default)]
    confirmacao: String,
}

/// A refused action, shown again on the page with what was typed.
#[derive(Debug, Clone)]
struct Retry {
    /// The form that failed (`ActionForm::acao`, or `conflito` / `duplicata`).
    acao: String,
    message: String,
    form: ActionForm,
}

impl Retry {
    fn value<'a>(retry: Option<&'a Retry>, acao: &str, f: fn(&ActionForm) -> &str) -> &'a str {
        retry
            .filter(|r| r.acao == acao)
            .map(|r| f(&r.form))
            .unwrap_or("")
    }
}

/// Everything the page shows besides the record.
struct Context {
    registry: std::sync::Arc<Registry>,
    users: Vec<UserRow>,
    devices: Vec<DeviceRow>,
    audit: Vec<AuditRow>,
    quarantine: Vec<QuarantineRow>,
    photos_present: Vec<String>,
    /// The record's notifications of penalty, oldest first.
    notifications: Vec<crate::store::notifications::NotificationRow>,
    /// The office's view of the case: classification, history, proposal, decision, deadline.
    case: office::CaseView,
    /// Today in Americana.
    today: NaiveDate,
    /// The other records of the duplicate group this record is in.
    duplicates: Vec<office::DuplicateMember>,
    /// Why they look like the same occurrence.
    duplicate_reasons: Vec<office::DuplicatePair>,
    /// The server's receipt of the device seal (`crate::receipts`).
    receipt: Option<crate::receipts::Receipt>,
    /// Records this one links to (duplicates, penalty history), with their names.
    linked: Vec<(String, String)>,
}

impl Context {
    fn user_name(&self, id: &str) -> String {
        self.users
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.display_name.clone())
            .unwrap_or_else(|| id.to_owned())
    }

    fn person(&self, p: &PersonRef) -> String {
        match p {
            PersonRef::Registry(id) => self
                .registry
                .people
                .iter()
                .find(|x| &x.id == id)
                .map(|x| format!("{} ({id})", x.name))
                .unwrap_or_else(|| format!("{id} (não está no cadastro atual)")),
            PersonRef::Observed(_) => {
                "pessoa identificada no local, fora do cadastro (veja a identificação das testemunhas)".to_owned()
            }
        }
    }

    fn stand(&self, id: &str) -> String {
        self.registry
            .stands
            .iter()
            .find(|s| s.id == id)
            .map(|s| format!("{} — {}", s.id, s.name))
            .unwrap_or_else(|| id.to_owned())
    }

    /// A record linked from this one, by its number ("Auto nº 501"), never its id.
    fn record_name(&self, id: &str) -> String {
        self.linked
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, name)| name.clone())
            .unwrap_or_else(|| "outro registro".to_owned())
    }

    /// A registered device as staff know it (its label).
    fn device_label(&self, id: &str) -> String {
        self.devices
            .iter()
            .find(|d| d.id == id)
            .map(|d| d.label.clone())
            .unwrap_or_else(|| id.to_owned())
    }

    /// The registered device behind a protocol UUID, and its user.
    fn device_of_uuid(&self, uuid: &uuid::Uuid) -> Option<&DeviceRow> {
        self.devices
            .iter()
            .find(|d| sync_core::sync::device_uuid(&d.id) == *uuid)
    }
}

async fn load(state: &AppState, id: &str) -> Result<RecordDoc, PageError> {
    state
        .store()
        .record(id.to_owned())
        .await?
        .ok_or_else(|| PageError::not_found("Registro não encontrado."))
}

async fn context(state: &AppState, user: &WebUser, id: &str) -> Result<Context, PageError> {
    let store = state.store();
    let case = office::case(state.services(), &user.auth, id).await?;
    let registry = store.registry().await?;
    let users = store.list_users().await?;
    let devices = store.list_devices().await?;
    let audit = store.record_audit(id.to_owned()).await?;
    let quarantine = store.record_quarantine(id.to_owned()).await?;
    let receipt = store.receipt_of(id.to_owned()).await?;
    let photos_present = store.photos_present(case.record.photos.clone()).await?;
    let notifications = store.record_notifications(case.row.id.clone()).await?;
    let group =
        office::duplicate_group_of(state.services(), &user.auth, id, case.row.plate.as_deref())
            .await?;
    let (duplicates, duplicate_reasons) = match group {
        Some(g) => (
            g.records.into_iter().filter(|m| m.row.id != id).collect(),
            g.pairs
                .into_iter()
                .filter(|p| p.a == id || p.b == id)
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    // Every record the page links to, named by its number.
    let mut ids: Vec<String> = case
        .history
        .iter()
        .filter_map(|h| h.record_id.clone())
        .chain(case.record.duplicate_of.clone())
        .chain(case.record.events.iter().filter_map(|e| match &e.event {
            EventKind::DuplicateMerged { into_record_id } => Some(into_record_id.clone()),
            EventKind::DuplicateKeptApart { other_record_id } => Some(other_record_id.clone()),
            _ => None,
        }))
        .collect();
    ids.sort();
    ids.dedup();
    let mut linked = Vec::new();
    for other in ids {
        if let Some(doc) = store.record(other.clone()).await? {
            let name = record_name(&doc.row.kind, doc.row.number.as_deref());
            linked.push((other, name));
        }
    }
    Ok(Context {
        linked,
        registry,
        users,
        devices,
        audit,
        quarantine,
        photos_present,
        notifications,
        case,
        today: state.clock().today(),
        duplicates,
        duplicate_reasons,
        receipt,
    })
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    render(&state, &user, &id, None).await
}

async fn render(
    state: &AppState,
    user: &WebUser,
    id: &str,
    retry: Option<Retry>,
) -> Result<Markup, PageError> {
    let ctx = context(state, user, id).await?;
    let view = &ctx.case.record;
    let witnesses = super::witnesses::section(state, user, id, view).await?;
    let compared = super::evidence::compared(state, id, view, &ctx.duplicates).await?;
    let flash = if retry.is_none() {
        user.take_flash().await
    } else {
        None
    };
    let title = record_name(&ctx.case.row.kind, view.number.as_deref());
    let body = html! {
        @if let Some(r) = retry.as_ref().filter(|r| !r.message.is_empty()) {
            (error_box("erro-acao", &r.message))
        }
        p {
            span #registro-tipo { (kind_label(&ctx.case.row.kind)) } " · "
            "nº " span #registro-numero { (view.number.as_deref().unwrap_or("(sem número)")) } " · "
            "situação: " strong #registro-situacao { (view.status.label_pt()) }
            @if let Some(p) = &view.penalty { " · penalidade em vigor: " strong #registro-penalidade { (penalty_label(p)) } }
            @if let Some(d) = &view.duplicate_of {
                " · juntado ao " a href={ "/escritorio/registros/" (d) } { (ctx.record_name(d)) }
            }
            " · " a #link-processo .nao-imprimir href={ "/escritorio/registros/" (id) "/processo" } { "processo em PDF (para recurso)" }
        }
        div .colunas {
            div { (evidence(view, &ctx)) }
            div { (verdict(view, &ctx)) }
        }
        (photos(view, &ctx))
        (witnesses)
        (conflicts(user, id, view, &ctx))
        (duplicates(user, id, &ctx))
        (compared)
        (procedure_timeline(view, &ctx))
        (decision(user, id, &ctx, retry.as_ref()))
        (timeline(view, &ctx))
        (audit(&ctx))
    };
    Ok(page(Some(user), &title, flash, body))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn driver_role_label(r: DriverRole) -> &'static str {
    match r {
        DriverRole::Holder => "titular do alvará",
        DriverRole::Auxiliary => "motorista auxiliar do alvará (art. 8)",
        DriverRole::IllnessSubstitute => {
            "substituto autorizado por doença do titular (art. 1, § 3º)"
        }
        DriverRole::AuxiliaryOfAnotherPermit => "auxiliar de outro alvará (art. 8, § 3º)",
        DriverRole::HolderOfAnotherPermit => "titular de outro alvará",
        DriverRole::Unauthorised => "não autorizado (art. 8, § 4º)",
    }
}

fn evidence(view: &RecordView, ctx: &Context) -> Markup {
    html! {
        section #prova aria-labelledby="titulo-prova" {
            h2 #titulo-prova { "Prova" @if view.sealed { " (lacrada)" } }
            dl .dados {
                dt { "Ocorrência" }
                dd #prova-ocorrencia { (local_time(view.occurred_at)) " (horário de Brasília, relógio do dispositivo)" }
                dt { "Posição" }
                dd #prova-posicao { (super::evidence::position("prova", view.position.as_ref(), &ctx.registry, view.stand_id.as_deref())) }
                dt { "Placa" }
                dd #prova-placa {
                    @match &view.vehicle {
                        Some(v) => { (v.plate) @if v.plate_raw != v.plate { " (digitada: " (v.plate_raw) ")" } }
                        None => { "—" }
                    }
                }
                @if view.vehicle.is_some() {
                    dt { "Identificação do veículo" }
                    dd #prova-veiculo-confirmado {
                        @match &view.vehicle_confirmation {
                            Some(c) if view.vehicle_confirmed() => {
                                "confirmada pelo agente (" (c.user_id) ") em " (local_time(c.at))
                            }
                            _ => { "não confirmada pelo agente" }
                        }
                    }
                }
                dt { "Alvará" }
                dd #prova-alvara { (view.permit_number.as_deref().unwrap_or("—")) }
                dt { "Ponto" }
                dd #prova-ponto { (view.stand_id.as_deref().map(|s| ctx.stand(s)).unwrap_or_else(|| "—".into())) }
                dt { "Condutor" }
                dd #prova-condutor { (ctx.person(&view.driver.person)) " — " (driver_role_label(view.driver.role)) }
                @if !view.charged.is_empty() {
                    dt { "Quem responde" }
                    dd #prova-responsaveis {
                        @for (i, p) in view.charged.iter().enumerate() {
                            @if i > 0 { "; " }
                            (ctx.person(p))
                        }
                        @if view.charged.len() > 1 { " (art. 32, § 2º)" }
                    }
                }
                dt { "Autor" }
                dd #prova-autor {
                    (ctx.user_name(&view.author.user_id)) " — " (view.author.role.label_pt())
                    @if let Some(d) = ctx.device_of_uuid(&view.author.device_id) { " (" (d.label) ")" }
                }
                dt { "Órgão" }
                dd { (view.issuing_body) }
                @if let Some(g) = view.gravity {
                    dt { "Gravidade" }
                    dd #prova-gravidade { @if g == sync_core::records::Gravity::Serious { "grave (art. 17, § 2º)" } @else { "leve (art. 17, § 1º)" } }
                }
                dt { "Fundamento legal" }
                dd #prova-fundamento {
                    @if view.legal_basis.is_empty() { "—" }
                    ul {
                        @for b in &view.legal_basis {
                            li { strong { (b.rule_id) } " — " (b.citation) }
                        }
                    }
                }
                dt { "Fatos" }
                dd #prova-fatos { (view.facts) }
                dt { "Assinatura do autuado" }
                dd #prova-assinatura {
                    @match &view.signature {
                        Some(Signature::Signed { .. }) => { "assinado" }
                        Some(Signature::Missing { reason }) => { "sem assinatura: " (reason) }
                        None => { "—" }
                    }
                }
                @if view.sealed {
                    dt { "Selo do dispositivo" }
                    dd #prova-selo { (seal_line(view, ctx)) }
                }
            }
            h3 { "Testemunhas" }
            @if view.witnesses.is_empty() {
                p #sem-testemunhas { "Nenhuma testemunha." }
            } @else {
                table #tabela-testemunhas {
                    thead { tr {
                        th scope="col" { "Testemunha" }
                        th scope="col" { "Declaração" }
                        th scope="col" { "Registrada em" }
                        th scope="col" { "Por" }
                    } }
                    tbody {
                        @for w in &view.witnesses {
                            tr {
                                th scope="row" { (ctx.person(&w.person)) }
                                td { (w.statement) }
                                td { (local_time(w.added_at)) }
                                td { (ctx.user_name(&w.added_by)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The device seal and the server's receipt, one sentence each (`crate::receipts`).
fn seal_line(view: &RecordView, ctx: &Context) -> Markup {
    let code = |c: &str| {
        documents::VerificationCode::parse(c).map_or_else(|| c.to_owned(), |c| c.to_string())
    };
    html! {
        @match (&view.seal, &ctx.receipt) {
            (_, Some(r)) => {
                span #selo-recebido {
                    "Recebido pelo servidor até " (local_time(r.received_at))
                    ", com a assinatura do dispositivo conferida (código de verificação "
                    (code(&r.verification_code)) ")."
                }
                @if r.clock_implausible() {
                    " "
                    strong #selo-relogio .alerta {
                        "Atenção: o relógio do dispositivo "
                        @match r.device_clock_offset_ms {
                            Some(ms) if ms.unsigned_abs() > crate::receipts::MAX_PLAUSIBLE_CLOCK_OFFSET.num_milliseconds().unsigned_abs() => {
                                "diferia " (ms.unsigned_abs().div_ceil(60_000)) " min do servidor"
                            }
                            _ => { "marca a emissão depois do recebimento pelo servidor" }
                        }
                        ", então os horários informados pelo dispositivo não são confiáveis."
                    }
                }
            }
            (Some(_), None) => { "Assinado pelo dispositivo, sem recibo do servidor." }
            (None, None) => {
                span #selo-ausente { "Sem assinatura do dispositivo (emitido por versão do aplicativo anterior às chaves de assinatura)." }
            }
        }
    }
}

fn overall_label(o: Overall) -> (&'static str, &'static str) {
    match o {
        Overall::Regular => ("regular", "regular"),
        Overall::Warning => ("com avisos", "warning"),
        Overall::Irregular => ("irregular", "irregular"),
    }
}

fn verdict(view: &RecordView, ctx: &Context) -> Markup {
    let decoded = view.verdict();
    html! {
        section #veredito aria-labelledby="titulo-veredito" {
            h2 #titulo-veredito { "Veredito que o fiscal viu" }
            @match decoded {
                Err(e) => { p .erro role="alert" { "Veredito ilegível: " (e.to_string()) } }
                Ok(None) => { p #sem-veredito { "O registro não traz veredito do dispositivo." } }
                Ok(Some(v)) => {
                    @let (label, class) = overall_label(v.overall);
                    p { "Resultado: " span #veredito-resultado .etiqueta .(class) { (label) } }
                    dl .dados {
                        dt { "Consulta em" }
                        dd #veredito-hora { (local_time(v.checked_at)) }
                        dt { "Versão do cadastro" }
                        dd #veredito-versao {
                            "versão " (v.registry.version)
                            @if ctx.registry.version != v.registry.version {
                                " (hoje: versão " (ctx.registry.version) ")"
                            } @else { " (a atual)" }
                        }
                        dt { "Idade do cadastro no dispositivo" }
                        dd #veredito-idade {
                            @match v.registry.age_seconds {
                                Some(s) => {
                                    (age_text(s))
                                    @if let Some(r) = v.registry.refreshed_at { " (atualizado em " (local_time(r)) ")" }
                                }
                                None => { "desconhecida" }
                            }
                        }
                    }
                    @if v.findings.is_empty() {
                        p { "Sem achados." }
                    } @else {
                        table #tabela-achados {
                            thead { tr {
                                th scope="col" { "Regra" }
                                th scope="col" { "Artigo" }
                                th scope="col" { "Achado" }
                            } }
                            tbody {
                                @for f in &v.findings {
                                    tr {
                                        th scope="row" {
                                            (f.rule_id) " "
                                            @match f.severity {
                                                Severity::Irregular => span .etiqueta.irregular { "irregular" },
                                                Severity::Warning => span .etiqueta.warning { "aviso" },
                                                Severity::Info => span .etiqueta { "informação" },
                                            }
                                        }
                                        td {
                                            (f.citation)
                                            @if !f.wording_verified { br; span .dica { "redação em vigor não verificada" } }
                                        }
                                        td { (f.message) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn photos(view: &RecordView, ctx: &Context) -> Markup {
    html! {
        section #fotos aria-labelledby="titulo-fotos" {
            h2 #titulo-fotos { "Fotos (" (view.photos.len()) ")" }
            @if view.photos.is_empty() {
                p { "Nenhuma foto." }
            } @else {
                p .dica .nao-imprimir { "Miniaturas: clique numa foto para abri-la em tamanho original." }
                (super::evidence::gallery("foto", "do registro", &view.photos, &ctx.photos_present))
            }
        }
    }
}

/// `witnesses[0].statement` → `witnesses-0-statement`.
fn slug(field: &str) -> String {
    let mut out = String::new();
    for c in field.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

fn value_hash(v: &Value) -> String {
    payload_hash(v.to_string().as_bytes())
}

fn conflicts(user: &WebUser, id: &str, view: &RecordView, ctx: &Context) -> Markup {
    html! {
        section #conflitos aria-labelledby="titulo-conflitos" {
            h2 #titulo-conflitos { "Conflitos (" (view.conflicts.len()) ")" }
            @if view.conflicts.is_empty() {
                p { "Nenhum campo com valores concorrentes." }
            }
            @for c in &view.conflicts {
                (conflict(user, id, c, ctx))
            }
        }
    }
}

fn conflict(user: &WebUser, id: &str, c: &FieldConflict, ctx: &Context) -> Markup {
    let s = slug(&c.field);
    html! {
        div id={ "conflito-" (s) } {
            h3 { "Valores concorrentes: " (field_label_pt(&c.field)) }
            p .dica { "Dois dispositivos escreveram valores diferentes sem se ver. Escolha o valor que vale; a escolha fica registrada como evento." }
            div .lado-a-lado {
                @for (i, v) in c.values.iter().enumerate() {
                    @let device = v.device_id.as_ref().and_then(|u| ctx.device_of_uuid(u));
                    div .valor {
                        h4 { "Valor " (i + 1) }
                        @match &v.value {
                            Value::String(t) => { pre { (t) } }
                            other => { pre { (serde_json::to_string_pretty(other).unwrap_or_default()) } }
                        }
                        p .dica {
                            @match device {
                                Some(d) => {
                                    "Escrito por " (ctx.user_name(&d.user_id)) " no " (d.label)
                                    @if let Some(at) = ctx.audit.iter().rev().find(|a| a.device_id.as_deref() == Some(d.id.as_str())).map(|a| a.at.clone()) {
                                        "; última sincronização desse dispositivo neste registro: " (audit_time(&at))
                                    }
                                }
                                None => { "Escrito por um dispositivo que não está registrado neste servidor" }
                            }
                        }
                        @if user.may_decide() {
                            (post_form(user, &format!("/escritorio/registros/{id}/conflito"), &format!("form-conflito-{s}-{}", i + 1), html! {
                                input type="hidden" name="campo" value=(c.field);
                                input type="hidden" name="valor" value=(value_hash(&v.value));
                                button type="submit" id={ "conflito-" (s) "-escolher-" (i + 1) } { "Manter o valor " (i + 1) }
                            }))
                        }
                    }
                }
            }
        }
    }
}

fn audit_time(at: &str) -> String {
    DateTime::parse_from_rfc3339(at)
        .map(|t| local_time(t.with_timezone(&Utc)))
        .unwrap_or_else(|_| at.to_owned())
}

fn duplicates(user: &WebUser, id: &str, ctx: &Context) -> Markup {
    html! {
        section #duplicatas aria-labelledby="titulo-duplicatas" {
            h2 #titulo-duplicatas { "Possíveis duplicatas (" (ctx.duplicates.len()) ")" }
            @if ctx.duplicates.is_empty() {
                p { "Nenhum registro parece ser a mesma ocorrência." }
            } @else {
                p .dica {
                    "Mesma placa, de outro dispositivo, até " (office::DUPLICATE_WINDOW_MINUTES)
                    " minutos e " (office::DUPLICATE_RADIUS_M) " m de distância. "
                    "Juntar: o outro registro passa a ser duplicata deste (continua guardado, nada é apagado). "
                    "Manter separados: não será proposto de novo."
                }
                ul {
                    @for p in &ctx.duplicate_reasons { li { (p.reason) } }
                }
                table #tabela-duplicatas {
                    thead { tr {
                        th scope="col" { "Registro" }
                        th scope="col" { "Ocorrência" }
                        th scope="col" { "Autor" }
                        th scope="col" { "Situação" }
                        th scope="col" { "Ação" }
                    } }
                    tbody {
                        @for d in &ctx.duplicates {
                            @let r = &d.row;
                            tr id={ "duplicata-" (r.id) } {
                                th scope="row" { a href={ "/escritorio/registros/" (r.id) } { (r.number.as_deref().unwrap_or("(sem número)")) } }
                                td { (local_time(r.occurred_at)) }
                                td { (ctx.user_name(&r.author_user_id)) }
                                td { (d.status_label) }
                                td {
                                    @if user.may_decide() {
                                        (post_form(user, &format!("/escritorio/registros/{id}/duplicata"), &format!("form-juntar-{}", r.id), html! {
                                            input type="hidden" name="outro" value=(r.id);
                                            input type="hidden" name="decisao" value="juntar";
                                            button type="submit" id={ "juntar-" (r.id) } { "Juntar " (r.number.as_deref().unwrap_or("o outro")) " a este registro" }
                                        }))
                                        (post_form(user, &format!("/escritorio/registros/{id}/duplicata"), &format!("form-separar-{}", r.id), html! {
                                            input type="hidden" name="outro" value=(r.id);
                                            input type="hidden" name="decisao" value="separar";
                                            button type="submit" .secundario id={ "separar-" (r.id) } { "Manter separados" }
                                        }))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn outcome_options() -> Vec<(String, String)> {
    vec![
        ("mantida".into(), "penalidade mantida".into()),
        (
            "reformada".into(),
            "penalidade substituída pela indicada".into(),
        ),
        ("cancelada".into(), "penalidade cancelada".into()),
    ]
}

/// The ways a ciência is given. A signature is the notification's; the auto's own signature
/// is offered only when the auto was signed on the spot.
fn method_options(view: &RecordView) -> Vec<(String, String)> {
    let mut options = vec![("assinatura".into(), "assinatura da notificação".into())];
    if matches!(view.signature, Some(Signature::Signed { .. })) {
        options.push((
            "assinatura-auto".into(),
            "assinatura no auto, no ato da autuação".into(),
        ));
    }
    options.push((
        "ar".into(),
        "aviso de recebimento (AR) da notificação, pelos Correios".into(),
    ));
    options.push(("publicacao".into(), "publicação oficial".into()));
    options
}

/// The record's notifications, for the ciência's select: the newest first.
fn notification_options(ctx: &Context) -> Vec<(String, String)> {
    let mut options = vec![(String::new(), "(nenhuma: publicação oficial)".to_owned())];
    for n in ctx.notifications.iter().rev() {
        options.push((
            n.number.clone(),
            format!("{} — {}", n.number, n.content.addressee.name),
        ));
    }
    options
}

/// Whom a notification can be generated for: everyone charged, or one of them.
fn addressee_options(ctx: &Context) -> Vec<(String, String)> {
    let mut options = vec![(String::new(), "todos os que respondem".to_owned())];
    for c in &ctx.case.charged {
        options.push((
            c.person.clone(),
            format!(
                "{} — {}",
                c.name.as_deref().unwrap_or("pessoa identificada no auto"),
                c.role
            ),
        ));
    }
    options
}

/// The notifications generated, with their PDFs.
fn notifications_section(user: &WebUser, id: &str, ctx: &Context, retry: Option<&Retry>) -> Markup {
    let action = format!("/escritorio/registros/{id}/evento");
    html! {
        h3 { "Notificação de penalidade" }
        @if ctx.notifications.is_empty() {
            p #sem-notificacoes { "Nenhuma notificação gerada." }
        } @else {
            table #tabela-notificacoes {
                thead { tr {
                    th scope="col" { "Número" }
                    th scope="col" { "Notificado" }
                    th scope="col" { "Gerada em" }
                    th scope="col" { "Código de verificação" }
                    th scope="col" { "Documento" }
                } }
                tbody {
                    @for n in &ctx.notifications {
                        tr id={ "notificacao-" (n.number) } {
                            th scope="row" { (n.number) }
                            td { (n.content.addressee.name) " (" (n.content.addressee.role) ")" }
                            td { (local_time(n.created_at)) }
                            td { code { (n.code) } }
                            td { a href={ "/escritorio/notificacoes/" (n.id) "/pdf" } id={ "pdf-" (n.number) } { "PDF" } }
                        }
                    }
                }
            }
        }
        @if user.may_decide() && office::notices::can_notify(&ctx.case.record) {
            (post_form(user, &action, "form-notificacao", html! {
                input type="hidden" name="acao" value="notificar";
                fieldset .linha-form { legend { "Gerar notificação da decisão em vigor" }
                    (select_field("notificacao-pessoa", "pessoa", "Para", &addressee_options(ctx), Retry::value(retry, "notificar", |f| &f.pessoa)))
                    (submit("gerar-notificacao", "Gerar notificação"))
                }
                p .dica { "Uma por pessoa que responde (art. 32, § 2º): o condutor e, para um auxiliar, o titular. A notificação traz a decisão, o valor em vigor da multa, os prazos dos arts. 33 a 35 e um código que qualquer pessoa confere em /verificar." }
            }))
        }
    }
}

/// The penalty most recently proposed on the record, if any.
fn last_proposed(view: &RecordView) -> Option<PenaltyKind> {
    view.events.iter().rev().find_map(|e| match &e.event {
        EventKind::PenaltyProposed { penalty } if e.valid => Some(*penalty),
        _ => None,
    })
}

fn decision(user: &WebUser, id: &str, ctx: &Context, retry: Option<&Retry>) -> Markup {
    let case = &ctx.case;
    let view = &case.record;
    let today_date = ctx.today;
    let today = today_date.format("%Y-%m-%d").to_string();
    let year = today_date.year();
    let fine = sync_core::rules::penalty::fine_amount(today_date, &ctx.registry.law().ipca);
    let fines: Vec<_> = view
        .permit_number
        .as_ref()
        .map(|p| {
            ctx.registry
                .fines
                .iter()
                .filter(|x| &x.permit_number == p)
                .collect()
        })
        .unwrap_or_default();
    let system = case.proposal.as_ref().map(|p| penalty_value(&p.penalty));
    let proposed = last_proposed(view).map(|p| penalty_value(&p));
    let default_proposal = system.clone().unwrap_or_default();
    let default_decision = proposed.clone().or(system.clone()).unwrap_or_default();
    let current_penalty = view.penalty.as_ref().map(penalty_value).unwrap_or_default();
    let rules_now = case
        .classification
        .iter()
        .map(|b| b.rule_id.clone())
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        section #decisao aria-labelledby="titulo-decisao" {
            h2 #titulo-decisao { "Decisão" }
            h3 { "Classificação" }
            p #classificacao {
                @if case.classified_by_office { "Classificado pela Unidade: " } @else { "Fundamento do autor (ainda não classificado pela Unidade): " }
                @if case.classification.is_empty() { "nenhuma regra." }
                @for (i, b) in case.classification.iter().enumerate() {
                    @if i > 0 { "; " }
                    strong { (b.rule_id) } " — " (b.citation)
                }
            }
            @if let Some(p) = &case.permit {
                p #alvara-situacao {
                    "Alvará " (p.number) " — titular " (p.holder_name.as_deref().unwrap_or(&p.holder_id))
                    ", ponto " (p.stand_name.as_deref().unwrap_or(&p.stand_id)) ": " strong { (p.state_label) } "."
                }
            }
            h3 { "Histórico de penalidades do alvará" }
            @if view.permit_number.is_none() {
                p #historico-penalidades { "O registro não indica alvará." }
            } @else if case.history.is_empty() && fines.is_empty() {
                p #historico-penalidades { "Nenhuma penalidade ou multa no cadastro para o alvará " (view.permit_number.as_deref().unwrap_or("")) "." }
            } @else {
                table #historico-penalidades {
                    thead { tr {
                        th scope="col" { "Penalidade" }
                        th scope="col" { "Decidida em" }
                        th scope="col" { "Vigência" }
                        th scope="col" { "Registro de origem" }
                    } }
                    tbody {
                        @for h in &case.history {
                            tr {
                                th scope="row" { (h.label) @if h.this_record { " (este registro)" } }
                                td { (date_br(h.decided_on)) }
                                td { "desde " (date_br(h.starts_on)) @if let Some(u) = h.until { " até " (date_br(u)) } }
                                td { @if let Some(r) = &h.record_id { a href={ "/escritorio/registros/" (r) } { (ctx.record_name(r)) } } @else { "—" } }
                            }
                        }
                        @for f in &fines {
                            tr {
                                th scope="row" { "multa " (money(f.amount)) }
                                td { (date_br(f.issued_on)) }
                                td { @match f.paid_on { Some(d) => { "paga em " (date_br(d)) } None => { strong { "não paga" } " (bloqueia a renovação, art. 17, § 2º, III)" } } }
                                td { "—" }
                            }
                        }
                    }
                }
            }
            p #valor-multa {
                @match &fine {
                    Ok(c) => { "Multa do art. 32, II em vigor em " (year) ": " strong { (money(c.amount)) } " (R$ 240,00 de 2004 corrigidos pelo IPCA, fator " (c.factor.round_dp(6)) ")." }
                    Err(e) => { "Valor da multa em " (year) " indisponível: " (e.to_string()) }
                }
            }
            // The system's proposal helps until the penalty is decided; after it, noise.
            @if matches!(view.status, Status::Issued | Status::ForwardedToOffice | Status::SettledByCoordinator | Status::UnderReview | Status::PenaltyProposed) {
            div #proposta-sistema {
                h3 { "Proposta do sistema" }
                @match &case.proposal {
                    Some(p) => {
                        p { "Proposta: " strong #proposta-penalidade-sistema { (p.label) } " (" (p.citation) ")"
                            @if let Some(f) = &p.fine { ", " (money(f.amount)) }
                            @if !p.wording_verified { " — " span .etiqueta.warning { "redação em vigor não verificada" } }
                        }
                        ul #proposta-razoes { @for r in &p.reasons { li { (r) } } }
                    }
                    None => { p { (case.proposal_unavailable.as_deref().unwrap_or("Sem proposta.")) } }
                }
                p .dica { "A penalidade é graduada pela Unidade conforme a gravidade (art. 32, § 1º): o sistema propõe, a Unidade decide." }
            }
            }
            @if let Some(d) = &case.decision {
                p #decisao-vigente {
                    "Decisão em vigor: " strong { (d.label) } " (" (d.citation) "), decidida em " (date_br(d.decided_on))
                    @if let Some(u) = d.until { ", até " (date_br(u)) }
                    @if let Some(a) = d.fine_amount { ", valor " (money(a)) }
                    "."
                    @if let Some(pid) = &case.registry_effects.penalty_id { " No cadastro: " (pid) "." }
                }
            }
            (notifications_section(user, id, ctx, retry))
            h3 { "Ciência e prazo de recurso" }
            @match (case.appeal.notified_on, case.appeal.deadline) {
                (Some(on), Some(d)) => {
                    p #prazo-recurso {
                        "Ciência em " (date_br(on)) ". Prazo para recurso (art. 35: 10 dias, prorrogado ao próximo dia útil): "
                        strong #prazo-recurso-data { (date_br(d)) }
                        @if case.appeal.appeal_filed {
                            " — recurso interposto."
                        } @else if d >= today_date {
                            " — " (if (d - today_date).num_days() == 1 { "falta 1 dia".to_owned() } else { format!("faltam {} dias", (d - today_date).num_days()) }) "."
                        } @else {
                            " — prazo encerrado."
                        }
                    }
                }
                (Some(on), None) => { p #prazo-recurso { "Ciência em " (date_br(on)) "; prazo não calculável." } }
                (None, _) => { p #prazo-recurso { "Sem ciência registrada: o prazo de recurso ainda não corre." } }
            }
        }
        (next_step(user, id, ctx, retry, &StepDefaults { today, default_proposal, default_decision, current_penalty, rules_now }))
    }
}

/// The values the forms of the next step start with (a retried form keeps what was typed).
struct StepDefaults {
    today: String,
    default_proposal: String,
    default_decision: String,
    current_penalty: String,
    rules_now: String,
}

/// The form an action posts from, and the step of the procedure it records (`None`: not a step
/// of the procedure).
fn step_of_acao(acao: &str) -> Option<StepKind> {
    Some(match acao {
        "analisar" => StepKind::Review,
        "propor" => StepKind::Propose,
        "decidir" => StepKind::Decide,
        "ciencia" => StepKind::Notify,
        "reconsideracao" => StepKind::FileReconsideration,
        "decisao-reconsideracao" => StepKind::DecideReconsideration,
        "recurso" => StepKind::FileAppeal,
        "decisao-recurso" => StepKind::DecideAppeal,
        _ => return None,
    })
}

/// "Próximo passo": only the forms of the steps the law allows now (the law kernel's
/// `Procedure::next_steps` through `records::office_next`), and, secondary, annulment and
/// archiving where the state machine allows them. A refused form is shown again with what was
/// typed even when it is not a next step, so the clerk sees what was refused.
fn next_step(
    user: &WebUser,
    id: &str,
    ctx: &Context,
    retry: Option<&Retry>,
    d: &StepDefaults,
) -> Markup {
    let view = &ctx.case.record;
    let next = office_next(view, ctx.today);
    let action = format!("/escritorio/registros/{id}/evento");
    let v = |acao: &str, f: fn(&ActionForm) -> &str| Retry::value(retry, acao, f).to_owned();
    let retried = retry.map(|r| r.acao.as_str()).unwrap_or("");
    let shows = |kind: StepKind| {
        next.steps.iter().any(|s| s.kind == kind) || step_of_acao(retried) == Some(kind)
    };
    let until = |kind: StepKind| {
        next.steps
            .iter()
            .find(|s| s.kind == kind)
            .and_then(|s| s.until)
    };
    let classify = next.classify || retried == "classificar";
    let annul = next.annul || retried == "anular";
    let archive = next.archive || retried == "arquivar";
    let nothing = !StepKind::ALL.into_iter().any(shows) && !classify;
    html! {
        section #proximo-passo aria-labelledby="titulo-proximo-passo" {
            h2 #titulo-proximo-passo { "Próximo passo" }
            @if !user.may_decide() {
                p #somente-leitura .alerta { "Seu perfil pode consultar, mas só a Unidade de Transportes registra análises e decisões." }
            } @else {
                @if nothing {
                    p #sem-proximo-passo {
                        "Nenhum passo do processo cabe agora (situação: " (view.status.label_pt()) ")."
                        @if view.kind == RecordKind::Transgression && view.status == Status::Issued {
                            " A comunicação chega à Unidade quando o coordenador a encaminha (art. 17, § 2º)."
                        }
                    }
                }
                @if shows(StepKind::Review) {
                    (post_form(user, &action, "form-analise", html! {
                        input type="hidden" name="acao" value="analisar";
                        fieldset { legend { "Análise" }
                            (textarea_field("analise-nota", "nota", "Observação da análise (opcional)", &v("analisar", |f| &f.nota), false))
                            (submit("analisar", "Registrar análise"))
                        }
                    }))
                }
                @if classify {
                    (post_form(user, &action, "form-classificacao", html! {
                        input type="hidden" name="acao" value="classificar";
                        fieldset .linha-form { legend { "Classificação (regras do catálogo)" }
                            (text_field("classificacao-regras", "regras", "Regras, separadas por vírgula (ex.: R24, R31)", &or(v("classificar", |f| &f.regras), &d.rules_now), true))
                            (submit("classificar", "Classificar"))
                        }
                    }))
                }
                @if shows(StepKind::Propose) {
                    (post_form(user, &action, "form-proposta", html! {
                        input type="hidden" name="acao" value="propor";
                        fieldset .linha-form { legend { "Proposta de penalidade (art. 32)" }
                            (select_field("proposta-penalidade", "penalidade", "Penalidade proposta", &penalty_options(), &or(v("propor", |f| &f.penalidade), &d.default_proposal)))
                            (submit("propor", "Registrar proposta"))
                        }
                    }))
                }
                @if shows(StepKind::Decide) {
                    (post_form(user, &action, "form-decisao", html! {
                        input type="hidden" name="acao" value="decidir";
                        fieldset .linha-form { legend { "Decisão da penalidade (art. 32)" }
                            (select_field("decisao-penalidade", "penalidade", "Penalidade decidida", &penalty_options(), &or(v("decidir", |f| &f.penalidade), &d.default_decision)))
                            (submit("decidir", "Decidir penalidade"))
                        }
                        p .dica { "Antes de gravar, a página mostra o que muda no cadastro (suspensão, multa ou cassação) e pede confirmação; os dispositivos recebem a mudança na próxima sincronização." }
                    }))
                }
                @if shows(StepKind::Notify) {
                    (post_form(user, &action, "form-ciencia", html! {
                        input type="hidden" name="acao" value="ciencia";
                        fieldset .linha-form { legend { "Ciência da decisão" }
                            (date_field("ciencia-data", "data", "Data da ciência", &or(v("ciencia", |f| &f.data), &d.today), true))
                            (select_field("ciencia-meio", "meio", "Meio", &method_options(view), &v("ciencia", |f| &f.meio)))
                            (select_field("ciencia-notificacao", "notificacao", "Notificação assinada ou entregue", &notification_options(ctx), &or(v("ciencia", |f| &f.notificacao), ctx.notifications.last().map_or("", |n| n.number.as_str()))))
                            (submit("registrar-ciencia", "Registrar ciência"))
                        }
                    }))
                }
                @if shows(StepKind::FileReconsideration) {
                    (post_form(user, &action, "form-reconsideracao", html! {
                        input type="hidden" name="acao" value="reconsideracao";
                        fieldset .linha-form { legend { "Pedido de reconsideração (art. 34)" }
                            (date_field("reconsideracao-data", "data", "Data do pedido", &or(v("reconsideracao", |f| &f.data), &d.today), true))
                            (submit("pedir-reconsideracao", "Registrar pedido de reconsideração"))
                        }
                    }))
                }
                @if shows(StepKind::DecideReconsideration) {
                    (post_form(user, &action, "form-decisao-reconsideracao", html! {
                        input type="hidden" name="acao" value="decisao-reconsideracao";
                        fieldset .linha-form { legend { "Decisão da reconsideração (art. 34)" }
                            (select_field("reconsideracao-resultado", "resultado", "Resultado", &outcome_options(), &v("decisao-reconsideracao", |f| &f.resultado)))
                            (select_field("reconsideracao-penalidade", "penalidade", "Nova penalidade (se substituída)", &penalty_options(), &or(v("decisao-reconsideracao", |f| &f.penalidade), &d.current_penalty)))
                            (submit("decidir-reconsideracao", "Registrar decisão da reconsideração"))
                        }
                    }))
                }
                @if shows(StepKind::FileAppeal) {
                    (post_form(user, &action, "form-recurso", html! {
                        input type="hidden" name="acao" value="recurso";
                        fieldset .linha-form { legend { "Recurso ao Prefeito (art. 33)" }
                            (date_field("recurso-data", "data", "Data do protocolo do recurso", &or(v("recurso", |f| &f.data), &d.today), true))
                            (submit("interpor-recurso", "Registrar recurso"))
                        }
                        @if let Some(u) = until(StepKind::FileAppeal) {
                            p .dica #recurso-prazo {
                                @if u < ctx.today {
                                    "O prazo terminou em " (date_br(u)) ": só um recurso protocolado até essa data pode ser registrado (art. 35)."
                                } @else {
                                    "Cabe recurso protocolado até " (date_br(u)) " (art. 35)."
                                }
                            }
                        }
                    }))
                }
                @if shows(StepKind::DecideAppeal) {
                    (post_form(user, &action, "form-decisao-recurso", html! {
                        input type="hidden" name="acao" value="decisao-recurso";
                        fieldset .linha-form { legend { "Decisão do recurso (art. 33)" }
                            (select_field("recurso-resultado", "resultado", "Resultado", &outcome_options(), &v("decisao-recurso", |f| &f.resultado)))
                            (select_field("recurso-penalidade", "penalidade", "Nova penalidade (se substituída)", &penalty_options(), &or(v("decisao-recurso", |f| &f.penalidade), &d.current_penalty)))
                            (submit("decidir-recurso", "Registrar decisão do recurso"))
                        }
                    }))
                }
                @if annul || archive {
                    // Secondary: closing the record is not the next step of the procedure.
                    details #encerramento .secundario open[matches!(retried, "anular" | "arquivar")] {
                        summary { "Anular ou arquivar o registro" }
                        @if annul {
                            (post_form(user, &action, "form-anulacao", html! {
                                input type="hidden" name="acao" value="anular";
                                fieldset { legend { "Anulação" }
                                    (textarea_field("anulacao-motivo", "motivo", "Motivo da anulação", &v("anular", |f| &f.motivo), true))
                                    button type="submit" .perigo id="anular" { "Anular registro" }
                                }
                            }))
                        }
                        @if archive {
                            (post_form(user, &action, "form-arquivamento", html! {
                                input type="hidden" name="acao" value="arquivar";
                                (submit("arquivar", "Arquivar registro"))
                            }))
                        }
                    }
                }
            }
        }
    }
}

fn or(v: String, default: &str) -> String {
    if v.is_empty() { default.to_owned() } else { v }
}

/// The date the law reads for an event: the one written in it (a ciência, a filing), else the
/// local date it was recorded on.
fn step_date(e: &sync_core::records::EventView) -> NaiveDate {
    match &e.event {
        EventKind::Notified { on, .. }
        | EventKind::ReconsiderationFiled { on }
        | EventKind::AppealFiled { on } => *on,
        _ => sync_core::time::local_date(e.at),
    }
}

/// What an event decided, in a sentence fragment, naming other records by their number.
fn step_detail(e: &EventKind, ctx: &Context) -> String {
    office::notices::event_detail(e, &|id| ctx.record_name(id))
}

/// "Andamento": what was done, one dated line per accepted event, oldest first.
fn procedure_timeline(view: &RecordView, ctx: &Context) -> Markup {
    html! {
        section #andamento aria-labelledby="titulo-andamento" {
            h2 #titulo-andamento { "Andamento do processo" }
            ol #linha-do-tempo .linha-do-tempo {
                @for (n, e) in view.events.iter().filter(|e| e.valid).enumerate() {
                    @let detail = step_detail(&e.event, ctx);
                    li id={ "passo-" (n + 1) } {
                        time datetime=(step_date(e).format("%Y-%m-%d").to_string()) { (date_br(step_date(e))) }
                        " — " strong { (capitalised(e.event.label_pt())) }
                        @if !detail.is_empty() { ": " (detail) }
                        " — " span .dica { (ctx.user_name(&e.by.user_id)) " (" (e.by.role.label_pt()) ")" }
                    }
                }
            }
        }
    }
}

/// Every event as stored, refused ones marked: folded away under the dated timeline, open
/// when something was refused (the clerk must see it).
fn timeline(view: &RecordView, ctx: &Context) -> Markup {
    let refused = !view.invalid_events.is_empty() || !ctx.quarantine.is_empty();
    html! {
        section #eventos aria-labelledby="titulo-eventos" {
            h2 #titulo-eventos { "Eventos" }
            details #eventos-todos open[refused] {
            summary {
                "Todos os eventos, inclusive os recusados ("
                (plural(view.events.len() + view.invalid_events.iter().filter(|i| !view.events.iter().any(|e| e.id == i.id)).count(), "evento", "eventos"))
                @if !view.invalid_events.is_empty() { ", " (plural(view.invalid_events.len(), "recusado", "recusados")) }
                ")"
            }
            table #tabela-eventos {
                thead { tr {
                    th scope="col" { "Quando" }
                    th scope="col" { "Evento" }
                    th scope="col" { "Detalhe" }
                    th scope="col" { "Por" }
                    th scope="col" { "Validade" }
                } }
                tbody {
                    @for e in &view.events {
                        @let invalid = view.invalid_events.iter().find(|i| i.id == e.id);
                        tr id={ "evento-" (e.id) } class=[(!e.valid).then_some("invalido")] {
                            td { (local_time(e.at)) }
                            th scope="row" { (e.event.label_pt()) }
                            td { (step_detail(&e.event, ctx)) }
                            td { (ctx.user_name(&e.by.user_id)) " (" (e.by.role.label_pt()) ")" }
                            td {
                                @if e.valid { "válido" } @else {
                                    span .etiqueta.invalido { "recusado" }
                                    @if let Some(i) = invalid { " " (i.reason) }
                                }
                            }
                        }
                    }
                    // Events so malformed that they could not be read as events at all.
                    @for i in view.invalid_events.iter().filter(|i| !view.events.iter().any(|e| e.id == i.id)) {
                        tr .invalido id={ "evento-" (i.id) } {
                            td { (i.at.map(local_time).unwrap_or_else(|| "—".into())) }
                            th scope="row" { (i.kind) }
                            td { "—" }
                            td { "—" }
                            td { span .etiqueta.invalido { "ilegível" } " " (i.reason) }
                        }
                    }
                }
            }
            @if !ctx.quarantine.is_empty() {
                h3 { "Alterações recusadas na sincronização" }
                table #recusas-sincronizacao {
                    thead { tr {
                        th scope="col" { "Quando" }
                        th scope="col" { "Quem" }
                        th scope="col" { "Motivo" }
                    } }
                    tbody {
                        @for q in &ctx.quarantine {
                            tr {
                                th scope="row" { (local_time(q.at)) }
                                td { (ctx.user_name(&q.user_id)) }
                                td { (q.message) }
                            }
                        }
                    }
                }
            }
            }
        }
    }
}

fn audit(ctx: &Context) -> Markup {
    html! {
        section #auditoria aria-labelledby="titulo-auditoria" {
            h2 #titulo-auditoria { "Trilha de auditoria" }
            table #tabela-auditoria {
                thead { tr {
                    th scope="col" { "Nº" }
                    th scope="col" { "Quando" }
                    th scope="col" { "Quem" }
                    th scope="col" { "Dispositivo" }
                    th scope="col" { "Ação" }
                } }
                tbody {
                    @for a in &ctx.audit {
                        tr {
                            th scope="row" { (a.seq) }
                            td { (audit_time(&a.at)) }
                            td { (a.user_id.as_deref().map(|u| ctx.user_name(u)).unwrap_or_else(|| "sistema".into())) }
                            td { (a.device_id.as_deref().map(|d| ctx.device_label(d)).unwrap_or_else(|| "—".into())) }
                            td { (crate::audit::action_label(&a.action)) }
                        }
                    }
                }
            }
        }
    }
}

// ----- actions -----------------------------------------------------------------------------

fn parse_date(s: &str, what: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s.trim(), "%d/%m/%Y"))
        .map_err(|_| format!("{what}: informe uma data válida (dia/mês/ano)."))
}

fn penalty_of(s: &str) -> Result<PenaltyKind, String> {
    parse_penalty(s).ok_or_else(|| "Escolha uma das penalidades do art. 32.".to_owned())
}

/// What a form asks the office workflow to do (parsed and checked for form errors).
#[derive(Debug, Clone, PartialEq)]
enum Action {
    Review(office::ReviewRequest),
    Classify(office::ClassifyRequest),
    Propose(office::ProposeRequest),
    Decide(office::DecideRequest),
    Notify(office::NotifyRequest),
    Notice(office::notices::NotificationRequest),
    FileReconsideration(office::FilingRequest),
    DecideReconsideration(office::RulingRequest),
    FileAppeal(office::FilingRequest),
    DecideAppeal(office::RulingRequest),
    Annul(office::AnnulRequest),
    Archive,
}

fn action_of(form: &ActionForm) -> Result<Action, String> {
    let ruling = |form: &ActionForm| -> Result<office::RulingRequest, String> {
        let outcome = match form.resultado.as_str() {
            "mantida" => Outcome::Upheld,
            "reformada" => Outcome::Modified,
            "cancelada" => Outcome::Reversed,
            _ => return Err("Escolha o resultado.".to_owned()),
        };
        let penalty = match outcome {
            Outcome::Modified => Some(penalty_of(&form.penalidade)?),
            _ => None,
        };
        Ok(office::RulingRequest { outcome, penalty })
    };
    Ok(match form.acao.as_str() {
        "analisar" => Action::Review(office::ReviewRequest {
            note: Some(form.nota.trim().to_owned()).filter(|n| !n.is_empty()),
        }),
        "classificar" => {
            let rule_ids: Vec<String> = form
                .regras
                .split([',', ';', ' '])
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect();
            if rule_ids.is_empty() {
                return Err("Indique ao menos uma regra do catálogo (ex.: R24).".into());
            }
            Action::Classify(office::ClassifyRequest { rule_ids })
        }
        "propor" => Action::Propose(office::ProposeRequest {
            penalty: Some(penalty_of(&form.penalidade)?),
        }),
        "decidir" => Action::Decide(office::DecideRequest {
            penalty: penalty_of(&form.penalidade)?,
        }),
        "ciencia" => {
            let on = parse_date(&form.data, "Data da ciência")?;
            let number = Some(form.notificacao.trim().to_owned()).filter(|n| !n.is_empty());
            let (method, notification) = match form.meio.as_str() {
                "assinatura" => (NotificationMethod::PersonalSignature, number),
                // The auto signed on the spot: no notification to name.
                "assinatura-auto" => (NotificationMethod::PersonalSignature, None),
                "ar" => (NotificationMethod::PostalReceipt, number),
                "publicacao" => (NotificationMethod::Publication, None),
                _ => return Err("Escolha o meio da ciência.".into()),
            };
            Action::Notify(office::NotifyRequest {
                method,
                on,
                notification,
            })
        }
        "notificar" => Action::Notice(office::notices::NotificationRequest {
            person: Some(form.pessoa.trim().to_owned()).filter(|p| !p.is_empty()),
        }),
        "reconsideracao" => Action::FileReconsideration(office::FilingRequest {
            on: parse_date(&form.data, "Data do pedido")?,
        }),
        "recurso" => Action::FileAppeal(office::FilingRequest {
            on: parse_date(&form.data, "Data do recurso")?,
        }),
        "decisao-reconsideracao" => Action::DecideReconsideration(ruling(form)?),
        "decisao-recurso" => Action::DecideAppeal(ruling(form)?),
        "anular" => {
            let reason = form.motivo.trim();
            if reason.is_empty() {
                return Err("Informe o motivo da anulação.".into());
            }
            Action::Annul(office::AnnulRequest {
                reason: reason.to_owned(),
            })
        }
        "arquivar" => Action::Archive,
        _ => return Err("Ação desconhecida.".into()),
    })
}

/// Runs an action; its confirmation for people.
async fn run(
    state: &AppState,
    user: &WebUser,
    id: &str,
    action: Action,
) -> Result<String, AppError> {
    let auth = &user.auth;
    let (result, done) = match action {
        Action::Notice(r) => {
            let generated = office::notices::generate(state.services(), auth, id, r).await?;
            let numbers: Vec<&str> = generated
                .notifications
                .iter()
                .map(|n| n.number.as_str())
                .collect();
            return Ok(if numbers.len() == 1 {
                format!("Notificação {} gerada.", numbers[0])
            } else {
                format!("Notificações {} geradas.", numbers.join(", "))
            });
        }
        Action::Review(r) => (
            office::review(state.services(), auth, id, r).await?,
            "Análise registrada.",
        ),
        Action::Classify(r) => (
            office::classify(state.services(), auth, id, r).await?,
            "Classificação registrada.",
        ),
        Action::Propose(r) => (
            office::propose(state.services(), auth, id, r).await?,
            "Proposta de penalidade registrada.",
        ),
        Action::Decide(r) => (
            office::decide(state.services(), auth, id, r).await?,
            "Penalidade decidida.",
        ),
        Action::Notify(r) => (
            office::notify(state.services(), auth, id, r).await?,
            "Ciência registrada.",
        ),
        Action::FileReconsideration(r) => (
            office::file_reconsideration(state.services(), auth, id, r).await?,
            "Pedido de reconsideração registrado.",
        ),
        Action::DecideReconsideration(r) => (
            office::decide_reconsideration(state.services(), auth, id, r).await?,
            "Decisão da reconsideração registrada.",
        ),
        Action::FileAppeal(r) => (
            office::file_appeal(state.services(), auth, id, r).await?,
            "Recurso registrado.",
        ),
        Action::DecideAppeal(r) => (
            office::decide_appeal(state.services(), auth, id, r).await?,
            "Decisão do recurso registrada.",
        ),
        Action::Annul(r) => (
            office::annul(state.services(), auth, id, r).await?,
            "Registro anulado.",
        ),
        Action::Archive => (
            office::archive(state.services(), auth, id).await?,
            "Registro arquivado.",
        ),
    };
    let mut message = done.to_owned();
    if let Some(text) = &result.case.appeal.deadline_text
        && done == "Ciência registrada."
    {
        message.push_str(&format!(" {}.", capitalised(text)));
    }
    if let Some(r) = result.registry {
        message.push_str(&format!(
            " Cadastro atualizado (versão {}): os dispositivos recebem na próxima sincronização.",
            r.version
        ));
    }
    Ok(message)
}

/// The outcome of an action: a redirect with the confirmation, or the page again (422) with
/// the refusal and what was typed. Errors that are not refusals (no such record, a role that
/// may not act, a failure of the server) are pages of their own.
async fn finish(
    state: &AppState,
    user: &WebUser,
    id: &str,
    outcome: Result<String, AppError>,
    acao: &str,
    form: ActionForm,
) -> Result<Response, PageError> {
    match outcome {
        Ok(done) => {
            user.flash(true, done).await;
            Ok(see_other(&format!("/escritorio/registros/{id}")))
        }
        Err(e) if e.status == StatusCode::FORBIDDEN => Err(PageError::forbidden(user, e.message)),
        Err(e) if e.status.is_client_error() && e.status != StatusCode::NOT_FOUND => {
            let retry = Retry {
                acao: acao.to_owned(),
                message: e.message,
                form,
            };
            let markup = render(state, user, id, Some(retry)).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, markup).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// A form error, as the workflow would refuse it.
fn form_error(message: String) -> AppError {
    AppError::unprocessable("invalid_form", message)
}

async fn post_event(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<ActionForm>,
) -> Result<Response, PageError> {
    if !user.may_decide() {
        return Err(PageError::forbidden(
            &user,
            "Só a Unidade de Transportes registra análises e decisões.",
        ));
    }
    let outcome = match action_of(&form) {
        Err(problem) => Err(form_error(problem)),
        Ok(action) => match effect_event(&action) {
            None => run(&state, &user, &id, action).await,
            Some(event) => match confirm_first(&state, &user, &id, &form, event).await {
                Ok(Some(page)) => return Ok(page.into_response()),
                Ok(None) => run(&state, &user, &id, action).await,
                Err(e) => Err(e),
            },
        },
    };
    let acao = form.acao.clone();
    finish(&state, &user, &id, outcome, &acao, form).await
}

/// The event of an action that may change the registry (a decision, a ruling, an annulment):
/// the office sees and confirms that change before it is stored.
fn effect_event(action: &Action) -> Option<Result<EventKind, ServiceError>> {
    match action {
        Action::Decide(r) => Some(office::decision_event(r)),
        Action::DecideReconsideration(r) => Some(office::reconsideration_ruling_event(r)),
        Action::DecideAppeal(r) => Some(office::appeal_ruling_event(r)),
        Action::Annul(r) => Some(office::annulment_event(r)),
        _ => None,
    }
}

/// Binds a confirmation to the record as it stood (its heads), the registry version and the
/// values confirmed: a confirmation shown before someone else changed either, or for other
/// values, is not a confirmation of what would now be stored.
fn confirmation_token(id: &str, heads: &[String], registry_version: u64, f: &ActionForm) -> String {
    let text = serde_json::json!([
        id,
        heads,
        registry_version,
        f.acao,
        f.penalidade,
        f.resultado,
        f.motivo
    ])
    .to_string();
    payload_hash(text.as_bytes())
}

/// `Ok(None)`: store the action now (confirmed for exactly this state, or it changes nothing
/// in the registry). `Ok(Some(page))`: the confirmation page, with what would change in the
/// registry computed by the write's own effect code (a dry run: nothing is stored).
async fn confirm_first(
    state: &AppState,
    user: &WebUser,
    id: &str,
    form: &ActionForm,
    event: Result<EventKind, ServiceError>,
) -> Result<Option<Markup>, AppError> {
    let event = event?;
    let doc = state
        .store()
        .record(id.to_owned())
        .await?
        .ok_or_else(|| AppError::not_found("Registro não encontrado."))?;
    let registry = state.store().registry().await?;
    let token = confirmation_token(id, &doc.heads, registry.version, form);
    let confirmed = !form.confirmacao.is_empty();
    if confirmed && form.confirmacao == token {
        return Ok(None);
    }
    let changes = office::preview_effect(state.services(), &user.auth, id, event.clone()).await?;
    if changes.is_empty() {
        return Ok(None);
    }
    let name = record_name(&doc.row.kind, doc.row.number.as_deref());
    Ok(Some(confirmation_page(
        user,
        id,
        &name,
        &event,
        &changes,
        form,
        &token,
        state.clock().today(),
        confirmed,
    )))
}

/// One registry change as a sentence.
fn change_sentence(c: &EffectChange) -> String {
    match c {
        EffectChange::Suspended {
            permit,
            from,
            until,
        } => match until {
            Some(u) => format!(
                "O alvará {permit} ficará suspenso de {} a {}.",
                date_br(*from),
                date_br(*u)
            ),
            None => format!(
                "O alvará {permit} ficará suspenso a partir de {}.",
                date_br(*from)
            ),
        },
        EffectChange::Warning { permit, on } => format!(
            "A advertência escrita entra no histórico do alvará {permit} em {}.",
            date_br(*on)
        ),
        EffectChange::FineIssued {
            permit,
            fine_id,
            amount,
            on,
        } => format!(
            "Multa de {} lançada ao alvará {permit} em {} ({fine_id}); enquanto não for paga, \
             impede a renovação do alvará (art. 17, § 2º, III).",
            money(*amount),
            date_br(*on)
        ),
        EffectChange::Revoked { permit, on } => format!(
            "O alvará {permit} ficará cassado a partir de {}, e sua vaga no ponto se abre.",
            date_br(*on)
        ),
        EffectChange::PenaltyLifted {
            permit,
            penalty,
            penalty_id,
        } => format!(
            "A penalidade de {} do alvará {permit} ({penalty_id}) sai do cadastro.",
            penalty_label(penalty)
        ),
        EffectChange::FineCancelled { fine_id, amount } => format!(
            "A multa {fine_id}, de {}, ainda não paga, é cancelada.",
            money(*amount)
        ),
        EffectChange::PaidFineKept { fine_id, paid_on } => format!(
            "A multa {fine_id}, paga em {}, continua no cadastro com o pagamento.",
            date_br(*paid_on)
        ),
        EffectChange::PermitRestored { permit } => {
            format!("O alvará {permit} volta a ficar ativo.")
        }
    }
}

/// The values of `form` as hidden fields, so a second post carries exactly what was typed.
fn hidden_values(form: &ActionForm) -> Markup {
    html! {
        input type="hidden" name="acao" value=(form.acao);
        input type="hidden" name="penalidade" value=(form.penalidade);
        input type="hidden" name="resultado" value=(form.resultado);
        input type="hidden" name="motivo" value=(form.motivo);
    }
}

#[allow(clippy::too_many_arguments)]
fn confirmation_page(
    user: &WebUser,
    id: &str,
    name: &str,
    event: &EventKind,
    changes: &[EffectChange],
    form: &ActionForm,
    token: &str,
    today: NaiveDate,
    stale: bool,
) -> Markup {
    let detail = office::notices::event_detail(event, &|_| "outro registro".to_owned());
    let body = html! {
        section #confirmacao aria-labelledby="titulo-confirmacao" {
            @if stale {
                p #confirmacao-desatualizada .alerta role="alert" {
                    "O registro ou o cadastro mudou depois que esta confirmação foi mostrada: confira de novo o que muda."
                }
            }
            p #confirmacao-ato {
                (name) " — " strong { (capitalised(event.label_pt())) }
                @if !detail.is_empty() { ": " (detail) }
                "."
            }
            h2 #titulo-confirmacao { "O que muda no cadastro" }
            ul #efeitos-cadastro {
                @for c in changes { li { (change_sentence(c)) } }
            }
            p #confirmacao-quando {
                "Vale a partir de hoje, " (date_br(today)) ", na mesma operação que grava a decisão; os dispositivos recebem a mudança na próxima sincronização."
            }
            p .dica { "Nada foi gravado ainda." }
            div .acoes {
                (post_form(user, &format!("/escritorio/registros/{id}/evento"), "form-confirmacao", html! {
                    (hidden_values(form))
                    input type="hidden" name="confirmacao" value=(token);
                    (submit("confirmar", "Confirmar"))
                }))
                (post_form(user, &format!("/escritorio/registros/{id}/corrigir"), "form-corrigir", html! {
                    (hidden_values(form))
                    button type="submit" .secundario id="voltar-corrigir" { "Voltar e corrigir" }
                }))
            }
        }
    };
    page(Some(user), &format!("Confirmar: {name}"), None, body)
}

/// "Voltar e corrigir": the record page with the values typed in the form they came from.
async fn correct(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<ActionForm>,
) -> Result<Response, PageError> {
    let retry = Retry {
        acao: form.acao.clone(),
        message: String::new(),
        form,
    };
    Ok(render(&state, &user, &id, Some(retry))
        .await?
        .into_response())
}

#[derive(Debug, Clone, Deserialize)]
struct ConflictForm {
    #[serde(default)]
    campo: String,
    #[serde(default)]
    valor: String,
}

async fn resolve_conflict(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<ConflictForm>,
) -> Result<Response, PageError> {
    if !user.may_decide() {
        return Err(PageError::forbidden(
            &user,
            "Só a Unidade de Transportes resolve conflitos.",
        ));
    }
    let doc = load(&state, &id).await?;
    let view = view_of(&doc).map_err(|e| PageError::internal(&e))?;
    let chosen = view
        .conflicts
        .iter()
        .find(|c| c.field == form.campo)
        .and_then(|c| c.values.iter().find(|v| value_hash(&v.value) == form.valor));
    let outcome = match chosen {
        None => Err(form_error(
            "Esse conflito já foi resolvido ou mudou; veja os valores atuais abaixo.".to_owned(),
        )),
        Some(v) => office::resolve_conflict(
            state.services(),
            &user.auth,
            &id,
            office::ResolveConflictRequest {
                field: form.campo.clone(),
                value: v.value.clone(),
            },
        )
        .await
        .map_err(AppError::from)
        .map(|_| format!("Conflito resolvido: {}.", field_label_pt(&form.campo))),
    };
    finish(
        &state,
        &user,
        &id,
        outcome,
        "conflito",
        ActionForm::default(),
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
struct DuplicateForm {
    #[serde(default)]
    outro: String,
    #[serde(default)]
    decisao: String,
}

async fn settle_duplicate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<DuplicateForm>,
) -> Result<Response, PageError> {
    if !user.may_decide() {
        return Err(PageError::forbidden(
            &user,
            "Só a Unidade de Transportes junta ou separa duplicatas.",
        ));
    }
    let other = form.outro.trim().to_owned();
    let outcome = match form.decisao.as_str() {
        "juntar" => office::merge_duplicates(
            state.services(),
            &user.auth,
            office::MergeRequest {
                keep: id.clone(),
                merge: vec![other],
            },
        )
        .await
        .map_err(AppError::from)
        .map(|_| "Registro juntado a este como duplicata; ele continua guardado.".to_owned()),
        "separar" => office::keep_apart(
            state.services(),
            &user.auth,
            office::KeepApartRequest {
                records: vec![id.clone(), other],
            },
        )
        .await
        .map_err(AppError::from)
        .map(|_| "Registros mantidos separados.".to_owned()),
        _ => Err(form_error("Escolha juntar ou manter separados.".into())),
    };
    finish(
        &state,
        &user,
        &id,
        outcome,
        "duplicata",
        ActionForm::default(),
    )
    .await
}

async fn notification_pdf(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let (number, bytes) = office::notices::pdf(state.services(), &user.auth, &id).await?;
    Ok(crate::api::office::pdf_response(&number, bytes))
}

async fn case_file_pdf(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let (number, bytes) = office::notices::case_file_pdf(state.services(), &user.auth, &id).await?;
    Ok(crate::api::office::pdf_response(
        &format!("processo-{number}"),
        bytes,
    ))
}

async fn photo(
    State(state): State<AppState>,
    _user: OfficeUser,
    Path(sha): Path<String>,
) -> Result<Response, PageError> {
    let sha = sha.to_ascii_lowercase();
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PageError::not_found("Foto não encontrada."));
    }
    let Some((meta, bytes)) = state.store().photo(sha).await? else {
        return Err(PageError::not_found("Foto ainda não recebida."));
    };
    // The uploader chose the content type: only raster images are shown inline; anything else
    // (an SVG or HTML with script, a PDF) is a download, so it cannot run on this site.
    let image = IMAGE_TYPES.contains(&meta.content_type.as_str());
    let (ct, disposition) = if image {
        (HeaderValue::from_str(&meta.content_type).ok(), "inline")
    } else {
        (None, "attachment")
    };
    Ok((
        [
            (
                CONTENT_TYPE,
                ct.unwrap_or_else(|| HeaderValue::from_static("application/octet-stream")),
            ),
            (CONTENT_DISPOSITION, HeaderValue::from_static(disposition)),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; sandbox"),
            ),
            // Content-addressed: the bytes of a hash never change.
            (
                CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=86400, immutable"),
            ),
        ],
        Body::from(bytes),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_id_safe() {
        assert_eq!(slug("witnesses[0].statement"), "witnesses-0-statement");
        assert_eq!(slug("facts"), "facts");
    }

    #[test]
    fn forms_become_actions() {
        let f = |acao: &str| ActionForm {
            acao: acao.into(),
            penalidade: "suspensao-15".into(),
            data: "2026-12-01".into(),
            meio: "assinatura".into(),
            resultado: "reformada".into(),
            motivo: "erro de digitação".into(),
            regras: "r24, R31".into(),
            nota: String::new(),
            notificacao: "NP-2026-000001".into(),
            pessoa: String::new(),
            confirmacao: String::new(),
        };
        for acao in [
            "analisar",
            "classificar",
            "propor",
            "decidir",
            "ciencia",
            "reconsideracao",
            "decisao-reconsideracao",
            "recurso",
            "decisao-recurso",
            "anular",
            "arquivar",
            "notificar",
        ] {
            assert!(action_of(&f(acao)).is_ok(), "{acao}");
        }
        // A signature names the notification; the auto's own signature and a publication
        // name none.
        let notify = |meio: &str| match action_of(&ActionForm {
            meio: meio.into(),
            ..f("ciencia")
        }) {
            Ok(Action::Notify(r)) => r.notification,
            other => panic!("{other:?}"),
        };
        assert_eq!(notify("assinatura").as_deref(), Some("NP-2026-000001"));
        assert_eq!(notify("ar").as_deref(), Some("NP-2026-000001"));
        assert_eq!(notify("assinatura-auto"), None);
        assert_eq!(notify("publicacao"), None);
        assert_eq!(
            action_of(&f("decidir")),
            Ok(Action::Decide(office::DecideRequest {
                penalty: PenaltyKind::Suspension { days: 15 }
            }))
        );
        let mut bad = f("ciencia");
        bad.data = "amanhã".into();
        assert!(action_of(&bad).is_err());
        bad = f("decidir");
        bad.penalidade = "prisão".into();
        assert!(action_of(&bad).is_err());
        bad = f("classificar");
        bad.regras = " , ".into();
        assert!(action_of(&bad).is_err());
        assert!(action_of(&f("outra")).is_err());
    }
}
