//! The edital and its result on paper: the facts of the kernel's `Edital` (stands named as the
//! public knows them, the kernel's counts of days, the classification it computed) handed to
//! `documents`, which only lays them out. `GET /v1/editais/{id}/edital.pdf` and
//! `…/result.pdf`, and the office pages' links, answer these bytes.

use documents::{
    EditalContent, LotteryFacts, RankBasis, RankedLine, RefusedLine, ResultContent, StandPlaces,
};
use sync_core::domain::Registry;
use sync_core::rules::selection::{self, Edital, Group};

use crate::auth::Auth;
use crate::service::{ServiceError, Services};

/// Where candidates register and appeals are filed, as the papers print it.
pub const FILING_PLACE: &str = "No protocolo da Unidade de Transportes da Prefeitura Municipal \
     de Americana, em dias úteis, no horário de expediente.";

/// Days of the art. 5 window, as the kernel counts them.
const APPEAL_DAYS: u32 = 5;

fn stand_label(reg: &Registry, stand_id: &str) -> String {
    reg.stands.iter().find(|s| s.id == stand_id).map_or_else(
        || stand_id.to_owned(),
        |s| format!("{} — {}", s.name, s.address),
    )
}

fn registration_days() -> u32 {
    u32::try_from(selection::REGISTRATION_DAYS).unwrap_or(u32::MAX)
}

/// The edital's facts for the printed edital.
pub fn edital_content(e: &Edital, reg: &Registry, authority: &str) -> EditalContent {
    EditalContent {
        issuing_body: authority.to_owned(),
        number: e.number.clone(),
        published_on: e.published_on,
        vacancies: e
            .vacancies
            .iter()
            .map(|v| StandPlaces {
                stand: stand_label(reg, &v.stand_id),
                places: v.places,
            })
            .collect(),
        applications_from: e.applications_from,
        applications_until: e.applications_until,
        filing_place: FILING_PLACE.to_owned(),
        reference_date: e.reference_date,
        certificate_validity_days: e.certificate_validity_days,
        documents: e.documents.clone(),
        criteria: e.criteria.clone(),
        seed_source: e.seed_source.clone(),
        draw_on: e.draw_on,
        appeal_days: APPEAL_DAYS,
        registration_days: registration_days(),
        signed_by: authority.to_owned(),
    }
}

/// The result's facts, or `None` before the result is published.
pub fn result_content(e: &Edital, reg: &Registry, authority: &str) -> Option<ResultContent> {
    let result = e.result.as_ref()?;
    let list = e.list.as_ref()?;
    let keys = |inscription: &str| {
        e.draw
            .as_ref()
            .and_then(|d| d.order.iter().find(|o| o.inscription == inscription))
            .map(|o| o.key.clone())
            .unwrap_or_default()
    };
    let classification = selection::classification(e)
        .into_iter()
        .map(|r| RankedLine {
            position: r.position,
            basis: match (r.group, r.since) {
                (Group::NewRegistrant, _) | (_, None) => RankBasis::DrawKey(keys(&r.inscription)),
                (_, Some(since)) => RankBasis::Seniority(since),
            },
            group: r.group.roman().to_owned(),
            stand: r.stand_id.as_deref().map(|s| stand_label(reg, s)),
            note: r
                .excluded_by_appeal
                .map(|n| format!("excluído pelo recurso nº {n}")),
            inscription: r.inscription,
            name: r.name,
        })
        .collect();
    let refused = list
        .entries
        .iter()
        .filter(|x| !x.eligible())
        .map(|x| RefusedLine {
            inscription: x.inscription.clone(),
            name: x.name.clone(),
            reasons: x
                .findings
                .iter()
                .filter(|f| f.severity == sync_core::rules::Severity::Irregular)
                .map(|f| format!("{} ({})", f.message, f.citation))
                .collect(),
        })
        .collect();
    let lottery = e.draw.as_ref().map(|d| LotteryFacts {
        list_published_on: list.published_on,
        list_digest: list.lottery_digest.clone(),
        inscriptions: d.order.len(),
        seed_source: e.seed_source.clone(),
        seed: d.seed.clone(),
        drawn_on: d.drawn_on,
    });
    Some(ResultContent {
        issuing_body: authority.to_owned(),
        edital_number: e.number.clone(),
        published_on: result.published_on,
        classification,
        refused,
        lottery,
        appeal_days: APPEAL_DAYS,
        appeal_deadline: result.appeal_deadline.deadline,
        filing_place: FILING_PLACE.to_owned(),
        registration_days: registration_days(),
        signed_by: authority.to_owned(),
    })
}

/// A file name stem for the edital's papers: `edital-001-2027`.
fn stem(kind: &str, e: &Edital) -> String {
    format!("{kind}-{}", e.number.replace('/', "-"))
}

/// The printed edital: its file name stem and bytes.
pub async fn edital_pdf(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<(String, Vec<u8>), ServiceError> {
    let view = super::get(svc, auth, id).await?;
    let reg = svc.store().registry().await?;
    let content = edital_content(&view.edital, &reg, &svc.config().notice_authority);
    let bytes = documents::render_edital(&content).map_err(|e| ServiceError::internal(&e))?;
    Ok((stem("edital", &view.edital), bytes))
}

/// The printed result: its file name stem and bytes; not found before it is published.
pub async fn result_pdf(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<(String, Vec<u8>), ServiceError> {
    let view = super::get(svc, auth, id).await?;
    let reg = svc.store().registry().await?;
    let content =
        result_content(&view.edital, &reg, &svc.config().notice_authority).ok_or_else(|| {
            ServiceError::not_found("O resultado deste edital ainda não foi publicado.")
        })?;
    let bytes = documents::render_result(&content).map_err(|e| ServiceError::internal(&e))?;
    Ok((stem("resultado", &view.edital), bytes))
}
