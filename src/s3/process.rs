//! A profile's `credential_process`, run as the AWS CLI and botocore run it: the command
//! split into words by POSIX shell rules (Python's `shlex.split`, what botocore's
//! `compat_shell_split` does off Windows) and executed directly, never through a shell,
//! so no word of it is expanded, globbed or substituted; the environment and stdin
//! inherited, stdout and stderr read. Its stdout is one JSON object, version 1:
//! `AccessKeyId`, `SecretAccessKey`, optionally `SessionToken` and `Expiration`
//! (RFC 3339). A key given twice is read as botocore reads it, through Python's
//! `json.loads`: its last value counts. Unlike botocore, the command has a deadline
//! ([`DEADLINE`]) and its output a bound ([`MAX_STDOUT`], [`MAX_STDERR`]); nothing it
//! printed is shown but the first line of its stderr, made printable, when it fails.

use crate::s3::sigv4::Credentials;
use crate::util::format::printable;
use crate::util::json::Json;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long the command may run: enough for a password manager or a prompt on another
/// terminal, not for a hung one.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// Its JSON is a few hundred bytes (a session token about a kilobyte).
pub const MAX_STDOUT: u64 = 64 << 10;
/// What is kept of its stderr, for a failure's message.
pub const MAX_STDERR: u64 = 4 << 10;

/// `s` split into words as `shlex.split(s)` splits it (POSIX mode, no comments): blanks
/// separate words; `'…'` is literal; in `"…"` a backslash escapes only `"` and `\`;
/// outside quotes it escapes any character. An unclosed quote or a trailing backslash is
/// an error, as in Python.
pub fn shell_split(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("no closing quotation (')".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("no closing quotation (\")".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("no closing quotation (\")".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err("no escaped character after the last '\\'".into()),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// What the command gave: the keys, and when they expire (if they say).
#[derive(Debug)]
pub struct Answer {
    pub credentials: Credentials,
    pub expiration: Option<String>,
}

/// Ends `child` and its process group (see [`run`]): what it started goes with it.
fn kill_group(child: &mut std::process::Child) {
    // SAFETY: kill(2) on the group this child leads (its pid, negated); no memory is touched.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = child.kill();
}

/// Runs `command` (already split) within `deadline`; its keys, or why not (a sentence
/// for the caller to prefix with the profile and the key's place).
pub fn run(command: &str, deadline: Duration, now: SystemTime) -> Result<Answer, String> {
    let argv = shell_split(command).map_err(|e| format!("cannot be split into words: {e}"))?;
    let Some((program, args)) = argv.split_first() else {
        return Err("is empty".into());
    };
    // In a process group of its own, so that what it starts (a `sleep` under `sh`) is
    // ended with it.
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("could not start '{}': {e}", printable(program)))?;
    let killed = |child: &mut std::process::Child, why: String| {
        kill_group(child);
        let _ = child.wait();
        Err(format!("'{}' {why}: it was killed", printable(program)))
    };
    // Each pipe read on a thread of its own, up to its bound; past that, stdout is too
    // much (the command is killed) and stderr is drained into nothing.
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    let mut readers = Ok(());
    if let Some(p) = child.stdout.take() {
        readers = readers.and(
            crate::util::thread::spawn("credential_process stdout", move || {
                let mut out = Vec::new();
                let _ = p.take(MAX_STDOUT + 1).read_to_end(&mut out);
                let _ = out_tx.send(out);
            })
            .map(drop),
        );
    }
    if let Some(mut p) = child.stderr.take() {
        readers = readers.and(
            crate::util::thread::spawn("credential_process stderr", move || {
                let mut err = Vec::new();
                let _ = (&mut p).take(MAX_STDERR).read_to_end(&mut err);
                let _ = std::io::copy(&mut p, &mut std::io::sink());
                let _ = err_tx.send(err);
            })
            .map(drop),
        );
    }
    if let Err(e) = readers {
        return killed(&mut child, format!("could not be read ({e})"));
    }
    let start = Instant::now();
    let mut out: Option<Vec<u8>> = None;
    let status = loop {
        if out.is_none() {
            out = out_rx.try_recv().ok();
        }
        if out.as_ref().is_some_and(|o| o.len() as u64 > MAX_STDOUT) {
            return killed(
                &mut child,
                format!("printed more than {} KiB", MAX_STDOUT >> 10),
            );
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= deadline => {
                let limit = format!("{:.1} s", deadline.as_secs_f64());
                return killed(&mut child, format!("did not finish within {limit}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for '{}': {e}", printable(program))),
        }
    };
    // The pipes are closed by now unless a grandchild holds them open: bounded either way.
    let left = || {
        deadline
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(100))
    };
    let out = out.or_else(|| out_rx.recv_timeout(left()).ok());
    let err = err_rx.recv_timeout(left()).ok();
    if !status.success() {
        let line = err
            .as_deref()
            .map(String::from_utf8_lossy)
            .and_then(|e| e.lines().find(|l| !l.trim().is_empty()).map(String::from))
            .map(|l| format!(": {}", printable(&l.chars().take(200).collect::<String>())))
            .unwrap_or_default();
        return Err(format!("'{}' failed ({status}){line}", printable(program)));
    }
    let out = out.ok_or_else(|| {
        format!(
            "'{}' left its output open past its deadline",
            printable(program)
        )
    })?;
    if out.len() as u64 > MAX_STDOUT {
        return Err(format!("printed more than {} KiB", MAX_STDOUT >> 10));
    }
    parse(&out, now)
}

/// The credentials in the command's JSON, checked: version 1, both keys, no control
/// character in a value that goes into a header, not expired at `now`.
pub fn parse(out: &[u8], now: SystemTime) -> Result<Answer, String> {
    let text = std::str::from_utf8(out).map_err(|_| "printed something that is not UTF-8")?;
    let json =
        Json::parse(text).map_err(|e| format!("printed something that is not JSON ({e})"))?;
    if !matches!(json, Json::Obj(_)) {
        return Err("printed JSON that is not an object".into());
    }
    match &json.get("Version").and_then(Json::as_f64) {
        Some(1.0) => {}
        _ => {
            return Err(
                "printed no \"Version\": 1 (the only version of the credential_process output)"
                    .into(),
            )
        }
    }
    let field = |name: &str, required: bool| -> Result<Option<String>, String> {
        match &json.get(name) {
            None | Some(Json::Null) if !required => Ok(None),
            None | Some(Json::Null) => Err(format!("printed no \"{name}\"")),
            Some(Json::Str(s)) if s.chars().any(char::is_control) => Err(format!(
                "printed a \"{name}\" with a control character (CR, LF, ESC or another)"
            )),
            Some(Json::Str(s)) if s.is_empty() && required => {
                Err(format!("printed an empty \"{name}\""))
            }
            Some(Json::Str(s)) => Ok(Some(s.clone()).filter(|s| !s.is_empty())),
            Some(_) => Err(format!("printed a \"{name}\" that is not a string")),
        }
    };
    let credentials = Credentials {
        access_key_id: field("AccessKeyId", true)?.unwrap_or_default(),
        secret_access_key: field("SecretAccessKey", true)?.unwrap_or_default(),
        session_token: field("SessionToken", false)?,
    };
    let expiration = field("Expiration", false)?;
    if let Some(e) = &expiration {
        check_expiration(e, now).map_err(|why| format!("printed {why}"))?;
    }
    Ok(Answer {
        credentials,
        expiration,
    })
}

/// An `Expiration` of temporary keys, credential_process's or STS's (botocore refuses
/// both alike: keys still expired once fetched are never used): RFC 3339 and later than
/// `now`; or why not, a phrase to follow what gave it ("printed …", "the answer has …").
pub fn check_expiration(e: &str, now: SystemTime) -> Result<(), String> {
    let at = rfc3339(e)
        .ok_or_else(|| format!("an \"Expiration\" that is not RFC 3339 ('{}')", quoted(e)))?;
    if at <= now {
        return Err(format!("credentials that expired at {}", quoted(e)));
    }
    Ok(())
}

/// An Expiration as an error quotes it: printable, and cut to the length of a real one
/// (`2026-12-02T03:04:05.123456+00:00` is 32), so that a command printing megabytes there
/// cannot fill the terminal with them.
fn quoted(s: &str) -> String {
    crate::util::format::quoted_cut(s, 40)
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` as a time.
pub fn rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let t = &rest[1..];
            if t.len() != 5 || t.as_bytes()[2] != b':' {
                return None;
            }
            let (oh, om): (i64, i64) = (t[..2].parse().ok()?, t[3..].parse().ok()?);
            sign * (oh * 3600 + om * 60)
        }
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_as_python_shlex_splits_them() {
        for (line, want) in [
            (
                "/usr/bin/get-creds --profile dev",
                &["/usr/bin/get-creds", "--profile", "dev"][..],
            ),
            ("  a   b\tc  ", &["a", "b", "c"]),
            ("'a b' \"c d\" e\\ f", &["a b", "c d", "e f"]),
            ("x'y'\"z\"", &["xyz"]),
            ("\"a\\\"b\\\\c\\d\"", &["a\"b\\c\\d"]),
            ("'a\\b'", &["a\\b"]),
            (
                "echo $HOME `id` $(id) ; rm -rf / | x > y",
                &[
                    "echo", "$HOME", "`id`", "$(id)", ";", "rm", "-rf", "/", "|", "x", ">", "y",
                ],
            ),
            ("a # not a comment", &["a", "#", "not", "a", "comment"]),
            ("''", &[""]),
            ("", &[]),
        ] {
            assert_eq!(shell_split(line).unwrap(), want, "{line}");
        }
        for bad in ["'a", "\"a", "a\\", "\"a\\"] {
            assert!(shell_split(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rfc3339_times_with_offsets_and_fractions() {
        let t = |s| rfc3339(s).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs());
        assert_eq!(t("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(t("2026-12-02T01:38:22Z"), Some(1_796_175_502));
        assert_eq!(t("2026-12-02T03:38:22.123+02:00"), Some(1_796_175_502));
        assert_eq!(t("2000-03-01T00:00:00Z"), Some(951_868_800));
        for bad in [
            "2026-12-02",
            "2026-13-02T00:00:00Z",
            "2026-12-02T00:00:00",
            "x026-12-02T00:00:00Z",
            "2026-12-02T00:00:00.Z",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_answer_is_checked_field_by_field() {
        let now = rfc3339("2026-12-02T00:00:00Z").unwrap();
        let a = parse(br#"{"Version": 1, "AccessKeyId": "AK", "SecretAccessKey": "s", "SessionToken": "t", "Expiration": "2026-12-02T01:00:00Z"}"#, now).unwrap();
        assert_eq!(a.credentials.access_key_id, "AK");
        assert_eq!(a.credentials.session_token.as_deref(), Some("t"));
        let a = parse(
            br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s"}"#,
            now,
        )
        .unwrap();
        assert_eq!((a.credentials.session_token, a.expiration), (None, None));
        for (out, want) in [
            (&b"not json"[..], "not JSON"),
            (b"[1]", "not an object"),
            (br#"{"AccessKeyId":"AK","SecretAccessKey":"s"}"#, "no \"Version\": 1"),
            (br#"{"Version":2,"AccessKeyId":"AK","SecretAccessKey":"s"}"#, "no \"Version\": 1"),
            (br#"{"Version":1,"SecretAccessKey":"s"}"#, "no \"AccessKeyId\""),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":7}"#, "\"SecretAccessKey\" that is not a string"),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","SessionToken":"t\r\nX: 1"}"#, "\"SessionToken\" with a control character"),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","Expiration":"2026-12-01T23:59:59Z"}"#, "expired at 2026-12-01T23:59:59Z"),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","Expiration":"soon"}"#, "not RFC 3339"),
        ] {
            let e = parse(out, now).unwrap_err();
            assert!(e.contains(want), "{e}");
            assert!(!e.contains("X: 1"), "{e}");
        }
    }

    #[test]
    fn a_key_given_twice_is_its_last_as_in_botocore() {
        // botocore reads the output with Python's json.loads, where the last of a key
        // given twice wins: every field is read so, the Version too.
        let now = rfc3339("2026-12-02T00:00:00Z").unwrap();
        let a = parse(
            br#"{"Version":1,"AccessKeyId":"AK1","AccessKeyId":"AK2","SecretAccessKey":"s1","SecretAccessKey":"s2","SessionToken":"t","SessionToken":null}"#,
            now,
        )
        .unwrap();
        assert_eq!(
            (
                a.credentials.access_key_id.as_str(),
                a.credentials.secret_access_key.as_str(),
                a.credentials.session_token
            ),
            ("AK2", "s2", None)
        );
        let a = parse(
            br#"{"Version":2,"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","Expiration":"2001-01-01T00:00:00Z","Expiration":"2026-12-02T01:00:00Z"}"#,
            now,
        )
        .unwrap();
        assert_eq!(a.expiration.as_deref(), Some("2026-12-02T01:00:00Z"));
        for (out, want) in [
            (&br#"{"Version":1,"Version":2,"AccessKeyId":"AK","SecretAccessKey":"s"}"#[..], "no \"Version\": 1"),
            (br#"{"Version":1,"AccessKeyId":"AK","AccessKeyId":7,"SecretAccessKey":"s"}"#, "\"AccessKeyId\" that is not a string"),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","SecretAccessKey":null}"#, "no \"SecretAccessKey\""),
            (br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"s","Expiration":"2026-12-02T01:00:00Z","Expiration":"2026-12-01T00:00:00Z"}"#, "expired at 2026-12-01T00:00:00Z"),
        ] {
            let e = parse(out, now).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn the_command_runs_without_a_shell_within_its_deadline_and_bounds() {
        let now = SystemTime::now();
        let json = r#"{"Version":1,"AccessKeyId":"AKPROC","SecretAccessKey":"s"}"#;
        let a = run(&format!("printf '%s' '{json}'"), DEADLINE, now).unwrap();
        assert_eq!(a.credentials.access_key_id, "AKPROC");
        // No shell: `;` and `$(...)` are printf's arguments, not commands.
        let e = run("printf '%s' '{' ; touch /tmp/bb-no-shell-$$", DEADLINE, now).unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        assert!(!std::path::Path::new("/tmp/bb-no-shell-$$").exists());
        let e = run(
            "sh -c 'echo why it failed >&2; echo second >&2; exit 3'",
            DEADLINE,
            now,
        )
        .unwrap_err();
        assert!(
            e.contains("'sh' failed") && e.ends_with(": why it failed"),
            "{e}"
        );
        let e = run("sleep 5", Duration::from_millis(200), now).unwrap_err();
        assert!(e.contains("did not finish within 0.2 s"), "{e}");
        let e = run("cat /dev/zero", DEADLINE, now).unwrap_err();
        assert!(e.contains("printed more than 64 KiB"), "{e}");
        let e = run("/nonexistent/helper", DEADLINE, now).unwrap_err();
        assert!(
            e.starts_with("could not start '/nonexistent/helper'"),
            "{e}"
        );
        assert_eq!(run("  ", DEADLINE, now).unwrap_err(), "is empty");
    }

    #[test]
    fn what_the_command_started_ends_with_it() {
        let dir = crate::util::temp::TempDir::new("cred");
        let pid_file = dir.join("pid");
        let script = format!("sh -c 'sleep 30 & echo $! > {}; wait'", pid_file.display());
        let e = run(&script, Duration::from_millis(500), SystemTime::now()).unwrap_err();
        assert!(e.contains("did not finish within 0.5 s"), "{e}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The sleep was the shell's child, in the command's process group: gone too
        // (reaped by init, or a zombie for a moment).
        let gone = (0..100).any(|_| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(") ")
                .next()
                .is_some_and(|s| s.starts_with('Z'));
            if state.is_empty() || zombie {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
            false
        });
        assert!(gone, "the command's child {pid} outlived it");
    }
}
