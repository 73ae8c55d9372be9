//! Time: instants are UTC; the law is reasoned in America/Sao_Paulo local dates and hours.
//!
//! Periods in months or years ("há mais de dois anos", "21 anos", a verification valid for two
//! years) are counted by one function, [`Period::ends_on`], per Código Civil art. 132 § 3: such
//! a period expires on the day of the same number in the final month, or on the next day when
//! that month has no such day. chrono's month arithmetic clamps to the month's last day instead
//! (29 Feb 2024 + 2 years = 28 Feb 2026, where the law says 1 Mar 2026), so no rule adds
//! `Months` itself.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};
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

/// A period fixed in months or years (Código Civil art. 132 § 3; Lei 9.784/1999 art. 66 § 3:
/// "de data a data").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Months(u32),
    Years(u32),
}

impl Period {
    fn months(self) -> u32 {
        match self {
            Period::Months(m) => m,
            Period::Years(y) => y.saturating_mul(12),
        }
    }

    /// The day this period, begun on `start`, expires: the day of `start`'s number in the final
    /// month, or the first day of the month after when the final month is shorter (31 Jan + 1
    /// month: 1 Mar; 29 Feb 2024 + 2 years: 1 Mar 2026). `None` past chrono's last date.
    pub fn ends_on(self, start: NaiveDate) -> Option<NaiveDate> {
        let months0 = i64::from(start.month0()) + i64::from(self.months());
        let year = i32::try_from(i64::from(start.year()) + months0.div_euclid(12)).ok()?;
        let month = u32::try_from(months0.rem_euclid(12)).ok()? + 1;
        NaiveDate::from_ymd_opt(year, month, start.day()).or_else(|| {
            // No such day in the final month: the first day of the next one.
            let (y, m) = if month == 12 {
                (year.checked_add(1)?, 1)
            } else {
                (year, month + 1)
            };
            NaiveDate::from_ymd_opt(y, m, 1)
        })
    }

    /// Whether *more than* this period has passed since `start` on `on`: the day it expires
    /// still belongs to the period ("expedida há mais de dois anos" is false on the
    /// anniversary).
    pub fn exceeded(self, start: NaiveDate, on: NaiveDate) -> bool {
        self.ends_on(start).is_some_and(|end| on > end)
    }

    /// Whether the period is complete on `on`, i.e. `on` is the day it expires or later (an age
    /// of 21 years is reached on the 21st birthday).
    pub fn completed(self, start: NaiveDate, on: NaiveDate) -> bool {
        self.ends_on(start).is_some_and(|end| on >= end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn periods_end_on_the_same_day_number_or_the_next_day() {
        for (start, period, end) in [
            // 29 Feb has no match in 2026: the next day (chrono would say 28 Feb).
            (d(2024, 2, 29), Period::Years(2), d(2026, 3, 1)),
            (d(2024, 2, 29), Period::Years(4), d(2028, 2, 29)),
            (d(2024, 2, 28), Period::Years(2), d(2026, 2, 28)),
            (d(2026, 1, 31), Period::Months(1), d(2026, 3, 1)),
            (d(2026, 1, 30), Period::Months(1), d(2026, 3, 1)),
            (d(2026, 1, 28), Period::Months(1), d(2026, 2, 28)),
            (d(2026, 3, 31), Period::Months(1), d(2026, 5, 1)),
            (d(2026, 12, 31), Period::Months(2), d(2027, 3, 1)),
            (d(2026, 10, 31), Period::Months(2), d(2026, 12, 31)),
            (d(2026, 11, 30), Period::Months(1), d(2026, 12, 30)),
            (d(2026, 12, 15), Period::Months(1), d(2027, 1, 15)),
            (d(2026, 5, 10), Period::Months(0), d(2026, 5, 10)),
            (d(2004, 2, 29), Period::Years(21), d(2025, 3, 1)),
        ] {
            assert_eq!(period.ends_on(start), Some(end), "{start} + {period:?}");
        }
        assert_eq!(Period::Years(1).ends_on(NaiveDate::MAX), None);
    }

    #[test]
    fn more_than_excludes_the_day_the_period_expires() {
        let first = d(2024, 2, 29);
        let two = Period::Years(2);
        assert!(!two.exceeded(first, d(2026, 2, 28)));
        assert!(!two.exceeded(first, d(2026, 3, 1)));
        assert!(two.exceeded(first, d(2026, 3, 2)));
        assert!(!two.completed(first, d(2026, 2, 28)));
        assert!(two.completed(first, d(2026, 3, 1)));
    }

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
