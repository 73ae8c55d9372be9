//! The client's address behind a reverse proxy: `TAXI_FISCAL_TRUSTED_PROXIES` names the proxies
//! (addresses or CIDR blocks, e.g. `127.0.0.1,10.0.0.0/24`) whose `X-Forwarded-For` is believed.
//!
//! Flow: [`client_ip`] runs once per request in the router's outermost layer. When the TCP peer
//! is a trusted proxy, the `X-Forwarded-For` list is read from the right (the hop the proxy
//! itself appended) leftwards, skipping trusted proxies; the first address that is not one is
//! the client. A peer that is not trusted is the client whatever it writes: anyone can send the
//! header. The answer is put in the request as [`ClientIp`], which the per-address budgets
//! (`auth::throttle::ClientAddr`) and the access log read. Without the setting, nothing is
//! trusted and the peer is the client, as before.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

use crate::config::ConfigError;

/// Addresses of `X-Forwarded-For` read at most, from the right: a chain of proxies is two or
/// three; a longer list is a client padding the header, and the addresses beyond are not read.
pub const MAX_FORWARDED_HOPS: usize = 16;

/// Trusted proxies listed at most in `TAXI_FISCAL_TRUSTED_PROXIES`.
pub const MAX_TRUSTED_PROXIES: usize = 64;

/// One trusted address or block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    addr: IpAddr,
    prefix: u8,
}

impl Block {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 it carries (a dual-stack listener's peers).
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Block>);

impl TrustedProxies {
    /// `TAXI_FISCAL_TRUSTED_PROXIES`: addresses or `ADDR/PREFIX` blocks separated by commas.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let mut blocks = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || ConfigError::TrustedProxies(part.to_owned());
            let (addr, prefix) = match part.split_once('/') {
                Some((a, p)) => (a, Some(p)),
                None => (part, None),
            };
            let addr = canonical(addr.parse::<IpAddr>().map_err(|_| bad())?);
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(bad)?,
                None => max,
            };
            blocks.push(Block { addr, prefix });
        }
        if blocks.is_empty() || blocks.len() > MAX_TRUSTED_PROXIES {
            return Err(ConfigError::TrustedProxies(
                text.chars().take(200).collect(),
            ));
        }
        Ok(Self(blocks))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|b| b.contains(ip))
    }

    /// The client of a request from `peer` with these headers (see the module doc).
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        // Every X-Forwarded-For line, as one list in order; read from the right.
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect();
        let mut client = peer;
        for hop in hops.iter().rev().take(MAX_FORWARDED_HOPS) {
            match hop.trim().parse::<IpAddr>() {
                Ok(ip) => {
                    client = canonical(ip);
                    if !self.trusts(client) {
                        return client;
                    }
                }
                // Garbage where an address should be: stop at the last address believed.
                Err(_) => return client,
            }
        }
        client
    }
}

/// The client address of a request, as [`client_ip`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// The client of a request: what [`client_ip`] noted, else the TCP peer (a router driven
    /// without the layer), else `None` (driven in-process, no peer). The budgets, `/metrics`
    /// and the access log all ask here.
    pub fn of(extensions: &axum::http::Extensions) -> Option<IpAddr> {
        extensions.get::<ClientIp>().map(|c| c.0).or_else(|| {
            extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| canonical(c.0.ip()))
        })
    }
}

/// The router's outermost layer: notes [`ClientIp`] in the request (nothing when the request
/// has no peer address, as when the router is driven in-process).
pub async fn client_ip(
    axum::extract::State(trusted): axum::extract::State<std::sync::Arc<TrustedProxies>>,
    mut req: Request,
    next: Next,
) -> Response {
    if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        let ip = trusted.client_of(peer.ip(), req.headers());
        req.extensions_mut().insert(ClientIp(ip));
    }
    next.run(req).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_peer_is_believed() {
        let t = TrustedProxies::parse("127.0.0.1, 10.0.0.0/24").unwrap();
        let h = headers(&["203.0.113.9"]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        assert_eq!(t.client_of(ip("10.0.0.77"), &h), ip("203.0.113.9"));
        // Anyone else writes what they like: the peer is the client.
        assert_eq!(t.client_of(ip("198.51.100.4"), &h), ip("198.51.100.4"));
        assert_eq!(
            TrustedProxies::default().client_of(ip("127.0.0.1"), &h),
            ip("127.0.0.1")
        );
        // A trusted peer without the header is the client itself.
        assert_eq!(
            t.client_of(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn the_list_is_read_from_the_right_past_trusted_hops() {
        let t = TrustedProxies::parse("127.0.0.1,10.0.0.0/8").unwrap();
        // The client forged the first entry; the proxies appended the real ones.
        let h = headers(&["1.2.3.4, 203.0.113.9", "10.1.1.1"]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // Garbage stops the walk at the last address believed.
        let h = headers(&["203.0.113.9, nonsense, 10.1.1.1"]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("10.1.1.1"));
        // IPv4-mapped peers are the IPv4 they carry.
        let h = headers(&["203.0.113.9"]);
        assert_eq!(t.client_of(ip("::ffff:127.0.0.1"), &h), ip("203.0.113.9"));
    }

    #[test]
    fn hops_are_read_up_to_the_limit() {
        let t = TrustedProxies::parse("10.0.0.0/8").unwrap();
        // The client, then exactly MAX_FORWARDED_HOPS - 1 trusted hops: found.
        let mut list = vec![String::from("203.0.113.9")];
        list.extend((1..MAX_FORWARDED_HOPS).map(|i| format!("10.0.0.{i}")));
        let h = headers(&[&list.join(", ")]);
        assert_eq!(t.client_of(ip("10.0.0.200"), &h), ip("203.0.113.9"));
        // One trusted hop more: the walk stops at the last hop read.
        list.insert(1, String::from("10.0.0.99"));
        let h = headers(&[&list.join(", ")]);
        assert_eq!(t.client_of(ip("10.0.0.200"), &h), ip("10.0.0.99"));
    }

    #[test]
    fn the_setting_is_checked() {
        assert!(TrustedProxies::parse("::1, 192.168.0.0/16").is_ok());
        for bad in [
            "",
            " , ",
            "proxy.local",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.1/x",
        ] {
            let e = TrustedProxies::parse(bad).unwrap_err();
            assert!(
                e.to_string().contains("TAXI_FISCAL_TRUSTED_PROXIES"),
                "{bad}: {e}"
            );
        }
        let at = vec!["127.0.0.1"; MAX_TRUSTED_PROXIES].join(",");
        assert!(TrustedProxies::parse(&at).is_ok());
        let over = format!("{at},127.0.0.1");
        assert!(TrustedProxies::parse(&over).is_err());
    }
}
