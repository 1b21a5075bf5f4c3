//! `cargo xtask bench [all|stdio|http|startup|fleet|memory|weight|sse|bridge|sdks]... [--quick]`:
//! builds `mcp-bench`, the `mcp-testkit` server and `mcpc`, runs the
//! side-by-side benchmarks (ours, rmcp, the raw limit; for `bridge`,
//! `mcpc serve` against the pinned Node bridges of `xtask/bench/bridge/`,
//! installed into `.tools/bridge/`; for `sdks`, the TypeScript SDK v2 and
//! Python SDK clients, driven by the scripts of `xtask/bench/sdks/` and
//! installed by the interop step's installers) and writes two blocks of
//! `BENCHMARKS.md` per measure (see `benchdoc`): its summary table at the top
//! of the file and its full tables further down, each with the date, the
//! machine's 1-minute load at the start and at the end of the measure, the
//! toolchain and the versions compared. The rest of the file is left as it
//! was.
//!
//! `--quick` is the CI smoke: a dev-profile build (what the test step has
//! already compiled), a few iterations of each measure, the dependency
//! counts without the clean builds, and both blocks written to
//! `target/bench-quick/<measure>.md` instead of `BENCHMARKS.md` (quick
//! numbers are not results). `--summaries-only` measures nothing: it makes
//! the summary blocks again from the full tables already in the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::benchdoc;
use crate::steps::{self, Step};

const USAGE: &str = "usage: cargo xtask bench [all|stdio|http|startup|fleet|memory|weight|sse|bridge|sdks]... \
                     [--quick] [--no-build] [--summaries-only] [--no-node]";

const TITLE: &str = "# Benchmarks\n\nWritten by `cargo xtask bench <measure>...`.\n";

/// The measures, in the order `all` runs them.
const MEASURES: [&str; 9] =
    ["stdio", "http", "startup", "fleet", "memory", "weight", "sse", "bridge", "sdks"];

/// `cargo xtask soak [--quick] [--calls N]`: the `soak` binary of
/// `mcp-bench` (release build; `--quick`: the dev build and 2,000 calls
/// per run) over stdio and HTTP in both eras, with a server restart half
/// way; fails when descriptors, tasks or (full runs) RSS do not come back.
///
/// `cargo xtask soak bridge [--quick] [--minutes N]`: 64 calls in flight
/// through `mcpc serve` for N minutes (10 by default; `--quick`: 20 s),
/// failing when the bridge's RSS drifts more than 1 MiB after the warm-up
/// or its descriptors or threads grow.
pub(crate) fn soak_command(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "bridge") {
        return soak_bridge(args, quick);
    }
    let bins = build(quick, true)?;
    let mut extra: Vec<&str> = Vec::new();
    if let Some(i) = args.iter().position(|a| a == "--calls") {
        extra.push("--calls");
        extra.push(args.get(i + 1).ok_or("--calls needs a number")?);
    }
    let table = bins.run("soak", &extra, quick)?;
    println!("{table}");
    Ok(())
}

/// `cargo xtask soak bridge`: `bridge-bench soak` for the minutes asked.
fn soak_bridge(args: &[String], quick: bool) -> Result<(), String> {
    let seconds = match args.iter().position(|a| a == "--minutes") {
        Some(i) => {
            let minutes = args.get(i + 1).ok_or("--minutes needs a number")?;
            let minutes: f64 = minutes
                .parse()
                .map_err(|_| format!("--minutes takes a number, not {minutes:?}"))?;
            Some(((minutes * 60.0).round() as u64).max(10))
        }
        None => (!quick).then_some(600),
    };
    let bins = build(quick, true)?;
    let seconds = seconds.map(|s| s.to_string());
    // The soak runs `mcpc serve` alone: no Node bridge to install.
    let mut extra = vec!["--no-node".to_owned(), "soak".to_owned()];
    if let Some(s) = &seconds {
        extra.extend(["--seconds".to_owned(), s.clone()]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let table = bins.run("bridge-bench", &extra, quick)?;
    println!("{table}");
    Ok(())
}

/// The CI smoke of the soak: every run in quick mode, and the bridge's
/// for 20 seconds.
pub(crate) fn soak_smoke_steps() -> Vec<Step> {
    vec![
        Step::new("soak smoke", || soak_command(&["--quick".to_owned()])),
        Step::new("soak bridge smoke", || {
            soak_command(&["bridge".to_owned(), "--quick".to_owned()])
        }),
    ]
}

/// Where the pinned Node bridges (`xtask/bench/bridge/`) are, installed
/// into `.tools/bridge/`, and the Node.js they run on.
struct BridgeTools {
    dir: PathBuf,
    node: PathBuf,
}

impl BridgeTools {
    /// `--node NODE --bridges DIR --mcpc MCPC` for `bridge-bench`.
    fn args(&self) -> Vec<String> {
        let mut out = vec!["--node".to_owned(), self.node.display().to_string()];
        out.extend(["--bridges".to_owned(), self.dir.display().to_string()]);
        out
    }
}

/// Installs the pinned bridges (`npm ci`, skipped when the installed lock
/// is the pinned one).
fn bridge_tools() -> Result<BridgeTools, String> {
    let root = steps::root();
    let dir = root.join(".tools").join("bridge");
    let node = dir.join("node_modules").join(".bin").join("node");
    let installed = || {
        node.exists()
            && ["mcp-remote/dist/proxy.js", "supergateway/dist/index.js"]
                .iter()
                .all(|f| dir.join("node_modules").join(f).is_file())
    };
    steps::npm_ci_pinned(&root.join("xtask").join("bench").join("bridge"), &dir, installed)?;
    Ok(BridgeTools { dir, node })
}

/// The exact versions `xtask/bench/bridge/package.json` pins, as
/// `name version` words.
fn bridge_versions() -> String {
    let path = steps::root().join("xtask").join("bench").join("bridge").join("package.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    ["mcp-remote", "supergateway", "node"]
        .iter()
        .map(|name| {
            let needle = format!("\"{name}\": \"");
            let version = text
                .find(&needle)
                .and_then(|at| {
                    let rest = &text[at + needle.len()..];
                    rest.find('"').map(|end| rest[..end].to_owned())
                })
                .unwrap_or_else(|| "?".to_owned());
            let name = if *name == "node" { "Node.js" } else { name };
            format!("{name} {version}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The CI smoke: every measure in quick mode (tables to `target/`).
pub(crate) fn bench_smoke_steps() -> Vec<Step> {
    vec![Step::new("bench smoke", || bench_command(&["all".to_owned(), "--quick".to_owned()]))]
}

/// The measures named on the command line, in the order given, each once;
/// none or `all` is every measure.
fn chosen(args: &[String]) -> Result<Vec<&'static str>, String> {
    let mut out: Vec<&'static str> = Vec::new();
    for name in args.iter().filter(|a| !a.starts_with("--")) {
        if name == "all" {
            out.extend(MEASURES.iter().filter(|m| !out.contains(m)).collect::<Vec<_>>());
            continue;
        }
        let Some(m) = MEASURES.iter().find(|m| *m == name) else {
            return Err(format!("unknown measure {name:?}\n{USAGE}"));
        };
        if !out.contains(m) {
            out.push(m);
        }
    }
    if out.is_empty() {
        out = MEASURES.to_vec();
    }
    Ok(out)
}

/// `cargo xtask bench [name...] [--quick]` (`args` are the words after `bench`).
pub(crate) fn bench_command(args: &[String]) -> Result<(), String> {
    if let Some(unknown) = args.iter().find(|a| {
        a.starts_with("--")
            && !["--quick", "--no-build", "--summaries-only", "--no-node"].contains(&a.as_str())
    }) {
        return Err(format!("unknown option {unknown:?}\n{USAGE}"));
    }
    let quick = args.iter().any(|a| a == "--quick");
    // `--no-build`: use the binaries already built (while the workspace is
    // mid-edit elsewhere, say).
    let no_build = args.iter().any(|a| a == "--no-build");
    let chosen = chosen(args)?;
    if args.iter().any(|a| a == "--summaries-only") {
        return rewrite_summaries(&chosen);
    }
    let bins = build(quick, !no_build && chosen.iter().any(|m| *m != "weight"))?;
    for measure in chosen {
        let start = Instant::now();
        println!("xtask: bench {measure}{}", if quick { " --quick" } else { "" });
        let date = command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
        let load_start = load();
        let (title, body) = match measure {
            "stdio" => stdio(&bins, quick)?,
            "http" => http(&bins, quick)?,
            "startup" => startup(&bins, quick)?,
            "fleet" => fleet(&bins, quick)?,
            "memory" => memory(&bins, quick)?,
            "weight" => weight(quick)?,
            "bridge" => bridge(&bins, quick, args.iter().any(|a| a == "--no-node"))?,
            "sdks" => sdks(&bins, quick)?,
            _ => sse(&bins, quick)?,
        };
        let measured = measured(measure, &date, &load_start, &load(), quick);
        let details = format!("## {title}\n\n{measured}\n\n{}", body.trim_matches('\n'));
        record(measure, &details, quick)?;
        println!("xtask: bench {measure} took {:.1}s", start.elapsed().as_secs_f64());
    }
    Ok(())
}

/// The machine's 1-minute load average, as `/proc/loadavg` gives it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// How an idle CPU waits here (`/sys/devices/system/cpu/cpuidle`), when
/// the kernel says: it sets what waking a process on another, idle CPU
/// costs, which the unpinned rows pay on every round trip. In a VM whose
/// `haltpoll` driver does not poll (`guest_halt_poll_ns` 0), each such
/// wake-up is a halted virtual CPU's exit: tens of microseconds.
fn cpu_idle() -> Option<String> {
    let read = |path: &str| {
        std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
    };
    let driver = read("/sys/devices/system/cpu/cpuidle/current_driver")?;
    let poll = read("/sys/module/haltpoll/parameters/guest_halt_poll_ns");
    Some(match poll {
        Some(ns) if driver == "haltpoll" => {
            format!("idle driver `haltpoll`, guest halt polling up to {ns} ns")
        }
        _ => format!("idle driver `{driver}`"),
    })
}

/// The crates whose versions a measure's tables compare.
fn compared(measure: &str) -> &'static [&'static str] {
    match measure {
        "stdio" => &["mcp-client-stdio", "rmcp"],
        "http" => &["mcp-http", "rmcp", "reqwest", "hyper"],
        "startup" => &["mcp-client-stdio", "mcp-http", "rmcp"],
        "fleet" => &["mcp-host-registry", "mcp-client-stdio"],
        "memory" => &["mcp-http", "mcp-client-stdio", "rmcp"],
        "weight" => &["rmcp", "reqwest"],
        "bridge" => &["mcpc", "mcp-client-stdio", "mcp-http"],
        "sdks" => &["mcp-client-stdio", "mcp-http"],
        _ => &["mcp-sse", "sse-stream", "eventsource-stream"],
    }
}

/// The `Measured ...` line both blocks of a measure carry: when, under what
/// load (at the start and at the end of the measure), on what, with what.
fn measured(measure: &str, date: &str, load_start: &str, load_end: &str, quick: bool) -> String {
    let lock = std::fs::read_to_string(steps::root().join("Cargo.lock")).unwrap_or_default();
    let versions: Vec<String> = compared(measure)
        .iter()
        .map(|c| format!("{c} {}", locked_version(&lock, c).unwrap_or_else(|| "?".to_owned())))
        .collect();
    format!(
        "Measured {date} with `cargo xtask bench {measure}{quick}`; 1-minute load (`/proc/loadavg`) \
         {load_start} at the start, {load_end} at the end; {cpu}, {nproc} CPUs shared with other work{idle}; \
         {rustc}, {profile}; {versions}.",
        quick = if quick { " --quick" } else { "" },
        cpu = cpu_model(),
        nproc = command_output("nproc", &[]),
        idle = cpu_idle().map(|idle| format!(" ({idle})")).unwrap_or_default(),
        rustc = command_output("rustc", &["--version"]),
        profile = if quick { "dev profile (not results)" } else { "release profile" },
        versions = versions.join(", "),
    )
}

/// `--summaries-only`: each chosen measure's summary block made again from
/// the full tables block in `BENCHMARKS.md`.
fn rewrite_summaries(chosen: &[&str]) -> Result<(), String> {
    let path = steps::root().join("BENCHMARKS.md");
    let mut doc = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    for measure in chosen {
        let Some(details) = benchdoc::block(&doc, measure, true) else {
            println!(
                "xtask: no full tables for {measure} in BENCHMARKS.md; its summary is left as it is"
            );
            continue;
        };
        let summary = benchdoc::summary_block(measure, details);
        doc = benchdoc::replace_block(&doc, measure, false, &summary)?;
    }
    std::fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Where the built binaries are.
struct Bins {
    dir: PathBuf,
}

impl Bins {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }

    /// Runs `bin args...` (with `--server <testkit>`, `--quick`; and
    /// `--mcpc <mcpc>` for `bridge-bench`); its stdout.
    fn run(&self, bin: &str, args: &[&str], quick: bool) -> Result<String, String> {
        let path = self.path(bin);
        let mut cmd = Command::new(&path);
        cmd.current_dir(steps::root()).args(args).stderr(Stdio::inherit());
        if bin != "sse-bench" {
            cmd.arg("--server").arg(self.path("mcp-testkit"));
        }
        if bin == "bridge-bench" {
            cmd.arg("--mcpc").arg(self.path("mcpc"));
        }
        if quick {
            cmd.arg("--quick");
        }
        let out = cmd.output().map_err(|e| format!("could not start {}: {e}", path.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} {} exited with {}",
                path.display(),
                args.join(" "),
                out.status
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// Builds `mcp-bench` and `mcp-testkit`: release for real numbers, the dev
/// profile for the smoke.
fn build(quick: bool, needed: bool) -> Result<Bins, String> {
    let root = steps::root();
    let profile = if quick { "debug" } else { "release" };
    if needed {
        let mut build = steps::cargo();
        build.args([
            "build",
            "--package",
            "mcp-bench",
            "--package",
            "mcp-testkit",
            "--package",
            "mcpc",
            "--bins",
        ]);
        if !quick {
            build.arg("--release");
        }
        steps::run(build)?;
    }
    Ok(Bins { dir: target_dir(&root).join(profile) })
}

/// The protocol eras the round-trip measures run in: the handshake era
/// (`initialize`, 2025-11-25) and the stateless era (2026-07-28); every
/// contender is pinned to the era of its run.
const ERAS: [(&str, &str); 2] =
    [("legacy", "handshake era (2025-11-25)"), ("modern", "stateless era (2026-07-28)")];

/// `bin seq` and `bin throughput` in each era, as subsections.
fn round_trips(bins: &Bins, bin: &str, seq_title: &str, quick: bool) -> Result<String, String> {
    let mut out = String::new();
    for (era, title) in ERAS {
        let seq = bins.run(bin, &["seq", "--era", era], quick)?;
        out.push_str(&format!("### {seq_title}: {title}\n\n{seq}\n"));
    }
    for (i, (era, title)) in ERAS.iter().enumerate() {
        let thr = bins.run(bin, &["throughput", "--era", era], quick)?;
        let gap = if i + 1 < ERAS.len() { "\n" } else { "" };
        out.push_str(&format!("### Throughput: {title}\n\n{thr}{gap}"));
    }
    Ok(out)
}

/// A measure's title and tables.
type Section = (String, String);

fn stdio(bins: &Bins, quick: bool) -> Result<Section, String> {
    let body = round_trips(bins, "stdio-bench", "Sequential latency and client CPU", quick)?;
    Ok(("stdio: `tools/call echo` (`cargo xtask bench stdio`)".to_owned(), body))
}

fn http(bins: &Bins, quick: bool) -> Result<Section, String> {
    let body =
        round_trips(bins, "http-bench", "Sequential latency and client CPU (keep-alive)", quick)?;
    Ok(("Streamable HTTP: `tools/call echo` (`cargo xtask bench http`)".to_owned(), body))
}

fn startup(bins: &Bins, quick: bool) -> Result<Section, String> {
    let stdio = bins.run("stdio-bench", &["startup"], quick)?;
    let http = bins.run("http-bench", &["startup"], quick)?;
    let passes = if quick { 2 } else { 100 };
    Ok((
        "Connection start-up (`cargo xtask bench startup`)".to_owned(),
        format!(
            "{stdio}\n{http}\n\
             Median time from nothing to a session ready for requests: after `initialize` in the handshake era, after `server/discover` in the stateless era \
             ({passes} starts per client, interleaved: in each of {passes} passes every client starts once, in an order shuffled afresh for each pass \
             (a fixed seed), so that none is always timed just after the same other one, or always first; one warm-up start each before; unpinned); closing is not timed.\n"
        ),
    ))
}

/// Many stdio servers started at once through the registry, against the
/// slowest single start (`fleet-bench`).
fn fleet(bins: &Bins, quick: bool) -> Result<Section, String> {
    let table = bins.run("fleet-bench", &[], quick)?;
    Ok((
        "Start-up at scale: 50 stdio servers at once (`cargo xtask bench fleet`)".to_owned(),
        table,
    ))
}

fn memory(bins: &Bins, quick: bool) -> Result<Section, String> {
    let http = bins.run("http-bench", &["memory"], quick)?;
    let stdio = bins.run("stdio-bench", &["memory"], quick)?;
    Ok((
        "Memory (`cargo xtask bench memory`)".to_owned(),
        format!("### Idle HTTP sessions\n\n{http}\n### stdio clients\n\n{stdio}"),
    ))
}

/// `mcpc serve` against `mcp-remote` and `supergateway`, and direct:
/// added latency per call, start-up, idle RSS (`bridge-bench`); with
/// `no_node`, `mcpc serve`, the byte relay and direct only (nothing
/// installed).
fn bridge(bins: &Bins, quick: bool, no_node: bool) -> Result<Section, String> {
    let args = match no_node {
        true => vec!["--no-node".to_owned()],
        false => bridge_tools()?.args(),
    };
    let run = |what: &str| {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push(what);
        bins.run("bridge-bench", &a, quick)
    };
    let latency = run("latency")?;
    let startup = run("startup")?;
    let compared = match no_node {
        true => "`mcpc serve` alone: this run left the Node bridges out (`--no-node`)".to_owned(),
        false => format!(
            "`mcpc serve` and the pinned Node bridges of `xtask/bench/bridge/package.json` ({})",
            bridge_versions()
        ),
    };
    Ok((
        "Bridges: `mcpc serve` against mcp-remote and supergateway (`cargo xtask bench bridge`)"
            .to_owned(),
        format!(
            "Compared: {compared}. \
             Goals: a Node bridge adds at least 5x the latency `mcpc serve` adds; `mcpc serve` stdio to stdio \
             at most 1.3x the direct round trip.\n\n{latency}\n### Start-up and idle memory\n\n{startup}"
        ),
    ))
}

/// Ours against the TypeScript SDK v2 client (on the pinned Node.js 22 of
/// `xtask/bench/bridge/`) and the Python SDK client (`sdk-bench`), each
/// installed by the interop step's installers (nothing is installed again
/// when the pinned versions are there).
fn sdks(bins: &Bins, quick: bool) -> Result<Section, String> {
    crate::interop::install()?;
    crate::interop_hosts::install_python()?;
    let node = bridge_tools()?.node;
    let root = steps::root();
    let scripts = root.join("xtask").join("bench").join("sdks");
    // The TypeScript script imports the SDK and `ts-common.mjs`: it runs
    // from beside the installed packages, as the interop host scripts do.
    let ts_script = crate::interop::ts_host_js().with_file_name("bench-ts-client.mjs");
    std::fs::copy(scripts.join("ts-client.mjs"), &ts_script)
        .map_err(|e| format!("copying ts-client.mjs: {e}"))?;
    let args = [
        "--node".to_owned(),
        node.display().to_string(),
        "--ts-script".to_owned(),
        ts_script.display().to_string(),
        "--python".to_owned(),
        crate::interop_hosts::python().display().to_string(),
        "--py-script".to_owned(),
        scripts.join("py_client.py").display().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let table = bins.run("sdk-bench", &args, quick)?;
    Ok((
        "The SDK clients most hosts use: TypeScript and Python (`cargo xtask bench sdks`)"
            .to_owned(),
        format!(
            "Compared: ours (`mcp-client-stdio`, `mcp-http`) and the pinned SDK clients ({}). \
             Goal: ours at least 3x either SDK in every row; a row under that is explained in the note.\n\n{table}",
            sdk_versions()
        ),
    ))
}

/// The SDK versions the interop step pins, as `name version` words.
fn sdk_versions() -> String {
    let dir = steps::root().join("xtask").join("interop");
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    let (package, requirements) = (read("package.json"), read("requirements.txt"));
    let needle = "\"@modelcontextprotocol/client\": \"";
    let ts = package
        .find(needle)
        .and_then(|at| package[at + needle.len()..].split('"').next())
        .unwrap_or("?");
    let py = requirements.lines().find_map(|l| l.trim().strip_prefix("mcp==")).unwrap_or("?");
    let node = std::fs::read_to_string(
        steps::root().join("xtask").join("bench").join("bridge").join("package.json"),
    )
    .ok()
    .and_then(|t| {
        let at = t.find("\"node\": \"")? + 9;
        t[at..].split('"').next().map(str::to_owned)
    })
    .unwrap_or_else(|| "?".to_owned());
    format!("`@modelcontextprotocol/client` {ts} on Node.js {node}; PyPI `mcp` {py}")
}

fn sse(bins: &Bins, quick: bool) -> Result<Section, String> {
    let table = bins.run("sse-bench", &[], quick)?;
    Ok((
        "SSE decoding (`cargo xtask bench sse`)".to_owned(),
        format!(
            "Compared: mcp-sse (owned items, and borrowed ones with `decode_with`), sse-stream (what rmcp uses), \
             eventsource-stream; all fed the same in-memory chunks. Goals: (a) at least 3x sse-stream and 2x \
             eventsource-stream; (b) at least 1 GB/s.\n\n{table}\n"
        ),
    ))
}

/// Writes a measure's two blocks (its summary, made from `details`, and
/// `details`, its full tables) into `BENCHMARKS.md`, or in quick mode both
/// into `target/bench-quick/<measure>.md`.
fn record(measure: &str, details: &str, quick: bool) -> Result<(), String> {
    let root = steps::root();
    let summary = benchdoc::summary_block(measure, details);
    println!("{summary}\n\n{details}");
    if quick {
        let dir = target_dir(&root).join("bench-quick");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(format!("{measure}.md"));
        std::fs::write(&path, format!("{summary}\n\n{details}\n"))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("xtask: quick mode: wrote {} (BENCHMARKS.md untouched)", path.display());
        return Ok(());
    }
    let path = root.join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| TITLE.to_owned());
    let new = benchdoc::replace_block(&old, measure, false, &summary)?;
    let new = benchdoc::replace_block(&new, measure, true, details)?;
    std::fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("xtask: wrote the {measure} blocks of {}", path.display());
    Ok(())
}

/// One scratch crate of the weight measure.
struct Scratch {
    /// Its folder under `target/weight/`.
    name: &'static str,
    /// What the table calls it.
    label: String,
    /// Its `[dependencies]` lines.
    deps: String,
    /// Whether to time a clean release build of it.
    timed: bool,
    /// Whether to start from the workspace's Cargo.lock (same versions).
    workspace_lock: bool,
}

/// Dependency weight: distinct crates (`cargo tree -e normal`, unique
/// package names, the scratch crate itself not counted) and, in full mode,
/// the clean release build time of each timed scratch crate, one at a time.
fn weight(quick: bool) -> Result<Section, String> {
    let root = steps::root();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let rmcp = locked_version(&lock, "rmcp").ok_or("rmcp is not in Cargo.lock")?;
    let path_of = |c: &str| root.join(c).display().to_string().replace('\\', "/");
    let have_auth = root.join("mcp-auth").join("Cargo.toml").is_file();
    let rmcp_features = "\"client\", \"transport-streamable-http-client-reqwest\", \"auth\"";
    let mut ours_deps = format!("mcp-http = {{ path = \"{}\" }}\n", path_of("mcp-http"));
    if have_auth {
        ours_deps.push_str(&format!("mcp-auth = {{ path = \"{}\" }}\n", path_of("mcp-auth")));
    }
    let ours_label = if have_auth {
        "ours: `mcp-http` + `mcp-auth` (default features: rustls TLS, proxy)".to_owned()
    } else {
        "ours: `mcp-http` alone (`mcp-auth` is not in the workspace yet; default features)"
            .to_owned()
    };
    let scratches = [
        Scratch {
            name: "ours-http-oauth",
            label: ours_label,
            deps: ours_deps.clone(),
            timed: true,
            workspace_lock: true,
        },
        Scratch {
            name: "ours-http-oauth-lean",
            label: "ours, `mcp-http` without default features (no proxy) + `mcp-auth`".to_owned(),
            deps: ours_deps.replacen("\" }\n", "\", default-features = false }\n", 1),
            timed: false,
            workspace_lock: true,
        },
        Scratch {
            name: "ours-http-oauth-h2",
            label: "ours, `mcp-http` with its optional `http2` feature + `mcp-auth`".to_owned(),
            deps: ours_deps.replacen("\" }\n", "\", features = [\"http2\"] }\n", 1),
            timed: false,
            workspace_lock: true,
        },
        Scratch {
            name: "rmcp-http-oauth",
            label: format!(
                "rmcp {rmcp}: `client`, `transport-streamable-http-client-reqwest`, `auth` (no TLS)"
            ),
            deps: format!(
                "rmcp = {{ version = \"={rmcp}\", default-features = false, features = [{rmcp_features}] }}\n"
            ),
            timed: true,
            workspace_lock: false,
        },
        Scratch {
            name: "rmcp-http-oauth-tls",
            label: format!("rmcp {rmcp}: the same + `reqwest` (rustls TLS, as ours has)"),
            deps: format!(
                "rmcp = {{ version = \"={rmcp}\", default-features = false, features = [{rmcp_features}, \"reqwest\"] }}\n"
            ),
            timed: false,
            workspace_lock: false,
        },
    ];
    let base = target_dir(&root).join("weight");
    let mut rows = Vec::new();
    let mut counts = Vec::new();
    let mut times = Vec::new();
    for s in &scratches {
        let dir = base.join(s.name);
        write_scratch(&dir, s, &root)?;
        let count = count_crates(&dir)?;
        let time = if s.timed && !quick { Some(clean_build(&dir)?) } else { None };
        counts.push(count);
        times.push(time);
        rows.push(format!(
            "| {} | {count} | {} |\n",
            s.label,
            time.map_or("–".to_owned(), |t| format!("{t:.1} s"))
        ));
    }
    let ratio = |a: f64, b: f64| if b > 0.0 { format!("{:.2}x", a / b) } else { "–".to_owned() };
    let build_ratio = match (times[3], times[0]) {
        (Some(r), Some(o)) => ratio(r, o),
        _ => "– (quick mode: no builds)".to_owned(),
    };
    Ok((
        "Dependency weight (`cargo xtask bench weight`)".to_owned(),
        format!(
            "| build | crates (`cargo tree -e normal`, unique names) | clean release build |\n|---|---:|---:|\n{}\n\
         rmcp (no TLS) / ours: {} the crates, {build_ratio} the clean build time.\n\n\
         Each row is a scratch crate generated in `target/weight/<name>/` (never committed) that depends on the crates named; \
         the count is the distinct package names in `cargo tree -e normal` (the scratch crate not counted, the workspace crates counted). \
         Build: `cargo build --release` in an empty target directory, `CARGO_BUILD_JOBS=2`, one build at a time (the time includes downloading any crate not yet in the local cache). \
         Goal: ours at most 60 crates.\n",
            rows.concat(),
            ratio(counts[3] as f64, counts[0] as f64),
        ),
    ))
}

fn write_scratch(dir: &Path, s: &Scratch, root: &Path) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot write {}: {e}", dir.display());
    std::fs::create_dir_all(dir.join("src")).map_err(err)?;
    let manifest = format!(
        "# Generated by `cargo xtask bench weight`; not part of the workspace.\n\
         [package]\nname = \"weight-{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{}\n[workspace]\n",
        s.name, s.deps
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).map_err(err)?;
    std::fs::write(dir.join("src").join("lib.rs"), "//! Dependency-weight probe.\n")
        .map_err(err)?;
    if s.workspace_lock {
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).map_err(err)?;
    }
    Ok(())
}

fn count_crates(dir: &Path) -> Result<usize, String> {
    let mut cmd = steps::cargo();
    cmd.current_dir(dir).args(["tree", "-e", "normal", "--prefix", "none", "--format", "{p}"]);
    cmd.stderr(Stdio::inherit());
    let out = cmd.output().map_err(|e| format!("cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo tree in {} exited with {}", dir.display(), out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with("weight-"))
        .collect();
    names.sort_unstable();
    names.dedup();
    Ok(names.len())
}

/// A clean release build in the scratch crate's own target directory;
/// seconds.
fn clean_build(dir: &Path) -> Result<f64, String> {
    let target = dir.join("target");
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .map_err(|e| format!("cannot clean {}: {e}", target.display()))?;
    }
    let mut cmd = steps::cargo();
    cmd.current_dir(dir)
        .args(["build", "--release", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_BUILD_JOBS", "2");
    let start = Instant::now();
    steps::run(cmd)?;
    Ok(start.elapsed().as_secs_f64())
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(Into::into).unwrap_or_else(|| root.join("target"))
}

/// The version of `name` in a Cargo.lock.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let needle = format!("name = \"{name}\"\nversion = \"");
    let start = lock.find(&needle)? + needle.len();
    let len = lock[start..].find('"')?;
    Some(lock[start..start + len].to_owned())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_named_on_the_command_line() {
        let args = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        let cases: [(&str, Result<Vec<&str>, &str>); 6] = [
            ("", Ok(MEASURES.to_vec())),
            ("all --quick", Ok(MEASURES.to_vec())),
            ("stdio http startup memory", Ok(vec!["stdio", "http", "startup", "memory"])),
            ("memory stdio memory --no-build", Ok(vec!["memory", "stdio"])),
            (
                "sse all",
                Ok(vec![
                    "sse", "stdio", "http", "startup", "fleet", "memory", "weight", "bridge",
                    "sdks",
                ]),
            ),
            ("stdio disk", Err("unknown measure \"disk\"")),
        ];
        for (line, want) in cases {
            match (chosen(&args(line)), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{line}"),
                (Err(got), Err(want)) => assert!(got.starts_with(want), "{line}: {got}"),
                (got, want) => panic!("{line}: {got:?}, want {want:?}"),
            }
        }
    }
}
