//! Entry points of the fuzz targets (`fuzz/`, `cargo fuzz`) and of the stable tests that replay
//! their corpus (`tests/fuzz_*.rs`): each takes arbitrary bytes, runs them through what a device
//! does with data it receives, and panics only on a bug (an invariant broken). Not an API.

mod record_doc;
#[cfg(feature = "client")]
mod registry_feed;

pub use record_doc::{record_doc, with_valid_checksum};
#[cfg(feature = "client")]
pub use registry_feed::{FeedInput, registry_feed};
