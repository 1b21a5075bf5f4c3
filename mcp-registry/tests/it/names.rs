//! Flat tool names: unique, within 64 characters of `[A-Za-z0-9_-]`,
//! stable and reversible, for any set of server and tool names.

use std::collections::HashSet;

use mcp_host_registry::{MAX_TOOL_NAME_LEN, NameError, ToolNames};
use proptest::prelude::*;

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Names that often clash: few letters, separators inside, unicode, long
/// runs, and the empty name.
fn part() -> impl Strategy<Value = String> {
    prop_oneof!["[a-c]{1,3}", "[a-c_]{0,6}", "[a-zA-Z0-9_.-]{1,20}", "[a-z]{40,80}", "\\PC{0,12}",]
}

fn pairs() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec((part(), part()), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn unique_valid_reversible(pairs in pairs()) {
        let names = ToolNames::new(pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())));
        let distinct: HashSet<&(String, String)> = pairs.iter().collect();
        prop_assert_eq!(names.len(), distinct.len());
        let mut seen = HashSet::new();
        for (server, tool) in &distinct {
            let name = names.name(server, tool).expect("every pair is named");
            prop_assert!(valid(name), "{:?}", name);
            prop_assert!(seen.insert(name.to_owned()), "{:?} twice", name);
            prop_assert_eq!(names.resolve(name), Some((server.as_str(), tool.as_str())));
        }
    }

    #[test]
    fn stable_whatever_the_order(pairs in pairs(), seed in any::<u64>()) {
        let names = ToolNames::new(pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())));
        let mut shuffled = pairs.clone();
        // A deterministic shuffle from the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let again = ToolNames::new(shuffled.iter().map(|(s, t)| (s.as_str(), t.as_str())));
        prop_assert_eq!(names, again);
    }

    /// A pair that needs no change and clashes with nothing keeps the plain
    /// `server__tool`, whatever else is in the set: a pure function of its
    /// names.
    #[test]
    fn plain_names_do_not_depend_on_the_set(
        server in "[a-z]{1,10}",
        tool in "[a-z][a-z0-9]{0,20}",
        others in pairs(),
    ) {
        let others: Vec<_> = others.into_iter().filter(|(s, t)| {
            // Leave out the pairs that could clash with this one's text.
            !format!("{s}__{t}").eq(&format!("{server}__{tool}"))
        }).collect();
        let names = ToolNames::new(
            others.iter().map(|(s, t)| (s.as_str(), t.as_str()))
                .chain([(server.as_str(), tool.as_str())]),
        );
        let expected = format!("{server}__{tool}");
        prop_assert_eq!(names.name(&server, &tool), Some(expected.as_str()));
    }
}

#[test]
fn clashes_and_long_names_are_shortened_with_a_hash() {
    let long_tool = "a".repeat(70);
    let names = ToolNames::new([
        ("a__b", "c"),
        ("a", "b__c"),
        ("files", "read_file"),
        ("files", long_tool.as_str()),
        ("émoji ✨", "do it"),
    ]);
    // The two that would both be `a__b__c` are hashed (and differ).
    let x = names.name("a__b", "c").unwrap();
    let y = names.name("a", "b__c").unwrap();
    assert!(x.starts_with("a__b__c_") && y.starts_with("a__b__c_") && x != y, "{x} {y}");
    assert_eq!(x.len(), "a__b__c_".len() + 12);
    assert_eq!(names.name("files", "read_file"), Some("files__read_file"));
    let long = names.name("files", &long_tool).unwrap();
    assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
    assert!(long.starts_with("files__aaaa"), "{long}");
    let odd = names.name("émoji ✨", "do it").unwrap();
    assert!(odd.starts_with("_moji____do_it_"), "{odd}");
    // The hash is of the names alone: the same in another set.
    let alone = ToolNames::new([("files", long_tool.as_str())]);
    assert_eq!(alone.name("files", &long_tool), Some(long));
    let listed: Vec<_> = names.iter().map(|(_, s, t)| (s, t)).collect();
    assert_eq!(listed[0], ("a", "b__c"));
}

#[test]
fn separators() {
    let names = ToolNames::with_separator([("web", "search")], "-").unwrap();
    assert_eq!(names.name("web", "search"), Some("web-search"));
    assert_eq!(names.resolve("web-search"), Some(("web", "search")));
    for bad in ["", ".", "a b", "123456789"] {
        let err = ToolNames::with_separator([("a", "b")], bad).unwrap_err();
        assert!(matches!(err, NameError::BadSeparator { .. }), "{bad:?}");
    }
}
