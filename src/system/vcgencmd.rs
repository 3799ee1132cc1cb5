//! A Raspberry Pi's `vcgencmd`, where it exists: the firmware's throttle bits
//! (`get_throttled`) and the ARM clock it measures (`measure_clock arm`), each a
//! short-lived child killed and reaped if the run ends meanwhile.

/// Runs `vcgencmd` with `args` when it exists: its output, or None when it does not
/// exist or fails. Killed and reaped if a signal ends the run meanwhile, as every child is.
fn run(args: &[&str]) -> Option<String> {
    use std::io::Read;
    let mut command = std::process::Command::new("vcgencmd");
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let (mut child, hook) =
        crate::system::exit::spawn_with_exit_hook(&mut command, crate::system::exit::Ending::Kill)
            .ok()?;
    // Its answer is a line: a vcgencmd that hangs, or writes on, is killed at the deadline.
    let deadline = std::time::Instant::now() + DEADLINE;
    let status = crate::system::exit::wait_until(&mut child, deadline, POLL);
    let mut out = Vec::new();
    if status.is_some_and(|s| s.success()) {
        let stdout = child.stdout.take()?;
        stdout.take(MOST_OUTPUT).read_to_end(&mut out).ok()?;
    } else {
        let _ = child.kill();
    }
    let _ = child.wait();
    crate::system::exit::remove_exit_hook(hook);
    (status.is_some_and(|s| s.success())).then(|| String::from_utf8_lossy(&out).into_owned())
}

/// How long a call may take: the firmware answers in milliseconds.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);
/// How often a call is looked at meanwhile.
const POLL: std::time::Duration = std::time::Duration::from_millis(5);
/// The most of its answer read: a line is tens of bytes.
const MOST_OUTPUT: u64 = 4096;

/// `vcgencmd measure_clock arm`'s answer, `frequency(48)=1500345728` (Hz), in MHz.
pub fn parse_measure_clock(text: &str) -> Option<f64> {
    let (key, hz) = text.trim().split_once('=')?;
    let hz: f64 = hz.trim().parse().ok()?;
    (key.starts_with("frequency(") && hz > 0.0 && hz.is_finite()).then_some(hz / 1e6)
}

/// `vcgencmd get_throttled`'s bits; None without vcgencmd.
pub fn throttled() -> Option<u32> {
    let text = run(&["get_throttled"])?;
    let hex = text
        .trim()
        .strip_prefix("throttled=")?
        .trim_start_matches("0x");
    u32::from_str_radix(hex, 16).ok()
}

/// `vcgencmd measure_clock arm` in MHz; None without vcgencmd.
pub fn arm_clock_mhz() -> Option<f64> {
    run(&["measure_clock", "arm"])
        .as_deref()
        .and_then(parse_measure_clock)
}
