//! `cargo +nightly fuzz run csv_import`: see `taxi_fiscal_server::fuzzing::csv_import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    taxi_fiscal_server::fuzzing::csv_import(data);
});
