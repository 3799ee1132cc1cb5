//! The progress of a run on stderr: what runs now and the ETA of the whole run, scaled by
//! how far off the plan's estimates have been so far. On a terminal, one live line cut to
//! the terminal's width, redrawn each second and erased when done; elsewhere (a pipe, a
//! log, ssh without -t) a line when each step starts and one when it ends, at most 80
//! columns. A step running past twice its estimate says so, with a revised ETA: on the
//! live line, or off a terminal in one line of its own.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::util::format::format_estimate;

/// The width of the lines printed off a terminal.
pub const LINE_WIDTH: usize = 80;
/// How often the live line is redrawn and an overrun looked for.
const TICK: Duration = Duration::from_secs(1);

/// A run's progress on stderr (see the module's doc).
pub struct Progress {
    line: Arc<Mutex<Line>>,
    ticker: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

/// Where the progress goes and how.
pub enum Shape {
    /// A terminal: one line redrawn in place, as wide as the terminal says it is.
    Live(Box<dyn Fn() -> usize + Send>),
    /// Anything else: a line per start, end and overrun.
    Lines,
}

/// What the progress line knows.
struct Line {
    out: Box<dyn Write + Send>,
    clock: Box<dyn Fn() -> Duration + Send>,
    shape: Shape,
    total: Duration,
    /// The estimates of the steps ended so far, and when the last one ended.
    done: Duration,
    done_at: Duration,
    current: Option<Step>,
    /// The live line is on the screen.
    shown: bool,
    /// Not redrawn until the next step: other lines are being printed.
    hidden: bool,
}

struct Step {
    tag: String,
    label: String,
    estimate: Duration,
    started: Duration,
    /// Its overrun was said (off a terminal, once).
    overrun: bool,
}

impl Progress {
    /// The progress of a run whose plan says `total`, on stderr.
    pub fn new(total: Duration) -> Progress {
        let shape = if std::io::stderr().is_terminal() {
            Shape::Live(Box::new(terminal_columns))
        } else {
            Shape::Lines
        };
        let start = Instant::now();
        let mut progress = Progress::with(
            Box::new(std::io::stderr()),
            Box::new(move || start.elapsed()),
            shape,
            total,
        );
        let (stop, stopped) = mpsc::channel::<()>();
        let line = progress.line.clone();
        let ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    lock(&line).tick();
                }
            });
        progress.ticker = ticker.ok().map(|t| (stop, t));
        progress
    }

    /// Progress written to `out`, timed by `clock` (the time since the run began), never
    /// redrawn by itself: [`Progress::tick`] does that.
    pub fn with(
        out: Box<dyn Write + Send>,
        clock: Box<dyn Fn() -> Duration + Send>,
        shape: Shape,
        total: Duration,
    ) -> Progress {
        let line = Line {
            out,
            clock,
            shape,
            total,
            done: Duration::ZERO,
            done_at: Duration::ZERO,
            current: None,
            shown: false,
            hidden: false,
        };
        Progress {
            line: Arc::new(Mutex::new(line)),
            ticker: None,
        }
    }

    /// Ends the step running, if any, and starts `label` (its place in the run, `tag`,
    /// is never cut), which should take `estimate`.
    pub fn step(&mut self, tag: &str, label: &str, estimate: Duration) {
        let mut line = lock(&self.line);
        line.end();
        let started = (line.clock)();
        line.current = Some(Step {
            tag: tag.to_string(),
            label: label.to_string(),
            estimate,
            started,
            overrun: false,
        });
        line.hidden = false;
        match line.shape {
            Shape::Live(_) => line.draw(),
            Shape::Lines => {
                let (_, eta) = line.eta();
                let text = line.text(&format!(
                    "about {}, ETA {}",
                    format_estimate(estimate),
                    clock_time(eta)
                ));
                line.print(&text);
            }
        }
    }

    /// Erases the live line until the next step, for other lines on stderr.
    pub fn clear(&mut self) {
        let mut line = lock(&self.line);
        line.erase();
        line.hidden = true;
    }

    /// Looks at the step running: redraws the live line, or says once that the step is
    /// past twice its estimate. Called each second in a run.
    pub fn tick(&mut self) {
        lock(&self.line).tick();
    }

    /// Ends the last step: its line off a terminal, the live line erased.
    pub fn finish(&mut self) {
        let mut line = lock(&self.line);
        line.end();
        line.erase();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((stop, ticker)) = self.ticker.take() {
            drop(stop);
            let _ = ticker.join();
        }
        lock(&self.line).erase();
    }
}

/// The line's state, even after a panic while it was held (it stays consistent).
fn lock(line: &Mutex<Line>) -> MutexGuard<'_, Line> {
    line.lock().unwrap_or_else(|e| e.into_inner())
}

impl Line {
    /// How long the step running has run, and the ETA of the whole run.
    fn eta(&self) -> (Duration, Duration) {
        let now = (self.clock)();
        // How far off the estimates of the steps ended have been.
        let pace = if self.done > Duration::ZERO {
            self.done_at.as_secs_f64() / self.done.as_secs_f64()
        } else {
            1.0
        };
        let Some(step) = &self.current else {
            let left = self.total.saturating_sub(self.done);
            return (Duration::ZERO, left.mul_f64(pace));
        };
        let ran = now.saturating_sub(step.started);
        let after = self.total.saturating_sub(self.done + step.estimate);
        let this = if ran > step.estimate * 2 {
            // Past twice its estimate: guess it runs as long again.
            ran
        } else {
            step.estimate.mul_f64(pace).saturating_sub(ran)
        };
        (ran, this + after.mul_f64(pace))
    }

    /// `TAG LABEL: TAIL`, the label cut so that the line fits its width.
    fn text(&self, tail: &str) -> String {
        let width = match &self.shape {
            // The last column left free: a line that fills it wraps on some terminals.
            Shape::Live(columns) => columns().max(2) - 1,
            Shape::Lines => LINE_WIDTH,
        };
        let Some(step) = &self.current else {
            return String::new();
        };
        let fixed = step.tag.chars().count() + 1 + 2 + tail.chars().count();
        let line = format!(
            "{} {}: {tail}",
            step.tag,
            cut_label(&step.label, width.saturating_sub(fixed))
        );
        line.chars().take(width).collect()
    }

    fn print(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    /// The live line, in place of what it showed.
    fn draw(&mut self) {
        if self.hidden || self.current.is_none() {
            return;
        }
        let (ran, eta) = self.eta();
        let step = self.current.as_ref().expect("a step runs");
        let tail = if ran > step.estimate * 2 {
            overrun(ran, step.estimate, eta)
        } else {
            format!(
                "{} of about {}, ETA {}",
                format_estimate(ran),
                format_estimate(step.estimate),
                clock_time(eta)
            )
        };
        let text = self.text(&tail);
        let _ = write!(self.out, "\r\x1b[K{text}");
        let _ = self.out.flush();
        self.shown = true;
    }

    fn erase(&mut self) {
        if self.shown {
            let _ = write!(self.out, "\r\x1b[K");
            let _ = self.out.flush();
            self.shown = false;
        }
    }

    fn tick(&mut self) {
        if self.hidden {
            return;
        }
        match self.shape {
            Shape::Live(_) => self.draw(),
            Shape::Lines => {
                let (ran, eta) = self.eta();
                let Some(step) = &mut self.current else {
                    return;
                };
                if step.overrun || ran <= step.estimate * 2 {
                    return;
                }
                step.overrun = true;
                let tail = overrun(ran, step.estimate, eta);
                let text = self.text(&tail);
                self.print(&text);
            }
        }
    }

    /// Ends the step running: counted as done, and its line off a terminal.
    fn end(&mut self) {
        let Some(step) = self.current.take() else {
            return;
        };
        let now = (self.clock)();
        self.done += step.estimate;
        self.done_at = now;
        if let Shape::Lines = self.shape {
            let (_, eta) = self.eta();
            let took = format_estimate(now.saturating_sub(step.started));
            let tail = format!("done in {took}, ETA {}", clock_time(eta));
            self.current = Some(step);
            let text = self.text(&tail);
            self.current = None;
            self.print(&text);
        }
    }
}

/// The tail of a step past twice its estimate.
fn overrun(ran: Duration, estimate: Duration, eta: Duration) -> String {
    format!(
        "{}, over twice its {}, ETA now {}",
        format_estimate(ran),
        format_estimate(estimate),
        clock_time(eta)
    )
}

/// `1:40`, `12:05`, `1:02:05`.
fn clock_time(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// `label` in at most `room` characters: a benchmark's `name (k=v, k=v, …)` keeps its
/// name and, in order, every parameter that still fits, a `…` where some are left out
/// (a long source URL goes, the client after it stays), named or, where that keeps more
/// of them, by their values alone; anything else is cut with `…`.
pub fn cut_label(label: &str, room: usize) -> String {
    let len = |s: &str| s.chars().count();
    if len(label) <= room {
        return label.to_string();
    }
    if let Some((name, params)) = label.strip_suffix(')').and_then(|l| l.split_once(" (")) {
        let named: Vec<&str> = params.split(", ").collect();
        let values: Vec<&str> = named
            .iter()
            .map(|p| p.split_once('=').map_or(*p, |(_, v)| v))
            .collect();
        let (a, b) = (fit(name, &named, room), fit(name, &values, room));
        let best = if b.1 > a.1 { b.0 } else { a.0 };
        if len(&best) <= room {
            return best;
        }
    }
    match room {
        0 => String::new(),
        r => label.chars().take(r - 1).chain(['…']).collect(),
    }
}

/// `name (p, p, …)` with, in order, every one of `params` that still fits in `room`
/// characters, a `…` for each run left out; and how many it kept.
fn fit(name: &str, params: &[&str], room: usize) -> (String, usize) {
    let shown = |kept: &[bool]| {
        let mut parts: Vec<&str> = Vec::new();
        for (param, &keep) in params.iter().zip(kept) {
            match keep {
                true => parts.push(param),
                false if parts.last() != Some(&"…") => parts.push("…"),
                false => {}
            }
        }
        format!("{name} ({})", parts.join(", "))
    };
    let mut kept = vec![false; params.len()];
    for i in 0..params.len() {
        kept[i] = true;
        if shown(&kept).chars().count() > room {
            kept[i] = false;
        }
    }
    (shown(&kept), kept.iter().filter(|&&k| k).count())
}

/// The columns of the terminal stderr is, from TIOCGWINSZ; 80 where it says nothing.
fn terminal_columns() -> usize {
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ fills a winsize, which `size` is.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    match size.ws_col {
        n if ok && n > 0 => n as usize,
        _ => LINE_WIDTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A writer whose bytes the test reads, and a clock it sets (in milliseconds).
    #[derive(Clone, Default)]
    struct Fake {
        bytes: Arc<Mutex<Vec<u8>>>,
        ms: Arc<AtomicU64>,
    }

    impl Write for Fake {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.bytes.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Fake {
        fn progress(&self, shape: Shape, total_s: u64) -> Progress {
            let ms = self.ms.clone();
            Progress::with(
                Box::new(self.clone()),
                Box::new(move || Duration::from_millis(ms.load(Ordering::SeqCst))),
                shape,
                Duration::from_secs(total_s),
            )
        }
        fn at(&self, s: f64) {
            self.ms.store((s * 1000.0) as u64, Ordering::SeqCst);
        }
        fn text(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.bytes.lock().unwrap())).unwrap()
        }
    }

    const LONG: &str = "bb.seek.sequential (key=random-16mb.txt, client=stream, \
                        source=http://127.0.0.1:8080/objects/, read-size=4k, cache=hot)";

    #[test]
    fn off_a_terminal_a_line_per_start_and_end_and_one_for_an_overrun() {
        let fake = Fake::default();
        let mut p = fake.progress(Shape::Lines, 30);
        p.step("[1/3]", "bb.x.a (k=1)", Duration::from_secs(10));
        fake.at(5.0);
        p.tick();
        // Half its estimate: the rest scaled by the pace so far (0.5).
        p.step("[2/3]", "bb.x.b", Duration::from_secs(10));
        assert_eq!(
            fake.text(),
            "[1/3] bb.x.a (k=1): about 10 s, ETA 0:30\n\
             [1/3] bb.x.a (k=1): done in 5.0 s, ETA 0:10\n\
             [2/3] bb.x.b: about 10 s, ETA 0:10\n"
        );
        fake.at(30.0);
        p.tick();
        p.tick();
        // Past twice 10 s after 25 s: said once, the step guessed to run as long again.
        assert_eq!(
            fake.text(),
            "[2/3] bb.x.b: 25 s, over twice its 10 s, ETA now 0:30\n"
        );
        p.step("[3/3]", LONG, Duration::from_secs(10));
        p.finish();
        let text = fake.text();
        for line in text.lines() {
            assert!(line.chars().count() <= LINE_WIDTH, "{line}");
        }
        assert!(
            text.ends_with(
                "[3/3] bb.seek.sequential (random-16mb.txt, stream, …): done in 0.0 s, ETA 0:00\n"
            ),
            "{text}"
        );
        p.finish();
        assert_eq!(fake.text(), "", "nothing runs: nothing to end");
    }

    #[test]
    fn on_a_terminal_one_line_cut_to_its_width_and_erased() {
        let fake = Fake::default();
        let mut p = fake.progress(Shape::Live(Box::new(|| 60)), 20);
        p.step("[1/2]", LONG, Duration::from_secs(10));
        fake.at(3.0);
        p.tick();
        let text = fake.text();
        assert!(!text.contains('\n'), "{text:?}");
        let draws: Vec<&str> = text.split("\r\x1b[K").filter(|d| !d.is_empty()).collect();
        assert_eq!(draws.len(), 2, "{text:?}");
        assert_eq!(
            draws[1],
            "[1/2] bb.seek.sequential (…): 3.0 s of about 10 s, ETA 0:17"
        );
        assert!(draws.iter().all(|d| d.chars().count() < 60), "{draws:?}");
        // Other lines: erased, and not redrawn until the next step.
        p.clear();
        p.tick();
        assert_eq!(fake.text(), "\r\x1b[K");
        p.step("[2/2]", "bb.x", Duration::from_secs(1));
        fake.at(6.0);
        p.tick();
        assert!(
            fake.text()
                .ends_with("\r\x1b[K[2/2] bb.x: 3.0 s, over twice its 1.0 s, ETA now 0:06"),
            "the overrun on the live line"
        );
        p.finish();
        assert_eq!(fake.text(), "\r\x1b[K");
        drop(p);
        assert_eq!(fake.text(), "", "erased once");
    }

    #[test]
    fn labels_keep_their_name_and_the_parameters_that_fit() {
        let label = "bb.rpc.async (depth=64, transport=unix, codec=raw)";
        assert_eq!(cut_label(label, 80), label);
        // By value where that keeps more of them.
        assert_eq!(cut_label(label, 40), "bb.rpc.async (64, unix, raw)");
        assert_eq!(cut_label(label, 30), "bb.rpc.async (64, unix, raw)");
        assert_eq!(cut_label(label, 20), "bb.rpc.async (64, …)");
        assert_eq!(cut_label(label, 8), "bb.rpc.…");
        assert_eq!(cut_label("plain words here", 10), "plain wor…");
        assert_eq!(cut_label(label, 0), "");
        assert_eq!(clock_time(Duration::from_secs(3725)), "1:02:05");
    }
}
