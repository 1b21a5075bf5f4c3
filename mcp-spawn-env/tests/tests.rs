//! Integration tests on the real file system and real processes: the login
//! shell probe against fake shells, command resolution in a temporary tree,
//! fallback directories on a temporary home.
//!
//! Every file is written once, in [`fixture`], before any test spawns a
//! process: writing an executable while another thread forks can make its
//! later exec fail with "text file busy".

#![cfg(unix)]

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcp_spawn_env::{
    DEFAULT_PROBE_TIMEOUT, Platform, ProbeError, RealFileSystem, ResolveError, Runtime,
    fallback_dirs, probe_login_shell, resolve_command, spawn_path, split_path_list,
};

/// The temporary tree all tests use.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }
}

fn write(path: &Path, contents: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("mcp-spawn-env-tests-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let fixture = Fixture { root };

        // Shells. Each checks it is called the way the probe calls a shell.
        let check_call =
            "[ \"$1\" = \"-ilc\" ] || exit 64\n[ \"$MCP_SPAWN_ENV_PROBE\" = 1 ] || exit 65\n";
        write(
            &fixture.path("shells/banner"),
            &format!(
                "#!/bin/sh\n{check_call}\
                 echo 'Welcome to the fake shell!'\n\
                 printf 'Last login: today\\r\\n'\n\
                 PATH=\"/opt/fake-login/bin:$PATH\"; export PATH\n\
                 /bin/sh -c \"$2\"\n\
                 status=$?\n\
                 printf '\\nfortune: a clean PATH is a happy PATH\\n'\n\
                 exit $status\n"
            ),
            0o755,
        );
        write(
            &fixture.path("shells/hanging"),
            &format!(
                "#!/bin/sh\n{check_call}echo 'loading plugins...'\nsleep 6\n/bin/sh -c \"$2\"\n"
            ),
            0o755,
        );
        write(
            &fixture.path("shells/failing"),
            &format!("#!/bin/sh\n{check_call}/bin/sh -c \"$2\"\nexit 3\n"),
            0o755,
        );
        write(
            &fixture.path("shells/mute"),
            &format!("#!/bin/sh\n{check_call}echo 'I print no PATH'\nexit 0\n"),
            0o755,
        );
        write(
            &fixture.path("shells/background"),
            &format!(
                "#!/bin/sh\n{check_call}\
                 sleep 6 &\n\
                 PATH=/opt/bg/bin:/usr/bin:/bin /bin/sh -c \"$2\"\n"
            ),
            0o755,
        );

        // A small tree of commands.
        write(&fixture.path("work/bin/tool"), "#!/bin/sh\necho tool-ran\n", 0o755);
        write(&fixture.path("work/bin/data.txt"), "not a program\n", 0o644);
        write(&fixture.path("work/other/tool"), "#!/bin/sh\necho wrong-tool\n", 0o644);
        std::os::unix::fs::symlink(fixture.path("work/bin/tool"), fixture.path("work/bin/linked"))
            .unwrap();

        // A home with version managers.
        for dir in [
            "home/.cargo/bin",
            "home/.nvm/versions/node/v18.20.4/bin",
            "home/.nvm/versions/node/v20.9.0/bin",
            "home/.nvm/versions/node/v20.10.0/bin",
            "home/.nvm/versions/node/system",
            "home/.asdf/shims",
        ] {
            std::fs::create_dir_all(fixture.path(dir)).unwrap();
        }
        write(&fixture.path("home/.local/bin"), "a file, not a directory\n", 0o644);

        fixture
    })
}

// ---------------------------------------------------------------- probe

#[test]
fn probe_ignores_banner_noise() {
    let f = fixture();
    let path = probe_login_shell(&f.path("shells/banner"), DEFAULT_PROBE_TIMEOUT).unwrap();
    let entries = split_path_list(&path, Platform::Unix);
    assert_eq!(entries[0], PathBuf::from("/opt/fake-login/bin"), "{path:?}");
    let text = path.to_str().unwrap();
    assert!(
        !text.contains("Welcome") && !text.contains("fortune") && !text.contains('\n'),
        "{text:?}"
    );
}

#[test]
fn probe_of_a_hanging_shell_times_out() {
    let f = fixture();
    let started = Instant::now();
    let error = probe_login_shell(&f.path("shells/hanging"), DEFAULT_PROBE_TIMEOUT).unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(error, ProbeError::TimedOut { timeout, .. } if timeout == DEFAULT_PROBE_TIMEOUT),
        "{error:?}"
    );
    assert!(elapsed >= DEFAULT_PROBE_TIMEOUT, "{elapsed:?}");
    assert!(elapsed < DEFAULT_PROBE_TIMEOUT + Duration::from_millis(1500), "{elapsed:?}");
}

#[test]
fn probe_timeout_is_a_parameter() {
    let f = fixture();
    let started = Instant::now();
    let error =
        probe_login_shell(&f.path("shells/hanging"), Duration::from_millis(300)).unwrap_err();
    assert!(matches!(error, ProbeError::TimedOut { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());
    assert!(error.to_string().contains("did not finish within 300 ms"), "{error}");
}

#[test]
fn probe_of_a_failing_shell_gives_no_path() {
    let f = fixture();
    let error = probe_login_shell(&f.path("shells/failing"), DEFAULT_PROBE_TIMEOUT).unwrap_err();
    let ProbeError::Failed { status, .. } = &error else { panic!("unexpected {error:?}") };
    assert_eq!(status.code(), Some(3));
}

#[test]
fn probe_of_a_shell_that_prints_no_path() {
    let f = fixture();
    let error = probe_login_shell(&f.path("shells/mute"), DEFAULT_PROBE_TIMEOUT).unwrap_err();
    assert!(matches!(error, ProbeError::NoPath { .. }), "{error:?}");
}

#[test]
fn probe_does_not_wait_for_background_jobs_holding_the_pipe() {
    let f = fixture();
    let started = Instant::now();
    let path = probe_login_shell(&f.path("shells/background"), DEFAULT_PROBE_TIMEOUT).unwrap();
    assert_eq!(path, OsString::from("/opt/bg/bin:/usr/bin:/bin"));
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}

#[test]
fn probe_of_a_missing_shell_is_an_io_error() {
    let f = fixture();
    let error = probe_login_shell(&f.path("shells/absent"), DEFAULT_PROBE_TIMEOUT).unwrap_err();
    assert!(matches!(error, ProbeError::Io { .. }), "{error:?}");
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn probe_of_the_real_sh() {
    // `sh -ilc` exists on every Unix; what it prints depends on the machine,
    // but it prints a PATH.
    let path = probe_login_shell(Path::new("/bin/sh"), DEFAULT_PROBE_TIMEOUT).unwrap();
    assert!(!split_path_list(&path, Platform::Unix).is_empty(), "{path:?}");
}

// ---------------------------------------------------------------- resolve

fn bin_path(f: &Fixture, dirs: &[&str]) -> OsString {
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| f.path(d)).collect();
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn resolves_on_path_skipping_non_executables() {
    let f = fixture();
    let path = bin_path(f, &["work/missing-dir", "work/other", "work/bin"]);
    let resolved = resolve_command("tool", f.path("work"), &path, "Acme").unwrap();
    assert_eq!(resolved, f.path("work/bin/tool"));

    // The resolved program runs.
    let output = Command::new(&resolved).env("PATH", &path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "tool-ran\n");
}

#[test]
fn resolves_path_like_commands_relative_to_cwd() {
    let f = fixture();
    let cases: &[(&str, &str, &str)] = &[
        ("./bin/tool", "work", "work/bin/tool"),
        ("bin/tool", "work", "work/bin/tool"),
        ("./tool", "work/bin", "work/bin/tool"),
        ("../bin/tool", "work/other", "work/other/../bin/tool"),
    ];
    for &(command, cwd, expected) in cases {
        let resolved = resolve_command(command, f.path(cwd), "", "Acme").unwrap();
        assert_eq!(resolved, f.path(expected), "{command} in {cwd}");
    }
    let absolute = f.path("work/bin/tool");
    assert_eq!(resolve_command(&absolute, "/", "", "Acme").unwrap(), absolute);
}

#[test]
fn keeps_symbolic_links() {
    let f = fixture();
    let resolved = resolve_command("linked", "/", bin_path(f, &["work/bin"]), "Acme").unwrap();
    assert_eq!(resolved, f.path("work/bin/linked"));
}

#[test]
fn rejects_what_is_not_an_executable_file() {
    let f = fixture();
    for command in ["./data.txt", "./"] {
        let error = resolve_command(command, f.path("work/bin"), "", "Acme").unwrap_err();
        assert!(matches!(error, ResolveError::NotExecutable { .. }), "{command}: {error:?}");
    }
    let error = resolve_command("./other/tool", f.path("work"), "", "Acme").unwrap_err();
    let ResolveError::NotExecutable { path, .. } = &error else { panic!("unexpected {error:?}") };
    assert_eq!(path, &f.path("work/other/tool"));
    assert!(error.to_string().contains("is not an executable file"), "{error}");

    // On PATH, a non-executable file is not a match.
    let error = resolve_command("data.txt", "/", bin_path(f, &["work/bin"]), "Acme").unwrap_err();
    assert!(matches!(error, ResolveError::NotFound { .. }), "{error:?}");
}

#[test]
fn missing_commands_give_guidance() {
    let f = fixture();
    let path = bin_path(f, &["work/bin", "work/other"]);
    let cases: &[(&str, Option<Runtime>, &str)] = &[
        ("npx", Some(Runtime::NodeJs), "install Node.js (https://nodejs.org)"),
        ("uvx", Some(Runtime::Uv), "install uv"),
        ("python3", Some(Runtime::Python), "install Python 3"),
        ("docker", Some(Runtime::Docker), "install Docker"),
        ("some-server", None, "Install it"),
    ];
    for &(command, expected_runtime, advice) in cases {
        let error = resolve_command(command, f.path("work"), &path, "Acme IDE").unwrap_err();
        let message = error.to_string();
        let ResolveError::NotFound { command: named, runtime, searched_dirs, .. } = &error else {
            panic!("unexpected {error:?}")
        };
        assert_eq!(named, command);
        assert_eq!(*runtime, expected_runtime);
        assert_eq!(*searched_dirs, 2);
        assert!(message.starts_with(&format!("`{command}` was not found.")), "{message}");
        assert!(message.contains(advice), "{message}");
        assert!(message.contains("restart Acme IDE."), "{message}");
        assert!(message.ends_with("(Searched 2 directories on PATH.)"), "{message}");
        assert!(!message.contains(f.root.to_str().unwrap()), "the PATH leaked: {message}");
    }

    let error = resolve_command("./missing", f.path("work"), &path, "Acme IDE").unwrap_err();
    assert!(matches!(error, ResolveError::NotFound { searched_dirs: 0, .. }), "{error:?}");
    assert!(error.to_string().contains("Acme IDE's configuration"), "{error}");

    assert_eq!(resolve_command("", "/", &path, "Acme").unwrap_err(), ResolveError::Empty);
}

// ---------------------------------------------------------------- PATH

#[test]
fn fallback_dirs_on_a_real_home() {
    let f = fixture();
    let home = f.path("home");
    let env = |name: &str| (name == "HOME").then(|| home.clone().into_os_string());
    let dirs = fallback_dirs(Platform::Unix, &env, &RealFileSystem);
    let ours: Vec<&PathBuf> = dirs.iter().filter(|d| d.starts_with(&home)).collect();
    // `.local/bin` is a file here, `.nvm` has three versions and a `system`
    // entry, `.asdf/shims` exists.
    assert_eq!(
        ours,
        [
            &f.path("home/.cargo/bin"),
            &f.path("home/.nvm/versions/node/v20.10.0/bin"),
            &f.path("home/.asdf/shims")
        ]
    );
    // System directories are added only where they exist.
    for dir in dirs.iter().filter(|d| !d.starts_with(&home)) {
        assert!(dir.is_dir(), "{dir:?}");
    }
}

#[test]
fn configured_path_wins() {
    assert_eq!(
        spawn_path(Some("/configured/bin:/usr/bin")),
        OsString::from("/configured/bin:/usr/bin")
    );
}

#[test]
fn default_path_keeps_every_process_path_entry() {
    let computed = spawn_path(None);
    let computed = split_path_list(&computed, Platform::Unix);
    let process = std::env::var_os("PATH").unwrap_or_default();
    for entry in split_path_list(&process, Platform::Unix) {
        assert!(computed.contains(&entry), "{entry:?} missing from {computed:?}");
    }
    let unique: std::collections::HashSet<&OsStr> =
        computed.iter().map(|p| p.as_os_str()).collect();
    assert_eq!(unique.len(), computed.len(), "duplicates in {computed:?}");
}
