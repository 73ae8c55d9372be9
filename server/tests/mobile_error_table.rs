//! The error table of `docs/mobile.md` — what the app team reads to decide what to do with each
//! `code` the server answers — against the server itself, both ways:
//!
//! - every code in [`AppError::CODES`] has its row, and every row is a code of that list;
//! - every code written where an error is made in `server/src` is in the list (so a new code
//!   fails here until it is listed and documented), and every code of the list is written
//!   somewhere (so a code that went away leaves the list and the table);
//! - the codes the README quotes next to an HTTP status, and the one it gives as an example of
//!   `RefusedByServer`, are codes of the list;
//! - the table of codes the SDK makes up itself (`FiscalError.RefusedByServer` without an
//!   answer of the server) matches the ones `ffi/src/error.rs` writes.
//!
//! Codes are plain strings, not an enum, so "where an error is made" is read from the sources
//! with a small Rust lexer (strings, comments, char literals and lifetimes told apart), in the
//! shapes the server uses: the code parameter of a constructor (`AppError::conflict("x", …)`,
//! `AppError::new(status, "x", …)`, a file's own helper such as `bad("x", …)`) given a literal or
//! a `const`, a `code: "x"` field, and the arms of `let code = match …` or of a function whose
//! name says `code` and returns `&'static str`. A code made another way is not seen by the scan
//! but still needs its place in the list (the second direction holds it there).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use taxi_fiscal_server::AppError;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ is in the workspace")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn listed() -> BTreeSet<&'static str> {
    let set: BTreeSet<&str> = AppError::CODES.iter().copied().collect();
    assert_eq!(set.len(), AppError::CODES.len(), "a code listed twice");
    assert!(
        AppError::CODES.windows(2).all(|w| w[0] < w[1]),
        "AppError::CODES is kept sorted (one place to look a code up)"
    );
    set
}

// ------------------------------------------------------------------ the document's tables

/// The first cell (one backticked code) of each row of the tables under `## {heading}`, up to
/// the next `## ` heading.
fn table_codes(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("docs/mobile.md has a section ## {heading}"));
    let section = &doc[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| {
            let code = l.split('`').next().unwrap_or_default();
            assert!(is_code(code), "not a code in the first cell: | `{l}");
            code.to_owned()
        })
        .collect()
}

fn is_code(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn unique(rows: Vec<String>, what: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for r in rows {
        assert!(set.insert(r.clone()), "{what}: `{r}` has two rows");
    }
    set
}

const SERVER_TABLE: &str = "Error codes of the server";
const SDK_TABLE: &str = "Codes the SDK makes up";

#[test]
fn every_code_of_the_server_has_one_row_and_every_row_is_a_code() {
    let doc = read("docs/mobile.md");
    let documented = unique(table_codes(&doc, SERVER_TABLE), "docs/mobile.md");
    let listed: BTreeSet<String> = listed().into_iter().map(str::to_owned).collect();
    let missing: Vec<_> = listed.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&listed).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/mobile.md, ## {SERVER_TABLE}: no row for {missing:?}; rows for codes the server \
         does not send {unknown:?} (AppError::CODES is the list)"
    );
}

#[test]
fn the_codes_the_sdk_makes_up_are_the_ones_the_ffi_writes() {
    let doc = read("docs/mobile.md");
    let documented = unique(table_codes(&doc, SDK_TABLE), "docs/mobile.md");
    // `code: String::from("x")` in the one file where the SDK builds `RefusedByServer`, and
    // the sync client's own code for an error answer that is not the server's JSON shape.
    let mut written = BTreeSet::new();
    let ffi = read("ffi/src/error.rs");
    for w in tokens(without_test_module(&ffi)).windows(8) {
        if let [
            Tok::Ident(c),
            Tok::Punct(':'),
            Tok::Ident(s),
            Tok::Punct(':'),
            Tok::Punct(':'),
            Tok::Ident(f),
            Tok::Punct('('),
            Tok::Str(code),
        ] = w
            && c == "code"
            && s == "String"
            && f == "from"
        {
            written.insert(code.clone());
        }
    }
    let client = read("sync-core/src/client/mod.rs");
    assert!(
        client.contains("code: String::from(\"http_error\")"),
        "sync-core's client no longer calls an undecodable error answer `http_error`"
    );
    written.insert(String::from("http_error"));
    assert_eq!(documented, written, "docs/mobile.md, ## {SDK_TABLE}");
    let listed = listed();
    for code in &written {
        assert!(
            !listed.contains(code.as_str()),
            "`{code}` is made up by the SDK and also a server code: the app could not tell them \
             apart"
        );
    }
}

// ------------------------------------------------------------------ the README

#[test]
fn the_codes_the_readme_quotes_are_codes_of_the_server() {
    let readme = read("README.md");
    let listed = listed();
    let quoted = readme_codes(&readme);
    // The README's own examples, so that this test cannot pass by reading nothing.
    for known in [
        "bad_credentials",
        "refused_by_law",
        "snapshot_required",
        "code_used",
        "observed_persons_erased",
    ] {
        assert!(
            quoted.iter().any(|q| q == known),
            "the README no longer quotes `{known}`: {quoted:?}"
        );
    }
    let unknown: Vec<_> = quoted
        .iter()
        .filter(|q| !listed.contains(q.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "the README quotes codes the server never sends: {unknown:?}"
    );
}

#[test]
fn the_readme_reader_finds_codes_after_a_status_and_nothing_else() {
    let text = "answers 422 `code_unknown`, `code_used`; 429 past the budget; a `422\n\
                refused_by_law` there; 500 ms and `opt_level`\n\
                | `RefusedByServer(status, code, reason)` | e.g. `bad_credentials` on login |\n";
    assert_eq!(
        readme_codes(text),
        [
            "code_unknown",
            "code_used",
            "refused_by_law",
            "bad_credentials"
        ]
    );
}

/// What the README writes as a code: the word after an HTTP error status (`422
/// refused_by_law`, "410 `snapshot_required`", and the list that follows it, "422
/// `code_unknown`, `code_used`"), and the backticked example in the row of `RefusedByServer`.
fn readme_codes(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Words of the whole text, so that a status at the end of a line finds its code on the next.
    let words: Vec<&str> = readme.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let status = w.trim_start_matches(['`', '(']);
        let is_status = status.len() == 3
            && (status.starts_with('4') || status.starts_with('5'))
            && status.chars().all(|c| c.is_ascii_digit());
        if !is_status {
            continue;
        }
        // The code right after the status, then each backticked one of a comma list.
        for (j, next) in words[i + 1..].iter().enumerate() {
            let bare = next.trim_matches(|c: char| "`,;:()".contains(c));
            let listed_after = j > 0 && next.starts_with('`');
            if !(j == 0 || listed_after) || !is_code(bare) || !bare.contains('_') {
                break;
            }
            out.push(bare.to_owned());
            if !next.ends_with(',') {
                break;
            }
        }
    }
    for line in readme
        .lines()
        .filter(|l| l.starts_with("| `RefusedByServer"))
    {
        out.extend(
            line.split('`')
                .skip(3)
                .step_by(2)
                .filter(|w| is_code(w))
                .map(str::to_owned),
        );
    }
    out
}

// ------------------------------------------------------------------ the sources

#[test]
fn every_code_written_in_the_sources_is_listed_and_every_listed_code_is_written() {
    let sources = server_sources();
    let listed = listed();
    let mut found = BTreeSet::new();
    let mut literals = BTreeSet::new();
    let files: Vec<(String, Vec<Tok>)> = sources
        .iter()
        .map(|(p, text)| (p.clone(), tokens(text)))
        .collect();
    let constructors = code_parameters(&files);
    let consts = string_consts(&files);
    for (path, toks) in &files {
        for code in codes_in(path, toks, &constructors, &consts) {
            found.insert((code, path.clone()));
        }
        literals.extend(toks.iter().filter_map(|t| match t {
            Tok::Str(s) => Some(s.clone()),
            _ => None,
        }));
    }
    // The scan must see the codes of each shape, or it proves nothing.
    let seen: BTreeSet<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    for shape in [
        "bad_credentials",        // AppError::unauthorized("x", …)
        "protocol_unsupported",   // AppError::new(StatusCode::…, "x", …)
        "quota_exceeded",         // Self::new(…) inside error.rs
        "cpf_taken",              // EditError::Conflict { code: "x", … }
        "nothing_to_notify",      // the file's own helper bad("x", …)
        "law_parameters_invalid", // a const passed as the code
        "sealed_field",           // fn refusal_code(…) -> &'static str { … => "x" }
        "code_used",              // let code = match … { … => "x" }
    ] {
        assert!(seen.contains(shape), "the scan no longer finds `{shape}`");
    }
    let unlisted: Vec<_> = found
        .iter()
        .filter(|(c, _)| !listed.contains(c.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "codes written in server/src but not in AppError::CODES (add them there and a row to \
         docs/mobile.md): {unlisted:?}"
    );
    let stale: Vec<_> = listed.iter().filter(|c| !literals.contains(**c)).collect();
    assert!(
        stale.is_empty(),
        "codes in AppError::CODES written nowhere in server/src: {stale:?}"
    );
}

/// `server/src/**/*.rs` without the unit-test modules (which may make up codes to test with),
/// and without `AppError::CODES` itself (which would otherwise vouch for its own entries).
fn server_sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![repo().join("server/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let text = without_test_module(&text);
                let text = match text.find("pub const CODES") {
                    Some(start) => {
                        let end = start + text[start..].find("];").expect("end of CODES");
                        format!("{}{}", &text[..start], &text[end + 2..])
                    }
                    None => text.to_owned(),
                };
                let name = path.strip_prefix(repo()).unwrap().display().to_string();
                out.push((name, text));
            }
        }
    }
    assert!(out.len() > 50, "server/src read: {} files", out.len());
    out
}

/// The text before `#[cfg(test)]` (and its other attributes) `mod …`: the server's unit-test
/// modules are the end of their files.
fn without_test_module(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]") {
        let start = at + i;
        let rest = text[start + "#[cfg(test)]".len()..].trim_start();
        let rest = rest
            .lines()
            .find(|l| !l.trim_start().starts_with("#["))
            .unwrap_or_default();
        if rest.starts_with("mod ") && !rest.trim_end().ends_with(';') {
            return &text[..start];
        }
        at = start + 1;
    }
    text
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Lifetime(String),
    Punct(char),
    Other,
}

/// Rust tokens, enough to read call sites: identifiers, string literals (their text, escapes
/// left as written), lifetimes and single punctuation; comments dropped; numbers and char
/// literals as `Other`.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            let start = i + 1;
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(c[start..i.min(c.len())].iter().collect()));
            i += 1;
        } else if ch == '\'' {
            if c.get(i + 1) == Some(&'\\') {
                // '\n', '\'', '\u{…}'
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push(Tok::Other);
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push(Tok::Other);
            } else {
                let start = i + 1;
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Lifetime(c[start..i].iter().collect()));
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // Raw and byte strings: r"…", r#"…"#, b"…", br#"…"# (not a raw identifier r#type).
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            let raw = matches!(word.as_str(), "r" | "br") && c.get(i + hashes) == Some(&'"');
            if raw {
                i += hashes + 1;
                let start = i;
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let close: Vec<char> = close.chars().collect();
                while i < c.len() && !c[i..].starts_with(&close) {
                    i += 1;
                }
                out.push(Tok::Str(c[start..i].iter().collect()));
                i += close.len();
            } else if word == "b" && c.get(i) == Some(&'"') {
                // Left for the '"' branch: a byte string reads as a string.
            } else if word == "b" && c.get(i) == Some(&'\'') {
                i += if c.get(i + 1) == Some(&'\\') { 4 } else { 3 };
                out.push(Tok::Other);
            } else {
                out.push(Tok::Ident(word));
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                // `1..n`: a range is not part of the number.
                if c[i] == '.' && c.get(i + 1) == Some(&'.') {
                    break;
                }
                i += 1;
            }
            out.push(Tok::Other);
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn is_ident(t: Option<&Tok>, name: &str) -> bool {
    matches!(t, Some(Tok::Ident(s)) if s == name)
}

fn is_punct(t: Option<&Tok>, p: char) -> bool {
    t == Some(&Tok::Punct(p))
}

/// The index of the token closing the bracket opened at `open`.
fn closing(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The arguments (or parameters) between the bracket at `open` and its closing one, split at
/// top-level commas.
fn arguments(toks: &[Tok], open: usize) -> Vec<&[Tok]> {
    let close = closing(toks, open);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = open + 1;
    for (i, t) in toks.iter().enumerate().take(close).skip(open + 1) {
        match t {
            Tok::Punct('(' | '[' | '{' | '<') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth = depth.saturating_sub(1),
            // `->` and `=>` are no closing angle brackets.
            Tok::Punct('>')
                if !is_punct(toks.get(i - 1), '-') && !is_punct(toks.get(i - 1), '=') =>
            {
                depth = depth.saturating_sub(1);
            }
            Tok::Punct(',') if depth == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < close {
        out.push(&toks[start..close]);
    }
    out
}

/// A function with a parameter `code` that takes a code as written (`&'static str`, or
/// `impl Into<Cow<'static, str>>`): its name, the file it is defined in and the parameter's
/// place.
#[derive(Debug)]
struct Constructor {
    name: String,
    file: String,
    index: usize,
}

fn code_parameters(files: &[(String, Vec<Tok>)]) -> Vec<Constructor> {
    let mut out = Vec::new();
    for (file, toks) in files {
        for i in 0..toks.len() {
            if !is_ident(toks.get(i), "fn") {
                continue;
            }
            let Some(Tok::Ident(name)) = toks.get(i + 1) else {
                continue;
            };
            let mut open = i + 2;
            if is_punct(toks.get(open), '<') {
                open = angle_end(toks, open) + 1;
            }
            if !is_punct(toks.get(open), '(') {
                continue;
            }
            for (index, param) in arguments(toks, open).iter().enumerate() {
                let takes_code = matches!(param, [Tok::Ident(p), Tok::Punct(':'), ty @ ..]
                    if p == "code" && is_static_text(ty));
                if takes_code {
                    out.push(Constructor {
                        name: name.clone(),
                        file: file.clone(),
                        index,
                    });
                }
            }
        }
    }
    out
}

fn angle_end(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

fn is_static_text(ty: &[Tok]) -> bool {
    let static_str = matches!(ty, [Tok::Punct('&'), Tok::Lifetime(l), Tok::Ident(s)]
        if l == "static" && s == "str");
    let into_cow = matches!(ty, [Tok::Ident(i), Tok::Ident(into), ..] if i == "impl" && into == "Into")
        && ty.iter().any(|t| matches!(t, Tok::Ident(c) if c == "Cow"));
    static_str || into_cow
}

/// `const NAME: &str = "…"` and `const NAME: &'static str = "…"` (any visibility), by name.
fn string_consts(files: &[(String, Vec<Tok>)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (_, toks) in files {
        for i in 0..toks.len() {
            let Some(Tok::Ident(name)) = toks.get(i + 1) else {
                continue;
            };
            if !is_ident(toks.get(i), "const") || !is_punct(toks.get(i + 2), ':') {
                continue;
            }
            let ty = i + 3;
            let after = if matches!(toks.get(ty + 1), Some(Tok::Lifetime(_))) {
                ty + 3
            } else {
                ty + 2
            };
            let is_str = is_punct(toks.get(ty), '&') && is_ident(toks.get(after - 1), "str");
            if is_str
                && is_punct(toks.get(after), '=')
                && let Some(Tok::Str(v)) = toks.get(after + 1)
            {
                out.push((name.clone(), v.clone()));
            }
        }
    }
    out
}

/// The error types whose constructors are called by their name from any file.
const ERROR_TYPES: [&str; 3] = ["AppError", "ServiceError", "EditError"];

/// The codes written in one file, in the shapes of the module doc.
fn codes_in(
    file: &str,
    toks: &[Tok],
    constructors: &[Constructor],
    consts: &[(String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    // The names this file's `use` declarations bring in.
    let mut imported = BTreeSet::new();
    let mut in_use = false;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Ident(u) if u == "use" && !is_punct(toks.get(i + 1), '(') => in_use = true,
            Tok::Punct(';') => in_use = false,
            Tok::Ident(name) if in_use => {
                imported.insert(name.as_str());
            }
            _ => {}
        }
    }
    let as_code = |arg: &[Tok]| -> Option<String> {
        match arg {
            [Tok::Str(s)] => Some(s.clone()),
            // A const, bare or by its path (`law::INVALID`).
            [.., Tok::Ident(name)] if name.chars().all(|c| c.is_ascii_uppercase() || c == '_') => {
                consts
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
            }
            _ => None,
        }
    };
    for i in 0..toks.len() {
        // A call of a constructor: `Type::name(`, `Self::name(` or `name(` in its own file.
        if let Some(Tok::Ident(name)) = toks.get(i)
            && is_punct(toks.get(i + 1), '(')
            && !(i > 0 && is_ident(toks.get(i - 1), "fn"))
        {
            let qualifier = if i >= 3 && is_punct(toks.get(i - 1), ':') {
                match toks.get(i - 3) {
                    Some(Tok::Ident(q)) => Some(q.as_str()),
                    _ => Some(""),
                }
            } else if i > 0 && is_punct(toks.get(i - 1), '.') {
                Some(".")
            } else {
                None
            };
            for c in constructors.iter().filter(|c| &c.name == name) {
                let applies = match qualifier {
                    Some(q) if ERROR_TYPES.contains(&q) => true,
                    Some("Self") => c.file == file,
                    // A free helper: the file's own, or one it imports (`use super::bad;`).
                    None => c.file == file || imported.contains(name.as_str()),
                    // By its module's path (`super::bad(`).
                    Some(q) => q.starts_with(|ch: char| ch.is_ascii_lowercase()),
                };
                if applies
                    && let Some(arg) = arguments(toks, i + 1).get(c.index)
                    && let Some(code) = as_code(arg)
                {
                    out.push(code);
                }
            }
        }
        // A field `code: "x"` of an error's struct literal.
        if is_ident(toks.get(i), "code")
            && is_punct(toks.get(i + 1), ':')
            && !is_punct(toks.get(i + 2), ':')
            && let Some(Tok::Str(s)) = toks.get(i + 2)
        {
            out.push(s.clone());
        }
        // `let code = match … {` and `fn …code…(…) -> &'static str {`: the arms' literals.
        let body = if is_ident(toks.get(i), "let")
            && is_ident(toks.get(i + 1), "code")
            && is_punct(toks.get(i + 2), '=')
            && is_ident(toks.get(i + 3), "match")
        {
            (i + 4..toks.len()).find(|&j| is_punct(toks.get(j), '{'))
        } else if is_ident(toks.get(i), "fn")
            && matches!(toks.get(i + 1), Some(Tok::Ident(n)) if n.contains("code"))
            && is_punct(toks.get(i + 2), '(')
        {
            let after = closing(toks, i + 2) + 1;
            let returns_text = is_punct(toks.get(after), '-')
                && is_punct(toks.get(after + 1), '>')
                && is_static_text(toks.get(after + 2..after + 5).unwrap_or_default());
            returns_text.then_some(after + 5)
        } else {
            None
        };
        if let Some(open) = body.filter(|&o| is_punct(toks.get(o), '{')) {
            let close = closing(toks, open);
            for j in open..close {
                if is_punct(toks.get(j), '=')
                    && is_punct(toks.get(j + 1), '>')
                    && let Some(Tok::Str(s)) = toks.get(j + 2)
                {
                    out.push(s.clone());
                }
            }
        }
    }
    out
}
