//! Protects the test harness the PostgreSQL store tests stand on: a server
//! that really starts, on loopback only, gives each test its own database,
//! and leaves no process and no directory behind.
#![allow(clippy::unwrap_used)]

use iorig_testpg::PgServer;

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn a_server_starts_serves_separate_databases_and_goes_away() {
    let server = PgServer::start().unwrap();
    let (a, b) = (
        server.new_database().unwrap(),
        server.new_database().unwrap(),
    );
    assert_ne!(a, b);
    assert!(a.starts_with("postgres://postgres@127.0.0.1:"), "{a}");
    let mut ca = postgres::Client::connect(&a, postgres::NoTls).unwrap();
    let mut cb = postgres::Client::connect(&b, postgres::NoTls).unwrap();
    ca.batch_execute("CREATE TABLE t (x BIGINT); INSERT INTO t VALUES (42)")
        .unwrap();
    let x: i64 = ca.query_one("SELECT x FROM t", &[]).unwrap().get(0);
    assert_eq!(x, 42);
    // The other database does not see it.
    assert!(cb.query("SELECT x FROM t", &[]).is_err());
    // Loopback only.
    let listen: String = ca.query_one("SHOW listen_addresses", &[]).unwrap().get(0);
    assert_eq!(listen, "127.0.0.1");
    let data = server.data_dir();
    let port = server.port();
    assert!(data.join("postmaster.pid").exists());
    // Dropped with a client still connected: the server stops anyway, and
    // its files go.
    drop(server);
    assert!(!data.exists(), "{} left behind", data.display());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "something still listens on {port}"
    );
    drop(ca);
    drop(cb);
}
