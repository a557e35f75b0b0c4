//! Authenticated streamable HTTP: the server as an OAuth 2.0 protected resource, as the MCP
//! authorization specification describes one.
//!
//! - Every request to the MCP endpoint carries `Authorization: Bearer <token>`, verified by a
//!   host-provided [`BearerVerifier`] (`JwtVerifier` is included with the `jwt` feature: JWTs
//!   signed by a key of a JWKS, audience-bound, on the `jsonwebtoken` crate; any
//!   `Fn(&str) -> Result<Caller, AuthError>` is a verifier too). A request without a token, or with one
//!   that does not verify, is answered `401 Unauthorized` with a `WWW-Authenticate: Bearer`
//!   header naming the resource metadata (and `error="invalid_token"` for a bad token).
//! - `GET /.well-known/oauth-protected-resource` (and the same followed by the endpoint's path,
//!   RFC 9728 §3.1) answers the OAuth Protected Resource Metadata document: the resource, its
//!   authorization servers, the scopes it knows, `bearer_methods_supported: ["header"]`.
//! - The verified caller (subject, scopes, claims) reaches each tool's context
//!   ([`agentio_tools::ToolContext::caller`]), and a tool's required scopes
//!   ([`crate::McpServer::require_scopes`]) are checked before its approval is asked.
//! - The `Host` and `Origin` checks of [`crate::McpServer::default_http_config`] stay on.
//! - With the `dpop` feature, [`HttpAuth::with_dpop`] takes DPoP-bound tokens too (RFC 9449,
//!   SEP-1932): `Authorization: DPoP <token>` with a proof of the key the token is bound to
//!   ([`crate::proofs`]), and refuses a bound token presented as `Bearer`.

use std::sync::Arc;

use agentio_core::BoxFuture;
use agentio_tools::Caller;
#[cfg(feature = "jwt")]
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
#[cfg(feature = "jwt")]
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

use crate::front::HttpBody;

/// Who a verified caller is, as one string: its subject under the issuer of its token (`iss`,
/// empty when the token names none), since a subject is unique only within its issuer (OpenID
/// Connect): `alice` of one identity provider is not `alice` of another. The issuer's length
/// comes first, so no two callers give the same key, whatever their subjects hold. A task's
/// owner ([`crate::tasks`]) and the caller a sealed round is bound to ([`crate::rounds`]).
pub(crate) fn caller_key(caller: &Caller) -> String {
    let issuer = caller
        .claims
        .get("iss")
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("{}:{issuer}{}", issuer.len(), caller.subject)
}

/// Why a bearer token was refused: an OAuth error code and a description safe to send back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthError {
    /// `invalid_token` (RFC 6750 §3.1).
    pub error: &'static str,
    /// What was wrong, in words (never the token).
    pub description: String,
}

impl AuthError {
    /// `invalid_token`, with `description`.
    pub fn invalid(description: impl Into<String>) -> Self {
        AuthError {
            error: "invalid_token",
            description: description.into(),
        }
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.description)
    }
}

impl std::error::Error for AuthError {}

/// A refused DPoP proof is `invalid_dpop_proof` (RFC 9449 §7.1).
#[cfg(feature = "dpop")]
impl From<crate::proofs::Refused> for AuthError {
    fn from(refused: crate::proofs::Refused) -> Self {
        AuthError {
            error: "invalid_dpop_proof",
            description: refused.0.to_owned(),
        }
    }
}

/// Verifies a bearer token and says who it belongs to.
pub trait BearerVerifier: Send + Sync {
    /// The caller `token` authenticates, or why it does not.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, AuthError>>;
}

/// Any `Fn(&str) -> Result<Caller, AuthError>` is a verifier (an introspection call, a table
/// of service tokens, a test).
///
/// ```
/// use agentio_mcp::auth::{AuthError, BearerVerifier};
/// use agentio_tools::Caller;
///
/// let verifier = |token: &str| match token {
///     "s3cret" => Ok(Caller::new("service-a").with_scopes(["notes:read"])),
///     _ => Err(AuthError::invalid("unknown token")),
/// };
/// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// assert_eq!(runtime.block_on(verifier.verify("s3cret")).unwrap().subject, "service-a");
/// assert!(runtime.block_on(verifier.verify("guess")).is_err());
/// ```
impl<F> BearerVerifier for F
where
    F: Fn(&str) -> Result<Caller, AuthError> + Send + Sync,
{
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, AuthError>> {
        let verified = self(token);
        Box::pin(async move { verified })
    }
}

#[cfg(feature = "jwt")]
/// Verifies JWTs signed by a key of a JSON Web Key Set, for one audience (the MCP server's
/// resource identifier) and, optionally, one issuer. Asymmetric algorithms only (RS*, PS*,
/// ES256, ES384, EdDSA): a symmetric key in a public key set is refused, as is a token whose
/// `alg` is not its key's. `exp` is required and `nbf` checked; 30 seconds of clock skew are
/// allowed.
///
/// ```
/// use agentio_mcp::auth::{BearerVerifier, JwtVerifier};
///
/// let jwks = r#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig",
///   "x":"oO_NN_mvuVHPNP_5ZdUG69AMgOz7Qr7bF08qSx583DY","y":"7dGwMxwDf61XcglfHaC2TzFwLeMfnYqaGKnjz7pdbD0"}]}"#;
/// let verifier = JwtVerifier::from_jwks_json(jwks, "https://mcp.example.com/mcp").unwrap()
///     .with_issuer("https://auth.example.com");
/// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let err = runtime.block_on(verifier.verify("not.a.jwt")).unwrap_err();
/// assert_eq!(err.error, "invalid_token");
/// ```
pub struct JwtVerifier {
    keys: JwkSet,
    audience: String,
    issuer: Option<String>,
}

#[cfg(feature = "jwt")]
impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("keys", &self.keys.keys.len())
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .finish()
    }
}

#[cfg(feature = "jwt")]
impl JwtVerifier {
    /// A verifier of tokens signed by `keys`, for `audience`.
    pub fn new(keys: JwkSet, audience: impl Into<String>) -> Self {
        JwtVerifier {
            keys,
            audience: audience.into(),
            issuer: None,
        }
    }

    /// [`Self::new`] from a JWKS document (as an authorization server publishes at its
    /// `jwks_uri`).
    pub fn from_jwks_json(jwks: &str, audience: impl Into<String>) -> Result<Self, String> {
        let keys: JwkSet = serde_json::from_str(jwks).map_err(|e| format!("not a JWK set: {e}"))?;
        Ok(Self::new(keys, audience))
    }

    /// Requires the tokens' `iss` to be `issuer`.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    fn key_for(&self, kid: Option<&str>) -> Result<&Jwk, AuthError> {
        match kid {
            Some(kid) => self
                .keys
                .find(kid)
                .ok_or_else(|| AuthError::invalid("the token's key is not in the key set")),
            None if self.keys.keys.len() == 1 => Ok(&self.keys.keys[0]),
            None => Err(AuthError::invalid(
                "the token names no key (`kid`) and the key set has several",
            )),
        }
    }

    fn check(&self, token: &str) -> Result<Caller, AuthError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| AuthError::invalid("the token is not a JWT"))?;
        let jwk = self.key_for(header.kid.as_deref())?;
        let allowed = allowed_algorithms(jwk);
        if !allowed.contains(&header.alg) {
            return Err(AuthError::invalid(
                "the token's algorithm is not its key's (or the key is not an asymmetric signing key)",
            ));
        }
        let key = DecodingKey::from_jwk(jwk)
            .map_err(|_| AuthError::invalid("the token's key cannot verify it"))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = allowed;
        validation.leeway = 30;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.audience]);
        if let Some(issuer) = &self.issuer {
            validation.set_issuer(&[issuer]);
        }
        let data = jsonwebtoken::decode::<Value>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            AuthError::invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::InvalidAudience => "the token is for another audience",
                ErrorKind::InvalidIssuer => "the token is from another issuer",
                ErrorKind::InvalidSignature => "the token's signature does not verify",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                _ => "the token does not verify",
            })
        })?;
        Ok(caller_of(data.claims))
    }
}

#[cfg(feature = "jwt")]
impl BearerVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, AuthError>> {
        let checked = self.check(token);
        Box::pin(async move { checked })
    }
}

#[cfg(feature = "jwt")]
/// The algorithms a key may verify: its own `alg` when it says, else its family's
/// asymmetric ones; none for a symmetric key.
fn allowed_algorithms(jwk: &Jwk) -> Vec<Algorithm> {
    let family: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(_) => &[Algorithm::ES256, Algorithm::ES384],
        AlgorithmParameters::OctetKeyPair(_) => &[Algorithm::EdDSA],
        _ => &[],
    };
    let declared = jwk
        .common
        .key_algorithm
        .and_then(|alg| Algorithm::try_from(alg).ok());
    match declared {
        Some(alg) => family.iter().copied().filter(|a| *a == alg).collect(),
        None => family.to_vec(),
    }
}

#[cfg(feature = "jwt")]
/// The caller a token's claims describe: `sub`, and the scopes of `scope` (space-separated,
/// RFC 8693 §4.2) or `scp` (a list).
fn caller_of(claims: Value) -> Caller {
    let subject = claims["sub"].as_str().unwrap_or_default().to_owned();
    let scopes = match (&claims["scope"], &claims["scp"]) {
        (Value::String(scope), _) => scope.split_whitespace().map(str::to_owned).collect(),
        (_, Value::Array(list)) => list
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
        (_, Value::String(scp)) => scp.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Caller {
        subject,
        scopes,
        claims,
    }
}

/// How a server authenticates its HTTP callers: the verifier, and what its protected resource
/// metadata says (RFC 9728).
///
/// ```
/// use agentio_mcp::auth::{AuthError, HttpAuth};
/// use agentio_tools::Caller;
/// use std::sync::Arc;
///
/// let verifier = |_: &str| -> Result<Caller, AuthError> { Err(AuthError::invalid("no tokens yet")) };
/// let auth = HttpAuth::new(Arc::new(verifier), "https://mcp.example.com/mcp")
///     .with_authorization_server("https://auth.example.com")
///     .with_scopes(["notes:read", "notes:write"]);
/// assert_eq!(auth.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(auth.metadata()["authorization_servers"][0], "https://auth.example.com");
/// ```
#[derive(Clone)]
pub struct HttpAuth {
    pub(crate) verifier: Arc<dyn BearerVerifier>,
    resource: String,
    authorization_servers: Vec<String>,
    scopes: Vec<String>,
    /// DPoP-bound tokens (feature `dpop`): which presentations are accepted, and the proofs.
    #[cfg(feature = "dpop")]
    dpop: Option<(DpopPolicy, Arc<crate::proofs::ProofChecker>)>,
}

/// Which tokens a server with DPoP ([`HttpAuth::with_dpop`], feature `dpop`) accepts.
#[cfg(feature = "dpop")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopPolicy {
    /// A DPoP-bound token with its proof (`Authorization: DPoP`), or a bearer token that is not
    /// bound (no `cnf.jkt`) as `Bearer`.
    Accepted,
    /// Only a DPoP-bound token with its proof (the metadata's
    /// `dpop_bound_access_tokens_required`).
    Required,
}

impl std::fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .finish_non_exhaustive()
    }
}

impl HttpAuth {
    /// Callers proven by `verifier`, for the server whose canonical URL is `resource` (the
    /// MCP endpoint, `https://host/mcp`: the audience tokens must be issued for).
    pub fn new(verifier: Arc<dyn BearerVerifier>, resource: impl Into<String>) -> Self {
        HttpAuth {
            verifier,
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes: Vec::new(),
            #[cfg(feature = "dpop")]
            dpop: None,
        }
    }

    /// Accepts DPoP-bound tokens (RFC 9449, MCP's SEP-1932; feature `dpop`): a token presented
    /// as `Authorization: DPoP <token>` with a proof of the key it is bound to (see
    /// [`crate::proofs`]), and, under [`DpopPolicy::Accepted`], unbound bearer tokens as
    /// before. A token bound to a key (a `cnf.jkt` claim in its caller's claims) presented as
    /// `Bearer` is refused either way (RFC 9449 §7.2). The metadata names the proof algorithms
    /// and whether bound tokens are required, and a refusal's challenge is `DPoP` (with
    /// `Bearer` beside it where bearer tokens are accepted).
    #[cfg(feature = "dpop")]
    #[must_use]
    pub fn with_dpop(mut self, policy: DpopPolicy) -> Self {
        let checker = crate::proofs::ProofChecker::new(&self.resource);
        self.dpop = Some((policy, Arc::new(checker)));
        self
    }

    /// Adds an authorization server the metadata names (where clients get tokens).
    #[must_use]
    pub fn with_authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes the metadata lists as supported.
    #[must_use]
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth Protected Resource Metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        #[cfg_attr(not(feature = "dpop"), allow(unused_mut))]
        let mut metadata = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
        });
        #[cfg(feature = "dpop")]
        if let Some((policy, _)) = &self.dpop {
            metadata["dpop_signing_alg_values_supported"] = json!(crate::proofs::DPOP_ALGORITHMS);
            metadata["dpop_bound_access_tokens_required"] = json!(*policy == DpopPolicy::Required);
        }
        metadata
    }

    /// Where the metadata is served: `/.well-known/oauth-protected-resource` inserted between
    /// the resource's host and path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The `WWW-Authenticate` value of a 401: the metadata's URL, and the error when a token
    /// was given and refused.
    pub(crate) fn challenge(&self, error: Option<&AuthError>) -> String {
        self.challenge_of("Bearer", error)
    }

    /// The challenges of a 401: `Bearer` ([`Self::challenge`]); with DPoP, `DPoP` naming its
    /// algorithms, and `Bearer` beside it where bearer tokens are still accepted. `error` goes
    /// on the challenge of the scheme the refused token came with (`dpop`: it came as `DPoP`).
    #[cfg_attr(not(feature = "dpop"), allow(unused_variables))]
    pub(crate) fn challenges(&self, error: Option<&AuthError>, dpop: bool) -> Vec<String> {
        #[cfg(feature = "dpop")]
        if let Some((policy, _)) = &self.dpop {
            let algorithms = crate::proofs::DPOP_ALGORITHMS.join(" ");
            let scheme = format!("DPoP algs=\"{algorithms}\",");
            let mut challenges = vec![self.challenge_of(&scheme, error.filter(|_| dpop))];
            if *policy == DpopPolicy::Accepted {
                challenges.push(self.challenge_of("Bearer", error.filter(|_| !dpop)));
            }
            return challenges;
        }
        vec![self.challenge(error)]
    }

    fn challenge_of(&self, scheme: &str, error: Option<&AuthError>) -> String {
        let mut value = format!("{scheme} resource_metadata=\"{}\"", self.metadata_url());
        if let Some(error) = error {
            let description: String = error
                .description
                .chars()
                .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
                .collect();
            value.push_str(&format!(
                ", error=\"{}\", error_description=\"{description}\"",
                error.error
            ));
        }
        value
    }

    /// Whether `path` asks for the metadata document.
    pub(crate) fn is_metadata_path(&self, path: &str) -> bool {
        let (_, resource_path) = split_origin(&self.resource);
        path == "/.well-known/oauth-protected-resource"
            || path == format!("/.well-known/oauth-protected-resource{resource_path}")
    }
}

/// `https://host:port` and `/path` of a URL (the path empty when there is none).
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

/// What [`crate::McpServer::serve_http`] answers each HTTP request with: rmcp's service, the
/// sessions it keeps (to answer a session's end, [`crate::front::answer`]), and the
/// protected resource when there is one. One `Arc` of it is copied a request.
pub(crate) struct Front {
    pub(crate) auth: Option<Arc<HttpAuth>>,
    pub(crate) service:
        rmcp::transport::StreamableHttpService<crate::McpServer, crate::sessions::Sessions>,
    pub(crate) sessions: Arc<crate::sessions::Sessions>,
    pub(crate) streams: crate::front::Streams,
}

fn respond(
    status: http::StatusCode,
    body: String,
    challenges: Vec<String>,
) -> http::Response<HttpBody> {
    let mut response = crate::front::json(status, body);
    // (A challenge is built of the metadata URL and a description without controls: always a
    // header value.)
    for challenge in challenges {
        if let Ok(challenge) = http::HeaderValue::try_from(challenge) {
            response
                .headers_mut()
                .append(http::header::WWW_AUTHENTICATE, challenge);
        }
    }
    response
}

/// One HTTP request to rmcp's service; through the protected resource when there is one: the
/// metadata document, or a verified bearer token (its caller put in the request's extensions).
pub(crate) async fn guard<B>(
    front: Arc<Front>,
    mut request: http::Request<B>,
) -> Result<http::Response<HttpBody>, std::convert::Infallible>
where
    B: http_body::Body + Send + 'static,
    B::Error: std::fmt::Display,
    B::Data: Send + 'static,
{
    // rmcp's own entry, by reference: its tower `call` copies the service (its configuration's
    // host and origin lists with it) and boxes the future, once for every request.
    let forward = async |request| {
        Ok(crate::front::answer(&front.service, &front.sessions, &front.streams, request).await)
    };
    let Some(auth) = &front.auth else {
        return forward(request).await;
    };
    if request.method() == http::Method::GET && auth.is_metadata_path(request.uri().path()) {
        return Ok(respond(
            http::StatusCode::OK,
            auth.metadata().to_string(),
            Vec::new(),
        ));
    }
    // The scheme (`Bearer`, or `DPoP` where the server takes DPoP-bound tokens) and the token.
    let presented = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            let dpop = scheme.eq_ignore_ascii_case("dpop") && auth.takes_dpop();
            (dpop || scheme.eq_ignore_ascii_case("bearer")).then(|| (dpop, token.trim()))
        })
        .filter(|(_, token)| !token.is_empty())
        .map(|(dpop, token)| (dpop, token.to_owned()));
    let unauthorized = |error: Option<&AuthError>, dpop: bool| {
        let body = json!({
            "error": error.map_or("invalid_request", |e| e.error),
            "error_description": error.map_or("a bearer token is required", |e| e.description.as_str()),
        });
        respond(
            http::StatusCode::UNAUTHORIZED,
            body.to_string(),
            auth.challenges(error, dpop),
        )
    };
    let Some((dpop, token)) = presented else {
        return Ok(unauthorized(None, false));
    };
    #[cfg(feature = "dpop")]
    let proof = match auth.proof(&request, &token, dpop) {
        Ok(proof) => proof,
        Err(error) => return Ok(unauthorized(Some(&error), dpop)),
    };
    match auth.verifier.verify(&token).await {
        Ok(caller) => {
            #[cfg(feature = "dpop")]
            if let Err(error) = auth.check_binding(&caller, proof.as_ref()) {
                return Ok(unauthorized(Some(&error), dpop));
            }
            request.extensions_mut().insert(Arc::new(caller));
            forward(request).await
        }
        Err(error) => Ok(unauthorized(Some(&error), dpop)),
    }
}

impl HttpAuth {
    /// Whether a token may come as `DPoP`.
    fn takes_dpop(&self) -> bool {
        #[cfg(feature = "dpop")]
        return self.dpop.is_some();
        #[cfg(not(feature = "dpop"))]
        false
    }

    /// A `DPoP` token's proof, checked; `None` for a bearer token, which the policy must
    /// accept.
    #[cfg(feature = "dpop")]
    fn proof<B>(
        &self,
        request: &http::Request<B>,
        token: &str,
        dpop: bool,
    ) -> Result<Option<crate::proofs::Proof>, AuthError> {
        let Some((policy, checker)) = &self.dpop else {
            return Ok(None);
        };
        if !dpop {
            return match policy {
                DpopPolicy::Required => Err(AuthError::invalid(
                    "this server takes only DPoP-bound tokens (Authorization: DPoP)",
                )),
                DpopPolicy::Accepted => Ok(None),
            };
        }
        let proofs = request.headers().get_all("dpop").iter();
        checker
            .check(request.method(), proofs, token)
            .map(Some)
            .map_err(AuthError::from)
    }

    /// A verified token's binding: bound to the proof's key when it came as `DPoP` (with
    /// `proof`, which is then taken: a replay is refused here), and not bound to any when it
    /// came as `Bearer`.
    #[cfg(feature = "dpop")]
    fn check_binding(
        &self,
        caller: &Caller,
        proof: Option<&crate::proofs::Proof>,
    ) -> Result<(), AuthError> {
        let Some((_, checker)) = &self.dpop else {
            return Ok(());
        };
        let bound = caller
            .claims
            .get("cnf")
            .and_then(|cnf| cnf.get("jkt"))
            .and_then(Value::as_str);
        match (proof, bound) {
            (Some(proof), Some(bound)) if proof.thumbprint == bound => {
                checker.admit(proof).map_err(AuthError::from)
            }
            (Some(_), _) => Err(AuthError::invalid(
                "the token is not bound to the DPoP proof's key",
            )),
            (None, Some(_)) => Err(AuthError::invalid(
                "a DPoP-bound token must be presented with its proof (Authorization: DPoP)",
            )),
            (None, None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_is_a_subject_under_its_issuer() {
        let caller = |subject: &str, issuer: Option<&str>| {
            let mut caller = Caller::new(subject);
            if let Some(issuer) = issuer {
                caller.claims = json!({ "iss": issuer });
            }
            caller_key(&caller)
        };
        assert_eq!(caller("alice", None), caller("alice", Some("")));
        assert_eq!(
            caller("alice", Some("https://a.example")),
            "17:https://a.examplealice"
        );
        let keys = [
            caller("alice", None),
            caller("alice", Some("https://a.example")),
            caller("alice", Some("https://b.example")),
            caller("bob", Some("https://a.example")),
            // The issuer's length keeps issuer and subject apart.
            caller("b", Some("a")),
            caller("", Some("ab")),
            // A subject without an issuer cannot pass for one with an issuer.
            caller("17:https://a.examplealice", None),
        ];
        let distinct: std::collections::HashSet<&String> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:?}");
    }

    #[test]
    fn the_challenge_names_the_metadata_and_the_error_without_quotes() {
        let none = |_: &str| -> Result<Caller, AuthError> { Err(AuthError::invalid("x")) };
        let auth = HttpAuth::new(Arc::new(none), "http://127.0.0.1:8080/mcp");
        assert_eq!(
            auth.challenge(None),
            "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""
        );
        let refused = AuthError::invalid("bad \"quote\"\n");
        assert!(
            auth.challenge(Some(&refused))
                .ends_with(", error=\"invalid_token\", error_description=\"bad quote\"")
        );
        assert!(auth.is_metadata_path("/.well-known/oauth-protected-resource"));
        assert!(auth.is_metadata_path("/.well-known/oauth-protected-resource/mcp"));
        assert!(!auth.is_metadata_path("/mcp"));
        assert_eq!(split_origin("https://h"), ("https://h", ""));
    }
}

#[cfg(all(test, feature = "jwt"))]
mod jwt_tests {
    use super::*;

    /// The test fixture's P-256 key (PKCS#8 DER; it protects nothing), and its public half.
    const PRIVATE: &[u8] = &[
        48, 129, 135, 2, 1, 0, 48, 19, 6, 7, 42, 134, 72, 206, 61, 2, 1, 6, 8, 42, 134, 72, 206,
        61, 3, 1, 7, 4, 109, 48, 107, 2, 1, 1, 4, 32, 214, 244, 76, 82, 212, 23, 239, 97, 156, 98,
        77, 116, 100, 193, 46, 179, 191, 101, 25, 123, 4, 220, 41, 139, 8, 67, 222, 157, 202, 63,
        95, 229, 161, 68, 3, 66, 0, 4, 160, 239, 205, 55, 249, 175, 185, 81, 207, 52, 255, 249,
        101, 213, 6, 235, 208, 12, 128, 236, 251, 66, 190, 219, 23, 79, 42, 75, 30, 124, 220, 54,
        237, 209, 176, 51, 28, 3, 127, 173, 87, 114, 9, 95, 29, 160, 182, 79, 49, 112, 45, 227, 31,
        157, 138, 154, 24, 169, 227, 207, 186, 93, 108, 61,
    ];
    const X: &str = "oO_NN_mvuVHPNP_5ZdUG69AMgOz7Qr7bF08qSx583DY";
    const Y: &str = "7dGwMxwDf61XcglfHaC2TzFwLeMfnYqaGKnjz7pdbD0";

    fn jwk(kid: &str) -> Value {
        json!({ "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "x": X, "y": Y })
    }

    fn verifier(keys: Vec<Value>) -> JwtVerifier {
        JwtVerifier::from_jwks_json(&json!({ "keys": keys }).to_string(), "aud-1")
            .unwrap()
            .with_issuer("iss-1")
    }

    fn sign(kid: Option<&str>, claims: Value) -> String {
        let mut header = jsonwebtoken::Header::new(Algorithm::ES256);
        header.kid = kid.map(str::to_owned);
        let key = jsonwebtoken::EncodingKey::from_ec_der(PRIVATE);
        jsonwebtoken::encode(&header, &claims, &key).unwrap()
    }

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    fn claims() -> Value {
        json!({ "sub": "u", "aud": "aud-1", "iss": "iss-1", "exp": now() + 600, "scope": "a" })
    }

    fn refusal(verifier: &JwtVerifier, token: &str) -> String {
        verifier.check(token).unwrap_err().description
    }

    #[test]
    fn a_token_is_verified_by_its_key_audience_issuer_and_times() {
        let one = verifier(vec![jwk("k1")]);
        assert_eq!(one.check(&sign(Some("k1"), claims())).unwrap().subject, "u");
        // No `kid`: the only key is the key.
        assert_eq!(one.check(&sign(None, claims())).unwrap().scopes, ["a"]);
        assert!(refusal(&one, &sign(Some("k9"), claims())).contains("not in the key set"));
        let two = verifier(vec![jwk("k1"), jwk("k2")]);
        assert!(two.check(&sign(Some("k2"), claims())).is_ok());
        assert!(refusal(&two, &sign(None, claims())).contains("names no key"));
        let empty = verifier(vec![]);
        assert!(refusal(&empty, &sign(None, claims())).contains("names no key"));

        let with = |key: &str, value: Value| {
            let mut claims = claims();
            claims[key] = value;
            sign(Some("k1"), claims)
        };
        assert!(refusal(&one, &with("iss", json!("iss-2"))).contains("another issuer"));
        assert!(refusal(&one, &with("aud", json!("aud-2"))).contains("another audience"));
        assert!(refusal(&one, &with("exp", json!(now() - 3600))).contains("expired"));
        assert!(refusal(&one, &with("nbf", json!(now() + 3600))).contains("not valid yet"));
        let mut no_exp = claims();
        no_exp.as_object_mut().unwrap().remove("exp");
        assert!(refusal(&one, &sign(Some("k1"), no_exp)).contains("lacks a required claim"));
    }

    #[test]
    fn only_a_keys_own_asymmetric_algorithms_verify() {
        let key = |extra: Value| -> Jwk {
            let mut jwk = json!({ "kty": "RSA", "n": "sXch", "e": "AQAB" });
            jwk.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value(jwk).unwrap()
        };
        let rsa = allowed_algorithms(&key(json!({})));
        assert_eq!(rsa.len(), 6);
        assert!(rsa.contains(&Algorithm::RS256) && rsa.contains(&Algorithm::PS512));
        assert_eq!(
            allowed_algorithms(&key(json!({ "alg": "RS384" }))),
            [Algorithm::RS384]
        );
        let ec: Jwk = serde_json::from_value(jwk("k")).unwrap();
        assert_eq!(allowed_algorithms(&ec), [Algorithm::ES256]);
        let oct: Jwk = serde_json::from_value(json!({ "kty": "oct", "k": "c2VjcmV0" })).unwrap();
        assert!(allowed_algorithms(&oct).is_empty());
        let ed: Jwk =
            serde_json::from_value(json!({ "kty": "OKP", "crv": "Ed25519", "x": X })).unwrap();
        assert_eq!(allowed_algorithms(&ed), [Algorithm::EdDSA]);
    }

    #[test]
    fn errors_and_verifiers_describe_themselves_without_secrets() {
        let error = AuthError::invalid("the token has expired");
        assert_eq!(error.to_string(), "invalid_token: the token has expired");
        let auth = HttpAuth::new(Arc::new(verifier(vec![])), "https://h/mcp")
            .with_authorization_server("https://a");
        assert_eq!(
            format!("{auth:?}"),
            "HttpAuth { resource: \"https://h/mcp\", authorization_servers: [\"https://a\"], .. }"
        );
        let shown = format!("{:?}", verifier(vec![jwk("k1")]));
        assert_eq!(
            shown,
            "JwtVerifier { keys: 1, audience: \"aud-1\", issuer: Some(\"iss-1\") }"
        );
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let caller = caller_of(json!({ "sub": "u", "scope": "a b" }));
        assert_eq!(
            (caller.subject.as_str(), caller.scopes.clone()),
            ("u", vec!["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(caller_of(json!({ "scp": ["x"] })).scopes, ["x"]);
        assert_eq!(caller_of(json!({ "scp": "x y" })).scopes, ["x", "y"]);
        assert!(caller_of(json!({})).scopes.is_empty());
    }
}

#[cfg(all(test, feature = "dpop"))]
mod dpop_tests {
    use super::*;
    use crate::dpop::Dpop;

    const URL: &str = "https://mcp.example.com/mcp";

    fn auth(policy: DpopPolicy) -> HttpAuth {
        let verifier = |_: &str| -> Result<Caller, AuthError> { Err(AuthError::invalid("none")) };
        HttpAuth::new(Arc::new(verifier), URL).with_dpop(policy)
    }

    fn bound_to(jkt: &str) -> Caller {
        let mut caller = Caller::new("c");
        caller.claims = json!({"cnf": {"jkt": jkt}});
        caller
    }

    fn request(proof: &str) -> http::Request<()> {
        http::Request::post(URL)
            .header("dpop", proof)
            .body(())
            .unwrap()
    }

    #[test]
    fn a_proof_is_taken_only_with_the_token_it_is_bound_to() {
        let auth = auth(DpopPolicy::Accepted);
        let dpop = Dpop::generate().unwrap();
        let proof = dpop.proof("POST", URL, Some("tok"), None).unwrap();
        let checked = || auth.proof(&request(&proof), "tok", true).unwrap().unwrap();
        // A token bound to another key: refused, and the proof is not spent...
        let refused = auth.check_binding(&bound_to("other"), Some(&checked()));
        assert_eq!(
            refused.unwrap_err().description,
            "the token is not bound to the DPoP proof's key"
        );
        let unbound = auth.check_binding(&Caller::new("c"), Some(&checked()));
        assert_eq!(
            unbound.unwrap_err().description,
            "the token is not bound to the DPoP proof's key"
        );
        // ... so with its own token it is taken, once.
        assert_eq!(
            auth.check_binding(&bound_to(dpop.thumbprint()), Some(&checked())),
            Ok(())
        );
        let again = auth
            .check_binding(&bound_to(dpop.thumbprint()), Some(&checked()))
            .unwrap_err();
        assert_eq!(again.error, "invalid_dpop_proof");
        assert_eq!(again.description, "the DPoP proof was used before");
        // A bearer presentation: an unbound token passes, a bound one does not.
        assert_eq!(auth.check_binding(&Caller::new("c"), None), Ok(()));
        let bearer = auth.check_binding(&bound_to("k"), None).unwrap_err();
        assert_eq!(bearer.error, "invalid_token");
        assert!(
            bearer
                .description
                .starts_with("a DPoP-bound token must be presented"),
            "{bearer}"
        );
        assert!(
            auth.proof(&request(&proof), "tok", false)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_server_requiring_dpop_refuses_a_bearer_token_and_says_so() {
        let auth = auth(DpopPolicy::Required);
        let refused = auth.proof(&request("x"), "tok", false).unwrap_err();
        assert_eq!(
            refused.description,
            "this server takes only DPoP-bound tokens (Authorization: DPoP)"
        );
        assert_eq!(auth.metadata()["dpop_bound_access_tokens_required"], true);
        assert_eq!(
            auth.metadata()["dpop_signing_alg_values_supported"][0],
            "ES256"
        );
        let challenges = auth.challenges(Some(&refused), false);
        assert_eq!(challenges.len(), 1, "no bearer challenge: {challenges:?}");
        assert!(
            challenges[0].starts_with("DPoP algs=\"ES256 ES384 RS256"),
            "{}",
            challenges[0]
        );
        assert!(
            !challenges[0].contains("error="),
            "the error was a bearer one: {}",
            challenges[0]
        );
        let challenges = auth.challenges(Some(&refused), true);
        assert!(
            challenges[0].contains("error=\"invalid_token\""),
            "{}",
            challenges[0]
        );
    }

    #[test]
    fn without_dpop_nothing_changes() {
        let verifier = |_: &str| -> Result<Caller, AuthError> { Err(AuthError::invalid("none")) };
        let auth = HttpAuth::new(Arc::new(verifier), URL);
        assert!(!auth.takes_dpop());
        assert!(auth.proof(&request("x"), "tok", true).unwrap().is_none());
        assert_eq!(auth.check_binding(&bound_to("k"), None), Ok(()));
        assert!(
            auth.metadata()
                .get("dpop_bound_access_tokens_required")
                .is_none()
        );
        assert_eq!(auth.challenges(None, true), vec![auth.challenge(None)]);
        let accepted = super::dpop_tests::auth(DpopPolicy::Accepted);
        assert!(accepted.takes_dpop());
        assert_eq!(
            accepted.metadata()["dpop_bound_access_tokens_required"],
            false
        );
        let both = accepted.challenges(None, false);
        assert_eq!(both.len(), 2);
        assert!(
            both[0].starts_with("DPoP ") && both[1].starts_with("Bearer "),
            "{both:?}"
        );
        // A refusal's error goes on the challenge of the scheme the token came with.
        let refused = AuthError {
            error: "invalid_dpop_proof",
            description: "x".into(),
        };
        let as_dpop = accepted.challenges(Some(&refused), true);
        assert!(
            as_dpop[0].contains("error=\"invalid_dpop_proof\""),
            "{as_dpop:?}"
        );
        assert!(!as_dpop[1].contains("error="), "{as_dpop:?}");
        let as_bearer = accepted.challenges(Some(&refused), false);
        assert!(!as_bearer[0].contains("error="), "{as_bearer:?}");
        assert!(
            as_bearer[1].contains("error=\"invalid_dpop_proof\""),
            "{as_bearer:?}"
        );
    }
}
