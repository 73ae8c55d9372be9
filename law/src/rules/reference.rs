//! The rule catalogue as a Markdown document (`docs/rules.md`, `taxi-fiscal rules --markdown`).
//!
//! Generated from `CATALOGUE`, so the document can never cite an article the code does not; a
//! test compares the checked-in file with this output (drift check).

use std::fmt::Write as _;

use super::catalogue::{CATALOGUE, RuleSpec, Scope};
use super::{Consequence, Severity};

/// The whole document.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Rule catalogue\n\n\
         Generated from `law/src/rules/catalogue.rs` by `taxi-fiscal rules --markdown`; do not \
         edit by hand (`UPDATE_SNAPSHOTS=1 cargo test -p law` rewrites it). The law's text and \
         the readings behind these rules are in [`law/`](law/reference.md).\n\n\
         Every finding of a field check, every refusal at the counter and every legal basis of a \
         record names one of these rules, and its citation is the one printed here.\n\n\
         - **Scope**: where the rule is evaluated — `field` (the street), `office` (a registry \
         write at the counter), `workflow` (deadlines, penalties, amounts), `data` (document \
         check digits, plate shape).\n\
         - **Severity / consequence**: what a finding carries by default; the office decides \
         the penalty (art. 32 §1).\n\
         - **Wording**: `unverified` when the provision was amended and the text in force was \
         not found (the original wording is applied and the finding says so).\n\
         - **Default**: `on`, `off` (switched on by the office's configuration) or `repealed` \
         (never evaluated, never citable).\n\n\
         | Rule | Title | Legal basis | Scope | Severity | Consequence | Wording | Default |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in CATALOGUE {
        row(&mut out, r);
    }
    out
}

fn row(out: &mut String, r: &RuleSpec) {
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        r.id,
        r.title.replace('|', "\\|"),
        r.citation().replace('|', "\\|"),
        scope(r.scope),
        severity(r.severity),
        consequence(r.consequence),
        if r.wording_verified {
            "verified"
        } else {
            "unverified"
        },
        if r.repealed {
            "repealed"
        } else if r.enabled_by_default {
            "on"
        } else {
            "off"
        },
    );
}

fn scope(s: Scope) -> &'static str {
    match s {
        Scope::Field => "field",
        Scope::Office => "office",
        Scope::Workflow => "workflow",
        Scope::Data => "data",
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Irregular => "irregular",
    }
}

fn consequence(c: Consequence) -> &'static str {
    match c {
        Consequence::None => "—",
        Consequence::RecordIrregularity => "record the irregularity",
        Consequence::InfractionNotice => "auto de infração (arts. 31–32)",
        Consequence::RevokePermit => "cassação of the permit",
        Consequence::RevokeAuxiliaryLicence => "cassação of the auxiliary's licence",
        Consequence::VehicleMayNotOperate => "the taxi may not operate",
        Consequence::RenewalBlocked => "renewal blocked",
        Consequence::ReferToTrafficAuthority => "refer to the traffic authority",
        Consequence::OfficeReview => "office review",
        Consequence::OfficeRefusal => "the office refuses the change",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/rules.md` is exactly what the catalogue generates.
    #[test]
    fn checked_in_catalogue_document_matches_the_code() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
        let now = markdown();
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &now).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == now,
            "docs/rules.md differs from the catalogue: run `UPDATE_SNAPSHOTS=1 cargo test -p law`"
        );
    }

    #[test]
    fn every_rule_has_one_row_with_its_citation() {
        let doc = markdown();
        for r in CATALOGUE {
            let line = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", r.id)))
                .unwrap_or_else(|| panic!("no row for {}", r.id));
            assert!(line.contains(&r.citation()), "{line}");
        }
        assert!(
            doc.lines()
                .any(|l| l.starts_with("| R15 |") && l.ends_with("| repealed |"))
        );
    }
}
