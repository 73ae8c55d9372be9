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

/// Places offered at one stand, as the edital prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandPlaces {
    /// The stand as the public knows it: its name and where it is ("Ponto da Praça Comendador
    /// Müller — Rua Fernando de Camargo").
    pub stand: String,
    pub places: u32,
}

/// The edital de chamamento that fills vacancies at the stands (Lei 4.019/2004, arts. 2–6): the
/// caller takes every fact from the edital the law kernel opened (`rules::selection::Edital`),
/// including its criteria text, and the counts of days from the kernel's constants; this crate
/// only lays them out with the fixed texts of the law.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditalContent {
    /// "Prefeitura Municipal de Americana — Secretaria de Transportes e Sistema Viário".
    pub issuing_body: String,
    /// The number as printed, "001/2026".
    pub number: String,
    /// Publication in the local press (art. 4).
    pub published_on: NaiveDate,
    /// Places offered, stand by stand, in the edital's order.
    pub vacancies: Vec<StandPlaces>,
    /// First and last day of applications.
    pub applications_from: NaiveDate,
    pub applications_until: NaiveDate,
    /// Where and how to register (address, hours).
    pub filing_place: String,
    /// The day the requirements of art. 2 are judged on.
    pub reference_date: NaiveDate,
    /// Days before the reference date a certificate (criminal record, medical) may be issued.
    pub certificate_validity_days: u32,
    /// Documents to present (art. 4, sole paragraph), one per item.
    pub documents: Vec<String>,
    /// The selection criteria as the edital states them (the kernel's `Edital::criteria`).
    pub criteria: String,
    /// The public source of the lottery's seed, named in advance.
    pub seed_source: String,
    /// The day that source becomes known and the draw is made.
    pub draw_on: NaiveDate,
    /// Days to appeal the choice from the publication of the result (art. 5: five).
    pub appeal_days: u32,
    /// Days the chosen candidate has to register once the choice is final (art. 2, sole
    /// paragraph: thirty).
    pub registration_days: u32,
    /// Who signs the edital: name and office.
    pub signed_by: String,
}

/// What orders a line of the classification within its group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankBasis {
    /// Groups I and II: seniority from this day (art. 3, I and II).
    Seniority(NaiveDate),
    /// Group III: the draw's key of the inscription (SHA-256, lower-case hex).
    DrawKey(String),
}

/// One line of the published classification, in the order of art. 3.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankedLine {
    /// 1-based position.
    pub position: u32,
    pub inscription: String,
    pub name: String,
    /// The art. 3 group in Roman numerals: "I", "II", "III".
    pub group: String,
    pub basis: RankBasis,
    /// The stand whose place the candidate was chosen for; `None`: not chosen (waiting in
    /// order for a place that frees up).
    pub stand: Option<String>,
    /// Why the line holds no place although its turn came, e.g. "excluído pelo recurso nº 2".
    pub note: Option<String>,
}

/// A candidate refused when the list was judged, with every reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedLine {
    pub inscription: String,
    pub name: String,
    /// One sentence per reason, each citing its article.
    pub reasons: Vec<String>,
}

/// The lottery as it was done: what anyone needs to recompute it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LotteryFacts {
    /// The day the lottery's list was published.
    pub list_published_on: NaiveDate,
    /// SHA-256 of the published list, lower-case hex.
    pub list_digest: String,
    /// How many inscriptions the list holds.
    pub inscriptions: usize,
    /// The public source of the seed, as the edital named it.
    pub seed_source: String,
    /// The seed as entered and normalised (the kernel's `normalise_seed`).
    pub seed: String,
    pub drawn_on: NaiveDate,
}

/// The published result of an edital (art. 3 classification; opens the art. 5 window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultContent {
    pub issuing_body: String,
    /// The edital's number as printed, "001/2026".
    pub edital_number: String,
    /// Publication of this result: the art. 5 window runs from it.
    pub published_on: NaiveDate,
    pub classification: Vec<RankedLine>,
    pub refused: Vec<RefusedLine>,
    /// `None`: nobody in group III, so there was no draw.
    pub lottery: Option<LotteryFacts>,
    /// Days to appeal (art. 5: five) and the last day, as the kernel counted it.
    pub appeal_days: u32,
    pub appeal_deadline: NaiveDate,
    /// Where and how to file an appeal (address, hours).
    pub filing_place: String,
    /// Days to register once the choice is final (art. 2, sole paragraph).
    pub registration_days: u32,
    /// Who signs the result: name and office.
    pub signed_by: String,
}
