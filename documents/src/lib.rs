//! documents: what taxi-fiscal puts on paper, and how anyone checks that paper.
//!
//! Flow: a caller that knows the record (the device store offline, the server for the office)
//! fills a *content* value — [`AutoContent`], [`NotificationContent`], [`CaseFileContent`] —
//! with display-ready facts: names already resolved, citations already taken from the law
//! kernel, deadlines already counted. This crate decides nothing legal; it lays the content out
//! in Brazilian Portuguese and renders it to bytes:
//!
//! - [`render_auto`]: an auto de infração or a coordinator's report, as ESC/POS for 58 mm and
//!   80 mm thermal printers (two copies: "via do autuado", "via do órgão") or as a PDF (A4 or
//!   a receipt-sized page);
//! - [`render_notification`]: the notification of penalty (A4 PDF) the person signs or
//!   receives;
//! - [`render_case_file`]: the case file for an appeal (A4 PDF: the auto, photos, the verdict
//!   the officer saw, the events);
//! - [`render_edital`] and [`render_result`]: the edital de chamamento that fills vacancies at
//!   the stands ([`EditalContent`]: places, window, documents, criteria, the lottery's seed
//!   source, the rights of arts. 5 and 2 § único) and its published result ([`ResultContent`]:
//!   the art. 3 classification, the refused with their reasons, the lottery's list digest and
//!   seed, the appeal deadline), both A4 PDFs filled from the law kernel's
//!   `rules::selection::Edital`.
//!
//! Inside, a document is composed once (`compose`: wording, order, the fixed texts of next
//! steps and rights, with their articles) into a block model (`layout`: headings, fields,
//! paragraphs, lists, a QR code, photos, signature lines, small print), and each back-end
//! places those blocks: `pdf` (krilla, the shipped Liberation Sans, A4 pages with header and
//! numbered footer or one 80 mm receipt page) and [`escpos`] (code page 860, word-wrapped to
//! the printer's columns, the QR as a raster image, two cut copies). Texts are clipped to the
//! limits in `limits` with a note on the paper, never silently.
//!
//! Every document about a record carries a [`VerificationCode`] and its QR code: the code is
//! derived from the bytes that make the document authentic (the device's signature over the
//! sealed evidence, or the server's record of a notification), so `GET /verificar/{code}` on the
//! server finds the central record, and an altered code finds nothing. An edital and its result
//! are public notices printed in the press instead: they carry none, and the result prints the
//! digest of the lottery's list and the seed, from which anyone recomputes the draw.
//!
//! Nothing here does I/O or reads the clock: the same content gives the same bytes, which the
//! tests decode (PDF text through poppler's `pdftotext`, ESC/POS through [`escpos`]'s decoder).
#![forbid(unsafe_code)]

mod compose;
mod content;
mod cp860;
pub mod escpos;
mod layout;
mod limits;
mod pdf;
mod qr;
mod text;
mod verification;

pub use content::*;
pub use limits::*;
pub use pdf::MAX_RECEIPT_PAGE_PT;
pub use verification::{CODE_BYTES, CODE_LEN, VerificationCode};

/// Why a document could not be rendered.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RenderError {
    /// The document has no layout in that format (e.g. a notification on a thermal printer).
    #[error("este documento não pode ser gerado no formato {0}")]
    Unsupported(&'static str),
    /// The PDF writer failed.
    #[error("falha ao gerar o PDF: {0}")]
    Pdf(String),
    /// A photo of the case file could not be embedded.
    #[error("a foto {0} não pôde ser incluída")]
    Photo(String),
}

/// Renders an auto (or a coordinator's report) in `format`.
pub fn render_auto(content: &AutoContent, format: Format) -> Result<Vec<u8>, RenderError> {
    match format {
        Format::PdfA4 => pdf::render(&compose::auto(content, false), pdf::Paper::A4),
        Format::PdfReceipt => pdf::render(&compose::auto(content, false), pdf::Paper::Receipt),
        Format::EscPos58 => Ok(escpos::render(
            &compose::auto(content, true),
            escpos::Paper::Mm58,
        )),
        Format::EscPos80 => Ok(escpos::render(
            &compose::auto(content, true),
            escpos::Paper::Mm80,
        )),
    }
}

/// Renders the notification of penalty (A4 PDF).
pub fn render_notification(content: &NotificationContent) -> Result<Vec<u8>, RenderError> {
    pdf::render(&compose::notification(content), pdf::Paper::A4)
}

/// Renders the case file for an appeal (A4 PDF).
pub fn render_case_file(content: &CaseFileContent) -> Result<Vec<u8>, RenderError> {
    pdf::render(&compose::case_file(content), pdf::Paper::A4)
}

/// Renders an edital de chamamento (A4 PDF).
pub fn render_edital(content: &EditalContent) -> Result<Vec<u8>, RenderError> {
    pdf::render(&compose::edital(content), pdf::Paper::A4)
}

/// Renders the published result of an edital (A4 PDF).
pub fn render_result(content: &ResultContent) -> Result<Vec<u8>, RenderError> {
    pdf::render(&compose::result(content), pdf::Paper::A4)
}
