//! Per client address budgets — the login and refresh routes (API and office pages), and the
//! public verification page (`crate::web::verify`) — with
//! `governor`'s GCRA: a burst of [`crate::limits::AUTH_ATTEMPTS_PER_ADDRESS_BURST`] attempts,
//! then one more every [`crate::limits::AUTH_ATTEMPT_REPLENISH`]. Over it: 429 with
//! `Retry-After`, before any password is hashed or any failure counted.
//!
//! The client address is the TCP peer ([`ClientAddr`], from axum's `ConnectInfo`, which
//! [`crate::launch_with_state`] serves), or, when that peer is a proxy named in
//! `TAXI_FISCAL_TRUSTED_PROXIES`, the client its `X-Forwarded-For` names
//! ([`super::proxy::ClientIp`]); from anyone else the header is ignored (anyone can write it). IPv6
//! clients are counted by their /64 ([`crate::limits::IPV6_CLIENT_PREFIX_BITS`]). A request
//! without a peer address (the router driven in-process, as the tests do) counts as one
//! unknown client.
//!
//! Bounded: keys whose budget is full again are dropped when the map reaches
//! [`crate::limits::MAX_TRACKED_ADDRESSES`] (nothing lost, a full budget is what a new address
//! gets); while it is still full, attempts are refused until entries age out.

use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::limits::{IPV6_CLIENT_PREFIX_BITS, MAX_TRACKED_ADDRESSES};

/// Pruning scans the whole map: at most this often.
const PRUNE_EVERY: Duration = Duration::from_secs(1);

/// The address a request came from, as the budgets count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// Stands for every request without a peer address.
    pub const UNKNOWN: ClientAddr = ClientAddr(IpAddr::V6(Ipv6Addr::UNSPECIFIED));

    /// The key of `ip`: IPv4 (also when written IPv4-mapped) as is, IPv6 by its prefix.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => ClientAddr(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientAddr(IpAddr::V4(v4)),
                None => {
                    let bits = u128::from(v6);
                    let mask = u128::MAX
                        .checked_shl(128 - IPV6_CLIENT_PREFIX_BITS.min(128))
                        .unwrap_or(0);
                    ClientAddr(IpAddr::V6(Ipv6Addr::from(bits & mask)))
                }
            },
        }
    }
}

impl std::fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V6(v6) if v6.is_unspecified() => f.write_str("desconhecido"),
            IpAddr::V6(v6) => write!(f, "{v6}/{IPV6_CLIENT_PREFIX_BITS}"),
            IpAddr::V4(v4) => write!(f, "{v4}"),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(super::proxy::ClientIp::of(&parts.extensions)
            .map_or(ClientAddr::UNKNOWN, ClientAddr::of))
    }
}

/// The per-address budget.
#[derive(Debug)]
pub struct AddressThrottle {
    limiter: DefaultKeyedRateLimiter<ClientAddr>,
    quota: Quota,
    cap: usize,
    last_prune: Mutex<Instant>,
}

impl AddressThrottle {
    /// `burst` attempts, one more every `replenish`; the map capped at
    /// [`MAX_TRACKED_ADDRESSES`].
    pub fn new(burst: u32, replenish: Duration) -> Self {
        Self::with_cap(burst, replenish, MAX_TRACKED_ADDRESSES)
    }

    /// With another cap (tests).
    pub fn with_cap(burst: u32, replenish: Duration, cap: usize) -> Self {
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(replenish.max(Duration::from_millis(1)))
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Self {
            limiter: RateLimiter::dashmap(quota),
            quota,
            cap: cap.max(1),
            last_prune: Mutex::new(Instant::now()),
        }
    }

    /// Takes one attempt of `client`'s budget, or `Err(seconds)` until the next one.
    pub fn check(&self, client: ClientAddr) -> Result<(), u64> {
        if self.limiter.len() >= self.cap {
            self.prune();
            if self.limiter.len() >= self.cap {
                tracing::warn!("orçamento por endereço cheio: tentativa recusada");
                return Err(self.quota.burst_size_replenished_in().as_secs().max(1));
            }
        }
        self.limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.limiter.clock().now());
            // Whole seconds, rounded up: `Retry-After` has no fractions.
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }

    /// Drops the addresses whose budget is full again.
    fn prune(&self) {
        let mut last = self
            .last_prune
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if last.elapsed() < PRUNE_EVERY && self.limiter.len() < self.cap * 2 {
            return;
        }
        *last = Instant::now();
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    /// Addresses tracked now.
    pub fn tracked(&self) -> usize {
        self.limiter.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn v4(last: u8) -> ClientAddr {
        ClientAddr::of(IpAddr::V4(Ipv4Addr::new(198, 51, 100, last)))
    }

    #[test]
    fn a_burst_then_refused_per_address() {
        let t = AddressThrottle::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            t.check(v4(1)).unwrap();
        }
        let wait = t.check(v4(1)).unwrap_err();
        assert!((59..=60).contains(&wait), "{wait}");
        // Another address has its own budget.
        t.check(v4(2)).unwrap();
    }

    #[test]
    fn ipv6_counts_by_prefix_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientAddr::of(a), ClientAddr::of(b));
        assert_ne!(ClientAddr::of(a), ClientAddr::of(c));
        let mapped: IpAddr = "::ffff:198.51.100.1".parse().unwrap();
        assert_eq!(ClientAddr::of(mapped), v4(1));
        assert_eq!(ClientAddr::of(b).to_string(), "2001:db8:1:2::/64");
    }

    #[test]
    fn the_map_is_capped() {
        let t = AddressThrottle::with_cap(2, Duration::from_secs(60), 10);
        // Exactly at the cap: every address is served.
        for i in 0..10 {
            t.check(v4(i)).unwrap();
        }
        assert_eq!(t.tracked(), 10);
        // All ten are still recent: one more is refused and nothing grows.
        t.check(v4(10)).unwrap_err();
        assert_eq!(t.tracked(), 10);
    }

    #[test]
    fn pruning_drops_only_full_budgets() {
        let t = AddressThrottle::with_cap(1, Duration::from_millis(20), 2);
        t.check(v4(1)).unwrap();
        t.check(v4(2)).unwrap();
        std::thread::sleep(Duration::from_millis(60));
        // Both budgets are full again: pruned, and the new address gets in.
        *t.last_prune.lock().unwrap() = Instant::now() - PRUNE_EVERY;
        t.check(v4(3)).unwrap();
        assert_eq!(t.tracked(), 1);
    }
}
