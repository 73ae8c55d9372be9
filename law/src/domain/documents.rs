//! Brazilian document numbers: CPF (D01), CNH registro (D02) and RENAVAM (D03), as described
//! in docs/law/reference.md (Driver documents, Vehicle documents).
//!
//! Parsing checks the *shape* (digits only after stripping the mask, right length, not all the
//! same digit). The check digits are a separate question (`check_digits_ok`), because the rules
//! engine only *warns* about them for registry data (a typo in the registry must not stop a
//! check), while input typed by a person is refused when they do not match.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::DomainError;

fn digits_of(input: &str) -> Vec<u8> {
    input
        .chars()
        .filter_map(|c| c.to_digit(10))
        .map(|d| d as u8)
        .collect()
}

fn only_mask_chars(input: &str) -> bool {
    input
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | ' ' | '/'))
}

fn all_same(d: &[u8]) -> bool {
    d.windows(2).all(|w| w[0] == w[1])
}

fn to_string(d: &[u8]) -> String {
    d.iter().map(|x| char::from(b'0' + x)).collect()
}

/// Already the canonical form (11 ASCII digits, no mask), as every number read back from the
/// registry is: `parse` then copies it as it is instead of filtering it digit by digit into a
/// growing vector (device bench: a field check parses ~7 document numbers out of its
/// bundle). The outcome is the same as the general path's.
fn is_canonical(input: &str) -> bool {
    input.len() == 11 && input.bytes().all(|b| b.is_ascii_digit())
}

/// The 11 digits of a canonical number (what the newtypes hold: `parse` builds them), without
/// allocating: the rules test the check digits of every document a check reads.
fn digits11(canonical: &str) -> [u8; 11] {
    let mut d = [0; 11];
    for (slot, b) in d.iter_mut().zip(canonical.bytes()) {
        *slot = b.wrapping_sub(b'0');
    }
    d
}

/// CPF check digits of nine base digits (docs/law/reference.md, CPF).
fn cpf_check_digits(base: [u8; 9]) -> [u8; 2] {
    let dv = |digits: &[u8]| {
        let n = digits.len() as u32;
        let s: u32 = digits
            .iter()
            .zip((2..=n + 1).rev())
            .map(|(x, w)| u32::from(*x) * w)
            .sum();
        let r = s % 11;
        if r < 2 { 0 } else { (11 - r) as u8 }
    };
    let dv1 = dv(&base);
    let mut ten = [0; 10];
    ten[..9].copy_from_slice(&base);
    ten[9] = dv1;
    [dv1, dv(&ten)]
}

/// CNH registro check digits, Respect/Validation variant (docs/law/reference.md, CNH).
fn cnh_check_digits(base: [u8; 9]) -> [u8; 2] {
    let s1: i32 = (0..9).map(|i| i32::from(base[i]) * (9 - i as i32)).sum();
    let mut dv1 = s1 % 11;
    let mut dsc = 0;
    if dv1 >= 10 {
        dv1 = 0;
        dsc = 2;
    }
    let s2: i32 = (0..9).map(|i| i32::from(base[i]) * (i as i32 + 1)).sum();
    let mut dv2 = (s2 % 11) - dsc;
    if dv2 < 0 {
        dv2 += 11;
    }
    if dv2 >= 10 {
        dv2 = 0;
    }
    [dv1 as u8, dv2 as u8]
}

/// RENAVAM check digit: first 10 digits reversed, weights 2..9,2,3 (docs/law/reference.md, RENAVAM).
fn renavam_check_digit(base: [u8; 10]) -> u8 {
    const W: [u32; 10] = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3];
    let s: u32 = base
        .iter()
        .rev()
        .zip(W)
        .map(|(x, w)| u32::from(*x) * w)
        .sum();
    let dv = 11 - (s % 11);
    if dv >= 10 { 0 } else { dv as u8 }
}

macro_rules! doc_newtype {
    ($name:ident, $what:literal) => {
        impl $name {
            /// The 11 digits, no mask.
            pub fn as_str(&self) -> &str {
                &self.0
            }
            fn digits(&self) -> [u8; 11] {
                digits11(&self.0)
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl TryFrom<String> for $name {
            type Error = DomainError;
            /// `parse`, keeping `value` itself when it is already canonical (serde, and the
            /// device's check bundles, hand over a string of their own).
            fn try_from(value: String) -> Result<Self, Self::Error> {
                if is_canonical(&value) && !all_same(value.as_bytes()) {
                    return Ok(Self(value));
                }
                $name::parse(&value)
            }
        }
        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }
    };
}

/// CPF: 11 digits, mask `###.###.###-##`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "String")]
pub struct Cpf(String);
doc_newtype!(Cpf, "CPF");

impl Cpf {
    /// Parses the shape: 11 digits after removing `.`, `-` and spaces, not all identical.
    pub fn parse(input: &str) -> Result<Self, DomainError> {
        if is_canonical(input) && !all_same(input.as_bytes()) {
            return Ok(Self(input.to_owned()));
        }
        let d = digits_of(input);
        if !only_mask_chars(input) || d.len() != 11 || all_same(&d) {
            return Err(DomainError::Cpf {
                reason: "deve ter 11 dígitos, não todos iguais",
            });
        }
        Ok(Self(to_string(&d)))
    }

    /// Parses and also requires the check digits to match (input typed by a person).
    pub fn parse_strict(input: &str) -> Result<Self, DomainError> {
        let cpf = Self::parse(input)?;
        if cpf.check_digits_ok() {
            Ok(cpf)
        } else {
            Err(DomainError::Cpf {
                reason: "dígitos verificadores não conferem",
            })
        }
    }

    /// D01: both check digits, weights 10..2 then 11..2, `r < 2 → 0 else 11 − r`.
    pub fn check_digits_ok(&self) -> bool {
        let d = self.digits();
        d[..9]
            .try_into()
            .is_ok_and(|base: [u8; 9]| cpf_check_digits(base) == [d[9], d[10]])
    }

    /// The CPF with these nine base digits and its correct check digits (demo data, tests).
    /// `None` when all eleven digits would be the same (never a valid CPF).
    pub fn from_base(base: [u8; 9]) -> Option<Self> {
        let dv = cpf_check_digits(base);
        Self::parse(&to_string(&[&base[..], &dv[..]].concat())).ok()
    }

    /// `###.###.###-##`, for documents people read.
    pub fn masked(&self) -> String {
        let s = &self.0;
        format!("{}.{}.{}-{}", &s[0..3], &s[3..6], &s[6..9], &s[9..11])
    }
}

/// CNH "nº de registro": 11 digits.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "String")]
pub struct CnhNumber(String);
doc_newtype!(CnhNumber, "CNH");

impl CnhNumber {
    /// Parses the shape: 11 digits, not all identical (which also rules out all zeros).
    pub fn parse(input: &str) -> Result<Self, DomainError> {
        if is_canonical(input) && !all_same(input.as_bytes()) {
            return Ok(Self(input.to_owned()));
        }
        let d = digits_of(input);
        if !only_mask_chars(input) || d.len() != 11 || all_same(&d) {
            return Err(DomainError::Cnh {
                reason: "deve ter 11 dígitos, não todos iguais",
            });
        }
        Ok(Self(to_string(&d)))
    }

    /// D02, Respect/Validation variant (docs/law/reference.md, CNH). Implementations disagree on the edge case,
    /// so a mismatch is only ever a warning ("possível erro de digitação").
    pub fn check_digits_ok(&self) -> bool {
        let d = self.digits();
        d[..9]
            .try_into()
            .is_ok_and(|base: [u8; 9]| cnh_check_digits(base) == [d[9], d[10]])
    }

    /// The CNH number with these nine base digits and its check digits (demo data, tests).
    pub fn from_base(base: [u8; 9]) -> Option<Self> {
        let dv = cnh_check_digits(base);
        Self::parse(&to_string(&[&base[..], &dv[..]].concat())).ok()
    }
}

/// RENAVAM: 11 digits; old 9-digit codes are left-padded with zeros.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "String")]
pub struct Renavam(String);
doc_newtype!(Renavam, "RENAVAM");

impl Renavam {
    /// Parses 9 or 11 digits (9 are left-padded), refusing all-identical digits.
    pub fn parse(input: &str) -> Result<Self, DomainError> {
        if is_canonical(input) && !all_same(input.as_bytes()) {
            return Ok(Self(input.to_owned()));
        }
        let mut d = digits_of(input);
        if !only_mask_chars(input) || !(d.len() == 9 || d.len() == 11) {
            return Err(DomainError::Renavam {
                reason: "deve ter 9 ou 11 dígitos",
            });
        }
        while d.len() < 11 {
            d.insert(0, 0);
        }
        if all_same(&d) {
            return Err(DomainError::Renavam {
                reason: "dígitos todos iguais",
            });
        }
        Ok(Self(to_string(&d)))
    }

    /// D03: first 10 digits reversed, weights 2..9,2,3; `dv = 11 − s mod 11`, 10+ → 0.
    pub fn check_digits_ok(&self) -> bool {
        let d = self.digits();
        d[..10]
            .try_into()
            .is_ok_and(|base: [u8; 10]| renavam_check_digit(base) == d[10])
    }

    /// The RENAVAM with these ten base digits and its check digit (demo data, tests).
    pub fn from_base(base: [u8; 10]) -> Option<Self> {
        let dv = renavam_check_digit(base);
        Self::parse(&to_string(&[&base[..], &[dv][..]].concat())).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpf_vectors() {
        for ok in [
            "11144477735",
            "82178537464",
            "52599927765",
            "12345678909",
            "111.444.777-35",
        ] {
            let c = Cpf::parse(ok).unwrap();
            assert!(c.check_digits_ok(), "{ok}");
            assert!(Cpf::parse_strict(ok).is_ok());
        }
        let bad = Cpf::parse("12345678901").unwrap();
        assert!(!bad.check_digits_ok());
        assert!(Cpf::parse_strict("12345678901").is_err());
        for shape in [
            "11111111111",
            "1234567890",
            "123456789012",
            "abc",
            "111.444.777-3X",
        ] {
            assert!(Cpf::parse(shape).is_err(), "{shape}");
        }
        assert_eq!(
            Cpf::parse("11144477735").unwrap().masked(),
            "111.444.777-35"
        );
    }

    #[test]
    fn cnh_vectors() {
        for ok in [
            "02650306461",
            "00883873792",
            "16786843363",
            // s1 mod 11 = 10 edge cases
            "76842684603",
            "35379907506",
            "47824504009",
        ] {
            assert!(CnhNumber::parse(ok).unwrap().check_digits_ok(), "{ok}");
        }
        assert!(!CnhNumber::parse("02650306462").unwrap().check_digits_ok());
        assert!(CnhNumber::parse("00000000000").is_err());
        let n = CnhNumber::from_base([0, 2, 6, 5, 0, 3, 0, 6, 4]).unwrap();
        assert_eq!(n.as_str(), "02650306461");
        let edge = CnhNumber::from_base([7, 6, 8, 4, 2, 6, 8, 4, 6]).unwrap();
        assert_eq!(edge.as_str(), "76842684603");
        assert!(CnhNumber::parse("7777777777").is_err());
    }

    /// From a `String` (serde, the device's bundles) as from a `&str`, canonical or not.
    #[test]
    fn from_string_is_parse() {
        for s in [
            "11144477735",
            "111.444.777-35",
            "11111111111",
            "00000000000",
            "1114447773",
            "111444777350",
            "1114447773a",
            "123456789",
            "١١١٤٤٤٧٧٧٣٥",
            "",
        ] {
            assert_eq!(Cpf::try_from(s.to_owned()), Cpf::parse(s), "{s}");
            assert_eq!(
                CnhNumber::try_from(s.to_owned()),
                CnhNumber::parse(s),
                "{s}"
            );
            assert_eq!(Renavam::try_from(s.to_owned()), Renavam::parse(s), "{s}");
        }
        assert_eq!(
            Cpf::try_from("111.444.777-35".to_owned()).unwrap().as_str(),
            "11144477735"
        );
    }

    #[test]
    fn renavam_vectors() {
        for ok in ["86769597308", "79072338363", "01234567897", "98765432103"] {
            assert!(Renavam::parse(ok).unwrap().check_digits_ok(), "{ok}");
        }
        assert!(!Renavam::parse("12345678901").unwrap().check_digits_ok());
        assert_eq!(Renavam::parse("123456789").unwrap().as_str(), "00123456789");
        let r = Renavam::from_base([8, 6, 7, 6, 9, 5, 9, 7, 3, 0]).unwrap();
        assert_eq!(r.as_str(), "86769597308");
        assert!(Renavam::parse("22222222222").is_err());
        assert!(Renavam::parse("1234").is_err());
    }
}
