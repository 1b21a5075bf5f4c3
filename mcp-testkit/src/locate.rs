//! Finding the `mcp-testkit` binary from another crate's tests.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The path of the `mcp-testkit` binary of this workspace, for tests of other
/// crates that spawn it.
///
/// It looks next to the running test executable (`target/<profile>/`), where
/// `cargo test --workspace` puts it. When it is not there (a test run of one
/// crate with `-p`), it builds it once with `cargo build -p mcp-testkit`.
///
/// # Panics
///
/// When the binary can be neither found nor built: a test cannot go on then.
pub fn binary_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable has a path");
        // target/<profile>/deps/<test> -> target/<profile>/
        let profile_dir =
            exe.parent().and_then(|deps| deps.parent()).expect("a target/<profile> directory");
        let bin = profile_dir.join(format!("mcp-testkit{}", std::env::consts::EXE_SUFFIX));
        if !bin.is_file() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--quiet", "-p", "mcp-testkit", "--bin", "mcp-testkit"]);
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("cargo can be run to build mcp-testkit");
            assert!(status.success(), "building mcp-testkit failed: {status}");
        }
        assert!(bin.is_file(), "mcp-testkit is not at {}", bin.display());
        bin
    })
    .clone()
}
