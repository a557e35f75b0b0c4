//! The trybuild UI cases (`tests/ui/*/*.rs`), replayed in process.
//!
//! The UI suite compiles each case with rustc, which takes minutes for a change to this crate;
//! mutation testing cannot afford that for each mutant. This test reads the same cases, runs
//! the macros on them here (proc-macro2's fallback, with span locations), and compares every
//! error the macros emit (each `compile_error!`, its message and its line and column) with the
//! uncoded `error:` entries of the case's blessed `.stderr`. rustc's own errors (`error[E...]`,
//! from the expanded code) are not the macros' to replay; for those cases the macros must emit
//! exactly the uncoded errors the `.stderr` shows, often none.
//!
//! Expansion follows rustc's order closely enough for these cases: an item's first attribute
//! macro of ours expands first, its output's items are expanded again, then the item's
//! derives of ours run on it; items in modules and function bodies are visited too.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;

/// One error: the message's first line, and where rustc shows it (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Found {
    line: usize,
    column: usize,
    message: String,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// The uncoded errors of a blessed `.stderr`.
fn expected(stderr: &str) -> BTreeSet<Found> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut found = BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(message) = line.strip_prefix("error: ") else {
            continue;
        };
        // The next ` --> $DIR/case.rs:L:C` line places it.
        let place = lines[i + 1..]
            .iter()
            .find_map(|l| l.trim_start().strip_prefix("--> "))
            .unwrap_or_else(|| panic!("no location after `{line}`"));
        let mut parts = place.rsplitn(3, ':');
        let column = parts.next().and_then(|c| c.parse().ok()).expect("column");
        let line = parts.next().and_then(|l| l.parse().ok()).expect("line");
        found.insert(Found {
            line,
            column,
            message: message.to_owned(),
        });
    }
    found
}

/// Where rustc would show an error whose span is `span`, `at` standing for the call site (the
/// fallback's call site has no location of its own).
fn place(span: Span, at: Span) -> (usize, usize) {
    // The fallback's call site is the only span with no bytes.
    let start = if span.byte_range().is_empty() {
        at.start()
    } else {
        span.start()
    };
    (start.line, start.column + 1)
}

/// Every `compile_error!` in `tokens`.
fn errors_in(tokens: TokenStream, at: Span, out: &mut BTreeSet<Found>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident) if ident == "compile_error" => {
                let Some(TokenTree::Group(group)) = trees.get(i + 2) else {
                    continue;
                };
                let message: syn::LitStr =
                    syn::parse2(group.stream()).expect("compile_error! takes one string");
                let message = message.value();
                let first = message.lines().next().unwrap_or_default().to_owned();
                let (line, column) = place(ident.span(), at);
                out.insert(Found {
                    line,
                    column,
                    message: first,
                });
            }
            TokenTree::Group(group) => errors_in(group.stream(), at, out),
            _ => {}
        }
    }
}

fn last_segment_is(path: &syn::Path, names: &[&str]) -> Option<String> {
    let last = path.segments.last()?.ident.to_string();
    names.contains(&last.as_str()).then_some(last)
}

fn attrs_of(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    Some(match item {
        syn::Item::Struct(i) => &mut i.attrs,
        syn::Item::Enum(i) => &mut i.attrs,
        syn::Item::Union(i) => &mut i.attrs,
        syn::Item::Fn(i) => &mut i.attrs,
        syn::Item::Impl(i) => &mut i.attrs,
        syn::Item::Mod(i) => &mut i.attrs,
        syn::Item::Trait(i) => &mut i.attrs,
        syn::Item::Const(i) => &mut i.attrs,
        syn::Item::Static(i) => &mut i.attrs,
        syn::Item::Type(i) => &mut i.attrs,
        syn::Item::Use(i) => &mut i.attrs,
        syn::Item::Macro(i) => &mut i.attrs,
        syn::Item::TraitAlias(i) => &mut i.attrs,
        syn::Item::ForeignMod(i) => &mut i.attrs,
        syn::Item::ExternCrate(i) => &mut i.attrs,
        _ => return None,
    })
}

/// Expands the macros of ours in `items`, collecting their errors.
fn expand_items(items: Vec<syn::Item>, out: &mut BTreeSet<Found>) {
    for item in items {
        expand_item(item, true, out);
    }
}

/// Expands `item`, and the items nested in it when `nested` (an attribute macro's output
/// carries the nested items it was given, which were visited already).
fn expand_item(mut item: syn::Item, nested: bool, out: &mut BTreeSet<Found>) {
    if nested {
        match &item {
            syn::Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    expand_items(content.clone(), out);
                }
            }
            syn::Item::Fn(f) => {
                let items = f
                    .block
                    .stmts
                    .iter()
                    .filter_map(|s| match s {
                        syn::Stmt::Item(i) => Some(i.clone()),
                        _ => None,
                    })
                    .collect();
                expand_items(items, out);
            }
            _ => {}
        }
    }
    let Some(attrs) = attrs_of(&mut item) else {
        return;
    };
    const ATTRIBUTES: &[&str] = &["tool", "agent_core", "define_io", "io"];
    // An attribute macro of ours: it takes the item without itself.
    if let Some(index) = attrs
        .iter()
        .position(|a| last_segment_is(a.path(), ATTRIBUTES).is_some())
    {
        let attr = attrs.remove(index);
        let name = last_segment_is(attr.path(), ATTRIBUTES).unwrap();
        let args = match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream::new(),
        };
        let at = attr.pound_token.span;
        let expand = match name.as_str() {
            "tool" => crate::tool::expand,
            "agent_core" => crate::agent_core::expand,
            "io" => crate::io_type::expand,
            _ => crate::define_io::expand,
        };
        let output = expand(args, item.to_token_stream());
        errors_in(output.clone(), at, out);
        let file: syn::File = syn::parse2(output)
            .unwrap_or_else(|e| panic!("`#[{name}]`'s output does not parse: {e}"));
        for produced in file.items {
            expand_item(produced, false, out);
        }
        return;
    }
    expand_derives(&item, out);
}

/// Runs the derives of ours listed on `item`.
fn expand_derives(item: &syn::Item, out: &mut BTreeSet<Found>) {
    let (syn::Item::Struct(_) | syn::Item::Enum(_) | syn::Item::Union(_)) = item else {
        return;
    };
    let mut input: syn::DeriveInput =
        syn::parse2(item.to_token_stream()).expect("a struct, enum or union");
    let mut derives = Vec::new();
    input.attrs.retain(|a| {
        if !a.path().is_ident("derive") {
            return true;
        }
        let paths = a
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .expect("a derive list");
        for path in paths {
            if let Some(name) = last_segment_is(&path, &["AgentInput", "AgentOutput"]) {
                derives.push((name, path.span()));
            }
        }
        false
    });
    for (name, at) in derives {
        let side = if name == "AgentInput" {
            crate::side::Side::Input
        } else {
            crate::side::Side::Output
        };
        errors_in(crate::expand::derive(&input, side), at, out);
    }
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui");
    let mut cases = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/ui") {
        let dir = dir.expect("an entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("a case folder") {
            let file = file.expect("an entry").path();
            if file.extension().is_some_and(|e| e == "rs") {
                cases.push(file);
            }
        }
    }
    cases.sort();
    cases
}

#[test]
fn the_macros_emit_in_process_exactly_the_errors_each_ui_case_blesses() {
    // The replayed code's crates depend on serde and schemars (the UI cases' package too).
    crate::paths::ASSUME_DEPENDENCIES.with(|assume| assume.set(true));
    let cases = cases();
    assert!(cases.len() >= 70, "found {} UI cases", cases.len());
    let mut mismatches = Vec::new();
    let mut errors_compared = 0;
    for case in &cases {
        let source = std::fs::read_to_string(case).expect("the case");
        let stderr = std::fs::read_to_string(case.with_extension("stderr")).expect(".stderr");
        let want = expected(&stderr);
        let file = syn::parse_file(&source).expect("the case parses");
        let mut got = BTreeSet::new();
        expand_items(file.items, &mut got);
        errors_compared += want.len();
        if got != want {
            let name = case
                .strip_prefix(case.parent().unwrap().parent().unwrap())
                .unwrap();
            let missing: Vec<String> = want.difference(&got).map(|f| f.to_string()).collect();
            let extra: Vec<String> = got.difference(&want).map(|f| f.to_string()).collect();
            mismatches.push(format!(
                "{}:\n    blessed, not emitted: {missing:#?}\n    emitted, not blessed: {extra:#?}",
                name.display()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
    assert!(
        errors_compared >= 60,
        "only {errors_compared} errors compared"
    );
}

/// The other side: the code that compiles (the examples and the test suites, which use every
/// macro in every form they accept) gets no error from the macros in process either. A check
/// that refuses good code is as wrong as one that lets bad code through.
#[test]
fn the_macros_emit_no_error_on_the_code_that_compiles() {
    // The replayed code's crates depend on serde and schemars (the UI cases' package too).
    crate::paths::ASSUME_DEPENDENCIES.with(|assume| assume.set(true));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("examples"), &mut files);
    rust_files(&root.join("tests/tests"), &mut files);
    files.sort();
    let mut uses = 0;
    let mut failures = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).expect("the file");
        uses += [
            "#[tool",
            "#[define_io",
            "#[agent_core",
            "AgentInput",
            "AgentOutput",
        ]
        .iter()
        .map(|m| source.matches(m).count())
        .sum::<usize>();
        let file = syn::parse_file(&source).expect("the file parses");
        let mut got = BTreeSet::new();
        expand_items(file.items, &mut got);
        if !got.is_empty() {
            let list: Vec<String> = got.iter().map(ToString::to_string).collect();
            let name = path.strip_prefix(&root).unwrap_or(path);
            failures.push(format!("{}: {list:#?}", name.display()));
        }
    }
    assert!(
        files.len() >= 20 && uses >= 100,
        "{} files, {uses} uses",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "errors on good code:\n{}",
        failures.join("\n")
    );
}
