//! Time, waiting and giving up: the clock, the sleeper and the cancel flag are injected so that
//! tests run deterministically (no real sleep, a device clock a day off), and the retry policy
//! is plain data.
//!
//! Backoff: after the `n`-th failed attempt the client waits `first_delay × 2ⁿ`, capped at
//! `max_delay`, scaled by a jitter factor in [½, 1] drawn from a seed (the device's id, so that
//! a hundred phones coming back online at the same minute do not retry in lockstep, yet one
//! device's delays are reproducible). A `Retry-After` from the server (429, 503) is honoured up
//! to `max_delay`. After `attempts` attempts the last error is returned.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};

/// Where "now" comes from (device clock).
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The machine's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The machine's clock shifted by a fixed offset: a device whose clock is wrong.
#[derive(Debug, Clone, Copy)]
pub struct OffsetClock(pub chrono::Duration);

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.0
    }
}

/// A shared flag the app sets to stop a sync. The client checks it before every request and
/// while waiting between retries; a request already on the wire finishes (or times out), and
/// whatever it brought is applied in one transaction or not at all.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Clears the flag, for the next sync.
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The wait was cut short by the cancel flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// How the client waits between retries.
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Waits `d`, or less if `cancel` is set meanwhile (then `Err(Cancelled)`).
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<(), Cancelled>;
}

/// Sleeps the thread in short slices, checking the cancel flag between them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleeper;

/// How often a waiting client looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

impl Sleeper for ThreadSleeper {
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<(), Cancelled> {
        let mut left = d;
        loop {
            if cancel.is_cancelled() {
                return Err(Cancelled);
            }
            if left.is_zero() {
                return Ok(());
            }
            let step = left.min(CANCEL_POLL);
            std::thread::sleep(step);
            left -= step;
        }
    }
}

/// Bounded exponential backoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (≥ 1): 1 means no retry.
    pub attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// Seed of the jitter; `None`: exact powers of two (tests).
    pub jitter_seed: Option<u64>,
}

impl Default for RetryPolicy {
    /// 6 attempts, waiting 0.5 s, 1 s, 2 s, 4 s, 8 s (×½–1): about 8–16 s before giving up on a
    /// step, short enough for an officer waiting at the roadside, long enough to ride out a
    /// server restart.
    fn default() -> Self {
        Self {
            attempts: 6,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            jitter_seed: Some(0x5446_4953),
        }
    }
}

impl RetryPolicy {
    /// No retries at all (one attempt).
    pub fn none() -> Self {
        Self {
            attempts: 1,
            ..Self::default()
        }
    }

    /// The wait after the `retry`-th failure (0-based), before the next attempt.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .first_delay
            .saturating_mul(2u32.saturating_pow(retry.min(30)))
            .min(self.max_delay);
        let jittered = match self.jitter_seed {
            None => exp,
            Some(seed) => {
                // splitmix64 of (seed, retry): a fraction in [0, 1) → factor in [½, 1].
                let mut z = seed ^ u64::from(retry).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                let frac = (z >> 11) as f64 / (1u64 << 53) as f64;
                exp.mul_f64(0.5 + frac / 2.0)
            }
        };
        match retry_after {
            Some(ra) => jittered.max(ra.min(self.max_delay)),
            None => jittered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_jitter_stays_within_half() {
        let p = RetryPolicy {
            attempts: 10,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            jitter_seed: None,
        };
        let ms: Vec<u128> = (0..6).map(|n| p.delay(n, None).as_millis()).collect();
        assert_eq!(ms, vec![100, 200, 400, 800, 1000, 1000]);
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(5))),
            Duration::from_secs(1)
        );
        let j = RetryPolicy {
            jitter_seed: Some(42),
            ..p.clone()
        };
        for n in 0..8 {
            let d = j.delay(n, None);
            let full = p.delay(n, None);
            assert!(d <= full && d >= full / 2, "{n}: {d:?} vs {full:?}");
            assert_eq!(d, j.delay(n, None), "deterministic");
        }
    }

    #[test]
    fn a_cancelled_sleep_returns_at_once() {
        let c = CancelToken::new();
        c.cancel();
        let t = std::time::Instant::now();
        assert_eq!(
            ThreadSleeper.sleep(Duration::from_secs(60), &c),
            Err(Cancelled)
        );
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
