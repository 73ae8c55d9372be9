//! The filters of the records list and the inbox, read from what a desk sends (strings, as
//! typed) into the store's [`RecordFilter`]: a plate in any spelling to its canonical form, a
//! local date to the instants of its day in Americana, a rule id to upper case. Shared by
//! `GET /v1/records` and the office inbox, so both read a filter the same way.

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use serde::Deserialize;
use sync_core::domain::Plate;

use crate::service::ServiceError;
use crate::store::records::RecordFilter;

/// Page size when none is asked for.
pub const DEFAULT_LIMIT: u32 = 50;
/// The largest page (a larger `limit` is read as this one).
pub const MAX_LIMIT: u32 = 500;

/// Filters of `GET /v1/records` and the inbox (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordsQuery {
    /// Derived status, e.g. `issued`, `under_review`.
    #[serde(default)]
    pub status: Option<String>,
    /// `infraction` or `transgression`.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub stand: Option<String>,
    /// Author's user id.
    #[serde(default)]
    pub officer: Option<String>,
    /// Any spelling (`abc-1234`, `ABC1C34`): compared in canonical form.
    #[serde(default)]
    pub plate: Option<String>,
    /// From this instant (RFC 3339) or local date (`YYYY-MM-DD`, from its start in Americana).
    #[serde(default)]
    pub from: Option<String>,
    /// Up to this instant (exclusive) or local date (inclusive: until the end of that day).
    #[serde(default)]
    pub to: Option<String>,
    /// A rule id (`R24`) the record is classified under.
    #[serde(default)]
    pub rule: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub offset: Option<u32>,
}

/// Local date or instant → UTC instant. `end`: a date means the start of the next day.
fn parse_bound(s: &str, end: bool, field: &str) -> Result<DateTime<Utc>, ServiceError> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    let bad = || {
        ServiceError::bad_request(
            "invalid_query",
            format!("`{field}` deve ser uma data (AAAA-MM-DD) ou um instante RFC 3339."),
        )
    };
    let date = NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| bad())?;
    let date = if end {
        date.checked_add_signed(Duration::days(1)).ok_or_else(bad)?
    } else {
        date
    };
    let midnight = date.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
    sync_core::time::LOCAL_TZ
        .from_local_datetime(&midnight)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(bad)
}

pub fn filter_of(q: RecordsQuery) -> Result<RecordFilter, ServiceError> {
    let plate = match q.plate.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => Some(
            Plate::parse(p)
                .map_err(|_| {
                    ServiceError::bad_request(
                        "invalid_plate",
                        "Placa inválida (formatos aceitos: ABC-1234 ou ABC1C34).",
                    )
                })?
                .canonical()
                .to_owned(),
        ),
    };
    let non_empty = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    Ok(RecordFilter {
        status: non_empty(q.status),
        kind: non_empty(q.kind),
        stand_id: non_empty(q.stand),
        officer: non_empty(q.officer),
        plate,
        from: q
            .from
            .as_deref()
            .map(|s| parse_bound(s, false, "from"))
            .transpose()?,
        to: q
            .to
            .as_deref()
            .map(|s| parse_bound(s, true, "to"))
            .transpose()?,
        rule: non_empty(q.rule).map(|r| r.to_uppercase()),
        limit: q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT),
        offset: q.offset.unwrap_or(0),
        ..RecordFilter::default()
    })
}
