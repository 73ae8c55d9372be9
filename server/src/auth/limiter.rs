//! Login rate limiting: failures are counted per username (lower-cased, known or not) in memory;
//! after `max_failures` within the lockout window the username is locked for the window, and
//! every attempt meanwhile — right password or not — is answered 429 without checking it. A
//! successful login clears the count.
//!
//! In memory on purpose: a restart forgets the counts, which is acceptable for a lockout of
//! minutes; a multi-node deployment would move this to the shared store. The map is pruned of
//! stale entries when it grows, so a flood of made-up usernames cannot grow it without bound.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Duration, Utc};

const PRUNE_ABOVE: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    first_failure: DateTime<Utc>,
    locked_until: Option<DateTime<Utc>>,
}

/// Per-username failure counter.
#[derive(Debug)]
pub struct LoginLimiter {
    max_failures: u32,
    window: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

impl LoginLimiter {
    pub fn new(max_failures: u32, window: std::time::Duration) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window: Duration::from_std(window).unwrap_or_else(|_| Duration::minutes(15)),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// `Err(seconds)` while the username is locked.
    pub fn check(&self, username: &str, now: DateTime<Utc>) -> Result<(), u64> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.get(username).and_then(|e| e.locked_until) {
            Some(until) if until > now => {
                let secs = (until - now).num_seconds().max(1);
                Err(secs as u64)
            }
            _ => Ok(()),
        }
    }

    /// Counts a failure; returns `Err(seconds)` when this failure locks the username.
    pub fn fail(&self, username: &str, now: DateTime<Utc>) -> Result<(), u64> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() > PRUNE_ABOVE {
            let window = self.window;
            entries.retain(|_, e| {
                e.locked_until.is_some_and(|u| u > now) || now - e.first_failure < window
            });
        }
        let e = entries.entry(username.to_owned()).or_insert(Entry {
            failures: 0,
            first_failure: now,
            locked_until: None,
        });
        if now - e.first_failure >= self.window || e.locked_until.is_some_and(|u| u <= now) {
            *e = Entry {
                failures: 0,
                first_failure: now,
                locked_until: None,
            };
        }
        e.failures += 1;
        if e.failures >= self.max_failures {
            let until = now + self.window;
            e.locked_until = Some(until);
            return Err(self.window.num_seconds().max(1) as u64);
        }
        Ok(())
    }

    /// Clears the username after a successful login.
    pub fn succeed(&self, username: &str) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(username);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_max_failures_for_the_window() {
        let l = LoginLimiter::new(3, std::time::Duration::from_secs(600));
        let t0: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        assert!(l.fail("ana", t0).is_ok());
        assert!(l.fail("ana", t0).is_ok());
        assert_eq!(l.fail("ana", t0), Err(600));
        assert_eq!(l.check("ana", t0 + Duration::seconds(100)), Err(500));
        assert!(l.check("bia", t0).is_ok());
        // After the window it is open again, with a fresh count.
        let t1 = t0 + Duration::seconds(601);
        assert!(l.check("ana", t1).is_ok());
        assert!(l.fail("ana", t1).is_ok());
        l.succeed("ana");
        assert!(l.fail("ana", t1).is_ok());
        assert!(l.fail("ana", t1).is_ok());
    }
}
