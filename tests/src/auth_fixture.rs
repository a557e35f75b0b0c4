//! A test authorization server's keys: one P-256 key pair (a fixture, generated for these
//! tests and used nowhere else), its JWKS, and tokens minted with it.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

/// The issuer the fixture's tokens name.
pub const ISSUER: &str = "https://auth.agentio.test";

/// The key id of the fixture's key.
pub const KID: &str = "agentio-test-1";

/// The private key, PKCS#8 DER, base64 (a test fixture: it protects nothing).
const PRIVATE_PKCS8: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1vRMUtQX72GcYk10ZMEus79lGXsE3CmLCEPenco/X+WhRANCAASg7803+a+5Uc80//ll1Qbr0AyA7PtCvtsXTypLHnzcNu3RsDMcA3+tV3IJXx2gtk8xcC3jH52Kmhip48+6XWw9";

/// The public key set an MCP server is configured with.
pub fn jwks() -> String {
    json!({ "keys": [{
        "kty": "EC", "crv": "P-256", "kid": KID, "alg": "ES256", "use": "sig",
        "x": "oO_NN_mvuVHPNP_5ZdUG69AMgOz7Qr7bF08qSx583DY",
        "y": "7dGwMxwDf61XcglfHaC2TzFwLeMfnYqaGKnjz7pdbD0",
    }]})
    .to_string()
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in text.bytes().filter(|b| *b != b'=') {
        let value = ALPHABET.iter().position(|a| *a == byte).expect("base64") as u32;
        buffer = (buffer << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

/// A token for `audience`, valid from now for `lifetime_secs` (negative: expired that long
/// ago), with `scope` (space-separated) and subject `sub`.
pub fn token(audience: &str, lifetime_secs: i64, scope: &str, sub: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(KID.into());
    let claims = json!({
        "iss": ISSUER, "sub": sub, "aud": audience, "scope": scope,
        "iat": now, "exp": now + lifetime_secs,
    });
    let key = EncodingKey::from_ec_der(&base64_decode(PRIVATE_PKCS8));
    jsonwebtoken::encode(&header, &claims, &key).expect("the fixture key signs")
}

/// `server` as a protected resource at `url`: tokens from the fixture's key for `url`, and
/// `fixture.record` requiring `notes:write`.
pub fn protect(
    server: agentio_mcp::McpServer,
    url: &str,
) -> Result<agentio_mcp::McpServer, String> {
    use agentio_mcp::auth::{HttpAuth, JwtVerifier};
    let verifier = JwtVerifier::from_jwks_json(&jwks(), url)?.with_issuer(ISSUER);
    let auth = HttpAuth::new(std::sync::Arc::new(verifier), url)
        .with_authorization_server(ISSUER)
        .with_scopes(["notes:read", "notes:write"]);
    Ok(server
        .with_auth(auth)
        .require_scopes("fixture.record", ["notes:write"]))
}
