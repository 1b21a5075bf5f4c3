//! `cargo xtask keychain`: the token store in a real OS keychain.
//!
//! On Linux: installs Debian's `gnome-keyring` and `dbus` with apt-get when
//! `gnome-keyring-daemon`, `dbus-run-session` or `dbus-send` is missing (a
//! clear error when apt-get is not there), then runs `mcp-auth`'s
//! `keychain` tests (feature `keychain-tests`) three times:
//! - `usable::`, in a private session bus (`dbus-run-session`) with a
//!   login keyring that gnome-keyring creates in a fresh folder, unlocked
//!   with a throwaway password;
//! - `locked::`, in another such bus (the tests lock the keyring through
//!   the Secret Service API);
//! - `absent::`, with the session bus address naming no bus at all;
//!
//! and `mcpc`'s `keychain::real::` tests (`accounts migrate`) in a third
//! session bus.
//!
//! Elsewhere the step says it runs on Linux only and passes: macOS and
//! Windows keychains belong to the user running the tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::steps::{Step, cargo, have, root, run};

/// The tools the tests need, and the Debian packages that bring them.
const TOOLS: [&str; 3] = ["gnome-keyring-daemon", "dbus-run-session", "dbus-send"];
const PACKAGES: [&str; 2] = ["gnome-keyring", "dbus"];

/// Whether an executable of that name is in a folder of `PATH`.
fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
        .unwrap_or(false)
}

fn missing() -> Vec<&'static str> {
    TOOLS.into_iter().filter(|tool| !on_path(tool)).collect()
}

/// Installs gnome-keyring and dbus when a tool is missing.
fn install() -> Result<(), String> {
    let absent = missing();
    if absent.is_empty() {
        println!("gnome-keyring and dbus are installed");
        return Ok(());
    }
    if !have("apt-get", &["--version"]) {
        return Err(format!(
            "{} missing and apt-get is not available: install gnome-keyring and dbus \
             (dbus-run-session, dbus-send) with this system's package manager",
            absent.join(", ")
        ));
    }
    println!("{} missing: installing {} with apt-get", absent.join(", "), PACKAGES.join(" "));
    let apt_install = || {
        let mut cmd = Command::new("apt-get");
        cmd.args(["install", "-y", "--no-install-recommends"]).args(PACKAGES);
        cmd.env("DEBIAN_FRONTEND", "noninteractive");
        run(cmd)
    };
    // A machine whose package lists were never fetched knows no packages.
    if apt_install().is_err() {
        let mut update = Command::new("apt-get");
        update.arg("update");
        run(update).map_err(|e| format!("apt-get update failed (not root?): {e}"))?;
        apt_install().map_err(|e| format!("installing gnome-keyring and dbus failed: {e}"))?;
    }
    let still = missing();
    if still.is_empty() {
        Ok(())
    } else {
        Err(format!("{} still missing after installing {}", still.join(", "), PACKAGES.join(" ")))
    }
}

/// `cargo test` of a crate's keychain tests (feature `keychain-tests`):
/// `mcp-auth`'s `keychain` binary, `mcpc`'s `keychain::` module.
fn test_command(krate: &str, filter: &str, extra: &[&str]) -> Command {
    let mut cmd = cargo();
    let test = if krate == "mcp-auth" { "keychain" } else { "tests" };
    cmd.args(["test", "--locked", "-p", krate, "--features", "keychain-tests", "--test", test]);
    cmd.arg("--").arg(filter).args(extra);
    cmd
}

fn build() -> Result<(), String> {
    for krate in ["mcp-auth", "mcpc"] {
        let mut cmd = cargo();
        let test = if krate == "mcp-auth" { "keychain" } else { "tests" };
        cmd.args(["test", "--locked", "-p", krate, "--features", "keychain-tests"]);
        cmd.args(["--test", test, "--no-run"]);
        run(cmd)?;
    }
    Ok(())
}

/// A fresh folder for one session's keyrings and sockets, in the
/// temporary folder (a socket's path must stay short).
fn session_dir(name: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("mcp-keychain-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        b.mode(0o700);
    }
    b.create(dir.join("data"))
        .and_then(|()| b.create(dir.join("run")))
        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The throwaway password of the test keyrings (in a folder of their own,
/// removed after the run).
const PASSWORD: &str = "mcp-xtask-keychain";

/// `test` in `dbus-run-session -- sh -c '<unlock> && <wait> && exec "$@"'`
/// with gnome-keyring's files in `dir`: the daemon creates the login
/// keyring with the password read from standard input, unlocked, and makes
/// it the default collection; it exits with the bus.
///
/// `gnome-keyring-daemon --unlock` returns before the daemon owns the
/// Secret Service's bus name (one 0.1 s poll later, here). A test that
/// called the service in that gap made the bus start the service itself,
/// and could meet a locked keyring (three of four `usable::` tests failed
/// with `Locked` once in CI). So the script waits (0.1 s steps, 10 s at
/// most) until the name has an owner, asking the bus (`NameHasOwner`
/// starts nothing).
fn in_session(dir: &Path, test: Command) -> Result<(), String> {
    let script = "printf %s \"$KEYCHAIN_TEST_PASSWORD\" \
                  | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
                  && unset KEYCHAIN_TEST_PASSWORD \
                  && i=0 && until dbus-send --session --print-reply=literal \
                  --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                  org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets \
                  | grep -q true; do i=$((i+1)); if [ $i -ge 100 ]; then \
                  echo 'gnome-keyring-daemon did not take the Secret Service name in 10 s' >&2; \
                  exit 1; fi; sleep 0.1; done && exec \"$@\"";
    let mut cmd = Command::new("dbus-run-session");
    cmd.current_dir(root());
    cmd.args(["--", "sh", "-c", script, "sh"]);
    cmd.arg(test.get_program()).args(test.get_args());
    cmd.env("KEYCHAIN_TEST_PASSWORD", PASSWORD);
    cmd.env("XDG_DATA_HOME", dir.join("data"));
    cmd.env("XDG_RUNTIME_DIR", dir.join("run"));
    cmd.env_remove("GNOME_KEYRING_CONTROL");
    let result = run(cmd);
    let _ = std::fs::remove_dir_all(dir);
    result
}

fn usable() -> Result<(), String> {
    in_session(&session_dir("usable")?, test_command("mcp-auth", "usable::", &[]))
}

fn locked() -> Result<(), String> {
    let test = test_command("mcp-auth", "locked::", &["--test-threads=1"]);
    in_session(&session_dir("locked")?, test)
}

fn absent() -> Result<(), String> {
    let dir = session_dir("absent")?;
    let mut cmd = test_command("mcp-auth", "absent::", &[]);
    let bus = dir.join("run").join("no-bus-here");
    cmd.env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", bus.display()));
    let result = run(cmd);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn mcpc() -> Result<(), String> {
    in_session(&session_dir("mcpc")?, test_command("mcpc", "keychain::real::", &[]))
}

/// The steps: install, build, then the three runs.
pub(crate) fn steps() -> Vec<Step> {
    if !cfg!(target_os = "linux") {
        return vec![Step::new("keychain: runs on Linux only (gnome-keyring)", || {
            println!("the keychain tests run on Linux only; this is not Linux");
            Ok(())
        })];
    }
    vec![
        Step::new("keychain: gnome-keyring and dbus (Debian packages when missing)", install),
        Step::new("keychain: build the keychain tests (mcp-auth, mcpc)", build),
        Step::new(
            "keychain: tokens in gnome-keyring (round trip, accounts, migration, logs)",
            usable,
        ),
        Step::new("keychain: a locked keyring is reported and auto falls back", locked),
        Step::new("keychain: no session bus, no keychain: reported, auto falls back", absent),
        Step::new("keychain: mcpc accounts migrate to gnome-keyring and back", mcpc),
    ]
}
