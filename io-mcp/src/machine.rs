//! A client with no user behind it: the OAuth grants a machine authorizes with (feature
//! `oauth`).
//!
//! A user-driven client authorizes through rmcp's [`OAuthState`] (a browser, PKCE, a code);
//! a machine client with a client secret through its
//! [`authenticate_client_credentials`]. This module adds the two machine grants rmcp leaves
//! out of a RustCrypto build, and hands the token to rmcp's [`AuthorizationManager`], so a
//! machine client then connects exactly as a user-driven one does
//! ([`Connect::http_authorized`]):
//!
//! - [`MachineGrant::private_key_jwt`] (SEP-1046, RFC 7523 §2.2; with the `jwt` feature): the
//!   client credentials grant, the client authenticating with a JWT it signs with its private
//!   key (`iss` and `sub` its client ID, `aud` the authorization server's issuer, a five-minute
//!   `exp`, a fresh `jti`) instead of a shared secret. rmcp has this grant behind its
//!   `auth-client-credentials-jwt` feature, which builds `jsonwebtoken` on aws-lc; two
//!   crypto backends in one `jsonwebtoken` panic at the first signature, so agent-io signs
//!   with the RustCrypto backend its JWT verification already uses.
//! - [`MachineGrant::jwt_bearer`] (SEP-1933 workload identity federation, RFC 7523 §2.1): the
//!   JWT a workload's platform issued it (a Kubernetes service account token, a cloud
//!   workload identity) as the grant itself, with no secret to keep.
//! - [`with_token`]: a token obtained elsewhere, such as the access token of rmcp's
//!   enterprise-managed exchange (`rmcp::transport::auth::enterprise`, SEP-990: an identity
//!   provider's ID token exchanged for an ID-JAG, the ID-JAG for the MCP server's token).
//!
//! [`authorize`] discovers the server's authorization server through rmcp (RFC 9728 protected
//! resource metadata, then RFC 8414 metadata, with rmcp's address checks), and refuses, before
//! anything is sent, a server that published no metadata, an authorization server that does
//! not offer the grant (or, for a private key JWT, the `private_key_jwt` method or the key's
//! algorithm) where its metadata lists what it offers, and a token endpoint that is not
//! `https` (plain `http` only where both the MCP server and the token endpoint are loopback,
//! as rmcp allows). The token request names the MCP server as its `resource` (RFC 8707) and
//! carries the scopes asked for.
//!
//! Decisions, where the specifications leave a choice:
//! - **No retry, no other grant.** A refused token request ([`MachineAuthError::Refused`]:
//!   `invalid_grant`, `invalid_scope`, `unauthorized_client`, ...) is returned as the
//!   authorization server said it, and nothing else is tried: a workload's identity or a
//!   client's key does not get better by asking again, and falling back to another grant
//!   would hide a misconfiguration (SEP-1933).
//! - **Bounded.** The token request has [`TOKEN_TIMEOUT`] and its answer [`MAX_TOKEN_RESPONSE`]
//!   bytes; redirects are not followed (OAuth 2.1 token endpoints do not redirect). What the
//!   authorization server wrote into an error (its `error` and `error_description`, the
//!   endpoints and methods its metadata names) is shown with control characters escaped and
//!   cut at 256 characters.
//! - **Expiry.** These grants give no refresh token: when the token expires, rmcp's manager
//!   answers `AuthorizationRequired` and the client sees [`ClientError::Unauthorized`]; a
//!   machine client authorizes again (a fresh assertion) and reconnects.
//!
//! [`OAuthState`]: rmcp::transport::auth::OAuthState
//! [`authenticate_client_credentials`]: rmcp::transport::auth::OAuthState::authenticate_client_credentials
//! [`Connect::http_authorized`]: crate::Connect::http_authorized
//! [`ClientError::Unauthorized`]: crate::ClientError::Unauthorized

use std::fmt;
use std::time::Duration;

use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{AuthError, AuthorizationMetadata, OAuthState, OAuthTokenResponse};
use serde_json::Value;

use crate::token::Unanswered;
#[cfg(feature = "jwt")]
use crate::token::now_secs;
pub use crate::token::{MAX_TOKEN_RESPONSE, TOKEN_TIMEOUT};

/// How long a signed client assertion is good for: five minutes (RFC 7523 §3 asks for an
/// expiry; a short one limits what a leaked assertion is worth).
pub const ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How a machine client gets its token. Its `Debug` shows no key and no assertion.
pub struct MachineGrant {
    kind: Kind,
    /// The key its token is bound to (feature `dpop`), if any.
    #[cfg(feature = "dpop")]
    dpop: Option<crate::dpop::Dpop>,
}

enum Kind {
    #[cfg(feature = "jwt")]
    PrivateKeyJwt {
        client_id: String,
        key: jsonwebtoken::EncodingKey,
        algorithm: jsonwebtoken::Algorithm,
    },
    JwtBearer {
        assertion: String,
        client_id: Option<String>,
    },
}

impl MachineGrant {
    /// The client credentials grant, authenticated by a JWT signed with `key_pem` (a PKCS#8
    /// or SEC1 EC key, a PKCS#1 or PKCS#8 RSA key, or a PKCS#8 Ed25519 key, in PEM) under
    /// `algorithm` (its JOSE name: `ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...). The key
    /// is read now, so a key that does not fit the algorithm is an error here, not at the
    /// first token request. HMAC algorithms (`HS256`, ...) are refused: they sign with a
    /// shared secret, which is `client_secret_jwt`, not a private key.
    #[cfg(feature = "jwt")]
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        key_pem: &[u8],
        algorithm: &str,
    ) -> Result<Self, MachineAuthError> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let unusable = |reason: String| MachineAuthError::Key { reason };
        let algorithm: Algorithm = algorithm
            .parse()
            .map_err(|_| unusable(format!("`{algorithm}` is not a JOSE signing algorithm")))?;
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(key_pem),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(key_pem),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(key_pem),
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                return Err(unusable(format!(
                    "`{algorithm:?}` signs with a shared secret, not a private key"
                )));
            }
            _ => {
                return Err(unusable(format!(
                    "`{algorithm:?}` is not supported for a client assertion"
                )));
            }
        }
        .map_err(|error| {
            unusable(format!(
                "the key is not a {algorithm:?} key in PEM: {error}"
            ))
        })?;
        let grant = MachineGrant {
            kind: Kind::PrivateKeyJwt {
                client_id: client_id.into(),
                key,
                algorithm,
            },
            #[cfg(feature = "dpop")]
            dpop: None,
        };
        // Sign once now: a key of another curve or size than the algorithm's parses as PEM
        // and fails only when it signs.
        grant.assertion("https://authorization-server.invalid")?;
        Ok(grant)
    }

    /// The JWT bearer grant: `assertion` (a JWT issued to this workload, whose audience is
    /// the authorization server) is the grant. It is sent as it is; the authorization
    /// server verifies it.
    pub fn jwt_bearer(assertion: impl Into<String>) -> Self {
        MachineGrant {
            kind: Kind::JwtBearer {
                assertion: assertion.into(),
                client_id: None,
            },
            #[cfg(feature = "dpop")]
            dpop: None,
        }
    }

    /// The client ID sent with a JWT bearer grant, for an authorization server that registers
    /// its workloads as public clients (`token_endpoint_auth_method` `none`). A private key
    /// JWT grant has its client ID already.
    #[cfg_attr(not(feature = "jwt"), allow(irrefutable_let_patterns))]
    pub fn with_client_id(mut self, id: impl Into<String>) -> Self {
        if let Kind::JwtBearer { client_id, .. } = &mut self.kind {
            *client_id = Some(id.into());
        }
        self
    }

    /// The token bound to `dpop`'s key (feature `dpop`; RFC 9449, SEP-1932): the token request
    /// carries a proof (and is made once more with the authorization server's nonce when it
    /// asks for one), and a token issued as `DPoP` is then sent by
    /// [`Connect::http_authorized_dpop`](crate::Connect::http_authorized_dpop) with a proof on
    /// every request. See [`crate::dpop`].
    #[cfg(feature = "dpop")]
    pub fn with_dpop(mut self, dpop: &crate::dpop::Dpop) -> Self {
        self.dpop = Some(dpop.clone());
        self
    }

    /// The `grant_type` this grant asks for.
    pub fn grant_type(&self) -> &'static str {
        match &self.kind {
            #[cfg(feature = "jwt")]
            Kind::PrivateKeyJwt { .. } => "client_credentials",
            Kind::JwtBearer { .. } => JWT_BEARER_GRANT,
        }
    }

    /// The client ID the grant names, if any.
    pub fn client_id(&self) -> Option<&str> {
        match &self.kind {
            #[cfg(feature = "jwt")]
            Kind::PrivateKeyJwt { client_id, .. } => Some(client_id),
            Kind::JwtBearer { client_id, .. } => client_id.as_deref(),
        }
    }

    /// A fresh client assertion for `audience` (private key JWT only).
    #[cfg(feature = "jwt")]
    fn assertion(&self, audience: &str) -> Result<String, MachineAuthError> {
        let Kind::PrivateKeyJwt {
            client_id,
            key,
            algorithm,
        } = &self.kind
        else {
            return Err(MachineAuthError::Key {
                reason: "only a private key JWT grant signs an assertion".to_owned(),
            });
        };
        let now = now_secs();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME.as_secs(),
            "jti": random_id(),
        });
        jsonwebtoken::encode(&jsonwebtoken::Header::new(*algorithm), &claims, key).map_err(
            |error| MachineAuthError::Key {
                reason: format!("signing the client assertion failed: {error}"),
            },
        )
    }

    /// The token request's form, for the authorization server `metadata` describes.
    #[cfg_attr(not(feature = "jwt"), allow(unused_variables))]
    fn form(
        &self,
        metadata: &AuthorizationMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<String, MachineAuthError> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", self.grant_type());
        match &self.kind {
            #[cfg(feature = "jwt")]
            Kind::PrivateKeyJwt { .. } => {
                // The authorization server's issuer identifies it (RFC 7523 §3; the token
                // endpoint where it publishes none). No `client_id`: the assertion's `sub`
                // names the client (RFC 7523 §3).
                let audience = metadata
                    .issuer
                    .as_deref()
                    .unwrap_or(&metadata.token_endpoint);
                form.append_pair("client_assertion_type", JWT_CLIENT_ASSERTION);
                form.append_pair("client_assertion", &self.assertion(audience)?);
            }
            Kind::JwtBearer {
                assertion,
                client_id,
            } => {
                form.append_pair("assertion", assertion);
                if let Some(client_id) = client_id {
                    form.append_pair("client_id", client_id);
                }
            }
        }
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        form.append_pair("resource", resource);
        Ok(form.finish())
    }

    /// Whether the authorization server, as its metadata describes it, takes this grant.
    fn check_offered(&self, metadata: &AuthorizationMetadata) -> Result<(), MachineAuthError> {
        let listed = |field: &str| -> Option<Vec<String>> {
            let values = metadata.additional_fields.get(field)?.as_array()?;
            Some(
                values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            )
        };
        let refuse = |what: &'static str, wanted: String, offered: Vec<String>| {
            // The server's words, shown: escaped and bounded, at most 32 of them.
            let offered = offered.iter().take(32).map(|o| remote(o)).collect();
            Err(MachineAuthError::NotOffered {
                what,
                wanted,
                offered,
            })
        };
        if let Some(offered) = listed("grant_types_supported")
            && !offered.iter().any(|g| g == self.grant_type())
        {
            return refuse("grant type", self.grant_type().to_owned(), offered);
        }
        #[cfg(feature = "jwt")]
        if let Kind::PrivateKeyJwt { algorithm, .. } = &self.kind {
            if let Some(offered) = listed("token_endpoint_auth_methods_supported")
                && !offered.iter().any(|m| m == "private_key_jwt")
            {
                return refuse(
                    "client authentication",
                    "private_key_jwt".to_owned(),
                    offered,
                );
            }
            let name = format!("{algorithm:?}");
            if let Some(offered) = listed("token_endpoint_auth_signing_alg_values_supported")
                && !offered.contains(&name)
            {
                return refuse("signing algorithm", name, offered);
            }
        }
        Ok(())
    }
}

impl fmt::Debug for MachineGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MachineGrant")
            .field("grant_type", &self.grant_type())
            .field("client_id", &self.client_id())
            .finish_non_exhaustive()
    }
}

/// Authorizes a machine client for the MCP server at `server_url` with `grant`, asking for
/// `scopes`: discovers its authorization server, makes the token request, and returns rmcp's
/// manager holding the token, for [`Connect::http_authorized`](crate::Connect::http_authorized).
///
/// ```no_run
/// use agentio_mcp::McpClient;
/// use agentio_mcp::machine::{self, MachineGrant};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let url = "https://mcp.example.com/mcp";
/// // The workload's identity token, as its platform mounts it.
/// let jwt = std::fs::read_to_string("/var/run/secrets/tokens/mcp")?;
/// let manager = machine::authorize(url, &MachineGrant::jwt_bearer(jwt.trim()), &[]).await?;
/// let client = McpClient::builder().http_authorized(url, manager).await?;
/// # Ok(()) }
/// ```
pub async fn authorize(
    server_url: &str,
    grant: &MachineGrant,
    scopes: &[String],
) -> Result<AuthorizationManager, MachineAuthError> {
    let (state, metadata) = discover(server_url).await?;
    grant.check_offered(&metadata)?;
    let endpoint = token_endpoint(server_url, &metadata)?;
    let form = grant.form(&metadata, server_url, scopes)?;
    #[cfg(feature = "dpop")]
    let token = request_token(&endpoint, form, grant.dpop.as_ref()).await?;
    #[cfg(not(feature = "dpop"))]
    let token = request_token(&endpoint, form).await?;
    seed(state, grant.client_id().unwrap_or_default(), token, scopes).await
}

/// rmcp's manager for the MCP server at `server_url`, holding `token`, a token response
/// obtained elsewhere (`{"access_token": ..., "token_type": "Bearer", "expires_in": ...}`),
/// issued to `client_id`: such as the access token of rmcp's enterprise-managed exchange.
/// The server's authorization server is discovered as [`authorize`] does, so the token is
/// bound to the issuer it came from (rmcp drops tokens of another issuer).
pub async fn with_token(
    server_url: &str,
    client_id: &str,
    token: Value,
) -> Result<AuthorizationManager, MachineAuthError> {
    let (state, _) = discover(server_url).await?;
    seed(state, client_id, token, &[]).await
}

/// The metadata of the MCP server's authorization server, discovered as [`authorize`] does:
/// what a flow this module does not run needs, such as the issuer and token endpoint of
/// rmcp's enterprise-managed exchange.
pub async fn authorization_server(
    server_url: &str,
) -> Result<AuthorizationMetadata, MachineAuthError> {
    Ok(discover(server_url).await?.1)
}

/// rmcp's manager for the MCP server at `server_url`, holding the access token rmcp's
/// enterprise-managed exchange (SEP-990) obtained for `client_id` at the server's
/// authorization server.
///
/// ```no_run
/// use agentio_mcp::McpClient;
/// use agentio_mcp::machine;
/// use agentio_mcp::rmcp::transport::auth::default_oauth_http_client;
/// use agentio_mcp::rmcp::transport::auth::enterprise::{
///     EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
/// };
///
/// // `id_token`: the user's, from the enterprise identity provider; `authentication`: how
/// // this client authenticates at the MCP server's authorization server (such as
/// // `EmaClientAuthentication::ClientSecretBasic`).
/// # async fn run(id_token: &str, authentication: EmaClientAuthentication) -> Result<(), Box<dyn std::error::Error>> {
/// let url = "https://mcp.example.com/mcp";
/// let resource_as = machine::authorization_server(url).await?;
/// let idp = EmaAuthorizationServer::new("https://idp.example", "https://idp.example/token", "idp-client");
/// let resource_as = EmaAuthorizationServer::new(
///     resource_as.issuer.unwrap_or_default(), resource_as.token_endpoint, "mcp-client",
/// ).with_client_authentication(authentication);
/// let http = default_oauth_http_client()?;
/// let token = EmaExchangeRequest::new_with_id_token(idp, resource_as, url, id_token)
///     .exchange(&http, &http)
///     .await?;
/// let manager = machine::with_enterprise_token(url, "mcp-client", &token).await?;
/// let client = McpClient::builder().http_authorized(url, manager).await?;
/// # Ok(()) }
/// ```
pub async fn with_enterprise_token(
    server_url: &str,
    client_id: &str,
    token: &rmcp::transport::auth::enterprise::EmaAccessToken,
) -> Result<AuthorizationManager, MachineAuthError> {
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(expires_in) = token.expires_in {
        response["expires_in"] = expires_in.as_secs().into();
    }
    // The scopes granted, in a stable order (rmcp's set has none); none is an empty list.
    let mut scopes: Vec<&str> = token.scopes.iter().map(String::as_str).collect();
    scopes.sort_unstable();
    response["scope"] = scopes.join(" ").into();
    with_token(server_url, client_id, response).await
}

/// The server's authorization server, through rmcp's discovery, and rmcp's OAuth state for
/// the server, not yet authorized.
async fn discover(
    server_url: &str,
) -> Result<(OAuthState, AuthorizationMetadata), MachineAuthError> {
    let state = OAuthState::new(server_url, None)
        .await
        .map_err(MachineAuthError::Discovery)?;
    let OAuthState::Unauthorized(manager) = &state else {
        unreachable!("a new OAuth state is unauthorized");
    };
    let resolution = manager
        .resolve_metadata()
        .await
        .map_err(MachineAuthError::Discovery)?;
    if !resolution.source.is_discovered() {
        return Err(MachineAuthError::NoMetadata {
            server: server_url.to_owned(),
        });
    }
    Ok((state, resolution.metadata))
}

/// The token endpoint, if it may carry a credential: `https`, or `http` where the MCP
/// server and the endpoint are both loopback (a development setup).
fn token_endpoint(
    server_url: &str,
    metadata: &AuthorizationMetadata,
) -> Result<reqwest::Url, MachineAuthError> {
    let insecure = || MachineAuthError::InsecureTokenEndpoint {
        endpoint: remote(&metadata.token_endpoint),
    };
    let endpoint = reqwest::Url::parse(&metadata.token_endpoint).map_err(|_| insecure())?;
    let loopback = |url: &reqwest::Url| {
        url.host_str().is_some_and(|host| {
            let ip = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || ip
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
    };
    let server = reqwest::Url::parse(server_url).map_err(|_| insecure())?;
    let allowed = endpoint.scheme() == "https"
        || (endpoint.scheme() == "http" && loopback(&endpoint) && loopback(&server));
    if !allowed || !endpoint.username().is_empty() || endpoint.password().is_some() {
        return Err(insecure());
    }
    Ok(endpoint)
}

/// Posts `form` to `endpoint` and reads its answer: a token response, or the OAuth error it
/// refused with. With a DPoP key, the request carries a proof (see [`crate::dpop`]).
async fn request_token(
    endpoint: &reqwest::Url,
    form: String,
    #[cfg(feature = "dpop")] dpop: Option<&crate::dpop::Dpop>,
) -> Result<Value, MachineAuthError> {
    let failed = |reason: String| MachineAuthError::Request {
        endpoint: endpoint.to_string(),
        reason,
    };
    let client = crate::token::client(TOKEN_TIMEOUT).map_err(|error| failed(error.to_string()))?;
    let send = |proof: Option<String>| {
        let mut request = client
            .post(endpoint.clone())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(form.clone());
        if let Some(proof) = proof {
            request = request.header("DPoP", proof);
        }
        async move {
            crate::token::exchange(request)
                .await
                .map_err(|unanswered| match unanswered {
                    Unanswered::Failed(reason) => failed(reason),
                    Unanswered::TooLarge { status } => MachineAuthError::Response {
                        status,
                        reason: format!("the answer is over {MAX_TOKEN_RESPONSE} bytes"),
                    },
                })
        }
    };
    #[cfg(feature = "dpop")]
    let answer = match dpop {
        Some(dpop) => {
            dpop.token_exchange(endpoint.as_str(), |proof| send(Some(proof)))
                .await?
        }
        None => send(None).await?,
    };
    #[cfg(not(feature = "dpop"))]
    let answer = send(None).await?;
    let status = answer.status().as_u16();
    let body = answer.body();
    if !(200..300).contains(&status) {
        let answer: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(remote);
        return Err(match text("error") {
            Some(error) => MachineAuthError::Refused {
                status,
                error,
                description: text("error_description"),
            },
            None => MachineAuthError::Response {
                status,
                reason: "a refusal without an OAuth error".to_owned(),
            },
        });
    }
    serde_json::from_slice(body).map_err(|error| MachineAuthError::Response {
        status,
        reason: format!("not a token response: {error}"),
    })
}

#[cfg(feature = "dpop")]
impl From<crate::dpop::DpopError> for MachineAuthError {
    fn from(error: crate::dpop::DpopError) -> Self {
        MachineAuthError::Key {
            reason: error.to_string(),
        }
    }
}

/// rmcp's manager, holding `token` (a token response's JSON) through rmcp's own door for
/// credentials obtained elsewhere (`OAuthState::set_credentials`: the granted scopes recorded,
/// the token bound to the issuer, the client ID configured).
async fn seed(
    mut state: OAuthState,
    client_id: &str,
    mut token: Value,
    asked: &[String],
) -> Result<AuthorizationManager, MachineAuthError> {
    // A response without `scope` granted the scopes asked for (RFC 6749 §5.1); rmcp reads the
    // granted scopes from the response alone, so they are written into it.
    if let Some(fields) = token.as_object_mut()
        && !fields.contains_key("scope")
        && !asked.is_empty()
    {
        fields.insert("scope".to_owned(), asked.join(" ").into());
    }
    let token: OAuthTokenResponse =
        serde_json::from_value(token).map_err(|error| MachineAuthError::Response {
            status: 200,
            reason: format!("not a token response: {error}"),
        })?;
    // rmcp's door discovers the authorization server again (a second pair of metadata
    // requests, once per authorization): its manager records the scopes granted only there.
    state
        .set_credentials(client_id, token)
        .await
        .map_err(MachineAuthError::Store)?;
    state
        .into_authorization_manager()
        .ok_or(MachineAuthError::Store(AuthError::AuthorizationRequired))
}

/// Text an authorization server sent, as an error shows it: control characters escaped (a
/// terminal reading the error is not the server's to drive), at most 256 characters.
fn remote(text: &str) -> String {
    agentio_core::limits::bounded_display(&text.escape_debug(), 256)
}

/// 128 random bits, hex: a `jti`.
#[cfg(feature = "jwt")]
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // No entropy source is a broken machine; an all-zero `jti` would be replayed, so fail
    // loudly rather than sign one.
    getrandom::fill(&mut bytes).expect("the operating system's random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a machine client is not authorized. Each says what failed and where; none is retried.
#[derive(Debug)]
#[non_exhaustive]
pub enum MachineAuthError {
    /// rmcp's discovery of the server's authorization server failed.
    Discovery(AuthError),
    /// The server published no protected resource or authorization server metadata.
    NoMetadata {
        /// The MCP server.
        server: String,
    },
    /// The authorization server's metadata lists what it offers, and this is not in it.
    /// (What the server sent is shown escaped and bounded, here and in the other variants.)
    NotOffered {
        /// `grant type`, `client authentication` or `signing algorithm`.
        what: &'static str,
        /// What the grant needs.
        wanted: String,
        /// What the authorization server offers.
        offered: Vec<String>,
    },
    /// The token endpoint would carry the credential in the clear (not `https`, and not
    /// loopback with a loopback MCP server), or has credentials in its URL.
    InsecureTokenEndpoint {
        /// The endpoint the metadata named.
        endpoint: String,
    },
    /// The key or algorithm cannot sign a client assertion.
    Key {
        /// Why.
        reason: String,
    },
    /// The token request did not get an answer (connection, timeout).
    Request {
        /// The token endpoint.
        endpoint: String,
        /// What failed.
        reason: String,
    },
    /// The authorization server refused the grant, with an OAuth error (RFC 6749 §5.2).
    Refused {
        /// The HTTP status.
        status: u16,
        /// `invalid_grant`, `invalid_scope`, `unauthorized_client`, `invalid_client`, ...
        error: String,
        /// The server's `error_description`.
        description: Option<String>,
    },
    /// The answer is not a token response (nor an OAuth error), or is too large.
    Response {
        /// The HTTP status.
        status: u16,
        /// What is wrong with it.
        reason: String,
    },
    /// rmcp's manager did not take the token.
    Store(AuthError),
}

impl fmt::Display for MachineAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineAuthError::Discovery(error) => {
                write!(f, "discovering the authorization server failed: {error}")
            }
            MachineAuthError::NoMetadata { server } => write!(
                f,
                "`{server}` publishes no authorization metadata (RFC 9728 / RFC 8414): \
                 there is no authorization server to ask"
            ),
            MachineAuthError::NotOffered {
                what,
                wanted,
                offered,
            } => write!(
                f,
                "the authorization server does not offer the {what} `{wanted}` (it offers: {})",
                offered.join(", ")
            ),
            MachineAuthError::InsecureTokenEndpoint { endpoint } => write!(
                f,
                "the token endpoint `{endpoint}` is not https (plain http only on loopback, \
                 for a loopback server), so no credential is sent to it"
            ),
            MachineAuthError::Key { reason } => write!(f, "client assertion key: {reason}"),
            MachineAuthError::Request { endpoint, reason } => {
                write!(f, "the token request to `{endpoint}` failed: {reason}")
            }
            MachineAuthError::Refused {
                status,
                error,
                description,
            } => {
                write!(
                    f,
                    "the authorization server refused the grant ({status}): {error}"
                )?;
                match description {
                    Some(description) => write!(f, ": {description}"),
                    None => Ok(()),
                }
            }
            MachineAuthError::Response { status, reason } => {
                write!(
                    f,
                    "the token endpoint's answer ({status}) is unusable: {reason}"
                )
            }
            MachineAuthError::Store(error) => {
                write!(
                    f,
                    "the authorization manager did not take the token: {error}"
                )
            }
        }
    }
}

impl std::error::Error for MachineAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MachineAuthError::Discovery(error) | MachineAuthError::Store(error) => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(token_endpoint: &str) -> AuthorizationMetadata {
        let mut metadata = AuthorizationMetadata::default();
        metadata.token_endpoint = token_endpoint.to_owned();
        metadata
    }

    #[test]
    fn a_credential_goes_only_to_https_or_between_loopback_hosts() {
        let allowed =
            |server: &str, endpoint: &str| token_endpoint(server, &metadata(endpoint)).is_ok();
        assert!(allowed(
            "https://mcp.example/mcp",
            "https://auth.example/token"
        ));
        assert!(allowed(
            "http://127.0.0.1:9/mcp",
            "https://auth.example/token"
        ));
        for loopback in [
            "http://127.0.0.1:8/token",
            "http://localhost:8/token",
            "http://LOCALHOST/token",
            "http://[::1]:8/token",
            "http://127.9.9.9/token",
        ] {
            assert!(allowed("http://localhost:9/mcp", loopback), "{loopback}");
            assert!(allowed("http://[::1]:9/mcp", loopback), "{loopback}");
            // A loopback endpoint named by a server elsewhere is not trusted with a secret.
            assert!(!allowed("https://mcp.example/mcp", loopback), "{loopback}");
        }
        assert!(!allowed(
            "http://127.0.0.1:9/mcp",
            "http://auth.example/token"
        ));
        assert!(!allowed("http://127.0.0.1:9/mcp", "http://10.0.0.1/token"));
        assert!(!allowed(
            "https://mcp.example/mcp",
            "ftp://auth.example/token"
        ));
        assert!(!allowed(
            "https://mcp.example/mcp",
            "https://user:pw@auth.example/token"
        ));
        assert!(!allowed(
            "https://mcp.example/mcp",
            "https://user@auth.example/token"
        ));
        assert!(!allowed("https://mcp.example/mcp", "not a url"));
        assert!(!allowed("not a url", "http://127.0.0.1/token"));
        let err =
            token_endpoint("https://m.example/mcp", &metadata("http://a.example/t")).unwrap_err();
        assert!(
            matches!(&err, MachineAuthError::InsecureTokenEndpoint { endpoint } if endpoint == "http://a.example/t")
        );
    }

    #[test]
    fn a_jwt_bearer_form_carries_the_assertion_scopes_and_resource() {
        let grant = MachineGrant::jwt_bearer("a.b.c").with_client_id("wl");
        let form = grant
            .form(
                &metadata("https://a.example/t"),
                "https://m.example/mcp",
                &["x".into(), "y".into()],
            )
            .unwrap();
        let fields: Vec<(String, String)> = form_urlencoded::parse(form.as_bytes())
            .into_owned()
            .collect();
        let expected = [
            ("grant_type", JWT_BEARER_GRANT),
            ("assertion", "a.b.c"),
            ("client_id", "wl"),
            ("scope", "x y"),
            ("resource", "https://m.example/mcp"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(fields, expected);
        assert_eq!(grant.client_id(), Some("wl"));
        assert_eq!(MachineGrant::jwt_bearer("a.b.c").client_id(), None);
    }

    #[test]
    fn an_offer_is_checked_only_where_the_metadata_lists_one() {
        let grant = MachineGrant::jwt_bearer("a.b.c");
        let mut listed = metadata("https://a.example/t");
        assert!(
            grant.check_offered(&listed).is_ok(),
            "nothing listed: nothing refused"
        );
        listed.additional_fields.insert(
            "grant_types_supported".into(),
            serde_json::json!(["client_credentials", JWT_BEARER_GRANT]),
        );
        assert!(grant.check_offered(&listed).is_ok());
        listed.additional_fields.insert(
            "grant_types_supported".into(),
            serde_json::json!(["client_credentials"]),
        );
        assert!(matches!(
            grant.check_offered(&listed),
            Err(MachineAuthError::NotOffered {
                what: "grant type",
                ..
            })
        ));
    }

    #[test]
    fn the_errors_say_what_failed() {
        let refused = MachineAuthError::Refused {
            status: 401,
            error: "invalid_client".into(),
            description: None,
        };
        assert_eq!(
            refused.to_string(),
            "the authorization server refused the grant (401): invalid_client"
        );
        let offered = MachineAuthError::NotOffered {
            what: "grant type",
            wanted: "x".into(),
            offered: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            offered.to_string(),
            "the authorization server does not offer the grant type `x` (it offers: a, b)"
        );
        let missing = MachineAuthError::NoMetadata {
            server: "https://m.example/mcp".into(),
        };
        assert!(
            missing
                .to_string()
                .starts_with("`https://m.example/mcp` publishes no authorization metadata")
        );
    }
}
