//! Starting requests and timing them: ids, registration, deadlines,
//! timeouts, cancelling and abandoning.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::encode::{Meta, meta_text_fits, request_text, with_meta, with_progress_token};
use super::{ClientCore, Event, ModernMeta, Pending, Phase, RequestOptions};
use crate::client::ClientError;
use crate::jsonrpc::{Message, Notification, Request, RequestId};
use crate::methods;
use crate::types::CancelledNotificationParams;

impl<W> ClientCore<W> {
    /// How many deadline entries the core keeps (live and stale): bounded
    /// by twice the waiting requests plus a constant, however many requests
    /// were made. For tests and diagnostics.
    pub fn timer_entries(&self) -> usize {
        self.timers.len()
    }

    /// Drops the entries of finished requests (and of moved deadlines) once
    /// they outnumber the live ones, so the heap never grows with the
    /// number of requests made (amortised O(1) a request).
    fn prune_timers(&mut self) {
        if self.timers.len() < 2 * self.pending.len() + 64 {
            return;
        }
        let pending = &self.pending;
        self.timers.retain(|Reverse((deadline, id))| {
            pending.get(id).is_some_and(|p| p.deadline == *deadline)
        });
    }

    pub(super) fn allocate_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Starts a request: returns the message to send.
    ///
    /// Only `ping` may be sent before the handshake finished. When the options
    /// ask for progress, `_meta.progressToken` (the request's id) is added to
    /// the parameters, which must then be an object or absent.
    pub fn start_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        waiter: W,
        now: Instant,
    ) -> Result<Request, ClientError> {
        self.check_can_send(method)?;
        let id = self.allocate_id();
        let wants_progress = options.on_progress.is_some() || options.reset_timeout_on_progress;
        let params =
            if wants_progress { Some(with_progress_token(method, params, id)?) } else { params };
        let params = match (&self.modern, &options.meta) {
            (None, None) => params,
            (modern, extra) => Some(with_meta(
                method,
                params,
                extra.as_ref(),
                modern.as_ref().map(ModernMeta::map),
            )?),
        };
        self.register(id, method, waiter, options, now);
        Ok(Request { id: RequestId::Number(id), method: method.into(), params })
    }

    /// [`start_request`](Self::start_request) with parameters of any
    /// serialisable type, encoded straight to JSON text (no [`Value`] is
    /// built): returns the request's id and the encoded message (without a
    /// line ending). When the options ask for progress, the parameters go
    /// through a `Value` to receive `_meta.progressToken`.
    pub fn start_request_encoded<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
        options: &RequestOptions,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let invalid = |e: serde_json::Error| ClientError::InvalidParams {
            method: method.into(),
            reason: e.to_string(),
        };
        let by_value = |core: &mut Self, waiter: W| {
            let params = serde_json::to_value(params).map_err(invalid)?;
            let request = core.start_request(method, Some(params), options, waiter, now)?;
            let text = request_text(&request.id, method, &request.params, None)
                .map_err(invalid)?
                .ok_or_else(|| invalid(serde::ser::Error::custom("unreachable")))?;
            Ok((request.id, text))
        };
        let wants_progress = options.on_progress.is_some() || options.reset_timeout_on_progress;
        if (wants_progress || options.meta.is_some())
            && !meta_text_fits(options.meta.as_ref(), wants_progress, self.modern.as_ref())
        {
            return by_value(self, waiter);
        }
        self.check_can_send(method)?;
        // An id lost to a failed encoding is never reused: ids stay unique.
        let n = self.allocate_id();
        let id = RequestId::Number(n);
        let modern = self.modern.as_ref().map(|m| &*m.text);
        // Written straight into the request's text.
        let meta = if wants_progress || options.meta.is_some() {
            Some(Meta::Members {
                progress: wants_progress.then_some(n),
                extra: options.meta.as_ref(),
                modern,
            })
        } else {
            modern.map(Meta::Text)
        };
        match request_text(&id, method, params, meta).map_err(invalid)? {
            Some(text) => {
                self.register(n, method, waiter, options, now);
                Ok((id, text))
            }
            // The parameters carry a `_meta` of their own: merged by value.
            None => by_value(self, waiter),
        }
    }

    /// Only `ping` may be sent before the handshake finished, nothing after
    /// `close`; in the stateless era, nothing that era lacks (`ping`,
    /// `logging/setLevel`, `resources/subscribe`, ...).
    fn check_can_send(&self, method: &str) -> Result<(), ClientError> {
        if let Some(version) = self.negotiated.filter(|v| v.is_modern())
            && !methods::exists_in_modern_era(method)
        {
            return Err(ClientError::NotInEra { method: method.into(), version });
        }
        match self.phase {
            Phase::Ready => Ok(()),
            Phase::Closed => Err(ClientError::Closed { method: method.into() }),
            _ if method == methods::PING => Ok(()),
            _ => Err(ClientError::NotInitialized { method: method.into() }),
        }
    }

    pub(super) fn register(
        &mut self,
        id: i64,
        method: &str,
        waiter: W,
        options: &RequestOptions,
        now: Instant,
    ) {
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let deadline = now + timeout;
        let hard_deadline = if options.reset_timeout_on_progress {
            options.max_total_timeout.map(|max| now + max.max(timeout))
        } else {
            None
        };
        self.prune_timers();
        self.timers.push(Reverse((deadline, id)));
        self.pending.insert(
            id,
            Pending {
                method: method_name(method),
                waiter,
                started: now,
                timeout,
                deadline,
                hard_deadline,
                reset_on_progress: options.reset_timeout_on_progress,
                on_progress: options.on_progress.clone(),
            },
        );
    }

    /// The time of the next request deadline, if any request waits.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        while let Some(Reverse((deadline, id))) = self.timers.peek().copied() {
            match self.pending.get(&id) {
                Some(p) if p.deadline == deadline => return Some(deadline),
                // The request finished, or its deadline moved: a stale entry.
                _ => {
                    self.timers.pop();
                }
            }
        }
        None
    }

    /// The current deadline of one request, if it still waits.
    pub fn deadline(&self, id: &RequestId) -> Option<Instant> {
        match id {
            RequestId::Number(n) => self.pending.get(n).map(|p| p.deadline),
            RequestId::String(_) => None,
        }
    }

    /// Times out every request whose deadline is at or before `now`: each
    /// gets [`ClientError::Timeout`], and `notifications/cancelled` is queued
    /// for it (except for `initialize`, which must not be cancelled).
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(Reverse((deadline, id))) = self.timers.peek().copied() {
            if deadline > now {
                break;
            }
            self.timers.pop();
            let due = matches!(self.pending.get(&id), Some(p) if p.deadline == deadline);
            if !due {
                continue;
            }
            let Some(p) = self.pending.remove(&id) else { continue };
            let after = now.saturating_duration_since(p.started);
            tracing::debug!(id, method = &*p.method, ?after, "request timed out");
            if &*p.method == methods::INITIALIZE {
                self.phase = Phase::Failed;
            } else if self.phase == Phase::Probing(id) {
                self.phase = Phase::Fresh;
            } else {
                self.queue_cancelled(
                    RequestId::Number(id),
                    format!("timed out after {:.1}s", after.as_secs_f64()),
                );
            }
            self.events.push_back(Event::Reply {
                id: RequestId::Number(id),
                waiter: p.waiter,
                outcome: Err(ClientError::Timeout { method: p.method.into(), after }),
            });
        }
    }

    /// Cancels a request the caller no longer waits for: it is forgotten,
    /// `notifications/cancelled` is queued, and its waiter gets
    /// [`ClientError::Cancelled`]. Unknown ids are ignored.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) {
        let RequestId::Number(n) = id else { return };
        let Some(p) = self.pending.remove(n) else { return };
        self.stopped(id, *n, &p.method, Some(reason));
        self.events.push_back(Event::Reply {
            id: id.clone(),
            waiter: p.waiter,
            outcome: Err(ClientError::Cancelled { method: p.method.into() }),
        });
    }

    /// Ends a request before its answer and gives its waiter back, with no
    /// event: the driver hands it what ended it (its transport's own
    /// failure), or drops it (its caller stopped it). With a `reason` the
    /// server is told, as [`cancel`](Self::cancel) tells it; without,
    /// nothing is sent, as [`abandon`](Self::abandon). Unknown ids: `None`.
    pub fn take_ended(&mut self, id: &RequestId, reason: Option<&str>) -> Option<W> {
        let RequestId::Number(n) = id else { return None };
        let p = self.pending.remove(n)?;
        self.stopped(id, *n, &p.method, reason);
        Some(p.waiter)
    }

    /// What ending request `n` before its answer changes: `initialize`
    /// must not be cancelled (the connection is unusable), the era probe
    /// leaves the core fresh, any other request is cancelled with the
    /// server when there is a `reason` to tell it.
    fn stopped(&mut self, id: &RequestId, n: i64, method: &str, reason: Option<&str>) {
        if method == methods::INITIALIZE {
            self.phase = Phase::Failed;
        } else if self.phase == Phase::Probing(n) {
            self.phase = Phase::Fresh;
        } else if let Some(reason) = reason {
            self.queue_cancelled(id.clone(), reason.to_owned());
        }
    }

    /// Forgets a request whose transport failed to carry it, without
    /// `notifications/cancelled`: in the stateless era the broken exchange
    /// is what tells the server, and a notice would only open another
    /// connection to say it again. Its waiter gets
    /// [`ClientError::Cancelled`]. Unknown ids are ignored.
    pub fn abandon(&mut self, id: &RequestId) {
        self.fail_waiting(id, |method| ClientError::Cancelled { method: method.into() });
    }

    /// Fails a waiting request whose answer arrived but could not be read
    /// (the transport had to drop it: see
    /// [`jsonrpc::response_id_of_prefix`](crate::jsonrpc::response_id_of_prefix)):
    /// its waiter gets [`ClientError::AnswerUnreadable`] with `reason`. No
    /// `notifications/cancelled` is sent (the server has answered). Unknown
    /// ids are ignored; returns whether a request was failed.
    pub fn fail_unreadable(&mut self, id: &RequestId, reason: &str) -> bool {
        self.fail_waiting(id, |method| ClientError::AnswerUnreadable {
            method: method.to_string(),
            reason: reason.into(),
        })
    }

    /// Ends the waiting request `id` with the error `error` makes from its
    /// method: the opening it was (`initialize` fails the core, the era
    /// probe leaves it fresh) is over. Unknown ids are ignored; returns
    /// whether a request was ended.
    fn fail_waiting(
        &mut self,
        id: &RequestId,
        error: impl FnOnce(Cow<'static, str>) -> ClientError,
    ) -> bool {
        let RequestId::Number(n) = id else { return false };
        let Some(p) = self.pending.remove(n) else { return false };
        if self.phase == Phase::Initializing(*n) {
            self.phase = Phase::Failed;
        } else if self.phase == Phase::Probing(*n) {
            self.phase = Phase::Fresh;
        }
        self.events.push_back(Event::Reply {
            id: id.clone(),
            waiter: p.waiter,
            outcome: Err(error(p.method)),
        });
        true
    }

    fn queue_cancelled(&mut self, id: RequestId, reason: String) {
        let params = CancelledNotificationParams::new(id, Some(reason));
        let params = serde_json::to_value(params).ok();
        self.transmit.push_back(Message::Notification(Notification::new(
            methods::NOTIFICATION_CANCELLED,
            params,
        )));
    }
}

/// A request's method as a pending request keeps it: the protocol's own
/// names without an allocation.
fn method_name(method: &str) -> Cow<'static, str> {
    const KNOWN: &[&str] = &[
        methods::TOOLS_CALL,
        methods::RESOURCES_READ,
        methods::PROMPTS_GET,
        methods::TOOLS_LIST,
        methods::RESOURCES_LIST,
        methods::PROMPTS_LIST,
        methods::PING,
        methods::INITIALIZE,
        methods::SERVER_DISCOVER,
    ];
    match KNOWN.iter().find(|known| **known == method) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(method.to_owned()),
    }
}
