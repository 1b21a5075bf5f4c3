//! `mcpc serve`: the servers served to a host that speaks MCP on this
//! process's stdin and stdout, in either protocol era.
//!
//! One file per job: `handler.rs` (the bridge's `Handler`: each request
//! forwarded through the registry; lists, reads, prompts), `calls.rs` (tool
//! calls and tasks), `routes.rs` (names and URIs to servers, and the
//! capabilities declared), `pump.rs` (the servers' notifications to the
//! host), `host.rs` (the servers' requests and call approvals to the host),
//! `input.rs` (a stateless-era host asked in `input_required` rounds),
//! `search.rs` (search mode's two tools), `tasks.rs` (tasks passed through:
//! ids across servers), `login.rs` (a login on an upstream 401),
//! `http.rs` (the hosts served over Streamable HTTP, each session its own).
//! This file picks the servers, connects them and drives one session on
//! stdio, or hands them to `http.rs`.

mod calls;
mod handler;
mod host;
mod http;
mod input;
mod login;
mod pump;
mod routes;
mod search;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use mcp_host_registry::shape::SchemaTarget;
use mcp_host_registry::{Registry, TransportConfig};
use mcp_server_io::stdio::{self, Ended, Input};
use mcp_server_io::{ServeEra, ServerInfo, Session, SessionOptions};
use serde_json::json;

use crate::cli::{Global, ToolsMode};
use crate::failure::{Failure, Kind, unknown_server};
use crate::setup::HostSide;

use self::host::HostLink;

pub(crate) use self::host::Hosts;
pub(crate) use self::http::HttpArgs;

/// The longest line read from the host (16 MiB).
const MAX_LINE: usize = 16 << 20;
/// How long the host may take to answer what it is asked (a person
/// filling in a form included).
const HOST_ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// Aborts a task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The host's side the registry is built with: the servers' requests and
/// call approvals go through `hosts` to the host they belong to.
pub(crate) fn host_side(hosts: &Arc<Hosts>) -> HostSide {
    HostSide {
        handlers: host::handlers(hosts),
        approver: Arc::new(host::HostApprover(hosts.clone())),
        stdio_reader_thread: false,
    }
}

/// The limits of `serve` given on the command line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Limits {
    /// `--max-in-flight`: the most requests a host session runs at once.
    pub(crate) max_in_flight: Option<u32>,
}

impl Limits {
    /// The options of a host session: both eras, the wait for the host's
    /// answers, and the cap on requests in flight.
    fn session_options(self) -> SessionOptions {
        let options = SessionOptions::new(ServeEra::Both).with_request_timeout(HOST_ANSWER_TIMEOUT);
        match self.max_in_flight {
            Some(max) => options.with_max_in_flight(max as usize),
            None => options,
        }
    }
}

/// What each host session's bridge is made of.
#[derive(Clone)]
struct Served {
    registry: Arc<Registry>,
    servers: Vec<String>,
    info: ServerInfo,
    capabilities: serde_json::Value,
    timeout: Option<Duration>,
    max_time: Duration,
    /// The logins tried so far (one per server per period, whichever
    /// session's call needed it).
    logins: Arc<login::Logins>,
    /// `--schema-for`.
    schemas: SchemaTarget,
    /// Whether the hosts see search mode's two tools.
    search: bool,
}

impl Served {
    /// A bridge for the host session of `link`.
    fn bridge(&self, link: Arc<HostLink>) -> handler::Bridge {
        handler::Bridge::new(
            self.registry.clone(),
            link,
            self.servers.clone(),
            self.info.clone(),
            self.capabilities.clone(),
            self.timeout,
            self.max_time,
        )
        .with_logins(self.logins.clone())
        .with_schemas(self.schemas)
        .with_search(self.search)
    }
}

/// How many of `servers` are spawned and spoken to over stdio.
fn stdio_servers(registry: &Registry, servers: &[String]) -> usize {
    let stdio = |name: &&String| {
        registry.get(name).is_some_and(|s| matches!(s.transport, TransportConfig::Stdio(_)))
    };
    servers.iter().filter(stdio).count()
}

/// Serves until the host closes stdin (over HTTP with `http`: until
/// interrupted): the servers of `only` (default: every one), connected
/// first; names unchanged for one server.
pub(crate) async fn serve(
    g: &Global,
    registry: Arc<Registry>,
    hosts: Arc<Hosts>,
    only: &[String],
    (tools, schemas): (ToolsMode, SchemaTarget),
    limits: Limits,
    http: Option<&HttpArgs>,
) -> Result<u8, Failure> {
    // Over HTTP, the address and the token are checked before anything
    // starts.
    let http = match http {
        Some(args) => Some(args.resolve()?),
        None => None,
    };
    let servers: Vec<String> = if only.is_empty() {
        registry.list().map(|s| s.name.clone()).collect()
    } else {
        for name in only {
            if registry.get(name).is_none() {
                return Err(
                    Failure::new(Kind::NotFound, unknown_server(&registry, name)).with_server(name)
                );
            }
        }
        let mut names: Vec<String> = Vec::with_capacity(only.len());
        for name in only {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    };
    if servers.is_empty() {
        return Err(Failure::new(Kind::Config, "no servers are configured"));
    }
    // Connected first: what is declared to the host is what they declared.
    let limit = Duration::from_secs_f64(g.connect_timeout);
    // A server that needs an OAuth login is logged in, then connected again.
    let logins = Arc::new(login::Logins::default());
    let connects = servers.iter().map(|server| {
        let registry = registry.clone();
        let logins = logins.clone();
        async move {
            let sent = std::time::Instant::now();
            match tokio::time::timeout(limit, registry.initialize(server)).await {
                Ok(Err(e)) if logins.after(&registry, server, &e, sent).await => {
                    tokio::time::timeout(limit, registry.initialize(server)).await
                }
                connected => connected,
            }
        }
    });
    let results = futures_util::future::join_all(connects).await;
    let mut declared = Vec::new();
    let mut first = None;
    for (server, result) in servers.iter().zip(results) {
        match result {
            Ok(Ok(init)) => {
                declared.push(serde_json::to_value(&init.capabilities).unwrap_or_default());
                first.get_or_insert(init);
            }
            Ok(Err(e)) if servers.len() == 1 => return Err(Failure::registry(&registry, e)),
            Err(_) if servers.len() == 1 => {
                return Err(Failure::new(
                    Kind::Timeout,
                    format!("MCP server {server:?} did not connect within {}s", g.connect_timeout),
                )
                .with_server(server));
            }
            Ok(Err(e)) => {
                tracing::warn!(%server, "not connected; served when it comes up: {}", Failure::registry(&registry, e).message);
            }
            Err(_) => tracing::warn!(%server, "did not connect in time; served when it comes up"),
        }
    }
    let info = match (servers.as_slice(), first) {
        ([_], Some(init)) => {
            let mut info = ServerInfo::new("mcpc", env!("CARGO_PKG_VERSION"));
            info.implementation = serde_json::to_value(&init.server_info)
                .unwrap_or_else(|_| json!({"name": "mcpc", "version": env!("CARGO_PKG_VERSION")}));
            info.instructions = init.instructions.clone();
            info
        }
        _ => ServerInfo::new("mcpc", env!("CARGO_PKG_VERSION")),
    };
    let served = Served {
        registry: registry.clone(),
        servers,
        info,
        capabilities: routes::capabilities(&declared),
        timeout: g.timeout.map(Duration::from_secs_f64),
        max_time: Duration::from_secs_f64(g.max_time),
        logins,
        schemas,
        search: false,
    };
    // Search mode or not, settled once (for `auto`, by the tools the
    // servers offer now) for every host session alike.
    let probe = served.bridge(Arc::new(HostLink::default()));
    probe.settle_tools(tools).await;
    let served = Served { search: probe.tools_fixed(), ..served };
    drop(probe);
    if let Some(http) = http {
        return http::serve(http, served, hosts).await;
    }
    let link = hosts.add();
    let (session, queue) = Session::new(served.bridge(link.clone()), limits.session_options());
    link.set(session.clone());
    let pump = pump::start(&registry, hosts.clone(), &served.servers);
    tracing::info!("serving on stdio");
    // A task of its own: each wake-up for the host's pipes then polls the
    // driver alone, not also what the caller waits on beside it (the
    // signals). A forwarded call's reply is written by the task or thread
    // that reads its answer (`serve_direct`). Aborted if this future is
    // dropped.
    //
    // In front of stdio servers only, the host's stdin is read on a thread
    // of its own that blocks in `read` and hands each line to the session
    // from there: a forwarded call is written to its server's stdin at
    // once, its answer written back by the thread that reads it (each
    // stdio server's stdout is read on a thread of its own for a host on
    // stdio: `HostSide::stdio_reader_thread`), and the runtime does
    // nothing for the call. An HTTP server's call cannot be sent from the
    // line: it would cost a wake-up of the runtime from that thread per
    // call, more than reading the host's stdin in this task. (With many
    // calls in flight at once the thread costs a little more per call:
    // it hands the lines over one at a time.)
    //
    // The host's other calls run beside the driver, in its task (no task
    // each, a reply written in the wake-up that ends its call), handed
    // over from the host's thread as from this task. Each is first polled
    // before the driver writes the answer to a later line (see
    // `run_requests_beside`): a call the host cancels once it has that
    // answer has started, as a task of its own would have, and its
    // server is told. In front of servers of both kinds they run as tasks
    // of their own, as before (not measured beside).
    let feed = session.clone();
    let runner = session.clone();
    let stdio = stdio_servers(&registry, &served.servers);
    let host_thread = stdio == served.servers.len();
    let beside = stdio == 0;
    let driver = tokio::spawn(async move {
        let on_input = move |input: Input<'_>| match input {
            Input::Line(line) => feed.handle_json(line),
            Input::Oversized { max_line_bytes } => feed.reject_oversized(max_line_bytes),
            _ => {}
        };
        if host_thread {
            let input = stdio::stdin_blocking();
            let serving =
                stdio::serve_direct_threaded(input, stdio::stdout(), MAX_LINE, queue, on_input);
            runner.run_requests_beside(serving).await
        } else {
            let serving =
                stdio::serve_direct(stdio::stdin(), stdio::stdout(), MAX_LINE, queue, on_input);
            if beside { runner.run_requests_beside(serving).await } else { serving.await }
        }
    });
    let mut driver = AbortOnDrop(driver);
    let ended = match (&mut driver.0).await {
        Ok(ended) => ended,
        Err(e) => Err(std::io::Error::other(format!("the stdio driver ended: {e}"))),
    };
    // The host is gone: its calls are cancelled (upstream too: each
    // dropped call sends `notifications/cancelled`).
    session.abort_all();
    pump.abort();
    hosts.remove(&link);
    match ended {
        Ok(Ended::InputClosed | Ended::CoreGone) | Ok(_) => Ok(0),
        Err(e) => Err(Failure::new(Kind::Connection, format!("the host's stdio failed: {e}"))),
    }
}
