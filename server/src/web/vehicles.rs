//! The vehicles of the registry in the office pages: the list with a search by plate, the form
//! that adds a vehicle and the page that shows one with its permit and edits it — the CRLV's
//! data (plate, RENAVAM, make and model, colour, year, seats, where it is licensed, category,
//! the owner, chosen among the people of the registry: art. 30, III), the doors, and the last
//! verification of the taximeter (art. 1º, § 1º).
//!
//! Every write goes through the same function as the API ([`write::create_vehicle`] for
//! `POST /v1/vehicles`, [`write::update_vehicle`] for `PUT /v1/vehicles/{id}`). Mistakes in the
//! form are all listed above it (422, typed values kept, nothing written); a plate already in
//! use is 409; what the law then finds on the vehicle's permit (a CRLV in another name, a broken
//! seal) comes back as warnings in the flash.
//!
//! Routes and element ids (stable: the tests drive the pages by them):
//!
//! | route | ids |
//! |---|---|
//! | `GET /escritorio/veiculos?busca=…&pagina=…` | `form-busca-veiculos`, `busca-veiculos`, `buscar-veiculos`, `novo-veiculo`, `total-veiculos`, `tabela-veiculos` (rows `veiculo-{id}`, links `abrir-veiculo-{id}`), `sem-veiculos` |
//! | `GET`/`POST /escritorio/veiculos/novo` | the form below |
//! | `GET`/`POST /escritorio/veiculos/{id}` | `dados-veiculo`; the form below |
//!
//! The form: `form-veiculo`, `veiculo-codigo` (new only), `veiculo-placa`, `veiculo-renavam`,
//! `veiculo-modelo`, `veiculo-cor`, `veiculo-ano`, `veiculo-portas`, `veiculo-lotacao`,
//! `veiculo-municipio`, `veiculo-uf`, `veiculo-categoria`, `veiculo-proprietario` (a person's
//! code), `taximetro-aferido-em` (empty: no verification), `taximetro-valido-ate`,
//! `taximetro-certificado`, `taximetro-lacre`, `salvar-veiculo`, error `erro-veiculo`.
//!
//! Search (`busca`): a plate in any spelling (old or Mercosul form, with or without the dash),
//! the RENAVAM, the vehicle's code or part of its make and model.

use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};
use maud::{Markup, html};
use serde::Deserialize;
use sync_core::domain::{Plate, Registry, Renavam, Taximeter, Vehicle, VehicleCategory};

use super::layout::{date_br, date_field, page, post_form, select_field, submit, text_field};
use super::registry::{Fields, after_write, date_value, fold, next_code, pager, people_options};
use super::session::{FormLimit, OfficeUser, Posted};
use super::{PageError, url_encode};
use crate::api::registry::write;
use crate::error::AppError;
use crate::limits::REGISTRY_FORM_BODY_LIMIT;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/escritorio/veiculos", get(list))
        .route("/escritorio/veiculos/novo", get(new_form).post(create))
        .route("/escritorio/veiculos/{id}", get(show).post(update))
        .layer(Extension(FormLimit(REGISTRY_FORM_BODY_LIMIT)))
}

/// The page of vehicle `id`.
pub(crate) fn vehicle_link(id: &str) -> String {
    format!("/escritorio/veiculos/{}", url_encode(id))
}

/// CRLV categories: (form value, label, category).
const CATEGORIES: &[(&str, &str, VehicleCategory)] = &[
    (
        "aluguel",
        "aluguel (o de um táxi)",
        VehicleCategory::Aluguel,
    ),
    ("particular", "particular", VehicleCategory::Particular),
    ("oficial", "oficial", VehicleCategory::Oficial),
    ("outra", "outra", VehicleCategory::Outra),
];

#[derive(Debug, Clone, Default, Deserialize)]
struct ListQuery {
    #[serde(default)]
    busca: Option<String>,
    #[serde(default)]
    pagina: Option<usize>,
}

fn owner_name(reg: &Registry, v: &Vehicle) -> String {
    reg.index()
        .person_by_cpf(&v.owner_cpf)
        .map_or_else(|| v.owner_cpf.masked(), |p| p.name.clone())
}

async fn list(
    State(state): State<AppState>,
    user: OfficeUser,
    Query(q): Query<ListQuery>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let busca = q.busca.as_deref().unwrap_or_default().trim().to_owned();
    let plate = Plate::parse(&busca).ok();
    let digits: String = busca.chars().filter(char::is_ascii_digit).collect();
    let needle = fold(&busca);
    let mut found: Vec<&Vehicle> = reg
        .vehicles
        .iter()
        .filter(|v| {
            busca.is_empty()
                || plate.as_ref().is_some_and(|p| v.plate.same_vehicle(p))
                || v.id.eq_ignore_ascii_case(&busca)
                || (digits.len() >= 9 && v.renavam.as_str().ends_with(&digits))
                || fold(&v.make_model).contains(&needle)
        })
        .collect();
    found.sort_by(|a, b| a.plate.canonical().cmp(b.plate.canonical()));
    let (skip, nav) = pager(found.len(), q.pagina.unwrap_or(1), |n| {
        format!(
            "/escritorio/veiculos?busca={}&pagina={n}",
            url_encode(&busca)
        )
    });
    let permit_of = |id: &str| {
        reg.permits
            .iter()
            .filter(|p| p.vehicle_id == id)
            .map(|p| p.number.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let body = html! {
        p { a #novo-veiculo href="/escritorio/veiculos/novo" { "Cadastrar um veículo" } }
        form .filtros method="get" action="/escritorio/veiculos" id="form-busca-veiculos" role="search" {
            (text_field("busca-veiculos", "busca", "Placa, RENAVAM, código ou modelo", &busca, false))
            div .acoes { (submit("buscar-veiculos", "Buscar")) }
        }
        p #total-veiculos role="status" {
            @if found.len() == 1 { "1 veículo encontrado." } @else { (found.len()) " veículos encontrados." }
        }
        @if found.is_empty() {
            p #sem-veiculos { "Nenhum veículo corresponde à busca." }
        } @else {
            table #tabela-veiculos {
                caption { "Veículos do cadastro" }
                thead { tr {
                    th scope="col" { "Placa" } th scope="col" { "Marca/modelo" } th scope="col" { "Proprietário (CRLV)" }
                    th scope="col" { "Taxímetro aferido em" } th scope="col" { "Alvará" }
                } }
                tbody {
                    @for v in found.iter().skip(skip).take(super::registry::PAGE_SIZE) {
                        tr id=(format!("veiculo-{}", v.id)) {
                            td { a id=(format!("abrir-veiculo-{}", v.id)) href=(vehicle_link(&v.id)) { (v.plate.canonical()) } }
                            td { (v.make_model) ", " (v.colour) }
                            td { (owner_name(&reg, v)) }
                            td { @match &v.taximeter { Some(t) => { (date_br(t.verified_on)) }, None => { strong { "sem aferição" } } } }
                            td { (permit_of(&v.id)) }
                        }
                    }
                }
            }
            (nav)
        }
    };
    Ok(page(Some(&user), "Veículos", flash, body))
}

/// What the vehicle form holds, as typed.
#[derive(Debug, Clone, Default, Deserialize)]
struct VehicleForm {
    #[serde(default)]
    codigo: String,
    #[serde(default)]
    placa: String,
    #[serde(default)]
    renavam: String,
    #[serde(default)]
    modelo: String,
    #[serde(default)]
    cor: String,
    #[serde(default)]
    ano: String,
    #[serde(default)]
    portas: String,
    #[serde(default)]
    lotacao: String,
    #[serde(default)]
    municipio: String,
    #[serde(default)]
    uf: String,
    #[serde(default)]
    categoria: String,
    #[serde(default)]
    proprietario: String,
    #[serde(default)]
    aferido_em: String,
    #[serde(default)]
    valido_ate: String,
    #[serde(default)]
    certificado: String,
    #[serde(default)]
    lacre: Option<String>,
}

impl VehicleForm {
    fn blank() -> Self {
        Self {
            portas: "4".into(),
            lotacao: "5".into(),
            municipio: "Americana".into(),
            uf: "SP".into(),
            categoria: "aluguel".into(),
            lacre: Some("sim".into()),
            ..Self::default()
        }
    }

    fn of(reg: &Registry, v: &Vehicle) -> Self {
        let t = v.taximeter.as_ref();
        Self {
            codigo: v.id.clone(),
            placa: v.plate.canonical().to_owned(),
            renavam: v.renavam.as_str().to_owned(),
            modelo: v.make_model.clone(),
            cor: v.colour.clone(),
            ano: v.year_of_manufacture.to_string(),
            portas: v.doors.to_string(),
            lotacao: v.capacity_incl_driver.to_string(),
            municipio: v.licensing_municipality.clone(),
            uf: v.licensing_uf.clone(),
            categoria: CATEGORIES
                .iter()
                .find(|(_, _, c)| *c == v.category)
                .map_or("outra", |(value, _, _)| value)
                .to_owned(),
            proprietario: reg
                .index()
                .person_by_cpf(&v.owner_cpf)
                .map_or_else(String::new, |p| p.id.clone()),
            aferido_em: t.map_or_else(String::new, |t| date_value(t.verified_on)),
            valido_ate: t
                .and_then(|t| t.valid_until_year)
                .map_or_else(String::new, |y| y.to_string()),
            certificado: t
                .and_then(|t| t.certificate_number.clone())
                .unwrap_or_default(),
            lacre: t.is_none_or(|t| t.seal_intact).then(|| "sim".into()),
        }
    }

    /// The vehicle the form describes, with code `id`, or every mistake.
    fn vehicle(&self, reg: &Registry, id: &str) -> Result<Vehicle, AppError> {
        let mut f = Fields::default();
        let id = f.text("Código", id, true);
        let plate = f.parsed("Placa", &self.placa, Plate::parse);
        let renavam = f.parsed("RENAVAM", &self.renavam, Renavam::parse);
        let make_model = f.text("Marca/modelo", &self.modelo, true);
        let colour = f.text("Cor", &self.cor, true);
        let year = f.number("Ano de fabricação", &self.ano, 1950..=2100);
        let doors = f.number("Portas", &self.portas, 2..=6);
        let seats = f.number("Lotação com o condutor", &self.lotacao, 2..=9);
        let municipality = f.text("Município de licenciamento", &self.municipio, true);
        let uf = f.text("UF", &self.uf, true).to_uppercase();
        let two_letters = uf.len() == 2 && uf.chars().all(|c| c.is_ascii_alphabetic());
        if !uf.is_empty() && !two_letters {
            f.error(format!(
                "A UF tem duas letras (ex.: SP); foi digitado «{uf}»."
            ));
        }
        let category = CATEGORIES
            .iter()
            .find(|(v, _, _)| *v == self.categoria.trim())
            .map(|(_, _, c)| *c);
        if category.is_none() {
            f.error("Escolha a categoria do CRLV.");
        }
        let owner = f.text("Proprietário", &self.proprietario, true);
        let owner_cpf = match reg.index().person(&owner) {
            Some(p) => Some(p.cpf.clone()),
            None => {
                if !owner.is_empty() {
                    f.error(format!(
                        "O proprietário «{owner}» não consta do cadastro de pessoas: cadastre-o antes."
                    ));
                }
                None
            }
        };
        let verified_on = f.date("Aferição do taxímetro", &self.aferido_em, false);
        let valid_until = f.text("Taxímetro válido até (ano)", &self.valido_ate, false);
        let valid_until_year = if valid_until.is_empty() {
            None
        } else {
            f.number("Taxímetro válido até (ano)", &valid_until, 1950..=2100)
        };
        let certificate = f.text("Certificado do taxímetro", &self.certificado, false);
        let has_meter_data = !valid_until.is_empty() || !certificate.is_empty();
        if verified_on.is_none() && self.aferido_em.trim().is_empty() && has_meter_data {
            f.error("Informe a data da aferição do taxímetro, ou apague os outros dados dele.");
        }
        f.finish()?;
        let taximeter = verified_on.map(|verified_on| Taximeter {
            certificate_number: (!certificate.is_empty()).then_some(certificate),
            verified_on,
            valid_until_year,
            seal_intact: self.lacre.as_deref() == Some("sim"),
        });
        match (plate, renavam, year, doors, seats, category, owner_cpf) {
            (
                Some(plate),
                Some(renavam),
                Some(year),
                Some(doors),
                Some(seats),
                Some(category),
                Some(owner_cpf),
            ) => Ok(Vehicle {
                id,
                plate,
                renavam,
                make_model,
                colour,
                year_of_manufacture: year,
                doors,
                capacity_incl_driver: seats,
                licensing_municipality: municipality,
                licensing_uf: uf,
                category,
                owner_cpf,
                taximeter,
            }),
            // `finish` has said what is missing.
            _ => Err(AppError::unprocessable(
                "invalid_form",
                "Confira os campos do formulário.",
            )),
        }
    }
}

fn vehicle_form(user: &OfficeUser, reg: &Registry, id: Option<&str>, form: &VehicleForm) -> Markup {
    let action = id.map_or(String::from("/escritorio/veiculos/novo"), vehicle_link);
    let categories: Vec<(String, String)> = CATEGORIES
        .iter()
        .map(|(v, l, _)| ((*v).to_owned(), (*l).to_owned()))
        .collect();
    let mut owners = vec![(String::new(), String::from("— escolha a pessoa —"))];
    owners.extend(people_options(reg));
    post_form(
        user,
        &action,
        "form-veiculo",
        html! {
            fieldset {
                legend { "CRLV" }
                @if id.is_none() {
                    (text_field("veiculo-codigo", "codigo", "Código no cadastro (ex.: V0123)", &form.codigo, true))
                }
                (text_field("veiculo-placa", "placa", "Placa (ABC-1234 ou ABC1C34)", &form.placa, true))
                (text_field("veiculo-renavam", "renavam", "RENAVAM", &form.renavam, true))
                (text_field("veiculo-modelo", "modelo", "Marca/modelo", &form.modelo, true))
                (text_field("veiculo-cor", "cor", "Cor", &form.cor, true))
                (text_field("veiculo-ano", "ano", "Ano de fabricação", &form.ano, true))
                (text_field("veiculo-lotacao", "lotacao", "Lotação com o condutor", &form.lotacao, true))
                (text_field("veiculo-municipio", "municipio", "Município de licenciamento", &form.municipio, true))
                (text_field("veiculo-uf", "uf", "UF", &form.uf, true))
                (select_field("veiculo-categoria", "categoria", "Categoria", &categories, &form.categoria))
                (select_field("veiculo-proprietario", "proprietario", "Proprietário no CRLV (art. 30, III: o titular do alvará)", &owners, &form.proprietario))
                (text_field("veiculo-portas", "portas", "Portas", &form.portas, true))
            }
            fieldset {
                legend { "Taxímetro (art. 1º, § 1º)" }
                (date_field("taximetro-aferido-em", "aferido_em", "Última aferição (em branco: sem aferição)", &form.aferido_em, false))
                (text_field("taximetro-valido-ate", "valido_ate", "Válido até (ano do selo)", &form.valido_ate, false))
                (text_field("taximetro-certificado", "certificado", "Número do certificado", &form.certificado, false))
                p {
                    input type="checkbox" id="taximetro-lacre" name="lacre" value="sim" checked[form.lacre.as_deref() == Some("sim")];
                    " "
                    label for="taximetro-lacre" { "Lacre intacto" }
                }
            }
            (submit("salvar-veiculo", if id.is_some() { "Salvar as alterações" } else { "Cadastrar o veículo" }))
        },
    )
}

async fn new_page(
    state: &AppState,
    user: &OfficeUser,
    form: VehicleForm,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let mut form = form;
    if form.codigo.is_empty() && error.is_none() {
        form.codigo = next_code("V", reg.vehicles.iter().map(|v| v.id.as_str()));
    }
    let body = html! {
        p { a href="/escritorio/veiculos" { "← Voltar à lista de veículos" } }
        @if let Some(e) = error { (e) }
        (vehicle_form(user, &reg, None, &form))
    };
    Ok(page(Some(user), "Cadastrar um veículo", flash, body))
}

async fn new_form(State(state): State<AppState>, user: OfficeUser) -> Result<Markup, PageError> {
    new_page(&state, &user, VehicleForm::blank(), None).await
}

async fn create(
    State(state): State<AppState>,
    Posted { user, form }: Posted<VehicleForm>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let result = match form.vehicle(&reg, &form.codigo) {
        Ok(v) => write::create_vehicle(&state, &user.auth, v).await,
        Err(e) => Err(e),
    };
    let id = form.codigo.trim().to_owned();
    let done = format!("Veículo {} cadastrado.", form.placa.trim().to_uppercase());
    after_write(
        &user,
        result,
        &done,
        &vehicle_link(&id),
        "erro-veiculo",
        |e| new_page(&state, &user, form.clone(), Some(e)),
    )
    .await
}

async fn vehicle_page(
    state: &AppState,
    user: &OfficeUser,
    id: &str,
    form: Option<VehicleForm>,
    error: Option<Markup>,
) -> Result<Markup, PageError> {
    let flash = user.take_flash().await;
    let reg = state.store().registry().await?;
    let Some(v) = reg.index().vehicle(id) else {
        return Err(PageError::not_found(format!(
            "O veículo {id} não consta do cadastro."
        )));
    };
    let form = form.unwrap_or_else(|| VehicleForm::of(&reg, v));
    let permits: Vec<_> = reg
        .permits
        .iter()
        .filter(|p| p.vehicle_id == v.id)
        .collect();
    let owner = reg.index().person_by_cpf(&v.owner_cpf);
    let body = html! {
        p { a href="/escritorio/veiculos" { "← Voltar à lista de veículos" } }
        section #dados-veiculo aria-labelledby="h-dados-veiculo" {
            h2 #h-dados-veiculo { "Situação" }
            dl {
                dt { "Código" } dd { (v.id) }
                dt { "Proprietário no CRLV" } dd {
                    @match owner {
                        Some(p) => { a href=(super::people::person_link(&p.id)) { (p.name) } " (CPF " (p.cpf.masked()) ")" }
                        None => { "CPF " (v.owner_cpf.masked()) ", fora do cadastro de pessoas" }
                    }
                }
                dt { "Alvará" } dd {
                    @if permits.is_empty() { "nenhum" }
                    @for p in &permits {
                        a href=(format!("/escritorio/alvaras/{}", url_encode(&p.number))) { (p.number) } " "
                        @if let Some(h) = reg.index().person(&p.holder_id) {
                            @if h.cpf != v.owner_cpf { strong { "(CRLV fora do nome do titular, art. 30, III) " } }
                        }
                    }
                }
            }
        }
        section #alterar-veiculo aria-labelledby="h-alterar-veiculo" {
            h2 #h-alterar-veiculo { "Alterar os dados" }
            p .dica { "A alteração gera uma nova versão do cadastro, que os tablets recebem na próxima sincronização." }
            @if let Some(e) = error { (e) }
            (vehicle_form(user, &reg, Some(&v.id), &form))
        }
    };
    Ok(page(
        Some(user),
        &format!("Veículo {}", v.plate.canonical()),
        flash,
        body,
    ))
}

async fn show(
    State(state): State<AppState>,
    user: OfficeUser,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    vehicle_page(&state, &user, &id, None, None).await
}

async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<VehicleForm>,
) -> Result<Response, PageError> {
    let reg = state.store().registry().await?;
    let result = match form.vehicle(&reg, &id) {
        Ok(v) => write::update_vehicle(&state, &user.auth, &id, v).await,
        Err(e) => Err(e),
    };
    let done = format!(
        "Dados do veículo {} alterados.",
        form.placa.trim().to_uppercase()
    );
    after_write(
        &user,
        result,
        &done,
        &vehicle_link(&id),
        "erro-veiculo",
        |e| vehicle_page(&state, &user, &id, Some(form.clone()), Some(e)),
    )
    .await
}
