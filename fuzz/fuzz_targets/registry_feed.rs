//! `cargo +nightly fuzz run registry_feed`: see `sync_core::fuzzing::registry_feed`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sync_core::fuzzing::registry_feed(data);
});
