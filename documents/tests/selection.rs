//! The edital de chamamento and its published result, read back through poppler: each states
//! the facts it was given (numbers, dates, names, places, the lottery's digest and seed) and the
//! rights of arts. 5 and 2 § único, accents included.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod common;

use chrono::NaiveDate;
use common::*;
use documents::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// `needle` is in `text`, case folded.
fn has(text: &str, needle: &str) {
    assert!(
        text.to_lowercase().contains(&needle.to_lowercase()),
        "missing {needle:?} in:\n{text}"
    );
}

const BODY: &str = "Prefeitura Municipal de Americana — Secretaria de Transportes e Sistema Viário";
const FILING: &str =
    "Unidade de Transportes, Av. Brasil, 85, Centro, de segunda a sexta, das 9h às 16h";

fn sample_edital() -> EditalContent {
    EditalContent {
        issuing_body: BODY.to_owned(),
        number: "001/2026".to_owned(),
        published_on: d(2026, 3, 2),
        vacancies: vec![
            StandPlaces {
                stand: "Ponto da Praça Comendador Müller — Rua Fernando de Camargo".to_owned(),
                places: 2,
            },
            StandPlaces {
                stand: "Ponto do Terminal Rodoviário".to_owned(),
                places: 1,
            },
        ],
        applications_from: d(2026, 3, 23),
        applications_until: d(2026, 4, 3),
        filing_place: FILING.to_owned(),
        reference_date: d(2026, 4, 3),
        certificate_validity_days: 90,
        documents: vec![
            "Cédula de Identidade, comprovando idade mínima de 21 anos (art. 2º, I)".to_owned(),
            "Comprovante de residência no Município há pelo menos 3 anos (art. 2º, III)".to_owned(),
            "Atestado médico de aptidão para a atividade (art. 2º, V)".to_owned(),
        ],
        criteria: "As vagas serão preenchidas nesta ordem de preferência (art. 3º da Lei \
                   4.019/2004): I – os atuais permissionários; II – os motoristas auxiliares; \
                   III – os novos inscritos, por sorteio. O sorteio usará como semente os cinco \
                   prêmios da extração nº 6.012 da Loteria Federal, conhecida em 11/04/2026."
            .to_owned(),
        seed_source: "os cinco prêmios da extração nº 6.012 da Loteria Federal".to_owned(),
        draw_on: d(2026, 4, 11),
        appeal_days: 5,
        registration_days: 30,
        signed_by: "Conceição Araújo — Diretora da Unidade de Transportes".to_owned(),
    }
}

const DIGEST: &str = "9f2c4e1d7a0b3c5e8f6a1d2b4c7e9f0a3b5d8c1e2f4a6b9c0d3e5f7a8b1c2d4e";

fn sample_result() -> ResultContent {
    ResultContent {
        issuing_body: BODY.to_owned(),
        edital_number: "001/2026".to_owned(),
        published_on: d(2026, 4, 15),
        classification: vec![
            RankedLine {
                position: 1,
                inscription: "002".to_owned(),
                name: "Antônio Araújo Simões".to_owned(),
                group: "I".to_owned(),
                basis: RankBasis::Seniority(d(2009, 6, 1)),
                stand: Some("Ponto do Terminal Rodoviário".to_owned()),
                note: None,
            },
            RankedLine {
                position: 2,
                inscription: "004".to_owned(),
                name: "Luís Estêvão Magalhães".to_owned(),
                group: "II".to_owned(),
                basis: RankBasis::Seniority(d(2021, 2, 10)),
                stand: Some("Ponto da Praça Comendador Müller".to_owned()),
                note: None,
            },
            RankedLine {
                position: 3,
                inscription: "001".to_owned(),
                name: "Irene Sá".to_owned(),
                group: "III".to_owned(),
                basis: RankBasis::DrawKey(sha256_hex(b"key 001")),
                stand: Some("Ponto da Praça Comendador Müller".to_owned()),
                note: None,
            },
            RankedLine {
                position: 4,
                inscription: "005".to_owned(),
                name: "Otávio Lemos".to_owned(),
                group: "III".to_owned(),
                basis: RankBasis::DrawKey(sha256_hex(b"key 005")),
                stand: None,
                note: None,
            },
        ],
        refused: vec![RefusedLine {
            inscription: "003".to_owned(),
            name: "Cláudio Ribeiro".to_owned(),
            reasons: vec![
                "Cláudio Ribeiro não apresentou a certidão de antecedentes criminais (art. 2º, IV)."
                    .to_owned(),
                "Cláudio Ribeiro transferiu o alvará 0031 em 10/01/2025 (art. 10, § 2º)."
                    .to_owned(),
            ],
        }],
        lottery: Some(LotteryFacts {
            list_published_on: d(2026, 4, 6),
            list_digest: DIGEST.to_owned(),
            inscriptions: 2,
            seed_source: "os cinco prêmios da extração nº 6.012 da Loteria Federal".to_owned(),
            seed: "12345 67890 11111 22222 33333".to_owned(),
            drawn_on: d(2026, 4, 11),
        }),
        appeal_days: 5,
        appeal_deadline: d(2026, 4, 20),
        filing_place: FILING.to_owned(),
        registration_days: 30,
        signed_by: "Conceição Araújo — Diretora da Unidade de Transportes".to_owned(),
    }
}

#[test]
fn the_edital_states_places_window_documents_criteria_seed_and_rights() {
    let c = sample_edital();
    let pdf = render_edital(&c).unwrap();
    let text = pdf_body_text(&pdf);
    for needle in [
        "EDITAL DE CHAMAMENTO",
        BODY,
        "Edital nº: 001/2026",
        "Publicado em: 02/03/2026",
        "art. 4º",
        // the stands and their places
        "Ponto da Praça Comendador Müller — Rua Fernando de Camargo: 2 vagas",
        "Ponto do Terminal Rodoviário: 1 vaga",
        "Total: 3 vagas",
        // the window and where
        "de 23/03/2026 a 03/04/2026",
        "Av. Brasil, 85",
        // documents (art. 4 § único) and the reference date
        "art. 4º, parágrafo único",
        "Cédula de Identidade, comprovando idade mínima de 21 anos",
        "Atestado médico de aptidão",
        "data de referência de 03/04/2026",
        "nos 90 (noventa) dias anteriores",
        "art. 10, § 2º",
        // criteria, word for word
        "I – os atuais permissionários; II – os motoristas auxiliares",
        // the seed, named in advance, and how to recompute the draw
        "os cinco prêmios da extração nº 6.012 da Loteria Federal",
        "Data do sorteio: 11/04/2026",
        "taxi-fiscal lottery verify",
        "sha256sum",
        // art. 5 and art. 2 § único
        "recurso por escrito ao Prefeito Municipal, dentro do prazo de 5 (cinco) dias contados da publicação do resultado",
        "havida como definitiva (art. 5º)",
        "prazo de 30 (trinta) dias, contados da escolha definitiva",
        "art. 2º, parágrafo único",
        "art. 6º, II",
        "Conceição Araújo — Diretora da Unidade de Transportes",
    ] {
        has(&text, needle);
    }
    let all = pdf_text(&pdf);
    has(&all, "Edital de chamamento nº 001/2026");
    has(&all, "Página 1 de");
    // A public notice: no verification code in the footer.
    assert!(!all.contains("Código de verificação"), "{all}");
    pdf_pages_png(&pdf, "edital-a4");
}

#[test]
fn the_result_states_the_classification_refusals_lottery_and_deadline() {
    let c = sample_result();
    let pdf = render_result(&c).unwrap();
    let text = pdf_body_text(&pdf);
    let key_001 = sha256_hex(b"key 001");
    for needle in [
        "RESULTADO DO EDITAL DE CHAMAMENTO",
        "Resultado publicado em: 15/04/2026",
        "Prazo de recurso: até 20/04/2026",
        // the classification, in order, with group, basis and stand
        "1º — inscrição 002 — Antônio Araújo Simões — grupo I, antiguidade desde 01/06/2009 — escolhido para Ponto do Terminal Rodoviário",
        "2º — inscrição 004 — Luís Estêvão Magalhães — grupo II, antiguidade desde 10/02/2021",
        "3º — inscrição 001 — Irene Sá — grupo III, chave do sorteio",
        &key_001,
        "4º — inscrição 005 — Otávio Lemos",
        "suplente, na ordem desta classificação",
        // the refused, with every reason
        "Inscrição 003 — Cláudio Ribeiro: Cláudio Ribeiro não apresentou a certidão de antecedentes criminais (art. 2º, IV).",
        "transferiu o alvará 0031 em 10/01/2025 (art. 10, § 2º)",
        // the lottery: list, digest, seed
        "Lista do sorteio publicada em: 06/04/2026",
        "Inscrições na lista: 2",
        DIGEST,
        "Semente: 12345 67890 11111 22222 33333",
        "Sorteio realizado em: 11/04/2026",
        "--seed \"12345 67890 11111 22222 33333\"",
        // art. 5 and art. 2 § único
        "recurso por escrito ao Prefeito Municipal, dentro do prazo de 5 (cinco) dias contados da publicação deste resultado em 15/04/2026, até 20/04/2026",
        "Unidade de Transportes, Av. Brasil, 85",
        "prazo de 30 (trinta) dias, contados da escolha definitiva",
        "(art. 6º)",
    ] {
        has(&text, needle);
    }
    // The digest and the keys come back whole on one line each, so they can be copied.
    let raw = pdf_pages_text(&pdf).join("\n");
    assert!(raw.contains(DIGEST), "digest split across lines:\n{raw}");
    assert!(raw.contains(&key_001), "key split across lines:\n{raw}");
    has(
        &pdf_text(&pdf),
        "Resultado do edital de chamamento nº 001/2026",
    );
    pdf_pages_png(&pdf, "edital-result-a4");
}

#[test]
fn a_result_without_group_iii_says_there_was_no_draw() {
    let mut c = sample_result();
    c.lottery = None;
    c.classification.retain(|r| r.group != "III");
    c.refused.clear();
    let text = pdf_body_text(&render_result(&c).unwrap());
    has(
        &text,
        "Não houve sorteio: nenhum inscrito concorre no grupo III.",
    );
    has(&text, "Inscritos não habilitados (art. 2º) Nenhum.");
    assert!(!text.contains("Resumo SHA-256"), "{text}");
}

#[test]
fn a_line_excluded_by_appeal_says_so_instead_of_a_stand() {
    let mut c = sample_result();
    c.classification[1].stand = None;
    c.classification[1].note = Some("excluído pelo recurso nº 2".to_owned());
    let text = pdf_body_text(&render_result(&c).unwrap());
    has(
        &text,
        "grupo II, antiguidade desde 10/02/2021 — excluído pelo recurso nº 2",
    );
}

#[test]
fn a_result_longer_than_other_lists_prints_every_line_over_several_pages() {
    // 250 lines: more than the 200 items other lists print, fewer than MAX_RESULT_LINES.
    let mut c = sample_result();
    let template = c.classification[3].clone();
    c.classification = (1..=250)
        .map(|i| RankedLine {
            position: i,
            inscription: format!("{i:03}"),
            name: format!("Candidata {i}"),
            basis: RankBasis::DrawKey(sha256_hex(format!("k{i}").as_bytes())),
            ..template.clone()
        })
        .collect();
    let pdf = render_result(&c).unwrap();
    let text = pdf_body_text(&pdf);
    has(&text, "1º — inscrição 001 — Candidata 1 —");
    has(&text, "250º — inscrição 250 — Candidata 250 —");
    assert!(!text.contains("itens não impressos"), "nothing cut");
    assert!(pdf_pages_text(&pdf).len() > 2);
}

#[test]
fn the_same_content_gives_the_same_bytes_dated_by_its_publication() {
    let e = sample_edital();
    assert_eq!(render_edital(&e).unwrap(), render_edital(&e).unwrap());
    let r = sample_result();
    let pdf = render_result(&r).unwrap();
    assert_eq!(pdf, render_result(&r).unwrap());
    assert!(
        pdf.windows(16).any(|w| w == b"D:20260415120000"),
        "creation date is not the result's publication"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// Whatever text the office typed renders.
    #[test]
    fn any_text_renders(name in "\\PC{0,80}", reason in "(?s).{0,200}", stand in "\\PC{0,60}") {
        let mut e = sample_edital();
        e.vacancies[0].stand = stand.clone();
        e.criteria = reason.clone();
        render_edital(&e).unwrap();
        let mut r = sample_result();
        r.classification[0].name = name.clone();
        r.classification[0].stand = Some(stand);
        r.refused[0].reasons = vec![reason];
        r.refused[0].name = name;
        render_result(&r).unwrap();
    }
}
