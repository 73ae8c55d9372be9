//! The rule catalogue R01–R44 and D01–D04 of docs/rules.md, as data.
//!
//! One row per rule: its citation, whether the wording in force is verified (provisions amended
//! by laws whose text was not found are not), the severity and consequence a finding carries,
//! where it is checked, and whether it is on by default. Evaluation code looks rules up here by
//! id, so a finding can never cite an article that the catalogue does not list.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! rule_ids {
    ($($id:ident),* $(,)?) => {
        /// A rule of the catalogue. The only way to name a rule in code: a finding, a refusal
        /// or a legal basis cites one of these, and each has exactly one catalogue row.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            JsonSchema,
        )]
        pub enum RuleId {
            $($id),*
        }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: [RuleId; [$(RuleId::$id),*].len()] = [$(RuleId::$id),*];

            /// The id as printed: `R01`…`R44`, `D01`…`D04`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$id => stringify!($id)),*
                }
            }
        }
    };
}

rule_ids!(
    R01, R02, R03, R04, R05, R06, R07, R08, R09, R10, R11, R12, R13, R14, R15, R16, R17, R18, R19,
    R20, R21, R22, R23, R24, R25, R26, R27, R28, R29, R30, R31, R32, R33, R34, R35, R36, R37, R38,
    R39, R40, R41, R42, R43, R44, D01, D02, D03, D04,
);

impl RuleId {
    /// The rule named by `text` (exact spelling, e.g. `R24`), if it is a catalogue id.
    pub fn parse(text: &str) -> Option<RuleId> {
        RuleId::ALL.iter().copied().find(|r| r.as_str() == text)
    }

    /// This rule's catalogue row.
    pub fn spec(self) -> &'static RuleSpec {
        spec(self)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RuleId {
    type Err = UnknownRule;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RuleId::parse(s).ok_or_else(|| UnknownRule(s.chars().take(16).collect()))
    }
}

/// Text that is no catalogue rule id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a regra {0:?} não existe no catálogo")]
pub struct UnknownRule(pub String);

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<RuleId> for &str {
    fn eq(&self, other: &RuleId) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<String> for RuleId {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<RuleId> for String {
    fn eq(&self, other: &RuleId) -> bool {
        self == other.as_str()
    }
}

use super::{Consequence, Severity};

/// One provision of Lei 4.019/2004: article, paragraph and inciso.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Provision {
    pub article: &'static str,
    /// `"único"` for a parágrafo único, a number otherwise.
    pub paragraph: Option<&'static str>,
    pub inciso: Option<&'static str>,
}

/// Where a rule is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// In the street, by the field check.
    Field,
    /// At the counter, by the office checks.
    Office,
    /// Part of the records workflow (deadlines, penalties, amounts).
    Workflow,
    /// Data quality (document check digits, plate shape).
    Data,
}

/// A rule of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RuleSpec {
    pub id: RuleId,
    /// Short title in Portuguese.
    pub title: &'static str,
    pub provisions: &'static [Provision],
    /// Another legal basis cited beside the municipal law (CTB, Portaria Inmetro, …).
    pub other_basis: Option<&'static str>,
    /// False when the provision was amended and the wording in force was not found (docs/law/reference.md, Amendments).
    pub wording_verified: bool,
    pub scope: Scope,
    pub severity: Severity,
    pub consequence: Consequence,
    /// On unless the configuration says otherwise.
    pub enabled_by_default: bool,
    /// Repealed provisions are listed so that nobody adds them back by mistake; never evaluated.
    pub repealed: bool,
}

impl RuleSpec {
    /// Citation string as printed in verdicts, e.g. `Lei 4.019/2004, art. 8, § 4`.
    ///
    /// Rows of `CATALOGUE` (what `spec` returns, i.e. every finding) have theirs formatted once
    /// per process; other specs are formatted on each call.
    pub fn citation(&self) -> String {
        static CITATIONS: OnceLock<Vec<String>> = OnceLock::new();
        let Some(i) = CATALOGUE.iter().position(|r| std::ptr::eq(r, self)) else {
            return self.format_citation();
        };
        let all = CITATIONS.get_or_init(|| CATALOGUE.iter().map(Self::format_citation).collect());
        all.get(i)
            .cloned()
            .unwrap_or_else(|| self.format_citation())
    }

    fn format_citation(&self) -> String {
        let parts: Vec<String> = self.provisions.iter().map(Provision::to_string).collect();
        let mut cited = Vec::new();
        if !parts.is_empty() {
            cited.push(format!("Lei 4.019/2004, {}", parts.join("; ")));
        }
        if let Some(other) = self.other_basis {
            cited.push(other.to_owned());
        }
        cited.join("; ")
    }
}

impl std::fmt::Display for Provision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "art. {}", self.article)?;
        match self.paragraph {
            Some("único") => write!(f, ", parágrafo único")?,
            Some(p) => write!(f, ", § {p}")?,
            None => {}
        }
        if let Some(i) = self.inciso {
            write!(f, ", {i}")?;
        }
        Ok(())
    }
}

const fn art(article: &'static str) -> Provision {
    Provision {
        article,
        paragraph: None,
        inciso: None,
    }
}
const fn par(article: &'static str, paragraph: &'static str) -> Provision {
    Provision {
        article,
        paragraph: Some(paragraph),
        inciso: None,
    }
}
const fn inc(article: &'static str, inciso: &'static str) -> Provision {
    Provision {
        article,
        paragraph: None,
        inciso: Some(inciso),
    }
}
const fn par_inc(
    article: &'static str,
    paragraph: &'static str,
    inciso: &'static str,
) -> Provision {
    Provision {
        article,
        paragraph: Some(paragraph),
        inciso: Some(inciso),
    }
}

use Consequence as C;
use Scope::{Data, Field, Office, Workflow};
use Severity::{Info, Irregular, Warning};

#[allow(clippy::too_many_arguments)]
const fn rule(
    id: RuleId,
    title: &'static str,
    provisions: &'static [Provision],
    other_basis: Option<&'static str>,
    wording_verified: bool,
    scope: Scope,
    severity: Severity,
    consequence: Consequence,
) -> RuleSpec {
    RuleSpec {
        id,
        title,
        provisions,
        other_basis,
        wording_verified,
        scope,
        severity,
        consequence,
        enabled_by_default: true,
        repealed: false,
    }
}

const fn disabled(mut r: RuleSpec) -> RuleSpec {
    r.enabled_by_default = false;
    r
}

const fn repealed(mut r: RuleSpec) -> RuleSpec {
    r.enabled_by_default = false;
    r.repealed = true;
    r
}

/// The catalogue, in rule id order.
pub static CATALOGUE: &[RuleSpec] = &ROWS;

/// Row `i` is the rule `RuleId::ALL[i]`, so that `spec` is an index that cannot miss.
const ROWS_MATCH_IDS: () = {
    assert!(ROWS.len() == RuleId::ALL.len());
    let mut i = 0;
    while i < ROWS.len() {
        assert!(ROWS[i].id as usize == i);
        i += 1;
    }
};

#[allow(clippy::let_unit_value)]
const _: () = ROWS_MATCH_IDS;

const ROWS: [RuleSpec; RuleId::ALL.len()] = [
    rule(
        RuleId::R01,
        "Transporte remunerado sem alvará ou veículo não táxi (clandestino)",
        &[art("1")],
        Some("CTB, art. 231, VIII"),
        true,
        Field,
        Irregular,
        C::ReferToTrafficAuthority,
    ),
    rule(
        RuleId::R02,
        "Taxímetro sem aferição válida ou lacre rompido",
        &[par("1", "1")],
        Some("Portaria Inmetro 433/2025"),
        true,
        Field,
        Irregular,
        C::RenewalBlocked,
    ),
    rule(
        RuleId::R03,
        "Mais de um alvará para a mesma pessoa ou parente",
        &[par("1", "2"), art("9")],
        None,
        false,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R04,
        "Terceiro autorizado pelo titular enfermo",
        &[par("1", "3")],
        None,
        true,
        Field,
        Info,
        C::None,
    ),
    rule(
        RuleId::R05,
        "Alvará em sucessão (óbito do titular)",
        &[par("1", "4")],
        None,
        false,
        Field,
        Warning,
        C::OfficeReview,
    ),
    rule(
        RuleId::R06,
        "Condutor com menos de 21 anos",
        &[inc("2", "I"), inc("30", "I")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R07,
        "CNH não abrange a categoria B",
        &[inc("2", "II"), inc("30", "II")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R08,
        "Habilitação há menos de dois anos ou Permissão para Dirigir",
        &[inc("2", "II"), inc("30", "II")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R09,
        "CNH sem EAR ou com \"Vedada Atividade Remunerada\"",
        &[inc("2", "II"), inc("30", "II")],
        Some("CTB, art. 147, § 5"),
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R10,
        "CNH vencida",
        &[inc("2", "II"), inc("7", "II")],
        Some("CTB, art. 162, V"),
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R11,
        "Alvará não renovado até 31 de janeiro",
        &[art("7")],
        None,
        true,
        Field,
        Irregular,
        C::RevokePermit,
    ),
    rule(
        RuleId::R12,
        "Táxi dirigido por quem não é titular nem auxiliar",
        &[par("8", "4")],
        None,
        false,
        Field,
        Irregular,
        C::RevokePermit,
    ),
    rule(
        RuleId::R13,
        "Mais de dois motoristas auxiliares no alvará",
        &[art("8")],
        None,
        true,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R14,
        "Auxiliar dirigindo táxi de outro alvará",
        &[par("8", "2"), par("8", "3")],
        None,
        true,
        Field,
        Irregular,
        C::RevokeAuxiliaryLicence,
    ),
    repealed(rule(
        RuleId::R15,
        "RPA/INSS do auxiliar (revogado)",
        &[par("8", "5")],
        Some("revogado pela Lei 4.374/2006"),
        true,
        Field,
        Info,
        C::None,
    )),
    rule(
        RuleId::R16,
        "Veículo não licenciado em Americana",
        &[inc("13", "I")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R17,
        "Menos de 4 portas ou lotação acima de 6 passageiros",
        &[inc("13", "II")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R18,
        "Veículo com mais de 10 anos de fabricação",
        &[inc("13", "III")],
        None,
        false,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R19,
        "Sem dispositivo luminoso \"TÁXI\" no teto",
        &[par("13", "1")],
        None,
        false,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R20,
        "Publicidade fora do permitido",
        &[par("13", "2")],
        Some("Resolução CONTRAN 73/1998"),
        false,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    disabled(rule(
        RuleId::R21,
        "Adesivo \"TAXI DE AMERICANA\" e cor prata (texto da Lei 5.350/2012 não confirmado)",
        &[par("13", "4"), par("13", "5")],
        None,
        false,
        Field,
        Irregular,
        C::RecordIrregularity,
    )),
    rule(
        RuleId::R22,
        "Valores de taxas e multas corrigidos pelo IPCA",
        &[
            art("12"),
            par("12", "1"),
            par_inc("17", "2", "III"),
            inc("32", "II"),
        ],
        None,
        true,
        Workflow,
        Info,
        C::None,
    ),
    rule(
        RuleId::R23,
        "Nova vaga acima da proporção de táxis por habitantes",
        &[art("14")],
        None,
        false,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R24,
        "Táxi fora do seu ponto no horário obrigatório",
        &[inc("16", "I"), inc("31", "VI")],
        None,
        true,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    rule(
        RuleId::R25,
        "Horário facultativo: ausência do ponto não é infração",
        &[par("16", "único")],
        None,
        false,
        Field,
        Info,
        C::None,
    ),
    rule(
        RuleId::R26,
        "Ponto sem escala de plantão",
        &[inc("16", "II")],
        None,
        true,
        Office,
        Warning,
        C::OfficeReview,
    ),
    rule(
        RuleId::R27,
        "Transgressão no ponto: coordenador; graves por escrito com testemunhas; multa não paga impede o alvará",
        &[par("17", "1"), par("17", "2"), art("18")],
        None,
        true,
        Workflow,
        Irregular,
        C::RenewalBlocked,
    ),
    rule(
        RuleId::R28,
        "Descumprimento de dever do condutor",
        &[art("19"), inc("31", "VII")],
        None,
        true,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    rule(
        RuleId::R29,
        "Veículo abandonado na fila do ponto",
        &[art("20")],
        None,
        false,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    rule(
        RuleId::R30,
        "Angariar passageiros junto a outro ponto",
        &[art("21")],
        None,
        true,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    rule(
        RuleId::R31,
        "Infrações do art. 31 (urbanidade, traje, embriaguez, arrendamento do ponto)",
        &[
            inc("31", "I"),
            inc("31", "II"),
            inc("31", "III"),
            inc("31", "IV"),
            inc("31", "V"),
        ],
        None,
        true,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    rule(
        RuleId::R32,
        "Penalidades graduadas pela Unidade de Transportes",
        &[art("32"), par("32", "1")],
        None,
        true,
        Workflow,
        Info,
        C::None,
    ),
    rule(
        RuleId::R33,
        "Infração do auxiliar responsabiliza também o titular",
        &[par("32", "2")],
        None,
        true,
        Workflow,
        Info,
        C::None,
    ),
    rule(
        RuleId::R34,
        "Recurso único ao Prefeito, 10 dias da ciência",
        &[art("33"), art("34"), art("35")],
        Some("Lei 9.784/1999, art. 66"),
        true,
        Workflow,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R35,
        "Fiscal deve ser da Secretaria de Transportes ou da Guarda Municipal",
        &[art("36")],
        None,
        true,
        Workflow,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R36,
        "Rádio-táxi sem cooperativa ou rádio sem homologação ANATEL",
        &[par("23", "1"), art("27")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R37,
        "Rádio-táxi sem identificação da cooperativa",
        &[par("27", "único")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R38,
        "Rádio-táxi em ponto de táxi comum",
        &[art("28")],
        None,
        true,
        Field,
        Irregular,
        C::InfractionNotice,
    ),
    repealed(rule(
        RuleId::R39,
        "Controle de chamadas do rádio-táxi (revogado)",
        &[art("25")],
        Some("revogado pela Lei 4.374/2006"),
        true,
        Field,
        Info,
        C::None,
    )),
    rule(
        RuleId::R40,
        "Veículo não registrado em nome do permissionário",
        &[inc("30", "III")],
        None,
        true,
        Field,
        Irregular,
        C::RecordIrregularity,
    ),
    rule(
        RuleId::R41,
        "Residência, antecedentes criminais e atestado médico",
        &[
            inc("2", "III"),
            inc("2", "IV"),
            inc("2", "V"),
            par_inc("7", "único", "IV"),
        ],
        None,
        false,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R42,
        "Prazos de inscrição, edital e recurso da escolha",
        &[par("2", "único"), art("4"), art("5"), art("6")],
        None,
        false,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R43,
        "Transferência do alvará",
        &[art("10"), par("10", "1"), par("10", "2")],
        None,
        true,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::R44,
        "Permuta de ponto",
        &[art("11")],
        None,
        true,
        Office,
        Irregular,
        C::OfficeRefusal,
    ),
    rule(
        RuleId::D01,
        "Dígitos verificadores do CPF",
        &[],
        Some("Receita Federal (CPF)"),
        true,
        Data,
        Warning,
        C::None,
    ),
    rule(
        RuleId::D02,
        "Dígitos verificadores da CNH",
        &[],
        Some("CNH, nº de registro"),
        true,
        Data,
        Warning,
        C::None,
    ),
    rule(
        RuleId::D03,
        "Dígito verificador do RENAVAM",
        &[],
        Some("RENAVAM"),
        true,
        Data,
        Warning,
        C::None,
    ),
    rule(
        RuleId::D04,
        "Placa e categoria de aluguel",
        &[inc("13", "I")],
        Some("Res. CONTRAN 780/2019"),
        true,
        Data,
        Warning,
        C::None,
    ),
];

/// Looks a rule up by id.
///
/// A field check asks this some thirty times (every `RulesConfig::is_enabled`), so the usual
/// ids go straight to their row: the catalogue lists R01–R44 then D01–D04 in order, and the
/// guess is confirmed by comparing the id. Anything else (or a reordered catalogue) falls back
/// to the scan, so the answer is always the first row with that id.
pub fn spec(id: RuleId) -> &'static RuleSpec {
    // In bounds and the right row: `ROWS_MATCH_IDS` checks both at compile time.
    &ROWS[id as usize]
}

/// The catalogue row of a rule id given as text (a record's legal basis, a configuration
/// file, a command line); `None` for anything that is not a catalogue id.
pub fn lookup(id: &str) -> Option<&'static RuleSpec> {
    RuleId::parse(id).map(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_complete() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 48);
        for n in 1..=44 {
            assert!(lookup(&format!("R{n:02}")).is_some(), "R{n:02}");
        }
        for n in 1..=4 {
            assert!(lookup(&format!("D{n:02}")).is_some(), "D{n:02}");
        }
        for r in RuleId::ALL {
            assert_eq!(spec(r).id, r);
            assert_eq!(r.as_str().parse::<RuleId>(), Ok(r));
            assert_eq!(
                serde_json::to_value(r).ok(),
                Some(serde_json::json!(r.as_str()))
            );
        }
    }

    #[test]
    fn citations_read_like_the_law() {
        assert_eq!(spec(RuleId::R12).citation(), "Lei 4.019/2004, art. 8, § 4");
        assert_eq!(
            spec(RuleId::R07).citation(),
            "Lei 4.019/2004, art. 2, II; art. 30, II"
        );
        assert_eq!(spec(RuleId::D01).citation(), "Receita Federal (CPF)");
        assert_eq!(
            spec(RuleId::R25).citation(),
            "Lei 4.019/2004, art. 16, parágrafo único"
        );
    }

    /// The cached citations answer exactly like a fresh format, and text that is no id is
    /// refused.
    #[test]
    fn fast_lookups_agree_with_the_scan() {
        for r in CATALOGUE {
            assert!(std::ptr::eq(spec(r.id), r), "{}", r.id);
            assert_eq!(r.citation(), r.format_citation(), "{}", r.id);
            // A copy is not a catalogue row: formatted on the spot, same text.
            let copy = *r;
            assert_eq!(copy.citation(), r.citation(), "{}", r.id);
        }
        for id in [
            "R00", "R45", "D00", "D05", "X01", "R1", "R001", "", "r01", "Rab",
        ] {
            assert!(lookup(id).is_none(), "{id}");
            assert!(id.parse::<RuleId>().is_err(), "{id}");
        }
    }

    #[test]
    fn amended_provisions_are_unverified_and_repealed_ones_off() {
        use RuleId::*;
        for id in [R12, R18, R19, R20, R21, R23, R29] {
            assert!(!spec(id).wording_verified, "{id}");
        }
        for id in [R15, R39] {
            assert!(spec(id).repealed && !spec(id).enabled_by_default, "{id}");
        }
        assert!(!spec(R21).enabled_by_default);
    }
}
