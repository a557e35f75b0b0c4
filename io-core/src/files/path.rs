//! Workspace paths: lexical checks, one-pass token interpolation, and resolution that never
//! leaves the workspace (no `..`, no absolute path, no symlink out, no NUL).

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

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
#[non_exhaustive]
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
    /// The path names something other than a regular file (a folder, a FIFO, a device).
    NotRegularFile,
    /// The path ends in `/` or `.`, so it names a folder, not a file to write.
    NotAFileName,
    /// The file has more than one hard link, and the host has not allowed that.
    HardLinked,
    /// The file is larger than the limit.
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit in force.
        limit: u64,
    },
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
            PathError::NotRegularFile => f.write_str("it is not a regular file"),
            PathError::NotAFileName => {
                f.write_str("the path ends in `/` or `.`, so it names a folder, not a file")
            }
            PathError::HardLinked => f.write_str(
                "the file has more than one hard link (it may be a file outside the workspace); the host has not allowed hard-linked inputs",
            ),
            PathError::TooLarge { bytes, limit } => write!(
                f,
                "the file is {bytes} bytes, over the limit of {limit} bytes"
            ),
            PathError::InvalidKey => write!(
                f,
                "a file key is a plain file name: letters, digits, `.`, `_` and `-`, not starting with `.`, at most {MAX_KEY_BYTES} bytes"
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// Checks a file key: it names `<fsRoot>/<key>`, so it is one plain file name.
///
/// ```
/// use agentio_core::files::{PathError, check_key};
/// assert!(check_key("report.md").is_ok());
/// assert_eq!(check_key("../report.md"), Err(PathError::InvalidKey));
/// assert_eq!(check_key(".hidden"), Err(PathError::InvalidKey));
/// assert_eq!(check_key("a/b"), Err(PathError::InvalidKey));
/// ```
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
///
/// ```
/// use agentio_core::files::{PathError, check_template};
/// assert!(check_template("reports/<runId>/<isoDate>.md").is_ok());
/// assert_eq!(check_template("reports/<userId>.md"), Err(PathError::UnknownToken("<userId>".into())));
/// assert_eq!(check_template("../etc/passwd"), Err(PathError::ParentComponent));
/// assert_eq!(check_template("/etc/passwd"), Err(PathError::Absolute));
/// ```
pub fn check_template(path: &str) -> Result<(), PathError> {
    for token in tokens_in(path)? {
        if !TOKENS.contains(&token) {
            return Err(PathError::UnknownToken(token.to_owned()));
        }
    }
    check_relative(path)
}

/// Checks a concrete workspace path (after interpolation).
///
/// ```
/// use agentio_core::files::{PathError, check_relative};
/// assert!(check_relative("notes/today.md").is_ok());
/// assert_eq!(check_relative(""), Err(PathError::Empty));
/// assert_eq!(check_relative("notes/../../x"), Err(PathError::ParentComponent));
/// assert_eq!(check_relative("a\0b"), Err(PathError::Nul));
/// ```
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
    while let Some((_, token, tail)) = next_token(rest)? {
        tokens.push(token);
        rest = tail;
    }
    Ok(tokens)
}

/// Splits `text` at its first `<...>` token: the text before it, the token (both brackets
/// included) and the text after it. `None` when there is no `<`; an error when it is not
/// closed.
fn next_token(text: &str) -> Result<Option<(&str, &str, &str)>, PathError> {
    let Some(start) = text.find('<') else {
        return Ok(None);
    };
    let (before, from) = text.split_at(start);
    let Some(close) = from.find('>') else {
        return Err(PathError::UnknownToken(from.to_owned()));
    };
    let (token, after) = from.split_at(close + 1);
    Ok(Some((before, token, after)))
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
    ///
    /// ```
    /// use agentio_core::files::{RunVars, interpolate};
    ///
    /// let vars = RunVars::new("run-7", "reports.weekly");
    /// assert_eq!(vars.iso_date.len(), "2026-11-24".len());
    /// let path = interpolate("out/<workflowId>/<runId>.md", &vars).unwrap();
    /// assert_eq!(path, "out/reports.weekly/run-7.md");
    /// ```
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
///
/// ```
/// use agentio_core::files::{PathError, RunVars, interpolate};
/// let vars = RunVars { run_id: "r7".into(), unit_id: "notes.append".into(), iso_date: "2026-11-24".into() };
/// assert_eq!(interpolate("out/<toolId>/<runId>-<isoDate>.md", &vars).unwrap(), "out/notes.append/r7-2026-11-24.md");
/// // A run id cannot lead the path out of the workspace.
/// let hostile = RunVars { run_id: "../../etc".into(), ..vars };
/// assert_eq!(interpolate("out/<runId>/x.md", &hostile), Err(PathError::ParentComponent));
/// ```
pub fn interpolate(template: &str, vars: &RunVars) -> Result<String, PathError> {
    check_template(template)?;
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some((before, token, after)) = next_token(rest)? {
        out.push_str(before);
        out.push_str(match token {
            "<runId>" => &vars.run_id,
            "<workflowId>" | "<toolId>" => &vars.unit_id,
            "<isoDate>" => &vars.iso_date,
            other => other,
        });
        rest = after;
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

/// The default host limit on the size of one staged input file: 256 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// A workspace: the one directory file contracts read from and write to.
///
/// The root is opened once, as a directory descriptor, and every later read and write walks
/// beneath that descriptor ([`cap_std`] resolves each component relative to its parent
/// descriptor and refuses any step that would leave the root). Nothing is checked by path and
/// then opened again by path, so a concurrent swap of a workspace folder for a symlink cannot
/// redirect a staged read or a synced write outside the workspace: at worst the operation
/// fails with [`PathError::EscapesWorkspace`].
///
/// Decisions, each tested:
/// - Symlinks that stay inside the workspace are followed; one whose target leaves it
///   (an absolute target, or `..` past the root) is refused, as is a dangling one.
/// - A regular file with more than one hard link is refused as an input (it may be the same
///   file as one outside the workspace) unless the host opts in with
///   [`Workspace::allow_hard_links`]. Outputs are written as new files, so a link at the
///   target is replaced, never written through.
/// - Input files larger than [`Workspace::max_input_bytes`] (default
///   [`DEFAULT_MAX_INPUT_BYTES`]) are refused before a byte is copied; a contract can set a
///   lower limit per run.
/// - Only regular files are read: a FIFO, a device or a folder is refused without blocking.
///
/// ```
/// use agentio_core::files::Workspace;
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("notes.txt"), "hello")?;
/// let workspace = Workspace::open(dir.path())?;
/// let mut file = workspace.open_input("notes.txt")?.expect("it exists");
/// let mut text = String::new();
/// std::io::Read::read_to_string(&mut file.file, &mut text)?;
/// assert_eq!(text, "hello");
/// assert!(workspace.open_input("../etc/passwd").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<cap_std::fs::Dir>,
    allow_hard_links: bool,
    max_input_bytes: u64,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("allow_hard_links", &self.allow_hard_links)
            .field("max_input_bytes", &self.max_input_bytes)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
            && self.allow_hard_links == other.allow_hard_links
            && self.max_input_bytes == other.max_input_bytes
    }
}

impl Eq for Workspace {}

/// An input file opened beneath the workspace root: the descriptor to read, and the size
/// `fstat` gave for it when it was opened.
#[derive(Debug)]
pub struct OpenedInput {
    /// The open file (read from this descriptor; never reopen the path).
    pub file: std::fs::File,
    /// Its size in bytes when opened.
    pub len: u64,
}

impl Workspace {
    /// Opens the workspace at `root` (which must exist and be a directory): the root is
    /// resolved once and held open as a directory descriptor.
    ///
    /// ```
    /// use agentio_core::files::{PathError, Workspace};
    /// use std::io::Read;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let workspace = Workspace::open(dir.path()).unwrap();
    /// let (bytes, sha256) = workspace.write_file("notes/today.md", &mut &b"# Today"[..]).unwrap();
    /// assert_eq!((bytes, sha256.len()), (7, 64));
    ///
    /// let mut opened = workspace.open_input("notes/today.md").unwrap().unwrap();
    /// let mut text = String::new();
    /// opened.file.read_to_string(&mut text).unwrap();
    /// assert_eq!((text.as_str(), opened.len), ("# Today", 7));
    /// assert!(workspace.open_input("notes/missing.md").unwrap().is_none());
    /// assert_eq!(workspace.open_input("../outside").unwrap_err(), PathError::ParentComponent);
    /// # #[cfg(unix)] {
    /// // A symlink that leads out of the workspace is refused, not followed.
    /// std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
    /// assert_eq!(workspace.open_input("etc/hostname").unwrap_err(), PathError::EscapesWorkspace);
    /// # }
    /// ```
    pub fn open(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(root)?;
        let dir = cap_std::fs::Dir::open_ambient_dir(&root, cap_std::ambient_authority())?;
        Ok(Workspace {
            root,
            dir: Arc::new(dir),
            allow_hard_links: false,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        })
    }

    /// Lets input files with more than one hard link be staged. Off by default: a hard link
    /// makes a file outside the workspace readable through a path inside it, and the link
    /// count is the only trace of that on the file itself.
    ///
    /// ```
    /// use agentio_core::files::{PathError, Workspace};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("a.txt"), "shared").unwrap();
    /// std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
    /// let strict = Workspace::open(dir.path()).unwrap();
    /// # #[cfg(unix)]
    /// assert_eq!(strict.open_input("b.txt").unwrap_err(), PathError::HardLinked);
    /// let lenient = strict.allow_hard_links(true);
    /// assert_eq!(lenient.open_input("b.txt").unwrap().unwrap().len, 6);
    /// ```
    #[must_use]
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.allow_hard_links = allow;
        self
    }

    /// Sets the host limit on one staged input file, in bytes (a contract may set a lower one).
    ///
    /// ```
    /// use agentio_core::files::{DEFAULT_MAX_INPUT_BYTES, PathError, Workspace};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("big.bin"), [0u8; 100]).unwrap();
    /// let workspace = Workspace::open(dir.path()).unwrap();
    /// assert_eq!(workspace.max_input_bytes(), DEFAULT_MAX_INPUT_BYTES);
    /// let small = workspace.with_max_input_bytes(64);
    /// assert_eq!(small.max_input_bytes(), 64);
    /// // Refused from its size alone, before a byte is read.
    /// assert_eq!(small.open_input("big.bin").unwrap_err(), PathError::TooLarge { bytes: 100, limit: 64 });
    /// ```
    #[must_use]
    pub fn with_max_input_bytes(mut self, bytes: u64) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// The host limit on one staged input file, in bytes (an example is on
    /// [`Self::with_max_input_bytes`]).
    pub fn max_input_bytes(&self) -> u64 {
        self.max_input_bytes
    }

    /// The workspace root, resolved (absolute, without symlinks).
    ///
    /// ```
    /// use agentio_core::files::Workspace;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(dir.path().join("ws")).unwrap();
    /// let workspace = Workspace::open(dir.path().join("ws/../ws")).unwrap();
    /// assert_eq!(workspace.root(), std::fs::canonicalize(dir.path().join("ws")).unwrap());
    /// ```
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens an existing workspace file for reading, beneath the root descriptor (an example
    /// is on [`Self::open`]).
    ///
    /// `Ok(None)` when nothing is at that path. Refused: a path that is not plain and
    /// relative, one that leads out through a symlink (or ends in a dangling one), anything
    /// but a regular file (checked with `fstat` on the opened descriptor, not on the path),
    /// a file with several hard links (unless allowed), and a file over the host limit.
    pub fn open_input(&self, relative: &str) -> Result<Option<OpenedInput>, PathError> {
        self.open_input_within(relative, self.max_input_bytes)
    }

    /// [`Self::open_input`] with a limit of `limit` bytes (a contract's own, say); the host
    /// limit still applies when it is lower.
    ///
    /// ```
    /// use agentio_core::files::{PathError, Workspace};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("data.csv"), "a,b\n1,2\n").unwrap();
    /// let workspace = Workspace::open(dir.path()).unwrap().with_max_input_bytes(4);
    /// let refused = workspace.open_input_within("data.csv", 1_000).unwrap_err();
    /// // The lower of the two limits applies: the host's, here.
    /// assert_eq!(refused, PathError::TooLarge { bytes: 8, limit: 4 });
    /// ```
    pub fn open_input_within(
        &self,
        relative: &str,
        limit: u64,
    ) -> Result<Option<OpenedInput>, PathError> {
        let limit = limit.min(self.max_input_bytes);
        check_relative(relative)?;
        let file = match self.dir.open_with(relative, &read_options()) {
            Ok(file) => file.into_std(),
            Err(err) => return self.open_error(relative, err),
        };
        let meta = file.metadata().map_err(|_| PathError::NotRegularFile)?;
        if !meta.is_file() {
            return Err(PathError::NotRegularFile);
        }
        #[cfg(unix)]
        if !self.allow_hard_links && std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(PathError::HardLinked);
        }
        if meta.len() > limit {
            return Err(PathError::TooLarge {
                bytes: meta.len(),
                limit,
            });
        }
        Ok(Some(OpenedInput {
            file,
            len: meta.len(),
        }))
    }

    fn open_error<T>(&self, relative: &str, err: std::io::Error) -> Result<Option<T>, PathError> {
        match err.kind() {
            std::io::ErrorKind::NotFound => {
                // A dangling symlink is "not found" too: where it points is not ours to follow.
                if self
                    .dir
                    .symlink_metadata(relative)
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    Err(PathError::EscapesWorkspace)
                } else {
                    Ok(None)
                }
            }
            // `notes.txt/x` when `notes.txt` is a file: nothing is at that path.
            std::io::ErrorKind::NotADirectory => Ok(None),
            // Equivalent to the arm below on Linux, where a folder opens for reading and is
            // refused after `fstat`; kept for systems whose `open` refuses folders (a mutation
            // test cannot tell them apart here).
            std::io::ErrorKind::IsADirectory => Err(PathError::NotRegularFile),
            _ => Err(PathError::EscapesWorkspace),
        }
    }

    /// Writes a new file at `relative` from `source`, beneath the root descriptor: missing
    /// folders are created inside the workspace, the content goes to a temporary file opened
    /// in the parent folder's descriptor, and that file is renamed over the target within the
    /// same descriptor. A reader never sees half a file, and a symlink at the target is
    /// replaced, never followed. Returns the bytes written and their SHA-256 (lowercase hex).
    ///
    /// A target that is a symlink or a folder when the write starts is refused.
    ///
    /// ```
    /// use agentio_core::files::{PathError, Workspace, WriteError};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let workspace = Workspace::open(dir.path()).unwrap();
    /// let (bytes, sha256) = workspace.write_file("out/report.md", &mut &b"done"[..]).unwrap();
    /// assert_eq!(bytes, 4);
    /// assert_eq!(sha256, "a4c3ed04a95a3da14a9d235c83d868bed7c0f45cf7f3faa751ee8f50598d2211");
    /// assert_eq!(std::fs::read_to_string(dir.path().join("out/report.md")).unwrap(), "done");
    /// // Paths that lead out are refused before anything is created.
    /// let refused = workspace.write_file("../escape.md", &mut &b"x"[..]).unwrap_err();
    /// assert!(matches!(refused, WriteError::Path(PathError::ParentComponent)));
    /// assert!(!dir.path().join("../escape.md").exists());
    /// ```
    pub fn write_file(
        &self,
        relative: &str,
        source: &mut dyn std::io::Read,
    ) -> Result<(u64, String), WriteError> {
        check_relative(relative).map_err(WriteError::Path)?;
        let last = relative.rsplit(['/', '\\']).next().unwrap_or_default();
        if last.is_empty() || last == "." {
            return Err(WriteError::Path(PathError::NotAFileName));
        }
        let path = Path::new(relative);
        let name = path.file_name().ok_or(WriteError::Path(PathError::Empty))?;
        // A file at the root is written in the root's own descriptor; deeper, in its folder's.
        let folder;
        let parent: &cap_std::fs::Dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                folder = self
                    .dir
                    .create_dir_all(parent)
                    .and_then(|()| self.dir.open_dir(parent))
                    .map_err(|err| self.classify_walk_error(parent, err))?;
                &folder
            }
            _ => &self.dir,
        };
        match parent.symlink_metadata(name) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(WriteError::Path(PathError::EscapesWorkspace));
            }
            Ok(meta) if meta.is_dir() => return Err(WriteError::Path(PathError::NotRegularFile)),
            _ => {}
        }
        let (temporary, mut file) = create_temporary(parent, name)?;
        let written = copy_hashed(source, &mut file).and_then(|out| {
            file.sync_all()?;
            Ok(out)
        });
        drop(file);
        let renamed = written.and_then(|out| {
            parent.rename(&temporary, parent, name)?;
            Ok(out)
        });
        renamed.map_err(|err| {
            let _ = parent.remove_file(&temporary);
            WriteError::Io(err)
        })
    }
}

impl Workspace {
    /// Names why walking to `parent` failed. The walk itself is what keeps writes inside (it
    /// runs beneath the root descriptor); this only looks again, without following links, to
    /// say which way it failed: a symlink on the way means a step led out.
    fn classify_walk_error(&self, parent: &Path, err: std::io::Error) -> WriteError {
        use std::io::ErrorKind;
        let mut prefix = PathBuf::new();
        for component in parent.components() {
            prefix.push(component);
            match self.dir.symlink_metadata(&prefix) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return WriteError::Path(PathError::EscapesWorkspace);
                }
                Ok(meta) if !meta.is_dir() => return WriteError::Path(PathError::NotRegularFile),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        // No symlink left to see: a link swapped in during the walk and out again before this
        // look. cap-std says so with its own escape error; anything else (a real permission
        // problem, say) is reported as it is. Either way nothing was written: the message is
        // all this arm changes, so a mutation test cannot tell it from the `Io` arm.
        match err.kind() {
            ErrorKind::PermissionDenied if err.to_string().contains("outside") => {
                WriteError::Path(PathError::EscapesWorkspace)
            }
            _ => WriteError::Io(err),
        }
    }
}

/// Options for reading a file that may turn out not to be a regular one: non-blocking, so a
/// FIFO cannot stall the open until a writer comes (it is refused after `fstat`).
pub(crate) fn read_options() -> cap_std::fs::OpenOptions {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NONBLOCK.bits() as i32,
    );
    options
}

/// Why [`Workspace::write_file`] wrote nothing.
#[derive(Debug)]
pub enum WriteError {
    /// The path was refused.
    Path(PathError),
    /// The file system failed (full, read-only, permission denied, ...).
    Io(std::io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Path(err) => err.fmt(f),
            WriteError::Io(err) => write!(f, "the file could not be written: {err}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// A new, exclusive temporary file beside `name` in `parent`.
fn create_temporary(
    parent: &cap_std::fs::Dir,
    name: &std::ffi::OsStr,
) -> Result<(PathBuf, std::fs::File), WriteError> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    create_unique(&temporary_stem(name), |temporary| {
        parent
            .open_with(temporary, &options)
            .map(cap_std::fs::File::into_std)
    })
}

/// The part of a temporary file's name taken from its target's: ASCII letters, digits, `.`,
/// `_` and `-`, at most 64, so a leftover (after a crash) says what it was for.
fn temporary_stem(name: &std::ffi::OsStr) -> String {
    name.to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(64)
        .collect()
}

/// Creates a temporary named after `stem` with `create` (which must refuse an existing
/// name): a name that exists is passed over for the next, up to 16; any other error ends it.
fn create_unique<T>(
    stem: &str,
    mut create: impl FnMut(&Path) -> std::io::Result<T>,
) -> Result<(PathBuf, T), WriteError> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temporary = PathBuf::from(format!(
            ".{stem}.{}-{n}-{nanos:x}.agent-io-tmp",
            std::process::id()
        ));
        match create(&temporary) {
            Ok(created) => return Ok((temporary, created)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(WriteError::Io(err)),
        }
    }
    Err(WriteError::Io(std::io::Error::other(
        "no unused temporary file name was found",
    )))
}

/// Copies `source` into `target`, returning the byte count and SHA-256 (lowercase hex).
pub(crate) fn copy_hashed(
    source: &mut dyn std::io::Read,
    target: &mut dyn std::io::Write,
) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let read = match source.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buffer[..read]);
        target.write_all(&buffer[..read])?;
        total += read as u64;
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        use fmt::Write;
        let _ = write!(hex, "{byte:02x}");
    }
    Ok((total, hex))
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

    /// Every day from 1570 to 2370 against a calendar counted one day at a time: the
    /// century rules (1700, 1800, 1900, 2100, 2200, 2300 are not leap years; 1600, 2000 are)
    /// and the 400-year era boundaries included.
    #[test]
    fn civil_dates_agree_with_a_day_by_day_calendar_over_eight_centuries() {
        fn days_in(year: i64, month: i64) -> i64 {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            }
        }
        let (mut year, mut month, mut day) = (1970, 1, 1);
        for days in 0..146_097 {
            assert_eq!(
                iso_date_from_unix_days(days),
                format!("{year:04}-{month:02}-{day:02}")
            );
            day += 1;
            if day > days_in(year, month) {
                (day, month) = (1, month + 1);
                if month > 12 {
                    (month, year) = (1, year + 1);
                }
            }
        }
        let (mut year, mut month, mut day) = (1969, 12, 31);
        for days in (-146_097..0).rev() {
            assert_eq!(
                iso_date_from_unix_days(days),
                format!("{year:04}-{month:02}-{day:02}")
            );
            day -= 1;
            if day == 0 {
                month -= 1;
                if month == 0 {
                    (month, year) = (12, year - 1);
                }
                day = days_in(year, month);
            }
        }
    }

    #[test]
    fn a_temporary_is_named_after_its_target_and_an_existing_name_is_passed_over() {
        assert_eq!(
            temporary_stem(std::ffi::OsStr::new("répört 1_a-b.md")),
            "rprt1_a-b.md"
        );
        assert_eq!(
            temporary_stem(std::ffi::OsStr::new(&"x".repeat(100))).len(),
            64
        );

        let mut tried = Vec::new();
        let (name, ()) = create_unique("report.md", |candidate| {
            tried.push(candidate.to_owned());
            if tried.len() < 3 {
                Err(std::io::ErrorKind::AlreadyExists.into())
            } else {
                Ok(())
            }
        })
        .unwrap();
        assert_eq!(tried.len(), 3);
        assert_eq!(tried.last(), Some(&name));
        let text = name.to_str().unwrap();
        assert!(
            text.starts_with(".report.md.") && text.ends_with(".agent-io-tmp"),
            "{text}"
        );
        assert!(tried[0] != tried[1] && tried[1] != tried[2], "{tried:?}");

        // Every attempt fails with `kind`: how many were made, and the error.
        let always = |kind: std::io::ErrorKind| {
            let mut calls = 0;
            let err = create_unique("r", |_| -> std::io::Result<()> {
                calls += 1;
                Err(kind.into())
            })
            .unwrap_err();
            (calls, err)
        };
        // Any other error ends it at once, as it is.
        let (calls, err) = always(std::io::ErrorKind::PermissionDenied);
        assert_eq!(calls, 1);
        assert!(
            matches!(&err, WriteError::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied),
            "{err:?}"
        );
        // Sixteen names that all exist: it gives up and says so.
        let (calls, err) = always(std::io::ErrorKind::AlreadyExists);
        assert_eq!(calls, 16);
        assert!(
            err.to_string().contains("no unused temporary file name"),
            "{err}"
        );
    }

    /// A read interrupted by a signal is tried again; any other read error is returned.
    #[test]
    fn a_copy_retries_an_interrupted_read_and_returns_other_errors() {
        struct Flaky {
            steps: Vec<std::io::Result<&'static [u8]>>,
        }
        impl std::io::Read for Flaky {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.steps.is_empty() {
                    return Ok(0);
                }
                let bytes = self.steps.remove(0)?;
                buf[..bytes.len()].copy_from_slice(bytes);
                Ok(bytes.len())
            }
        }
        let mut source = Flaky {
            steps: vec![
                Ok(b"ab"),
                Err(std::io::ErrorKind::Interrupted.into()),
                Ok(b"c"),
            ],
        };
        let mut target = Vec::new();
        let (total, hex) = copy_hashed(&mut source, &mut target).unwrap();
        assert_eq!((total, target.as_slice()), (3, &b"abc"[..]));
        // SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut source = Flaky {
            steps: vec![Ok(b"a"), Err(std::io::ErrorKind::BrokenPipe.into())],
        };
        let err = copy_hashed(&mut source, &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }

    /// Today, as the system's own `date -u` prints it (read before and after, for a run that
    /// crosses midnight).
    #[cfg(unix)]
    #[test]
    fn today_is_the_utc_date_the_system_reports() {
        let date = || {
            let out = std::process::Command::new("date")
                .args(["-u", "+%Y-%m-%d"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        let before = date();
        let ours = today_utc();
        let vars = RunVars::new("r", "u");
        let after = date();
        assert!(
            ours == before || ours == after,
            "{ours} vs {before}/{after}"
        );
        assert!(vars.iso_date == before || vars.iso_date == after);
        assert_eq!((vars.run_id.as_str(), vars.unit_id.as_str()), ("r", "u"));
    }

    #[test]
    fn tokens_are_split_with_both_brackets() {
        assert_eq!(
            tokens_in("a<runId>b<isoDate>").unwrap(),
            ["<runId>", "<isoDate>"]
        );
        assert_eq!(tokens_in("<>x").unwrap(), ["<>"]);
        assert_eq!(tokens_in("plain/path").unwrap(), Vec::<&str>::new());
        assert_eq!(
            next_token("a/<runId>/b").unwrap(),
            Some(("a/", "<runId>", "/b"))
        );
        assert_eq!(interpolate("<runId><runId>", &vars()).unwrap(), "r1r1");
    }
}
