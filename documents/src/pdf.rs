//! The PDF back-end: a [`Doc`] is laid out into pages of positioned text, filled rectangles and
//! images (first pass, so every page knows how many there are), then drawn with krilla, which
//! subsets and embeds the shipped Liberation Sans (accents render the same on every viewer and
//! `pdftotext` reads the text back). QR codes are vector squares. Nothing reads the clock: the
//! creation date is the content's own time, and krilla derives the file id from the bytes, so
//! the same content gives the same file.

use krilla::Data;
use krilla::Document;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::image::Image;
use krilla::metadata::{DateTime as PdfDateTime, Metadata};
use krilla::page::PageSettings;
use krilla::text::{Font, TextDirection};

use chrono::{Datelike, Timelike};

use crate::RenderError;
use crate::layout::{Block, Doc};
use crate::qr::{self, QUIET_MODULES};
use crate::text::wrap;

/// The tallest page a receipt PDF gets, in points: 200 inches, the page size PDF viewers are
/// required to handle (ISO 32000 implementation limit). Longer content continues on another
/// page of the same width.
pub const MAX_RECEIPT_PAGE_PT: f32 = 14_400.0;

static REGULAR: &[u8] = include_bytes!("../fonts/LiberationSans-Regular.ttf");
static BOLD: &[u8] = include_bytes!("../fonts/LiberationSans-Bold.ttf");

const MM: f32 = 72.0 / 25.4;
const LEADING: f32 = 1.25;

/// The page a PDF is laid out on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paper {
    /// A4 pages with a header and a numbered footer.
    A4,
    /// One page 80 mm wide, as tall as the content.
    Receipt,
}

#[derive(Clone, Copy)]
struct Style {
    width: f32,
    height: f32,
    margin: f32,
    top: f32,
    bottom: f32,
    body: f32,
    small: f32,
    title: f32,
    heading: f32,
    /// Width of the label column of a field; 0: the label goes above its value.
    label_col: f32,
    qr_side: f32,
    image_max_h: f32,
}

impl Paper {
    fn style(self) -> Style {
        match self {
            Paper::A4 => Style {
                width: 210.0 * MM,
                height: 297.0 * MM,
                margin: 20.0 * MM,
                top: 18.0 * MM,
                bottom: 297.0 * MM - 15.0 * MM,
                body: 9.5,
                small: 7.5,
                title: 16.0,
                heading: 11.0,
                label_col: 145.0,
                qr_side: 100.0,
                image_max_h: 320.0,
            },
            Paper::Receipt => Style {
                width: 80.0 * MM,
                height: 0.0,
                margin: 4.0 * MM,
                top: 4.0 * MM,
                bottom: MAX_RECEIPT_PAGE_PT - 4.0 * MM,
                body: 8.5,
                small: 7.0,
                title: 12.0,
                heading: 9.5,
                label_col: 0.0,
                qr_side: 120.0,
                image_max_h: 260.0,
            },
        }
    }
}

/// Glyph advances of the shipped fonts, to wrap and centre text.
struct Metrics {
    regular: ttf_parser::Face<'static>,
    bold: ttf_parser::Face<'static>,
}

impl Metrics {
    fn new() -> Result<Self, RenderError> {
        let parse = |data: &'static [u8]| {
            ttf_parser::Face::parse(data, 0)
                .map_err(|e| RenderError::Pdf(format!("fonte embutida ilegível: {e}")))
        };
        Ok(Self {
            regular: parse(REGULAR)?,
            bold: parse(BOLD)?,
        })
    }

    fn width(&self, s: &str, size: f32, bold: bool) -> f32 {
        let face = if bold { &self.bold } else { &self.regular };
        let upem = f32::from(face.units_per_em());
        let units: f32 = s
            .chars()
            .map(|c| {
                face.glyph_index(c)
                    .and_then(|g| face.glyph_hor_advance(g))
                    .map_or(upem / 2.0, f32::from)
            })
            .sum();
        units * size / upem
    }
}

enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        text: String,
    },
    Rects(Vec<(f32, f32, f32, f32)>),
    Image {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        image: Image,
    },
}

struct Layout<'m> {
    m: &'m Metrics,
    s: Style,
    pages: Vec<Vec<Op>>,
    y: f32,
    /// The masthead already shows the QR code: the verification block prints only words.
    hoisted_qr: bool,
}

impl Layout<'_> {
    fn x0(&self) -> f32 {
        self.s.margin
    }
    fn cw(&self) -> f32 {
        self.s.width - 2.0 * self.s.margin
    }
    fn push(&mut self, op: Op) {
        if let Some(p) = self.pages.last_mut() {
            p.push(op);
        }
    }
    /// Starts a new page unless `h` more points fit on this one (or the page is still empty).
    fn ensure(&mut self, h: f32) {
        if self.y + h > self.s.bottom && self.y > self.s.top {
            self.pages.push(Vec::new());
            self.y = self.s.top;
        }
    }
    fn line(&mut self, x: f32, text: String, size: f32, bold: bool) {
        let lh = size * LEADING;
        self.ensure(lh);
        self.push(Op::Text {
            x,
            y: self.y + size * 0.95,
            size,
            bold,
            text,
        });
        self.y += lh;
    }
    fn wrap(&self, text: &str, width: f32, size: f32, bold: bool) -> Vec<String> {
        let m = self.m;
        wrap(text, width, &|s| m.width(s, size, bold))
    }
    fn paragraph(&mut self, x: f32, width: f32, text: &str, size: f32, bold: bool) {
        for l in self.wrap(text, width, size, bold) {
            self.line(x, l, size, bold);
        }
    }
    fn centred(&mut self, text: &str, size: f32, bold: bool) {
        let (x0, cw) = (self.x0(), self.cw());
        self.centred_in(x0, cw, text, size, bold);
    }
    fn centred_in(&mut self, x0: f32, cw: f32, text: &str, size: f32, bold: bool) {
        for l in self.wrap(text, cw, size, bold) {
            let w = self.m.width(&l, size, bold);
            self.line(x0 + (cw - w).max(0.0) / 2.0, l, size, bold);
        }
    }
    fn rule(&mut self, thickness: f32) {
        let (x0, cw) = (self.x0(), self.cw());
        self.push(Op::Rects(vec![(x0, self.y, cw, thickness)]));
    }

    fn block(&mut self, b: &Block<'_>) {
        let (x0, cw) = (self.x0(), self.cw());
        let (body, small) = (self.s.body, self.s.small);
        match b {
            Block::Heading(h) => {
                self.y += body * 0.7;
                // Kept with the first lines of its section.
                self.ensure(self.s.heading * LEADING + 3.0 * body * LEADING);
                self.paragraph(x0, cw, h, self.s.heading, true);
                self.rule(0.6);
                self.y += 4.0;
            }
            Block::Field { label, value } => {
                if self.s.label_col > 0.0 {
                    let col = self.s.label_col;
                    let labels = self.wrap(&format!("{label}:"), col - 8.0, body - 1.0, true);
                    let values = self.wrap(value, cw - col, body, false);
                    let lh = body * LEADING;
                    for i in 0..labels.len().max(values.len()) {
                        self.ensure(lh);
                        let base = self.y + body * 0.95;
                        if let Some(l) = labels.get(i) {
                            self.push(Op::Text {
                                x: x0,
                                y: base,
                                size: body - 1.0,
                                bold: true,
                                text: l.clone(),
                            });
                        }
                        if let Some(v) = values.get(i) {
                            self.push(Op::Text {
                                x: x0 + col,
                                y: base,
                                size: body,
                                bold: false,
                                text: v.clone(),
                            });
                        }
                        self.y += lh;
                    }
                } else {
                    self.ensure(2.0 * body * LEADING);
                    self.paragraph(x0, cw, label, small, true);
                    self.paragraph(x0, cw, value, body, false);
                    self.y += 1.5;
                }
            }
            Block::Paragraph(p) => {
                self.paragraph(x0, cw, p, body, false);
                self.y += body * 0.3;
            }
            Block::List(items) => {
                let indent = body * 1.2;
                for item in items {
                    let lines = self.wrap(item, cw - indent, body, false);
                    // An item stays on one page (one longer than a page breaks anyway).
                    self.ensure(lines.len() as f32 * body * LEADING);
                    for (i, l) in lines.into_iter().enumerate() {
                        if i == 0 {
                            self.ensure(body * LEADING);
                            self.push(Op::Text {
                                x: x0,
                                y: self.y + body * 0.95,
                                size: body,
                                bold: false,
                                text: "•".to_owned(),
                            });
                        }
                        self.line(x0 + indent, l, body, false);
                    }
                    self.y += body * 0.2;
                }
                self.y += body * 0.2;
            }
            Block::Qr { url, code } => self.qr(url, code),
            Block::Image { caption, jpeg } => self.image(caption, *jpeg),
            Block::Signature(who) => {
                self.ensure(body * 2.6 + small * LEADING);
                self.y += body * 2.6;
                let w = cw.min(260.0);
                self.push(Op::Rects(vec![(x0, self.y, w, 0.6)]));
                self.y += 2.0;
                self.paragraph(x0, w, who, small, false);
                self.y += body * 0.4;
            }
            Block::Small(s) => {
                self.paragraph(x0, cw, s, small, false);
                self.y += small * 0.4;
            }
            Block::Separator => {
                self.y += body * 0.4;
                self.rule(0.4);
                self.y += body * 0.6;
            }
            Block::Together(blocks) => {
                // Measured on an endless page first, then placed.
                let mut dry = Layout {
                    m: self.m,
                    s: Style {
                        bottom: f32::INFINITY,
                        ..self.s
                    },
                    pages: vec![Vec::new()],
                    y: 0.0,
                    hoisted_qr: self.hoisted_qr,
                };
                for b in blocks {
                    dry.block(b);
                }
                self.ensure(dry.y);
                for b in blocks {
                    self.block(b);
                }
            }
        }
    }

    fn qr(&mut self, url: &str, code: &str) {
        let (x0, cw) = (self.x0(), self.cw());
        if self.hoisted_qr {
            self.ensure(2.0 * self.s.body * LEADING);
            self.paragraph(x0, cw, &format!("Código {code} — {url}"), self.s.body, true);
            self.y += self.s.body * 0.3;
            return;
        }
        let side = self.s.qr_side;
        let beside = self.s.label_col > 0.0;
        let text_x = if beside { x0 + side + 12.0 } else { x0 };
        let text_w = if beside { cw - side - 12.0 } else { cw };
        let code_size = self.s.heading + 2.0;
        let url_lines = self.wrap(url, text_w, self.s.small, false);
        let text_h = code_size * LEADING + url_lines.len() as f32 * self.s.small * LEADING;
        let needed = if beside {
            side.max(text_h)
        } else {
            side + text_h
        };
        self.ensure(needed);
        let top = self.y;
        let qx = if beside { x0 } else { x0 + (cw - side) / 2.0 };
        self.qr_symbol(url, qx, top, side);
        if beside {
            self.y = top + (side - text_h).max(0.0) / 2.0;
        } else {
            self.y = top + side;
        }
        let code_line = format!("Código {code}");
        if beside {
            self.line(text_x, code_line, code_size, true);
        } else {
            self.centred(&code_line, code_size, true);
        }
        for l in url_lines {
            if beside {
                self.line(text_x, l, self.s.small, false);
            } else {
                let w = self.m.width(&l, self.s.small, false);
                self.line(x0 + (cw - w).max(0.0) / 2.0, l, self.s.small, false);
            }
        }
        self.y = self.y.max(top + needed) + self.s.body * 0.5;
    }

    /// The QR code of `url` as vector squares, `side` points wide with its quiet zone.
    fn qr_symbol(&mut self, url: &str, qx: f32, top: f32, side: f32) {
        match qr::modules(url) {
            Some(m) => {
                let cell = side / (m.width + 2 * QUIET_MODULES) as f32;
                let origin = (
                    qx + QUIET_MODULES as f32 * cell,
                    top + QUIET_MODULES as f32 * cell,
                );
                let mut rects = Vec::new();
                for y in 0..m.width {
                    let mut x = 0;
                    while x < m.width {
                        if m.is_dark(x, y) {
                            // One rectangle per run of dark modules: fewer path segments.
                            let start = x;
                            while x < m.width && m.is_dark(x, y) {
                                x += 1;
                            }
                            rects.push((
                                origin.0 + start as f32 * cell,
                                origin.1 + y as f32 * cell,
                                (x - start) as f32 * cell,
                                cell,
                            ));
                        } else {
                            x += 1;
                        }
                    }
                }
                self.push(Op::Rects(rects));
            }
            None => self.push(Op::Text {
                x: qx,
                y: top + side / 2.0,
                size: self.s.small,
                bold: false,
                text: "QR code indisponível".to_owned(),
            }),
        }
    }

    /// Title and subtitles; on A4, with the document's QR code and code at the top right, where
    /// whoever checks a paper looks first (the verification section then repeats the code and
    /// the address in words).
    fn masthead(&mut self, doc: &Doc<'_>) {
        let (x0, cw) = (self.x0(), self.cw());
        let qr = first_qr(&doc.blocks);
        let (title, body) = (self.s.title, self.s.body);
        match qr {
            Some((url, code)) if self.s.label_col > 0.0 => {
                let side = 76.0;
                let top = self.y;
                let qx = x0 + cw - side;
                self.qr_symbol(url, qx, top, side);
                let size = self.s.small - 0.5;
                let w = self.m.width(code, size, true);
                self.push(Op::Text {
                    x: qx + (side - w).max(0.0) / 2.0,
                    y: top + side + size,
                    size,
                    bold: true,
                    text: code.to_owned(),
                });
                self.hoisted_qr = true;
                let left = cw - side - 12.0;
                self.y = top + 10.0;
                self.centred_in(x0, left, &doc.title, title, true);
                for sub in &doc.subtitle {
                    self.centred_in(x0, left, sub, body - 0.5, false);
                }
                self.y = self.y.max(top + side + size * 1.6);
            }
            _ => {
                self.centred(&doc.title, title, true);
                for sub in &doc.subtitle {
                    self.centred(sub, body - 0.5, false);
                }
            }
        }
        self.block(&Block::Separator);
    }

    fn image(&mut self, caption: &str, jpeg: Option<&[u8]>) {
        let (x0, cw) = (self.x0(), self.cw());
        let small = self.s.small;
        // Phones shoot JPEG (embedded as is); a PNG (screenshots, the demo's photos) is
        // embedded too, told apart by its signature.
        let decoded = jpeg.map(|j| {
            if j.starts_with(PNG_SIGNATURE) {
                Image::from_png(Data::from(j.to_vec()), true)
            } else {
                Image::from_jpeg(Data::from(j.to_vec()), true)
            }
        });
        let caption = match &decoded {
            Some(Err(_)) => {
                format!("{caption}. Não incluída: o arquivo não é uma imagem JPEG ou PNG legível.")
            }
            _ => caption.to_owned(),
        };
        let cap_lines = self.wrap(&caption, cw, small, false);
        let cap_h = cap_lines.len() as f32 * small * LEADING;
        if let Some(Ok(image)) = decoded {
            let (iw, ih) = image.size();
            let (iw, ih) = (iw.max(1) as f32, ih.max(1) as f32);
            let scale = (cw / iw).min(self.s.image_max_h / ih);
            let (w, h) = (iw * scale, ih * scale);
            self.ensure(h + 4.0 + cap_h);
            self.push(Op::Image {
                x: x0 + (cw - w) / 2.0,
                y: self.y,
                w,
                h,
                image,
            });
            self.y += h + 4.0;
        } else {
            self.ensure(cap_h);
        }
        for l in cap_lines {
            self.line(x0, l, small, false);
        }
        self.y += self.s.body;
    }
}

/// The first bytes of every PNG file.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// The document's first QR code, inside groups too.
fn first_qr<'b>(blocks: &'b [Block<'_>]) -> Option<(&'b str, &'b str)> {
    blocks.iter().find_map(|b| match b {
        Block::Qr { url, code } => Some((url.as_str(), code.as_str())),
        Block::Together(inner) => first_qr(inner),
        _ => None,
    })
}

/// Renders `doc` as a PDF on `paper`.
pub(crate) fn render(doc: &Doc<'_>, paper: Paper) -> Result<Vec<u8>, RenderError> {
    let metrics = Metrics::new()?;
    let s = paper.style();
    let top = s.top;
    let mut l = Layout {
        m: &metrics,
        s,
        pages: vec![Vec::new()],
        y: top,
        hoisted_qr: false,
    };
    l.masthead(doc);
    for b in &doc.blocks {
        l.block(b);
    }
    let end_y = l.y;
    let style = paper.style();
    let pages = l.pages;
    let count = pages.len();

    let regular = Font::new(Data::from(REGULAR), 0)
        .ok_or_else(|| RenderError::Pdf("fonte embutida ilegível".to_owned()))?;
    let bold = Font::new(Data::from(BOLD), 0)
        .ok_or_else(|| RenderError::Pdf("fonte embutida ilegível".to_owned()))?;

    let mut document = Document::new();
    for (i, mut ops) in pages.into_iter().enumerate() {
        let height = match paper {
            Paper::A4 => style.height,
            Paper::Receipt if i + 1 == count => end_y + style.margin,
            Paper::Receipt => MAX_RECEIPT_PAGE_PT,
        };
        if paper == Paper::A4 {
            decorate(&mut ops, doc, &style, &metrics, i + 1, count);
        }
        let settings = PageSettings::from_wh(style.width, height)
            .ok_or_else(|| RenderError::Pdf(format!("página de altura inválida: {height}")))?;
        let mut page = document.start_page_with(settings);
        let mut surface = page.surface();
        for op in ops {
            match op {
                Op::Text {
                    x,
                    y,
                    size,
                    bold: b,
                    text,
                } => {
                    let font = if b { bold.clone() } else { regular.clone() };
                    surface.draw_text(
                        Point::from_xy(x, y),
                        font,
                        size,
                        &text,
                        false,
                        TextDirection::Auto,
                    );
                }
                Op::Rects(rects) => {
                    let mut pb = PathBuilder::new();
                    for (x, y, w, h) in rects {
                        if let Some(r) = Rect::from_xywh(x, y, w, h) {
                            pb.push_rect(r);
                        }
                    }
                    if let Some(path) = pb.finish() {
                        surface.draw_path(&path);
                    }
                }
                Op::Image { x, y, w, h, image } => {
                    if let Some(size) = Size::from_wh(w, h) {
                        surface.push_transform(&Transform::from_translate(x, y));
                        surface.draw_image(image, size);
                        surface.pop();
                    }
                }
            }
        }
        surface.finish();
        page.finish();
    }
    document.set_metadata(
        Metadata::new()
            .title(doc.header.clone())
            .language("pt-BR".to_owned())
            .creator("taxi-fiscal".to_owned())
            .creation_date(pdf_date(doc.created)),
    );
    document
        .finish()
        .map_err(|e| RenderError::Pdf(format!("{e:?}")))
}

/// The A4 header (what the paper is) and footer (its code, "Página i de n").
fn decorate(ops: &mut Vec<Op>, doc: &Doc<'_>, s: &Style, m: &Metrics, page: usize, count: usize) {
    let size = 8.0;
    let y_head = 12.0 * MM;
    ops.push(Op::Text {
        x: s.margin,
        y: y_head,
        size,
        bold: false,
        text: doc.header.clone(),
    });
    ops.push(Op::Rects(vec![(
        s.margin,
        y_head + 3.0,
        s.width - 2.0 * s.margin,
        0.4,
    )]));
    let y_foot = s.height - 10.0 * MM;
    if let Some(code) = &doc.footer_code {
        ops.push(Op::Text {
            x: s.margin,
            y: y_foot,
            size,
            bold: false,
            text: format!("Código de verificação {code}"),
        });
    }
    let label = format!("Página {page} de {count}");
    let w = m.width(&label, size, false);
    ops.push(Op::Text {
        x: s.width - s.margin - w,
        y: y_foot,
        size,
        bold: false,
        text: label,
    });
}

fn pdf_date(at: chrono::DateTime<chrono::Utc>) -> PdfDateTime {
    // Years outside u16 never come from a record; 0 keeps the call total.
    PdfDateTime::new(u16::try_from(at.year()).unwrap_or(0))
        .month(at.month() as u8)
        .day(at.day() as u8)
        .hour(at.hour() as u8)
        .minute(at.minute() as u8)
        .second(at.second() as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}
