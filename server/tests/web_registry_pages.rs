//! The registry's write pages of the office — people, vehicles, stands and their coordinators,
//! auxiliaries, the permit's state and the grant — in process (`web_support`): for each, the
//! success through the API's own write (one new version, the audit chain intact), a refusal of
//! the law or of the bookkeeping shown with the typed values kept, garbage and oversized input
//! refused with nothing stored, and a role outside the office kept out.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod web_support;

use axum::http::StatusCode;
use sync_core::domain::{CnhNumber, Cpf, PermitState, Registry, Renavam};
use sync_core::rules::RuleId;
use taxi_fiscal_server::limits::{MAX_REGISTRY_TEXT_CHARS, REGISTRY_FORM_BODY_LIMIT};
use web_support::{App, Client, Page, app, urlencode};

const OFFICE: (&str, &str) = ("escritorio", "escritorio-demo");

async fn office(app: &App) -> Client<'_> {
    Client::login(app, OFFICE.0, OFFICE.1).await
}

/// A CPF (check digits right) nobody in `reg` has.
fn free_cpf(reg: &Registry, seed: u8) -> Cpf {
    (0..=255u8)
        .filter_map(|k| Cpf::from_base([9, 8, 7, seed, k / 10 % 10, k % 10, 1, 2, 3]))
        .find(|c| !reg.people.iter().any(|p| &p.cpf == c))
        .unwrap()
}

fn cnh(seed: u8) -> CnhNumber {
    CnhNumber::from_base([5, 4, 3, 2, 1, seed, 7, 8, 9]).unwrap()
}

/// The person form's fields for a driver who meets art. 2 (EAR, licensed for ten years).
fn person_fields(code: &str, name: &str, cpf: &str, cnh: &str) -> Vec<(String, String)> {
    [
        ("codigo", code),
        ("nome", name),
        ("cpf", cpf),
        ("nascimento", "1980-05-17"),
        ("cnh", cnh),
        ("categoria", "b"),
        ("primeira_habilitacao", "2010-03-01"),
        ("validade", "2029-03-01"),
        ("tipo", "D"),
        ("observacoes", "EAR"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

fn pairs(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn with(fields: &[(String, String)], key: &str, value: &str) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|(k, v)| {
            let v = if k == key { value } else { v.as_str() };
            (k.clone(), v.to_owned())
        })
        .collect()
}

/// Posts the raw urlencoded `body` after the session's token (from `from`).
async fn post_body(c: &mut Client<'_>, from: &str, path: &str, body: &str) -> Page {
    let csrf = c.get(from).await.csrf();
    c.post_raw(
        path,
        format!("csrf={csrf}&{body}"),
        "application/x-www-form-urlencoded",
    )
    .await
}

#[tokio::test]
async fn people_are_searched_created_and_edited_with_every_mistake_said() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = office(&app).await;

    // The list: the menu leads here; a CPF in another spelling and a name without accents.
    let list = c.get("/escritorio/pessoas").await;
    list.html(StatusCode::OK);
    list.assert_labelled();
    assert!(list.has("menu-pessoas") && list.has("tabela-pessoas") && list.has("nova-pessoa"));
    assert!(list.body.contains("<th scope=\"col\">CPF</th>"));
    // Fifty a page, the rest one link away.
    let rows = |p: &Page| p.body.matches("<tr id=\"pessoa-").count();
    assert_eq!(rows(&list), 50);
    assert!(list.has("pagina-seguinte") && !list.has("pagina-anterior"));
    let last = reg.people.len().div_ceil(50);
    let end = c.get(&format!("/escritorio/pessoas?pagina={last}")).await;
    assert_eq!(rows(&end), reg.people.len() - 50 * (last - 1));
    assert!(end.has("pagina-anterior") && !end.has("pagina-seguinte"));
    let holder = reg.people.iter().find(|p| p.id == "P0001").unwrap();
    let p = c
        .get(&format!(
            "/escritorio/pessoas?busca={}",
            urlencode(&holder.cpf.masked())
        ))
        .await;
    assert!(p.has("pessoa-P0001"), "{}", p.from("total-pessoas"));
    assert!(p.from("total-pessoas").contains("1 pessoa encontrada."));
    let p = c
        .get(&format!(
            "/escritorio/pessoas?busca={}",
            holder.cpf.as_str()
        ))
        .await;
    assert!(p.has("pessoa-P0001"));
    assert!(p.part("pessoa-P0001", "</tr>").contains("titular do 0001"));
    let word = holder.name.split(' ').next().unwrap().to_uppercase();
    let p = c
        .get(&format!("/escritorio/pessoas?busca={}", urlencode(&word)))
        .await;
    assert!(p.has("pessoa-P0001"), "{word}");

    // The new form offers the next free code.
    let new = c.get("/escritorio/pessoas/nova").await;
    new.html(StatusCode::OK);
    new.assert_labelled();
    let code = new.value_of("pessoa-codigo");
    assert!(
        code.starts_with('P') && !reg.people.iter().any(|p| p.id == code),
        "{code}"
    );

    let cpf = free_cpf(&reg, 1);
    let fields = person_fields(&code, "Joana da Conceição", &cpf.masked(), cnh(1).as_str());
    let before = app.registry().await.version;

    // Mistakes: every one listed at once, the typed values kept, nothing stored.
    let bad = with(
        &with(
            &with(&fields, "cpf", "123.456.789-00"),
            "nascimento",
            "ontem",
        ),
        "categoria",
        &"B".repeat(MAX_REGISTRY_TEXT_CHARS + 1),
    );
    let p = c
        .post_form(
            "/escritorio/pessoas/nova",
            "/escritorio/pessoas/nova",
            &pairs(&bad),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-pessoa", "</div>");
    assert!(err.contains("confira os 3 campos"), "{err}");
    assert!(
        err.contains("CPF inválido: dígitos verificadores não conferem."),
        "{err}"
    );
    assert!(
        err.contains("«Data de nascimento» não é uma data válida: «ontem»"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "«Categoria da CNH» tem mais de {MAX_REGISTRY_TEXT_CHARS}"
        )),
        "{err}"
    );
    assert_eq!(p.value_of("pessoa-nome"), "Joana da Conceição");
    assert_eq!(p.value_of("pessoa-cpf"), "123.456.789-00");
    assert_eq!(p.value_of("pessoa-nascimento"), "ontem");
    // A line break inside the name: the operation refuses it (what the API refuses too).
    let p = c
        .post_form(
            "/escritorio/pessoas/nova",
            "/escritorio/pessoas/nova",
            &pairs(&with(&fields, "nome", "Joana\nArc")),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-pessoa").contains("caracteres de controle"));
    // The CPF of someone already in the registry: 409, said, kept.
    let taken = with(&fields, "cpf", &holder.cpf.masked());
    let p = c
        .post_form(
            "/escritorio/pessoas/nova",
            "/escritorio/pessoas/nova",
            &pairs(&taken),
        )
        .await;
    p.html(StatusCode::CONFLICT);
    assert!(
        p.from("erro-pessoa")
            .contains("Já existe outra pessoa com este CPF")
    );
    assert_eq!(p.value_of("pessoa-cpf"), holder.cpf.masked());
    // Not a form at all, and a body over the forms' limit.
    let p = post_body(
        &mut c,
        "/escritorio/pessoas/nova",
        "/escritorio/pessoas/nova",
        "%ff%fe=\u{0}",
    )
    .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let csrf = c.get("/escritorio/pessoas/nova").await.csrf();
    let head = format!("csrf={csrf}&nome=");
    let at_limit = format!(
        "{head}{}",
        "a".repeat(REGISTRY_FORM_BODY_LIMIT - head.len())
    );
    assert_eq!(at_limit.len(), REGISTRY_FORM_BODY_LIMIT);
    let p = c
        .post_raw(
            "/escritorio/pessoas/nova",
            at_limit.clone(),
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let p = c
        .post_raw(
            "/escritorio/pessoas/nova",
            format!("{at_limit}a"),
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(app.registry().await.version, before, "nothing stored");

    // The person is added: one new version, the page of the person, the CPF as the kernel keeps it.
    let p = c
        .post_form(
            "/escritorio/pessoas/nova",
            "/escritorio/pessoas/nova",
            &pairs(&fields),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), format!("/escritorio/pessoas/{code}"));
    let reg = app.registry().await;
    assert_eq!(reg.version, before + 1);
    let added = reg.people.iter().find(|p| p.id == code).unwrap();
    assert_eq!(added.cpf, cpf);
    assert_eq!(added.licence.category, "B");
    assert!(added.licence.has_ear());
    let page = c.get(&format!("/escritorio/pessoas/{code}")).await;
    page.html(StatusCode::OK);
    page.assert_labelled();
    assert!(
        page.from("aviso")
            .contains("cadastrada. Cadastro na versão")
    );
    assert_eq!(page.selected_of("pessoa-tipo"), "D");

    // Editing P0012 (holder of 0012, CNH expired): the new expiry is stored.
    let p12 = c.get("/escritorio/pessoas/P0012").await;
    assert!(p12.from("dados-pessoa").contains("vencida"));
    let mut edit: Vec<(String, String)> = [
        "nome",
        "cpf",
        "nascimento",
        "cnh",
        "categoria",
        "primeira_habilitacao",
        "validade",
        "observacoes",
    ]
    .iter()
    .map(|k| {
        let id = format!("pessoa-{}", k.replace('_', "-"));
        ((*k).to_owned(), p12.value_of(&id))
    })
    .collect();
    edit.push(("tipo".into(), p12.selected_of("pessoa-tipo")));
    let edit = with(&edit, "validade", "15/06/2031");
    let p = c
        .post_form(
            "/escritorio/pessoas/P0012",
            "/escritorio/pessoas/P0012",
            &pairs(&edit),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    assert_eq!(reg.version, before + 2);
    let p12 = reg.people.iter().find(|p| p.id == "P0012").unwrap();
    assert_eq!(
        p12.licence.expiry,
        chrono::NaiveDate::from_ymd_opt(2031, 6, 15).unwrap()
    );
    assert!(app.state.store().verify_audit().await.unwrap().ok);

    // An officer: no page, no write.
    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer
        .get("/escritorio/pessoas")
        .await
        .html(StatusCode::FORBIDDEN);
    let p = officer
        .post_raw(
            "/escritorio/pessoas/nova",
            "csrf=x&nome=Z",
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::FORBIDDEN);
    assert_eq!(app.registry().await.version, before + 2);
}

/// The vehicle form's fields for a taxi in the name of person `owner`.
fn vehicle_fields(code: &str, plate: &str, renavam: &str, owner: &str) -> Vec<(String, String)> {
    [
        ("codigo", code),
        ("placa", plate),
        ("renavam", renavam),
        ("modelo", "Chevrolet Spin"),
        ("cor", "branca"),
        ("ano", "2024"),
        ("portas", "4"),
        ("lotacao", "5"),
        ("municipio", "Americana"),
        ("uf", "sp"),
        ("categoria", "aluguel"),
        ("proprietario", owner),
        ("aferido_em", "2026-10-01"),
        ("valido_ate", "2027"),
        ("certificado", "IPEM-123"),
        ("lacre", "sim"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

#[tokio::test]
async fn vehicles_are_searched_by_plate_created_and_edited_with_the_laws_warnings() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = office(&app).await;
    let v1 = reg.vehicles.iter().find(|v| v.id == "V0001").unwrap();

    let list = c.get("/escritorio/veiculos").await;
    list.html(StatusCode::OK);
    list.assert_labelled();
    assert!(list.has("menu-veiculos") && list.has("tabela-veiculos"));
    // The plate in the other spelling (old form ↔ Mercosul, lower case) finds it.
    let other = v1
        .plate
        .old_form()
        .unwrap_or_else(|| v1.plate.canonical().to_lowercase());
    let p = c
        .get(&format!("/escritorio/veiculos?busca={}", urlencode(&other)))
        .await;
    assert!(
        p.has("veiculo-V0001"),
        "{other}: {}",
        p.from("total-veiculos")
    );
    assert!(p.from("total-veiculos").contains("1 veículo encontrado."));

    let new = c.get("/escritorio/veiculos/novo").await;
    new.html(StatusCode::OK);
    new.assert_labelled();
    let code = new.value_of("veiculo-codigo");
    let renavam = Renavam::from_base([1, 2, 3, 4, 5, 6, 7, 8, 9, 1]).unwrap();
    let fields = vehicle_fields(&code, "tst-1a23", renavam.as_str(), "P0002");
    let before = app.registry().await.version;

    // Garbage: every mistake, typed values kept, nothing stored.
    let bad = with(
        &with(&with(&fields, "renavam", "abc"), "ano", "dois mil"),
        "proprietario",
        "P9999",
    );
    let p = c
        .post_form(
            "/escritorio/veiculos/novo",
            "/escritorio/veiculos/novo",
            &pairs(&bad),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-veiculo", "</div>");
    assert!(err.contains("RENAVAM inválido"), "{err}");
    assert!(
        err.contains(
            "«Ano de fabricação» deve ser um número de 1950 a 2100; foi digitado «dois mil»"
        ),
        "{err}"
    );
    assert!(
        err.contains("«P9999» não consta do cadastro de pessoas"),
        "{err}"
    );
    assert_eq!(p.value_of("veiculo-ano"), "dois mil");
    assert_eq!(p.value_of("veiculo-placa"), "tst-1a23");
    // A plate already in use (in another spelling): 409, kept.
    let taken = with(&fields, "placa", &other);
    let p = c
        .post_form(
            "/escritorio/veiculos/novo",
            "/escritorio/veiculos/novo",
            &pairs(&taken),
        )
        .await;
    p.html(StatusCode::CONFLICT);
    assert!(
        p.from("erro-veiculo")
            .contains("já está cadastrada em outro veículo")
    );
    assert_eq!(p.value_of("veiculo-placa"), other);
    assert_eq!(p.selected_of("veiculo-proprietario"), "P0002");
    assert_eq!(app.registry().await.version, before);

    // Created: the plate as the kernel writes it, the owner's CPF, the taximeter.
    let p = c
        .post_form(
            "/escritorio/veiculos/novo",
            "/escritorio/veiculos/novo",
            &pairs(&fields),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), format!("/escritorio/veiculos/{code}"));
    let reg = app.registry().await;
    let v = reg.vehicles.iter().find(|v| v.id == code).unwrap();
    assert_eq!(v.plate.canonical(), "TST1A23");
    assert_eq!(v.licensing_uf, "SP");
    let p2 = reg.people.iter().find(|p| p.id == "P0002").unwrap();
    assert_eq!(v.owner_cpf, p2.cpf);
    let t = v.taximeter.as_ref().unwrap();
    assert!(t.seal_intact && t.valid_until_year == Some(2027));

    // V0001's CRLV put in another person's name: stored (a record of fact), and the law's
    // warning about permit 0001 (art. 30, III) comes back with its rule.
    let page = c.get("/escritorio/veiculos/V0001").await;
    page.html(StatusCode::OK);
    page.assert_labelled();
    let ids = [
        "placa",
        "renavam",
        "modelo",
        "cor",
        "ano",
        "portas",
        "lotacao",
        "municipio",
        "uf",
        "aferido_em",
        "valido_ate",
        "certificado",
    ];
    let mut edit: Vec<(String, String)> = ids
        .iter()
        .map(|k| {
            let id = match *k {
                "aferido_em" => "taximetro-aferido-em".to_owned(),
                "valido_ate" => "taximetro-valido-ate".to_owned(),
                "certificado" => "taximetro-certificado".to_owned(),
                k => format!("veiculo-{k}"),
            };
            ((*k).to_owned(), page.value_of(&id))
        })
        .collect();
    edit.push(("categoria".into(), page.selected_of("veiculo-categoria")));
    edit.push(("proprietario".into(), "P0002".into()));
    edit.push(("lacre".into(), "sim".into()));
    let p = c
        .post_form(
            "/escritorio/veiculos/V0001",
            "/escritorio/veiculos/V0001",
            &pairs(&edit),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let after = c.get("/escritorio/veiculos/V0001").await;
    let aviso = after.from("aviso");
    assert!(aviso.contains("Atenção ("), "{aviso}");
    assert!(
        after
            .from("dados-veiculo")
            .contains("CRLV fora do nome do titular")
    );
    assert_eq!(app.registry().await.version, before + 2);
    assert!(app.state.store().verify_audit().await.unwrap().ok);

    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer
        .get("/escritorio/veiculos/V0001")
        .await
        .html(StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn stands_are_created_within_the_art_14_cap_and_get_a_coordinator() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = office(&app).await;
    let list = c.get("/escritorio/pontos").await;
    list.html(StatusCode::OK);
    assert!(list.has("menu-pontos") && list.has("tabela-pontos") && list.has("ponto-S01"));
    // The demo's ratio (1:2,000) puts the cap at 118, below the 121 places it already has.
    assert!(
        list.from("resumo-pontos")
            .contains("limite de táxis do art. 14: 118")
    );
    let new = c.get("/escritorio/pontos/novo").await;
    new.html(StatusCode::OK);
    new.assert_labelled();
    assert_eq!(new.value_of("ponto-codigo"), "S09");
    let places: u32 = reg.stands.iter().map(|s| s.vacancies).sum();
    // The demo closed the places of its revoked permits: 118, the cap.
    assert_eq!(places, 118);
    let stand = |code: &str, places: &str| -> Vec<(String, String)> {
        [
            ("codigo", code),
            ("nome", "Estação Ferroviária"),
            ("endereco", "Praça Basílio Rangel, Americana-SP"),
            ("horario", "06-24"),
            ("servico", "comum"),
            ("vagas", places),
            ("latitude", "-22,7394"),
            ("longitude", "-47.3314"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    };
    let before = app.registry().await.version;

    // One place more is over the cap: refused by art. 14 with its rule, the values kept.
    let p = c
        .post_form(
            "/escritorio/pontos/novo",
            "/escritorio/pontos/novo",
            &pairs(&stand("S09", "1")),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-ponto", "</div>");
    assert!(
        err.contains(RuleId::R23.as_str()) && err.contains("art. 14"),
        "{err}"
    );
    assert_eq!(p.value_of("ponto-vagas"), "1");
    assert_eq!(p.selected_of("ponto-horario"), "06-24");
    // Garbage.
    let bad = with(
        &with(&stand("S09", "muitas"), "latitude", "norte"),
        "servico",
        "x",
    );
    let p = c
        .post_form(
            "/escritorio/pontos/novo",
            "/escritorio/pontos/novo",
            &pairs(&bad),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-ponto", "</div>");
    assert!(
        err.contains("«Vagas» deve ser um número") && err.contains("«Latitude»"),
        "{err}"
    );
    assert!(err.contains("tipo de serviço"), "{err}");
    assert_eq!(app.registry().await.version, before);
    // A stand without places adds no taxi: created (places are opened when the cap allows).
    let p = c
        .post_form(
            "/escritorio/pontos/novo",
            "/escritorio/pontos/novo",
            &pairs(&stand("S09", "0")),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), "/escritorio/pontos/S09");
    let reg = app.registry().await;
    let s9 = reg.stands.iter().find(|s| s.id == "S09").unwrap();
    assert_eq!((s9.vacancies, s9.latitude), (0, Some(-22.7394)));

    // Fewer places than the permits in force at S01: refused, said.
    let s1 = c.get("/escritorio/pontos/S01").await;
    s1.html(StatusCode::OK);
    s1.assert_labelled();
    let mut edit = stand("S01", "1");
    edit.retain(|(k, _)| k != "codigo");
    let edit = with(
        &with(&edit, "nome", &s1.value_of("ponto-nome")),
        "horario",
        "06-20",
    );
    let p = c
        .post_form(
            "/escritorio/pontos/S01",
            "/escritorio/pontos/S01",
            &pairs(&edit),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-ponto").contains(RuleId::R23.as_str()));
    assert_eq!(p.value_of("ponto-vagas"), "1");

    // The coordinator: set among the people, then cleared; an unknown person is refused.
    let p = c
        .post_form(
            "/escritorio/pontos/S01",
            "/escritorio/pontos/S01/coordenador",
            &[("pessoa", "P9999")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-coordenador").contains("P9999 não consta"));
    let p = c
        .post_form(
            "/escritorio/pontos/S01",
            "/escritorio/pontos/S01/coordenador",
            &[("pessoa", "P0005")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    let s1 = reg.stands.iter().find(|s| s.id == "S01").unwrap();
    assert_eq!(s1.coordinator_id.as_deref(), Some("P0005"));
    let page = c.get("/escritorio/pontos/S01").await;
    assert!(page.from("aviso").contains("é o coordenador do ponto S01"));
    assert_eq!(page.selected_of("coordenador-pessoa"), "P0005");
    // The demo's coordinator account (of S01) is listed on its stand.
    assert!(
        page.from("contas-coordenador")
            .contains("Coordenador do Terminal Urbano (coordenador)")
    );
    let p = c
        .post_form(
            "/escritorio/pontos/S01",
            "/escritorio/pontos/S01/coordenador",
            &[("pessoa", "")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER);
    assert_eq!(
        app.registry()
            .await
            .stands
            .iter()
            .find(|s| s.id == "S01")
            .unwrap()
            .coordinator_id,
        None
    );
    assert_eq!(app.registry().await.version, before + 3);

    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer
        .get("/escritorio/pontos")
        .await
        .html(StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn auxiliaries_are_added_within_art_8_and_removed_from_the_permit_page() {
    let app = app().await;
    let mut c = office(&app).await;
    let page = c.get("/escritorio/alvaras/0002").await;
    page.html(StatusCode::OK);
    page.assert_labelled();
    assert!(page.has("form-auxiliar") && page.has("form-situacao"));
    assert_eq!(page.value_of("auxiliar-alvara"), "0002-A1");
    let before = app.registry().await.version;

    // A third auxiliary on 0003: refused by art. 8 with its rule, the choice kept.
    let p = c
        .post_form(
            "/escritorio/alvaras/0003",
            "/escritorio/alvaras/0003/auxiliares",
            &[("pessoa", "P0001"), ("alvara", "0003-A3"), ("data", "")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-auxiliar", "</div>");
    assert!(
        err.contains(RuleId::R13.as_str()) && err.contains("art. 8"),
        "{err}"
    );
    assert_eq!(p.selected_of("auxiliar-pessoa"), "P0001");
    assert_eq!(p.value_of("auxiliar-alvara"), "0003-A3");
    assert!(p.has("auxiliares-no-limite"));
    // Garbage: no person, a bad date, an oversized alvará number.
    let p = c
        .post_form(
            "/escritorio/alvaras/0002",
            "/escritorio/alvaras/0002/auxiliares",
            &[
                ("pessoa", ""),
                ("alvara", &"9".repeat(MAX_REGISTRY_TEXT_CHARS + 1)),
                ("data", "32/13/2026"),
            ],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-auxiliar", "</div>");
    assert!(
        err.contains("Escolha a pessoa") && err.contains("«Registrado em»"),
        "{err}"
    );
    assert!(err.contains("tem mais de"), "{err}");
    assert_eq!(app.registry().await.version, before);

    // The holder of 0001 becomes auxiliary of 0002.
    let p = c
        .post_form(
            "/escritorio/alvaras/0002",
            "/escritorio/alvaras/0002/auxiliares",
            &[("pessoa", "P0001"), ("alvara", "0002-A1"), ("data", "")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    let permit = reg.permits.iter().find(|p| p.number == "0002").unwrap();
    assert_eq!(permit.auxiliaries.len(), 1);
    assert_eq!(permit.auxiliaries[0].person_id, "P0001");
    let page = c.get("/escritorio/alvaras/0002").await;
    assert!(
        page.from("aviso")
            .contains("incluído como motorista auxiliar do alvará 0002")
    );
    assert!(page.has("auxiliar-P0001") && page.has("remover-auxiliar-P0001"));

    // Removed with its button; removing again is said, nothing stored.
    let p = c
        .post_form(
            "/escritorio/alvaras/0002",
            "/escritorio/alvaras/0002/auxiliares/P0001/remover",
            &[],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    assert!(
        reg.permits
            .iter()
            .find(|p| p.number == "0002")
            .unwrap()
            .auxiliaries
            .is_empty()
    );
    let p = c
        .post_form(
            "/escritorio/alvaras/0002",
            "/escritorio/alvaras/0002/auxiliares/P0001/remover",
            &[],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        p.from("erro-remover-auxiliar")
            .contains("não é motorista auxiliar")
    );
    assert_eq!(app.registry().await.version, before + 2);
    assert!(app.state.store().verify_audit().await.unwrap().ok);

    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    let p = officer
        .post_raw(
            "/escritorio/alvaras/0002/auxiliares",
            "csrf=x&pessoa=P0001&alvara=1",
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_permits_state_is_changed_with_its_dates() {
    let app = app().await;
    let mut c = office(&app).await;
    let page = c.get("/escritorio/alvaras/0001").await;
    assert_eq!(page.selected_of("situacao-nova"), "ativo");
    let before = app.registry().await.version;
    let post = |kind: &'static str, from: &'static str, until: &'static str| {
        [("situacao", kind), ("inicio", from), ("fim", until)]
    };
    // A suspension without its last day, or ending before it starts: said, kept, nothing stored.
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/situacao",
            &post("suspenso", "2026-12-01", ""),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        p.from("erro-situacao")
            .contains("Preencha o campo «Último dia da suspensão»")
    );
    assert_eq!(p.selected_of("situacao-nova"), "suspenso");
    assert_eq!(p.value_of("situacao-inicio"), "2026-12-01");
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/situacao",
            &post("suspenso", "2026-12-10", "2026-12-01"),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-situacao").contains("anterior ao início"));
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/situacao",
            &post("inventado", "", ""),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.registry().await.version, before);

    // Suspended for 15 days, then back to active.
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/situacao",
            &post("suspenso", "01/12/2026", "2026-12-15"),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    let state = &reg
        .permits
        .iter()
        .find(|p| p.number == "0001")
        .unwrap()
        .state;
    let d = |m, day| chrono::NaiveDate::from_ymd_opt(2026, m, day).unwrap();
    assert_eq!(
        state,
        &PermitState::Suspended {
            from: d(12, 1),
            until: d(12, 15)
        }
    );
    let page = c.get("/escritorio/alvaras/0001").await;
    assert!(
        page.from("aviso")
            .contains("suspenso de 01/12/2026 a 15/12/2026")
    );
    assert_eq!(page.selected_of("situacao-nova"), "suspenso");
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/situacao",
            &post("ativo", "", ""),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg = app.registry().await;
    assert_eq!(
        reg.permits
            .iter()
            .find(|p| p.number == "0001")
            .unwrap()
            .state,
        PermitState::Active
    );
    assert_eq!(reg.version, before + 2);
}

#[tokio::test]
async fn a_permit_is_granted_from_its_page_and_the_law_refuses_a_full_stand() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = office(&app).await;
    let list = c.get("/escritorio/alvaras").await;
    assert!(list.has("conceder-alvara"));
    // A new holder and a vehicle in their name, through the pages.
    let cpf = free_cpf(&reg, 2);
    let fields = person_fields(
        "P9001",
        "Rita de Cássia Moraes",
        cpf.as_str(),
        cnh(2).as_str(),
    );
    let p = c
        .post_form(
            "/escritorio/pessoas/nova",
            "/escritorio/pessoas/nova",
            &pairs(&fields),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let renavam = Renavam::from_base([2, 2, 3, 4, 5, 6, 7, 8, 9, 1]).unwrap();
    let fields = vehicle_fields("V9001", "RDC2B34", renavam.as_str(), "P9001");
    let p = c
        .post_form(
            "/escritorio/veiculos/novo",
            "/escritorio/veiculos/novo",
            &pairs(&fields),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);

    // The place of a revoked permit stays open (art. 7: "declarado vago o ponto"): 0010 is
    // revoked from its page first, which opens the place the grant fills.
    let p = c
        .post_form(
            "/escritorio/alvaras/0010",
            "/escritorio/alvaras/0010/situacao",
            &[("situacao", "cassado"), ("inicio", ""), ("fim", "")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let form = c.get("/escritorio/alvaras/novo").await;
    form.html(StatusCode::OK);
    form.assert_labelled();
    assert_eq!(form.value_of("concessao-numero"), "0122");
    let reg = app.registry().await;
    let live_at = |s: &str| {
        reg.permits
            .iter()
            .filter(|p| p.stand_id == s && !matches!(p.state, PermitState::Revoked { .. }))
            .count()
    };
    let full = reg
        .stands
        .iter()
        .find(|s| {
            live_at(&s.id) == s.vacancies as usize
                && s.service == sync_core::domain::ServiceKind::Common
        })
        .unwrap();
    let open = reg
        .permits
        .iter()
        .find(|p| p.number == "0010")
        .map(|p| p.stand_id.clone())
        .unwrap();
    let before = reg.version;
    let grant = |stand: &str| {
        vec![
            ("numero", "0122".to_owned()),
            ("titular", "P9001".to_owned()),
            ("veiculo", "V9001".to_owned()),
            ("ponto", stand.to_owned()),
            ("servico", String::new()),
            ("expedicao", String::new()),
            ("edital", "2026-09-01".to_owned()),
        ]
    };
    let send = |g: &Vec<(&'static str, String)>| -> Vec<(String, String)> {
        g.iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    };

    // A full stand: the law refuses (no open place, art. 14), the choices kept.
    let g = send(&grant(&full.id));
    let p = c
        .post_form(
            "/escritorio/alvaras/novo",
            "/escritorio/alvaras/novo",
            &pairs(&g),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-concessao", "</div>");
    assert!(err.contains("a Lei 4.019/2004 não permite"), "{err}");
    assert!(err.contains(RuleId::R23.as_str()), "{err}");
    assert_eq!(p.selected_of("concessao-ponto"), full.id);
    assert_eq!(p.selected_of("concessao-titular"), "P9001");
    assert_eq!(p.value_of("concessao-edital"), "2026-09-01");
    // Garbage.
    let g = send(&grant(&open))
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "expedicao" => (k, "amanhã".into()),
            "titular" => (k, String::new()),
            _ => (k, v),
        })
        .collect::<Vec<_>>();
    let p = c
        .post_form(
            "/escritorio/alvaras/novo",
            "/escritorio/alvaras/novo",
            &pairs(&g),
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.part("erro-concessao", "</div>");
    assert!(
        err.contains("«Titular»") && err.contains("«Expedido em»"),
        "{err}"
    );
    assert_eq!(app.registry().await.version, before);

    assert!(form.body.contains(&format!("{open} – ")));
    assert!(
        form.body.contains("(1 vaga livre de "),
        "the open place is shown"
    );
    // At the place the revoked 0010 left open: granted.
    let g = send(&grant(&open));
    let p = c
        .post_form(
            "/escritorio/alvaras/novo",
            "/escritorio/alvaras/novo",
            &pairs(&g),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), "/escritorio/alvaras/0122");
    let reg = app.registry().await;
    let permit = reg.permits.iter().find(|p| p.number == "0122").unwrap();
    assert_eq!(
        (permit.holder_id.as_str(), permit.stand_id.as_str()),
        ("P9001", open.as_str())
    );
    assert_eq!(reg.version, before + 1);
    let page = c.get("/escritorio/alvaras/0122").await;
    assert!(page.from("aviso").contains("Alvará 0122 concedido."));
    assert!(app.state.store().verify_audit().await.unwrap().ok);

    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer
        .get("/escritorio/alvaras/novo")
        .await
        .html(StatusCode::FORBIDDEN);
}
