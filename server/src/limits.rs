//! The server's resource limits, in one place: every bound on what a client can make the server
//! spend (CPU, memory, attempts) or store is a named constant here, with why it has that
//! value. What one record may hold is `sync_core::limits` (the device enforces the same).
//! The README's table of limits is written from this file and that one.

// ----- login, refresh and password hashing ----------------------------------------------------
//
// Flow of a login (`auth::login`): the client address's attempt budget (`governor`), then the
// failure budgets of the (username, address) pair and of the username, reserved before any
// hashing, then one slot of the bounded Argon2id pool. Refresh passes the address budget only
// (it costs one SHA-256, no Argon2).

use std::time::Duration;

/// Most Argon2id verifications running at once. The pool is the machine's cores, up to this:
/// Argon2id is CPU-bound, so more at once than cores only adds memory (each verification holds
/// its memory cost, 19 MiB at the default parameters, for its whole run). 8 × 19 MiB ≈ 152 MiB
/// is then the most password checking can take, however many logins arrive.
pub const MAX_CONCURRENT_PASSWORD_HASHES: usize = 8;

/// How long a login waits for a hashing slot before it is answered 429. One verification takes
/// tens of milliseconds per core, so a second covers a queue of dozens of honest logins (a shift
/// starting); beyond that the server is being flooded and says so instead of queueing without
/// end.
pub const PASSWORD_HASH_WAIT: Duration = Duration::from_secs(1);

/// `Retry-After` (seconds) when no hashing slot freed in [`PASSWORD_HASH_WAIT`].
pub const PASSWORD_HASH_RETRY_AFTER_SECS: u64 = 2;

/// Login and refresh attempts one client address may make in a burst. Tablets in the field sit
/// behind carrier NAT, and the office's computers behind one public address: a shift starting
/// may log in a dozen devices from one address within a minute. 20 covers that; a guesser
/// from one address gets 20, then [`AUTH_ATTEMPT_REPLENISH`]'s rate.
pub const AUTH_ATTEMPTS_PER_ADDRESS_BURST: u32 = 20;

/// One more attempt per address every this long (20 a minute sustained): ample for refreshes
/// (a device refreshes every 15 minutes) and logins, tiny for guessing.
pub const AUTH_ATTEMPT_REPLENISH: Duration = Duration::from_secs(3);

/// Lookups one client address may make on the public verification page (`/verificar`) in a
/// burst. Someone checks a paper or two; a desk checking a stack of notifications, or several
/// people behind one address, may check thirty in a minute. A code has 80 bits: at this rate a
/// guesser from one address would need billions of years to hit one.
pub const VERIFY_LOOKUPS_PER_ADDRESS_BURST: u32 = 30;

/// One more lookup per address every this long (30 a minute sustained) after the burst.
pub const VERIFY_LOOKUP_REPLENISH: Duration = Duration::from_secs(2);

/// IPv6 clients are counted by this prefix: one subscriber gets a whole /64 and can pick any
/// address in it, so counting single addresses would not bound anyone.
pub const IPV6_CLIENT_PREFIX_BITS: u32 = 64;

/// Addresses tracked by the per-address budget before idle ones are pruned, and the most kept:
/// an entry is a few dozen bytes, so 100 000 is a few MB. Entries whose budget is full again
/// are dropped first (nothing is lost: a full budget is what a new address gets); if the map is
/// still full, that many addresses are attacking at once, and logins wait until entries expire
/// (existing sessions go on).
pub const MAX_TRACKED_ADDRESSES: usize = 100_000;

/// Failed logins of one username from one address, within [`LOGIN_LOCKOUT`], before that pair
/// is locked for [`LOGIN_LOCKOUT`]. Five covers typos and a caps-lock; every attempt is counted
/// before its hash runs, so at most five hashes run, however many arrive at once.
pub const LOGIN_MAX_FAILURES: u32 = 5;

/// The window failures are counted in, and how long a lockout lasts.
pub const LOGIN_LOCKOUT: Duration = Duration::from_secs(15 * 60);

/// Failed logins of one username from all addresses together within [`LOGIN_LOCKOUT`] before
/// the username is locked everywhere. Ten times the per-address limit: anonymous guessers from
/// one or two addresses cannot lock a user out from the office, while guessing spread over many
/// addresses is still bounded.
pub const LOGIN_MAX_FAILURES_PER_USERNAME: u32 = 50;

/// Each time a username hits [`LOGIN_MAX_FAILURES_PER_USERNAME`] again its lockout doubles
/// (15 min, 30 min, 1 h, …) up to this: sustained distributed guessing gets about 50 attempts a
/// day, while a user hit once is out for 15 minutes only.
pub const LOGIN_MAX_BACKOFF: Duration = Duration::from_secs(24 * 3600);

/// Expired rows of the failure counters (`auth::limiter`, kept in the store so that every node
/// counts the same attempts) each login attempt deletes, per table: more than the one row an
/// attempt may add, so expired rows cannot pile up. The tables hold about two rows per attempt
/// of the last [`LOGIN_LOCKOUT`] (plus each username locked within [`LOGIN_MAX_BACKOFF`]), a
/// bound the per-address budget above sets; no cap refuses logins when they are many.
pub use taxi_fiscal_store::logins::PRUNE_BATCH as LOGIN_PRUNE_BATCH;

/// Office browser sessions one user may hold (`web::session`, kept in the store): opening one
/// more ends the user's oldest. A desk, a laptop and a few browsers, with room to spare.
pub use taxi_fiscal_store::web_sessions::MAX_WEB_SESSIONS_PER_USER;

/// Largest body of a login or refresh request (API and office form), read before any budget
/// is checked. A real one is a username (≤ 32), a password and a device id (≤ 64), or a 43
/// character refresh token: well under 1 KiB. 16 KiB leaves room for long passphrases, while a
/// flood of anonymous requests cannot make the server buffer the general body limit (16 MiB)
/// each: 300 at once hold at most 5 MB.
pub const LOGIN_BODY_LIMIT: usize = 16 * 1024;

/// Characters of a username the failure counters keep as key. Usernames have at most 32
/// (`api::accounts`); a longer one cannot exist, and keying by a prefix keeps a flood of huge
/// made-up names from growing the counters' rows.
pub const MAX_USERNAME_KEY_CHARS: usize = 64;

// ----- one-time codes: password reset and device enrolment ------------------------------------
//
// The administrator makes a code for one user (`auth::admin`); the user (a reset) or the app
// (an enrolment) presents it once, from anywhere, without a login. Only its SHA-256 is stored.

/// Random bytes of a one-time code: 128 bits, shown as 32 hexadecimal digits in groups of
/// four. At [`CODE_ATTEMPTS_PER_ADDRESS_BURST`] and [`CODE_ATTEMPT_REPLENISH`]'s rate a guesser
/// from one address makes some 14 400 tries a day: finding one live code among even a thousand
/// takes longer than the universe has existed. Short enough to read out on the phone if the
/// link or the QR code cannot be used.
pub const ACCOUNT_CODE_BYTES: usize = 16;

/// A password-reset code works for this long (minutes). The administrator hands it to the user
/// who asked for it, by phone or in person, and the user uses it right away; two hours cover a
/// user who is on the street when it arrives, and a code lost on a note stops working the same
/// morning. A late user asks for another (a new one replaces the old).
pub const PASSWORD_RESET_CODE_TTL_MINUTES: i64 = 120;

/// An enrolment code works for this long (minutes). The administrator shows the QR code on the
/// screen and the tablet in the same room scans it within a minute or two; half an hour lets
/// one administrator prepare a shift's tablets in one go, and a photo of the screen is useless
/// after the morning's briefing.
pub const ENROLMENT_CODE_TTL_MINUTES: i64 = 30;

/// Presentations of a one-time code (reset page, `POST /v1/devices/enrol`) one client address
/// may make in a burst: a person who mistypes a few times, or a shift's tablets enrolling from
/// behind one office address, stay well inside it; a guesser gets ten, then
/// [`CODE_ATTEMPT_REPLENISH`]'s rate. Counted before the code is looked up or a password hashed.
pub const CODE_ATTEMPTS_PER_ADDRESS_BURST: u32 = 10;

/// One more code presentation per address every this long after the burst (10 a minute).
pub const CODE_ATTEMPT_REPLENISH: Duration = Duration::from_secs(6);

/// Largest body of `POST /v1/devices/enrol`, read before the address budget is checked: a code
/// (≤ 64 characters) and a device name (≤ [`MAX_DEVICE_LABEL_CHARS`], 4 bytes each at most)
/// fit in well under 1 KiB; anything bigger is not an enrolment.
pub const ENROL_BODY_LIMIT: usize = 1024;

/// Characters of a device's name (label): "Tablet da viatura 12 — GM Americana" is 35; 80 is
/// a long description and still fits one line of the devices page.
pub const MAX_DEVICE_LABEL_CHARS: usize = 80;

// ----- per-device quotas: photos, number blocks, quarantine -----------------------------------
//
// Enforced by the store inside the write transaction each one bounds, so they live with the
// store (`taxi_fiscal_store::limits`) and every backend reads the same values.

pub use taxi_fiscal_store::limits::{
    MAX_PHOTO_BYTES_PER_DEVICE_PER_WINDOW, MAX_PHOTOS_PER_DEVICE_PER_WINDOW,
    MAX_QUARANTINE_BYTES_PER_DEVICE, MAX_QUARANTINE_ROWS_PER_DEVICE, MAX_UNUSED_NUMBERS_PER_DEVICE,
    PHOTO_QUOTA_WINDOW_HOURS,
};

// ----- the registry's texts and the office's registry forms -----------------------------------

/// Characters of one text of the registry typed by the office (a name, an address, a make and
/// model, a colour, a municipality, a CNH category or observation, a taximeter certificate, an
/// auxiliary's alvará number). The longest real one is a full Brazilian name or a street
/// address, well under 120; 200 leaves room for them all while one write cannot make every
/// device's replica carry megabytes of one field. Checked by the registry operations, so the
/// API and the pages refuse the same.
pub const MAX_REGISTRY_TEXT_CHARS: usize = 200;

/// Observations one CNH may carry in the registry. A CNH prints a handful (EAR, A, D, …); ten
/// covers every real one with room, and bounds the list a write can grow.
pub const MAX_LICENCE_OBSERVATIONS: usize = 10;

/// Largest body of a registry form of the office pages (people, vehicles, stands, the permit's
/// forms, the grant). The largest form has about twenty fields; at
/// [`MAX_REGISTRY_TEXT_CHARS`] each, percent-encoded (up to 9 bytes for a 3-byte character),
/// that is under 40 KiB. 64 KiB takes any honest form; a bigger body is refused with 413 before
/// it is parsed, instead of reading the general body limit (16 MiB) per request.
pub const REGISTRY_FORM_BODY_LIMIT: usize = 64 * 1024;

// ----- office lists: search, export, appeal deadlines ----------------------------------------

/// Characters of a list's free-text search (`busca`). A name, a plate and an auto number
/// together are under 60; 100 leaves room and keeps every search a few short SQL clauses.
pub const MAX_SEARCH_CHARS: usize = 100;

/// Words of a free-text search. Each word is one `AND`ed clause of the inbox's query (a few
/// `OR`s each), so the words bound the query's size; a person's full name has at most six.
pub const MAX_SEARCH_WORDS: usize = 8;

/// Rows of one spreadsheet export (`…/exportar.csv`). The Unidade issues a few thousand autos a
/// year: 10 000 rows is years of the inbox, and a few MB built in memory; a longer list is
/// refused with a request to narrow the filters, never truncated silently.
pub const MAX_EXPORT_ROWS: usize = 10_000;

/// Records whose appeal may still be open (notified, awaiting an appeal) that the inbox reads
/// for the "prazos vencendo" filter and the sort by deadline: the deadline is in each record's
/// document, so each is loaded. A city of this size has tens of such records at a time; past
/// this many the page says the list is incomplete and asks for narrower filters.
pub const MAX_APPEAL_DEADLINE_SCAN: u32 = 2_000;

/// Plates of likely duplicates on one page of the duplicates list when none is asked for, and
/// the most a page may ask for. A plate is usually one group of two or three records.
pub const DUPLICATE_PLATES_PER_PAGE: u32 = 50;
pub const MAX_DUPLICATE_PLATES_PER_PAGE: u32 = 200;

/// Records one page of the duplicates list loads at most (their documents are read to judge
/// place and settled pairs, every pair of one page compared): the page ends at the plate that
/// would pass it, so a plate of many candidates — records of one taxi written on several
/// devices — still shows (alone, up to this many), and memory and time stay bounded.
pub const MAX_DUPLICATE_RECORDS_PER_PAGE: u32 = 500;

// ----- observed persons of records ------------------------------------------------------------

/// Largest body of `PUT /v1/records/{id}/observed-persons`. The most one upload may carry is
/// `sync_core::limits::MAX_OBSERVED_PERSONS` (25) people at every text limit (name 200,
/// three documents and a phone of 32, address 300 characters: 628, at most 4 bytes each in
/// UTF-8, ≈ 2.6 KB with the id and the keys): about 65 KB. 128 KiB leaves room for JSON
/// escapes while an author cannot make the server buffer the general 16 MiB body limit.
pub const OBSERVED_PERSONS_BODY_LIMIT: usize = 128 * 1024;

// ----- photo thumbnails of the office pages ---------------------------------------------------

/// Longest side, in pixels, of a thumbnail (`/escritorio/fotos/{sha256}/miniatura`). The pages
/// show photos at most 18rem wide (288 CSS px): 320 is sharp there, and a 12 MP phone photo of
/// 2–4 MB becomes some 20 KB, so a record with ten photos, or a group of duplicates side by
/// side, loads at once.
pub const THUMBNAIL_MAX_SIDE_PX: u32 = 320;

/// Pixels (width × height) of the largest photo a thumbnail is made from. Decoding holds the
/// whole picture in memory (3 bytes a pixel, 4 with transparency): 24 MP is at most ~96 MB.
/// A phone's photo is 12 MP (4032 × 3024) and a 24 MP camera fits too; a larger photo (a 48 MP
/// mode) gets no thumbnail, the page says why, and its full photo is one click away. Checked
/// from the header, before any pixel is decoded.
pub const THUMBNAIL_MAX_INPUT_PIXELS: u64 = 24_000_000;

/// Thumbnails made at once. Each holds up to [`THUMBNAIL_MAX_INPUT_PIXELS`] decoded and takes
/// a core for a fraction of a second: two bound the memory to ~200 MB and leave the other
/// cores to syncing devices, while the office's pages (content-addressed, cached by the
/// browser and here) rarely ask for more than a page's worth once.
pub const THUMBNAIL_CONCURRENCY: usize = 2;

/// Thumbnails kept in memory, most recent first out last. A thumbnail is 10–40 KB (at most
/// ~100 KB for a photo of pure noise): 256 are a few pages of records and duplicates, at most
/// ~25 MB.
pub const THUMBNAIL_CACHE_ENTRIES: usize = 256;

/// JPEG quality of thumbnails: 80 shows the plate and the scene at thumbnail size at about a
/// third of the bytes of 95.
pub const THUMBNAIL_JPEG_QUALITY: u8 = 80;

// ----- editais de chamamento (`selection`) ----------------------------------------------------
//
// What one edital may hold is the law kernel's (`sync_core::rules::selection::MAX_*`:
// candidates, stands, places, appeals, preferences, documents, seed and text lengths), checked
// by its steps; the store bounds the list.

pub use taxi_fiscal_store::selection::MAX_EDITAIS_LISTED;

/// Largest body of an edital's routes (`/v1/editais…`). The largest is the opening: up to
/// `MAX_DOCUMENTS` (30) documents and the seed's source at `MAX_TEXT_CHARS` (4,000) characters
/// each, which JSON may escape to six bytes a character — about 750 KiB — and a hundred stands.
/// 1 MiB takes any honest edital and refuses a bigger body with 413 before it is parsed.
pub const EDITAL_BODY_LIMIT: usize = 1024 * 1024;
