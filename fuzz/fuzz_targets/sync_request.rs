//! `cargo +nightly fuzz run sync_request`: see `taxi_fiscal_server::fuzzing::sync_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    taxi_fiscal_server::fuzzing::sync_request(data);
});
