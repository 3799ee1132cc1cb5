//! STS AssumeRole, as the AWS CLI makes it for a profile's `role_arn`: a form-encoded
//! POST to STS (`https://sts.REGION.amazonaws.com`, the CLI v2's regional endpoint, or
//! the configured one), signed with SigV4 for service `sts`; its answer's temporary keys.
//! Builders and a parser only: sending is the caller's. The answer's Expiration is checked
//! as a credential_process's is ([`process::check_expiration`]): keys that expired, or
//! that say no date, are refused, as botocore refuses them.

use crate::s3::credentials::AssumeRole;
use crate::s3::endpoint::Endpoint;
use crate::s3::process;
use crate::s3::request::HttpRequest;
use crate::s3::sigv4::{self, Credentials, Request, Scope};
use crate::s3::xml;
use std::time::SystemTime;

/// STS's endpoint for `region`, as the CLI v2 and the SDKs reach it (regional; the CLI
/// v1 used the global `sts.amazonaws.com` by default).
pub fn aws_endpoint(region: &str) -> Endpoint {
    Endpoint {
        https: true,
        host: format!("sts.{region}.amazonaws.com"),
        port: 443,
        aws: true,
    }
}

/// The signed AssumeRole request for `role`, made with `creds`, its body with it.
pub fn assume_role_request(
    role: &AssumeRole,
    creds: &Credentials,
    region: &str,
    endpoint: &Endpoint,
    now: SystemTime,
) -> HttpRequest {
    let duration = role.duration_seconds.map(|d| d.to_string());
    let mut params: Vec<(&str, &str)> = vec![
        ("Action", "AssumeRole"),
        ("Version", "2011-06-15"),
        ("RoleArn", &role.role_arn),
        ("RoleSessionName", &role.session_name),
    ];
    if let Some(id) = &role.external_id {
        params.push(("ExternalId", id));
    }
    if let Some(d) = &duration {
        params.push(("DurationSeconds", d));
    }
    let body = params
        .iter()
        .map(|(k, v)| format!("{k}={}", sigv4::uri_encode(v, true)))
        .collect::<Vec<_>>()
        .join("&");
    let host = endpoint.host_header(&endpoint.host);
    let extra = vec![
        (
            "Content-Type".to_string(),
            "application/x-www-form-urlencoded; charset=utf-8".to_string(),
        ),
        ("Content-Length".to_string(), body.len().to_string()),
    ];
    let hash = sigv4::sha256_hex(body.as_bytes());
    let req = Request {
        method: "POST",
        host: &host,
        path: "/",
        query: &[],
        headers: &extra,
        payload_hash: &hash,
    };
    let scope = Scope {
        region,
        service: "sts",
        time: now,
    };
    HttpRequest {
        method: "POST",
        https: endpoint.https,
        host: endpoint.host.clone(),
        port: endpoint.port,
        target: "/".into(),
        headers: sigv4::sign(&req, creds, &scope).headers,
        body: body.into_bytes(),
    }
}

/// The temporary keys in an AssumeRole answer, and when they expire (always given: an
/// answer without an Expiration is refused); or why not (STS's error code and message,
/// made printable, or what is wrong with the answer). Checked against the clock now.
pub fn parse_answer(status: u16, body: &str) -> Result<(Credentials, Option<String>), String> {
    parse_answer_at(status, body, SystemTime::now())
}

/// [`parse_answer`], the Expiration checked against `now`.
pub fn parse_answer_at(
    status: u16,
    body: &str,
    now: SystemTime,
) -> Result<(Credentials, Option<String>), String> {
    // STS's words, printable and cut: a body of a megabyte is no line of a megabyte.
    let p = |s: &str, longest| crate::util::format::quoted_cut(s, longest);
    if !(200..=299).contains(&status) {
        return Err(
            match (xml::element(body, "Code"), xml::element(body, "Message")) {
                (Some(code), message) => {
                    format!(
                        "{status} {}: {}",
                        p(&code, 40),
                        p(&message.unwrap_or_default(), 160)
                    )
                }
                _ => format!("status {status}"),
            },
        );
    }
    let field = |name: &str| {
        xml::element(body, name)
            .filter(|v| !v.is_empty() && !v.chars().any(char::is_control))
            .ok_or_else(|| format!("the answer has no valid {name}"))
    };
    let credentials = Credentials {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: Some(field("SessionToken")?),
    };
    // Required, as botocore requires it (it reads `Credentials['Expiration']`).
    let expiration =
        xml::element(body, "Expiration").ok_or("the answer has no valid Expiration")?;
    process::check_expiration(&expiration, now).map_err(|why| format!("the answer has {why}"))?;
    Ok((credentials, Some(expiration)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn the_request_is_a_signed_form_post_and_the_answer_parses() {
        let role = AssumeRole {
            role_arn: "arn:aws:iam::123456789012:role/a b".into(),
            session_name: "s-1".into(),
            external_id: Some("x&y".into()),
            duration_seconds: Some(900),
            profile: "p".into(),
            endpoint: None,
        };
        let creds = Credentials {
            access_key_id: "AKID".into(),
            secret_access_key: "secret".into(),
            session_token: None,
        };
        let now = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let r = assume_role_request(&role, &creds, "eu-west-1", &aws_endpoint("eu-west-1"), now);
        assert_eq!(
            String::from_utf8(r.body.clone()).unwrap(),
            "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fa%20b\
             &RoleSessionName=s-1&ExternalId=x%26y&DurationSeconds=900"
        );
        assert_eq!(r.host, "sts.eu-west-1.amazonaws.com");
        let auth = r.header("authorization").unwrap();
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKID/20130524/eu-west-1/sts/aws4_request"
            ),
            "{auth}"
        );
        let ok = "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA1</AccessKeyId>\
                  <SecretAccessKey>s2</SecretAccessKey><SessionToken>t3</SessionToken>\
                  <Expiration>2030-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>";
        let (c, exp) = parse_answer_at(200, ok, now).unwrap();
        assert_eq!(
            (c.access_key_id.as_str(), c.session_token.as_deref()),
            ("ASIA1", Some("t3"))
        );
        assert_eq!(exp.as_deref(), Some("2030-01-01T00:00:00Z"));
        let denied = "<ErrorResponse><Error><Code>AccessDenied</Code><Message>not \x1b you</Message></Error></ErrorResponse>";
        assert_eq!(
            parse_answer(403, denied).unwrap_err(),
            "403 AccessDenied: not \\u{1b} you"
        );
        // A megabyte of Message is no line of a megabyte.
        let long = format!(
            "<Error><Code>AccessDenied</Code><Message>{}</Message></Error>",
            "m".repeat(1 << 20)
        );
        let e = parse_answer(403, &long).unwrap_err();
        assert_eq!(e, format!("403 AccessDenied: {}…", "m".repeat(160)));
        assert!(parse_answer(200, "<x/>")
            .unwrap_err()
            .contains("no valid AccessKeyId"));
    }

    /// An AssumeRole answer whose `Expiration` is `exp` (none for `None`).
    fn answer(exp: Option<&str>) -> String {
        let exp = exp.map_or(String::new(), |e| format!("<Expiration>{e}</Expiration>"));
        format!(
            "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA1</AccessKeyId>\
             <SecretAccessKey>s2</SecretAccessKey><SessionToken>t3</SessionToken>{exp}\
             </Credentials></AssumeRoleResult></AssumeRoleResponse>"
        )
    }

    #[test]
    fn an_expiration_past_or_not_a_date_is_refused_as_credential_process_refuses_it() {
        let now = process::rfc3339("2026-12-02T00:00:00Z").unwrap();
        let (_, exp) = parse_answer_at(200, &answer(Some("2026-12-02T00:00:01Z")), now).unwrap();
        assert_eq!(exp.as_deref(), Some("2026-12-02T00:00:01Z"));
        for (exp, want) in [
            (
                Some("2026-12-02T00:00:00Z"),
                "the answer has credentials that expired at 2026-12-02T00:00:00Z",
            ),
            (None, "the answer has no valid Expiration"),
            (
                Some("2026-12-02T00:00:00Z\u{1b}[2J"),
                "the answer has an \"Expiration\" that is not RFC 3339 ('2026-12-02T00:00:00Z\\u{1b}[2J')",
            ),
        ] {
            assert_eq!(parse_answer_at(200, &answer(exp), now).unwrap_err(), want);
        }
        // The same words as credential_process's, from the same check.
        let printed = br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","Expiration":"2026-12-02T00:00:00Z"}"#;
        assert_eq!(
            process::parse(printed, now).unwrap_err(),
            "printed credentials that expired at 2026-12-02T00:00:00Z"
        );
        // Checked against the clock by parse_answer, as bb-seek calls it.
        for (exp, want) in [
            (
                "2001-01-01T00:00:00Z",
                "the answer has credentials that expired at 2001-01-01T00:00:00Z",
            ),
            (
                "soon",
                "the answer has an \"Expiration\" that is not RFC 3339 ('soon')",
            ),
            (
                "",
                "the answer has an \"Expiration\" that is not RFC 3339 ('')",
            ),
        ] {
            assert_eq!(parse_answer(200, &answer(Some(exp))).unwrap_err(), want);
        }
    }
}
