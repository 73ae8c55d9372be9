//! Verification codes: 16 Crockford base-32 characters (80 bits) printed as
//! `XXXX-XXXX-XXXX-XXXX` and in a QR code.
//!
//! A code is derived, never drawn: `SHA-256(domain ‖ bytes)` cut to [`CODE_BYTES`], where
//! `bytes` are what makes the document authentic — the device's Ed25519 signature over an
//! auto's sealed evidence (so a device offline can print the code the server will later index
//! on receipt), or the digest of a notification and the audit entry that recorded it. Eighty
//! bits cannot be guessed through a rate-limited page, and a code altered by one character
//! names nothing. Crockford's alphabet has no I, L, O or U; reading a code back folds the
//! letters people confuse (`I`/`L` → 1, `O` → 0), ignores case, spaces and dashes.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Bytes of digest a code keeps: 80 bits.
pub const CODE_BYTES: usize = 10;
/// Characters of a code (5 bits each), dashes not counted.
pub const CODE_LEN: usize = CODE_BYTES * 8 / 5;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A verification code, always in canonical form (16 upper-case Crockford characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct VerificationCode(String);

impl VerificationCode {
    /// The code of `bytes` under `domain` (e.g. `b"taxi-fiscal/auto/v1"`): different kinds of
    /// document never share a code even over the same bytes.
    pub fn derive(domain: &[u8], bytes: &[u8]) -> Self {
        let mut h = Sha256::new();
        h.update((domain.len() as u64).to_be_bytes());
        h.update(domain);
        h.update(bytes);
        let digest = h.finalize();
        let mut bits: u128 = 0;
        for b in &digest[..CODE_BYTES] {
            bits = (bits << 8) | u128::from(*b);
        }
        let mut out = String::with_capacity(CODE_LEN);
        for i in (0..CODE_LEN).rev() {
            let v = ((bits >> (i * 5)) & 0x1f) as usize;
            out.push(char::from(ALPHABET[v]));
        }
        Self(out)
    }

    /// Reads a code as a person types it or a QR code gives it; `None` unless it is exactly
    /// [`CODE_LEN`] characters of the alphabet once case, spaces and dashes are set aside.
    pub fn parse(input: &str) -> Option<Self> {
        // Bounded before any work: a path segment can be long.
        if input.len() > CODE_LEN * 3 {
            return None;
        }
        let mut out = String::with_capacity(CODE_LEN);
        for c in input.chars() {
            let c = match c.to_ascii_uppercase() {
                '-' | ' ' => continue,
                'I' | 'L' => '1',
                'O' => '0',
                c => c,
            };
            if !c.is_ascii() || !ALPHABET.contains(&(c as u8)) {
                return None;
            }
            out.push(c);
        }
        (out.len() == CODE_LEN).then_some(Self(out))
    }

    /// Without dashes, as in the QR code's address.
    pub fn compact(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VerificationCode {
    /// Grouped by four: `7K3M-Q9XA-2B8C-D4EF`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, chunk) in self.0.as_bytes().chunks(4).enumerate() {
            if i > 0 {
                f.write_str("-")?;
            }
            f.write_str(std::str::from_utf8(chunk).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl TryFrom<String> for VerificationCode {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s).ok_or_else(|| String::from("código de verificação inválido"))
    }
}

impl From<VerificationCode> for String {
    fn from(c: VerificationCode) -> Self {
        c.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_codes_are_sixteen_characters_and_read_back() {
        let c = VerificationCode::derive(b"taxi-fiscal/auto/v1", b"signature bytes");
        assert_eq!(c.compact().len(), CODE_LEN);
        assert_eq!(c.to_string().len(), CODE_LEN + 3);
        assert_eq!(VerificationCode::parse(&c.to_string()), Some(c.clone()));
        assert_eq!(
            VerificationCode::parse(&c.to_string().to_lowercase()),
            Some(c.clone())
        );
        // Same bytes, another kind of document: another code.
        assert_ne!(
            VerificationCode::derive(b"taxi-fiscal/notification/v1", b"signature bytes"),
            c
        );
    }

    #[test]
    fn confusable_letters_fold_and_anything_else_is_refused() {
        let c = VerificationCode::parse("0000-1111-2222-3333").unwrap();
        assert_eq!(
            VerificationCode::parse("oooo-iiii-2222-3333"),
            Some(c.clone())
        );
        assert_eq!(VerificationCode::parse("OOOO LLLL 2222 3333"), Some(c));
        assert_eq!(VerificationCode::parse("0000-1111-2222-333"), None);
        assert_eq!(VerificationCode::parse("0000-1111-2222-33333"), None);
        assert_eq!(VerificationCode::parse("0000-1111-2222-333U"), None);
        assert_eq!(VerificationCode::parse("0000-1111-2222-333é"), None);
        assert_eq!(VerificationCode::parse(&"-".repeat(10_000)), None);
    }
}
