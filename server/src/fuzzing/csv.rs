//! The registry CSV import (`registry::csv::import`) on arbitrary bytes, into a given registry: it must give a registry or a report of problems, never panic, and keep its report
//! within [`MAX_IMPORT_ERRORS`] (plus the line that says how many were left out, and the few
//! problems of the file as a whole). A file that imports must survive its own export: export →
//! import gives the same registry (the formula escape is undone exactly).

use chrono::NaiveDate;
use sync_core::domain::Registry;
use sync_core::rules::RulesConfig;

use crate::registry::csv::{MAX_IMPORT_ERRORS, export, import};
use crate::registry::{Ctx, EditError};

/// The day every import is judged on (rules depend on dates).
fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 30).unwrap_or_default()
}

/// Imports `data` into `current`; panics only on a bug.
pub fn csv_import_into(current: &Registry, data: &[u8]) {
    let rules = RulesConfig::default();
    let ctx = Ctx {
        today: today(),
        rules: &rules,
    };
    match import(current, data, &ctx) {
        Ok(reg) => {
            let text = match export(&reg) {
                Ok(t) => t,
                Err(e) => panic!("an imported registry does not export: {e}"),
            };
            match import(&reg, &text, &ctx) {
                Ok(back) => assert_eq!(
                    sync_core::feed::sorted(back),
                    sync_core::feed::sorted(reg),
                    "export → import is not the identity"
                ),
                Err(e) => panic!("the export of an imported registry does not import: {e:?}"),
            }
        }
        Err(EditError::Csv(rows)) => {
            assert!(!rows.is_empty(), "a refused import with no reason");
            let lines = rows.iter().filter(|r| r.line.is_some()).count();
            assert!(lines <= MAX_IMPORT_ERRORS + 1, "{lines} problems reported");
            for r in &rows {
                assert!(!r.message.is_empty());
            }
        }
        Err(other) => panic!("an import failed outside its report: {other:?}"),
    }
}

/// [`csv_import_into`] an empty registry (a first import: every id allocated).
pub fn csv_import(data: &[u8]) {
    csv_import_into(&Registry::default(), data);
}
