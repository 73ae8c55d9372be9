-- Migration 006: the office workflow (module `crate::office`).
--
-- `rules`: the rule ids a record is classified under — the office's latest `classified` event,
-- else the author's legal basis — space-separated (`R24 R28`), so the inbox filters by rule
-- without opening documents. NULL until computed: rows written before this migration are
-- filled from their documents when the store opens (`SqliteStore::open`).
ALTER TABLE records ADD COLUMN rules TEXT;
