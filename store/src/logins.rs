//! Login failure budgets, kept in the store so that every server node counts the same attempts
//! (ADR 0034: two nodes behind a load balancer must not give a guesser two budgets) and a
//! restart forgets nothing.
//!
//! Flow: the server's `auth::limiter` reserves one attempt of a login before its password is
//! hashed ([`crate::Store::login_reserve`]) and settles it afterwards
//! ([`crate::Store::login_settle`]: [`Settle::Succeed`], [`Settle::Refund`] or [`Settle::Fail`]).
//! Each call is one write transaction in which the backend prunes expired rows (below), reads the
//! attempt's two rows — the (username, address) pair's and the username's, [`BudgetRow`] —,
//! hands them to the pure functions of this module ([`reserve`], [`settle`]) and writes back what
//! they answer ([`Writes`]). The budget logic is written once, here, as the audit chain's
//! `audit::next_row` is; each backend only reads and writes rows. The write transaction (SQLite's
//! one writer, PostgreSQL's database-wide write lock) serialises every reserve on every node, so
//! an attempt still running counts: however many logins arrive at once, wherever, at most
//! `max` hashes run for a budget in a window.
//!
//! The budgets ([`Policies`], from the server's configuration):
//! - the pair budget locks the guesser's address out for one window: bad attempts from one
//!   address do not keep the user out from another;
//! - the username budget (ten times higher by default) bounds guessing spread over many
//!   addresses; each time it is spent again the lockout doubles, up to `max_backoff`.
//!
//! Pruning: each row is written with the instant it expires ([`BudgetRow::expires_at`]: its
//! window, its lockout and the memory of its backoff all over — from then on forgetting it changes
//! nothing that matters), and every reserve first deletes at most [`PRUNE_BATCH`] expired rows of each table,
//! oldest first, through an index on that instant. A reserve adds at most one row to each table,
//! so expired rows drain faster than logins can add them and the tables hold about the rows of
//! one window's attempts (plus the usernames whose backoff is remembered, up to `max_backoff`):
//! that is their bound, and the per-address budgets of the server bound those attempts. There is
//! no hard cap on live rows: counting them on every login would cost a scan inside the write
//! lock, and refusing logins when full would let a flood of made-up names lock everyone out.
//!
//! Instants are truncated to microseconds ([`instant`]) before any comparison, because that is
//! what the stored text (`audit::format_at`) keeps: a row read back compares as it was computed.

use chrono::{DateTime, Duration, SubsecRound, Utc};

/// Expired rows each reserve deletes at most, per table. More than the one row a reserve may add
/// to each table, so expired rows cannot pile up while logins go on (a backlog left by a flood
/// drains 32 rows a login); small, so that one login's write transaction stays a few index
/// reads and writes long.
pub const PRUNE_BATCH: u64 = 32;

/// How many attempts in which window, and how a lockout grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Attempts counted in a window, those still running included, before refusing.
    pub max: u32,
    /// The window attempts are counted in, and the first lockout's length.
    pub window: Duration,
    /// Each new lockout doubles, up to this (`None`: always one window).
    pub max_backoff: Option<Duration>,
}

/// The two budgets every login spends from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policies {
    /// Per (username, address).
    pub pair: Policy,
    /// Per username, from every address together.
    pub username: Policy,
}

impl Policies {
    /// `max_failures` per pair per `window` (locked one window), and `max_failures_per_username`
    /// per username (never fewer than the pair's) with lockouts doubling up to `max_backoff`
    /// (never shorter than one window). A maximum of zero counts as one.
    pub fn new(
        max_failures: u32,
        window: Duration,
        max_failures_per_username: u32,
        max_backoff: Duration,
    ) -> Self {
        let max = max_failures.max(1);
        Self {
            pair: Policy {
                max,
                window,
                max_backoff: None,
            },
            username: Policy {
                max: max_failures_per_username.max(max),
                window,
                max_backoff: Some(max_backoff.max(window)),
            },
        }
    }
}

/// Which two rows an attempt counts against: the username's (its key form: trimmed,
/// lower-cased, bounded by the server) and the (username, address) pair's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoginKey {
    pub username: String,
    /// The client address as the server counts it (IPv6 by its prefix), as text.
    pub address: String,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// The right password: the pair starts afresh and the username gets its attempt back (the
    /// right password from one address does not reset the count of guesses from others).
    Succeed,
    /// No password was checked (the server was busy): both get the attempt back.
    Refund,
    /// A wrong password or an unknown user: the attempt stays counted, and the budget locks when
    /// it is spent.
    Fail,
}

/// Attempts counted now (tests, logs) and the rows of each table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoginCounts {
    /// Attempts counted for the pair in its window, those still running included.
    pub pair: u32,
    /// Attempts counted for the username.
    pub username: u32,
    /// Rows of the pair table, expired ones not yet pruned included.
    pub pairs_tracked: u64,
    /// Rows of the username table.
    pub usernames_tracked: u64,
}

/// One budget's state, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRow {
    /// Attempts counted in this window, those still running included.
    pub attempts: u32,
    pub window_start: DateTime<Utc>,
    pub locked_until: Option<DateTime<Utc>>,
    /// Lockouts in a row (the backoff's exponent).
    pub strikes: u32,
}

/// `now` as stored: truncated to microseconds (module doc).
pub fn instant(now: DateTime<Utc>) -> DateTime<Utc> {
    now.trunc_subsecs(6)
}

/// Whole seconds to wait, at least one (for `Retry-After`).
fn seconds(d: Duration) -> u64 {
    u64::try_from(d.num_seconds()).unwrap_or(0).max(1)
}

impl BudgetRow {
    /// A budget seen for the first time at `now`.
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            attempts: 0,
            window_start: now,
            locked_until: None,
            strikes: 0,
        }
    }

    /// Starts a new window when the lockout or the window is over.
    pub fn roll(&mut self, p: &Policy, now: DateTime<Utc>) {
        match self.locked_until {
            Some(until) if until <= now => {
                self.locked_until = None;
                self.attempts = 0;
                self.window_start = now;
            }
            Some(_) => {}
            None if now - self.window_start >= p.window => {
                // A window that ended without a lockout ends the backoff too.
                self.strikes = 0;
                self.attempts = 0;
                self.window_start = now;
            }
            None => {}
        }
    }

    /// `Err(seconds)` while locked or while the budget is taken by attempts still running.
    pub fn admit(&mut self, p: &Policy, now: DateTime<Utc>) -> Result<(), u64> {
        self.roll(p, now);
        if let Some(until) = self.locked_until {
            return Err(seconds(until - now));
        }
        if self.attempts >= p.max {
            return Err(seconds(self.window_start + p.window - now));
        }
        Ok(())
    }

    /// After a failed attempt (already counted): locks when the budget is spent, for one window,
    /// doubled for each lockout in a row up to the policy's `max_backoff`. `Some(seconds)` while
    /// locked.
    pub fn fail(&mut self, p: &Policy, now: DateTime<Utc>) -> Option<u64> {
        if let Some(until) = self.locked_until {
            return (until > now).then(|| seconds(until - now));
        }
        if self.attempts < p.max {
            return None;
        }
        let length = match p.max_backoff {
            Some(max) => {
                let factor = 1_i32 << self.strikes.min(16);
                (p.window * factor).min(max)
            }
            None => p.window,
        };
        self.strikes = self.strikes.saturating_add(1);
        self.locked_until = Some(now + length);
        Some(seconds(length))
    }

    /// The instant from which forgetting the row changes nothing that matters: its window and its
    /// lockout are over and, once it has been locked, so is the memory of its backoff —
    /// `max_backoff` after the lockout ended (or after the window that started since). Counted
    /// from the lockout's end, not from its window's start, so that a lockout at the maximum is
    /// not forgotten the moment it ends: a guesser who keeps on stays at the maximum. Stored with
    /// the row, so that pruning is one indexed range.
    pub fn expires_at(&self, p: &Policy) -> DateTime<Utc> {
        let mut at = self.window_start + p.window;
        if let Some(until) = self.locked_until {
            at = at.max(until);
        }
        if self.strikes > 0
            && let Some(max) = p.max_backoff
        {
            let since = self.locked_until.unwrap_or(self.window_start);
            at = at.max(since.max(self.window_start) + max);
        }
        at
    }

    /// Whether forgetting the row at `now` would change nothing.
    pub fn stale(&self, p: &Policy, now: DateTime<Utc>) -> bool {
        self.expires_at(p) <= now
    }
}

/// What to do with one stored row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Leave it as it is (or absent).
    Keep,
    /// Insert or replace it with this.
    Put(BudgetRow),
    /// Delete it.
    Delete,
}

/// What to write back for the attempt's two rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writes {
    pub pair: Write,
    pub username: Write,
}

/// `Put(after)` when it differs from what was read.
fn put_if_changed(before: Option<BudgetRow>, after: BudgetRow) -> Write {
    if before == Some(after) {
        Write::Keep
    } else {
        Write::Put(after)
    }
}

/// One attempt reserved from both budgets, given the two rows as read (`None`: absent), or
/// `Err(seconds)` to wait when either has no attempt left. The username's budget is asked
/// first; a pair is not written for a username refused.
pub fn reserve(
    pair: Option<BudgetRow>,
    username: Option<BudgetRow>,
    policies: &Policies,
    now: DateTime<Utc>,
) -> (Writes, Result<(), u64>) {
    let now = instant(now);
    let mut user = username.unwrap_or(BudgetRow::new(now));
    if let Err(wait) = user.admit(&policies.username, now) {
        let writes = Writes {
            pair: Write::Keep,
            username: put_if_changed(username, user),
        };
        return (writes, Err(wait));
    }
    let mut p = pair.unwrap_or(BudgetRow::new(now));
    if let Err(wait) = p.admit(&policies.pair, now) {
        let writes = Writes {
            pair: put_if_changed(pair, p),
            username: put_if_changed(username, user),
        };
        return (writes, Err(wait));
    }
    p.attempts = p.attempts.saturating_add(1);
    user.attempts = user.attempts.saturating_add(1);
    let writes = Writes {
        pair: Write::Put(p),
        username: Write::Put(user),
    };
    (writes, Ok(()))
}

/// Settles an attempt reserved before, given the two rows as read now. `Some(seconds)` when the
/// attempt failed and the pair's or the username's budget is now spent (the longer lockout).
/// A row no longer there (pruned after a very long attempt) is left absent.
pub fn settle(
    pair: Option<BudgetRow>,
    username: Option<BudgetRow>,
    outcome: Settle,
    policies: &Policies,
    now: DateTime<Utc>,
) -> (Writes, Option<u64>) {
    let now = instant(now);
    let give_back = |row: Option<BudgetRow>| match row {
        Some(r) => put_if_changed(
            row,
            BudgetRow {
                attempts: r.attempts.saturating_sub(1),
                ..r
            },
        ),
        None => Write::Keep,
    };
    match outcome {
        Settle::Succeed => {
            let writes = Writes {
                pair: if pair.is_some() {
                    Write::Delete
                } else {
                    Write::Keep
                },
                username: give_back(username),
            };
            (writes, None)
        }
        Settle::Refund => {
            let writes = Writes {
                pair: give_back(pair),
                username: give_back(username),
            };
            (writes, None)
        }
        Settle::Fail => {
            let fail = |row: Option<BudgetRow>, p: &Policy| match row {
                Some(mut r) => {
                    let locked = r.fail(p, now);
                    (put_if_changed(row, r), locked)
                }
                None => (Write::Keep, None),
            };
            let (pair_write, pair_locked) = fail(pair, &policies.pair);
            let (user_write, user_locked) = fail(username, &policies.username);
            let locked = match (pair_locked, user_locked) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            let writes = Writes {
                pair: pair_write,
                username: user_write,
            };
            (writes, locked)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t0() -> DateTime<Utc> {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    fn policies() -> Policies {
        Policies::new(2, Duration::seconds(600), 4, Duration::seconds(1800))
    }

    #[test]
    fn a_row_expires_exactly_when_its_window_lockout_and_backoff_are_over() {
        let p = policies();
        let mut row = BudgetRow::new(t0());
        // Out of its window at the window's end, not a microsecond before.
        assert_eq!(row.expires_at(&p.pair), t0() + Duration::seconds(600));
        assert!(!row.stale(
            &p.pair,
            t0() + Duration::seconds(600) - Duration::microseconds(1)
        ));
        assert!(row.stale(&p.pair, t0() + Duration::seconds(600)));
        // Locked near the window's end: until the lockout is over.
        row.attempts = 2;
        let late = t0() + Duration::seconds(500);
        assert_eq!(row.fail(&p.pair, late), Some(600));
        assert_eq!(row.expires_at(&p.pair), late + Duration::seconds(600));
        // The username's backoff is remembered for its maximum after the lockout ends, and after
        // the window that starts then.
        let mut user = BudgetRow::new(t0());
        user.attempts = 4;
        assert_eq!(user.fail(&p.username, t0()), Some(600));
        let unlocked = t0() + Duration::seconds(600);
        assert_eq!(
            user.expires_at(&p.username),
            unlocked + Duration::seconds(1800)
        );
        let again = unlocked + Duration::seconds(5);
        user.roll(&p.username, again);
        assert_eq!((user.locked_until, user.strikes), (None, 1));
        assert_eq!(
            user.expires_at(&p.username),
            again + Duration::seconds(1800)
        );
    }

    #[test]
    fn reserve_writes_only_what_changed_and_instants_are_kept_in_microseconds() {
        let p = policies();
        let now = t0() + Duration::nanoseconds(1_234_567);
        let (writes, ok) = reserve(None, None, &p, now);
        assert_eq!(ok, Ok(()));
        let Write::Put(row) = writes.pair else {
            panic!("{writes:?}")
        };
        assert_eq!(row.window_start, t0() + Duration::microseconds(1_234));
        // A locked username is refused without writing anything, and no pair is made for it.
        let locked = BudgetRow {
            attempts: 4,
            window_start: t0(),
            locked_until: Some(t0() + Duration::seconds(600)),
            strikes: 1,
        };
        let (writes, refused) = reserve(None, Some(locked), &p, t0() + Duration::seconds(1));
        assert_eq!(refused, Err(599));
        assert_eq!(
            writes,
            Writes {
                pair: Write::Keep,
                username: Write::Keep
            }
        );
    }
}
