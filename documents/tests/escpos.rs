//! The ESC/POS bytes, read back with `documents::escpos::decode`: two copies with their labels,
//! code page 860 selected, no line wider than the paper, the QR code present and readable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod common;

use common::*;
use documents::escpos::{self, COLUMNS_58, COLUMNS_80, DecodeError, Decoded, Raster};
use documents::*;

fn decoded(c: &AutoContent, f: Format) -> Decoded {
    escpos::decode(&render_auto(c, f).unwrap()).unwrap()
}

fn qr_content(r: &Raster) -> String {
    let mut img =
        rqrr::PreparedImage::prepare_from_bitmap(r.width, r.height, |x, y| r.is_black(x, y));
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the raster");
    grids[0].decode().unwrap().1
}

#[test]
fn an_auto_prints_two_cut_copies_within_the_columns_with_the_qr_code() {
    let c = sample_auto();
    let url = c.verification.as_ref().unwrap().url();
    let code = c.verification.as_ref().unwrap().code.to_string();
    for (format, cols, dots) in [
        (Format::EscPos58, COLUMNS_58, escpos::DOTS_58),
        (Format::EscPos80, COLUMNS_80, escpos::DOTS_80),
    ] {
        let bytes = render_auto(&c, format).unwrap();
        let d = escpos::decode(&bytes).unwrap();
        // Kept for a look: the bytes, and the text as the printer would print it.
        let name = format.as_str();
        std::fs::write(artifacts_dir().join(format!("auto-{name}.bin")), &bytes).unwrap();
        let copies: Vec<String> = d.copies.iter().map(|c| c.text()).collect();
        std::fs::write(
            artifacts_dir().join(format!("auto-{name}.txt")),
            copies.join("\n\n-------- corte --------\n\n"),
        )
        .unwrap();
        assert_eq!(d.code_page, Some(escpos::CODE_PAGE_860), "{format:?}");
        assert_eq!(d.resets, 2, "ESC @ before each copy");
        assert_eq!(d.copies.len(), 2, "{format:?}: two copies, each cut");
        assert!(d.uncut.items.is_empty(), "nothing after the last cut");
        for (copy, label) in d.copies.iter().zip(["VIA DO AUTUADO", "VIA DO ÓRGÃO"]) {
            let text = copy.text();
            for line in copy.lines() {
                assert!(
                    line.text.chars().count() <= cols,
                    "{format:?}: {} columns > {cols}: {:?}",
                    line.text.chars().count(),
                    line.text
                );
            }
            let title = copy.lines().next().unwrap();
            assert_eq!(title.text, "AUTO DE INFRAÇÃO");
            assert!(title.bold && title.centred && title.enlarged);
            assert!(
                copy.lines().any(|l| l.text.contains(label) && l.bold),
                "{label}"
            );
            for needle in [
                "GM-2026-000123",
                "10/03/2026 14:05",
                "ABC1D23",
                "ALV-0457",
                "Antônio Araújo Simões",
                "Maria da Conceição Gonçalves",
                "art. 32, par. 2º",
                "Lei 4.019/2004, art. 31, VI",
                "Luís Estêvão Magalhães",
                "recusou-se a assinar",
                "Nada se paga no local",
                "notificação",
                "ciência",
                "(art. 34)",
                &code,
                "Impresso em 10/03/2026 14:21",
            ] {
                let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    flat.contains(needle),
                    "{format:?} {label}: missing {needle:?} in\n{text}"
                );
            }
            let rasters: Vec<_> = copy.rasters().collect();
            assert_eq!(rasters.len(), 1, "one QR code per copy");
            assert!(rasters[0].width <= dots, "raster wider than the paper");
            assert!(rasters[0].centred);
            assert_eq!(qr_content(rasters[0]), url);
        }
        // Labels are bold: the field "Placa" starts bold and the plate follows.
        let placa = d.copies[0]
            .lines()
            .find(|l| l.text.starts_with("Placa:"))
            .unwrap();
        assert!(placa.bold);
    }
}

#[test]
fn a_transgression_report_prints_its_title_and_gravity() {
    let c = sample_transgression();
    let d = decoded(&c, Format::EscPos58);
    assert_eq!(d.copies.len(), 2);
    let text = d.copies[1].text();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "COMUNICAÇÃO DE TRANSGRESSÃO",
        "VIA DO ÓRGÃO",
        "art. 17, par. 2º",
        "Gravidade: grave",
        "aguardando numeração",
        "Irene Sá",
    ] {
        assert!(flat.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn long_words_and_long_facts_never_exceed_the_columns() {
    let mut c = sample_auto();
    c.facts = format!("{} {}", "x".repeat(100), "palavra ".repeat(60));
    c.place = Some("Ã".repeat(70));
    for (f, cols) in [
        (Format::EscPos58, COLUMNS_58),
        (Format::EscPos80, COLUMNS_80),
    ] {
        let d = decoded(&c, f);
        for copy in &d.copies {
            assert!(copy.lines().all(|l| l.text.chars().count() <= cols));
            assert!(copy.text().contains(&"x".repeat(cols)));
        }
    }
}

#[test]
fn facts_at_the_thermal_limit_print_whole_and_one_over_is_cut_with_a_note() {
    let mut c = sample_auto();
    c.facts = "a".repeat(MAX_THERMAL_TEXT_CHARS);
    let text = decoded(&c, Format::EscPos80).copies[0].text();
    assert!(!text.contains("texto cortado"));
    assert!(text.matches('a').count() >= MAX_THERMAL_TEXT_CHARS);

    c.facts = "a".repeat(MAX_THERMAL_TEXT_CHARS + 1);
    let text = decoded(&c, Format::EscPos80).copies[0].text();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("texto cortado: 1 caracteres não impressos"),
        "{flat}"
    );
    // The PDF prints the whole text.
    let pdf = render_auto(&c, Format::PdfA4).unwrap();
    assert!(!pdf_text(&pdf).contains("texto cortado"));
}

#[test]
fn the_same_content_gives_the_same_escpos_bytes() {
    let c = sample_auto();
    for f in [Format::EscPos58, Format::EscPos80] {
        assert_eq!(render_auto(&c, f).unwrap(), render_auto(&c, f).unwrap());
    }
}

#[test]
fn the_decoder_refuses_what_it_does_not_know() {
    assert!(matches!(
        escpos::decode(&[0x1b, b'@', 0x1b, b'Z']),
        Err(DecodeError::Unknown { offset: 2, .. })
    ));
    assert!(matches!(
        escpos::decode(&[0x1b, b'@', 0x84]),
        Err(DecodeError::NoCodePage {
            offset: 2,
            byte: 0x84
        })
    ));
    assert!(matches!(
        escpos::decode(&[0x1b, b't', 16]),
        Err(DecodeError::UnknownCodePage(16))
    ));
    assert!(matches!(
        escpos::decode(&[0x1d, b'v', b'0', 0, 2, 0, 5, 0, 0xff]),
        Err(DecodeError::Truncated { .. })
    ));
    let d = escpos::decode(&[0x1b, b't', 3, 0x84, b'o', b'\n', 0x1d, b'V', 1]).unwrap();
    assert_eq!(d.copies.len(), 1);
    assert_eq!(d.copies[0].text(), "ão");
}

#[test]
fn every_format_renders_an_auto_and_a_report() {
    for f in Format::ALL {
        assert!(render_auto(&sample_auto(), f).is_ok(), "{f:?}");
        assert!(render_auto(&sample_transgression(), f).is_ok(), "{f:?}");
    }
}

proptest::proptest! {
    /// Whatever bytes it is given, the decoder answers (a decoding or an error), never panics:
    /// other crates' tests feed it what their code produced.
    #[test]
    fn the_decoder_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let _ = escpos::decode(&bytes);
    }

    /// Nor on a real document cut anywhere.
    #[test]
    fn the_decoder_never_panics_on_a_cut_document(cut in 0usize..20_000) {
        let bytes = render_auto(&sample_auto(), Format::EscPos58).unwrap();
        let _ = escpos::decode(&bytes[..cut.min(bytes.len())]);
    }
}

#[test]
fn an_auto_without_a_device_key_says_it_has_no_code_and_prints_no_qr() {
    let mut c = sample_auto();
    c.verification = None;
    c.number = None;
    let d = decoded(&c, Format::EscPos58);
    for copy in &d.copies {
        assert_eq!(copy.rasters().count(), 0);
        let flat = copy.text().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Documento sem código de verificação"),
            "{flat}"
        );
        assert!(flat.contains("Número: aguardando numeração"), "{flat}");
    }
    let text = pdf_text(&render_auto(&c, Format::PdfA4).unwrap());
    assert!(
        text.contains("Documento sem código de verificação"),
        "{text}"
    );
    assert!(
        !text.contains("Código de verificação"),
        "no code in the footer: {text}"
    );
}
