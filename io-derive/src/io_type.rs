//! `#[io]`: serde's, schemars' and the agent derives on a type, with the paths they need.
//!
//! serde's and schemars' derives name their runtime crate by its own name (`::serde`), which a
//! crate that depends only on the `agentio` facade does not have; they must be told where it is
//! (`#[serde(crate = "agentio::serde")]`). This attribute writes the derives and those lines.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

use crate::attr::crate_path;

/// The arguments of `#[io(...)]`.
#[derive(FromMeta, Default)]
pub(crate) struct IoArgs {
    /// `input`: the type is an agent or tool input (`AgentInput`).
    input: Flag,
    /// `output`: the type is an agent or tool output (`AgentOutput`).
    output: Flag,
    /// `crate = "path"`: the path of `agentio_core`; serde and schemars are then named through
    /// it.
    #[darling(rename = "crate", default, with = crate_path)]
    krate: Option<syn::Path>,
}

/// The derives `#[io(...)]` adds when the item does not already have them, in this order.
fn wanted(args: &IoArgs) -> Vec<&'static str> {
    let mut names = vec!["Serialize", "Deserialize", "JsonSchema"];
    if args.input.is_present() {
        names.push("AgentInput");
    }
    if args.output.is_present() {
        names.push("AgentOutput");
    }
    names
}

/// Adds the missing derives and the `crate` lines. The item is re-emitted even on error, so a
/// mistake in the arguments does not also break every use of the type.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut input: syn::DeriveInput = match syn::parse2(item.clone()) {
        Ok(input) => input,
        Err(_) => {
            let err = syn::Error::new(
                item.span(),
                "`#[io]` goes on a struct or an enum: it derives their serde, schemars and agent traits",
            )
            .into_compile_error();
            return quote!(#err #item);
        }
    };
    // Rule: serde and schemars cannot describe a union.
    if let syn::Data::Union(union) = &input.data {
        let err = syn::Error::new(
            union.union_token.span(),
            "`#[io]` goes on a struct or an enum: serde and schemars cannot describe a union",
        )
        .into_compile_error();
        return quote!(#err #input);
    }
    let args = NestedMeta::parse_meta_list(args)
        .map_err(darling::Error::from)
        .and_then(|list| IoArgs::from_list(&list));
    let (args, args_error) = match args {
        Ok(args) => (args, None),
        Err(err) => (IoArgs::default(), Some(err.write_errors())),
    };

    let core = args
        .krate
        .clone()
        .unwrap_or_else(crate::paths::agentio_core);
    let (serde, schemars) = match &args.krate {
        Some(krate) => (
            quote!(#krate::__private::serde),
            quote!(#krate::__private::schemars),
        ),
        None => (
            crate::paths::reexported("serde").into_token_stream(),
            crate::paths::reexported("schemars").into_token_stream(),
        ),
    };
    let present = derived(&input.attrs);
    let missing: Vec<TokenStream> = wanted(&args)
        .into_iter()
        .filter(|name| !present.iter().any(|p| p == name))
        .map(|name| {
            let ident = syn::Ident::new(name, proc_macro2::Span::call_site());
            match name {
                "Serialize" | "Deserialize" => quote!(#serde::#ident),
                "JsonSchema" => quote!(#schemars::#ident),
                _ => quote!(#core::#ident),
            }
        })
        .collect();

    // The derives go first: a helper attribute (`#[serde(...)]`) must come after a derive
    // that introduces it. The `crate` lines go last, after any derive the user wrote too.
    let mut attrs = Vec::new();
    if !missing.is_empty() {
        attrs.push(syn::parse_quote!(#[derive(#(#missing),*)]));
    }
    attrs.append(&mut input.attrs);
    if !names_crate(&attrs, "serde") {
        let path = path_text(&serde);
        attrs.push(syn::parse_quote!(#[serde(crate = #path)]));
    }
    if !names_crate(&attrs, "schemars") {
        let path = path_text(&schemars);
        attrs.push(syn::parse_quote!(#[schemars(crate = #path)]));
    }
    input.attrs = attrs;
    quote!(#args_error #input)
}

/// A path as the string serde's and schemars' `crate = "..."` take.
fn path_text(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}

/// The last segment of every path in the item's `#[derive(...)]` lists.
fn derived(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut names = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        if let Ok(paths) =
            attr.parse_args_with(Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        {
            names.extend(
                paths
                    .iter()
                    .filter_map(|p| p.segments.last())
                    .map(|s| s.ident.to_string()),
            );
        }
    }
    names
}

/// Whether a `#[<helper>(crate = ...)]` is among `attrs`.
pub(crate) fn names_crate(attrs: &[syn::Attribute], helper: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident(helper)) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                found = true;
            }
            crate::attr::skip_entry(&meta)
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(args: TokenStream, item: TokenStream) -> syn::DeriveInput {
        syn::parse2(expand(args, item)).expect("a type, with no error before it")
    }

    fn derives(input: &syn::DeriveInput) -> Vec<String> {
        derived(&input.attrs)
    }

    #[test]
    fn each_role_adds_its_derive_after_serde_and_schemars() {
        let plain = expanded(
            quote!(),
            quote!(
                struct Hit {
                    title: String,
                }
            ),
        );
        assert_eq!(derives(&plain), ["Serialize", "Deserialize", "JsonSchema"]);
        let input = expanded(
            quote!(input),
            quote!(
                struct Ask {
                    q: String,
                }
            ),
        );
        assert_eq!(
            derives(&input),
            ["Serialize", "Deserialize", "JsonSchema", "AgentInput"]
        );
        let both = expanded(
            quote!(input, output),
            quote!(
                enum E {
                    A,
                }
            ),
        );
        assert_eq!(
            derives(&both),
            [
                "Serialize",
                "Deserialize",
                "JsonSchema",
                "AgentInput",
                "AgentOutput"
            ]
        );
        let output = expanded(
            quote!(output),
            quote!(
                struct Out {
                    n: u8,
                }
            ),
        );
        assert_eq!(
            derives(&output),
            ["Serialize", "Deserialize", "JsonSchema", "AgentOutput"]
        );
    }

    #[test]
    fn derives_already_written_are_not_written_twice() {
        let input = expanded(
            quote!(input),
            quote! {
                #[derive(Debug, serde::Serialize, AgentInput)]
                struct Ask { q: String }
            },
        );
        // Ours first (what was missing), then the user's own list.
        assert_eq!(
            derives(&input),
            [
                "Deserialize",
                "JsonSchema",
                "Debug",
                "Serialize",
                "AgentInput"
            ]
        );
        let nothing_missing = expanded(
            quote!(),
            quote! {
                #[derive(Serialize, Deserialize, JsonSchema)]
                struct Hit { title: String }
            },
        );
        assert_eq!(derives(&nothing_missing).len(), 3);
    }

    #[test]
    fn the_crate_lines_come_last_and_only_once() {
        let input = expanded(
            quote!(input),
            quote! {
                #[serde(deny_unknown_fields)]
                struct Ask { q: String }
            },
        );
        let order: Vec<String> = input
            .attrs
            .iter()
            .map(|a| {
                a.path()
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(order, ["derive", "serde", "serde", "schemars"]);
        assert!(names_crate(&input.attrs, "serde"));
        assert!(names_crate(&input.attrs, "schemars"));
        let line = input.attrs[2].to_token_stream().to_string();
        assert!(line.contains("crate") && line.contains("serde"), "{line}");

        // A `crate` the user wrote is kept, and not written again.
        let own = expanded(
            quote!(),
            quote! {
                #[serde(rename_all = "camelCase", crate = "my::serde")]
                struct Hit { title: String }
            },
        );
        let serde_lines = own
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("serde"))
            .count();
        assert_eq!(serde_lines, 1);
        assert!(names_crate(&own.attrs, "schemars"));
    }

    #[test]
    fn an_explicit_crate_names_serde_and_schemars_through_it() {
        let input = expanded(
            quote!(input, crate = "my::core"),
            quote!(
                struct Ask {
                    q: String,
                }
            ),
        );
        let text = quote!(#input).to_string().replace(' ', "");
        assert!(
            text.contains("my::core::__private::serde::Serialize"),
            "{text}"
        );
        assert!(
            text.contains("my::core::__private::schemars::JsonSchema"),
            "{text}"
        );
        assert!(text.contains("my::core::AgentInput"), "{text}");
        assert!(
            text.contains("crate=\"my::core::__private::serde\""),
            "{text}"
        );
    }

    #[test]
    fn mistakes_are_errors_and_the_item_is_kept() {
        let unknown = expand(
            quote!(inptu),
            quote!(
                struct Ask {
                    q: String,
                }
            ),
        )
        .to_string();
        assert!(unknown.contains("compile_error"), "{unknown}");
        assert!(unknown.contains("input"), "did you mean: {unknown}");
        assert!(unknown.contains("struct Ask"), "{unknown}");

        let function = expand(
            quote!(),
            quote!(
                fn f() {}
            ),
        )
        .to_string();
        assert!(
            function.contains("goes on a struct or an enum"),
            "{function}"
        );
        assert!(function.contains("fn f"), "{function}");

        let union = expand(quote!(), quote!(union U { a: u8 })).to_string();
        assert!(union.contains("cannot describe a union"), "{union}");
        assert!(union.contains("union U"), "{union}");
    }
}
