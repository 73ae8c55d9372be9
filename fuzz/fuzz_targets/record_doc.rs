//! `cargo +nightly fuzz run record_doc`: see `sync_core::fuzzing::record_doc`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sync_core::fuzzing::record_doc(data);
});
