//! The SDK clients: one run of a script, bounded in time, and its result
//! line read.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::phase::{NAMES, Phase, Run, Target};

/// The longest one script run may take before it is killed.
const SCRIPT_LIMIT: Duration = Duration::from_secs(180);

/// Runs a script to its end (killed after [`SCRIPT_LIMIT`]); its stdout.
fn run_bounded(mut cmd: Command, name: &str) -> Result<String, String> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| format!("{name}: cannot start {cmd:?}: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("{name}: {e}"))? {
            Some(status) => break status,
            None if start.elapsed() > SCRIPT_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{name}: killed after {}s", SCRIPT_LIMIT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = reader.join().map_err(|_| format!("{name}: the stdout reader panicked"))?;
    if !status.success() {
        return Err(format!("{name} exited with {status}"));
    }
    Ok(out)
}

impl Phase<'_> {
    /// One run of an SDK's script (1: TypeScript, 2: Python).
    pub(crate) fn script(
        &self,
        which: usize,
        target: &Target,
        calls: usize,
        warm: usize,
        depth: usize,
    ) -> Result<(Run, String), String> {
        let mut cmd = if which == 1 {
            let mut c = Command::new(&self.config.node);
            c.arg(&self.config.ts_script);
            c
        } else {
            let mut c = Command::new(&self.config.python);
            c.arg(&self.config.py_script);
            c
        };
        cmd.args([
            "--era",
            self.era.name(),
            "--calls",
            &calls.to_string(),
            "--warm",
            &warm.to_string(),
        ]);
        cmd.args(["--depth", &depth.to_string()]);
        match target {
            Target::Stdio(program, args) => {
                cmd.arg("--").arg(program).args(args);
            }
            Target::Http(server) => {
                cmd.args(["--url", &server.url]);
            }
        }
        let line = run_bounded(cmd, NAMES[which])?;
        let v: Value = serde_json::from_str(line.trim())
            .map_err(|e| format!("{}: not a result line ({e}): {line:.300}", NAMES[which]))?;
        let num = |k: &str| v[k].as_f64().unwrap_or(0.0);
        if v["negotiated"].as_str() != Some(self.era.revision()) || num("calls") <= 0.0 {
            return Err(format!("{}: unexpected result {line:.300}", NAMES[which]));
        }
        let runtime = match (v["node"].as_str(), v["python"].as_str()) {
            (Some(n), _) => format!("Node.js {n}"),
            (_, Some(p)) => format!("Python {p}"),
            _ => String::new(),
        };
        Ok((
            Run {
                p50: num("p50_us"),
                p99: num("p99_us"),
                rate: num("calls_per_s"),
                cpu: num("cpu_us_per_call"),
            },
            runtime,
        ))
    }
}
