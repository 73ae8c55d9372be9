//! `uniffi-bindgen generate --library target/debug/libtaxi_fiscal_ffi.so --language kotlin …`:
//! the bindings generator, built from the same UniFFI version as `ffi/` (scripts/bindings).

fn main() {
    uniffi::uniffi_bindgen_main()
}
