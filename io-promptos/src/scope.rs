//! Path scope: workspace-relative paths, normalised, and the pins that allow or forbid them.
//!
//! **Decided** (the document pins a directory as `"docs/prompt_os/io/"`, the reference gateway
//! matches a pin as an exact path or a directory prefix, and a separate pins note describes
//! globs; all three are supported):
//!
//! - A path is relative to the workspace and written with `/`. It is normalised first: empty
//!   segments and `.` segments go (`a//./b/` is `a/b`). Refused, never "fixed": an absolute
//!   path (`/etc`, `C:...`), a `..` segment, a NUL, a backslash, and a path (or pin) over
//!   [`MAX_PATH_BYTES`] bytes, which no workspace file has: matching a glob against a path
//!   takes time and memory that grow with both lengths, so both are bounded.
//! - A pin with a glob character (`*` or `?`) is a glob: `*` matches any run of characters
//!   within one segment, `?` one character, and a `**` segment any number of segments (none
//!   included). Any other pin is a path: it matches itself and everything beneath it, with or
//!   without a trailing `/` (`docs/io` covers `docs/io/a.md`, not `docs/iota.md`). The pin `.`
//!   is the whole workspace.
//! - Forbidden wins over allowed.
//!
//! ```
//! use agentio_promptos::scope::{Placement, Scope};
//! let scope = Scope::new(&["docs/".into(), "src/**/*.rs".into()], &["docs/private".into()])?;
//! assert_eq!(scope.place("docs/io/schemas.md")?, Placement::Allowed);
//! assert_eq!(scope.place("src/a/b/lib.rs")?, Placement::Allowed);
//! assert!(matches!(scope.place("docs/private/key.md")?, Placement::Forbidden(_)));
//! assert_eq!(scope.place("README.md")?, Placement::Outside);
//! assert!(scope.place("docs/../etc/passwd").is_err());
//! # Ok::<(), agentio_promptos::scope::PathError>(())
//! ```

use std::fmt;

/// Why a path (or a pin) is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// Nothing is named (`""`, or only `.` segments where a file is meant).
    Empty,
    /// It starts at a root (`/...`, or a drive like `C:`): paths are relative to the workspace.
    Absolute(String),
    /// It has a `..` segment, which could leave the workspace.
    ParentSegment(String),
    /// It has a NUL character.
    Nul(String),
    /// It has a backslash: paths are written with `/`.
    Backslash(String),
    /// It is longer than [`MAX_PATH_BYTES`] bytes.
    TooLong(String),
}

/// The longest path or pin accepted, in bytes (the workspace's own limit,
/// [`agentio_core::files::MAX_PATH_BYTES`]).
pub const MAX_PATH_BYTES: usize = agentio_core::files::MAX_PATH_BYTES;

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Empty => f.write_str("the path is empty"),
            PathError::Absolute(p) => {
                write!(f, "`{p}` is absolute; paths are relative to the workspace")
            }
            PathError::ParentSegment(p) => write!(f, "`{p}` has a `..` segment"),
            PathError::Nul(p) => write!(f, "{p:?} has a NUL character"),
            PathError::Backslash(p) => write!(f, "`{p}` has a backslash; write paths with `/`"),
            PathError::TooLong(p) => write!(f, "`{p}` is longer than {MAX_PATH_BYTES} bytes"),
        }
    }
}

impl std::error::Error for PathError {}

/// The normal form of a workspace-relative path: `/`-separated, without empty or `.`
/// segments; `""` is the workspace itself.
///
/// ```
/// use agentio_promptos::scope::normalize;
/// assert_eq!(normalize("./docs//io/").unwrap(), "docs/io");
/// assert!(normalize("/etc/passwd").is_err());
/// assert!(normalize("a/../b").is_err());
/// assert!(normalize("a\\b").is_err());
/// ```
pub fn normalize(path: &str) -> Result<String, PathError> {
    // Quoted in errors, clipped: a hostile path must not make the message huge.
    let shown = || clip(path);
    if path.contains('\0') {
        return Err(PathError::Nul(shown()));
    }
    if path.contains('\\') {
        return Err(PathError::Backslash(shown()));
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with('/') || drive {
        return Err(PathError::Absolute(shown()));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong(shown()));
    }
    let mut segments = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(PathError::ParentSegment(shown())),
            other => segments.push(other),
        }
    }
    Ok(segments.join("/"))
}

/// [`normalize`], for a path that must name a file or directory (not the workspace itself).
pub fn normalize_file(path: &str) -> Result<String, PathError> {
    let normal = normalize(path)?;
    if normal.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(normal)
}

fn clip(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// One pin: a path (exact or directory prefix) or a glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Matches itself and everything beneath it (`""`: everything).
    Path(String),
    /// Matches by segments (see the module documentation).
    Glob(Vec<String>),
}

impl Pin {
    /// Reads a pin; refuses one that is not a well-formed relative path.
    pub fn parse(pin: &str) -> Result<Pin, PathError> {
        let normal = normalize(pin)?;
        if normal.contains(['*', '?']) {
            Ok(Pin::Glob(normal.split('/').map(str::to_owned).collect()))
        } else {
            Ok(Pin::Path(normal))
        }
    }

    /// Whether the pin covers `path` (already normalised).
    pub fn covers(&self, path: &str) -> bool {
        match self {
            Pin::Path(pin) => {
                pin.is_empty()
                    || path == pin
                    || path
                        .strip_prefix(pin.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
            Pin::Glob(pattern) => {
                let segments: Vec<&str> = if path.is_empty() {
                    Vec::new()
                } else {
                    path.split('/').collect()
                };
                glob_segments(pattern, &segments)
            }
        }
    }
}

/// Whether the pattern's segments match the path's. `**` is tried at each length; the work is
/// bounded by pattern length × path length (memoised).
fn glob_segments(pattern: &[String], path: &[&str]) -> bool {
    let (p, s) = (pattern.len(), path.len());
    // matches[i][j]: pattern[i..] matches path[j..].
    let mut matches = vec![vec![false; s + 1]; p + 1];
    matches[p][s] = true;
    for i in (0..p).rev() {
        for j in (0..=s).rev() {
            matches[i][j] = if pattern[i] == "**" {
                matches[i + 1][j] || (j < s && matches[i][j + 1])
            } else {
                j < s && glob_segment(&pattern[i], path[j]) && matches[i + 1][j + 1]
            };
        }
    }
    matches[0][0]
}

/// One segment against `*` (any run) and `?` (one character, not one byte).
fn glob_segment(pattern: &str, text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    let (p, t) = (pattern.len(), chars.len());
    let mut matches = vec![vec![false; t + 1]; p + 1];
    matches[p][t] = true;
    for i in (0..p).rev() {
        for j in (0..=t).rev() {
            matches[i][j] = match pattern[i] {
                '*' => matches[i + 1][j] || (j < t && matches[i][j + 1]),
                '?' => j < t && matches[i + 1][j + 1],
                c => j < t && chars[j] == c && matches[i + 1][j + 1],
            };
        }
    }
    matches[0][0]
}

/// Where a path falls under a task's pins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// An allowed pin covers it and no forbidden one does.
    Allowed,
    /// This forbidden pin covers it (whatever the allowed pins say).
    Forbidden(String),
    /// No allowed pin covers it.
    Outside,
}

/// A task's pins, parsed.
#[derive(Clone, Debug)]
pub struct Scope {
    allowed: Vec<(String, Pin)>,
    forbidden: Vec<(String, Pin)>,
}

impl Scope {
    /// Parses both lists; the first malformed pin is the error.
    pub fn new(allowed: &[String], forbidden: &[String]) -> Result<Scope, PathError> {
        let parse = |pins: &[String]| -> Result<Vec<(String, Pin)>, PathError> {
            pins.iter()
                .map(|pin| Ok((pin.clone(), Pin::parse(pin)?)))
                .collect()
        };
        Ok(Scope {
            allowed: parse(allowed)?,
            forbidden: parse(forbidden)?,
        })
    }

    /// Where `path` falls; a malformed path is an error, never a placement.
    pub fn place(&self, path: &str) -> Result<Placement, PathError> {
        let path = normalize_file(path)?;
        if let Some((pin, _)) = self.forbidden.iter().find(|(_, pin)| pin.covers(&path)) {
            return Ok(Placement::Forbidden(pin.clone()));
        }
        if self.allowed.iter().any(|(_, pin)| pin.covers(&path)) {
            Ok(Placement::Allowed)
        } else {
            Ok(Placement::Outside)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(pin: &str, path: &str) -> bool {
        Pin::parse(pin).unwrap().covers(&normalize(path).unwrap())
    }

    #[test]
    fn a_path_pin_is_exact_or_a_directory_prefix() {
        assert!(covers("docs/prompt_os/io/", "docs/prompt_os/io/schemas.md"));
        assert!(covers("docs/prompt_os/io", "docs/prompt_os/io/schemas.md"));
        assert!(covers("docs/a.md", "docs/a.md"));
        assert!(!covers("docs/io", "docs/iota.md"));
        assert!(!covers("docs/io/", "docs"));
        assert!(covers(".", "anything/at/all"));
        assert!(covers("./docs", "docs/x"));
    }

    #[test]
    fn globs_match_by_segment() {
        assert!(covers("src/*.rs", "src/lib.rs"));
        assert!(!covers("src/*.rs", "src/a/lib.rs"));
        assert!(covers("src/**/*.rs", "src/lib.rs"));
        assert!(covers("src/**/*.rs", "src/a/b/lib.rs"));
        assert!(!covers("src/**/*.rs", "srcx/lib.rs"));
        assert!(covers("**", "a/b/c"));
        assert!(covers("docs/?.md", "docs/é.md"));
        assert!(!covers("docs/?.md", "docs/ab.md"));
        assert!(covers("a/**/b/**/c", "a/x/b/y/z/c"));
        assert!(!covers("a/**/b", "a/x/c"));
        // A glob is not a prefix: `docs/*` covers direct children only.
        assert!(!covers("docs/*", "docs/a/b.md"));
    }

    #[test]
    fn hostile_paths_are_refused_not_repaired() {
        assert_eq!(normalize(""), Ok(String::new()));
        assert_eq!(normalize_file("./"), Err(PathError::Empty));
        assert!(matches!(normalize("/abs"), Err(PathError::Absolute(_))));
        assert!(matches!(normalize("C:/x"), Err(PathError::Absolute(_))));
        assert!(matches!(
            normalize("a/.."),
            Err(PathError::ParentSegment(_))
        ));
        assert!(matches!(
            normalize("../a"),
            Err(PathError::ParentSegment(_))
        ));
        assert!(matches!(normalize("a\0b"), Err(PathError::Nul(_))));
        assert!(matches!(normalize("a\\b"), Err(PathError::Backslash(_))));
        assert!(matches!(normalize("\\a"), Err(PathError::Backslash(_))));
        // `...` is a name, not a parent.
        assert_eq!(normalize("a/.../b"), Ok("a/.../b".into()));
        // Long hostile paths are clipped in the message, at a character boundary.
        let long = format!("/{}", "x".repeat(10_000));
        let said = normalize(&long).unwrap_err().to_string();
        assert!(
            said.len() < 300 && said.starts_with("`/xxx") && said.contains('…'),
            "{said}"
        );
        let wide = format!("/{}", "é".repeat(300));
        let PathError::Absolute(shown) = normalize(&wide).unwrap_err() else {
            panic!("absolute");
        };
        assert_eq!(shown, format!("/{}…", "é".repeat(99)));
        assert_eq!(clip("short"), "short");
        assert_eq!(clip(&"y".repeat(200)), "y".repeat(200));
    }

    #[test]
    fn forbidden_wins_over_allowed() {
        let scope = Scope::new(&["docs".into()], &["docs/secret/**".into()]).unwrap();
        assert_eq!(scope.place("docs/a.md").unwrap(), Placement::Allowed);
        assert_eq!(
            scope.place("docs/secret/x/y.md").unwrap(),
            Placement::Forbidden("docs/secret/**".into())
        );
        assert_eq!(scope.place("src/a.rs").unwrap(), Placement::Outside);
        assert!(Scope::new(&["../up".into()], &[]).is_err());
    }

    #[test]
    fn paths_and_pins_are_bounded_in_length() {
        let longest = "a/".repeat(MAX_PATH_BYTES / 2 - 1) + "bc";
        assert_eq!(longest.len(), MAX_PATH_BYTES);
        assert_eq!(normalize(&longest).unwrap().len(), MAX_PATH_BYTES);
        let over = longest.clone() + "d";
        let err = normalize(&over).unwrap_err();
        assert!(matches!(err, PathError::TooLong(_)), "{err:?}");
        assert!(
            err.to_string().ends_with("is longer than 1024 bytes"),
            "{err}"
        );
        // A hostile glob pin and a hostile path, each far over the limit, are refused at
        // once: matching them would take time and memory growing with both lengths.
        let pin = format!("{}x", "*a".repeat(50_000));
        assert!(matches!(Pin::parse(&pin), Err(PathError::TooLong(_))));
        let scope = Scope::new(&["**/*a*a*a*b".into()], &[]).unwrap();
        assert!(matches!(
            scope.place(&"a".repeat(1_000_000)),
            Err(PathError::TooLong(_))
        ));
        // The limit counts the path as written, before normalisation.
        assert!(normalize(&("./".repeat(MAX_PATH_BYTES) + "a")).is_err());
    }

    #[test]
    fn glob_matching_stays_polynomial_on_hostile_patterns() {
        let pattern = vec!["**".to_owned(); 200];
        let path: Vec<&str> = vec!["a"; 200];
        assert!(glob_segments(&pattern, &path));
        let star = "*".repeat(300) + "b";
        assert!(!glob_segment(&star, &"a".repeat(300)));
    }
}
