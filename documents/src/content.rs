//! What each document says, as display-ready values. Callers resolve names, citations and
//! deadlines; the layout (labels, order, the fixed texts of rights and next steps) is this
//! crate's.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::VerificationCode;

/// Where a document is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// ESC/POS for a 58 mm thermal printer (32 columns of font A).
    EscPos58,
    /// ESC/POS for an 80 mm thermal printer (48 columns of font A).
    EscPos80,
    /// PDF, one or more A4 pages.
    PdfA4,
    /// PDF, one page 80 mm wide and as long as the content (sharing, receipt printers).
    PdfReceipt,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::EscPos58,
        Format::EscPos80,
        Format::PdfA4,
        Format::PdfReceipt,
    ];

    /// The name used by the CLI and the FFI: `escpos58`, `escpos80`, `pdf`, `pdf-receipt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EscPos58 => "escpos58",
            Self::EscPos80 => "escpos80",
            Self::PdfA4 => "pdf",
            Self::PdfReceipt => "pdf-receipt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }

    pub fn is_pdf(self) -> bool {
        matches!(self, Self::PdfA4 | Self::PdfReceipt)
    }
}

/// Which paper an auto is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoKind {
    /// Auto de infração, by an officer or inspector (arts. 31–32, 36).
    Infraction,
    /// Comunicação de transgressão by a stand coordinator (art. 17).
    Transgression,
}

/// A person the document names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    /// Full name; for someone the officer could not identify, a description
    /// ("condutor não identificado").
    pub name: String,
    /// What they are in this record: "titular do alvará", "motorista auxiliar", "testemunha"…
    pub role: String,
    /// A document shown on paper, already formatted and, where the law allows, masked
    /// ("CNH 01234567890"). Never a full CPF on an auto.
    pub document: Option<String>,
}

/// One legal basis as printed: the article and what it says, in a few words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BasisLine {
    /// "Lei 4.019/2004, art. 24, I".
    pub citation: String,
    /// "Veículo sem vistoria anual em dia".
    pub description: String,
}

/// A witness as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessLine {
    pub party: Party,
    pub statement: String,
}

/// The offender's signature on the auto, or why it is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SignatureLine {
    /// Signed on the device; the image travels apart (its SHA-256 prefix is printed).
    Signed { sha256: String },
    /// "Recusou-se a assinar", "condutor ausente"…
    Missing { reason: String },
}

/// Where and how a document can be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub code: VerificationCode,
    /// Base address of the public verification page, e.g. `https://fiscal.americana.sp.gov.br`;
    /// the QR code holds `{base}/verificar/{code}`.
    pub base_url: String,
}

impl Verification {
    /// The address in the QR code.
    pub fn url(&self) -> String {
        format!(
            "{}/verificar/{}",
            self.base_url.trim_end_matches('/'),
            self.code.compact()
        )
    }
}

/// Everything an auto (or a coordinator's report) states on paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutoContent {
    pub kind: AutoKind,
    /// Auto number; `None` while the device waits for a number block (printed as such).
    pub number: Option<String>,
    /// Órgão autuador, or the stand coordination for a report.
    pub issuing_body: String,
    /// When the facts happened (printed in America/Sao_Paulo).
    pub occurred_at: DateTime<Utc>,
    /// When the record was issued (sealed) on the device.
    pub issued_at: Option<DateTime<Utc>>,
    /// Place in words: the stand, an address; `None` when only the position is known.
    pub place: Option<String>,
    /// Latitude, longitude, accuracy in metres.
    pub position: Option<(f64, f64, Option<f64>)>,
    /// Canonical plate.
    pub plate: Option<String>,
    /// Who confirmed the vehicle identification, and when (never filled automatically).
    pub vehicle_confirmed: Option<(String, DateTime<Utc>)>,
    pub permit_number: Option<String>,
    /// The driver (charged).
    pub driver: Party,
    /// The permit holder when charged too (art. 32 § 2: an auxiliary's holder answers too).
    pub holder: Option<Party>,
    /// The officer or coordinator: name and registration.
    pub officer: Party,
    /// "leve" / "grave" for a coordinator's report.
    pub gravity: Option<String>,
    pub legal_basis: Vec<BasisLine>,
    pub facts: String,
    pub witnesses: Vec<WitnessLine>,
    pub signature: SignatureLine,
    /// `None` only for a record issued without a device key (older devices).
    pub verification: Option<Verification>,
    /// When this paper was printed (a reprint says so).
    pub printed_at: DateTime<Utc>,
}

/// An auto a notification refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoRef {
    pub number: String,
    pub occurred_at: DateTime<Utc>,
    pub plate: Option<String>,
    pub facts: String,
    pub legal_basis: Vec<BasisLine>,
}

/// The decision being notified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionLine {
    /// "Multa de 50 UFM", "Suspensão do alvará por 30 dias", "Advertência por escrito".
    pub penalty: String,
    /// "Lei 4.019/2004, art. 32, II".
    pub citation: String,
    pub decided_on: NaiveDate,
    /// Who decided (name and office).
    pub decided_by: String,
}

/// A fine's amount in force on the notification's date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmountLine {
    pub amount: Decimal,
    /// How it was reached, e.g. "valor de 2004 corrigido pelo IPCA até outubro de 2026".
    pub basis: String,
}

/// The notification of penalty (Lei 9.784/99 art. 26 § 1; Lei 4.019/2004 arts. 33–35).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotificationContent {
    /// The notification's own number, e.g. "NP-2026-000012".
    pub number: String,
    /// "Prefeitura Municipal de Americana — Unidade de Transportes".
    pub authority: String,
    pub issued_at: DateTime<Utc>,
    /// Who is notified.
    pub addressee: Party,
    pub addressee_address: Option<String>,
    pub autos: Vec<AutoRef>,
    pub decision: DecisionLine,
    pub amount: Option<AmountLine>,
    /// Where and how to file a reconsideration or an appeal (address, hours, e-mail).
    pub filing_place: String,
    /// Days to appeal from ciência (art. 35); the text counts them from the signature below.
    pub appeal_days: u32,
    pub verification: Verification,
}

/// One line of a record's history in the case file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub at: DateTime<Utc>,
    /// Who did it, as staff read it ("Fiscal João Silva (tablet GM-07)").
    pub who: String,
    /// What was done, one sentence.
    pub what: String,
}

/// A photo of the evidence. `jpeg` is `None` when the file never reached the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhotoContent {
    pub sha256: String,
    pub jpeg: Option<Vec<u8>>,
}

/// The case file for an appeal to the Prefeito (art. 33).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseFileContent {
    pub auto: AutoContent,
    /// The verdict the officer saw on the device, one finding per line.
    pub verdict: Vec<String>,
    pub timeline: Vec<TimelineEntry>,
    pub photos: Vec<PhotoContent>,
    pub notifications: Vec<String>,
    /// Identity and contact of the witnesses and of a driver outside the registry, one per
    /// line, as the office holds them apart from the record (empty: none; after the LGPD
    /// erasure, one line saying when they were erased).
    #[serde(default)]
    pub witness_contacts: Vec<String>,
    pub generated_at: DateTime<Utc>,
    pub generated_by: String,
}
