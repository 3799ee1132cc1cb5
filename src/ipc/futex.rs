//! futex(2) on a word of shared memory, the two operations the shm transport needs: wait
//! while the word holds a value (for at most a time), and wake its waiter. Not the
//! private variants: the waiter and the waker are two processes.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// The timeout as the kernel's futex(2) reads it: `long` seconds and nanoseconds, which is
/// `old_timespec32` on 32-bit ARM (`SYS_futex` there predates 64-bit time) and
/// `__kernel_timespec` on 64-bit targets, whatever `time_t` the C library chose.
#[repr(C)]
struct KernelTimespec {
    tv_sec: libc::c_long,
    tv_nsec: libc::c_long,
}

/// Sleeps while `word` holds `expected`, for at most `timeout`: false if the time ran
/// out, true otherwise (woken, the word already changed, or a signal; the caller checks).
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> bool {
    let ts = KernelTimespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::c_long,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned u32 (in a mapping that outlives the call); the
    // timespec lives on this stack for the call; the last two arguments are unused by
    // FUTEX_WAIT.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const KernelTimespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ETIMEDOUT)
}

/// Wakes the one waiter on `word`, if there is one.
pub(crate) fn wake(word: &AtomicU32) {
    // SAFETY: as for `wait`; FUTEX_WAKE reads no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            1i32,
            std::ptr::null::<KernelTimespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_wait_ends_at_its_timeout_at_once_on_a_changed_word_and_at_a_wake() {
        let word = Arc::new(AtomicU32::new(0));
        let started = Instant::now();
        assert!(!wait(&word, 0, Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert!(wait(&word, 1, Duration::from_secs(10)), "the word is not 1");
        let waker = {
            let word = word.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                word.store(1, Ordering::SeqCst);
                wake(&word);
            })
        };
        let started = Instant::now();
        while word.load(Ordering::SeqCst) == 0 {
            wait(&word, 0, Duration::from_secs(10));
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        waker.join().unwrap();
    }
}
