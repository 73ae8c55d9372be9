//! The block model every document is composed into once, and every back-end renders: the
//! wording and order live in [`crate::compose`], the look on paper in [`crate::pdf`] and
//! [`crate::escpos`]. A back-end never adds or drops a statement; it only places blocks.

use chrono::{DateTime, Utc};

/// One document, ready for any back-end.
#[derive(Debug)]
pub(crate) struct Doc<'a> {
    /// Large, bold, centred: "AUTO DE INFRAÇÃO".
    pub title: String,
    /// Under the title, centred: the issuing body, the article.
    pub subtitle: Vec<String>,
    /// The A4 page header: what this paper is, with its number.
    pub header: String,
    /// Labels of the thermal copies, printed under the title, one copy each. Empty: one copy
    /// without a label. PDFs are one copy and ignore them.
    pub copies: &'static [&'static str],
    /// The PDF's creation date: a time from the content, never the clock, so the same content
    /// gives the same bytes.
    pub created: DateTime<Utc>,
    /// The grouped verification code, repeated in the A4 footer of every page.
    pub footer_code: Option<String>,
    pub blocks: Vec<Block<'a>>,
}

/// A unit of layout; back-ends keep each one whole where they can (a QR code and its caption,
/// a photo and its digest, never split across pages).
#[derive(Debug)]
pub(crate) enum Block<'a> {
    /// A section title.
    Heading(String),
    /// "Placa: ABC1D23".
    Field {
        label: String,
        value: String,
    },
    Paragraph(String),
    /// Bulleted items.
    List(Vec<String>),
    /// The QR code of `url`, with the grouped code and the address written out beside it.
    Qr {
        url: String,
        code: String,
    },
    /// A photo of the case file (PDF only; a thermal printer prints the caption).
    /// `jpeg: None` prints the caption alone, which then says why.
    Image {
        caption: String,
        jpeg: Option<&'a [u8]>,
    },
    /// A line to sign on, and who signs.
    Signature(String),
    /// Small print: printed-at, generated-by.
    Small(String),
    Separator,
    /// Blocks that go on one page (the ciência: declaration, fields and signature lines); a
    /// group taller than a page breaks as usual.
    Together(Vec<Block<'a>>),
}
