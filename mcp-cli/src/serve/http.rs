//! `mcpc serve --http ADDR`: the bridge served to hosts over Streamable
//! HTTP (both protocol eras, JSON or SSE replies as the service decides).
//!
//! Each handshake-era host session gets its own bridge and its own
//! [`HostLink`](super::host::HostLink) (the stateless-era hosts share one,
//! each POST its own call); the upstream connections are shared, and what
//! a server asks goes to the host session whose call is running
//! ([`Hosts::asked`](super::host::Hosts::asked)). A session that ends
//! (DELETE, idle expiry, eviction, shutdown) has its calls aborted, which
//! cancels them upstream.
//!
//! Safety: loopback unless told otherwise; off loopback a bearer token is
//! required (a file, `$MCPC_SERVE_TOKEN`, else one made up and printed
//! once); `Origin` and `Host` checked against DNS rebinding; the service's
//! body, header and session caps and idle timeout (`--idle-timeout`; an
//! idle session is ended by the service's timer, its calls cancelled). Nothing of the
//! upstream connections (their headers, their tokens) reaches a host.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mcp_server_io::ServeEra;
use mcp_server_io::Session;
use mcp_server_io::http::{self, BearerToken, HttpHooks, HttpOptions};
use tokio::net::TcpListener;

use super::AbortOnDrop;
use super::handler::Bridge;
use super::host::Hosts;
use super::{Limits, Served, pump};
use crate::failure::{Failure, Kind};

/// The environment variable holding the hosts' bearer token.
pub(crate) const TOKEN_ENV: &str = "MCPC_SERVE_TOKEN";
/// The most bytes of a token file.
const MAX_TOKEN_FILE: u64 = 4096;
/// The random bytes of a made-up token.
const TOKEN_BYTES: usize = 32;

/// `serve --http` as given on the command line.
#[derive(Debug, Clone)]
pub(crate) struct HttpArgs {
    /// `PORT`, `:PORT`, `HOST:PORT`.
    pub(crate) addr: String,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) allow_origins: Vec<String>,
    pub(crate) max_sessions: Option<u32>,
    /// A host session unused this long ends.
    pub(crate) idle_timeout: Option<Duration>,
    /// `--max-in-flight`: each session's cap on requests run at once, the
    /// stateless-era hosts' shared session's too.
    pub(crate) max_in_flight: Option<u32>,
    /// `--max-unsent-events`: each SSE connection's cap on events waiting
    /// unsent.
    pub(crate) max_unsent_events: Option<u32>,
}

/// `serve --http` checked: where to bind, and the token hosts must send.
pub(crate) struct Resolved {
    addr: SocketAddr,
    token: Option<String>,
    /// The token was made up here (printed once).
    made_up: bool,
    allow_origins: Vec<String>,
    max_sessions: Option<u32>,
    idle_timeout: Option<Duration>,
    max_in_flight: Option<u32>,
    max_unsent_events: Option<u32>,
}

impl HttpArgs {
    /// The address parsed, the token read (or made up off loopback).
    pub(crate) fn resolve(&self) -> Result<Resolved, Failure> {
        let addr = parse_addr(&self.addr).map_err(|e| Failure::new(Kind::Usage, e))?;
        let file = match &self.token_file {
            Some(path) => Some(read_token_file(path)?),
            None => None,
        };
        let env = std::env::var(TOKEN_ENV).ok();
        let (token, made_up) = choose_token(addr.ip().is_loopback(), file, env)
            .map_err(|e| Failure::new(Kind::Config, e))?;
        Ok(Resolved {
            addr,
            token,
            made_up,
            allow_origins: self.allow_origins.clone(),
            max_sessions: self.max_sessions,
            idle_timeout: self.idle_timeout,
            max_in_flight: self.max_in_flight,
            max_unsent_events: self.max_unsent_events,
        })
    }
}

/// `PORT`, `:PORT`, `localhost:PORT` (loopback), or `IP:PORT`.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    let port = text.strip_prefix(':').or_else(|| text.strip_prefix("localhost:")).unwrap_or(text);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!("--http {text:?} is not an address: give PORT, HOST:PORT (an IP) or [IPv6]:PORT")
    })
}

/// The token hosts must send: the file's, else the environment's; off
/// loopback, one is required, and made up when neither is given (the
/// second value says so). On loopback, none unless given.
fn choose_token(
    loopback: bool,
    file: Option<String>,
    env: Option<String>,
) -> Result<(Option<String>, bool), String> {
    let env = env.map(|e| e.trim().to_owned()).filter(|e| !e.is_empty());
    match file.or(env) {
        Some(token) if token.chars().any(|c| c.is_control() || c == ' ') => {
            Err("the serve token has spaces or control characters in it".to_owned())
        }
        Some(token) => Ok((Some(token), false)),
        None if loopback => Ok((None, false)),
        None => made_up_token().map(|t| (Some(t), true)),
    }
}

/// A token file's first line, trimmed; refused when empty or too big.
fn read_token_file(path: &std::path::Path) -> Result<String, Failure> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| Failure::new(Kind::Config, format!("cannot read --token-file {shown}: {e}")))?
        .len();
    if size > MAX_TOKEN_FILE {
        return Err(Failure::new(
            Kind::Config,
            format!("--token-file {shown} is larger than {MAX_TOKEN_FILE} bytes"),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::new(Kind::Config, format!("cannot read --token-file {shown}: {e}"))
    })?;
    let token = text.lines().next().unwrap_or_default().trim().to_owned();
    if token.is_empty() {
        return Err(Failure::new(Kind::Config, format!("--token-file {shown} is empty")));
    }
    Ok(token)
}

/// 32 bytes from the operating system's random source, in hex.
fn made_up_token() -> Result<String, String> {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; TOKEN_BYTES];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "the system's random source failed: give a token (--token-file)".to_owned())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The service's options for `args`.
fn options(args: &Resolved) -> HttpOptions {
    let mut options = HttpOptions::new(ServeEra::Both);
    options.session = Limits { max_in_flight: args.max_in_flight }.session_options();
    if let Some(max) = args.max_in_flight {
        options.shared_max_in_flight = max as usize;
    }
    if let Some(max) = args.max_unsent_events {
        options.max_unsent_events = max as usize;
    }
    options.allowed_origins = args.allow_origins.clone();
    let ip = args.addr.ip();
    if ip.is_unspecified() {
        // Reached by any of the machine's names; the token guards it.
        options.allowed_hosts.push("*".to_owned());
    } else if !ip.is_loopback() {
        options.allowed_hosts.push(ip.to_string());
        if ip.is_ipv6() {
            options.allowed_hosts.push(format!("[{ip}]"));
        }
    }
    if let Some(token) = &args.token {
        options.authorize = Some(Arc::new(BearerToken::new(token.clone())));
    }
    if let Some(max) = args.max_sessions {
        options.session_cap = max as usize;
    }
    if let Some(idle) = args.idle_timeout {
        options.session_idle_timeout = idle;
    }
    options
}

/// Lets go of a host session's link when the session ends.
struct Unlink(Arc<Hosts>);

impl HttpHooks<Bridge> for Unlink {
    fn session_closed(&self, session: &Session<Bridge>) {
        self.0.remove(session.handler().link());
    }
}

/// Serves hosts over HTTP until interrupted.
pub(super) async fn serve(
    args: Resolved,
    served: Served,
    hosts: Arc<Hosts>,
) -> Result<u8, Failure> {
    let listener = TcpListener::bind(args.addr).await.map_err(|e| {
        Failure::new(Kind::Connection, format!("cannot listen on {}: {e}", args.addr))
    })?;
    let options = options(&args);
    let pump = pump::start(&served.registry, hosts.clone(), &served.servers);
    let factory = {
        let hosts = hosts.clone();
        move || served.bridge(hosts.add())
    };
    let server = http::serve_with_hooks(listener, options, factory, Unlink(hosts))
        .await
        .map_err(|e| Failure::new(Kind::Connection, format!("cannot serve HTTP: {e}")))?;
    crate::output::note(&format!("mcpc: serving on {}", server.url()));
    if let (true, Some(token)) = (args.made_up, &args.token) {
        crate::output::note(&format!(
            "mcpc: hosts must send this bearer token (made up for this run; \
             set {TOKEN_ENV} or --token-file to choose one): {token}"
        ));
    }
    tracing::info!("serving over HTTP");
    // Until interrupted (SIGINT, SIGTERM, SIGHUP end the process's
    // command, dropping the server: every session ends, its calls too).
    let _pump = AbortOnDrop(pump);
    let _server = server;
    std::future::pending::<()>().await;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_without_a_host_is_loopback() {
        let loopback = |port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        assert_eq!(parse_addr("8080"), Ok(loopback(8080)));
        assert_eq!(parse_addr(":0"), Ok(loopback(0)));
        assert_eq!(parse_addr("localhost:9"), Ok(loopback(9)));
        assert_eq!(parse_addr("0.0.0.0:80").unwrap().ip().to_string(), "0.0.0.0");
        assert_eq!(parse_addr("[::1]:80").unwrap().ip().to_string(), "::1");
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("").is_err());
    }

    #[test]
    fn off_loopback_a_token_is_required() {
        // Loopback: none unless given.
        assert_eq!(choose_token(true, None, None), Ok((None, false)));
        assert_eq!(choose_token(true, None, Some("e".into())), Ok((Some("e".into()), false)));
        // The file wins over the environment.
        assert_eq!(
            choose_token(false, Some("f".into()), Some("e".into())),
            Ok((Some("f".into()), false))
        );
        assert_eq!(choose_token(false, None, Some(" e ".into())), Ok((Some("e".into()), false)));
        // Neither (an empty variable is none): made up, 32 random bytes.
        for env in [None, Some(String::new())] {
            let (token, made_up) = choose_token(false, None, env).unwrap();
            let token = token.unwrap();
            assert!(made_up);
            assert_eq!(token.len(), 64);
            assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        }
        let (a, _) = choose_token(false, None, None).unwrap();
        let (b, _) = choose_token(false, None, None).unwrap();
        assert_ne!(a, b);
        assert!(choose_token(false, Some("a b".into()), None).is_err());
    }

    #[test]
    fn the_options_follow_the_bind() {
        let resolved = |addr: &str, token: Option<&str>| Resolved {
            addr: parse_addr(addr).unwrap(),
            token: token.map(str::to_owned),
            made_up: false,
            allow_origins: vec!["https://app.example".into()],
            max_sessions: Some(3),
            idle_timeout: Some(Duration::from_secs(5)),
            max_in_flight: Some(7),
            max_unsent_events: Some(9),
        };
        let local = options(&resolved("8080", None));
        assert!(local.authorize.is_none());
        assert!(local.allowed_hosts.is_empty());
        assert_eq!(local.allowed_origins, ["https://app.example"]);
        assert_eq!(local.session_cap, 3);
        assert_eq!(local.session_idle_timeout, Duration::from_secs(5));
        assert_eq!((local.session.max_in_flight, local.shared_max_in_flight), (7, 7));
        assert_eq!(local.max_unsent_events, 9);
        assert_eq!(local.session.request_timeout, super::super::HOST_ANSWER_TIMEOUT);
        let wide = options(&resolved("0.0.0.0:8080", Some("t")));
        assert!(wide.authorize.is_some());
        assert_eq!(wide.allowed_hosts, ["*"]);
        let one = options(&resolved("192.0.2.7:8080", Some("t")));
        assert_eq!(one.allowed_hosts, ["192.0.2.7"]);
    }
}
