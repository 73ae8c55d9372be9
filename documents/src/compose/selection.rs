//! The two papers of an edital de chamamento (Lei 4.019/2004, arts. 2–6): the edital itself,
//! which calls candidates and announces the criteria, the documents and the lottery's seed in
//! advance (art. 4 and its sole paragraph), and the published result, whose publication opens
//! the five days of appeal (art. 5).
//!
//! Both are public notices printed in the local press, not records of one person, so they carry
//! no verification code: the lottery is checked instead through the digest of its published
//! list and the seed, which the result prints in full. Every legal fact (dates, counts of days,
//! who is in which group, the order, the reasons of refusal) arrives decided in the content;
//! what is written here is the wording, the order and the fixed texts citing the articles.

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};

use super::Blocks;
use crate::layout::Doc;
use crate::limits::{MAX_FIELD_CHARS, MAX_RESULT_LINES};
use crate::text::{clip, date, days};
use crate::{EditalContent, RankBasis, RankedLine, RefusedLine, ResultContent};

/// The PDF's creation date for a paper dated `day`: noon UTC, which is that same calendar day
/// in Americana whatever its offset, and never the clock (same content, same bytes).
fn created(day: NaiveDate) -> DateTime<Utc> {
    let midnight = day.and_time(NaiveTime::MIN).and_utc();
    midnight
        .checked_add_signed(TimeDelta::hours(12))
        .unwrap_or(midnight)
}

fn places(n: u64) -> String {
    if n == 1 {
        "1 vaga".to_owned()
    } else {
        format!("{n} vagas")
    }
}

/// The edital de chamamento.
pub(crate) fn edital(c: &EditalContent) -> Doc<'static> {
    let mut b = Blocks::new(false);
    b.field("Edital nº", &c.number);
    b.field("Publicado em", &date(c.published_on));
    b.para(&format!(
        "{}, para o preenchimento das vagas abaixo nos pontos de táxi do Município, convoca os interessados a se inscreverem nas condições deste edital, publicado na imprensa local (Lei Municipal 4.019/2004, art. 4º).",
        c.issuing_body.trim_end_matches('.')
    ));

    b.heading("1. Vagas");
    if c.vacancies.is_empty() {
        b.para("Nenhuma vaga indicada.");
    } else {
        b.list(
            c.vacancies
                .iter()
                .map(|v| format!("{}: {}", v.stand, places(u64::from(v.places)))),
        );
    }
    let total: u64 = c.vacancies.iter().map(|v| u64::from(v.places)).sum();
    b.field("Total", &places(total));

    b.heading("2. Inscrições");
    b.field(
        "Período",
        &format!(
            "de {} a {}",
            date(c.applications_from),
            date(c.applications_until)
        ),
    );
    b.para(&format!("Local e horário: {}", c.filing_place));
    b.para(
        "A inscrição é feita pelo próprio interessado, que apresenta no ato os documentos do item 3 (art. 2º). Cada inscrição recebe um número, que identifica o candidato na lista, no sorteio e no resultado.",
    );

    b.heading("3. Documentos e requisitos (art. 2º; art. 4º, parágrafo único)");
    if c.documents.is_empty() {
        b.para("Nenhum documento indicado.");
    } else {
        b.list(c.documents.iter().cloned());
    }
    b.para(&format!(
        "Os requisitos do art. 2º são verificados na data de referência de {}. Certidões e atestados devem ter sido emitidos nos {} anteriores a essa data.",
        date(c.reference_date),
        days(c.certificate_validity_days)
    ));
    b.para(
        "O permissionário que transferiu seu alvará só pode inscrever-se para outra permissão depois de decorridos três anos da transferência (art. 10, § 2º).",
    );

    b.heading("4. Critérios de escolha (art. 3º; art. 4º, parágrafo único)");
    b.para(&c.criteria);

    b.heading("5. Sorteio dos novos inscritos (art. 3º, III)");
    b.para(&format!(
        "Semente do sorteio: {}.",
        c.seed_source.trim_end_matches('.')
    ));
    b.field("Data do sorteio", &date(c.draw_on));
    // The method is announced before the list exists, so that nobody can pick it after seeing
    // who registered; it is the law kernel's `rules::selection::draw_order` (docs/selection.md).
    b.para(
        "Encerradas as inscrições, será publicada a lista dos inscritos que concorrem ao sorteio, uma linha por inscrição (número;nome), com o seu resumo SHA-256; a semente só é conhecida depois. A chave de cada inscrição é o SHA-256 do resumo da lista, da semente e do número da inscrição, separados por quebra de linha, e a ordem do sorteio é a das chaves em ordem crescente. Qualquer pessoa pode refazer o sorteio com o programa do sistema (taxi-fiscal lottery verify) ou com a ferramenta sha256sum.",
    );

    b.heading("6. Resultado e recurso (art. 5º)");
    b.list(
        [
            "O resultado, com a classificação na ordem do art. 3º, os escolhidos para cada vaga e os inscritos não habilitados com os motivos, será publicado na imprensa local.".to_owned(),
            format!(
                "Do ato de escolha caberá recurso por escrito ao Prefeito Municipal, dentro do prazo de {} contados da publicação do resultado, findos os quais a escolha será havida como definitiva (art. 5º).",
                days(c.appeal_days)
            ),
        ]
        .into_iter(),
    );

    b.heading("7. Cadastramento e alvará (art. 2º, parágrafo único; art. 6º)");
    b.list(
        [
            format!(
                "O candidato escolhido terá o prazo de {}, contados da escolha definitiva, para promover sua inscrição no Cadastro de Atividades do Município (art. 2º, parágrafo único; art. 30).",
                days(c.registration_days)
            ),
            "O alvará somente será concedido depois de decorrido o prazo para recursos ou, se interpostos, depois de julgados (art. 6º, I), e depois do cadastramento, desde que o interessado continue a preencher as condições do art. 2º (art. 6º, II).".to_owned(),
        ]
        .into_iter(),
    );

    b.signature(&c.signed_by);
    Doc {
        title: "EDITAL DE CHAMAMENTO".to_owned(),
        subtitle: vec![
            clip(&c.issuing_body, MAX_FIELD_CHARS),
            format!(
                "Edital nº {} — vagas nos pontos de táxi (Lei Municipal 4.019/2004, arts. 2º a 6º)",
                clip(&c.number, MAX_FIELD_CHARS)
            ),
        ],
        header: format!(
            "Edital de chamamento nº {}",
            clip(&c.number, MAX_FIELD_CHARS)
        ),
        copies: &[],
        created: created(c.published_on),
        footer_code: None,
        blocks: b.out,
    }
}

fn ranked_line(r: &RankedLine) -> String {
    let basis = match &r.basis {
        RankBasis::Seniority(d) => format!("antiguidade desde {}", date(*d)),
        RankBasis::DrawKey(k) => format!("chave do sorteio {k}"),
    };
    let outcome = match (&r.note, &r.stand) {
        (Some(n), _) => n.clone(),
        (None, Some(s)) => format!("escolhido para {s}"),
        (None, None) => "sem vaga: suplente, na ordem desta classificação".to_owned(),
    };
    format!(
        "{}º — inscrição {} — {} — grupo {}, {basis} — {outcome}",
        r.position, r.inscription, r.name, r.group
    )
}

fn refused_line(r: &RefusedLine) -> String {
    let reasons = if r.reasons.is_empty() {
        "motivo não indicado.".to_owned()
    } else {
        r.reasons
            .iter()
            .map(|s| s.trim())
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!("Inscrição {} — {}: {reasons}", r.inscription, r.name)
}

/// The published result of an edital.
pub(crate) fn result(c: &ResultContent) -> Doc<'static> {
    let mut b = Blocks::new(false);
    b.field("Edital nº", &c.edital_number);
    b.field("Resultado publicado em", &date(c.published_on));
    b.field(
        "Prazo de recurso",
        &format!("até {}", date(c.appeal_deadline)),
    );

    b.heading("Classificação (art. 3º)");
    b.small(
        "Grupos do art. 3º: I – atuais permissionários, por antiguidade ininterrupta; II – motoristas auxiliares já autorizados, por antiguidade, com no mínimo um ano de comprovado exercício; III – novos inscritos que atendam o art. 2º, por sorteio.",
    );
    if c.classification.is_empty() {
        b.para("Nenhum inscrito habilitado.");
    } else {
        b.list_up_to(c.classification.iter().map(ranked_line), MAX_RESULT_LINES);
    }

    b.heading("Inscritos não habilitados (art. 2º)");
    if c.refused.is_empty() {
        b.para("Nenhum.");
    } else {
        b.list_up_to(c.refused.iter().map(refused_line), MAX_RESULT_LINES);
    }

    b.heading("Sorteio (art. 3º, III)");
    match &c.lottery {
        None => b.para("Não houve sorteio: nenhum inscrito concorre no grupo III."),
        Some(l) => {
            b.field("Lista do sorteio publicada em", &date(l.list_published_on));
            b.field("Inscrições na lista", &l.inscriptions.to_string());
            b.para("Resumo SHA-256 da lista publicada:");
            // A paragraph of its own: the 64 digits fit one line, so they are read (and
            // copied) whole.
            b.para(&l.list_digest);
            b.field("Semente", &l.seed);
            b.para(&format!(
                "Fonte da semente: {}.",
                l.seed_source.trim_end_matches('.')
            ));
            b.field("Sorteio realizado em", &date(l.drawn_on));
            b.para(&format!(
                "Qualquer pessoa pode refazer o sorteio: a chave de cada inscrição é o SHA-256 do resumo acima, da semente e do número da inscrição, separados por quebra de linha, e a ordem é a das chaves em ordem crescente. Com o programa do sistema: taxi-fiscal lottery verify --list lista.txt --seed \"{}\".",
                l.seed
            ));
        }
    }

    b.heading("Recurso (art. 5º)");
    b.para(&format!(
        "Do ato de escolha cabe recurso por escrito ao Prefeito Municipal, dentro do prazo de {} contados da publicação deste resultado em {}, até {}. Findo o prazo, a escolha será havida como definitiva (art. 5º).",
        days(c.appeal_days),
        date(c.published_on),
        date(c.appeal_deadline)
    ));
    b.para(&format!("Onde apresentar: {}", c.filing_place));

    b.heading("Cadastramento e alvará (art. 2º, parágrafo único; art. 6º)");
    b.para(&format!(
        "Os escolhidos terão o prazo de {}, contados da escolha definitiva, para promover sua inscrição no Cadastro de Atividades do Município (art. 30). O alvará somente será concedido depois de decorrido o prazo para recursos ou de julgados os recursos interpostos, e desde que o escolhido continue a preencher as condições do art. 2º (art. 6º).",
        days(c.registration_days)
    ));

    b.signature(&c.signed_by);
    let number = clip(&c.edital_number, MAX_FIELD_CHARS);
    Doc {
        title: "RESULTADO DO EDITAL DE CHAMAMENTO".to_owned(),
        subtitle: vec![
            clip(&c.issuing_body, MAX_FIELD_CHARS),
            format!(
                "Edital nº {number} — classificação e escolha (Lei Municipal 4.019/2004, arts. 3º e 5º)"
            ),
        ],
        header: format!("Resultado do edital de chamamento nº {number}"),
        copies: &[],
        created: created(c.published_on),
        footer_code: None,
        blocks: b.out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Block;
    use crate::limits::MAX_LIST_ITEMS;

    fn result_with(lines: usize) -> ResultContent {
        let day = NaiveDate::MIN;
        ResultContent {
            issuing_body: "Prefeitura".to_owned(),
            edital_number: "001/2026".to_owned(),
            published_on: day,
            classification: (1..=lines)
                .map(|i| RankedLine {
                    position: u32::try_from(i).unwrap(),
                    inscription: format!("{i:04}"),
                    name: format!("Pessoa {i}"),
                    group: "III".to_owned(),
                    basis: RankBasis::DrawKey("ab".repeat(32)),
                    stand: None,
                    note: None,
                })
                .collect(),
            refused: Vec::new(),
            lottery: None,
            appeal_days: 5,
            appeal_deadline: day,
            filing_place: "Unidade".to_owned(),
            registration_days: 30,
            signed_by: "Diretora".to_owned(),
        }
    }

    /// The items of the classification list (the first list of the result).
    fn classification_items(c: &ResultContent) -> Vec<String> {
        result(c)
            .blocks
            .into_iter()
            .find_map(|b| match b {
                Block::List(items) => Some(items),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn a_result_prints_up_to_max_result_lines_and_counts_the_rest() {
        const { assert!(MAX_RESULT_LINES > MAX_LIST_ITEMS) };
        let at = classification_items(&result_with(MAX_RESULT_LINES));
        assert_eq!(at.len(), MAX_RESULT_LINES);
        assert!(at.last().unwrap().starts_with("2000º — inscrição 2000"));

        let over = classification_items(&result_with(MAX_RESULT_LINES + 1));
        assert_eq!(over.len(), MAX_RESULT_LINES + 1);
        assert_eq!(
            over.last().unwrap(),
            "… e mais 1 itens não impressos; a lista completa está no registro."
        );
    }

    #[test]
    fn the_creation_date_is_noon_utc_of_the_day_even_at_the_calendar_end() {
        let day = NaiveDate::from_ymd_opt(2026, 4, 15).unwrap();
        assert_eq!(created(day).to_rfc3339(), "2026-04-15T12:00:00+00:00");
        // No panic at the last representable day.
        assert_eq!(created(NaiveDate::MAX).date_naive(), NaiveDate::MAX);
    }
}
