//! Task-augmented `tools/call` and the `tasks/*` methods: the server's side
//! of the task store in [`crate::tasks`].

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_server_io::Reply;
use mcp_server_io::era;
use serde_json::{Value, json};

use crate::server::{Addr, Server, invalid_params};
use crate::{tasks, tools};

impl Server {
    /// A task-augmented `tools/call`: answered at once with the new task
    /// (`CreateTaskResult`), the tool running on in the background.
    pub(crate) fn call_tool_as_task(
        &self,
        id: Addr,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        progress_token: Option<Value>,
        task: &Value,
    ) {
        // Answered here, before the tool runs, so the task's first status
        // notification never overtakes it.
        let ttl = match task.get("ttl") {
            _ if !task.is_object() => Err(invalid_params("task must be an object")),
            None | Some(Value::Null) => Ok(None),
            Some(ttl) => {
                ttl.as_u64().map(Some).ok_or_else(|| invalid_params("task.ttl must be an integer"))
            }
        };
        let ttl = match ttl {
            Ok(ttl) => ttl,
            Err(e) => return self.reply(id, Err(e)),
        };
        let support = tools::definitions(self.extra_tool(), false)
            .into_iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone());
        let Some(support) = support else {
            return self.reply(id, Err(invalid_params(format!("Unknown tool: {name}"))));
        };
        // Absent `execution.taskSupport` is "forbidden": -32601, as the
        // tasks page asks.
        if !matches!(support.as_str(), Some("optional" | "required")) {
            let message = format!("Tool {name} does not support task-augmented calls");
            return self.reply(id, Err(ErrorObject::new(error_code::METHOD_NOT_FOUND, message)));
        }
        let created = self.state().tasks.create(ttl);
        let (task_id, task) = match created {
            Ok(created) => created,
            Err(e) => return self.reply(id, Err(e)),
        };
        self.reply(id.clone(), Ok(json!({ "task": task })));
        let call = tools::Call {
            server: self.clone(),
            id,
            progress_token,
            task: Some(task_id.clone()),
            modern: None,
        };
        match tools::run(call, name, arguments) {
            tools::Outcome::Reply(outcome) => self.finish_task(&task_id, outcome),
            tools::Outcome::Text(json) => self.finish_task(&task_id, tools::value_of(&json)),
            tools::Outcome::Spawn(future) => {
                let server = self.clone();
                let id = task_id.clone();
                // Locked until the handle is stored, as in `spawn_request`.
                let mut state = self.state();
                let running = tokio::spawn(async move {
                    let result = future.await;
                    server.finish_task(&id, Ok(result));
                });
                state.tasks.set_abort(&task_id, running.abort_handle());
            }
            tools::Outcome::NoReply => {}
        }
    }

    /// Ends a task with its tool's outcome and tells the client.
    fn finish_task(&self, task_id: &str, outcome: tasks::Outcome) {
        let task = self.state().tasks.finish(task_id, outcome);
        if let Some(task) = task {
            self.notify(methods::NOTIFICATION_TASKS_STATUS, Some(task), None);
        }
    }

    pub(crate) fn cancel_task(&self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let task_id = tasks::task_id_param(params)?;
        let task = self.state().tasks.cancel(task_id)?;
        self.notify(methods::NOTIFICATION_TASKS_STATUS, Some(task.clone()), None);
        Ok(task)
    }

    /// `tasks/result`: the task's outcome, once it has one, with the
    /// related-task `_meta`.
    pub(crate) fn task_result(&self, params: Option<Value>) -> Reply {
        let task_id = match tasks::task_id_param(params.as_ref()) {
            Ok(task_id) => task_id.to_owned(),
            Err(e) => return Reply::Now(Err(e)),
        };
        let receiver = self.state().tasks.outcome(&task_id);
        let mut receiver = match receiver {
            Ok(receiver) => receiver,
            Err(e) => return Reply::Now(Err(e)),
        };
        let with_meta = move |outcome: Option<tasks::Outcome>| match outcome {
            Some(outcome) => outcome.map(|result| tasks::with_related_task(result, &task_id)),
            // The store dropped the task without an outcome: only the whole
            // server going does that, and then nobody reads this.
            None => Err(ErrorObject::new(error_code::INTERNAL_ERROR, "the task is gone")),
        };
        let ready = receiver.borrow_and_update().clone();
        if ready.is_some() {
            return Reply::Now(with_meta(ready));
        }
        Reply::Later(Box::pin(async move {
            let outcome = receiver.wait_for(Option::is_some).await.ok().and_then(|v| v.clone());
            with_meta(outcome)
        }))
    }

    /// Whether tasks are on: for revision 2025-11-25 and later (and for
    /// revisions the server does not know).
    pub(crate) fn tasks_enabled(&self) -> bool {
        self.negotiated_version().as_deref().is_some_and(era::supports_tasks)
    }
}
