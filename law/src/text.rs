//! Words users read that depend on a count: one place for the agreement of "1 vaga", "2 vagas"
//! (never "vaga(s)"), used by the kernel's messages and the server's pages alike.

/// `1 vaga`, `2 vagas`, `0 vagas`: `n` with `one` or `many`. `one` and `many` carry any words
/// that agree with the noun ("penalidade decidida" / "penalidades decididas").
pub fn plural_pt(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A reason as the sentence users read: capital first letter, full stop (one added only when
/// it has none).
pub fn sentence_pt(reason: &str) -> String {
    let reason = reason.trim();
    let mut chars = reason.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.is_empty() && !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_becomes_one_sentence() {
        assert_eq!(
            sentence_pt("o recurso exige antes a ciência"),
            "O recurso exige antes a ciência."
        );
        assert_eq!(sentence_pt("Já termina."), "Já termina.");
        assert_eq!(sentence_pt(""), "");
    }

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(plural_pt(1, "vaga", "vagas"), "1 vaga");
        assert_eq!(plural_pt(0, "vaga", "vagas"), "0 vagas");
        assert_eq!(plural_pt(2, "dia", "dias"), "2 dias");
    }
}
