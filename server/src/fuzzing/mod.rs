//! Entry points of the fuzz targets (`fuzz/`, `cargo fuzz`) and of the stable tests that replay
//! their corpus (`tests/fuzz_*.rs`): each takes arbitrary bytes, runs them through what the
//! server does with a body an outsider sends, and panics only on a bug (an invariant broken).
//! Not an API.

mod api_json;
mod csv;
mod sync_request;

pub use api_json::{API_BODY_TYPES, api_json};
pub use csv::{csv_import, csv_import_into};
pub use sync_request::{seed_request, sync_answer, sync_request};
