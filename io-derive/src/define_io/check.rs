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

/// Rule: a declared output file is a workspace mutation, so when a `#[tool]` on the same item
/// is visible, each `outputsFiles` path must be covered by one of its `mutates` entries. The
/// coverage rule is `io_core::files::mutation_covers` (repeated here: a proc-macro crate
/// cannot depend on the runtime crate); the registry applies it again at registration and the
/// host at sync time.
pub(crate) fn outputs_covered(files: &[FileArg], mutates: &[String], errors: &mut Vec<syn::Error>) {
    for file in files {
        let Some(path) = &file.path else { continue };
        let text = path.value();
        let resource = format!("workspace:/{}", text.trim_start_matches("./"));
        if mutates.iter().any(|declared| covers(declared, &resource)) {
            continue;
        }
        let folder = text.rsplit_once('/').map_or(text.as_str(), |(dir, _)| dir);
        let declared = if mutates.is_empty() {
            "the tool declares no `mutates`".to_owned()
        } else {
            format!(
                "the tool's `mutates` is [{}]",
                mutates
                    .iter()
                    .map(|m| format!("\"{m}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        errors.push(syn::Error::new(
            path.span(),
            format!(
                "output file `{}` writes `workspace:/{text}`, but {declared}; a declared output file is a workspace mutation: add `mutates = [\"workspace:/{folder}\"]` (or a folder above it) to `#[tool]`",
                file.key
            ),
        ));
    }
}

/// `io_core::files::mutation_covers`, for the compile-time check.
pub(crate) fn covers(declared: &str, resource: &str) -> bool {
    let (Some((class, scope)), Some((wanted_class, wanted))) =
        (declared.split_once(':'), resource.split_once(':'))
    else {
        return false;
    };
    if class != wanted_class || wanted.split(['/', '\\']).any(|s| s == "..") {
        return false;
    }
    if scope == "*" || scope == wanted {
        return true;
    }
    let scope = scope
        .strip_suffix("/**")
        .or_else(|| scope.strip_suffix("/*"))
        .unwrap_or(scope)
        .trim_end_matches('/');
    if scope.is_empty() {
        return wanted.starts_with('/');
    }
    wanted
        .strip_prefix(scope)
        .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// The `mutates = [...]` strings of a `#[tool(...)]` attribute, if it is there and readable.
/// `Some(vec![])` when the tool declares none; `None` when there is no `#[tool]` or its
/// arguments do not parse (then `#[tool]` reports its own errors, and the registry checks).
pub(crate) fn tool_mutates(attrs: &[syn::Attribute]) -> Option<Vec<String>> {
    use syn::punctuated::Punctuated;
    let attr = attrs
        .iter()
        .find(|a| a.path().segments.last().is_some_and(|s| s.ident == "tool"))?;
    let metas = match &attr.meta {
        syn::Meta::Path(_) => return Some(Vec::new()),
        syn::Meta::List(list) => list
            .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
            .ok()?,
        syn::Meta::NameValue(_) => return None,
    };
    for meta in metas {
        if let syn::Meta::NameValue(nv) = meta
            && nv.path.is_ident("mutates")
        {
            let syn::Expr::Array(array) = nv.value else {
                return None;
            };
            return array
                .elems
                .iter()
                .map(|e| match e {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value()),
                    _ => None,
                })
                .collect();
        }
    }
    Some(Vec::new())
}
