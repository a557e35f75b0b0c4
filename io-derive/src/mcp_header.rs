//! Rule: SEP-2243's `x-mcp-header` (written `#[schemars(extend("x-mcp-header" = "Region"))]` on
//! an input's field) is a header a client can send. A client drops, silently, a tool whose
//! annotation breaks SEP-2243's rules, so what syntax can see is a compile error here, at the
//! name or the type:
//!
//! - the value is a string naming an HTTP header: not empty, RFC 9110 token characters only,
//!   and no two fields of the type naming one header (header names ignore case);
//! - the field is a property of the input object: not a field of an enum variant (reached
//!   through `oneOf`, where clients do not look) and not a `#[serde(flatten)]` field (which has
//!   no property of its own);
//! - its type is one primitive (string, integer or boolean): not an `Option` (nullable), not a
//!   float (`number`), not a sequence, map or `serde_json::Value`. Skipped for a field whose
//!   schema is given with `#[schemars(with = ...)]` or `schema_with`.
//!
//! Syntax only: a type alias hides what it names, and a flattened or nested type's fields are
//! its own. The schema's half of the rules, which sees the schema itself, runs when an MCP
//! server is built (`agentio_schema::profiles::Profile::Mcp`) and refuses what gets past this.

use darling::error::Accumulator;
use proc_macro2::{Span, TokenStream};
use serde_derive_internals::ast;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

const KEYWORD: &str = "x-mcp-header";

/// One `"key" = value` entry of schemars' `extend(...)`; the value is kept as tokens (schemars
/// reads it as JSON, which is not always a Rust expression).
struct Entry {
    key: syn::LitStr,
    value: TokenStream,
}

impl Parse for Entry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        let mut value = TokenStream::new();
        while !input.is_empty() && !input.peek(syn::Token![,]) {
            value.extend([input.parse::<proc_macro2::TokenTree>()?]);
        }
        Ok(Entry { key, value })
    }
}

/// What the field's `#[schemars(...)]` attributes say that matters here: its `x-mcp-header`
/// values (with where each is written), and whether its schema is given another way.
#[derive(Default)]
struct Annotations {
    headers: Vec<(TokenStream, Span)>,
    schema_given: bool,
}

fn annotations(field: &syn::Field) -> Annotations {
    let mut found = Annotations::default();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("schemars")) {
        // A malformed attribute is schemars' to report; what was read before it still counts.
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("extend") {
                let content;
                syn::parenthesized!(content in meta.input);
                let entries = content.parse_terminated(Entry::parse, syn::Token![,])?;
                for entry in entries {
                    if entry.key.value() == KEYWORD {
                        let span = entry.value.span();
                        found.headers.push((entry.value, span));
                    }
                }
                return Ok(());
            }
            if meta.path.is_ident("with") || meta.path.is_ident("schema_with") {
                found.schema_given = true;
            }
            crate::attr::skip_entry(&meta)
        });
    }
    found
}

/// RFC 9110's `tchar`: the characters of a header name.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// The rule (see the module's documentation), over every field of an input.
pub(crate) fn mcp_headers(cont: &ast::Container<'_>, errors: &mut Accumulator) {
    let (fields, in_variant): (Vec<&ast::Field<'_>>, bool) = match &cont.data {
        ast::Data::Struct(_, fields) => (fields.iter().collect(), false),
        ast::Data::Enum(variants) => (variants.iter().flat_map(|v| &v.fields).collect(), true),
    };
    // Header names already taken, folded to lower case, with the field that took each.
    let mut taken: Vec<(String, String)> = Vec::new();
    for field in fields {
        let found = annotations(field.original);
        let property = &field.attrs.name().deserialize_name().value;
        for (value, span) in &found.headers {
            if in_variant {
                errors.push(error(
                    *span,
                    format_args!("`{KEYWORD}` marks a property of the input object, and `{property}` is a field of an enum variant, reached through `oneOf`, where clients do not look for it; move it to a struct input"),
                ));
                continue;
            }
            if field.attrs.flatten() {
                errors.push(error(
                    *span,
                    format_args!("`{KEYWORD}` marks a property, and a `#[serde(flatten)]` field has none of its own; annotate the field inside the flattened type"),
                ));
                continue;
            }
            let name = match syn::parse2::<syn::Lit>(value.clone()) {
                Ok(syn::Lit::Str(name)) => name.value(),
                _ => {
                    errors.push(error(
                        *span,
                        format_args!(
                            "`{KEYWORD}` must be a string naming the header, like `\"Region\"`"
                        ),
                    ));
                    continue;
                }
            };
            if name.is_empty() {
                errors.push(error(
                    *span,
                    format_args!("`{KEYWORD}` must name a header, not be empty"),
                ));
                continue;
            }
            if let Some(bad) = name.chars().find(|c| !is_token_char(*c)) {
                errors.push(error(
                    *span,
                    format_args!("`{KEYWORD}` {name:?} is not an HTTP header name: {bad:?} is not an RFC 9110 token character"),
                ));
                continue;
            }
            let folded = name.to_ascii_lowercase();
            if let Some((_, first)) = taken.iter().find(|(taken, _)| *taken == folded) {
                errors.push(error(
                    *span,
                    format_args!("`{KEYWORD}` {name:?} names the same header as the field `{first}` (header names ignore case)"),
                ));
                continue;
            }
            taken.push((folded, property.clone()));
        }
        if found.headers.is_empty() || found.schema_given || in_variant || field.attrs.flatten() {
            continue;
        }
        if let Some((span, what)) = not_primitive(field.ty) {
            errors.push(error(
                span,
                format_args!(
                    "`{KEYWORD}` needs one primitive type (string, integer or boolean), and {what}"
                ),
            ));
        }
    }
}

const SEQUENCES: &[&str] = &[
    "Vec",
    "VecDeque",
    "LinkedList",
    "HashSet",
    "BTreeSet",
    "IndexSet",
    "BinaryHeap",
];

/// Where and why `ty`, by its syntax, is not a string, integer or boolean in its schema; `None`
/// when it may be one (any type syntax does not rule out).
fn not_primitive(ty: &Type) -> Option<(Span, String)> {
    match ty {
        Type::Path(path) => {
            let last = path.path.segments.last()?;
            let name = last.ident.to_string();
            let inner = match &last.arguments {
                PathArguments::AngleBracketed(args) => args.args.iter().find_map(|arg| match arg {
                    GenericArgument::Type(inner) => Some(inner),
                    _ => None,
                }),
                _ => None,
            };
            match name.as_str() {
                "Option" => Some((
                    last.ident.span(),
                    "an `Option` is nullable (`[\"...\", \"null\"]`), which a header cannot say; make the field the inner type and give it a default with `#[serde(default)]`".to_owned(),
                )),
                "f32" | "f64" => Some((
                    last.ident.span(),
                    format!("`{name}` is a JSON `number`, whose text is not one (`1`, `1.0` and `1e0` are one number), so its header could not be checked against the body; use an integer or a string"),
                )),
                _ if SEQUENCES.contains(&name.as_str()) => Some((
                    last.ident.span(),
                    format!("`{name}` is an array"),
                )),
                _ if crate::ty::MAPS.contains(&name.as_str()) || name == "Value" => Some((
                    last.ident.span(),
                    format!("`{name}` is an object"),
                )),
                // A box or a reference-counted pointer has its content's schema.
                "Box" | "Rc" | "Arc" => inner.and_then(not_primitive),
                _ => None,
            }
        }
        Type::Reference(reference) => not_primitive(&reference.elem),
        Type::Paren(paren) => not_primitive(&paren.elem),
        Type::Group(group) => not_primitive(&group.elem),
        Type::Array(_) | Type::Slice(_) => {
            Some((ty.span(), "an array or slice is an array".to_owned()))
        }
        Type::Tuple(tuple) if !tuple.elems.is_empty() => {
            Some((ty.span(), "a tuple is an array".to_owned()))
        }
        Type::Tuple(_) => Some((ty.span(), "`()` is `null`".to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(input: syn::DeriveInput) -> Vec<String> {
        let mut errors = darling::Error::accumulator();
        crate::check::read_as_input(&input, |cont| mcp_headers(cont, &mut errors));
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn what_sep_2243_accepts_passes() {
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[schemars(extend("x-mcp-header" = "Region"))]
                region: String,
                #[schemars(description = "how many", extend("x-other" = { "a": 1, "b": [2, 3] }, "x-mcp-header" = "X_Priority.v2~!#$%&'*+^`|-"))]
                priority: u32,
                #[schemars(extend("x-mcp-header" = "Verbose"))]
                verbose: Box<bool>,
                // The schema is given: its type is the given one's.
                #[schemars(with = "String", extend("x-mcp-header" = "Since"))]
                since: Option<u64>,
                // Not annotated: any type.
                note: Option<f64>,
                #[schemars(extend("x-other" = "Region"))]
                other: Vec<String>,
            }
        });
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn an_annotation_after_other_entries_of_the_attribute_is_read() {
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[schemars(length(min = 1), with = "u8", extend("x-other" = 1), extend("x-mcp-header" = "A b"))]
                a: String,
                #[schemars(range(min = 1))]
                #[schemars(extend("x-mcp-header" = "B"))]
                b: f64,
            }
        });
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].contains("\"A b\" is not an HTTP header name"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].contains("`f64` is a JSON `number`"),
            "{}",
            errors[1]
        );
    }

    #[test]
    fn a_name_that_is_not_a_header_name_is_refused() {
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[schemars(extend("x-mcp-header" = ""))]
                a: String,
                #[schemars(extend("x-mcp-header" = "My Region"))]
                b: String,
                #[schemars(extend("x-mcp-header" = "Région"))]
                c: String,
                #[schemars(extend("x-mcp-header" = 7))]
                d: String,
                #[schemars(extend("x-mcp-header" = ["Region"]))]
                e: String,
            }
        });
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors[0].contains("not be empty"), "{}", errors[0]);
        assert!(
            errors[1].contains("\"My Region\"") && errors[1].contains("' '"),
            "{}",
            errors[1]
        );
        assert!(errors[2].contains("'é'"), "{}", errors[2]);
        assert!(errors[3].contains("must be a string"), "{}", errors[3]);
        assert!(errors[4].contains("must be a string"), "{}", errors[4]);
    }

    #[test]
    fn two_fields_naming_one_header_are_refused_whatever_the_case() {
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[serde(rename = "regionA")]
                #[schemars(extend("x-mcp-header" = "Region"))]
                a: String,
                #[schemars(extend("x-mcp-header" = "region"))]
                b: String,
                #[schemars(extend("x-mcp-header" = "Zone"))]
                c: String,
            }
        });
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("\"region\" names the same header as the field `regionA`"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn a_field_that_is_not_one_primitive_is_refused() {
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[schemars(extend("x-mcp-header" = "A"))]
                a: Option<String>,
                #[schemars(extend("x-mcp-header" = "B"))]
                b: f64,
                #[schemars(extend("x-mcp-header" = "C"))]
                c: std::vec::Vec<u8>,
                #[schemars(extend("x-mcp-header" = "D"))]
                d: HashMap<String, u8>,
                #[schemars(extend("x-mcp-header" = "E"))]
                e: [u8; 2],
                #[schemars(extend("x-mcp-header" = "F"))]
                f: (u8, u8),
                #[schemars(extend("x-mcp-header" = "G"))]
                g: Box<f32>,
                #[schemars(extend("x-mcp-header" = "H"))]
                h: &'static [u8],
                #[schemars(extend("x-mcp-header" = "I"))]
                i: serde_json::Value,
                #[schemars(extend("x-mcp-header" = "J"))]
                j: (),
            }
        });
        let expected = [
            "`Option` is nullable",
            "`f64` is a JSON `number`",
            "`Vec` is an array",
            "`HashMap` is an object",
            "an array or slice",
            "a tuple is an array",
            "`f32` is a JSON `number`",
            "an array or slice",
            "`Value` is an object",
            "`()` is `null`",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:?}");
        for (error, expected) in errors.iter().zip(expected) {
            assert!(
                error.contains(expected),
                "{error} lacks {expected}: {errors:#?}"
            );
            assert!(error.contains("needs one primitive type"), "{error}");
        }
    }

    #[test]
    fn parentheses_and_a_macros_invisible_group_are_looked_through() {
        let float: Type = syn::parse_quote!(f64);
        let paren: Type = syn::parse_quote!((f64));
        assert!(matches!(paren, Type::Paren(_)));
        // A macro's `$ty` reaches the derive as an invisible group.
        let group = Type::Group(syn::TypeGroup {
            attrs: Vec::new(),
            group_token: Default::default(),
            elem: Box::new(float),
        });
        for ty in [paren, group] {
            let (_, what) = not_primitive(&ty).expect("a float");
            assert!(what.contains("`f64` is a JSON `number`"), "{what}");
        }
        assert!(not_primitive(&syn::parse_quote!((String))).is_none());
    }

    #[test]
    fn a_header_off_the_input_objects_properties_is_refused() {
        let errors = errors_of(syn::parse_quote! {
            #[serde(tag = "kind")]
            enum Routed {
                One {
                    #[schemars(extend("x-mcp-header" = "Region"))]
                    region: Option<String>,
                },
            }
        });
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("enum variant"), "{}", errors[0]);
        let errors = errors_of(syn::parse_quote! {
            struct Routed {
                #[serde(flatten)]
                #[schemars(extend("x-mcp-header" = "Region"))]
                place: Place,
            }
        });
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("flatten"), "{}", errors[0]);
    }
}
