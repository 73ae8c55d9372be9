//! Databases for servers on PostgreSQL: each test gets a new, empty database on the server at
//! `TAXI_FISCAL_TEST_POSTGRES_URL` (`scripts/test` starts a throwaway one and sets it).

use std::time::Duration;

/// How long creating a database may take (a busy CI machine).
const CREATE_TIMEOUT: Duration = Duration::from_secs(30);

/// The URL of a new, empty database on the test server.
pub fn fresh_database() -> String {
    let admin = std::env::var("TAXI_FISCAL_TEST_POSTGRES_URL").expect(
        "TAXI_FISCAL_TEST_POSTGRES_URL must name a PostgreSQL server for these tests \
         (./scripts/test starts one)",
    );
    let name = format!(
        "tf_e2e_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio::time::timeout(
            CREATE_TIMEOUT,
            tokio_postgres::connect(&admin, tokio_postgres::NoTls),
        )
        .await
        .expect("the test PostgreSQL server answers")
        .expect("connect to the test PostgreSQL server");
        tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create the test database");
    });
    let mut url = admin.clone();
    let slash = url.rfind('/').filter(|i| *i > "postgres://".len());
    match slash {
        Some(i) => url.truncate(i + 1),
        None => url.push('/'),
    }
    url.push_str(&name);
    url
}

static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
