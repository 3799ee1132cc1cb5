//! bb-rpc's open loop (`--rate`): calls sent on a fixed schedule whatever the replies do, up to
//! `--depth` in flight, each timed from when it was due (corrected: a stall counts for
//! every call it held back, as wrk2 records) and from when it was written (uncorrected),
//! with the schedule's lag (how late each send was) so that a client too slow for its
//! schedule shows as such.

use super::pipeline::{Pipeline, ReplyTimes};
use crate::stats::histogram::Histogram;
use crate::util::error::Result;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The highest `--rate`, calls per second per connection: a call every 100 ns is already
/// beyond any client here; beyond it, the schedule's arithmetic would mean nothing.
pub const MAX_RATE: f64 = 1e7;

/// A rate as the `rate` parameter (and `--rate`'s message) shows it: calls per second,
/// at most three decimals.
pub(crate) fn rate_param(rate: f64) -> String {
    let text = format!("{rate:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Calls per invocation per connection: as many as fall due in this time, so that the
/// harness's loop checks the iteration's end often, and at most [`MAX_BATCH`].
const SLICE: Duration = Duration::from_millis(10);
const MAX_BATCH: u64 = 1000;

/// Calls per connection per invocation of an open loop at `rate` calls per second.
pub fn calls_per_invocation(rate: f64) -> u64 {
    ((rate * SLICE.as_secs_f64()).round() as u64).clamp(1, MAX_BATCH)
}

/// The latencies of one connection's calls since they were last taken, in nanoseconds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Latencies {
    /// From when each call was due to its reply.
    pub corrected: Histogram,
    /// From when each call was written to its reply.
    pub uncorrected: Histogram,
    /// From when each call was due to when it was written.
    pub lag: Histogram,
}

impl Latencies {
    pub fn merge(&mut self, other: &Latencies) {
        self.corrected.merge(&other.corrected);
        self.uncorrected.merge(&other.uncorrected);
        self.lag.merge(&other.lag);
    }
}

/// One connection's latencies, filled by its sender (the lag) and its reader thread.
#[derive(Default)]
pub(crate) struct Recorder {
    state: Mutex<RecorderState>,
}

#[derive(Default)]
struct RecorderState {
    latencies: Latencies,
    /// Set when the latencies are taken at an iteration's end: the next call starts a
    /// fresh schedule, so the untimed pause between iterations delays nothing.
    restart: bool,
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl Recorder {
    fn lock(&self) -> std::sync::MutexGuard<'_, RecorderState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latencies so far, leaving none; the schedule restarts with the next call.
    pub fn take(&self) -> Latencies {
        let mut state = self.lock();
        state.restart = true;
        std::mem::take(&mut state.latencies)
    }

    fn restarts(&self) -> bool {
        std::mem::take(&mut self.lock().restart)
    }
}

impl ReplyTimes for Recorder {
    fn replied(&self, due: Instant, sent: Instant, now: Instant) {
        let mut state = self.lock();
        state.latencies.corrected.record(nanos(now - due));
        state.latencies.uncorrected.record(nanos(now - sent));
    }
}

/// One connection's calls on a fixed schedule, `period` apart from the first.
pub(crate) struct OpenLoop {
    pipeline: Pipeline,
    depth: usize,
    period_ns: f64,
    recorder: Arc<Recorder>,
    /// When call 0 of the schedule was due, and the next call's number.
    start: Option<Instant>,
    next: u64,
    due: Vec<Instant>,
}

impl OpenLoop {
    /// Drives `pipeline` (made with `recorder` as its [`ReplyTimes`]) at `rate` calls per
    /// second, up to `depth` in flight.
    pub fn new(pipeline: Pipeline, depth: usize, rate: f64, recorder: Arc<Recorder>) -> OpenLoop {
        OpenLoop {
            pipeline,
            depth,
            period_ns: 1e9 / rate,
            recorder,
            start: None,
            next: 0,
            due: Vec::new(),
        }
    }

    fn due_at(&self, start: Instant, call: u64) -> Instant {
        start + Duration::from_nanos((call as f64 * self.period_ns).round() as u64)
    }

    /// Makes the next `n` calls of the schedule: each sent once due (with every other
    /// call due by then, in one write), after waiting for room under `depth` if need be;
    /// then waits for their replies and for the end of their slot of the schedule, where
    /// the next call is due. Late sends stay late: the schedule never moves.
    pub fn calls(&mut self, n: u64) -> Result<()> {
        if self.recorder.restarts() || self.start.is_none() {
            fine_timer_slack();
            self.start = Some(Instant::now());
            self.next = 0;
        }
        let start = self.start.expect("set above");
        let end = self.next + n;
        while self.next < end {
            sleep_until(self.due_at(start, self.next));
            let now = Instant::now();
            if self.due_at(start, self.next) > now {
                continue; // woken early by a signal
            }
            self.due.clear();
            while self.next < end {
                let due = self.due_at(start, self.next);
                if due > now {
                    break;
                }
                self.due.push(due);
                self.next += 1;
            }
            let mut i = 0;
            while i < self.due.len() {
                let room = self
                    .pipeline
                    .wait_for_room(self.depth)?
                    .min(self.due.len() - i);
                let batch = &self.due[i..i + room];
                let sent = self.pipeline.issue(room, Some(batch))?;
                let mut state = self.recorder.lock();
                for &due in batch {
                    state
                        .latencies
                        .lag
                        .record(nanos(sent.saturating_duration_since(due)));
                }
                i += room;
            }
        }
        self.pipeline.wait_for_room(1)?;
        sleep_until(self.due_at(start, self.next));
        Ok(())
    }
}

/// Timer slack of 1 µs for this thread: the default 50 µs would make every scheduled send
/// up to 50 µs late on an idle board.
fn fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

/// Sleeps until `when` on the monotonic clock (which `Instant` reads), as an absolute
/// deadline: a thread preempted before it sleeps does not sleep the whole gap again.
fn sleep_until(when: Instant) {
    let now = Instant::now();
    if when <= now {
        return;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given, which lives on this stack.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        std::thread::sleep(when - now);
        return;
    }
    let target = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32) + (when - now);
    let deadline = libc::timespec {
        tv_sec: target.as_secs() as _,
        tv_nsec: target.subsec_nanos() as _,
    };
    // EINTR: a signal came; the caller checks the clock again anyway.
    // SAFETY: the deadline is a valid timespec on this stack; no remainder is asked for.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &deadline,
            std::ptr::null_mut(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocations_hold_about_ten_milliseconds_of_calls() {
        assert_eq!(calls_per_invocation(1.0), 1);
        assert_eq!(calls_per_invocation(200.0), 2);
        assert_eq!(calls_per_invocation(5000.0), 50);
        assert_eq!(calls_per_invocation(MAX_RATE), MAX_BATCH);
    }

    #[test]
    fn sleeps_end_at_their_deadline_not_before() {
        for ms in [0, 1, 5] {
            let when = Instant::now() + Duration::from_millis(ms);
            sleep_until(when);
            assert!(Instant::now() >= when, "{ms} ms");
        }
    }

    #[test]
    fn taking_the_latencies_restarts_the_schedule_once() {
        let r = Recorder::default();
        let t = Instant::now();
        r.replied(
            t,
            t + Duration::from_millis(3),
            t + Duration::from_millis(5),
        );
        assert!(!r.restarts());
        let l = r.take();
        assert_eq!(l.corrected.max(), Some(5_000_000));
        assert_eq!(l.uncorrected.max(), Some(2_000_000));
        assert!(r.restarts() && !r.restarts());
        assert_eq!(r.take().corrected.count(), 0);
    }
}
