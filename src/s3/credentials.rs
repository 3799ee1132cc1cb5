//! Where S3 credentials and settings come from, resolved as the AWS CLI v2 and botocore
//! resolve them (where the CLI v1 differs, as v2 and the SDKs do):
//! - the profile: `AWS_DEFAULT_PROFILE` (the CLI's, before `AWS_PROFILE`), `AWS_PROFILE`,
//!   else `default`; one set but empty is an error, as in the CLI;
//! - the files: `~/.aws/credentials` (`[NAME]`) and `~/.aws/config` (`[profile NAME]`),
//!   moved by `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`; a missing one is empty;
//! - the keys: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else the
//!   profile's `role_arn` (an AssumeRole the caller makes, see [`AssumeRole`]), else its
//!   keys in the credentials file, else its `credential_process` (run by
//!   [`crate::s3::process`]), else its keys in the config file;
//! - the region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`;
//! - the endpoint: none with `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` or the profile's
//!   `ignore_configured_endpoint_urls`; else `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the
//!   `[services NAME]` section's `s3 = endpoint_url` that `services = NAME` names, then the
//!   profile's own `endpoint_url` (an `endpoint_url` under the profile's `s3 =` is ignored,
//!   as the CLI ignores it, and said so);
//! - the CA bundle: `AWS_CA_BUNDLE`, the profile's `ca_bundle`;
//! - retries: `AWS_MAX_ATTEMPTS`/`max_attempts`, `AWS_RETRY_MODE`/`retry_mode`.
//!
//! Each setting says where it came from, for the line on stderr; never what a key is.

use crate::s3::endpoint::{Addressing, Endpoint};
use crate::s3::ini::{self, Entry, Section};
use crate::s3::process;
use crate::s3::sigv4::Credentials;
use crate::util::error::{Error, Result};
use crate::util::file;
use crate::util::format::printable;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The region when nothing names one, as the AWS SDKs' S3 clients take it.
pub const DEFAULT_REGION: &str = "us-east-1";

/// Everything a signed S3 request needs besides the bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// `None` with `--no-sign`: requests go out unsigned (public buckets). With
    /// [`S3Settings::assume_role`], the keys that sign the AssumeRole call.
    pub credentials: Option<Credentials>,
    /// Where the credentials came from, for the header line on stderr.
    pub origin: String,
    pub region: String,
    /// Where the region came from (`AWS_REGION`, a profile, `the default`).
    pub region_origin: String,
    /// A custom endpoint; `None` is AWS's for the region.
    pub endpoint: Option<Endpoint>,
    /// Where the endpoint came from, when it is a custom one or custom ones are ignored.
    pub endpoint_origin: Option<String>,
    /// The configured `addressing_style`; `None` lets the endpoint decide.
    pub addressing: Option<Addressing>,
    /// `AWS_CA_BUNDLE` or the profile's `ca_bundle`: the file, and where it was named.
    pub ca_bundle: Option<(PathBuf, String)>,
    pub retry: Retry,
    /// A role to assume with [`S3Settings::credentials`] before anything else is sent.
    pub assume_role: Option<AssumeRole>,
    /// What was resolved differently from what a reader may expect (a setting the CLI
    /// ignores too), for lines on stderr.
    pub notes: Vec<String>,
}

/// How failed requests are retried, as the SDKs' retry modes do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub mode: RetryMode,
    /// Attempts in all, the first one included (at least 1).
    pub max_attempts: u32,
    /// Where they came from.
    pub origin: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryMode {
    /// botocore's legacy mode (5 attempts by default).
    Legacy,
    /// The SDKs' standard mode: 3 attempts, exponential backoff with jitter.
    Standard,
    /// Standard, with client-side rate limiting (here: standard).
    Adaptive,
}

impl RetryMode {
    fn parse(s: &str) -> Option<RetryMode> {
        match s {
            "legacy" => Some(RetryMode::Legacy),
            "standard" => Some(RetryMode::Standard),
            "adaptive" => Some(RetryMode::Adaptive),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RetryMode::Legacy => "legacy",
            RetryMode::Standard => "standard",
            RetryMode::Adaptive => "adaptive",
        }
    }

    /// The attempts when nothing says how many.
    pub fn default_attempts(self) -> u32 {
        match self {
            RetryMode::Legacy => 5,
            _ => 3,
        }
    }
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            mode: RetryMode::Standard,
            max_attempts: 3,
            origin: "the default".into(),
        }
    }
}

/// An STS AssumeRole call to make: the role, its parameters, and where it was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssumeRole {
    pub role_arn: String,
    pub session_name: String,
    pub external_id: Option<String>,
    pub duration_seconds: Option<u32>,
    /// `profile 'P' in FILE`, for messages.
    pub profile: String,
    /// STS's endpoint as S3's is found (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`, the
    /// services section's `sts =`, the profile's `endpoint_url`); `None` is AWS's.
    pub endpoint: Option<Endpoint>,
}

impl S3Settings {
    /// From this process's environment and home directory.
    pub fn from_env(no_sign: bool) -> Result<S3Settings> {
        resolve(&|name| std::env::var(name).ok(), no_sign)
    }

    /// The settings for a custom endpoint with these keys (tests, and callers that know
    /// everything already).
    pub fn with(
        credentials: Option<Credentials>,
        region: &str,
        endpoint: Option<Endpoint>,
    ) -> S3Settings {
        S3Settings {
            credentials,
            origin: "given".into(),
            region: region.to_string(),
            region_origin: "given".into(),
            endpoint,
            endpoint_origin: None,
            addressing: None,
            ca_bundle: None,
            retry: Retry::default(),
            assume_role: None,
            notes: Vec::new(),
        }
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
    /// Named by a variable but not there: read as empty, as the AWS CLI does.
    missing: Option<String>,
}

impl File {
    /// Reads `path`, a regular file of at most [`MAX_FILE`]; a missing one has no sections
    /// (also when an environment variable named it, `named_by`, as in botocore), one that
    /// cannot be read or parsed is an error. A parse error names the line, never its text.
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
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {
                return Ok(File {
                    path,
                    sections: Vec::new(),
                    missing: named_by.map(|_| name),
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
        Ok(File {
            path,
            sections,
            missing: None,
        })
    }

    /// No file: what a default file is without a home directory.
    fn none(path: PathBuf) -> File {
        File {
            path,
            sections: Vec::new(),
            missing: None,
        }
    }

    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().rev().find(|s| s.name == name)
    }

    /// A profile's section of the config file: `[profile NAME]`, or `[default]` for
    /// `default`.
    fn profile_section(&self, name: &str) -> Option<&Section> {
        self.section(&format!("profile {name}")).or_else(|| {
            (name == "default")
                .then(|| self.section("default"))
                .flatten()
        })
    }

    /// A value of `section`, if both are there.
    fn value<'a>(&self, section: Option<&'a Section>, key: &str) -> Option<&'a str> {
        self.entry(section, key).map(|e| e.value.as_str())
    }

    /// An entry of `section` with a value, if both are there.
    fn entry<'a>(&self, section: Option<&'a Section>, key: &str) -> Option<&'a Entry> {
        section?.get(key).filter(|e| !e.value.is_empty())
    }

    /// `FILE: line N: MESSAGE`, a usage error.
    fn error(&self, line: usize, message: impl std::fmt::Display) -> Error {
        Error::usage(format!("{}: line {line}: {message}", self.path.display()))
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

/// The first of `names` that is set, with its value; one set but empty is an error
/// (`what` says what the AWS CLI makes of it).
fn first_set(
    env: &dyn Fn(&str) -> Option<String>,
    names: &[&'static str],
    what: &str,
) -> Result<Option<(&'static str, String)>> {
    let Some(&name) = names.iter().find(|n| env(n).is_some()) else {
        return Ok(None);
    };
    match checked_var(env, name)? {
        Some(v) => Ok(Some((name, v))),
        None => Err(Error::usage(format!(
            "{name} is set but empty: {what}; unset it or give it a value"
        ))),
    }
}

/// `true` or `false` in any case (botocore's `ensure_boolean` takes anything but `true`
/// as false; a value that is neither is refused here rather than read as false).
fn boolean(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Resolves the settings with `env` for environment variables (a test passes its own).
/// The credentials file is read only when the keys may come from it: not with
/// `--no-sign`, nor with the keys in the environment. A `credential_process` is run here.
pub fn resolve(env: &dyn Fn(&str) -> Option<String>, no_sign: bool) -> Result<S3Settings> {
    let var = |name: &str| checked_var(env, name);
    let home = var("HOME")?.map(PathBuf::from);
    let mut notes: Vec<String> = Vec::new();
    let files = profile_files(env, home.as_deref(), no_sign, &mut notes)?;
    let (cred, conf) = files.profiles();
    let (credentials, origin, assume_role) = match no_sign {
        true => (
            None,
            "none (--no-sign: requests are not signed)".to_string(),
            None,
        ),
        false => {
            let found = keys(env, &cred, &conf, 0)?;
            let origin = match found.credentials.session_token {
                Some(_) => format!("{}, with a session token", found.origin),
                None => found.origin,
            };
            (Some(found.credentials), origin, found.assume_role)
        }
    };
    let (region, region_origin) = region(env, &conf)?;
    let (s3_endpoint, endpoint_origin) = endpoint(&var, &conf, &mut notes, "s3")?;
    let assume_role = match assume_role {
        Some(mut role) => {
            role.endpoint = endpoint(&var, &conf, &mut Vec::new(), "sts")?.0;
            Some(role)
        }
        None => None,
    };
    let addressing = addressing(&conf)?;
    let ca_bundle = ca_bundle(&var, &conf, home.as_deref())?;
    let retry = retry(&var, &conf)?;
    Ok(S3Settings {
        credentials,
        origin,
        region,
        region_origin,
        endpoint: s3_endpoint,
        endpoint_origin,
        addressing,
        ca_bundle,
        retry,
        assume_role,
        notes,
    })
}

/// The profile the settings come from and the two files it is read from.
struct Files {
    profile: String,
    conf: File,
    /// Read only where the keys may come from it (see [`profile_files`]); else empty.
    cred: File,
}

impl Files {
    /// The profile in the credentials file and in the config file.
    fn profiles(&self) -> (Profile<'_>, Profile<'_>) {
        let cred = Profile {
            name: &self.profile,
            file: &self.cred,
            section: self.cred.section(&self.profile),
        };
        let conf = Profile {
            name: &self.profile,
            file: &self.conf,
            section: self.conf.profile_section(&self.profile),
        };
        (cred, conf)
    }
}

/// Which profile (`AWS_DEFAULT_PROFILE`, `AWS_PROFILE`, else `default`) and the files it
/// is read from: the config file, and the credentials file where the keys may come from
/// it or to look for a profile the config file does not have. Notes say which variable
/// won and which file is missing; a profile a variable names that neither file has is an
/// error.
fn profile_files(
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
    no_sign: bool,
    notes: &mut Vec<String>,
) -> Result<Files> {
    let var = |name: &str| checked_var(env, name);
    // The default files may be missing, and without a home directory there are none.
    let load = |override_var: &str, default: &str| match var(override_var)? {
        Some(p) => File::load(expand_home(&p, home), Some(override_var)),
        None => match home {
            Some(dir) => File::load(dir.join(".aws").join(default), None),
            None => Ok(File::none(PathBuf::from(format!("~/.aws/{default}")))),
        },
    };
    let env_keys = var("AWS_ACCESS_KEY_ID")?.is_some() || var("AWS_SECRET_ACCESS_KEY")?.is_some();
    let conf = load("AWS_CONFIG_FILE", "config")?;
    let named = first_set(
        env,
        &["AWS_DEFAULT_PROFILE", "AWS_PROFILE"],
        "the AWS CLI takes that as profile '' (\"The config profile () could not be found\")",
    )?;
    if let (Some(("AWS_DEFAULT_PROFILE", d)), Some(p)) = (&named, var("AWS_PROFILE")?) {
        if *d != p {
            notes.push(format!(
                "AWS_DEFAULT_PROFILE ('{d}') comes before AWS_PROFILE ('{p}'), as in the AWS CLI"
            ));
        }
    }
    let profile = named
        .as_ref()
        .map_or_else(|| "default".to_string(), |(_, p)| p.clone());
    let in_conf = conf.profile_section(&profile).is_some();
    let cred = match (!no_sign && !env_keys) || (named.is_some() && !in_conf) {
        true => load("AWS_SHARED_CREDENTIALS_FILE", "credentials")?,
        false => File::none(PathBuf::new()),
    };
    notes.extend(
        [&conf, &cred]
            .iter()
            .filter_map(|f| f.missing.as_ref())
            .map(|name| format!("{name} does not exist: read as empty, as the AWS CLI does")),
    );
    if let (Some((var_name, _)), None, false) = (&named, cred.section(&profile), in_conf) {
        return Err(Error::usage(format!(
            "{var_name} names profile '{profile}', which is in neither {} nor {}",
            cred.path.display(),
            conf.path.display()
        )));
    }
    Ok(Files {
        profile,
        conf,
        cred,
    })
}

/// The region and where it came from: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
/// `region`, else [`DEFAULT_REGION`].
fn region(env: &dyn Fn(&str) -> Option<String>, conf: &Profile) -> Result<(String, String)> {
    let region = first_set(
        env,
        &["AWS_REGION", "AWS_DEFAULT_REGION"],
        "the AWS CLI v2 takes that as region '' and fails",
    )?;
    Ok(match region {
        Some((name, r)) => (r, name.to_string()),
        None => match conf.entry("region") {
            Some(e) => (e.value.clone(), conf.describe()),
            None => (DEFAULT_REGION.to_string(), "the default".to_string()),
        },
    })
}

/// The profile's `addressing_style` under its `s3 =`; None lets the endpoint decide.
fn addressing(conf: &Profile) -> Result<Option<Addressing>> {
    let nested = conf
        .section
        .and_then(|s| s.get("s3"))
        .and_then(|e| e.nested("addressing_style"))
        .filter(|e| !e.value.is_empty());
    match nested {
        Some(e) => Addressing::parse(&e.value).map_err(|m| conf.file.error(e.line, m)),
        None => Ok(None),
    }
}

/// The CA bundle and where it was named: `AWS_CA_BUNDLE`, else the profile's `ca_bundle`.
fn ca_bundle(
    var: &dyn Fn(&str) -> Result<Option<String>>,
    conf: &Profile,
    home: Option<&Path>,
) -> Result<Option<(PathBuf, String)>> {
    Ok(match var("AWS_CA_BUNDLE")? {
        Some(p) => Some((expand_home(&p, home), "AWS_CA_BUNDLE".to_string())),
        None => conf.entry("ca_bundle").map(|e| {
            (
                expand_home(&e.value, home),
                format!("ca_bundle of {} (line {})", conf.describe(), e.line),
            )
        }),
    })
}

/// A profile in one file (its section may be absent).
struct Profile<'a> {
    name: &'a str,
    file: &'a File,
    section: Option<&'a Section>,
}

impl Profile<'_> {
    /// `profile 'P' in FILE`.
    fn describe(&self) -> String {
        format!("profile '{}' in {}", self.name, self.file.path.display())
    }

    fn entry(&self, key: &str) -> Option<&Entry> {
        self.file.entry(self.section, key)
    }
}

/// The endpoint and where it came from, as botocore looks for it: the variables, the
/// `[services NAME]` section's `s3 = endpoint_url`, the profile's `endpoint_url`; none at
/// all when configured endpoints are to be ignored.
fn endpoint(
    var: &dyn Fn(&str) -> Result<Option<String>>,
    conf: &Profile,
    notes: &mut Vec<String>,
    service: &str,
) -> Result<(Option<Endpoint>, Option<String>)> {
    let ignore = match var("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")? {
        Some(v) => boolean(&v)
            .ok_or_else(|| {
                Error::usage(format!(
                    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is '{}': expected true or false",
                    printable(&v)
                ))
            })?
            .then(|| "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS".to_string()),
        None => match conf.entry("ignore_configured_endpoint_urls") {
            Some(e) => boolean(&e.value)
                .ok_or_else(|| {
                    conf.file.error(
                        e.line,
                        "ignore_configured_endpoint_urls is neither true nor false",
                    )
                })?
                .then(|| format!("ignore_configured_endpoint_urls of {}", conf.describe())),
            None => None,
        },
    };
    let in_profile_s3 = conf
        .section
        .and_then(|s| s.get("s3"))
        .and_then(|e| e.nested("endpoint_url"))
        .filter(|e| !e.value.is_empty());
    if let Some(e) = in_profile_s3.filter(|_| service == "s3") {
        notes.push(format!(
            "{}: line {}: the endpoint_url under 's3 =' in profile '{}' is ignored, as the AWS CLI \
             ignores it: put it in a [services NAME] section's 's3 =' (with services = NAME in \
             the profile), or at the profile's top level",
            conf.file.path.display(),
            e.line,
            conf.name
        ));
    }
    if let Some(why) = ignore {
        return Ok((None, Some(format!("configured endpoints ignored: {why}"))));
    }
    let own = format!("AWS_ENDPOINT_URL_{}", service.to_ascii_uppercase());
    for name in [own.as_str(), "AWS_ENDPOINT_URL"] {
        if let Some(url) = var(name)? {
            let e = Endpoint::parse(&url).map_err(|m| Error::usage(format!("{name}: {m}")))?;
            return Ok((Some(e), Some(name.to_string())));
        }
    }
    if let Some(services) = conf.entry("services") {
        let name = format!("services {}", services.value);
        let section = conf.file.section(&name).ok_or_else(|| {
            conf.file.error(
                services.line,
                format!(
                    "services = {} in profile '{}' names no [{name}] section (the AWS CLI refuses this too)",
                    printable(&services.value),
                    conf.name
                ),
            )
        })?;
        let url = section
            .get(service)
            .and_then(|e| e.nested("endpoint_url"))
            .filter(|e| !e.value.is_empty());
        if let Some(e) = url {
            let endpoint = Endpoint::parse(&e.value).map_err(|m| conf.file.error(e.line, m))?;
            let origin = format!("[{name}] in {}", conf.file.path.display());
            return Ok((Some(endpoint), Some(origin)));
        }
    }
    match conf.entry("endpoint_url") {
        Some(e) => {
            let endpoint = Endpoint::parse(&e.value).map_err(|m| conf.file.error(e.line, m))?;
            Ok((Some(endpoint), Some(conf.describe())))
        }
        None => Ok((None, None)),
    }
}

/// The retry mode and attempts: the variables, else the profile's, else the standard
/// mode's 3 attempts (botocore's legacy mode takes 5).
fn retry(var: &dyn Fn(&str) -> Result<Option<String>>, conf: &Profile) -> Result<Retry> {
    let setting = |env_name: &'static str,
                   key: &'static str|
     -> Result<Option<(String, String, Option<usize>)>> {
        Ok(match var(env_name)? {
            Some(v) => Some((v, env_name.to_string(), None)),
            None => conf.entry(key).map(|e| {
                (
                    e.value.clone(),
                    format!("{key} of {}", conf.describe()),
                    Some(e.line),
                )
            }),
        })
    };
    let bad = |what: &str, line: Option<usize>, message: String| match line {
        Some(l) => conf.file.error(l, format!("{what}: {message}")),
        None => Error::usage(format!("{what} {message}")),
    };
    let mut origins = Vec::new();
    let mode = match setting("AWS_RETRY_MODE", "retry_mode")? {
        Some((v, origin, line)) => {
            let mode = RetryMode::parse(&v).ok_or_else(|| {
                bad(
                    if line.is_some() {
                        "retry_mode"
                    } else {
                        "AWS_RETRY_MODE"
                    },
                    line,
                    format!(
                        "is '{}': expected standard, adaptive or legacy",
                        printable(&v)
                    ),
                )
            })?;
            origins.push(origin);
            mode
        }
        None => RetryMode::Standard,
    };
    let max_attempts = match setting("AWS_MAX_ATTEMPTS", "max_attempts")? {
        Some((v, origin, line)) => {
            let n = v.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                bad(
                    if line.is_some() {
                        "max_attempts"
                    } else {
                        "AWS_MAX_ATTEMPTS"
                    },
                    line,
                    format!(
                        "is '{}': expected a whole number of attempts, 1 or more",
                        printable(&v)
                    ),
                )
            })?;
            origins.push(origin);
            n
        }
        None => mode.default_attempts(),
    };
    Ok(Retry {
        mode,
        max_attempts,
        origin: match origins.is_empty() {
            true => "the default".into(),
            false => origins.join(", "),
        },
    })
}

/// Keys found, where they came from, and a role to assume with them.
struct Found {
    credentials: Credentials,
    origin: String,
    assume_role: Option<AssumeRole>,
}

/// How deep `source_profile` chains may go (botocore refuses a cycle; this is a bound).
const MAX_CHAIN: usize = 4;

/// The keys, from the environment, else the profile's role, else the credentials file,
/// else the profile's `credential_process`, else the config file; `depth` is how many
/// `source_profile` links led here (the environment is not read below the top).
fn keys(
    env: &dyn Fn(&str) -> Option<String>,
    cred: &Profile,
    conf: &Profile,
    depth: usize,
) -> Result<Found> {
    if depth == 0 {
        if let Some(found) = env_keys(&|var| checked_var(env, var))? {
            return Ok(found);
        }
    }
    let either = |key: &str| merged(cred, conf, key);
    if let (Some((p, role)), None) = (either("role_arn"), either("web_identity_token_file")) {
        return assume_role(env, cred, conf, depth, p, role);
    }
    if let Some(found) = file_keys(cred)? {
        return Ok(found);
    }
    if let Some((p, e)) = either("credential_process") {
        let answer =
            process::run(&e.value, process::DEADLINE, SystemTime::now()).map_err(|why| {
                p.file.error(
                    e.line,
                    format!("credential_process of profile '{}' {why}", p.name),
                )
            })?;
        let mut origin = format!("credential_process of {}", p.describe());
        if let Some(at) = &answer.expiration {
            origin.push_str(&format!(", expiring {}", printable(at)));
        }
        return Ok(Found {
            credentials: answer.credentials,
            origin,
            assume_role: None,
        });
    }
    if let Some(found) = file_keys(conf)? {
        return Ok(found);
    }
    let other = ["web_identity_token_file", "sso_session", "sso_start_url"]
        .into_iter()
        .find(|k| either(k).is_some());
    let profile = cred.name;
    Err(Error::usage(match other {
        Some(k) => format!(
            "profile '{profile}' gets its keys through {k}, which bb-seek does not support; \
             export them with the AWS CLI v2 (v1 has no export-credentials): \
             eval \"$(aws configure export-credentials --profile {profile} --format env)\""
        ),
        None => format!(
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put profile '{profile}' in {}, \
             or use --no-sign for a public bucket",
            cred.file.path.display()
        ),
    }))
}

/// The keys in the environment, if both are there; one without the other is an error.
fn env_keys(var: &dyn Fn(&str) -> Result<Option<String>>) -> Result<Option<Found>> {
    match (var("AWS_ACCESS_KEY_ID")?, var("AWS_SECRET_ACCESS_KEY")?) {
        (Some(id), Some(secret)) => Ok(Some(Found {
            credentials: Credentials {
                access_key_id: id,
                secret_access_key: secret,
                session_token: var("AWS_SESSION_TOKEN")?.or(var("AWS_SECURITY_TOKEN")?),
            },
            origin: "environment (AWS_ACCESS_KEY_ID)".to_string(),
            assume_role: None,
        })),
        (Some(_), None) => Err(Error::usage(
            "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not",
        )),
        (None, Some(_)) => Err(Error::usage(
            "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not",
        )),
        (None, None) => Ok(None),
    }
}

/// A profile's `key` as botocore merges the files: the credentials file's over the
/// config's; with the file it came from.
fn merged<'a>(
    cred: &'a Profile<'a>,
    conf: &'a Profile<'a>,
    key: &str,
) -> Option<(&'a Profile<'a>, &'a Entry)> {
    cred.entry(key)
        .map(|e| (cred, e))
        .or_else(|| conf.entry(key).map(|e| (conf, e)))
}

/// A profile's static keys in one file, if both are there.
fn file_keys(p: &Profile) -> Result<Option<Found>> {
    let id = p.file.value(p.section, "aws_access_key_id");
    let secret = p.file.value(p.section, "aws_secret_access_key");
    match (id, secret) {
        (Some(id), Some(secret)) => Ok(Some(Found {
            credentials: Credentials {
                access_key_id: id.to_string(),
                secret_access_key: secret.to_string(),
                session_token: p
                    .file
                    .value(p.section, "aws_session_token")
                    .map(String::from),
            },
            origin: p.describe(),
            assume_role: None,
        })),
        (Some(_), None) | (None, Some(_)) => Err(Error::usage(format!(
            "{} has only one of aws_access_key_id and aws_secret_access_key",
            p.describe()
        ))),
        (None, None) => Ok(None),
    }
}

/// The role a profile names with `role_arn`, and the keys that assume it: its
/// `source_profile`'s (resolved as a profile is, static keys, a process or another role)
/// or, with `credential_source = Environment`, the environment's.
fn assume_role(
    env: &dyn Fn(&str) -> Option<String>,
    cred: &Profile,
    conf: &Profile,
    depth: usize,
    at: &Profile,
    role: &Entry,
) -> Result<Found> {
    let either = |key: &str| merged(cred, conf, key);
    let name = cred.name;
    let role_to_assume = role_to_assume(cred, conf, at, role)?;
    let source = either("source_profile");
    let credential_source = either("credential_source");
    let source_keys = match (source, credential_source) {
        (Some(_), Some((p, e))) => {
            return Err(p.file.error(
                e.line,
                format!("profile '{name}' has both source_profile and credential_source (the AWS CLI refuses this too)"),
            ))
        }
        (None, Some((p, e))) => credential_source_keys(env, name, p, e)?,
        (Some((p, e)), None) => source_profile_keys(env, cred, conf, depth, (p, e))?,
        (None, None) => {
            return Err(at.file.error(
                role.line,
                format!("profile '{name}' has role_arn but neither source_profile nor credential_source"),
            ))
        }
    };
    Ok(Found {
        credentials: source_keys.credentials,
        origin: format!(
            "role {} assumed with {}'s keys (from {})",
            printable(&role_to_assume.role_arn),
            match (source, credential_source) {
                (Some((_, e)), _) => format!("profile '{}'", e.value),
                _ => "the environment".to_string(),
            },
            source_keys.origin
        ),
        assume_role: Some(role_to_assume),
    })
}

/// The AssumeRole call for `role` (named by `at`): its session name (the profile's
/// `role_session_name`, checked by STS's rule, else botocore's), `external_id` and
/// `duration_seconds` (within STS's bounds).
fn role_to_assume(
    cred: &Profile,
    conf: &Profile,
    at: &Profile,
    role: &Entry,
) -> Result<AssumeRole> {
    let either = |key: &str| merged(cred, conf, key);
    let value = |key: &str| either(key).map(|(_, e)| e.value.clone());
    let session_name = value("role_session_name").unwrap_or_else(|| {
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("botocore-session-{}", secs / 1000)
    });
    let duration_seconds = match either("duration_seconds") {
        Some((p, e)) => Some(
            e.value
                .parse::<u32>()
                .ok()
                .filter(|d| (900..=43_200).contains(d))
                .ok_or_else(|| {
                    p.file.error(
                        e.line,
                        "duration_seconds is not a number of seconds from 900 to 43200 (STS's bounds)",
                    )
                })?,
        ),
        None => None,
    };
    let role_to_assume = AssumeRole {
        role_arn: role.value.clone(),
        session_name,
        external_id: value("external_id"),
        duration_seconds,
        profile: at.describe(),
        endpoint: None,
    };
    if role_to_assume
        .session_name
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || "=,.@-_".contains(c)))
    {
        let (p, e) = either("role_session_name").expect("a session name given");
        return Err(p.file.error(
            e.line,
            "role_session_name may hold only letters, digits and =,.@-_ (STS's rule)",
        ));
    }
    Ok(role_to_assume)
}

/// The keys `credential_source` (the entry `e` of profile `name`, in `p`) names: only
/// `Environment`'s, and those must be set.
fn credential_source_keys(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    p: &Profile,
    e: &Entry,
) -> Result<Found> {
    match e.value.as_str() {
        "Environment" => env_keys(&|var| checked_var(env, var))?.ok_or_else(|| {
            p.file.error(
                e.line,
                "credential_source = Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set",
            )
        }),
        other => Err(p.file.error(
            e.line,
            format!(
                "credential_source = {} is not supported by bb-seek (only Environment is); \
                 export the keys with the AWS CLI v2 (v1 has no export-credentials): \
                 eval \"$(aws configure export-credentials --profile {name} --format env)\"",
                printable(other)
            ),
        )),
    }
}

/// The keys of the profile that `source_profile` (the entry `e`, in `p`) names, for the
/// role of the profile `cred` and `conf` hold, `depth` links down: its static keys, else
/// its keys as a profile's are found; a role of its own is refused (one role, not a
/// chain).
fn source_profile_keys(
    env: &dyn Fn(&str) -> Option<String>,
    cred: &Profile,
    conf: &Profile,
    depth: usize,
    (p, e): (&Profile, &Entry),
) -> Result<Found> {
    let name = cred.name;
    if depth + 1 > MAX_CHAIN {
        return Err(p.file.error(
            e.line,
            format!("source_profile chains more than {MAX_CHAIN} profiles deep (a cycle?)"),
        ));
    }
    let source = e.value.as_str();
    let conf_section = conf.file.profile_section(source);
    let cred_section = cred.file.section(source);
    if conf_section.is_none() && cred_section.is_none() {
        return Err(p.file.error(
            e.line,
            format!(
                "source_profile = {} names a profile that is in neither file",
                printable(source)
            ),
        ));
    }
    let sc = Profile {
        name: source,
        file: cred.file,
        section: cred_section,
    };
    let sf = Profile {
        name: source,
        file: conf.file,
        section: conf_section,
    };
    // A source profile's own role_arn is followed only if it has no keys of its
    // own (botocore's rule: static keys end the chain).
    match file_keys(&sc)?.or(file_keys(&sf)?) {
        Some(found) => Ok(found),
        None => {
            let found = keys(env, &sc, &sf, depth + 1)?;
            if found.assume_role.is_some() {
                return Err(p.file.error(
                    e.line,
                    format!(
                        "source_profile = {} assumes a role itself; bb-seek assumes one role, not a chain: \
                         export the keys with the AWS CLI v2 (v1 has no export-credentials): \
                         eval \"$(aws configure export-credentials --profile {name} --format env)\"",
                        printable(source)
                    ),
                ));
            }
            Ok(found)
        }
    }
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
    use crate::util::temp::TempDir;
    use std::collections::HashMap;

    /// A home directory with `.aws/credentials` and `.aws/config`, removed on drop.
    struct Home(TempDir);

    impl Home {
        fn new(credentials: Option<&str>, config: Option<&str>) -> Home {
            let dir = TempDir::new("s3-home");
            std::fs::create_dir_all(dir.join(".aws")).unwrap();
            if let Some(c) = credentials {
                std::fs::write(dir.join(".aws/credentials"), c).unwrap();
            }
            if let Some(c) = config {
                std::fs::write(dir.join(".aws/config"), c).unwrap();
            }
            Home(dir)
        }

        fn resolve(&self, vars: &[(&str, &str)], no_sign: bool) -> Result<S3Settings> {
            let mut env: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            env.insert("HOME".into(), self.0.path().display().to_string());
            resolve(&|k| env.get(k).cloned(), no_sign)
        }
    }

    const CREDENTIALS: &str = "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = sdefault\n\n\
                               # the LAN box\n[minio]\n  aws_access_key_id=AKMINIO  \naws_secret_access_key = sminio\naws_session_token = tminio\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n\n[profile minio]\nregion = garage\n\
                          endpoint_url = http://global:1\ns3 =\n  endpoint_url = http://nas.lan:9000\n  addressing_style = virtual\n\
                          [profile conf-only]\naws_access_key_id = AKCONF\naws_secret_access_key = sconf\n\
                          [profile sso]\nsso_session = corp\n";

    fn key(s: &S3Settings) -> &str {
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
        // The endpoint_url under `s3 =` is the CLI's to ignore, and ours: said so.
        assert_eq!(
            s.endpoint,
            Some(Endpoint::parse("http://global:1").unwrap())
        );
        assert!(s
            .endpoint_origin
            .as_ref()
            .unwrap()
            .starts_with("profile 'minio' in "));
        assert!(
            s.notes.iter().any(|n| n
                .contains("line 8: the endpoint_url under 's3 =' in profile 'minio' is ignored")),
            "{:?}",
            s.notes
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

        // A moved file that is not there is empty, as botocore reads it, and said so.
        let vars = [
            ("AWS_CONFIG_FILE", "/nonexistent/cfg"),
            ("AWS_SHARED_CREDENTIALS_FILE", moved.to_str().unwrap()),
        ];
        let s = home.resolve(&vars, false).unwrap();
        assert_eq!((key(&s), s.region.as_str()), ("AKMOVED", DEFAULT_REGION));
        assert_eq!(
            s.notes,
            ["AWS_CONFIG_FILE /nonexistent/cfg does not exist: read as empty, as the AWS CLI does"]
        );
        let e = home
            .resolve(&[("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/c")], false)
            .unwrap_err();
        assert!(e.to_string().starts_with("no S3 credentials"), "{e}");
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

    const SERVICES: &str = "[default]\nendpoint_url = http://global:1\nservices = lan\n\
                            [services lan]\ns3 =\n  endpoint_url = http://nas.lan:9000\n\
                            [profile other]\nservices = lan\n[services other]\nsqs =\n  endpoint_url = http://q:1\n\
                            [profile missing]\nservices = nope\n\
                            [profile ignoring]\nendpoint_url = http://global:1\nignore_configured_endpoint_urls = True\n\
                            [profile bad-ignore]\nendpoint_url = http://global:1\nignore_configured_endpoint_urls = yes\n";

    fn endpoint_of(s: &S3Settings) -> (String, String) {
        (
            s.endpoint().to_string(),
            s.endpoint_origin.clone().unwrap_or_default(),
        )
    }

    #[test]
    fn endpoints_come_from_the_services_section_as_in_the_aws_cli() {
        let home = Home::new(Some(CREDENTIALS), Some(SERVICES));
        let (url, from) = endpoint_of(&home.resolve(&[], false).unwrap());
        assert_eq!(url, "http://nas.lan:9000");
        assert!(
            from.starts_with("[services lan] in ") && from.ends_with(".aws/config"),
            "{from}"
        );
        // The variables come first, the service's before the global one.
        let s = home
            .resolve(&[("AWS_ENDPOINT_URL", "http://a:1")], false)
            .unwrap();
        assert_eq!(
            endpoint_of(&s),
            ("http://a:1".into(), "AWS_ENDPOINT_URL".into())
        );
        // A services section without s3 leaves the profile's own endpoint_url.
        let s = home.resolve(
            &[
                ("AWS_PROFILE", "other"),
                ("AWS_ACCESS_KEY_ID", "AK"),
                ("AWS_SECRET_ACCESS_KEY", "s"),
            ],
            false,
        );
        assert_eq!(endpoint_of(&s.unwrap()).0, "http://nas.lan:9000");
        let e = home
            .resolve(&[("AWS_PROFILE", "missing")], true)
            .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().ends_with(".aws/config: line 13: services = nope in profile 'missing' names no [services nope] section (the AWS CLI refuses this too)"), "{e}");
        // Ignoring configured endpoints ignores the variables too, as botocore does.
        let s = home
            .resolve(
                &[
                    ("AWS_PROFILE", "ignoring"),
                    ("AWS_ENDPOINT_URL_S3", "http://a:1"),
                ],
                true,
            )
            .unwrap();
        assert_eq!(s.endpoint, None);
        assert!(endpoint_of(&s).1.starts_with(
            "configured endpoints ignored: ignore_configured_endpoint_urls of profile 'ignoring'"
        ));
        let s = home
            .resolve(&[("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")], true)
            .unwrap();
        assert_eq!(
            endpoint_of(&s),
            (
                "https://s3.us-east-1.amazonaws.com".into(),
                "configured endpoints ignored: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS".into()
            )
        );
        let s = home
            .resolve(
                &[
                    ("AWS_PROFILE", "ignoring"),
                    ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false"),
                ],
                true,
            )
            .unwrap();
        assert_eq!(endpoint_of(&s).0, "http://global:1");
        let e = home
            .resolve(&[("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "1")], true)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is '1': expected true or false"
        );
        let e = home
            .resolve(&[("AWS_PROFILE", "bad-ignore")], true)
            .unwrap_err();
        assert!(
            e.to_string()
                .ends_with("line 19: ignore_configured_endpoint_urls is neither true nor false"),
            "{e}"
        );
    }

    #[test]
    fn profiles_regions_and_empty_variables_as_the_aws_cli_takes_them() {
        let home = Home::new(Some(CREDENTIALS), Some(CONFIG));
        let s = home
            .resolve(&[("AWS_DEFAULT_PROFILE", "minio")], false)
            .unwrap();
        assert_eq!(key(&s), "AKMINIO");
        let s = home
            .resolve(
                &[("AWS_DEFAULT_PROFILE", "minio"), ("AWS_PROFILE", "default")],
                false,
            )
            .unwrap();
        assert_eq!(key(&s), "AKMINIO");
        assert!(
            s.notes[0]
                .starts_with("AWS_DEFAULT_PROFILE ('minio') comes before AWS_PROFILE ('default')"),
            "{:?}",
            s.notes
        );
        let e = home
            .resolve(&[("AWS_DEFAULT_PROFILE", "nope")], false)
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("AWS_DEFAULT_PROFILE names profile 'nope'"),
            "{e}"
        );
        for name in ["AWS_PROFILE", "AWS_DEFAULT_PROFILE"] {
            let e = home.resolve(&[(name, "")], false).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(
                e.to_string().starts_with(&format!(
                    "{name} is set but empty: the AWS CLI takes that as profile ''"
                )),
                "{e}"
            );
        }
        for name in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
            let e = home.resolve(&[(name, "")], false).unwrap_err();
            assert_eq!(e.to_string(), format!("{name} is set but empty: the AWS CLI v2 takes that as region '' and fails; unset it or give it a value"));
        }
        let s = home
            .resolve(&[("AWS_DEFAULT_REGION", "ap-south-1")], false)
            .unwrap();
        assert_eq!(
            (s.region.as_str(), s.region_origin.as_str()),
            ("ap-south-1", "AWS_DEFAULT_REGION")
        );
        let s = home.resolve(&[], false).unwrap();
        assert!(
            s.region_origin.starts_with("profile 'default' in "),
            "{}",
            s.region_origin
        );
        // Empty keys fall back to the files.
        let s = home
            .resolve(
                &[("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", "")],
                false,
            )
            .unwrap();
        assert_eq!(key(&s), "AKDEFAULT");
    }

    #[test]
    fn ca_bundles_and_retries_from_variables_and_profiles() {
        assert_eq!(
            Home::new(None, None).resolve(&[], true).unwrap().retry,
            Retry::default()
        );
        let config = "[default]\nca_bundle = ~/corp.pem\nretry_mode = legacy\n\
                      [profile n]\nmax_attempts = 7\n[profile bad]\nmax_attempts = 0\n[profile badmode]\nretry_mode = fast\n";
        let home = Home::new(Some(CREDENTIALS), Some(config));
        let s = home.resolve(&[], true).unwrap();
        let (path, from) = s.ca_bundle.clone().unwrap();
        assert_eq!(path, home.0.join("corp.pem"));
        assert!(
            from.starts_with("ca_bundle of profile 'default' in ") && from.ends_with("(line 2)"),
            "{from}"
        );
        assert_eq!((s.retry.mode, s.retry.max_attempts), (RetryMode::Legacy, 5));
        let s = home
            .resolve(
                &[("AWS_CA_BUNDLE", "/etc/ca.pem"), ("AWS_MAX_ATTEMPTS", "2")],
                true,
            )
            .unwrap();
        assert_eq!(
            s.ca_bundle,
            Some((PathBuf::from("/etc/ca.pem"), "AWS_CA_BUNDLE".into()))
        );
        assert_eq!((s.retry.mode, s.retry.max_attempts), (RetryMode::Legacy, 2));
        assert!(
            s.retry.origin.ends_with(", AWS_MAX_ATTEMPTS"),
            "{}",
            s.retry.origin
        );
        let s = home
            .resolve(
                &[("AWS_PROFILE", "n"), ("AWS_RETRY_MODE", "adaptive")],
                true,
            )
            .unwrap();
        assert_eq!(
            (s.retry.mode, s.retry.max_attempts, s.ca_bundle),
            (RetryMode::Adaptive, 7, None)
        );
        let e = home
            .resolve(&[("AWS_MAX_ATTEMPTS", "three")], true)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "AWS_MAX_ATTEMPTS is 'three': expected a whole number of attempts, 1 or more"
        );
        let e = home.resolve(&[("AWS_PROFILE", "bad")], true).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "line 7: max_attempts: is '0': expected a whole number of attempts, 1 or more"
            ),
            "{e}"
        );
        let e = home
            .resolve(&[("AWS_PROFILE", "badmode")], true)
            .unwrap_err();
        assert!(
            e.to_string()
                .ends_with("line 9: retry_mode: is 'fast': expected standard, adaptive or legacy"),
            "{e}"
        );
    }

    #[test]
    fn a_credential_process_runs_after_the_credentials_file_as_in_botocore() {
        let json = r#"{"Version": 1, "AccessKeyId": "AKPROC", "SecretAccessKey": "sproc", "SessionToken": "tproc", "Expiration": "2999-01-01T00:00:00Z"}"#;
        let config = format!(
            "[profile proc]\ncredential_process = printf '%s' '{json}'\nregion = eu-west-2\n\
             [profile both]\ncredential_process = printf '%s' '{json}'\n\
             [profile failing]\ncredential_process = sh -c 'echo token expired >&2; exit 1'\n\
             [profile unsplit]\ncredential_process = helper 'oops\n"
        );
        let creds = "[both]\naws_access_key_id = AKFILE\naws_secret_access_key = s\n";
        let home = Home::new(Some(creds), Some(&config));
        let s = home.resolve(&[("AWS_PROFILE", "proc")], false).unwrap();
        assert_eq!(key(&s), "AKPROC");
        assert_eq!(
            s.credentials.as_ref().unwrap().session_token.as_deref(),
            Some("tproc")
        );
        assert!(
            s.origin
                .starts_with("credential_process of profile 'proc' in "),
            "{}",
            s.origin
        );
        assert!(
            s.origin
                .ends_with(", expiring 2999-01-01T00:00:00Z, with a session token"),
            "{}",
            s.origin
        );
        assert!(!s.origin.contains("sproc"));
        // The credentials file's keys come first.
        assert_eq!(
            key(&home.resolve(&[("AWS_PROFILE", "both")], false).unwrap()),
            "AKFILE"
        );
        let e = home
            .resolve(&[("AWS_PROFILE", "failing")], false)
            .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().ends_with("line 7: credential_process of profile 'failing' 'sh' failed (exit status: 1): token expired"), "{e}");
        let e = home
            .resolve(&[("AWS_PROFILE", "unsplit")], false)
            .unwrap_err();
        assert!(e.to_string().ends_with("line 9: credential_process of profile 'unsplit' cannot be split into words: no closing quotation (')"), "{e}");
        // Not run with --no-sign.
        assert!(home.resolve(&[("AWS_PROFILE", "failing")], true).is_ok());
    }

    #[test]
    fn a_role_to_assume_with_a_source_profile_or_the_environment() {
        let config = "[profile base]\nregion = eu-west-1\n\
                      [profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = base\n\
                      role_session_name = bench-1\nexternal_id = ext\nduration_seconds = 1800\n\
                      [profile envrole]\nrole_arn = arn:aws:iam::123456789012:role/r\ncredential_source = Environment\n\
                      [profile ec2]\nrole_arn = arn:aws:iam::123456789012:role/r\ncredential_source = Ec2InstanceMetadata\n\
                      [profile orphan]\nrole_arn = arn:aws:iam::123456789012:role/r\n\
                      [profile chained]\nrole_arn = arn:aws:iam::123456789012:role/c\nsource_profile = admin\n\
                      [profile short]\nrole_arn = arn:aws:iam::123456789012:role/r\nsource_profile = base\nduration_seconds = 60\n\
                      [profile web]\nrole_arn = arn:aws:iam::123456789012:role/r\nweb_identity_token_file = /t\n";
        let creds = "[base]\naws_access_key_id = AKBASE\naws_secret_access_key = sbase\n";
        let home = Home::new(Some(creds), Some(config));
        let s = home.resolve(&[("AWS_PROFILE", "admin")], false).unwrap();
        assert_eq!(key(&s), "AKBASE");
        let role = s.assume_role.clone().unwrap();
        assert_eq!(
            (
                role.role_arn.as_str(),
                role.session_name.as_str(),
                role.external_id.as_deref(),
                role.duration_seconds
            ),
            (
                "arn:aws:iam::123456789012:role/admin",
                "bench-1",
                Some("ext"),
                Some(1800)
            )
        );
        assert!(s.origin.starts_with("role arn:aws:iam::123456789012:role/admin assumed with profile 'base''s keys (from profile 'base' in "), "{}", s.origin);
        let env = [
            ("AWS_PROFILE", "envrole"),
            ("AWS_ACCESS_KEY_ID", "AKENV"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ];
        // The environment's keys come before any profile: no role then, as in botocore.
        assert_eq!(home.resolve(&env, false).unwrap().assume_role, None);
        for (profile, want) in [
            ("envrole", "credential_source = Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"),
            ("ec2", "credential_source = Ec2InstanceMetadata is not supported by bb-seek (only Environment is); export the keys with the AWS CLI v2 (v1 has no export-credentials): eval \"$(aws configure export-credentials --profile ec2 --format env)\""),
            ("orphan", "profile 'orphan' has role_arn but neither source_profile nor credential_source"),
            ("chained", "source_profile = admin assumes a role itself; bb-seek assumes one role, not a chain"),
            ("short", "duration_seconds is not a number of seconds from 900 to 43200"),
            ("web", "profile 'web' gets its keys through web_identity_token_file, which bb-seek does not support; export them with the AWS CLI v2 (v1 has no export-credentials): eval \"$(aws configure export-credentials --profile web --format env)\""),
        ] {
            let e = home.resolve(&[("AWS_PROFILE", profile)], false).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(e.to_string().contains(want), "{profile}: {e}");
        }
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
