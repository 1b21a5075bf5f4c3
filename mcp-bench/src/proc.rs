//! What the benchmarks read about processes: CPU time, memory, CPU affinity,
//! and the `mcp-testkit` server they all talk to.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::sys::resource::{UsageWho, getrusage};
use nix::unistd::Pid;

/// User plus system CPU time this process (all its threads) has used so far.
pub fn cpu_time() -> Duration {
    rusage_cpu(UsageWho::RUSAGE_SELF)
}

/// User plus system CPU time of this process's children that have ended
/// and been waited for.
pub fn children_cpu_time() -> Duration {
    rusage_cpu(UsageWho::RUSAGE_CHILDREN)
}

/// User plus system time of `getrusage(who)`; zero when it fails.
fn rusage_cpu(who: UsageWho) -> Duration {
    let tv = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64)
            + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    getrusage(who).map_or(Duration::ZERO, |u| tv(u.user_time()) + tv(u.system_time()))
}

/// User plus system CPU time another process (`/proc/<pid>/stat`) has
/// used so far, in clock ticks' resolution (10 ms at the usual 100 Hz).
pub fn process_cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which may itself hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok().flatten()?;
    let ticks = u64::try_from(ticks).ok().filter(|t| *t > 0)?;
    Some(Duration::from_micros((utime + stime) * 1_000_000 / ticks))
}

/// Ends the process (exit code 3) if it still runs after `limit`: every
/// benchmark run is bounded in time even if a peer hangs.
pub fn watchdog(limit: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"mcp-bench: wall-clock limit reached\n",
        );
        std::process::exit(3);
    });
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in bytes.
pub fn status_bytes(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line =
        status.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    let kb: u64 = line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// The CPUs this thread may run on when the program started; restored by
/// [`unpin`].
fn all_cpus() -> &'static CpuSet {
    static ALL: std::sync::OnceLock<CpuSet> = std::sync::OnceLock::new();
    ALL.get_or_init(|| sched_getaffinity(Pid::from_raw(0)).unwrap_or_else(|_| CpuSet::new()))
}

/// Restricts the calling thread, and every process or thread it starts from
/// now on (they inherit the mask, as under `taskset -c 0`), to CPU 0.
pub fn pin_to_cpu0() -> Result<(), String> {
    pin_to_cpu(0)
}

/// Restricts the calling thread, and every process or thread it starts from
/// now on, to CPU `cpu` (as under `taskset -c CPU`).
pub fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    all_cpus();
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|e| format!("cpu set: {e}"))?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| format!("sched_setaffinity: {e}"))
}

/// Lets the calling thread (and what it starts from now on) run on every CPU
/// again.
pub fn unpin() -> Result<(), String> {
    sched_setaffinity(Pid::from_raw(0), all_cpus()).map_err(|e| format!("sched_setaffinity: {e}"))
}

/// [`pin_to_cpu0`] when `pinned`, else [`unpin`]: the affinity of a phase
/// (what it starts from now on inherits it).
pub fn pin(pinned: bool) -> Result<(), String> {
    if pinned { pin_to_cpu0() } else { unpin() }
}

/// The binary `name` next to this executable (`target/<profile>/`), such
/// as another benchmark run in one of its server modes.
pub fn beside(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this executable's path: {e}"))?;
    Ok(exe.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// The `mcp-testkit` binary: `--server PATH` when given, else the one next
/// to this executable (`target/<profile>/`), built if missing.
pub fn testkit_path(args: &[String]) -> PathBuf {
    match crate::args::value_of(args, "--server") {
        Some(path) => PathBuf::from(path),
        None => match beside("mcp-testkit") {
            Ok(path) if path.is_file() => path,
            _ => mcp_testkit::binary_path(),
        },
    }
}

/// An HTTP server process (`mcp-testkit http`, or a fixed-reply answerer),
/// killed when dropped.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Starts `mcp-testkit http --port 0` with `extra` options and reads the
    /// URL it prints first (within 10 s).
    pub fn start(testkit: &Path, extra: &[&str]) -> Result<HttpServer, String> {
        let mut command = Command::new(testkit);
        command.args(["http", "--port", "0"]).args(extra);
        HttpServer::spawn(command)
    }

    /// Starts any server that prints `listening on URL` as its first line
    /// (the testkit, or a benchmark's own answerer).
    pub fn spawn(mut command: Command) -> Result<HttpServer, String> {
        let testkit = PathBuf::from(command.get_program());
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", testkit.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let mut reader = BufReader::new(stdout);
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            // Keep draining so the server never blocks on a full pipe.
            let mut sink = String::new();
            for _ in 0..10_000 {
                sink.clear();
                if reader.read_line(&mut sink).map_or(true, |n| n == 0) {
                    break;
                }
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        let url = line.trim().strip_prefix("listening on ").map(str::to_owned);
        match url {
            Some(url) => Ok(HttpServer { child, url }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("{} printed {line:?} instead of its URL", testkit.display()))
            }
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
