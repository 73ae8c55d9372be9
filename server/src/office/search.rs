//! The inbox's free text, resolved before the query: the records' columns hold numbers, plates
//! and ids, while the names a clerk types (the holder's, an auxiliary driver's, the officer's)
//! live in the registry and the accounts. Each word becomes a [`SearchWord`]: the word itself
//! (for the auto number, the permit number, part of a plate), the canonical plate when the word
//! is one in any spelling, and the permits and authors whose names contain it. The store then
//! keeps the records where every word matches one of those — one SQL query with a limit, never
//! a scan of the documents.
//!
//! A driver is found through the permits they drive under (as holder or auxiliary): the
//! record's columns name the permit, not the person at the wheel, and a person seen in the
//! field but absent from the registry has no name on the server.

use sync_core::domain::{Plate, Registry};

use crate::store::UserRow;
use crate::store::records::SearchWord;

/// Lower case without the accents of Portuguese (and the other Latin-1 ones), for matching and
/// sorting names however they were typed.
pub fn fold(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' | 'å' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            'ý' | 'ÿ' => 'y',
            other => other,
        })
        .collect()
}

/// The words of `text` resolved against the registry and the accounts. The caller has bounded
/// the text (`crate::limits::MAX_SEARCH_CHARS`, `MAX_SEARCH_WORDS`).
pub fn resolve(text: &str, reg: &Registry, users: &[UserRow]) -> Vec<SearchWord> {
    let people: Vec<(&str, String)> = reg
        .people
        .iter()
        .map(|p| (p.id.as_str(), fold(&p.name)))
        .collect();
    let names: Vec<(&str, String)> = users
        .iter()
        .map(|u| (u.id.as_str(), fold(&u.display_name)))
        .collect();
    fold(text)
        .split_whitespace()
        .map(|word| {
            let named: Vec<&str> = people
                .iter()
                .filter(|(_, name)| name.contains(word))
                .map(|(id, _)| *id)
                .collect();
            let permits = reg
                .permits
                .iter()
                .filter(|p| {
                    named.contains(&p.holder_id.as_str())
                        || p.auxiliaries
                            .iter()
                            .any(|a| named.contains(&a.person_id.as_str()))
                })
                .map(|p| p.number.clone())
                .collect();
            SearchWord {
                text: word.to_uppercase().replace('-', ""),
                plate: Plate::parse(word).ok().map(|p| p.canonical().to_owned()),
                permits,
                authors: names
                    .iter()
                    .filter(|(_, name)| name.contains(word))
                    .map(|(id, _)| (*id).to_owned())
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_ignores_case_and_accents() {
        assert_eq!(fold("JOÃO Conceição Ñ"), "joao conceicao n");
    }
}
