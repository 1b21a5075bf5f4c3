//! Headers made at run time ([`HeaderSource`]): a short-lived token a
//! company tool mints, a cloud credential helper's signature. The
//! transport asks the source when it first needs them (connect; a new
//! transport after a reconnect asks again), keeps them as long as the
//! source says they are good for, and asks once more, fresh, when the
//! server answers 401 or 403 to them, before it gives up.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue};

use crate::error::Error;

/// A boxed future, as [`HeaderSource`] returns.
pub type HeaderFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<SourcedHeaders, HeaderSourceError>> + Send + 'a>>;

/// Where run-time headers come from (the registry's `headers_helper`
/// command is one).
pub trait HeaderSource: Send + Sync + fmt::Debug {
    /// The headers to send now. Called with no lock held; the transport
    /// makes one call at a time and bounds none of them (the source bounds
    /// its own work).
    fn headers(&self) -> HeaderFuture<'_>;
}

/// Headers from a [`HeaderSource`]; `Debug` shows their names only.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct SourcedHeaders {
    /// The headers (each value marked sensitive when sent).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// How long they may be reused; `None`: until the server refuses them.
    pub valid_for: Option<Duration>,
}

impl SourcedHeaders {
    /// These headers, good for `valid_for` (`None`: until refused).
    pub fn new(headers: Vec<(HeaderName, HeaderValue)>, valid_for: Option<Duration>) -> Self {
        SourcedHeaders { headers, valid_for }
    }
}

impl fmt::Debug for SourcedHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourcedHeaders")
            .field("names", &self.headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>())
            .field("valid_for", &self.valid_for)
            .finish()
    }
}

/// Why a [`HeaderSource`] gave no headers: the source's own error, whose
/// message must hold no header value.
pub type HeaderSourceError = Box<dyn std::error::Error + Send + Sync>;

/// A source and what it last gave, for one transport.
pub(crate) struct HeaderCache {
    source: Arc<dyn HeaderSource>,
    held: Mutex<Option<(SourcedHeaders, Instant)>>,
    /// One call to the source at a time.
    flight: tokio::sync::Mutex<()>,
}

impl fmt::Debug for HeaderCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeaderCache").field("source", &self.source).finish_non_exhaustive()
    }
}

impl HeaderCache {
    pub(crate) fn new(source: Arc<dyn HeaderSource>) -> Self {
        HeaderCache { source, held: Mutex::new(None), flight: tokio::sync::Mutex::new(()) }
    }

    fn held(&self) -> Option<SourcedHeaders> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.as_ref()
            .filter(|(h, at)| h.valid_for.is_none_or(|d| at.elapsed() < d))
            .map(|(h, _)| h.clone())
    }

    /// `text` with the values of the headers last made (still good or not)
    /// taken out, as the static credentials are: a server may echo what it
    /// was sent.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let Some((headers, _)) = held.as_ref() else { return text.to_owned() };
        let mut secrets = crate::auth::Secrets::default();
        for (_, value) in &headers.headers {
            if let Ok(value) = value.to_str() {
                secrets.add_header_value(value);
            }
        }
        secrets.scrub(text)
    }

    /// The headers to send: those held while they are good, unless
    /// `fresh` asks for new ones (the server refused the held ones, which
    /// are dropped first).
    pub(crate) async fn current(
        &self,
        fresh: bool,
        endpoint: &str,
    ) -> Result<SourcedHeaders, Error> {
        if fresh {
            *self.held.lock().unwrap_or_else(|e| e.into_inner()) = None;
        } else if let Some(h) = self.held() {
            return Ok(h);
        }
        let _flight = self.flight.lock().await;
        // Another request may have made them meanwhile.
        if let Some(h) = self.held() {
            return Ok(h);
        }
        let made = self
            .source
            .headers()
            .await
            .map_err(|source| Error::Headers { endpoint: endpoint.to_owned(), source })?;
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some((made.clone(), Instant::now()));
        Ok(made)
    }
}

/// Puts `headers` on a request (replacing any of the same name), marked
/// sensitive.
pub(crate) fn apply(req: &mut http::Request<crate::conn::Body>, headers: &SourcedHeaders) {
    for (name, value) in &headers.headers {
        let mut value = value.clone();
        value.set_sensitive(true);
        req.headers_mut().insert(name.clone(), value);
    }
}
