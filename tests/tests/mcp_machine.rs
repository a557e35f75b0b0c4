//! A client with no user (`agentio_mcp::machine`, feature `oauth`): a private key JWT and a
//! workload's JWT authorize at an authorization server the MCP server names, and the client
//! then calls the server with the token. The authorization server here is a loopback stub
//! that records every request, so each test can say what was sent, and what was not.
#![cfg(feature = "oauth")]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use agentio_mcp::auth::{AuthError, HttpAuth};
use agentio_mcp::machine::{self, MachineAuthError, MachineGrant};
use agentio_mcp::{McpClient, McpServer};
use agentio_tools::Caller;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::mcp_common::runtime;

/// A P-256 key (PKCS#8) made for these tests, and its public half.
const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgMtlVQznjtxi6Jkth
+G8Wkt8eYfjfaTjxFOjBsDVD4e6hRANCAARFl1EUBdqPa4ETqsP6jrG4PC8FOdP1
0Eie9Ta8P9JxU+rr5io6KdKlWptzNzakWv9e/faIKJIXcP4NwhseLfHP
-----END PRIVATE KEY-----
";
const EC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAERZdRFAXaj2uBE6rD+o6xuDwvBTnT
9dBInvU2vD/ScVPq6+YqOinSpVqbczc2pFr/Xv32iCiSF3D+DcIbHi3xzw==
-----END PUBLIC KEY-----
";

/// The token the stub issues, and the caller the MCP server's verifier makes of it.
const TOKEN: &str = "machine-token-1";

/// How the stub's token endpoint answers.
#[derive(Clone, Copy)]
enum Answer {
    Token,
    /// A token response without `scope`: the scopes asked for were granted.
    TokenWithoutScope,
    /// A token response of exactly `MAX_TOKEN_RESPONSE` bytes.
    AtLimit,
    Refuse,
    /// A refusal whose words would drive a terminal, and run on for 10 KB.
    RefuseHostile,
    Huge,
    NotJson,
    ServerError,
    /// DPoP (RFC 9449 §8): a request whose proof lacks the nonce `m1` is refused
    /// `use_dpop_nonce` with it; one with it gets a token issued as `DPoP`. (Its tests need
    /// the `dpop` feature; the stub answers it either way.)
    #[cfg_attr(not(feature = "dpop"), allow(dead_code))]
    DpopNonce,
}

/// The claims of a DPoP proof, its signature checked with the key it carries.
fn proof_claims(proof: &str) -> Value {
    let header = jsonwebtoken::decode_header(proof).unwrap();
    assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
    let key = jsonwebtoken::DecodingKey::from_jwk(header.jwk.as_ref().unwrap()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .unwrap()
        .claims
}

/// One request the stub received: its method and path, and its body.
#[derive(Clone, Debug)]
struct Seen {
    line: String,
    body: String,
    /// Its `DPoP` header (a proof), if any.
    dpop: Option<String>,
}

/// A loopback authorization server: metadata (RFC 8414) built by `metadata` from its own
/// issuer URL, and a token endpoint answering `answer`.
struct Stub {
    issuer: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Stub {
    async fn start(answer: Answer, metadata: impl Fn(&str) -> Value + Send + 'static) -> Stub {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (record, own) = (seen.clone(), issuer.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let Some(request) = read_request(&mut stream).await else {
                    continue;
                };
                record.lock().unwrap().push(request.clone());
                let (status, body) = if request
                    .line
                    .starts_with("GET /.well-known/oauth-authorization-server")
                {
                    (200, metadata(&own).to_string())
                } else if request.line.starts_with("POST /token") {
                    match answer {
                        Answer::Token => (200, json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600, "scope": "notes:read"}).to_string()),
                        Answer::TokenWithoutScope => (200, json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}).to_string()),
                        Answer::AtLimit => {
                            let token = json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}).to_string();
                            let padding = machine::MAX_TOKEN_RESPONSE - token.len();
                            (200, format!("{token}{}", " ".repeat(padding)))
                        }
                        Answer::Refuse => (400, json!({"error": "invalid_grant", "error_description": "the assertion has expired"}).to_string()),
                        Answer::RefuseHostile => (400, json!({"error": "invalid_grant\u{1b}[2J", "error_description": format!("\u{1b}]0;owned\u{7}{}", "x".repeat(10_000))}).to_string()),
                        Answer::Huge => (200, format!("{{\"access_token\":\"{}\"}}", "x".repeat(100_000))),
                        Answer::NotJson => (200, "<html>sign in</html>".to_owned()),
                        Answer::ServerError => (500, "upstream down".to_owned()),
                        Answer::DpopNonce => {
                            let nonce = request.dpop.as_deref().map(proof_claims).and_then(|c| c.get("nonce").cloned());
                            if nonce == Some(json!("m1")) {
                                (200, json!({"access_token": TOKEN, "token_type": "DPoP", "expires_in": 3600}).to_string())
                            } else {
                                (400, json!({"error": "use_dpop_nonce"}).to_string())
                            }
                        }
                    }
                } else {
                    (404, String::new())
                };
                let head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
                    body.len(),
                    if matches!(answer, Answer::DpopNonce) {
                        "DPoP-Nonce: m1\r\n"
                    } else {
                        ""
                    }
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
            }
        });
        Stub { issuer, seen }
    }

    /// The token requests received, their forms decoded.
    fn token_requests(&self) -> Vec<Vec<(String, String)>> {
        let seen = self.seen.lock().unwrap();
        let posts = seen.iter().filter(|r| r.line.starts_with("POST /token"));
        posts
            .map(|r| {
                form_urlencoded::parse(r.body.as_bytes())
                    .into_owned()
                    .collect()
            })
            .collect()
    }
}

/// A stub's metadata offering `grants`, with the usual endpoints.
fn offering(grants: &'static [&'static str]) -> impl Fn(&str) -> Value + Send + 'static {
    move |issuer| {
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "grant_types_supported": grants,
            "token_endpoint_auth_methods_supported": ["private_key_jwt", "none"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        })
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let length: usize = crate::mcp_common::header(&head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let dpop = crate::mcp_common::header(&head, "dpop").map(str::to_owned);
    Some(Seen {
        line: head.lines().next().unwrap_or_default().to_owned(),
        body: String::from_utf8_lossy(&buffer[head_end..]).into_owned(),
        dpop,
    })
}

/// The fixture registry and `auth.whoami`, behind a verifier that knows [`TOKEN`], naming
/// `issuer` as its authorization server.
async fn mcp_server(issuer: &str) -> String {
    let mut registry = agentio_tests::mcp_fixture::registry();
    agentio_tests::mcp_fixture::add_whoami(&mut registry);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = |token: &str| match token {
        TOKEN => Ok(Caller::new("machine-1").with_scopes(["notes:read"])),
        _ => Err(AuthError::invalid("unknown token")),
    };
    let auth = HttpAuth::new(Arc::new(verifier), url.clone())
        .with_authorization_server(issuer)
        .with_scopes(["notes:read"]);
    let server = McpServer::new(registry).unwrap().with_auth(auth);
    tokio::spawn(server.serve_http(listener));
    url
}

/// `auth.whoami` through a client authorized by `manager`.
async fn whoami(url: &str, manager: rmcp::transport::AuthorizationManager) -> Value {
    let client = McpClient::builder()
        .http_authorized(url, manager)
        .await
        .unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("auth.whoami"))
        .await
        .unwrap();
    client.close().await.ok();
    result.structured_content.unwrap()
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn scopes() -> Vec<String> {
    vec!["notes:read".to_owned()]
}

#[test]
fn a_private_key_jwt_client_authorizes_with_a_fresh_signed_assertion_and_calls() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::Token, offering(&["client_credentials"])).await;
        let url = mcp_server(&stub.issuer).await;
        let grant = MachineGrant::private_key_jwt("svc-1", EC_KEY.as_bytes(), "ES256").unwrap();
        let manager = machine::authorize(&url, &grant, &scopes()).await.unwrap();
        assert_eq!(whoami(&url, manager).await["subject"], "machine-1");
        machine::authorize(&url, &grant, &scopes()).await.unwrap();

        let requests = stub.token_requests();
        assert_eq!(requests.len(), 2);
        let mut jtis = Vec::new();
        for form in &requests {
            assert_eq!(field(form, "grant_type"), Some("client_credentials"));
            assert_eq!(
                field(form, "client_assertion_type"),
                Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            );
            // The assertion names the client (RFC 7523 §3): no `client_id` beside it.
            assert_eq!(field(form, "client_id"), None);
            assert_eq!(field(form, "resource"), Some(url.as_str()));
            assert_eq!(field(form, "scope"), Some("notes:read"));
            let assertion = field(form, "client_assertion").unwrap();
            let key = jsonwebtoken::DecodingKey::from_ec_pem(EC_PUBLIC.as_bytes()).unwrap();
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
            validation.set_audience(&[stub.issuer.as_str()]);
            validation.set_issuer(&["svc-1"]);
            let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
                .expect("signed by the key, for the issuer")
                .claims;
            assert_eq!(claims["sub"], "svc-1");
            let lifetime = claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap();
            assert_eq!(lifetime, machine::ASSERTION_LIFETIME.as_secs());
            let jti = claims["jti"].as_str().unwrap().to_owned();
            assert_eq!(jti.len(), 32, "{jti}");
            jtis.push(jti);
        }
        assert_ne!(jtis[0], jtis[1], "each assertion is fresh");
    });
}

#[test]
fn a_workloads_jwt_is_the_grant_sent_as_it_is() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::Token, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&stub.issuer).await;
        let grant = MachineGrant::jwt_bearer("eyJ.workload.jwt").with_client_id("wl-7");
        assert!(!format!("{grant:?}").contains("workload"), "{grant:?}");
        let manager = machine::authorize(&url, &grant, &[]).await.unwrap();
        assert_eq!(whoami(&url, manager).await["subject"], "machine-1");
        let requests = stub.token_requests();
        assert_eq!(requests.len(), 1);
        let form = &requests[0];
        assert_eq!(field(form, "grant_type"), Some(machine::JWT_BEARER_GRANT));
        assert_eq!(field(form, "assertion"), Some("eyJ.workload.jwt"));
        assert_eq!(field(form, "client_id"), Some("wl-7"));
        assert_eq!(field(form, "resource"), Some(url.as_str()));
        assert_eq!(field(form, "scope"), None, "no scope asked, none sent");
        assert_eq!(field(form, "client_assertion"), None);
    });
}

#[cfg(feature = "dpop")]
#[test]
fn a_machine_grant_with_dpop_proves_its_key_and_answers_the_nonce() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::DpopNonce, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&stub.issuer).await;
        let dpop = agentio_mcp::dpop::Dpop::generate().unwrap();
        let grant = MachineGrant::jwt_bearer("eyJ.workload.jwt").with_dpop(&dpop);
        let manager = machine::authorize(&url, &grant, &[]).await.unwrap();
        assert_eq!(manager.get_access_token().await.unwrap(), TOKEN);
        assert!(dpop.is_bound(TOKEN), "issued as DPoP");
        let posts: Vec<Seen> = stub
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.line.starts_with("POST /token"))
            .cloned()
            .collect();
        assert_eq!(posts.len(), 2, "refused for the nonce, then with it");
        let first = proof_claims(posts[0].dpop.as_deref().unwrap());
        let second = proof_claims(posts[1].dpop.as_deref().unwrap());
        assert_eq!(first.get("nonce"), None);
        assert_eq!(second["nonce"], "m1");
        for claims in [&first, &second] {
            assert_eq!(claims["htm"], "POST");
            assert_eq!(claims["htu"], format!("{}/token", stub.issuer));
        }
        assert_ne!(first["jti"], second["jti"]);
        assert_eq!(posts[0].body, posts[1].body, "the same grant both times");
        // Without the key, no proof.
        let plain = Stub::start(Answer::Token, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&plain.issuer).await;
        machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.workload.jwt"), &[])
            .await
            .unwrap();
        assert!(plain.seen.lock().unwrap().iter().all(|r| r.dpop.is_none()));
    });
}

/// [`mcp_server`] taking DPoP-bound tokens under `policy`: [`TOKEN`] bound to the key whose
/// thumbprint is `jkt`, `plain-token` bound to none.
#[cfg(feature = "dpop")]
async fn dpop_server(issuer: &str, policy: agentio_mcp::auth::DpopPolicy, jkt: &str) -> String {
    let mut registry = agentio_tests::mcp_fixture::registry();
    agentio_tests::mcp_fixture::add_whoami(&mut registry);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jkt = jkt.to_owned();
    let verifier = move |token: &str| match token {
        TOKEN => {
            let mut caller = Caller::new("machine-1").with_scopes(["notes:read"]);
            caller.claims = json!({"sub": "machine-1", "cnf": {"jkt": jkt}});
            Ok(caller)
        }
        "plain-token" => Ok(Caller::new("plain").with_scopes(["notes:read"])),
        _ => Err(AuthError::invalid("unknown token")),
    };
    let auth = HttpAuth::new(Arc::new(verifier), url.clone())
        .with_authorization_server(issuer)
        .with_scopes(["notes:read"])
        .with_dpop(policy);
    let server = McpServer::new(registry).unwrap().with_auth(auth);
    tokio::spawn(server.serve_http(listener));
    url
}

/// One raw HTTP/1.1 request to `url` with `headers`: its status and whole answer.
#[cfg(feature = "dpop")]
async fn raw(url: &str, method: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let address = url.trim_start_matches("http://").split('/').next().unwrap();
    let path = &url[url.find(address).unwrap() + address.len()..];
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    crate::mcp_common::raw_http(address, &request).await
}

#[cfg(feature = "dpop")]
#[test]
fn a_dpop_client_calls_a_dpop_server_with_a_fresh_proof_each_request() {
    use agentio_mcp::auth::DpopPolicy;
    runtime().block_on(async {
        let stub = Stub::start(Answer::DpopNonce, offering(&[machine::JWT_BEARER_GRANT])).await;
        let dpop = agentio_mcp::dpop::Dpop::generate().unwrap();
        let url = dpop_server(&stub.issuer, DpopPolicy::Required, dpop.thumbprint()).await;
        let grant = MachineGrant::jwt_bearer("eyJ.workload.jwt").with_dpop(&dpop);
        let manager = machine::authorize(&url, &grant, &[]).await.unwrap();
        let client = McpClient::builder()
            .http_authorized_dpop(&url, manager, &dpop)
            .await
            .unwrap();
        // Several requests, each with a proof of its own (a proof used twice is refused).
        for _ in 0..3 {
            let result = client
                .call_tool(CallToolRequestParams::new("auth.whoami"))
                .await
                .unwrap();
            assert_eq!(result.structured_content.unwrap()["subject"], "machine-1");
        }
        client.close().await.ok();

        // The same token from a client with another key is not its to use.
        let thief = agentio_mcp::dpop::Dpop::generate().unwrap();
        let proof = thief.proof("POST", &url, Some(TOKEN), None).unwrap();
        let authorization = format!("DPoP {TOKEN}");
        let (status, answer) = raw(
            &url,
            "POST",
            &[("Authorization", &authorization), ("DPoP", &proof)],
        )
        .await;
        assert_eq!(status, 401, "{answer}");
        assert!(
            answer.contains("the token is not bound to the DPoP proof's key"),
            "{answer}"
        );
        // Its own proof, replayed.
        let proof = dpop.proof("POST", &url, Some(TOKEN), None).unwrap();
        let headers = [
            ("Authorization", authorization.as_str()),
            ("DPoP", proof.as_str()),
        ];
        let (status, answer) = raw(&url, "POST", &headers).await;
        assert_ne!(status, 401, "{answer}");
        let (status, answer) = raw(&url, "POST", &headers).await;
        assert_eq!(status, 401, "{answer}");
        assert!(answer.contains("\"invalid_dpop_proof\""), "{answer}");
        assert!(
            answer.contains("the DPoP proof was used before"),
            "{answer}"
        );
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("www-authenticate: dpop algs=\"es256 "),
            "{answer}"
        );
        assert!(answer.contains("error=\"invalid_dpop_proof\""), "{answer}");
        // No proof at all; and a bearer token where only bound ones are taken.
        let (status, answer) = raw(&url, "POST", &[("Authorization", &authorization)]).await;
        assert_eq!(status, 401, "{answer}");
        assert!(
            answer.contains("a DPoP proof is required with a DPoP token"),
            "{answer}"
        );
        let (status, answer) = raw(&url, "POST", &[("Authorization", "Bearer plain-token")]).await;
        assert_eq!(status, 401, "{answer}");
        assert!(
            answer.contains("this server takes only DPoP-bound tokens"),
            "{answer}"
        );
        assert!(
            !answer.contains("WWW-Authenticate: Bearer"),
            "no bearer challenge: {answer}"
        );
        // The metadata says so.
        let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        let (status, answer) = raw(&metadata, "GET", &[]).await;
        assert_eq!(status, 200, "{answer}");
        assert!(
            answer.contains("\"dpop_bound_access_tokens_required\":true"),
            "{answer}"
        );
        assert!(
            answer.contains("\"dpop_signing_alg_values_supported\":[\"ES256\""),
            "{answer}"
        );
    });
}

#[cfg(feature = "dpop")]
#[test]
fn where_bearer_tokens_are_accepted_a_bound_one_still_needs_its_proof() {
    use agentio_mcp::auth::DpopPolicy;
    runtime().block_on(async {
        let dpop = agentio_mcp::dpop::Dpop::generate().unwrap();
        let url = dpop_server(
            "http://127.0.0.1:9",
            DpopPolicy::Accepted,
            dpop.thumbprint(),
        )
        .await;
        // An unbound bearer token passes (rmcp then asks for the session it lacks).
        let (status, answer) = raw(&url, "POST", &[("Authorization", "Bearer plain-token")]).await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer.contains("Session ID is required"), "{answer}");
        let bound = format!("Bearer {TOKEN}");
        let (status, answer) = raw(&url, "POST", &[("Authorization", &bound)]).await;
        assert_eq!(status, 401, "{answer}");
        assert!(
            answer.contains("a DPoP-bound token must be presented with its proof"),
            "{answer}"
        );
        // Both challenges, the error on the scheme the token came with.
        let lower = answer.to_ascii_lowercase();
        let dpop_line = lower
            .lines()
            .find(|l| l.starts_with("www-authenticate: dpop"))
            .unwrap();
        let bearer_line = lower
            .lines()
            .find(|l| l.starts_with("www-authenticate: bearer"))
            .unwrap();
        assert!(!dpop_line.contains("error="), "{dpop_line}");
        assert!(
            bearer_line.contains("error=\"invalid_token\""),
            "{bearer_line}"
        );
        // No token: both challenges, neither with an error.
        let (status, answer) = raw(&url, "POST", &[]).await;
        assert_eq!(status, 401, "{answer}");
        let challenges: Vec<&str> = answer
            .lines()
            .filter(|l| l.to_ascii_lowercase().starts_with("www-authenticate:"))
            .collect();
        assert_eq!(challenges.len(), 2, "{answer}");
        assert!(challenges.iter().all(|c| !c.contains("error=")), "{answer}");
        let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        let (_, answer) = raw(&metadata, "GET", &[]).await;
        assert!(
            answer.contains("\"dpop_bound_access_tokens_required\":false"),
            "{answer}"
        );
    });
}

#[test]
fn a_token_obtained_elsewhere_is_used_as_it_is() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::Token, offering(&[])).await;
        let url = mcp_server(&stub.issuer).await;
        let token = json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 600});
        let manager = machine::with_token(&url, "svc-9", token).await.unwrap();
        assert_eq!(whoami(&url, manager).await["subject"], "machine-1");
        assert!(stub.token_requests().is_empty());
        let metadata = machine::authorization_server(&url).await.unwrap();
        assert_eq!(metadata.issuer.as_deref(), Some(stub.issuer.as_str()));
        assert_eq!(metadata.token_endpoint, format!("{}/token", stub.issuer));
        let err = machine::with_token(&url, "svc-9", json!({"token": 1}))
            .await
            .err()
            .expect("refused");
        assert!(matches!(err, MachineAuthError::Response { .. }), "{err}");
    });
}

#[test]
fn a_refused_grant_is_returned_as_the_server_said_it_and_not_retried() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::Refuse, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&stub.issuer).await;
        let grant = MachineGrant::jwt_bearer("eyJ.expired.jwt");
        let err = machine::authorize(&url, &grant, &scopes())
            .await
            .err()
            .expect("refused");
        match &err {
            MachineAuthError::Refused {
                status,
                error,
                description,
            } => {
                assert_eq!(*status, 400);
                assert_eq!(error, "invalid_grant");
                assert_eq!(description.as_deref(), Some("the assertion has expired"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string()
                .contains("invalid_grant: the assertion has expired"),
            "{err}"
        );
        assert_eq!(
            stub.token_requests().len(),
            1,
            "one request, no retry, no other grant"
        );
    });
}

#[test]
fn unusable_answers_are_named_by_what_is_wrong() {
    runtime().block_on(async {
        for (answer, status, says) in [
            (Answer::Huge, 200, "over 65536 bytes"),
            (Answer::NotJson, 200, "not a token response"),
            (Answer::ServerError, 500, "without an OAuth error"),
        ] {
            let stub = Stub::start(answer, offering(&[machine::JWT_BEARER_GRANT])).await;
            let url = mcp_server(&stub.issuer).await;
            let grant = MachineGrant::jwt_bearer("eyJ.a.b");
            let err = machine::authorize(&url, &grant, &[])
                .await
                .err()
                .expect("refused");
            match &err {
                MachineAuthError::Response { status: s, reason } => {
                    assert_eq!(*s, status, "{err}");
                    assert!(reason.contains(says), "{err}");
                }
                other => panic!("{other:?}"),
            }
        }
    });
}

#[test]
fn what_the_authorization_server_does_not_offer_is_not_asked_for() {
    runtime().block_on(async {
        let refused = |err: MachineAuthError, what: &str, wanted: &str| match err {
            MachineAuthError::NotOffered {
                what: w, wanted: x, ..
            } => {
                assert_eq!((w, x.as_str()), (what, wanted));
            }
            other => panic!("{other:?}"),
        };
        let stub = Stub::start(Answer::Token, offering(&["authorization_code"])).await;
        let url = mcp_server(&stub.issuer).await;
        let err = machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.a.b"), &[])
            .await
            .err()
            .expect("refused");
        assert!(
            err.to_string().contains("(it offers: authorization_code)"),
            "{err}"
        );
        refused(err, "grant type", machine::JWT_BEARER_GRANT);

        let grant = MachineGrant::private_key_jwt("svc-1", EC_KEY.as_bytes(), "ES256").unwrap();
        let metadata = |methods: Value, algs: Value| {
            move |issuer: &str| {
                json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": methods,
                    "token_endpoint_auth_signing_alg_values_supported": algs,
                })
            }
        };
        // A server taking the grant, but not the private key JWT, or not the key's algorithm.
        for (methods, algs, what, wanted) in [
            (
                "client_secret_basic",
                "ES256",
                "client authentication",
                "private_key_jwt",
            ),
            ("private_key_jwt", "RS256", "signing algorithm", "ES256"),
        ] {
            let other = Stub::start(Answer::Token, metadata(json!([methods]), json!([algs]))).await;
            let url = mcp_server(&other.issuer).await;
            let err = machine::authorize(&url, &grant, &[])
                .await
                .err()
                .expect("refused");
            refused(err, what, wanted);
            assert!(other.token_requests().is_empty(), "nothing sent");
        }
        assert!(stub.token_requests().is_empty(), "nothing sent");
    });
}

#[test]
fn no_credential_goes_to_a_token_endpoint_in_the_clear() {
    runtime().block_on(async {
        let metadata = |issuer: &str| {
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": "http://auth.example/token",
            })
        };
        let stub = Stub::start(Answer::Token, metadata).await;
        let url = mcp_server(&stub.issuer).await;
        let err = machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.a.b"), &[])
            .await
            .err()
            .expect("refused");
        match &err {
            MachineAuthError::InsecureTokenEndpoint { endpoint } => {
                assert_eq!(endpoint, "http://auth.example/token");
            }
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn a_server_without_authorization_metadata_is_named() {
    runtime().block_on(async {
        let registry = agentio_tests::mcp_fixture::registry();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(McpServer::new(registry).unwrap().serve_http(listener));
        let url = format!("http://{addr}/mcp");
        let err = machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.a.b"), &[])
            .await
            .err()
            .expect("refused");
        assert!(
            matches!(&err, MachineAuthError::NoMetadata { server } if *server == url),
            "{err:?}"
        );
    });
}

#[test]
fn a_key_that_cannot_sign_is_refused_when_the_grant_is_made() {
    let key_error =
        |pem: &[u8], algorithm: &str| match MachineGrant::private_key_jwt("c", pem, algorithm) {
            Err(MachineAuthError::Key { reason }) => reason,
            other => panic!("{algorithm}: {other:?}"),
        };
    assert!(key_error(b"not a key", "ES256").contains("not a ES256 key"));
    assert!(key_error(EC_KEY.as_bytes(), "RS256").contains("not a RS256 key"));
    assert!(key_error(EC_KEY.as_bytes(), "HS256").contains("shared secret"));
    assert!(key_error(EC_KEY.as_bytes(), "ES999").contains("not a JOSE signing algorithm"));
    // A P-256 key under ES384 parses as an EC key and fails only when it signs: caught here.
    let reason = key_error(EC_KEY.as_bytes(), "ES384");
    assert!(
        reason.contains("signing the client assertion failed"),
        "{reason}"
    );
    let grant = MachineGrant::private_key_jwt("svc-1", EC_KEY.as_bytes(), "ES256").unwrap();
    assert_eq!(grant.grant_type(), "client_credentials");
    assert_eq!(grant.client_id(), Some("svc-1"));
    // `with_client_id` is a JWT bearer grant's: a private key JWT keeps its own.
    assert_eq!(grant.with_client_id("other").client_id(), Some("svc-1"));
    let debug = format!(
        "{:?}",
        MachineGrant::private_key_jwt("svc-1", EC_KEY.as_bytes(), "ES256").unwrap()
    );
    assert!(
        !debug.contains("PRIVATE") && !debug.contains("MIGH"),
        "{debug}"
    );
}

#[test]
fn the_scopes_granted_are_the_answers_or_else_those_asked_for() {
    runtime().block_on(async {
        let asked = vec!["notes:read".to_owned(), "notes:write".to_owned()];
        // The answer names fewer than were asked: those are what the manager holds.
        let stub = Stub::start(Answer::Token, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&stub.issuer).await;
        let grant = MachineGrant::jwt_bearer("eyJ.a.b");
        let manager = machine::authorize(&url, &grant, &asked).await.unwrap();
        assert_eq!(manager.get_current_scopes().await, ["notes:read"]);
        // The answer names none: the ones asked for were granted (RFC 6749 §5.1).
        let stub = Stub::start(
            Answer::TokenWithoutScope,
            offering(&[machine::JWT_BEARER_GRANT]),
        )
        .await;
        let url = mcp_server(&stub.issuer).await;
        let manager = machine::authorize(&url, &grant, &asked).await.unwrap();
        assert_eq!(manager.get_current_scopes().await, asked);
        assert_eq!(whoami(&url, manager).await["subject"], "machine-1");
        // Nothing asked, nothing named: nothing held.
        let manager = machine::authorize(&url, &grant, &[]).await.unwrap();
        assert!(manager.get_current_scopes().await.is_empty());
    });
}

#[test]
fn an_answer_of_exactly_the_bound_is_read() {
    runtime().block_on(async {
        let stub = Stub::start(Answer::AtLimit, offering(&[machine::JWT_BEARER_GRANT])).await;
        let url = mcp_server(&stub.issuer).await;
        let manager = machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.a.b"), &[])
            .await
            .unwrap();
        assert_eq!(whoami(&url, manager).await["subject"], "machine-1");
    });
}

/// An RSA key (PKCS#8) and an Ed25519 key (PKCS#8), made for these tests, and their public halves.
const RSA_KEY: &str = include_str!("fixtures/machine/rsa.pem");
const RSA_PUBLIC: &str = include_str!("fixtures/machine/rsa.pub");
const ED_KEY: &str = include_str!("fixtures/machine/ed25519.pem");
const ED_PUBLIC: &str = include_str!("fixtures/machine/ed25519.pub");

#[test]
fn rsa_and_ed25519_keys_sign_assertions_too() {
    runtime().block_on(async {
        use jsonwebtoken::{Algorithm, DecodingKey};
        let cases = [
            (
                "RS256",
                RSA_KEY,
                DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap(),
                Algorithm::RS256,
            ),
            (
                "PS256",
                RSA_KEY,
                DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap(),
                Algorithm::PS256,
            ),
            (
                "EdDSA",
                ED_KEY,
                DecodingKey::from_ed_pem(ED_PUBLIC.as_bytes()).unwrap(),
                Algorithm::EdDSA,
            ),
        ];
        for (name, key, public, algorithm) in cases {
            let metadata = move |issuer: &str| {
                json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "token_endpoint_auth_signing_alg_values_supported": [name],
                })
            };
            let stub = Stub::start(Answer::Token, metadata).await;
            let url = mcp_server(&stub.issuer).await;
            let grant = MachineGrant::private_key_jwt("svc-2", key.as_bytes(), name).unwrap();
            machine::authorize(&url, &grant, &[]).await.unwrap();
            let form = stub.token_requests().remove(0);
            let mut validation = jsonwebtoken::Validation::new(algorithm);
            validation.set_audience(&[stub.issuer.as_str()]);
            let assertion = field(&form, "client_assertion").unwrap();
            let claims = jsonwebtoken::decode::<Value>(assertion, &public, &validation)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .claims;
            assert_eq!(claims["iss"], "svc-2", "{name}");
        }
    });
}

#[test]
fn a_grant_shows_what_it_is_and_an_error_its_cause() {
    let grant = MachineGrant::private_key_jwt("svc-1", EC_KEY.as_bytes(), "ES256").unwrap();
    let debug = format!("{grant:?}");
    assert!(
        debug.contains("client_credentials") && debug.contains("svc-1"),
        "{debug}"
    );
    let debug = format!("{:?}", MachineGrant::jwt_bearer("eyJ.secret.jwt"));
    assert!(
        debug.contains(machine::JWT_BEARER_GRANT) && !debug.contains("secret"),
        "{debug}"
    );
    use std::error::Error;
    let discovery = MachineAuthError::Discovery(rmcp::transport::AuthError::NoAuthorizationSupport);
    assert!(discovery.source().is_some());
    let store = MachineAuthError::Store(rmcp::transport::AuthError::AuthorizationRequired);
    assert!(store.source().is_some());
    let refused = MachineAuthError::Refused {
        status: 400,
        error: "invalid_grant".into(),
        description: None,
    };
    assert!(refused.source().is_none());
}

#[test]
fn a_refusals_words_are_shown_escaped_and_bounded() {
    runtime().block_on(async {
        let stub = Stub::start(
            Answer::RefuseHostile,
            offering(&[machine::JWT_BEARER_GRANT]),
        )
        .await;
        let url = mcp_server(&stub.issuer).await;
        let err = machine::authorize(&url, &MachineGrant::jwt_bearer("eyJ.a.b"), &[])
            .await
            .err()
            .expect("refused");
        let shown = err.to_string();
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(shown.contains("invalid_grant\\u{1b}[2J"), "{shown}");
        assert!(shown.contains("\\u{1b}]0;owned\\u{7}"), "{shown}");
        assert!(shown.len() < 700, "{} bytes", shown.len());
        assert!(shown.ends_with('…'), "{shown}");
    });
}
