//! Behaviour tests every [`Store`] backend must pass, written only against the trait and the
//! public types of [`crate::store`], so that the SQLite backend and the PostgreSQL one to come
//! are held to the same contract (as matrix-rust-sdk's `statestore_integration_tests!` does
//! for its state stores).
//!
//! Flow: each test is a `pub(crate) async fn` here taking a fresh, empty `Arc<dyn Store>`;
//! [`store_conformance_tests!`] expands, in the backend's own test module, to one
//! `#[tokio::test]` per function, inside a nested `mod store_conformance`, each opening its
//! own store with the expression it is given and calling the function. A backend runs the
//! whole suite in a few lines:
//!
//! ```ignore
//! #[cfg(test)]
//! mod conformance_tests {
//!     crate::store::conformance::store_conformance_tests!(async {
//!         let dir = tempfile::tempdir().unwrap();
//!         let store = SqliteStore::open(&dir.path().join("t.db")).unwrap();
//!         // The guard (here the directory) lives as long as the test.
//!         (Arc::new(store) as Arc<dyn Store>, dir)
//!     });
//! }
//! ```
//!
//! The expression is evaluated once per test, inside the nested module (which has
//! `use super::*`, so the calling module's names are in scope; write other paths from
//! `crate::`), and yields either an `Arc<dyn Store>` or a pair of it and a guard kept alive
//! until the test ends (a temporary directory, a database to drop): see [`FreshStore`].
//!
//! Each test sets up what it needs through the trait itself (users, devices, registry
//! versions, records synced with real Automerge documents built by `sync_core::records`), so
//! the suite assumes nothing of a backend's tables. A new test goes in three places: its
//! function here, its name in the macro's list, and nothing else.

// Without the SQLite backend no module runs the suite; the functions still compile.
#![cfg_attr(
    not(feature = "sqlite"),
    allow(dead_code, unused_imports, unused_macros)
)]

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use sync_core::domain::{Registry, ServiceKind, Stand, StandSchedule};
use sync_core::feed;

use crate::store::{
    Actor, RefreshTokenRow, RegistryCommit, Role, RotateOutcome, Store, StoreError, UserRow,
};

/// Expands to one `#[tokio::test]` per conformance test, in a nested `mod store_conformance`,
/// each running on the store `$open` yields (see the module doc).
macro_rules! store_conformance_tests {
    ($open:expr) => {
        $crate::store::conformance::store_conformance_tests!(@tests $open;
            registry_commits_bump_the_version_and_refuse_a_stale_base,
            users_are_created_found_and_a_taken_username_is_refused,
            refresh_tokens_rotate_and_a_replayed_one_revokes_its_family,
        );
    };
    (@tests $open:expr; $($name:ident),* $(,)?) => {
        #[allow(clippy::unwrap_used, clippy::expect_used)]
        mod store_conformance {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let fresh = $crate::store::conformance::FreshStore::from($open.await);
                    $crate::store::conformance::$name(fresh.store()).await;
                }
            )*
        }
    };
}
pub(crate) use store_conformance_tests;

/// A fresh, empty store for one test, and whatever must outlive it (dropped after the store).
pub(crate) struct FreshStore {
    store: Arc<dyn Store>,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

impl FreshStore {
    pub(crate) fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }
}

impl From<Arc<dyn Store>> for FreshStore {
    fn from(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            _guard: None,
        }
    }
}

impl<G: Send + 'static> From<(Arc<dyn Store>, G)> for FreshStore {
    fn from((store, guard): (Arc<dyn Store>, G)) -> Self {
        Self {
            store,
            _guard: Some(Box::new(guard)),
        }
    }
}

// ----- fixtures -----------------------------------------------------------------------------

/// The instant the tests act at (a fixed day, so that time checks are reproducible).
pub(crate) fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T15:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn cli() -> Actor {
    Actor::cli(t0())
}

fn user_row(id: &str, username: &str, role: Role, stand_id: Option<&str>) -> UserRow {
    UserRow {
        id: id.to_owned(),
        username: username.to_owned(),
        display_name: format!("Usuário {username}"),
        role,
        stand_id: stand_id.map(String::from),
        password_hash: format!("hash-de-{username}"),
        active: true,
        created_at: t0(),
    }
}

/// A user and one device of theirs, registered through the store.
async fn user_with_device(store: &dyn Store, username: &str, role: Role, device: &str) -> UserRow {
    let user = store
        .create_user(
            user_row(&format!("u-{username}"), username, role, None),
            cli(),
        )
        .await
        .unwrap();
    store
        .register_device(
            crate::store::NewDevice {
                id: device.to_owned(),
                user_id: user.id.clone(),
                label: format!("Aparelho {device}"),
            },
            cli(),
        )
        .await
        .unwrap();
    user
}

fn refresh(hash: &str, family: &str, user: &UserRow, device: &str) -> RefreshTokenRow {
    RefreshTokenRow {
        token_hash: hash.to_owned(),
        family_id: family.to_owned(),
        user_id: user.id.clone(),
        device_id: device.to_owned(),
        issued_at: t0(),
        expires_at: t0() + Duration::days(30),
    }
}

fn stand(id: &str) -> Stand {
    Stand {
        id: id.to_owned(),
        name: format!("Ponto {id}"),
        address: format!("Rua do ponto {id}, Americana"),
        schedule: StandSchedule::Day,
        service: ServiceKind::Common,
        vacancies: 4,
        coordinator_id: None,
        latitude: None,
        longitude: None,
    }
}

/// The commit that takes `base` to a registry holding exactly `stands`, as the registry
/// service computes it (`registry::commit`: sorted, diffed, version and time set).
fn commit_of(base: &Registry, stands: Vec<Stand>, subject: &str) -> RegistryCommit {
    let version = base.version + 1;
    let at = t0() + Duration::minutes(i64::try_from(version).unwrap_or(0));
    let next = feed::sorted(Registry {
        version,
        generated_at: Some(at),
        stands,
        ..base.clone()
    });
    RegistryCommit {
        expected_version: base.version,
        changes: feed::diff(base, &next),
        registry: Arc::new(next),
        action: String::from("registry.stand.edit"),
        subject: subject.to_owned(),
        actor: Actor::cli(at),
    }
}

fn stand_ids(reg: &Registry) -> Vec<String> {
    reg.stands.iter().map(|s| s.id.clone()).collect()
}

// ----- registry -----------------------------------------------------------------------------

/// A fresh store is at version 0; a commit from the current version bumps it by one and is
/// what `registry()` then returns, with one audit row; a commit computed from a version that
/// is no longer current fails with `VersionConflict` (naming both versions) and writes
/// nothing, neither entities nor audit row.
pub(crate) async fn registry_commits_bump_the_version_and_refuse_a_stale_base(
    store: Arc<dyn Store>,
) {
    let empty = store.registry().await.unwrap();
    assert_eq!(empty.version, 0);
    assert!(empty.stands.is_empty() && empty.permits.is_empty());
    let head0 = store.audit_head().await.unwrap();

    let v = store
        .commit_registry(commit_of(&empty, vec![stand("S01")], "stand:S01"))
        .await
        .unwrap();
    assert_eq!(v, 1);
    let v1 = store.registry().await.unwrap();
    assert_eq!(v1.version, 1);
    assert_eq!(stand_ids(&v1), ["S01"]);
    assert_eq!(v1.stands[0], stand("S01"));
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 1);

    // Computed from version 0 by a writer that lost the race.
    match store
        .commit_registry(commit_of(&empty, vec![stand("S09")], "stand:S09"))
        .await
    {
        Err(StoreError::VersionConflict { expected, found }) => {
            assert_eq!((expected, found), (0, 1));
        }
        other => panic!("expected a version conflict, got {other:?}"),
    }
    let still = store.registry().await.unwrap();
    assert_eq!(still.version, 1);
    assert_eq!(stand_ids(&still), ["S01"]);
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 1);

    // Retried from the current version, as the registry service does: accepted.
    let v = store
        .commit_registry(commit_of(
            &v1,
            vec![stand("S01"), stand("S09")],
            "stand:S09",
        ))
        .await
        .unwrap();
    assert_eq!(v, 2);
    let v2 = store.registry().await.unwrap();
    assert_eq!(v2.version, 2);
    assert_eq!(stand_ids(&v2), ["S01", "S09"]);
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 2);
}

// ----- accounts -----------------------------------------------------------------------------

/// Users are counted, found by username and id and listed; a second user with a taken
/// username is `Duplicate` and is not stored; unknown names and ids are `None`.
pub(crate) async fn users_are_created_found_and_a_taken_username_is_refused(store: Arc<dyn Store>) {
    assert_eq!(store.count_users().await.unwrap(), 0);
    let ana = user_row("u-ana", "ana", Role::Officer, None);
    let created = store.create_user(ana.clone(), cli()).await.unwrap();
    assert_eq!(created, ana);
    let bia = user_row("u-bia", "bia", Role::Coordinator, Some("S01"));
    store.create_user(bia.clone(), cli()).await.unwrap();
    assert_eq!(store.count_users().await.unwrap(), 2);

    assert_eq!(
        store.user_by_username("ana".into()).await.unwrap(),
        Some(ana.clone())
    );
    assert_eq!(
        store.user_by_id("u-bia".into()).await.unwrap(),
        Some(bia.clone())
    );
    assert_eq!(store.user_by_username("caio".into()).await.unwrap(), None);
    assert_eq!(store.user_by_id("u-caio".into()).await.unwrap(), None);

    let audit = store.audit_head().await.unwrap();
    let taken = user_row("u-outra-ana", "ana", Role::Admin, None);
    match store.create_user(taken, cli()).await {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert_eq!(store.count_users().await.unwrap(), 2);
    assert_eq!(store.user_by_id("u-outra-ana".into()).await.unwrap(), None);
    assert_eq!(
        store
            .user_by_username("ana".into())
            .await
            .unwrap()
            .map(|u| u.role),
        Some(Role::Officer)
    );
    assert_eq!(
        store.audit_head().await.unwrap(),
        audit,
        "a refused write leaves no row"
    );

    let mut listed: Vec<String> = store
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    listed.sort();
    assert_eq!(listed, ["ana", "bia"]);
}

// ----- sessions -----------------------------------------------------------------------------

/// A refresh token is spent by its rotation and replaced in its family; presenting a spent
/// one again is `Reused` and revokes the whole family (its live token no longer rotates and
/// `session` reports the family dead), while another login of the same user lives on.
/// Unknown and expired tokens are told apart.
pub(crate) async fn refresh_tokens_rotate_and_a_replayed_one_revokes_its_family(
    store: Arc<dyn Store>,
) {
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    store
        .insert_refresh_token(refresh("t1", "fam-a", &ana, "tablet-ana"))
        .await
        .unwrap();
    store
        .insert_refresh_token(refresh("g1", "fam-b", &ana, "tablet-ana"))
        .await
        .unwrap();
    let live = |family: &str| {
        let store = store.clone();
        let family = family.to_owned();
        async move {
            store
                .session("u-ana".into(), "tablet-ana".into(), Some(family))
                .await
                .unwrap()
                .unwrap()
                .family_live
        }
    };
    assert!(live("fam-a").await);

    let later = t0() + Duration::minutes(10);
    match store
        .rotate_refresh_token("t1".into(), "t2".into(), later + Duration::days(30), later)
        .await
        .unwrap()
    {
        RotateOutcome::Rotated {
            user,
            device_id,
            family_id,
        } => {
            assert_eq!(user.id, ana.id);
            assert_eq!(device_id, "tablet-ana");
            assert_eq!(family_id, "fam-a");
        }
        other => panic!("expected a rotation, got {other:?}"),
    }
    // The replacement rotates in turn.
    assert!(matches!(
        store
            .rotate_refresh_token("t2".into(), "t3".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    assert!(live("fam-a").await);

    // t1 presented again: a replay. The family ends, t3 included.
    assert_eq!(
        store
            .rotate_refresh_token("t1".into(), "t9".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Reused
    );
    assert!(!live("fam-a").await);
    assert!(!matches!(
        store
            .rotate_refresh_token("t3".into(), "t4".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    // The other login is untouched.
    assert!(live("fam-b").await);
    assert!(matches!(
        store
            .rotate_refresh_token("g1".into(), "g2".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));

    assert_eq!(
        store
            .rotate_refresh_token("nunca".into(), "x".into(), later, later)
            .await
            .unwrap(),
        RotateOutcome::Unknown
    );
    let past = t0() + Duration::days(31);
    assert_eq!(
        store
            .rotate_refresh_token("g2".into(), "g3".into(), past + Duration::days(30), past)
            .await
            .unwrap(),
        RotateOutcome::Expired
    );
}
