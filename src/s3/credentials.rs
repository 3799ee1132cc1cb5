//! Where S3 credentials and settings come from, resolved as the AWS CLI resolves them:
//! the keys from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else
//! from profile `AWS_PROFILE` (default `default`) in `~/.aws/credentials` (`[NAME]`),
//! else in `~/.aws/config` (`[profile NAME]`); the files moved by
//! `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`; the region from `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, then the profile; the endpoint from `AWS_ENDPOINT_URL_S3`,
//! `AWS_ENDPOINT_URL`, then the profile's `s3 =` section and its own `endpoint_url`.
//! The result says where the keys came from, never what they are.

use crate::s3::endpoint::{Addressing, Endpoint};
use crate::s3::ini::{self, Section};
use crate::s3::sigv4::Credentials;
use crate::util::error::{Error, Result};
use crate::util::file;
use std::path::{Path, PathBuf};

/// The region when nothing names one, as the AWS SDKs' S3 clients take it.
pub const DEFAULT_REGION: &str = "us-east-1";

/// Everything a signed S3 request needs besides the bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `None` with `--no-sign`: requests go out unsigned (public buckets).
    pub credentials: Option<Credentials>,
    /// Where the credentials came from, for the header line on stderr.
    pub origin: String,
    pub region: String,
    /// A custom endpoint; `None` is AWS's for the region.
    pub endpoint: Option<Endpoint>,
    /// The configured `addressing_style`; `None` lets the endpoint decide.
    pub addressing: Option<Addressing>,
}

impl Settings {
    /// From this process's environment and home directory.
    pub fn from_env(no_sign: bool) -> Result<Settings> {
        resolve(&|name| std::env::var(name).ok(), no_sign)
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint
            .clone()
            .unwrap_or_else(|| Endpoint::aws(&self.region))
    }
}

/// The largest AWS file read: they are a few hundred bytes; more is not one.
const MAX_FILE: u64 = 1 << 20;

/// One AWS file, read: its path, and its sections (none when it does not exist).
struct File {
    path: PathBuf,
    sections: Vec<Section>,
}

impl File {
    /// Reads `path`, a regular file of at most [`MAX_FILE`]; a missing one has no sections
    /// unless an environment variable named it (`named_by`), which makes it an error, as
    /// is one that cannot be read or parsed. A parse error names the line, never its text.
    fn load(path: PathBuf, named_by: Option<&str>) -> Result<File> {
        let name = match named_by {
            Some(var) => format!("{var} {}", path.display()),
            None => path.display().to_string(),
        };
        let limit = format!(
            "{} KiB (an AWS file is a few hundred bytes)",
            MAX_FILE >> 10
        );
        let bytes = match file::read_regular(&path, &name, MAX_FILE, &limit) {
            Ok(b) => b,
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) && named_by.is_none() => {
                return Ok(File {
                    path,
                    sections: Vec::new(),
                })
            }
            Err(e) => return Err(e),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::usage(format!(
                "{name}: not text (byte {} is not UTF-8)",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let sections = ini::parse(&text).map_err(|e| Error::usage(format!("{name}: {e}")))?;
        Ok(File { path, sections })
    }

    /// No file: what a default file is without a home directory.
    fn none(path: PathBuf) -> File {
        File {
            path,
            sections: Vec::new(),
        }
    }

    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().rev().find(|s| s.name == name)
    }

    /// A value of `section`, if both are there.
    fn value<'a>(&self, section: Option<&'a Section>, key: &str) -> Option<&'a str> {
        section?
            .get(key)
            .map(|e| e.value.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// An environment variable, none when empty; a control character in it (a CR or LF that
/// would end a request header and start another, an escape) is refused, naming it.
fn checked_var(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<String>> {
    match env(name).filter(|v| !v.is_empty()) {
        Some(v) if v.chars().any(char::is_control) => Err(Error::usage(format!(
            "{name} holds a control character (CR, LF, ESC or another): \
             its value goes into requests"
        ))),
        v => Ok(v),
    }
}

/// Resolves the settings with `env` for environment variables (a test passes its own).
/// The credentials file is read only when the keys must come from it: not with
/// `--no-sign`, nor with the keys in the environment.
pub fn resolve(env: &dyn Fn(&str) -> Option<String>, no_sign: bool) -> Result<Settings> {
    let var = |name: &str| checked_var(env, name);
    let home = var("HOME")?.map(PathBuf::from);
    // A file the user named must be there; the default ones may be missing, and without
    // a home directory there are none.
    let load = |override_var: &str, default: &str| match var(override_var)? {
        Some(p) => File::load(expand_home(&p, home.as_deref()), Some(override_var)),
        None => match &home {
            Some(dir) => File::load(dir.join(".aws").join(default), None),
            None => Ok(File::none(PathBuf::from(format!("~/.aws/{default}")))),
        },
    };
    let env_keys = var("AWS_ACCESS_KEY_ID")?.is_some() || var("AWS_SECRET_ACCESS_KEY")?.is_some();
    let conf_file = load("AWS_CONFIG_FILE", "config")?;

    let named = var("AWS_PROFILE")?;
    let profile = named.clone().unwrap_or_else(|| "default".to_string());
    let conf_section = conf_file
        .section(&format!("profile {profile}"))
        .or_else(|| {
            (profile == "default")
                .then(|| conf_file.section("default"))
                .flatten()
        });
    // The credentials file when the keys come from it, or to look for a profile named
    // that the config file does not have.
    let cred_file = match (!no_sign && !env_keys) || (named.is_some() && conf_section.is_none()) {
        true => load("AWS_SHARED_CREDENTIALS_FILE", "credentials")?,
        false => File::none(PathBuf::new()),
    };
    let cred_section = cred_file.section(&profile);
    if named.is_some() && cred_section.is_none() && conf_section.is_none() {
        return Err(Error::usage(format!(
            "AWS_PROFILE names profile '{profile}', which is in neither {} nor {}",
            cred_file.path.display(),
            conf_file.path.display()
        )));
    }

    let (credentials, origin) = if no_sign {
        (
            None,
            "none (--no-sign: requests are not signed)".to_string(),
        )
    } else {
        let (c, origin) = keys(
            &var,
            &profile,
            (&cred_file, cred_section),
            (&conf_file, conf_section),
        )?;
        let origin = match c.session_token {
            Some(_) => format!("{origin}, with a session token"),
            None => origin,
        };
        (Some(c), origin)
    };

    let region = match var("AWS_REGION")?.or(var("AWS_DEFAULT_REGION")?) {
        Some(r) => r,
        None => conf_file
            .value(conf_section, "region")
            .unwrap_or(DEFAULT_REGION)
            .to_string(),
    };

    let s3 = conf_section.and_then(|s| s.get("s3"));
    let nested = |key: &str| {
        s3.and_then(|e| e.nested(key))
            .filter(|e| !e.value.is_empty())
    };
    let config_error = |line: usize, e: String| {
        Error::usage(format!("{}: line {line}: {e}", conf_file.path.display()))
    };
    let from_env = |name: &'static str| Ok(var(name)?.map(|url| (name, url)));
    let endpoint = match from_env("AWS_ENDPOINT_URL_S3")?.or(from_env("AWS_ENDPOINT_URL")?) {
        Some((name, url)) => {
            Some(Endpoint::parse(&url).map_err(|m| Error::usage(format!("{name}: {m}")))?)
        }
        None => match nested("endpoint_url")
            .or_else(|| conf_section.and_then(|s| s.get("endpoint_url")))
        {
            Some(e) => Some(Endpoint::parse(&e.value).map_err(|m| config_error(e.line, m))?),
            None => None,
        },
    };
    let addressing = match nested("addressing_style") {
        Some(e) => Addressing::parse(&e.value).map_err(|m| config_error(e.line, m))?,
        None => None,
    };
    Ok(Settings {
        credentials,
        origin,
        region,
        endpoint,
        addressing,
    })
}

/// The keys, from the environment, else the credentials file, else the config file.
fn keys(
    var: &dyn Fn(&str) -> Result<Option<String>>,
    profile: &str,
    (cred_file, cred_section): (&File, Option<&Section>),
    (conf_file, conf_section): (&File, Option<&Section>),
) -> Result<(Credentials, String)> {
    match (var("AWS_ACCESS_KEY_ID")?, var("AWS_SECRET_ACCESS_KEY")?) {
        (Some(id), Some(secret)) => {
            let c = Credentials {
                access_key_id: id,
                secret_access_key: secret,
                session_token: var("AWS_SESSION_TOKEN")?.or(var("AWS_SECURITY_TOKEN")?),
            };
            return Ok((c, "environment (AWS_ACCESS_KEY_ID)".to_string()));
        }
        (Some(_), None) => {
            return Err(Error::usage(
                "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not",
            ))
        }
        (None, Some(_)) => {
            return Err(Error::usage(
                "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not",
            ))
        }
        (None, None) => {}
    }
    for (file, section) in [(cred_file, cred_section), (conf_file, conf_section)] {
        let id = file.value(section, "aws_access_key_id");
        let secret = file.value(section, "aws_secret_access_key");
        let origin = || format!("profile '{profile}' in {}", file.path.display());
        match (id, secret) {
            (Some(id), Some(secret)) => {
                let c = Credentials {
                    access_key_id: id.to_string(),
                    secret_access_key: secret.to_string(),
                    session_token: file.value(section, "aws_session_token").map(String::from),
                };
                return Ok((c, origin()));
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(Error::usage(format!(
                    "{} has only one of aws_access_key_id and aws_secret_access_key",
                    origin()
                )))
            }
            (None, None) => {}
        }
    }
    let other = [
        "credential_process",
        "role_arn",
        "sso_session",
        "sso_start_url",
        "web_identity_token_file",
    ]
    .into_iter()
    .find(|k| {
        conf_file.value(conf_section, k).is_some() || cred_file.value(cred_section, k).is_some()
    });
    Err(Error::usage(match other {
        Some(k) => format!(
            "profile '{profile}' gets its keys through {k}, which bb-seek does not run; \
             export them first (eval \"$(aws configure export-credentials --profile {profile} --format env)\")"
        ),
        None => format!(
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put profile '{profile}' in {}, \
             or use --no-sign for a public bucket",
            cred_file.path.display()
        ),
    }))
}

/// `~/x` as `HOME/x`, as the AWS CLI expands its file variables.
fn expand_home(p: &str, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A home directory with `.aws/credentials` and `.aws/config`, removed on drop.
    struct Home(PathBuf);

    impl Home {
        fn new(credentials: Option<&str>, config: Option<&str>) -> Home {
            let dir = std::env::temp_dir().join(format!(
                "bb-s3-home-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join(".aws")).unwrap();
            if let Some(c) = credentials {
                std::fs::write(dir.join(".aws/credentials"), c).unwrap();
            }
            if let Some(c) = config {
                std::fs::write(dir.join(".aws/config"), c).unwrap();
            }
            Home(dir)
        }

        fn resolve(&self, vars: &[(&str, &str)], no_sign: bool) -> Result<Settings> {
            let mut env: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            env.insert("HOME".into(), self.0.display().to_string());
            resolve(&|k| env.get(k).cloned(), no_sign)
        }
    }

    impl Drop for Home {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const CREDENTIALS: &str = "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = sdefault\n\n\
                               # the LAN box\n[minio]\n  aws_access_key_id=AKMINIO  \naws_secret_access_key = sminio\naws_session_token = tminio\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n\n[profile minio]\nregion = garage\n\
                          endpoint_url = http://global:1\ns3 =\n  endpoint_url = http://nas.lan:9000\n  addressing_style = virtual\n\
                          [profile conf-only]\naws_access_key_id = AKCONF\naws_secret_access_key = sconf\n\
                          [profile sso]\nsso_session = corp\n";

    fn key(s: &Settings) -> &str {
        &s.credentials.as_ref().unwrap().access_key_id
    }

    #[test]
    fn the_environment_comes_before_any_profile_as_in_the_aws_cli() {
        let home = Home::new(Some(CREDENTIALS), Some(CONFIG));
        let s = home.resolve(&[], false).unwrap();
        assert_eq!((key(&s), s.region.as_str()), ("AKDEFAULT", "eu-west-1"));
        assert!(
            s.origin.starts_with("profile 'default' in ") && s.origin.ends_with(".aws/credentials"),
            "{}",
            s.origin
        );
        assert_eq!(s.endpoint, None);
        assert_eq!(s.endpoint().host, "s3.eu-west-1.amazonaws.com");

        let env = [
            ("AWS_ACCESS_KEY_ID", "AKENV"),
            ("AWS_SECRET_ACCESS_KEY", "senv"),
            ("AWS_SESSION_TOKEN", "tenv"),
            ("AWS_PROFILE", "minio"),
            ("AWS_DEFAULT_REGION", "ap-south-1"),
        ];
        let s = home.resolve(&env, false).unwrap();
        assert_eq!(key(&s), "AKENV");
        assert_eq!(
            s.credentials.as_ref().unwrap().session_token.as_deref(),
            Some("tenv")
        );
        assert_eq!(
            s.origin,
            "environment (AWS_ACCESS_KEY_ID), with a session token"
        );
        assert!(!format!("{s:?}").contains("senv"));
        assert_eq!(s.region, "ap-south-1");
        let with_region = [env.as_slice(), &[("AWS_REGION", "sa-east-1")]].concat();
        assert_eq!(
            home.resolve(&with_region, false).unwrap().region,
            "sa-east-1"
        );
    }

    #[test]
    fn a_profile_brings_its_keys_region_endpoint_and_addressing() {
        let home = Home::new(Some(CREDENTIALS), Some(CONFIG));
        let s = home.resolve(&[("AWS_PROFILE", "minio")], false).unwrap();
        assert_eq!(key(&s), "AKMINIO");
        assert_eq!(s.credentials.as_ref().unwrap().secret_access_key, "sminio");
        assert!(
            s.origin.ends_with("credentials, with a session token"),
            "{}",
            s.origin
        );
        assert_eq!(s.region, "garage");
        assert_eq!(
            s.endpoint,
            Some(Endpoint::parse("http://nas.lan:9000").unwrap())
        );
        assert_eq!(s.addressing, Some(Addressing::Virtual));
        // The environment's endpoints come first, the service's before the global one.
        let s = home
            .resolve(
                &[("AWS_PROFILE", "minio"), ("AWS_ENDPOINT_URL", "http://a:1")],
                false,
            )
            .unwrap();
        assert_eq!(s.endpoint.unwrap().host, "a");
        let vars = [
            ("AWS_PROFILE", "minio"),
            ("AWS_ENDPOINT_URL", "http://a:1"),
            ("AWS_ENDPOINT_URL_S3", "http://b:2"),
        ];
        assert_eq!(
            home.resolve(&vars, false).unwrap().endpoint.unwrap().host,
            "b"
        );
        // Keys only in the config file are found there.
        let s = home
            .resolve(&[("AWS_PROFILE", "conf-only")], false)
            .unwrap();
        assert_eq!(key(&s), "AKCONF");
        assert!(s.origin.ends_with(".aws/config"), "{}", s.origin);
        assert_eq!(s.region, DEFAULT_REGION);
    }

    #[test]
    fn moved_files_no_sign_and_clear_errors() {
        let home = Home::new(None, None);
        let moved = home.0.join("elsewhere");
        std::fs::write(
            &moved,
            "[default]\naws_access_key_id = AKMOVED\naws_secret_access_key = s\n",
        )
        .unwrap();
        let vars = [("AWS_SHARED_CREDENTIALS_FILE", moved.to_str().unwrap())];
        assert_eq!(key(&home.resolve(&vars, false).unwrap()), "AKMOVED");
        let vars = [("AWS_SHARED_CREDENTIALS_FILE", "~/elsewhere")];
        assert_eq!(key(&home.resolve(&vars, false).unwrap()), "AKMOVED");

        let e = home
            .resolve(&[("AWS_CONFIG_FILE", "/nonexistent/cfg")], false)
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("reading AWS_CONFIG_FILE /nonexistent/cfg: "),
            "{e}"
        );
        let e = home.resolve(&[], false).unwrap_err();
        assert!(
            e.to_string().starts_with("no S3 credentials") && e.to_string().contains("--no-sign"),
            "{e}"
        );
        let s = home.resolve(&[], true).unwrap();
        assert_eq!(s.credentials, None);
        assert!(s.origin.contains("--no-sign"));

        let home = Home::new(Some(CREDENTIALS), Some(CONFIG));
        let e = home.resolve(&[("AWS_PROFILE", "nope")], false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("AWS_PROFILE names profile 'nope', which is in neither "),
            "{e}"
        );
        assert_eq!(e.exit_code(), 2);
        let e = home.resolve(&[("AWS_PROFILE", "sso")], false).unwrap_err();
        assert!(e.to_string().contains("through sso_session"), "{e}");
        let e = home
            .resolve(&[("AWS_ACCESS_KEY_ID", "AK")], false)
            .unwrap_err();
        assert!(
            e.to_string().contains("AWS_SECRET_ACCESS_KEY is not"),
            "{e}"
        );

        let home = Home::new(Some("[default]\naws_access_key_id\n"), None);
        let e = home.resolve(&[], false).unwrap_err();
        assert!(e.to_string().ends_with(".aws/credentials: line 2: 'aws_access_key_id' has no '=' (expected '[section]', 'key = value' or a comment)"), "{e}");
        let home = Home::new(
            Some(CREDENTIALS),
            Some("[default]\ns3 =\n  addressing_style = sideways\n"),
        );
        let e = home.resolve(&[], false).unwrap_err();
        assert!(
            e.to_string()
                .contains(".aws/config: line 3: invalid addressing style 'sideways'"),
            "{e}"
        );
    }

    #[test]
    fn a_control_character_in_a_value_sent_is_refused_naming_its_variable() {
        let home = Home::new(Some(CREDENTIALS), Some(CONFIG));
        let keys = [
            ("AWS_ACCESS_KEY_ID", "AKENV"),
            ("AWS_SECRET_ACCESS_KEY", "senv"),
        ];
        for name in [
            "AWS_SESSION_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_PROFILE",
            "AWS_ENDPOINT_URL",
        ] {
            for bad in ["t\r\nX-Injected: 1", "t\nX", "t\x1b[31m"] {
                let vars: Vec<_> = keys
                    .iter()
                    .filter(|(k, _)| *k != name)
                    .copied()
                    .chain([(name, bad)])
                    .collect();
                let e = home.resolve(&vars, false).unwrap_err();
                assert_eq!(e.exit_code(), 2, "{name}: {e}");
                assert!(
                    e.to_string()
                        .starts_with(&format!("{name} holds a control character")),
                    "{name}: {e}"
                );
                assert!(!e.to_string().contains(bad), "{e}");
            }
        }
        // From a file, the line and the key are named.
        let home = Home::new(
            Some("[default]\naws_access_key_id = AK\naws_secret_access_key = s\naws_session_token = t\rX-Injected: 1\n"),
            None,
        );
        let e = home.resolve(&[], false).unwrap_err();
        assert!(
            e.to_string().ends_with(".aws/credentials: line 4 ('aws_session_token'): a control character (CR, LF, ESC or another) where none belongs"),
            "{e}"
        );
        assert!(!e.to_string().contains("Injected"), "{e}");
    }

    #[test]
    fn a_malformed_line_is_named_never_quoted() {
        let secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY";
        let home = Home::new(
            Some(&format!(
                "[default]\naws_access_key_id = AK\naws_secret_access_key {secret}\n"
            )),
            None,
        );
        let e = home.resolve(&[], false).unwrap_err().to_string();
        assert!(
            e.ends_with(".aws/credentials: line 3: 'aws_secret_access_key' has no '=' (expected '[section]', 'key = value' or a comment)"),
            "{e}"
        );
        let home = Home::new(Some(&format!("[default]\n{secret}\n")), None);
        let e = home.resolve(&[], false).unwrap_err().to_string();
        assert!(
            e.contains("line 2: expected") && !e.contains("wJalr"),
            "{e}"
        );
    }

    #[test]
    fn files_are_bounded_regular_files_read_only_when_needed() {
        let home = Home::new(None, None);
        let fifo = home.0.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let big = home.0.join("big");
        std::fs::write(&big, vec![b'#'; (MAX_FILE + 1) as usize]).unwrap();
        let fifo = fifo.to_str().unwrap();
        for var in ["AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"] {
            for (path, why) in [
                ("/dev/zero", "a device, not a regular file"),
                (fifo, "a FIFO, not a regular file"),
                (big.to_str().unwrap(), "larger than 1024 KiB"),
            ] {
                let e = home.resolve(&[(var, path)], false).unwrap_err();
                assert_eq!(e.exit_code(), 2, "{e}");
                assert!(
                    e.to_string().starts_with(&format!("{var} {path}: {why}")),
                    "{e}"
                );
            }
        }
        // Not read at all with --no-sign, nor with the keys in the environment.
        let vars = [("AWS_SHARED_CREDENTIALS_FILE", "/dev/zero")];
        assert!(home.resolve(&vars, true).is_ok());
        let env_keys = [
            vars[0],
            ("AWS_ACCESS_KEY_ID", "AK"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ];
        assert_eq!(key(&home.resolve(&env_keys, false).unwrap()), "AK");
        // A binary file is bad input, as a malformed one is.
        std::fs::write(&big, b"[default]\n\xff\xfe\n").unwrap();
        let e = home
            .resolve(&[("AWS_CONFIG_FILE", big.to_str().unwrap())], true)
            .unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        // Without a home directory there are no default files (not ./~/.aws/...).
        let e = resolve(&|_| None, false).unwrap_err();
        assert!(e.to_string().contains("~/.aws/credentials"), "{e}");
        assert!(resolve(&|_| None, true).is_ok());
    }
}
