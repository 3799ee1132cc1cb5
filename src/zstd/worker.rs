//! One worker's jobs: a streaming compress of the input written twice around a flush, or
//! a streaming decompress of the input's frame, twice; with a context of its own per job,
//! or one per thread reset between jobs (`--reuse-context`). Every result is checked: a
//! compressed frame against a verified reference (or decoded back), a decompressed one by
//! its length; a whole frame by its length and FNV-1a hash. With `--lock global` each
//! streaming call (a write, flush or finish; a read) holds one process-wide lock.

use super::{Config, Lock, Op};
use crate::util::error::{Error, Result};
use crate::util::rng::fnv1a64;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use zstd::stream::raw::{Decoder, Encoder, InBuffer, Operation, OutBuffer};

/// What every worker shares: the input, its reference frames, and the settings.
pub(super) struct Shared {
    pub config: Config,
    /// The frame one compress job makes: input written twice around a flush.
    pub job_frame: Vec<u8>,
    /// The frame decompress jobs decode: the input compressed once.
    pub input_frame: Vec<u8>,
}

/// A worker's reusable state: its buffers, and its contexts with --reuse-context.
pub(super) struct Worker {
    pub output: Vec<u8>,
    encoder: Option<Encoder<'static>>,
    decoder: Option<Decoder<'static>>,
    lock: Lock,
}

/// The lock of `--lock global`: one for the process, as the GVL is one for Ruby's VM.
static GLOBAL: Mutex<()> = Mutex::new(());

/// One streaming call, holding [`GLOBAL`] for its length with `Lock::Global`; with
/// `Lock::None` nothing is taken.
fn streaming<T>(lock: Lock, call: impl FnOnce() -> T) -> T {
    match lock {
        Lock::None => call(),
        Lock::Global => {
            // The lock guards no data: a panic under it leaves nothing to distrust.
            let _held = GLOBAL.lock().unwrap_or_else(PoisonError::into_inner);
            call()
        }
    }
}

/// The error of zstd's `what`.
fn zstd_err(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(format!("zstd {what}"), e)
}

/// The context a job works with: with `reuse`, the worker's own in `kept`, made on first
/// use and `reset` before every later job; otherwise a new one in `fresh`, dropped with it.
fn context<'a, C>(
    kept: &'a mut Option<C>,
    fresh: &'a mut Option<C>,
    reuse: bool,
    (what, new): (&str, impl FnOnce() -> std::io::Result<C>),
    reset: impl FnOnce(&mut C) -> std::io::Result<()>,
) -> Result<&'a mut C> {
    if !reuse {
        return Ok(fresh.insert(new().map_err(zstd_err(what))?));
    }
    match kept {
        Some(c) => {
            reset(c).map_err(zstd_err("reset"))?;
            Ok(c)
        }
        slot => Ok(slot.insert(new().map_err(zstd_err(what))?)),
    }
}

impl Worker {
    pub fn new(shared: &Shared) -> Worker {
        let capacity = match shared.config.op {
            Op::Compress => zstd::zstd_safe::compress_bound(2 * shared.config.input.len()) + 1024,
            // One spare byte: a frame that decodes to more than the input fills it.
            Op::Decompress => shared.config.input.len() + 1,
        };
        Worker {
            output: Vec::with_capacity(capacity),
            encoder: None,
            decoder: None,
            lock: shared.config.lock,
        }
    }

    /// One compress job: a streaming encoder fed the input, flushed, fed again, finished.
    pub fn compress(&mut self, input: &[u8], level: i32, reuse: bool) -> Result<()> {
        let mut fresh = None;
        let encoder = context(
            &mut self.encoder,
            &mut fresh,
            reuse,
            ("encoder", || Encoder::new(level)),
            |e| e.reinit(),
        )?;
        self.output.clear();
        let mut out = OutBuffer::around(&mut self.output);
        for pass in 0..2 {
            streaming(self.lock, || write(encoder, input, &mut out))?;
            streaming(self.lock, || end(encoder, &mut out, pass == 1))?;
        }
        Ok(())
    }

    /// Decodes `frame` with a streaming decoder, each read under `lock`; returns the
    /// decoded length. The output buffer is never grown: a frame that fills it is an
    /// error, not a realloc.
    fn decompress_once(
        decoder: &mut Decoder<'static>,
        frame: &[u8],
        output: &mut Vec<u8>,
        lock: Lock,
    ) -> Result<usize> {
        decoder.reinit().map_err(zstd_err("reset"))?;
        output.clear();
        let mut out = OutBuffer::around(output);
        let mut src = InBuffer::around(frame);
        loop {
            let hint = streaming(lock, || decoder.run(&mut src, &mut out))
                .map_err(zstd_err("decompress"))?;
            if hint == 0 {
                return Ok(out.pos());
            }
            if out.pos() == out.capacity() {
                return Err(Error::failed(format!(
                    "decompressed output is longer than expected ({} bytes or more)",
                    out.capacity()
                )));
            }
            if src.pos() == frame.len() && hint > 0 && out.pos() < out.capacity() {
                return Err(Error::failed("the compressed frame is truncated"));
            }
        }
    }

    /// One decompress job: the input's frame decoded twice.
    pub fn decompress(&mut self, frame: &[u8], expected: usize, reuse: bool) -> Result<()> {
        let mut fresh = None;
        // decompress_once resets the decoder for every frame.
        let decoder = context(
            &mut self.decoder,
            &mut fresh,
            reuse,
            ("decoder", Decoder::new),
            |_| Ok(()),
        )?;
        for _ in 0..2 {
            let n = Worker::decompress_once(decoder, frame, &mut self.output, self.lock)?;
            if n != expected {
                return Err(Error::failed(format!(
                    "decompressed {n} bytes, expected {expected}"
                )));
            }
        }
        Ok(())
    }

    pub fn job(&mut self, shared: &Shared) -> Result<()> {
        let c = &shared.config;
        match c.op {
            Op::Compress => {
                self.compress(&c.input, c.level, c.reuse_context)?;
                if self.output != shared.job_frame {
                    // A frame unlike the reference: check it decodes to the input twice.
                    verify_job_frame(&self.output, &c.input)?;
                }
                Ok(())
            }
            Op::Decompress => self.decompress(&shared.input_frame, c.input.len(), c.reuse_context),
        }
    }
}

/// A write: the whole of `input` fed to the encoder.
fn write(encoder: &mut Encoder<'static>, input: &[u8], out: &mut OutBuffer<Vec<u8>>) -> Result<()> {
    let mut src = InBuffer::around(input);
    while src.pos() < input.len() {
        let before = (src.pos(), out.pos());
        encoder.run(&mut src, out).map_err(zstd_err("compress"))?;
        if (src.pos(), out.pos()) == before {
            return Err(Error::failed(
                "zstd compress made no progress (output buffer full)",
            ));
        }
    }
    Ok(())
}

/// A flush, or with `finish` the frame's end: the encoder emptied into `out`.
fn end(encoder: &mut Encoder<'static>, out: &mut OutBuffer<Vec<u8>>, finish: bool) -> Result<()> {
    loop {
        let remaining = if finish {
            encoder.finish(out, true)
        } else {
            encoder.flush(out)
        };
        if remaining.map_err(zstd_err("flush"))? == 0 {
            return Ok(());
        }
        if out.pos() == out.capacity() {
            return Err(Error::failed(
                "zstd flush made no progress (output buffer full)",
            ));
        }
    }
}

/// The input compressed in one go at `level`: the frame decompress jobs decode, and the
/// one the compression ratio is taken from.
pub fn compress_whole(input: &[u8], level: i32) -> Result<Vec<u8>> {
    zstd::bulk::compress(input, level).map_err(zstd_err("compress"))
}

/// Checks that `frame` decodes to `input` twice over (length and hash).
pub(super) fn verify_job_frame(frame: &[u8], input: &[u8]) -> Result<()> {
    let mut doubled = input.to_vec();
    doubled.extend_from_slice(input);
    verify_frame(frame, &doubled)
}

/// Checks that `frame` decodes to exactly `expected` (length and FNV-1a hash).
pub(super) fn verify_frame(frame: &[u8], expected: &[u8]) -> Result<()> {
    let mut decoder = Decoder::new().map_err(zstd_err("decoder"))?;
    let mut output = Vec::with_capacity(expected.len() + 1);
    let n = Worker::decompress_once(&mut decoder, frame, &mut output, Lock::None)
        .map_err(|e| e.within("verification"))?;
    let (got, want) = (fnv1a64(&output), fnv1a64(expected));
    if n != expected.len() || got != want {
        return Err(Error::failed(format!(
            "verification mismatch: decoded {n} bytes with hash {got:016x}, expected {} bytes with hash {want:016x}",
            expected.len()
        )));
    }
    Ok(())
}

/// How long one job takes here, the fastest of three run as the workers run them, for
/// the plan of single shots; `frame` is the input's [`compress_whole`].
pub fn job_time(config: &Config, frame: &[u8]) -> Result<Duration> {
    let shared = Shared {
        config: config.clone(),
        job_frame: Vec::new(),
        input_frame: Vec::new(),
    };
    let mut worker = Worker::new(&shared);
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        match config.op {
            Op::Compress => worker.compress(&config.input, config.level, false),
            Op::Decompress => worker.decompress(frame, config.input.len(), false),
        }?;
        fastest = fastest.min(started.elapsed());
    }
    Ok(fastest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Runs one job of `op` under `lock` on a thread of its own; its result arrives on
    /// the receiver.
    fn job_on_a_thread(op: Op, lock: Lock) -> std::sync::mpsc::Receiver<Result<()>> {
        let c = Config {
            lock,
            ..config(op, false)
        };
        let shared = Shared {
            input_frame: zstd::bulk::compress(&c.input, 3).unwrap(),
            job_frame: vec![],
            config: c,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(Worker::new(&shared).job(&shared)));
        rx
    }

    #[test]
    fn only_a_global_lock_job_waits_for_the_lock() {
        use std::sync::mpsc::RecvTimeoutError;
        let long = Duration::from_secs(30);
        for op in [Op::Compress, Op::Decompress] {
            let held = GLOBAL.lock().unwrap();
            job_on_a_thread(op, Lock::None)
                .recv_timeout(long)
                .expect("a job with no lock ignores the global one")
                .unwrap();
            let global = job_on_a_thread(op, Lock::Global);
            assert_eq!(
                global.recv_timeout(Duration::from_millis(300)).err(),
                Some(RecvTimeoutError::Timeout),
                "{op:?} under --lock global waits while the lock is held"
            );
            drop(held);
            global.recv_timeout(long).expect("then runs").unwrap();
        }
    }

    fn config(op: Op, reuse_context: bool) -> Config {
        Config {
            op,
            threads: 1,
            level: 3,
            reuse_context,
            input: Arc::new(crate::zstd::corpus::generate(50_000, 1)),
            input_name: "generated-50000".into(),
            lock: Lock::None,
            keep_busy: false,
        }
    }

    #[test]
    fn compress_job_frame_holds_the_input_twice() {
        for reuse in [false, true] {
            let c = config(Op::Compress, reuse);
            let shared = Shared {
                config: c.clone(),
                job_frame: vec![],
                input_frame: vec![],
            };
            let mut w = Worker::new(&shared);
            w.compress(&c.input, 3, reuse).unwrap();
            let first = w.output.clone();
            verify_job_frame(&first, &c.input).unwrap();
            w.compress(&c.input, 3, reuse).unwrap();
            assert_eq!(w.output, first, "a reset context makes the same frame");
        }
    }

    #[test]
    fn verification_catches_wrong_and_truncated_frames() {
        let input = crate::zstd::corpus::generate(50_000, 1);
        let mut other = input.clone();
        other[100] ^= 1;
        let err = verify_frame(&zstd::bulk::compress(&other, 3).unwrap(), &input)
            .unwrap_err()
            .to_string();
        assert!(err.contains("verification mismatch"), "{err}");
        let longer = [&input[..], b"x"].concat();
        let err = verify_frame(&zstd::bulk::compress(&longer, 3).unwrap(), &input)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("longer than expected")
                || err.contains(&format!("decoded {} bytes", longer.len())),
            "{err}"
        );
        let good = zstd::bulk::compress(&input, 3).unwrap();
        verify_frame(&good, &input).unwrap();
        let err = verify_frame(&good[..good.len() / 2], &input)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("truncated") || err.contains("mismatch"),
            "{err}"
        );
        assert!(verify_frame(b"not a zstd frame", &input).is_err());
    }

    #[test]
    fn decompress_job_checks_length() {
        let c = config(Op::Decompress, false);
        let frame = zstd::bulk::compress(&c.input, 3).unwrap();
        let shared = Shared {
            config: c.clone(),
            job_frame: vec![],
            input_frame: frame.clone(),
        };
        let mut w = Worker::new(&shared);
        w.job(&shared).unwrap();
        assert_eq!(w.output, *c.input);
        let err = w
            .decompress(&frame, c.input.len() + 1, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected"), "{err}");
    }
}
