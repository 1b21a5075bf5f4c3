//! The stateless era's input rounds, performed: the server's input
//! requests go to the host's handlers, within the bounds
//! [`InputRounds`] and [`AnswerBudget`] decide, and the request's
//! parameters for the retry are built.

use mcp_proto::client::ClientError;
use mcp_proto::client::decide::input::retry_params;
use mcp_proto::client::decide::{AnswerBudget, InputRounds};
use mcp_proto::types::InputRequest;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::inner::Inner;
use crate::send::Params;
use crate::transport::Transport;

/// Fulfils an `input_required` answer (`raw`, its JSON text) through the
/// host's handlers and returns the parameters of the retry: the original
/// ones with `inputResponses` (when the server asked for input) and the
/// exact `requestState` (only when the server sent one). The round's
/// bounds are checked before anything is decoded or asked.
pub(crate) async fn fulfil<T: Transport, P: Serialize + ?Sized>(
    inner: &Inner<T>,
    method: &str,
    rounds: &mut InputRounds,
    raw: &str,
    params: Params<'_, P>,
) -> Result<Value, ClientError> {
    let asked = rounds.handle_input_required(method, raw)?;
    let responses = match &asked.input_requests {
        Some(requests) => {
            let mut budget = rounds.answer_budget(method);
            Some(answer_inputs(inner, method, requests.iter(), &mut budget).await?)
        }
        None => None,
    };
    retry_params(method, params.into_value(method)?, responses, asked.request_state)
}

/// Answers a server's input requests (of an `input_required` result or of
/// a task) through the host's handlers, by their keys, one at a time, each
/// answer counted against `budget` before the next request is asked.
pub(crate) async fn answer_inputs<'r, T: Transport>(
    inner: &Inner<T>,
    method: &str,
    requests: impl Iterator<Item = (&'r String, &'r InputRequest)>,
    budget: &mut AnswerBudget,
) -> Result<Map<String, Value>, ClientError> {
    let mut responses = Map::new();
    let handlers = &inner.options.handlers;
    for (key, request) in requests {
        tracing::debug!(server = %inner.options.name, method, key, input = %request.method, "fulfilling an input request");
        match handlers.handle(&request.method, request.params.clone()).await {
            Ok(result) => {
                budget.add(&result)?;
                responses.insert(key.clone(), result);
            }
            Err(error) => {
                return Err(ClientError::InputRequestFailed {
                    method: method.into(),
                    key: key.clone(),
                    input_method: request.method.clone(),
                    error: Box::new(error),
                });
            }
        }
    }
    Ok(responses)
}
