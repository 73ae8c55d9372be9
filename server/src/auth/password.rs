//! Password hashing with Argon2id (PHC strings). New hashes use the configured cost; a stored
//! hash carries its own parameters, so raising the cost later does not lock anyone out.
//!
//! A login for an unknown user still runs one verification against a fixed dummy hash of the
//! same cost ([`Passwords::burn`]), so the answer time does not tell which usernames exist.
//!
//! Every hash and verification a request causes runs in the [`HashPool`]: on the blocking pool,
//! at most [`crate::limits::MAX_CONCURRENT_PASSWORD_HASHES`] (and no more than the cores) at
//! once, each holding its Argon2 memory only while it runs. A request that finds no free slot
//! within [`crate::limits::PASSWORD_HASH_WAIT`] gets [`Busy`] (429), so a flood of logins costs
//! bounded memory and CPU instead of one 19 MiB hash per request in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use argon2::{Algorithm, Argon2, Params, PasswordHasher, PasswordVerifier, Version};
use tokio::sync::Semaphore;

use crate::config::PasswordParams;
use crate::error::AppError;
use crate::limits::{MAX_CONCURRENT_PASSWORD_HASHES, PASSWORD_HASH_RETRY_AFTER_SECS};

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

/// Why the hasher could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum PasswordSetupError {
    #[error("parâmetros do Argon2id inválidos: {0}")]
    Params(argon2::Error),
    #[error("não foi possível calcular o hash de referência: {0}")]
    Dummy(String),
}

/// Shortest password accepted for a new account or a changed password.
pub const MIN_PASSWORD_LEN: usize = 8;

/// A new password shorter than [`MIN_PASSWORD_LEN`] characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeakPassword;

impl From<WeakPassword> for AppError {
    fn from(_: WeakPassword) -> Self {
        AppError::unprocessable(
            "weak_password",
            format!("A senha deve ter ao menos {MIN_PASSWORD_LEN} caracteres."),
        )
    }
}

/// The one rule every new password meets (a created account, a changed password): at least
/// [`MIN_PASSWORD_LEN`] characters, counted as characters, not bytes.
pub fn check_new_password(password: &str) -> Result<(), WeakPassword> {
    if password.chars().count() < MIN_PASSWORD_LEN {
        Err(WeakPassword)
    } else {
        Ok(())
    }
}

impl Passwords {
    /// With the given cost for new hashes.
    pub fn new(p: PasswordParams) -> Result<Self, PasswordSetupError> {
        let params = Params::new(p.memory_kib, p.iterations, p.parallelism, None)
            .map_err(PasswordSetupError::Params)?;
        let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        // Without a real dummy hash an unknown user would be answered at once: no fallback.
        let dummy = argon
            .hash_password(b"taxi-fiscal dummy password")
            .map_err(|e| PasswordSetupError::Dummy(e.to_string()))?
            .to_string();
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

/// No hashing slot freed in time: answer 429 and let the client retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// For `Retry-After`.
    pub retry_after_seconds: u64,
}

impl From<Busy> for AppError {
    fn from(b: Busy) -> Self {
        AppError::retry_later(
            "server_busy",
            format!(
                "O servidor está ocupado verificando outras senhas: tente de novo em {} s.",
                b.retry_after_seconds
            ),
            b.retry_after_seconds,
        )
    }
}

/// The bounded pool every password hash and verification runs in.
#[derive(Debug, Clone)]
pub struct HashPool {
    passwords: Passwords,
    slots: Arc<Semaphore>,
    size: usize,
    wait: Duration,
    verifications: Arc<AtomicU64>,
}

/// Slots of the pool: the machine's cores, at most [`MAX_CONCURRENT_PASSWORD_HASHES`].
pub fn default_pool_size() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(MAX_CONCURRENT_PASSWORD_HASHES)
}

impl HashPool {
    /// `size` slots (at least one), each request waiting at most `wait` for one.
    pub fn new(passwords: Passwords, size: usize, wait: Duration) -> Self {
        let size = size.max(1);
        Self {
            passwords,
            slots: Arc::new(Semaphore::new(size)),
            size,
            wait,
            verifications: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Number of slots.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Verifications run so far (a login with an unknown user counts too).
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// Runs `work` in a slot on the blocking pool. The slot is held by the blocking task
    /// itself, so a request that gives up (timeout, client gone) frees it only when the hash
    /// really ended: the bound holds for the work, not for the requests.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Passwords) -> T + Send + 'static,
    ) -> Result<Result<T, Busy>, AppError> {
        let busy = Busy {
            retry_after_seconds: PASSWORD_HASH_RETRY_AFTER_SECS,
        };
        let slot = match tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(slot)) => slot,
            Ok(Err(_)) | Err(_) => {
                tracing::warn!(slots = self.size, "sem vaga para verificar senha: 429");
                return Ok(Err(busy));
            }
        };
        let passwords = self.passwords.clone();
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work(&passwords)
        })
        .await
        .map(Ok)
        .map_err(|e| AppError::internal(&e))
    }

    /// Whether `password` matches `phc`; with `None` (unknown user) the same work against the
    /// dummy hash, and `false`.
    pub async fn verify(
        &self,
        password: String,
        phc: Option<String>,
    ) -> Result<Result<bool, Busy>, AppError> {
        let counter = self.verifications.clone();
        self.run(move |p| {
            counter.fetch_add(1, Ordering::Relaxed);
            match phc {
                Some(phc) => p.verify(&password, &phc),
                None => {
                    p.burn(&password);
                    false
                }
            }
        })
        .await
    }

    /// A new hash of `password` (accounts created through the API).
    pub async fn hash(&self, password: String) -> Result<String, AppError> {
        match self.run(move |p| p.hash(&password)).await? {
            Ok(hash) => hash,
            Err(busy) => Err(busy.into()),
        }
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_pool_bounds_concurrent_hashes_and_refuses_beyond_the_wait() {
        let p = Passwords::new(PasswordParams::insecure_fast()).unwrap();
        let pool = HashPool::new(p, 2, Duration::from_millis(50));
        let running = Arc::new(AtomicU64::new(0));
        let peak = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let pool = pool.clone();
            let (running, peak) = (running.clone(), peak.clone());
            tasks.push(tokio::spawn(async move {
                pool.run(move |_| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(200));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
                .await
                .unwrap()
            }));
        }
        let mut done = 0;
        let mut busy = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(()) => done += 1,
                Err(b) => {
                    assert_eq!(b.retry_after_seconds, PASSWORD_HASH_RETRY_AFTER_SECS);
                    busy += 1;
                }
            }
        }
        // Exactly the two slots ran; the rest waited 50 ms and were refused.
        assert_eq!((done, busy), (2, 4));
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert!(pool.verify("x".into(), None).await.unwrap() == Ok(false));
        assert_eq!(pool.verifications(), 1);
        assert!((1..=MAX_CONCURRENT_PASSWORD_HASHES).contains(&default_pool_size()));
    }
}
