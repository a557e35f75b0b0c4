//! The workspace builds exactly one syn, and it is syn 3: a second syn costs every user a
//! full extra proc-macro build. This fails when a dependency bump brings syn 2 back (as
//! jsonschema 0.48+ would, through strum).

use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn the_dependency_tree_builds_one_syn_and_it_is_syn_3() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let output = Command::new(cargo)
        .current_dir(workspace)
        .args([
            "tree",
            "--workspace",
            "--offline",
            "-e",
            "normal,build,dev",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).expect("cargo tree prints UTF-8");
    let syns: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.strip_prefix("syn v"))
        .map(|rest| rest.split_whitespace().next().unwrap_or(rest))
        .collect();
    assert_eq!(syns.len(), 1, "more than one syn is built: {syns:?}");
    let version = syns.first().expect("syn is in the tree");
    assert!(
        version.starts_with("3."),
        "syn {version} is built; the workspace standardises on syn 3"
    );
}
