//! What every request to the endpoint is made from: the options, the
//! endpoint, the fixed headers and credentials, the connection pool, the
//! OAuth client and the client's [`Link`]; building a request from them;
//! mapping the client's errors.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use http_body_util::Full;
use mcp_peer::Link;
use mcp_proto::ProtocolVersion;
use mcp_proto::client::ClientError;

use crate::auth::{Secrets, StaticAuth};
use crate::conn::{self, Pool};
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::guard::Guard;
use crate::oauth::OAUTH_FETCH_TIMEOUT;
use crate::options::{HttpOptions, Settings};
use crate::wire::{ACCEPT_BOTH, PROTOCOL_VERSION, SESSION_ID};

use super::fetch::Fetcher;

/// Headers a request carries besides the fixed ones (`Mcp-Name`,
/// `Mcp-Param-*`).
pub(crate) type ExtraHeaders = Vec<(HeaderName, HeaderValue)>;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Entries a request adds to its copy of a fixed header table: the session
/// id, the protocol version, `Mcp-Method`, `Mcp-Name`, `Accept` (a GET's),
/// and hyper's `Content-Length`.
const REQUEST_ROOM: usize = 6;

/// A copy of `headers` with room for [`REQUEST_ROOM`] more entries.
///
/// A clone of a table keeps its entries in a vector of their exact length,
/// which every request then grew (one or two reallocations each); a table
/// made at its final size and filled holds the same entries, in the same
/// order, with none.
fn with_room(headers: &HeaderMap) -> HeaderMap {
    let mut h = HeaderMap::with_capacity(headers.len() + REQUEST_ROOM);
    // Every value of every name, in the table's order (a name's values
    // come together, first to last).
    for (name, value) in headers {
        h.append(name.clone(), value.clone());
    }
    h
}

/// The fixed tables of a transport: the plain one (the credentials'
/// headers, then `Host` when given) and the POST one (the plain one's
/// entries, then `Content-Type` and `Accept`); a request's copy gets its
/// room from [`with_room`].
///
/// Made straight at their final size (no table grown, cloned and dropped)
/// when no credential header has a name the tables set themselves;
/// otherwise by [`fixed_tables_general`], which replaces such a header as
/// `insert` does.
fn fixed_tables(
    credentials: Vec<(HeaderName, HeaderValue)>,
    host: Option<HeaderValue>,
) -> (HeaderMap, HeaderMap) {
    if credentials
        .iter()
        .any(|(name, _)| name == http::header::HOST || name == CONTENT_TYPE || name == ACCEPT)
    {
        return fixed_tables_general(credentials, host);
    }
    let plain_len = credentials.len() + usize::from(host.is_some());
    let mut plain = HeaderMap::with_capacity(plain_len);
    let mut post = HeaderMap::with_capacity(plain_len + 2);
    for (name, value) in credentials.into_iter().chain(host.map(|v| (http::header::HOST, v))) {
        post.append(name.clone(), value.clone());
        plain.append(name, value);
    }
    post.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    post.append(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
    (plain, post)
}

/// [`fixed_tables`] for any credentials: the plain table filled and
/// `Host` set unless a credential gave one, the POST table its copy with
/// `Content-Type` and `Accept` set (replacing a credential's).
fn fixed_tables_general(
    credentials: Vec<(HeaderName, HeaderValue)>,
    host: Option<HeaderValue>,
) -> (HeaderMap, HeaderMap) {
    let mut plain = HeaderMap::new();
    for (name, value) in credentials {
        plain.append(name, value);
    }
    if !plain.contains_key(http::header::HOST)
        && let Some(host) = host
    {
        plain.insert(http::header::HOST, host);
    }
    let mut post = plain.clone();
    post.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    post.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
    // A copy holds its entries in a vector of their own length: neither
    // table keeps room for entries for the life of the session. A GET
    // (rare: the standalone stream's opening, a resumption) adds its
    // `Accept` to its own copy of the plain one.
    (plain.clone(), post)
}

/// The endpoint and what every request to it is sent with, whichever
/// protocol variant the server speaks.
pub(crate) struct Http {
    pub(crate) options: Settings,
    pub(crate) endpoint: Endpoint,
    /// Content-Type, Accept (both) and the credentials.
    pub(crate) post_headers: HeaderMap,
    /// The credentials (and `Host`) alone: a DELETE's, and with its
    /// `Accept` a GET's.
    pub(crate) plain_headers: HeaderMap,
    pub(crate) secrets: Secrets,
    pub(crate) pool: Pool,
    /// The OAuth client, when the host configured OAuth.
    pub(crate) oauth: Option<Arc<mcp_auth::OAuthClient>>,
    /// Run-time headers, when the host gave a source.
    pub(crate) run_time_headers: Option<crate::header_source::HeaderCache>,
    pub(crate) link: OnceLock<Link>,
    /// Set once, when the client closes the transport.
    closed: AtomicBool,
}

/// What a request is sent with: the session id and the protocol version
/// its headers carry, and the epoch of the session it belongs to (which a
/// request never sends: a stream keeps it to know its session).
#[derive(Clone)]
pub(crate) struct Snapshot {
    pub(crate) session: Option<HeaderValue>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) epoch: u64,
}

impl Http {
    /// Checks the URL, the credentials and the TLS configuration, and
    /// prepares the connection pool (and the OAuth client's own, guarded).
    pub(crate) fn new(url: &str, options: &HttpOptions) -> Result<Http, Error> {
        // `unix:/path/to/socket#/path`: the socket, and an http URL for
        // the request path and Host header.
        let unix = crate::endpoint::unix_endpoint(url)
            .transpose()
            .map_err(|reason| Error::InvalidEndpoint { reason })?;
        let with_socket;
        let (url, options) = match unix {
            Some((socket, http_url)) => {
                let mut o = options.clone();
                o.unix_socket = Some(socket);
                with_socket = o;
                (std::borrow::Cow::Owned(http_url), &with_socket)
            }
            None => (std::borrow::Cow::Borrowed(url), options),
        };
        let url = url.as_ref();
        let mut endpoint =
            Endpoint::parse(url).map_err(|reason| Error::InvalidEndpoint { reason })?;
        if let Some(socket) = &options.unix_socket {
            endpoint.redacted = crate::endpoint::redact_socket(socket);
        }
        let mut auth = options.auth.to_parts().map_err(|reason| Error::InvalidAuth { reason })?;
        // What the URL itself carries (query values) is as secret as the
        // configured credentials.
        auth.secrets.add_url(url);
        if let Some((name, value)) = &auth.query {
            endpoint = endpoint
                .with_query_param(name, value)
                .map_err(|reason| Error::InvalidAuth { reason })?;
        }
        // `Host` made once here rather than by the pool for every request
        // (every request this transport builds goes to the endpoint's
        // origin; a `Host` among the credentials' headers stays).
        let host = if auth.headers.iter().any(|(name, _)| name == http::header::HOST) {
            None
        } else {
            conn::host_header(&endpoint.uri)
        };
        let (plain_headers, post_headers) = fixed_tables(auth.headers, host);
        // A socket is reached directly: no proxy.
        let proxy = match &options.unix_socket {
            Some(_) => None,
            None => conn::proxy_for(&options.proxy, &endpoint.uri)
                .map_err(|reason| Error::InvalidProxy { reason })?,
        };
        if proxy.is_some() {
            endpoint = endpoint.with_explicit_port();
        }
        let pool = match (&options.pool, &proxy, &options.unix_socket) {
            // A shared pool connects directly, over TCP.
            (Some(shared), None, None) => shared.pool.clone(),
            _ => conn::build_pool(options, proxy.as_ref(), None)
                .map_err(|reason| Error::Tls { reason })?,
        };
        let oauth = match &options.oauth {
            None => None,
            Some(_) if options.auth != StaticAuth::None => {
                return Err(Error::InvalidAuth {
                    reason: "static credentials and OAuth cannot be used together".into(),
                });
            }
            Some(o) => {
                // The OAuth requests get a pool of their own whose resolver
                // the SSRF guard checks (through a proxy, the proxy
                // resolves: the client's pool, literal addresses checked).
                let guard = Guard::new(o.address_policy, &endpoint.uri, proxy.is_some());
                let oauth_pool = match (&guard, &proxy) {
                    (Some(guard), None) => conn::build_pool(options, None, Some(guard))
                        .map_err(|reason| Error::Tls { reason })?,
                    // The authorization server is not behind the socket.
                    (None, None) if options.unix_socket.is_some() => {
                        let mut tcp = options.clone();
                        tcp.unix_socket = None;
                        conn::build_pool(&tcp, None, None)
                            .map_err(|reason| Error::Tls { reason })?
                    }
                    _ => pool.clone(),
                };
                let fetch =
                    Arc::new(Fetcher { pool: oauth_pool, timeout: OAUTH_FETCH_TIMEOUT, guard });
                let client = o
                    .build(url, fetch)
                    .map_err(|e| Error::InvalidAuth { reason: format!("OAuth: {e}") })?;
                Some(Arc::new(client))
            }
        };
        let run_time_headers =
            options.header_source.clone().map(crate::header_source::HeaderCache::new);
        Ok(Http {
            run_time_headers,
            options: Settings::from(options),
            endpoint,
            post_headers,
            plain_headers,
            secrets: auth.secrets,
            pool,
            oauth,
            link: OnceLock::new(),
            closed: AtomicBool::new(false),
        })
    }

    /// Marks the transport closed; says whether it was open until now.
    pub(crate) fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// Whether the client closed the transport.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Builds a request to `uri` with the session headers.
    pub(crate) fn build(
        &self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
        snap: &Snapshot,
        extra: impl FnOnce(&mut HeaderMap),
    ) -> http::Request<conn::Body> {
        let mut req = http::Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = uri.clone();
        let h = req.headers_mut();
        *h = with_room(headers);
        if let Some(session) = &snap.session {
            h.insert(SESSION_ID.clone(), session.clone());
        }
        if let Some(v) = snap.version.filter(|v| v.sends_protocol_version_header()) {
            h.insert(PROTOCOL_VERSION.clone(), HeaderValue::from_static(v.as_str()));
        }
        extra(h);
        req
    }

    /// `text` with every secret taken out: the configured credentials and
    /// the values of the run-time headers last made.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let text = self.secrets.scrub(text);
        match &self.run_time_headers {
            Some(cache) => cache.scrub(&text),
            None => text,
        }
    }

    /// A JSON-RPC error from the server with the client's secrets taken
    /// out of its message and data (a server may echo what it was sent).
    pub(crate) fn scrub_error(&self, mut error: mcp_proto::ErrorObject) -> mcp_proto::ErrorObject {
        if self.secrets.is_empty() && self.run_time_headers.is_none() {
            return error;
        }
        error.message = self.scrub(&error.message);
        if let Some(data) = &error.data {
            let text = data.to_string();
            let scrubbed = self.scrub(&text);
            if scrubbed != text {
                error.data = serde_json::from_str(&scrubbed).ok();
            }
        }
        error
    }

    pub(crate) fn link(&self) -> Link {
        self.link.get().cloned().unwrap_or_else(Link::detached)
    }

    pub(crate) fn is_pending(&self, id: &mcp_proto::RequestId) -> bool {
        self.link.get().is_some_and(|l| l.is_pending(id))
    }

    pub(crate) fn map_error(&self, e: ClientError) -> Error {
        let endpoint = self.endpoint.redacted.clone();
        match e {
            ClientError::Rpc { method, error } => {
                Error::Rpc { endpoint, method, error: self.scrub_error(error) }
            }
            ClientError::Timeout { method, after } => Error::Timeout { endpoint, method, after },
            ClientError::Closed { .. } if self.is_closed() => Error::Closed { endpoint },
            ClientError::ConnectionLost { method } => Error::SessionLost { endpoint, method },
            ClientError::UnsupportedProtocolVersion {
                method,
                supported,
                requested,
                client_versions,
                error,
            } => {
                let error = Box::new(self.scrub_error(*error));
                let source = ClientError::UnsupportedProtocolVersion {
                    method,
                    supported,
                    requested,
                    client_versions,
                    error,
                };
                Error::Protocol { endpoint, source }
            }
            ClientError::HeaderMismatch { method, error } => {
                let error = Box::new(self.scrub_error(*error));
                Error::Protocol { endpoint, source: ClientError::HeaderMismatch { method, error } }
            }
            ClientError::MissingClientCapability { method, required, error } => {
                let error = Box::new(self.scrub_error(*error));
                let source = ClientError::MissingClientCapability { method, required, error };
                Error::Protocol { endpoint, source }
            }
            other => Error::Protocol { endpoint, source: other },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_header_tables() {
        let http = Http::new("http://127.0.0.1:3000/mcp", &HttpOptions::new("t")).unwrap();
        assert_eq!(http.plain_headers.len(), 1, "Host");
        assert_eq!(http.post_headers.len(), 3, "Host, Content-Type, Accept");
        assert_eq!(http.plain_headers["host"], "127.0.0.1:3000");
    }

    fn pairs(h: &HeaderMap) -> Vec<(String, Vec<u8>, bool)> {
        h.iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec(), v.is_sensitive()))
            .collect()
    }

    #[test]
    fn the_fixed_tables_made_at_their_size_are_the_general_paths() {
        let value = |s: &'static str| HeaderValue::from_static(s);
        let name = |s: &'static str| HeaderName::from_static(s);
        let mut secret = value("Bearer t");
        secret.set_sensitive(true);
        // Credentials as `StaticAuth` gives them, and near misses: a name
        // with two values, a sensitive one, many, and each name the tables
        // set themselves (`Host`, `Content-Type`, `Accept`) given by a
        // credential, once or twice, first or after others.
        let many: Vec<_> = (0..20)
            .map(|i| {
                (HeaderName::from_bytes(format!("x-extra-{i}").as_bytes()).unwrap(), value("v"))
            })
            .collect();
        let credentials: Vec<Vec<(HeaderName, HeaderValue)>> = vec![
            vec![],
            vec![(http::header::AUTHORIZATION, secret.clone())],
            vec![(name("x-api-key"), value("k1")), (name("x-api-key"), value("k2"))],
            vec![
                (name("x-a"), value("1")),
                (http::header::AUTHORIZATION, secret),
                (name("x-b"), value("2")),
            ],
            many,
            vec![(http::header::HOST, value("given:1"))],
            vec![(name("x-a"), value("1")), (http::header::HOST, value("given:1"))],
            vec![(CONTENT_TYPE, value("text/plain"))],
            vec![(name("x-a"), value("1")), (ACCEPT, value("a")), (ACCEPT, value("b"))],
            vec![(ACCEPT, value("a")), (name("x-a"), value("1")), (CONTENT_TYPE, value("c"))],
        ];
        for creds in &credentials {
            for host in [None, Some(value("h:3000"))] {
                let (plain, post) = fixed_tables(creds.clone(), host.clone());
                let (g_plain, g_post) = fixed_tables_general(creds.clone(), host.clone());
                assert_eq!(pairs(&plain), pairs(&g_plain), "plain: {creds:?} {host:?}");
                assert_eq!(pairs(&post), pairs(&g_post), "post: {creds:?} {host:?}");
            }
        }
        // What `Http::new` then makes of them, through either path.
        let http = Http::new("http://127.0.0.1:3000/mcp", &HttpOptions::new("t")).unwrap();
        let (g_plain, g_post) = fixed_tables_general(Vec::new(), Some(value("127.0.0.1:3000")));
        assert_eq!(pairs(&http.plain_headers), pairs(&g_plain));
        assert_eq!(pairs(&http.post_headers), pairs(&g_post));
    }

    #[test]
    fn a_request_table_made_with_room_is_the_clone_it_replaces() {
        let value = |s: &'static str| HeaderValue::from_static(s);
        let name = |s: &'static str| HeaderName::from_static(s);
        // Fixed tables as `Http::new` makes them, and near misses: empty,
        // a name with several values, a custom credential, more entries
        // than the room, a name the request then sets again.
        let mut tables = vec![HeaderMap::new()];
        let mut t = HeaderMap::new();
        t.insert(http::header::HOST, value("h:1"));
        tables.push(t.clone());
        t.insert(CONTENT_TYPE, value("application/json"));
        t.insert(ACCEPT, value(ACCEPT_BOTH));
        tables.push(t.clone());
        t.append(name("x-api-key"), value("k1"));
        t.append(name("x-api-key"), value("k2"));
        let mut secret = value("Bearer t");
        secret.set_sensitive(true);
        t.insert(http::header::AUTHORIZATION, secret);
        tables.push(t.clone());
        for i in 0..20 {
            let n = HeaderName::from_bytes(format!("x-extra-{i}").as_bytes()).unwrap();
            t.append(n, value("v"));
        }
        tables.push(t);
        let adds: [&[(&str, &str)]; 4] = [
            &[],
            &[("mcp-session-id", "s"), ("mcp-protocol-version", "2025-11-25")],
            &[("mcp-method", "tools/call"), ("mcp-name", "echo"), ("accept", "text/event-stream")],
            &[("x-api-key", "k3"), ("host", "other:2"), ("content-length", "12")],
        ];
        for table in &tables {
            for add in adds {
                let mut general = table.clone();
                let mut made = with_room(table);
                for (n, v) in add {
                    let (n, v) = (HeaderName::from_static(n), HeaderValue::from_static(v));
                    general.insert(n.clone(), v.clone());
                    made.insert(n, v);
                }
                assert_eq!(pairs(&made), pairs(&general), "{table:?} + {add:?}");
            }
        }
        // The room is there: what a request adds does not move the entries.
        let http = Http::new("http://127.0.0.1:3000/mcp", &HttpOptions::new("t")).unwrap();
        for table in [&http.post_headers, &http.plain_headers] {
            let mut made = with_room(table);
            let first: *const HeaderValue = made.iter().next().unwrap().1;
            for n in ["mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"] {
                made.insert(HeaderName::from_static(n), value("x"));
            }
            made.insert(ACCEPT, value("text/event-stream"));
            made.insert(http::header::CONTENT_LENGTH, value("12"));
            let after: *const HeaderValue = made.iter().next().unwrap().1;
            assert_eq!(first, after, "the entries were moved");
        }
    }
}
