//! The arguments of `#[define_io(...)]`:
//!
//! ```text
//! inputs = Type, outputs = Type,
//! inputs_files = { key => { path = "...", mode = "ro", content_type = "..." }, ... },
//! outputs_files = { ... }, max_input_bytes = 1048576, crate = "path"
//! ```
//!
//! Not darling-shaped (`key => { ... }`), so parsed with syn; unknown names still get a
//! "did you mean".

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token, braced};

pub(crate) struct IoArgs {
    pub(crate) inputs: Option<syn::Type>,
    pub(crate) outputs: Option<syn::Type>,
    pub(crate) inputs_files: Vec<FileArg>,
    pub(crate) outputs_files: Vec<FileArg>,
    pub(crate) krate: Option<syn::Path>,
    /// A per-contract limit on each staged input file, in bytes.
    pub(crate) max_input_bytes: Option<syn::LitInt>,
    /// Problems that do not stop parsing (unknown or repeated names), reported with the rules.
    pub(crate) errors: Vec<syn::Error>,
}

pub(crate) struct FileArg {
    /// The key as written, with its span.
    pub(crate) key: String,
    pub(crate) key_span: Span,
    pub(crate) path: Option<LitStr>,
    pub(crate) mode: Option<LitStr>,
    pub(crate) content_type: Option<LitStr>,
    pub(crate) span: Span,
}

const ARGUMENTS: &[&str] = &[
    "inputs",
    "outputs",
    "inputs_files",
    "outputs_files",
    "max_input_bytes",
    "crate",
];
const FILE_FIELDS: &[&str] = &["path", "mode", "content_type"];

/// The closest known name, for "did you mean".
fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(word, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| k)
}

fn unknown(what: &str, name: &Ident, known: &[&str]) -> syn::Error {
    let hint = closest(&name.to_string(), known).map_or_else(
        || {
            format!(
                "; expected one of {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        |k| format!("; did you mean `{k}`?"),
    );
    syn::Error::new(name.span(), format!("unknown {what} `{name}`{hint}"))
}

impl Parse for IoArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut args = IoArgs {
            inputs: None,
            outputs: None,
            inputs_files: Vec::new(),
            outputs_files: Vec::new(),
            krate: None,
            max_input_bytes: None,
            errors: Vec::new(),
        };
        while !input.is_empty() {
            let name: Ident = if input.peek(Token![crate]) {
                let token: Token![crate] = input.parse()?;
                Ident::new("crate", token.span)
            } else {
                input.parse()?
            };
            input.parse::<Token![=]>()?;
            match name.to_string().as_str() {
                "inputs" => args.inputs = Some(input.parse()?),
                "outputs" => args.outputs = Some(input.parse()?),
                "inputs_files" => args.inputs_files = parse_files(input, &mut args.errors)?,
                "outputs_files" => args.outputs_files = parse_files(input, &mut args.errors)?,
                "max_input_bytes" => {
                    let limit: syn::LitInt = input.parse()?;
                    if limit.base10_parse::<u64>().is_err() {
                        args.errors.push(syn::Error::new(
                            limit.span(),
                            "`max_input_bytes` is a whole number of bytes, like `max_input_bytes = 1048576`",
                        ));
                    } else {
                        args.max_input_bytes = Some(limit);
                    }
                }
                "crate" => {
                    let text: LitStr = input.parse()?;
                    args.krate = Some(text.parse().map_err(|_| {
                        syn::Error::new(
                            text.span(),
                            "`crate` takes a path in quotes, like `crate = \"my_crate::agentio_core\"`",
                        )
                    })?);
                }
                _ => {
                    args.errors
                        .push(unknown("`define_io` argument", &name, ARGUMENTS));
                    // Skip the value, whatever its shape, so the rest still parses.
                    while !input.is_empty() && !input.peek(Token![,]) {
                        input.parse::<proc_macro2::TokenTree>()?;
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(args)
    }
}

fn parse_files(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Vec<FileArg>> {
    let content;
    braced!(content in input);
    let mut files = Vec::new();
    while !content.is_empty() {
        let (key, key_span) = if content.peek(LitStr) {
            let text: LitStr = content.parse()?;
            (text.value(), text.span())
        } else {
            let ident: Ident = content.call(syn::ext::IdentExt::parse_any)?;
            (ident.to_string(), ident.span())
        };
        content.parse::<Token![=>]>()?;
        let fields;
        let brace = braced!(fields in content);
        let mut file = FileArg {
            key,
            key_span,
            path: None,
            mode: None,
            content_type: None,
            span: brace.span.join(),
        };
        while !fields.is_empty() {
            let name: Ident = fields.parse()?;
            fields.parse::<Token![=]>()?;
            let value: LitStr = fields.parse()?;
            let slot = match name.to_string().as_str() {
                "path" => &mut file.path,
                "mode" => &mut file.mode,
                "content_type" | "contentType" => &mut file.content_type,
                _ => {
                    errors.push(unknown("file field", &name, FILE_FIELDS));
                    if fields.is_empty() {
                        break;
                    }
                    fields.parse::<Token![,]>()?;
                    continue;
                }
            };
            if slot.is_some() {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is given twice"),
                ));
            }
            *slot = Some(value);
            if fields.is_empty() {
                break;
            }
            fields.parse::<Token![,]>()?;
        }
        files.push(file);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_misspellings_are_suggested() {
        assert_eq!(closest("input_files", ARGUMENTS), Some("inputs_files"));
        assert_eq!(closest("ouputs", ARGUMENTS), Some("outputs"));
        assert_eq!(closest("zzz", ARGUMENTS), None);
        // Up to a third of the name's length for long names, at least 2 for short ones.
        assert_eq!(closest("inptus", ARGUMENTS), Some("inputs"));
        assert_eq!(
            closest("max_inptu_byts", ARGUMENTS),
            Some("max_input_bytes")
        );
        assert_eq!(
            closest("mxa_inptu_byts", ARGUMENTS),
            Some("max_input_bytes")
        );
        assert_eq!(closest("mxa_inptu_bxyts", ARGUMENTS), None);
        assert_eq!(closest("pth", FILE_FIELDS), Some("path"));
        assert_eq!(closest("xyz", FILE_FIELDS), None);
    }

    fn errors(args: &IoArgs) -> Vec<String> {
        args.errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn every_argument_and_file_field_is_read() {
        let args: IoArgs = syn::parse_str(
            r#"inputs = A, outputs = B, max_input_bytes = 1048576, crate = "my::io",
               inputs_files = { sales => { path = "in.csv", mode = "ro", content_type = "text/csv" },
                                b => { path = "b", contentType = "text/plain" } }"#,
        )
        .unwrap();
        assert_eq!(errors(&args), Vec::<String>::new());
        assert!(args.outputs.is_some());
        assert_eq!(
            args.max_input_bytes
                .as_ref()
                .map(|l| l.base10_parse::<u64>().unwrap()),
            Some(1_048_576)
        );
        let krate = args.krate.as_ref().unwrap();
        assert_eq!(quote::quote!(#krate).to_string(), "my :: io");
        let sales = &args.inputs_files[0];
        assert_eq!(sales.key, "sales");
        assert_eq!(sales.path.as_ref().unwrap().value(), "in.csv");
        assert_eq!(sales.mode.as_ref().unwrap().value(), "ro");
        assert_eq!(sales.content_type.as_ref().unwrap().value(), "text/csv");
        assert_eq!(
            args.inputs_files[1].content_type.as_ref().unwrap().value(),
            "text/plain"
        );
    }

    #[test]
    fn mistakes_are_reported_and_the_rest_still_parses() {
        let args: IoArgs = syn::parse_str(
            r#"input = { a b c }, max_input_bytes = 99999999999999999999,
               outputs_files = { r => { path = "a", path = "b", kind = "x", contenttype = "y" } },
               inputs = A"#,
        )
        .unwrap();
        assert_eq!(
            errors(&args),
            vec![
                "unknown `define_io` argument `input`; did you mean `inputs`?",
                "`max_input_bytes` is a whole number of bytes, like `max_input_bytes = 1048576`",
                "`path` is given twice",
                "unknown file field `kind`; expected one of `path`, `mode`, `content_type`",
                "unknown file field `contenttype`; did you mean `content_type`?",
            ]
        );
        assert!(args.max_input_bytes.is_none());
        assert!(args.inputs.is_some());
        assert_eq!(args.outputs_files[0].path.as_ref().unwrap().value(), "b");
        let err = syn::parse_str::<IoArgs>(r#"crate = "not a path""#)
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "`crate` takes a path in quotes, like `crate = \"my_crate::agentio_core\"`"
        );
    }

    #[test]
    fn the_grammar_parses_keys_entries_and_trailing_commas() {
        let args: IoArgs = syn::parse_str(
            r#"inputs = A, outputs_files = { "report.md" => { path = "out/<runId>.md", mode = "rw", }, log => { path = "l" } },"#,
        )
        .unwrap();
        assert!(args.inputs.is_some());
        assert_eq!(args.outputs_files.len(), 2);
        assert_eq!(args.outputs_files[0].key, "report.md");
        assert!(args.errors.is_empty());
    }
}
