//! A real nginx on 127.0.0.1 for the tests, over TLS with certificates made by the openssl
//! CLI when asked, and as a reverse proxy when given the location.

use super::TempDir;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nginx on 127.0.0.1 with a temporary configuration, stopped when dropped.
pub struct Nginx {
    child: Child,
    pub port: u16,
    pub dir: TempDir,
}

pub fn nginx_binary() -> String {
    for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(candidate).exists() {
            return candidate.to_string();
        }
    }
    panic!("nginx is missing: scripts/setup.sh test installs it (apt-get install nginx)");
}

impl Nginx {
    /// Serves `www/` with PUT under /objects/, Range ignored under /norange/, a redirect
    /// under /moved/, and every request logged with its connection.
    pub fn start() -> Nginx {
        Nginx::start_with(None)
    }

    /// The same, over TLS with a certificate and its key when given.
    pub fn start_with(tls: Option<(&Path, &Path)>) -> Nginx {
        Nginx::start_conf(tls, "")
    }

    /// The same, with `locations` added to the server block (a reverse proxy, say).
    pub fn start_conf(tls: Option<(&Path, &Path)>, locations: &str) -> Nginx {
        let (ssl, certificate) = match tls {
            Some((cert, key)) => (
                " ssl",
                format!(
                    "ssl_certificate {};\n    ssl_certificate_key {};\n    ",
                    cert.display(),
                    key.display()
                ),
            ),
            None => ("", String::new()),
        };
        let dir = TempDir::new("seek-nginx");
        let root = dir.join("www");
        std::fs::create_dir_all(root.join("objects")).unwrap();
        for attempt in 0..5 {
            let port = super::free_port();
            let d = dir.path().display();
            let conf = format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
                 events {{ worker_connections 64; }}\n\
                 http {{\n  log_format conn '$connection $request_method $uri $status';\n  access_log {d}/access.log conn;\n\
                 client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;\n\
                 uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n  client_max_body_size 64m;\n\
                 keepalive_requests 100000;\n\
                 server {{\n    listen 127.0.0.1:{port}{ssl};\n    {certificate}root {d}/www;\n\
                 location /objects/ {{ dav_methods PUT; create_full_put_path on; }}\n\
                 location /norange/ {{ max_ranges 0; alias {d}/www/objects/; }}\n\
                 location /moved/ {{ return 301 /objects/; }}\n{locations}  }}\n}}\n"
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let mut child = Command::new(nginx_binary())
                .args([
                    "-p",
                    dir.path().to_str().unwrap(),
                    "-c",
                    dir.join("nginx.conf").to_str().unwrap(),
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting nginx");
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Nginx { child, port, dir };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            eprintln!(
                "nginx attempt {attempt} failed: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
        }
        panic!("nginx did not start on 127.0.0.1");
    }

    pub fn url(&self, prefix: &str) -> String {
        format!("http://127.0.0.1:{}/{prefix}/", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the openssl CLI is told for the certificates of the HTTPS tests: the extensions
/// of an authority and of a server for localhost (only: 127.0.0.1 is a name it lacks), and
/// an authority that signs with any dates (`openssl ca`, as `x509` cannot backdate).
const OPENSSL_CNF: &str = "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = bb-test\n\
    [ca_ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n\
    [server_ext]\nbasicConstraints = CA:FALSE\nsubjectAltName = DNS:localhost\nextendedKeyUsage = serverAuth\n\
    [self_ext]\nbasicConstraints = critical,CA:TRUE\nsubjectAltName = DNS:localhost\n\
    [ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = DIR/index.txt\nnew_certs_dir = DIR\nserial = DIR/serial\n\
    default_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n";

/// In a temporary directory, made with the openssl CLI: two certificate authorities,
/// `ca.pem` and `other-ca.pem`, and a server key with two certificates for localhost
/// signed by `ca.pem`: `server.pem`, valid now, and `expired.pem`, which ran out in 2020;
/// and with that key two self-signed certificates for localhost marked CA:TRUE, as
/// `openssl req -x509` makes them: `self-signed.pem`, valid now, and
/// `self-signed-expired.pem`.
pub struct Certificates(TempDir);

impl Certificates {
    pub fn make() -> Certificates {
        let dir = TempDir::new("seek-tls");
        let d = dir.path().to_str().unwrap().to_string();
        std::fs::write(dir.join("openssl.cnf"), OPENSSL_CNF.replace("DIR", &d)).unwrap();
        std::fs::write(dir.join("index.txt"), "").unwrap();
        std::fs::write(dir.join("serial"), "01\n").unwrap();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("the openssl CLI: scripts/setup.sh test installs it");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let key = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ];
        for ca in ["ca", "other-ca"] {
            let (pem, private) = (format!("{ca}.pem"), format!("{ca}.key"));
            let subject = format!("/CN=bb-test {ca}");
            let mut args = vec![
                "req",
                "-x509",
                "-config",
                "openssl.cnf",
                "-extensions",
                "ca_ext",
            ];
            args.extend(key);
            args.extend([
                "-keyout", &private, "-out", &pem, "-days", "2", "-subj", &subject,
            ]);
            openssl(&args);
        }
        let mut args = vec![
            "req",
            "-new",
            "-config",
            "openssl.cnf",
            "-subj",
            "/CN=localhost",
        ];
        args.extend(key);
        args.extend(["-keyout", "server.key", "-out", "server.csr"]);
        openssl(&args);
        for (pem, dates) in [
            ("server.pem", &["-days", "2"][..]),
            (
                "expired.pem",
                &[
                    "-startdate",
                    "20200101000000Z",
                    "-enddate",
                    "20200102000000Z",
                ],
            ),
        ] {
            let mut args = vec![
                "ca",
                "-batch",
                "-notext",
                "-config",
                "openssl.cnf",
                "-extensions",
                "server_ext",
                "-cert",
                "ca.pem",
                "-keyfile",
                "ca.key",
                "-in",
                "server.csr",
                "-out",
                pem,
            ];
            args.extend(dates);
            openssl(&args);
        }
        for (pem, dates) in [
            ("self-signed.pem", &["-days", "2"][..]),
            (
                "self-signed-expired.pem",
                &[
                    "-startdate",
                    "20200101000000Z",
                    "-enddate",
                    "20200102000000Z",
                ],
            ),
        ] {
            let mut args = vec![
                "ca",
                "-batch",
                "-notext",
                "-selfsign",
                "-config",
                "openssl.cnf",
                "-extensions",
                "self_ext",
                "-keyfile",
                "server.key",
                "-in",
                "server.csr",
                "-out",
                pem,
            ];
            args.extend(dates);
            openssl(&args);
        }
        std::fs::create_dir(dir.join("empty")).unwrap();
        Certificates(dir)
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }

    /// The key of the server's certificates.
    pub fn key(&self) -> std::path::PathBuf {
        self.0.join("server.key")
    }

    /// An nginx serving with certificate `pem`.
    pub fn nginx(&self, pem: &str) -> Nginx {
        Nginx::start_with(Some((&self.0.join(pem), &self.0.join("server.key"))))
    }
}
