//! Where the runtime crates are, seen from the crate being compiled: `::agentio_core` and
//! `::agentio_tools` when it depends on them (under any name), `::agentio::core` and
//! `::agentio::tools` when it depends only on the `agentio` facade. An explicit
//! `crate = "..."` argument always wins.
//!
//! The names are read from the compiled crate's `Cargo.toml` (`CARGO_MANIFEST_DIR`), once per
//! compiler process and again only when the file changes, with the rules of
//! `proc-macro-crate`: `[dependencies]`, `[dev-dependencies]` and their `[target.*]` forms, a
//! `package = "..."` rename, and `name.workspace = true` entries resolved through the
//! workspace's `[workspace.dependencies]`. Unlike `proc-macro-crate`, the workspace manifest
//! is found by walking up from the crate (as Cargo does), not by running `cargo
//! locate-project`: a process per compiled crate, about 40 ms on the development machine and
//! more in a large workspace, paid by every build, incremental ones included. It is read only
//! when an inherited entry needs it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use toml_edit::{DocumentMut, Item, TableLike};

fn path_of(direct: &str, default: &str, through_facade: &str) -> syn::Path {
    let text = match crate_name(direct) {
        Some(Found::Name(name)) => format!("::{name}"),
        // Inside the crate itself (its tests and doctests name it as a dependency).
        Some(Found::Itself) => format!("::{default}"),
        None => match crate_name("agentio") {
            Some(Found::Name(facade)) => format!("::{facade}::{through_facade}"),
            // The facade's own doctests (and, through `extern crate self as agentio`, the
            // facade itself) name it by its name.
            Some(Found::Itself) => format!("::agentio::{through_facade}"),
            None => format!("::{default}"),
        },
    };
    syn::parse_str(&text).unwrap_or_else(|_| syn::parse_quote!(::agentio_core))
}

/// The path of `agentio_core` for the crate being compiled.
pub(crate) fn agentio_core() -> syn::Path {
    path_of("agentio-core", "agentio_core", "core")
}

/// The path of `agentio_tools` for the crate being compiled.
pub(crate) fn agentio_tools() -> syn::Path {
    path_of("agentio-tools", "agentio_tools", "tools")
}

/// Where `name` (`serde`, `schemars`) is for the crate being compiled: the facade's public
/// re-export (`::agentio::serde`) when it depends on the facade, otherwise the one
/// `agentio_core` keeps for the macros (`::agentio_core::__private::serde`).
pub(crate) fn reexported(name: &str) -> syn::Path {
    let text = match crate_name("agentio") {
        Some(Found::Name(facade)) => format!("::{facade}::{name}"),
        Some(Found::Itself) => format!("::agentio::{name}"),
        None => {
            let core = quote::ToTokens::to_token_stream(&agentio_core()).to_string();
            format!("{}::__private::{name}", core.replace(' ', ""))
        }
    };
    syn::parse_str(&text).unwrap_or_else(|_| syn::parse_quote!(::agentio_core::__private::serde))
}

/// Whether the crate being compiled is known not to depend on `package`: its manifest was
/// read and does not name it. (Unknown, say outside Cargo, counts as depending on it: serde's
/// and schemars' derives are then left to report for themselves.)
pub(crate) fn lacks(package: &str) -> bool {
    #[cfg(test)]
    if ASSUME_DEPENDENCIES.with(std::cell::Cell::get) {
        return false;
    }
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return false;
    };
    let tests = std::env::var_os("CARGO_TARGET_TMPDIR").is_some();
    lookup_at(&Path::new(&dir).join("Cargo.toml"), tests, package) == Some(None)
}

#[cfg(test)]
thread_local! {
    /// The in-process replay of UI cases and test suites (`ui_replay`) expands code whose own
    /// manifests name serde and schemars; this crate's, read through `CARGO_MANIFEST_DIR`,
    /// does not. Set on the replaying thread.
    pub(crate) static ASSUME_DEPENDENCIES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How the compiled crate names a package.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Found {
    /// The compiled crate is that package (its library or binary, not its integration tests).
    Itself,
    /// A dependency, under this Rust name.
    Name(String),
}

/// The manifests read in this process: one entry each, replaced when it goes stale.
static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// One manifest's answer, with what it was read from.
struct Entry {
    manifest: PathBuf,
    /// The modification times of the manifest and, when it was read, the workspace's.
    stamps: Vec<(PathBuf, Option<SystemTime>)>,
    names: BTreeMap<String, Found>,
}

/// How the crate being compiled names `package`; `None` when it does not depend on it, or
/// when its manifest cannot be read (the caller falls back to a default path).
fn crate_name(package: &str) -> Option<Found> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let tests = std::env::var_os("CARGO_TARGET_TMPDIR").is_some();
    name_at(&Path::new(&dir).join("Cargo.toml"), tests, package)
}

/// [`crate_name`] for the manifest at `manifest`. A compiler process compiles one crate, but
/// a long-lived macro server (rust-analyzer's) expands for many and sees their manifests
/// change: each answer is kept with the times of the files it was read from.
fn name_at(manifest: &Path, tests: bool, package: &str) -> Option<Found> {
    lookup_at(manifest, tests, package).flatten()
}

/// How the manifest at `manifest` names `package`: `None` when the manifest cannot be read,
/// `Some(None)` when it can and does not name it.
fn lookup_at(manifest: &Path, tests: bool, package: &str) -> Option<Option<Found>> {
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let fresh = |entry: &Entry| {
        entry.manifest == manifest && entry.stamps.iter().all(|(path, at)| modified(path) == *at)
    };
    if let Some(entry) = cache.iter().find(|entry| fresh(entry)) {
        return Some(entry.names.get(package).cloned());
    }
    let entry = read_names(manifest, tests)?;
    let found = entry.names.get(package).cloned();
    cache.retain(|old| old.manifest != manifest);
    cache.push(entry);
    Some(found)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn parse(path: &Path) -> Option<DocumentMut> {
    std::fs::read_to_string(path).ok()?.parse().ok()
}

/// Every package the manifest at `path` names, with the Rust name it goes by.
fn read_names(path: &Path, tests: bool) -> Option<Entry> {
    let stamp = modified(path);
    let manifest = parse(path)?;
    let mut stamps = vec![(path.to_owned(), stamp)];
    let names = names_in(&manifest, tests, || {
        let (root, document) = workspace_of(path, &manifest)?;
        stamps.push((root.clone(), modified(&root)));
        Some(document)
    });
    Some(Entry {
        manifest: path.to_owned(),
        stamps,
        names,
    })
}

/// The packages `manifest` names; `workspace` gives the workspace manifest, asked for only
/// when an entry inherits from it (`name.workspace = true`).
fn names_in(
    manifest: &DocumentMut,
    tests: bool,
    workspace: impl FnOnce() -> Option<DocumentMut>,
) -> BTreeMap<String, Found> {
    let own = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(Item::as_str);
    let mut names = BTreeMap::new();
    if let Some(own) = own {
        // An integration test (Cargo sets `CARGO_TARGET_TMPDIR` for those only) names its
        // package as a dependency.
        let found = if tests {
            Found::Name(own.replace('-', "_"))
        } else {
            Found::Itself
        };
        names.insert(own.to_owned(), found);
    }
    let mut workspace = Some(workspace);
    let mut inherited: Option<BTreeMap<String, String>> = None;
    for table in dependency_tables(manifest) {
        for (key, value) in table.iter() {
            let mut package = value.get("package").and_then(Item::as_str).unwrap_or(key);
            if own == Some(package) {
                continue;
            }
            let inherits = value
                .get("workspace")
                .and_then(Item::as_bool)
                .unwrap_or(false);
            let renamed;
            if inherits {
                let renames = inherited.get_or_insert_with(|| {
                    workspace
                        .take()
                        .and_then(|read| read())
                        .map(|document| workspace_renames(&document))
                        .unwrap_or_default()
                });
                if let Some(name) = renames.get(package) {
                    renamed = name.clone();
                    package = &renamed;
                }
            }
            names.insert(package.to_owned(), Found::Name(key.replace('-', "_")));
        }
    }
    names
}

/// `[dependencies]` and `[dev-dependencies]`, then the same under each `[target.*]`.
fn dependency_tables(manifest: &DocumentMut) -> Vec<&dyn TableLike> {
    let mut tables = Vec::new();
    kinds(manifest.as_table(), &mut tables);
    if let Some(targets) = manifest.get("target").and_then(Item::as_table_like) {
        for (_, target) in targets.iter() {
            if let Some(target) = target.as_table_like() {
                kinds(target, &mut tables);
            }
        }
    }
    tables
}

/// A table's `[dependencies]` and `[dev-dependencies]`, added to `out`.
fn kinds<'a>(table: &'a dyn TableLike, out: &mut Vec<&'a dyn TableLike>) {
    for kind in ["dependencies", "dev-dependencies"] {
        if let Some(deps) = table.get(kind).and_then(Item::as_table_like) {
            out.push(deps);
        }
    }
}

/// `[workspace.dependencies]`: each entry's name, and the package it names.
fn workspace_renames(workspace: &DocumentMut) -> BTreeMap<String, String> {
    let Some(table) = workspace
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Item::as_table_like)
    else {
        return BTreeMap::new();
    };
    table
        .iter()
        .map(|(key, value)| {
            let package = value.get("package").and_then(Item::as_str).unwrap_or(key);
            (key.to_owned(), package.to_owned())
        })
        .collect()
}

/// The workspace manifest of the package whose manifest is at `path`, as Cargo finds it:
/// `package.workspace` when set, otherwise the manifest itself or the nearest one above it
/// with a `[workspace]` table.
fn workspace_of(path: &Path, manifest: &DocumentMut) -> Option<(PathBuf, DocumentMut)> {
    let dir = path.parent()?;
    if let Some(root) = manifest
        .get("package")
        .and_then(|p| p.get("workspace"))
        .and_then(Item::as_str)
    {
        let root = dir.join(root).join("Cargo.toml");
        let document = parse(&root)?;
        return Some((root, document));
    }
    if manifest.get("workspace").is_some() {
        return Some((path.to_owned(), manifest.clone()));
    }
    for ancestor in dir.ancestors().skip(1) {
        let candidate = ancestor.join("Cargo.toml");
        if !candidate.is_file() {
            continue;
        }
        if let Some(document) = parse(&candidate)
            && document.get("workspace").is_some()
        {
            return Some((candidate, document));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(manifest: &str, workspace: Option<&str>, tests: bool) -> BTreeMap<String, Found> {
        let manifest: DocumentMut = manifest.parse().unwrap();
        let workspace = workspace.map(|w| w.parse::<DocumentMut>().unwrap());
        names_in(&manifest, tests, || workspace)
    }

    fn name(text: &str) -> Found {
        Found::Name(text.to_owned())
    }

    #[test]
    fn direct_renamed_dev_and_target_dependencies_are_found() {
        let found = names(
            r#"
            [package]
            name = "user-app"
            [dependencies]
            agentio-core = "0.1"
            tools = { package = "agentio-tools", version = "0.1" }
            [dev-dependencies]
            agentio = "0.1"
            [target.'cfg(unix)'.dependencies]
            agentio-workflow = "0.1"
            "#,
            None,
            false,
        );
        assert_eq!(found.get("user-app"), Some(&Found::Itself));
        assert_eq!(found.get("agentio-core"), Some(&name("agentio_core")));
        assert_eq!(found.get("agentio-tools"), Some(&name("tools")));
        assert_eq!(found.get("agentio"), Some(&name("agentio")));
        assert_eq!(
            found.get("agentio-workflow"),
            Some(&name("agentio_workflow"))
        );
        assert_eq!(found.get("tools"), None);
        assert_eq!(found.len(), 5);
    }

    #[test]
    fn an_integration_test_names_its_own_package() {
        let found = names("[package]\nname = \"agentio-core\"\n", None, true);
        assert_eq!(found.get("agentio-core"), Some(&name("agentio_core")));
        let found = names("[package]\nname = \"agentio-core\"\n", None, false);
        assert_eq!(found.get("agentio-core"), Some(&Found::Itself));
    }

    #[test]
    fn a_dependency_on_itself_stays_itself() {
        // A package naming itself (a dev-dependency with features, say) is still itself.
        let found = names(
            "[package]\nname = \"agentio-core\"\n[dev-dependencies]\nagentio-core = { path = \".\" }\n",
            None,
            false,
        );
        assert_eq!(found.get("agentio-core"), Some(&Found::Itself));
    }

    #[test]
    fn inherited_entries_follow_the_workspace_renames() {
        let workspace = r#"
            [workspace]
            members = ["app"]
            [workspace.dependencies]
            core2 = { package = "agentio-core", path = "agentio-core" }
            agentio-tools = { path = "agentio-tools" }
        "#;
        let found = names(
            r#"
            [package]
            name = "app"
            [dependencies]
            core2.workspace = true
            agentio-tools = { workspace = true, features = [] }
            "#,
            Some(workspace),
            false,
        );
        assert_eq!(found.get("agentio-core"), Some(&name("core2")));
        assert_eq!(found.get("agentio-tools"), Some(&name("agentio_tools")));
        assert_eq!(found.get("core2"), None);
    }

    #[test]
    fn the_workspace_is_read_only_for_an_inherited_entry() {
        let manifest: DocumentMut =
            "[package]\nname = \"app\"\n[dependencies]\nagentio-core = \"0.1\"\n"
                .parse()
                .unwrap();
        let found = names_in(&manifest, false, || {
            panic!("the workspace manifest was read for a manifest that inherits nothing")
        });
        assert_eq!(found.get("agentio-core"), Some(&name("agentio_core")));
    }

    #[test]
    fn an_unreadable_workspace_leaves_the_entry_under_its_own_name() {
        let found = names(
            "[package]\nname = \"app\"\n[dependencies]\nagentio-core.workspace = true\n",
            None,
            false,
        );
        assert_eq!(found.get("agentio-core"), Some(&name("agentio_core")));
    }

    #[test]
    fn the_workspace_manifest_is_found_by_walking_up() {
        let root = tempfile::tempdir().unwrap();
        let write = |relative: &str, text: &str| {
            let path = root.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            path
        };
        write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/app\"]\n[workspace.dependencies]\ncore2 = { package = \"agentio-core\", path = \"x\" }\n",
        );
        // A manifest between the two without `[workspace]` is passed over.
        write(
            "crates/Cargo.toml",
            "[package]\nname = \"not-a-workspace\"\n",
        );
        let app = write(
            "crates/app/Cargo.toml",
            "[package]\nname = \"app\"\n[dependencies]\ncore2.workspace = true\n",
        );
        let entry = read_names(&app, false).unwrap();
        assert_eq!(entry.names.get("agentio-core"), Some(&name("core2")));
        // Both manifests' times are kept, so an edit to either is seen.
        assert_eq!(entry.stamps.len(), 2);
        assert_eq!(entry.stamps[1].0, root.path().join("Cargo.toml"));

        // `package.workspace` names the root outright.
        write(
            "elsewhere/Cargo.toml",
            "[workspace]\n[workspace.dependencies]\ncore3 = { package = \"agentio-core\", path = \"x\" }\n",
        );
        let pointed = write(
            "crates/other/Cargo.toml",
            "[package]\nname = \"other\"\nworkspace = \"../../elsewhere\"\n[dependencies]\ncore3.workspace = true\n",
        );
        let entry = read_names(&pointed, false).unwrap();
        assert_eq!(entry.names.get("agentio-core"), Some(&name("core3")));

        // A package that is its own workspace reads itself.
        let alone = write(
            "alone/Cargo.toml",
            "[package]\nname = \"alone\"\n[dependencies]\nc.workspace = true\n[workspace]\n[workspace.dependencies]\nc = { package = \"agentio-core\", path = \"x\" }\n",
        );
        let entry = read_names(&alone, false).unwrap();
        assert_eq!(entry.names.get("agentio-core"), Some(&name("c")));
    }

    #[test]
    fn an_answer_is_read_again_when_its_manifest_changes() {
        let root = tempfile::tempdir().unwrap();
        let first = root.path().join("a/Cargo.toml");
        let second = root.path().join("b/Cargo.toml");
        for (path, rename) in [(&first, "one"), (&second, "two")] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(
                path,
                format!("[package]\nname = \"p\"\n[dependencies]\n{rename} = {{ package = \"agentio-core\", path = \"x\" }}\n"),
            )
            .unwrap();
        }
        // Two manifests, each with its own answer.
        assert_eq!(name_at(&first, false, "agentio-core"), Some(name("one")));
        assert_eq!(name_at(&second, false, "agentio-core"), Some(name("two")));
        assert_eq!(name_at(&first, false, "agentio-core"), Some(name("one")));
        // An edit is seen (its time set apart, whatever the file system's clock resolution).
        std::fs::write(
            &first,
            "[package]\nname = \"p\"\n[dependencies]\nagentio-core = \"0.1\"\n",
        )
        .unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(&first)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(
            name_at(&first, false, "agentio-core"),
            Some(name("agentio_core"))
        );
        // The stale answer was replaced, not kept beside the new one, and the other
        // manifest's was kept.
        let count = |path: &Path| {
            let cache = CACHE.lock().unwrap();
            cache.iter().filter(|e| e.manifest == path).count()
        };
        assert_eq!((count(&first), count(&second)), (1, 1));
        assert_eq!(name_at(&second, false, "agentio-core"), Some(name("two")));
        assert_eq!(name_at(&first, false, "agentio"), None);
        // Read and not named, against not readable.
        assert_eq!(lookup_at(&first, false, "serde"), Some(None));
        assert_eq!(
            lookup_at(&root.path().join("none/Cargo.toml"), false, "serde"),
            None
        );
    }

    #[test]
    fn this_crates_own_manifest_is_read_through_the_environment() {
        // `cargo test` sets `CARGO_MANIFEST_DIR` to agentio-derive's folder, whose manifest names
        // syn (a dependency, inherited from the workspace) and agentio-derive itself, and
        // neither the runtime crates nor serde.
        assert_eq!(crate_name("syn"), Some(name("syn")));
        assert_eq!(crate_name("agentio-derive"), Some(Found::Itself));
        assert_eq!(crate_name("agentio"), None);
        assert_eq!(crate_name("agentio-core"), None);
        assert!(!lacks("syn"));
        assert!(lacks("serde"));
        assert!(lacks("agentio"));
        // Unless the replay of code from crates that have them says otherwise.
        ASSUME_DEPENDENCIES.with(|assume| assume.set(true));
        assert!(!lacks("serde"));
        ASSUME_DEPENDENCIES.with(|assume| assume.set(false));
        let serde = reexported("serde");
        assert_eq!(
            quote::quote!(#serde).to_string(),
            ":: agentio_core :: __private :: serde"
        );
        let path = agentio_tools();
        assert_eq!(quote::quote!(#path).to_string(), ":: agentio_tools");
    }

    #[test]
    fn a_broken_manifest_names_nothing() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("Cargo.toml");
        std::fs::write(&path, "[package\nname = ").unwrap();
        assert!(read_names(&path, false).is_none());
        assert!(read_names(&root.path().join("missing/Cargo.toml"), false).is_none());
    }
}
