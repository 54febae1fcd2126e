//! The documentation against the code: every key the scenario parser accepts, and every option of every
//! policy in the registry, has its row (key, value, default, meaning) in docs/scenario.md, under the
//! table it belongs to; every row there names a key that exists; the scenario README.md shows parses; and
//! every relative link in README.md, ARCHITECTURE.md and docs/*.md leads to a file of the repository (and,
//! for a Markdown file, to a heading it has).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).expect("the workspace")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The cells of a Markdown table row, trimmed; `None` for a line that is not a row, or is a header's rule.
fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    if cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) {
        return None;
    }
    Some(cells)
}

/// A cell that is exactly one key in backticks: `` `key` `` → `key`.
fn key_of(cell: &str) -> Option<&str> {
    cell.strip_prefix('`')?.strip_suffix('`').filter(|k| !k.contains('`'))
}

/// The rows of docs/scenario.md by the table they are in: the section's heading, and for the models the
/// model named in bold above the table (`` **`periodic`** ``). Each row maps its key to its cells.
fn tables(text: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut table = String::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ").or_else(|| line.strip_prefix("### ")) {
            table = h.trim().to_string();
        } else if let Some(model) = line.strip_prefix("**`").and_then(|l| l.split_once("`**")) {
            table = format!("model {}", model.0);
        } else if let Some(cells) = cells(line) {
            let (key, rest) = match (table.as_str(), cells.as_slice()) {
                // The policies' options: | policy | key | value | default | meaning |
                ("`[scheduler]`", [policy, key, rest @ ..]) if rest.len() == 3 => match key_of(key) {
                    Some(k) => (format!("{}.{k}", key_of(policy).unwrap_or(policy)), rest),
                    None => continue,
                },
                // Its keys: | key | value | default | meaning | (not the registry's wider table).
                ("`[scheduler]`", [_, rest @ ..]) if rest.len() != 3 => continue,
                (_, [key, rest @ ..]) => match key_of(key) {
                    Some(k) => (k.to_string(), rest),
                    None => continue,
                },
                _ => continue,
            };
            out.entry(table.clone()).or_default().insert(key, rest.iter().map(|c| c.to_string()).collect());
        }
    }
    out
}

#[test]
fn every_key_the_parser_accepts_is_documented_with_its_default() {
    let text = read("docs/scenario.md");
    let tables = tables(&text);
    let mut expected: Vec<(String, Vec<String>)> = vec![
        ("Top level".into(), workload::TOP_KEYS.iter().map(|k| k.to_string()).collect()),
        ("`[machine]`".into(), workload::MACHINE_KEYS.iter().map(|k| k.to_string()).collect()),
        ("`[machine.overhead]`".into(), workload::OVERHEAD_KEYS.iter().map(|k| k.to_string()).collect()),
        ("`[[task]]`".into(), workload::COMMON_TASK_KEYS.iter().map(|k| k.to_string()).collect()),
    ];
    for (model, keys) in workload::MODELS {
        expected.push((format!("model {model}"), keys.iter().map(|k| k.to_string()).collect()));
    }
    // `[scheduler]`: the parser reads `policy` and `classes`; `partition` is every policy's; the rest are each policy's
    // options, as the registry lists them.
    // `classes` too: it makes the stack the default policy (it is also the stack's option).
    let mut scheduler = vec!["policy".to_string(), "partition".to_string(), "classes".to_string()];
    for e in sched::REGISTRY {
        scheduler.extend(e.options.iter().map(|o| format!("{}.{}", e.name, o.key)));
    }
    expected.push(("`[scheduler]`".into(), scheduler));

    let mut missing = Vec::new();
    for (table, keys) in &expected {
        let rows = tables.get(table);
        for key in keys {
            match rows.and_then(|r| r.get(key)) {
                None => missing.push(format!("`{key}` has no row in the table of {table}")),
                Some(cells) if cells.len() < 3 || cells.iter().take(3).any(|c| c.is_empty()) => missing.push(
                    format!("`{key}` in the table of {table} lacks its value, default or meaning: {cells:?}"),
                ),
                Some(_) => {}
            }
        }
        // And nothing documented there that the parser would refuse.
        let known: BTreeSet<&String> = keys.iter().collect();
        for key in rows.map(|r| r.keys().collect::<Vec<_>>()).unwrap_or_default() {
            if !known.contains(key) && !key.starts_with("every policy.") {
                missing.push(format!("`{key}` is documented in the table of {table} but is not a key there"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/scenario.md and the parser disagree:\n{}", missing.join("\n"));
}

#[test]
fn every_policy_option_states_its_default_as_the_registry_does() {
    let tables = tables(&read("docs/scenario.md"));
    let rows = &tables["`[scheduler]`"];
    for e in sched::REGISTRY {
        for o in e.options {
            let key = format!("{}.{}", e.name, o.key);
            let Some(cells) = rows.get(&key) else { continue }; // reported by the test above
            assert_eq!(cells[1], o.default, "docs/scenario.md: the default of `{key}` is not the registry's");
        }
    }
}

#[test]
fn the_scenario_readme_shows_is_valid() {
    let text = read("README.md");
    let block = text
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README.md shows a scenario in a ```toml block");
    if let Err(e) = workload::parse_str(block, "README.md") {
        panic!("the scenario of README.md does not parse:\n{e}");
    }
}

/// Links to files that another open change of the same issue adds (issue 33: the glossary); each is
/// checked like any other once it exists.
const TO_COME: &[&str] = &["docs/glossary.md"];

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a Markdown text, outside code.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_of_the_repository() {
    let mut docs: Vec<PathBuf> = vec!["README.md".into(), "ARCHITECTURE.md".into()];
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    in_docs.sort();
    docs.extend(in_docs);
    let mut broken = Vec::new();
    for doc in &docs {
        let text = read(doc.to_str().unwrap());
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = link.split_once('#').map_or((link.as_str(), None), |(f, a)| (f, Some(a)));
            let target = if file.is_empty() { doc.clone() } else { doc.parent().unwrap().join(file) };
            // Normalise `docs/../X` without touching the file system.
            let mut parts: Vec<&str> = Vec::new();
            for c in target.to_str().unwrap().split('/') {
                match c {
                    "" | "." => {}
                    ".." => {
                        if parts.pop().is_none() {
                            broken.push(format!("{}: {link} leaves the repository", doc.display()));
                        }
                    }
                    c => parts.push(c),
                }
            }
            let rel = parts.join("/");
            let path = root().join(&rel);
            if !path.exists() {
                if !TO_COME.contains(&rel.as_str()) {
                    broken.push(format!("{}: {link}: {rel} does not exist", doc.display()));
                }
                continue;
            }
            if let Some(anchor) = anchor {
                if rel.ends_with(".md") && !anchors(&read(&rel)).contains(anchor) {
                    broken.push(format!("{}: {link}: {rel} has no heading #{anchor}", doc.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
