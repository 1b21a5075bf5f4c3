//! The text half of `cargo xtask bench`: where each measure's blocks sit in
//! `BENCHMARKS.md`, how one block is rewritten without touching the rest of
//! the file, and the one summary table made from a measure's full tables.
//! Text in, text out: every function here is tested on strings.
//!
//! Each measure owns two blocks. Its summary, at the top of the file:
//!
//! ```text
//! <!-- bench:stdio:start -->
//! ### the measure's title
//! Measured <date> ...; 1-minute load <a> at the start, <b> at the end; ...
//! | one table |
//! <!-- bench:stdio:end -->
//! ```
//!
//! and its full tables, further down, between `<!-- bench:stdio:tables:start -->`
//! and `<!-- bench:stdio:tables:end -->`. Everything outside the markers is
//! the people's, and stays byte for byte as it was.

use std::collections::HashMap;

/// The start and end markers of a measure's summary block (`tables:
/// false`) or of its full tables (`tables: true`).
pub(crate) fn markers(measure: &str, tables: bool) -> (String, String) {
    let name = if tables { format!("{measure}:tables") } else { measure.to_owned() };
    (format!("<!-- bench:{name}:start -->"), format!("<!-- bench:{name}:end -->"))
}

/// `doc` with the content between a block's markers replaced by `content`
/// (the markers stay; nothing else changes). A block that is not there yet
/// goes after the last block of its kind (summaries stay together at the
/// top), else at the end of the file. Markers found twice, one without
/// the other, or an end before its start are errors: the file is then
/// left for a person to mend rather than guessed at.
pub(crate) fn replace_block(
    doc: &str,
    measure: &str,
    tables: bool,
    content: &str,
) -> Result<String, String> {
    let (start, end) = markers(measure, tables);
    let block = format!("{start}\n{}\n{end}", content.trim_matches('\n'));
    let found = |marker: &str| -> Result<Option<usize>, String> {
        let mut at = doc.match_indices(marker).map(|(i, _)| i);
        match (at.next(), at.next()) {
            (Some(_), Some(_)) => Err(format!("BENCHMARKS.md has {marker} more than once")),
            (first, _) => Ok(first),
        }
    };
    match (found(&start)?, found(&end)?) {
        (Some(a), Some(b)) if a < b => Ok(format!("{}{block}{}", &doc[..a], &doc[b + end.len()..])),
        (Some(_), Some(_)) => Err(format!("BENCHMARKS.md has {end} before {start}")),
        (Some(_), None) => Err(format!("BENCHMARKS.md has {start} but no {end}")),
        (None, Some(_)) => Err(format!("BENCHMARKS.md has {end} but no {start}")),
        (None, None) => Ok(match last_end_of_kind(doc, tables) {
            Some(at) => format!("{}\n\n{block}{}", &doc[..at], &doc[at..]),
            None if doc.trim().is_empty() => format!("{block}\n"),
            None => format!("{}\n\n{block}\n", doc.trim_end()),
        }),
    }
}

/// The content between a block's markers, if the block is there.
pub(crate) fn block<'a>(doc: &'a str, measure: &str, tables: bool) -> Option<&'a str> {
    let (start, end) = markers(measure, tables);
    let a = doc.find(&start)? + start.len();
    let b = a + doc[a..].find(&end)?;
    Some(doc[a..b].trim_matches('\n'))
}

/// Where the last end marker of a summary (or full-tables) block ends.
fn last_end_of_kind(doc: &str, tables: bool) -> Option<usize> {
    doc.match_indices("<!-- bench:")
        .filter_map(|(i, open)| {
            let rest = &doc[i + open.len()..];
            let close = rest.find(" -->")?;
            let name = rest[..close].strip_suffix(":end")?;
            (name.ends_with(":tables") == tables).then_some(i + open.len() + close + 4)
        })
        .last()
}

/// The summary block of a measure, made from the content of its full
/// tables block: the title (its `## ` line, as `### `), the `Measured`
/// line, one table, and what the table shows.
pub(crate) fn summary_block(measure: &str, details: &str) -> String {
    let title = details
        .lines()
        .find_map(|l| l.strip_prefix("## "))
        .map_or_else(|| format!("`cargo xtask bench {measure}`"), str::to_owned);
    let measured = details
        .lines()
        .find(|l| l.starts_with("Measured "))
        .unwrap_or("Measured: date and load not recorded.");
    let found = tables(details);
    let (table, note) = match measure {
        "stdio" | "http" => (
            round_trips(&found),
            "Pinned: client and server share one CPU (the steadiest figures). \
             \"vs\" columns: how many times better ours is (above 1x, ours is better). \
             The fixed-reply answerer isolates the clients; the `mcp-testkit` rows \
             include the test server's own work. –: not measured that way in this run. \
             p99, unpinned runs, 1 and 16 in flight and rmcp's other configuration: \
             the full tables below.",
        ),
        "startup" | "memory" => (
            contenders(&found),
            "Lower is better in every column; \"rmcp ÷ ours\" above 1x means ours is \
             better. rmcp in its default configuration. \"Raw limit, same exchanges\", \
             where shown: raw hyper making every exchange our client makes (in the \
             handshake era also the standalone GET, started in the background after \
             `initialized`, and the `DELETE` at close); \
             how each figure is taken: the full tables below.",
        ),
        "bridge" => (
            bridge(&found),
            "Added: the path's p50 per call minus the direct p50 in the same phase (lower is \
             better); \"÷ mcpc's\" above 1x means `mcpc serve` adds less. Goals: a Node \
             bridge's added latency at least 5x mcpc's; through `mcpc serve` stdio to stdio at \
             most 1.3x the direct round trip. Unpinned rows, start-up and idle RSS: the full \
             tables below.",
        ),
        _ => (
            found.first().map(Table::to_markdown).unwrap_or_default(),
            "How the figures are taken: the full tables below.",
        ),
    };
    let table =
        if table.is_empty() { "(no table in this run's output)\n".to_owned() } else { table };
    format!("### {title}\n\n{measured}\n\n{table}\n{note}")
}

/// The bridge measure's summary: one row per bridge of each added-latency
/// table, pinned, followed by the start-up table as it is.
fn bridge(found: &[Table]) -> String {
    let mut out = String::from(
        "| scenario | bridge | added µs, sequential | added µs, 16 in flight | p50 ÷ direct, sequential | \
         added ÷ mcpc's, sequential | added ÷ mcpc's, 16 in flight |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    let mut any = false;
    for t in found {
        let Some(scenario) = t.heading.strip_prefix("Added latency: ") else { continue };
        let col = |name: &str| t.column(name);
        let (Some(path), Some(cpus), Some(p50), Some(seq), Some(par), Some(vs_seq), Some(vs_par)) = (
            col("path"),
            col("CPUs"),
            col("p50 µs, sequential"),
            col("added µs, sequential"),
            col("added µs, 16 in flight"),
            col("added / mcpc's, sequential"),
            col("added / mcpc's, 16 in flight"),
        ) else {
            continue;
        };
        let pinned: Vec<&Vec<String>> = t
            .rows
            .iter()
            .filter(|r| r.get(cpus).is_some_and(|c| c.starts_with("pinned")))
            .collect();
        let Some(direct) =
            pinned.iter().find(|r| r.get(path).is_some_and(|p| p.starts_with("direct")))
        else {
            continue;
        };
        let at = |row: &Vec<String>, i: usize| row.get(i).cloned().unwrap_or_default();
        for row in pinned.iter().filter(|r| !r.get(path).is_some_and(|p| p.starts_with("direct"))) {
            any = true;
            out.push_str(&format!(
                "| {scenario} | {} | {} | {} | {} | {} | {} |\n",
                at(row, path),
                at(row, seq),
                at(row, par),
                ratio(row.get(p50), direct.get(p50)),
                at(row, vs_seq),
                at(row, vs_par),
            ));
        }
    }
    if !any {
        return String::new();
    }
    out.push_str("\nPinned (client, bridge and server on one CPU).\n");
    if let Some(start) = found.iter().find(|t| t.column("idle RSS of the bridge process").is_some())
    {
        out.push('\n');
        out.push_str(&start.to_markdown());
    }
    out
}

/// A Markdown table and the heading it sits under.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// The text of the last `#` heading before the table (without the `#`s).
    pub(crate) heading: String,
    pub(crate) header: Vec<String>,
    /// The separator line as it was (column alignment).
    pub(crate) align: String,
    pub(crate) rows: Vec<Vec<String>>,
}

impl Table {
    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    fn to_markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.header);
        out.push_str(&self.align);
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// Every Markdown table of `text`, in order.
pub(crate) fn tables(text: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_owned();
            continue;
        }
        let is_separator = |l: &str| {
            let l = l.trim();
            l.starts_with('|') && l.contains("---") && l.chars().all(|c| "|-: ".contains(c))
        };
        if !line.starts_with('|') || !lines.peek().is_some_and(|l| is_separator(l)) {
            continue;
        }
        let align = lines.next().unwrap_or_default().trim().to_owned();
        let mut rows = Vec::new();
        while let Some(row) = lines.peek().filter(|l| l.trim().starts_with('|')) {
            rows.push(cells(row));
            lines.next();
        }
        out.push(Table { heading: heading.clone(), header: cells(line), align, rows });
    }
    out
}

/// The cells of one table line (`\|` is a pipe inside a cell).
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').filter(|s| !s.ends_with('\\')).unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => cells.push(String::new()),
            c => {
                let Some(cell) = cells.last_mut() else { continue };
                cell.push(c);
                if c == '\\' && chars.peek() == Some(&'|') {
                    cell.push('|');
                    chars.next();
                }
            }
        }
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

/// The number at the start of a cell: `12.6k` is 12,600, `1.2M` 1,200,000,
/// `3.20 ms` 3.2, `**58**` 58; `–` and text are none.
fn number(cell: &str) -> Option<f64> {
    let cell = cell.trim().trim_start_matches("**");
    let end =
        cell.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(cell.len());
    let value: f64 = cell[..end].replace(',', "").parse().ok()?;
    Some(match cell[end..].chars().next() {
        Some('k') => value * 1e3,
        Some('M') => value * 1e6,
        _ => value,
    })
}

/// `a ÷ b` as `1.87x`, or `–` when either is missing.
fn ratio(a: Option<&String>, b: Option<&String>) -> String {
    match (a.and_then(|a| number(a)), b.and_then(|b| number(b))) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "–".to_owned(),
    }
}

/// The era of a round-trip table, from its heading
/// (`Throughput: handshake era (2025-11-25)` → `handshake era (2025-11-25)`).
fn era_of(heading: &str) -> String {
    heading.rsplit_once(": ").map_or(heading, |(_, era)| era).to_owned()
}

/// One row per era, server (and reply form): median latency pinned,
/// calls per second at 64 in flight and client CPU per call, for ours, rmcp
/// (pooled over HTTP, its best) and the raw limit.
fn round_trips(found: &[Table]) -> String {
    type Key = (String, String, String);
    let mut keys: Vec<Key> = Vec::new();
    let mut clients: Vec<String> = Vec::new();
    let mut with_reply = false;
    let mut p50: HashMap<(Key, String), String> = HashMap::new();
    let mut cpu: HashMap<(Key, String), String> = HashMap::new();
    let mut rate: HashMap<(Key, String), String> = HashMap::new();
    fn note<K: Clone + PartialEq>(key: &K, keys: &mut Vec<K>) {
        if !keys.contains(key) {
            keys.push(key.clone());
        }
    }
    for t in found {
        let era = era_of(&t.heading);
        let reply = t.column("reply");
        with_reply |= reply.is_some();
        let Some(server) = t.column("server") else { continue };
        let key_of = |row: &[String]| -> Key {
            let reply = reply.and_then(|i| row.get(i)).cloned().unwrap_or_default();
            (era.clone(), row.get(server).cloned().unwrap_or_default(), reply)
        };
        if let (Some(cpus), Some(client), Some(lat), Some(used)) = (
            t.column("CPUs"),
            t.column("client"),
            t.column("p50 µs"),
            t.column("client CPU µs/call"),
        ) {
            for row in &t.rows {
                if !row.get(cpus).is_some_and(|c| c.starts_with("pinned")) {
                    continue;
                }
                let key = key_of(row);
                note(&key, &mut keys);
                let Some(name) = row.get(client) else { continue };
                if !clients.contains(name) {
                    clients.push(name.clone());
                }
                let at = |i: usize| row.get(i).cloned().unwrap_or_default();
                p50.insert((key.clone(), name.clone()), at(lat));
                cpu.insert((key, name.clone()), at(used));
            }
        } else if let Some(depth) = t.column("in flight") {
            for row in t.rows.iter().filter(|r| r.get(depth).is_some_and(|d| d == "64")) {
                let key = key_of(row);
                note(&key, &mut keys);
                for (i, h) in t.header.iter().enumerate() {
                    if let (Some(name), Some(value)) = (h.strip_suffix(" calls/s"), row.get(i)) {
                        if !clients.iter().any(|c| c == name) {
                            clients.push(name.to_owned());
                        }
                        rate.insert((key.clone(), name.to_owned()), value.clone());
                    }
                }
            }
        }
    }
    // Era, then server, then reply form, each in the order first met.
    let rank = |pick: fn(&Key) -> &String| {
        let mut seen: Vec<&String> = Vec::new();
        for key in &keys {
            if !seen.contains(&pick(key)) {
                seen.push(pick(key));
            }
        }
        move |key: &Key| seen.iter().position(|s| *s == pick(key))
    };
    let (era, server, reply) = (rank(|k| &k.0), rank(|k| &k.1), rank(|k| &k.2));
    let mut keys = keys.clone();
    keys.sort_by_key(|k| (era(k), server(k), reply(k)));
    let pick = |f: &dyn Fn(&str) -> bool| clients.iter().find(|c| f(c)).cloned();
    let (Some(ours), Some(rmcp)) = (
        pick(&|c| c.contains("(ours)")),
        pick(&|c| c == "rmcp pooled").or_else(|| pick(&|c| c.starts_with("rmcp"))),
    ) else {
        return String::new();
    };
    let raw = pick(&|c| c.starts_with("raw"));
    let names: Vec<&str> = ["ours", rmcp.as_str()].into_iter().chain(raw.as_deref()).collect();
    let mut out = format!(
        "| era | server |{} p50 µs, pinned ({}) | vs {rmcp} | calls/s, 64 in flight ({}) | vs {rmcp} | client CPU µs/call, pinned (ours / {rmcp}) |\n\
         |---|---|{}---:|---:|---:|---:|---:|\n",
        if with_reply { " reply |" } else { "" },
        names.join(" / "),
        names.join(" / "),
        if with_reply { "---|" } else { "" },
    );
    let dash = "–".to_owned();
    for key in &keys {
        let of = |map: &HashMap<(Key, String), String>, who: &str| {
            map.get(&(key.clone(), who.to_owned())).cloned()
        };
        let triple = |map: &HashMap<(Key, String), String>| {
            [Some(&ours), Some(&rmcp), raw.as_ref()]
                .into_iter()
                .flatten()
                .map(|who| of(map, who).unwrap_or_else(|| dash.clone()))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let reply = if with_reply { format!(" {} |", key.2) } else { String::new() };
        out.push_str(&format!(
            "| {} | {} |{reply} {} | {} | {} | {} | {} / {} |\n",
            key.0,
            key.1,
            triple(&p50),
            ratio(of(&p50, &rmcp).as_ref(), of(&p50, &ours).as_ref()),
            triple(&rate),
            ratio(of(&rate, &ours).as_ref(), of(&rate, &rmcp).as_ref()),
            of(&cpu, &ours).unwrap_or_else(|| dash.clone()),
            of(&cpu, &rmcp).unwrap_or_else(|| dash.clone()),
        ));
    }
    out
}

/// The tables that have an `(ours)` column as one: each row's label, ours,
/// rmcp (its first column: the default configuration), the raw limit when
/// there is one, and `rmcp ÷ ours`.
fn contenders(found: &[Table]) -> String {
    // Rows of (measure, ours, rmcp, raw, raw making our exchanges, rmcp ÷ ours).
    let mut rows: Vec<[String; 6]> = Vec::new();
    for t in found {
        let find = |f: &dyn Fn(&str) -> bool| t.header.iter().position(|h| f(h));
        let Some(ours) = find(&|h| h.contains("(ours)")) else { continue };
        let rmcp = find(&|h| h.starts_with("rmcp") && !h.contains('/'));
        let raw = find(&|h| h.starts_with("raw") && !h.contains('/') && !h.ends_with(SAME));
        let same = find(&|h| h.starts_with("raw") && !h.contains('/') && h.ends_with(SAME));
        let stated = find(&|h| h.ends_with("/ ours"));
        // A row the table itself does not compare (its ratio `–`) is context.
        for row in t.rows.iter().filter(|r| stated.and_then(|i| r.get(i)).is_none_or(|c| c != "–"))
        {
            let at = |i: Option<usize>| i.and_then(|i| row.get(i));
            let dash = "–".to_owned();
            let cell = |i: Option<usize>| at(i).unwrap_or(&dash).clone();
            rows.push([
                cell(Some(0)),
                cell(Some(ours)),
                cell(rmcp),
                cell(raw),
                cell(same),
                ratio(at(rmcp), at(Some(ours))),
            ]);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    // The column of raw hyper making our client's exchanges, only where a
    // table has it (the start-up measure's).
    let with_same = rows.iter().any(|r| r[4] != "–");
    let mut out = match with_same {
        true => format!(
            "| measure | ours | rmcp | raw limit | raw limit, {SAME} | rmcp ÷ ours |\n|---|---:|---:|---:|---:|---:|\n"
        ),
        false => "| measure | ours | rmcp | raw limit | rmcp ÷ ours |\n|---|---:|---:|---:|---:|\n"
            .to_owned(),
    };
    for [measure, ours, rmcp, raw, same, vs] in rows {
        match with_same {
            true => {
                out.push_str(&format!("| {measure} | {ours} | {rmcp} | {raw} | {same} | {vs} |\n"))
            }
            false => out.push_str(&format!("| {measure} | {ours} | {rmcp} | {raw} | {vs} |\n")),
        }
    }
    out
}

/// How a table names the column of raw hyper making every exchange our
/// client makes (`http-bench startup`).
const SAME: &str = "same exchanges";

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
# Benchmarks

Intro the people wrote.

<!-- bench:stdio:start -->
old stdio summary
<!-- bench:stdio:end -->

<!-- bench:http:start -->
old http summary
<!-- bench:http:end -->

## Full tables

<!-- bench:stdio:tables:start -->
old stdio tables
<!-- bench:stdio:tables:end -->

Notes the people wrote.
";

    #[test]
    fn a_block_is_replaced_and_nothing_else_moves() {
        let new = replace_block(DOC, "stdio", false, "new summary\n").unwrap();
        assert_eq!(new, DOC.replace("old stdio summary", "new summary"));
        let new = replace_block(DOC, "stdio", true, "\n\nnew tables\nline two\n\n").unwrap();
        assert_eq!(new, DOC.replace("old stdio tables", "new tables\nline two"));
        // Writing the same content twice gives the same file.
        let once = replace_block(DOC, "http", false, "x").unwrap();
        assert_eq!(replace_block(&once, "http", false, "x").unwrap(), once);
    }

    #[test]
    fn a_summary_and_its_tables_are_told_apart() {
        assert_eq!(block(DOC, "stdio", false), Some("old stdio summary"));
        assert_eq!(block(DOC, "stdio", true), Some("old stdio tables"));
        assert_eq!(block(DOC, "http", true), None);
    }

    #[test]
    fn a_new_block_joins_the_last_of_its_kind() {
        let new = replace_block(DOC, "memory", false, "memory summary").unwrap();
        assert_eq!(
            new,
            DOC.replace(
                "<!-- bench:http:end -->\n",
                "<!-- bench:http:end -->\n\n<!-- bench:memory:start -->\nmemory summary\n<!-- bench:memory:end -->\n"
            )
        );
        let new = replace_block(DOC, "memory", true, "memory tables").unwrap();
        assert!(new.contains(
            "<!-- bench:stdio:tables:end -->\n\n<!-- bench:memory:tables:start -->\nmemory tables\n<!-- bench:memory:tables:end -->\n\nNotes"
        ));
    }

    #[test]
    fn a_new_block_without_others_of_its_kind_goes_at_the_end() {
        let doc = "# Benchmarks\n\nText.\n\n";
        assert_eq!(
            replace_block(doc, "sse", true, "t").unwrap(),
            "# Benchmarks\n\nText.\n\n<!-- bench:sse:tables:start -->\nt\n<!-- bench:sse:tables:end -->\n"
        );
        assert_eq!(
            replace_block("", "sse", false, "t").unwrap(),
            "<!-- bench:sse:start -->\nt\n<!-- bench:sse:end -->\n"
        );
    }

    #[test]
    fn broken_markers_are_errors_not_guesses() {
        let cases = [
            (DOC.replace("<!-- bench:stdio:end -->", ""), "but no <!-- bench:stdio:end -->"),
            (DOC.replace("<!-- bench:stdio:start -->", ""), "but no <!-- bench:stdio:start -->"),
            (format!("{DOC}<!-- bench:stdio:start -->\n"), "more than once"),
            (
                "<!-- bench:stdio:end -->\n<!-- bench:stdio:start -->\n".to_owned(),
                "<!-- bench:stdio:end --> before",
            ),
        ];
        for (doc, why) in cases {
            let err = replace_block(&doc, "stdio", false, "x").unwrap_err();
            assert!(err.contains(why), "{err:?} should say {why:?}");
        }
    }

    #[test]
    fn tables_are_read_with_their_heading() {
        let text = "### Memory\n\nSome text | with a pipe.\n\n| a | b \\| c |\n|---|---:|\n| 1 | 2 |\n| 3 | 4 |\n\nAfter.\n\n| x |\n|---|\n";
        let found = tables(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].heading, "Memory");
        assert_eq!(found[0].header, ["a", "b \\| c"]);
        assert_eq!(found[0].rows, [["1", "2"], ["3", "4"]]);
        assert_eq!(found[0].to_markdown(), "| a | b \\| c |\n|---|---:|\n| 1 | 2 |\n| 3 | 4 |\n");
        assert!(found[1].rows.is_empty());
    }

    #[test]
    fn numbers() {
        let cases = [
            ("12.6k", Some(12_600.0)),
            ("1.5M", Some(1_500_000.0)),
            ("780", Some(780.0)),
            ("3.20 ms", Some(3.2)),
            ("50.0 KiB", Some(50.0)),
            ("**58**", Some(58.0)),
            ("1,234", Some(1234.0)),
            ("–", None),
            ("", None),
        ];
        for (cell, want) in cases {
            assert_eq!(number(cell), want, "{cell}");
        }
        assert_eq!(ratio(Some(&"20.7".into()), Some(&"11.1".into())), "1.86x");
        assert_eq!(ratio(Some(&"–".into()), Some(&"11.1".into())), "–");
        assert_eq!(ratio(Some(&"1".into()), Some(&"0".into())), "–");
    }

    /// What `stdio-bench` prints (cut down), and its summary.
    #[test]
    fn stdio_round_trips_summarised() {
        let details = "\
## stdio: `tools/call echo` (`cargo xtask bench stdio`)

Measured 2026-12-02 05:47 UTC with `cargo xtask bench stdio`; load 2.21 at the start, 1.90 at the end.

### Sequential latency and client CPU: handshake era (2025-11-25)

| server | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |
|---|---|---|---:|---:|---:|---:|---:|---:|
| fixed-reply answerer | pinned (1 CPU) | mcp-stdio (ours) | 11.1 | 22.0 | 81.3k | 9.0 | 2.34x | 1.00x |
| fixed-reply answerer | pinned (1 CPU) | rmcp | 20.7 | 50.3 | 44.2k | 18.8 | 4.36x | 1.87x |
| fixed-reply answerer | pinned (1 CPU) | raw pipe | 4.8 | 6.6 | 199.1k | 2.5 | 1.00x | 0.43x |
| fixed-reply answerer | unpinned | mcp-stdio (ours) | 11.4 | 805.9 | 21.0k | 18.6 | 2.45x | 1.00x |

### Throughput: handshake era (2025-11-25)

| server | in flight | mcp-stdio (ours) calls/s | rmcp calls/s | raw pipe calls/s | ours / rmcp | ours / raw |
|---|---:|---:|---:|---:|---:|---:|
| fixed-reply answerer | 16 | 49.7k | 20.9k | 176.2k | 2.38x | 0.28x |
| fixed-reply answerer | 64 | 127.6k | 49.5k | 478.7k | 2.58x | 0.27x |
| mcp-testkit | 64 | 33.5k | 19.3k | 58.2k | 1.74x | 0.57x |
";
        let summary = summary_block("stdio", details);
        let want = "\
### stdio: `tools/call echo` (`cargo xtask bench stdio`)

Measured 2026-12-02 05:47 UTC with `cargo xtask bench stdio`; load 2.21 at the start, 1.90 at the end.

| era | server | p50 µs, pinned (ours / rmcp / raw pipe) | vs rmcp | calls/s, 64 in flight (ours / rmcp / raw pipe) | vs rmcp | client CPU µs/call, pinned (ours / rmcp) |
|---|---|---:|---:|---:|---:|---:|
| handshake era (2025-11-25) | fixed-reply answerer | 11.1 / 20.7 / 4.8 | 1.86x | 127.6k / 49.5k / 478.7k | 2.58x | 9.0 / 18.8 |
| handshake era (2025-11-25) | mcp-testkit | – / – / – | – | 33.5k / 19.3k / 58.2k | 1.74x | – / – |
";
        assert!(summary.starts_with(want), "{summary}");
    }

    /// `http-bench` has a reply column and two rmcp configurations: the
    /// summary compares with the pooled one and skips the CPU-at-depth table.
    #[test]
    fn http_round_trips_compare_with_rmcp_pooled() {
        let details = "\
## Streamable HTTP

### Sequential latency and client CPU (keep-alive): stateless era (2026-07-28)

| server | reply | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |
|---|---|---|---|---:|---:|---:|---:|---:|---:|
| mcp-testkit | json | pinned (1 CPU) | mcp-http (ours) | 56.1 | 182.4 | 16.2k | 28.1 | 1.09x | 1.00x |
| mcp-testkit | json | pinned (1 CPU) | rmcp default | 379.1 | 684.8 | 2.6k | 237.7 | 7.39x | 6.75x |
| mcp-testkit | json | pinned (1 CPU) | rmcp pooled | 162.0 | 420.9 | 5.8k | 110.3 | 3.16x | 2.89x |
| mcp-testkit | json | pinned (1 CPU) | raw hyper | 51.3 | 144.5 | 18.6k | 17.3 | 1.00x | 0.91x |

### Throughput: stateless era (2026-07-28)

| server | reply | in flight | mcp-http (ours) calls/s | rmcp default calls/s | rmcp pooled calls/s | raw hyper calls/s | ours / rmcp default | ours / rmcp pooled | ours / raw |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
| mcp-testkit | json | 64 | 28.8k | 5.6k | 12.4k | 27.9k | 5.19x | 2.33x | 1.03x |
| mcp-testkit | sse | 64 | 19.3k | 7.2k | 10.5k | 22.2k | 2.69x | 1.83x | 0.87x |

| server | reply | client at 64 in flight | client CPU µs/call | server CPU µs/call | total µs/call | calls/s two CPUs allow (2 / total) |
|---|---|---|---:|---:|---:|---:|
| mcp-testkit | json | mcp-http (ours) | 24.7 | 12.2 | 36.9 | 54.2k |

### Sequential latency and client CPU (keep-alive): handshake era (2025-11-25)

| server | reply | CPUs | client | p50 µs | p99 µs | calls/s | client CPU µs/call | p50 vs raw | p50 vs ours |
|---|---|---|---|---:|---:|---:|---:|---:|---:|
| mcp-testkit | json | pinned (1 CPU) | mcp-http (ours) | 47.5 | 1 | 1 | 27.4 | 1 | 1 |
| mcp-testkit | json | pinned (1 CPU) | rmcp pooled | 92.0 | 1 | 1 | 71.0 | 1 | 1 |
";
        let summary = summary_block("http", details);
        assert!(summary.contains(
            "| era | server | reply | p50 µs, pinned (ours / rmcp pooled / raw hyper) | vs rmcp pooled | calls/s, 64 in flight (ours / rmcp pooled / raw hyper) | vs rmcp pooled | client CPU µs/call, pinned (ours / rmcp pooled) |\n\
             |---|---|---|---:|---:|---:|---:|---:|\n\
             | stateless era (2026-07-28) | mcp-testkit | json | 56.1 / 162.0 / 51.3 | 2.89x | 28.8k / 12.4k / 27.9k | 2.32x | 28.1 / 110.3 |\n\
             | stateless era (2026-07-28) | mcp-testkit | sse | – / – / – | – | 19.3k / 10.5k / 22.2k | 1.84x | – / – |\n\
             | handshake era (2025-11-25) | mcp-testkit | json | 47.5 / 92.0 / – | 1.94x | – / – / – | – | 27.4 / 71.0 |\n"
        ), "{summary}");
        assert!(summary.contains("Measured: date and load not recorded."));
    }

    #[test]
    fn bridge_rows_are_summarised_pinned_with_the_startup_table() {
        let details = "\
## Bridges

Measured today.

### Added latency: stdio host → stdio server

| path | CPUs | p50 µs, sequential | added µs, sequential | p50 µs, 16 in flight | added µs, 16 in flight | added / mcpc's, sequential | added / mcpc's, 16 in flight |
|---|---|---:|---:|---:|---:|---:|---:|
| direct | pinned (1 CPU) | 20.0 | – | 100.0 | – | – | – |
| mcpc | pinned (1 CPU) | 25.0 | 5.0 | 120.0 | 20.0 | 1.00x | 1.00x |
| node | pinned (1 CPU) | 525.0 | 505.0 | 900.0 | 800.0 | 101.00x | 40.00x |
| direct | unpinned | 60.0 | – | 100.0 | – | – | – |
| mcpc | unpinned | 70.0 | 10.0 | 120.0 | 20.0 | 1.00x | 1.00x |

| scenario | path | spawn → first `tools/list` answer | vs mcpc's | idle RSS of the bridge process | vs mcpc's |
|---|---|---:|---:|---:|---:|
| s | mcpc | 3.00 ms | 1.00x | 900.0 KiB | 1.00x |
";
        let summary = summary_block("bridge", details);
        assert!(summary.starts_with("### Bridges\n\nMeasured today."), "{summary}");
        assert!(
            summary.contains(
                "| stdio host → stdio server | mcpc | 5.0 | 20.0 | 1.25x | 1.00x | 1.00x |"
            ),
            "{summary}"
        );
        assert!(
            summary.contains(
                "| stdio host → stdio server | node | 505.0 | 800.0 | 26.25x | 101.00x | 40.00x |"
            ),
            "{summary}"
        );
        assert!(!summary.contains("unpinned"), "{summary}");
        assert!(
            summary.contains("| s | mcpc | 3.00 ms | 1.00x | 900.0 KiB | 1.00x |"),
            "{summary}"
        );
    }

    #[test]
    fn startup_and_memory_tables_become_one() {
        let details = "\
## Memory

### Idle HTTP sessions

| measure | mcp-http (ours) | rmcp default | rmcp pooled (one shared client) | rmcp default / ours |
|---|---:|---:|---:|---:|
| client memory per idle session | 50.0 KiB | 74.3 KiB | 68.9 KiB | 1.49x |
| (for reference) server growth per session | 25.4 KiB | 26.4 KiB | 27.3 KiB | – |

### stdio clients

| measure | mcp-stdio (ours) | rmcp | rmcp / ours |
|---|---:|---:|---:|
| client-side RSS per stdio client | 18.3 KiB | 29.3 KiB | 1.60x |

| transport | mcp-stdio (ours) | rmcp | raw pipe | rmcp / ours | ours / raw |
|---|---:|---:|---:|---:|---:|
| stdio: spawn + initialize | 3.20 ms | 3.00 ms | 2.76 ms | 0.94x | 1.16x |
";
        let summary = summary_block("memory", details);
        assert!(
            summary.contains(
                "| measure | ours | rmcp | raw limit | rmcp ÷ ours |\n|---|---:|---:|---:|---:|\n\
             | client memory per idle session | 50.0 KiB | 74.3 KiB | – | 1.49x |\n\
             | client-side RSS per stdio client | 18.3 KiB | 29.3 KiB | – | 1.60x |\n\
             | stdio: spawn + initialize | 3.20 ms | 3.00 ms | 2.76 ms | 0.94x |\n"
            ),
            "{summary}"
        );
    }

    #[test]
    fn the_startup_summary_shows_raw_making_our_exchanges() {
        let details = "\
## Start-up

| transport | mcp-stdio (ours) | rmcp | raw pipe | rmcp / ours | ours / raw |
|---|---:|---:|---:|---:|---:|
| stdio: spawn + initialize | 1.39 ms | 1.36 ms | 1.27 ms | 0.98x | 1.09x |

| transport | mcp-http (ours) | rmcp default | rmcp pooled (client shared) | raw hyper | raw hyper, same exchanges | rmcp default / ours | ours / raw | ours / raw, same exchanges |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
| HTTP: new client + initialize | 0.29 ms | 0.32 ms | 0.30 ms | 0.18 ms | 0.23 ms | 1.10x | 1.61x | 1.26x |
";
        let summary = summary_block("startup", details);
        assert!(
            summary.contains(
                "| measure | ours | rmcp | raw limit | raw limit, same exchanges | rmcp ÷ ours |\n\
                 |---|---:|---:|---:|---:|---:|\n\
                 | stdio: spawn + initialize | 1.39 ms | 1.36 ms | 1.27 ms | – | 0.98x |\n\
                 | HTTP: new client + initialize | 0.29 ms | 0.32 ms | 0.18 ms | 0.23 ms | 1.10x |\n"
            ),
            "{summary}"
        );
    }

    #[test]
    fn other_measures_show_their_first_table() {
        let details = "## Weight\n\nMeasured today.\n\n| build | crates |\n|---|---:|\n| ours | 58 |\n\n| second | table |\n|---|---|\n";
        assert_eq!(
            summary_block("weight", details),
            "### Weight\n\nMeasured today.\n\n| build | crates |\n|---|---:|\n| ours | 58 |\n\nHow the figures are taken: the full tables below."
        );
        // Output with no table at all still gives a block.
        assert!(summary_block("fleet", "## Fleet\n").contains("(no table in this run's output)"));
    }
}
