//! The files a unified diff touches (`git diff` output or plain `diff -u`).

use std::collections::BTreeSet;

/// Every path the patch touches, as written (without the `a/` and `b/` prefixes): a modified
/// file, a created one (`--- /dev/null`), a deleted one (`+++ /dev/null`), both sides of a
/// rename. A path git quoted (`"a/with space"`) is unquoted.
///
/// ```
/// let patch = "\
/// diff --git a/docs/a.md b/docs/a.md
/// --- a/docs/a.md
/// +++ b/docs/a.md
/// @@ -1 +1 @@
/// -old
/// +new
/// diff --git a/docs/new.md b/docs/new.md
/// new file mode 100644
/// --- /dev/null
/// +++ b/docs/new.md
/// @@ -0,0 +1 @@
/// +hello
/// ";
/// let touched = io_promptos::patch::touched_files(patch);
/// assert_eq!(touched.into_iter().collect::<Vec<_>>(), ["docs/a.md", "docs/new.md"]);
/// ```
pub fn touched_files(patch: &str) -> BTreeSet<String> {
    let mut touched = BTreeSet::new();
    // Lines inside a hunk are content, whatever they start with: the header says how many
    // old and new lines follow, and they are counted out.
    let (mut old, mut new) = (0usize, 0usize);
    for line in patch.lines() {
        if old > 0 || new > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => new = new.saturating_sub(1),
                Some(b'\\') => {}
                // A context line (or an empty one, which some tools write for an empty
                // context line) is in both.
                _ => {
                    old = old.saturating_sub(1);
                    new = new.saturating_sub(1);
                }
            }
            continue;
        }
        if let Some(header) = line.strip_prefix("@@ ") {
            (old, new) = hunk_lines(header);
            continue;
        }
        for (prefix, strip) in [
            ("--- ", true),
            ("+++ ", true),
            ("rename from ", false),
            ("rename to ", false),
            ("copy to ", false),
        ] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let path = unquote(strip_timestamp(rest));
                if path == "/dev/null" {
                    continue;
                }
                let path = if strip {
                    path.strip_prefix("a/")
                        .or_else(|| path.strip_prefix("b/"))
                        .map(str::to_owned)
                        .unwrap_or(path)
                } else {
                    path
                };
                touched.insert(path);
            }
        }
    }
    touched
}

/// How many lines of old and new text a hunk header (`-1,3 +1,4 @@`) announces.
fn hunk_lines(header: &str) -> (usize, usize) {
    let mut parts = header.split_whitespace();
    let count = |part: Option<&str>, sign: char| -> usize {
        part.and_then(|p| p.strip_prefix(sign))
            .and_then(|range| match range.split_once(',') {
                Some((_, n)) => n.parse().ok(),
                None => Some(1),
            })
            .unwrap_or(0)
    };
    let old = count(parts.next(), '-');
    let new = count(parts.next(), '+');
    (old, new)
}

/// `diff -u` appends a tab and a timestamp to the file name.
fn strip_timestamp(rest: &str) -> &str {
    rest.split('\t').next().unwrap_or(rest)
}

/// Unquotes a C-style quoted path, as git writes names with special characters.
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.trim_end().to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'"') => bytes.push(b'"'),
            Some(b'\\') => bytes.push(b'\\'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
