//! Password hashing with Argon2id (PHC strings). New hashes use the configured cost; a stored
//! hash carries its own parameters, so raising the cost later does not lock anyone out.
//!
//! A login for an unknown user still runs one verification against a fixed dummy hash of the
//! same cost ([`Passwords::burn`]), so the answer time does not tell which usernames exist.

use argon2::{Algorithm, Argon2, Params, PasswordHasher, PasswordVerifier, Version};

use crate::config::PasswordParams;
use crate::error::AppError;

/// Hashes and verifies passwords.
#[derive(Clone)]
pub struct Passwords {
    argon: Argon2<'static>,
    dummy: String,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passwords").finish_non_exhaustive()
    }
}

/// Shortest password accepted for a new account.
pub const MIN_PASSWORD_LEN: usize = 8;

impl Passwords {
    /// With the given cost for new hashes.
    pub fn new(p: PasswordParams) -> Result<Self, argon2::Error> {
        let params = Params::new(p.memory_kib, p.iterations, p.parallelism, None)?;
        let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let dummy = argon
            .hash_password(b"taxi-fiscal dummy password")
            .map(|h| h.to_string())
            .unwrap_or_default();
        Ok(Self { argon, dummy })
    }

    /// A PHC string for `password`.
    pub fn hash(&self, password: &str) -> Result<String, AppError> {
        self.argon
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| AppError::internal(&e))
    }

    /// True when `password` matches `phc`. A malformed stored hash never matches.
    pub fn verify(&self, password: &str, phc: &str) -> bool {
        self.argon.verify_password(password.as_bytes(), phc).is_ok()
    }

    /// Spends the time of one verification (unknown user).
    pub fn burn(&self, password: &str) {
        let _ = self.verify(password, &self.dummy);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hash_and_verify() {
        let p = Passwords::new(PasswordParams::insecure_fast()).unwrap();
        let h = p.hash("segredo-123").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(p.verify("segredo-123", &h));
        assert!(!p.verify("segredo-124", &h));
        assert!(!p.verify("segredo-123", "not a hash"));
        // A hash made with other parameters still verifies (they travel with it).
        let other = Passwords::new(PasswordParams {
            memory_kib: 16,
            iterations: 2,
            parallelism: 1,
        })
        .unwrap();
        assert!(other.verify("segredo-123", &h));
        p.burn("x");
    }
}
