//! The PDFs, read back through poppler: what each document states is in its text, accents
//! included, and a picture of every page is kept as an artifact.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod common;

use common::*;
use documents::*;

/// `needle` is in `text`, case folded (so "ÓRGÃO" finds "Órgão autuador"): accents must come
/// back from the PDF exactly, letter case need not.
fn has(text: &str, needle: &str) {
    assert!(
        text.to_lowercase().contains(&needle.to_lowercase()),
        "missing {needle:?} in:\n{text}"
    );
}

#[test]
fn auto_pdf_a4_states_everything_the_auto_does() {
    let c = sample_auto();
    let pdf = render_auto(&c, Format::PdfA4).unwrap();
    let text = pdf_body_text(&pdf);
    for needle in [
        "AUTO DE INFRAÇÃO",
        "GM-2026-000123",
        "10/03/2026 14:05",
        "horário de Brasília",
        "Praça Comendador Müller",
        "-22.739200, -47.331400 (precisão de 8 m)",
        "ABC1D23",
        "Fiscal João Conceição, em 10/03/2026 14:08",
        "ALV-0457",
        "Antônio Araújo Simões",
        "Maria da Conceição Gonçalves",
        "art. 32, § 2º",
        "respondendo ambos solidariamente",
        "Órgão autuador",
        // Accents as poppler reads them back from the embedded font.
        "ÓRGÃO",
        "ciência",
        "notificação",
        "Lei 4.019/2004, art. 31, VI",
        "Luís Estêvão Magalhães",
        "vinte minutos",
        "Sem assinatura do autuado: recusou-se a assinar",
        "Unidade de Transportes",
        "Nada se paga no local",
        "notificação",
        "ciência",
        "art. 34",
        "art. 33",
        "art. 35",
        "10 (dez) dias",
        &c.verification.as_ref().unwrap().code.to_string(),
        "Impresso em 10/03/2026 14:21",
    ] {
        has(&text, needle);
    }
    has(&pdf_text(&pdf), "Página 1 de");
    assert!(text.contains("AUTO DE INFRAÇÃO") && text.contains("Órgão autuador"));
    let pages = pdf_pages_png(&pdf, "auto-a4");
    assert!(!pages.is_empty());
}

#[test]
fn auto_pdf_receipt_is_one_page_80mm_wide() {
    let c = sample_auto();
    let pdf = render_auto(&c, Format::PdfReceipt).unwrap();
    let text = pdf_text(&pdf);
    has(&text, "AUTO DE INFRAÇÃO");
    has(&text, "ABC1D23");
    has(&text, &c.verification.as_ref().unwrap().code.to_string());
    let pages = pdf_pages_png(&pdf, "auto-receipt");
    assert_eq!(pages.len(), 1);
    // 80 mm at 80 dpi is 252 pixels.
    let (w, h, _) = pdf_page_grey(&pdf, 1, 80);
    assert!((250..=254).contains(&w), "width {w}");
    assert!(h > w, "a receipt is taller than wide: {w}×{h}");
}

#[test]
fn transgression_report_has_its_own_title_article_and_gravity() {
    let c = sample_transgression();
    let pdf = render_auto(&c, Format::PdfA4).unwrap();
    let text = pdf_body_text(&pdf);
    for needle in [
        "COMUNICAÇÃO DE TRANSGRESSÃO",
        "art. 17, § 2º",
        "Gravidade: grave",
        "aguardando numeração",
        "Coordenador do ponto",
        "Irene Sá",
        "Otávio Lemos",
        "Assinado pelo autuado",
        "DEF4G56",
    ] {
        has(&text, needle);
    }
    pdf_pages_png(&pdf, "transgression-a4");
}

#[test]
fn notification_pdf_has_what_an_intimacao_needs() {
    let c = sample_notification();
    let pdf = render_notification(&c).unwrap();
    let text = pdf_body_text(&pdf);
    for needle in [
        "NOTIFICAÇÃO DE PENALIDADE",
        "NP-2026-000012",
        // who is notified, and by which body
        "Maria da Conceição Gonçalves",
        "Rua das Paineiras",
        "Unidade de Transportes",
        // purpose, facts and grounds
        "Finalidade",
        "Lei 9.784/1999, art. 26",
        "GM-2026-000123",
        "ABC1D23",
        "Lei 4.019/2004, art. 31, VI",
        // decision, penalty and amount
        "Multa",
        "Lei 4.019/2004, art. 32, II",
        "14/04/2026",
        "R$ 612,35",
        "corrigidos pelo IPCA",
        // rights
        "uma única vez ao Prefeito Municipal",
        "art. 33",
        "10 dias contados da data em que tomar ciência",
        "art. 35",
        "reconsiderar a decisão (art. 34)",
        "O processo continua mesmo que você não responda",
        // where and how
        "Av. Brasil, 85",
        "pessoalmente ou por procurador",
        // ciência
        "Ciência",
        "Data da ciência",
        "Assinatura do notificado",
        &c.verification.code.to_string(),
    ] {
        has(&text, needle);
    }
    has(&pdf_text(&pdf), "Página 1 de");
    pdf_pages_png(&pdf, "notification-a4");
}

#[test]
fn the_ciencia_block_is_never_split_across_pages() {
    // Facts of growing length move the block down a page line by line: wherever it falls, the
    // declaration and both signature lines share a page.
    let mut c = sample_notification();
    let facts = c.autos[0].facts.clone();
    for extra in 0..24 {
        c.autos[0].facts = format!(
            "{facts}{}",
            " Mais um trecho do relato com palavras.".repeat(extra * 3)
        );
        let pages = pdf_pages_text(&render_notification(&c).unwrap());
        let page = pages
            .iter()
            .find(|p| p.contains("Declaro que recebi"))
            .unwrap();
        assert!(
            page.contains("Data da ciência")
                && page.contains("Assinatura do notificado")
                && page.contains("Servidor que entregou"),
            "split with {extra}: {page}"
        );
    }
}

#[test]
fn case_file_pdf_embeds_the_photo_and_says_which_is_missing() {
    let c = sample_case_file();
    let pdf = render_case_file(&c).unwrap();
    let text = pdf_body_text(&pdf);
    for needle in [
        "CÓPIA DO PROCESSO",
        "Auto de infração nº GM-2026-000123",
        "recurso ao Prefeito Municipal",
        "Veículo fora do ponto designado",
        "Emitiu o auto",
        "Decidiu aplicar multa",
        "NP-2026-000012",
        &format!("Foto 1 de 2 — SHA-256 {}", c.photos[0].sha256),
        "Foto 2 de 2",
        "Não incluída: o arquivo não chegou ao servidor",
        "Gerado por Regina Álvares em 20/04/2026 09:00",
    ] {
        has(&text, needle);
    }
    // The JPEG is embedded as is (DCT), not re-encoded.
    assert_eq!(
        pdf_image_encodings(&pdf),
        ["jpeg"],
        "one JPEG image in the PDF"
    );
    pdf_pages_png(&pdf, "case-file-a4");
}

#[test]
fn a_photo_that_does_not_match_its_digest_is_not_embedded() {
    let mut c = sample_case_file();
    c.photos[0].sha256 = "00".repeat(32);
    let pdf = render_case_file(&c).unwrap();
    has(&pdf_text(&pdf), "não confere com o SHA-256 registrado");
    assert!(pdf_image_encodings(&pdf).is_empty());
}

#[test]
fn the_same_content_gives_the_same_pdf_bytes() {
    let a = sample_auto();
    for f in [Format::PdfA4, Format::PdfReceipt] {
        assert_eq!(render_auto(&a, f).unwrap(), render_auto(&a, f).unwrap());
    }
    let n = sample_notification();
    assert_eq!(
        render_notification(&n).unwrap(),
        render_notification(&n).unwrap()
    );
    let c = sample_case_file();
    assert_eq!(render_case_file(&c).unwrap(), render_case_file(&c).unwrap());
    // And the date inside is the content's, not the clock's.
    let pdf = render_notification(&n).unwrap();
    assert!(
        pdf.windows(16).any(|w| w == b"D:20260415130000"),
        "creation date is not the notification's"
    );
}

#[test]
fn long_facts_break_across_a4_pages_with_numbered_footers() {
    let mut c = sample_auto();
    c.facts = "Relato longo do ocorrido com muitas palavras. ".repeat(200);
    let pdf = render_auto(&c, Format::PdfA4).unwrap();
    let text = pdf_text(&pdf);
    has(&text, "Página 1 de 3");
    has(&text, "Página 3 de 3");
}

#[test]
fn the_pdf_qr_codes_read_back_as_the_verification_address() {
    let c = sample_notification();
    let pdf = render_notification(&c).unwrap();
    // On A4 the QR code heads the first page.
    let (w, h, px) = pdf_page_grey(&pdf, 1, 150);
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| px[y * w + x]);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code on the first page");
    let (_, content) = grids[0].decode().unwrap();
    assert_eq!(content, c.verification.url());

    // The receipt's, at the end of its only page.
    let a = sample_auto();
    let pdf = render_auto(&a, Format::PdfReceipt).unwrap();
    let (w, h, px) = pdf_page_grey(&pdf, 1, 200);
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| px[y * w + x]);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code on the receipt");
    assert_eq!(grids[0].decode().unwrap().1, a.verification.unwrap().url());
}

#[test]
fn a_receipt_taller_than_the_page_limit_goes_on_in_pages_no_taller_than_it() {
    let short = pdf_page_sizes(&render_auto(&sample_auto(), Format::PdfReceipt).unwrap());
    assert_eq!(short.len(), 1);
    assert!(
        (short[0].0 - 226.77).abs() < 0.1,
        "80 mm wide: {:?}",
        short[0]
    );
    assert!(short[0].1 < MAX_RECEIPT_PAGE_PT);

    let mut c = sample_auto();
    let w = c.witnesses[0].clone();
    c.witnesses = (0..80)
        .map(|i| {
            let mut w = w.clone();
            w.party.name = format!("Testemunha {i}");
            w.statement = "Declaração longa. ".repeat(40);
            w
        })
        .collect();
    let pdf = render_auto(&c, Format::PdfReceipt).unwrap();
    let sizes = pdf_page_sizes(&pdf);
    assert!(sizes.len() > 1, "{sizes:?}");
    assert!(
        sizes
            .iter()
            .all(|&(w, h)| (w - 226.77).abs() < 0.1 && h <= MAX_RECEIPT_PAGE_PT)
    );
    let text = pdf_text(&pdf);
    has(&text, "Testemunha 0 ");
    has(&text, "Testemunha 79 ");
}

#[test]
fn facts_at_the_printed_limit_print_whole_on_a4_and_one_over_is_cut_with_a_note() {
    let mut c = sample_auto();
    c.facts = "palavra ".repeat(MAX_PRINTED_TEXT_CHARS / 8);
    assert_eq!(c.facts.chars().count(), MAX_PRINTED_TEXT_CHARS);
    let text = pdf_body_text(&render_auto(&c, Format::PdfA4).unwrap());
    assert!(!text.contains("texto cortado"));
    assert_eq!(text.matches("palavra").count(), MAX_PRINTED_TEXT_CHARS / 8);

    c.facts.push('x');
    let text = pdf_body_text(&render_auto(&c, Format::PdfA4).unwrap());
    has(
        &text,
        "[texto cortado: 1 caracteres não impressos; a íntegra está no registro]",
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Any text a caller puts in (control characters, emoji, scripts the font lacks, very long
    /// words) renders in every format.
    #[test]
    fn any_text_renders_in_every_format(facts in "\\PC{0,300}", place in "(?s).{0,80}", name in "\\PC{0,60}") {
        let mut c = sample_auto();
        c.facts = facts;
        c.place = Some(place);
        c.driver.name = name;
        for f in Format::ALL {
            let bytes = render_auto(&c, f).unwrap();
            if !f.is_pdf() {
                documents::escpos::decode(&bytes).unwrap();
            }
        }
    }
}

#[test]
fn a_png_photo_is_embedded_in_the_case_file_and_bytes_that_are_no_image_are_named() {
    // A 4×3 RGB PNG, as a screenshot or the demo's sample photos are.
    let mut png = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png, 4, 3);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&[200u8; 4 * 3 * 3]).unwrap();
    }
    let mut c = sample_case_file();
    c.photos[0].sha256 = sha256_hex(&png);
    c.photos[0].jpeg = Some(png);
    let pdf = render_case_file(&c).unwrap();
    assert_eq!(pdf_image_encodings(&pdf).len(), 1, "the PNG is embedded");
    let text = pdf_text(&pdf);
    assert!(!text.contains("não é uma imagem"), "{text}");

    let junk = b"not an image at all".to_vec();
    c.photos[0].sha256 = sha256_hex(&junk);
    c.photos[0].jpeg = Some(junk);
    let pdf = render_case_file(&c).unwrap();
    assert!(pdf_image_encodings(&pdf).is_empty());
    has(&pdf_text(&pdf), "não é uma imagem JPEG ou PNG legível");
}
