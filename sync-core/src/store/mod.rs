//! Device store (being written: issue 3).
