//! The office pages' browser sessions as the store keeps them: one row per session, in the
//! database every server node shares, so any node serves any office browser and a restart logs
//! nobody out.
//!
//! Flow: `POST /login` opens a session ([`crate::Store::open_web_session`]): the row is keyed by
//! the SHA-256 of the cookie's token (the token itself is never stored), and the same write
//! deletes every expired session and the user's oldest beyond [`MAX_WEB_SESSIONS_PER_USER`], so
//! the table stays bounded without a sweeper. Every page request touches its session
//! ([`crate::Store::touch_web_session`]): one read, and a write only when the session has
//! expired (the row is deleted) or its `last_seen` is [`TOUCH_INTERVAL`] old or older (it is
//! moved to now). A page view is therefore not a write each time; the price is that idle expiry
//! is exact to that interval: a session ends between `idle - TOUCH_INTERVAL` and `idle` after
//! its last use, never later. The absolute timeout is exact. A one-shot message (the
//! [`Flash`]) lives in the row from the redirect that sets it to the page that takes it.
//!
//! The timeouts are the server's (`web::session`), handed in as [`Timeouts`]; what every backend
//! must decide the same way — whether a session is expired, whether a touch writes — is here, as
//! pure functions ([`Timeouts::expired`], [`touch_action`]).

use chrono::{DateTime, Duration, Utc};

/// Sessions one user may hold at once; opening one more ends their oldest. An office user has a
/// browser or two on their desk and perhaps a private window; ten covers every desk of a shared
/// account while bounding what one password (or a script logging in with it) can make the
/// server keep.
pub const MAX_WEB_SESSIONS_PER_USER: usize = 10;

/// How old `last_seen` must be before a touch writes it: one minute, so a page view is a write at
/// most once a minute per session, and idle expiry is exact to a minute.
pub const TOUCH_INTERVAL: Duration = Duration::minutes(1);

/// A one-shot message shown on the next page a session opens (after a redirect).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// True for "done", false for a warning.
    pub ok: bool,
    pub message: String,
}

/// A browser session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSessionRow {
    /// SHA-256 (lower-case hex) of the cookie's token.
    pub key: String,
    pub user_id: String,
    pub username: String,
    /// The registered device the session acts on (`web::session::pick_device`).
    pub device_id: String,
    pub display_name: String,
    /// The token every POST form of the session carries.
    pub csrf: String,
    pub created_at: DateTime<Utc>,
    /// The last use written (at most [`TOUCH_INTERVAL`] behind the real last use).
    pub last_seen: DateTime<Utc>,
    /// The message waiting for the next page.
    pub flash: Option<Flash>,
}

/// When sessions end: after `idle` without use, and `absolute` after they were opened whatever
/// happens. Both are the server's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub idle: Duration,
    pub absolute: Duration,
}

impl Timeouts {
    /// Whether a session opened at `created_at` and last seen at `last_seen` has ended at `now`:
    /// more than `idle` since it was last seen, or more than `absolute` since it was opened. At
    /// exactly either limit it is still live.
    pub fn expired(
        &self,
        created_at: DateTime<Utc>,
        last_seen: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> bool {
        now - last_seen > self.idle || now - created_at > self.absolute
    }

    /// The `(last_seen, created_at)` instants before which a session has ended at `now` (what
    /// [`Timeouts::expired`] says, as the bounds a backend's `DELETE` compares the stored
    /// instants with).
    pub fn cutoffs(&self, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        (now - self.idle, now - self.absolute)
    }
}

/// What a touch does to a stored session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// Live, and seen recently enough: nothing is written.
    Keep,
    /// Live, and `last_seen` is [`TOUCH_INTERVAL`] old or older: it becomes now.
    Refresh,
    /// Ended: the row is deleted.
    Expired,
}

/// What touching `row` at `now` does (a clock behind `last_seen`, another node's, keeps it).
pub fn touch_action(row: &WebSessionRow, now: DateTime<Utc>, timeouts: Timeouts) -> Touch {
    if timeouts.expired(row.created_at, row.last_seen, now) {
        Touch::Expired
    } else if now - row.last_seen >= TOUCH_INTERVAL {
        Touch::Refresh
    } else {
        Touch::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    fn row(created_at: DateTime<Utc>, last_seen: DateTime<Utc>) -> WebSessionRow {
        WebSessionRow {
            key: String::from("k"),
            user_id: String::from("u"),
            username: String::from("u"),
            device_id: String::from("d"),
            display_name: String::from("U"),
            csrf: String::from("c"),
            created_at,
            last_seen,
            flash: None,
        }
    }

    const TIMEOUTS: Timeouts = Timeouts {
        idle: Duration::minutes(60),
        absolute: Duration::hours(10),
    };

    #[test]
    fn touches_write_once_a_minute_and_expire_past_either_limit() {
        let t0 = at("2026-11-30T15:00:00Z");
        let us = Duration::microseconds(1);
        let fresh = row(t0, t0);
        assert_eq!(touch_action(&fresh, t0, TIMEOUTS), Touch::Keep);
        assert_eq!(
            touch_action(&fresh, t0 + TOUCH_INTERVAL - us, TIMEOUTS),
            Touch::Keep
        );
        assert_eq!(
            touch_action(&fresh, t0 + TOUCH_INTERVAL, TIMEOUTS),
            Touch::Refresh
        );
        assert_eq!(
            touch_action(&fresh, t0 + TIMEOUTS.idle, TIMEOUTS),
            Touch::Refresh
        );
        assert_eq!(
            touch_action(&fresh, t0 + TIMEOUTS.idle + us, TIMEOUTS),
            Touch::Expired
        );
        // Used a minute ago, but opened longer ago than the absolute limit.
        let late = t0 + TIMEOUTS.absolute;
        let busy = row(t0, late - TOUCH_INTERVAL);
        assert_eq!(touch_action(&busy, late, TIMEOUTS), Touch::Refresh);
        assert_eq!(touch_action(&busy, late + us, TIMEOUTS), Touch::Expired);
        // Another node's clock ahead of this one's.
        assert_eq!(
            touch_action(&row(t0, t0 + TOUCH_INTERVAL), t0, TIMEOUTS),
            Touch::Keep
        );
        assert_eq!(
            TIMEOUTS.cutoffs(late),
            (late - TIMEOUTS.idle, late - TIMEOUTS.absolute)
        );
    }
}
