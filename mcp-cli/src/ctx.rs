//! What every command shares: the [`Ctx`] it is given (the command line's
//! global options and the registry), picking the server, connecting under
//! `--connect-timeout` (and showing the server's log messages), running an
//! operation on a connected server, the options of a request, `key=value`
//! words, and the server's notifications as one [`Feed`].

use std::time::{Duration, Instant};

use mcp_host_registry::mcp_peer::{Notifications, Subscription};
use mcp_host_registry::{DynTransport, Registry, ServerClient, TransportError};
use mcp_http::{EventStreamState, HttpTransport};
use mcp_proto::client::{RequestOptions, ServerNotification};
use mcp_proto::types::{LoggingLevel, SubscriptionFilter};
use serde_json::json;
use tokio::sync::watch;

use crate::cli::{Global, Output};
use crate::failure::{Failure, Kind, unknown_server};
use crate::output::{log_text, note, one_line};

/// What every command gets.
pub(crate) struct Ctx<'a> {
    pub(crate) g: &'a Global,
    pub(crate) registry: &'a Registry,
    /// Whether tool pins outlive this run (see `setup::Setup::pins_kept`).
    pub(crate) pins_kept: bool,
}

impl Ctx<'_> {
    /// How results are printed (`--output`).
    pub(crate) fn output(&self) -> Output {
        self.g.output
    }

    /// A registry error as a failure.
    pub(crate) fn fail(&self, e: mcp_host_registry::Error) -> Failure {
        Failure::registry(self.registry, e)
    }

    /// The named server, or the only one.
    pub(crate) fn pick(&self, name: Option<&str>) -> Result<String, Failure> {
        let names: Vec<&str> = self.registry.list().map(|s| s.name.as_str()).collect();
        match name {
            Some(name) if names.contains(&name) => Ok(name.to_owned()),
            Some(name) => Err(self.unknown(name)),
            None => match names.as_slice() {
                [only] => Ok((*only).to_owned()),
                [] => Err(Failure::new(Kind::Config, "no servers are configured")),
                _ => Err(Failure::usage(format!("name a SERVER: {}", names.join(", ")))),
            },
        }
    }

    /// No server has this name.
    pub(crate) fn unknown(&self, name: &str) -> Failure {
        Failure::new(Kind::NotFound, unknown_server(self.registry, name)).with_server(name)
    }

    /// `[SERVER] REST...`: the server when the first word names one, else
    /// the only server. `rest` is how many words follow the server at
    /// most: more words than that means the first must be a server.
    pub(crate) fn split<'w>(
        &self,
        words: &'w [String],
        rest: usize,
    ) -> Result<(String, &'w [String]), Failure> {
        match words {
            [first, tail @ ..] if self.registry.get(first).is_some() && !tail.is_empty() => {
                Ok((first.clone(), tail))
            }
            [first, ..] if words.len() > rest => Err(self.unknown(first)),
            _ => Ok((self.pick(None)?, words)),
        }
    }

    /// Connects to the server (spawn or connect, and the handshake) within
    /// `--connect-timeout`, and starts showing its log messages when
    /// `--log-level` asks for them. Gives the time it took.
    pub(crate) async fn connect(&self, server: &str) -> Result<Duration, Failure> {
        let start = Instant::now();
        let limit = Duration::from_secs_f64(self.g.connect_timeout);
        match tokio::time::timeout(limit, self.registry.initialize(server)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(self.fail(e)),
            Err(_) => {
                return Err(Failure::new(
                    Kind::Timeout,
                    format!(
                        "MCP server {server:?} did not connect within {}s (--connect-timeout)",
                        self.g.connect_timeout
                    ),
                )
                .with_server(server));
            }
        }
        let took = start.elapsed();
        if let Some(level) = self.g.log_level {
            self.show_logs(server, LoggingLevel::from(level.as_str())).await?;
        }
        Ok(took)
    }

    /// Asks the server for log messages at `level` and up (the handshake
    /// era's `logging/setLevel`; in the stateless era each request carries
    /// the level) and prints those that come on stderr.
    async fn show_logs(&self, server: &str, level: LoggingLevel) -> Result<(), Failure> {
        let name = server.to_owned();
        let output = self.output();
        let mut notifications = self
            .registry
            .with_client(server, |c| async move {
                let legacy = !c.protocol_version().is_some_and(|v| v.is_modern());
                let logs = c.server_capabilities().is_some_and(|caps| caps.logging.is_some());
                if legacy && logs {
                    c.set_log_level(level).await?;
                }
                Ok(c.notifications())
            })
            .await
            .map_err(|e| self.fail(e))?;
        tokio::spawn(async move {
            while let Some(n) = notifications.recv().await {
                if let ServerNotification::LogMessage(m) = n {
                    let line = match output {
                        Output::Json => json!({"server": name, "log": m}).to_string(),
                        Output::Text => format!("{name}: {}", one_line(&log_text(&m))),
                    };
                    note(&line);
                }
            }
        });
        Ok(())
    }

    /// Options of a request: `--timeout`, restarted by each progress
    /// notification up to `--max-time` in all; the stateless era's log level.
    pub(crate) fn request_options(&self) -> RequestOptions {
        let mut options = RequestOptions {
            timeout: self.g.timeout.map(Duration::from_secs_f64),
            reset_timeout_on_progress: true,
            max_total_timeout: Some(Duration::from_secs_f64(self.g.max_time)),
            ..Default::default()
        };
        if let Some(level) = self.g.log_level {
            let mut meta = serde_json::Map::new();
            meta.insert("io.modelcontextprotocol/logLevel".into(), json!(level.as_str()));
            options.meta = Some(meta);
        }
        options
    }

    /// Connects to the server (see [`Ctx::connect`]) and runs `op` on its
    /// client.
    pub(crate) async fn with_client<T, F, Fut>(&self, server: &str, op: F) -> Result<T, Failure>
    where
        F: FnOnce(ServerClient) -> Fut,
        Fut: Future<Output = Result<T, TransportError>>,
    {
        self.connect(server).await?;
        self.registry.with_client(server, op).await.map_err(|e| self.fail(e))
    }
}

/// `key=value` words as a map (no coercion yet).
pub(crate) fn pairs(words: &[String]) -> Result<Vec<(String, String)>, Failure> {
    words
        .iter()
        .map(|pair| {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(Failure::usage(format!("expected key=value, got {pair:?}")));
            };
            let key = key.trim();
            if key.is_empty() {
                return Err(Failure::usage(format!("the argument {pair:?} has no key")));
            }
            Ok((key.to_owned(), value.to_owned()))
        })
        .collect()
}

/// Where the notifications come from: the client's stream (the handshake
/// era; over HTTP with the state of the GET stream that carries them), or
/// an open `subscriptions/listen` (the stateless era).
pub(crate) enum Feed {
    Stream(Notifications, Option<watch::Receiver<EventStreamState>>),
    Listen(Subscription),
}

impl Feed {
    /// The notifications of a connected server: the list changes when
    /// `list_changes` says so, and the updates of the resources `uris`.
    /// In the stateless era a `subscriptions/listen` stream asks for
    /// exactly these; in the handshake era each resource is subscribed to
    /// and the client's stream gives everything the server sends.
    pub(crate) async fn open(
        c: ServerClient,
        uris: Vec<String>,
        list_changes: bool,
    ) -> Result<Feed, TransportError> {
        if c.protocol_version().is_some_and(|v| v.is_modern()) {
            let changes = list_changes.then_some(true);
            let filter = SubscriptionFilter {
                tools_list_changed: changes,
                prompts_list_changed: changes,
                resources_list_changed: changes,
                resource_subscriptions: (!uris.is_empty()).then_some(uris),
                ..Default::default()
            };
            return Ok(Feed::Listen(c.listen(filter).await?));
        }
        let notifications = c.notifications();
        for uri in &uris {
            c.subscribe_resource(uri).await?;
        }
        Ok(Feed::Stream(notifications, event_stream(&c)))
    }

    /// The next notification; `None` when no more can come.
    pub(crate) async fn recv(&mut self) -> Option<ServerNotification> {
        match self {
            Feed::Stream(n, None) => n.recv().await,
            Feed::Stream(n, Some(state)) => tokio::select! {
                biased;
                next = n.recv() => next,
                _ = state.wait_for(gone) => None,
            },
            Feed::Listen(s) => s.recv().await,
        }
    }

    /// The failure to report once [`recv`](Self::recv) gave `None`.
    pub(crate) fn ended(&self, server: &str) -> Failure {
        let reason = match self {
            Feed::Stream(_, Some(state)) => match &*state.borrow() {
                EventStreamState::Ended { reason } => Some(reason.clone()),
                EventStreamState::NotOffered => {
                    Some("the server offers none (it answers GET with 405)".to_owned())
                }
                _ => None,
            },
            Feed::Stream(_, None) => None,
            Feed::Listen(s) => s.end_reason(),
        };
        let message = match reason {
            Some(reason) => format!(
                "the notification stream of MCP server {server:?} ended, no more notifications \
                 can arrive: {reason}"
            ),
            None => format!("MCP server {server:?} closed the connection"),
        };
        Failure::new(Kind::Connection, message).with_server(server)
    }
}

/// The state of an HTTP server's standalone GET stream (none for stdio).
fn event_stream(c: &ServerClient) -> Option<watch::Receiver<EventStreamState>> {
    let transport: &dyn DynTransport<TransportError> = &**c.transport();
    transport.as_any().downcast_ref::<HttpTransport>().map(HttpTransport::watch_event_stream)
}

/// Whether no notification can come any more over that stream: it was
/// given up, or the server has none.
fn gone(state: &EventStreamState) -> bool {
    matches!(state, EventStreamState::Ended { .. } | EventStreamState::NotOffered)
}
