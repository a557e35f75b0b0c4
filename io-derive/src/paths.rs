//! Where the runtime crates are, seen from the crate being compiled: `::io_core` and
//! `::io_typed_tool` when it depends on them (under any name), `::agent_io::core` and
//! `::agent_io::tools` when it depends only on the `agent-io` facade. An explicit
//! `crate = "..."` argument always wins.

use proc_macro_crate::{FoundCrate, crate_name};

fn path_of(direct: &str, default: &str, through_facade: &str) -> syn::Path {
    let text = match crate_name(direct) {
        Ok(FoundCrate::Name(name)) => format!("::{name}"),
        // Inside the crate itself (its tests and doctests name it as a dependency).
        Ok(FoundCrate::Itself) => format!("::{default}"),
        Err(_) => match crate_name("agent-io") {
            Ok(FoundCrate::Name(facade)) => format!("::{facade}::{through_facade}"),
            Ok(FoundCrate::Itself) => format!("crate::{through_facade}"),
            Err(_) => format!("::{default}"),
        },
    };
    syn::parse_str(&text).unwrap_or_else(|_| syn::parse_quote!(::io_core))
}

/// The path of `io_core` for the crate being compiled.
pub(crate) fn io_core() -> syn::Path {
    path_of("io-core", "io_core", "core")
}

/// The path of `io_typed_tool` for the crate being compiled.
pub(crate) fn io_typed_tool() -> syn::Path {
    path_of("io-typed-tool", "io_typed_tool", "tools")
}
