//! bb-ipc's flags checked: the transports and calls to measure, and the placements of
//! the client and the server (by default across two cores and on one; `--pin`'s CPUs;
//! `--pin none`). A bad value is a usage error (exit 2) that names its flag.

use super::args::Args;
use super::calls::{self, Call};
use super::transport::Transport;
use crate::harness::cli::{CommonArgs, HasCommon};
use crate::system::pinning::{placements, Pinning};
use crate::util::error::{Error, Result};

/// The transports of a run that names none: the Unix stream socket (dRuby's `drbunix:`)
/// and shared memory, the floor under every transport. shm-spin burns a core while it
/// waits, so it runs only when asked for.
pub const DEFAULT_TRANSPORTS: [Transport; 2] = [Transport::Unix, Transport::Shm];

/// A run, checked.
pub struct Options {
    pub flags: CommonArgs,
    pub transports: Vec<Transport>,
    pub calls: Vec<Call>,
    /// Whether the calls are also made in-process (`--no-local` leaves them out).
    pub local: bool,
    /// Where the client and its server run, each a row of its own; the first is the
    /// main one, where every call runs (the others: the plain call and the floor).
    pub placements: Vec<Pinning>,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        let flags = args.common()?;
        check_pin(flags.pin.as_deref())?;
        let placements = placements(flags.pin.as_deref(), flags.unpinned);
        Ok(Options {
            transports: args
                .transport
                .clone()
                .unwrap_or(DEFAULT_TRANSPORTS.to_vec()),
            calls: args.calls.clone().unwrap_or(calls::ALL.to_vec()),
            local: !args.no_local,
            placements,
            flags,
        })
    }
}

/// `--pin CLIENT,SERVER`, or `--pin CPU` for both on one CPU; each must be one this
/// process may run on.
fn check_pin(cpus: Option<&[usize]>) -> Result<()> {
    let Some(cpus) = cpus else {
        return Ok(());
    };
    if cpus.len() > 2 {
        return Err(Error::usage(
            "--pin takes CLIENT_CPU,SERVER_CPU or one CPU for both",
        ));
    }
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| Error::failed(format!("reading this process's CPUs: {e}")))?;
    for &cpu in cpus {
        if !allowed.is_set(cpu).unwrap_or(false) {
            return Err(Error::usage(format!(
                "--pin: CPU {cpu} is not one this process may run on"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cli::parse_from;

    fn options(argv: &[&str]) -> Result<Options> {
        let args: Args = parse_from(argv).unwrap_or_else(|_| panic!("{argv:?}"));
        Options::from_args(&args)
    }

    /// A CPU this process may run on.
    fn allowed_cpu() -> usize {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        (0..nix::sched::CpuSet::count())
            .find(|&c| set.is_set(c).unwrap_or(false))
            .unwrap()
    }

    #[test]
    fn the_defaults_call_everything_over_unix_sockets_and_shm_in_chosen_placements() {
        let o = options(&[]).unwrap();
        assert_eq!(o.transports, [Transport::Unix, Transport::Shm]);
        assert_eq!(o.calls, calls::ALL);
        assert!(o.local);
        assert_eq!(o.placements, placements(None, false));
        assert!(o.placements.iter().all(|p| p.cpus().is_some()), "pinned");
        let o = options(&["--pin", "none"]).unwrap();
        assert_eq!(o.placements, [Pinning::Unpinned]);
        let o = options(&[
            "--no-local",
            "--transport",
            "pipes,tcp",
            "--calls",
            "method_a1",
        ])
        .unwrap();
        assert!(!o.local);
        assert_eq!(o.transports, [Transport::Pipes, Transport::Tcp]);
        assert_eq!(o.calls, [Call::from_name("method_a1").unwrap()]);
    }

    #[test]
    fn pin_puts_the_client_on_the_first_cpu_and_the_server_on_the_last() {
        let cpu = allowed_cpu();
        let text = cpu.to_string();
        let one = options(&["--pin", &text]).unwrap().placements;
        assert_eq!(one, [Pinning::Given(vec![cpu])]);
        assert_eq!(one[0].cpus(), Some((cpu, cpu)));
        let both = format!("{cpu},{cpu}");
        let both = options(&["--pin", &both]).unwrap().placements;
        assert_eq!(both[0].cpus(), Some((cpu, cpu)));
    }

    #[test]
    fn a_bad_pin_is_refused_by_name() {
        let cpu = allowed_cpu().to_string();
        for argv in [
            &["--pin", &format!("{cpu},{cpu},{cpu}")][..],
            &["--pin", "99999"],
            &["--pin", &format!("{cpu},99999")],
        ] {
            let Err(e) = options(argv) else {
                panic!("{argv:?} passed")
            };
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
            assert!(e.to_string().contains("--pin"), "{argv:?}: {e}");
        }
        let Err(e) = options(&["--quick", "--full"]) else {
            panic!("two profiles passed")
        };
        assert!(e.to_string().contains("--quick"), "{e}");
    }
}
