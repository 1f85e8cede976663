//! Compiles `proto/iorig/agent/v1/agent.proto` with protox (a protobuf
//! compiler in Rust), so a build needs no `protoc` on the machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let file = "iorig/agent/v1/agent.proto";
    println!("cargo:rerun-if-changed={}", root.join(file).display());
    let fds = protox::compile([file], [&root])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
