//! Drift: a Rust tool and its checked-in TOOL.md must say the same thing.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::contract::ToolContract;
use crate::manifest::{ManifestError, ToolManifest};

/// The environment variable that, set to `1`, makes [`check_manifest`] write the manifest from
/// the Rust contract instead of comparing (review the diff before committing it).
pub const BLESS_VAR: &str = "AGENT_IO_BLESS";

/// One place where the Rust contract and the manifest differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// A JSON pointer into the frontmatter (`/inputs/properties/path/type`).
    pub pointer: String,
    /// What the Rust contract says there (`None`: nothing).
    pub rust: Option<Value>,
    /// What the manifest says there (`None`: nothing).
    pub manifest: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| {
            v.as_ref()
                .map_or_else(|| "nothing".to_owned(), |v| format!("`{v}`"))
        };
        write!(
            f,
            "{}: Rust has {}, TOOL.md has {}",
            self.pointer,
            show(&self.rust),
            show(&self.manifest)
        )
    }
}

/// Why a tool and its manifest do not agree.
#[derive(Debug)]
pub enum DriftError {
    /// The manifest could not be read.
    Io {
        /// The manifest's path.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The manifest is not a valid TOOL.md.
    Invalid {
        /// The manifest's path.
        path: PathBuf,
        /// What is wrong with it.
        error: ManifestError,
    },
    /// The manifest and the Rust contract differ.
    Drift {
        /// The manifest's path.
        path: PathBuf,
        /// Every difference, by pointer.
        differences: Vec<Difference>,
    },
}

impl fmt::Display for DriftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriftError::Io { path, error } => {
                write!(f, "{}: cannot be read: {error}", path.display())
            }
            DriftError::Invalid { path, error } => write!(f, "{}: {error}", path.display()),
            DriftError::Drift { path, differences } => {
                write!(
                    f,
                    "{} has drifted from the Rust tool (set {BLESS_VAR}=1 to rewrite it from Rust):",
                    path.display()
                )?;
                for difference in differences {
                    write!(f, "\n  - {difference}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for DriftError {}

/// Compares `contract` (from Rust) with the TOOL.md at `path`, field by field and schema
/// property by schema property. With `AGENT_IO_BLESS=1` it writes the file instead, keeping an
/// existing body.
///
/// Put it in a test, one line per tool, to make the suite fail when the Rust types and the
/// checked-in manifest disagree:
///
/// ```
/// use agentio_tools::{ToolContract, ToolManifest, check_manifest};
/// use serde_json::json;
///
/// let contract = ToolContract::new("echo", "1.0.0", "Echoes.", json!({"type": "object"}), json!({}));
/// let path = std::env::temp_dir().join(format!("echo-TOOL-{}.md", std::process::id()));
/// std::fs::write(&path, ToolManifest::from_contract(contract.clone()).render()).unwrap();
/// check_manifest(&contract, &path).unwrap();
///
/// let mut changed = contract.clone();
/// changed.inputs = json!({"type": "object", "required": ["text"]});
/// let err = check_manifest(&changed, &path).unwrap_err();
/// assert!(err.to_string().contains("/inputs/required: Rust has"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn check_manifest(contract: &ToolContract, path: impl AsRef<Path>) -> Result<(), DriftError> {
    check_or_bless(
        contract,
        path.as_ref(),
        bless_requested(std::env::var(BLESS_VAR)),
    )
}

/// Whether the bless variable asks for a write: only the exact value `1` does (`0`, `true` or
/// an unset variable check, so a stray value never overwrites a manifest).
fn bless_requested(value: Result<String, std::env::VarError>) -> bool {
    value.is_ok_and(|v| v == "1")
}

/// [`check_manifest`] with the bless decision made by the caller.
fn check_or_bless(contract: &ToolContract, path: &Path, bless: bool) -> Result<(), DriftError> {
    let existing = std::fs::read_to_string(path);
    if bless {
        let body = existing
            .ok()
            .and_then(|text| ToolManifest::parse(&text).ok())
            .map(|m| m.body);
        let mut manifest = ToolManifest::from_contract(contract.clone());
        if let Some(body) = body {
            manifest.body = body;
        }
        return std::fs::write(path, manifest.render()).map_err(|error| DriftError::Io {
            path: path.to_owned(),
            error,
        });
    }
    let text = existing.map_err(|error| DriftError::Io {
        path: path.to_owned(),
        error,
    })?;
    let manifest = ToolManifest::parse(&text).map_err(|error| DriftError::Invalid {
        path: path.to_owned(),
        error,
    })?;
    let mut differences = Vec::new();
    diff(
        &contract.to_frontmatter(),
        &manifest.contract.to_frontmatter(),
        &mut String::new(),
        &mut differences,
    );
    if differences.is_empty() {
        Ok(())
    } else {
        Err(DriftError::Drift {
            path: path.to_owned(),
            differences,
        })
    }
}

/// Every pointer where `rust` and `manifest` differ, objects compared key by key (order does
/// not matter) and everything else by value.
pub(crate) fn diff(rust: &Value, manifest: &Value, at: &mut String, out: &mut Vec<Difference>) {
    match (rust, manifest) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys().filter(|k| !a.contains_key(*k)))
                .collect();
            keys.sort();
            for key in keys {
                let mark = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(x, y, at, out),
                    (x, y) => out.push(Difference {
                        pointer: at.clone(),
                        rust: x.cloned(),
                        manifest: y.cloned(),
                    }),
                }
                at.truncate(mark);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let mark = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                diff(x, y, at, out);
                at.truncate(mark);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            pointer: at.clone(),
            rust: Some(a.clone()),
            manifest: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::{Difference, DriftError, bless_requested, check_or_bless, diff};
    use crate::{ToolContract, ToolManifest};
    use serde_json::{Value, json};
    use std::env::VarError;

    #[test]
    fn only_the_exact_value_1_blesses() {
        assert!(bless_requested(Ok("1".into())));
        for other in ["0", "", "true", "yes", " 1", "11"] {
            assert!(!bless_requested(Ok(other.into())), "{other:?} blessed");
        }
        assert!(!bless_requested(Err(VarError::NotPresent)));
    }

    fn contract(description: &str) -> ToolContract {
        ToolContract::new(
            "echo",
            "1.0.0",
            description,
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            json!({"type": "object"}),
        )
    }

    #[test]
    fn blessing_rewrites_the_front_matter_and_keeps_the_body() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("TOOL.md");
        let mut old = ToolManifest::from_contract(contract("Old words."));
        old.body = "Hand-written notes stay.\n".into();
        std::fs::write(&path, old.render()).unwrap();

        let new = contract("New words.");
        assert!(matches!(
            check_or_bless(&new, &path, false),
            Err(DriftError::Drift { .. })
        ));
        check_or_bless(&new, &path, true).unwrap();
        check_or_bless(&new, &path, false).unwrap();
        let written = ToolManifest::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written.contract.description, "New words.");
        assert_eq!(written.body, "Hand-written notes stay.\n");
    }

    #[test]
    fn blessing_creates_a_missing_manifest_and_checking_one_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("TOOL.md");
        let err = check_or_bless(&contract("x"), &path, false).unwrap_err();
        assert!(matches!(err, DriftError::Io { .. }), "{err}");
        check_or_bless(&contract("x"), &path, true).unwrap();
        check_or_bless(&contract("x"), &path, false).unwrap();
    }

    fn differences(rust: Value, manifest: Value) -> Vec<Difference> {
        let mut out = Vec::new();
        diff(&rust, &manifest, &mut String::new(), &mut out);
        out
    }

    fn at(pointer: &str, rust: Option<Value>, manifest: Option<Value>) -> Difference {
        Difference {
            pointer: pointer.into(),
            rust,
            manifest,
        }
    }

    #[test]
    fn objects_are_compared_key_by_key_each_key_once() {
        let found = differences(
            json!({ "same": 1, "changed": "a", "rust_only": true, "a/b~c": 1 }),
            json!({ "changed": "b", "same": 1, "manifest_only": null, "a/b~c": 2 }),
        );
        assert_eq!(
            found,
            [
                at("/a~1b~0c", Some(json!(1)), Some(json!(2))),
                at("/changed", Some(json!("a")), Some(json!("b"))),
                at("/manifest_only", None, Some(json!(null))),
                at("/rust_only", Some(json!(true)), None),
            ]
        );
        assert_eq!(
            found[2].to_string(),
            "/manifest_only: Rust has nothing, TOOL.md has `null`"
        );
    }

    #[test]
    fn lists_of_one_length_are_compared_item_by_item_and_others_whole() {
        assert_eq!(
            differences(json!({ "l": [1, 2, 3] }), json!({ "l": [1, 5, 3] })),
            [at("/l/1", Some(json!(2)), Some(json!(5)))]
        );
        assert_eq!(
            differences(json!({ "l": [1, 2] }), json!({ "l": [1, 2, 3] })),
            [at("/l", Some(json!([1, 2])), Some(json!([1, 2, 3])))]
        );
        assert!(differences(json!([1, [2]]), json!([1, [2]])).is_empty());
    }

    #[test]
    fn numbers_are_compared_by_value() {
        // YAML may read `1.0` back where Rust wrote `1`: the same number.
        assert!(differences(json!({ "n": 1 }), json!({ "n": 1.0 })).is_empty());
        assert_eq!(
            differences(json!({ "n": 1 }), json!({ "n": 2 })),
            [at("/n", Some(json!(1)), Some(json!(2)))]
        );
        assert_eq!(
            differences(json!({ "n": 1 }), json!({ "n": "1" })),
            [at("/n", Some(json!(1)), Some(json!("1")))]
        );
    }
}
