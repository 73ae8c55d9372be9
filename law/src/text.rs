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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(plural_pt(1, "vaga", "vagas"), "1 vaga");
        assert_eq!(plural_pt(0, "vaga", "vagas"), "0 vagas");
        assert_eq!(plural_pt(2, "dia", "dias"), "2 dias");
    }
}
