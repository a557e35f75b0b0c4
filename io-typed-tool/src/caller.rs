//! [`Caller`]: who makes a call, as the host authenticated them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who makes a call, as the host authenticated them (an MCP server over authenticated HTTP
/// sets it from the bearer token; a host can set it with [`CallOptions::with_caller`]). A
/// body reads it from [`ToolContext::caller`]. `None` there means the host knows no caller
/// (stdio, an unauthenticated endpoint, a direct call).
///
/// [`CallOptions::with_caller`]: crate::CallOptions::with_caller
/// [`ToolContext::caller`]: crate::ToolContext::caller
///
/// ```
/// use agentio_tools::Caller;
/// let caller = Caller::new("user-42").with_scopes(["notes:read", "notes:write"]);
/// assert!(caller.has_scope("notes:write"));
/// assert!(!caller.has_scope("notes:delete"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Caller {
    /// The authenticated subject (a JWT's `sub`).
    pub subject: String,
    /// The scopes granted to this caller (a JWT's `scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// Every claim of the token, for what the host needs beyond subject and scopes.
    pub claims: Value,
}

impl Caller {
    /// A caller with `subject`, no scopes and no other claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Caller {
            subject: subject.into(),
            scopes: Vec::new(),
            claims: Value::Null,
        }
    }

    /// Sets the granted scopes.
    #[must_use]
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_holds_exactly_its_scopes() {
        let caller = Caller::new("u").with_scopes(["a", "b"]);
        assert_eq!((caller.subject.as_str(), caller.scopes.len()), ("u", 2));
        assert!(caller.has_scope("a") && caller.has_scope("b"));
        assert!(!caller.has_scope("c") && !caller.has_scope(""));
        assert!(!Caller::new("u").has_scope("a"));
        assert_eq!(Caller::new("u").claims, Value::Null);
    }
}
