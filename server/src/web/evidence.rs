//! Evidence shown beside the record: positions with a link to OpenStreetMap and the distance to
//! the record's stand, photo thumbnails, duplicate candidates side by side with their photos,
//! and the records merged into a kept one with theirs.
//!
//! Thumbnails (`GET /escritorio/fotos/{sha256}/miniatura`, office session): the stored photo is
//! checked from its header (JPEG or PNG, at most [`THUMBNAIL_MAX_INPUT_PIXELS`]) before any
//! pixel is decoded, decoded on the blocking pool with at most [`THUMBNAIL_CONCURRENCY`] at
//! once, scaled to [`THUMBNAIL_MAX_SIDE_PX`] and re-encoded as JPEG; the result is kept in a
//! bounded in-memory cache ([`THUMBNAIL_CACHE_ENTRIES`]) and, being content-addressed, cached by
//! the browser for good. A photo that is no image, or too large, answers 422 with why; the page
//! always links the full photo (`/escritorio/fotos/{sha256}`).
//!
//! Element ids: `prova-mapa` (the map link of the record's position), `prova-distancia-ponto`;
//! `comparacao-duplicatas` with a card `comparar-{record id}` per record (photos
//! `miniatura-{record id}-{n}`); `juntados` with `juntado-{record id}` per merged record.

use std::collections::{HashMap, VecDeque};
use std::io::Cursor;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{Markup, html};
use sync_core::domain::Registry;
use sync_core::records::{Position, RecordView};
use tokio::sync::Semaphore;

use super::layout::local_time;
use super::{OfficeUser, PageError};
use crate::limits::{
    THUMBNAIL_CACHE_ENTRIES, THUMBNAIL_CONCURRENCY, THUMBNAIL_JPEG_QUALITY,
    THUMBNAIL_MAX_INPUT_PIXELS, THUMBNAIL_MAX_SIDE_PX,
};
use crate::office::DuplicateMember;
use crate::office::duplicates::distance_m;
use crate::server::AppState;
use crate::store::records::view_of;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/escritorio/fotos/{sha256}/miniatura", get(thumbnail))
}

// ------------------------------------------------------------------ positions

/// The OpenStreetMap page centred on a position, zoomed to a street (18).
pub fn osm_url(p: &Position) -> String {
    format!(
        "https://www.openstreetmap.org/?mlat={lat:.6}&mlon={lon:.6}#map=18/{lat:.6}/{lon:.6}",
        lat = p.lat,
        lon = p.lon
    )
}

/// Metres from a position to a stand's, when the stand has one.
pub fn stand_distance_m(reg: &Registry, stand_id: Option<&str>, p: &Position) -> Option<f64> {
    let s = reg
        .stands
        .iter()
        .find(|s| Some(s.id.as_str()) == stand_id)?;
    Some(distance_m((p.lat, p.lon), (s.latitude?, s.longitude?)))
}

/// "80 m" or "1,2 km".
pub fn distance_text(m: f64) -> String {
    if m < 1000.0 {
        format!("{m:.0} m")
    } else {
        format!("{:.1} km", m / 1000.0).replace('.', ",")
    }
}

/// A position: coordinates, accuracy, the map link (new tab) and the distance to the stand.
/// `id` prefixes the element ids (`prova` on the record page).
pub fn position(id: &str, p: Option<&Position>, reg: &Registry, stand: Option<&str>) -> Markup {
    html! {
        @match p {
            None => { "não registrada" }
            Some(p) => {
                (format!("{:.5}, {:.5}", p.lat, p.lon)) " (precisão ± " (format!("{:.0}", p.accuracy_m)) " m) · "
                a id={ (id) "-mapa" } href=(osm_url(p)) target="_blank" rel="noopener noreferrer" {
                    "ver no mapa (OpenStreetMap, abre em nova aba)"
                }
                @if let Some(d) = stand_distance_m(reg, stand, p) {
                    br;
                    span id={ (id) "-distancia-ponto" } {
                        "a " (distance_text(d)) " do ponto " (stand.unwrap_or_default())
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------------ photos

/// Thumbnails of `photos`, each linking its full photo; a photo the server does not have yet
/// says so. `id` prefixes the image ids (`foto` on the record page: `foto-1`, …).
pub fn gallery(id: &str, what: &str, photos: &[String], present: &[String]) -> Markup {
    html! {
        div .fotos {
            @for (i, sha) in photos.iter().enumerate() {
                figure {
                    @if present.contains(sha) {
                        a href={ "/escritorio/fotos/" (sha) } title="Abrir a foto em tamanho original" {
                            img id={ (id) "-" (i + 1) } src={ "/escritorio/fotos/" (sha) "/miniatura" }
                                alt={ "Foto " (i + 1) " " (what) " (miniatura; abre a original)" } loading="lazy";
                        }
                    } @else {
                        p id={ (id) "-ausente-" (i + 1) } .alerta { "Foto " (i + 1) " ainda não recebida do dispositivo." }
                    }
                    figcaption { "SHA-256 " (sha) }
                }
            }
        }
    }
}

/// One record of a comparison: what tells two sightings apart, and its photos.
struct Card {
    id: String,
    number: Option<String>,
    occurred_at: chrono::DateTime<chrono::Utc>,
    author: String,
    status: String,
    stand: Option<String>,
    position: Option<Position>,
    facts: String,
    photos: Vec<String>,
}

fn cards(cards: &[Card], present: &[String], reg: &Registry, prefix: &str) -> Markup {
    html! {
        div .lado-a-lado {
            @for c in cards {
                article .valor id={ (prefix) "-" (c.id) } aria-label={ "Registro " (c.number.as_deref().unwrap_or("sem número")) } {
                    h3 { a href={ "/escritorio/registros/" (c.id) } { "Registro " (c.number.as_deref().unwrap_or("(sem número)")) } }
                    dl .dados {
                        dt { "Ocorrência" } dd { (local_time(c.occurred_at)) }
                        dt { "Autor" } dd { (c.author) }
                        dt { "Situação" } dd { (c.status) }
                        dt { "Ponto" } dd { (c.stand.as_deref().unwrap_or("—")) }
                        dt { "Posição" } dd { (position(&format!("{prefix}-{}", c.id), c.position.as_ref(), reg, c.stand.as_deref())) }
                        dt { "Fatos" } dd { (c.facts) }
                    }
                    @if c.photos.is_empty() {
                        p { "Sem fotos." }
                    } @else {
                        (gallery(&format!("miniatura-{}", c.id), &format!("do registro {}", c.number.as_deref().unwrap_or("sem número")), &c.photos, present))
                    }
                }
            }
        }
    }
}

async fn names(state: &AppState) -> Result<HashMap<String, String>, PageError> {
    Ok(state
        .store()
        .list_users()
        .await?
        .into_iter()
        .map(|u| (u.id, u.display_name))
        .collect())
}

fn card_of_member(m: &DuplicateMember, names: &HashMap<String, String>) -> Card {
    Card {
        id: m.row.id.clone(),
        number: m.row.number.clone(),
        occurred_at: m.row.occurred_at,
        author: names
            .get(&m.row.author_user_id)
            .cloned()
            .unwrap_or_else(|| m.row.author_user_id.clone()),
        status: m.status_label.clone(),
        stand: m.row.stand_id.clone(),
        position: m.position,
        facts: m.facts.clone(),
        photos: m.photos.clone(),
    }
}

fn card_of_view(v: &RecordView, names: &HashMap<String, String>) -> Card {
    Card {
        id: v.id.to_string(),
        number: v.number.clone(),
        occurred_at: v.occurred_at,
        author: names
            .get(&v.author.user_id)
            .cloned()
            .unwrap_or_else(|| v.author.user_id.clone()),
        status: v.status.label_pt().to_owned(),
        stand: v.stand_id.clone(),
        position: v.position,
        facts: v.facts.clone(),
        photos: v.photos.clone(),
    }
}

/// Records side by side with their photos: a group of possible duplicates (`members`),
/// `first` (the record whose page this is) leading when given.
pub async fn side_by_side(
    state: &AppState,
    first: Option<&RecordView>,
    members: &[DuplicateMember],
) -> Result<Markup, PageError> {
    let names = names(state).await?;
    let reg = state.store().registry().await?;
    let mut all: Vec<Card> = first.map(|v| card_of_view(v, &names)).into_iter().collect();
    all.extend(members.iter().map(|m| card_of_member(m, &names)));
    let hashes: Vec<String> = all.iter().flat_map(|c| c.photos.clone()).collect();
    let present = state.store().photos_present(hashes).await?;
    Ok(cards(&all, &present, &reg, "comparar"))
}

/// The record page's comparison: its possible duplicates side by side with it, and the records
/// merged into it with their photos (their evidence stays part of the case).
pub(crate) async fn compared(
    state: &AppState,
    id: &str,
    view: &RecordView,
    duplicates: &[DuplicateMember],
) -> Result<Markup, PageError> {
    let names = names(state).await?;
    let reg = state.store().registry().await?;
    let mut merged = Vec::new();
    for mid in state.store().merged_into(id.to_owned()).await? {
        if let Some(doc) = state.store().record(mid).await? {
            let v = view_of(&doc).map_err(|e| PageError::internal(&e))?;
            merged.push(card_of_view(&v, &names));
        }
    }
    let comparison = if duplicates.is_empty() {
        None
    } else {
        Some(side_by_side(state, Some(view), duplicates).await?)
    };
    let hashes: Vec<String> = merged.iter().flat_map(|c| c.photos.clone()).collect();
    let present = state.store().photos_present(hashes).await?;
    Ok(html! {
        @if let Some(c) = comparison {
            section #comparacao-duplicatas aria-labelledby="titulo-comparacao" {
                h2 #titulo-comparacao { "Este registro e as possíveis duplicatas, lado a lado" }
                (c)
            }
        }
        @if !merged.is_empty() {
            section #juntados aria-labelledby="titulo-juntados" {
                h2 #titulo-juntados { "Registros juntados a este (" (merged.len()) ")" }
                p .dica { "Duplicatas juntadas a este registro: continuam guardadas, e suas fotos são prova deste caso." }
                (cards(&merged, &present, &reg, "juntado"))
            }
        }
    })
}

// ------------------------------------------------------------------ thumbnails

/// Why a photo has no thumbnail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThumbnailError {
    #[error("A foto não é uma imagem JPEG ou PNG legível; abra a foto original.")]
    NotAnImage,
    #[error(
        "A foto tem {width} × {height} pixels, acima do limite de {} milhões de pixels para a \
         miniatura; abra a foto original.",
        THUMBNAIL_MAX_INPUT_PIXELS / 1_000_000
    )]
    TooLarge { width: u32, height: u32 },
}

/// The thumbnail of a JPEG or PNG photo: at most [`THUMBNAIL_MAX_SIDE_PX`] on its longest
/// side, as JPEG. The size is read from the header and checked before decoding.
pub fn make_thumbnail(bytes: &[u8]) -> Result<Vec<u8>, ThumbnailError> {
    use image::{ImageFormat, ImageReader};
    let reader = || {
        ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|_| ThumbnailError::NotAnImage)
    };
    let r = reader()?;
    if !matches!(r.format(), Some(ImageFormat::Jpeg | ImageFormat::Png)) {
        return Err(ThumbnailError::NotAnImage);
    }
    let (width, height) = r
        .into_dimensions()
        .map_err(|_| ThumbnailError::NotAnImage)?;
    if u64::from(width) * u64::from(height) > THUMBNAIL_MAX_INPUT_PIXELS {
        return Err(ThumbnailError::TooLarge { width, height });
    }
    let mut r = reader()?;
    // The decoder's own bound too, in case a file's header and data disagree.
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(THUMBNAIL_MAX_INPUT_PIXELS * 4 + 1024 * 1024);
    r.limits(limits);
    let img = r.decode().map_err(|_| ThumbnailError::NotAnImage)?;
    let small = img
        .thumbnail(THUMBNAIL_MAX_SIDE_PX, THUMBNAIL_MAX_SIDE_PX)
        .to_rgb8();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, THUMBNAIL_JPEG_QUALITY)
        .encode_image(&small)
        .map_err(|_| ThumbnailError::NotAnImage)?;
    Ok(out)
}

/// Recently made thumbnails (oldest evicted first).
#[derive(Default)]
struct Cache {
    map: HashMap<String, Arc<Vec<u8>>>,
    order: VecDeque<String>,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

fn cached(sha: &str) -> Option<Arc<Vec<u8>>> {
    cache()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .map
        .get(sha)
        .cloned()
}

fn remember(sha: String, bytes: Arc<Vec<u8>>) {
    let mut c = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if c.map.insert(sha.clone(), bytes).is_none() {
        c.order.push_back(sha);
    }
    while c.order.len() > THUMBNAIL_CACHE_ENTRIES {
        if let Some(old) = c.order.pop_front() {
            c.map.remove(&old);
        }
    }
}

fn permits() -> &'static Semaphore {
    static SEM: Semaphore = Semaphore::const_new(THUMBNAIL_CONCURRENCY);
    &SEM
}

async fn thumbnail(
    State(state): State<AppState>,
    _user: OfficeUser,
    Path(sha): Path<String>,
) -> Result<Response, PageError> {
    let sha = sha.to_ascii_lowercase();
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PageError::not_found("Foto não encontrada."));
    }
    let bytes = match cached(&sha) {
        Some(b) => b,
        None => {
            let Some((_, photo)) = state.store().photo(sha.clone()).await? else {
                return Err(PageError::not_found("Foto ainda não recebida."));
            };
            let _permit = permits()
                .acquire()
                .await
                .map_err(|e| PageError::internal(&e))?;
            let made = tokio::task::spawn_blocking(move || make_thumbnail(&photo))
                .await
                .map_err(|e| PageError::internal(&e))?
                .map_err(|e| PageError::Status(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
            let made = Arc::new(made);
            remember(sha, made.clone());
            made
        }
    };
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("image/jpeg")),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            // Content-addressed: the thumbnail of a hash never changes.
            (
                CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=86400, immutable"),
            ),
        ],
        Body::from(bytes.as_ref().clone()),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_links_and_distances_read_well() {
        let p = Position {
            lat: -22.7393,
            lon: -47.3314,
            accuracy_m: 8.0,
        };
        assert_eq!(
            osm_url(&p),
            "https://www.openstreetmap.org/?mlat=-22.739300&mlon=-47.331400#map=18/-22.739300/-47.331400"
        );
        assert_eq!(distance_text(80.4), "80 m");
        assert_eq!(distance_text(1234.0), "1,2 km");
    }
}
