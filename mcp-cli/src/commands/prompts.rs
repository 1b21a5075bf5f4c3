//! `mcpc prompts`: list, and get with arguments.

use std::collections::BTreeMap;

use mcp_proto::types::{ContentBlock, ResourceContents};
use serde_json::{Value, json};

use crate::cli::{Output, PromptsCommand};
use crate::ctx::{Ctx, pairs};
use crate::failure::Failure;
use crate::output::{about, emit, emit_json, listing, one_line};

/// `mcpc prompts ...`.
pub(crate) async fn prompts(ctx: &Ctx<'_>, command: &PromptsCommand) -> Result<u8, Failure> {
    match command {
        PromptsCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = ctx.with_client(&server, |c| async move { c.list_prompts().await }).await?;
            listing(ctx.output(), &server, ("prompts", "prompt"), &list, |p| {
                let args: Vec<String> = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|arg| {
                        let star = if arg.required == Some(true) { "" } else { "?" };
                        format!("{}{star}", arg.name)
                    })
                    .collect();
                let about = about(&p.name, p.title.as_deref(), p.description.as_deref());
                vec![format!("  {}", p.name), args.join(" "), about]
            });
        }
        PromptsCommand::Get { words } => {
            // [SERVER] PROMPT key=value...: the first word is a server when
            // the second is no key=value.
            let (server, rest) = match words.as_slice() {
                [first, second, ..] if !second.contains('=') => {
                    (ctx.pick(Some(first))?, &words[1..])
                }
                _ => (ctx.pick(None)?, &words[..]),
            };
            let name = rest[0].clone();
            let arguments: BTreeMap<String, String> = pairs(&rest[1..])?.into_iter().collect();
            let arguments = (!arguments.is_empty()).then_some(arguments);
            let result = ctx
                .with_client(&server, |c| async move { c.get_prompt(&name, arguments).await })
                .await?;
            match ctx.output() {
                Output::Json => {
                    let mut v = json!(result);
                    v["server"] = json!(server);
                    emit_json(&v);
                }
                Output::Text => {
                    if let Some(d) = &result.description {
                        emit(&format!("{server}: {d}"));
                    }
                    for m in &result.messages {
                        emit(&format!(
                            "[{}] {}",
                            one_line(m.role.as_str()),
                            content_text(&m.content)
                        ));
                    }
                }
            }
        }
    }
    Ok(0)
}

/// A content block as text: text as it is, anything else by its kind.
fn content_text(c: &ContentBlock) -> String {
    match c {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => format!("[resource {}]\n{}", t.uri, t.text),
            ResourceContents::Blob(b) => format!("[resource {}]", b.uri),
        },
        ContentBlock::ResourceLink(link) => format!("[link: {}]", link.uri),
        ContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
        // A kind this client does not know: its type and media type.
        ContentBlock::Unknown(v) => match v.get("type").and_then(Value::as_str) {
            Some(kind) => {
                format!("[{kind}: {}]", v.get("mimeType").and_then(Value::as_str).unwrap_or(""))
            }
            None => v.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_as_text() {
        let block = |v: Value| serde_json::from_value::<ContentBlock>(v).unwrap();
        assert_eq!(content_text(&block(json!({"type": "text", "text": "hi"}))), "hi");
        assert_eq!(
            content_text(&block(json!({"type": "image", "mimeType": "image/png", "data": ""}))),
            "[image: image/png]"
        );
        assert_eq!(
            content_text(&block(
                json!({"type": "resource", "resource": {"uri": "u", "text": "t"}})
            )),
            "[resource u]\nt"
        );
    }
}
