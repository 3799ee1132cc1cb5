//! A real `bb-rpc serve` process for the tests: on a temporary Unix socket or on
//! 127.0.0.1 with an ephemeral port, its stderr collected, killed when dropped.

use super::TempDir;
use boardbench::net::addr::Addr;
use boardbench::rpc::config::ClientConfig;
use boardbench::rpc::protocol::Codec;
use boardbench::wire;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_bb-rpc");

/// A `bb-rpc serve` process, its stderr collected.
pub struct Server {
    pub child: Child,
    pub addr: Addr,
    stderr: Arc<Mutex<String>>,
    _dir: TempDir,
}

impl Server {
    pub fn start(transport: &str, extra: &[&str]) -> Server {
        let dir = TempDir::new("rpc");
        let listen = match transport {
            "unix" => format!("unix:{}", dir.join("rpc.sock").display()),
            _ => "tcp:127.0.0.1:0".to_string(),
        };
        Server::start_at(&listen, extra, dir)
    }

    /// A server on `listen`; `dir` lives as long as it.
    pub fn start_at(listen: &str, extra: &[&str], dir: TempDir) -> Server {
        let mut child = Command::new(EXE)
            .args(["serve", "--listen", listen])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = Addr::parse(line.trim().strip_prefix("listening on ").expect(&line)).unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (sink, mut pipe) = (stderr.clone(), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Server {
            child,
            addr,
            stderr,
            _dir: dir,
        }
    }

    pub fn config(&self, codec: Codec) -> ClientConfig {
        ClientConfig {
            addr: self.addr.clone(),
            codec,
            max_frame: wire::DEFAULT_MAX_FRAME,
            timeout: Duration::from_secs(10),
        }
    }

    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig).unwrap();
    }

    /// SIGTERM, then the exit code and everything it logged.
    pub fn stop(self) -> (i32, String) {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        self.wait()
    }

    /// Waits for the server to exit on its own (a stop already asked for: a second
    /// signal would end it at once, before its summary line); its exit code and log.
    pub fn wait(mut self) -> (i32, String) {
        let until = Instant::now() + Duration::from_secs(10);
        let code = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code().unwrap_or(-1);
            }
            assert!(Instant::now() < until, "the server did not stop within 10s");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        let log = self.stderr.lock().unwrap().clone();
        (code, log)
    }

    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
