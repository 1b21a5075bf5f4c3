//! `mcpc resources`: list, templates, read, and subscribe (reading the
//! resource again at each update).

use mcp_proto::client::ServerNotification;
use mcp_proto::types::{ReadResourceResult, ResourceContents};
use serde_json::json;

use crate::cli::{Output, ResourcesCommand};
use crate::ctx::{Ctx, Feed};
use crate::failure::Failure;
use crate::output::{describe, emit, emit_json, listing, note, one_line};

/// `mcpc resources ...`.
pub(crate) async fn resources(ctx: &Ctx<'_>, command: &ResourcesCommand) -> Result<u8, Failure> {
    match command {
        ResourcesCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list =
                ctx.with_client(&server, |c| async move { c.list_resources().await }).await?;
            listing(ctx.output(), &server, ("resources", "resource"), &list, |r| {
                let about = describe(&r.name, r.title.as_deref(), r.description.as_deref());
                vec![format!("  {}", r.uri), r.mime_type.clone().unwrap_or_default(), about]
            });
        }
        ResourcesCommand::Templates { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = ctx
                .with_client(&server, |c| async move { c.list_resource_templates().await })
                .await?;
            listing(ctx.output(), &server, ("resourceTemplates", "template"), &list, |r| {
                let about = describe(&r.name, r.title.as_deref(), r.description.as_deref());
                vec![
                    format!("  {}", r.uri_template),
                    r.mime_type.clone().unwrap_or_default(),
                    about,
                ]
            });
        }
        ResourcesCommand::Read { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            let uri = rest[0].clone();
            let result =
                ctx.with_client(&server, |c| async move { c.read_resource(&uri).await }).await?;
            print_contents(ctx.output(), &server, &result);
        }
        ResourcesCommand::Subscribe { words } => {
            let (server, rest) = ctx.split(words, 1)?;
            return subscribe(ctx, &server, &rest[0]).await;
        }
    }
    Ok(0)
}

/// The contents of a read resource: text as it is, a blob as its size; an
/// MCP App's view with its metadata on stderr (so stdout stays the HTML).
fn print_contents(output: Output, server: &str, result: &ReadResourceResult) {
    if output == Output::Json {
        let mut v = json!(result);
        v["server"] = json!(server);
        emit_json(&v);
        return;
    }
    let several = result.contents.len() > 1;
    for item in &result.contents {
        if several {
            emit(&format!(
                "--- {} ({})",
                one_line(item.uri()),
                one_line(item.mime_type().unwrap_or(""))
            ));
        }
        if item.is_app_view() {
            view_notes(item);
        }
        match item {
            ResourceContents::Text(t) => emit(t.text.strip_suffix('\n').unwrap_or(&t.text)),
            ResourceContents::Blob(b) => emit(&format!(
                "[blob: {}, {} bytes base64-encoded; --output json shows it]",
                one_line(b.mime_type.as_deref().unwrap_or("application/octet-stream")),
                b.blob.len()
            )),
        }
    }
}

/// What an MCP App's view asks of its host (its `_meta.ui`): the origins
/// it may reach, the browser permissions, its origin and border; absent
/// lists are the host's restrictive default.
fn view_notes(item: &ResourceContents) {
    let ui = item.ui().unwrap_or_default();
    let csp = ui.csp.clone().unwrap_or_default();
    let list = |items: &[String]| {
        if items.is_empty() { "none".to_owned() } else { one_line(&items.join(" ")).into_owned() }
    };
    note(&format!("MCP App view {}", one_line(item.uri())));
    note(&format!("  connect: {}", list(&csp.connect_domains)));
    note(&format!("  resources: {}", list(&csp.resource_domains)));
    note(&format!("  frames: {}", list(&csp.frame_domains)));
    note(&format!("  base URIs: {}", list(&csp.base_uri_domains)));
    let permissions: Vec<String> = ui.permission_names().into_iter().map(str::to_owned).collect();
    note(&format!("  permissions: {}", list(&permissions)));
    if let Some(domain) = &ui.domain {
        note(&format!("  domain: {}", one_line(domain)));
    }
    if let Some(border) = ui.prefers_border {
        note(&format!("  border: {}", if border { "yes" } else { "no" }));
    }
}

/// `resources subscribe`: reads the resource, then reads it again at each
/// update, until Ctrl-C.
async fn subscribe(ctx: &Ctx<'_>, server: &str, uri: &str) -> Result<u8, Failure> {
    let uris = vec![uri.to_owned()];
    let mut feed = ctx.with_client(server, |c| Feed::open(c, uris, false)).await?;
    let read = |uri: String| async move {
        ctx.with_client(server, |c| async move { c.read_resource(&uri).await }).await
    };
    let first = read(uri.to_owned()).await?;
    if ctx.output() == Output::Text {
        emit(&format!("{server}: subscribed to {uri} (Ctrl-C ends)"));
    }
    print_contents(ctx.output(), server, &first);
    while let Some(n) = feed.recv().await {
        if let ServerNotification::ResourceUpdated(p) = n
            && p.uri == uri
        {
            if ctx.output() == Output::Text {
                emit(&format!("--- updated: {uri}"));
            }
            let again = read(uri.to_owned()).await?;
            print_contents(ctx.output(), server, &again);
        }
    }
    Err(feed.ended(server))
}
