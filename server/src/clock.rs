//! The server's clock: every "now" (token expiry, audit time, the office's "today" for the law's
//! checks) comes from here, so tests can pin and advance time instead of sleeping.
//!
//! Instants are UTC; [`Clock::today`] is the local date in America/Sao_Paulo, the calendar the
//! law is reasoned in (`sync_core::time`).

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Duration, NaiveDate, SubsecRound, Utc};

/// A shared clock: the system clock, or a fixed instant that tests move by hand.
#[derive(Debug, Clone)]
pub struct Clock(Arc<Inner>);

#[derive(Debug)]
enum Inner {
    System,
    Fixed(Mutex<DateTime<Utc>>),
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(Arc::new(Inner::System))
    }

    /// A clock stopped at `at` until [`Clock::advance`] moves it.
    pub fn fixed(at: DateTime<Utc>) -> Self {
        Self(Arc::new(Inner::Fixed(Mutex::new(at))))
    }

    /// Now, to the microsecond (what the database stores, so a value read back is equal).
    pub fn now(&self) -> DateTime<Utc> {
        match &*self.0 {
            Inner::System => Utc::now().trunc_subsecs(6),
            Inner::Fixed(at) => *at.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// Today's date in Americana.
    pub fn today(&self) -> NaiveDate {
        sync_core::time::local_date(self.now())
    }

    /// Moves a fixed clock forward (tests); the system clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let Inner::Fixed(at) = &*self.0 {
            let mut at = at.lock().unwrap_or_else(PoisonError::into_inner);
            *at += by;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_advances_and_reports_local_date() {
        let at: DateTime<Utc> = "2026-12-01T01:30:00Z".parse().unwrap();
        let c = Clock::fixed(at);
        assert_eq!(c.now(), at);
        // 01:30 UTC is still 30 November in Americana.
        assert_eq!(c.today(), NaiveDate::from_ymd_opt(2026, 11, 30).unwrap());
        c.advance(Duration::hours(3));
        assert_eq!(c.today(), NaiveDate::from_ymd_opt(2026, 12, 1).unwrap());
    }
}
