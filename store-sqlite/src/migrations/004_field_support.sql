-- Migration 004: what field devices need besides records: leased auto-number blocks and
-- content-addressed photos.

-- Blocks never overlap: each starts after the highest `end_no` ever leased, computed and
-- inserted in one write transaction; the unique index is a second guard.
CREATE TABLE number_blocks (
    id INTEGER PRIMARY KEY,
    device_id TEXT NOT NULL REFERENCES devices (id),
    start_no INTEGER NOT NULL CHECK (start_no >= 1),
    end_no INTEGER NOT NULL CHECK (end_no >= start_no),
    leased_at TEXT NOT NULL,
    leased_by TEXT
) STRICT;
CREATE UNIQUE INDEX number_blocks_end ON number_blocks (end_no);
CREATE INDEX number_blocks_device ON number_blocks (device_id);

-- Photos by SHA-256 (verified on receipt). `record_id` is what the uploader said the photo
-- belongs to; the record sync checks that link.
CREATE TABLE photos (
    sha256 TEXT PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    size INTEGER NOT NULL CHECK (size >= 0),
    content_type TEXT NOT NULL,
    uploaded_at TEXT NOT NULL,
    user_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    record_id TEXT
) STRICT;
CREATE INDEX photos_record ON photos (record_id);

-- The bytes apart, so that listing metadata never reads blobs.
CREATE TABLE photo_blobs (
    sha256 TEXT PRIMARY KEY NOT NULL REFERENCES photos (sha256),
    bytes BLOB NOT NULL
) STRICT;
