//! The platform keystore, as the app hands it to the library: [`SecretStore`].
//!
//! The app implements three calls on Android's Keystore (e.g. an AES key of the Keystore
//! wrapping each value, kept in the app's private files) or on iOS's Keychain
//! (`kSecClassGenericPassword`, `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), and passes
//! one to `FieldSession.open` per database. The library keeps there the database key
//! (SQLCipher encrypts the file with it), the device's signing key and the session's tokens
//! (`sync_core::store::secrets`): the file alone, copied off a lost phone, is unreadable and
//! cannot sign or reach the server. `memory_secret_store()` is an implementation in memory, for
//! tests: its secrets die with the process, and with them the database.

use std::sync::Arc;

use sync_core::store::{MemoryVault, SecretVault};

/// Why the app's keystore failed (locked before the first unlock, an unusable key …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum SecretStoreError {
    /// The platform's reason, as the app words it.
    #[error("{reason}")]
    Failed { reason: String },
}

impl From<uniffi::UnexpectedUniFFICallbackError> for SecretStoreError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Failed { reason: e.reason }
    }
}

/// The device's keystore, implemented by the app (Kotlin, Swift). One per database: the
/// entries (`database-key`, `device-signing-key`, `session-tokens`) are the database's.
/// Calls come from the thread of the library call that needs them; each must be durable when
/// it returns.
#[uniffi::export(with_foreign)]
pub trait SecretStore: Send + Sync {
    /// The value stored under `name`, or nothing.
    fn load(&self, name: String) -> Result<Option<Vec<u8>>, SecretStoreError>;
    /// Stores `value` under `name`, replacing any.
    fn save(&self, name: String, value: Vec<u8>) -> Result<(), SecretStoreError>;
    /// Deletes `name` (absent is fine).
    fn delete(&self, name: String) -> Result<(), SecretStoreError>;
}

/// A keystore in memory, for tests: the database it opens cannot be read after the process
/// ends.
#[uniffi::export]
pub fn memory_secret_store() -> Arc<dyn SecretStore> {
    Arc::new(Memory(MemoryVault::default()))
}

struct Memory(MemoryVault);

impl SecretStore for Memory {
    fn load(&self, name: String) -> Result<Option<Vec<u8>>, SecretStoreError> {
        self.0
            .load(&name)
            .map_err(|reason| SecretStoreError::Failed { reason })
    }

    fn save(&self, name: String, value: Vec<u8>) -> Result<(), SecretStoreError> {
        self.0
            .save(&name, &value)
            .map_err(|reason| SecretStoreError::Failed { reason })
    }

    fn delete(&self, name: String) -> Result<(), SecretStoreError> {
        self.0
            .delete(&name)
            .map_err(|reason| SecretStoreError::Failed { reason })
    }
}

/// The app's keystore as the device store asks for it.
pub(crate) struct Vault(pub(crate) Arc<dyn SecretStore>);

impl SecretVault for Vault {
    fn load(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.load(name.to_owned()).map_err(|e| e.to_string())
    }

    fn save(&self, name: &str, value: &[u8]) -> Result<(), String> {
        self.0
            .save(name.to_owned(), value.to_vec())
            .map_err(|e| e.to_string())
    }

    fn delete(&self, name: &str) -> Result<(), String> {
        self.0.delete(name.to_owned()).map_err(|e| e.to_string())
    }
}
