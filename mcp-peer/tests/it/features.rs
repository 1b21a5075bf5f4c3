//! The server's features through the typed API: lists followed over
//! pages, resources and templates, reads and subscriptions, prompts and
//! completion.

use mcp_peer::ServerNotification;
use mcp_peer::memory::MemoryError;
use mcp_proto::client::ClientError;
use mcp_proto::types::CallToolResult;
use mcp_testkit::Config;
use serde_json::json;

use crate::common::{Pair, options, pair, pair_with, text};

#[tokio::test(start_paused = true)]
async fn paginated_lists_are_followed_to_the_end() {
    let config = Config { page_size: Some(2), ..Config::default() };
    let Pair { client, .. } = pair_with(options(), config);
    let page = client.list_tools_page(None).await.unwrap();
    assert_eq!(page.tools.len(), 2);
    assert!(page.next_cursor.is_some());
    let all = client.list_tools().await.unwrap();
    assert!(all.len() > 2);
}

#[tokio::test(start_paused = true)]
async fn resources_templates_reads_and_subscriptions() {
    let config = Config { page_size: Some(2), ..Config::default() };
    let Pair { client, .. } = pair_with(options(), config);
    // Followed over three pages.
    let resources = client.list_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris.len(), 6, "{uris:?}");
    assert!(uris.contains(&"test://static/blob/1"));
    let page = client.list_resources_page(None).await.unwrap();
    assert_eq!(page.resources.len(), 2);
    assert!(page.next_cursor.is_some());
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://static/text/{id}");

    let text = client.read_resource("test://static/text/2").await.unwrap();
    match &text.contents[0] {
        mcp_proto::types::ResourceContents::Text(t) => assert!(!t.text.is_empty()),
        other => panic!("{other:?}"),
    }
    let blob = client.read_resource("test://static/blob/1").await.unwrap();
    assert!(matches!(blob.contents[0], mcp_proto::types::ResourceContents::Blob(_)));
    let err = client.read_resource("test://nowhere").await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32002),
        other => panic!("{other:?}"),
    }

    let mut stream = client.notifications();
    let uri = "test://static/text/1";
    client.subscribe_resource(uri).await.unwrap();
    let touched = client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(text_of(&touched), "touched");
    match stream.recv().await {
        Some(ServerNotification::ResourceUpdated(u)) => assert_eq!(u.uri, uri),
        other => panic!("{other:?}"),
    }
    client.unsubscribe_resource(uri).await.unwrap();
    let touched = client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(text_of(&touched), "not subscribed");
    // Resource and prompt list changes reach the stream as their own kinds.
    client.call_tool("change", json!({"list": "resources"})).await.unwrap();
    assert_eq!(stream.recv().await, Some(ServerNotification::ResourceListChanged));
    client.call_tool("change", json!({"list": "prompts"})).await.unwrap();
    assert_eq!(stream.recv().await, Some(ServerNotification::PromptListChanged));
}

fn text_of(result: &CallToolResult) -> String {
    text(result)
}

#[tokio::test(start_paused = true)]
async fn prompts_and_completion() {
    let Pair { client, .. } = pair(options());
    let prompts = client.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["simple", "greet"]);
    let args = [("name".to_owned(), "Ada".to_owned())].into_iter().collect();
    let greeting = client.get_prompt("greet", Some(args)).await.unwrap();
    let shown = serde_json::to_string(&greeting.messages).unwrap();
    assert!(shown.contains("Hello, Ada!"), "{shown}");
    let err = client.get_prompt("greet", None).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32602),
        other => panic!("{other:?}"),
    }
    let params: mcp_proto::types::CompleteRequestParams = serde_json::from_value(json!({
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "b"},
    }))
    .unwrap();
    let completed = client.complete(&params).await.unwrap();
    assert_eq!(completed.completion.values, ["bob"]);
}
