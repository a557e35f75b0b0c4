//! `#[define_io(...)]`: AIP-16 IO blocks for a type, a tool, a core or a function.

mod check;
mod parse;

use crate::naming::pascal_case;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use parse::{FileArg, IoArgs};

/// Parses, checks, expands. The item is always re-emitted.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = match syn::parse2::<IoArgs>(args) {
        Ok(args) => args,
        Err(err) => {
            let err = err.into_compile_error();
            return quote!(#err #item);
        }
    };
    let mut errors = args.errors.clone();
    check::keys(&args.inputs_files, &mut errors);
    check::keys(&args.outputs_files, &mut errors);
    check::paths(&args.inputs_files, &mut errors);
    check::paths(&args.outputs_files, &mut errors);
    check::modes(&args.inputs_files, &mut errors);
    check::modes(&args.outputs_files, &mut errors);
    let errors: TokenStream = errors
        .into_iter()
        .map(syn::Error::into_compile_error)
        .collect();

    let krate = args
        .krate
        .clone()
        .unwrap_or_else(crate::paths::agentio_core);
    let parsed = syn::parse2::<syn::Item>(item.clone());
    let sibling_tool = match &parsed {
        Ok(syn::Item::Fn(f)) => check::tool_mutates(&f.attrs),
        Ok(syn::Item::Impl(i)) => check::tool_mutates(&i.attrs),
        _ => None,
    };
    let coverage_errors: TokenStream = sibling_tool
        .map(|mutates| {
            let mut found = Vec::new();
            check::outputs_covered(&args.outputs_files, &mutates, &mut found);
            found
                .into_iter()
                .map(syn::Error::into_compile_error)
                .collect()
        })
        .unwrap_or_default();
    let errors = quote!(#errors #coverage_errors);
    let (target, item) = match parsed {
        Ok(syn::Item::Struct(s)) => (Target::Type(s.ident.clone()), s.into_token_stream()),
        Ok(syn::Item::Enum(e)) => (Target::Type(e.ident.clone()), e.into_token_stream()),
        Ok(syn::Item::Impl(item_impl)) => impl_target(item_impl, &krate),
        Ok(syn::Item::Fn(item_fn)) => fn_target(item_fn),
        Ok(other) => {
            let err = syn::Error::new(
                other.span(),
                "`#[define_io]` goes on a struct or enum, an `impl` block (of a tool or a core), or a function",
            )
            .into_compile_error();
            return quote!(#errors #err #other);
        }
        Err(_) => return quote!(#errors #item),
    };
    let implementation = defines_io(&target, &args, &krate);
    quote!(#errors #item #implementation)
}

enum Target {
    /// Implement `DefinesIo` for this type.
    Type(syn::Ident),
    /// Implement it for an impl block's self type.
    SelfType(Box<syn::Type>),
    /// Generate this unit struct and implement it for it.
    NewStruct(syn::Visibility, syn::Ident, String),
}

/// On `impl TypedTool for T`: the tool's `file_contract()` returns this handle, so the
/// registry stages and syncs its files.
fn impl_target(mut item_impl: syn::ItemImpl, krate: &syn::Path) -> (Target, TokenStream) {
    let is_typed_tool = item_impl
        .trait_
        .as_ref()
        .and_then(|(path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "TypedTool");
    if is_typed_tool {
        item_impl.items.push(syn::parse_quote! {
            fn file_contract() -> ::core::option::Option<&'static #krate::files::IoHandle> {
                ::core::option::Option::Some(<Self as #krate::files::DefinesIo>::io_handle())
            }
        });
    }
    (
        Target::SelfType(item_impl.self_ty.clone()),
        item_impl.into_token_stream(),
    )
}

/// On a function: a `NameIo` unit struct carries the blocks; a `#[tool(...)]` on the same
/// function gets `io = NameIo`, so the generated tool uses them.
fn fn_target(mut item_fn: syn::ItemFn) -> (Target, TokenStream) {
    let name = pascal_case(&item_fn.sig.ident.to_string());
    let struct_name = format_ident!("{name}Io", span = item_fn.sig.ident.span());
    for attr in &mut item_fn.attrs {
        if attr
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "tool")
            && let syn::Meta::List(list) = &mut attr.meta
        {
            let existing = std::mem::take(&mut list.tokens);
            list.tokens = if existing.is_empty() {
                quote!(io = #struct_name)
            } else {
                quote!(#existing, io = #struct_name)
            };
        }
    }
    let doc = format!("The IO blocks of [`{}`].", item_fn.sig.ident);
    let target = Target::NewStruct(item_fn.vis.clone(), struct_name, doc);
    (target, item_fn.into_token_stream())
}

fn file_entries(files: &[FileArg]) -> TokenStream {
    let entries = files.iter().map(|file| {
        let key = &file.key;
        let path = file
            .path
            .as_ref()
            .map_or_else(String::new, syn::LitStr::value);
        let option = |value: &Option<syn::LitStr>| match value {
            Some(text) => quote!(::core::option::Option::Some(#text)),
            None => quote!(::core::option::Option::None),
        };
        let mode = option(&file.mode);
        let content_type = option(&file.content_type);
        quote!((#key, #path, #mode, #content_type))
    });
    quote!(&[#(#entries),*])
}

fn defines_io(target: &Target, args: &IoArgs, krate: &syn::Path) -> TokenStream {
    let value = quote!(#krate::__private::serde_json::Value);
    let inputs = args
        .inputs
        .as_ref()
        .map_or_else(|| value.clone(), ToTokens::to_token_stream);
    let outputs = args
        .outputs
        .as_ref()
        .map_or_else(|| value.clone(), ToTokens::to_token_stream);
    let limit = match &args.max_input_bytes {
        Some(bytes) => quote!(::core::option::Option::Some(#bytes)),
        None => quote!(::core::option::Option::None),
    };
    let inputs_files = file_entries(&args.inputs_files);
    let outputs_files = file_entries(&args.outputs_files);
    let (self_ty, new_struct) = match target {
        Target::Type(ident) => (ident.to_token_stream(), None),
        Target::SelfType(ty) => (ty.to_token_stream(), None),
        Target::NewStruct(vis, ident, doc) => (
            ident.to_token_stream(),
            Some(quote! {
                #[doc = #doc]
                #[derive(Clone, Copy, Debug, Default)]
                #vis struct #ident;
            }),
        ),
    };
    // Rule: a unit that declares files gets `_workflowFsRoot` injected, so its input type must
    // be able to receive it (checked through the derive's `ACCEPTS_FS_ROOT`, at the type).
    let has_files = !args.inputs_files.is_empty() || !args.outputs_files.is_empty();
    let fs_root_check = has_files.then(|| {
        let span = args.inputs.as_ref().map_or_else(Span::call_site, Spanned::span);
        quote_spanned! {span=>
            const _: () = ::core::assert!(
                <#inputs as #krate::AgentInput>::ACCEPTS_FS_ROOT,
                "files are declared, so the host injects `_workflowFsRoot` into the input, but the input type denies unknown fields and has no such field; add `#[serde(rename = \"_workflowFsRoot\")] root: Option<FsRoot>` to it"
            );
        }
    });
    quote! {
        #new_struct
        const _: () = {
            #fs_root_check

            #[automatically_derived]
            impl #krate::files::DefinesIo for #self_ty {
                type Input = #inputs;
                type Output = #outputs;

                fn io_handle() -> &'static #krate::files::IoHandle {
                    static __IO_HANDLE: #krate::__private::OnceLock<#krate::files::IoHandle> =
                        #krate::__private::OnceLock::new();
                    __IO_HANDLE.get_or_init(|| {
                        #krate::__private::io_handle_with_limit::<#inputs, #outputs>(#inputs_files, #outputs_files, #limit)
                    })
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(args: TokenStream, item: TokenStream) -> String {
        expand(args, item).to_string()
    }

    #[test]
    fn on_a_typed_tool_impl_the_tool_gets_its_file_contract() {
        let tool = expanded(quote!(inputs = A), quote!(impl TypedTool for T {}));
        assert!(tool.contains("fn file_contract"), "{tool}");
        assert!(tool.contains("DefinesIo for T"), "{tool}");
        let core = expanded(quote!(inputs = A), quote!(impl AgentCore for T {}));
        assert!(!core.contains("fn file_contract"), "{core}");
        assert!(core.contains("DefinesIo for T"), "{core}");
    }

    #[test]
    fn on_a_function_the_blocks_get_a_struct_and_the_tool_is_pointed_at_it() {
        let with_args = expanded(
            quote!(inputs = A),
            quote!(
                #[tool(id = "a.b")]
                async fn find_all(a: A) {}
            ),
        );
        assert!(
            with_args.contains("tool (id = \"a.b\" , io = FindAllIo)"),
            "{with_args}"
        );
        assert!(with_args.contains("struct FindAllIo"), "{with_args}");
        assert!(with_args.contains("DefinesIo for FindAllIo"), "{with_args}");
        let empty = expanded(
            quote!(inputs = A),
            quote!(
                #[tool()]
                async fn f(a: A) {}
            ),
        );
        assert!(empty.contains("tool (io = FIo)"), "{empty}");
        // Another attribute is left alone.
        let other = expanded(
            quote!(inputs = A),
            quote!(
                #[inline]
                fn f(a: A) {}
            ),
        );
        assert!(other.contains("# [inline]"), "{other}");
        assert!(!other.contains("io = FIo"), "{other}");
    }

    #[test]
    fn only_declared_files_need_an_input_that_takes_the_root() {
        let assertion = "ACCEPTS_FS_ROOT";
        let none = expanded(
            quote!(inputs = A),
            quote!(
                struct S;
            ),
        );
        assert!(!none.contains(assertion), "{none}");
        for files in [
            quote!(inputs = A, inputs_files = { a => { path = "a" } }),
            quote!(inputs = A, outputs_files = { a => { path = "a" } }),
        ] {
            let text = expanded(
                files,
                quote!(
                    struct S;
                ),
            );
            assert!(text.contains(assertion), "{text}");
        }
    }

    #[test]
    fn a_tool_beside_the_blocks_must_declare_its_output_files_as_mutations() {
        let args = quote!(inputs = A, outputs_files = { log => { path = "logs/x.txt" } });
        for item in [
            quote!(
                #[tool(id = "a.b")]
                async fn f(a: A) {}
            ),
            quote!(
                #[tool(id = "a.b")]
                impl TypedTool for T {}
            ),
        ] {
            let text = expanded(args.clone(), item);
            assert!(text.contains("output file `log` writes"), "{text}");
        }
        let covered = expanded(
            args.clone(),
            quote!(
                #[tool(id = "a.b", mutates = ["workspace:/logs"])]
                impl TypedTool for T {}
            ),
        );
        assert!(!covered.contains("compile_error"), "{covered}");
        // Without a tool there is nothing to compare with.
        let alone = expanded(args, quote!(impl TypedTool for T {}));
        assert!(!alone.contains("compile_error"), "{alone}");
    }
}
