//! Results sized for a model: the cut as data (multi-byte text, many
//! blocks, binary, structured content, a server's `_meta` request), the
//! spill directory's bound, and `call_tool_sized` against the testkit's
//! `big` tool.

use mcp_host_registry::{
    CutReport, ResultLimits, SpillDir, SpillError, WholeResult, cut_result, size_result,
};
use mcp_proto::types::{
    AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource,
    ImageContent, Resource, TextContent, TextResourceContents, Tool,
};
use mcp_test_support::TempDir;
use serde_json::{Value, json};

const NOT_KEPT: WholeResult<'static> = WholeResult::NotKept("test");

fn result(content: Vec<ContentBlock>) -> CallToolResult {
    CallToolResult { content, ..Default::default() }
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Resource(r) => match &r.resource {
                mcp_proto::types::ResourceContents::Text(t) => format!("resource:{}", t.text),
                mcp_proto::types::ResourceContents::Blob(_) => "resource:blob".to_owned(),
            },
            ContentBlock::Image(_) => "image".to_owned(),
            ContentBlock::Audio(_) => "audio".to_owned(),
            _ => "other".to_owned(),
        })
        .collect()
}

/// Base64 of `n` zero bytes (whole groups only: `n` a multiple of 3).
fn base64_of(n: usize) -> String {
    assert_eq!(n % 3, 0);
    "AAAA".repeat(n / 3)
}

fn image(bytes: usize) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: base64_of(bytes),
        mime_type: "image/png".into(),
        ..Default::default()
    })
}

fn embedded_text(uri: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: TextResourceContents {
            uri: uri.into(),
            text: text.into(),
            mime_type: Some("text/plain".into()),
            ..Default::default()
        }
        .into(),
        annotations: None,
        meta: None,
        extra: Default::default(),
    })
}

fn embedded_blob(uri: &str, bytes: usize) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: BlobResourceContents {
            uri: uri.into(),
            blob: base64_of(bytes),
            mime_type: Some("application/pdf".into()),
            ..Default::default()
        }
        .into(),
        annotations: None,
        meta: None,
        extra: Default::default(),
    })
}

#[test]
fn text_is_cut_at_a_character_boundary_across_blocks() {
    // (blocks, limit, the blocks kept before the notice, characters left out)
    let cases: Vec<(Vec<&str>, usize, Vec<&str>, usize)> = vec![
        (vec!["hello"], 5, vec!["hello"], 0),
        (vec!["hello"], 3, vec!["hel"], 2),
        (vec!["héllo"], 2, vec!["hé"], 3),
        (vec!["日本語テキスト"], 3, vec!["日本語"], 4),
        (vec!["👍🏽👍🏽"], 1, vec!["👍"], 3),
        (vec!["ab", "cd", "ef"], 3, vec!["ab", "c"], 3),
        (vec!["ab", "cd", "ef"], 4, vec!["ab", "cd"], 2),
        (vec!["ab", "cd", "ef"], 0, vec![], 6),
        (vec!["ééé", "ü"], 3, vec!["ééé"], 1),
    ];
    for (blocks, limit, kept, left_out) in cases {
        let whole = result(blocks.iter().map(|t| ContentBlock::text(*t)).collect());
        let (cut, report) = cut_result(&whole, limit, u64::MAX, NOT_KEPT);
        let got = texts(&cut);
        if left_out == 0 {
            assert_eq!(cut, whole, "{blocks:?} under {limit}");
            assert!(!report.is_cut());
            continue;
        }
        let (notice, body) = got.split_last().unwrap();
        assert_eq!(body, kept.as_slice(), "{blocks:?} under {limit}");
        assert_eq!(report.chars_left_out, left_out, "{blocks:?} under {limit}");
        let total: usize = blocks.iter().map(|b| b.chars().count()).sum();
        assert_eq!(report.total_chars, total);
        assert!(
            notice.starts_with(&format!(
                "[result cut to fit: {left_out} of {total} characters left out"
            )),
            "{notice}"
        );
        assert!(notice.ends_with("the whole result was not kept (test)]"), "{notice}");
    }
}

#[test]
fn many_blocks_keep_their_order_and_non_text_blocks() {
    let link = ContentBlock::ResourceLink(Resource {
        uri: "file:///a".into(),
        name: "a".into(),
        ..Default::default()
    });
    let whole = result(vec![
        ContentBlock::text("0123456789"),
        link.clone(),
        embedded_text("file:///b", "abcdefghij"),
        ContentBlock::text("tail"),
    ]);
    let (cut, report) = cut_result(&whole, 15, u64::MAX, NOT_KEPT);
    assert_eq!(cut.content[1], link);
    let got = texts(&cut);
    // The embedded resource is cut (keeping its URI), the last text dropped.
    assert_eq!(&got[..3], ["0123456789", "other", "resource:abcde"]);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(report.chars_left_out, 9);
    let ContentBlock::Resource(r) = &cut.content[2] else { panic!("{:?}", cut.content[2]) };
    assert_eq!(r.resource.uri(), "file:///b");
}

#[test]
fn binary_blocks_over_the_budget_become_descriptions() {
    let audio = ContentBlock::Audio(AudioContent {
        data: base64_of(3 * 1024),
        mime_type: "audio/wav".into(),
        ..Default::default()
    });
    let whole = result(vec![
        image(300),
        image(3 * 1024 * 1024),
        audio,
        embedded_blob("file:///doc.pdf", 600),
        ContentBlock::text("caption"),
    ]);
    // 1 KiB of binary: the first image (300 B) and the blob (600 B) fit;
    // the big image and the audio do not.
    let (cut, report) = cut_result(&whole, 1000, 1024, WholeResult::KeptAt("/c/r.json".as_ref()));
    let got = texts(&cut);
    assert_eq!(got[0], "image");
    assert_eq!(got[1], "[image left out: image/png, 3.0 MiB]");
    assert_eq!(got[2], "[audio left out: audio/wav, 3.0 KiB]");
    assert_eq!(got[3], "resource:blob");
    assert_eq!(got[4], "caption");
    assert_eq!(report.binary_blocks_left_out, 2);
    assert_eq!(report.binary_bytes_left_out, 3 * 1024 * 1024 + 3 * 1024);
    assert_eq!(report.chars_left_out, 0);
    assert_eq!(
        got[5],
        "[result cut to fit: 2 binary blocks (3.0 MiB) left out; the whole result is in /c/r.json]"
    );
    // A blob over the budget names its URI.
    let (cut, _) =
        cut_result(&result(vec![embedded_blob("file:///x.pdf", 3000)]), 10, 10, NOT_KEPT);
    assert_eq!(texts(&cut)[0], "[resource left out: file:///x.pdf, application/pdf, 2.9 KiB]");
}

#[test]
fn structured_content_is_kept_whole_or_removed() {
    let structured = json!({"rows": ["aaaa", "bbbb", "cccc"]});
    let json_len = structured.to_string().chars().count();
    let with = |content: Vec<ContentBlock>| CallToolResult {
        content,
        structured_content: Some(structured.clone()),
        ..Default::default()
    };
    // Fits with the text: unchanged.
    let whole = with(vec![ContentBlock::text("ok")]);
    let (cut, report) = cut_result(&whole, 2 + json_len, u64::MAX, NOT_KEPT);
    assert_eq!((cut, report), (whole.clone(), CutReport::default()));
    // Does not fit after the text: removed; the text stays whole.
    let (cut, report) = cut_result(&whole, 10, u64::MAX, NOT_KEPT);
    assert_eq!(cut.structured_content, None);
    assert!(report.structured_content_removed);
    assert_eq!(report.chars_left_out, json_len - 8);
    assert_eq!(texts(&cut)[0], "ok");
    assert!(texts(&cut)[1].contains("structuredContent removed"), "{:?}", texts(&cut));
    // No text of its own: a prefix of its JSON takes its place.
    let (cut, report) = cut_result(&with(vec![]), 10, u64::MAX, NOT_KEPT);
    assert_eq!(cut.structured_content, None);
    assert_eq!(texts(&cut)[0], &structured.to_string()[..10]);
    assert_eq!(report.chars_left_out, json_len - 10);
    // Other members survive a cut.
    let mut failing = with(vec![ContentBlock::text("x".repeat(50))]);
    failing.is_error = Some(true);
    failing.meta = json!({"k": 1}).as_object().cloned();
    let (cut, _) = cut_result(&failing, 5, u64::MAX, NOT_KEPT);
    assert_eq!(cut.is_error, Some(true));
    assert_eq!(cut.meta, failing.meta);
}

fn tool_asking(value: Value) -> Tool {
    Tool {
        name: "t".into(),
        meta: json!({ "anthropic/maxResultSizeChars": value }).as_object().cloned(),
        ..Default::default()
    }
}

#[test]
fn a_servers_meta_request_raises_the_limit_up_to_the_hosts_maximum() {
    let limits = ResultLimits::new(100, 0).with_max_requested_chars(1000);
    let plain = CallToolResult::default();
    let result_asking = |n: u64| CallToolResult {
        meta: json!({ "anthropic/maxResultSizeChars": n }).as_object().cloned(),
        ..Default::default()
    };
    let cases: Vec<(Option<Tool>, CallToolResult, usize)> = vec![
        (None, plain.clone(), 100),
        (Some(tool_asking(json!(500))), plain.clone(), 500),
        (Some(tool_asking(json!(5000))), plain.clone(), 1000),
        // Never lowered.
        (Some(tool_asking(json!(10))), plain.clone(), 100),
        // Not a whole number: ignored.
        (Some(tool_asking(json!("500"))), plain.clone(), 100),
        (Some(tool_asking(json!(-5))), plain.clone(), 100),
        (Some(tool_asking(json!(2.5))), plain.clone(), 100),
        // On the result; the larger of the two wins.
        (None, result_asking(700), 700),
        (Some(tool_asking(json!(300))), result_asking(200), 300),
        (Some(tool_asking(json!(u64::MAX))), plain.clone(), 1000),
    ];
    for (tool, result, expected) in cases {
        assert_eq!(limits.char_limit_for(tool.as_ref(), &result), expected, "{tool:?} {result:?}");
    }
    // A host maximum below the limit ignores requests.
    let low = ResultLimits::new(100, 0).with_max_requested_chars(50);
    assert_eq!(low.char_limit_for(Some(&tool_asking(json!(500))), &plain), 100);
    // Through size_result: a 600-character result passes under a 700 request.
    let big = result(vec![ContentBlock::text("a".repeat(600))]);
    let sized = size_result("s", "t", Some(&tool_asking(json!(700))), big.clone(), &limits, None);
    assert_eq!(sized.result, big);
    let sized = size_result("s", "t", None, big, &limits, None);
    assert_eq!(sized.report.chars_left_out, 500);
    assert_eq!(sized.spilled_to, None);
    assert!(texts(&sized.result)[1].ends_with("not kept (no spill directory is set)]"));
}

#[test]
fn the_spill_directory_keeps_the_whole_result_within_its_bound() {
    let tmp = TempDir::new("spill-bound");
    let dir = tmp.path().join("results");
    let one = result(vec![ContentBlock::text("x".repeat(1000))]);
    let one_len = serde_json::to_vec(&one).unwrap().len() as u64;
    // Room for three such files.
    let spill = SpillDir::new(&dir, one_len * 3 + one_len / 2);
    // A file that is not the spill directory's own is never removed.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "x".repeat(10_000)).unwrap();
    let mut paths = Vec::new();
    for i in 0..6 {
        let path = spill.keep("srv/../x", &format!("tool {i}"), &one).unwrap();
        let back: CallToolResult = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(back, one);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(&format!("-srv____x-tool_{i}.json")), "{name}");
        assert_eq!(path.parent(), Some(dir.as_path()));
        paths.push(path);
    }
    let left: Vec<_> = paths.iter().filter(|p| p.exists()).collect();
    assert_eq!(left, paths[3..].iter().collect::<Vec<_>>(), "the newest three stay");
    assert!(dir.join("notes.txt").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&paths[5]).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // The directory existed (created above) with the usual mode: it is
        // made private.
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        // A directory everyone may write to is refused, and left as it is.
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = SpillDir::new(&shared, 1 << 20).keep("s", "t", &one).unwrap_err();
        assert!(err.to_string().contains("everyone may write"), "{err}");
        let mode = std::fs::metadata(&shared).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o777, "{mode:o}");
    }
    // A result larger than the whole bound is not kept.
    let huge = result(vec![ContentBlock::text("y".repeat(one_len as usize * 4))]);
    let err = spill.keep("s", "t", &huge).unwrap_err();
    assert!(matches!(err, SpillError::TooLarge { .. }), "{err}");
    // size_result names the file in the notice.
    let limits = ResultLimits::new(10, 0);
    let sized = size_result("s", "t", None, one.clone(), &limits, Some(&spill));
    let path = sized.spilled_to.clone().unwrap();
    let notice = texts(&sized.result).pop().unwrap();
    assert!(notice.ends_with(&format!("the whole result is in {}]", path.display())), "{notice}");
    // A failing spill: the cut happens, the notice says why.
    let sized = size_result("s", "t", None, huge, &limits, Some(&spill));
    assert_eq!(sized.spilled_to, None);
    assert!(texts(&sized.result).pop().unwrap().contains("was not kept (the result"));
}

#[test]
fn text_content_keeps_its_annotations_when_cut() {
    let mut block = TextContent::new("abcdef");
    block.meta = json!({"m": true}).as_object().cloned();
    let (cut, _) = cut_result(&result(vec![ContentBlock::Text(block.clone())]), 2, 0, NOT_KEPT);
    let ContentBlock::Text(t) = &cut.content[0] else { panic!() };
    assert_eq!(t.text, "ab");
    assert_eq!(t.meta, block.meta);
}

#[test]
fn max_result_keys_load_from_toml_and_json_and_set_the_servers_limits() {
    use mcp_host_registry::{Config, LoadOptions, Registry, RegistryOptions};
    let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "files"
command = "files-server"
max_result_chars = 2000
max_result_bytes = 4096
[[mcp_client.servers]]
name = "plain"
command = "plain-server"
"#;
    let json = r#"{"mcpServers": {"files": {"command": "files-server", "max_result_chars": 2000, "max_result_bytes": 4096}, "plain": {"command": "plain-server"}}}"#;
    for text in [toml, json] {
        let loaded =
            Config::from_str_detected(text, &LoadOptions { strict: true, ..Default::default() })
                .unwrap();
        let files = &loaded.config.servers[0];
        assert_eq!((files.max_result_chars, files.max_result_bytes), (Some(2000), Some(4096)));
        let mut options = RegistryOptions::default();
        options.result_limits = ResultLimits::new(100, 200);
        let registry = Registry::new(loaded.config, options);
        let limits = registry.result_limits("files").unwrap();
        assert_eq!((limits.max_chars, limits.max_binary_bytes), (2000, 4096));
        let limits = registry.result_limits("plain").unwrap();
        assert_eq!((limits.max_chars, limits.max_binary_bytes), (100, 200));
    }
    for bad in ["0", "-1", "\"big\"", "1.5"] {
        let text = format!(
            "[mcp_client]\n[[mcp_client.servers]]\nname = \"a\"\ncommand = \"x\"\nmax_result_chars = {bad}\n"
        );
        let err = Config::from_toml_str(&text, &LoadOptions::default()).unwrap_err().to_string();
        assert!(err.contains("max_result_chars") && err.contains("whole number from 1"), "{err}");
    }
}

#[cfg(all(feature = "stdio", feature = "http"))]
#[tokio::test]
async fn call_tool_sized_cuts_the_testkits_big_result_and_spills_it() {
    use mcp_host_registry::{Config, Registry, RegistryOptions, ServerConfig};
    use mcp_proto::client::RequestOptions;

    use crate::common::{args, stdio_connector, testkit};

    mcp_test_support::bounded(async {
        let tmp = TempDir::new("spill-registry");
        let mut options = RegistryOptions::with_connector(stdio_connector());
        options.spill = Some(SpillDir::new(tmp.path(), 10 * 1024 * 1024));
        let mut kit = ServerConfig::stdio("kit", testkit(&[]));
        kit.max_result_chars = Some(1000);
        let config = Config { servers: vec![kit], ..Default::default() };
        let registry = Registry::new(config, options);
        let call = |bytes: u64| {
            registry.call_tool_sized(
                "kit",
                "big",
                args(json!({ "bytes": bytes })),
                RequestOptions::default(),
            )
        };
        // Within the limit: unchanged, nothing kept.
        let sized = call(1000).await.unwrap();
        assert!(!sized.report.is_cut());
        assert_eq!(sized.spilled_to, None);
        assert_eq!(texts(&sized.result), [mcp_test_support::text(&sized.result)]);
        // Over it: cut to 1000 characters, the whole in the spill file.
        let sized = call(250_000).await.unwrap();
        assert_eq!(sized.report.chars_left_out, 249_000);
        let got = texts(&sized.result);
        assert_eq!(got[0].len(), 1000);
        let path = sized.spilled_to.clone().unwrap();
        assert!(path.starts_with(tmp.path()));
        assert!(got[1].contains("249000 of 250000 characters left out"), "{}", got[1]);
        assert!(got[1].contains(&path.display().to_string()));
        let whole: CallToolResult = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(texts(&whole)[0].len(), 250_000);
        // call_tool is untouched by the limits.
        let plain = registry.call_tool("kit", "big", args(json!({ "bytes": 5000 }))).await.unwrap();
        assert_eq!(mcp_test_support::text(&plain).len(), 5000);
        registry.close_all().await;
    })
    .await;
}
