//! The task store of both eras: behind the handshake era's experimental
//! tasks (2025-11-25: task-augmented `tools/call` and `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`) and the stateless era's
//! tasks extension (`crate::stateless_tasks`: `tasks/get`, `tasks/update`,
//! `tasks/cancel`, input requests while a task waits).
//!
//! The store is plain data kept in the server's state (under its lock); the
//! server runs the tools and sends the notifications. It is bounded: at most
//! [`MAX_TASKS`] tasks are kept, the oldest finished one making room for a
//! new one, and a finished task is forgotten once its `ttl` has passed. The
//! wire shape of each era is its own: [`Tasks::get`] the handshake era's
//! `Task`, [`Tasks::handle`] and [`Tasks::detailed`] the stateless era's
//! (`mcp_server_io::tasks`).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::types::RELATED_TASK_META_KEY;
use mcp_server_io::tasks::{self as wire, TaskView};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

/// The most tasks kept at once.
pub(crate) const MAX_TASKS: usize = 256;
/// The `ttl` of a task whose request asked for none: ten minutes.
pub(crate) const DEFAULT_TTL_MS: u64 = 600_000;
/// The longest `ttl` granted: one hour.
pub(crate) const MAX_TTL_MS: u64 = 3_600_000;
/// The suggested polling interval.
pub(crate) const POLL_INTERVAL_MS: u64 = 100;

/// What a task's request ends with: the result or the error it would have
/// been answered with.
pub(crate) type Outcome = Result<Value, ErrorObject>;

/// The tasks of one session, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    entries: BTreeMap<u64, Entry>,
    next: u64,
}

#[derive(Debug)]
struct Entry {
    status: &'static str,
    status_message: Option<String>,
    created_at: String,
    last_updated_at: String,
    created: Instant,
    ttl_ms: u64,
    /// The running tool, while it runs.
    abort: Option<AbortHandle>,
    /// `None` until the task ends; `tasks/result` waits on it.
    outcome: watch::Sender<Option<Outcome>>,
    /// Stateless era: the input requests not answered yet, by key.
    input_requests: Map<String, Value>,
    /// Stateless era: every answer `tasks/update` delivered, by key; the
    /// running tool waits on it.
    answers: watch::Sender<Map<String, Value>>,
}

impl Entry {
    fn is_terminal(&self) -> bool {
        wire::is_terminal(self.status)
    }

    fn view<'a>(&'a self, id: &'a str) -> TaskView<'a> {
        TaskView {
            task_id: id,
            status: self.status,
            status_message: self.status_message.as_deref(),
            created_at: &self.created_at,
            last_updated_at: &self.last_updated_at,
            ttl_ms: Some(self.ttl_ms),
            poll_interval_ms: POLL_INTERVAL_MS,
        }
    }

    fn touch(&mut self) {
        self.last_updated_at = timestamp(SystemTime::now());
    }

    fn expired(&self, now: Instant) -> bool {
        self.is_terminal() && now.duration_since(self.created) >= Duration::from_millis(self.ttl_ms)
    }
}

impl Tasks {
    /// A new `working` task with the requested `ttl` (clamped): its id and
    /// state, or an error when [`MAX_TASKS`] tasks are all still working.
    pub(crate) fn create(&mut self, ttl_ms: Option<u64>) -> Result<(String, Value), ErrorObject> {
        self.purge();
        if self.entries.len() >= MAX_TASKS {
            let oldest_finished =
                self.entries.iter().find(|(_, e)| e.is_terminal()).map(|(n, _)| *n);
            match oldest_finished {
                Some(n) => {
                    self.entries.remove(&n);
                }
                None => {
                    return Err(ErrorObject::new(
                        error_code::INTERNAL_ERROR,
                        format!("Too many tasks: {MAX_TASKS} are still working"),
                    ));
                }
            }
        }
        self.next += 1;
        let n = self.next;
        let now = timestamp(SystemTime::now());
        let entry = Entry {
            status: "working",
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            created: Instant::now(),
            ttl_ms: ttl_ms.unwrap_or(DEFAULT_TTL_MS).min(MAX_TTL_MS),
            abort: None,
            outcome: watch::Sender::new(None),
            input_requests: Map::new(),
            answers: watch::Sender::new(Map::new()),
        };
        let id = task_id(n);
        let state = snapshot(&id, &entry);
        self.entries.insert(n, entry);
        Ok((id, state))
    }

    /// Remembers the running tool of a task, to abort it on cancellation.
    /// A task that already ended does not keep it.
    pub(crate) fn set_abort(&mut self, id: &str, abort: AbortHandle) {
        match self.entry_mut(id) {
            Some(entry) if !entry.is_terminal() => entry.abort = Some(abort),
            _ => {}
        }
    }

    /// Ends a working task with its request's outcome, the handshake
    /// era's way: `completed`, or `failed` for an error or a tool result
    /// with `isError: true`. Its new state, or `None` when the task is gone
    /// or had already ended (cancelled: it stays so).
    pub(crate) fn finish(&mut self, id: &str, outcome: Outcome) -> Option<Value> {
        let failed = match &outcome {
            Ok(result) => result.get("isError") == Some(&Value::Bool(true)),
            Err(_) => true,
        };
        let status = if failed { "failed" } else { "completed" };
        if !self.finish_as(id, outcome, status) {
            return None;
        }
        self.entry_mut(id).map(|entry| snapshot(id, entry))
    }

    /// Ends a task that has not ended with `outcome` and `status`; whether
    /// it did (a cancelled task stays so).
    pub(crate) fn finish_as(&mut self, id: &str, outcome: Outcome, status: &'static str) -> bool {
        let Some(entry) = self.entry_mut(id).filter(|e| !e.is_terminal()) else { return false };
        entry.status = status;
        entry.touch();
        entry.abort = None;
        entry.input_requests.clear();
        entry.outcome.send_replace(Some(outcome));
        true
    }

    /// Stateless era: the task waits for the client's answers to
    /// `requests` (by key; `input_required` until each is answered).
    /// A receiver of every answer so far, or `None` when the task is gone
    /// or over.
    pub(crate) fn ask(
        &mut self,
        id: &str,
        requests: Map<String, Value>,
    ) -> Option<watch::Receiver<Map<String, Value>>> {
        let entry = self.entry_mut(id).filter(|e| !e.is_terminal())?;
        entry.input_requests.extend(requests);
        if !entry.input_requests.is_empty() {
            entry.status = "input_required";
            entry.touch();
        }
        Some(entry.answers.subscribe())
    }

    /// Stateless era, `tasks/update`: delivers the answers to the requests
    /// the task is waiting for (other keys are ignored); once none is
    /// left the task works again. A task that waits for nothing takes
    /// nothing. `-32602` for a task the store does not have.
    pub(crate) fn update(
        &mut self,
        id: &str,
        responses: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        self.purge();
        let entry = self.entry_mut(id).ok_or_else(|| wire::unknown_task(id))?;
        if !wire::update_applies(entry.status) {
            return Ok(());
        }
        let answered: Vec<String> =
            responses.keys().filter(|k| entry.input_requests.contains_key(*k)).cloned().collect();
        if answered.is_empty() {
            return Ok(());
        }
        for key in &answered {
            entry.input_requests.remove(key);
        }
        entry.answers.send_modify(|answers| {
            for key in answered {
                if let Some(response) = responses.get(&key) {
                    answers.insert(key, response.clone());
                }
            }
        });
        if entry.input_requests.is_empty() {
            entry.status = "working";
        }
        entry.touch();
        Ok(())
    }

    /// A task's status (`-32602` for a task the store does not have).
    pub(crate) fn status(&mut self, id: &str) -> Result<&'static str, ErrorObject> {
        self.purge();
        self.entry_mut(id).map(|e| e.status).ok_or_else(|| wire::unknown_task(id))
    }

    /// Stateless era: the `CreateTaskResult` of a task just created.
    pub(crate) fn handle(&mut self, id: &str) -> Result<Value, ErrorObject> {
        let entry = self.entry_mut(id).ok_or_else(|| wire::unknown_task(id))?;
        Ok(wire::created(&entry.view(id)))
    }

    /// Stateless era, `tasks/get`: the task with, by status, its input
    /// requests, result or error.
    pub(crate) fn detailed(&mut self, id: &str) -> Result<Value, ErrorObject> {
        self.purge();
        let entry = self.entry_mut(id).ok_or_else(|| wire::unknown_task(id))?;
        let outcome = entry.outcome.borrow();
        Ok(wire::detailed(&entry.view(id), &entry.input_requests, outcome.as_ref()))
    }

    /// `tasks/cancel`: aborts a working task and marks it `cancelled`; its
    /// new state. A task that is unknown or already ended is `-32602`.
    pub(crate) fn cancel(&mut self, id: &str) -> Result<Value, ErrorObject> {
        self.purge();
        let entry = self.entry_mut(id).ok_or_else(|| not_found(id))?;
        if entry.is_terminal() {
            return Err(ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("Cannot cancel task {id}: it is already {}", entry.status),
            ));
        }
        entry.status = "cancelled";
        entry.status_message = Some("The task was cancelled by request.".to_owned());
        entry.touch();
        entry.input_requests.clear();
        if let Some(task) = entry.abort.take() {
            task.abort();
        }
        let mut error =
            ErrorObject::new(error_code::INTERNAL_ERROR, format!("Task {id} was cancelled"));
        error.data = Some(json!({ "taskId": id }));
        entry.outcome.send_replace(Some(Err(error)));
        Ok(snapshot(id, entry))
    }

    /// `tasks/get`: the task's state.
    pub(crate) fn get(&mut self, id: &str) -> Result<Value, ErrorObject> {
        self.purge();
        let entry = self.entry_mut(id).ok_or_else(|| not_found(id))?;
        Ok(snapshot(id, entry))
    }

    /// Every task's state, oldest first.
    pub(crate) fn list(&mut self) -> Vec<Value> {
        self.purge();
        self.entries.iter().map(|(n, e)| snapshot(&task_id(*n), e)).collect()
    }

    /// `tasks/result`: a receiver of the task's outcome (`None` while it
    /// works).
    pub(crate) fn outcome(
        &mut self,
        id: &str,
    ) -> Result<watch::Receiver<Option<Outcome>>, ErrorObject> {
        self.purge();
        let entry = self.entry_mut(id).ok_or_else(|| not_found(id))?;
        Ok(entry.outcome.subscribe())
    }

    /// Aborts every running tool (the session is ending).
    #[cfg(feature = "http")]
    pub(crate) fn abort_all(&mut self) {
        for entry in self.entries.values_mut() {
            if let Some(task) = entry.abort.take() {
                task.abort();
            }
        }
    }

    fn entry_mut(&mut self, id: &str) -> Option<&mut Entry> {
        let n = id.strip_prefix("task-")?.parse::<u64>().ok()?;
        // `task-01` is not `task-1`.
        if task_id(n) != id {
            return None;
        }
        self.entries.get_mut(&n)
    }

    /// Forgets the finished tasks whose `ttl` has passed.
    fn purge(&mut self) {
        let now = Instant::now();
        self.entries.retain(|_, e| !e.expired(now));
    }
}

fn task_id(n: u64) -> String {
    format!("task-{n}")
}

/// A task's state as the wire shows it (`Task`).
fn snapshot(id: &str, entry: &Entry) -> Value {
    let mut task = json!({
        "taskId": id,
        "status": entry.status,
        "createdAt": entry.created_at,
        "lastUpdatedAt": entry.last_updated_at,
        "ttl": entry.ttl_ms,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = &entry.status_message {
        task["statusMessage"] = json!(message);
    }
    task
}

fn not_found(id: &str) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, format!("Failed to retrieve task: no task {id:?}"))
}

/// The `taskId` parameter of a `tasks/*` request.
pub(crate) fn task_id_param(params: Option<&Value>) -> Result<&str, ErrorObject> {
    params.and_then(|p| p.get("taskId")).and_then(Value::as_str).ok_or_else(|| {
        ErrorObject::new(error_code::INVALID_PARAMS, "the request needs a string taskId")
    })
}

/// `value` with `_meta["io.modelcontextprotocol/related-task"] = {taskId}`
/// added (results and notifications that belong to a task carry it).
pub(crate) fn with_related_task(mut value: Value, id: &str) -> Value {
    if let Value::Object(object) = &mut value {
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if !meta.is_object() {
            *meta = json!({});
        }
        meta[RELATED_TASK_META_KEY] = json!({ "taskId": id });
    }
    value
}

/// An RFC 3339 UTC timestamp with milliseconds: `2025-11-25T10:30:00.000Z`.
pub(crate) fn timestamp(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The Gregorian date `days` days after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for dates from 1970 on).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc_3339() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, "2000-02-29T00:00:00.000Z"),
            (1_764_066_600, "2025-11-25T10:30:00.000Z"),
            (4_102_444_799, "2099-12-31T23:59:59.000Z"),
        ];
        for (secs, expected) in cases {
            assert_eq!(timestamp(UNIX_EPOCH + Duration::from_secs(secs)), expected);
        }
        let with_millis = UNIX_EPOCH + Duration::from_millis(1_764_066_600_042);
        assert_eq!(timestamp(with_millis), "2025-11-25T10:30:00.042Z");
    }

    #[tokio::test]
    async fn the_store_is_bounded_and_keeps_working_tasks() {
        let mut tasks = Tasks::default();
        let (first, _) = tasks.create(None).unwrap();
        for _ in 1..MAX_TASKS {
            tasks.create(Some(1)).unwrap();
        }
        // All working: no room.
        assert_eq!(tasks.create(None).unwrap_err().code, error_code::INTERNAL_ERROR);
        // One finished: it makes room, the working ones stay.
        let second = task_id(2);
        assert!(tasks.finish(&second, Ok(json!({"content": []}))).is_some());
        let (newest, state) = tasks.create(Some(10 * MAX_TTL_MS)).unwrap();
        assert_eq!(state["ttl"], MAX_TTL_MS);
        assert_eq!(state["status"], "working");
        assert_eq!(tasks.list().len(), MAX_TASKS);
        assert!(tasks.get(&second).is_err());
        assert!(tasks.get(&first).is_ok() && tasks.get(&newest).is_ok());
        for bad in ["task-0", "task-01", "task-x", "", "task-999"] {
            assert_eq!(tasks.get(bad).unwrap_err().code, error_code::INVALID_PARAMS, "{bad}");
        }
    }

    #[tokio::test]
    async fn finished_tasks_expire_after_their_ttl() {
        let mut tasks = Tasks::default();
        let (done, _) = tasks.create(Some(50)).unwrap();
        let (working, _) = tasks.create(Some(50)).unwrap();
        let state = tasks.finish(&done, Ok(json!({"content": [], "isError": true}))).unwrap();
        assert_eq!(state["status"], "failed");
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(tasks.get(&done).is_err());
        assert_eq!(tasks.get(&working).unwrap()["status"], "working");
    }

    #[test]
    fn related_task_meta_is_merged() {
        let value = with_related_task(json!({"content": [], "_meta": {"k": 1}}), "task-3");
        assert_eq!(value["_meta"]["k"], 1);
        assert_eq!(value["_meta"][RELATED_TASK_META_KEY], json!({"taskId": "task-3"}));
    }
}
