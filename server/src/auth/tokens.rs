//! Access tokens (JWT, HS256) and refresh tokens (opaque, stored hashed). ADR 0007.
//!
//! An access token lives `access_ttl` (15 minutes by default) and says who (`sub`, `usr`), with
//! which role (`role`, and `stand` for a coordinator), on which device (`dev`), from which login
//! (`fam`, the refresh-token family), until when (`exp`). Expiry is checked against the server's [`crate::Clock`], not inside jsonwebtoken, so
//! tests can move time. A refresh token is 32 random bytes (base64url); the server keeps only its
//! SHA-256, spends it on use and hands out the next one of the same family. Presenting a spent
//! one revokes the family; since every access token names its family and the `Auth` extractor
//! checks the family on every request, that ends the access tokens of the login at once too.

use base64::Engine;
use chrono::{DateTime, Utc};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::Role;
use crate::error::AppError;
use crate::store::UserRow;

/// `iss` of every token.
pub const ISSUER: &str = "taxi-fiscal";

/// What an access token says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    /// User id.
    pub sub: String,
    /// Username.
    pub usr: String,
    pub role: Role,
    /// The coordinator's stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand: Option<String>,
    /// Device id.
    pub dev: String,
    /// The refresh-token family (one login) this token belongs to; revoking the family ends
    /// the token. Required: a token without one is refused (the client refreshes).
    pub fam: String,
    pub iat: i64,
    pub exp: i64,
}

/// Signs and checks access tokens.
#[derive(Clone)]
pub struct TokenService {
    /// Keys the successor of a refresh token ([`TokenService::successor`]): the token secret
    /// itself, the message carrying its own purpose.
    refresh_key: Vec<u8>,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    access_ttl: chrono::Duration,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService")
            .field("access_ttl", &self.access_ttl)
            .finish_non_exhaustive()
    }
}

impl TokenService {
    pub fn new(
        secret: &[u8],
        access_ttl: std::time::Duration,
    ) -> Result<Self, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is ours to check, on the server's clock.
        validation.validate_exp = false;
        validation.leeway = 0;
        validation.validate_aud = false;
        validation.set_issuer(&[ISSUER]);
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        Ok(Self {
            refresh_key: secret.to_vec(),
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
            validation,
            access_ttl: chrono::Duration::from_std(access_ttl)
                .unwrap_or_else(|_| chrono::Duration::minutes(15)),
        })
    }

    /// Lifetime of an access token, in seconds.
    pub fn ttl_seconds(&self) -> i64 {
        self.access_ttl.num_seconds()
    }

    /// An access token for `user` on `device_id` in login `family`, issued at `now`.
    pub fn issue(
        &self,
        user: &UserRow,
        device_id: &str,
        family: &str,
        now: DateTime<Utc>,
    ) -> Result<(String, DateTime<Utc>), AppError> {
        let exp = now + self.access_ttl;
        let claims = Claims {
            iss: ISSUER.into(),
            sub: user.id.clone(),
            usr: user.username.clone(),
            role: user.role,
            stand: user.stand_id.clone(),
            dev: device_id.to_owned(),
            fam: family.to_owned(),
            iat: now.timestamp(),
            exp: exp.timestamp(),
        };
        self.sign(&claims).map(|t| (t, exp))
    }

    /// Signs arbitrary claims (tests forge expired or foreign tokens with it).
    pub fn sign(&self, claims: &Claims) -> Result<String, AppError> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .map_err(|e| AppError::internal(&e))
    }

    /// The claims of a valid, unexpired token.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, AppError> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => expired(),
                _ => AppError::unauthorized(
                    "token_invalid",
                    "Token de acesso inválido. Faça login novamente.",
                ),
            })?;
        if data.claims.exp <= now.timestamp() {
            return Err(expired());
        }
        Ok(data.claims)
    }
}

fn expired() -> AppError {
    AppError::unauthorized(
        "token_expired",
        "Token de acesso expirado: renove-o em /v1/auth/refresh.",
    )
}

/// A new refresh token and the hash the server stores.
impl TokenService {
    /// The refresh token that replaces `presented`, and its hash: HMAC-SHA256 of the presented
    /// token under the server's secret. Derived, not drawn, so that a refresh repeated because
    /// its answer was lost gets the very same successor (`RotateOutcome::Repeated`) while the
    /// server still keeps only hashes; unpredictable to anyone without the secret.
    pub fn successor(&self, presented: &str) -> Result<(String, String), AppError> {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.refresh_key)
            .map_err(|e| AppError::internal(&e))?;
        mac.update(b"taxi-fiscal refresh successor v1\0");
        mac.update(presented.as_bytes());
        let token =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        let hash = refresh_hash(&token);
        Ok((token, hash))
    }
}

pub fn new_refresh_token() -> Result<(String, String), AppError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal(&e))?;
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let hash = refresh_hash(&token);
    Ok((token, hash))
}

/// The stored form of a refresh token. SHA-256 suffices: the token has 256 random bits.
pub fn refresh_hash(token: &str) -> String {
    crate::audit::payload_hash(token.as_bytes())
}

/// A random id (family ids, generated device ids): 16 random bytes, hex.
pub fn random_id() -> Result<String, AppError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal(&e))?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn user() -> UserRow {
        UserRow {
            id: "u1".into(),
            username: "fiscal".into(),
            display_name: "Fiscal".into(),
            role: Role::Officer,
            stand_id: None,
            password_hash: String::new(),
            active: true,
            created_at: Utc::now(),
        }
    }

    #[test]
    fn issue_verify_expire_forge() {
        let t = TokenService::new(
            b"0123456789abcdef0123456789abcdef",
            std::time::Duration::from_secs(900),
        )
        .unwrap();
        let now: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        let (tok, exp) = t.issue(&user(), "dev-1", "fam-1", now).unwrap();
        assert_eq!((exp - now).num_seconds(), 900);
        let c = t.verify(&tok, now).unwrap();
        assert_eq!(
            (c.sub.as_str(), c.dev.as_str(), c.fam.as_str(), c.role),
            ("u1", "dev-1", "fam-1", Role::Officer)
        );
        let e = t.verify(&tok, exp).unwrap_err();
        assert_eq!(e.code, "token_expired");

        let other = TokenService::new(
            b"another secret of at least 32 bytes!",
            std::time::Duration::from_secs(900),
        )
        .unwrap();
        let (forged, _) = other.issue(&user(), "dev-1", "fam-1", now).unwrap();
        assert_eq!(t.verify(&forged, now).unwrap_err().code, "token_invalid");
        assert_eq!(t.verify("garbage", now).unwrap_err().code, "token_invalid");
    }

    #[test]
    fn a_successor_is_the_same_for_the_same_token_and_unrelated_to_it() {
        let tokens = TokenService::new(&[7u8; 32], std::time::Duration::from_secs(900)).unwrap();
        let (a, ha) = tokens.successor("token-1").unwrap();
        assert_eq!(
            tokens.successor("token-1").unwrap(),
            (a.clone(), ha.clone())
        );
        assert_eq!(ha, refresh_hash(&a));
        assert_ne!(tokens.successor("token-2").unwrap().0, a);
        let other = TokenService::new(&[8u8; 32], std::time::Duration::from_secs(900)).unwrap();
        assert_ne!(
            other.successor("token-1").unwrap().0,
            a,
            "keyed by the secret"
        );
        assert_eq!(a.len(), 43, "32 bytes, base64url without padding");
    }

    #[test]
    fn refresh_tokens_are_random_and_hashed() {
        let (a, ha) = new_refresh_token().unwrap();
        let (b, _) = new_refresh_token().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert_eq!(refresh_hash(&a), ha);
        assert_ne!(a, ha);
    }
}
