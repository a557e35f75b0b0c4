//! `#[tool(...)]`: a tool contract, checked at compile time, on an `impl TypedTool` block or
//! on an `async fn` with one input.

mod attr;
mod check;
mod expand;

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, TokenStreamExt, quote};

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
    // A function is read up to its body, which is passed through as tokens: parsing every
    // statement of it would only cost each tool's expansion (the macro runs unoptimized in a
    // debug build), and a syntax error in it is rustc's to report, after the tool type exists.
    let expanded = match syn::parse2::<ToolFn>(item.clone()) {
        Ok(item_fn) => {
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
        Err(_) => match syn::parse2::<syn::Item>(item.clone()) {
            Ok(syn::Item::Impl(item_impl)) => expand::impl_block(item_impl, &args, at_attr, rules),
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
        },
    };
    drop(discarded.finish());
    let errors = errors.finish().err().map(darling::Error::write_errors);
    quote!(#errors #expanded)
}

/// A function under `#[tool]`: what `syn::ItemFn` reads, with the body kept as tokens.
pub(super) struct ToolFn {
    attrs: Vec<syn::Attribute>,
    vis: syn::Visibility,
    sig: syn::Signature,
    body: proc_macro2::Group,
}

impl syn::parse::Parse for ToolFn {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: proc_macro2::Group = input.parse()?;
        if body.delimiter() != proc_macro2::Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected a function body"));
        }
        Ok(ToolFn {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl ToTokens for ToolFn {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.append_all(&self.attrs);
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(args: TokenStream, item: TokenStream) -> String {
        expand(args, item).to_string()
    }

    fn count(text: &str, what: &str) -> usize {
        text.matches(what).count()
    }

    const WRITES: &str =
        "`#[tool]` writes `ID` and `contract()` from its arguments; remove this one";

    #[test]
    fn a_function_body_is_passed_through_unparsed_and_the_tool_is_still_generated() {
        // Not Rust statements: syn would refuse the body; the macro does not read it.
        let text = expanded(
            quote!(id = "a.b", description = "d"),
            quote!(
                /// Finds.
                pub async fn find(a: A) -> Result<B, ToolError> where A: Send {
                    let = ;
                    #[inner] @ ~
                }
            ),
        );
        let body = quote!({ let = ; #[inner] @ ~ }).to_string();
        assert!(text.contains(&body), "{text}");
        assert!(
            text.starts_with("# [doc = r\" Finds.\"] pub async fn find"),
            "{text}"
        );
        assert!(text.contains("where A : Send"), "{text}");
        assert!(text.contains("pub struct FindTool ;"), "{text}");
        assert!(
            text.contains("impl :: agentio_tools :: TypedTool for FindTool"),
            "{text}"
        );
        assert!(text.contains("tool_future (find (input)"), "{text}");
        // An item that is neither a function nor an impl block is refused, whole.
        let other = expanded(
            quote!(id = "a.b", description = "d"),
            quote!(
                struct S;
            ),
        );
        assert!(other.contains("`#[tool]` goes on an"), "{other}");
        assert!(other.contains("struct S ;"), "{other}");
    }

    #[test]
    fn an_impl_block_gets_only_the_contract_items_it_does_not_write() {
        let args = quote!(id = "a.b", description = "d");
        let both = expanded(
            args.clone(),
            quote!(impl TypedTool for T { const ID: &str = "x"; const OTHER: u8 = 1; fn contract() {} fn other() {} }),
        );
        assert_eq!(count(&both, WRITES), 2, "{both}");
        assert_eq!(count(&both, "const ID"), 1, "{both}");
        assert_eq!(count(&both, "fn contract"), 1, "{both}");
        let id_only = expanded(
            args.clone(),
            quote!(impl TypedTool for T { const ID: &str = "x"; }),
        );
        assert_eq!(count(&id_only, WRITES), 1, "{id_only}");
        assert_eq!(count(&id_only, "const ID"), 1, "{id_only}");
        assert_eq!(count(&id_only, "fn contract"), 1, "{id_only}");
        let contract_only = expanded(
            args.clone(),
            quote!(impl TypedTool for T { fn contract() {} }),
        );
        assert_eq!(count(&contract_only, WRITES), 1, "{contract_only}");
        assert_eq!(count(&contract_only, "const ID"), 1, "{contract_only}");
        assert_eq!(count(&contract_only, "fn contract"), 1, "{contract_only}");
        let neither = expanded(
            args,
            quote!(impl TypedTool for T { const OTHER: u8 = 1; fn other() {} }),
        );
        assert_eq!(count(&neither, WRITES), 0, "{neither}");
        assert_eq!(count(&neither, "const ID"), 1, "{neither}");
        assert_eq!(count(&neither, "fn contract"), 1, "{neither}");
    }

    #[test]
    fn a_function_above_define_io_uses_its_blocks_unless_told_otherwise() {
        let below = expanded(
            quote!(id = "a.b"),
            quote!(
                #[define_io(inputs = A)]
                async fn find_all(a: A) -> Result<A, E> {
                    Ok(a)
                }
            ),
        );
        assert!(below.contains("FindAllIo"), "{below}");
        let told = expanded(
            quote!(id = "a.b", io = Mine),
            quote!(
                #[define_io(inputs = A)]
                async fn find_all(a: A) -> Result<A, E> {
                    Ok(a)
                }
            ),
        );
        assert!(!told.contains("FindAllIo"), "{told}");
        assert!(told.contains("Mine"), "{told}");
        let alone = expanded(
            quote!(id = "a.b"),
            quote!(
                async fn find_all(a: A) -> Result<A, E> {
                    Ok(a)
                }
            ),
        );
        assert!(!alone.contains("FindAllIo"), "{alone}");
    }

    #[test]
    fn a_second_argument_is_a_reference_to_a_tool_context() {
        let second = "a second argument can only be `&ToolContext`";
        for ok in [
            quote!(
                async fn f(a: A, ctx: &ToolContext) -> Result<A, E> {
                    Ok(a)
                }
            ),
            quote!(
                async fn f(a: A, ctx: &agentio_tools::ToolContext) -> Result<A, E> {
                    Ok(a)
                }
            ),
        ] {
            let text = expanded(quote!(id = "a.b", description = "d"), ok);
            assert!(!text.contains(second), "{text}");
            assert!(text.contains("(input , ctx)"), "{text}");
        }
        for bad in [
            quote!(
                async fn f(a: A, ctx: ToolContext) -> Result<A, E> {
                    Ok(a)
                }
            ),
            quote!(
                async fn f(a: A, ctx: &Other) -> Result<A, E> {
                    Ok(a)
                }
            ),
            quote!(
                async fn f(a: A, ctx: &[ToolContext]) -> Result<A, E> {
                    Ok(a)
                }
            ),
        ] {
            let text = expanded(quote!(id = "a.b", description = "d"), bad);
            assert!(text.contains(second), "{text}");
        }
    }

    const FIELDS: &[&str] = &[
        "contract . name",
        "contract . context_schema",
        "contract . idempotent",
        "contract . mutates",
        "contract . requires . network",
        "contract . requires . secrets",
        "contract . requires . tools",
        "contract . approval",
        "contract . risk_level",
        "contract . cost_class",
        "contract . retry",
        "contract . default_implementation",
        "contract . driver_constraints . forbid",
        "contract . driver_constraints . require_kind",
        "contract . implements",
        "contract . tags",
        "contract . examples",
        "contract . metadata",
    ];

    #[test]
    fn the_contract_writes_only_what_differs_from_the_defaults() {
        let item = quote!(impl TypedTool for T {});
        let minimal = expanded(
            quote!(id = "a.b", description = "d", name = "a.b"),
            item.clone(),
        );
        for field in FIELDS {
            assert!(!minimal.contains(field), "{field}: {minimal}");
        }
        // The timeout is always written: its default lives in agentio-tools.
        assert!(
            minimal.contains("contract . timeout_ms = 30000u64"),
            "{minimal}"
        );
        let full = expanded(
            quote!(
                id = "a.b",
                description = "d",
                name = "Other",
                context = Ctx,
                idempotent = true,
                mutates = ["workspace:/a"],
                requires(network = ["h"], secrets = ["S"], tools = ["t.u"]),
                approval = "always",
                risk_level = 2,
                cost_class = "metered",
                retry(max_attempts = 2, backoff = "fixed"),
                default_implementation = "a.b-local",
                driver_constraints(forbid = ["cli"], require_kind = ["mcp"]),
                implements = "x.y",
                tags = ["t"],
                examples = my_examples,
                metadata = my_metadata,
                timeout_ms = 5
            ),
            item.clone(),
        );
        for field in FIELDS {
            assert!(full.contains(field), "{field}: {full}");
        }
        assert!(full.contains("contract . timeout_ms = 5u64"), "{full}");
        // Each approval class is written as itself; `on-mutate` is what a mutating tool gets.
        for (approval, written) in [
            ("on-mutate", "Approval :: OnMutate"),
            ("policy:org/x", "Approval :: Policy"),
        ] {
            let text = expanded(
                quote!(id = "a.b", description = "d", approval = #approval, mutates = ["workspace:/a"]),
                item.clone(),
            );
            assert!(text.contains(written), "{approval}: {text}");
        }
    }

    #[test]
    fn a_function_that_is_not_async_gets_no_call_to_await() {
        let text = expanded(
            quote!(id = "a.b", description = "d"),
            quote!(
                fn f(a: A) -> Result<A, E> {
                    Ok(a)
                }
            ),
        );
        assert!(text.contains("a tool function must be `async`"), "{text}");
        assert!(text.contains("unreachable"), "{text}");
        assert!(!text.contains("tool_future"), "{text}");
        let good = expanded(
            quote!(id = "a.b", description = "d"),
            quote!(
                async fn f(a: A) -> Result<A, E> {
                    Ok(a)
                }
            ),
        );
        assert!(good.contains("tool_future"), "{good}");
        assert!(!good.contains("unreachable"), "{good}");
    }

    #[test]
    fn an_error_type_without_a_conversion_is_named_at_the_type() {
        // The conversion is named at `MyErr`, so rustc's "no conversion" error underlines it.
        let item: syn::ItemFn =
            syn::parse_str("async fn f(a: A) -> Result<A, MyErr> { Ok(a) }").unwrap();
        let output = expand(
            quote!(id = "a.b", description = "d"),
            item.to_token_stream(),
        );
        fn find(tokens: TokenStream, out: &mut Vec<Span>) {
            for tree in tokens {
                match tree {
                    proc_macro2::TokenTree::Ident(i) if i == "__agent_io_tool_error" => {
                        out.push(i.span())
                    }
                    proc_macro2::TokenTree::Group(g) => find(g.stream(), out),
                    _ => {}
                }
            }
        }
        let mut spans = Vec::new();
        find(output, &mut spans);
        assert!(!spans.is_empty());
        let column = "async fn f(a: A) -> Result<A, ".len();
        for span in spans {
            assert_eq!((span.start().line, span.start().column), (1, column));
        }
    }
}
