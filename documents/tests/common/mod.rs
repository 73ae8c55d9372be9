//! Sample contents and the tools the renderer tests share: poppler's `pdftotext` and
//! `pdftoppm`, and the artifacts directory where page pictures are kept.
#![allow(dead_code, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;
use std::process::Command;

use chrono::{DateTime, NaiveDate, Utc};
use documents::*;
use rust_decimal_macros::dec;

pub fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

pub fn verification(seed: &[u8]) -> Verification {
    Verification {
        code: VerificationCode::derive(b"taxi-fiscal/test/v1", seed),
        base_url: "https://fiscal.americana.sp.gov.br".to_owned(),
    }
}

/// An auto de infração against an auxiliary driver (so the holder is charged too, art. 32
/// § 2), with a witness and no signature.
pub fn sample_auto() -> AutoContent {
    AutoContent {
        kind: AutoKind::Infraction,
        number: Some("GM-2026-000123".to_owned()),
        issuing_body: "Prefeitura Municipal de Americana — Guarda Municipal".to_owned(),
        occurred_at: at("2026-03-10T17:05:00Z"),
        issued_at: Some(at("2026-03-10T17:20:00Z")),
        place: Some("Ponto da Praça Comendador Müller, Rua Fernando de Camargo".to_owned()),
        position: Some((-22.739_2, -47.331_4, Some(8.0))),
        plate: Some("ABC1D23".to_owned()),
        vehicle_confirmed: Some(("Fiscal João Conceição".to_owned(), at("2026-03-10T17:08:00Z"))),
        permit_number: Some("ALV-0457".to_owned()),
        driver: Party {
            name: "Antônio Araújo Simões".to_owned(),
            role: "motorista auxiliar".to_owned(),
            document: Some("CNH 01234567890".to_owned()),
        },
        holder: Some(Party {
            name: "Maria da Conceição Gonçalves".to_owned(),
            role: "titular do alvará".to_owned(),
            document: Some("Alvará ALV-0457".to_owned()),
        }),
        officer: Party {
            name: "João Conceição".to_owned(),
            role: "guarda municipal".to_owned(),
            document: Some("matrícula 4471".to_owned()),
        },
        gravity: None,
        legal_basis: vec![BasisLine {
            citation: "Lei 4.019/2004, art. 31, VI".to_owned(),
            description: "Não obedecer à permanência no ponto ao qual foi destinado".to_owned(),
        }],
        facts: "Veículo estacionado fora do ponto designado, em frente ao hospital, aguardando passageiros; o condutor não apresentou justificativa. Ação às 14h05 após abordagem.".to_owned(),
        witnesses: vec![WitnessLine {
            party: Party {
                name: "Luís Estêvão Magalhães".to_owned(),
                role: "testemunha".to_owned(),
                document: Some("RG 12.345.678-9".to_owned()),
            },
            statement: "Vi o táxi parado em frente ao hospital por cerca de vinte minutos.".to_owned(),
        }],
        signature: SignatureLine::Missing {
            reason: "recusou-se a assinar".to_owned(),
        },
        verification: Some(verification(b"auto")),
        printed_at: at("2026-03-10T17:21:00Z"),
    }
}

/// A coordinator's report of a grave transgression (art. 17 § 2).
pub fn sample_transgression() -> AutoContent {
    AutoContent {
        kind: AutoKind::Transgression,
        number: None,
        issuing_body: "Coordenação do Ponto Terminal Rodoviário".to_owned(),
        occurred_at: at("2026-04-02T12:30:00Z"),
        issued_at: Some(at("2026-04-02T13:00:00Z")),
        place: Some("Ponto do Terminal Rodoviário".to_owned()),
        position: None,
        plate: Some("DEF4G56".to_owned()),
        vehicle_confirmed: Some((
            "Coordenador Sebastião Prado".to_owned(),
            at("2026-04-02T12:40:00Z"),
        )),
        permit_number: Some("ALV-0112".to_owned()),
        driver: Party {
            name: "Cláudio Ribeiro".to_owned(),
            role: "titular do alvará".to_owned(),
            document: None,
        },
        holder: None,
        officer: Party {
            name: "Sebastião Prado".to_owned(),
            role: "coordenador do ponto".to_owned(),
            document: None,
        },
        gravity: Some("grave".to_owned()),
        legal_basis: vec![BasisLine {
            citation: "Lei 4.019/2004, art. 19, VII".to_owned(),
            description: "Promover discussões e algazarras no ponto".to_owned(),
        }],
        facts:
            "Discussão em voz alta com palavrões contra colegas no ponto, diante de passageiros."
                .to_owned(),
        witnesses: vec![
            WitnessLine {
                party: Party {
                    name: "Irene Sá".to_owned(),
                    role: "testemunha".to_owned(),
                    document: None,
                },
                statement: "Presenciei a discussão.".to_owned(),
            },
            WitnessLine {
                party: Party {
                    name: "Otávio Lemos".to_owned(),
                    role: "testemunha".to_owned(),
                    document: None,
                },
                statement: String::new(),
            },
        ],
        signature: SignatureLine::Signed {
            sha256: "9f2c4e7a1b3d5f60".to_owned(),
        },
        verification: Some(verification(b"transgression")),
        printed_at: at("2026-04-02T13:01:00Z"),
    }
}

/// A notification of a fine.
pub fn sample_notification() -> NotificationContent {
    let a = sample_auto();
    NotificationContent {
        number: "NP-2026-000012".to_owned(),
        authority: "Prefeitura Municipal de Americana — Secretaria de Transportes e Sistema Viário — Unidade de Transportes".to_owned(),
        issued_at: at("2026-04-15T13:00:00Z"),
        addressee: a.holder.clone().unwrap(),
        addressee_address: Some("Rua das Paineiras, 120, Jardim São Paulo, Americana-SP".to_owned()),
        autos: vec![AutoRef {
            number: a.number.clone().unwrap(),
            occurred_at: a.occurred_at,
            plate: a.plate.clone(),
            facts: a.facts.clone(),
            legal_basis: a.legal_basis.clone(),
        }],
        decision: DecisionLine {
            penalty: "Multa".to_owned(),
            citation: "Lei 4.019/2004, art. 32, II".to_owned(),
            decided_on: NaiveDate::from_ymd_opt(2026, 4, 14).unwrap(),
            decided_by: "Chefe da Unidade de Transportes Regina Álvares".to_owned(),
        },
        amount: Some(AmountLine {
            amount: dec!(612.3456),
            basis: "R$ 240,00 de 2004 corrigidos pelo IPCA até março de 2026".to_owned(),
        }),
        filing_place: "protocolo da Unidade de Transportes, Av. Brasil, 85, Centro, de segunda a sexta, das 8h às 17h, ou transportes@americana.sp.gov.br".to_owned(),
        appeal_days: 10,
        verification: verification(b"notification"),
    }
}

/// A small real JPEG (a 64×48 gradient), made with jpeg-encoder.
pub fn sample_jpeg() -> Vec<u8> {
    let (w, h) = (64u16, 48u16);
    let mut rgb = Vec::new();
    for y in 0..h {
        for x in 0..w {
            rgb.extend_from_slice(&[(x * 4) as u8, (y * 5) as u8, 128]);
        }
    }
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, 85)
        .encode(&rgb, w, h, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    out
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A case file with one embedded photo and one that never reached the server.
pub fn sample_case_file() -> CaseFileContent {
    let jpeg = sample_jpeg();
    CaseFileContent {
        auto: sample_auto(),
        verdict: vec![
            "Veículo fora do ponto designado no horário obrigatório (art. 16, I).".to_owned(),
            "Alvará em dia; vistoria em dia.".to_owned(),
        ],
        timeline: vec![
            TimelineEntry {
                at: at("2026-03-10T17:20:00Z"),
                who: "Fiscal João Conceição (tablet GM-07)".to_owned(),
                what: "Emitiu o auto.".to_owned(),
            },
            TimelineEntry {
                at: at("2026-04-14T18:00:00Z"),
                who: "Regina Álvares".to_owned(),
                what: "Decidiu aplicar multa.".to_owned(),
            },
        ],
        photos: vec![
            PhotoContent {
                sha256: sha256_hex(&jpeg),
                jpeg: Some(jpeg),
            },
            PhotoContent {
                sha256: "ab".repeat(32),
                jpeg: None,
            },
        ],
        notifications: vec![
            "NP-2026-000012, emitida em 15/04/2026; ciência em 16/04/2026".to_owned(),
        ],
        witness_contacts: vec![
            "Maria da Silva — testemunha — CPF 123.456.789-09; telefone (19) 99999-0000; \
             endereço Rua das Flores, 10, Centro"
                .to_owned(),
        ],
        generated_at: at("2026-04-20T12:00:00Z"),
        generated_by: "Regina Álvares".to_owned(),
    }
}

fn poppler(tool: &str) -> PathBuf {
    let found = Command::new(tool).arg("-v").output().is_ok();
    assert!(
        found,
        "`{tool}` not found: install Debian's package poppler-utils (apt-get install -y poppler-utils); scripts/test does it"
    );
    PathBuf::from(tool)
}

/// The text of a PDF as poppler reads it (`pdftotext -layout`), one string per page.
pub fn pdf_pages_text(pdf: &[u8]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pdf");
    std::fs::write(&input, pdf).unwrap();
    let out = Command::new(poppler("pdftotext"))
        .args(["-layout", "-enc", "UTF-8"])
        .arg(&input)
        .arg("-")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pdftotext failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut pages: Vec<String> = text.split('\x0c').map(str::to_owned).collect();
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    pages
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// All the text of a PDF, spaces collapsed (headers and footers included).
pub fn pdf_text(pdf: &[u8]) -> String {
    collapse(&pdf_pages_text(pdf).join(" "))
}

/// The text of a PDF without the A4 page header (first line) and footer (the line with
/// "Página i de n"), so that a sentence running over a page break reads as one.
pub fn pdf_body_text(pdf: &[u8]) -> String {
    let mut body = String::new();
    for page in pdf_pages_text(pdf) {
        let lines: Vec<&str> = page.lines().filter(|l| !l.trim().is_empty()).collect();
        for l in lines.iter().skip(1) {
            if !l.contains("Página ") {
                body.push_str(l);
                body.push('\n');
            }
        }
    }
    collapse(&body)
}

/// Encodings of the images in a PDF, as `pdfimages -list` names them ("jpeg", "image"…).
pub fn pdf_image_encodings(pdf: &[u8]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pdf");
    std::fs::write(&input, pdf).unwrap();
    let out = Command::new(poppler("pdfimages"))
        .arg("-list")
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(8).map(str::to_owned))
        .collect()
}

/// Pages of a PDF (`pdfinfo` would need another tool: count the page pictures instead).
pub fn pdf_pages_png(pdf: &[u8], name: &str) -> Vec<PathBuf> {
    let dir = artifacts_dir();
    let input = dir.join(format!("{name}.pdf"));
    std::fs::write(&input, pdf).unwrap();
    for old in std::fs::read_dir(&dir).unwrap().flatten() {
        let f = old.file_name().to_string_lossy().into_owned();
        if f.starts_with(&format!("{name}-")) && f.ends_with(".png") {
            std::fs::remove_file(old.path()).unwrap();
        }
    }
    let status = Command::new(poppler("pdftoppm"))
        .args(["-png", "-r", "80"])
        .arg(&input)
        .arg(dir.join(name))
        .status()
        .unwrap();
    assert!(status.success(), "pdftoppm failed on {name}");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let f = p.file_name().unwrap().to_string_lossy().into_owned();
            f.starts_with(&format!("{name}-")) && f.ends_with(".png")
        })
        .collect();
    pages.sort();
    pages
}

/// One page of a PDF as a greyscale bitmap (`pdftoppm -gray`, a PGM): width, height, pixels.
pub fn pdf_page_grey(pdf: &[u8], page: usize, dpi: u32) -> (usize, usize, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pdf");
    std::fs::write(&input, pdf).unwrap();
    let out = Command::new(poppler("pdftoppm"))
        .args([
            "-gray",
            "-r",
            &dpi.to_string(),
            "-f",
            &page.to_string(),
            "-l",
            &page.to_string(),
            "-singlefile",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    parse_pgm(&out.stdout)
}

fn parse_pgm(b: &[u8]) -> (usize, usize, Vec<u8>) {
    // "P5\n<w> <h>\n<max>\n" then w*h bytes.
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while !b[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8(b[start..i].to_vec()).unwrap());
    }
    assert_eq!(fields[0], "P5");
    let w: usize = fields[1].parse().unwrap();
    let h: usize = fields[2].parse().unwrap();
    (w, h, b[i + 1..i + 1 + w * h].to_vec())
}

/// Where test artifacts go: `$CARGO_TARGET_DIR/artifacts/documents`, else
/// `<workspace>/target/artifacts/documents` (the browser tests' convention).
pub fn artifacts_dir() -> PathBuf {
    let base = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
    };
    let dir = base.join("artifacts").join("documents");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Width and height in points of each page (`pdfinfo -f 1 -l 9999`).
pub fn pdf_page_sizes(pdf: &[u8]) -> Vec<(f32, f32)> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pdf");
    std::fs::write(&input, pdf).unwrap();
    let out = Command::new(poppler("pdfinfo"))
        .args(["-f", "1", "-l", "9999"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("Page ") && l.contains(" size: "))
        .map(|l| {
            let dims = l.split(" size: ").nth(1).unwrap();
            let mut it = dims.split_whitespace();
            let w: f32 = it.next().unwrap().parse().unwrap();
            it.next();
            let h: f32 = it.next().unwrap().parse().unwrap();
            (w, h)
        })
        .collect()
}
