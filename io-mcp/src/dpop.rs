//! DPoP (RFC 9449; MCP's authorization extension SEP-1932): access tokens bound to a key the
//! client holds, so a token that leaks is of no use without the key (feature `dpop`).
//!
//! A [`Dpop`] is one key pair (ES256 on P-256, generated in memory for this client, never
//! written anywhere) and what the client learned while using it. It works on both halves of an
//! OAuth-protected connection:
//!
//! - **The token requests.** [`Dpop::oauth_http_client`] is the [`OAuthHttpClient`] to build
//!   rmcp's OAuth client with ([`OAuthState::new_with_oauth_http_client`],
//!   [`AuthorizationManager::new_with_oauth_http_client`]): every token request (a form `POST`
//!   with a `grant_type`: the code exchange, a refresh, client credentials) carries a fresh
//!   proof (RFC 9449 §4.2: `typ` `dpop+jwt`, the public key as `jwk`; `jti`, `htm` `POST`,
//!   `htu` the token endpoint, `iat`); an authorization server that answers `400`
//!   `use_dpop_nonce` with a `DPoP-Nonce` gets the request once more with its nonce (§8), and
//!   its later nonces are kept for the next request. A machine grant
//!   ([`MachineGrant::with_dpop`]) proves its token request the same way. An access token
//!   answered with `token_type` `DPoP` (§5) is bound; any other stays a bearer token. Every
//!   other request (metadata, registration) goes to the client passed in, untouched.
//! - **The MCP requests.** [`Connect::http_authorized_dpop`] sends a bound token as
//!   `Authorization: DPoP <token>` with a fresh proof on each request (§7.1: `htm` the request's
//!   method, `htu` the endpoint without query or fragment, `ath` the token's SHA-256); a bearer
//!   token (an authorization server that does not do DPoP) as `Bearer`, as
//!   [`Connect::http_authorized`] does.
//!
//! The server's half, checking the proofs of such a client, is
//! [`HttpAuth::with_dpop`](crate::auth::HttpAuth::with_dpop) ([`crate::proofs`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use agentio_mcp::McpClient;
//! use agentio_mcp::dpop::Dpop;
//! use agentio_mcp::rmcp::transport::auth::{OAuthState, default_oauth_http_client};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let url = "https://mcp.example.com/mcp";
//! let dpop = Dpop::generate()?;
//! let http = dpop.oauth_http_client(Arc::new(default_oauth_http_client()?));
//! let mut oauth = OAuthState::new_with_oauth_http_client(url, http).await?;
//! // ... start_authorization, the user signs in, handle_callback, as without DPoP ...
//! let manager = oauth.into_authorization_manager().ok_or("not authorized")?;
//! let client = McpClient::builder().http_authorized_dpop(url, manager, &dpop).await?;
//! # Ok(()) }
//! ```
//!
//! Decisions, where the specifications leave a choice or rmcp leaves no door:
//! - **The token requests are sent here.** rmcp hands its HTTP client each request once, as a
//!   value that cannot be copied or made again, and a nonce challenge needs the request a
//!   second time; so a token request is sent by this module's own reqwest client (no
//!   redirects: OAuth 2.1 token endpoints do not redirect; the timeout rmcp asked for, or
//!   [`TOKEN_TIMEOUT`]; the answer at most [`MAX_TOKEN_RESPONSE`] bytes). Like rmcp's
//!   `default_oauth_http_client`, it connects to whatever address the token endpoint's host
//!   resolves to; rmcp checks the endpoint's host name before any request is made.
//! - **One nonce retry.** A second `use_dpop_nonce` (or one without a new nonce) is answered to
//!   rmcp as the server sent it: rmcp reports the refusal.
//! - **A resource server's nonce is learned by asking once more** (§9). A request with a bound
//!   token refused with `401` and a `DPoP` challenge saying `error="use_dpop_nonce"` is sent
//!   again with the server's nonce in its proof, once; the nonce is kept (by the server's
//!   origin) for the requests after it. rmcp's HTTP client reports a `401`'s
//!   `WWW-Authenticate` challenge but not the `DPoP-Nonce` header beside it, so the nonce is
//!   read from the answer to a probe of this module's own: a `POST` of a JSON-RPC `ping` (the
//!   one request every MCP server answers without acting on anything) to the same endpoint
//!   with the same token and a fresh proof, its answer read for its header and not further. A
//!   challenge without a nonce, or a second one, reaches the caller as the server sent it
//!   ([`ClientError::Unauthorized`], naming the challenge). A nonce over [`MAX_NONCE`] bytes
//!   is not kept, from either server.
//! - **Which tokens are bound** is what the authorization server said when it issued them: the
//!   last [`BOUND_TOKENS`] access tokens issued as `DPoP` through this [`Dpop`] are remembered
//!   (a refresh issues a new one; older ones are not sent again).
//!
//! [`OAuthHttpClient`]: rmcp::transport::auth::OAuthHttpClient
//! [`OAuthState::new_with_oauth_http_client`]: rmcp::transport::auth::OAuthState::new_with_oauth_http_client
//! [`AuthorizationManager::new_with_oauth_http_client`]: rmcp::transport::AuthorizationManager::new_with_oauth_http_client
//! [`Connect::http_authorized_dpop`]: crate::Connect::http_authorized_dpop
//! [`Connect::http_authorized`]: crate::Connect::http_authorized
//! [`ClientError::Unauthorized`]: crate::ClientError::Unauthorized
//! [`TOKEN_TIMEOUT`]: crate::machine::TOKEN_TIMEOUT
//! [`MAX_NONCE`]: crate::dpop::MAX_NONCE
//! [`MachineGrant::with_dpop`]: crate::machine::MachineGrant::with_dpop
//! [`MAX_TOKEN_RESPONSE`]: crate::machine::MAX_TOKEN_RESPONSE

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderName, HeaderValue, Method};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::token::{MAX_TOKEN_RESPONSE, TOKEN_TIMEOUT, Unanswered, now_secs};

/// The extra headers rmcp's HTTP client sends with a request.
type Headers = HashMap<HeaderName, HeaderValue>;

/// How many access tokens issued as `DPoP` a [`Dpop`] remembers as bound.
pub const BOUND_TOKENS: usize = 8;

/// The longest server nonce (`DPoP-Nonce`) a [`Dpop`] keeps and puts in its proofs: 1 KiB.
/// Nonces are a few dozen bytes; a server sending a longer one is not taken up on it (every
/// proof after would carry it).
pub const MAX_NONCE: usize = 1024;

/// The probe that learns a resource server's nonce (see the [module](self)): a `ping`.
const NONCE_PROBE: &str = r#"{"jsonrpc":"2.0","id":"agentio-dpop-nonce","method":"ping"}"#;

/// The `DPoP` header: a request's proof, and an authorization server's nonce challenge names it
/// too (`DPoP-Nonce`).
const DPOP: HeaderName = HeaderName::from_static("dpop");
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The protocol revision a request names, which the nonce probe names too.
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// One DPoP key pair and what the client learned using it (see the [module](self)). Cheap to
/// clone: clones share the key, the nonces and the bound tokens.
#[derive(Clone)]
pub struct Dpop {
    state: Arc<State>,
}

struct State {
    key: EncodingKey,
    jwk: Jwk,
    thumbprint: String,
    /// The latest nonce each authorization server gave, by its origin.
    nonces: Mutex<HashMap<String, String>>,
    /// The access tokens last issued as `DPoP`, newest last.
    bound: Mutex<VecDeque<String>>,
}

/// Why a DPoP key or proof could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum DpopError {
    /// The key pair could not be made or read (the operating system's random number generator,
    /// or the signing library, failed).
    Key(String),
    /// A proof could not be made for this URL: it is not an absolute URL.
    Url {
        /// The URL, bounded.
        url: String,
    },
    /// The proof could not be signed.
    Sign(String),
}

impl fmt::Display for DpopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DpopError::Key(reason) => write!(f, "no DPoP key: {reason}"),
            DpopError::Url { url } => {
                write!(f, "no DPoP proof for `{url}`: not an absolute URL")
            }
            DpopError::Sign(reason) => write!(f, "the DPoP proof could not be signed: {reason}"),
        }
    }
}

impl std::error::Error for DpopError {}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The private key is never shown; the thumbprint names the key.
        f.debug_struct("Dpop")
            .field("thumbprint", &self.state.thumbprint)
            .finish_non_exhaustive()
    }
}

/// A proof's claims (RFC 9449 §4.2).
#[derive(Serialize)]
struct Claims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

impl Dpop {
    /// A new key pair (ES256, P-256) from the operating system's random number generator.
    pub fn generate() -> Result<Self, DpopError> {
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|error| DpopError::Key(error.to_string()))?;
            // A scalar of zero or past the curve's order is refused; the next draw is not
            // (the chance of one is about 2^-32).
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let der = secret
            .to_pkcs8_der()
            .map_err(|error| DpopError::Key(error.to_string()))?;
        let key = EncodingKey::from_ec_der(der.as_bytes());
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|error| DpopError::Key(error.to_string()))?;
        let thumbprint = jwk
            .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .map_err(|error| DpopError::Key(error.to_string()))?;
        Ok(Dpop {
            state: Arc::new(State {
                key,
                jwk,
                thumbprint,
                nonces: Mutex::default(),
                bound: Mutex::default(),
            }),
        })
    }

    /// The public key's JWK SHA-256 thumbprint (RFC 7638), base64url: the `jkt` an
    /// authorization server binds tokens to (`cnf.jkt`).
    pub fn thumbprint(&self) -> &str {
        &self.state.thumbprint
    }

    /// The public key, as each proof carries it.
    pub fn public_jwk(&self) -> &Jwk {
        &self.state.jwk
    }

    /// A fresh proof for a request: `method` to `url` (its query and fragment left out of
    /// `htu`), with `ath` for `access_token` and the server's `nonce` where given.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, DpopError> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.state.jwk.clone());
        let claims = Claims {
            jti: random_id(),
            htm: method,
            htu: htu(url)?,
            iat: now_secs(),
            ath: access_token.map(|token| URL_SAFE_NO_PAD.encode(Sha256::digest(token))),
            nonce,
        };
        jsonwebtoken::encode(&header, &claims, &self.state.key)
            .map_err(|error| DpopError::Sign(error.to_string()))
    }

    /// Whether `access_token` was issued bound to this key (`token_type` `DPoP`).
    pub fn is_bound(&self, access_token: &str) -> bool {
        lock(&self.state.bound)
            .iter()
            .any(|bound| bound == access_token)
    }

    /// The HTTP client for rmcp's OAuth client: token requests with proofs (sent by this
    /// module, see the [module](self)), everything else through `inner`.
    pub fn oauth_http_client(&self, inner: Arc<dyn OAuthHttpClient>) -> Arc<dyn OAuthHttpClient> {
        Arc::new(TokenRequests {
            dpop: self.clone(),
            inner,
        })
    }

    /// Records `access_token` as bound to this key: a token this client obtained some other way
    /// than through [`Self::oauth_http_client`] or a machine grant, issued as `DPoP` for this
    /// key ([`Self::thumbprint`]). Only the last [`BOUND_TOKENS`] are kept.
    pub fn bind(&self, access_token: impl Into<String>) {
        let access_token = access_token.into();
        let mut bound = lock(&self.state.bound);
        if bound.len() == BOUND_TOKENS {
            bound.pop_front();
        }
        bound.push_back(access_token);
    }

    fn nonce(&self, origin: &str) -> Option<String> {
        lock(&self.state.nonces).get(origin).cloned()
    }

    fn remember_nonce(&self, origin: &str, response: &http::HeaderMap) {
        if let Some(nonce) = response
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .filter(|nonce| nonce.len() <= MAX_NONCE)
        {
            lock(&self.state.nonces).insert(origin.to_owned(), nonce.to_owned());
        }
    }

    /// The headers a request with the bound `token` carries: the token as `DPoP` with a proof
    /// (with the server's `nonce`, once it gave one). rmcp's client is then given no bearer
    /// token to send.
    fn present<E: std::error::Error + Send + Sync + 'static>(
        &self,
        method: &str,
        uri: &str,
        token: &str,
        nonce: Option<&str>,
        mut headers: Headers,
    ) -> Result<Headers, StreamableHttpError<E>> {
        let failed = |reason: String| StreamableHttpError::Auth(AuthError::InternalError(reason));
        let proof = self
            .proof(method, uri, Some(token), nonce)
            .map_err(|error| failed(error.to_string()))?;
        let header = |text: String| {
            HeaderValue::try_from(text)
                .map_err(|_| failed("a token that is not a header value".into()))
        };
        headers.insert(
            http::header::AUTHORIZATION,
            header(format!("DPoP {token}"))?,
        );
        headers.insert(DPOP, header(proof)?);
        Ok(headers)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The guarded maps are whole after any panic (each change is one call).
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `url` as a proof's `htu`: absolute, without query or fragment (RFC 9449 §4.2). The server
/// compares `htu`s this way too ([`crate::proofs`]).
pub(crate) fn htu(url: &str) -> Result<String, DpopError> {
    let mut parsed = reqwest::Url::parse(url).map_err(|_| DpopError::Url {
        url: agentio_core::limits::bounded_display(&url.escape_debug(), 256),
    })?;
    parsed.set_query(None);
    parsed.set_fragment(None);
    Ok(parsed.into())
}

/// 128 random bits, base64url: a proof's `jti`.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // An all-zero `jti` would repeat: fail loudly rather than sign one.
    getrandom::fill(&mut bytes).expect("the operating system's random number generator");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// rmcp's OAuth HTTP client with token requests proven (see [`Dpop::oauth_http_client`]).
struct TokenRequests {
    dpop: Dpop,
    inner: Arc<dyn OAuthHttpClient>,
}

impl OAuthHttpClient for TokenRequests {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        if !is_token_request(&request.request) {
            return self.inner.execute(request);
        }
        let timeout = request.timeout.unwrap_or(TOKEN_TIMEOUT);
        let request = request.request;
        Box::pin(async move { self.token_request(request, timeout).await })
    }
}

/// A token request: a form `POST` with a `grant_type` (RFC 6749 §4, §6).
fn is_token_request(request: &http::Request<Vec<u8>>) -> bool {
    request.method() == Method::POST
        && form_urlencoded::parse(request.body()).any(|(name, _)| name == "grant_type")
}

impl TokenRequests {
    async fn token_request(
        &self,
        request: http::Request<Vec<u8>>,
        timeout: Duration,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let client = crate::token::client(timeout)?;
        let url = request.uri().to_string();
        self.dpop
            .token_exchange(&url, |proof| send(&client, &request, proof))
            .await
    }
}

impl Dpop {
    /// A token request to `url`, sent by `send` with each proof it is given: once, and once
    /// more with the authorization server's nonce when it asks for one (RFC 9449 §8); the
    /// access token of a successful answer issued as `DPoP` is bound.
    pub(crate) async fn token_exchange<E, F, Fut>(
        &self,
        url: &str,
        send: F,
    ) -> Result<http::Response<Vec<u8>>, E>
    where
        E: From<DpopError>,
        F: Fn(String) -> Fut,
        Fut: Future<Output = Result<http::Response<Vec<u8>>, E>>,
    {
        let origin = origin(url);
        let mut sent_nonce = self.nonce(&origin);
        let mut retried = false;
        loop {
            let proof = self.proof("POST", url, None, sent_nonce.as_deref())?;
            let response = send(proof).await?;
            self.remember_nonce(&origin, response.headers());
            let fresh = self.nonce(&origin);
            if !retried && fresh != sent_nonce && is_nonce_challenge(&response) {
                retried = true;
                sent_nonce = fresh;
                continue;
            }
            if response.status().is_success()
                && let Some(token) = bound_token(response.body())
            {
                self.bind(token);
            }
            return Ok(response);
        }
    }
}

/// `scheme://host:port` of `url`, the key an authorization server's nonce is kept under.
fn origin(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |parsed| parsed.origin().ascii_serialization(),
    )
}

/// Whether an authorization server asked for a nonce (RFC 9449 §8: `400`, `use_dpop_nonce`).
fn is_nonce_challenge(response: &http::Response<Vec<u8>>) -> bool {
    response.status() == http::StatusCode::BAD_REQUEST
        && serde_json::from_slice::<Value>(response.body()).is_ok_and(|answer| {
            answer.get("error").and_then(Value::as_str) == Some("use_dpop_nonce")
        })
}

/// The access token of a token response issued as `DPoP` (RFC 9449 §5; the type compared
/// without case, as RFC 6749 §5.1 has it).
fn bound_token(body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let kind = answer.get("token_type")?.as_str()?;
    if !kind.eq_ignore_ascii_case("dpop") {
        return None;
    }
    answer.get("access_token")?.as_str().map(str::to_owned)
}

/// Sends `request` with `proof`, and reads the answer (at most [`MAX_TOKEN_RESPONSE`] bytes).
async fn send(
    client: &reqwest::Client,
    request: &http::Request<Vec<u8>>,
    proof: String,
) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
    let outgoing = client
        .request(request.method().clone(), request.uri().to_string())
        .headers(request.headers().clone())
        .header(DPOP, proof)
        .body(request.body().clone());
    crate::token::exchange(outgoing)
        .await
        .map_err(|unanswered| match unanswered {
            Unanswered::Failed(reason) => reason.into(),
            Unanswered::TooLarge { .. } => {
                format!("the token endpoint's answer is over {MAX_TOKEN_RESPONSE} bytes").into()
            }
        })
}

/// rmcp's streamable HTTP client with bound tokens presented as `DPoP` (see
/// [`Connect::http_authorized_dpop`](crate::Connect::http_authorized_dpop)), a resource
/// server's nonce learned when it asks for one.
#[derive(Clone)]
pub(crate) struct DpopHttp<C> {
    http: C,
    dpop: Dpop,
}

/// Where one of rmcp's requests goes: its method, its URL, its session.
struct Target<'a> {
    method: &'static str,
    uri: &'a str,
    session: Option<&'a str>,
}

impl<'a> Target<'a> {
    fn new(method: &'static str, uri: &'a str, session: Option<&'a str>) -> Self {
        Target {
            method,
            uri,
            session,
        }
    }
}

impl<C> DpopHttp<C> {
    pub(crate) fn new(http: C, dpop: Dpop) -> Self {
        DpopHttp { http, dpop }
    }

    /// One request of rmcp's (its method to its URL), sent by `send` with what it carries
    /// (`payload`, copied only for a request that may be sent twice) and the token and headers
    /// to send it with: a bound token presented as `DPoP`, and when the server refuses it for
    /// want of a nonce, its nonce learned ([`Self::learn_nonce`]) and the request sent once
    /// more (see the [module](self)).
    async fn request<P, T, E, F, Fut>(
        &self,
        Target {
            method,
            uri,
            session,
        }: Target<'_>,
        token: Option<String>,
        headers: Headers,
        payload: P,
        send: F,
    ) -> Result<T, StreamableHttpError<E>>
    where
        P: Clone,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(P, Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<E>>>,
    {
        let bound = match token {
            Some(token) if self.dpop.is_bound(&token) => token,
            // A bearer token, or none: rmcp's client sends it as it is.
            other => return send(payload, other, headers).await,
        };
        let origin = origin(uri);
        let sent_nonce = self.dpop.nonce(&origin);
        let presented =
            self.dpop
                .present(method, uri, &bound, sent_nonce.as_deref(), headers.clone())?;
        let refused = match send(payload.clone(), None, presented).await {
            Err(StreamableHttpError::AuthRequired(refused))
                if asks_for_nonce(&refused.www_authenticate_header) =>
            {
                refused
            }
            answered => return answered,
        };
        self.learn_nonce(uri, &origin, session, &bound, &headers)
            .await;
        let nonce = self.dpop.nonce(&origin);
        if nonce == sent_nonce {
            // No new nonce to send: the refusal stands.
            return Err(StreamableHttpError::AuthRequired(refused));
        }
        let presented = self
            .dpop
            .present(method, uri, &bound, nonce.as_deref(), headers)?;
        send(payload, None, presented).await
    }

    /// Asks the resource server at `uri` for its nonce: a `ping` with `token` and a fresh
    /// proof (in `session`, at the protocol revision `headers` name), whose answer's
    /// `DPoP-Nonce` is kept under `origin`. A probe that fails leaves the nonce as it was.
    async fn learn_nonce(
        &self,
        uri: &str,
        origin: &str,
        session: Option<&str>,
        token: &str,
        headers: &Headers,
    ) {
        let Ok(proof) = self.dpop.proof("POST", uri, Some(token), None) else {
            return;
        };
        let Ok(client) = crate::token::client(TOKEN_TIMEOUT) else {
            return;
        };
        let mut probe = client
            .post(uri)
            .header(http::header::AUTHORIZATION, format!("DPoP {token}"))
            .header(DPOP, proof)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-method", "ping")
            .body(NONCE_PROBE);
        if let Some(session) = session {
            probe = probe.header("mcp-session-id", session);
        }
        if let Some(version) = headers.get(&PROTOCOL_VERSION) {
            probe = probe.header(PROTOCOL_VERSION, version);
        }
        // Only the head is read; the answer's body (a refusal, or the `ping`'s) is dropped.
        if let Ok(answer) = probe.send().await {
            self.dpop.remember_nonce(origin, answer.headers());
        }
    }
}

/// Whether a `WWW-Authenticate` value holds a `DPoP` challenge whose `error` is
/// `use_dpop_nonce` (RFC 9449 §9), among any other challenges (RFC 9110 §11.6.1: a scheme,
/// then its parameters, commas between them and inside quoted values).
fn asks_for_nonce(challenges: &str) -> bool {
    let mut in_dpop = false;
    for item in outside_quotes(challenges, ',') {
        let item = item.trim();
        let param = match item.split_once(' ') {
            // A scheme starts: a token, then a parameter (or nothing).
            Some((scheme, rest))
                if !scheme.contains('=') && !rest.trim_start().starts_with('=') =>
            {
                in_dpop = scheme.eq_ignore_ascii_case("dpop");
                rest.trim()
            }
            None if !item.contains('=') => {
                in_dpop = item.eq_ignore_ascii_case("dpop");
                continue;
            }
            _ => item,
        };
        let asks = param.split_once('=').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("error") && unquoted(value.trim()) == "use_dpop_nonce"
        });
        if in_dpop && asks {
            return true;
        }
    }
    false
}

/// `text` split at each `separator` outside a quoted string.
fn outside_quotes(text: &str, separator: char) -> Vec<&str> {
    let (mut items, mut start, mut quoted, mut escaped) = (Vec::new(), 0, false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                items.push(&text[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

/// A parameter's value without its quotes (an escaped character stands for itself).
fn unquoted(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or(c)
        } else {
            c
        });
    }
    out
}

type SseStream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for DpopHttp<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        token: Option<String>,
        headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let send = |message, token, headers| {
            let (uri, session) = (uri.clone(), session.clone());
            self.http
                .post_message(uri, message, session, token, headers)
        };
        let to = Target::new("POST", &uri, session.as_deref());
        self.request(to, token, headers, message, send).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        token: Option<String>,
        headers: Headers,
        max_event: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let send = |message, token, headers| {
            let (uri, session) = (uri.clone(), session.clone());
            self.http.post_message_with_max_sse_event_size(
                uri, message, session, token, headers, max_event,
            )
        };
        let to = Target::new("POST", &uri, session.as_deref());
        self.request(to, token, headers, message, send).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        token: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let send = |message, token, headers| {
            let (uri, session) = (uri.clone(), session.clone());
            self.http
                .post_message_with_response_limits(uri, message, session, token, headers, limits)
        };
        let to = Target::new("POST", &uri, session.as_deref());
        self.request(to, token, headers, message, send).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session: Arc<str>,
        token: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let send = |(), token, headers| {
            self.http
                .delete_session(uri.clone(), session.clone(), token, headers)
        };
        let to = Target::new("DELETE", &uri, Some(&session));
        self.request(to, token, headers, (), send).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event: Option<String>,
        token: Option<String>,
        headers: Headers,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let send = |last_event, token, headers| {
            let (uri, session) = (uri.clone(), session.clone());
            self.http
                .get_stream(uri, session, last_event, token, headers)
        };
        let to = Target::new("GET", &uri, session.as_deref());
        self.request(to, token, headers, last_event, send).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event: Option<String>,
        token: Option<String>,
        headers: Headers,
        max_event: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let send = |last_event, token, headers| {
            let (uri, session) = (uri.clone(), session.clone());
            self.http.get_stream_with_max_sse_event_size(
                uri, session, last_event, token, headers, max_event,
            )
        };
        let to = Target::new("GET", &uri, session.as_deref());
        self.request(to, token, headers, last_event, send).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};
    use std::collections::HashSet;

    /// A proof's header and claims, its signature checked with the key it carries.
    fn open(proof: &str) -> (Header, Value) {
        let header = jsonwebtoken::decode_header(proof).expect("a JWS");
        let key =
            DecodingKey::from_jwk(header.jwk.as_ref().expect("the key")).expect("a public key");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims = HashSet::new();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .expect("signed by the key it carries")
            .claims;
        (header, claims)
    }

    #[test]
    fn a_proof_is_signed_by_the_key_it_carries_and_says_what_rfc_9449_asks() {
        let dpop = Dpop::generate().unwrap();
        let proof = dpop
            .proof("POST", "https://as.example.com/token?x=1#frag", None, None)
            .unwrap();
        let (header, claims) = open(&proof);
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwk = serde_json::to_value(header.jwk.unwrap()).unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "no private part: {jwk}");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example.com/token");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let iat = claims["iat"].as_u64().unwrap();
        assert!(iat <= now && now - iat < 5, "iat {iat}, now {now}");
        assert_eq!(
            claims["jti"].as_str().unwrap().len(),
            22,
            "128 bits, base64url"
        );
        assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
    }

    #[test]
    fn a_proof_for_a_token_carries_its_hash_and_the_servers_nonce() {
        let dpop = Dpop::generate().unwrap();
        let proof = dpop
            .proof("GET", "http://127.0.0.1:8080/mcp", Some("tok"), Some("n-1"))
            .unwrap();
        let (_, claims) = open(&proof);
        // SHA-256 of "tok", base64url without padding.
        let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok"));
        assert_eq!(claims["ath"], ath.as_str());
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["htm"], "GET");
        assert_eq!(claims["htu"], "http://127.0.0.1:8080/mcp");
    }

    #[test]
    fn every_proof_is_fresh_and_every_key_its_own() {
        let dpop = Dpop::generate().unwrap();
        let jti = |proof: String| open(&proof).1["jti"].as_str().unwrap().to_owned();
        let first = jti(dpop
            .proof("POST", "https://a.example/t", None, None)
            .unwrap());
        let second = jti(dpop
            .proof("POST", "https://a.example/t", None, None)
            .unwrap());
        assert_ne!(first, second);
        let other = Dpop::generate().unwrap();
        assert_ne!(dpop.thumbprint(), other.thumbprint());
        // The thumbprint is the RFC 7638 one of the key each proof carries.
        let (header, _) = open(
            &dpop
                .proof("POST", "https://a.example/t", None, None)
                .unwrap(),
        );
        let carried = header
            .jwk
            .unwrap()
            .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .unwrap();
        assert_eq!(carried, dpop.thumbprint());
        assert_eq!(
            dpop.public_jwk()
                .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                .unwrap(),
            carried
        );
        // Its Debug names the key by its thumbprint, and shows nothing private.
        assert_eq!(
            format!("{dpop:?}"),
            format!("Dpop {{ thumbprint: {:?}, .. }}", dpop.thumbprint())
        );
    }

    #[test]
    fn a_proof_needs_an_absolute_url() {
        let dpop = Dpop::generate().unwrap();
        let error = dpop.proof("POST", "/token", None, None).unwrap_err();
        assert!(
            matches!(&error, DpopError::Url { url } if url == "/token"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "no DPoP proof for `/token`: not an absolute URL"
        );
        assert_eq!(
            DpopError::Key("no entropy".into()).to_string(),
            "no DPoP key: no entropy"
        );
        assert_eq!(
            DpopError::Sign("bad key".into()).to_string(),
            "the DPoP proof could not be signed: bad key"
        );
    }

    #[test]
    fn only_a_form_post_with_a_grant_type_is_a_token_request() {
        let request = |method: Method, body: &str| {
            http::Request::builder()
                .method(method)
                .uri("https://as.example/token")
                .body(body.as_bytes().to_vec())
                .unwrap()
        };
        assert!(is_token_request(&request(
            Method::POST,
            "grant_type=authorization_code&code=c"
        )));
        assert!(is_token_request(&request(
            Method::POST,
            "code=c&grant_type=refresh_token"
        )));
        assert!(!is_token_request(&request(
            Method::GET,
            "grant_type=authorization_code"
        )));
        // A registration (JSON) and a revocation (a token, no grant) are not.
        assert!(!is_token_request(&request(
            Method::POST,
            r#"{"grant_types":["authorization_code"]}"#
        )));
        assert!(!is_token_request(&request(
            Method::POST,
            "token=abc&token_type_hint=access_token"
        )));
    }

    #[test]
    fn a_token_is_bound_only_when_issued_as_dpop() {
        assert_eq!(
            bound_token(br#"{"access_token":"a","token_type":"DPoP"}"#).as_deref(),
            Some("a")
        );
        assert_eq!(
            bound_token(br#"{"access_token":"a","token_type":"dpop"}"#).as_deref(),
            Some("a")
        );
        assert_eq!(
            bound_token(br#"{"access_token":"a","token_type":"Bearer"}"#),
            None
        );
        assert_eq!(bound_token(br#"{"access_token":"a"}"#), None);
        assert_eq!(bound_token(br#"{"token_type":"DPoP"}"#), None);
        assert_eq!(bound_token(b"not json"), None);
    }

    #[test]
    fn a_nonce_challenge_is_a_400_saying_use_dpop_nonce() {
        let answer = |status: u16, body: &str| {
            http::Response::builder()
                .status(status)
                .body(body.as_bytes().to_vec())
                .unwrap()
        };
        assert!(is_nonce_challenge(&answer(
            400,
            r#"{"error":"use_dpop_nonce"}"#
        )));
        assert!(!is_nonce_challenge(&answer(
            401,
            r#"{"error":"use_dpop_nonce"}"#
        )));
        assert!(!is_nonce_challenge(&answer(
            400,
            r#"{"error":"invalid_grant"}"#
        )));
        assert!(!is_nonce_challenge(&answer(400, "use_dpop_nonce")));
    }

    #[test]
    fn the_last_bound_tokens_are_remembered() {
        let dpop = Dpop::generate().unwrap();
        assert!(!dpop.is_bound("t0"));
        for i in 0..=BOUND_TOKENS {
            dpop.bind(format!("t{i}"));
        }
        assert!(!dpop.is_bound("t0"), "the oldest is forgotten");
        for i in 1..=BOUND_TOKENS {
            assert!(dpop.is_bound(&format!("t{i}")), "t{i}");
        }
        // Clones share what was learned.
        assert!(dpop.clone().is_bound("t1"));
    }

    #[tokio::test]
    async fn a_bound_token_goes_as_dpop_with_a_proof_and_any_other_as_it_came() {
        type Presented = (Option<String>, Headers);
        let dpop = Dpop::generate().unwrap();
        dpop.bind("bound".to_owned());
        let mut custom = HashMap::new();
        custom.insert(
            HeaderName::from_static("x-kept"),
            HeaderValue::from_static("1"),
        );
        let recorder = Recorder::default();
        let http = DpopHttp::new(recorder.clone(), dpop.clone());
        // What rmcp's client is handed for a `DELETE` with `token`.
        let present = async |token: Option<&str>| -> Presented {
            let uri = "http://127.0.0.1:1/mcp?q=1".into();
            let token = token.map(str::to_owned);
            let _ = http
                .delete_session(uri, "s".into(), token, custom.clone())
                .await;
            let (_, token, headers) = lock(&recorder.0).pop().expect("sent");
            (token, headers)
        };
        let (token, headers) = present(Some("bound")).await;
        assert_eq!(token, None, "no bearer token left for rmcp's client");
        assert_eq!(headers[&http::header::AUTHORIZATION], "DPoP bound");
        assert_eq!(headers[&HeaderName::from_static("x-kept")], "1");
        let (_, claims) = open(headers[&DPOP].to_str().unwrap());
        assert_eq!(claims["htm"], "DELETE");
        assert_eq!(claims["htu"], "http://127.0.0.1:1/mcp");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"bound")).as_str()
        );
        assert_eq!(
            present(Some("bearer")).await,
            (Some("bearer".to_owned()), custom.clone())
        );
        assert_eq!(present(None).await, (None, custom.clone()));
        // A bound token that cannot be a header value is refused, not sent.
        dpop.bind("bad\ntoken".to_owned());
        let token = Some("bad\ntoken".to_owned());
        let refused = http
            .post_message(
                "http://h/mcp".into(),
                initialized(),
                None,
                token,
                Headers::new(),
            )
            .await;
        assert!(matches!(refused, Err(StreamableHttpError::Auth(_))));
        assert!(lock(&recorder.0).is_empty(), "nothing sent");
    }

    #[test]
    fn a_nonce_is_kept_by_origin() {
        assert_eq!(
            origin("https://as.example:8443/t/token?x"),
            "https://as.example:8443"
        );
        assert_eq!(origin("http://127.0.0.1/token"), "http://127.0.0.1");
        let dpop = Dpop::generate().unwrap();
        let mut headers = http::HeaderMap::new();
        dpop.remember_nonce("https://a", &headers);
        assert_eq!(dpop.nonce("https://a"), None);
        headers.insert(DPOP_NONCE, HeaderValue::from_static("n1"));
        dpop.remember_nonce("https://a", &headers);
        assert_eq!(dpop.nonce("https://a").as_deref(), Some("n1"));
        assert_eq!(dpop.nonce("https://b"), None);
    }

    /// What an authorization server saw of one request.
    struct Seen {
        method: String,
        path: String,
        nonce: Option<String>,
        htu: Option<String>,
        body: String,
    }

    /// An authorization server on loopback (its metadata, and the protected resource's, for a
    /// resource at `/mcp`) answering each token request with the next of `answers` (status,
    /// `DPoP-Nonce`, body), and what it saw. Its token endpoint's URL is the first returned.
    async fn token_endpoint(
        answers: Vec<(u16, Option<&'static str>, &'static str)>,
    ) -> (String, Arc<Mutex<Vec<Seen>>>) {
        use http_body_util::{BodyExt, Full};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
        let log = seen.clone();
        let origin = base.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (log, answers, base) = (log.clone(), answers.clone(), origin.clone());
                let service = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let (log, answers, base) = (log.clone(), answers.clone(), base.clone());
                        async move {
                            let method = request.method().to_string();
                            let path = request.uri().path().to_owned();
                            let proof = request
                                .headers()
                                .get("dpop")
                                .map(|v| v.to_str().unwrap().to_owned());
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let claims = proof.map(|proof| open(&proof).1);
                            let text = |key: &str| {
                                claims
                                    .as_ref()
                                    .and_then(|c| c.get(key))
                                    .and_then(Value::as_str)
                                    .map(str::to_owned)
                            };
                            lock(&log).push(Seen {
                                method,
                                nonce: text("nonce"),
                                htu: text("htu"),
                                body: String::from_utf8(body.to_vec()).unwrap(),
                                path: path.clone(),
                            });
                            let (status, nonce, body) = match path.as_str() {
                            "/.well-known/oauth-protected-resource/mcp" => (200, None, serde_json::json!({
                                "resource": format!("{base}/mcp"),
                                "authorization_servers": [base],
                            }).to_string()),
                            "/.well-known/oauth-authorization-server" => (200, None, serde_json::json!({
                                "issuer": base,
                                "authorization_endpoint": format!("{base}/authorize"),
                                "token_endpoint": format!("{base}/token"),
                                "response_types_supported": ["code"],
                                "grant_types_supported": ["client_credentials"],
                                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                            }).to_string()),
                            "/token" => {
                                let (status, nonce, body) = lock(&answers).pop_front().expect("an answer");
                                (status, nonce, body.to_owned())
                            }
                            _ => (404, None, String::new()),
                        };
                            let mut answer = http::Response::builder()
                                .status(status)
                                .header("content-type", "application/json");
                            if let Some(nonce) = nonce {
                                answer = answer.header("DPoP-Nonce", nonce);
                            }
                            Ok::<_, std::convert::Infallible>(
                                answer.body(Full::new(bytes::Bytes::from(body))).unwrap(),
                            )
                        }
                    },
                );
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        (format!("{base}/token"), seen)
    }

    /// rmcp's half: a client that must never see a token request.
    struct Elsewhere(Arc<Mutex<Vec<String>>>);

    impl OAuthHttpClient for Elsewhere {
        fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
            lock(&self.0).push(request.request.uri().to_string());
            Box::pin(async {
                Ok(http::Response::builder()
                    .status(204)
                    .body(Vec::new())
                    .unwrap())
            })
        }
    }

    fn form_post(url: &str, body: &str) -> http::Request<Vec<u8>> {
        http::Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body.as_bytes().to_vec())
            .unwrap()
    }

    fn client(dpop: &Dpop) -> TokenRequests {
        TokenRequests {
            dpop: dpop.clone(),
            inner: Arc::new(Elsewhere(Arc::default())),
        }
    }

    #[tokio::test]
    async fn a_nonce_challenge_is_answered_once_with_the_nonce_and_the_token_bound() {
        let (url, seen) = token_endpoint(vec![
            (400, Some("n1"), r#"{"error":"use_dpop_nonce"}"#),
            (
                200,
                Some("n2"),
                r#"{"access_token":"at","token_type":"DPoP","expires_in":60}"#,
            ),
            (200, None, r#"{"access_token":"at2","token_type":"DPoP"}"#),
        ])
        .await;
        let dpop = Dpop::generate().unwrap();
        let requests = client(&dpop);
        let answer = requests
            .token_request(
                form_post(&url, "grant_type=authorization_code&code=c"),
                TOKEN_TIMEOUT,
            )
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert!(dpop.is_bound("at"));
        {
            let seen = lock(&seen);
            assert_eq!(seen.len(), 2);
            assert_eq!(seen[0].nonce, None);
            assert_eq!(seen[1].nonce.as_deref(), Some("n1"));
            assert_eq!(seen[1].htu.as_deref(), Some(url.as_str()));
            assert_eq!(seen[1].body, "grant_type=authorization_code&code=c");
        }
        // The nonce the answer carried is the next request's, at once.
        requests
            .token_request(
                form_post(&url, "grant_type=refresh_token&refresh_token=r"),
                TOKEN_TIMEOUT,
            )
            .await
            .unwrap();
        assert_eq!(lock(&seen)[2].nonce.as_deref(), Some("n2"));
        assert!(dpop.is_bound("at2"));
    }

    #[tokio::test]
    async fn a_second_challenge_or_one_without_a_new_nonce_goes_back_as_the_server_sent_it() {
        let (url, seen) = token_endpoint(vec![
            (400, Some("n1"), r#"{"error":"use_dpop_nonce"}"#),
            (400, Some("n2"), r#"{"error":"use_dpop_nonce"}"#),
            (400, Some("n2"), r#"{"error":"use_dpop_nonce"}"#),
        ])
        .await;
        let dpop = Dpop::generate().unwrap();
        let requests = client(&dpop);
        let grant = || form_post(&url, "grant_type=client_credentials");
        let answer = requests
            .token_request(grant(), TOKEN_TIMEOUT)
            .await
            .unwrap();
        assert_eq!(answer.status(), 400, "retried once only");
        assert_eq!(lock(&seen).len(), 2);
        // Sent with n2 and told n2 again: nothing new to send.
        let answer = requests
            .token_request(grant(), TOKEN_TIMEOUT)
            .await
            .unwrap();
        assert_eq!(answer.status(), 400);
        assert_eq!(lock(&seen).len(), 3);
        assert_eq!(lock(&seen)[2].nonce.as_deref(), Some("n2"));
    }

    #[tokio::test]
    async fn a_bearer_answer_binds_nothing_and_an_oversized_one_is_refused() {
        let big: &'static str = Box::leak(
            format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_TOKEN_RESPONSE)).into_boxed_str(),
        );
        // An answer of exactly the bound is read whole, whatever chunks it comes in.
        let head = r#"{"access_token":"edge","token_type":"DPoP","pad":""#;
        let pad = "x".repeat(MAX_TOKEN_RESPONSE - head.len() - 2);
        let edge: &'static str = Box::leak(format!("{head}{pad}\"}}").into_boxed_str());
        assert_eq!(edge.len(), MAX_TOKEN_RESPONSE);
        let (url, _) = token_endpoint(vec![
            (
                200,
                None,
                r#"{"access_token":"plain","token_type":"Bearer"}"#,
            ),
            (200, None, big),
            (200, None, edge),
        ])
        .await;
        let dpop = Dpop::generate().unwrap();
        let requests = client(&dpop);
        let grant = || form_post(&url, "grant_type=client_credentials");
        requests
            .token_request(grant(), TOKEN_TIMEOUT)
            .await
            .unwrap();
        assert!(!dpop.is_bound("plain"));
        let error = requests
            .token_request(grant(), TOKEN_TIMEOUT)
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("the token endpoint's answer is over {MAX_TOKEN_RESPONSE} bytes")
        );
        requests
            .token_request(grant(), TOKEN_TIMEOUT)
            .await
            .unwrap();
        assert!(dpop.is_bound("edge"));
    }

    #[tokio::test]
    async fn through_rmcps_oauth_client_only_the_token_request_carries_a_proof() {
        use rmcp::transport::auth::{
            ClientCredentialsConfig, OAuthState, default_oauth_http_client,
        };
        let (token_url, seen) = token_endpoint(vec![
            (400, Some("n1"), r#"{"error":"use_dpop_nonce"}"#),
            (
                200,
                None,
                r#"{"access_token":"at","token_type":"DPoP","expires_in":60}"#,
            ),
        ])
        .await;
        let mcp = token_url.replace("/token", "/mcp");
        let dpop = Dpop::generate().unwrap();
        let http = dpop.oauth_http_client(Arc::new(default_oauth_http_client().unwrap()));
        let mut oauth = OAuthState::new_with_oauth_http_client(mcp.as_str(), http)
            .await
            .unwrap();
        oauth
            .authenticate_client_credentials(ClientCredentialsConfig::ClientSecret {
                client_id: "c".to_owned(),
                client_secret: "s".to_owned(),
                scopes: Vec::new(),
                resource: Some(mcp.clone()),
            })
            .await
            .unwrap();
        let manager = oauth.into_authorization_manager().unwrap();
        assert_eq!(manager.get_access_token().await.unwrap(), "at");
        assert!(dpop.is_bound("at"));
        let seen = lock(&seen);
        let tokens: Vec<&Seen> = seen.iter().filter(|s| s.path == "/token").collect();
        assert_eq!(tokens.len(), 2, "the challenge, then the nonce");
        assert!(
            tokens
                .iter()
                .all(|s| s.method == "POST" && s.htu.as_deref() == Some(token_url.as_str()))
        );
        assert_eq!(tokens[1].nonce.as_deref(), Some("n1"));
        assert!(
            tokens[1].body.contains("grant_type=client_credentials"),
            "{}",
            tokens[1].body
        );
        // The metadata went through rmcp's own client, with no proof.
        let others: Vec<&Seen> = seen.iter().filter(|s| s.path != "/token").collect();
        assert!(!others.is_empty());
        assert!(
            others.iter().all(|s| s.method == "GET" && s.htu.is_none()),
            "{:?}",
            others.iter().map(|s| &s.path).collect::<Vec<_>>()
        );
    }

    /// What rmcp's HTTP client was asked: the method, the bearer token left to it, the
    /// headers.
    type Asked = Arc<Mutex<Vec<(&'static str, Option<String>, Headers)>>>;

    /// rmcp's HTTP client, recording what it is asked and answering nothing of note.
    #[derive(Clone, Default)]
    struct Recorder(Asked);

    impl Recorder {
        fn ask(&self, method: &'static str, token: Option<String>, headers: Headers) {
            lock(&self.0).push((method, token, headers));
        }
    }

    impl StreamableHttpClient for Recorder {
        type Error = std::io::Error;

        async fn post_message(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            headers: Headers,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.ask("post", token, headers);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            headers: Headers,
            _: usize,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.ask("post with an event bound", token, headers);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn post_message_with_response_limits(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            headers: Headers,
            _: StreamableHttpResponseLimits,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.ask("post with limits", token, headers);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn delete_session(
            &self,
            _: Arc<str>,
            _: Arc<str>,
            token: Option<String>,
            headers: Headers,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            self.ask("delete", token, headers);
            // What the server answered is what the caller sees.
            Err(StreamableHttpError::SessionExpired)
        }

        async fn get_stream(
            &self,
            _: Arc<str>,
            _: Option<Arc<str>>,
            _: Option<String>,
            token: Option<String>,
            headers: Headers,
        ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
            self.ask("get", token, headers);
            Ok(Box::pin(futures::stream::empty()))
        }

        async fn get_stream_with_max_sse_event_size(
            &self,
            _: Arc<str>,
            _: Option<Arc<str>>,
            _: Option<String>,
            token: Option<String>,
            headers: Headers,
            _: usize,
        ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
            self.ask("get with an event bound", token, headers);
            Ok(Box::pin(futures::stream::empty()))
        }
    }

    #[tokio::test]
    async fn every_request_of_rmcps_client_presents_a_bound_token_as_dpop() {
        let dpop = Dpop::generate().unwrap();
        dpop.bind("bound".to_owned());
        let recorder = Recorder::default();
        let http = DpopHttp::new(recorder.clone(), dpop);
        let uri: Arc<str> = "http://127.0.0.1:9/mcp".into();
        let session: Arc<str> = "s".into();
        let message = || -> ClientJsonRpcMessage {
            serde_json::from_value(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/initialized"
            }))
            .unwrap()
        };
        let token = || Some("bound".to_owned());
        let none = Headers::new;
        http.post_message(uri.clone(), message(), None, token(), none())
            .await
            .unwrap();
        http.post_message_with_max_sse_event_size(uri.clone(), message(), None, token(), none(), 1)
            .await
            .unwrap();
        let limits = StreamableHttpResponseLimits::default();
        http.post_message_with_response_limits(
            uri.clone(),
            message(),
            None,
            token(),
            none(),
            limits,
        )
        .await
        .unwrap();
        let deleted = http
            .delete_session(uri.clone(), session.clone(), token(), none())
            .await;
        assert!(matches!(deleted, Err(StreamableHttpError::SessionExpired)));
        assert!(
            http.get_stream(uri.clone(), None, None, token(), none())
                .await
                .is_ok()
        );
        assert!(
            http.get_stream_with_max_sse_event_size(
                uri.clone(),
                Some(session),
                None,
                token(),
                none(),
                1
            )
            .await
            .is_ok()
        );
        let asked = lock(&recorder.0);
        let methods: Vec<&str> = asked.iter().map(|(method, ..)| *method).collect();
        assert_eq!(
            methods,
            [
                "post",
                "post with an event bound",
                "post with limits",
                "delete",
                "get",
                "get with an event bound"
            ]
        );
        let verbs = ["POST", "POST", "POST", "DELETE", "GET", "GET"];
        for ((method, token, headers), verb) in asked.iter().zip(verbs) {
            assert_eq!(*token, None, "{method}: no bearer token");
            assert_eq!(
                headers[&http::header::AUTHORIZATION],
                "DPoP bound",
                "{method}"
            );
            let (_, claims) = open(headers[&DPOP].to_str().unwrap());
            assert_eq!(claims["htm"], verb, "{method}");
            assert_eq!(claims["htu"], "http://127.0.0.1:9/mcp", "{method}");
        }
    }

    #[test]
    fn a_nonce_is_asked_for_by_a_dpop_challenge_saying_use_dpop_nonce() {
        for asks in [
            r#"DPoP error="use_dpop_nonce""#,
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://r/.well-known/x""#,
            r#"dpop realm="a, b", error=use_dpop_nonce"#,
            r#"DPoP error = "use_dpop_nonce""#,
            r#"Bearer realm="x", DPoP algs="ES256", error="use_dpop_nonce""#,
            r#"DPoP error="use_dpop_\nonce""#,
            r#"DPoP realm="x", error = "use_dpop_nonce""#,
        ] {
            assert!(asks_for_nonce(asks), "{asks}");
        }
        for not in [
            "",
            "DPoP",
            r#"DPoP error="invalid_token""#,
            r#"Bearer error="use_dpop_nonce""#,
            r#"DPoP error="invalid_token", Bearer error="use_dpop_nonce""#,
            r#"DPoP error_description="use_dpop_nonce""#,
            r#"DPoP realm="x, error=use_dpop_nonce""#,
            r#"DPoP error="use_dpop_nonce2""#,
            "use_dpop_nonce",
            // The parameter after a bare scheme is that scheme's.
            r#"DPoP error="invalid_token", Basic, error="use_dpop_nonce""#,
            // A quote escaped inside a quoted value does not end it.
            r#"DPoP realm="a\", error=use_dpop_nonce, b=\"c""#,
        ] {
            assert!(!asks_for_nonce(not), "{not}");
        }
    }

    #[test]
    fn challenges_split_at_commas_outside_quoted_strings() {
        assert_eq!(outside_quotes(r#"a="x,y", b"#, ','), [r#"a="x,y""#, " b"]);
        assert_eq!(
            outside_quotes(r#"a="x\",y", b"#, ','),
            [r#"a="x\",y""#, " b"]
        );
        // Outside quotes a backslash is itself.
        assert_eq!(outside_quotes(r#"a\,b"#, ','), [r#"a\"#, "b"]);
        assert_eq!(outside_quotes("", ','), [""]);
        assert_eq!(unquoted(r#""a\"b\\""#), r#"a"b\"#);
        assert_eq!(unquoted("plain"), "plain");
    }

    #[test]
    fn a_nonce_over_the_bound_is_not_kept() {
        let dpop = Dpop::generate().unwrap();
        let mut headers = http::HeaderMap::new();
        headers.insert(DPOP_NONCE, "n".repeat(MAX_NONCE).parse().unwrap());
        dpop.remember_nonce("https://a", &headers);
        assert_eq!(dpop.nonce("https://a").map(|n| n.len()), Some(MAX_NONCE));
        headers.insert(DPOP_NONCE, "m".repeat(MAX_NONCE + 1).parse().unwrap());
        dpop.remember_nonce("https://a", &headers);
        assert_eq!(dpop.nonce("https://a").map(|n| n.len()), Some(MAX_NONCE));
        assert!(dpop.nonce("https://a").unwrap().starts_with('n'));
    }

    /// What a resource server saw of one request: the JSON-RPC method (or the verb of a request
    /// without a body), the `Authorization`
    /// header, the proof's claims, the session.
    struct Heard {
        method: String,
        authorization: Option<String>,
        claims: Option<Value>,
        session: Option<String>,
        version: Option<String>,
    }

    impl Heard {
        fn nonce(&self) -> Option<&str> {
            self.claims.as_ref()?.get("nonce")?.as_str()
        }
    }

    /// How a resource server answers a request, given the nonce its proof carries and how
    /// many requests came before: accepted (`None`), or refused with this `error` and this
    /// `DPoP-Nonce` (or none).
    type Rule =
        dyn Fn(Option<&str>, usize) -> Option<(&'static str, Option<&'static str>)> + Send + Sync;

    /// An MCP endpoint on loopback refusing requests as `rule` says (`401`, a `DPoP`
    /// challenge), accepting the others (`202`), and what it saw.
    async fn resource_server(rule: Arc<Rule>) -> (Arc<str>, Arc<Mutex<Vec<Heard>>>) {
        use http_body_util::{BodyExt, Full};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (log, rule) = (log.clone(), rule.clone());
                let service = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let (log, rule) = (log.clone(), rule.clone());
                        async move {
                            let header = |name: &str| {
                                request
                                    .headers()
                                    .get(name)
                                    .map(|v| v.to_str().unwrap().to_owned())
                            };
                            let (authorization, proof) = (header("authorization"), header("dpop"));
                            let (session, version) =
                                (header("mcp-session-id"), header("mcp-protocol-version"));
                            let verb = request.method().to_string();
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            // A message's method, or the verb of a request without one.
                            let method = match serde_json::from_slice::<Value>(&body) {
                                Ok(message) => message["method"].as_str().unwrap().to_owned(),
                                Err(_) => verb,
                            };
                            let asked = Heard {
                                method,
                                authorization,
                                claims: proof.map(|proof| open(&proof).1),
                                session,
                                version,
                            };
                            let refusal = rule(asked.nonce(), lock(&log).len());
                            lock(&log).push(asked);
                            let mut answer = http::Response::builder();
                            answer = match refusal {
                                None => answer.status(202),
                                Some((error, nonce)) => {
                                    let answer = answer.status(401).header(
                                        "www-authenticate",
                                        format!(r#"DPoP error="{error}", resource_metadata="http://127.0.0.1:9/""#),
                                    );
                                    match nonce {
                                        Some(nonce) => answer.header("DPoP-Nonce", nonce),
                                        None => answer,
                                    }
                                }
                            };
                            Ok::<_, std::convert::Infallible>(
                                answer.body(Full::new(bytes::Bytes::new())).unwrap(),
                            )
                        }
                    },
                );
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        (url.into(), seen)
    }

    /// A refusal for want of a nonce, the nonce `rs-1` beside it.
    const ASK: (&str, Option<&str>) = ("use_dpop_nonce", Some("rs-1"));

    fn initialized() -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/initialized"
        }))
        .unwrap()
    }

    fn version_header() -> Headers {
        Headers::from([(
            HeaderName::from_static("mcp-protocol-version"),
            HeaderValue::from_static("2025-11-25"),
        )])
    }

    /// A client holding the bound token `bound`.
    fn bound_client() -> DpopHttp<reqwest::Client> {
        let dpop = Dpop::generate().unwrap();
        dpop.bind("bound");
        DpopHttp::new(reqwest::Client::default(), dpop)
    }

    /// `notifications/initialized` posted to `url` with `token`, outside a session.
    async fn post_initialized(
        http: &DpopHttp<reqwest::Client>,
        url: &Arc<str>,
        token: &str,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let token = Some(token.to_owned());
        http.post_message(url.clone(), initialized(), None, token, Headers::new())
            .await
    }

    /// What a resource server heard: each request's method and its proof's nonce.
    fn heard(seen: &Mutex<Vec<Heard>>) -> Vec<(String, Option<String>)> {
        lock(seen)
            .iter()
            .map(|a| (a.method.clone(), a.nonce().map(str::to_owned)))
            .collect()
    }

    /// `(method, nonce)` as [`heard`] gives it.
    fn said(method: &str, nonce: Option<&str>) -> (String, Option<String>) {
        (method.to_owned(), nonce.map(str::to_owned))
    }

    #[tokio::test]
    async fn a_resource_servers_nonce_is_learned_once_and_sent_from_then_on() {
        // Refused until the proof carries `rs-1`.
        let (url, seen) =
            resource_server(Arc::new(|nonce, _| (nonce != Some("rs-1")).then_some(ASK))).await;
        let http = bound_client();
        let session: Arc<str> = "s-1".into();
        let token = Some("bound".to_owned());
        let answer = http
            .post_message(
                url.clone(),
                initialized(),
                Some(session.clone()),
                token,
                version_header(),
            )
            .await;
        assert!(matches!(answer, Ok(StreamableHttpPostResponse::Accepted)));
        assert_eq!(
            heard(&seen),
            [
                said("notifications/initialized", None),
                said("ping", None),
                said("notifications/initialized", Some("rs-1")),
            ]
        );
        {
            // The probe: the same token, proven for the same endpoint, in the same session
            // and revision.
            let seen = lock(&seen);
            let probe = &seen[1];
            assert_eq!(probe.authorization.as_deref(), Some("DPoP bound"));
            let claims = probe.claims.as_ref().unwrap();
            assert_eq!(
                (&claims["htm"], &claims["htu"]),
                (&"POST".into(), &(*url).into())
            );
            assert!(claims["ath"].is_string());
            assert_eq!(probe.session.as_deref(), Some("s-1"));
            assert_eq!(probe.version.as_deref(), Some("2025-11-25"));
            // Three proofs, three `jti`s.
            let jtis: HashSet<&str> = seen
                .iter()
                .map(|a| a.claims.as_ref().unwrap()["jti"].as_str().unwrap())
                .collect();
            assert_eq!(jtis.len(), 3);
        }
        // The nonce is the next request's at once, on every verb.
        let token = Some("bound".to_owned());
        let deleted = http
            .delete_session(url, session, token, Headers::new())
            .await;
        assert!(deleted.is_ok(), "{deleted:?}");
        assert_eq!(heard(&seen)[3..], [said("DELETE", Some("rs-1"))]);
        assert_eq!(lock(&seen)[3].claims.as_ref().unwrap()["htm"], "DELETE");
    }

    #[tokio::test]
    async fn a_nonce_refusal_with_nothing_new_to_send_reaches_the_caller_after_one_probe() {
        let http = bound_client();
        // No nonce given: the probe learns nothing, and nothing is sent again.
        let (url, seen) = resource_server(Arc::new(|_, _| Some(("use_dpop_nonce", None)))).await;
        let answer = post_initialized(&http, &url, "bound").await;
        let Err(StreamableHttpError::AuthRequired(refused)) = answer else {
            panic!("{answer:?}");
        };
        assert!(refused.www_authenticate_header.contains("use_dpop_nonce"));
        assert_eq!(
            heard(&seen),
            [said("notifications/initialized", None), said("ping", None)]
        );

        // A new nonce every time, never accepted: sent once more, then the refusal.
        let (url, seen) = resource_server(Arc::new(|_, n| {
            Some(("use_dpop_nonce", Some(["a", "b", "c", "d", "e"][n])))
        }))
        .await;
        let answer = post_initialized(&http, &url, "bound").await;
        assert!(matches!(answer, Err(StreamableHttpError::AuthRequired(_))));
        assert_eq!(
            heard(&seen),
            [
                said("notifications/initialized", None),
                said("ping", None),
                said("notifications/initialized", Some("b")),
            ]
        );
    }

    #[tokio::test]
    async fn a_bearer_token_or_another_refusal_sends_no_probe() {
        let http = bound_client();
        // A token not bound goes as a bearer token; its refusal is the caller's.
        let (url, seen) = resource_server(Arc::new(|_, _| Some(ASK))).await;
        let answer = post_initialized(&http, &url, "plain").await;
        assert!(matches!(answer, Err(StreamableHttpError::AuthRequired(_))));
        assert_eq!(heard(&seen), [said("notifications/initialized", None)]);
        assert_eq!(
            lock(&seen)[0].authorization.as_deref(),
            Some("Bearer plain")
        );
        assert!(lock(&seen)[0].claims.is_none());

        // A bound token refused for another reason, a nonce beside it: no probe, no retry.
        let (url, seen) =
            resource_server(Arc::new(|_, _| Some(("invalid_token", Some("n"))))).await;
        let answer = post_initialized(&http, &url, "bound").await;
        let Err(StreamableHttpError::AuthRequired(refused)) = answer else {
            panic!("{answer:?}");
        };
        assert!(refused.www_authenticate_header.contains("invalid_token"));
        assert_eq!(heard(&seen), [said("notifications/initialized", None)]);
        assert_eq!(lock(&seen)[0].authorization.as_deref(), Some("DPoP bound"));
    }
}
