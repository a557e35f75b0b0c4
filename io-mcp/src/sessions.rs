//! The sessions of a streamable HTTP server (MCP revisions before 2026-07-28): rmcp's
//! in-memory [`LocalSessionManager`], with three things a server behind a load balancer needs.
//!
//! - **The instance in the id.** With [`McpServer::with_instance`](crate::McpServer::with_instance),
//!   every session id this server mints starts with the instance's name and a dot (`a.` then
//!   rmcp's random id), so a balancer routes a session's requests back to the instance that
//!   holds it from the `Mcp-Session-Id` header alone (nginx: a `map` on the header's prefix,
//!   as the README shows). An id without this instance's prefix is a session this instance
//!   does not have: `404`, which tells the client to start a new session.
//! - **An idle timeout** ([`DEFAULT_SESSION_IDLE`], five minutes, rmcp's default;
//!   [`McpServer::with_session_idle`](crate::McpServer::with_session_idle)): a session no
//!   request has touched for that long is closed and its memory freed.
//! - **A bound on open sessions** ([`DEFAULT_MAX_SESSIONS`];
//!   [`McpServer::with_max_sessions`](crate::McpServer::with_max_sessions)): past it, an
//!   `initialize` is refused with the reason instead of growing without limit: `503 Service
//!   Unavailable` from [`McpServer::serve_http`](crate::McpServer::serve_http), as the Python
//!   SDK's server refuses one past its own bound (rmcp's service says `500`, its answer when a
//!   session cannot be created). Requests of open sessions and stateless (2026-07-28) requests
//!   are not affected.
//!
//! And one thing its clients expect: **a session's end** (`DELETE` with the session's id) is
//! answered as the official Python and TypeScript SDKs' servers answer it, `200 OK` for a
//! session this server closed and `404 Not Found` for one it does not hold (closed before,
//! expired, another instance's or made up). rmcp answers both `202 Accepted`, at which the
//! Python SDK's client logs a warning at the end of every session. The spec names no success
//! status; `404` is its answer to any request naming a session that has ended. This is
//! [`McpServer::serve_http`](crate::McpServer::serve_http)'s; a server mounting
//! [`McpServer::http_service`](crate::McpServer::http_service) in a router of its own gets
//! rmcp's answers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// How long a session may sit idle before it is closed: five minutes (rmcp's default).
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);

/// How many sessions one server holds open at most: 10,000, the Python SDK's default too. An
/// idle session costs about 54 KiB (rmcp's session worker and its channels; the README's load
/// bench measures it), so the bound holds idle sessions to about 530 MiB.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// What the sessions refuse.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// The server holds its maximum of open sessions.
    Full {
        /// The bound.
        max: usize,
    },
    /// The id is not one this instance minted (another instance's, or made up).
    Unknown {
        /// The id, clipped.
        id: String,
    },
    /// rmcp's session manager failed.
    Session(<LocalSessionManager as SessionManager>::Error),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Full { max } => write!(
                f,
                "this server holds its maximum of {max} open sessions; close one (HTTP DELETE) or wait for idle ones to expire"
            ),
            SessionError::Unknown { id } => {
                write!(f, "there is no session `{id}` on this instance")
            }
            SessionError::Session(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Session(e) => Some(e),
            _ => None,
        }
    }
}

/// rmcp's [`LocalSessionManager`] with this instance's prefix on every id, an idle timeout and
/// a bound (see the module's documentation).
#[derive(Debug)]
pub struct Sessions {
    /// `name.`, or empty.
    prefix: Arc<str>,
    /// How many sessions may be open at once.
    pub(crate) max: usize,
    inner: LocalSessionManager,
}

impl Sessions {
    /// Sessions whose ids start with `instance` and a dot (none when `instance` is empty),
    /// closed after `idle` without a request, at most `max` open.
    pub fn new(instance: &str, idle: Duration, max: usize) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Sessions {
            prefix: id_prefix(instance).into(),
            max,
            inner,
        }
    }

    /// How many sessions are open.
    pub async fn open(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// The id rmcp's manager knows `id` by: `id` without this instance's prefix.
    fn inner_id(&self, id: &SessionId) -> Result<SessionId, SessionError> {
        match strip_id_prefix(&self.prefix, id) {
            // Without a prefix, the id itself (shared, not copied: this runs every request).
            Some(_) if self.prefix.is_empty() => Ok(id.clone()),
            Some(rest) => Ok(rest.into()),
            None => Err(SessionError::Unknown {
                id: id.chars().take(80).collect(),
            }),
        }
    }
}

/// The start of every id an instance gives out, its session ids and its task ids
/// ([`crate::tasks`]): its name and a dot; nothing for a server without a name.
pub(crate) fn id_prefix(instance: &str) -> String {
    if instance.is_empty() {
        String::new()
    } else {
        format!("{instance}.")
    }
}

/// `id` without `prefix`; `None` for an id that does not start with it, or is nothing more.
pub(crate) fn strip_id_prefix<'a>(prefix: &str, id: &'a str) -> Option<&'a str> {
    id.strip_prefix(prefix).filter(|rest| !rest.is_empty())
}

impl SessionManager for Sessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if self.open().await >= self.max {
            return Err(SessionError::Full { max: self.max });
        }
        let (id, transport) = self
            .inner
            .create_session()
            .await
            .map_err(SessionError::Session)?;
        let id: SessionId = if self.prefix.is_empty() {
            id
        } else {
            format!("{}{id}", self.prefix).into()
        };
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let id = self.inner_id(id)?;
        self.inner
            .initialize_session(&id, message)
            .await
            .map_err(SessionError::Session)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        match self.inner_id(id) {
            Ok(id) => self
                .inner
                .has_session(&id)
                .await
                .map_err(SessionError::Session),
            Err(_) => Ok(false),
        }
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // An id this instance did not mint names no session here: nothing to close, as rmcp's
        // manager says of an id it does not hold (not an error, which rmcp answers `500`).
        let Ok(id) = self.inner_id(id) else {
            return Ok(());
        };
        self.inner
            .close_session(&id)
            .await
            .map_err(SessionError::Session)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let id = self.inner_id(id)?;
        self.inner
            .create_stream(&id, message)
            .await
            .map(boxed)
            .map_err(SessionError::Session)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let id = self.inner_id(id)?;
        self.inner
            .accept_message(&id, message)
            .await
            .map_err(SessionError::Session)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let id = self.inner_id(id)?;
        self.inner
            .create_standalone_stream(&id)
            .await
            .map(boxed)
            .map_err(SessionError::Session)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let id = self.inner_id(id)?;
        self.inner
            .resume(&id, last_event_id)
            .await
            .map(boxed)
            .map_err(SessionError::Session)
    }
}

/// A session's SSE stream, boxed: rmcp's stream type names the borrowed id it was made
/// with, and the id passed in is the prefixed one, not rmcp's.
type SseStream = std::pin::Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

fn boxed(stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static) -> SseStream {
    Box::pin(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_the_instance_and_others_are_unknown() {
        let sessions = Sessions::new("a", DEFAULT_SESSION_IDLE, 2);
        assert_eq!(sessions.inner_id(&"a.xyz".into()).unwrap(), "xyz".into());
        for foreign in ["b.xyz", "xyz", "a.", "", "ab.xyz"] {
            assert!(
                matches!(
                    sessions.inner_id(&foreign.into()),
                    Err(SessionError::Unknown { .. })
                ),
                "{foreign}"
            );
        }
        let bare = Sessions::new("", DEFAULT_SESSION_IDLE, 2);
        let id: SessionId = "xyz".into();
        let inner = bare.inner_id(&id).unwrap();
        assert_eq!(inner, id);
        // Without a prefix the id is shared, not copied (this runs on every request).
        assert!(Arc::ptr_eq(&inner, &id));
        assert!(matches!(
            bare.inner_id(&"".into()),
            Err(SessionError::Unknown { .. })
        ));
        assert_eq!(
            sessions.inner.session_config.keep_alive,
            Some(DEFAULT_SESSION_IDLE)
        );
    }

    #[test]
    fn the_errors_say_what_and_how_to_recover() {
        let full = SessionError::Full { max: 3 }.to_string();
        assert!(
            full.contains("maximum of 3") && full.contains("DELETE"),
            "{full}"
        );
        let unknown = SessionError::Unknown { id: "b.1".into() }.to_string();
        assert!(unknown.contains("`b.1`"), "{unknown}");
        // rmcp's own error is the cause, and says itself.
        use std::error::Error as _;
        let inner = SessionError::Session(
            rmcp::transport::streamable_http_server::session::local::LocalSessionManagerError::SessionNotFound("x".into()),
        );
        assert_eq!(inner.to_string(), "Session not found: x");
        assert_eq!(
            inner.source().map(ToString::to_string).as_deref(),
            Some("Session not found: x")
        );
        assert!(SessionError::Full { max: 1 }.source().is_none());
    }
}
