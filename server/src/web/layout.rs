//! The page shell, navigation, form fields and Brazilian formatting shared by every page.
//!
//! Accessibility by construction: `lang="pt-BR"`, a skip link to `#conteudo`, one `<h1>` per
//! page (the title; sections start at `<h2>`), every field helper writes a `<label for>` bound to
//! its `id`, messages use `role="alert"` (errors) or `role="status"` (flash), and the
//! stylesheet keeps a visible focus ring. Times are shown in America/Sao_Paulo.

use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, NaiveDate, Utc};
use maud::{DOCTYPE, Markup, html};
use rust_decimal::Decimal;
use sync_core::domain::PenaltyKind;
use sync_core::rules::penalty::{Grade, penalty_label_pt};

use super::session::{Flash, WebUser};
use crate::auth::{Role, roles};

/// Top-level menu: (path, label, id of the link). A new top-level page adds its line here.
pub const NAV: &[(&str, &str, &str)] = &[
    ("/escritorio", "Caixa de entrada", "menu-caixa"),
    ("/escritorio/duplicatas", "Duplicatas", "menu-duplicatas"),
    ("/escritorio/alvaras", "Alvarás", "menu-alvaras"),
    ("/escritorio/multas", "Multas", "menu-multas"),
    ("/escritorio/pessoas", "Pessoas", "menu-pessoas"),
    ("/escritorio/veiculos", "Veículos", "menu-veiculos"),
    ("/escritorio/pontos", "Pontos", "menu-pontos"),
    ("/escritorio/editais", "Editais", "menu-editais"),
    (
        "/escritorio/cadastro/importar",
        "Importar cadastro",
        "menu-importar",
    ),
    ("/escritorio/lei", "Parâmetros da lei", "menu-lei"),
];

/// Entries of [`NAV`] that are forms only (nothing to read there): left out of the menu of a
/// user who may not post them (the administrator; `WebUser::may_write`).
pub const NAV_WRITERS_ONLY: &[&str] = &["/escritorio/cadastro/importar"];

/// The administrator's own pages, in the administrator's menu only.
pub const ADMIN_NAV: &[(&str, &str, &str)] = &[
    ("/escritorio/usuarios", "Usuários", "menu-usuarios"),
    (
        "/escritorio/dispositivos",
        "Dispositivos",
        "menu-dispositivos",
    ),
];

/// The menu of `user`: [`NAV`] for those who open the office pages (without
/// [`NAV_WRITERS_ONLY`] for those who cannot post there), [`ADMIN_NAV`] for the administrator,
/// nothing for officers and coordinators (their one page is "Alterar minha senha", in the
/// header).
pub fn nav_for(user: &WebUser) -> Vec<(&'static str, &'static str, &'static str)> {
    let mut entries = Vec::new();
    if super::session::OFFICE_ROLES.contains(&user.auth.role) {
        entries.extend(
            NAV.iter()
                .filter(|(href, _, _)| user.may_write() || !NAV_WRITERS_ONLY.contains(href))
                .copied(),
        );
    }
    if user.is_admin() {
        entries.extend(ADMIN_NAV.iter().copied());
    }
    entries
}

/// Shown instead of a form the user may not submit (the administrator on the office's pages).
pub fn read_only_notice(id: &str) -> Markup {
    html! {
        p id=(id) .somente-leitura role="note" {
            strong { "Somente leitura: " }
            "seu perfil consulta esta página; quem registra é a Unidade de Transportes."
        }
    }
}

/// The whole page: head, header with the user and the logout button, menu, `<h1>` title,
/// the flash message, then `body`.
pub fn page(user: Option<&WebUser>, title: &str, flash: Option<Flash>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="pt-BR" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — Unidade de Transportes" }
                link rel="stylesheet" href="/static/escritorio.css";
            }
            body {
                a .pular href="#conteudo" { "Pular para o conteúdo" }
                header .topo {
                    p .marca { "Unidade de Transportes — Fiscalização de Táxis (Lei 4.019/2004)" }
                    @if let Some(u) = user {
                        @let menu = nav_for(u);
                        @if !menu.is_empty() {
                            nav aria-label="Menu principal" {
                                ul {
                                    @for (href, label, id) in menu {
                                        li { a id=(id) href=(href) { (label) } }
                                    }
                                }
                            }
                        }
                        div .usuario {
                            span #usuario-atual { (u.display_name) " (" (u.auth.role.label()) ")" }
                            a #minha-senha href="/escritorio/senha" { "Alterar minha senha" }
                            form method="post" action="/logout" id="form-sair" {
                                input type="hidden" name="csrf" value=(u.csrf());
                                button type="submit" id="sair" { "Sair" }
                            }
                        }
                    }
                }
                main #conteudo tabindex="-1" {
                    h1 { (title) }
                    @if let Some(f) = flash {
                        @if f.ok {
                            p #aviso role="status" .aviso-ok { (f.message) }
                        } @else {
                            p #aviso role="alert" .erro { (f.message) }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// 303 to `url` (after a POST).
pub fn see_other(url: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(url) {
        res.headers_mut().insert(LOCATION, v);
    }
    res
}

/// Who may post to `action`, mirroring the user types of the handlers' `Posted` (the server
/// enforces it there; this only keeps a form the user cannot submit off the page): the
/// administrator's pages, the forms of every signed-in user, and the office's forms (all the
/// rest).
pub fn form_roles(action: &str) -> &'static [Role] {
    let under = |prefix: &str| {
        action == prefix
            || action
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if under("/escritorio/usuarios") || under("/escritorio/dispositivos") {
        roles::ADMIN
    } else if under("/escritorio/senha") || under("/logout") {
        roles::ANY
    } else {
        roles::OFFICE_WRITERS
    }
}

/// A POST form with the session's CSRF token; for a user who may not post it
/// ([`form_roles`]), the "somente leitura" notice instead ([`read_only_notice`]).
pub fn post_form(user: &WebUser, action: &str, id: &str, body: Markup) -> Markup {
    if !form_roles(action).contains(&user.auth.role) {
        return read_only_notice(&format!("{id}-somente-leitura"));
    }
    html! {
        form method="post" action=(action) id=(id) {
            input type="hidden" name="csrf" value=(user.csrf());
            (body)
        }
    }
}

/// An error shown on the page, with what went wrong and, for legal refusals, the article.
pub fn error_box(id: &str, message: &str) -> Markup {
    html! {
        div id=(id) .erro role="alert" {
            p { strong { "Não foi feito: " } (message) }
            p .dica { "Nada foi gravado; o que foi digitado continua no formulário." }
        }
    }
}

/// A labelled text input.
pub fn text_field(id: &str, name: &str, label: &str, value: &str, required: bool) -> Markup {
    html! {
        div .campo {
            label for=(id) { (label) }
            input type="text" id=(id) name=(name) value=(value) required[required];
        }
    }
}

/// A labelled date input (`AAAA-MM-DD`).
pub fn date_field(id: &str, name: &str, label: &str, value: &str, required: bool) -> Markup {
    html! {
        div .campo {
            label for=(id) { (label) }
            input type="date" id=(id) name=(name) value=(value) required[required];
        }
    }
}

/// A labelled select; `options` are (value, label); `selected` is the chosen value.
pub fn select_field(
    id: &str,
    name: &str,
    label: &str,
    options: &[(String, String)],
    selected: &str,
) -> Markup {
    html! {
        div .campo {
            label for=(id) { (label) }
            select id=(id) name=(name) {
                @for (value, text) in options {
                    option value=(value) selected[value == selected] { (text) }
                }
            }
        }
    }
}

/// A labelled multi-line text.
pub fn textarea_field(id: &str, name: &str, label: &str, value: &str, required: bool) -> Markup {
    html! {
        div .campo {
            label for=(id) { (label) }
            textarea id=(id) name=(name) rows="3" required[required] { (value) }
        }
    }
}

/// A submit button with a stable id.
pub fn submit(id: &str, text: &str) -> Markup {
    html! { button type="submit" id=(id) { (text) } }
}

/// `30/11/2026 12:00` in America/Sao_Paulo.
pub fn local_time(at: DateTime<Utc>) -> String {
    sync_core::time::local_datetime(at)
        .format("%d/%m/%Y %H:%M")
        .to_string()
}

/// `30/11/2026`.
pub fn date_br(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// A duration for people: `45 s`, `12 min`, `3 h 20 min`, `2 dias 4 h`.
pub fn age_text(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => {
            let m = (s % 3600) / 60;
            if m == 0 {
                format!("{} h", s / 3600)
            } else {
                format!("{} h {} min", s / 3600, m)
            }
        }
        _ => {
            let d = s / 86_400;
            let h = (s % 86_400) / 3600;
            let days = if d == 1 { "dia" } else { "dias" };
            if h == 0 {
                format!("{d} {days}")
            } else {
                format!("{d} {days} {h} h")
            }
        }
    }
}

/// `R$ 1.234,56`.
pub fn money(amount: Decimal) -> String {
    let rounded = amount.round_dp(2);
    let negative = rounded.is_sign_negative() && !rounded.is_zero();
    let text = format!("{:.2}", rounded.abs());
    let (int, frac) = text.split_once('.').unwrap_or((text.as_str(), "00"));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(c);
    }
    format!("{}R$ {grouped},{frac}", if negative { "-" } else { "" })
}

/// A penalty as the pages show it, with its inciso of art. 32 (the kernel's list:
/// `Grade::exact`); a stored suspension of another length (history from before art. 32 was
/// checked on every write) is shown without one.
pub fn penalty_label(p: &PenaltyKind) -> String {
    let label = penalty_label_pt(*p);
    match Grade::exact(*p) {
        Ok(g) => format!("{label} (art. 32, {})", g.inciso()),
        Err(_) => label,
    }
}

/// The form value of a penalty (`advertencia`, `multa`, `suspensao-15`, `suspensao-60`,
/// `cassacao`) and back.
pub fn penalty_value(p: &PenaltyKind) -> String {
    match p {
        PenaltyKind::WrittenWarning => "advertencia".into(),
        PenaltyKind::Fine => "multa".into(),
        PenaltyKind::Suspension { days } => format!("suspensao-{days}"),
        PenaltyKind::Revocation => "cassacao".into(),
    }
}

/// Inverse of [`penalty_value`] for the penalties of art. 32 (anything else is no option).
pub fn parse_penalty(s: &str) -> Option<PenaltyKind> {
    Grade::ALL
        .iter()
        .map(|g| g.penalty())
        .find(|p| penalty_value(p) == s)
}

/// The penalties of art. 32 as select options, mildest first.
pub fn penalty_options() -> Vec<(String, String)> {
    Grade::ALL
        .iter()
        .map(|g| {
            let p = g.penalty();
            (penalty_value(&p), penalty_label(&p))
        })
        .collect()
}

/// `1 conflito`, `2 conflitos`: a count with its noun (and any words that agree with it) in
/// the right number, never "conflito(s)" (the law kernel's `text::plural_pt`, which its own
/// messages use too).
pub fn plural(n: usize, one: &str, many: &str) -> String {
    sync_core::text::plural_pt(n as u64, one, many)
}

/// How pages name a record: "Auto nº 501", "Comunicação nº 12" (its number, never its
/// internal id), "Auto sem número" while it has none.
pub fn record_name(kind: &str, number: Option<&str>) -> String {
    let noun = match kind {
        "infraction" => "Auto",
        "transgression" => "Comunicação",
        _ => "Registro",
    };
    match number.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => format!("{noun} nº {n}"),
        None => format!("{noun} sem número"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn counts_agree_and_records_are_named_by_number() {
        assert_eq!(plural(1, "conflito", "conflitos"), "1 conflito");
        assert_eq!(plural(0, "conflito", "conflitos"), "0 conflitos");
        assert_eq!(
            plural(2, "evento recusado", "eventos recusados"),
            "2 eventos recusados"
        );
        assert_eq!(record_name("infraction", Some("501")), "Auto nº 501");
        assert_eq!(
            record_name("transgression", Some("12")),
            "Comunicação nº 12"
        );
        assert_eq!(record_name("infraction", None), "Auto sem número");
    }

    #[test]
    fn formats_are_brazilian() {
        assert_eq!(
            money(Decimal::from_str("797.02").unwrap_or_default()),
            "R$ 797,02"
        );
        assert_eq!(
            money(Decimal::from_str("1234567.5").unwrap_or_default()),
            "R$ 1.234.567,50"
        );
        assert_eq!(age_text(59), "59 s");
        assert_eq!(age_text(3600 * 3 + 60 * 20), "3 h 20 min");
        assert_eq!(age_text(86_400 + 3600 * 4), "1 dia 4 h");
        let t: DateTime<Utc> = "2026-11-30T15:00:00Z".parse().unwrap_or_default();
        assert_eq!(local_time(t), "30/11/2026 12:00");
        for (v, _) in penalty_options() {
            let p = parse_penalty(&v);
            assert_eq!(p.as_ref().map(penalty_value).as_deref(), Some(v.as_str()));
        }
    }
}
