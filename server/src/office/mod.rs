//! The office workflow of the Unidade de Transportes: what the office pages
//! (`crate::web`) and the JSON API (`crate::api::office`, `/v1/office/…`) both call. Every
//! function takes the services' context ([`Services`]) and the authenticated caller, checks the caller's role
//! first (reading: office and admin; acting: office), and answers a typed result or one
//! [`ServiceError`] with a Portuguese message.
//!
//! # Flow
//!
//! 1. **Inbox** ([`inbox`]): every record from the field, newest first, filtered by status,
//!    kind, stand, author (officer or coordinator), plate in any spelling, local dates, rule and
//!    free text ([`search`]: the words resolved against the registry's names and the accounts,
//!    then one SQL clause per word), sorted by any column (in SQL, ties newest first), with the
//!    total and the counts per status — one read of the projection. Each item carries its
//!    pending appeal deadline ([`pending_appeal_deadline`], from the record's view: the date the
//!    replay counted with the kernel), read from the documents of that page's records awaiting
//!    an appeal. The "due within N days" filter and the sort by deadline read the records
//!    awaiting an appeal (at most `MAX_APPEAL_DEADLINE_SCAN`, flagged `incomplete` beyond) and
//!    filter, sort and page them in memory.
//! 2. **Duplicates** ([`duplicate_groups`], [`merge_duplicates`], [`keep_apart`]): records of
//!    the same plate from different devices, close in time and place ([`duplicates`] has the
//!    thresholds and why), grouped; merging appends `duplicate_merged` to each duplicate,
//!    keeping apart appends `duplicate_kept_apart` naming each other member; a settled pair is
//!    never proposed again.
//! 3. **The case** ([`case`]): the merged record, its classification, the people it charges
//!    (driver and, for an auxiliary, the holder: art. 32 §2, R33), the permit's decided
//!    penalties, the system's **proposal** (R32, `sync_core::rules::penalty`: the office
//!    decides), the decision in force, the fine's amount in force, the appeal deadline
//!    ("prazo de recurso até dd/mm/aaaa", arts. 33–35, R34) and what the registry holds for it.
//! 4. **Acting** ([`review`], [`classify`], [`propose`], [`decide`], [`notify`],
//!    [`file_reconsideration`], [`decide_reconsideration`], [`file_appeal`], [`decide_appeal`],
//!    [`annul`], [`archive`], [`resolve_conflict`]): each appends events to the record's
//!    Automerge document — devices see the outcome on their next sync — through the same vetting
//!    and audit path as a device's change. Each step is first put to the law kernel's procedure
//!    (`sync_core::rules::procedure`, arts. 32–35, through `sync_core::records::procedure_of`):
//!    a decision before a review or without a recorded proposal, a ciência dated before the
//!    decision, a filing before the ciência, a late appeal (art. 35) or a second one (art. 33)
//!    is refused (422 `event_refused`) in the kernel's words; the records' replay, on every
//!    copy, refuses the same. A missing step is never written on the office's behalf: the
//!    office records its review and its proposal (the system's, shown in the case, or its own)
//!    before it decides. Penalties are checked against art. 32 by the kernel
//!    (`rules::penalty::Grade::exact`, 422 `invalid_penalty`), and a classification passes
//!    `rules::citable` under the server's configuration.
//! 5. **Papers** ([`notices`]): the notification of penalty of the decision in force, one per
//!    person charged, numbered, audited and carrying a verification code; the ciência by
//!    signature or postal receipt names the notification signed or delivered; the case file
//!    for an appeal; the state the public verification page shows.
//! 6. **Effects** ([`effects`]): a decision, a reversal or an annulment also writes the registry
//!    (penalty in force, unpaid fine, revoked permit), in the **same transaction** as the event
//!    (`Store::office_apply`), as a new registry version that every device gets on its next
//!    pull. [`reapply_effects`] re-runs that reconciliation (idempotent).
//!
//! Decisions where the brief was silent are in ADR 0012.

pub mod duplicates;
pub mod effects;
pub mod filter;
pub mod notices;
pub mod search;
pub mod witnesses;

use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{PenaltyKind, PermitState, RegistryIndex};
use sync_core::records::{
    EventKind, LegalBasis, NotificationMethod, Outcome, PersonRef, RecordView, Status,
    procedure_of, step_of,
};
use sync_core::rules::penalty::{self, Proposal, ProposalInput};
use sync_core::sync::RejectionCode;

pub use duplicates::{
    DUPLICATE_RADIUS_M, DUPLICATE_WINDOW_MINUTES, DuplicateGroup, DuplicateMember, DuplicatePair,
};

use crate::auth::{Auth, Role};
use crate::service::{ServiceError, Services};
use crate::store::office::{
    CandidateQuery, EffectFn, InboxRow, OfficeJob, OfficeOutcome, OfficeStep, RegistryApplied,
};
use crate::store::records::{Caller, RecordDoc, RecordRow, view_of};

/// Who reads the office workflow ([`crate::auth::roles::OFFICE_READERS`]).
pub const OFFICE_READERS: &[Role] = crate::auth::roles::OFFICE_READERS;
/// Who acts on records ([`crate::auth::roles::OFFICE_WRITERS`]: admins write no records).
pub const OFFICE_DECIDERS: &[Role] = crate::auth::roles::OFFICE_WRITERS;

use filter::{DEFAULT_LIMIT, MAX_LIMIT};

// ---------------------------------------------------------------------------------------------
// Inbox
// ---------------------------------------------------------------------------------------------

/// Filters of the inbox (all optional; the same as `GET /v1/records`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxQuery {
    /// Derived status, e.g. `issued`, `forwarded_to_office`, `penalty_decided`.
    #[serde(default)]
    pub status: Option<String>,
    /// `infraction` or `transgression`.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub stand: Option<String>,
    /// User id of the officer or coordinator who wrote the record.
    #[serde(default)]
    pub author: Option<String>,
    /// Any spelling (`abc-1234`, `ABC1C34`).
    #[serde(default)]
    pub plate: Option<String>,
    /// From this local date (`YYYY-MM-DD`) or instant (RFC 3339).
    #[serde(default)]
    pub from: Option<String>,
    /// Up to this local date, inclusive (or instant, exclusive).
    #[serde(default)]
    pub to: Option<String>,
    /// A rule id of the catalogue, e.g. `R24`.
    #[serde(default)]
    pub rule: Option<String>,
    /// Free text, every word must match: the auto number, the plate (any spelling), the permit
    /// number, the name of the permit's holder or of one of its auxiliary drivers, the author's
    /// name. Folded (case and accents). At most `MAX_SEARCH_CHARS` characters and
    /// `MAX_SEARCH_WORDS` words.
    #[serde(default)]
    pub search: Option<String>,
    /// The order: `occurred_at` (default), `number`, `kind`, `plate`, `permit`, `stand`,
    /// `author`, `rules`, `status`, `pending` or `appeal_deadline`.
    #[serde(default)]
    pub sort: Option<String>,
    /// `asc` or `desc` (default: `desc` for `occurred_at` and `pending`, else `asc`).
    #[serde(default)]
    pub direction: Option<String>,
    /// Only records whose appeal is pending with its last day from today to this many days
    /// ahead ("prazos vencendo").
    #[serde(default)]
    pub appeal_due_within_days: Option<u32>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub offset: Option<u32>,
}

/// The orders of the inbox (`InboxQuery::sort`).
pub const INBOX_SORTS: [&str; 11] = [
    "occurred_at",
    "number",
    "kind",
    "plate",
    "permit",
    "stand",
    "author",
    "rules",
    "status",
    "pending",
    "appeal_deadline",
];

/// How many records are in one status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusCount {
    pub status: String,
    /// In Portuguese, e.g. "encaminhado à Unidade".
    pub label: String,
    pub count: u64,
}

/// One record of the inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InboxItem {
    #[serde(flatten)]
    pub row: RecordRow,
    /// Rule ids in force (the office's classification, else the author's legal basis).
    pub rules: Vec<String>,
    pub status_label: String,
    /// The last day to appeal while the appeal is pending ([`pending_appeal_deadline`]),
    /// possibly already past.
    pub appeal_deadline: Option<NaiveDate>,
}

/// The inbox: one page, the total, and the counts per status over the other filters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Inbox {
    pub total: u64,
    /// Every status with records under the other filters, most frequent first.
    pub counts: Vec<StatusCount>,
    pub items: Vec<InboxItem>,
    /// True when the list needed each record's appeal deadline (the "prazos vencendo" filter
    /// or the sort by deadline) and more records awaited an appeal than
    /// `MAX_APPEAL_DEADLINE_SCAN`: only that many were considered.
    #[serde(default)]
    pub incomplete: bool,
}

/// The statuses in which an appeal may be pending: notified of the decision, or of the
/// reconsideration's (art. 33–35).
pub const APPEAL_PENDING: [Status; 2] = [Status::Notified, Status::ReconsiderationDecided];

/// The last day to appeal while an appeal is still pending: a penalty decided and notified
/// (the deadline the records' replay counted with the law kernel from the ciência, art. 35,
/// R34), no appeal filed yet. `None` otherwise. The date may be past: the appeal is then
/// lost, and the record waits for the office to close it.
pub fn pending_appeal_deadline(view: &RecordView) -> Option<NaiveDate> {
    let appeal_filed = view
        .events
        .iter()
        .any(|e| e.valid && matches!(e.event, EventKind::AppealFiled { .. }));
    (!appeal_filed && view.penalty.is_some() && APPEAL_PENDING.contains(&view.status))
        .then_some(view.appeal_deadline)
        .flatten()
}

/// Every status a record can be in, in workflow order.
pub const STATUSES: [Status; 15] = [
    Status::Draft,
    Status::Issued,
    Status::SettledByCoordinator,
    Status::ForwardedToOffice,
    Status::UnderReview,
    Status::PenaltyProposed,
    Status::PenaltyDecided,
    Status::Notified,
    Status::ReconsiderationFiled,
    Status::ReconsiderationDecided,
    Status::AppealFiled,
    Status::AppealDecided,
    Status::Annulled,
    Status::Archived,
    Status::MergedAsDuplicate,
];

/// The Portuguese label of a stored status name (the name itself when unknown).
pub fn status_label(status: &str) -> String {
    STATUSES
        .iter()
        .find(|s| s.as_str() == status)
        .map_or_else(|| status.to_owned(), |s| s.label_pt().to_owned())
}

fn bad(code: &'static str, message: impl Into<String>) -> ServiceError {
    ServiceError::unprocessable(code, message)
}

/// The inbox (see the module doc).
pub async fn inbox(svc: &Services, auth: &Auth, q: InboxQuery) -> Result<Inbox, ServiceError> {
    use crate::limits::{MAX_APPEAL_DEADLINE_SCAN, MAX_SEARCH_CHARS, MAX_SEARCH_WORDS};
    use crate::store::records::{RecordOrder, RecordSort};

    auth.require(OFFICE_READERS)?;
    let invalid = |m: String| ServiceError::bad_request("invalid_query", m);
    if let Some(s) = q.status.as_deref().map(str::trim).filter(|s| !s.is_empty())
        && !STATUSES.iter().any(|x| x.as_str() == s)
    {
        return Err(invalid(format!("Situação desconhecida: «{s}».")));
    }
    if let Some(r) = q.rule.as_deref().map(str::trim).filter(|s| !s.is_empty())
        && sync_core::rules::lookup(&r.to_uppercase()).is_none()
    {
        return Err(invalid(format!(
            "Regra desconhecida no catálogo: «{r}» (ex.: R24)."
        )));
    }
    let text = q.search.as_deref().map(str::trim).unwrap_or_default();
    let chars = text.chars().count();
    if chars > MAX_SEARCH_CHARS {
        return Err(invalid(format!(
            "A busca tem {chars} caracteres; use no máximo {MAX_SEARCH_CHARS}."
        )));
    }
    let words = text.split_whitespace().count();
    if words > MAX_SEARCH_WORDS {
        return Err(invalid(format!(
            "A busca tem {words} palavras; use no máximo {MAX_SEARCH_WORDS}."
        )));
    }
    let sort = q.sort.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let sort = match sort {
        None => "occurred_at",
        Some(s) => INBOX_SORTS
            .iter()
            .copied()
            .find(|k| *k == s)
            .ok_or_else(|| {
                invalid(format!(
                    "Ordem desconhecida: «{s}» (use uma de: {}).",
                    INBOX_SORTS.join(", ")
                ))
            })?,
    };
    let desc = match q.direction.as_deref().map(str::trim) {
        None | Some("") => matches!(sort, "occurred_at" | "pending"),
        Some("asc") => false,
        Some("desc") => true,
        Some(d) => {
            return Err(invalid(format!(
                "Sentido desconhecido: «{d}» (asc ou desc)."
            )));
        }
    };
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    let mut filter = filter::filter_of(filter::RecordsQuery {
        status: q.status,
        kind: q.kind,
        stand: q.stand,
        officer: q.author,
        plate: q.plate,
        from: q.from,
        to: q.to,
        rule: q.rule,
        limit: Some(limit),
        offset: Some(offset),
    })?;
    let store = svc.store();
    let registry = store.registry().await?;
    let users = store.list_users().await?;
    if !text.is_empty() {
        filter.search = search::resolve(text, &registry, &users);
    }
    filter.order = RecordOrder {
        desc,
        by: match sort {
            "number" => RecordSort::Number,
            "kind" => RecordSort::Kind,
            "plate" => RecordSort::Plate,
            "permit" => RecordSort::Permit,
            "rules" => RecordSort::Rules,
            "pending" => RecordSort::Pending,
            "stand" => {
                let mut stands: Vec<_> = registry.stands.iter().collect();
                stands.sort_by_key(|s| (search::fold(&s.name), s.id.clone()));
                RecordSort::Stand(stands.into_iter().map(|s| s.id.clone()).collect())
            }
            "author" => {
                let mut by_name: Vec<_> = users.iter().collect();
                by_name.sort_by_key(|u| (search::fold(&u.display_name), u.id.clone()));
                RecordSort::Author(by_name.into_iter().map(|u| u.id.clone()).collect())
            }
            "status" => {
                RecordSort::Status(STATUSES.iter().map(|s| s.as_str().to_owned()).collect())
            }
            _ => RecordSort::Occurred,
        },
    };
    let today = svc.clock().today();
    let due = q.appeal_due_within_days;
    if due.is_none() && sort != "appeal_deadline" {
        let page = store.office_inbox(filter).await?;
        let items = with_deadlines(svc, page.items).await?;
        return Ok(Inbox {
            total: page.total,
            counts: counts_of(page.counts),
            items,
            incomplete: false,
        });
    }

    // The deadline is in each record's document: read the records awaiting an appeal (at most
    // MAX_APPEAL_DEADLINE_SCAN of them), then filter, sort and page them here.
    let mut pending_filter = filter.clone();
    pending_filter.statuses = APPEAL_PENDING
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    pending_filter.order = RecordOrder::default();
    pending_filter.limit = MAX_APPEAL_DEADLINE_SCAN;
    pending_filter.offset = 0;
    let pending = store.office_inbox(pending_filter).await?;
    let incomplete = pending.total > u64::from(MAX_APPEAL_DEADLINE_SCAN);
    let mut candidates = with_deadlines(svc, pending.items).await?;
    if let Some(days) = due {
        let last = today + Duration::days(i64::from(days));
        candidates.retain(|i| i.appeal_deadline.is_some_and(|d| today <= d && d <= last));
    }
    // Stable: equal deadlines stay newest first; records without one last.
    candidates.sort_by(|a, b| match (a.appeal_deadline, b.appeal_deadline) {
        (Some(x), Some(y)) if desc => y.cmp(&x),
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    if due.is_some() {
        let mut counts: Vec<(String, u64)> = Vec::new();
        for i in &candidates {
            match counts.iter_mut().find(|(s, _)| *s == i.row.status) {
                Some((_, n)) => *n += 1,
                None => counts.push((i.row.status.clone(), 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let total = candidates.len() as u64;
        return Ok(Inbox {
            total,
            counts: counts_of(counts),
            items: candidates.into_iter().skip(start).take(take).collect(),
            incomplete,
        });
    }
    // Sorted by deadline over the whole inbox: the records awaiting an appeal first, by
    // deadline, then every other record newest first.
    let k = candidates.len();
    let mut items: Vec<InboxItem> = candidates.into_iter().skip(start).take(take).collect();
    if items.len() < take {
        let mut rest_filter = filter.clone();
        rest_filter.not_statuses = APPEAL_PENDING
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect();
        rest_filter.order = RecordOrder::default();
        rest_filter.offset = u32::try_from(start.saturating_sub(k)).unwrap_or(u32::MAX);
        rest_filter.limit = u32::try_from(take - items.len()).unwrap_or(1).max(1);
        let rest = store.office_inbox(rest_filter).await?;
        items.extend(with_deadlines(svc, rest.items).await?);
    }
    // The total and the counts of the whole filtered inbox (one row fetched).
    filter.limit = 1;
    filter.offset = 0;
    filter.order = RecordOrder::default();
    let whole = store.office_inbox(filter).await?;
    Ok(Inbox {
        total: whole.total,
        counts: counts_of(whole.counts),
        items,
        incomplete,
    })
}

fn counts_of(counts: Vec<(String, u64)>) -> Vec<StatusCount> {
    counts
        .into_iter()
        .map(|(status, count)| StatusCount {
            label: status_label(&status),
            status,
            count,
        })
        .collect()
}

/// The inbox's items, with the appeal deadline of those awaiting an appeal (their documents
/// are read; the caller bounds how many rows it passes).
async fn with_deadlines(
    svc: &Services,
    rows: Vec<InboxRow>,
) -> Result<Vec<InboxItem>, ServiceError> {
    let mut out = Vec::with_capacity(rows.len());
    for InboxRow { row, rules } in rows {
        let awaiting = APPEAL_PENDING.iter().any(|s| s.as_str() == row.status);
        let appeal_deadline = if awaiting {
            match svc.store().record(row.id.clone()).await? {
                Some(doc) => {
                    pending_appeal_deadline(&view_of(&doc).map_err(|e| ServiceError::internal(&e))?)
                }
                None => None,
            }
        } else {
            None
        };
        out.push(InboxItem {
            status_label: status_label(&row.status),
            row,
            rules,
            appeal_deadline,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Duplicates
// ---------------------------------------------------------------------------------------------

/// `merge`: the duplicates to merge into `keep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeRequest {
    /// The record that stays (usually the most complete, or the one already decided).
    pub keep: String,
    /// The records merged into it (each gets a `duplicate_merged` event).
    pub merge: Vec<String>,
}

/// `keep apart`: records judged different occurrences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepApartRequest {
    /// Two or more records; each gets a `duplicate_kept_apart` naming every other one.
    pub records: Vec<String>,
}

/// What a merge or keep-apart did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Settlement {
    /// Events appended (0 when everything was already settled).
    pub events: u32,
    /// The records as they now stand.
    pub records: Vec<RecordRow>,
}

/// Which page of the duplicates list: plates, newest occurrence first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplicatesQuery {
    /// Plates to skip.
    #[serde(default)]
    pub offset: Option<u32>,
    /// Plates on the page (1–200, 50 when absent).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// One page of the groups of likely duplicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicatesPage {
    /// Groups not yet settled on the page's plates, newest first.
    pub groups: Vec<DuplicateGroup>,
    /// Plates with candidates in all (some may have no group once place and settled pairs are
    /// judged).
    pub plates: u64,
    /// Plates read for this page.
    pub plates_on_page: u32,
    /// The page's offset, in plates.
    pub offset: u32,
}

/// The groups of likely duplicates not yet settled, a page of plates at a time, newest first.
/// The store keeps the candidates as records arrive; only the page's records are read.
pub async fn duplicate_groups(
    svc: &Services,
    auth: &Auth,
    q: DuplicatesQuery,
) -> Result<DuplicatesPage, ServiceError> {
    use crate::limits::{
        DUPLICATE_PLATES_PER_PAGE, MAX_DUPLICATE_PLATES_PER_PAGE, MAX_DUPLICATE_RECORDS_PER_PAGE,
    };
    auth.require(OFFICE_READERS)?;
    let offset = q.offset.unwrap_or(0);
    let limit = q
        .limit
        .unwrap_or(DUPLICATE_PLATES_PER_PAGE)
        .clamp(1, MAX_DUPLICATE_PLATES_PER_PAGE);
    let page = svc
        .store()
        .duplicate_candidates(CandidateQuery {
            plate: None,
            offset,
            limit,
            max_records: MAX_DUPLICATE_RECORDS_PER_PAGE,
        })
        .await?;
    let mut plates: Vec<&str> = page
        .docs
        .iter()
        .filter_map(|d| d.row.plate.as_deref())
        .collect();
    plates.dedup();
    let plates_on_page = u32::try_from(plates.len()).unwrap_or(u32::MAX);
    let groups = judge_candidates(svc, page.docs).await?;
    Ok(DuplicatesPage {
        groups,
        plates: page.plates,
        plates_on_page,
        offset,
    })
}

/// The group of likely duplicates record `id` belongs to, if any (its plate's candidates only).
pub async fn duplicate_group_of(
    svc: &Services,
    auth: &Auth,
    id: &str,
    plate: Option<&str>,
) -> Result<Option<DuplicateGroup>, ServiceError> {
    auth.require(OFFICE_READERS)?;
    let Some(plate) = plate else {
        return Ok(None);
    };
    let page = svc
        .store()
        .duplicate_candidates(CandidateQuery {
            plate: Some(plate.to_owned()),
            offset: 0,
            limit: 1,
            max_records: crate::limits::MAX_DUPLICATE_RECORDS_PER_PAGE,
        })
        .await?;
    Ok(judge_candidates(svc, page.docs)
        .await?
        .into_iter()
        .find(|g| g.records.iter().any(|m| m.row.id == id)))
}

async fn judge_candidates(
    svc: &Services,
    docs: Vec<RecordDoc>,
) -> Result<Vec<DuplicateGroup>, ServiceError> {
    let registry = svc.registry().await?;
    let mut members = Vec::with_capacity(docs.len());
    for doc in docs {
        let view = view_of(&doc).map_err(|e| ServiceError::internal(&e))?;
        members.push((doc.row, view));
    }
    Ok(duplicates::groups(&members, &registry))
}

/// Merges duplicates into the record kept.
pub async fn merge_duplicates(
    svc: &Services,
    auth: &Auth,
    req: MergeRequest,
) -> Result<Settlement, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let keep = req.keep.trim().to_owned();
    let mut merge: Vec<String> = req.merge.iter().map(|s| s.trim().to_owned()).collect();
    merge.sort();
    merge.dedup();
    if merge.is_empty() {
        return Err(bad(
            "invalid_request",
            "Indique ao menos um registro a juntar ao principal.",
        ));
    }
    if merge.contains(&keep) {
        return Err(bad(
            "invalid_request",
            "O registro principal não pode ser juntado a si mesmo.",
        ));
    }
    load_view(svc, &keep).await?;
    let now = svc.clock().now();
    let mut steps = Vec::new();
    for id in &merge {
        let (_, view) = load_view(svc, id).await?;
        if view.penalty.is_some() {
            return Err(bad(
                "duplicate_decided",
                format!(
                    "O registro {} já tem penalidade decidida: escolha-o como principal e junte \
                     os demais a ele.",
                    view.number.as_deref().unwrap_or(id)
                ),
            ));
        }
        steps.push(OfficeStep {
            record_id: id.clone(),
            event: EventKind::DuplicateMerged {
                into_record_id: keep.clone(),
            },
            at: next_at(&view, now),
        });
    }
    let events = steps.len() as u32;
    let (docs, _) = run(svc, auth, steps, None).await?;
    Ok(Settlement {
        events,
        records: docs.into_iter().map(|d| d.row).collect(),
    })
}

/// Keeps records apart: they are different occurrences.
pub async fn keep_apart(
    svc: &Services,
    auth: &Auth,
    req: KeepApartRequest,
) -> Result<Settlement, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let mut ids: Vec<String> = req.records.iter().map(|s| s.trim().to_owned()).collect();
    ids.sort();
    ids.dedup();
    if ids.len() < 2 {
        return Err(bad(
            "invalid_request",
            "Indique ao menos dois registros diferentes.",
        ));
    }
    let mut views = Vec::new();
    for id in &ids {
        views.push(load_view(svc, id).await?);
    }
    let now = svc.clock().now();
    let mut steps = Vec::new();
    for (doc, view) in &views {
        let mut at = next_at(view, now);
        for other in ids.iter().filter(|o| **o != doc.row.id) {
            let done = view.events.iter().any(|e| {
                e.valid
                    && matches!(&e.event, EventKind::DuplicateKeptApart { other_record_id }
                        if other_record_id == other)
            });
            if !done {
                steps.push(OfficeStep {
                    record_id: doc.row.id.clone(),
                    event: EventKind::DuplicateKeptApart {
                        other_record_id: other.clone(),
                    },
                    at,
                });
                at += Duration::milliseconds(1);
            }
        }
    }
    if steps.is_empty() {
        return Ok(Settlement {
            events: 0,
            records: views.into_iter().map(|(d, _)| d.row).collect(),
        });
    }
    let events = steps.len() as u32;
    let (docs, _) = run(svc, auth, steps, None).await?;
    Ok(Settlement {
        events,
        records: docs.into_iter().map(|d| d.row).collect(),
    })
}

// ---------------------------------------------------------------------------------------------
// The case: record, people, history, proposal, decision, deadline
// ---------------------------------------------------------------------------------------------

/// A person a record charges (R33).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChargedPerson {
    /// `registry:P02` or `observed:<id>`.
    pub person: String,
    /// Registry id, for registry people.
    pub person_id: Option<String>,
    /// Name from the registry (observed people's data stays on the device that saw them).
    pub name: Option<String>,
    /// Why they are charged, in Portuguese.
    pub role: String,
}

/// The permit a record concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PermitSummary {
    pub number: String,
    pub holder_id: String,
    pub holder_name: Option<String>,
    pub stand_id: String,
    pub stand_name: Option<String>,
    /// `active`, `suspended`, `revoked`, `in_succession`.
    pub state: String,
    /// In Portuguese, e.g. "cassado em 30/11/2026".
    pub state_label: String,
    /// Vacancies of the stand minus its permits not revoked (a revocation opens one).
    pub open_vacancies: i64,
}

/// A decided penalty of the permit (the registry's history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryItem {
    pub penalty_id: String,
    pub kind: PenaltyKind,
    pub label: String,
    pub decided_on: NaiveDate,
    pub starts_on: NaiveDate,
    /// Last day of a suspension.
    pub until: Option<NaiveDate>,
    pub record_id: Option<String>,
    /// True when it came from this record.
    pub this_record: bool,
}

/// The decision in force on a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DecisionSummary {
    pub penalty: PenaltyKind,
    pub label: String,
    pub citation: String,
    /// Local date of the decision that set it (its effect starts that day).
    pub decided_on: NaiveDate,
    /// Last day of a suspension.
    pub until: Option<NaiveDate>,
    /// The fine's amount in force in the decision's year (art. 32 II, R22), e.g. "797.02".
    pub fine_amount: Option<Decimal>,
}

/// Ciência and appeal (arts. 33–35, R34).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AppealInfo {
    pub notified_on: Option<NaiveDate>,
    /// Last day to appeal from the last ciência.
    pub deadline: Option<NaiveDate>,
    /// E.g. "prazo de recurso até 11/12/2026 (art. 35)".
    pub deadline_text: Option<String>,
    pub reconsideration_filed: bool,
    pub appeal_filed: bool,
    /// True while an appeal would be accepted today.
    pub appeal_open: bool,
}

/// What the registry holds because of this record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RegistryEffects {
    /// The penalty (`PEN-…`) this record's decision wrote, if any.
    pub penalty_id: Option<String>,
    /// Its fine (`MUL-PEN-…`), if any, and whether it is paid.
    pub fine_id: Option<String>,
    pub fine_paid_on: Option<NaiveDate>,
}

/// Everything the office needs to decide a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseView {
    pub row: RecordRow,
    pub status_label: String,
    /// The merged record: fields, events (flagged ones too), conflicts.
    pub record: RecordView,
    /// The rules it is judged under: the office's classification, else the author's basis.
    pub classification: Vec<LegalBasis>,
    pub classified_by_office: bool,
    /// The driver and, for an auxiliary, the holder (art. 32 §2, R33).
    pub charged: Vec<ChargedPerson>,
    pub permit: Option<PermitSummary>,
    /// Decided penalties of the permit, most recent first.
    pub history: Vec<HistoryItem>,
    /// The system's proposal (R32); `None` without a permit to penalise.
    pub proposal: Option<Proposal>,
    /// Why there is no proposal, when there is none.
    pub proposal_unavailable: Option<String>,
    pub decision: Option<DecisionSummary>,
    pub appeal: AppealInfo,
    pub registry_effects: RegistryEffects,
}

fn permit_state_label(state: &PermitState) -> (String, String) {
    let br = |d: NaiveDate| d.format("%d/%m/%Y").to_string();
    match state {
        PermitState::Active => ("active".into(), "em vigor".into()),
        PermitState::Suspended { from, until } => (
            "suspended".into(),
            format!("suspenso de {} a {}", br(*from), br(*until)),
        ),
        PermitState::Revoked { on } => ("revoked".into(), format!("cassado em {}", br(*on))),
        PermitState::InSuccession { since } => (
            "in_succession".into(),
            format!("em sucessão desde {}", br(*since)),
        ),
    }
}

fn classification_of(view: &RecordView) -> (Vec<LegalBasis>, bool) {
    match &view.classification {
        Some(c) => (c.clone(), true),
        None => (view.legal_basis.clone(), false),
    }
}

/// The case of a record, computed from its view and the registry (pure).
/// Every lookup is a point query of `index` (built once per registry version: see
/// `Services::indexed_registry`), so the page costs the same in a city of 200,000 permits.
pub fn case_of(
    doc: RecordDoc,
    view: RecordView,
    index: &RegistryIndex<'_>,
    today: NaiveDate,
) -> CaseView {
    let record_id = view.id.to_string();
    let reg = index.registry;
    let (classification, classified_by_office) = classification_of(&view);
    let driver_ref = &view.driver.person;
    let charged = view
        .charged
        .iter()
        .map(|p| {
            let (person_id, name) = match p {
                PersonRef::Registry(id) => {
                    (Some(id.clone()), index.person(id).map(|x| x.name.clone()))
                }
                PersonRef::Observed(_) => (None, None),
            };
            let role = if p == driver_ref {
                String::from("condutor")
            } else {
                String::from("titular do alvará: responde junto com o condutor (art. 32, § 2º)")
            };
            ChargedPerson {
                person: p.encode(),
                person_id,
                name,
                role,
            }
        })
        .collect();
    let permit = view
        .permit_number
        .as_deref()
        .and_then(|n| index.permit(n))
        .map(|p| {
            let (state, state_label) = permit_state_label(&p.state);
            let stand = index.stand(&p.stand_id);
            let live = index
                .permits_at(&p.stand_id)
                .into_iter()
                .filter(|x| {
                    x.stand_id == p.stand_id && !matches!(x.state, PermitState::Revoked { .. })
                })
                .count() as i64;
            PermitSummary {
                number: p.number.clone(),
                holder_id: p.holder_id.clone(),
                holder_name: index.person(&p.holder_id).map(|x| x.name.clone()),
                stand_id: p.stand_id.clone(),
                stand_name: stand.map(|s| s.name.clone()),
                state,
                state_label,
                open_vacancies: stand.map_or(0, |s| i64::from(s.vacancies)) - live,
            }
        });
    let mut penalties = view
        .permit_number
        .as_deref()
        .map(|n| index.penalties_of(n))
        .unwrap_or_default();
    penalties.sort_by(|a, b| (b.decided_on, &b.id).cmp(&(a.decided_on, &a.id)));
    let history = penalties
        .iter()
        .map(|p| HistoryItem {
            penalty_id: p.id.clone(),
            kind: p.kind,
            label: penalty::penalty_label_pt(p.kind),
            decided_on: p.decided_on,
            starts_on: p.starts_on,
            until: p.suspension_last_day(),
            record_id: p.record_id.clone(),
            this_record: p.record_id.as_deref() == Some(record_id.as_str()),
        })
        .collect();
    let rule_ids: Vec<String> = classification.iter().map(|b| b.rule_id.clone()).collect();
    let (proposal, proposal_unavailable) = if permit.is_some() {
        (
            Some(penalty::propose(ProposalInput {
                rule_ids: &rule_ids,
                history: &penalties,
                record_id: Some(&record_id),
                on: today,
                ipca: &reg.law().ipca,
            })),
            None,
        )
    } else {
        (
            None,
            Some(String::from(
                "Sem alvará no cadastro: as penalidades do art. 32 recaem sobre permissionários \
                 (art. 31); transporte clandestino vai à autoridade de trânsito (R01).",
            )),
        )
    };
    let effect_entry = index.penalty_of_record(&record_id);
    let fine = effect_entry.and_then(|p| index.fine(&effects::fine_id_of(&p.id)));
    let decision = effects::current_penalty(&view).map(|(kind, decided_on)| {
        let until = match kind {
            PenaltyKind::Suspension { days } if days > 0 => effect_entry
                .filter(|p| p.kind == kind)
                .and_then(|p| p.suspension_last_day())
                .or_else(|| decided_on.checked_add_days(chrono::Days::new(u64::from(days) - 1))),
            _ => None,
        };
        DecisionSummary {
            penalty: kind,
            label: penalty::penalty_label_pt(kind),
            citation: penalty::penalty_citation(kind),
            decided_on,
            until,
            fine_amount: match kind {
                PenaltyKind::Fine => fine.map(|f| f.amount).or_else(|| {
                    penalty::fine_amount(decided_on, &reg.law().ipca)
                        .ok()
                        .map(|c| c.amount)
                }),
                _ => None,
            },
        }
    });
    let valid = |f: &dyn Fn(&EventKind) -> bool| view.events.iter().any(|e| e.valid && f(&e.event));
    let appeal_filed = valid(&|e| matches!(e, EventKind::AppealFiled { .. }));
    let reconsideration_filed = valid(&|e| matches!(e, EventKind::ReconsiderationFiled { .. }));
    let appeal_open = pending_appeal_deadline(&view).is_some_and(|d| today <= d);
    let appeal = AppealInfo {
        notified_on: view.notified_on,
        deadline: view.appeal_deadline,
        deadline_text: view
            .appeal_deadline
            .map(|d| format!("prazo de recurso até {} (art. 35)", d.format("%d/%m/%Y"))),
        reconsideration_filed,
        appeal_filed,
        appeal_open,
    };
    let registry_effects = RegistryEffects {
        penalty_id: effect_entry.map(|p| p.id.clone()),
        fine_id: fine.map(|f| f.id.clone()),
        fine_paid_on: fine.and_then(|f| f.paid_on),
    };
    CaseView {
        status_label: view.status.label_pt().to_owned(),
        row: doc.row,
        classification,
        classified_by_office,
        charged,
        permit,
        history,
        proposal,
        proposal_unavailable,
        decision,
        appeal,
        registry_effects,
        record: view,
    }
}

pub(crate) async fn load_view(
    svc: &Services,
    id: &str,
) -> Result<(RecordDoc, RecordView), ServiceError> {
    let doc = svc
        .store()
        .record(id.trim().to_owned())
        .await?
        .ok_or_else(|| ServiceError::not_found("Registro não encontrado."))?;
    let view = view_of(&doc).map_err(|e| ServiceError::internal(&e))?;
    Ok((doc, view))
}

/// The case of one record (see [`CaseView`]).
pub async fn case(svc: &Services, auth: &Auth, id: &str) -> Result<CaseView, ServiceError> {
    auth.require(OFFICE_READERS)?;
    let (doc, view) = load_view(svc, id).await?;
    let registry = svc.indexed_registry().await?;
    Ok(case_of(doc, view, &registry.index(), svc.clock().today()))
}

/// The system's proposal for a record (R32): the office decides.
pub async fn proposal(svc: &Services, auth: &Auth, id: &str) -> Result<Proposal, ServiceError> {
    let c = case(svc, auth, id).await?;
    c.proposal.ok_or_else(|| {
        bad(
            "record_without_permit",
            c.proposal_unavailable.unwrap_or_default(),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Acting on a record
// ---------------------------------------------------------------------------------------------

/// The case after an action, and the registry version it wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OfficeResult {
    pub case: CaseView,
    /// Present when the action changed the registry (a new version devices will pull).
    pub registry: Option<RegistryApplied>,
}

/// `review`: the office takes the record up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    #[serde(default)]
    pub note: Option<String>,
}

/// `classify`: the rules of the catalogue the record is judged under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassifyRequest {
    /// Catalogue rule ids, e.g. R24; the citation comes from the catalogue.
    pub rule_ids: Vec<String>,
}

/// `propose`: the office's proposal; the system's when `penalty` is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeRequest {
    #[serde(default)]
    pub penalty: Option<PenaltyKind>,
}

/// `decide`: the penalty decided (art. 32 I–V; suspensions of 15 or 60 days).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideRequest {
    pub penalty: PenaltyKind,
}

/// `notify`: the ciência of the last decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyRequest {
    pub method: NotificationMethod,
    /// Date of ciência (signature, AR or publication); not in the future.
    pub on: NaiveDate,
    /// The number of the notification signed or delivered (`NP-2026-000012`): required for a
    /// signature or a postal receipt, unless the auto itself was signed on the spot.
    #[serde(default)]
    pub notification: Option<String>,
}

/// A request for reconsideration or an appeal, by the date it was filed (protocol).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilingRequest {
    /// Not in the future.
    pub on: NaiveDate,
}

/// The decision of a reconsideration or an appeal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RulingRequest {
    pub outcome: Outcome,
    /// The new penalty, when `outcome` is `modified`.
    #[serde(default)]
    pub penalty: Option<PenaltyKind>,
}

/// `annul`: why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnnulRequest {
    pub reason: String,
}

/// `resolve conflict`: one of the values `record.conflicts` shows for a top-level field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveConflictRequest {
    pub field: String,
    pub value: serde_json::Value,
}

fn caller_of(auth: &Auth) -> Caller {
    Caller {
        user_id: auth.user_id.clone(),
        role: auth.role,
        stand_id: auth.stand_id.clone(),
        device_id: auth.device_id.clone(),
    }
}

fn refusal_code(code: RejectionCode) -> &'static str {
    match code {
        RejectionCode::InvalidEvent => "event_refused",
        RejectionCode::SealedField => "sealed_field",
        RejectionCode::RoleForbidden | RejectionCode::NotVisible => "role_forbidden",
        RejectionCode::AuthorMismatch => "author_mismatch",
        RejectionCode::OutsideStand => "outside_stand",
        RejectionCode::ForeignActor => "foreign_actor",
        RejectionCode::Malformed => "invalid_event",
        RejectionCode::TooLarge => "too_large",
        RejectionCode::InvalidField => "invalid_field",
        RejectionCode::NumberNotLeased => "number_not_leased",
        RejectionCode::NumberTaken => "number_taken",
        RejectionCode::SealInvalid => "seal_invalid",
    }
}

/// Runs steps (and an effect) in one transaction; the records as they stand after.
async fn run(
    svc: &Services,
    auth: &Auth,
    steps: Vec<OfficeStep>,
    effect: Option<(String, EffectFn)>,
) -> Result<(Vec<RecordDoc>, Option<RegistryApplied>), ServiceError> {
    let job = OfficeJob {
        caller: caller_of(auth),
        steps,
        effect,
        registry: svc.indexed_registry().await?,
        now: svc.clock().now(),
    };
    match svc.store().office_apply(job).await? {
        OfficeOutcome::Applied { docs, registry } => {
            if let Some(r) = &registry {
                tracing::info!(version = r.version, "cadastro alterado por decisão");
            }
            Ok((docs, registry))
        }
        OfficeOutcome::NotFound { .. } => Err(ServiceError::not_found("Registro não encontrado.")),
        OfficeOutcome::Refused { code, message, .. } => Err(bad(
            refusal_code(code),
            sync_core::records::refusal_sentence(&message),
        )
        .with_details(serde_json::json!({ "rejection": code }))),
        OfficeOutcome::EffectRefused(r) => Err(bad(r.code, r.message)),
    }
}

/// The registry effect of decisions (see [`effects`]).
fn reconcile_effect() -> EffectFn {
    Arc::new(effects::reconcile)
}

/// Appends `events` to one record (at now, now + 1 ms, …: their replay order), with the
/// registry effect when `with_effect`, and returns the case as it stands.
async fn act(
    svc: &Services,
    auth: &Auth,
    id: &str,
    events: Vec<EventKind>,
    with_effect: bool,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let id = id.trim().to_owned();
    let (_, view) = load_view(svc, &id).await?;
    let base = next_at(&view, svc.clock().now());
    check_steps(&view, &events, base)?;
    let steps = events
        .into_iter()
        .enumerate()
        .map(|(i, event)| OfficeStep {
            record_id: id.clone(),
            event,
            at: base + Duration::milliseconds(i as i64),
        })
        .collect();
    let effect = with_effect.then(|| (id.clone(), reconcile_effect()));
    let (docs, registry) = run(svc, auth, steps, effect).await?;
    let doc = docs
        .into_iter()
        .find(|d| d.row.id == id)
        .ok_or_else(|| ServiceError::not_found("Registro não encontrado."))?;
    let view = view_of(&doc).map_err(|e| ServiceError::internal(&e))?;
    let reg = svc.indexed_registry().await?;
    Ok(OfficeResult {
        case: case_of(doc, view, &reg.index(), svc.clock().today()),
        registry,
    })
}

/// When a new office event on `view` happens: now, or just after its latest event. Events
/// replay in (time, id) order, so a new one must come after those already recorded — even
/// within the same millisecond, or when a device's clock ran ahead.
fn next_at(view: &RecordView, now: DateTime<Utc>) -> DateTime<Utc> {
    match view.events.iter().map(|e| e.at).max() {
        Some(t) if t >= now => t + Duration::milliseconds(1),
        _ => now,
    }
}

/// Asks the law kernel's procedure (`rules::procedure`, arts. 32–35) whether `events` may be
/// recorded at `at` on `view`, in the kernel's words: a decision before a review or without
/// a recorded proposal, a ciência before the decision, a late or second appeal. The replay of
/// the record refuses the same (every copy runs it); asking first gives the clerk the reason
/// without the wrapping of a refused event. Nothing is ever added on the office's behalf: a
/// missing step is refused, never filled in.
fn check_steps(
    view: &RecordView,
    events: &[EventKind],
    at: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let mut procedure = procedure_of(view);
    for event in events {
        if let Some(step) = step_of(event) {
            procedure = procedure
                .apply(&step, sync_core::time::local_date(at))
                .map_err(|e| bad("event_refused", sentence(&e.to_string())))?;
        }
    }
    Ok(())
}

use sync_core::records::refusal_sentence as sentence;

/// A penalty art. 32 provides (`rules::penalty::Grade::exact`, the same check as the
/// registry's `POST /v1/penalties` and the records' replay).
fn check_penalty(p: PenaltyKind) -> Result<(), ServiceError> {
    penalty::Grade::exact(p).map(|_| ()).map_err(|e| {
        bad("invalid_penalty", e.to_string()).with_details(serde_json::json!({
            "rule_id": sync_core::rules::RuleId::R32,
            "citation": sync_core::rules::spec(sync_core::rules::RuleId::R32).citation(),
        }))
    })
}

fn check_not_future(svc: &Services, on: NaiveDate, what: &str) -> Result<(), ServiceError> {
    if on > svc.clock().today() {
        return Err(bad(
            "invalid_date",
            format!("A data {what} não pode ser futura."),
        ));
    }
    Ok(())
}

/// The office takes the record up (`reviewed`).
pub async fn review(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: ReviewRequest,
) -> Result<OfficeResult, ServiceError> {
    let note = req
        .note
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    act(svc, auth, id, vec![EventKind::Reviewed { note }], false).await
}

/// Classifies the record under catalogue rules (`classified`).
pub async fn classify(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: ClassifyRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let mut legal_basis = Vec::new();
    // The registry's law parameters: what is disabled there cannot be cited here.
    let registry = svc.store().registry().await?;
    for raw in &req.rule_ids {
        // The same gate as the app, the command line and the vetting of records.
        let rule = sync_core::rules::citable(raw, &registry.law().rules).map_err(|e| {
            use sync_core::rules::NotCitable as N;
            let code = match e {
                N::Unknown(_) => "unknown_rule",
                N::Repealed { .. } => "repealed_rule",
                N::Disabled { .. } => "disabled_rule",
                N::NotAnInfraction { .. } => "not_an_infraction",
            };
            bad(code, e.to_string())
        })?;
        if !legal_basis
            .iter()
            .any(|b: &LegalBasis| b.rule_id == rule.id)
        {
            legal_basis.push(LegalBasis {
                rule_id: rule.id.to_string(),
                citation: rule.citation(),
            });
        }
    }
    if legal_basis.is_empty() {
        return Err(bad(
            "invalid_request",
            "Indique ao menos uma regra do catálogo (ex.: R24).",
        ));
    }
    act(
        svc,
        auth,
        id,
        vec![EventKind::Classified { legal_basis }],
        false,
    )
    .await
}

/// Records the office's proposal (`penalty_proposed`), the system's when none is given.
pub async fn propose(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: ProposeRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let c = case(svc, auth, id).await?;
    let penalty = match req.penalty {
        Some(p) => p,
        None => {
            c.proposal
                .as_ref()
                .ok_or_else(|| {
                    bad(
                        "record_without_permit",
                        c.proposal_unavailable.clone().unwrap_or_default(),
                    )
                })?
                .penalty
        }
    };
    check_penalty(penalty)?;
    act(
        svc,
        auth,
        id,
        vec![EventKind::PenaltyProposed { penalty }],
        false,
    )
    .await
}

/// The event of a decision of the penalty (what [`decide`] appends).
pub fn decision_event(req: &DecideRequest) -> Result<EventKind, ServiceError> {
    check_penalty(req.penalty)?;
    Ok(EventKind::PenaltyDecided {
        penalty: req.penalty,
    })
}

/// The event of a ruling on reconsideration (what [`decide_reconsideration`] appends).
pub fn reconsideration_ruling_event(req: &RulingRequest) -> Result<EventKind, ServiceError> {
    Ok(EventKind::ReconsiderationDecided {
        outcome: req.outcome,
        penalty: ruling(req)?,
    })
}

/// The event of a ruling on appeal (what [`decide_appeal`] appends).
pub fn appeal_ruling_event(req: &RulingRequest) -> Result<EventKind, ServiceError> {
    Ok(EventKind::AppealDecided {
        outcome: req.outcome,
        penalty: ruling(req)?,
    })
}

/// The event of an annulment (what [`annul`] appends).
pub fn annulment_event(req: &AnnulRequest) -> Result<EventKind, ServiceError> {
    let reason = req.reason.trim().to_owned();
    if reason.is_empty() {
        return Err(bad("invalid_request", "Informe o motivo da anulação."));
    }
    Ok(EventKind::Annulled { reason })
}

/// What the registry would change if `event` were appended to record `id` now, without
/// writing anything: the same check of the step, the same state machine (on a copy of the
/// record in memory) and the same [`effects::reconcile`] as the write, so what the office
/// confirms is what will be stored. Empty: the registry would not change.
pub async fn preview_effect(
    svc: &Services,
    auth: &Auth,
    id: &str,
    event: EventKind,
) -> Result<Vec<effects::EffectChange>, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let id = id.trim();
    let (doc, view) = load_view(svc, id).await?;
    let at = next_at(&view, svc.clock().now());
    check_steps(&view, std::slice::from_ref(&event), at)?;
    let mut copy =
        sync_core::records::RecordDoc::load(&doc.doc).map_err(|e| ServiceError::internal(&e))?;
    let agent = sync_core::records::Agent::new(
        auth.user_id.clone(),
        sync_core::records::UserRole::Office,
        sync_core::sync::device_uuid(&auth.device_id),
    );
    copy.append_event(&agent, at, event)
        .map_err(|e| bad("event_refused", sentence(&e.to_string())))?;
    let after = copy.view().map_err(|e| ServiceError::internal(&e))?;
    let reg = svc.store().registry().await?;
    Ok(match effects::reconcile(&after, &reg) {
        Ok(Some(edit)) => effects::changes(&reg, &edit.registry, id),
        Ok(None) => Vec::new(),
        Err(r) => return Err(bad(r.code, r.message)),
    })
}

/// Decides the penalty (`penalty_decided`) and writes its registry effect in the same
/// transaction. The record must have been reviewed and have a recorded proposal (the
/// system's, or the office's own): a missing step is refused, never written on the office's
/// behalf.
pub async fn decide(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: DecideRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let event = decision_event(&req)?;
    act(svc, auth, id, vec![event], true).await
}

/// Records the ciência of the last decision; the appeal deadline is counted with the registry's
/// holiday calendar and stored in the event (every copy judges an appeal against it).
pub async fn notify(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: NotifyRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    check_not_future(svc, req.on, "da ciência")?;
    let (_, view) = load_view(svc, id).await?;
    let notification =
        notices::check_ciencia(svc, &view, req.method, req.notification.as_deref()).await?;
    let registry = svc.store().registry().await?;
    let deadline = sync_core::rules::deadline::appeal_deadline(req.on, registry.law().holidays())
        .map_err(|e| bad("invalid_date", e.to_string()))?;
    act(
        svc,
        auth,
        id,
        vec![EventKind::Notified {
            method: req.method,
            on: req.on,
            appeal_deadline: Some(deadline.deadline),
            notification,
        }],
        false,
    )
    .await
}

/// Records a request for reconsideration (art. 34).
pub async fn file_reconsideration(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: FilingRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    check_not_future(svc, req.on, "do pedido")?;
    act(
        svc,
        auth,
        id,
        vec![EventKind::ReconsiderationFiled { on: req.on }],
        false,
    )
    .await
}

fn ruling(req: &RulingRequest) -> Result<Option<PenaltyKind>, ServiceError> {
    match (req.outcome, req.penalty) {
        (Outcome::Modified, None) => Err(bad(
            "invalid_request",
            "Indique a nova penalidade quando a decisão a modifica.",
        )),
        (Outcome::Modified, Some(p)) => {
            check_penalty(p)?;
            Ok(Some(p))
        }
        (_, _) => Ok(None),
    }
}

/// Decides the reconsideration; a reversal or a change of penalty updates the registry.
pub async fn decide_reconsideration(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: RulingRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let event = reconsideration_ruling_event(&req)?;
    act(svc, auth, id, vec![event], true).await
}

/// Records the appeal to the Prefeito (art. 33): refused by the state machine when late
/// (art. 35) or a second one.
pub async fn file_appeal(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: FilingRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    check_not_future(svc, req.on, "do recurso")?;
    act(
        svc,
        auth,
        id,
        vec![EventKind::AppealFiled { on: req.on }],
        false,
    )
    .await
}

/// Decides the appeal; a reversal or a change of penalty updates the registry.
pub async fn decide_appeal(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: RulingRequest,
) -> Result<OfficeResult, ServiceError> {
    auth.require(OFFICE_DECIDERS)?;
    let event = appeal_ruling_event(&req)?;
    act(svc, auth, id, vec![event], true).await
}

/// Annuls the record; a penalty it had in the registry is lifted.
pub async fn annul(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: AnnulRequest,
) -> Result<OfficeResult, ServiceError> {
    let event = annulment_event(&req)?;
    act(svc, auth, id, vec![event], true).await
}

/// Archives the record (its decision, if any, stays in force).
pub async fn archive(svc: &Services, auth: &Auth, id: &str) -> Result<OfficeResult, ServiceError> {
    act(svc, auth, id, vec![EventKind::Archived], false).await
}

/// Picks one of the concurrent values of a field (`conflict_resolved`; both stay in history).
pub async fn resolve_conflict(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: ResolveConflictRequest,
) -> Result<OfficeResult, ServiceError> {
    let field = req.field.trim().to_owned();
    act(
        svc,
        auth,
        id,
        vec![EventKind::ConflictResolved {
            field,
            value: req.value,
        }],
        false,
    )
    .await
}

/// Re-runs the registry reconciliation of a record (e.g. after a decision arrived through an
/// office device's sync). Idempotent: nothing is written when the registry already agrees.
pub async fn reapply_effects(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<OfficeResult, ServiceError> {
    act(svc, auth, id, Vec::new(), true).await
}

/// Local time of an instant, for pages.
pub fn local(at: DateTime<Utc>) -> String {
    sync_core::time::local_datetime(at)
        .format("%d/%m/%Y %H:%M")
        .to_string()
}
