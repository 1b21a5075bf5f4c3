//! What a transport implements ([`Transport`]), the handle it feeds what
//! arrives through ([`Link`]), and the object-safe form a host holds when it
//! mixes transports ([`DynTransport`]).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Weak};

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{BoxFuture, ClientError};
use mcp_proto::jsonrpc::{IncomingOf, Message, RequestId};
use mcp_proto::types::Tool;
use serde_json::Value;
use serde_json::value::RawValue;

/// A transport's error type: what a [`Client`](crate::Client) over it
/// returns.
///
/// Beyond being an error, it tells the session whether the server refused a
/// request because it no longer knows the session (so the session starts a
/// new one and sends the request again, once).
pub trait TransportError: std::error::Error + Send + Sync + 'static {
    /// The server said the session is gone and did not act on the request
    /// (Streamable HTTP: 404 to a request that carried `Mcp-Session-Id`).
    fn is_session_expired(&self) -> bool {
        false
    }

    /// The protocol error inside, when the error wraps one (the typed
    /// JSON-RPC errors of an HTTP error body, say): the era probe reads it
    /// to tell a stateless-era server's refusal from any other.
    fn protocol_error(&self) -> Option<&ClientError> {
        None
    }

    /// The server was reached and refused the request without a JSON-RPC
    /// answer the client understands (Streamable HTTP: 400, 404 or 405):
    /// for the era probe, the mark of a handshake-era server.
    fn is_refusal(&self) -> bool {
        false
    }

    /// The stream that was to carry the answer broke before it came
    /// (stateless era: the request is lost; the session sends it again
    /// with a new id when that is safe).
    fn is_stream_lost(&self) -> bool {
        false
    }
}

/// One request, encoded, for a transport to send.
#[derive(Debug)]
#[non_exhaustive]
pub struct OutgoingRequest<'a> {
    /// The request's id (its answer comes back through the [`Link`]).
    pub id: &'a RequestId,
    /// The method (`initialize` starts a session).
    pub method: &'a str,
    /// The whole JSON-RPC request as compact JSON text, without a line
    /// ending.
    pub body: Vec<u8>,
    /// The request's parameters as a value, when the transport asked for
    /// them ([`Transport::wants_params`]).
    pub params: Option<&'a Value>,
    /// For `tools/call` when the transport asked for the tool
    /// ([`Transport::wants_tool`]): the called tool's definition from the
    /// cached tool list, when the server lists it.
    pub tool: Option<&'a Tool>,
    /// The protocol version the request's `_meta` names, for a request of
    /// the stateless era (the era probe included); `None` in the handshake
    /// era, where the version is the negotiated one
    /// ([`Link::protocol_version`]). Over HTTP it is the
    /// `MCP-Protocol-Version` header.
    pub protocol_version: Option<ProtocolVersion>,
    /// Extra HTTP headers the caller or a middleware gave the request
    /// ([`RequestOptions::headers`](mcp_proto::client::RequestOptions::headers));
    /// a transport without headers ignores them.
    pub headers: &'a [(String, String)],
    /// How many requests of this client awaited their answers when this
    /// one was made, this one included (the core's count). A transport
    /// that gathers the writes of one scheduler turn into one waits for
    /// company only when this is more than one: a lone call is written at
    /// once.
    pub awaited: usize,
}

/// A transport: it moves messages between the [`Client`](crate::Client) and
/// one server, and decides nothing about the protocol.
///
/// The client calls [`attach`](Self::attach) once, before anything else,
/// with the [`Link`] through which the transport hands over every message
/// the server sends (answers, requests, notifications, in the order they
/// arrived). Sending is [`send_request`](Self::send_request) for requests
/// and [`flush`](Self::flush) for what the protocol core queued
/// (notifications, answers to the server's requests).
///
/// Implementations: `mcp-stdio` (a child's pipes), `mcp-http` (Streamable
/// HTTP and the 2024-11-05 HTTP+SSE transport), [`crate::memory`] (in
/// memory, for tests), and any transport a host brings.
pub trait Transport: Send + Sync + 'static {
    /// The transport's error.
    type Error: TransportError;

    /// Connects the transport to its client. Called once, before any other
    /// method.
    fn attach(&self, link: Link);

    /// Whether [`OutgoingRequest::params`] and [`OutgoingRequest::tool`]
    /// should be filled (a transport that derives headers from them);
    /// otherwise parameters are encoded straight into the body and never
    /// built as a value.
    fn wants_params(&self) -> bool {
        false
    }

    /// Whether [`OutgoingRequest::tool`] should be filled for a
    /// `tools/call` (the called tool's definition, listed once when the
    /// cache lacks it). A transport that reads what it needs of the
    /// parameters from [`OutgoingRequest::body`] asks for the tool alone,
    /// and the parameters are then never built as a value. By default,
    /// whatever [`wants_params`](Self::wants_params) says.
    fn wants_tool(&self) -> bool {
        self.wants_params()
    }

    /// Sends one request. Its answer comes back through the [`Link`]: the
    /// future may end as soon as the request is written (a pipe) or once the
    /// exchange that carries the answer is over (an HTTP POST and its reply
    /// stream). The client runs it under the request's deadline; an error
    /// fails the request with that error.
    fn send_request(
        &self,
        request: OutgoingRequest<'_>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Writes one request at once, with no future, when the transport can
    /// (a lone line that a pipe takes whole, say): `Ok` once it is
    /// written; else, nothing written, its body back, for
    /// [`send_request`](Self::send_request). A transport whose sending
    /// ends with the exchange (an HTTP POST) never writes here. By
    /// default, nothing is written here.
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>> {
        Err(request.body)
    }

    /// Sends, in order, every message the core queued
    /// ([`Link::poll_transmit`] until `None`).
    fn flush(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The handshake finished (`initialize` answered and
    /// `notifications/initialized` sent): a transport may open what it needs
    /// for server-initiated messages (Streamable HTTP's standalone GET
    /// stream). The default does nothing.
    fn initialized(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Ends the connection (idempotent). The client has already failed the
    /// requests still waiting.
    fn close(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Turns a protocol error into the transport's error, adding what only
    /// the transport knows (the server's name or endpoint, the exit status
    /// of a process that died, ...).
    fn client_error(&self, error: ClientError) -> Self::Error;

    /// Whether a request that was out when the connection was lost (the
    /// transport called [`Link::connection_lost`]) is sent again in a new
    /// connection when it is safe to
    /// ([`mcp_proto::methods::is_idempotent`]); the others fail with
    /// [`ClientError::ConnectionLost`]. `false` (the default): every such
    /// request fails with [`ClientError::Closed`].
    fn resends_after_loss(&self) -> bool {
        false
    }

    /// The key under which the server's era is remembered for the life of
    /// the process (Streamable HTTP: the endpoint's origin), or `None` to
    /// probe on every new connection (stdio: one process, one probe).
    fn era_cache_key(&self) -> Option<String> {
        None
    }
}

/// What a transport calls on the client it serves. Implemented by the
/// client's shared state; a transport sees only [`Link`].
pub(crate) trait LinkTarget: Send + Sync {
    fn feed(&self, incoming: IncomingOf<Box<RawValue>>);
    fn feed_usual_answer(&self, bytes: &[u8]) -> bool;
    fn answer_undecodable(&self, reply: mcp_proto::jsonrpc::ErrorResponse);
    fn poll_transmit(&self) -> Option<Message>;
    fn has_transmit(&self) -> bool;
    fn is_pending(&self, id: &RequestId) -> bool;
    fn awaits_answers(&self) -> bool;
    fn protocol_version(&self) -> Option<ProtocolVersion>;
    fn connection_lost(&self);
    fn is_closed(&self) -> bool;
    fn flush_soon(&self);
    fn fail_unreadable(&self, id: &RequestId, reason: &str) -> bool;
}

/// A transport's handle on its [`Client`](crate::Client): how what the
/// server sends gets in, and what the core queued gets out.
///
/// It holds the client weakly: once the last clone of the client is dropped,
/// [`is_alive`](Self::is_alive) is false and every method does nothing.
#[derive(Clone)]
pub struct Link {
    target: Weak<dyn LinkTarget>,
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link").field("alive", &self.is_alive()).finish()
    }
}

impl Link {
    pub(crate) fn new(target: Weak<dyn LinkTarget>) -> Link {
        Link { target }
    }

    /// A link to nothing (every call does nothing), until `attach`.
    pub fn detached() -> Link {
        Link { target: Weak::<Detached>::new() }
    }

    fn with<R>(&self, f: impl FnOnce(&dyn LinkTarget) -> R) -> Option<R> {
        self.target.upgrade().map(|t| f(&*t))
    }

    /// Whether the client still exists.
    pub fn is_alive(&self) -> bool {
        self.target.strong_count() > 0
    }

    /// Hands over what the server sent: one message or a batch, decoded
    /// with [`mcp_proto::jsonrpc::decode_slice_as`]. Answers reach their
    /// waiting requests, server requests go to the host's handlers,
    /// notifications to their listeners; anything the core wants to send in
    /// return is flushed by a task of its own (the caller may be a reader
    /// that must never wait on a write).
    pub fn feed(&self, incoming: IncomingOf<Box<RawValue>>) {
        self.with(|t| t.feed(incoming));
    }

    /// Decodes one message's JSON text (or a batch) and hands it over. A
    /// text that is not JSON-RPC is returned as the error for the transport
    /// to log with its context, and is otherwise dropped, except a request
    /// whose id cannot be read: it is answered `-32600` with a `null` id, as
    /// JSON-RPC asks ([`mcp_proto::jsonrpc::invalid_request_reply`]).
    ///
    /// The usual answer to a call that waits for a decoded result (and to
    /// the opening's requests) is decoded once, straight into that result
    /// (see
    /// [`feed_usual_answer`](Self::feed_usual_answer)).
    pub fn feed_slice(&self, bytes: &[u8]) -> Result<(), mcp_proto::jsonrpc::DecodeError> {
        let target = self.target.upgrade();
        if let Some(target) = &target
            && target.feed_usual_answer(bytes)
        {
            return Ok(());
        }
        match mcp_proto::jsonrpc::decode_slice_as::<Box<RawValue>>(bytes) {
            Ok(incoming) => {
                if let Some(target) = &target {
                    target.feed(incoming);
                }
                Ok(())
            }
            Err(e) => {
                if let (Some(target), Some(Message::Error(reply))) =
                    (&target, mcp_proto::jsonrpc::invalid_request_reply(bytes, &e))
                {
                    target.answer_undecodable(reply);
                }
                Err(e)
            }
        }
    }

    /// Hands over the usual answer
    /// ([`mcp_proto::jsonrpc::usual_answer`]) to a `tools/call` whose
    /// caller waits for its decoded result, or to the opening's era probe
    /// or `initialize`, decoding the result once, straight from `bytes`,
    /// into what reads it: `true` when it was taken
    /// (or answered a request that finished meanwhile, and was dropped).
    /// `false`, with nothing done, for anything else, which the transport
    /// then decodes and feeds as usual ([`feed_slice`](Self::feed_slice)
    /// does both); a result that does not decode so, or is not JSON, is
    /// among those, so the general decoding decides about it as about any
    /// message.
    pub fn feed_usual_answer(&self, bytes: &[u8]) -> bool {
        self.with(|t| t.feed_usual_answer(bytes)).unwrap_or(false)
    }

    /// The next message the core queued for sending, if any.
    pub fn poll_transmit(&self) -> Option<Message> {
        self.with(|t| t.poll_transmit()).flatten()
    }

    /// Whether the core queued anything for sending.
    pub fn has_transmit(&self) -> bool {
        self.with(|t| t.has_transmit()).unwrap_or(false)
    }

    /// Whether the request is still waiting for its answer.
    pub fn is_pending(&self, id: &RequestId) -> bool {
        self.with(|t| t.is_pending(id)).unwrap_or(false)
    }

    /// Whether any request waits for its answer (a transport may, for
    /// example, poll for the next message a little before it parks only
    /// while one does).
    pub fn awaits_answers(&self) -> bool {
        self.with(|t| t.awaits_answers()).unwrap_or(false)
    }

    /// The negotiated protocol version, once the handshake finished.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.with(|t| t.protocol_version()).flatten()
    }

    /// The connection (a child process, an HTTP session) is gone: every
    /// waiting request fails (or, with
    /// [`Transport::resends_after_loss`], is sent again when safe), and the
    /// next request starts a new handshake.
    pub fn connection_lost(&self) {
        self.with(|t| t.connection_lost());
    }

    /// Whether the client was closed.
    pub fn is_closed(&self) -> bool {
        self.with(|t| t.is_closed()).unwrap_or(true)
    }

    /// Asks the client to [`flush`](Transport::flush) soon, from a task of
    /// its own.
    pub fn flush_soon(&self) {
        self.with(|t| t.flush_soon());
    }

    /// The answer to request `id` arrived but had to be dropped (over a
    /// size limit, not valid JSON-RPC): the request fails at once with
    /// `ClientError::AnswerUnreadable` and `reason`, instead of waiting for
    /// its deadline. Returns whether a waiting request had that id.
    pub fn fail_unreadable(&self, id: &RequestId, reason: &str) -> bool {
        self.with(|t| t.fail_unreadable(id, reason)).unwrap_or(false)
    }

    /// [`fail_unreadable`](Self::fail_unreadable) for the response whose
    /// text begins with `text` (cut or broken), when its id can be read
    /// ([`mcp_proto::jsonrpc::response_id_of_prefix`]).
    pub fn fail_unreadable_text(&self, text: &[u8], reason: &str) -> bool {
        match mcp_proto::jsonrpc::response_id_of_prefix(text) {
            Some(id) => self.fail_unreadable(&id, reason),
            None => false,
        }
    }
}

/// [`Transport`] in object-safe form (boxed futures), for a client over
/// `Box<dyn DynTransport<E>>` that holds transports of different kinds.
/// Implemented for every `Transport` that is `Debug` and whose error
/// converts into `E`; implement `Transport` rather than this.
pub trait DynTransport<E>: Send + Sync + fmt::Debug + 'static {
    /// See [`Transport::attach`].
    fn attach(&self, link: Link);
    /// See [`Transport::wants_params`].
    fn wants_params(&self) -> bool;
    /// See [`Transport::wants_tool`].
    fn wants_tool(&self) -> bool;
    /// See [`Transport::send_request`].
    fn send_request<'a>(&'a self, request: OutgoingRequest<'a>) -> BoxFuture<'a, Result<(), E>>;
    /// See [`Transport::send_request_now`].
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>>;
    /// See [`Transport::flush`].
    fn flush(&self) -> BoxFuture<'_, Result<(), E>>;
    /// See [`Transport::initialized`].
    fn initialized(&self) -> BoxFuture<'_, ()>;
    /// See [`Transport::close`].
    fn close(&self) -> BoxFuture<'_, Result<(), E>>;
    /// See [`Transport::client_error`].
    fn client_error(&self, error: ClientError) -> E;
    /// See [`Transport::resends_after_loss`].
    fn resends_after_loss(&self) -> bool;
    /// See [`Transport::era_cache_key`].
    fn era_cache_key(&self) -> Option<String>;
    /// The transport itself, to reach what only its kind offers (downcast
    /// to the concrete type).
    fn as_any(&self) -> &dyn Any;
}

impl<T, E> DynTransport<E> for T
where
    T: Transport + fmt::Debug,
    E: From<T::Error> + Send + 'static,
{
    fn attach(&self, link: Link) {
        Transport::attach(self, link)
    }
    fn wants_params(&self) -> bool {
        Transport::wants_params(self)
    }
    fn wants_tool(&self) -> bool {
        Transport::wants_tool(self)
    }
    fn send_request<'a>(&'a self, request: OutgoingRequest<'a>) -> BoxFuture<'a, Result<(), E>> {
        Box::pin(async move { Transport::send_request(self, request).await.map_err(E::from) })
    }
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>> {
        Transport::send_request_now(self, request)
    }
    fn flush(&self) -> BoxFuture<'_, Result<(), E>> {
        Box::pin(async move { Transport::flush(self).await.map_err(E::from) })
    }
    fn initialized(&self) -> BoxFuture<'_, ()> {
        Box::pin(Transport::initialized(self))
    }
    fn close(&self) -> BoxFuture<'_, Result<(), E>> {
        Box::pin(async move { Transport::close(self).await.map_err(E::from) })
    }
    fn client_error(&self, error: ClientError) -> E {
        E::from(Transport::client_error(self, error))
    }
    fn resends_after_loss(&self) -> bool {
        Transport::resends_after_loss(self)
    }
    fn era_cache_key(&self) -> Option<String> {
        Transport::era_cache_key(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl<E: TransportError> Transport for Box<dyn DynTransport<E>> {
    type Error = E;

    fn attach(&self, link: Link) {
        (**self).attach(link)
    }
    fn wants_params(&self) -> bool {
        (**self).wants_params()
    }
    fn wants_tool(&self) -> bool {
        (**self).wants_tool()
    }
    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), E> {
        (**self).send_request(request).await
    }
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>> {
        (**self).send_request_now(request)
    }
    fn flush(&self) -> impl Future<Output = Result<(), E>> + Send {
        (**self).flush()
    }
    fn initialized(&self) -> impl Future<Output = ()> + Send {
        (**self).initialized()
    }
    fn close(&self) -> impl Future<Output = Result<(), E>> + Send {
        (**self).close()
    }
    fn client_error(&self, error: ClientError) -> E {
        (**self).client_error(error)
    }
    fn resends_after_loss(&self) -> bool {
        (**self).resends_after_loss()
    }
    fn era_cache_key(&self) -> Option<String> {
        (**self).era_cache_key()
    }
}

impl<T: Transport> Transport for Arc<T> {
    type Error = T::Error;

    fn attach(&self, link: Link) {
        (**self).attach(link)
    }
    fn wants_params(&self) -> bool {
        (**self).wants_params()
    }
    fn wants_tool(&self) -> bool {
        (**self).wants_tool()
    }
    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), T::Error> {
        (**self).send_request(request).await
    }
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>> {
        (**self).send_request_now(request)
    }
    fn flush(&self) -> impl Future<Output = Result<(), T::Error>> + Send {
        (**self).flush()
    }
    fn initialized(&self) -> impl Future<Output = ()> + Send {
        (**self).initialized()
    }
    fn close(&self) -> impl Future<Output = Result<(), T::Error>> + Send {
        (**self).close()
    }
    fn client_error(&self, error: ClientError) -> T::Error {
        (**self).client_error(error)
    }
    fn resends_after_loss(&self) -> bool {
        (**self).resends_after_loss()
    }
    fn era_cache_key(&self) -> Option<String> {
        (**self).era_cache_key()
    }
}

/// The target of a link that was never attached.
struct Detached;

impl LinkTarget for Detached {
    fn feed(&self, _: IncomingOf<Box<RawValue>>) {}
    fn feed_usual_answer(&self, _: &[u8]) -> bool {
        false
    }
    fn answer_undecodable(&self, _: mcp_proto::jsonrpc::ErrorResponse) {}
    fn poll_transmit(&self) -> Option<Message> {
        None
    }
    fn has_transmit(&self) -> bool {
        false
    }
    fn is_pending(&self, _: &RequestId) -> bool {
        false
    }
    fn awaits_answers(&self) -> bool {
        false
    }
    fn protocol_version(&self) -> Option<ProtocolVersion> {
        None
    }
    fn connection_lost(&self) {}
    fn is_closed(&self) -> bool {
        true
    }
    fn flush_soon(&self) {}
    fn fail_unreadable(&self, _: &RequestId, _: &str) -> bool {
        false
    }
}
