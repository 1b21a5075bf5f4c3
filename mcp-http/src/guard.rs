//! The SSRF guard of the OAuth fetches: the URLs a server or its metadata
//! names (metadata, registration, token, authorization endpoints) may not
//! lead the client to a network the MCP server is not on.
//!
//! Names are checked on the addresses they resolve to, inside the
//! connector's resolver ([`GuardedResolver`]): the connection goes to the
//! addresses that were checked, so a name that resolves to a public
//! address for the check and to `169.254.169.254` for the connection (DNS
//! rebinding) cannot slip through. An address written in the URL is
//! checked before anything is sent ([`Guard::check_uri`]).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::client::legacy::connect::dns::Name;
use mcp_auth::AddressClass;
use tower_service::Service;

/// Which addresses the OAuth fetches may reach (see
/// [`OAuthOptions::address_policy`](crate::OAuthOptions::address_policy)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressPolicy {
    /// Public addresses, and the classes of the MCP server's own addresses
    /// (a server on loopback may name loopback endpoints, one on a private
    /// network private ones); loopback, private, link-local (cloud
    /// metadata) and reserved addresses otherwise refused. The default.
    #[default]
    SameNetwork,
    /// As [`SameNetwork`](Self::SameNetwork), and private networks
    /// (`10/8`, `172.16/12`, `192.168/16`, `100.64/10`, `fc00::/7`) always.
    AllowPrivate,
    /// No check (for tests, or a host that trusts its servers).
    AllowAll,
}

/// An address the guard refused; the fetcher reports it as
/// [`mcp_auth::FetchError::Refused`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) address: IpAddr,
    pub(crate) class: AddressClass,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a {} address, refused by the SSRF guard", self.address, self.class)
    }
}

impl std::error::Error for Refused {}

/// The guard of one client: its policy and the MCP server's host, whose
/// address classes are looked up once, on first use.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    inner: Arc<GuardInner>,
}

#[derive(Debug)]
struct GuardInner {
    policy: AddressPolicy,
    /// The MCP server's host, without brackets.
    server_host: String,
    /// Whether the client goes through a proxy (then the server's name is
    /// the proxy's to resolve, and is not looked up here).
    proxied: bool,
    server: tokio::sync::OnceCell<Vec<AddressClass>>,
}

impl Guard {
    /// The guard for a client of `endpoint`; `None` when the policy checks
    /// nothing.
    pub(crate) fn new(policy: AddressPolicy, endpoint: &Uri, proxied: bool) -> Option<Guard> {
        if policy == AddressPolicy::AllowAll {
            return None;
        }
        let host = endpoint.host().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        Some(Guard {
            inner: Arc::new(GuardInner {
                policy,
                server_host: host,
                proxied,
                server: tokio::sync::OnceCell::new(),
            }),
        })
    }

    /// The classes of the MCP server's addresses. A lookup that fails is
    /// not remembered (the next fetch asks again); until one succeeds, only
    /// public addresses are allowed.
    async fn server_classes(&self) -> &[AddressClass] {
        let inner = &self.inner;
        let found = inner
            .server
            .get_or_try_init(|| async {
                let host = inner.server_host.as_str();
                if let Ok(ip) = host.parse::<IpAddr>() {
                    return Ok(vec![AddressClass::of(ip)]);
                }
                if host.eq_ignore_ascii_case("localhost") {
                    return Ok(vec![AddressClass::Loopback]);
                }
                if inner.proxied {
                    return Ok(Vec::new());
                }
                let mut classes = Vec::new();
                for a in tokio::net::lookup_host((host, 0)).await? {
                    let class = AddressClass::of(a.ip());
                    if !classes.contains(&class) {
                        classes.push(class);
                    }
                }
                Ok::<_, std::io::Error>(classes)
            })
            .await;
        match found {
            Ok(classes) => classes,
            Err(e) => {
                tracing::debug!(error = %e, "the MCP server's host did not resolve; only public addresses are allowed for OAuth");
                &[]
            }
        }
    }

    /// Whether the fetches may reach `ip`.
    pub(crate) async fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let class = AddressClass::of(ip);
        if class == AddressClass::Public {
            return Ok(());
        }
        if allows(self.inner.policy, class, self.server_classes().await) {
            Ok(())
        } else {
            Err(Refused { address: ip, class })
        }
    }

    /// Checks a URI whose host is an address (names are checked by the
    /// resolver); `localhost` is checked as loopback.
    pub(crate) async fn check_uri(&self, uri: &Uri) -> Result<(), Refused> {
        let Some(host) = uri.host() else { return Ok(()) };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.check(ip).await;
        }
        if host.eq_ignore_ascii_case("localhost")
            || host.to_ascii_lowercase().ends_with(".localhost")
        {
            return self.check(IpAddr::from([127, 0, 0, 1])).await;
        }
        Ok(())
    }

    /// The resolver that checks every address a name resolves to.
    pub(crate) fn resolver(&self) -> GuardedResolver {
        GuardedResolver { guard: self.clone() }
    }
}

/// The rule: public always; the server's own classes; private with
/// [`AddressPolicy::AllowPrivate`]; anything with
/// [`AddressPolicy::AllowAll`].
fn allows(policy: AddressPolicy, class: AddressClass, server: &[AddressClass]) -> bool {
    match policy {
        AddressPolicy::AllowAll => true,
        _ if class == AddressClass::Public || server.contains(&class) => true,
        AddressPolicy::AllowPrivate => class == AddressClass::Private,
        AddressPolicy::SameNetwork => false,
    }
}

/// A resolver for hyper-util's `HttpConnector` that keeps only the
/// addresses the guard allows, and fails with [`Refused`] when none is
/// left: the connector connects to what this returns, nothing else.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    guard: Guard,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let guard = self.guard.clone();
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let mut allowed = Vec::new();
            let mut refused = None;
            for addr in found {
                match guard.check(addr.ip()).await {
                    Ok(()) => allowed.push(addr),
                    Err(r) => {
                        refused.get_or_insert(r);
                    }
                }
            }
            match (allowed.is_empty(), refused) {
                (false, _) => Ok(allowed.into_iter()),
                (true, Some(r)) => Err(Box::new(r) as BoxError),
                (true, None) => Err("the name resolved to no address".into()),
            }
        })
    }
}

/// The guard's refusal somewhere in an error's chain.
pub(crate) fn refusal(e: &(dyn std::error::Error + 'static)) -> Option<Refused> {
    let mut cur = Some(e);
    let mut depth = 0;
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(*r);
        }
        cur = err.source();
        depth += 1;
        if depth > 8 {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressClass::*;
    use AddressPolicy::*;

    #[test]
    fn the_rule() {
        for (policy, class, server, allowed) in [
            (SameNetwork, Public, &[][..], true),
            (SameNetwork, LinkLocal, &[Public][..], false),
            (SameNetwork, Loopback, &[Public][..], false),
            (SameNetwork, Private, &[Public][..], false),
            (SameNetwork, Reserved, &[Public][..], false),
            (SameNetwork, Loopback, &[Loopback][..], true),
            (SameNetwork, Private, &[Loopback][..], false),
            (SameNetwork, LinkLocal, &[Loopback][..], false),
            (SameNetwork, Private, &[Private][..], true),
            (SameNetwork, LinkLocal, &[Private][..], false),
            (AllowPrivate, Private, &[Public][..], true),
            (AllowPrivate, Loopback, &[Public][..], false),
            (AllowPrivate, LinkLocal, &[Private][..], false),
            (AllowAll, LinkLocal, &[Public][..], true),
            (AllowAll, Reserved, &[][..], true),
        ] {
            assert_eq!(allows(policy, class, server), allowed, "{policy:?} {class:?} {server:?}");
        }
    }

    #[tokio::test]
    async fn literal_hosts_and_the_servers_own_class() {
        let guard = |server: &str| {
            Guard::new(SameNetwork, &server.parse().unwrap(), false).expect("a guard")
        };
        let public = guard("https://203.0.113.9/mcp");
        let local = guard("http://127.0.0.1:3000/mcp");
        let uri = |u: &str| u.parse::<Uri>().unwrap();
        let refused = public.check_uri(&uri("http://169.254.169.254/latest")).await.unwrap_err();
        assert_eq!(refused.class, LinkLocal);
        assert!(public.check_uri(&uri("http://[fe80::1]:80/x")).await.is_err());
        assert!(public.check_uri(&uri("http://localhost:8080/token")).await.is_err());
        assert!(public.check_uri(&uri("https://as.example.com/token")).await.is_ok());
        assert!(local.check_uri(&uri("http://localhost:8080/token")).await.is_ok());
        assert!(local.check_uri(&uri("http://[::1]:8080/token")).await.is_ok());
        assert!(local.check_uri(&uri("http://169.254.169.254/")).await.is_err());
        assert!(local.check_uri(&uri("http://10.0.0.1/")).await.is_err());
        assert!(Guard::new(AllowAll, &uri("https://203.0.113.9/"), false).is_none());
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_of_a_forbidden_address() {
        let guard = Guard::new(SameNetwork, &"https://203.0.113.9/".parse().unwrap(), false)
            .expect("a guard");
        // `localhost` resolves (through the system resolver, as any name)
        // to loopback only.
        let err = guard
            .resolver()
            .call("localhost".parse().unwrap())
            .await
            .expect_err("loopback is refused");
        let refused = refusal(&*err).expect("the refusal is in the chain");
        assert_eq!(refused.class, Loopback);
        let local = Guard::new(SameNetwork, &"http://127.0.0.1:1/".parse().unwrap(), false)
            .expect("a guard");
        let addrs: Vec<_> =
            local.resolver().call("localhost".parse().unwrap()).await.unwrap().collect();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
