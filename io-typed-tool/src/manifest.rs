//! TOOL.md files: a contract as YAML frontmatter plus a markdown body, and back.

use std::fmt;

use serde_json::Value;

use crate::contract::ToolContract;
use crate::frontmatter::{REMOVED_FIELDS, frontmatter_violations};

/// A TOOL.md file: its contract (the frontmatter) and its informational markdown body.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolManifest {
    /// The frontmatter, as a contract.
    pub contract: ToolContract,
    /// The markdown after the frontmatter.
    pub body: String,
}

/// One problem in a TOOL.md file: which field, which line, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestProblem {
    /// A JSON pointer to the field (`/version`, `/retry/backoff`); empty for the file itself.
    pub field: String,
    /// The 1-based line in the file, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.field.is_empty() {
            write!(f, "`{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Why a TOOL.md could not be read: every problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// The problems, in file order where lines are known.
    pub problems: Vec<ManifestProblem>,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid TOOL.md:")?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

fn one(field: &str, line: Option<usize>, message: impl Into<String>) -> ManifestError {
    ManifestError {
        problems: vec![ManifestProblem {
            field: field.to_owned(),
            line,
            message: message.into(),
        }],
    }
}

impl ToolManifest {
    /// A manifest for `contract` with a body generated from it (a description section and the
    /// standard error codes).
    pub fn from_contract(contract: ToolContract) -> Self {
        let body = format!(
            "## Description\n\n{}\n\n## Errors\n\n| Code | Meaning |\n|---|---|\n\
             | `input_invalid` | The arguments do not match `inputs`; `cause.violations` lists each place. |\n\
             | `timeout` | The call took longer than {} ms. |\n\
             | `internal` | The tool failed unexpectedly. |\n",
            contract.description, contract.timeout_ms
        );
        ToolManifest { contract, body }
    }

    /// Renders the file: `---`, the YAML frontmatter, `---`, the body.
    pub fn render(&self) -> String {
        let yaml = serde_norway::to_string(&self.contract.to_frontmatter())
            .unwrap_or_else(|err| format!("# the contract could not be rendered: {err}\n"));
        let mut text = String::with_capacity(yaml.len() + self.body.len() + 16);
        text.push_str("---\n");
        text.push_str(&yaml);
        if !yaml.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("---\n");
        if !self.body.is_empty() {
            text.push('\n');
            text.push_str(&self.body);
        }
        text
    }

    /// Parses a TOOL.md file. Every problem names its field and line: a missing or unclosed
    /// frontmatter, YAML syntax, a removed field (with where it moved), a violation of the
    /// published TOOL.schema.json, and the contract checks of [`ToolContract::check`].
    ///
    /// A missing `approval` is `auto`, or `on-mutate` when `mutates` is non-empty. Hostile
    /// input is refused before it is parsed for real: a frontmatter over 1 MiB, nesting deeper
    /// than 32 levels, or growing past 4 MiB once its aliases are expanded. Never panics.
    ///
    /// ```
    /// use agentio_tools::ToolManifest;
    /// let text = "---\nid: notes.search\nname: Search notes\nversion: 1.0.0\ndescription: Searches notes.\ninputs: { type: object }\noutputs: { type: object }\n---\n";
    /// let manifest = ToolManifest::parse(text)?;
    /// assert_eq!(manifest.contract.id, "notes.search");
    /// assert!(ToolManifest::parse("---\u{a0}\n---\n").is_err());
    /// # Ok::<(), agentio_tools::ManifestError>(())
    /// ```
    pub fn parse(text: &str) -> Result<ToolManifest, ManifestError> {
        use crate::manifest_limits::MissingFence;
        let (yaml, rest) = match crate::manifest_limits::split(text) {
            Ok(parts) => parts,
            Err(MissingFence::Opening) => {
                return Err(one(
                    "",
                    Some(1),
                    "a TOOL.md starts with a `---` line opening the YAML frontmatter",
                ));
            }
            Err(MissingFence::Closing) => {
                return Err(one(
                    "",
                    None,
                    "the frontmatter is not closed: add a `---` line after it",
                ));
            }
        };
        let body = rest.strip_prefix('\n').unwrap_or(rest).to_owned();
        // The YAML starts on line 2 of the file.
        let mut frontmatter = crate::manifest_limits::parse(yaml)
            .map_err(|(line, message)| one("", line.map(|l| l + 1), message))?;
        let Some(fields) = frontmatter.as_object_mut() else {
            return Err(one(
                "",
                Some(2),
                "the frontmatter must be a mapping of fields",
            ));
        };
        // AIP-14: `approval` defaults to `auto`; agent-io (like the reference `defineTool`)
        // makes it `on-mutate` for a tool that declares `mutates`, which TOOL.schema.json
        // requires of any tool that mutates.
        if !fields.contains_key("approval") {
            let mutates = fields
                .get("mutates")
                .and_then(Value::as_array)
                .is_some_and(|m| !m.is_empty());
            let default = if mutates { "on-mutate" } else { "auto" };
            fields.insert("approval".into(), Value::String(default.into()));
        }
        let fields = &*fields;
        let line_of = |pointer: &str| key_line(yaml, pointer);

        let mut problems: Vec<ManifestProblem> = REMOVED_FIELDS
            .iter()
            .filter(|field| fields.contains_key(**field))
            .map(|field| ManifestProblem {
                field: format!("/{field}"),
                line: line_of(&format!("/{field}")),
                message: format!(
                    "`{field}` is no longer a TOOL.md field: it belongs to the driver layer (AIP-30); move it to a DRIVER.md that implements this tool"
                ),
            })
            .collect();
        let removed = |pointer: &str| REMOVED_FIELDS.iter().any(|f| pointer == format!("/{f}"));
        problems.extend(
            frontmatter_violations(&frontmatter)
                .into_iter()
                .filter(|v| !removed(&v.pointer))
                .map(|v| ManifestProblem {
                    line: line_of(&v.pointer),
                    field: v.pointer,
                    message: v.message,
                }),
        );
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            return Err(ManifestError { problems });
        }
        let contract = ToolContract::from_frontmatter(frontmatter).map_err(|err| {
            one(
                "",
                None,
                format!("the frontmatter does not describe a contract: {err}"),
            )
        })?;
        contract.check().map_err(|err| ManifestError {
            problems: err
                .problems
                .into_iter()
                .map(|p| ManifestProblem {
                    line: line_of(&p.pointer),
                    field: p.pointer,
                    message: p.message,
                })
                .collect(),
        })?;
        Ok(ToolManifest { contract, body })
    }
}

/// The file line of the top-level key a pointer starts with (YAML starts on file line 2).
fn key_line(yaml: &str, pointer: &str) -> Option<usize> {
    let key = pointer
        .trim_start_matches('/')
        .split('/')
        .next()
        .filter(|k| !k.is_empty())?;
    yaml.lines()
        .position(|line| {
            let line = line.trim_end();
            line.strip_prefix(key)
                .or_else(|| line.strip_prefix(&format!("\"{key}\"")))
                .or_else(|| line.strip_prefix(&format!("'{key}'")))
                .is_some_and(|rest| rest.starts_with(':'))
        })
        .map(|index| index + 2)
}

#[cfg(test)]
mod tests {
    use super::{ManifestError, ManifestProblem, ToolManifest};
    use crate::ToolContract;
    use serde_json::json;

    fn problem(field: &str, line: Option<usize>) -> ManifestProblem {
        ManifestProblem {
            field: field.into(),
            line,
            message: "is wrong".into(),
        }
    }

    #[test]
    fn problems_show_their_line_and_field_when_known() {
        assert_eq!(
            problem("/version", Some(3)).to_string(),
            "line 3: `/version`: is wrong"
        );
        assert_eq!(
            problem("/version", None).to_string(),
            "`/version`: is wrong"
        );
        assert_eq!(problem("", Some(1)).to_string(), "line 1: is wrong");
        assert_eq!(problem("", None).to_string(), "is wrong");
        let error = ManifestError {
            problems: vec![problem("/id", Some(2)), problem("", None)],
        };
        assert_eq!(
            error.to_string(),
            "invalid TOOL.md:\n  - line 2: `/id`: is wrong\n  - is wrong"
        );
    }

    /// Asserts that `text` is refused as YAML, with one problem on the file's line `line`.
    fn assert_yaml_error_on_line(text: &str, line: usize) {
        let err = ToolManifest::parse(text).unwrap_err();
        assert_eq!(err.problems.len(), 1, "{err}");
        assert_eq!(err.problems[0].line, Some(line), "{err}");
        assert!(
            err.problems[0]
                .message
                .starts_with("the frontmatter is not valid YAML"),
            "{err}"
        );
    }

    #[test]
    fn a_yaml_syntax_error_names_its_line_in_the_file() {
        // The frontmatter starts on the file's line 2. A tab after `name: echo` is found while
        // that line's scalar is read: the error is on the file's line 2, not the YAML's line 1.
        assert_yaml_error_on_line("---\nname: echo\n\tid: echo\n---\n", 2);
    }

    #[test]
    fn yaml_the_size_check_takes_but_serde_refuses_names_its_line_in_the_file() {
        // A sequence as a mapping key is well-formed YAML (the size check's reader takes it),
        // but a field name must be a string: serde_norway refuses it on the YAML's line 3, the
        // file's line 4.
        assert_yaml_error_on_line("---\nname: echo\nid: echo\n? [a, b]\n: x\n---\n", 4);
    }

    #[test]
    fn a_rendered_manifest_has_one_newline_before_each_fence() {
        let contract = ToolContract::new(
            "echo",
            "1.0.0",
            "Echoes.",
            json!({"type": "object"}),
            json!({}),
        );
        let mut manifest = ToolManifest::from_contract(contract);
        let text = manifest.render();
        assert!(text.starts_with("---\nname: echo\nid: echo\n"), "{text}");
        assert!(!text.contains("\n\n---\n"), "{text}");
        assert!(
            text.contains("\n---\n\n## Description\n\nEchoes.\n"),
            "{text}"
        );
        manifest.body = String::new();
        let bare = manifest.render();
        assert!(
            bare.ends_with("\n---\n") && !bare.ends_with("\n\n---\n"),
            "{bare}"
        );
        assert_eq!(ToolManifest::parse(&bare).unwrap().body, "");
    }
}
