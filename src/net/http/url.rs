//! `http://HOST[:PORT]/PREFIX/` and `https://…`: where objects live, and the `Host`
//! header and the messages that name them.

use std::fmt;

/// `http://HOST[:PORT]/PREFIX/` or `https://...`: where objects live; an object's URL is
/// the prefix followed by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Over TLS (`https://`).
    pub https: bool,
    pub host: String,
    pub port: u16,
    /// The path before object names, starting and ending with `/`.
    pub prefix: String,
}

impl Url {
    pub fn parse(s: &str) -> std::result::Result<Url, String> {
        // The host and path go into the request line and the Host header as they are.
        if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "invalid URL '{}': a URL holds no space or control character",
                crate::util::format::printable(s)
            ));
        }
        let (https, rest) = match s.split_once("://") {
            Some(("http", rest)) => (false, rest),
            Some(("https", rest)) if cfg!(feature = "tls") => (true, rest),
            Some(("https", _)) => return Err(format!("'{s}': {}", crate::net::tls::MISSING)),
            _ => {
                return Err(format!(
                    "invalid URL '{s}' (expected http://HOST:PORT/PREFIX/)"
                ))
            }
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let bad = || format!("invalid URL '{s}' (expected http://HOST:PORT/PREFIX/)");
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().map_err(|_| bad())?),
            _ => (authority, Url::default_port(https)),
        };
        if !valid_host(host) || path.contains(['?', '#', ' ']) {
            return Err(bad());
        }
        let mut prefix = if path.is_empty() {
            "/".to_string()
        } else {
            path.to_string()
        };
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(Url {
            https,
            host: host.to_string(),
            port,
            prefix,
        })
    }

    /// The server at `host` and `port`, as a URL of prefix `/`.
    pub(crate) fn for_server(
        host: &str,
        port: u16,
        https: bool,
    ) -> std::result::Result<Url, String> {
        if https && !cfg!(feature = "tls") {
            return Err(format!("https://{host}: {}", crate::net::tls::MISSING));
        }
        Ok(Url {
            https,
            host: host.to_string(),
            port,
            prefix: "/".into(),
        })
    }

    fn default_port(https: bool) -> u16 {
        if https {
            443
        } else {
            80
        }
    }

    /// The `Host` header's value.
    pub(crate) fn host_header(&self) -> String {
        if self.port == Url::default_port(self.https) {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL of object `name`, for messages.
    pub fn object(&self, name: &str) -> String {
        format!("{self}{name}")
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.host_header(), self.prefix)
    }
}

/// A host as a URL can give it back: a name or IPv4 address without `:`, `[`, `]` or
/// `@`, or an IPv6 literal in brackets. `a:b` or `nas.local:` would be read as another
/// host and port when the URL is written out and read again.
fn valid_host(host: &str) -> bool {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => {
            !v6.is_empty()
                && v6
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        }
        None => !host.is_empty() && !host.contains([':', '[', ']', '@']),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:8080/objects").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.prefix.as_str()),
            ("127.0.0.1", 8080, "/objects/")
        );
        assert_eq!(
            u.object("random-1mb.txt"),
            "http://127.0.0.1:8080/objects/random-1mb.txt"
        );
        let u = Url::parse("http://[::1]:9000/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 9000));
        assert_eq!(Url::parse("http://example/").unwrap().port, 80);
        for bad in [
            "ftp://x/",
            "http://:80/",
            "http://x:port/",
            "http://x/a?b",
            "x",
            // A host holding a `:` whose label would read back as another host and port
            // (fuzzing's findings).
            "http://12a:wme8sk.127.1:080/g",
            "http://nas.local::080/k",
            "http://197.:190:80/k",
            "http://[::1/",
            "http://[]:80/",
        ] {
            assert!(Url::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
        for good in [
            "http://[::1]:9000/p/",
            "http://[fe80::1]/",
            "http://10.0.0.1:80/",
        ] {
            let u = Url::parse(good).unwrap();
            assert_eq!(Url::parse(&u.to_string()).unwrap(), u, "{good}");
        }
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_urls_default_to_port_443() {
        let u = Url::parse("https://s3.example.com/bucket").unwrap();
        assert_eq!(
            (u.https, u.port, u.host_header()),
            (true, 443, "s3.example.com".into())
        );
        assert_eq!(u.object("a.txt"), "https://s3.example.com/bucket/a.txt");
        let u = Url::parse("https://localhost:8443/").unwrap();
        assert_eq!(u.to_string(), "https://localhost:8443/");
        let u = Url::parse("http://x:443/").unwrap();
        assert_eq!((u.https, u.to_string()), (false, "http://x:443/".into()));
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn https_needs_the_tls_feature() {
        let e = Url::parse("https://x/").unwrap_err();
        assert!(
            e.starts_with("'https://x/': this bb-seek was built without TLS")
                && e.contains("--features tls")
                && e.contains("make dist"),
            "{e}"
        );
    }
}
