//! Login failure budgets, counted in memory per (username, client address) and per username.
//!
//! Every attempt is counted *before* its password is hashed: [`LoginLimiter::reserve`] takes
//! one attempt from both budgets under one lock, or refuses without hashing. The caller then
//! settles the [`Reservation`]: [`Reservation::succeed`] (right password: the pair is cleared and
//! the username's attempt given back), [`Reservation::refund`] (no hash ran: the attempt is
//! given back) or [`Reservation::fail`] (the attempt stays counted; the answer says whether the
//! budget is now spent). An attempt still running counts, so however many logins arrive at
//! once, at most `max_failures` hashes run for a pair in a window.
//!
//! - The pair budget ([`crate::limits::LOGIN_MAX_FAILURES`] per
//!   [`crate::limits::LOGIN_LOCKOUT`]) locks out the guesser's address only: bad attempts from
//!   one address do not keep the user out from another.
//! - The username budget ([`crate::limits::LOGIN_MAX_FAILURES_PER_USERNAME`], ten times higher)
//!   bounds guessing spread over many addresses; each time it is spent again the lockout
//!   doubles, up to [`crate::limits::LOGIN_MAX_BACKOFF`].
//!
//! Usernames are counted whether they exist or not, so a lockout does not tell which exist.
//! In memory on purpose: a restart forgets the counts, which is acceptable for lockouts of
//! minutes; a multi-node deployment would move this to the shared store. Both maps are pruned
//! of stale entries and capped at [`crate::limits::MAX_TRACKED_LOGIN_KEYS`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Duration, Utc};

use crate::limits::{
    LOGIN_MAX_BACKOFF, LOGIN_MAX_FAILURES_PER_USERNAME, MAX_TRACKED_LOGIN_KEYS,
    MAX_USERNAME_KEY_CHARS,
};

/// How many attempts in which window, and how a lockout grows.
#[derive(Debug, Clone, Copy)]
struct Policy {
    max: u32,
    window: Duration,
    /// Each new lockout doubles, up to this (`None`: always one window).
    max_backoff: Option<Duration>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Attempts counted in this window, those still running included.
    attempts: u32,
    window_start: DateTime<Utc>,
    locked_until: Option<DateTime<Utc>>,
    /// Lockouts in a row (the backoff's exponent).
    strikes: u32,
}

fn seconds(d: Duration) -> u64 {
    d.num_seconds().max(1) as u64
}

impl Entry {
    fn new(now: DateTime<Utc>) -> Self {
        Self {
            attempts: 0,
            window_start: now,
            locked_until: None,
            strikes: 0,
        }
    }

    /// Starts a new window when the lockout or the window is over.
    fn roll(&mut self, p: &Policy, now: DateTime<Utc>) {
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
    fn admit(&mut self, p: &Policy, now: DateTime<Utc>) -> Result<(), u64> {
        self.roll(p, now);
        if let Some(until) = self.locked_until {
            return Err(seconds(until - now));
        }
        if self.attempts >= p.max {
            return Err(seconds(self.window_start + p.window - now));
        }
        Ok(())
    }

    /// After a failed attempt (already counted): locks when the budget is spent.
    fn fail(&mut self, p: &Policy, now: DateTime<Utc>) -> Option<u64> {
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

    /// Whether forgetting the entry would change nothing.
    fn stale(&self, p: &Policy, now: DateTime<Utc>) -> bool {
        let locked = self.locked_until.is_some_and(|u| u > now);
        let in_window = now - self.window_start < p.window;
        let backoff_remembered = self.strikes > 0
            && p.max_backoff
                .is_some_and(|max| now - self.window_start < max);
        !locked && !in_window && !backoff_remembered
    }
}

type PairKey = (String, IpAddr);

#[derive(Debug, Default)]
struct Maps {
    pairs: HashMap<PairKey, Entry>,
    users: HashMap<String, Entry>,
}

/// The failure budgets of every username and (username, address) pair.
#[derive(Debug)]
pub struct LoginLimiter {
    pair: Policy,
    user: Policy,
    cap: usize,
    maps: Mutex<Maps>,
}

/// One attempt, counted; settle it with one of its methods. Dropped unsettled (an error
/// half-way), it stays counted as a failure.
#[derive(Debug)]
#[must_use = "settle the attempt: succeed, fail or refund"]
pub struct Reservation<'a> {
    limiter: &'a LoginLimiter,
    username: String,
    /// `None` when the pair map was full: the attempt counts against the username only.
    pair: Option<PairKey>,
}

/// The form of a username the counters key by: trimmed, lower-cased, at most
/// [`MAX_USERNAME_KEY_CHARS`] characters.
pub fn username_key(username: &str) -> String {
    username
        .trim()
        .chars()
        .take(MAX_USERNAME_KEY_CHARS)
        .collect::<String>()
        .to_lowercase()
}

impl LoginLimiter {
    /// `max_failures` per (username, address) per `window`, and the username ceilings of
    /// [`crate::limits`].
    pub fn new(max_failures: u32, window: std::time::Duration) -> Self {
        Self::with_limits(
            max_failures,
            window,
            LOGIN_MAX_FAILURES_PER_USERNAME,
            MAX_TRACKED_LOGIN_KEYS,
        )
    }

    /// Every budget explicit (tests use small ones).
    pub fn with_limits(
        max_failures: u32,
        window: std::time::Duration,
        max_failures_per_username: u32,
        cap: usize,
    ) -> Self {
        let window = Duration::from_std(window).unwrap_or_else(|_| Duration::minutes(15));
        let max_backoff =
            Duration::from_std(LOGIN_MAX_BACKOFF).unwrap_or_else(|_| Duration::hours(24));
        let max_failures = max_failures.max(1);
        Self {
            pair: Policy {
                max: max_failures,
                window,
                max_backoff: None,
            },
            user: Policy {
                max: max_failures_per_username.max(max_failures),
                window,
                max_backoff: Some(max_backoff.max(window)),
            },
            cap: cap.max(1),
            maps: Mutex::new(Maps::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Maps> {
        // Every update leaves the maps consistent: a panic elsewhere cannot corrupt them.
        self.maps.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one attempt of `username` from `client` before its password is checked, or
    /// `Err(seconds)` to wait when the pair or the username has no attempt left.
    pub fn reserve(
        &self,
        username: &str,
        client: IpAddr,
        now: DateTime<Utc>,
    ) -> Result<Reservation<'_>, u64> {
        let username = username_key(username);
        let pair_key = (username.clone(), client);
        let mut maps = self.lock();
        let Maps { pairs, users } = &mut *maps;
        if users.len() >= self.cap && !users.contains_key(&username) {
            users.retain(|_, e| !e.stale(&self.user, now));
        }
        if pairs.len() >= self.cap && !pairs.contains_key(&pair_key) {
            pairs.retain(|_, e| !e.stale(&self.pair, now));
        }
        if users.len() >= self.cap && !users.contains_key(&username) {
            // Refusing is what keeps memory bounded without letting guesses go uncounted.
            tracing::warn!("contadores de login cheios: login recusado");
            return Err(seconds(self.user.window));
        }
        let track_pair = pairs.len() < self.cap || pairs.contains_key(&pair_key);
        let user = users.entry(username.clone()).or_insert(Entry::new(now));
        user.admit(&self.user, now)?;
        if track_pair {
            let pair = pairs.entry(pair_key.clone()).or_insert(Entry::new(now));
            pair.admit(&self.pair, now)?;
            pair.attempts += 1;
        }
        if let Some(user) = users.get_mut(&username) {
            user.attempts += 1;
        }
        Ok(Reservation {
            limiter: self,
            username,
            pair: track_pair.then_some(pair_key),
        })
    }

    /// Attempts counted now for the pair and for the username (tests, logs).
    pub fn counts(&self, username: &str, client: IpAddr) -> (u32, u32) {
        let username = username_key(username);
        let maps = self.lock();
        let pair = maps
            .pairs
            .get(&(username.clone(), client))
            .map_or(0, |e| e.attempts);
        let user = maps.users.get(&username).map_or(0, |e| e.attempts);
        (pair, user)
    }

    /// Entries tracked: (pairs, usernames).
    pub fn tracked(&self) -> (usize, usize) {
        let maps = self.lock();
        (maps.pairs.len(), maps.users.len())
    }
}

impl Reservation<'_> {
    /// The password was right: the pair starts afresh and the username gets its attempt back
    /// (the right password from one address does not reset the count of guesses from others).
    pub fn succeed(self) {
        let mut maps = self.limiter.lock();
        if let Some(pair) = &self.pair {
            maps.pairs.remove(pair);
        }
        if let Some(user) = maps.users.get_mut(&self.username) {
            user.attempts = user.attempts.saturating_sub(1);
        }
    }

    /// No password was checked (the server was busy): the attempt is given back.
    pub fn refund(self) {
        let mut maps = self.limiter.lock();
        if let Some(pair) = self.pair.as_ref().and_then(|p| maps.pairs.get_mut(p)) {
            pair.attempts = pair.attempts.saturating_sub(1);
        }
        if let Some(user) = maps.users.get_mut(&self.username) {
            user.attempts = user.attempts.saturating_sub(1);
        }
    }

    /// The password was wrong (or the user unknown): the attempt stays counted. `Some(seconds)`
    /// when this failure spent the pair's or the username's budget: locked for that long.
    pub fn fail(self, now: DateTime<Utc>) -> Option<u64> {
        let limiter = self.limiter;
        let mut maps = limiter.lock();
        let pair = self
            .pair
            .as_ref()
            .and_then(|p| maps.pairs.get_mut(p))
            .and_then(|e| e.fail(&limiter.pair, now));
        let user = maps
            .users
            .get_mut(&self.username)
            .and_then(|e| e.fail(&limiter.user, now));
        match (pair, user) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::Ipv4Addr;
    use std::sync::Arc;

    use super::*;

    const WINDOW: std::time::Duration = std::time::Duration::from_secs(600);

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(203, 0, 113, last))
    }

    fn t0() -> DateTime<Utc> {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn locks_the_pair_after_max_failures_for_the_window() {
        let l = LoginLimiter::new(3, WINDOW);
        let t0 = t0();
        assert_eq!(l.reserve("ana", ip(1), t0).unwrap().fail(t0), None);
        assert_eq!(l.reserve("ana", ip(1), t0).unwrap().fail(t0), None);
        // The third failure spends the budget: locked for the window from now.
        assert_eq!(l.reserve("Ana ", ip(1), t0).unwrap().fail(t0), Some(600));
        assert_eq!(
            l.reserve("ana", ip(1), t0 + Duration::seconds(100))
                .unwrap_err(),
            500
        );
        assert!(l.reserve("bia", ip(1), t0).is_ok());
        // After the window it is open again, with a fresh count.
        let t1 = t0 + Duration::seconds(601);
        assert_eq!(l.reserve("ana", ip(1), t1).unwrap().fail(t1), None);
        l.reserve("ana", ip(1), t1).unwrap().succeed();
        assert_eq!(l.counts("ana", ip(1)).0, 0);
        assert_eq!(l.reserve("ana", ip(1), t1).unwrap().fail(t1), None);
        assert_eq!(l.reserve("ana", ip(1), t1).unwrap().fail(t1), None);
    }

    #[test]
    fn another_address_is_not_locked_out() {
        let l = LoginLimiter::new(5, WINDOW);
        let t0 = t0();
        for _ in 0..4 {
            assert_eq!(l.reserve("admin", ip(66), t0).unwrap().fail(t0), None);
        }
        assert_eq!(l.reserve("admin", ip(66), t0).unwrap().fail(t0), Some(600));
        l.reserve("admin", ip(66), t0).unwrap_err();
        // The office, from its own address, still logs in.
        l.reserve("admin", ip(10), t0).unwrap().succeed();
        assert_eq!(l.counts("admin", ip(10)), (0, 5));
    }

    #[test]
    fn the_username_ceiling_bounds_guesses_from_many_addresses_with_backoff() {
        // 2 per address, 6 per username.
        let l = LoginLimiter::with_limits(2, WINDOW, 6, 1000);
        let t0 = t0();
        let mut failed = 0;
        let mut locked = None;
        for a in 0..20 {
            match l.reserve("admin", ip(a), t0) {
                Ok(r) => {
                    failed += 1;
                    locked = r.fail(t0).or(locked);
                }
                Err(_) => break,
            }
        }
        // Exactly at the ceiling: six hashes ran, the sixth locked the username everywhere.
        assert_eq!(failed, 6);
        assert_eq!(locked, Some(600));
        assert_eq!(l.reserve("admin", ip(200), t0).unwrap_err(), 600);
        // The next lockout is twice as long.
        let t1 = t0 + Duration::seconds(600);
        for a in 100..106 {
            let r = l.reserve("admin", ip(a), t1).unwrap();
            locked = r.fail(t1);
        }
        assert_eq!(locked, Some(1200));
        assert_eq!(l.reserve("admin", ip(201), t1).unwrap_err(), 1200);
    }

    #[test]
    fn attempts_still_running_count_so_concurrent_logins_cannot_race_past() {
        let l = Arc::new(LoginLimiter::new(5, WINDOW));
        let t0 = t0();
        let admitted = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..200 {
                s.spawn(|| {
                    if let Ok(r) = l.reserve("fiscal", ip(7), t0) {
                        admitted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        // Slow hash: the others arrive while this one still runs.
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        let _ = r.fail(t0);
                    }
                });
            }
        });
        assert_eq!(admitted.into_inner(), 5);
        assert_eq!(l.counts("fiscal", ip(7)), (5, 5));
        l.reserve("fiscal", ip(7), t0).unwrap_err();
    }

    #[test]
    fn a_refund_gives_the_attempt_back() {
        let l = LoginLimiter::new(1, WINDOW);
        let t0 = t0();
        let r = l.reserve("ana", ip(1), t0).unwrap();
        l.reserve("ana", ip(1), t0).unwrap_err();
        r.refund();
        assert_eq!(l.counts("ana", ip(1)), (0, 0));
        l.reserve("ana", ip(1), t0).unwrap().succeed();
    }

    #[test]
    fn maps_stay_bounded() {
        let cap = 50;
        let l = LoginLimiter::with_limits(5, WINDOW, 50, cap);
        let t0 = t0();
        // Exactly at the cap, every made-up name is tracked.
        for i in 0..cap {
            let _ = l.reserve(&format!("u{i}"), ip(1), t0).unwrap().fail(t0);
        }
        assert_eq!(l.tracked(), (cap, cap));
        // One more new name while all are fresh: refused, nothing grows.
        l.reserve("one-more", ip(1), t0).unwrap_err();
        assert_eq!(l.tracked(), (cap, cap));
        // A known name from a new address: counted against the name only.
        let _ = l.reserve("u0", ip(2), t0).unwrap().fail(t0);
        assert_eq!(l.tracked(), (cap, cap));
        assert_eq!(l.counts("u0", ip(1)), (1, 2));
        // After the window the stale entries are pruned to make room.
        let later = t0 + Duration::seconds(601);
        let _ = l.reserve("one-more", ip(1), later).unwrap().fail(later);
        assert_eq!(l.tracked(), (1, 1));
        // A huge made-up username is keyed by its first characters only.
        let huge = "x".repeat(100_000);
        let _ = l.reserve(&huge, ip(1), later).unwrap().fail(later);
        assert_eq!(username_key(&huge).len(), MAX_USERNAME_KEY_CHARS);
    }
}
