//! Field records as Automerge documents (being written: issue 3).
