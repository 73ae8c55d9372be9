//! Vehicle plates (docs/law/reference.md, Plates, rule D04).
//!
//! Two spellings name one vehicle: the old `ABC-1234` and the Mercosul `ABC1C34`. The canonical
//! form is the Mercosul one: drop everything that is not A–Z/0–9, upper-case, check the shape
//! `LLL9X99`, and map a digit in the fifth place to its letter (0→A … 9→J). Two plates are the
//! same vehicle iff their canonical forms are equal. The raw input is kept for the record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::DomainError;

/// A plate as typed plus its canonical Mercosul form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "String")]
pub struct Plate {
    raw: String,
    canonical: String,
}

/// The shape the plate was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlateFormat {
    /// `LLL9999`, printed `ABC-1234`.
    Old,
    /// `LLL9L99`, issued since 2018.
    Mercosul,
}

impl Plate {
    /// Parses any accepted spelling (`abc-1234`, `ABC·1234`, `ABC 1C34`, `abc1c34`).
    pub fn parse(input: &str) -> Result<Self, DomainError> {
        Self::parse_into(input, String::new(), String::new())
    }

    /// `parse`, writing the raw and canonical forms into these two strings (whatever they held
    /// is cleared): the device store hands over spare buffers when it decodes a check bundle
    /// (device bench).
    #[doc(hidden)]
    pub fn parse_into(
        input: &str,
        mut raw: String,
        mut canonical: String,
    ) -> Result<Self, DomainError> {
        // Bytes rather than chars, into a fixed buffer (device bench: every check
        // parses the plate in its bundle): a non-ASCII char is all bytes ≥ 0x80, none of them
        // ASCII alphanumeric, so it drops out exactly as the char would.
        let mut kept = input
            .bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| b.to_ascii_uppercase());
        let mut cleaned = [0u8; 7];
        let mut len = 0;
        for (slot, b) in cleaned.iter_mut().zip(&mut kept) {
            *slot = b;
            len += 1;
        }
        let ok_shape = len == 7
            && kept.next().is_none()
            && cleaned[..3].iter().all(u8::is_ascii_uppercase)
            && cleaned[3].is_ascii_digit()
            && cleaned[4].is_ascii_alphanumeric()
            && cleaned[5..].iter().all(u8::is_ascii_digit);
        if !ok_shape {
            return Err(DomainError::Plate {
                input: input.to_owned(),
            });
        }
        if cleaned[4].is_ascii_digit() {
            // Old → Mercosul: the second digit becomes a letter, 0→A … 9→J.
            cleaned[4] = b'A' + (cleaned[4] - b'0');
        }
        raw.clear();
        raw.push_str(input.trim());
        canonical.clear();
        canonical.extend(cleaned.iter().map(|&b| char::from(b)));
        Ok(Self { raw, canonical })
    }

    /// The two strings, raw and canonical, for reuse.
    #[doc(hidden)]
    pub fn into_buffers(self) -> (String, String) {
        (self.raw, self.canonical)
    }

    /// The input as the person typed it (trimmed).
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The canonical Mercosul form, the key for every comparison and index.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// Which format the raw input was written in.
    pub fn format(&self) -> PlateFormat {
        let fifth = self
            .raw
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .nth(4)
            .unwrap_or('A');
        if fifth.is_ascii_digit() {
            PlateFormat::Old
        } else {
            PlateFormat::Mercosul
        }
    }

    /// The old-format equivalent (`ABC1234`), if the Mercosul letter is A–J.
    pub fn old_form(&self) -> Option<String> {
        let mut chars: Vec<char> = self.canonical.chars().collect();
        let letter = chars[4];
        if ('A'..='J').contains(&letter) {
            chars[4] = char::from(b'0' + (letter as u8 - b'A'));
            Some(chars.into_iter().collect())
        } else {
            None
        }
    }

    /// True when both name the same vehicle.
    pub fn same_vehicle(&self, other: &Plate) -> bool {
        self.canonical == other.canonical
    }
}

impl std::fmt::Display for Plate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.canonical)
    }
}

impl TryFrom<String> for Plate {
    type Error = DomainError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Plate::parse(&value)
    }
}

impl From<Plate> for String {
    fn from(p: Plate) -> String {
        p.raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_vectors_old_to_mercosul() {
        // docs/law/reference.md, Plates: ABC4567 → ABC4F67.
        assert_eq!(Plate::parse("ABC4567").unwrap().canonical(), "ABC4F67");
        assert_eq!(Plate::parse("BRA2E19").unwrap().canonical(), "BRA2E19");
        for (d, l) in ('0'..='9').zip('A'..='J') {
            let p = Plate::parse(&format!("ABC1{d}34")).unwrap();
            assert_eq!(p.canonical(), format!("ABC1{l}34"));
        }
    }

    #[test]
    fn spellings_are_one_vehicle_and_raw_is_kept() {
        let spellings = [
            "ABC-1234",
            "abc1234",
            "ABC·1234",
            " abc 1234 ",
            "ABC1C34",
            "abc-1c34",
        ];
        let first = Plate::parse(spellings[0]).unwrap();
        for s in spellings {
            let p = Plate::parse(s).unwrap();
            assert!(p.same_vehicle(&first), "{s}");
            assert_eq!(p.raw(), s.trim());
        }
        assert_eq!(Plate::parse("ABC-1234").unwrap().format(), PlateFormat::Old);
        assert_eq!(
            Plate::parse("ABC1C34").unwrap().format(),
            PlateFormat::Mercosul
        );
        assert_eq!(
            Plate::parse("ABC1C34").unwrap().old_form().as_deref(),
            Some("ABC1234")
        );
        assert_eq!(Plate::parse("ABC1K34").unwrap().old_form(), None);
    }

    #[test]
    fn bad_shapes_are_refused() {
        for s in [
            "", "AB1234", "ABCD123", "1BC1234", "ABC12345", "ABCA234", "ABC1C3D", "ÁBC1234",
        ] {
            assert!(Plate::parse(s).is_err(), "{s}");
        }
    }

    /// `parse` as it was, char by char into a vector: the byte-wise one must agree with it.
    fn parse_by_chars(input: &str) -> Option<(String, String)> {
        let mut c: Vec<char> = input
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let ok = c.len() == 7
            && c[..3].iter().all(char::is_ascii_uppercase)
            && c[3].is_ascii_digit()
            && c[5..].iter().all(char::is_ascii_digit);
        if !ok {
            return None;
        }
        if let Some(d) = c[4].to_digit(10) {
            c[4] = char::from(b'A' + d as u8);
        }
        Some((input.trim().to_owned(), c.into_iter().collect()))
    }

    #[test]
    fn bytewise_parse_agrees_with_charwise_and_reuses_buffers() {
        for s in [
            "ABC-1234",
            "abc1c34",
            "ABC·1234",
            " abc 1234 ",
            "ÁBC1234",
            "AÁBC1234",
            "ABC1234Ç",
            "ABC12345",
            "ABC123",
            "",
            "ABC-1K34\n",
            "a.b.c-1-2-3-4",
            "ABC1C3D",
            "ABC 1 ç 234",
        ] {
            let got = Plate::parse(s).ok();
            let want = parse_by_chars(s);
            assert_eq!(
                got.as_ref()
                    .map(|p| (p.raw().to_owned(), p.canonical().to_owned())),
                want,
                "{s:?}"
            );
            let into = Plate::parse_into(s, "lixo antigo".into(), "XXXXXXXXXXXX".into()).ok();
            assert_eq!(into, got, "{s:?}");
            if let Some(p) = into {
                assert_eq!(p.into_buffers(), (s.trim().to_owned(), want.unwrap().1));
            }
        }
    }

    #[test]
    fn serde_roundtrip_keeps_raw() {
        let p: Plate = serde_json::from_str("\"abc-1234\"").unwrap();
        assert_eq!(p.canonical(), "ABC1C34");
        assert_eq!(serde_json::to_string(&p).unwrap(), "\"abc-1234\"");
        assert!(serde_json::from_str::<Plate>("\"nope\"").is_err());
    }
}
