//! Capabilities, not ambient authority: a tool body reaches other tools, secrets and the
//! network through its [`ToolContext`](crate::ToolContext), and only as far as its contract's
//! `requires` declares (AIP-14: capability gating runs whatever `requires` claims; AIP-7).
//!
//! The host lends the registry what it has ([`Capabilities`]: a [`ToolInvoker`] for other
//! tools, a [`SecretStore`], an [`HttpClient`]); each call's context then answers for exactly
//! the contract's `requires.tools`, `requires.secrets` and `requires.network`. Anything else is
//! refused with `unauthorised`, naming what was asked and the `requires` entry missing, and
//! the refusal is written to the call's audit record ([`AuditRecord::capability_refusals`]).
//!
//! **What this does not stop.** A native Rust body runs in the host's process with the host's
//! authority: it can open a socket, read a file or an environment variable without asking its
//! context. The context is the only door agent-io *gives* a body; it is not a sandbox. A host
//! that runs bodies it does not trust keeps secrets out of the process environment (a
//! [`SecretStore`] is the way in), denies the process network egress except through the
//! [`HttpClient`] it lends (a proxy, a network namespace, a firewall rule), and runs untrusted
//! code out of process (an MCP server behind [`agentio-mcp`'s client], a WASM or container
//! runtime), where the context is the only way out.
//!
//! [`AuditRecord::capability_refusals`]: crate::AuditRecord::capability_refusals
//! [`agentio-mcp`'s client]: https://docs.rs/agentio-mcp

use std::fmt;
use std::sync::{Arc, Mutex};

use agentio_core::{AgentError, BoxFuture, ErrorCode, ToolCall, ToolInvoker};
use serde_json::Value;

use crate::contract::Requires;

/// [`crate::ToolError`], named here without importing the module that imports this one.
type ToolError = AgentError;

/// The host's secrets, by slug.
pub trait SecretStore: Send + Sync {
    /// The secret named `slug`, if the host has it.
    fn secret(&self, slug: &str) -> Option<String>;
}

/// Any `Fn(&str) -> Option<String>` is a secret store.
impl<F> SecretStore for F
where
    F: Fn(&str) -> Option<String> + Send + Sync,
{
    fn secret(&self, slug: &str) -> Option<String> {
        self(slug)
    }
}

/// The host's HTTP client: what a body's [`HttpRequest`]s go through once their host is
/// allowed. The request arrives parsed (scheme, host, port, path), so the client connects to
/// exactly the host that was checked.
pub trait HttpClient: Send + Sync {
    /// Sends one request.
    fn send(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, ToolError>>;
}

/// A request a body asks its context to send. Built from a URL by a strict parser: `http` or
/// `https`, no user information, a host of letters, digits, `-` and `.` (or a bracketed IPv6
/// address), an optional port; nothing a second URL parser could read as another host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// `http` or `https`.
    pub scheme: String,
    /// The host, lowercased, without a trailing dot.
    pub host: String,
    /// The port (the scheme's default when the URL gives none).
    pub port: u16,
    /// The path and query, starting with `/`.
    pub path_and_query: String,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// An HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A request with `method` for `url`, or why the URL is refused.
    ///
    /// ```
    /// use agentio_tools::HttpRequest;
    /// let get = HttpRequest::new("GET", "https://API.example.com./v1/items?q=1#top").unwrap();
    /// assert_eq!((get.host.as_str(), get.port, get.path_and_query.as_str()), ("api.example.com", 443, "/v1/items?q=1"));
    /// assert_eq!(get.url(), "https://api.example.com:443/v1/items?q=1");
    /// // What two parsers could read as two hosts is refused.
    /// for tricky in ["https://api.example.com@evil.example/", "https://evil.example\\@api.example.com/", "ftp://x/", "https://ex ample.com/"] {
    ///     assert!(HttpRequest::new("GET", tricky).is_err(), "{tricky}");
    /// }
    /// ```
    pub fn new(method: &str, url: &str) -> Result<HttpRequest, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| "the URL has no scheme".to_owned())?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(format!("the scheme `{scheme}` is not http or https")),
        };
        if rest
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
        {
            return Err("the URL holds a space, a control character or a backslash".into());
        }
        let rest = rest.split('#').next().unwrap_or("");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if authority.contains('@') {
            return Err("the URL carries user information (`@`)".into());
        }
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (address, after) = bracketed
                .split_once(']')
                .ok_or_else(|| "an unclosed `[` in the host".to_owned())?;
            address
                .parse::<std::net::Ipv6Addr>()
                .map_err(|_| format!("`[{address}]` is not an IPv6 address"))?;
            (format!("[{}]", address.to_ascii_lowercase()), after)
        } else {
            let end = authority.find(':').unwrap_or(authority.len());
            let (host, after) = authority.split_at(end);
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            let valid = !host.is_empty()
                && host.len() <= 253
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
            if !valid {
                return Err("the host is not a name of letters, digits, `-` and `.`".into());
            }
            (host, after)
        };
        let port = match port.strip_prefix(':') {
            None if port.is_empty() => default_port,
            Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits
                    .parse()
                    .map_err(|_| "the port is out of range".to_owned())?
            }
            _ => return Err("the port is not a number".into()),
        };
        let path_and_query = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        Ok(HttpRequest {
            method: method.to_owned(),
            scheme,
            host,
            port,
            path_and_query,
            headers: Vec::new(),
            body: Vec::new(),
        })
    }

    /// The URL the client should fetch: rebuilt from the checked parts.
    pub fn url(&self) -> String {
        format!(
            "{}://{}:{}{}",
            self.scheme, self.host, self.port, self.path_and_query
        )
    }
}

/// What a host lends the bodies of a registry's tools (see the module documentation).
#[derive(Clone, Default)]
pub struct Capabilities {
    pub(crate) tools: Option<Arc<dyn ToolInvoker>>,
    pub(crate) secrets: Option<Arc<dyn SecretStore>>,
    pub(crate) http: Option<Arc<dyn HttpClient>>,
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capabilities")
            .field("tools", &self.tools.is_some())
            .field("secrets", &self.secrets.is_some())
            .field("http", &self.http.is_some())
            .finish()
    }
}

impl Capabilities {
    /// Nothing lent: every capability a body asks for is refused.
    pub fn new() -> Self {
        Capabilities::default()
    }

    /// Other tools, for `requires.tools` (another registry, in an `Arc`, is a
    /// [`ToolInvoker`]).
    pub fn with_tools(mut self, tools: Arc<dyn ToolInvoker>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Secrets, for `requires.secrets`.
    pub fn with_secrets(mut self, secrets: Arc<dyn SecretStore>) -> Self {
        self.secrets = Some(secrets);
        self
    }

    /// An HTTP client, for `requires.network`.
    pub fn with_http(mut self, http: Arc<dyn HttpClient>) -> Self {
        self.http = Some(http);
        self
    }
}

/// One call's grant: the contract's `requires`, what the host lends, and the refusals so far.
pub(crate) struct Grant {
    pub(crate) tool_id: Arc<str>,
    pub(crate) requires: Arc<Requires>,
    pub(crate) lent: Capabilities,
    pub(crate) refusals: Mutex<Vec<String>>,
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("requires", &self.requires)
            .finish_non_exhaustive()
    }
}

impl Grant {
    fn refuse(&self, what: String) -> ToolError {
        let mut shown = what;
        agentio_core::limits::clip(&mut shown, 256);
        let message = format!("`{}` may not {shown}", self.tool_id);
        if let Ok(mut refusals) = self.refusals.lock()
            && refusals.len() < 64
        {
            refusals.push(shown);
        }
        AgentError::new(ErrorCode::Unauthorised, message)
    }

    fn missing(&self, what: &str) -> ToolError {
        AgentError::internal(format!(
            "the host lends no {what} to this registry (ToolRegistry::with_capabilities)"
        ))
    }

    pub(crate) async fn call_tool(
        &self,
        run_id: &str,
        tool_id: &str,
        input: Value,
    ) -> Result<Value, ToolError> {
        let bare = tool_id.split('@').next().unwrap_or(tool_id);
        let declared = self
            .requires
            .tools
            .iter()
            .any(|entry| entry == tool_id || entry == bare);
        if !declared {
            return Err(self.refuse(format!(
                "call the tool `{}`: it is not in requires.tools",
                agentio_core::limits::bounded_display(&tool_id.escape_debug(), 128)
            )));
        }
        let Some(tools) = &self.lent.tools else {
            return Err(self.missing("tools"));
        };
        tools
            .invoke(ToolCall {
                run_id: run_id.to_owned(),
                tool_id: tool_id.to_owned(),
                input,
            })
            .await
    }

    pub(crate) fn secret(&self, slug: &str) -> Result<String, ToolError> {
        if !self.requires.secrets.iter().any(|entry| entry == slug) {
            return Err(self.refuse(format!(
                "read the secret `{}`: it is not in requires.secrets",
                agentio_core::limits::bounded_display(&slug.escape_debug(), 128)
            )));
        }
        let Some(secrets) = &self.lent.secrets else {
            return Err(self.missing("secret store"));
        };
        secrets.secret(slug).ok_or_else(|| {
            AgentError::new(
                ErrorCode::NotFound,
                format!("the host has no secret `{slug}`"),
            )
        })
    }

    pub(crate) async fn http(&self, request: HttpRequest) -> Result<HttpResponse, ToolError> {
        if !self
            .requires
            .network
            .iter()
            .any(|entry| host_allowed(entry, &request.host, request.port))
        {
            return Err(self.refuse(format!(
                "reach `{}:{}`: it is not in requires.network",
                request.host, request.port
            )));
        }
        let Some(http) = &self.lent.http else {
            return Err(self.missing("HTTP client"));
        };
        http.send(request).await
    }
}

/// Whether a `requires.network` entry allows `host:port`: `api.example.com` (any port),
/// `api.example.com:443` (that port), `*.example.com` (its subdomains, not itself), compared
/// without case and a trailing dot.
pub(crate) fn host_allowed(entry: &str, host: &str, port: u16) -> bool {
    let entry = entry.trim().to_ascii_lowercase();
    // `name[:port]`, or `[v6][:port]`.
    let split_at = if entry.starts_with('[') {
        entry.find(']').map(|end| end + 1)
    } else {
        entry.rfind(':')
    };
    let (pattern, wanted_port) = match split_at.map(|at| entry.split_at(at)) {
        Some((name, "")) => (name, None),
        Some((name, rest)) => match rest.strip_prefix(':').map(str::parse::<u16>) {
            Some(Ok(p)) => (name, Some(p)),
            // A malformed port allows nothing.
            _ => return false,
        },
        None => (entry.as_str(), None),
    };
    if wanted_port.is_some_and(|p| p != port) {
        return false;
    }
    let pattern = pattern.trim_end_matches('.');
    match pattern.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => pattern == host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every call with the id it was called by.
    struct Named;

    impl ToolInvoker for Named {
        fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
            Box::pin(async move { Ok(Value::String(call.tool_id)) })
        }
        fn tool_ids(&self) -> Vec<String> {
            Vec::new()
        }
    }

    fn grant(tools: &[&str]) -> Grant {
        Grant {
            tool_id: Arc::from("t.caller"),
            requires: Arc::new(Requires {
                tools: tools.iter().map(|t| (*t).to_owned()).collect(),
                ..Requires::default()
            }),
            lent: Capabilities::new().with_tools(Arc::new(Named)),
            refusals: Mutex::new(Vec::new()),
        }
    }

    fn call(grant: &Grant, id: &str) -> Result<Value, ToolError> {
        pollster::block_on(grant.call_tool("r1", id, Value::Null))
    }

    #[test]
    fn a_tool_is_declared_by_its_id_or_its_exact_identity() {
        // A bare entry allows any major of the tool; an `id@major` entry that major only.
        let bare = grant(&["kb.search"]);
        assert_eq!(call(&bare, "kb.search").unwrap(), "kb.search");
        assert_eq!(call(&bare, "kb.search@2").unwrap(), "kb.search@2");
        let exact = grant(&["kb.search@1"]);
        assert_eq!(call(&exact, "kb.search@1").unwrap(), "kb.search@1");
        assert!(call(&exact, "kb.search@2").is_err());
        assert!(call(&exact, "kb.search").is_err());
        assert!(call(&bare, "kb.searchx").is_err());
    }

    #[test]
    fn refusals_are_kept_up_to_64_and_shown_without_the_lent_capabilities() {
        let grant = grant(&[]);
        for i in 0..70 {
            assert!(call(&grant, &format!("t{i}")).is_err());
        }
        assert_eq!(grant.refusals.lock().unwrap().len(), 64);
        let shown = format!("{grant:?}");
        assert!(shown.starts_with("Grant { requires: Requires {"), "{shown}");
        assert!(shown.ends_with(".. }"), "{shown}");
        let lent = format!("{:?}", Capabilities::new().with_tools(Arc::new(Named)));
        assert_eq!(
            lent,
            "Capabilities { tools: true, secrets: false, http: false }"
        );
    }

    #[test]
    fn network_entries_match_host_port_and_subdomains_exactly() {
        assert!(host_allowed("api.example.com", "api.example.com", 443));
        assert!(host_allowed("API.example.com.", "api.example.com", 80));
        assert!(host_allowed("api.example.com:443", "api.example.com", 443));
        assert!(!host_allowed("api.example.com:443", "api.example.com", 80));
        assert!(!host_allowed(
            "api.example.com",
            "api.example.com.evil",
            443
        ));
        assert!(!host_allowed("api.example.com", "evilapi.example.com", 443));
        assert!(host_allowed("*.example.com", "a.example.com", 443));
        assert!(host_allowed("*.example.com", "a.b.example.com", 443));
        assert!(!host_allowed("*.example.com", "example.com", 443));
        assert!(!host_allowed("*.example.com", "evilexample.com", 443));
        // A bare leading dot is no subdomain.
        assert!(!host_allowed("*.example.com", ".example.com", 443));
        assert!(host_allowed("[::1]:8080", "[::1]", 8080));
        assert!(!host_allowed("[::1]:8080", "[::1]", 8081));
    }

    #[test]
    fn urls_parse_strictly_into_the_parts_a_client_connects_to() {
        let plain = HttpRequest::new("GET", "http://example.com").unwrap();
        assert_eq!((plain.port, plain.path_and_query.as_str()), (80, "/"));
        let query = HttpRequest::new("GET", "https://example.com?x=1").unwrap();
        assert_eq!(query.path_and_query, "/?x=1");
        let v6 = HttpRequest::new("GET", "http://[::1]:8080/a").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 8080));
        for bad in [
            "example.com/a",
            "http://",
            "http://:80/",
            "http://a.com:/",
            "http://a.com:99999/",
            "http://a.com:8o/",
            "http://[::1/",
            "http://[zz]/",
            "http://a_b.com/",
            "http://a.com\t/",
            "http://user:pw@a.com/",
        ] {
            assert!(HttpRequest::new("GET", bad).is_err(), "{bad}");
        }
    }
}
