//! bb-seek's AWS settings against the AWS CLI's own resolution: each case is a config
//! file, a credentials file and an environment, run through bb-seek (its settings line on
//! stderr, or its exit 2) and through botocore (the library under the AWS CLI; the
//! one in target/tools-venv), which must agree on the endpoint, the region and where the
//! keys came from, or both refuse. Against moto with authentication on and its STS, the
//! cases that reach a server upload and read objects: `services =`, a credential_process
//! and an assumed role (through `source_profile` and `credential_source = Environment`).
//! Against a fake server of its own (no moto needed; botocore's side, ignored, with it),
//! what bb-seek must read as botocore does though no real server says it: a
//! credential_process printing a key twice, an AssumeRole answer expired or undated.

use crate::support::moto::Moto;
use crate::support::{seek, Run, TempDir};
use boardbench::s3::sigv4::Credentials;
use std::path::Path;
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_bb-seek");

/// What botocore resolves for S3 with `env` and `home`'s `.aws` files: a JSON object
/// with the endpoint, region, how the keys were found, the CA bundle, or the error.
const BOTOCORE: &str = r#"
import json, botocore.session
out = {}
try:
    s = botocore.session.Session()
    c = s.create_client('s3')
    creds = s.get_credentials()
    out = {'endpoint': c.meta.endpoint_url, 'region': c.meta.region_name,
           'method': creds.method if creds else None,
           'key': creds.access_key if creds else None,
           'ca_bundle': s.get_config_variable('ca_bundle')}
except Exception as e:
    out = {'error': type(e).__name__ + ': ' + str(e)}
print(json.dumps(out))
"#;

/// A home with `.aws/config` and `.aws/credentials` (each when given).
fn home(name: &str, config: &str, credentials: Option<&str>) -> TempDir {
    let home = TempDir::new(name);
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".aws/config"), config).unwrap();
    if let Some(c) = credentials {
        std::fs::write(home.join(".aws/credentials"), c).unwrap();
    }
    home
}

/// `exe` with only `env`, PATH and HOME.
fn alone(exe: &Path, home: &TempDir, env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(exe);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .envs(env.iter().copied());
    c
}

fn bb_seek(home: &TempDir, env: &[(&str, &str)], args: &[&str]) -> Run {
    alone(Path::new(EXE), home, env)
        .args(args)
        .output()
        .expect("running bb-seek")
        .into()
}

fn botocore(home: &TempDir, env: &[(&str, &str)]) -> serde_json::Value {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools-venv/bin/python");
    let out = alone(&python, home, env)
        .args(["-c", BOTOCORE])
        .output()
        .expect("running botocore (scripts/setup.sh test installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "botocore: {e}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The endpoint, region and kind of credentials bb-seek's settings line names.
fn resolved(stderr: &str) -> (String, String, &'static str) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("bb-seek: s3://"))
        .unwrap_or_else(|| panic!("no settings line in:\n{stderr}"));
    let after = |what: &str| {
        let rest =
            &line[line.find(what).unwrap_or_else(|| panic!("{what}: {line}")) + what.len()..];
        rest.split(' ').next().unwrap().to_string()
    };
    let creds = &line[line.find("credentials: ").unwrap() + 13..];
    let method = if creds.starts_with("environment") {
        "env"
    } else if creds.starts_with("credential_process") {
        "custom-process"
    } else if creds.starts_with("role ") {
        "assume-role"
    } else if creds
        .split(',')
        .next()
        .unwrap()
        .ends_with("/.aws/credentials")
    {
        "shared-credentials-file"
    } else {
        "config-file"
    };
    (after(" at "), after(", region "), method)
}

/// bb-seek's `gen` and botocore agree on the endpoint (the host and port), the region
/// and where the keys came from; `gen` succeeded. Returns bb-seek's stderr.
fn agree(home: &TempDir, env: &[(&str, &str)], dest: &str) -> String {
    let run = bb_seek(home, env, &["gen", "--dest", dest, "--sizes", "64k"]);
    run.assert_ok();
    let (endpoint, region, method) = resolved(&run.stderr);
    let b = botocore(home, env);
    assert_eq!(b.get("error"), None, "botocore: {b}");
    assert_eq!(
        endpoint.trim_end_matches('/'),
        b["endpoint"].as_str().unwrap().trim_end_matches('/'),
        "{}\nbotocore: {b}",
        run.stderr
    );
    assert_eq!(region, b["region"].as_str().unwrap(), "botocore: {b}");
    assert_eq!(
        method,
        b["method"].as_str().unwrap(),
        "{}\nbotocore: {b}",
        run.stderr
    );
    run.stderr
}

/// Both refuse: bb-seek with exit 2 and `needle` in its one line, botocore with an error.
fn both_refuse(home: &TempDir, env: &[(&str, &str)], needle: &str, botocore_says: &str) {
    let run = bb_seek(
        home,
        env,
        &["gen", "--dest", "s3://bench/never/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(needle),
        "no '{needle}' in:\n{}",
        run.stderr
    );
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    let b = botocore(home, env);
    let e = b["error"]
        .as_str()
        .unwrap_or_else(|| panic!("botocore resolved {b}"));
    assert!(e.contains(botocore_says), "botocore: {e}");
}

fn keys_file(profile: &str, c: &Credentials) -> String {
    format!(
        "[{profile}]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
        c.access_key_id, c.secret_access_key
    )
}

/// Reads the 64 KiB object back through both clients, every pattern.
fn reads(home: &TempDir, env: &[(&str, &str)], source: &str) -> Run {
    let args = [seek::SHORT, &["--source", source, "--sizes", "64k"]].concat();
    let run = bb_seek(home, env, &args);
    run.assert_ok();
    assert_eq!(run.json().as_array().unwrap().len(), 10, "{}", run.stderr);
    run
}

#[test]
#[ignore = "needs moto and botocore (scripts/setup.sh test); run by make test"]
fn settings_resolve_as_botocore_resolves_them_against_moto() {
    let moto = Moto::start();
    let user = moto.user();
    let url = moto.endpoint();
    let creds = keys_file("default", &user);

    // services = NAME: its [services NAME] section's s3 endpoint_url, not AWS.
    let config = format!(
        "[default]\nregion = eu-west-1\nservices = lan\n[services lan]\ns3 =\n  endpoint_url = {url}\n"
    );
    let h = home("aws-services", &config, Some(&creds));
    let stderr = agree(&h, &[], "s3://bench/services/");
    assert!(stderr.contains("from [services lan] in "), "{stderr}");
    reads(&h, &[], "s3://bench/services/");

    // An endpoint_url under the profile's s3 = is ignored by both; the top-level one used.
    let config =
        format!("[default]\nendpoint_url = {url}\ns3 =\n  endpoint_url = http://127.0.0.1:9\n");
    let h = home("aws-nested", &config, Some(&creds));
    let stderr = agree(&h, &[], "s3://bench/nested/");
    assert!(
        stderr.contains("the endpoint_url under 's3 =' in profile 'default' is ignored"),
        "{stderr}"
    );

    // AWS_DEFAULT_PROFILE comes before AWS_PROFILE; a missing AWS_CONFIG_FILE is empty.
    let creds2 = format!(
        "{}{}",
        keys_file("bench", &user),
        "[other]\naws_access_key_id = AKOTHER\naws_secret_access_key = x\n"
    );
    let h = home("aws-default-profile", "", Some(&creds2));
    let env = [
        ("AWS_DEFAULT_PROFILE", "bench"),
        ("AWS_PROFILE", "other"),
        ("AWS_ENDPOINT_URL", url.as_str()),
        ("AWS_CONFIG_FILE", "/nonexistent/aws-config"),
    ];
    let stderr = agree(&h, &env, "s3://bench/profiles/");
    assert!(
        stderr.contains("AWS_CONFIG_FILE /nonexistent/aws-config does not exist"),
        "{stderr}"
    );
    assert_eq!(
        botocore(&h, &env)["key"].as_str(),
        Some(user.access_key_id.as_str())
    );

    // Empty key variables fall back to the files, for both.
    let h = home(
        "aws-empty-keys",
        &format!("[default]\nendpoint_url = {url}\n"),
        Some(&creds),
    );
    let env = [("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", "")];
    agree(&h, &env, "s3://bench/empty-keys/");
    // Configured endpoints ignored: botocore goes to AWS's (where a test may not go), as
    // the unit tests of bb-seek's resolution expect it to.
    let env = [
        ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true"),
        ("AWS_ENDPOINT_URL", url.as_str()),
    ];
    let b = botocore(&h, &env);
    assert!(
        b["endpoint"].as_str().unwrap().ends_with(".amazonaws.com"),
        "{b}"
    );

    // Empty variables and a services name with no section: both refuse.
    let h = home(
        "aws-empty",
        &format!("[default]\nendpoint_url = {url}\n"),
        Some(&creds),
    );
    both_refuse(
        &h,
        &[("AWS_PROFILE", "")],
        "AWS_PROFILE is set but empty",
        "could not be found",
    );
    let h = home("aws-empty-region", "", Some(&creds));
    both_refuse(
        &h,
        &[("AWS_DEFAULT_REGION", "")],
        "AWS_DEFAULT_REGION is set but empty",
        "Invalid endpoint",
    );
    let h = home(
        "aws-no-services",
        "[default]\nservices = nope\n",
        Some(&creds),
    );
    both_refuse(
        &h,
        &[],
        "names no [services nope] section",
        "services configuration does not exist",
    );

    // credential_process, run without a shell: its keys sign the upload and the reads.
    let json = format!(
        r#"{{"Version": 1, "AccessKeyId": "{}", "SecretAccessKey": "{}"}}"#,
        user.access_key_id, user.secret_access_key
    );
    let h = home("aws-process", "", None);
    let helper = h.join("get creds.sh");
    std::fs::write(&helper, format!("#!/bin/sh\nprintf '%s' '{json}'\n")).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&helper)
        .status()
        .unwrap();
    let config = format!(
        "[default]\nendpoint_url = {url}\ncredential_process = \"{}\"\n",
        helper.display()
    );
    std::fs::write(h.join(".aws/config"), config).unwrap();
    let stderr = agree(&h, &[], "s3://bench/process/");
    assert!(!stderr.contains(&user.secret_access_key), "{stderr}");
    reads(&h, &[], "s3://bench/process/");

    // role_arn with source_profile: an AssumeRole at moto's STS, whose keys read.
    let arn = moto.role(&user, "bench-reader");
    let config = format!(
        "[default]\nendpoint_url = {url}\nregion = eu-west-1\n\
         [profile reader]\nendpoint_url = {url}\nregion = eu-west-1\nrole_arn = {arn}\nsource_profile = default\n\
         role_session_name = bench-1\nexternal_id = ext-1\nduration_seconds = 900\n\
         [profile env-reader]\nendpoint_url = {url}\nrole_arn = {arn}\ncredential_source = Environment\n"
    );
    let h = home("aws-role", &config, Some(&creds));
    let env = [("AWS_PROFILE", "reader")];
    let stderr = agree(&h, &env, "s3://bench/role/");
    assert!(
        stderr.contains(&format!(
            "credentials: role {arn} assumed with profile 'default''s keys"
        )),
        "{stderr}"
    );
    assert!(botocore(&h, &env)["key"]
        .as_str()
        .unwrap()
        .starts_with("ASIA"));
    reads(&h, &env, "s3://bench/role/");
    // credential_source = Environment: the environment's keys assume it.
    let env = [
        ("AWS_PROFILE", "env-reader"),
        ("AWS_ACCESS_KEY_ID", user.access_key_id.as_str()),
        ("AWS_SECRET_ACCESS_KEY", user.secret_access_key.as_str()),
    ];
    // (The environment's keys come first for the CLI too: no role then.)
    let stderr = agree(&h, &env, "s3://bench/env/");
    assert!(stderr.contains("credentials: environment"), "{stderr}");
    // STS's refusal is one line naming the role and STS's code, exit 1: a source
    // profile whose secret is wrong.
    let config =
        format!("[profile wrong]\nendpoint_url = {url}\nrole_arn = {arn}\nsource_profile = bad\n");
    let creds = format!(
        "[bad]\naws_access_key_id = {}\naws_secret_access_key = not-the-secret\n",
        user.access_key_id
    );
    let h = home("aws-role-refused", &config, Some(&creds));
    let run = bb_seek(
        &h,
        &[("AWS_PROFILE", "wrong")],
        &["gen", "--dest", "s3://bench/refused/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let line = run.stderr.trim();
    assert!(
        line.starts_with(&format!(
            "bb-seek: error: AssumeRole of {arn} (profile 'wrong' in "
        )) && line.contains(": 403 ")
            && !line.contains("not-the-secret")
            && line.lines().count() == 1,
        "{line}"
    );
}

#[cfg(feature = "tls")]
#[test]
#[ignore = "needs moto, nginx and botocore (scripts/setup.sh test); run by make test"]
fn aws_ca_bundle_and_ca_bundle_are_trusted_as_ca_file_is() {
    use crate::support::nginx::{Certificates, Nginx};
    let moto = Moto::start();
    let user = moto.user();
    let certs = Certificates::make();
    let proxy = format!(
        "    location / {{ proxy_pass http://127.0.0.1:{}; proxy_set_header Host $http_host; }}\n",
        moto.port
    );
    let nginx = Nginx::start_conf(
        Some((
            &std::path::PathBuf::from(certs.path("server.pem")),
            &certs.key(),
        )),
        &proxy,
    );
    let url = format!("https://localhost:{}", nginx.port);
    let ca = certs.path("ca.pem");
    let creds = keys_file("default", &user);

    // AWS_CA_BUNDLE, as botocore reads it too.
    let h = home(
        "aws-ca-env",
        &format!("[default]\nendpoint_url = {url}\n"),
        Some(&creds),
    );
    let env = [("AWS_CA_BUNDLE", ca.as_str())];
    let stderr = agree(&h, &env, "s3://secure/env/");
    assert!(
        stderr.contains(&format!("CA bundle {ca} (AWS_CA_BUNDLE")),
        "{stderr}"
    );
    assert_eq!(botocore(&h, &env)["ca_bundle"].as_str(), Some(ca.as_str()));
    reads(&h, &env, "s3://secure/env/");

    // The profile's ca_bundle.
    let config = format!("[default]\nendpoint_url = {url}\nca_bundle = {ca}\n");
    let h = home("aws-ca-profile", &config, Some(&creds));
    let stderr = agree(&h, &[], "s3://secure/profile/");
    assert!(
        stderr.contains("(ca_bundle of profile 'default' in "),
        "{stderr}"
    );
    assert_eq!(botocore(&h, &[])["ca_bundle"].as_str(), Some(ca.as_str()));

    // scripts/seek-s3.sh hands --ca-file to gen as well as to the run.
    let bin_dir = Path::new(EXE).parent().unwrap().to_str().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/seek-s3.sh");
    let h = home(
        "aws-ca-script",
        &format!("[default]\nendpoint_url = {url}\n"),
        Some(&creds),
    );
    let flags = format!("--ca-file {ca} --request-timeout 20s");
    let run: Run = alone(
        Path::new(script),
        &h,
        &[
            ("BB_BIN_DIR", bin_dir),
            ("BB_FLAGS_seek", flags.as_str()),
            ("BB_FLAGS", "--warmup 0 --iterations 1"),
        ],
    )
    .args([
        "--quick",
        "--sizes",
        "64k",
        "--out",
        h.join("results").to_str().unwrap(),
        "scripted",
    ])
    .current_dir(h.path())
    .output()
    .expect("running seek-s3.sh")
    .into();
    run.assert_ok();
    assert!(
        run.stderr.contains("made the bucket scripted"),
        "{}",
        run.stderr
    );

    // --ca-file comes first: the variable's bundle is not even read, and a note says so.
    let run = bb_seek(
        &h,
        &[("AWS_CA_BUNDLE", "/nonexistent/ca.pem")],
        &[
            "--ca-file",
            &ca,
            "gen",
            "--dest",
            "s3://secure/flag/",
            "--sizes",
            "64k",
        ],
    );
    run.assert_ok();
    assert!(
        run.stderr
            .contains("note: the CA bundle /nonexistent/ca.pem (AWS_CA_BUNDLE) is not used"),
        "{}",
        run.stderr
    );

    // A bundle that is not there is one line naming the variable, exit 2.
    let run = bb_seek(
        &h,
        &[("AWS_CA_BUNDLE", "/nonexistent/ca.pem")],
        &["gen", "--dest", "s3://secure/x/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("reading AWS_CA_BUNDLE /nonexistent/ca.pem: No such file"),
        "{}",
        run.stderr
    );
}

/// A proxy to moto that answers every other request itself with a transient failure
/// (503 SlowDown, then 500 InternalError, in turn), and hands the others on: with one
/// request at a time, each request fails once and its retry goes through. Stops when
/// dropped (its listener is non-blocking, polled by its thread).
struct Storm {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    failed: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Storm {
    /// Failing one request in `every` (1: all of them).
    fn start(moto_port: u16, every: u64) -> Storm {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        use std::time::Duration;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(AtomicU64::new(0));
        let (stop2, failed2) = (stop.clone(), failed.clone());
        std::thread::spawn(move || {
            let mut seen = 0u64;
            while !stop2.load(Ordering::Relaxed) {
                let Ok((mut c, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                // Requests on this connection, one at a time.
                while let Some((text, body)) = read_request(&mut c) {
                    seen += 1;
                    if every == 1 || seen % every == 1 {
                        let n = failed2.fetch_add(1, Ordering::Relaxed);
                        let (status, code) = match n % 2 {
                            0 => ("503 Slow Down", "SlowDown"),
                            _ => ("500 Internal Server Error", "InternalError"),
                        };
                        let xml =
                            format!("<Error><Code>{code}</Code><Message>storm</Message></Error>");
                        // (A HEAD's answer has no body, but says how long it would be.)
                        let body = if text.starts_with("HEAD ") { "" } else { &xml };
                        let answer = format!(
                            "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}",
                            xml.len()
                        );
                        if c.write_all(answer.as_bytes()).is_err() {
                            break;
                        }
                        continue;
                    }
                    // Handed on, on a connection of its own that moto closes.
                    let mut m = TcpStream::connect(("127.0.0.1", moto_port)).unwrap();
                    m.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                    let head = text.replacen("\r\n", "\r\nConnection: close\r\n", 1);
                    let head = head
                        .split("\r\n")
                        .filter(|l| !l.to_ascii_lowercase().starts_with("connection: keep"))
                        .collect::<Vec<_>>()
                        .join("\r\n");
                    m.write_all(head.as_bytes()).unwrap();
                    m.write_all(&body).unwrap();
                    let mut answer = Vec::new();
                    let _ = m.read_to_end(&mut answer);
                    let _ = c.write_all(&answer);
                    break; // moto's answer says Connection: close
                }
            }
        });
        Storm { port, stop, failed }
    }

    fn failed(&self) -> u64 {
        self.failed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Storm {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
#[ignore = "needs moto (scripts/setup.sh test); run by make test"]
fn a_storm_of_503_and_500_on_every_request_kind_is_retried_and_counted() {
    let moto = Moto::start();
    let user = moto.user();
    let storm = Storm::start(moto.port, 2);
    let url = format!("http://127.0.0.1:{}", storm.port);
    let h = home("aws-storm", "", None);
    let env = [
        ("AWS_ACCESS_KEY_ID", user.access_key_id.as_str()),
        ("AWS_SECRET_ACCESS_KEY", user.secret_access_key.as_str()),
        ("AWS_ENDPOINT_URL", url.as_str()),
    ];
    // The bucket made, a PUT and a multipart upload (CreateMultipartUpload, UploadPart,
    // CompleteMultipartUpload): each request fails once and is sent again.
    let gen = [
        "gen",
        "--dest",
        "s3://storm/",
        "--sizes",
        "64k,6m",
        "--multipart-threshold",
        "5m",
        "--part-size",
        "5m",
    ];
    let made = bb_seek(&h, &env, &gen);
    made.assert_ok();
    assert!(
        storm.failed() >= 8,
        "{} failures: {}",
        storm.failed(),
        made.stderr
    );
    // Every GET too; the retries are reported per op, and warned about.
    let before = storm.failed();
    let args = [
        seek::SHORT,
        &[
            "--source",
            "s3://storm/",
            "--sizes",
            "64k",
            "--pattern",
            "parquet,forward",
        ],
    ]
    .concat();
    let run = bb_seek(&h, &env, &args);
    run.assert_ok();
    assert!(storm.failed() > before);
    for e in run.json().as_array().unwrap() {
        let retries = e["secondaryMetrics"]["retries"]["score"].as_f64().unwrap();
        let requests = e["secondaryMetrics"]["requests"]["score"].as_f64().unwrap();
        // Each request failed once: as many retries as requests.
        assert_eq!(retries, requests, "{e:#}");
    }
    assert!(
        run.stderr
            .contains("after a transient failure (500, 502, 503, 504)"),
        "{}",
        run.stderr
    );
    // With one attempt, the first failure ends the run, exit 1, nothing retried (what
    // the line says depends on which request the storm hit: a HEAD's 503 has no body).
    let env1 = [env.as_slice(), &[("AWS_MAX_ATTEMPTS", "1")]].concat();
    let run = bb_seek(&h, &env1, &args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stderr.contains("retried"), "{}", run.stderr);
    // A server that keeps failing: the attempts run out, and the line says how many.
    let always = Storm::start(moto.port, 1);
    let url = format!("http://127.0.0.1:{}", always.port);
    let env2 = [
        &env[..2],
        &[
            ("AWS_ENDPOINT_URL", url.as_str()),
            ("AWS_MAX_ATTEMPTS", "2"),
        ],
    ]
    .concat();
    let run = bb_seek(
        &h,
        &env2,
        &["gen", "--dest", "s3://storm/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("503 Slow Down SlowDown: storm (after 2 attempts)")
            || run
                .stderr
                .contains("500 Internal Server Error InternalError: storm (after 2 attempts)"),
        "{}",
        run.stderr
    );
    assert_eq!(always.failed(), 4, "a HEAD and a listing, twice each");
}

/// A server that answers every request itself, one a connection, with what its `answer`
/// makes of the request's head and body (the whole response), and keeps the heads it was
/// sent. Stops when dropped (its listener is non-blocking, polled by its thread).
struct Fake {
    port: u16,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Fake {
    fn start(answer: impl Fn(&str, &str) -> String + Send + 'static) -> Fake {
        use std::io::Write;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        use std::time::Duration;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (stop2, heads2) = (stop.clone(), heads.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let Ok((mut c, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let Some((head, body)) = read_request(&mut c) else {
                    continue;
                };
                let response = answer(&head, &String::from_utf8_lossy(&body));
                heads2.lock().unwrap().push(head);
                let _ = c.write_all(response.as_bytes());
            }
        });
        Fake { port, heads, stop }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A response with `status` and an XML `body`, that closes its connection (a HEAD's
/// has no body, but says how long it would be).
fn response(head: &str, status: &str, body: &str) -> String {
    let sent = if head.starts_with("HEAD ") { "" } else { body };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{sent}",
        body.len()
    )
}

/// S3's refusal of any request, so that a run ends at its first.
fn refused(head: &str) -> String {
    let xml = "<Error><Code>AccessDenied</Code><Message>fake</Message></Error>";
    response(head, "403 Forbidden", xml)
}

/// A home whose credential_process prints each key twice, the first of each wrong, at
/// `url`.
fn twice_home(url: &str) -> TempDir {
    let h = home("aws-process-twice", "", None);
    let helper = h.join("get creds.sh");
    let json = r#"{"Version": 1, "AccessKeyId": "AKFIRST", "AccessKeyId": "AKLAST", "SecretAccessKey": "sfirst", "SecretAccessKey": "slast"}"#;
    std::fs::write(&helper, format!("#!/bin/sh\nprintf '%s' '{json}'\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!(
        "[default]\nendpoint_url = {url}\nregion = eu-west-1\ncredential_process = \"{}\"\n",
        helper.display()
    );
    std::fs::write(h.join(".aws/config"), config).unwrap();
    h
}

#[test]
fn a_credential_process_giving_a_key_twice_signs_with_the_last_as_botocore_does() {
    let fake = Fake::start(|head, _| refused(head));
    let h = twice_home(&fake.url());
    let run = bb_seek(
        &h,
        &[],
        &["gen", "--dest", "s3://bench/twice/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("credentials: credential_process of profile 'default'"),
        "{}",
        run.stderr
    );
    let heads = fake.heads();
    assert!(!heads.is_empty(), "{}", run.stderr);
    for head in heads {
        assert!(head.contains("Credential=AKLAST/"), "{head}");
    }
}

const ROLE: &str = "arn:aws:iam::123456789012:role/bench";

/// STS's answer to AssumeRole, with `expiration` (none for `None`), and S3's refusal of
/// anything else.
fn sts(expiration: Option<&'static str>) -> Fake {
    Fake::start(move |head, body| {
        if !body.contains("Action=AssumeRole") {
            return refused(head);
        }
        let exp = expiration.map_or(String::new(), |e| format!("<Expiration>{e}</Expiration>"));
        let xml = format!(
            "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleResult>\
             <Credentials><AccessKeyId>ASIAFAKE</AccessKeyId><SecretAccessKey>sfake</SecretAccessKey>\
             <SessionToken>tfake</SessionToken>{exp}</Credentials>\
             <AssumedRoleUser><AssumedRoleId>AROAFAKE:bench-1</AssumedRoleId><Arn>{ROLE}/bench-1</Arn></AssumedRoleUser>\
             </AssumeRoleResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleResponse>"
        );
        response(head, "200 OK", &xml)
    })
}

/// A home whose profile `r` assumes [`ROLE`] at `url` with profile `base`'s keys.
fn role_home(url: &str) -> TempDir {
    let config = format!(
        "[profile r]\nendpoint_url = {url}\nregion = eu-west-1\nrole_arn = {ROLE}\nsource_profile = base\n\
         role_session_name = bench-1\n"
    );
    let creds = "[base]\naws_access_key_id = AKBASE\naws_secret_access_key = sbase\n";
    home("aws-role-expiry", &config, Some(creds))
}

/// The Expirations of an AssumeRole answer that are refused (none: no Expiration), what
/// bb-seek says of each, and what botocore (1.44) says.
const EXPIRATIONS_REFUSED: [(Option<&str>, &str, &str); 3] = [
    (
        Some("2001-01-01T00:00:00Z"),
        "the answer has credentials that expired at 2001-01-01T00:00:00Z",
        "refreshed credentials are still expired",
    ),
    (
        Some("soon"),
        "the answer has an \"Expiration\" that is not RFC 3339 ('soon')",
        "Invalid timestamp \"soon\"",
    ),
    (
        None,
        "the answer has no valid Expiration",
        "KeyError: 'Expiration'",
    ),
];

#[test]
fn an_assumed_role_whose_expiration_is_past_or_not_a_date_is_refused() {
    for (expiration, want, _) in EXPIRATIONS_REFUSED {
        let fake = sts(expiration);
        let h = role_home(&fake.url());
        let run = bb_seek(
            &h,
            &[("AWS_PROFILE", "r")],
            &["gen", "--dest", "s3://bench/role/", "--sizes", "64k"],
        );
        assert_eq!(run.code, 1, "{}", run.stderr);
        let line = run.stderr.trim();
        assert!(
            line.starts_with(&format!(
                "bb-seek: error: AssumeRole of {ROLE} (profile 'r' in "
            )) && line.ends_with(want)
                && line.lines().count() == 1,
            "{expiration:?}: {line}"
        );
        // Only the AssumeRole was sent; nothing was signed with its keys.
        let heads = fake.heads();
        assert_eq!(heads.len(), 1, "{heads:?}");
        assert!(heads[0].contains("Credential=AKBASE/"), "{}", heads[0]);
    }
    // The same answer with an Expiration to come: its keys sign what follows.
    let fake = sts(Some("2999-01-01T00:00:00Z"));
    let h = role_home(&fake.url());
    let run = bb_seek(
        &h,
        &[("AWS_PROFILE", "r")],
        &["gen", "--dest", "s3://bench/role/", "--sizes", "64k"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(", expiring 2999-01-01T00:00:00Z"),
        "{}",
        run.stderr
    );
    let heads = fake.heads();
    assert!(heads.len() >= 2, "{heads:?}");
    assert!(heads[1].contains("Credential=ASIAFAKE/"), "{}", heads[1]);
}

#[test]
#[ignore = "needs botocore (scripts/setup.sh test); run by make test"]
fn botocore_takes_a_key_given_twice_last_and_refuses_a_role_expired_or_undated() {
    let fake = Fake::start(|head, _| refused(head));
    let b = botocore(&twice_home(&fake.url()), &[]);
    assert_eq!(b["key"].as_str(), Some("AKLAST"), "{b}");
    for (expiration, _, botocore_says) in EXPIRATIONS_REFUSED {
        let fake = sts(expiration);
        let b = botocore(&role_home(&fake.url()), &[("AWS_PROFILE", "r")]);
        let e = b["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{expiration:?}: botocore resolved {b}"));
        assert!(e.contains(botocore_says), "{expiration:?}: {e}");
    }
    let fake = sts(Some("2999-01-01T00:00:00Z"));
    let b = botocore(&role_home(&fake.url()), &[("AWS_PROFILE", "r")]);
    assert_eq!(b["key"].as_str(), Some("ASIAFAKE"), "{b}");
}

#[test]
fn make_seek_s3_without_bucket_prints_its_usage_before_building_anything() {
    let run: Run = Command::new("make")
        .args(["-s", "seek-s3", "CARGO=echo BUILT-WITH-CARGO"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("BUCKET")
        .output()
        .expect("running make")
        .into();
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("usage: make seek-s3 BUCKET=name"),
        "{}",
        run.stderr
    );
    for built in ["BUILT-WITH-CARGO", "setup"] {
        assert!(
            !run.stdout.contains(built) && !run.stderr.contains(built),
            "{}{}",
            run.stdout,
            run.stderr
        );
    }
}

/// One HTTP request read from `c`, for the fake servers here: its head as text and its
/// body by Content-Length; None where the connection ends first.
fn read_request(c: &mut std::net::TcpStream) -> Option<(String, Vec<u8>)> {
    use std::io::Read;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match c.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let len: usize = text
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    c.read_exact(&mut body).ok()?;
    Some((text, body))
}
