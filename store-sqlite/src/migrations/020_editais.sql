-- Migration 020: the editais de chamamento (arts. 2–6 of the law). One row per edital, its whole
-- state as the law kernel's JSON (`rules::selection::Edital`), with the version optimistic
-- concurrency compares (1 when created, one more at each save). Every save appends an audit row
-- whose payload is the hash of version and state (`taxi_fiscal_store::selection`).
CREATE TABLE editais (
    id         TEXT PRIMARY KEY,
    version    INTEGER NOT NULL CHECK (version >= 1),
    state      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- The list, newest first, reads this index in order and stops at its bound.
CREATE INDEX editais_newest ON editais(created_at DESC, id DESC);
