//! The limits the store enforces itself, inside the write transaction each one bounds: what one
//! registered device can make the server keep. Every backend checks the same values; the
//! server's other limits (`taxi_fiscal_server::limits`) re-export these, so one table lists
//! them all.
//!
//! A registered device is trusted to record, not to fill the disk: each quota bounds what one
//! device can make the server keep, far above what a day of field work needs.

/// Photos one device may upload in `PHOTO_QUOTA_WINDOW_HOURS`. A busy shift is some thirty
/// autos with three to five photos each; a thousand is several shifts of that.
pub const MAX_PHOTOS_PER_DEVICE_PER_WINDOW: u64 = 1_000;

/// Bytes of photos one device may upload in `PHOTO_QUOTA_WINDOW_HOURS`: the thousand photos at
/// 2 MiB each (a phone's JPEG), well under what every photo at the 10 MiB upload limit would be.
pub const MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW: u64 = 2 * 1024 * 1024 * 1024;

/// The sliding window of the photo quotas, in hours: a day, so a device that hit the quota
/// uploads again the next shift (`Retry-After` says when the oldest upload leaves the window).
pub const PHOTO_QUOTA_WINDOW_HOURS: i64 = 24;

/// Leased auto numbers a device may hold unused before it is refused another block. A block is
/// 500 numbers by default and an officer issues a few dozen autos a day: two blocks unused are
/// months of work, and a device asking for more is losing numbers or hoarding them.
pub const MAX_UNUSED_NUMBERS_PER_DEVICE: u64 = 1_000;

/// Quarantine rows (refused changes kept as evidence) one device may accumulate. An honest
/// device is refused a handful of times a year; beyond this the device is broken or hostile.
/// Past the quota its records are still refused, but no more evidence is stored: the oldest
/// rows are kept rather than the newest, because evidence is never deleted (a flood must not be
/// able to push earlier evidence out).
pub const MAX_QUARANTINE_ROWS_PER_DEVICE: u64 = 1_000;

/// Bytes of quarantined evidence one device may accumulate (same policy as the row quota).
/// Each row holds at most one record's bytes (`sync_core::limits::MAX_RECORD_BYTES`, 1 MiB).
pub const MAX_QUARANTINE_BYTES_PER_DEVICE: u64 = 64 * 1024 * 1024;

/// Seconds after a refresh token is spent during which presenting it again, for the same
/// successor, still unused, answers that successor instead of ending the login as a replay: the
/// device sent the refresh and its answer was lost on a weak link. Two minutes cover the sync
/// client's whole series of retries (six attempts, pauses growing to 30 s) and an app that
/// tries again at once; a replay after it, or once the successor was used, is still theft and
/// ends every token of that login.
pub const REFRESH_REUSE_INTERVAL_SECS: i64 = 120;
