//! The machine under the measurement: CPU time and peak memory ([`cpu`]), the
//! environment record ([`env`](mod@env)) with other processes' activity ([`activity`]),
//! throttling and health around each benchmark ([`throttle`]), waiting for the SoC to
//! cool ([`cooldown`]), where the two sides of a measurement are pinned ([`pinning`]) and
//! where they ran ([`placement`]), reading /proc and /sys within bounds ([`sysfs`]),
//! the clean-up hooks that run when the process ends abnormally ([`exit`]), `--governor`
//! set and set back ([`governor`]), the sensors read through the run ([`monitor`]), the
//! board's
//! clusters ([`topology`]), the clock as measured rather than reported ([`clock`]) and
//! the hardware counters ([`counters`]), what flags a row's figure ([`validity`]), and a
//! Pi's firmware through `vcgencmd` ([`vcgencmd`]).

pub mod activity;
pub mod clock;
pub mod cooldown;
pub mod counters;
pub mod cpu;
pub mod env;
pub mod exit;
pub mod governor;
pub mod monitor;
pub mod pinning;
pub mod placement;
pub mod sysfs;
pub mod throttle;
pub mod topology;
pub mod validity;
pub mod vcgencmd;
