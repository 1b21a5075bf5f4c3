//! The paths from our client to the server (direct, through a byte
//! relay, through a bridge) and the client connected through one.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_bench::ours::{self, Ours};
use mcp_client_stdio::mcp_peer::EraChoice;
use mcp_client_stdio::{ServerCommand, StdioOptions};
use mcp_http::HttpOptions;

/// How long a bridge's HTTP port may take to open.
const PORT_WAIT: Duration = Duration::from_secs(20);

/// How the client reaches the server: a command it spawns and speaks
/// stdio to, or a URL (of the server, or of a bridge it starts first).
#[derive(Clone)]
pub(crate) enum Reach {
    /// Spawn `program args` and speak stdio to it.
    Stdio { program: PathBuf, args: Vec<String> },
    /// Speak Streamable HTTP to this URL (a server already running).
    Url(String),
    /// Start `program args` (an HTTP-host bridge), learn its URL, then
    /// speak Streamable HTTP to it.
    HttpBridge { program: PathBuf, args: Vec<String>, url: BridgeUrl },
}

/// How an HTTP-host bridge's URL is learnt.
#[derive(Clone)]
pub(crate) enum BridgeUrl {
    /// From `mcpc: serving on URL` on its stderr.
    Stderr,
    /// A port chosen beforehand (given in its arguments), polled until open.
    Port(u16),
}

/// What stands between the client and the server on a path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Nothing: the client speaks to the server itself.
    Direct,
    /// A process that copies bytes both ways and parses nothing (the
    /// least any process in the middle can add).
    Floor,
    /// A bridge.
    Bridge,
}

/// One way to the server, as a row calls it.
#[derive(Clone)]
pub(crate) struct Route {
    pub(crate) label: &'static str,
    pub(crate) role: Role,
    pub(crate) reach: Reach,
}

impl Route {
    /// Whether a process stands between the client and the server.
    pub(crate) fn in_between(&self) -> bool {
        self.role != Role::Direct
    }

    /// Whether the path is a bridge compared with mcpc's.
    pub(crate) fn bridge(&self) -> bool {
        self.role == Role::Bridge
    }
}

/// A connected client, and the bridge process behind it when there is one.
pub(crate) struct Conn {
    pub(crate) client: Ours,
    /// The bridge process this side started (HTTP-host bridges).
    child: Option<Child>,
}

impl Conn {
    /// The bridge's process id: the process the client spawned (stdio
    /// host), or the one started for an HTTP host.
    pub(crate) fn bridge_pid(&self) -> Option<u32> {
        match (&self.child, &self.client) {
            (Some(child), _) => Some(child.id()),
            (None, Ours::Stdio(c)) => c.transport().pid(),
            (None, Ours::Http(_)) => None,
        }
    }

    /// Closes the client, then ends the bridge this side started.
    pub(crate) async fn close(mut self) {
        self.client.close().await;
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Connects our client through `path` (starting its bridge first when
/// it is an HTTP host).
pub(crate) async fn connect(path: &Route) -> Result<Conn, String> {
    let label = path.label;
    match &path.reach {
        Reach::Stdio { program, args } => {
            let command = ServerCommand::new(program.to_string_lossy().into_owned())
                .args(args.iter().cloned());
            let mut options = StdioOptions::new("bench");
            options.client.era = EraChoice::Legacy;
            options.discover_path = false;
            ours::reply_spin_from_env(&mut options);
            let client = ours::spawn_stdio(command, options, label).await?;
            Ok(Conn { client: Ours::Stdio(client), child: None })
        }
        Reach::Url(url) => Ok(Conn { client: http_client(label, url).await?, child: None }),
        Reach::HttpBridge { program, args, url } => {
            let mut command = Command::new(program);
            command.args(args).stdin(Stdio::null()).stdout(Stdio::null());
            let (child, url) = match url {
                BridgeUrl::Stderr => start_printing_url(command, label)?,
                BridgeUrl::Port(port) => {
                    let child = command
                        .stderr(Stdio::null())
                        .spawn()
                        .map_err(|e| format!("{label}: spawn: {e}"))?;
                    wait_for_port(*port).await.map_err(|e| format!("{label}: {e}"))?;
                    (child, format!("http://127.0.0.1:{port}/mcp"))
                }
            };
            match http_client(label, &url).await {
                Ok(client) => Ok(Conn { client, child: Some(child) }),
                Err(e) => {
                    kill(child);
                    Err(e)
                }
            }
        }
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

async fn http_client(label: &str, url: &str) -> Result<Ours, String> {
    let mut options = HttpOptions::new("bench");
    options.client.era = EraChoice::Legacy;
    Ok(Ours::Http(ours::connect_http(url, options, label).await?))
}

/// Starts `command` and reads its stderr until `serving on URL` (within
/// [`PORT_WAIT`]); the rest of its stderr is drained.
fn start_printing_url(mut command: Command, label: &str) -> Result<(Child, String), String> {
    let mut child =
        command.stderr(Stdio::piped()).spawn().map_err(|e| format!("{label}: spawn: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        let mut sent = false;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_or(true, |n| n == 0) {
                break;
            }
            if !sent && let Some(at) = line.find("serving on ") {
                let _ = tx.send(line[at + "serving on ".len()..].trim().to_owned());
                sent = true;
            }
        }
    });
    match rx.recv_timeout(PORT_WAIT) {
        Ok(url) => Ok((child, url)),
        Err(_) => {
            kill(child);
            Err(format!("{label}: printed no `serving on URL` within {PORT_WAIT:?}"))
        }
    }
}

/// A loopback port free right now (bound, then let go).
pub(crate) fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("local_addr: {e}"))
}

async fn wait_for_port(port: u16) -> Result<(), String> {
    let deadline = Instant::now() + PORT_WAIT;
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("port {port} did not open within {PORT_WAIT:?}"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
