//! Workspace paths: lexical checks, one-pass token interpolation, and resolution that never
//! leaves the workspace (no `..`, no absolute path, no symlink out, no NUL).

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The interpolation tokens of AIP-16, in the order they are documented.
pub const TOKENS: &[&str] = &["<runId>", "<workflowId>", "<toolId>", "<isoDate>"];

/// The longest workspace path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// The longest path component accepted, in bytes (the usual file-system limit).
pub const MAX_COMPONENT_BYTES: usize = 255;
/// The longest file key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 128;

/// Why a workspace path or a file key was refused. Nothing is read or written for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// The path is empty.
    Empty,
    /// The path contains a NUL byte.
    Nul,
    /// The path is absolute (or has a drive or root prefix).
    Absolute,
    /// The path has a `..` component.
    ParentComponent,
    /// The path, or one of its components, is too long.
    TooLong,
    /// A `<...>` token outside the allowed set (or an unclosed `<`).
    UnknownToken(String),
    /// The path resolves (through a symlink) outside the workspace.
    EscapesWorkspace,
    /// The key is not a plain file name.
    InvalidKey,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Empty => f.write_str("the path is empty"),
            PathError::Nul => f.write_str("the path contains a NUL byte"),
            PathError::Absolute => f.write_str(
                "the path is absolute; workspace paths are relative to the workspace root",
            ),
            PathError::ParentComponent => f.write_str(
                "the path has a `..` segment; workspace paths cannot leave the workspace",
            ),
            PathError::TooLong => write!(
                f,
                "the path is too long (at most {MAX_PATH_BYTES} bytes, {MAX_COMPONENT_BYTES} per segment)"
            ),
            PathError::UnknownToken(token) => write!(
                f,
                "`{token}` is not an interpolation token; use `<runId>`, `<workflowId>`, `<toolId>` or `<isoDate>`"
            ),
            PathError::EscapesWorkspace => {
                f.write_str("the path leads outside the workspace (through a symbolic link)")
            }
            PathError::InvalidKey => write!(
                f,
                "a file key is a plain file name: letters, digits, `.`, `_` and `-`, not starting with `.`, at most {MAX_KEY_BYTES} bytes"
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// Checks a file key: it names `<fsRoot>/<key>`, so it is one plain file name.
pub fn check_key(key: &str) -> Result<(), PathError> {
    let valid = !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && !key.starts_with('.')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(PathError::InvalidKey)
    }
}

/// Checks a workspace path as written (tokens allowed): relative, no `..`, no NUL, known
/// tokens only, bounded length.
pub fn check_template(path: &str) -> Result<(), PathError> {
    for token in tokens_in(path)? {
        if !TOKENS.contains(&token) {
            return Err(PathError::UnknownToken(token.to_owned()));
        }
    }
    check_relative(path)
}

/// Checks a concrete workspace path (after interpolation).
pub fn check_relative(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.contains('\0') {
        return Err(PathError::Nul);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong);
    }
    // `\` is a separator on Windows; refuse it everywhere so a manifest means the same on
    // every host.
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(PathError::Absolute);
    }
    for segment in path.split(['/', '\\']) {
        if segment == ".." {
            return Err(PathError::ParentComponent);
        }
        if segment.len() > MAX_COMPONENT_BYTES {
            return Err(PathError::TooLong);
        }
    }
    for component in Path::new(path).components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(PathError::ParentComponent),
            Component::RootDir | Component::Prefix(_) => return Err(PathError::Absolute),
        }
    }
    Ok(())
}

/// The `<...>` tokens of a path, in order. An unclosed `<` is an error.
fn tokens_in(path: &str) -> Result<Vec<&str>, PathError> {
    let mut tokens = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else {
            return Err(PathError::UnknownToken(rest[start..].to_owned()));
        };
        tokens.push(&rest[start..start + len + 1]);
        rest = &rest[start + len + 1..];
    }
    Ok(tokens)
}

/// The values the tokens stand for in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunVars {
    /// `<runId>`.
    pub run_id: String,
    /// `<workflowId>` and `<toolId>`: the importing manifest's id.
    pub unit_id: String,
    /// `<isoDate>`: `YYYY-MM-DD`, UTC.
    pub iso_date: String,
}

impl RunVars {
    /// Values for `run_id` of `unit_id`, dated today (UTC).
    pub fn new(run_id: impl Into<String>, unit_id: impl Into<String>) -> Self {
        RunVars {
            run_id: run_id.into(),
            unit_id: unit_id.into(),
            iso_date: today_utc(),
        }
    }
}

/// Replaces the tokens of `template` in one pass: a token that appears inside a replaced value
/// is left as it is. The result is checked again, so a value that contains `..`, `/` at the
/// start or a NUL cannot lead out of the workspace.
pub fn interpolate(template: &str, vars: &RunVars) -> Result<String, PathError> {
    check_template(template)?;
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let len = rest[start..]
            .find('>')
            .map_or(rest.len() - start, |i| i + 1);
        let token = &rest[start..start + len];
        out.push_str(match token {
            "<runId>" => &vars.run_id,
            "<workflowId>" | "<toolId>" => &vars.unit_id,
            "<isoDate>" => &vars.iso_date,
            other => other,
        });
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    check_relative(&out)?;
    Ok(out)
}

/// Today's date in UTC, `YYYY-MM-DD` (civil-from-days, Howard Hinnant's algorithm).
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    iso_date_from_unix_days(i64::try_from(secs / 86_400).unwrap_or(0))
}

fn iso_date_from_unix_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// A workspace: the one directory file contracts read from and write to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens the workspace at `root` (which must exist), resolving it once so that later
    /// containment checks compare real paths.
    pub fn open(root: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(Workspace {
            root: std::fs::canonicalize(root)?,
        })
    }

    /// The workspace root, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real path of an existing workspace file, refused when the path is not a plain
    /// relative path or when it resolves (through symlinks) outside the workspace.
    pub fn resolve_existing(&self, relative: &str) -> Result<Option<PathBuf>, PathError> {
        check_relative(relative)?;
        let joined = self.root.join(relative);
        match std::fs::canonicalize(&joined) {
            Ok(real) if real.starts_with(&self.root) => Ok(Some(real)),
            Ok(_) => Err(PathError::EscapesWorkspace),
            Err(_) if std::fs::symlink_metadata(&joined).is_ok() => {
                // A dangling symlink: where it points is not ours to follow.
                Err(PathError::EscapesWorkspace)
            }
            Err(_) => Ok(None),
        }
    }

    /// Where a file may be written: its parent directories are created inside the workspace
    /// (every existing ancestor resolved and checked), and the returned path is the parent's
    /// real path joined with the file name. A final component that is a symlink is refused,
    /// so the write cannot follow it.
    pub fn prepare_write(&self, relative: &str) -> Result<PathBuf, PathError> {
        check_relative(relative)?;
        let joined = self.root.join(relative);
        let name = joined.file_name().ok_or(PathError::Empty)?.to_owned();
        let parent = joined.parent().ok_or(PathError::Empty)?;
        // The deepest existing ancestor must resolve inside the workspace; what is below it
        // does not exist yet and is created by us, component by component.
        let mut existing = parent.to_path_buf();
        let mut missing = Vec::new();
        while std::fs::symlink_metadata(&existing).is_err() {
            let Some(file_name) = existing.file_name() else {
                return Err(PathError::EscapesWorkspace);
            };
            missing.push(file_name.to_owned());
            if !existing.pop() {
                return Err(PathError::EscapesWorkspace);
            }
        }
        let mut real = std::fs::canonicalize(&existing).map_err(|_| PathError::EscapesWorkspace)?;
        if !real.starts_with(&self.root) {
            return Err(PathError::EscapesWorkspace);
        }
        for component in missing.into_iter().rev() {
            real.push(component);
            match std::fs::create_dir(&real) {
                Ok(()) => {}
                // Created concurrently by another run: check it is a real directory.
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::symlink_metadata(&real)
                        .map_err(|_| PathError::EscapesWorkspace)?;
                    if !meta.is_dir() {
                        return Err(PathError::EscapesWorkspace);
                    }
                }
                Err(_) => return Err(PathError::EscapesWorkspace),
            }
        }
        let target = real.join(name);
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(PathError::EscapesWorkspace);
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> RunVars {
        RunVars {
            run_id: "r1".into(),
            unit_id: "report".into(),
            iso_date: "2026-11-22".into(),
        }
    }

    #[test]
    fn keys_are_plain_file_names() {
        assert!(check_key("data.csv").is_ok());
        assert!(check_key("report_2-final").is_ok());
        for bad in ["", ".hidden", "a/b", "..", "a b", "x\0", &"k".repeat(129)] {
            assert_eq!(check_key(bad), Err(PathError::InvalidKey), "{bad:?}");
        }
    }

    #[test]
    fn templates_allow_only_the_listed_tokens() {
        assert!(check_template("out/<runId>/<isoDate>-<toolId>.md").is_ok());
        assert_eq!(
            check_template("out/<user>.md"),
            Err(PathError::UnknownToken("<user>".into()))
        );
        assert_eq!(
            check_template("out/<runId"),
            Err(PathError::UnknownToken("<runId".into()))
        );
    }

    #[test]
    fn interpolation_is_one_pass() {
        let mut v = vars();
        v.run_id = "<isoDate>".into();
        assert_eq!(
            interpolate("out/<runId>.md", &v).unwrap(),
            "out/<isoDate>.md"
        );
        assert_eq!(
            interpolate("<workflowId>/<isoDate>/x", &vars()).unwrap(),
            "report/2026-11-22/x"
        );
    }

    #[test]
    fn values_that_would_escape_are_refused_after_interpolation() {
        let mut v = vars();
        v.run_id = "../../etc".into();
        assert_eq!(
            interpolate("out/<runId>/x", &v),
            Err(PathError::ParentComponent)
        );
        v.run_id = "/etc".into();
        assert_eq!(interpolate("<runId>/passwd", &v), Err(PathError::Absolute));
        v.run_id = "a\0b".into();
        assert_eq!(interpolate("out/<runId>", &v), Err(PathError::Nul));
    }

    #[test]
    fn civil_dates_are_right_around_leap_years() {
        assert_eq!(iso_date_from_unix_days(0), "1970-01-01");
        assert_eq!(iso_date_from_unix_days(11_016), "2000-02-29");
        assert_eq!(iso_date_from_unix_days(20_414), "2025-11-22");
        assert_eq!(iso_date_from_unix_days(-1), "1969-12-31");
    }
}
