//! The compile-time rules of `#[define_io]`, one function per rule. They mirror
//! `io_core::files::{check_key, check_template}`, which apply the same rules at run time.

use std::collections::BTreeSet;

use super::parse::FileArg;

const TOKENS: &[&str] = &["<runId>", "<workflowId>", "<toolId>", "<isoDate>"];

/// Rule: a key names `<fsRoot>/<key>`, so it is one plain file name (letters, digits, `.`,
/// `_`, `-`, not starting with `.`, at most 128 bytes), and each key appears once per map.
pub(crate) fn keys(files: &[FileArg], errors: &mut Vec<syn::Error>) {
    let mut seen = BTreeSet::new();
    for file in files {
        let key = &file.key;
        let valid = !key.is_empty()
            && key.len() <= 128
            && !key.starts_with('.')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !valid {
            errors.push(syn::Error::new(
                file.key_span,
                format!("`{key}` is not a valid file key: a key is a plain file name (letters, digits, `.`, `_`, `-`), not a path, and does not start with `.`"),
            ));
        }
        if !seen.insert(key.clone()) {
            errors.push(syn::Error::new(
                file.key_span,
                format!("file key `{key}` is declared twice in this map"),
            ));
        }
    }
}

/// Rule: every entry has a workspace path; it is relative, has no `..` segment and no NUL,
/// and uses only the four AIP-16 tokens: anything else could reach outside the workspace or
/// be built from caller input (AIP-16 "Security considerations").
pub(crate) fn paths(files: &[FileArg], errors: &mut Vec<syn::Error>) {
    for file in files {
        let Some(path) = &file.path else {
            errors.push(syn::Error::new(
                file.span,
                format!(
                    "file `{}` needs a `path`, like `path = \"data/input.csv\"`",
                    file.key
                ),
            ));
            continue;
        };
        let text = path.value();
        let span = path.span();
        if text.is_empty() {
            errors.push(syn::Error::new(span, "the path is empty"));
        } else if text.starts_with('/')
            || text.starts_with('\\')
            || text.as_bytes().get(1) == Some(&b':')
        {
            errors.push(syn::Error::new(
                span,
                format!("`{text}` is absolute; workspace paths are relative to the workspace root"),
            ));
        } else if text.split(['/', '\\']).any(|segment| segment == "..") {
            errors.push(syn::Error::new(
                span,
                format!("`{text}` has a `..` segment; workspace paths cannot leave the workspace"),
            ));
        } else if text.contains('\0') {
            errors.push(syn::Error::new(span, "the path contains a NUL byte"));
        }
        let mut rest = text.as_str();
        while let Some(start) = rest.find('<') {
            let token = rest[start..]
                .find('>')
                .map_or(&rest[start..], |end| &rest[start..start + end + 1]);
            if !TOKENS.contains(&token) {
                errors.push(syn::Error::new(
                    span,
                    format!("`{token}` is not an interpolation token; use `<runId>`, `<workflowId>`, `<toolId>` or `<isoDate>`"),
                ));
            }
            rest = &rest[start + token.len()..];
        }
    }
}

/// Rule: `mode` is `ro` or `rw` (IO.schema.json).
pub(crate) fn modes(files: &[FileArg], errors: &mut Vec<syn::Error>) {
    for mode in files.iter().filter_map(|f| f.mode.as_ref()) {
        let text = mode.value();
        if text != "ro" && text != "rw" {
            errors.push(syn::Error::new(
                mode.span(),
                format!("unknown mode `{text}`: use `ro` (read-only) or `rw` (read-write)"),
            ));
        }
    }
}
