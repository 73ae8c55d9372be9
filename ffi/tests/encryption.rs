//! The device database at rest, as the mobile library builds it (SQLCipher): a copied file gives
//! nothing away, cannot be opened without the keystore's key, and keeps the signing key and the
//! tokens out of the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sync_core::store::{
    ClientSession, DATABASE_KEY, DEVICE_SIGNING_KEY, MemoryVault, SESSION_TOKENS, SecretVault,
    Store, StoreError,
};
use sync_core::testkit::sample_registry;

const ACCESS: &str = "token-de-acesso-muito-secreto-0001";
const REFRESH: &str = "token-de-renovacao-muito-secreto-0002";

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn session() -> ClientSession {
    ClientSession {
        server_url: String::from("https://taxi.example"),
        server_device_id: String::from("tablet-01"),
        user_id: String::from("u-1"),
        username: String::from("fiscal"),
        role: String::from("officer"),
        stand_id: None,
        access_token: String::from(ACCESS),
        access_valid_until: t("2026-12-07T12:00:00Z"),
        refresh_token: String::from(REFRESH),
        refresh_valid_until: t("2026-12-14T12:00:00Z"),
        updated_at: t("2026-12-07T11:00:00Z"),
    }
}

/// A store holding the sample registry, a session and the device's key.
fn fill(store: &mut Store) -> [u8; 32] {
    store
        .apply_snapshot(&sample_registry(), t("2026-12-07T10:00:00Z"))
        .unwrap();
    store.save_client_session(&session()).unwrap();
    store.device_public_key().unwrap()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Every byte of the database and its WAL, as a thief copying the app's files would get them.
fn raw(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if let Ok(w) = std::fs::read(&wal) {
        bytes.extend(w);
    }
    bytes
}

#[test]
fn an_encrypted_store_shows_no_name_token_or_header_and_opens_only_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let name = sample_registry().people[0].name.clone();

    // Control: the same content in a plain store is readable in the file, so the checks below
    // can fail.
    let plain = dir.path().join("plain.db");
    fill(&mut Store::open(&plain).unwrap());
    let bytes = raw(&plain);
    assert!(bytes.starts_with(b"SQLite format 3\0"));
    assert!(contains(&bytes, &name) && contains(&bytes, ACCESS));

    let path = dir.path().join("device.db");
    let vault = Arc::new(MemoryVault::default());
    let public = {
        let mut store = Store::open_encrypted(&path, vault.clone()).unwrap();
        fill(&mut store)
    };
    let bytes = raw(&path);
    assert!(!bytes.starts_with(b"SQLite format 3"), "plain header");
    assert!(!contains(&bytes, &name), "a driver's name is readable");
    assert!(!contains(&bytes, ACCESS) && !contains(&bytes, REFRESH));
    assert_eq!(
        vault.names(),
        [DATABASE_KEY, DEVICE_SIGNING_KEY, SESSION_TOKENS]
    );

    // Without the key: refused, and the file is left exactly as it was.
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        Store::open(&path).unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    assert!(matches!(
        Store::open_encrypted(&path, Arc::new(MemoryVault::default())).unwrap_err(),
        StoreError::KeyMissing { .. }
    ));
    let other = Arc::new(MemoryVault::default());
    other.save(DATABASE_KEY, &[7u8; 32]).unwrap();
    let e = Store::open_encrypted(&path, other).unwrap_err();
    assert!(matches!(e, StoreError::WrongKey { .. }), "{e:?}");
    assert!(e.to_string().contains("não foi alterado"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "a failed open wrote");

    // With it: everything back.
    let store = Store::open_encrypted(&path, vault).unwrap();
    assert_eq!(
        store.replica_info().unwrap().unwrap().version,
        sample_registry().version
    );
    assert_eq!(store.client_session().unwrap().unwrap(), session());
    assert_eq!(store.device_public_key().unwrap(), public);
}

#[test]
fn the_signing_key_and_the_tokens_are_in_the_vault_not_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    let vault = Arc::new(MemoryVault::default());
    let public = fill(&mut Store::open_encrypted(&path, vault.clone()).unwrap());

    // The file decrypted with the key: empty secret and tokens.
    let key = vault.load(DATABASE_KEY).unwrap().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "key", format!("x'{}'", hex(&key)))
        .unwrap();
    let secret_len: i64 = conn
        .query_row("SELECT length(secret) FROM device_key", [], |r| r.get(0))
        .unwrap();
    let tokens: (String, String) = conn
        .query_row(
            "SELECT access_token, refresh_token FROM client_session",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(secret_len, 0);
    assert_eq!(tokens, (String::new(), String::new()));
    drop(conn);

    // A keystore that lost the tokens means a new login; one whose signing key is another
    // device's is refused rather than signing as it.
    vault.delete(SESSION_TOKENS).unwrap();
    let store = Store::open_encrypted(&path, vault.clone()).unwrap();
    assert_eq!(store.client_session().unwrap(), None);
    vault.save(DEVICE_SIGNING_KEY, &[9u8; 32]).unwrap();
    let e = store.device_public_key().unwrap_err();
    assert!(e.to_string().contains("não é a deste aparelho"), "{e}");
    assert_ne!(public, [0u8; 32]);
}

#[test]
fn a_plain_store_is_encrypted_in_place_keeping_its_data_and_moving_its_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    let public = fill(&mut Store::open(&path).unwrap());

    let vault = Arc::new(MemoryVault::default());
    let store = Store::open_encrypted(&path, vault.clone()).unwrap();
    assert_eq!(store.client_session().unwrap().unwrap(), session());
    assert_eq!(store.device_public_key().unwrap(), public);
    assert_eq!(
        store.replica_info().unwrap().unwrap().version,
        sample_registry().version
    );
    drop(store);
    let bytes = raw(&path);
    assert!(!bytes.starts_with(b"SQLite format 3"));
    assert!(!contains(&bytes, ACCESS));
    assert_eq!(
        vault.names(),
        [DATABASE_KEY, DEVICE_SIGNING_KEY, SESSION_TOKENS]
    );
    let mut copy = path.as_os_str().to_owned();
    copy.push(".encrypting");
    assert!(!Path::new(&copy).exists(), "the copy was left behind");
    // And it opens again as it is now.
    Store::open_encrypted(&path, vault).unwrap();
}

#[test]
fn a_revoked_device_forgets_its_tokens_in_the_vault_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    let vault = Arc::new(MemoryVault::default());
    let mut store = Store::open_encrypted(&path, vault.clone()).unwrap();
    fill(&mut store);
    let report = store.purge_after_revocation().unwrap();
    assert!(report.registry_rows_removed > 0);
    assert_eq!(store.client_session().unwrap(), None);
    assert!(vault.load(SESSION_TOKENS).unwrap().is_none());
    // The signing key stays: the evidence kept was signed with it.
    assert!(vault.load(DEVICE_SIGNING_KEY).unwrap().is_some());
}

#[test]
fn the_session_opens_through_the_apps_keystore() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("field.db");
    let secrets = taxi_fiscal_ffi::memory_secret_store();
    let session = taxi_fiscal_ffi::FieldSession::open(
        path.to_string_lossy().into_owned(),
        String::from("http://127.0.0.1:9"),
        String::from("tablet-01"),
        secrets.clone(),
        None,
    )
    .unwrap();
    drop(session);
    assert!(!raw(&path).starts_with(b"SQLite format 3"));
    assert!(secrets.load(DATABASE_KEY.to_owned()).unwrap().is_some());
    // Another keystore (the app reinstalled, the file copied elsewhere): refused as storage.
    let e = taxi_fiscal_ffi::FieldSession::open(
        path.to_string_lossy().into_owned(),
        String::from("http://127.0.0.1:9"),
        String::from("tablet-01"),
        taxi_fiscal_ffi::memory_secret_store(),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&e, taxi_fiscal_ffi::FiscalError::Storage { reason } if reason.contains("chave")),
        "{e:?}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn garbage_in_the_vault_is_refused_naming_the_entry_and_the_file_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("device.db");
    // A database key of the wrong length (a keystore that truncated it).
    let vault = Arc::new(MemoryVault::default());
    vault.save(DATABASE_KEY, &[1u8; 31]).unwrap();
    let e = Store::open_encrypted(&path, vault).unwrap_err();
    assert!(
        matches!(&e, StoreError::Vault { name, .. } if *name == DATABASE_KEY),
        "{e:?}"
    );
    assert!(!path.exists(), "a file was created with a bad key");

    // Tokens that do not decode: the session is unreadable, said as such, not a panic.
    let vault = Arc::new(MemoryVault::default());
    let mut store = Store::open_encrypted(&path, vault.clone()).unwrap();
    store.save_client_session(&session()).unwrap();
    vault.save(SESSION_TOKENS, b"\xff not json").unwrap();
    let e = store.client_session().unwrap_err();
    assert!(
        matches!(&e, StoreError::Decode { key, .. } if key == SESSION_TOKENS),
        "{e:?}"
    );
}
