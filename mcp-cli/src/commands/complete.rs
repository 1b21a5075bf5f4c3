//! `mcpc complete`: the values a server suggests for an argument of a
//! prompt or a resource template.

use std::collections::BTreeMap;

use mcp_proto::types::{
    CompleteArgument, CompleteContext, CompleteRequestParams, JsonObject, PromptReference,
    Reference, ResourceTemplateReference,
};
use serde_json::json;

use crate::cli::{CompleteArgs, Output};
use crate::ctx::{Ctx, pairs};
use crate::failure::Failure;
use crate::output::{emit, emit_keyed, note, one_line};

/// `mcpc complete`: the values a server suggests for an argument.
pub(crate) async fn complete(ctx: &Ctx<'_>, args: &CompleteArgs) -> Result<u8, Failure> {
    // [SERVER] ARG=VALUE [context...]: the first word is a server when it
    // has no `=`.
    let (server, rest) = match args.words.as_slice() {
        [first, rest @ ..] if !first.contains('=') => (ctx.pick(Some(first))?, rest),
        _ => (ctx.pick(None)?, &args.words[..]),
    };
    let mut given = pairs(rest)?.into_iter();
    let Some((argument, value)) = given.next() else {
        return Err(Failure::usage(
            "complete needs ARGUMENT=VALUE-SO-FAR (the value may be empty)",
        ));
    };
    let context: BTreeMap<String, String> = given.collect();
    let reference = match (&args.prompt, &args.resource) {
        (Some(name), _) => {
            Reference::Prompt(PromptReference { name: name.clone(), ..Default::default() })
        }
        (None, Some(uri)) => Reference::Resource(ResourceTemplateReference {
            uri: uri.clone(),
            ..Default::default()
        }),
        (None, None) => {
            return Err(Failure::usage("complete needs --prompt NAME or --resource URI"));
        }
    };
    let params = CompleteRequestParams {
        reference,
        argument: CompleteArgument { name: argument, value, ..Default::default() },
        context: (!context.is_empty())
            .then(|| CompleteContext { arguments: Some(context), ..Default::default() }),
        meta: None,
        extra: JsonObject::new(),
    };
    let result = ctx.with_client(&server, |c| async move { c.complete(&params).await }).await?;
    let completion = &result.completion;
    match ctx.output() {
        Output::Json => emit_keyed(&server, "completion", json!(completion)),
        Output::Text => {
            for v in &completion.values {
                emit(&one_line(v));
            }
            if completion.has_more == Some(true) {
                let total = completion.total.map(|t| t.to_string()).unwrap_or_default();
                note(&format!("mcpc: more values exist ({total} in all)"));
            }
        }
    }
    Ok(0)
}
