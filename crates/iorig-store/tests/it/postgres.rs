//! Protects the team store: a PostgreSQL database behaves as an SQLite file
//! does (the same checks as roundtrip.rs, run against a real server), gets
//! iorig's schema in a schema of its own on first open (two openers at once
//! included), and is refused, untouched, when it is a newer iorig's, holds
//! tables iorig did not make, or cannot be reached (the password never in
//! the message).
//!
//! The server is real: `iorig-testpg` starts one for the test binary.
#![allow(clippy::unwrap_used)]

use crate::common;

use iorig_store::{Location, RunKind, Store, StoreError, SCHEMA_VERSION};
use iorig_testpg::PgServer;

fn location(url: &str) -> Location {
    url.parse().unwrap()
}

fn open(url: &str) -> Store {
    Store::open_at(&location(url)).unwrap()
}

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn a_postgres_store_keeps_what_an_sqlite_store_keeps() {
    let server = PgServer::start().unwrap();
    let db = || server.new_database().unwrap();

    let url = db();
    let (run, s0, _) = common::round_trip(open(&url), || open(&url));
    let store = open(&url);
    assert!(store.is_postgres());
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);

    // Read-only: the same rows, and no write gets through.
    let ro = Store::open_read_only_at(&location(&url)).unwrap();
    assert_eq!(ro.steps(run).unwrap(), store.steps(run).unwrap());
    assert_eq!(ro.intervals(s0).unwrap(), store.intervals(s0).unwrap());
    let e = ro.set_label(run, "k", "v").unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");

    // Deleting a run removes everything under it.
    store.delete_run(run).unwrap();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for table in [
        "runs",
        "run_labels",
        "steps",
        "intervals",
        "histograms",
        "analysis",
    ] {
        let n: i64 = c
            .query_one(&format!("SELECT COUNT(*) FROM iorig.{table}"), &[])
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "{table}");
    }

    common::runs_are_listed_oldest_first_with_labels(&open(&db()));
    common::upsert_reuses_the_step_and_resume_finds_the_first_incomplete(&open(&db()));
    common::stored_histograms_merge_like_the_originals(&open(&db()));
    common::writes_under_a_missing_run_or_step_say_so(&open(&db()));
    common::a_label_the_store_does_not_take_writes_nothing(&open(&db()));
    // Pushed from an SQLite file up, and back down.
    let team = open(&db());
    common::push_copies_once_and_replaces_a_running_copy(&Store::open_in_memory().unwrap(), &team);
    common::push_copies_once_and_replaces_a_running_copy(&team, &Store::open_in_memory().unwrap());
}

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn a_postgres_store_is_made_once_and_refused_when_not_iorigs() {
    let server = PgServer::start().unwrap();

    // Two processes opening a new database at once: one makes the schema,
    // the other finds it; both write.
    let url = server.new_database().unwrap();
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let url = url.clone();
                s.spawn(move || {
                    let store = open(&url);
                    store
                        .create_run(&common::new_run(
                            RunKind::Run,
                            &format!("2026-11-25T0{i}:00:00Z"),
                        ))
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(open(&url).list_runs().unwrap().len(), runs.len());

    // Read-only on a database without a store creates nothing.
    let empty = server.new_database().unwrap();
    let e = Store::open_read_only_at(&location(&empty)).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
    let mut c = postgres::Client::connect(&empty, postgres::NoTls).unwrap();
    let schemas: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'iorig'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(schemas, 0);
    // Tables of other programs outside iorig's schema are no concern.
    c.batch_execute("CREATE TABLE public.accounts (id BIGINT)")
        .unwrap();
    Store::check_at(&location(&empty)).unwrap();
    open(&empty);

    // A schema named iorig that another program made is refused, untouched.
    let foreign = server.new_database().unwrap();
    let mut c = postgres::Client::connect(&foreign, postgres::NoTls).unwrap();
    c.batch_execute("CREATE SCHEMA iorig; CREATE TABLE iorig.customers (id BIGINT)")
        .unwrap();
    for e in [
        Store::open_at(&location(&foreign)).unwrap_err(),
        Store::check_at(&location(&foreign)).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::ForeignTables { .. }), "{e}");
        assert!(e.to_string().contains("customers"), "{e}");
    }
    let tables: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'iorig'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1);

    // A newer iorig's store: refused with both versions named.
    let newer = server.new_database().unwrap();
    drop(open(&newer));
    let mut c = postgres::Client::connect(&newer, postgres::NoTls).unwrap();
    c.batch_execute("UPDATE iorig.iorig_meta SET value = '99' WHERE key = 'schema_version'")
        .unwrap();
    for e in [
        Store::open_at(&location(&newer)).unwrap_err(),
        Store::open_read_only_at(&location(&newer)).unwrap_err(),
    ] {
        assert!(
            matches!(e, StoreError::NewerSchema { found: 99, known } if known == SCHEMA_VERSION),
            "{e}"
        );
    }
}

#[test]
fn an_unreachable_server_is_a_connect_error_without_the_password() {
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://ann:hunter2@127.0.0.1:{port}/team?connect_timeout=5");
    let e = Store::open_at(&location(&url)).unwrap_err();
    assert!(matches!(e, StoreError::Connect { .. }), "{e}");
    let text = e.to_string();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("ann:***@127.0.0.1"), "{text}");
    assert!(text.contains("refused"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}
