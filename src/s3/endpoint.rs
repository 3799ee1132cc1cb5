//! Where S3 requests go: AWS's regional endpoint, or a custom one (MinIO, Garage, Ceph,
//! moto) given as a URL, and how a bucket is addressed there: virtual-hosted
//! (`BUCKET.s3.REGION.amazonaws.com/KEY`, what AWS wants) or path style
//! (`HOST/BUCKET/KEY`, what S3-compatible stores need).

use std::fmt;

/// How the bucket appears in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// `BUCKET.HOST/KEY`
    Virtual,
    /// `HOST/BUCKET/KEY`
    Path,
}

impl Addressing {
    /// `virtual` or `path` (the AWS config's `addressing_style`; `auto` is `None`: the
    /// endpoint decides).
    pub fn parse(s: &str) -> Result<Option<Addressing>, String> {
        match s {
            "virtual" => Ok(Some(Addressing::Virtual)),
            "path" => Ok(Some(Addressing::Path)),
            "auto" => Ok(None),
            _ => Err(format!(
                "invalid addressing style '{s}' (expected virtual, path or auto)"
            )),
        }
    }
}

/// A scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub https: bool,
    pub host: String,
    pub port: u16,
    /// Whether this is AWS's own endpoint (virtual-hosted addressing by default) rather
    /// than one given by the user (path style by default).
    pub aws: bool,
}

impl Endpoint {
    /// AWS's S3 endpoint for `region`.
    pub fn aws(region: &str) -> Endpoint {
        Endpoint {
            https: true,
            host: format!("s3.{region}.amazonaws.com"),
            port: 443,
            aws: true,
        }
    }

    /// `http[s]://HOST[:PORT][/]`, as `AWS_ENDPOINT_URL` gives it.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let bad = || {
            format!(
                "invalid endpoint URL '{}' (expected http[s]://HOST[:PORT])",
                crate::util::format::printable(url)
            )
        };
        let (https, rest) = match url.split_once("://") {
            Some(("http", rest)) => (false, rest),
            Some(("https", rest)) => (true, rest),
            _ => return Err(bad()),
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        // The host goes into the Host header as it is.
        let unfit = |c: char| c.is_control() || c.is_whitespace() || "/?#@".contains(c);
        if authority.is_empty() || authority.contains(unfit) {
            return Err(bad());
        }
        let default_port = if https { 443 } else { 80 };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().map_err(|_| bad())?),
            _ => (authority, default_port),
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Endpoint {
            https,
            host: host.to_string(),
            port,
            aws: false,
        })
    }

    /// The addressing this endpoint takes unless told otherwise: virtual-hosted on AWS
    /// when the bucket name can be a host name label, path style anywhere else.
    pub fn default_addressing(&self, bucket: &str) -> Addressing {
        let label = !bucket.contains('.')
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if self.aws && label {
            Addressing::Virtual
        } else {
            Addressing::Path
        }
    }

    /// The `Host` header for `host` on this endpoint: the port only when it is not the
    /// scheme's default.
    pub fn host_header(&self, host: &str) -> String {
        if self.port == if self.https { 443 } else { 80 } {
            host.to_string()
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.host_header(&self.host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_with_their_default_ports() {
        let e = Endpoint::parse("http://127.0.0.1:9000/").unwrap();
        assert_eq!(
            (e.https, e.host.as_str(), e.port, e.aws),
            (false, "127.0.0.1", 9000, false)
        );
        assert_eq!(e.to_string(), "http://127.0.0.1:9000");
        let e = Endpoint::parse("https://minio.lan").unwrap();
        assert_eq!(
            (e.port, e.host_header("b.minio.lan")),
            (443, "b.minio.lan".to_string())
        );
        assert_eq!(Endpoint::parse("http://[::1]:9000").unwrap().host, "[::1]");
        for bad in [
            "minio:9000",
            "ftp://x",
            "http://",
            "http://x:y",
            "http://x/path",
            "http://u@x",
        ] {
            assert!(Endpoint::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
        for bad in [
            "http://h\r\nX-Injected: 1",
            "http://h\x1b[2J:80",
            "http://h\t:1",
        ] {
            let e = Endpoint::parse(bad).unwrap_err();
            assert!(
                e.starts_with("invalid endpoint URL") && !e.contains(['\r', '\n', '\x1b', '\t']),
                "{e}"
            );
        }
    }

    #[test]
    fn aws_is_virtual_hosted_unless_the_bucket_cannot_be_a_host_label() {
        let aws = Endpoint::aws("eu-west-1");
        assert_eq!(aws.to_string(), "https://s3.eu-west-1.amazonaws.com");
        assert_eq!(aws.default_addressing("my-bucket"), Addressing::Virtual);
        assert_eq!(aws.default_addressing("my.bucket"), Addressing::Path);
        let minio = Endpoint::parse("http://nas:9000").unwrap();
        assert_eq!(minio.default_addressing("my-bucket"), Addressing::Path);
        assert_eq!(Addressing::parse("path"), Ok(Some(Addressing::Path)));
        assert_eq!(Addressing::parse("auto"), Ok(None));
        assert!(Addressing::parse("Path").is_err());
    }
}
