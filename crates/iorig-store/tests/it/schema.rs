//! Protects the schema's life cycle: a new file gets every migration, a
//! reopen changes nothing, the file is in WAL mode and marked as iorig's, and
//! a database from a newer iorig or from another program is refused with a
//! clear error instead of being altered.

#![allow(clippy::unwrap_used)]

use iorig_store::{Store, StoreError, APPLICATION_ID, SCHEMA_VERSION};
use rusqlite::Connection;

fn tables(path: &std::path::Path) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<String>, _>>()
        .unwrap()
}

#[test]
fn migrations_apply_on_an_empty_db_and_reopen_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    assert!(!path.exists());
    let store = Store::open(&path).unwrap();
    assert!(path.exists());
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    drop(store);

    let expected = [
        "analysis",
        "external_series",
        "histograms",
        "intervals",
        "run_labels",
        "runs",
        "step_hosts",
        "step_jobs",
        "steps",
        "system_facts",
        "target_facts",
        "trace_analyses",
    ];
    assert_eq!(tables(&path), expected);

    // Reopening applies nothing again (a second CREATE TABLE would fail) and
    // keeps the data.
    let store = Store::open(&path).unwrap();
    add_probe_run(&store);
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.list_runs().unwrap().len(), 1);
    assert_eq!(tables(&path), expected);

    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
}

/// A run to store.
fn probe_run() -> iorig_store::NewRun {
    iorig_store::NewRun {
        kind: iorig_store::RunKind::Run,
        plan_json: None,
        host: "h".into(),
        tool_version: "0.1.0".into(),
        command_line: "iorig run".into(),
        labels: Default::default(),
        started: "2026-01-01T00:00:00Z".into(),
    }
}

/// Stores one run, so a reopen can be seen to keep data.
fn add_probe_run(store: &Store) {
    store.create_run(&probe_run()).unwrap();
}

#[test]
fn an_existing_empty_file_is_set_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    drop(Store::open(&path).unwrap());
    let newer = SCHEMA_VERSION + 1;
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::NewerSchema { found, known } => {
            assert_eq!(*found, newer);
            assert_eq!(*known, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("newer") && !msg.contains('\n'), "{msg}");
    // Refusing did not touch the file.
    let v: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, newer);
}

#[test]
fn another_programs_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "application_id", 0x1234).unwrap();
    conn.execute_batch("CREATE TABLE t (x)").unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotIorigDb {
                application_id: 0x1234,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(tables(&path), ["t"]);
}

#[test]
fn a_file_that_is_not_a_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "this is not SQLite, but long enough to have a header .....................................................................").unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
}

/// A version-1 store with one step recorded the old way: `read_bs` and
/// `write_bs` 64k, but `bs` (and the searchable columns) the default 4k.
fn version_1_store_with_a_64k_step(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    let iorig_store::Migration::Sql(v1) = &iorig_store::MIGRATIONS[0] else {
        panic!("migration 1 is SQL");
    };
    conn.execute_batch(v1).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .unwrap();
    conn.execute(
        "INSERT INTO runs (id, kind, status, started, host, tool_version, command_line)
         VALUES (1, 'run', 'ok', 't', 'h', '0.1.0', 'iorig run')",
        [],
    )
    .unwrap();
    let mut record = iorig_spec::WorkloadFile::default()
        .resolve(1)
        .unwrap()
        .record();
    record.read_pct = 50.0;
    record.read_bs = Some("64k".into());
    record.write_bs = Some("64k".into());
    assert_eq!(record.bs, "4k", "the old record kept the default bs");
    conn.execute(
        "INSERT INTO steps (id, run_id, step_index, name, role, params_json, bs, bs_bytes)
         VALUES (1, 1, 0, 'run', 'run', ?1, '4k', 4096)",
        [serde_json::to_string(&record).unwrap()],
    )
    .unwrap();
}

#[test]
fn opening_an_old_store_repairs_steps_recorded_with_the_default_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    version_1_store_with_a_64k_step(&path);

    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let step = store.step(iorig_store::StepId(1)).unwrap().unwrap();
    let params = step.params.unwrap();
    assert_eq!(params.bs, "64k");
    assert_eq!(params.bs_bytes.len(), 1);
    assert_eq!(params.bs_bytes[0].size_bytes, 65536);
    assert_eq!(params.read_bs.as_deref(), Some("64k"));
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let cols: (String, i64) = conn
        .query_row("SELECT bs, bs_bytes FROM steps WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(cols, ("64k".to_owned(), 65536));
}

#[test]
fn an_old_store_opened_read_only_is_read_as_new_records_are_written() {
    // Read-only commands (`runs show`, `report`, `export`, `compare`) never
    // migrate: they must read an older schema as it is.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    version_1_store_with_a_64k_step(&path);
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1, "not migrated");
    let step = store.step(iorig_store::StepId(1)).unwrap().unwrap();
    assert_eq!(step.params.unwrap().bs, "64k");
    assert!(store.intervals(step.id).unwrap().is_empty());
}

/// Version 4 (trims): a version-3 store keeps its interval and histogram
/// rows through the copy that admits `trim`, and takes trim rows after it.
#[test]
fn a_version_3_store_keeps_its_rows_and_takes_trims() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    {
        let conn = Connection::open(&path).unwrap();
        for m in &iorig_store::MIGRATIONS[..3] {
            if let iorig_store::Migration::Sql(sql) = m {
                conn.execute_batch(sql).unwrap();
            }
        }
        conn.pragma_update(None, "user_version", 3).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, kind, status, started, host, tool_version, command_line)
             VALUES (1, 'run', 'ok', 't', 'h', '0.1.0', 'iorig run');
             INSERT INTO steps (id, run_id, step_index, name, role, params_json)
             VALUES (1, 1, 0, 'run', 'run', '{}');
             INSERT INTO intervals VALUES (1, 0, 1.0, 1.0, 0, 'read', 10, 40960, 10.0, 40960.0,
               1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1.5, 2.5, NULL, NULL, NULL, NULL, NULL);
             INSERT INTO histograms VALUES (1, 'read', 'lat', 'measured', x'00');",
        )
        .unwrap();
        // Version 3 refuses a trim row: the copy below is what admits it.
        assert!(conn
            .execute_batch("INSERT INTO histograms VALUES (1, 'trim', 'lat', 'measured', x'00');")
            .is_err());
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let step = iorig_store::StepId(1);
    let rows = store.intervals(step).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].op, iorig_result::Op::Read);
    assert_eq!((rows[0].ops, rows[0].lat_ns.p99), (10, 7));
    let trim = iorig_store::IntervalRow::from_op(
        1,
        2.0,
        1.0,
        false,
        iorig_result::Op::Trim,
        &iorig_result::OpSummary::default(),
    );
    store.add_intervals(step, &[trim]).unwrap();
    assert_eq!(store.intervals(step).unwrap().len(), 2);
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM histograms WHERE op = 'read'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1, "the histogram row was kept");
}

/// A trace analysis goes in whole and comes out whole, beside the runs.
#[test]
fn trace_analyses_are_kept_whole() {
    let store = Store::open_in_memory().unwrap();
    let t = iorig_store::NewTraceAnalysis {
        created: "2026-11-25T10:00:00Z".into(),
        host: "h".into(),
        tool_version: "0".into(),
        command_line: "iorig trace analyse t.csv".into(),
        file: "t.csv".into(),
        format: "msr".into(),
        records: 42,
        labels: [("app".to_string(), "web".to_string())].into(),
        analysis_json: "{\"records\":42}".into(),
    };
    let id = store.put_trace_analysis(&t).unwrap();
    let list = store.trace_analyses().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].id, list[0].records), (id, 42));
    assert_eq!(list[0].labels["app"], "web");
    let (row, json) = store.trace_analysis(id).unwrap().unwrap();
    assert_eq!(
        (row.file.as_str(), json.as_str()),
        ("t.csv", "{\"records\":42}")
    );
    assert!(store.trace_analysis(id + 1).unwrap().is_none());
    assert!(store.list_runs().unwrap().is_empty(), "not a run");
}

/// The bytes of a file and of whichever SQLite side files are beside it.
fn file_and_side_files(path: &std::path::Path) -> Vec<(String, Option<Vec<u8>>)> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            (suffix.to_string(), std::fs::read(&p).ok())
        })
        .collect()
}

/// Only a missing path or a 0-byte file becomes a new store. A file that
/// merely looks like one (an empty SQLite database with a user_version, a
/// file marked as iorig's without its tables, at any version) is refused
/// as it is: not given tables, not switched to WAL, no side files made.
#[test]
fn a_store_like_file_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    // (user_version, marked with iorig's application id, newer than this build)
    let cases = [
        (9, false, false),
        (1, true, false),
        (2, true, false),
        (3, true, false),
        (9, true, false),
        (SCHEMA_VERSION, true, false),
        (SCHEMA_VERSION + 1, true, true),
    ];
    for (i, (version, marked, newer)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("like-{i}.db"));
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
        if marked {
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .unwrap();
        }
        drop(conn);
        let before = file_and_side_files(&path);
        let what = format!("version {version}, marked {marked}");
        let err = Store::open(&path).unwrap_err();
        match (&err, marked, newer) {
            (StoreError::NewerSchema { .. }, true, true) => {}
            (StoreError::Incomplete { version: v, .. }, true, false) => assert_eq!(*v, version),
            (StoreError::NotAStore { .. }, false, _) => {}
            _ => panic!("{what}: {err:?}"),
        }
        assert!(!err.to_string().contains('\n'), "{err}");
        assert!(Store::check(&path).is_err(), "{what}: check agrees");
        assert!(
            Store::open_read_only(&path).is_err(),
            "{what}: read-only too"
        );
        assert_eq!(file_and_side_files(&path), before, "{what}: left unchanged");
    }

    // Another program's database in WAL mode, closed (no -wal beside it):
    // even a read-only look through SQLite would make its -wal and -shm, so
    // it is refused from its header and left without side files.
    // The same for one marked as iorig's without iorig's tables.
    for (i, id) in [0, 0x1234, APPLICATION_ID].into_iter().enumerate() {
        let path = dir.path().join(format!("wal-{i}.db"));
        let conn = Connection::open(&path).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        conn.pragma_update(None, "application_id", id).unwrap();
        conn.pragma_update(None, "user_version", 9).unwrap();
        conn.execute_batch("CREATE TABLE theirs (x)").unwrap();
        drop(conn);
        let before = file_and_side_files(&path);
        assert_eq!(before[1].1, None, "closed: no -wal");
        assert!(Store::open(&path).is_err());
        assert!(Store::check(&path).is_err());
        assert!(Store::open_read_only(&path).is_err());
        assert_eq!(file_and_side_files(&path), before, "WAL file {id:#x}");
    }

    // A database marked as iorig's, with iorig's tables and one more: the
    // extra one is named.
    let path = dir.path().join("extra.db");
    drop(Store::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE mine (x)")
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(&err, StoreError::ForeignTables { tables, .. } if tables == "mine"),
        "{err:?}"
    );

    // Empty and missing files are new stores.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert!(Store::check(&empty).is_ok());
    assert_eq!(
        Store::open(&empty).unwrap().schema_version().unwrap(),
        SCHEMA_VERSION
    );
    let mode: String = Connection::open(&empty)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "a new store still ends up in WAL mode");
}

/// Older versions cut a URL's user part at its first `/` or `?`, so a
/// password holding one was stored with the command line. Schema version
/// 11 hides them once when the store is opened for writing; read-only, an
/// older store's lines are shown hidden and the file is not changed; lines
/// written since are never rewritten.
#[test]
fn passwords_stored_by_older_versions_are_scrubbed_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    // Back to version 10: what versions 11 and 12 added goes (11 added no
    // table or index, 12 the index of interval figures).
    conn.execute_batch("DROP INDEX intervals_figures").unwrap();
    conn.pragma_update(None, "user_version", 10).unwrap();
    let leaked = [
        "iorig run --db postgres://ann:se/cret@db:5432/x --time 1s",
        "iorig plan run p.toml --db POSTGRESQL://ann:se?cret@db/x -q",
        "iorig run --db postgres://ann@db/x?password=se/cret",
    ];
    for (i, line) in leaked.iter().enumerate() {
        conn.execute(
            "INSERT INTO runs (id, kind, status, started, host, tool_version, command_line, uid)
             VALUES (?1, 'run', 'ok', 't', 'h', '0.1.0', ?2, ?3)",
            rusqlite::params![i as i64 + 1, line, format!("u{i}")],
        )
        .unwrap();
    }
    drop(conn);
    let stored = || -> Vec<String> {
        let conn = Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT command_line FROM runs ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<Vec<String>, _>>()
            .unwrap()
    };
    let ro = Store::open_read_only(&path).unwrap();
    for id in 1..=3 {
        let shown = ro.get_run(iorig_store::RunId(id)).unwrap().unwrap();
        assert!(
            !shown.command_line.contains("cret"),
            "{}",
            shown.command_line
        );
    }
    drop(ro);
    assert_eq!(stored(), leaked, "read-only opens write nothing");

    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let lines = stored();
    for line in &lines {
        assert!(!line.contains("cret"), "{line}");
    }
    assert_eq!(
        lines[0],
        "iorig run --db postgres://ann:***@db:5432/x --time 1s"
    );
    assert!(lines[1].ends_with("@db/x -q"), "{}", lines[1]);
    // A line written since, that the old rule would misread (no user, a
    // port, an @ further on), is kept as written.
    let mut run = probe_run();
    run.command_line = "iorig run --db postgres://h:5433/d --label owner=ann@corp".into();
    store.create_run(&run).unwrap();
    drop(store);
    drop(Store::open(&path).unwrap());
    assert_eq!(
        stored()[3],
        "iorig run --db postgres://h:5433/d --label owner=ann@corp"
    );
}
