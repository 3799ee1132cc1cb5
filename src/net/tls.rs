//! HTTPS for bb-seek's HTTP client (cargo feature `tls`): rustls with the ring provider
//! (no OpenSSL, so the binaries stay static), one client configuration per process.
//! Trusted roots are the system's (rustls-native-certs: `SSL_CERT_FILE`, `SSL_CERT_DIR`,
//! else the distribution's bundle), or with `--ca-file` only that file's, as curl's
//! `--cacert` does: a self-signed server certificate in that file is trusted too (its
//! name and dates still checked), which webpki alone refuses as a CA used as an end
//! entity. The session runs over the caller's socket, whose every read and write
//! is bounded by the request's deadline: the handshake is too.

use crate::util::error::{Error, Result};
use std::path::Path;

/// Why a build without the `tls` feature cannot do HTTPS, and how to get one that can.
pub const MISSING: &str = "this bb-seek was built without TLS: rebuild it with \
    `cargo build --release --features tls`, or use the binaries of `make dist`";

/// The largest `--ca-file` read: a certificate is a few KiB.
#[cfg(feature = "tls")]
const MAX_CA_FILE: u64 = 4 << 20;

/// Sets the trusted roots of every HTTPS connection of this process: only those of
/// `ca_file` (PEM) when given, else the system's (loaded at the first connection). Called
/// once, from main, before anything runs; a file that cannot be read or holds no
/// certificate is a usage error.
#[cfg(feature = "tls")]
pub fn configure(ca_file: Option<&Path>) -> Result<()> {
    let Some(path) = ca_file else {
        return Ok(());
    };
    let what = format!("--ca-file {}", path.display());
    let limit = format!(
        "{} MiB (a system's whole bundle is a few hundred KiB)",
        MAX_CA_FILE >> 20
    );
    let pem = crate::util::file::read_regular(path, &what, MAX_CA_FILE, &limit)?;
    let (roots, own) = roots_from_pem(&pem).map_err(|e| Error::usage(format!("{what}: {e}")))?;
    CONFIG
        .set(Ok(client_config(roots, own)))
        .map_err(|_| Error::failed(format!("{what}: TLS was configured already")))
}

/// Trusts only the roots of the CA bundle the AWS settings name (`what`: `AWS_CA_BUNDLE`
/// or the profile's `ca_bundle`), unless `--ca-file` set them already: the flag comes
/// first, as the AWS CLI's `--ca-bundle` does. Read and checked as `--ca-file` is.
/// Whether it is the one used (not when the roots were set already).
#[cfg(feature = "tls")]
pub fn configure_bundle(path: &Path, what: &str) -> Result<bool> {
    if CONFIG.get().is_some() {
        return Ok(false);
    }
    let what = format!("{what} {}", path.display());
    let limit = format!(
        "{} MiB (a system's whole bundle is a few hundred KiB)",
        MAX_CA_FILE >> 20
    );
    let pem = crate::util::file::read_regular(path, &what, MAX_CA_FILE, &limit)?;
    let (roots, own) = roots_from_pem(&pem).map_err(|e| Error::usage(format!("{what}: {e}")))?;
    Ok(CONFIG.set(Ok(client_config(roots, own))).is_ok())
}

/// Without the `tls` feature there is no HTTPS for a CA bundle to serve (an `https://`
/// endpoint is refused where it is used).
#[cfg(not(feature = "tls"))]
pub fn configure_bundle(_path: &Path, _what: &str) -> Result<bool> {
    Ok(true)
}

/// Without the `tls` feature, `--ca-file` is refused: nothing here would use it.
#[cfg(not(feature = "tls"))]
pub fn configure(ca_file: Option<&Path>) -> Result<()> {
    match ca_file {
        Some(path) => Err(Error::usage(format!(
            "--ca-file {}: {MISSING}",
            path.display()
        ))),
        None => Ok(()),
    }
}

#[cfg(feature = "tls")]
pub(crate) use with_tls::*;

#[cfg(feature = "tls")]
mod with_tls {
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::client::WebPkiServerVerifier;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::server::ParsedCertificate;
    use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
    use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
    use std::io::{Read, Write};
    use std::sync::{Arc, OnceLock};

    /// The process's client configuration, or why there is none (no trusted roots).
    pub(super) static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();

    /// A TLS session over socket `S`.
    pub(crate) type TlsStream<S> = StreamOwned<ClientConnection, S>;

    /// A certificate the trusted file holds, byte for byte.
    type Own = Vec<CertificateDer<'static>>;

    /// Every certificate of a PEM file's text, as trusted roots, and the certificates
    /// themselves.
    pub(super) fn roots_from_pem(pem: &[u8]) -> Result<(RootCertStore, Own), String> {
        let (mut roots, mut own) = (RootCertStore::empty(), Vec::new());
        for (i, cert) in CertificateDer::pem_slice_iter(pem).enumerate() {
            let cert = cert.map_err(|e| format!("not a PEM file: {e}"))?;
            roots
                .add(cert.clone())
                .map_err(|e| format!("certificate {}: {e}", i + 1))?;
            own.push(cert);
        }
        if roots.is_empty() {
            return Err("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into());
        }
        Ok((roots, own))
    }

    /// webpki's verifier, and one exception, curl's: a server certificate that is itself
    /// one of `--ca-file`'s, marked CA:TRUE as `openssl req -x509` marks it, is trusted,
    /// where webpki refuses a CA used as an end entity. Its name is checked here; its
    /// dates were, since webpki checks them before the basic constraints
    /// (`check_issuer_independent_properties`; an expired one is refused as expired, as
    /// the integration test shows). The handshake's signatures are webpki's to check.
    #[derive(Debug)]
    struct CaFileVerifier {
        webpki: Arc<WebPkiServerVerifier>,
        own: Own,
    }

    impl ServerCertVerifier for CaFileVerifier {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp_response: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            let verified = self.webpki.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            );
            match verified {
                Err(rustls::Error::InvalidCertificate(CertificateError::Other(ref other)))
                    if matches!(
                        other.0.downcast_ref::<webpki::Error>(),
                        Some(webpki::Error::CaUsedAsEndEntity)
                    ) && self.own.iter().any(|c| c.as_ref() == end_entity.as_ref()) =>
                {
                    let cert = ParsedCertificate::try_from(end_entity)?;
                    rustls::client::verify_server_name(&cert, server_name)?;
                    Ok(ServerCertVerified::assertion())
                }
                other => other,
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.webpki.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.webpki.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.webpki.supported_verify_schemes()
        }
    }

    /// The system's trusted roots, and the certificates themselves (a self-signed server
    /// certificate among them is trusted as itself, as OpenSSL and curl do); none at all
    /// is an error that says where to get some.
    fn system_roots() -> Result<(RootCertStore, Own), String> {
        let found = rustls_native_certs::load_native_certs();
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(found.certs.iter().cloned());
        if roots.is_empty() {
            let why = found
                .errors
                .first()
                .map_or(String::new(), |e| format!(" ({e})"));
            return Err(format!(
                "no trusted root certificates in the system store{why}: install ca-certificates, \
                 set SSL_CERT_FILE, or give --ca-file"
            ));
        }
        Ok((roots, found.certs))
    }

    /// The configuration trusting `roots`, and the server certificates among `own`
    /// (`--ca-file`'s, or the system store's) as themselves.
    pub(super) fn client_config(roots: RootCertStore, own: Own) -> Arc<ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .expect("a store with a root builds a verifier");
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(CaFileVerifier { webpki, own }))
            .with_no_client_auth();
        Arc::new(config)
    }

    fn config() -> Result<Arc<ClientConfig>, String> {
        CONFIG
            .get_or_init(|| system_roots().map(|(roots, own)| client_config(roots, own)))
            .clone()
    }

    /// Opens a TLS session with `host` (its certificate checked for that name, which is
    /// also the SNI) over `socket`, and completes the handshake. An error names the host
    /// and rustls's reason.
    pub(crate) fn connect<S: Read + Write>(host: &str, socket: S) -> Result<TlsStream<S>, String> {
        let fail = |e: String| format!("TLS with {host}: {e}");
        let name = ServerName::try_from(host.trim_matches(['[', ']']).to_string())
            .map_err(|e| fail(format!("not a host name for TLS: {e}")))?;
        let connection = ClientConnection::new(config().map_err(fail)?, name)
            .map_err(|e| fail(e.to_string()))?;
        let mut tls = StreamOwned::new(connection, socket);
        while tls.conn.is_handshaking() {
            tls.conn
                .complete_io(&mut tls.sock)
                .map_err(|e| fail(reason(&e)))?;
        }
        Ok(tls)
    }

    /// rustls's reason for a failed handshake, with what to do about an unknown issuer.
    fn reason(e: &std::io::Error) -> String {
        use rustls::{CertificateError, Error as Tls};
        match e.get_ref().and_then(|inner| inner.downcast_ref::<Tls>()) {
            Some(Tls::InvalidCertificate(CertificateError::UnknownIssuer)) => format!(
                "{e}: the certificate's issuer is not trusted here (give its CA with --ca-file)"
            ),
            _ if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                "the server closed the connection during the handshake (is it an HTTPS port?)"
                    .to_string()
            }
            _ => e.to_string(),
        }
    }
}

#[cfg(all(test, feature = "tls"))]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_is_missing_or_has_no_certificate_is_refused() {
        // Refusals come before the configuration is set, so each can be tried here.
        let refused = |path: &Path| {
            let e = configure(Some(path)).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            e.to_string()
        };
        let e = refused(Path::new("/nonexistent/ca.pem"));
        assert!(
            e.starts_with("reading --ca-file /nonexistent/ca.pem: No such file"),
            "{e}"
        );
        let e = refused(Path::new("/dev/zero"));
        assert_eq!(e, "--ca-file /dev/zero: a device, not a regular file");
        let fifo = std::env::temp_dir().join(format!("bb-tls-{}-fifo", std::process::id()));
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = refused(&fifo);
        let _ = std::fs::remove_file(&fifo);
        assert!(e.ends_with("-fifo: a FIFO, not a regular file"), "{e}");
        let e = roots_from_pem(b"not a certificate\n").unwrap_err();
        assert!(e.contains("no PEM certificate"), "{e}");
        let garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n";
        let e = roots_from_pem(garbage.as_bytes()).unwrap_err();
        assert!(e.contains("certificate 1"), "{e}");
    }
}
