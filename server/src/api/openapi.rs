//! The OpenAPI document at `GET /openapi.json`.
//!
//! Paths come from the `#[utoipa::path]` annotation of each handler, collected by utoipa-axum's
//! `routes!` when the router is assembled, so the document and the router cannot disagree about
//! which routes exist. Schemas have one source, schemars (like `schemas/` for sync-core): every
//! payload type derives `JsonSchema`, handlers refer to it by name ([`named_schema!`] gives
//! utoipa that name), and [`build`] replaces the document's components with the schemars
//! definitions of [`payload_schemas`]. Then every operation that is not public gets the bearer
//! security requirement and a `default` error response with the one error shape.
//!
//! `server/tests/api/openapi.rs` keeps a snapshot (`server/tests/snapshots/openapi.json`) and
//! checks that every `$ref` resolves; `schemas/api/` holds the server payload schemas
//! (`server/tests/api/schemas.rs`). Rewrite both with `UPDATE_SNAPSHOTS=1`.

use std::sync::OnceLock;

use axum::Json;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};
use utoipa::openapi::{InfoBuilder, OpenApiBuilder};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::server::AppState;

/// Gives utoipa a schema name for a type whose schema comes from schemars.
macro_rules! named_schema {
    ($($ty:ty => $name:literal),* $(,)?) => {$(
        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::Ref::from_schema_name($name).into()
            }
        }
        impl utoipa::ToSchema for $ty {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
            }
        }
    )*};
}
pub(crate) use named_schema;

named_schema!(crate::error::ErrorBody => "ErrorBody");

/// Stand-ins in `#[utoipa::path]` attributes for sync-core and store types (which cannot
/// implement utoipa's traits here): each names the schemars schema of the real type.
pub mod doc {
    /// `sync_core::domain::Person`.
    #[derive(Debug)]
    pub struct Person;
    /// `sync_core::domain::Vehicle`.
    #[derive(Debug)]
    pub struct Vehicle;
    /// `sync_core::domain::Stand`.
    #[derive(Debug)]
    pub struct Stand;
    /// `sync_core::domain::Permit`.
    #[derive(Debug)]
    pub struct Permit;
    /// `sync_core::domain::PermitState`.
    #[derive(Debug)]
    pub struct PermitState;
    /// `sync_core::domain::Penalty`.
    #[derive(Debug)]
    pub struct Penalty;
    /// `sync_core::domain::Fine`.
    #[derive(Debug)]
    pub struct Fine;
    /// `sync_core::domain::Transfer`.
    #[derive(Debug)]
    pub struct Transfer;
    /// `sync_core::feed::RegistrySnapshot` (= `Registry`).
    #[derive(Debug)]
    pub struct RegistrySnapshot;
    /// `sync_core::feed::RegistryChanges`.
    #[derive(Debug)]
    pub struct RegistryChanges;

    /// `taxi_fiscal_store::observed::ObservedPersons`.
    #[derive(Debug)]
    pub struct ObservedPersons;
    /// `taxi_fiscal_store::observed::Erasure`.
    #[derive(Debug)]
    pub struct Erasure;
    /// `taxi_fiscal_store::notifications::NotificationRow`.
    #[derive(Debug)]
    pub struct NotificationRow;
    /// `taxi_fiscal_store::records::RecordRow`.
    #[derive(Debug)]
    pub struct RecordRow;
    /// `taxi_fiscal_store::records::RecordPage`.
    #[derive(Debug)]
    pub struct RecordPage;
    /// `taxi_fiscal_store::records::QuarantineRow`.
    #[derive(Debug)]
    pub struct QuarantineRow;

    named_schema!(
        ObservedPersons => "ObservedPersons",
        Erasure => "Erasure",
        NotificationRow => "NotificationRow",
        RecordRow => "RecordRow",
        RecordPage => "RecordPage",
        QuarantineRow => "QuarantineRow",
        Person => "Person",
        Vehicle => "Vehicle",
        Stand => "Stand",
        Permit => "Permit",
        PermitState => "PermitState",
        Penalty => "Penalty",
        Fine => "Fine",
        Transfer => "Transfer",
        RegistrySnapshot => "Registry",
        RegistryChanges => "RegistryChanges",
    );
}

/// Every payload schema, as `(name, schema)`: the components of the document, and — for the
/// server's own types — the files of `schemas/api/`.
pub fn payload_schemas() -> Vec<(&'static str, Value)> {
    fn add<T: JsonSchema>(out: &mut Vec<(&'static str, Value)>, name: &'static str) {
        out.push((name, schemars::schema_for!(T).to_value()));
    }
    let mut out = Vec::new();
    add::<crate::error::ErrorBody>(&mut out, "error");
    add::<super::health::Health>(&mut out, "health");
    add::<super::health::ServerKeyView>(&mut out, "server-key");
    add::<crate::receipts::Receipt>(&mut out, "record-receipt");
    add::<super::auth::LoginRequest>(&mut out, "login-request");
    add::<super::auth::RefreshRequest>(&mut out, "refresh-request");
    add::<super::auth::PasswordChangeRequest>(&mut out, "password-change-request");
    add::<super::auth::TokenResponse>(&mut out, "token-response");
    add::<super::auth::Me>(&mut out, "me");
    add::<super::accounts::NewUserRequest>(&mut out, "new-user-request");
    add::<super::accounts::UserView>(&mut out, "user");
    add::<super::accounts::NewDeviceRequest>(&mut out, "new-device-request");
    add::<super::accounts::DeviceView>(&mut out, "device");
    add::<super::accounts::NumberBlockRequest>(&mut out, "number-block-request");
    add::<super::accounts::NumberBlockView>(&mut out, "number-block");
    add::<super::accounts::RoleChangeRequest>(&mut out, "role-change-request");
    add::<super::accounts::OneTimeCodeView>(&mut out, "one-time-code");
    add::<super::accounts::EnrolmentCodeRequest>(&mut out, "enrolment-code-request");
    add::<super::accounts::EnrolRequest>(&mut out, "enrol-request");
    add::<super::accounts::EnrolmentView>(&mut out, "enrolment");
    add::<super::photos::PhotoReceipt>(&mut out, "photo-receipt");
    add::<super::photos::PhotoHaveRequest>(&mut out, "photo-have-request");
    add::<super::photos::PhotoHaveResponse>(&mut out, "photo-have-response");
    add::<super::registry::RegistryStatus>(&mut out, "registry-status");
    add::<super::registry::ImportReport>(&mut out, "import-report");
    add::<crate::registry::RegistryUpdate>(&mut out, "registry-update");
    add::<crate::registry::csv::RowError>(&mut out, "csv-row-error");
    add::<crate::registry::ops::GrantPermit>(&mut out, "grant-permit");
    add::<crate::registry::ops::AddAuxiliary>(&mut out, "add-auxiliary");
    add::<crate::registry::ops::SetCoordinator>(&mut out, "set-coordinator");
    add::<crate::registry::ops::NewPenalty>(&mut out, "new-penalty");
    add::<crate::registry::ops::NewFine>(&mut out, "new-fine");
    add::<crate::registry::ops::PayFine>(&mut out, "pay-fine");
    add::<crate::registry::ops::Renew>(&mut out, "renew");
    add::<crate::registry::ops::TransferPermit>(&mut out, "transfer-permit");
    add::<crate::registry::ops::Swap>(&mut out, "swap");
    add::<crate::audit::AuditReport>(&mut out, "audit-report");
    add::<crate::audit::AuditRow>(&mut out, "audit-row");
    add::<crate::store::records::RecordRow>(&mut out, "record-row");
    add::<crate::store::records::RecordPage>(&mut out, "record-page");
    add::<crate::store::records::QuarantineRow>(&mut out, "quarantine-row");
    add::<super::records::RecordDetail>(&mut out, "record-detail");
    add::<super::records::NewEventRequest>(&mut out, "new-event-request");
    out.extend(super::office::payload_schemas());
    out.extend(super::law::payload_schemas());
    out.extend(super::selection::payload_schemas());
    out
}

/// The components: schemars definitions of every type the API sends or receives.
fn components() -> serde_json::Map<String, Value> {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .into_generator();
    macro_rules! roots {
        ($($t:ty),* $(,)?) => {$( let _ = generator.subschema_for::<$t>(); )*};
    }
    roots!(
        crate::error::ErrorBody,
        super::health::Health,
        super::health::ServerKeyView,
        super::auth::LoginRequest,
        super::auth::RefreshRequest,
        super::auth::PasswordChangeRequest,
        super::auth::TokenResponse,
        super::auth::Me,
        super::accounts::NewUserRequest,
        super::accounts::UserView,
        super::accounts::NewDeviceRequest,
        super::accounts::DeviceView,
        super::accounts::NumberBlockRequest,
        super::accounts::NumberBlockView,
        super::accounts::RoleChangeRequest,
        super::accounts::OneTimeCodeView,
        super::accounts::EnrolmentCodeRequest,
        super::accounts::EnrolRequest,
        super::accounts::EnrolmentView,
        super::photos::PhotoReceipt,
        super::photos::PhotoHaveRequest,
        super::photos::PhotoHaveResponse,
        super::registry::RegistryStatus,
        super::registry::ImportReport,
        crate::registry::RegistryUpdate,
        crate::registry::csv::RowError,
        crate::registry::ops::GrantPermit,
        crate::registry::ops::AddAuxiliary,
        crate::registry::ops::SetCoordinator,
        crate::registry::ops::NewPenalty,
        crate::registry::ops::NewFine,
        crate::registry::ops::PayFine,
        crate::registry::ops::Renew,
        crate::registry::ops::TransferPermit,
        crate::registry::ops::Swap,
        sync_core::domain::Person,
        sync_core::domain::Vehicle,
        sync_core::domain::Stand,
        sync_core::domain::Permit,
        sync_core::domain::PermitState,
        sync_core::domain::Penalty,
        sync_core::domain::Fine,
        sync_core::domain::Transfer,
        sync_core::domain::Registry,
        sync_core::feed::RegistryChanges,
        crate::audit::AuditRow,
        crate::store::records::RecordRow,
        crate::store::records::RecordPage,
        crate::store::records::QuarantineRow,
        super::records::RecordDetail,
        super::records::NewEventRequest,
        sync_core::records::FieldConflict,
        sync_core::sync::SyncRequest,
        sync_core::sync::SyncResponse,
        sync_core::sync::ObservedPersonsUpload,
        crate::office::witnesses::ObservedPersonsReceipt,
        crate::store::observed::ObservedPersons,
        crate::store::observed::Erasure,
    );
    super::office::add_components(&mut generator);
    super::law::add_components(&mut generator);
    super::selection::add_components(&mut generator);
    generator.take_definitions(true)
}

/// Routes that need no token.
const PUBLIC: &[&str] = &[
    "/health",
    "/openapi.json",
    "/v1/auth/login",
    "/v1/auth/refresh",
    "/v1/server-key",
    "/v1/devices/enrol",
];

/// The base document (info, tags) the routes are added to.
pub(crate) fn base() -> utoipa::openapi::OpenApi {
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("taxi-fiscal")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Fiscalização de táxis — Lei 4.019/2004 de Americana-SP. Servidor central: \
                     contas e dispositivos, cadastro (alvarás, pessoas, veículos, pontos, \
                     penalidades, multas), feed do cadastro para os dispositivos, blocos de \
                     números de autos e fotos. Erros: {\"error\": {\"code\", \"message\", \
                     \"details\"}}.",
                ))
                .build(),
        )
        .build()
}

/// The finished document (see the module doc).
pub fn build() -> Value {
    let (_, api) = super::api_router().split_for_parts();
    let mut doc = serde_json::to_value(&api).unwrap_or_else(|_| json!({}));
    let mut schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    schemas.extend(components());
    let sorted: serde_json::Map<String, Value> = {
        let mut v: Vec<(String, Value)> = schemas.into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().collect()
    };
    doc["components"] = json!({
        "schemas": sorted,
        "securitySchemes": {
            "bearer": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT" }
        }
    });
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(ops) = item.as_object_mut() else {
                continue;
            };
            for op in ops.values_mut() {
                let Some(op) = op.as_object_mut() else {
                    continue;
                };
                if !PUBLIC.contains(&path.as_str()) {
                    op.insert("security".into(), json!([{ "bearer": [] }]));
                }
                let responses = op.entry("responses").or_insert_with(|| json!({}));
                if let Some(r) = responses.as_object_mut() {
                    r.insert(
                        "default".into(),
                        json!({
                            "description": "Erro: formato único {\"error\": {\"code\", \"message\", \"details\"}}",
                            "content": { "application/json": {
                                "schema": { "$ref": "#/components/schemas/ErrorBody" }
                            }}
                        }),
                    );
                }
            }
        }
    }
    doc
}

/// The document, built once.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(build)
}

/// The OpenAPI document of this server (OpenAPI 3.1, schemas in JSON Schema 2020-12).
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "meta",
    responses((status = 200, description = "O documento OpenAPI", content_type = "application/json"))
)]
async fn openapi_json() -> Json<Value> {
    Json(document().clone())
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(openapi_json))
}
