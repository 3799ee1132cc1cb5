//! A Raspberry Pi's `vcgencmd`, where it exists: the firmware's throttle bits
//! (`get_throttled`) and the ARM clock it measures (`measure_clock arm`), each a
//! short-lived child killed and reaped if the run ends meanwhile.

/// Runs `vcgencmd` with `args` when it exists: its output, or None when it does not
/// exist or fails. Killed and reaped if a signal ends the run meanwhile, as every child is.
fn run(args: &[&str]) -> Option<String> {
    let mut command = std::process::Command::new("vcgencmd");
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let (child, hook) =
        crate::system::exit::spawn_with_exit_hook(&mut command, crate::system::exit::Ending::Kill)
            .ok()?;
    let out = child.wait_with_output();
    crate::system::exit::remove_exit_hook(hook);
    let out = out.ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

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
