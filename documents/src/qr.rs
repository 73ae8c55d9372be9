//! The QR code of a verification address, as a square of modules both back-ends draw
//! themselves (vector squares in a PDF, a raster bit image on thermal paper).

use qrcode::{Color, EcLevel, QrCode};

/// Modules of quiet zone the QR specification asks around the symbol.
pub(crate) const QUIET_MODULES: usize = 4;

/// A QR symbol: `width` × `width` modules, row by row, `true` for dark.
#[derive(Debug)]
pub(crate) struct Modules {
    pub width: usize,
    pub dark: Vec<bool>,
}

impl Modules {
    pub(crate) fn is_dark(&self, x: usize, y: usize) -> bool {
        self.dark.get(y * self.width + x).copied().unwrap_or(false)
    }
}

/// The symbol of `url` at error correction level M (15 %: survives a crease or a smudge on
/// thermal paper while keeping a verification address at version 4 or so). `None` when the
/// text does not fit any QR version; the paper then prints the code and address alone.
pub(crate) fn modules(url: &str) -> Option<Modules> {
    let code = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).ok()?;
    let width = code.width();
    let dark = code
        .to_colors()
        .into_iter()
        .map(|c| c == Color::Dark)
        .collect();
    Some(Modules { width, dark })
}
