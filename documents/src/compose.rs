//! What each document says, in which order, in Brazilian Portuguese: content values become a
//! [`Doc`] of blocks, the same for every back-end. The fixed texts (next steps, rights, the
//! ciência block) are written here, once, with the articles of Lei 4.019/2004 and Lei
//! 9.784/1999 they rest on.

use sha2::{Digest, Sha256};

use crate::layout::{Block, Doc};
use crate::limits::{
    MAX_CASE_FILE_PHOTO_BYTES, MAX_CASE_FILE_PHOTOS, MAX_FIELD_CHARS, MAX_LIST_ITEMS,
    MAX_PHOTO_BYTES, MAX_PRINTED_TEXT_CHARS, MAX_THERMAL_TEXT_CHARS,
};
use crate::text::{clip, date, datetime, money};
use crate::{
    AutoContent, AutoKind, CaseFileContent, NotificationContent, Party, SignatureLine, Verification,
};

mod selection;

pub(crate) use selection::{edital, result};

/// The labels of the two thermal copies of an auto.
pub(crate) const AUTO_COPIES: &[&str] = &["VIA DO AUTUADO", "VIA DO ÓRGÃO"];

/// Appends blocks, clipping every text to the limits of the medium.
struct Blocks<'a> {
    text_limit: usize,
    out: Vec<Block<'a>>,
}

impl<'a> Blocks<'a> {
    fn new(thermal: bool) -> Self {
        let text_limit = if thermal {
            MAX_THERMAL_TEXT_CHARS
        } else {
            MAX_PRINTED_TEXT_CHARS
        };
        Self {
            text_limit,
            out: Vec::new(),
        }
    }
    fn heading(&mut self, s: &str) {
        self.out.push(Block::Heading(s.to_owned()));
    }
    fn field(&mut self, label: &str, value: &str) {
        self.out.push(Block::Field {
            label: clip(label, MAX_FIELD_CHARS),
            value: clip(value, MAX_FIELD_CHARS),
        });
    }
    fn para(&mut self, s: &str) {
        self.out.push(Block::Paragraph(clip(s, self.text_limit)));
    }
    fn small(&mut self, s: &str) {
        self.out.push(Block::Small(clip(s, self.text_limit)));
    }
    /// A bulleted list of at most [`MAX_LIST_ITEMS`] items; the rest are counted in a last item.
    fn list(&mut self, items: impl ExactSizeIterator<Item = String>) {
        self.list_up_to(items, MAX_LIST_ITEMS);
    }
    /// A bulleted list of at most `max` items; the rest are counted in a last item.
    fn list_up_to(&mut self, items: impl ExactSizeIterator<Item = String>, max: usize) {
        let total = items.len();
        let mut v: Vec<String> = items.take(max).map(|s| clip(&s, self.text_limit)).collect();
        if total > max {
            v.push(format!(
                "… e mais {} itens não impressos; a lista completa está no registro.",
                total - max
            ));
        }
        self.out.push(Block::List(v));
    }
    fn signature(&mut self, who: &str) {
        self.out.push(Block::Signature(clip(who, MAX_FIELD_CHARS)));
    }
    /// Whatever `f` appends, kept on one page.
    fn together(&mut self, f: impl FnOnce(&mut Self)) {
        let start = self.out.len();
        f(self);
        let group = self.out.split_off(start);
        self.out.push(Block::Together(group));
    }
    fn separator(&mut self) {
        self.out.push(Block::Separator);
    }
    fn verification(&mut self, v: Option<&Verification>) {
        self.together(|b| b.verification_blocks(v));
    }
    fn verification_blocks(&mut self, v: Option<&Verification>) {
        self.heading("Verificação de autenticidade");
        match v {
            Some(v) => {
                self.out.push(Block::Qr {
                    url: v.url(),
                    code: v.code.to_string(),
                });
                self.small(&format!(
                    "Qualquer pessoa pode conferir este documento em {}/verificar, digitando o código acima ou lendo o QR code.",
                    v.base_url.trim_end_matches('/')
                ));
            }
            None => self.para(
                "Documento sem código de verificação: o registro foi emitido por um dispositivo sem chave de assinatura.",
            ),
        }
    }
}

fn party(p: &Party) -> String {
    match &p.document {
        Some(d) => format!("{} — {d}", p.name),
        None => p.name.clone(),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn number_or_waiting(n: Option<&str>) -> String {
    n.map_or_else(|| "aguardando numeração".to_owned(), str::to_owned)
}

fn kind_name(kind: AutoKind) -> (&'static str, &'static str) {
    match kind {
        AutoKind::Infraction => ("AUTO DE INFRAÇÃO", "Auto de infração"),
        AutoKind::Transgression => ("COMUNICAÇÃO DE TRANSGRESSÃO", "Comunicação de transgressão"),
    }
}

/// An auto or a coordinator's report; `thermal` clips long texts for a roll of paper.
pub(crate) fn auto(c: &AutoContent, thermal: bool) -> Doc<'static> {
    let (title, name) = kind_name(c.kind);
    let mut b = Blocks::new(thermal);
    auto_body(c, &mut b);
    next_steps(c.kind, &mut b);
    b.verification(c.verification.as_ref());
    b.small(&format!(
        "Impresso em {} (horário de Brasília).",
        datetime(c.printed_at)
    ));
    Doc {
        title: title.to_owned(),
        subtitle: auto_subtitle(c),
        header: format!("{name} nº {}", number_or_waiting(c.number.as_deref())),
        copies: AUTO_COPIES,
        created: c.printed_at,
        footer_code: c.verification.as_ref().map(|v| v.code.to_string()),
        blocks: b.out,
    }
}

fn auto_subtitle(c: &AutoContent) -> Vec<String> {
    let law = match c.kind {
        AutoKind::Infraction => "Lei Municipal 4.019/2004 — serviço de táxi",
        AutoKind::Transgression => "Lei Municipal 4.019/2004, art. 17, § 2º",
    };
    vec![clip(&c.issuing_body, MAX_FIELD_CHARS), law.to_owned()]
}

/// Everything the auto states, without the next steps: the case file prints it too.
fn auto_body(c: &AutoContent, b: &mut Blocks<'_>) {
    let infraction = c.kind == AutoKind::Infraction;
    b.field("Número", &number_or_waiting(c.number.as_deref()));
    b.field(
        "Data e hora dos fatos",
        &format!("{} (horário de Brasília)", datetime(c.occurred_at)),
    );
    b.field(
        if infraction {
            "Auto emitido em"
        } else {
            "Comunicação emitida em"
        },
        &c.issued_at
            .map_or_else(|| "ainda não emitido".to_owned(), datetime),
    );
    b.field("Local", c.place.as_deref().unwrap_or("não informado"));
    let position = match c.position {
        Some((lat, lon, Some(acc))) => format!("{lat:.6}, {lon:.6} (precisão de {acc:.0} m)"),
        Some((lat, lon, None)) => format!("{lat:.6}, {lon:.6}"),
        None => "não registrada".to_owned(),
    };
    b.field("Posição (GPS)", &position);

    b.heading("Veículo");
    b.field("Placa", c.plate.as_deref().unwrap_or("não identificada"));
    let confirmed = match &c.vehicle_confirmed {
        Some((who, at)) => format!("{who}, em {}", datetime(*at)),
        None => "não confirmada pelo agente".to_owned(),
    };
    b.field("Veículo confirmado por", &confirmed);
    b.field(
        "Alvará",
        c.permit_number.as_deref().unwrap_or("não informado"),
    );

    b.heading(if infraction {
        "Autuados"
    } else {
        "Taxistas comunicados"
    });
    b.field(&capitalized(&c.driver.role), &party(&c.driver));
    if let Some(holder) = &c.holder {
        b.field(&capitalized(&holder.role), &party(holder));
        b.small(
            "Lei 4.019/2004, art. 32, § 2º: as infrações praticadas pelo motorista auxiliar afetam o permissionário como se ele próprio as houvesse praticado, respondendo ambos solidariamente.",
        );
    }

    b.heading("Enquadramento legal");
    if let Some(g) = &c.gravity {
        b.field("Gravidade", g);
    }
    if c.legal_basis.is_empty() {
        b.para("Nenhum enquadramento indicado.");
    } else {
        b.list(
            c.legal_basis
                .iter()
                .map(|l| format!("{} — {}", l.citation, l.description)),
        );
    }

    b.heading("Descrição dos fatos");
    b.para(&c.facts);

    b.heading("Testemunhas");
    if c.witnesses.is_empty() {
        b.para("Nenhuma testemunha indicada.");
    } else {
        b.list(c.witnesses.iter().map(|w| {
            let who = format!("{} ({})", party(&w.party), w.party.role);
            if w.statement.trim().is_empty() {
                who
            } else {
                format!("{who}: “{}”", w.statement.trim())
            }
        }));
    }

    b.heading(if infraction {
        "Agente autuador"
    } else {
        "Coordenador do ponto"
    });
    b.field("Nome", &c.officer.name);
    if let Some(d) = &c.officer.document {
        b.field("Identificação", d);
    }
    b.field("Função", &c.officer.role);
    b.field(
        if infraction {
            "Órgão autuador"
        } else {
            "Coordenação"
        },
        &c.issuing_body,
    );

    b.heading("Assinatura do autuado");
    match &c.signature {
        SignatureLine::Signed { sha256 } => b.para(&format!(
            "Assinado pelo autuado no dispositivo do agente (imagem da assinatura SHA-256 {}).",
            clip(sha256, 64)
        )),
        SignatureLine::Missing { reason } => b.para(&format!(
            "Sem assinatura do autuado: {}.",
            reason.trim_end_matches('.')
        )),
    }
    b.signature(&format!(
        "{} — {}",
        if infraction {
            "Agente autuador"
        } else {
            "Coordenador"
        },
        c.officer.name
    ));
}

fn next_steps(kind: AutoKind, b: &mut Blocks<'_>) {
    b.heading("O que acontece agora");
    let first = match kind {
        AutoKind::Infraction => {
            "A Unidade de Transportes da Secretaria de Transportes e Sistema Viário analisará este auto e decidirá se aplica penalidade, de acordo com a gravidade (Lei 4.019/2004, art. 32, § 1º)."
        }
        AutoKind::Transgression => {
            "Esta comunicação segue por escrito à Unidade de Transportes da Secretaria de Transportes e Sistema Viário, que apurará os fatos e adotará as providências pertinentes (Lei 4.019/2004, art. 17, § 2º)."
        }
    };
    b.list(
        [
            first.to_owned(),
            "Nada se paga no local: este documento não é cobrança, e nenhum valor deve ser entregue a quem o emitiu.".to_owned(),
            "Se houver penalidade, você receberá uma notificação com a decisão. A Unidade de Transportes pode reconsiderar a decisão (art. 34), e cabe recurso, uma única vez, ao Prefeito Municipal (art. 33), em até 10 (dez) dias contados da ciência da notificação (art. 35).".to_owned(),
        ]
        .into_iter(),
    );
}

/// The notification of penalty.
pub(crate) fn notification(c: &NotificationContent) -> Doc<'static> {
    let mut b = Blocks::new(false);
    b.field("Notificação nº", &c.number);
    b.field(
        "Emitida em",
        &format!("{} (horário de Brasília)", datetime(c.issued_at)),
    );

    b.heading("Notificado");
    b.field("Nome", &c.addressee.name);
    b.field("Qualidade", &c.addressee.role);
    if let Some(d) = &c.addressee.document {
        b.field("Documento", d);
    }
    if let Some(a) = &c.addressee_address {
        b.field("Endereço", a);
    }

    b.heading("Órgão que notifica");
    b.para(&c.authority);

    b.heading("Finalidade");
    b.para(
        "Dar ciência da decisão que aplicou penalidade no processo administrativo do(s) auto(s) abaixo e abrir o prazo de reconsideração e de recurso (Lei 9.784/1999, art. 26; Lei 4.019/2004, arts. 33 a 35).",
    );

    b.heading("Fatos e fundamentos");
    for a in &c.autos {
        b.field("Auto nº", &a.number);
        b.field(
            "Data e hora dos fatos",
            &format!("{} (horário de Brasília)", datetime(a.occurred_at)),
        );
        if let Some(p) = &a.plate {
            b.field("Placa", p);
        }
        b.para(&a.facts);
        b.list(
            a.legal_basis
                .iter()
                .map(|l| format!("{} — {}", l.citation, l.description)),
        );
    }

    b.heading("Decisão");
    b.field("Penalidade", &c.decision.penalty);
    b.field("Fundamento", &c.decision.citation);
    b.field("Decidida em", &date(c.decision.decided_on));
    b.field("Decidida por", &c.decision.decided_by);
    if let Some(amount) = &c.amount {
        b.field("Valor da multa", &money(amount.amount));
        b.small(&format!("Valor em vigor nesta data: {}.", amount.basis));
    }

    let days = c.appeal_days;
    b.heading("Seus direitos");
    b.list(
        [
            format!(
                "Recurso: você pode recorrer uma única vez ao Prefeito Municipal (Lei 4.019/2004, art. 33), no prazo de {days} dias contados da data em que tomar ciência desta notificação (art. 35), registrada abaixo."
            ),
            "Reconsideração: antes de o recurso seguir ao Prefeito, a Unidade de Transportes pode reconsiderar a decisão (art. 34); você pode pedi-la no próprio recurso.".to_owned(),
            "O processo continua mesmo que você não responda; deixar de responder não significa reconhecer os fatos nem renunciar a direitos (Lei 9.784/1999, arts. 26, § 1º, e 27).".to_owned(),
            "Você pode ver e copiar os documentos do processo e apresentar provas e alegações (Lei 9.784/1999, art. 3º).".to_owned(),
        ]
        .into_iter(),
    );

    b.heading("Onde e como apresentar");
    b.para(&format!(
        "Por escrito, pessoalmente ou por procurador, indicando o número desta notificação e do auto: {}",
        c.filing_place
    ));

    b.together(|b| {
        b.heading("Ciência");
        b.para(&format!(
            "Declaro que recebi esta notificação e tomei ciência da decisão. O prazo de {days} dias para recurso conta a partir da data abaixo."
        ));
        b.field("Nome", "______________________________");
        b.field("Documento", "______________________________");
        b.field("Data da ciência", "____/____/________");
        b.signature("Assinatura do notificado");
        b.signature("Servidor que entregou (nome e matrícula)");
    });

    b.verification(Some(&c.verification));
    Doc {
        title: "NOTIFICAÇÃO DE PENALIDADE".to_owned(),
        subtitle: vec![
            clip(&c.authority, MAX_FIELD_CHARS),
            "Lei Municipal 4.019/2004, arts. 33 a 35 — Lei Federal 9.784/1999, art. 26".to_owned(),
        ],
        header: format!("Notificação de penalidade nº {}", c.number),
        copies: &[],
        created: c.issued_at,
        footer_code: Some(c.verification.code.to_string()),
        blocks: b.out,
    }
}

/// Lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The case file for an appeal.
pub(crate) fn case_file(c: &CaseFileContent) -> Doc<'_> {
    let (_, name) = kind_name(c.auto.kind);
    let number = number_or_waiting(c.auto.number.as_deref());
    let mut b = Blocks::new(false);

    b.heading(&format!("{name} nº {number}"));
    auto_body(&c.auto, &mut b);
    b.verification(c.auto.verification.as_ref());

    b.heading("Constatação apresentada ao agente no dispositivo");
    if c.verdict.is_empty() {
        b.para("Nenhuma constatação registrada.");
    } else {
        b.list(c.verdict.iter().cloned());
    }

    b.heading("Histórico do registro");
    if c.timeline.is_empty() {
        b.para("Nenhum evento registrado.");
    } else {
        b.list(
            c.timeline
                .iter()
                .map(|e| format!("{} — {}: {}", datetime(e.at), e.who, e.what)),
        );
    }

    b.heading("Identificação das testemunhas");
    if c.witness_contacts.is_empty() {
        b.para("Nenhuma pessoa fora do cadastro identificada.");
    } else {
        b.list(c.witness_contacts.iter().cloned());
    }

    b.heading("Notificações");
    if c.notifications.is_empty() {
        b.para("Nenhuma notificação emitida.");
    } else {
        b.list(c.notifications.iter().cloned());
    }

    b.heading("Fotos");
    photos(c, &mut b);

    b.separator();
    b.small(&format!(
        "Gerado por {} em {} (horário de Brasília).",
        c.generated_by,
        datetime(c.generated_at)
    ));
    Doc {
        title: "CÓPIA DO PROCESSO".to_owned(),
        subtitle: vec![
            clip(&c.auto.issuing_body, MAX_FIELD_CHARS),
            format!("{name} nº {number} — recurso ao Prefeito Municipal (Lei 4.019/2004, art. 33)"),
        ],
        header: format!("Processo do {} nº {number}", name.to_lowercase()),
        copies: &[],
        created: c.generated_at,
        footer_code: c.auto.verification.as_ref().map(|v| v.code.to_string()),
        blocks: b.out,
    }
}

/// One block per photo, each with its digest; a photo that cannot be embedded says why in its
/// caption instead of failing the whole case file.
fn photos<'a>(c: &'a CaseFileContent, b: &mut Blocks<'a>) {
    if c.photos.is_empty() {
        b.para("Nenhuma foto registrada.");
        return;
    }
    let total = c.photos.len();
    let mut budget = MAX_CASE_FILE_PHOTO_BYTES;
    for (i, p) in c.photos.iter().take(MAX_CASE_FILE_PHOTOS).enumerate() {
        let head = format!(
            "Foto {} de {total} — SHA-256 {}",
            i + 1,
            clip(&p.sha256, 64)
        );
        let (jpeg, note) = match &p.jpeg {
            None => (None, Some("o arquivo não chegou ao servidor".to_owned())),
            Some(j) if j.len() > MAX_PHOTO_BYTES => (
                None,
                Some(format!(
                    "o arquivo tem {} bytes, acima do limite de {MAX_PHOTO_BYTES} bytes por foto",
                    j.len()
                )),
            ),
            Some(j) if j.len() > budget => (
                None,
                Some(format!(
                    "as fotos anteriores já somam o limite de {MAX_CASE_FILE_PHOTO_BYTES} bytes por processo"
                )),
            ),
            Some(j) if !sha256_hex(j).eq_ignore_ascii_case(p.sha256.trim()) => (
                None,
                Some("o arquivo não confere com o SHA-256 registrado".to_owned()),
            ),
            Some(j) => {
                budget -= j.len();
                (Some(j.as_slice()), None)
            }
        };
        let caption = match note {
            Some(n) => format!("{head}. Não incluída: {n}."),
            None => head,
        };
        b.out.push(Block::Image { caption, jpeg });
    }
    if total > MAX_CASE_FILE_PHOTOS {
        b.para(&format!(
            "Mais {} fotos não incluídas (limite de {MAX_CASE_FILE_PHOTOS} por processo); estão no registro.",
            total - MAX_CASE_FILE_PHOTOS
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AutoContent, PhotoContent};
    use chrono::{DateTime, Utc};

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn case_file(photos: Vec<PhotoContent>) -> CaseFileContent {
        let party = |name: &str| Party {
            name: name.to_owned(),
            role: "condutor".to_owned(),
            document: None,
        };
        CaseFileContent {
            auto: AutoContent {
                kind: AutoKind::Infraction,
                number: None,
                issuing_body: "Guarda Municipal".to_owned(),
                occurred_at: at("2026-01-01T12:00:00Z"),
                issued_at: None,
                place: None,
                position: None,
                plate: None,
                vehicle_confirmed: None,
                permit_number: None,
                driver: party("A"),
                holder: None,
                officer: party("B"),
                gravity: None,
                legal_basis: vec![],
                facts: String::new(),
                witnesses: vec![],
                signature: SignatureLine::Missing {
                    reason: "ausente".to_owned(),
                },
                verification: None,
                printed_at: at("2026-01-01T12:00:00Z"),
            },
            verdict: vec![],
            timeline: vec![],
            photos,
            notifications: vec![],
            witness_contacts: vec![],
            generated_at: at("2026-01-02T12:00:00Z"),
            generated_by: "C".to_owned(),
        }
    }

    fn photo(len: usize) -> PhotoContent {
        let bytes = vec![0xa5; len];
        PhotoContent {
            sha256: sha256_hex(&bytes),
            jpeg: Some(bytes),
        }
    }

    /// (embedded?, caption) of each photo block.
    fn photo_blocks(doc: &Doc<'_>) -> Vec<(bool, String)> {
        doc.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Image { caption, jpeg } => Some((jpeg.is_some(), caption.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_photo_of_exactly_the_limit_is_embedded_and_one_byte_more_is_not() {
        let c = case_file(vec![photo(MAX_PHOTO_BYTES), photo(MAX_PHOTO_BYTES + 1)]);
        let blocks = photo_blocks(&super::case_file(&c));
        assert!(blocks[0].0, "{}", blocks[0].1);
        assert!(!blocks[1].0);
        assert!(
            blocks[1]
                .1
                .contains("acima do limite de 10485760 bytes por foto"),
            "{}",
            blocks[1].1
        );
    }

    #[test]
    fn photos_up_to_the_case_file_budget_are_embedded_and_the_next_is_not() {
        let whole = MAX_CASE_FILE_PHOTO_BYTES / MAX_PHOTO_BYTES;
        let rest = MAX_CASE_FILE_PHOTO_BYTES - whole * MAX_PHOTO_BYTES;
        let mut photos: Vec<_> = (0..whole).map(|_| photo(MAX_PHOTO_BYTES)).collect();
        photos.push(photo(rest));
        let c = case_file(photos.clone());
        let blocks = photo_blocks(&super::case_file(&c));
        assert!(
            blocks.iter().all(|b| b.0),
            "exactly the budget: all embedded"
        );

        photos.push(photo(1));
        let c = case_file(photos);
        let blocks = photo_blocks(&super::case_file(&c));
        let last = blocks.last().unwrap();
        assert!(!last.0);
        assert!(
            last.1.contains("limite de 100663296 bytes por processo"),
            "{}",
            last.1
        );
    }

    #[test]
    fn up_to_the_photo_count_every_photo_has_a_block_and_past_it_the_rest_are_counted() {
        let c = case_file((0..MAX_CASE_FILE_PHOTOS).map(|_| photo(10)).collect());
        let doc = super::case_file(&c);
        assert_eq!(photo_blocks(&doc).len(), MAX_CASE_FILE_PHOTOS);
        assert!(
            !doc.blocks
                .iter()
                .any(|b| matches!(b, Block::Paragraph(p) if p.starts_with("Mais ")))
        );

        let c = case_file((0..=MAX_CASE_FILE_PHOTOS).map(|_| photo(10)).collect());
        let doc = super::case_file(&c);
        assert_eq!(photo_blocks(&doc).len(), MAX_CASE_FILE_PHOTOS);
        assert!(doc.blocks.iter().any(|b| matches!(
            b,
            Block::Paragraph(p) if p.starts_with("Mais 1 fotos não incluídas (limite de 50")
        )));
    }

    #[test]
    fn lists_print_up_to_the_limit_and_count_the_rest() {
        let mut b = Blocks::new(false);
        b.list((0..MAX_LIST_ITEMS).map(|i| i.to_string()));
        b.list((0..MAX_LIST_ITEMS + 1).map(|i| i.to_string()));
        let [Block::List(at), Block::List(over)] = b.out.as_slice() else {
            panic!("two lists");
        };
        assert_eq!(at.len(), MAX_LIST_ITEMS);
        assert_eq!(over.len(), MAX_LIST_ITEMS + 1);
        assert_eq!(
            over.last().unwrap(),
            "… e mais 1 itens não impressos; a lista completa está no registro."
        );
    }

    #[test]
    fn fields_and_texts_are_clipped_at_their_limits() {
        let mut b = Blocks::new(false);
        b.field("Local", &"x".repeat(MAX_FIELD_CHARS));
        b.field("Local", &"x".repeat(MAX_FIELD_CHARS + 1));
        b.para(&"y".repeat(MAX_PRINTED_TEXT_CHARS));
        b.para(&"y".repeat(MAX_PRINTED_TEXT_CHARS + 1));
        let texts: Vec<String> = b
            .out
            .iter()
            .map(|bl| match bl {
                Block::Field { value, .. } => value.clone(),
                Block::Paragraph(p) => p.clone(),
                _ => panic!("unexpected block"),
            })
            .collect();
        assert!(!texts[0].contains("texto cortado"));
        assert!(texts[1].contains("texto cortado: 1 caracteres"));
        assert!(!texts[2].contains("texto cortado"));
        assert!(texts[3].contains("texto cortado: 1 caracteres"));
    }
}
