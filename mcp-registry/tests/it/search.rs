//! Tool search on real tool definitions: the official "everything" and
//! filesystem servers' lists (`tests/fixtures/tools`, with their source).

use mcp_host_registry::ToolIndex;
use mcp_proto::types::Tool;

fn fixture(name: &str) -> Vec<Tool> {
    let path = format!("{}/tests/fixtures/tools/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(value["tools"].clone()).unwrap()
}

fn index() -> ToolIndex {
    let everything = fixture("everything");
    let filesystem = fixture("filesystem");
    assert_eq!((everything.len(), filesystem.len()), (13, 14));
    ToolIndex::from_tools(
        everything
            .iter()
            .map(|t| ("everything", t))
            .chain(filesystem.iter().map(|t| ("filesystem", t)))
            .collect::<Vec<_>>(),
    )
}

/// Each query, and tools that must be among its first `n` results (the
/// first listed must be first when `n` is 1).
const QUERIES: &[(&str, usize, &[&str])] = &[
    ("read a file", 3, &["read_text_file", "read_file"]),
    ("add two numbers", 1, &["get-sum"]),
    ("sum", 1, &["get-sum"]),
    ("echo a message back", 1, &["echo"]),
    ("rename a file", 1, &["move_file"]),
    ("create a new directory", 1, &["create_directory"]),
    ("list the files in a directory", 2, &["list_directory"]),
    ("find files matching a glob pattern", 1, &["search_files"]),
    ("compress a file with gzip", 1, &["gzip-file-as-resource"]),
    ("show environment variables", 1, &["get-env"]),
    ("image", 3, &["get-tiny-image", "read_media_file"]),
    ("file size and permissions metadata", 1, &["get_file_info"]),
    ("edit lines in a text file", 3, &["edit_file"]),
    ("long running operation with progress", 1, &["trigger-long-running-operation"]),
];

#[test]
fn queries_find_the_right_tools() {
    let index = index();
    for (query, n, expected) in QUERIES {
        let hits = index.search(query, *n);
        let found: Vec<&str> = hits.iter().map(|h| h.tool.as_str()).collect();
        for tool in *expected {
            assert!(found.contains(tool), "{query:?}: {tool} not in the first {n}: {found:?}");
        }
        if *n == 1 {
            assert_eq!(found, expected[..1], "{query:?}");
        }
    }
}

#[test]
fn results_are_ordered_bounded_and_named_by_server() {
    let index = index();
    let hits = index.search("file", 5);
    assert_eq!(hits.len(), 5);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{hits:?}");
    assert!(hits.iter().all(|h| h.server == "filesystem" || h.tool == "gzip-file-as-resource"));
    let sum = &index.search("sum", 1)[0];
    assert_eq!((sum.server.as_str(), sum.tool.as_str()), ("everything", "get-sum"));
    assert!(index.search("weather forecast", 10).is_empty());
    assert!(index.search("the of a", 10).is_empty());
    assert!(index.search("file", 0).is_empty());
    assert_eq!(index.search("file", 100).len(), index.search("file", 1000).len());
}
