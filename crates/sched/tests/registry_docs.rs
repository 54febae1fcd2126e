//! The registry is the one list of policies: the tables of docs/scenario.md (the scenario reference,
//! where README.md's table moved) and ARCHITECTURE.md are its rendering (`smartsim policies --format markdown`), and each entry names a file that exists.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).expect("the workspace")
}

#[test]
fn the_scenario_reference_and_architecture_show_the_registry_as_it_is() {
    let table = sched::registry::table_markdown();
    for doc in ["docs/scenario.md", "ARCHITECTURE.md"] {
        let text = std::fs::read_to_string(root().join(doc)).expect("the document");
        assert!(
            text.contains(&table),
            "{doc} does not show the registry as it is; paste the output of \
             `smartsim policies --format markdown` in place of its table:\n{table}"
        );
    }
}

#[test]
fn every_entry_names_its_file() {
    for e in sched::REGISTRY {
        let file = root().join("crates/sched/src").join(e.source);
        assert!(file.is_file(), "{}: {} does not exist", e.name, file.display());
        assert!(!e.about.is_empty(), "{}: its entry does not say what it is (Entry::about)", e.name);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("//!"), "{}: {} opens without saying what it is", e.name, e.source);
    }
}
