//! What `mcpc` shapes for a model: `--max-result` (and a server's
//! `max_result_chars`) against the demo's and the testkit's `big` tool,
//! and `tools --schema-for`.

use crate::run::Sandbox;
use crate::run::json_of;

/// The cut text, the notice, and the file the whole result went to.
fn cut_output(stdout: &str) -> (String, String, std::path::PathBuf) {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let notice = lines.pop().expect("a notice").to_owned();
    let path = notice
        .split("the whole result is in ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("no file in {notice:?}"));
    (lines.join("\n"), notice.clone(), std::path::PathBuf::from(path))
}

#[test]
fn max_result_cuts_the_result_and_keeps_the_whole_in_the_cache() {
    let s = Sandbox::new("max-result");
    let r = s.run(&["--max-result", "100", "call", "demo", "big", "bytes=1000"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (text, notice, path) = cut_output(&r.stdout);
    assert_eq!(text.len(), 100, "{r:?}");
    assert!(notice.starts_with("[result cut to fit: 900 of 1000 characters left out;"), "{notice}");
    assert!(path.starts_with(s.dir.join("cache").join("mcpc").join("results")), "{path:?}");
    let whole: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(whole["content"][0]["text"].as_str().unwrap().len(), 1000);
    assert!(whole["content"][0]["text"].as_str().unwrap().starts_with(&text));
    // Without the flag the result is whole.
    let r = s.run(&["call", "demo", "big", "bytes=1000"]);
    assert_eq!((r.code, r.stdout.trim_end().len()), (0, 1000), "{r:?}");
    // In JSON, the cut result.
    let r = s.run(&["--output", "json", "--max-result", "10", "call", "demo", "big", "bytes=50"]);
    let v = json_of(&r);
    assert_eq!(v["content"][0]["text"].as_str().unwrap().len(), 10, "{v}");
    assert!(v["content"][1]["text"].as_str().unwrap().contains("40 of 50 characters"), "{v}");
    // Not a positive number: a usage error.
    for bad in ["0", "-5", "lots"] {
        let r = s.run(&["--max-result", bad, "call", "demo", "big", "bytes=5"]);
        assert_eq!(r.code, 2, "{bad}: {r:?}");
    }
}

#[test]
fn a_servers_max_result_chars_cuts_its_results() {
    let s = Sandbox::new("max-result-config");
    let testkit = mcp_testkit::binary_path().to_string_lossy().into_owned();
    let config = format!(
        "[mcp_client]\n[[mcp_client.servers]]\nname = \"kit\"\ncommand = {testkit:?}\nargs = [\"stdio\"]\nmax_result_chars = 30\n"
    );
    s.write_approved("mcp.toml", &config);
    let r = s.run(&["call", "kit", "big", "bytes=200"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (text, notice, path) = cut_output(&r.stdout);
    assert_eq!(text.len(), 30);
    assert!(notice.contains("170 of 200 characters left out"), "{notice}");
    assert!(path.is_file());
    // The flag takes the place of the configured limit.
    let r = s.run(&["--max-result", "500", "call", "kit", "big", "bytes=200"]);
    assert_eq!((r.code, r.stdout.trim_end().len()), (0, 200), "{r:?}");
}

#[test]
fn tools_schema_for_shapes_each_input_schema() {
    let s = Sandbox::new("schema-for");
    let v = json_of(&s.run(&["--output", "json", "tools", "demo", "--schema-for", "strict"]));
    assert_eq!((v["server"].as_str(), v["target"].as_str()), (Some("demo"), Some("strict")), "{v}");
    let tools = v["tools"].as_array().unwrap();
    assert!(tools.len() > 5, "{v}");
    for tool in tools {
        let parameters = &tool["parameters"];
        assert_eq!(parameters["additionalProperties"], false, "{tool}");
        let properties = parameters["properties"].as_object().unwrap();
        let required: Vec<&str> =
            parameters["required"].as_array().unwrap().iter().filter_map(|r| r.as_str()).collect();
        assert_eq!(required.len(), properties.len(), "{tool}");
    }
    let big = tools.iter().find(|t| t["name"] == "big").unwrap();
    assert_eq!(big["parameters"]["properties"]["bytes"]["type"], "integer");
    // `slow` has an optional property: it accepts null.
    let slow = tools.iter().find(|t| t["name"] == "slow").unwrap();
    let steps = &slow["parameters"]["properties"]["steps"]["type"];
    assert!(steps.as_array().is_some_and(|t| t.contains(&serde_json::json!("null"))), "{slow}");
    // Text: the tool's name, then its schema.
    let r = s.run(&["tools", "demo", "--schema-for", "plain"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("big:\n{"), "{r:?}");
    // With --search: a usage error.
    let r = s.run(&["tools", "--schema-for", "plain", "--search", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
}
