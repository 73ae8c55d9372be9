//! ESC/POS for the field's Bluetooth thermal printers, and a small decoder for tests.
//!
//! Rendering: each copy starts with `ESC @` (reset) and `ESC t 3` (code page 860, Portuguese,
//! on Epson-compatible printers), prints the title bold and centred at double height, the copy
//! label ("VIA DO AUTUADO" / "VIA DO ÓRGÃO"), then every block word-wrapped to the font-A
//! columns of the paper ([`COLUMNS_58`], [`COLUMNS_80`]; a word longer than a line is broken).
//! The QR code is a raster bit image (`GS v 0`) built from the QR modules: the cheap printers
//! lack `GS ( k`, and a raster prints the same everywhere. Each copy ends with a feed and a
//! partial cut (`GS V 1`).
//!
//! [`decode`] reads such bytes back: text lines (from code page 860), bold/centre/size state,
//! raster images as bit matrices, and copies split at each cut. Any command it does not know
//! is an error, so a test notices when the renderer emits something unexpected.

use crate::cp860;
use crate::layout::{Block, Doc};
use crate::qr::{self, QUIET_MODULES};
use crate::text::wrap;

/// Font-A columns of a 58 mm printer (384 dots at 12 dots a character).
pub const COLUMNS_58: usize = 32;
/// Font-A columns of an 80 mm printer (576 dots).
pub const COLUMNS_80: usize = 48;
/// Printable dots across a 58 mm roll (8 dots/mm × 48 mm).
pub const DOTS_58: usize = 384;
/// Printable dots across an 80 mm roll (8 dots/mm × 72 mm).
pub const DOTS_80: usize = 576;
/// `ESC t` argument of code page 860 on Epson-compatible printers.
pub const CODE_PAGE_860: u8 = 3;
/// Dots per QR module at most: about 1 mm, enough for a phone camera at arm's length.
const MAX_QR_SCALE: usize = 8;

const ESC: u8 = 0x1b;
const GS: u8 = 0x1d;
const LF: u8 = 0x0a;

/// The paper a receipt is printed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paper {
    Mm58,
    Mm80,
}

impl Paper {
    fn columns(self) -> usize {
        match self {
            Paper::Mm58 => COLUMNS_58,
            Paper::Mm80 => COLUMNS_80,
        }
    }
    fn dots(self) -> usize {
        match self {
            Paper::Mm58 => DOTS_58,
            Paper::Mm80 => DOTS_80,
        }
    }
}

struct Writer {
    out: Vec<u8>,
    cols: usize,
}

impl Writer {
    fn cmd(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }
    fn bold(&mut self, on: bool) {
        self.cmd(&[ESC, b'E', u8::from(on)]);
    }
    fn centre(&mut self, on: bool) {
        self.cmd(&[ESC, b'a', u8::from(on)]);
    }
    /// Text already folded to code page 860, one line.
    fn raw_line(&mut self, line: &str) {
        for c in line.chars() {
            self.out.push(cp860::encode(c).unwrap_or(b'?'));
        }
        self.out.push(LF);
    }
    fn lines(&self, text: &str, width: usize) -> Vec<String> {
        wrap(&cp860::fold(text), width as f32, &|s| {
            s.chars().count() as f32
        })
    }
    fn paragraph(&mut self, text: &str) {
        for l in self.lines(text, self.cols) {
            self.raw_line(&l);
        }
    }
    fn rule(&mut self, c: char) {
        let line: String = std::iter::repeat_n(c, self.cols).collect();
        self.raw_line(&line);
    }

    /// "Label: value", wrapped, the label in bold.
    fn field(&mut self, label: &str, value: &str) {
        let label = cp860::fold(&format!("{label}:"));
        let bold_chars = label.chars().filter(|c| !c.is_whitespace()).count();
        let mut seen = 0;
        for line in self.lines(&format!("{label} {value}"), self.cols) {
            let mut bold = seen < bold_chars;
            if bold {
                self.bold(true);
            }
            for c in line.chars() {
                if bold && seen >= bold_chars {
                    self.bold(false);
                    bold = false;
                }
                if !c.is_whitespace() {
                    seen += 1;
                }
                self.out.push(cp860::encode(c).unwrap_or(b'?'));
            }
            if bold {
                self.bold(false);
            }
            self.out.push(LF);
        }
    }

    fn list(&mut self, items: &[String]) {
        for item in items {
            for (i, l) in self.lines(item, self.cols - 2).into_iter().enumerate() {
                let prefix = if i == 0 { "- " } else { "  " };
                self.raw_line(&format!("{prefix}{l}"));
            }
        }
    }

    fn qr(&mut self, url: &str, code: &str, dots: usize) {
        self.centre(true);
        match qr::modules(url) {
            Some(m) => {
                let total = m.width + 2 * QUIET_MODULES;
                let scale = (dots * 3 / 4 / total).clamp(1, MAX_QR_SCALE);
                self.raster(&m, scale);
            }
            None => self.paragraph("(QR code indisponível)"),
        }
        self.bold(true);
        self.paragraph(&format!("Código {code}"));
        self.bold(false);
        self.paragraph(url);
        self.centre(false);
    }

    /// `GS v 0`: the symbol with its quiet zone, each module `scale` × `scale` dots.
    fn raster(&mut self, m: &qr::Modules, scale: usize) {
        let side = (m.width + 2 * QUIET_MODULES) * scale;
        let row_bytes = side.div_ceil(8);
        let (Ok(xb), Ok(yd)) = (u16::try_from(row_bytes), u16::try_from(side)) else {
            return;
        };
        self.cmd(&[GS, b'v', b'0', 0]);
        self.cmd(&xb.to_le_bytes());
        self.cmd(&yd.to_le_bytes());
        for y in 0..side {
            let my = (y / scale).checked_sub(QUIET_MODULES);
            let mut row = vec![0u8; row_bytes];
            for x in 0..side {
                let mx = (x / scale).checked_sub(QUIET_MODULES);
                if let (Some(mx), Some(my)) = (mx, my)
                    && mx < m.width
                    && my < m.width
                    && m.is_dark(mx, my)
                {
                    row[x / 8] |= 0x80 >> (x % 8);
                }
            }
            self.out.extend_from_slice(&row);
        }
    }
}

/// Renders `doc` for a thermal printer: one copy per label of `doc.copies`.
pub(crate) fn render(doc: &Doc<'_>, paper: Paper) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::new(),
        cols: paper.columns(),
    };
    let unlabelled: &[&str] = &[""];
    let copies = if doc.copies.is_empty() {
        unlabelled
    } else {
        doc.copies
    };
    for label in copies {
        w.cmd(&[ESC, b'@', ESC, b't', CODE_PAGE_860]);
        w.centre(true);
        w.bold(true);
        w.cmd(&[GS, b'!', 0x01]);
        w.paragraph(&doc.title);
        w.cmd(&[GS, b'!', 0x00]);
        w.bold(false);
        for s in &doc.subtitle {
            w.paragraph(s);
        }
        if !label.is_empty() {
            w.bold(true);
            w.paragraph(&format!("*** {label} ***"));
            w.bold(false);
        }
        w.centre(false);
        w.rule('=');
        for b in &doc.blocks {
            block(&mut w, b, paper.dots());
        }
        w.cmd(&[ESC, b'd', 4, GS, b'V', 1]);
    }
    w.out
}

fn block(w: &mut Writer, b: &Block<'_>, dots: usize) {
    match b {
        Block::Heading(h) => {
            w.out.push(LF);
            w.bold(true);
            w.paragraph(&h.to_uppercase());
            w.bold(false);
        }
        Block::Field { label, value } => w.field(label, value),
        Block::Paragraph(p) | Block::Small(p) => w.paragraph(p),
        Block::List(items) => w.list(items),
        Block::Qr { url, code } => w.qr(url, code, dots),
        // Photos are not printed on the roll: their caption says which and where they are.
        Block::Image { caption, .. } => w.paragraph(caption),
        Block::Signature(who) => {
            w.cmd(&[LF, LF, LF]);
            w.rule('_');
            w.paragraph(who);
        }
        Block::Separator => w.rule('-'),
        Block::Together(blocks) => {
            for b in blocks {
                block(w, b, dots);
            }
        }
    }
}

// ----- decoding ----------------------------------------------------------------------------

/// ESC/POS bytes read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The code page last selected with `ESC t`.
    pub code_page: Option<u8>,
    /// Each copy: what was printed up to a cut.
    pub copies: Vec<PrintedCopy>,
    /// What was printed after the last cut (empty for a well-formed document).
    pub uncut: PrintedCopy,
    /// Times `ESC @` reset the printer.
    pub resets: usize,
}

/// One stretch of paper between cuts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintedCopy {
    pub items: Vec<Item>,
}

impl PrintedCopy {
    /// The text lines, in order.
    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.items.iter().filter_map(|i| match i {
            Item::Line(l) => Some(l),
            _ => None,
        })
    }
    /// All the text, lines joined by `\n`.
    pub fn text(&self) -> String {
        self.lines()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
    pub fn rasters(&self) -> impl Iterator<Item = &Raster> {
        self.items.iter().filter_map(|i| match i {
            Item::Raster(r) => Some(r),
            _ => None,
        })
    }
}

/// Something printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Line(Line),
    Raster(Raster),
    /// `ESC d n`: n blank lines fed.
    Feed(u8),
}

/// A line of text as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    /// Some of the line was bold.
    pub bold: bool,
    pub centred: bool,
    /// `GS !` was not 0 for some of it (double width or height).
    pub enlarged: bool,
}

/// A raster bit image (`GS v 0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raster {
    /// Width in dots.
    pub width: usize,
    pub height: usize,
    /// Row-major, `true` for a black dot.
    pub dots: Vec<bool>,
    pub centred: bool,
}

impl Raster {
    pub fn is_black(&self, x: usize, y: usize) -> bool {
        x < self.width && self.dots.get(y * self.width + x).copied().unwrap_or(false)
    }
}

/// Why bytes are not ESC/POS as this crate writes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown command {bytes:02x?} at byte {offset}")]
    Unknown { offset: usize, bytes: Vec<u8> },
    #[error("command at byte {offset} is cut short")]
    Truncated { offset: usize },
    #[error("byte {byte:#04x} at {offset} before any code page was selected")]
    NoCodePage { offset: usize, byte: u8 },
    #[error("code page {0} is not one this decoder reads")]
    UnknownCodePage(u8),
}

#[derive(Default)]
struct State {
    bold: bool,
    centred: bool,
    size: u8,
    line: Option<Line>,
}

impl State {
    fn line(&mut self) -> &mut Line {
        let (bold, centred, enlarged) = (self.bold, self.centred, self.size != 0);
        self.line.get_or_insert_with(|| Line {
            text: String::new(),
            bold,
            centred,
            enlarged,
        })
    }
}

/// Reads ESC/POS bytes as [`render_auto`](crate::render_auto) writes them.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut d = Decoded::default();
    let mut s = State::default();
    let mut i = 0;
    let arg = |at: usize| {
        bytes
            .get(at)
            .copied()
            .ok_or(DecodeError::Truncated { offset: at })
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            LF => {
                let line = s.line.take().unwrap_or(Line {
                    text: String::new(),
                    bold: s.bold,
                    centred: s.centred,
                    enlarged: s.size != 0,
                });
                d.uncut.items.push(Item::Line(line));
                i += 1;
            }
            ESC => {
                let op = arg(i + 1)?;
                match op {
                    b'@' => {
                        s = State::default();
                        d.code_page = None;
                        d.resets += 1;
                        i += 2;
                    }
                    b't' => {
                        let n = arg(i + 2)?;
                        if n != CODE_PAGE_860 {
                            return Err(DecodeError::UnknownCodePage(n));
                        }
                        d.code_page = Some(n);
                        i += 3;
                    }
                    b'E' => {
                        s.bold = arg(i + 2)? & 1 == 1;
                        if s.bold {
                            s.line().bold = true;
                        }
                        i += 3;
                    }
                    b'a' => {
                        s.centred = matches!(arg(i + 2)?, 1 | b'1');
                        i += 3;
                    }
                    b'd' => {
                        d.uncut.items.push(Item::Feed(arg(i + 2)?));
                        i += 3;
                    }
                    _ => {
                        return Err(DecodeError::Unknown {
                            offset: i,
                            bytes: vec![ESC, op],
                        });
                    }
                }
            }
            GS => {
                let op = arg(i + 1)?;
                match op {
                    b'!' => {
                        s.size = arg(i + 2)?;
                        i += 3;
                    }
                    b'V' => {
                        let m = arg(i + 2)?;
                        i += match m {
                            0 | 1 | b'0' | b'1' => 3,
                            65 | 66 => 4,
                            _ => {
                                return Err(DecodeError::Unknown {
                                    offset: i,
                                    bytes: vec![GS, op, m],
                                });
                            }
                        };
                        if i > bytes.len() {
                            return Err(DecodeError::Truncated { offset: i - 1 });
                        }
                        if let Some(l) = s.line.take() {
                            d.uncut.items.push(Item::Line(l));
                        }
                        d.copies.push(std::mem::take(&mut d.uncut));
                    }
                    b'v' => {
                        if arg(i + 2)? != b'0' {
                            return Err(DecodeError::Unknown {
                                offset: i,
                                bytes: bytes[i..(i + 3).min(bytes.len())].to_vec(),
                            });
                        }
                        let _mode = arg(i + 3)?;
                        let xb = usize::from(u16::from_le_bytes([arg(i + 4)?, arg(i + 5)?]));
                        let h = usize::from(u16::from_le_bytes([arg(i + 6)?, arg(i + 7)?]));
                        let start = i + 8;
                        let end = start + xb * h;
                        let data = bytes
                            .get(start..end)
                            .ok_or(DecodeError::Truncated { offset: i })?;
                        let width = xb * 8;
                        let dots = (0..h * width)
                            .map(|k| data[k / 8] & (0x80 >> (k % 8)) != 0)
                            .collect();
                        d.uncut.items.push(Item::Raster(Raster {
                            width,
                            height: h,
                            dots,
                            centred: s.centred,
                        }));
                        i = end;
                    }
                    _ => {
                        return Err(DecodeError::Unknown {
                            offset: i,
                            bytes: vec![GS, op],
                        });
                    }
                }
            }
            0x20..=0x7e => {
                s.line().text.push(char::from(b));
                i += 1;
            }
            0x80..=0xff => {
                if d.code_page.is_none() {
                    return Err(DecodeError::NoCodePage { offset: i, byte: b });
                }
                let c = cp860::decode(b).unwrap_or('?');
                s.line().text.push(c);
                i += 1;
            }
            _ => {
                return Err(DecodeError::Unknown {
                    offset: i,
                    bytes: vec![b],
                });
            }
        }
        if s.size != 0
            && let Some(l) = s.line.as_mut()
        {
            l.enlarged = true;
        }
    }
    if let Some(l) = s.line.take() {
        d.uncut.items.push(Item::Line(l));
    }
    Ok(d)
}
