//! The tests whose pass depends on this machine's speed, not only on what the binaries
//! do: each lives in a `timing` module of its area (so `cargo test timing::` runs them all
//! and `cargo test -- --skip timing::` none), and its timed part goes through [`retry`]:
//! one such test at a time, and a failing attempt tried again, [`TRIES`] in all, since
//! this machine is shared and a neighbour's burst stretches a run. The assertions are the
//! same on every try; a real fault fails all of them. While an attempt runs, the other
//! tests' runs of a binary through [`super::run_with`], [`super::run_in`] and
//! [`super::run_bounded`] wait (see [`shared`]): one test crate runs every area's tests
//! side by side, where each file's binary used to run alone.
//!
//! - `plan::timing`: `bb_zstd_plan_and_estimate_hold`,
//!   `bb_zstd_single_shots_are_estimated_from_a_calibration`, `bb_ipc_plan_and_estimate_hold`,
//!   `bb_rpc_plan_and_estimate_hold`, `bb_rpc_rate_rows_plan_and_estimate_hold`,
//!   `bb_seek_plan_and_estimate_hold` (the estimate within 25% of the wall time, and
//!   `--dry-run` under 1 s; retried inside `plan_and_run`),
//!   `bb_zstd_timed_iterations_last_their_time_whatever_the_jobs` (two 1 s iterations
//!   end within 15 s)
//! - `seek_s3::timing`: `through_a_20_ms_proxy_the_estimate_is_the_wall_time_of_the_run`
//!   (bb-seek's estimate over HTTP through scripts/latency-proxy.py within 25% of the wall
//!   time; retried inside `plan_and_run`)
//! - `ipc::timing`: `vs_floor_is_the_mean_of_interleaved_pairs_and_a_pinned_call_costs_at_least_its_floor`
//!   (a blocking call's mean at least 1.3× its floor)
//! - `rpc::timing`: `with_the_floor_asked_for_every_rpc_row_pairs_its_iterations_with_the_floor`
//!   (a sync call's mean over 0.8× its floor), `a_client_fails_with_a_clear_error_when_its_server_dies_or_misbehaves`
//!   and `a_unix_listener_with_a_full_backlog_fails_the_connect_by_its_deadline` (ended
//!   within 10 s), `a_stop_is_bounded_even_when_a_client_never_reads_its_replies` (within 8 s)
//! - `seek::timing`: `hostile_http_servers_are_ended_by_the_request_deadline` (a 1 s
//!   deadline ends the run within 6 s) and, with `tls`,
//!   `a_silent_https_server_is_ended_by_the_request_deadline`
//! - `outputs::timing`: `an_output_that_cannot_be_written_is_refused_before_measuring`,
//!   `an_output_in_an_unwritable_directory_is_refused_before_measuring`,
//!   `bb_compare_refuses_a_directory_or_a_missing_one_before_comparing` (refused within
//!   3 s, where measuring would take 4)
//! - `noise::timing`: `a_run_level_shift_is_measured_by_calibration_and_then_covered` (a
//!   synthetic row's 1% fork and iteration noise, which a busy neighbour swamps)
//! - `ab::timing`: `a_drift_through_the_run_shows_between_sequential_runs_and_cancels_in_pairs`
//!   (two sequential runs of one drifting build called different, and a tie in pairs)
//!   and `a_known_slowdown_is_called_and_the_pair_takes_turns` (a threefold slowdown
//!   called faster, measured between 2 and 4.5)

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, RwLock, RwLockReadGuard, TryLockError};
use std::time::{Duration, Instant};

/// Attempts before a timing test counts as failed.
pub const TRIES: usize = 5;

/// One timed attempt at a time, whatever the test harness's threads.
static ALONE: Mutex<()> = Mutex::new(());

/// Held shared by every run of a binary through the helpers, and exclusively by a timed
/// attempt.
static GATE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Whether this thread is making a timed attempt (its own runs pass the gate).
    static TIMED: Cell<bool> = const { Cell::new(false) };
}

/// What a run of a binary holds while its child runs, so that a timed attempt of another
/// test waits for it and it for the attempt. It waits a minute at most, then runs anyway:
/// a thread that a timing test starts must not wait for that test forever.
pub fn shared() -> Option<RwLockReadGuard<'static, ()>> {
    if TIMED.with(Cell::get) {
        return None;
    }
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        match GATE.try_read() {
            Ok(guard) => return Some(guard),
            Err(TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// Runs `attempt` until it returns without panicking, at most [`TRIES`] times, holding
/// the lock that keeps timing tests apart; when every try fails, fails with each try's
/// message, `what` naming the test.
pub fn retry<T>(what: &str, mut attempt: impl FnMut() -> T) -> T {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let mut failures = Vec::new();
    for n in 1..=TRIES {
        let exclusive = GATE.write().unwrap_or_else(|e| e.into_inner());
        TIMED.with(|t| t.set(true));
        let result = catch_unwind(AssertUnwindSafe(&mut attempt));
        TIMED.with(|t| t.set(false));
        drop(exclusive);
        match result {
            Ok(value) => {
                if n > 1 {
                    eprintln!("{what}: passed on try {n} of {TRIES}");
                }
                return value;
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(a panic without a message)".to_string());
                failures.push(format!("try {n}: {message}"));
            }
        }
    }
    panic!(
        "{what} failed in all {TRIES} tries:\n{}",
        failures.join("\n")
    );
}
