//! The S3 request builders against a real S3 API server: moto's standalone server on
//! 127.0.0.1 with request authentication on, so a signature that S3 would refuse is
//! refused here too. The requests go over a plain TcpStream (the transport is bb-seek's,
//! wired in later): create a bucket outside us-east-1, PUT, HEAD, ranged GET, a multipart
//! upload of three parts, and a wrong secret and an unknown key refused.

use crate::support::moto::{send, Moto};
use boardbench::s3::sigv4::{header, Credentials};
use boardbench::s3::{xml, Bucket, Endpoint, Payload, S3Settings};
use std::time::SystemTime;

fn bucket(moto: &Moto, creds: Credentials) -> Bucket {
    let endpoint = Some(Endpoint::parse(&moto.endpoint()).unwrap());
    let settings = S3Settings::with(Some(creds), "eu-west-1", endpoint);
    Bucket::new("bench", settings, None)
}

/// Bytes that differ at every offset a wrong range could start from.
fn data(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
#[ignore = "needs moto (scripts/setup.sh test); run by make test"]
fn signed_requests_against_moto_with_authentication_on() {
    let moto = Moto::start();
    let creds = moto.user();
    let b = bucket(&moto, creds.clone());
    let now = SystemTime::now;

    let create = b.create_bucket(now());
    let (status, _, body) = send(&create, &create.body);
    assert_eq!(
        status,
        200,
        "CreateBucket: {}",
        String::from_utf8_lossy(&body)
    );

    let object = data(100_000, 1);
    let (status, _, body) = send(
        &b.put_object("runs/obj", &Payload::of(&object), now()),
        &object,
    );
    assert_eq!(status, 200, "PUT: {}", String::from_utf8_lossy(&body));

    let (status, headers, _) = send(&b.head("runs/obj", now()), b"");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-length"), Some("100000"));

    let (status, headers, body) = send(&b.get_range("runs/obj", 1000, 5000, now()), b"");
    assert_eq!(status, 206);
    assert_eq!(
        header(&headers, "content-range"),
        Some("bytes 1000-5999/100000")
    );
    assert!(body == object[1000..6000], "the range's bytes differ");

    // Multipart: three parts, the last one shorter, then the whole object read back.
    let (status, _, body) = send(&b.create_multipart_upload("runs/multi", now()), b"");
    let body = String::from_utf8_lossy(&body).to_string();
    assert_eq!(status, 200, "CreateMultipartUpload: {body}");
    let upload_id = xml::element(&body, "UploadId").expect("an UploadId");
    let parts = [data(4096, 2), data(4096, 3), data(1000, 4)];
    let mut etags = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let r = b.upload_part(
            "runs/multi",
            &upload_id,
            i as u32 + 1,
            &Payload::of(part),
            now(),
        );
        let (status, headers, body) = send(&r, part);
        assert_eq!(
            status,
            200,
            "UploadPart {}: {}",
            i + 1,
            String::from_utf8_lossy(&body)
        );
        etags.push(header(&headers, "etag").expect("an ETag").to_string());
    }
    let done = b.complete_multipart_upload("runs/multi", &upload_id, &etags, now());
    let (status, _, body) = send(&done, &done.body);
    assert_eq!(status, 200, "Complete: {}", String::from_utf8_lossy(&body));
    let whole = parts.concat();
    let (status, _, body) = send(
        &b.get_range("runs/multi", 0, whole.len() as u64, now()),
        b"",
    );
    assert_eq!(status, 206);
    assert!(body == whole, "the multipart object's bytes differ");

    // A wrong secret and an unknown key are refused, with S3's own codes.
    let wrong = Credentials {
        secret_access_key: "not-the-secret".into(),
        ..creds.clone()
    };
    for (creds, code) in [
        (wrong, "SignatureDoesNotMatch"),
        (
            Credentials {
                access_key_id: "AKIAUNKNOWN000000000".into(),
                ..creds
            },
            "InvalidAccessKeyId",
        ),
    ] {
        let (status, _, body) = send(
            &bucket(&moto, creds).get_range("runs/obj", 0, 10, now()),
            b"",
        );
        let body = String::from_utf8_lossy(&body).to_string();
        assert_eq!(status, 403, "{body}");
        assert_eq!(xml::element(&body, "Code").as_deref(), Some(code), "{body}");
    }
}
