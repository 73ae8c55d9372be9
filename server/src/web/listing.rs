//! What every office list shares: sortable columns, free-text search and the spreadsheet
//! export, so that the inbox, the fines and the permits behave alike.
//!
//! # Flow of a list page
//!
//! 1. The handler declares its columns once ([`Columns`]: a key for the query string, the
//!    Portuguese header, the default order) and reads `ordem=<key>&sentido=asc|desc` with
//!    [`Columns::parse`]. Anything else — an unknown key, a direction that is neither, a value
//!    of any length — falls back to the default order: a stale bookmark or a typed URL never
//!    breaks the page.
//! 2. The free text (`busca`) goes through [`Search::parse`]: folded (case and accents, so
//!    "joao" finds "João"), split in words, bounded by [`MAX_SEARCH_CHARS`] and
//!    [`MAX_SEARCH_WORDS`]. A row matches when every word is found in one of its fields.
//! 3. Lists held in memory (the registry's) sort with [`sort_rows`]: stable, so equal keys keep
//!    the default order, and blanks last in both directions. The inbox sorts in SQL with the
//!    same keys (`store::records::RecordSort`).
//! 4. The header row ([`Columns::header`]) links each column to its own order (the column
//!    sorted now links to the opposite direction) and marks the sorted one with `aria-sort`,
//!    so screen readers announce it.
//! 5. The export ([`Csv`]) writes what a pt-BR Excel opens by double-click: UTF-8 with a BOM
//!    (else Excel reads Latin-1), `;` between cells (`,` is the decimal separator in pt-BR),
//!    CRLF line ends, Portuguese headers, cells quoted when they hold `;`, `"` or a line end,
//!    and formula-safe: a cell that begins with `=`, `+`, `-`, `@`, a tab or a CR gets a leading
//!    `'`, so a name typed as `=HYPERLINK(…)` in the field stays text in the spreadsheet. At most
//!    [`MAX_EXPORT_ROWS`] rows: a longer list is refused with what to do ([`check_export`]).

use std::borrow::Cow;
use std::cmp::Ordering;

use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;
use maud::{Markup, html};

pub use crate::limits::{MAX_EXPORT_ROWS, MAX_SEARCH_CHARS, MAX_SEARCH_WORDS};

use super::url_encode;

// ---------------------------------------------------------------------------------------------
// Sorting
// ---------------------------------------------------------------------------------------------

/// A direction of sorting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Asc,
    Desc,
}

impl Dir {
    /// The query value (`sentido=`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Asc => "asc",
            Dir::Desc => "desc",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "asc" => Some(Dir::Asc),
            "desc" => Some(Dir::Desc),
            _ => None,
        }
    }

    fn flip(self) -> Self {
        match self {
            Dir::Asc => Dir::Desc,
            Dir::Desc => Dir::Asc,
        }
    }

    fn aria(self) -> &'static str {
        match self {
            Dir::Asc => "ascending",
            Dir::Desc => "descending",
        }
    }
}

/// One sortable column.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Query value (`ordem=`), ASCII, stable: bookmarks and tests use it.
    pub key: &'static str,
    /// The header, in Portuguese (also the CSV header).
    pub label: &'static str,
    /// The direction of a first click: dates and counts newest or largest first.
    pub first: Dir,
}

impl Column {
    /// A column whose first click sorts ascending (names, numbers, plates).
    pub const fn asc(key: &'static str, label: &'static str) -> Self {
        Self {
            key,
            label,
            first: Dir::Asc,
        }
    }

    /// A column whose first click sorts descending (dates, counts).
    pub const fn desc(key: &'static str, label: &'static str) -> Self {
        Self {
            key,
            label,
            first: Dir::Desc,
        }
    }
}

/// The columns of a list and its default order.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    pub columns: &'static [Column],
    /// The key of the default order (must be one of `columns`).
    pub default_key: &'static str,
    pub default_dir: Dir,
    /// Prefix of the header links' ids (`{prefix}-{key}`), unique on the page.
    pub id_prefix: &'static str,
}

/// The order a list is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub key: &'static str,
    pub dir: Dir,
}

impl Columns {
    /// The order asked by `ordem` and `sentido`; the default for anything unknown. A known
    /// column without a (valid) direction gets the column's first direction.
    pub fn parse(&self, ordem: Option<&str>, sentido: Option<&str>) -> Sort {
        let asked = ordem
            .map(str::trim)
            .and_then(|o| self.columns.iter().find(|c| c.key == o));
        match asked {
            Some(c) => Sort {
                key: c.key,
                dir: sentido.and_then(Dir::parse).unwrap_or(c.first),
            },
            None => self.default(),
        }
    }

    pub fn default(&self) -> Sort {
        Sort {
            key: self.default_key,
            dir: self.default_dir,
        }
    }

    /// The Portuguese headers, in order (for the CSV).
    pub fn labels(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.label).collect()
    }

    /// `<thead>`'s row: every column a link to its order, the sorted one with `aria-sort`.
    /// `href` builds the list's address with an order (keeping the filters).
    pub fn header(&self, sort: &Sort, href: &dyn Fn(&Sort) -> String) -> Markup {
        html! {
            tr {
                @for c in self.columns {
                    @let current = (sort.key == c.key).then_some(sort.dir);
                    @let next = Sort { key: c.key, dir: current.map_or(c.first, Dir::flip) };
                    th scope="col" aria-sort=[current.map(Dir::aria)] {
                        a .ordenar id=(format!("{}-{}", self.id_prefix, c.key)) href=(href(&next)) {
                            (c.label)
                            @if let Some(d) = current {
                                span aria-hidden="true" { @if d == Dir::Asc { " ▲" } @else { " ▼" } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A sort key of one cell, for lists sorted in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Compared folded (case and accents), so "Álvaro" sorts with the A's.
    Text(String),
    Int(i64),
    Date(NaiveDate),
    /// No value: always last.
    Blank,
}

impl Key {
    pub fn text(s: &str) -> Self {
        if s.trim().is_empty() {
            Key::Blank
        } else {
            Key::Text(fold(s))
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Key::Int(_) => 0,
            Key::Date(_) => 1,
            Key::Text(_) => 2,
            Key::Blank => 3,
        }
    }

    fn cmp_same(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Key::Text(a), Key::Text(b)) => a.cmp(b),
            (Key::Int(a), Key::Int(b)) => a.cmp(b),
            (Key::Date(a), Key::Date(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// Sorts `rows` (already in the default order) by `key` in `dir`: stable, blanks last.
pub fn sort_rows<T>(rows: &mut [T], dir: Dir, key: impl Fn(&T) -> Key) {
    rows.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        match (&ka, &kb) {
            (Key::Blank, Key::Blank) => Ordering::Equal,
            (Key::Blank, _) => Ordering::Greater,
            (_, Key::Blank) => Ordering::Less,
            _ => {
                let o = ka.cmp_same(&kb);
                if dir == Dir::Desc { o.reverse() } else { o }
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Query strings
// ---------------------------------------------------------------------------------------------

/// A list's address with its filters, to link pages, orders and the export.
#[derive(Debug, Clone, Default)]
pub struct Params(Vec<(&'static str, String)>);

impl Params {
    /// Adds `k=v` unless `v` is empty.
    pub fn with(mut self, k: &'static str, v: impl Into<String>) -> Self {
        let v = v.into();
        if !v.trim().is_empty() {
            self.0.push((k, v));
        }
        self
    }

    /// The order, unless it is the default.
    pub fn with_sort(self, cols: &Columns, sort: &Sort) -> Self {
        if *sort == cols.default() {
            self
        } else {
            self.with("ordem", sort.key)
                .with("sentido", sort.dir.as_str())
        }
    }

    /// `path?k=v&…` (just `path` when empty).
    pub fn url(&self, path: &str) -> String {
        if self.0.is_empty() {
            return path.to_owned();
        }
        let q: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{k}={}", url_encode(v)))
            .collect();
        format!("{path}?{}", q.join("&"))
    }
}

// ---------------------------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------------------------

/// Case and accents folded (shared with the inbox's query, [`crate::office::search`]).
pub use crate::office::search::fold;

/// A free-text search: its words, folded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// As typed, trimmed (to keep in the field).
    pub text: String,
    /// Folded words; empty: everything matches.
    pub words: Vec<String>,
}

impl Search {
    /// Reads the typed text; too long a text or too many words is refused with a sentence
    /// for the page.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars > MAX_SEARCH_CHARS {
            return Err(format!(
                "A busca tem {chars} caracteres; use no máximo {MAX_SEARCH_CHARS}."
            ));
        }
        let words: Vec<String> = fold(text).split_whitespace().map(str::to_owned).collect();
        if words.len() > MAX_SEARCH_WORDS {
            return Err(format!(
                "A busca tem {} palavras; use no máximo {MAX_SEARCH_WORDS}.",
                words.len()
            ));
        }
        Ok(Self {
            text: text.to_owned(),
            words,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Whether every word is in one of `fields` (folded here).
    pub fn matches(&self, fields: &[&str]) -> bool {
        if self.words.is_empty() {
            return true;
        }
        let folded: Vec<String> = fields.iter().map(|f| fold(f)).collect();
        self.words
            .iter()
            .all(|w| folded.iter().any(|f| f.contains(w.as_str())))
    }
}

// ---------------------------------------------------------------------------------------------
// CSV export
// ---------------------------------------------------------------------------------------------

/// Refuses an export of more than [`MAX_EXPORT_ROWS`] rows, with what to do.
pub fn check_export(rows: u64) -> Result<(), String> {
    if rows > MAX_EXPORT_ROWS as u64 {
        Err(format!(
            "A lista tem {rows} linhas e a exportação leva no máximo {MAX_EXPORT_ROWS}: \
             restrinja os filtros e exporte em partes."
        ))
    } else {
        Ok(())
    }
}

/// One cell, formula-safe and quoted when needed (see the module doc).
pub fn cell(s: &str) -> Cow<'_, str> {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let s: Cow<'_, str> = if risky {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    };
    if s.contains([';', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        s
    }
}

/// A spreadsheet being written: BOM and header row first.
#[derive(Debug, Clone)]
pub struct Csv {
    out: String,
}

impl Csv {
    pub fn new(headers: &[&str]) -> Self {
        let mut csv = Self {
            out: String::from("\u{feff}"),
        };
        csv.row(headers.iter().copied());
        csv
    }

    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut first = true;
        for c in cells {
            if !first {
                self.out.push(';');
            }
            first = false;
            self.out.push_str(&cell(c.as_ref()));
        }
        self.out.push_str("\r\n");
    }

    pub fn into_string(self) -> String {
        self.out
    }

    /// The download: `text/csv`, saved as `filename`, never cached (it holds personal data).
    pub fn into_response(self, filename: &str) -> Response {
        let disposition = format!("attachment; filename=\"{filename}\"");
        let mut res = (
            [(
                CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            )],
            self.out,
        )
            .into_response();
        let h = res.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&disposition) {
            h.insert(CONTENT_DISPOSITION, v);
        }
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: Columns = Columns {
        columns: &[
            Column::asc("numero", "Número"),
            Column::desc("data", "Data"),
        ],
        default_key: "data",
        default_dir: Dir::Desc,
        id_prefix: "ordenar",
    };

    #[test]
    fn garbage_orders_fall_back_to_the_default() {
        let default = COLS.default();
        for (o, s) in [
            (None, None),
            (Some(""), Some("asc")),
            (Some("nada"), Some("desc")),
            (Some("numero; DROP TABLE records"), None),
            (Some("\u{0}\u{ffff}"), Some("\u{0}")),
            (Some("NUMERO"), Some("asc")),
        ] {
            assert_eq!(COLS.parse(o, s), default, "{o:?} {s:?}");
        }
        let long = "x".repeat(100_000);
        assert_eq!(COLS.parse(Some(&long), Some(&long)), default);
    }

    #[test]
    fn a_known_column_takes_the_direction_asked_else_its_first() {
        let s = COLS.parse(Some("numero"), Some("desc"));
        assert_eq!((s.key, s.dir), ("numero", Dir::Desc));
        let s = COLS.parse(Some("numero"), Some("para cima"));
        assert_eq!((s.key, s.dir), ("numero", Dir::Asc));
        let s = COLS.parse(Some(" data "), None);
        assert_eq!((s.key, s.dir), ("data", Dir::Desc));
    }

    #[test]
    fn the_header_marks_the_sorted_column_and_links_its_opposite() {
        let sort = COLS.parse(Some("numero"), Some("asc"));
        let href = |s: &Sort| Params::default().with_sort(&COLS, s).url("/l");
        let h = COLS.header(&sort, &href).into_string();
        assert!(h.contains(r#"aria-sort="ascending""#), "{h}");
        assert!(h.contains("/l?ordem=numero&amp;sentido=desc"), "{h}");
        // The other column links to its first direction; it is the default: no parameters.
        assert!(h.contains(r#"href="/l""#), "{h}");
        assert_eq!(h.matches("aria-sort").count(), 1, "{h}");
    }

    #[test]
    fn formula_cells_are_made_text() {
        for s in ["=1+1", "+55 19", "-2", "@SUM(A1)", "\tx", "\rx"] {
            let c = cell(s);
            assert!(c.starts_with('\'') || c.starts_with("\"'"), "{s:?} → {c:?}");
        }
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("João"), "João");
        assert_eq!(cell("a=b"), "a=b");
        assert_eq!(cell(""), "");
    }

    #[test]
    fn cells_with_separators_quotes_or_line_ends_are_quoted() {
        assert_eq!(cell("a;b"), "\"a;b\"");
        assert_eq!(cell("diz \"oi\""), "\"diz \"\"oi\"\"\"");
        assert_eq!(cell("linha\nnova"), "\"linha\nnova\"");
        assert_eq!(cell("1,50"), "1,50");
    }

    #[test]
    fn the_file_has_a_bom_semicolons_and_crlf() {
        let mut csv = Csv::new(&["Número", "Nome"]);
        csv.row(["501", "José; da Silva"]);
        csv.row(["502", "=cmd"]);
        let s = csv.into_string();
        assert_eq!(
            s,
            "\u{feff}Número;Nome\r\n501;\"José; da Silva\"\r\n502;'=cmd\r\n"
        );
        assert!(s.as_bytes().starts_with(&[0xEF, 0xBB, 0xBF]));
    }

    #[test]
    fn exports_are_bounded_at_the_limit() {
        assert!(check_export(MAX_EXPORT_ROWS as u64).is_ok());
        let e = check_export(MAX_EXPORT_ROWS as u64 + 1).unwrap_err();
        assert!(e.contains(&MAX_EXPORT_ROWS.to_string()), "{e}");
    }

    #[test]
    fn search_folds_case_and_accents_and_needs_every_word() {
        let s = Search::parse("  JOAO  conceição ").unwrap();
        assert_eq!(s.words, ["joao", "conceicao"]);
        assert!(s.matches(&["João da Conceição"]));
        assert!(s.matches(&["João", "Maria Conceicão"]));
        assert!(!s.matches(&["João da Silva"]));
        assert!(Search::parse("").unwrap().matches(&[]));
    }

    #[test]
    fn search_is_bounded_at_its_limits() {
        assert!(Search::parse(&"a".repeat(MAX_SEARCH_CHARS)).is_ok());
        let e = Search::parse(&"a".repeat(MAX_SEARCH_CHARS + 1)).unwrap_err();
        assert!(e.contains(&MAX_SEARCH_CHARS.to_string()), "{e}");
        let words = |n: usize| vec!["ab"; n].join(" ");
        assert!(Search::parse(&words(MAX_SEARCH_WORDS)).is_ok());
        assert!(Search::parse(&words(MAX_SEARCH_WORDS + 1)).is_err());
    }

    #[test]
    fn in_memory_sorts_are_stable_with_blanks_last() {
        let mut rows = vec![("b", 1), ("", 2), ("Á", 3), ("a", 4), ("c", 5)];
        sort_rows(&mut rows, Dir::Asc, |r| Key::text(r.0));
        assert_eq!(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            [3, 4, 1, 5, 2]
        );
        sort_rows(&mut rows, Dir::Desc, |r| Key::text(r.0));
        assert_eq!(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            [5, 1, 3, 4, 2]
        );
    }
}
