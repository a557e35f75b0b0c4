//! `#[tool(...)]`: a tool contract, checked at compile time, on an `impl TypedTool` block or
//! on an `async fn` with one input.

mod attr;
mod check;
mod expand;

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};

use attr::ToolArgs;

/// Parses the arguments and the item, checks the contract, expands. The item is always
/// re-emitted, so a contract mistake does not also break every use of the tool.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let parsed = NestedMeta::parse_meta_list(args)
        .map_err(darling::Error::from)
        .and_then(|list| ToolArgs::from_list(&list));
    // When the arguments themselves do not parse, their rules are not checked (a missing `id`
    // would only repeat the parse error); the item still expands, with placeholder values.
    let mut discarded = darling::Error::accumulator();
    let (mut args, rules) = match errors.handle(parsed) {
        Some(args) => (args, &mut errors),
        None => (ToolArgs::default(), &mut discarded),
    };
    let at_attr = Span::call_site();
    let expanded = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Impl(item_impl)) => expand::impl_block(item_impl, &args, at_attr, rules),
        Ok(syn::Item::Fn(item_fn)) => {
            // `#[tool]` above `#[define_io]`: this attribute expands first, before
            // `#[define_io]` can point it at the blocks, so point it here. The struct is the
            // one `#[define_io]` generates for this function: `NameIo`.
            let define_io_below = item_fn.attrs.iter().any(|a| {
                a.path()
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "define_io")
            });
            if define_io_below && args.io.is_none() {
                let name = crate::naming::pascal_case(&item_fn.sig.ident.to_string());
                let io = quote::format_ident!("{name}Io", span = item_fn.sig.ident.span());
                args.io = Some(syn::parse_quote!(#io));
            }
            expand::function(item_fn, &args, at_attr, rules)
        }
        Ok(other) => {
            rules.push(
                darling::Error::custom(
                    "`#[tool]` goes on an `impl TypedTool for ...` block or on an `async fn` that takes the tool's input",
                )
                .with_span(&at_attr),
            );
            other.into_token_stream()
        }
        Err(_) => item,
    };
    drop(discarded.finish());
    let errors = errors.finish().err().map(darling::Error::write_errors);
    quote!(#errors #expanded)
}

/// The doc comment of an item, as the description a model reads.
fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(text),
                        ..
                    }),
                ..
            }) => Some(text.value()),
            _ => None,
        })
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_owned()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
