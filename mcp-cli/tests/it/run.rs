//! Running the built `mcpc` to its end under a bound, and what it wrote.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How one `mcpc` run ended.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to its end with its stdout and stderr captured; kills it and
/// panics when it takes longer than `limit`.
pub(crate) fn run_bounded(mut cmd: Command, limit: Duration) -> Run {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("mcpc starts");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcpc did not finish within {limit:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    }
}

/// The JSON on stdout, which must be one document.
pub(crate) fn json_of(r: &Run) -> serde_json::Value {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"))
}

/// How long one `mcpc` run may take.
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(60);

/// A scratch directory used as the working directory and the home, so no
/// real configuration is picked up.
pub(crate) struct Sandbox {
    pub(crate) dir: PathBuf,
}

impl Sandbox {
    pub(crate) fn new(name: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("mcpc-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Sandbox { dir }
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes a project configuration and approves it as it is now
    /// (`mcpc trust`), as its user would before using it.
    pub(crate) fn write_approved(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.write(rel, text);
        let r = self.run(&["trust", rel]);
        assert_eq!(r.code, 0, "{r:?}");
        path
    }

    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// The environment that keeps `mcpc` in the sandbox: its home, its
    /// configuration, data and cache directories, and the administrator's
    /// policy of the sandbox (none unless written).
    pub(crate) fn env(&self) -> [(&'static str, PathBuf); 5] {
        [
            ("HOME", self.dir.clone()),
            ("XDG_CONFIG_HOME", self.dir.join("xdg")),
            ("XDG_DATA_HOME", self.dir.join("data")),
            ("XDG_CACHE_HOME", self.dir.join("cache")),
            ("MCPC_MANAGED_POLICY", self.dir.join("managed.toml")),
        ]
    }

    /// `mcpc args` in the sandbox (its working directory and
    /// [`env`](Self::env)), no browser, no colour.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpc"));
        cmd.args(args)
            .current_dir(&self.dir)
            .envs(self.env())
            .env("MCPC_NO_BROWSER", "1")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    pub(crate) fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        run_bounded(cmd, RUN_LIMIT)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
