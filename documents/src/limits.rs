//! Bounds on what a document prints. Content comes from records whose own limits (in
//! sync-core) are the same or tighter, so these only bite on content built some other way; when
//! one does, the paper says what was left out and that the whole is in the record — never a
//! silent cut, never an error that leaves the person without a paper.

/// Characters of one text printed on a PDF (facts, a statement, a finding). The records store
/// at most 10 000 characters of facts or of a statement, which fits a few A4 pages.
pub const MAX_PRINTED_TEXT_CHARS: usize = 10_000;

/// Characters of one text printed on thermal paper. The officer hands over the paper on the
/// street: 1 500 characters are some fifty lines of a 58 mm roll (about 20 cm); past that the
/// paper points to the verification page and the PDF, which print the whole text.
pub const MAX_THERMAL_TEXT_CHARS: usize = 1_500;

/// Characters of one field's value (a name, a place, a citation): the records store at most
/// 200 in such fields.
pub const MAX_FIELD_CHARS: usize = 200;

/// Items of one printed list (legal bases, witnesses, timeline entries, notifications): a
/// record holds at most 200 events, 50 legal bases and 20 witnesses.
pub const MAX_LIST_ITEMS: usize = 200;

/// Photos embedded in one case file: a record holds at most 50.
pub const MAX_CASE_FILE_PHOTOS: usize = 50;

/// Bytes of one embedded photo: the server's upload limit for a photo is 10 MiB.
pub const MAX_PHOTO_BYTES: usize = 10 * 1024 * 1024;

/// Bytes of all the photos embedded in one case file: the PDF is built in memory and then
/// sent or saved whole, so its size is bounded; 96 MiB is 48 phone photos of 2 MiB.
pub const MAX_CASE_FILE_PHOTO_BYTES: usize = 96 * 1024 * 1024;

/// Lines of a published classification, and refused candidates, printed in an edital's result:
/// an edital takes at most 2 000 candidates (`rules::selection::MAX_CANDIDATES` in the law
/// kernel), and a result must list every one of them, so this is that bound and not the shorter
/// [`MAX_LIST_ITEMS`] of other lists.
pub const MAX_RESULT_LINES: usize = 2_000;
