//! Tasks of the stateless era: the tasks extension (2026-07-28,
//! `io.modelcontextprotocol/tasks`). A `tools/call` of a task-supporting
//! tool from a request that declares the extension may be answered with a
//! task (`resultType: "task"`), the tool running on; `tasks/get` shows it
//! (and its input requests, result or error), `tasks/update` answers its
//! input requests, `tasks/cancel` stops it. The rules are
//! `mcp_server_io::tasks`; the store is [`crate::tasks`], shared with the
//! handshake era's tasks.
//!
//! Which call becomes a task is the server's choice: a tool that requires
//! one always does; an optional one does when its work has to be waited
//! for, and is answered at once otherwise.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_server_io::Reply;
use mcp_server_io::tasks::{self as wire, Dispatch};
use serde_json::{Map, Value};

use crate::modern::RequestMeta;
use crate::server::Server;
use crate::tools::{self, Call};
use crate::{task_fixtures, tasks};

/// How long a task waits for the client's answers to its input requests
/// before it fails: as long as a task is kept by default.
const INPUT_TIMEOUT: Duration = Duration::from_millis(tasks::DEFAULT_TTL_MS);

/// The work of a task: what its tool call ends with.
pub(crate) type Work = Pin<Box<dyn Future<Output = tasks::Outcome> + Send + 'static>>;

/// Makes a task's work, given the server and the task's id (to ask for
/// input with [`ask`]).
pub(crate) type MakeWork = Box<dyn FnOnce(Server, String) -> Work + Send + 'static>;

/// What a call the server may make a task of starts.
pub(crate) enum Start {
    /// The answer, now: no task.
    Now(Result<Value, ErrorObject>),
    /// A task doing this work.
    Task(MakeWork),
    /// No answer at all (the process is on its way out).
    Silent,
}

impl Server {
    /// A stateless-era `tools/call` when it concerns tasks: `-32021` for a
    /// tool that runs only as a task from a request without the
    /// extension, a task (or the answer, when the work is done at once)
    /// for a task-supporting tool from one with it. `None`: a plain call
    /// (an unknown tool too, which the plain path answers).
    pub(crate) fn stateless_call(
        &self,
        call: &Call,
        name: &str,
        arguments: impl FnOnce() -> Result<Map<String, Value>, ErrorObject>,
        meta: &RequestMeta,
    ) -> Option<Reply> {
        let support = self.task_support(name)?;
        match wire::dispatch(support, wire::declared(meta)) {
            Dispatch::MissingExtension => Some(Reply::Now(Err(wire::missing_extension()))),
            Dispatch::Task => Some(match arguments() {
                Err(error) => Reply::Now(Err(error)),
                Ok(arguments) => match self.task_start(call, name, &arguments, meta) {
                    Start::Now(result) => Reply::Now(result),
                    Start::Task(make) => Reply::Now(self.start_task(make)),
                    Start::Silent => Reply::Silent,
                },
            }),
            // `Dispatch::Sync`.
            _ => None,
        }
    }

    /// What a task-supporting tool starts: the fixture's own way, else the
    /// testkit's tool run with no progress (its request is answered
    /// before the work ends), a task when it has to be waited for.
    fn task_start(
        &self,
        call: &Call,
        name: &str,
        arguments: &Map<String, Value>,
        meta: &RequestMeta,
    ) -> Start {
        if self.config().conformance_fixtures
            && let Some(start) = task_fixtures::start(name, arguments, meta)
        {
            return start;
        }
        let call = Call { progress_token: None, ..call.clone() };
        match tools::run(call, name, arguments.clone()) {
            tools::Outcome::Reply(result) => Start::Now(result),
            tools::Outcome::Text(json) => Start::Now(tools::value_of(&json)),
            tools::Outcome::Spawn(future) => {
                Start::Task(Box::new(|_, _| Box::pin(async move { Ok(future.await) })))
            }
            tools::Outcome::NoReply => Start::Silent,
        }
    }

    /// Creates a task, runs its work on its own and answers with the
    /// task: only once it is in the store, so a `tasks/get` right after
    /// finds it.
    fn start_task(&self, make: MakeWork) -> Result<Value, ErrorObject> {
        let (task_id, _) = self.state().tasks.create(None)?;
        let handle = self.state().tasks.handle(&task_id)?;
        let work = make(self.clone(), task_id.clone());
        let server = self.clone();
        let id = task_id.clone();
        // Locked until the handle is stored, as in `spawn_request`.
        let mut state = self.state();
        let running = tokio::spawn(async move {
            let outcome = work.await;
            let status = wire::outcome_status(&outcome);
            server.state().tasks.finish_as(&id, outcome, status);
        });
        state.tasks.set_abort(&task_id, running.abort_handle());
        Ok(handle)
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel` of the stateless era:
    /// `-32021` unless the request declares the extension; `-32602` for a
    /// task the server does not have.
    pub(crate) fn task_method(
        &self,
        method: &str,
        params: Option<&Value>,
        meta: &RequestMeta,
    ) -> Result<Value, ErrorObject> {
        if !wire::declared(meta) {
            return Err(wire::missing_extension());
        }
        let task_id = wire::task_id(params)?;
        let mut state = self.state();
        match method {
            methods::TASKS_GET => state.tasks.detailed(task_id),
            methods::TASKS_UPDATE => {
                let responses = wire::update_responses(params)?;
                state.tasks.update(task_id, responses).map(|()| wire::ack())
            }
            _ => {
                if wire::cancel_applies(state.tasks.status(task_id)?) {
                    state.tasks.cancel(task_id)?;
                }
                Ok(wire::ack())
            }
        }
    }
}

/// Waits, in a task's work, for the client's answers to `requests` (the
/// task is `input_required` until each key is answered through
/// `tasks/update`), at most [`INPUT_TIMEOUT`]: the answers by key.
pub(crate) async fn ask(
    server: &Server,
    task_id: &str,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, ErrorObject> {
    let keys: Vec<String> = requests.keys().cloned().collect();
    let receiver = server.state().tasks.ask(task_id, requests);
    let gone = || ErrorObject::new(error_code::INTERNAL_ERROR, "the task is gone");
    let mut receiver = receiver.ok_or_else(gone)?;
    let all = |answers: &Map<String, Value>| keys.iter().all(|k| answers.contains_key(k));
    match tokio::time::timeout(INPUT_TIMEOUT, receiver.wait_for(all)).await {
        Ok(Ok(answers)) => Ok(keys
            .iter()
            .filter_map(|k| answers.get(k).map(|answer| (k.clone(), answer.clone())))
            .collect()),
        Ok(Err(_)) => Err(gone()),
        Err(_) => Err(ErrorObject::new(
            error_code::INTERNAL_ERROR,
            format!("no answer to the task's input requests within {INPUT_TIMEOUT:?}"),
        )),
    }
}
