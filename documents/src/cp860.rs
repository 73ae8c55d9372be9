//! Code page 860 (MS-DOS Portuguese), the code page of Epson-compatible thermal printers that
//! holds every letter Portuguese writes (ã õ ç á é í ó ú â ê ô à, upper and lower case, º ª).
//! Text is first *folded* to what the page has — a few signs written out ("§" → "par."),
//! other accented letters to their base letter, anything else to "?" — so that wrapping counts
//! the characters the printer will really print.

/// Bytes 0x80–0xFF of code page 860.
const HIGH: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ã', 'à', 'Á', 'ç', 'ê', 'Ê', 'è', 'Í', 'Ô', 'ì', 'Ã', 'Â', //
    'É', 'À', 'È', 'ô', 'õ', 'ò', 'Ú', 'ù', 'Ì', 'Õ', 'Ü', '¢', '£', 'Ù', '₧', 'Ó', //
    'á', 'í', 'ó', 'ú', 'ñ', 'Ñ', 'ª', 'º', '¿', 'Ò', '¬', '½', '¼', '¡', '«', '»', //
    '░', '▒', '▓', '│', '┤', '╡', '╢', '╖', '╕', '╣', '║', '╗', '╝', '╜', '╛', '┐', //
    '└', '┴', '┬', '├', '─', '┼', '╞', '╟', '╚', '╔', '╩', '╦', '╠', '═', '╬', '╧', //
    '╨', '╤', '╥', '╙', '╘', '╒', '╓', '╫', '╪', '┘', '┌', '█', '▄', '▌', '▐', '▀', //
    'α', 'ß', 'Γ', 'π', 'Σ', 'σ', 'µ', 'τ', 'Φ', 'Θ', 'Ω', 'δ', '∞', 'φ', 'ε', '∩', //
    '≡', '±', '≥', '≤', '⌠', '⌡', '÷', '≈', '°', '∙', '·', '√', 'ⁿ', '²', '■', '\u{a0}',
];

/// Accented letters outside the page, by base letter.
const BASES: &[(&str, char)] = &[
    ("äåāăąǎ", 'a'),
    ("ÄÅĀĂĄǍ", 'A'),
    ("ëēĕėęě", 'e'),
    ("ËĒĔĖĘĚ", 'E'),
    ("îïĩīĭįı", 'i'),
    ("ÎÏĨĪĬĮİ", 'I'),
    ("öøōŏőǒ", 'o'),
    ("ÖØŌŎŐǑ", 'O'),
    ("ûũūŭůűų", 'u'),
    ("ÛŨŪŬŮŰŲ", 'U'),
    ("ćĉċč", 'c'),
    ("ĆĈĊČ", 'C'),
    ("ńņňŉ", 'n'),
    ("ŃŅŇ", 'N'),
    ("śŝşš", 's'),
    ("ŚŜŞŠ", 'S'),
    ("ýÿŷ", 'y'),
    ("ÝŸŶ", 'Y'),
    ("źżž", 'z'),
    ("ŹŻŽ", 'Z'),
    ("ďđ", 'd'),
    ("ĎĐ", 'D'),
    ("ĝğġģ", 'g'),
    ("ĜĞĠĢ", 'G'),
    ("ĺļľŀł", 'l'),
    ("ĹĻĽĿŁ", 'L'),
    ("ŕŗř", 'r'),
    ("ŔŖŘ", 'R'),
    ("ţťŧ", 't'),
    ("ŢŤŦ", 'T'),
];

/// The byte of `c` in code page 860, if it has one (ASCII is itself).
pub(crate) fn encode(c: char) -> Option<u8> {
    if (' '..='~').contains(&c) {
        return u8::try_from(c).ok();
    }
    HIGH.iter()
        .position(|&h| h == c)
        .and_then(|i| u8::try_from(0x80 + i).ok())
}

/// The character of byte `b` (0x20–0x7E and 0x80–0xFF); `None` for control bytes.
pub(crate) fn decode(b: u8) -> Option<char> {
    match b {
        0x20..=0x7e => Some(char::from(b)),
        0x80..=0xff => HIGH.get(usize::from(b - 0x80)).copied(),
        _ => None,
    }
}

/// `text` with every character one the page has; see the module doc for the fallbacks.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\u{a0}' | '\t' => out.push(' '),
            c if encode(c).is_some() => out.push(c),
            '§' => out.push_str("par."),
            '–' | '—' | '‐' | '‑' | '−' => out.push('-'),
            '“' | '”' | '„' => out.push('"'),
            '‘' | '’' | '‚' => out.push('\''),
            '…' => out.push_str("..."),
            '•' => out.push('-'),
            '€' => out.push_str("EUR"),
            c if c.is_control() => out.push(' '),
            c => out.push(
                BASES
                    .iter()
                    .find(|(set, _)| set.contains(c))
                    .map_or('?', |&(_, base)| base),
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_portuguese_letter_has_a_byte_and_reads_back() {
        for c in "ÁÀÂÃÇÉÊÍÓÔÕÚÜáàâãçéêíóôõúüºª°".chars() {
            let b = encode(c).unwrap_or_else(|| panic!("{c} not in CP860"));
            assert!(b >= 0x80);
            assert_eq!(decode(b), Some(c));
        }
        // Spot checks against the published table.
        assert_eq!(encode('ã'), Some(0x84));
        assert_eq!(encode('Õ'), Some(0x99));
        assert_eq!(encode('Ó'), Some(0x9f));
        assert_eq!(encode('ç'), Some(0x87));
        assert_eq!(encode('º'), Some(0xa7));
    }

    #[test]
    fn the_table_is_a_bijection() {
        for b in 0x80..=0xffu8 {
            assert_eq!(decode(b).and_then(encode), Some(b));
        }
    }

    #[test]
    fn what_the_page_lacks_folds_to_something_readable() {
        assert_eq!(fold("art. 32, § 2º — Zoë"), "art. 32, par. 2º - Zoe");
        assert_eq!(fold("“ok” … ✓"), "\"ok\" ... ?");
        assert!(fold("Ł€\u{7}").chars().all(|c| encode(c).is_some()));
    }
}
