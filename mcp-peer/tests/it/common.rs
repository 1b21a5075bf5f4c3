//! What the tests share: a client and the testkit server joined in
//! memory (and a way to restart that server), options pinned to the
//! handshake era, a tool result's text, the stateless testkit and what
//! it received, a user who always answers "Ada", and the in-memory
//! transport wrapped to show an era key or keep its `Link`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_peer::memory::{self, MemorySender, MemoryTransport};
use mcp_peer::{Client, ClientOptions, EraChoice};
use mcp_proto::client::{BoxFuture, ElicitationHandler};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{CallToolResult, ElicitRequestParams, ElicitResult};
use mcp_testkit::{Config, Outgoing, ServeEra, Server};
use serde_json::Value;

/// A client and the testkit server joined in memory, with the number of
/// messages the server received.
pub(crate) struct Pair {
    pub(crate) client: Client<MemoryTransport>,
    pub(crate) received: Arc<AtomicUsize>,
    pub(crate) restart: Restart,
}

/// Restarts the in-memory server: a fresh testkit session, and the client
/// told its connection was lost (as when a child process dies).
pub(crate) struct Restart {
    server: Arc<std::sync::Mutex<Server>>,
    config: Config,
    sender: MemorySender,
}

impl Restart {
    pub(crate) fn now(&self) {
        let (fresh, queue) = Server::new(self.config.clone());
        *self.server.lock().unwrap() = fresh;
        forward(queue, self.sender.clone());
        self.sender.drop_connection();
    }
}

/// Sends what the server queues to the client.
pub(crate) fn forward(mut queue: mcp_testkit::OutgoingQueue, out: MemorySender) {
    tokio::spawn(async move {
        while let Some(item) = queue.recv().await {
            match item {
                Outgoing::Message { .. } | Outgoing::RawReply { .. } => {
                    let mut json = Vec::new();
                    if item.encode_into(&mut json).unwrap_or(false) {
                        out.send(&json);
                    }
                }
                Outgoing::RawLine(line) => {
                    out.send(&line);
                }
                Outgoing::Exit(_) => {
                    out.drop_connection();
                    return;
                }
                _ => {}
            }
        }
    });
}

pub(crate) fn pair(options: ClientOptions) -> Pair {
    pair_with(options, Config::default())
}

pub(crate) fn pair_with(options: ClientOptions, config: Config) -> Pair {
    pair_filtered(options, config, |_| true)
}

/// A pair whose server never sees the messages `keep` refuses (a server
/// that does not answer them).
pub(crate) fn pair_filtered(
    options: ClientOptions,
    config: Config,
    keep: impl Fn(&Value) -> bool + Send + 'static,
) -> Pair {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options);
    let sender = end.sender();
    let received = Arc::new(AtomicUsize::new(0));
    let (server, queue) = Server::new(config.clone());
    let server = Arc::new(std::sync::Mutex::new(server));
    let counter = received.clone();
    let current = server.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            counter.fetch_add(1, Ordering::SeqCst);
            if !serde_json::from_slice(&bytes).is_ok_and(|v| keep(&v)) {
                continue;
            }
            let server = current.lock().unwrap().clone();
            server.handle_json(&bytes);
        }
    });
    forward(queue, sender.clone());
    Pair { client, received, restart: Restart { server, config, sender } }
}

/// Options pinned to the handshake era: most tests here count the
/// messages of its exchanges. The era tests say what they choose.
pub(crate) fn options() -> ClientOptions {
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Legacy;
    o
}

pub(crate) fn text(result: &CallToolResult) -> String {
    mcp_proto::render_tool_result(result).text
}

pub(crate) fn modern_config(era: ServeEra) -> Config {
    Config { era, ..Config::default() }
}

/// What the stateless testkit received, oldest first.
pub(crate) async fn received_log(client: &Client<MemoryTransport>) -> Vec<Value> {
    let log = client.call_tool("received_log", ()).await.unwrap();
    serde_json::from_str(&text(&log)).unwrap()
}

/// What a scripted server received, in order.
pub(crate) type Seen = Arc<std::sync::Mutex<Vec<Value>>>;

/// A user who gives the name "Ada" to every form.
pub(crate) struct Ada;

impl ElicitationHandler for Ada {
    fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async { Ok(ElicitResult::accept([("name", "Ada")])) })
    }
}

/// The in-memory transport under an era key (as an HTTP origin is), or
/// keeping the client's `Link` for the test to look at.
pub(crate) struct Wrapped {
    pub(crate) transport: MemoryTransport,
    pub(crate) key: Option<&'static str>,
    pub(crate) link: Arc<std::sync::Mutex<Option<mcp_peer::Link>>>,
}

impl Wrapped {
    pub(crate) fn new(transport: MemoryTransport) -> Wrapped {
        Wrapped { transport, key: None, link: Arc::default() }
    }
}

impl mcp_peer::Transport for Wrapped {
    type Error = memory::MemoryError;

    fn attach(&self, link: mcp_peer::Link) {
        *self.link.lock().unwrap() = Some(link.clone());
        self.transport.attach(link)
    }

    async fn send_request(
        &self,
        r: mcp_peer::OutgoingRequest<'_>,
    ) -> Result<(), memory::MemoryError> {
        self.transport.send_request(r).await
    }

    async fn flush(&self) -> Result<(), memory::MemoryError> {
        self.transport.flush().await
    }

    async fn close(&self) -> Result<(), memory::MemoryError> {
        self.transport.close().await
    }

    fn client_error(&self, error: mcp_proto::client::ClientError) -> memory::MemoryError {
        self.transport.client_error(error)
    }

    fn era_cache_key(&self) -> Option<String> {
        self.key.map(str::to_owned)
    }
}
