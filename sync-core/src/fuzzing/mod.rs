//! Entry points of the fuzz targets (`fuzz/`, `cargo fuzz`) and of the stable tests that replay
//! their corpus (`tests/fuzz_*.rs`): each takes arbitrary bytes, runs them through what a device
//! does with data it receives, and panics only on a bug (an invariant broken). Not an API.

#[cfg(feature = "client")]
mod registry_feed;

#[cfg(feature = "client")]
pub use registry_feed::{FeedInput, registry_feed};
