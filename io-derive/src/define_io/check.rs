//! The compile-time rules of `#[define_io]`, one function per rule. They mirror
//! `agentio_core::files::{check_key, check_template}`, which apply the same rules at run time.

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
/// coverage rule is `agentio_core::files::mutation_covers` (repeated here: a proc-macro crate
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

/// `agentio_core::files::mutation_covers`, for the compile-time check.
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

#[cfg(test)]
mod tests {
    use proc_macro2::Span;
    use syn::LitStr;

    use super::*;

    fn file(key: &str, path: Option<&str>, mode: Option<&str>) -> FileArg {
        let lit = |s: &str| LitStr::new(s, Span::call_site());
        FileArg {
            key: key.to_owned(),
            key_span: Span::call_site(),
            path: path.map(lit),
            mode: mode.map(lit),
            content_type: None,
            span: Span::call_site(),
        }
    }

    fn messages(rule: impl Fn(&[FileArg], &mut Vec<syn::Error>), files: &[FileArg]) -> Vec<String> {
        let mut errors = Vec::new();
        rule(files, &mut errors);
        errors.iter().map(ToString::to_string).collect()
    }

    fn path_messages(path: &str) -> Vec<String> {
        messages(paths, &[file("k", Some(path), None)])
    }

    #[test]
    fn a_key_is_one_plain_file_name_at_most_128_bytes_declared_once() {
        let bad = |key: &str| {
            format!(
                "`{key}` is not a valid file key: a key is a plain file name (letters, digits, `.`, `_`, `-`), not a path, and does not start with `.`"
            )
        };
        for key in ["report", "a.b_c-1", &"k".repeat(128)] {
            assert_eq!(
                messages(keys, &[file(key, None, None)]),
                Vec::<String>::new(),
                "{key}"
            );
        }
        for key in ["", &"k".repeat(129), ".hidden", "a/b", "a b", "é"] {
            assert_eq!(
                messages(keys, &[file(key, None, None)]),
                vec![bad(key)],
                "{key}"
            );
        }
        assert_eq!(
            messages(
                keys,
                &[
                    file("x", None, None),
                    file("y", None, None),
                    file("x", None, None)
                ]
            ),
            vec!["file key `x` is declared twice in this map"]
        );
    }

    #[test]
    fn a_path_is_relative_inside_the_workspace_with_only_the_four_tokens() {
        for ok in [
            "data/input.csv",
            "./data/input.csv",
            "reports/<runId>/<isoDate>.csv",
            "<workflowId>-<toolId>.json",
            "a...b/..c/c..",
        ] {
            assert_eq!(path_messages(ok), Vec::<String>::new(), "{ok}");
        }
        assert_eq!(path_messages(""), vec!["the path is empty"]);
        for absolute in ["/etc/passwd", "\\\\server\\share", "C:data", "c:\\data"] {
            assert_eq!(
                path_messages(absolute),
                vec![format!(
                    "`{absolute}` is absolute; workspace paths are relative to the workspace root"
                )],
                "{absolute}"
            );
        }
        for parent in ["..", "a/../b", "a\\..\\b", "a/.."] {
            assert_eq!(
                path_messages(parent),
                vec![format!(
                    "`{parent}` has a `..` segment; workspace paths cannot leave the workspace"
                )],
                "{parent}"
            );
        }
        assert_eq!(path_messages("a\0b"), vec!["the path contains a NUL byte"]);
        let token = |t: &str| {
            format!(
                "`{t}` is not an interpolation token; use `<runId>`, `<workflowId>`, `<toolId>` or `<isoDate>`"
            )
        };
        assert_eq!(path_messages("out/<run>.csv"), vec![token("<run>")]);
        assert_eq!(path_messages("out/<>.csv"), vec![token("<>")]);
        assert_eq!(path_messages("out/<runId"), vec![token("<runId")]);
        assert_eq!(
            path_messages("<runId>/<user>/<isoDate>/<x>"),
            vec![token("<user>"), token("<x>")]
        );
        assert_eq!(
            messages(paths, &[file("sales", None, None)]),
            vec!["file `sales` needs a `path`, like `path = \"data/input.csv\"`"]
        );
    }

    #[test]
    fn a_mode_is_ro_or_rw() {
        let files = [
            file("a", None, Some("ro")),
            file("b", None, Some("rw")),
            file("c", None, None),
            file("d", None, Some("RO")),
        ];
        assert_eq!(
            messages(modes, &files),
            vec!["unknown mode `RO`: use `ro` (read-only) or `rw` (read-write)"]
        );
    }

    #[test]
    fn an_output_file_must_be_covered_by_a_mutates_entry() {
        let covered = |mutates: &[&str], path: &str| {
            let mutates: Vec<String> = mutates.iter().map(|m| (*m).to_owned()).collect();
            messages(
                |f, e| outputs_covered(f, &mutates, e),
                &[file("out", Some(path), None)],
            )
        };
        assert!(covered(&["workspace:/reports"], "reports/x.csv").is_empty());
        assert!(covered(&["workspace:/reports"], "./reports/x.csv").is_empty());
        assert!(covered(&["network:*", "workspace:/reports/*"], "reports/a/x.csv").is_empty());
        assert_eq!(
            covered(&[], "logs/run.txt"),
            vec![
                "output file `out` writes `workspace:/logs/run.txt`, but the tool declares no `mutates`; a declared output file is a workspace mutation: add `mutates = [\"workspace:/logs\"]` (or a folder above it) to `#[tool]`"
            ]
        );
        assert_eq!(
            covered(&["workspace:/reports/*", "network:*"], "exports/a/x.csv"),
            vec![
                "output file `out` writes `workspace:/exports/a/x.csv`, but the tool's `mutates` is [\"workspace:/reports/*\", \"network:*\"]; a declared output file is a workspace mutation: add `mutates = [\"workspace:/exports/a\"]` (or a folder above it) to `#[tool]`"
            ]
        );
        // A file at the workspace's top: the suggestion is the file itself.
        assert!(covered(&[], "x.csv")[0].contains("add `mutates = [\"workspace:/x.csv\"]`"));
        // An entry without a path is the `paths` rule's to report.
        let none: Vec<String> = Vec::new();
        assert!(
            messages(
                |f, e| outputs_covered(f, &none, e),
                &[file("o", None, None)]
            )
            .is_empty()
        );
    }

    /// The compile-time reading of `mutates` and the run-time one
    /// (`agentio_core::files::mutation_covers`) answer the same table; agentio-core's tests hold
    /// the run-time rule to the same cases (`the_rule_the_macros_check_at_compile_time`).
    #[test]
    fn covers_agrees_with_the_runtime_rule() {
        let cases = [
            ("workspace:/reports", "workspace:/reports/x.csv", true),
            ("workspace:/reports", "workspace:/reports", true),
            ("workspace:/reports", "workspace:/reports/", false),
            ("workspace:/reports", "workspace:/reportsX/a", false),
            ("workspace:/reports/", "workspace:/reports/a", true),
            ("workspace:/reports/*", "workspace:/reports/a", true),
            ("workspace:/reports/**", "workspace:/reports/a/b", true),
            ("workspace:*", "workspace:/anything", true),
            ("workspace:/", "workspace:/anything", true),
            ("workspace:/", "workspace:relative", false),
            ("network:*", "workspace:/a", false),
            ("workspace", "workspace:/a", false),
            ("workspace:/a", "workspace", false),
            ("workspace:/reports", "workspace:/reports/../etc", false),
            ("workspace:*", "workspace:/a/../b", false),
            ("workspace:/reports", "workspace:/reports\\..\\etc", false),
        ];
        for (declared, resource, want) in cases {
            assert_eq!(covers(declared, resource), want, "{declared} {resource}");
        }
    }

    #[test]
    fn the_mutates_of_a_tool_attribute_are_read() {
        let attrs = |item: syn::ItemFn| item.attrs;
        assert_eq!(tool_mutates(&attrs(syn::parse_quote! { fn f() {} })), None);
        assert_eq!(
            tool_mutates(&attrs(syn::parse_quote! { #[tool] fn f() {} })),
            Some(vec![])
        );
        assert_eq!(
            tool_mutates(&attrs(syn::parse_quote! { #[tool(id = "a.b")] fn f() {} })),
            Some(vec![])
        );
        assert_eq!(
            tool_mutates(&attrs(syn::parse_quote! {
                #[doc = "x"]
                #[agentio_tools::tool(id = "a.b", mutates = ["workspace:/a", "network:*"])]
                fn f() {}
            })),
            Some(vec!["workspace:/a".to_owned(), "network:*".to_owned()])
        );
        for unreadable in [
            attrs(syn::parse_quote! { #[tool = "x"] fn f() {} }),
            attrs(syn::parse_quote! { #[tool(mutates = "workspace:/a")] fn f() {} }),
            attrs(syn::parse_quote! { #[tool(mutates = ["a", 1])] fn f() {} }),
            attrs(syn::parse_quote! { #[tool(+)] fn f() {} }),
        ] {
            assert_eq!(tool_mutates(&unreadable), None);
        }
    }
}
