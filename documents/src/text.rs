//! Text helpers shared by every layout and back-end: dates in Americana's time zone, money in
//! reais, clipping to the printed limits, and word wrapping against any width measure.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::America::Sao_Paulo;
use rust_decimal::{Decimal, RoundingStrategy};

/// `02/12/2026 14:30`, in America/Sao_Paulo (Americana's clock, whatever the device's zone).
pub(crate) fn datetime(at: DateTime<Utc>) -> String {
    at.with_timezone(&Sao_Paulo)
        .format("%d/%m/%Y %H:%M")
        .to_string()
}

/// `02/12/2026`.
pub(crate) fn date(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// `5 (cinco) dias`, `1 (um) dia`: a count of days as the law writes it, the number spelled out
/// up to 99 (the law's periods: five, ten, twenty, thirty days); past that, digits alone.
pub(crate) fn days(n: u32) -> String {
    const UNITS: [&str; 20] = [
        "zero",
        "um",
        "dois",
        "três",
        "quatro",
        "cinco",
        "seis",
        "sete",
        "oito",
        "nove",
        "dez",
        "onze",
        "doze",
        "treze",
        "quatorze",
        "quinze",
        "dezesseis",
        "dezessete",
        "dezoito",
        "dezenove",
    ];
    const TENS: [&str; 8] = [
        "vinte",
        "trinta",
        "quarenta",
        "cinquenta",
        "sessenta",
        "setenta",
        "oitenta",
        "noventa",
    ];
    let unit = if n == 1 { "dia" } else { "dias" };
    let words = match n {
        0..=19 => UNITS.get(n as usize).map(|w| (*w).to_owned()),
        20..=99 => {
            let tens = TENS.get((n / 10 - 2) as usize);
            match (tens, n % 10) {
                (Some(t), 0) => Some((*t).to_owned()),
                (Some(t), u) => UNITS.get(u as usize).map(|w| format!("{t} e {w}")),
                (None, _) => None,
            }
        }
        _ => None,
    };
    match words {
        Some(w) => format!("{n} ({w}) {unit}"),
        None => format!("{n} {unit}"),
    }
}

/// `R$ 1.234,56`: Brazilian grouping, two decimals rounded half away from zero.
pub(crate) fn money(amount: Decimal) -> String {
    let rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    let negative = rounded.is_sign_negative() && !rounded.is_zero();
    let plain = format!("{:.2}", rounded.abs());
    let (int, frac) = plain.split_once('.').unwrap_or((plain.as_str(), "00"));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push('.');
        }
        grouped.push(c);
    }
    format!("{}R$ {grouped},{frac}", if negative { "-" } else { "" })
}

/// `text` cut to at most `max` characters; a cut text ends with a note saying how much was left
/// out and where the whole is, so a reader never takes a truncated statement for the full one.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!(
        "{}… [texto cortado: {} caracteres não impressos; a íntegra está no registro]",
        kept.trim_end(),
        total - max
    )
}

/// Splits `text` into lines no wider than `max` by `width`: words are kept whole when they fit,
/// a word wider than a line is broken between characters, and the text's own line breaks are
/// kept (an empty line stays empty).
pub(crate) fn wrap(text: &str, max: f32, width: &dyn Fn(&str) -> f32) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if width(&candidate) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            if width(word) <= max {
                line = word.to_owned();
                continue;
            }
            for c in word.chars() {
                line.push(c);
                if width(&line) > max && line.chars().count() > 1 {
                    line.pop();
                    lines.push(std::mem::take(&mut line));
                    line.push(c);
                }
            }
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn money_is_in_reais_with_brazilian_separators() {
        assert_eq!(money(dec!(240)), "R$ 240,00");
        assert_eq!(money(dec!(1234.565)), "R$ 1.234,57");
        assert_eq!(money(dec!(1234567.5)), "R$ 1.234.567,50");
        assert_eq!(money(dec!(0.004)), "R$ 0,00");
    }

    #[test]
    fn days_are_spelled_out_as_the_law_writes_them() {
        assert_eq!(days(1), "1 (um) dia");
        assert_eq!(days(5), "5 (cinco) dias");
        assert_eq!(days(30), "30 (trinta) dias");
        assert_eq!(days(21), "21 (vinte e um) dias");
        assert_eq!(days(99), "99 (noventa e nove) dias");
        assert_eq!(days(100), "100 dias");
    }

    #[test]
    fn datetime_is_americanas_clock() {
        let at = DateTime::parse_from_rfc3339("2026-03-10T17:05:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(datetime(at), "10/03/2026 14:05");
    }

    #[test]
    fn clip_keeps_text_at_the_limit_and_cuts_one_over_with_a_note() {
        let at = "é".repeat(10);
        assert_eq!(clip(&at, 10), at);
        let over = "é".repeat(11);
        let cut = clip(&over, 10);
        assert!(cut.starts_with(&at), "{cut}");
        assert!(cut.contains("1 caracteres não impressos"), "{cut}");
    }

    #[test]
    fn wrap_breaks_on_spaces_and_inside_words_longer_than_a_line() {
        let w = |s: &str| s.chars().count() as f32;
        assert_eq!(wrap("ab cd ef", 5.0, &w), ["ab cd", "ef"]);
        assert_eq!(wrap("abcdefghijk x", 4.0, &w), ["abcd", "efgh", "ijk", "x"]);
        assert_eq!(wrap("a\n\nb", 4.0, &w), ["a", "", "b"]);
        for line in wrap(&"palavra ".repeat(40), 7.0, &w) {
            assert!(line.chars().count() <= 7, "{line}");
        }
    }
}
