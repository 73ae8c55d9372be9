//! Time: instants are UTC; the law is reasoned in America/Sao_Paulo local dates and hours.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::America::Sao_Paulo;
use chrono_tz::Tz;

/// The municipality's time zone.
pub const LOCAL_TZ: Tz = Sao_Paulo;

/// The local civil date of an instant in Americana.
pub fn local_date(at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&LOCAL_TZ).date_naive()
}

/// The local wall-clock date and time of an instant in Americana.
pub fn local_datetime(at: DateTime<Utc>) -> NaiveDateTime {
    at.with_timezone(&LOCAL_TZ).naive_local()
}

/// RFC 3339 with the local offset, for people reading it.
pub fn local_rfc3339(at: DateTime<Utc>) -> String {
    at.with_timezone(&LOCAL_TZ).to_rfc3339()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_evening_utc_is_previous_local_day() {
        // 02:00 UTC on 1 Feb is 23:00 on 31 Jan in Americana (UTC−3, no DST since 2019).
        let at: DateTime<Utc> = "2026-02-01T02:00:00Z".parse().unwrap();
        assert_eq!(
            local_date(at),
            NaiveDate::from_ymd_opt(2026, 1, 31).unwrap()
        );
        assert_eq!(local_rfc3339(at), "2026-01-31T23:00:00-03:00");
    }
}
