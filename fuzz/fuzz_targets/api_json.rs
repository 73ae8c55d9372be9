//! `cargo +nightly fuzz run api_json`: see `taxi_fiscal_server::fuzzing::api_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    taxi_fiscal_server::fuzzing::api_json(data);
});
