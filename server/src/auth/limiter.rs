//! Login failure budgets, per (username, client address) and per username, counted in the store.
//!
//! Every attempt is counted *before* its password is hashed: [`LoginLimiter::reserve`] takes
//! one attempt from both budgets in one write transaction of the store
//! ([`crate::store::Store::login_reserve`]), or refuses without hashing. The caller then
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
//! In the store on purpose: with several server nodes behind a load balancer every node counts
//! the same attempts (a guesser does not get one budget per node), and a restart forgets none.
//! The budget logic itself is `taxi_fiscal_store::logins`, run by each backend inside its write
//! transaction, which serialises reserves across nodes; this module holds the policy (from the
//! configuration) and the keys. Expired rows are pruned as attempts arrive
//! ([`crate::limits::LOGIN_PRUNE_BATCH`] per attempt), so the tables stay about one window's
//! attempts. A store that fails fails the login (an internal error): no hash runs uncounted.
//! The per-address budgets (`super::throttle`) stay in each node's memory.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use crate::limits::{LOGIN_MAX_BACKOFF, MAX_USERNAME_KEY_CHARS};
use crate::store::logins::{LoginKey, Policies, Settle};
use crate::store::{Store, StoreError};

/// The failure budgets of every username and (username, address) pair.
#[derive(Debug)]
pub struct LoginLimiter {
    store: Arc<dyn Store>,
    policies: Policies,
}

/// One attempt, counted; settle it with one of its methods. Dropped unsettled (an error
/// half-way), it stays counted as a failure.
#[derive(Debug)]
#[must_use = "settle the attempt: succeed, fail or refund"]
pub struct Reservation<'a> {
    limiter: &'a LoginLimiter,
    key: LoginKey,
    /// When it was reserved: the instant a success or a refund is settled at.
    at: DateTime<Utc>,
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

/// The rows an attempt of `username` from `client` counts against.
fn key_of(username: &str, client: IpAddr) -> LoginKey {
    LoginKey {
        username: username_key(username),
        address: client.to_string(),
    }
}

impl LoginLimiter {
    /// `max_failures` per (username, address) per `window`, and `max_failures_per_username`
    /// per username with lockouts doubling up to [`LOGIN_MAX_BACKOFF`], counted in `store`.
    pub fn new(
        store: Arc<dyn Store>,
        max_failures: u32,
        window: std::time::Duration,
        max_failures_per_username: u32,
    ) -> Self {
        let window = Duration::from_std(window).unwrap_or_else(|_| Duration::minutes(15));
        let max_backoff =
            Duration::from_std(LOGIN_MAX_BACKOFF).unwrap_or_else(|_| Duration::hours(24));
        Self {
            store,
            policies: Policies::new(max_failures, window, max_failures_per_username, max_backoff),
        }
    }

    /// Counts one attempt of `username` from `client` before its password is checked, or
    /// `Ok(Err(seconds))` to wait when the pair or the username has no attempt left.
    pub async fn reserve(
        &self,
        username: &str,
        client: IpAddr,
        now: DateTime<Utc>,
    ) -> Result<Result<Reservation<'_>, u64>, StoreError> {
        let key = key_of(username, client);
        Ok(self
            .store
            .login_reserve(key.clone(), self.policies, now)
            .await?
            .map(|()| Reservation {
                limiter: self,
                key,
                at: now,
            }))
    }

    /// Attempts counted now for the pair and for the username (tests, logs).
    pub async fn counts(&self, username: &str, client: IpAddr) -> Result<(u32, u32), StoreError> {
        let counts = self.store.login_counts(key_of(username, client)).await?;
        Ok((counts.pair, counts.username))
    }
}

impl Reservation<'_> {
    async fn settle(self, outcome: Settle, now: DateTime<Utc>) -> Result<Option<u64>, StoreError> {
        let limiter = self.limiter;
        limiter
            .store
            .login_settle(self.key, outcome, limiter.policies, now)
            .await
    }

    /// The password was right: the pair starts afresh and the username gets its attempt back
    /// (the right password from one address does not reset the count of guesses from others).
    pub async fn succeed(self) -> Result<(), StoreError> {
        let at = self.at;
        self.settle(Settle::Succeed, at).await.map(|_| ())
    }

    /// No password was checked (the server was busy): the attempt is given back.
    pub async fn refund(self) -> Result<(), StoreError> {
        let at = self.at;
        self.settle(Settle::Refund, at).await.map(|_| ())
    }

    /// The password was wrong (or the user unknown): the attempt stays counted. `Some(seconds)`
    /// when this failure spent the pair's or the username's budget: locked for that long.
    pub async fn fail(self, now: DateTime<Utc>) -> Result<Option<u64>, StoreError> {
        self.settle(Settle::Fail, now).await
    }
}

#[cfg(all(test, feature = "sqlite"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::store::sqlite::SqliteStore;

    const WINDOW: std::time::Duration = std::time::Duration::from_secs(600);

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(203, 0, 113, last))
    }

    fn t0() -> DateTime<Utc> {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    /// A limiter over a new SQLite store, and the directory that holds it.
    fn limiter(max_failures: u32) -> (LoginLimiter, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("t.db")).unwrap();
        (
            LoginLimiter::new(Arc::new(store), max_failures, WINDOW, 50),
            dir,
        )
    }

    // The budgets' behaviour is the store's conformance suite (`logins`); these check what this
    // module adds: the keys, and the settling of a reservation.

    #[tokio::test]
    async fn usernames_are_keyed_trimmed_lower_cased_and_bounded() {
        let (l, _dir) = limiter(2);
        l.reserve("Ana ", ip(1), t0())
            .await
            .unwrap()
            .unwrap()
            .fail(t0())
            .await
            .unwrap();
        assert_eq!(l.counts(" ana", ip(1)).await.unwrap(), (1, 1));
        assert_eq!(l.counts("ana", ip(2)).await.unwrap(), (0, 1));
        // A huge made-up username is keyed by its first characters only.
        let huge = "x".repeat(100_000);
        assert_eq!(username_key(&huge).len(), MAX_USERNAME_KEY_CHARS);
        let _ = l.reserve(&huge, ip(1), t0()).await.unwrap().unwrap();
        let prefix = "X".repeat(MAX_USERNAME_KEY_CHARS);
        assert_eq!(l.counts(&prefix, ip(1)).await.unwrap(), (1, 1));
    }

    #[tokio::test]
    async fn a_reservation_dropped_unsettled_stays_counted() {
        let (l, _dir) = limiter(2);
        drop(l.reserve("ana", ip(1), t0()).await.unwrap().unwrap());
        let r = l.reserve("ana", ip(1), t0()).await.unwrap().unwrap();
        assert_eq!(
            l.reserve("ana", ip(1), t0()).await.unwrap().unwrap_err(),
            600
        );
        // The failure that spends the budget says so; a success clears the pair.
        assert_eq!(r.fail(t0()).await.unwrap(), Some(600));
        let later = t0() + Duration::seconds(600);
        let r = l.reserve("ana", ip(1), later).await.unwrap().unwrap();
        r.succeed().await.unwrap();
        assert_eq!(l.counts("ana", ip(1)).await.unwrap(), (0, 0));
    }
}
