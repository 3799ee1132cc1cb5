//! A local object mapped read-only into memory, so the stream serves reads straight from
//! the page cache with one copy instead of two (kernel to cache, cache to caller). Mapping
//! reserves addresses only: a fetched range's pages, all in the page cache (mincore), come
//! into this process's memory as the stream copies out of them (page faults, each mapping
//! up to 64 KiB or a large folio) and leave it when the stream evicts it (`MADV_DONTNEED`:
//! the pages stay in the page cache but are no longer mapped here), so what the process
//! holds of the object stays within the stream's cache bound, as with a copying cache.
//!
//! A file truncated under the run leaves its mapping's pages past the new end unbacked,
//! and reading one raises SIGBUS, which would end the process without a word. So every
//! mapping the stream reads is registered with a SIGBUS handler of this module's: a fault
//! inside one is reported as a read past the file's end is (`PATH ended at N, before the
//! M bytes it should hold (it changed under the run?)`), one line on stderr, and the
//! process exits 1 (the fork, whose parent then fails the benchmark, or the run); any
//! other SIGBUS goes to the handler that was there before (Rust's own, or the default).
//! The handler only reads atomics and makes async-signal-safe calls (fstat, write,
//! _exit); nothing resumes after the fault. A mapping that cannot be registered is not
//! read: the stream then reads into its arena with pread, whose short read says the same.

use crate::util::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::OnceLock;

/// Where mappings start: a multiple of the largest range the kernel maps around one fault
/// (fault-around: 64 KiB by default; on recent kernels, a whole large folio, up to 2 MiB),
/// so that those ranges line up with the stream's blocks and regions instead of
/// straddling them.
pub(crate) const ALIGN: usize = 2 << 20;

/// A whole file mapped read-only and shared; unmapped when dropped.
pub struct Mapping {
    addr: *mut libc::c_void,
    len: usize,
    /// The file's path, for errors.
    path: String,
    /// Its place among the mappings the SIGBUS handler knows, with what it reads there.
    registered: Option<Registered>,
}

/// How many mappings the SIGBUS handler knows at once: a stream has one, and a run one
/// stream a benchmark (another mapping a shot checks `--cold` with, for a moment).
const SLOTS: usize = 32;

const FREE: u8 = 0;
/// Being filled in, or emptied: the handler passes it by.
const BUSY: u8 = 1;
const LIVE: u8 = 2;

/// What the SIGBUS handler knows of one live mapping: where it is, the file (a descriptor
/// of its own, to read the file's size with fstat), and the start of its message.
struct Slot {
    state: AtomicU8,
    start: AtomicUsize,
    /// Where its pages end: the last one is whole.
    end: AtomicUsize,
    /// The bytes of the file it maps, all of them.
    len: AtomicUsize,
    fd: AtomicI32,
    /// `bb-seek: error: PATH `, in memory the registered mapping owns.
    head: AtomicPtr<u8>,
    head_len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)] // one fresh slot for each of SLOTS
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    fd: AtomicI32::new(-1),
    head: AtomicPtr::new(std::ptr::null_mut()),
    head_len: AtomicUsize::new(0),
};

static REGISTRY: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The SIGBUS action in place before this module's, for faults outside its mappings.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// A mapping's slot in [`REGISTRY`], and what the slot points to, kept alive with it.
struct Registered {
    slot: usize,
    _file: File,
    _head: Box<[u8]>,
}

impl Registered {
    /// Registers `len` bytes at `addr`, mapped from `file` at `path`; None when the
    /// handler cannot be installed or every slot is taken.
    fn new(addr: usize, len: usize, file: &File, path: &Path) -> Option<Registered> {
        if !install_handler() {
            return None;
        }
        let file = file.try_clone().ok()?;
        let head: Box<[u8]> = format!(
            "{}: error: {} ",
            crate::util::terminal::program_name(),
            crate::util::format::printable(&path.display().to_string())
        )
        .into_bytes()
        .into_boxed_slice();
        let slot = REGISTRY
            .iter()
            .position(|s| s.state.compare_exchange(FREE, BUSY, SeqCst, SeqCst).is_ok())?;
        let s = &REGISTRY[slot];
        s.start.store(addr, SeqCst);
        s.end
            .store(addr + len.next_multiple_of(page_size()), SeqCst);
        s.len.store(len, SeqCst);
        s.fd.store(file.as_raw_fd(), SeqCst);
        s.head.store(head.as_ptr().cast_mut(), SeqCst);
        s.head_len.store(head.len(), SeqCst);
        s.state.store(LIVE, SeqCst);
        Some(Registered {
            slot,
            _file: file,
            _head: head,
        })
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // Before the mapping goes and the memory the slot points to is freed.
        let s = &REGISTRY[self.slot];
        s.state.store(BUSY, SeqCst);
        s.head.store(std::ptr::null_mut(), SeqCst);
        s.state.store(FREE, SeqCst);
    }
}

/// Installs [`on_sigbus`] once for the process, keeping the action it replaces; whether
/// it is in place.
fn install_handler() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: sigaction with valid pointers to initialised structures: first only
        // reading the action in place, then setting ours, whose function is
        // async-signal-safe (see `on_sigbus`).
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return false;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0
        }
    })
}

/// SIGBUS: a fault inside a registered mapping is the file cut short under the run (or
/// its storage failing): one line, as a short pread says it, and exit 1. Any other goes
/// back to the action that was there before: a faulting access runs again and meets it,
/// a signal sent (kill, raise) is sent again.
extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo_t to an SA_SIGINFO handler; a fault's
    // carries the faulting address (si_code > 0), a sent signal's the sender's (<= 0).
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    for s in REGISTRY.iter().filter(|_| code > 0) {
        if s.state.load(SeqCst) != LIVE {
            continue;
        }
        let (start, end) = (s.start.load(SeqCst), s.end.load(SeqCst));
        if !(start..end).contains(&addr) {
            continue;
        }
        let len = s.len.load(SeqCst);
        let head = s.head.load(SeqCst);
        let head_len = s.head_len.load(SeqCst);
        if head.is_null() {
            continue;
        }
        // SAFETY: a LIVE slot's head points to `head_len` bytes its Registered owns, and
        // the mapping holding `addr` (being read by this thread, so alive) is that slot's.
        let head = unsafe { std::slice::from_raw_parts(head, head_len) };
        report(head, s.fd.load(SeqCst), (addr - start) as u64, len as u64);
    }
    // SAFETY: puts back the action this module replaced (or the default), and sends a
    // sent signal again (blocked until this handler returns); async-signal-safe calls.
    unsafe {
        if let Some(previous) = PREVIOUS.get() {
            libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
        } else {
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        }
        if code <= 0 {
            libc::raise(libc::SIGBUS);
        }
    }
}

/// Says on stderr why the read at `offset` of a mapping of `len` bytes failed (the file,
/// `fd`, is shorter now, or its storage failed), then ends the process with exit code 1.
/// Async-signal-safe: fstat, write and _exit, no allocation.
fn report(head: &[u8], fd: libc::c_int, offset: u64, len: u64) -> ! {
    // SAFETY: fstat into a zeroed stat64 that lives on this stack.
    let size = unsafe {
        let mut st: libc::stat64 = std::mem::zeroed();
        (libc::fstat64(fd, &mut st) == 0).then_some(st.st_size as u64)
    };
    write_stderr(head);
    match size {
        Some(size) if size < len => {
            write_stderr(b"ended at ");
            write_number(size);
            write_stderr(b", before the ");
            write_number(len);
            write_stderr(b" bytes it should hold (it changed under the run?)\n");
        }
        _ => {
            write_stderr(b"could not be read at ");
            write_number(offset);
            write_stderr(b" through its mapping (SIGBUS: its storage failed, or it changed under the run?)\n");
        }
    }
    // SAFETY: ends the process at once, as a signal would, with the code of a failed run.
    unsafe { libc::_exit(1) }
}

fn write_stderr(bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: writes bytes of a live slice to stderr.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// `n` in decimal on stderr, formatted on the stack.
fn write_number(mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    write_stderr(&digits[at..]);
}

impl Mapping {
    /// Maps the `len` bytes of `file` (at `path`), none of them brought in yet, at an
    /// address aligned to [`ALIGN`].
    pub fn new(file: &File, path: &Path, len: usize) -> Result<Mapping> {
        let fail = |what: &str| {
            Error::io(
                format!("{what} {}", path.display()),
                std::io::Error::last_os_error(),
            )
        };
        let reserved_len = len
            .checked_add(ALIGN)
            .ok_or_else(|| Error::failed(format!("{} is too large to map", path.display())))?;
        // SAFETY: reserves fresh addresses nothing else uses, with no access.
        let reserved = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                reserved_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if reserved == libc::MAP_FAILED {
            return Err(fail("reserving addresses to map"));
        }
        let start = reserved as usize;
        let aligned = start.next_multiple_of(ALIGN);
        let end = aligned + len.next_multiple_of(page_size());
        // SAFETY: maps the file read-only and shared over addresses reserved above (and
        // only those); the head and tail of the reservation around it are given back. The
        // mapping is owned by the returned value, which unmaps it once, when dropped.
        let addr = unsafe {
            let addr = libc::mmap(
                aligned as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_FIXED,
                file.as_raw_fd(),
                0,
            );
            if addr == libc::MAP_FAILED {
                let error = fail("mapping");
                libc::munmap(reserved, reserved_len);
                return Err(error);
            }
            if aligned > start {
                libc::munmap(reserved, aligned - start);
            }
            if start + reserved_len > end {
                libc::munmap(end as *mut libc::c_void, start + reserved_len - end);
            }
            addr
        };
        Ok(Mapping {
            addr,
            len,
            path: path.display().to_string(),
            registered: Registered::new(addr as usize, len, file, path),
        })
    }

    /// A mapping the stream can fetch into: None for an empty or unmappable file, one the
    /// SIGBUS handler does not know (so that a file cut short under the run can never end
    /// it without a word), or where the kernel lacks `MADV_POPULATE_READ` (before Linux
    /// 5.14), so fetches stay counted requests that really read.
    pub fn for_fetching(file: &File, path: &Path, len: u64) -> Option<Mapping> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        let mapping = Mapping::new(file, path, len).ok()?;
        mapping.registered.as_ref()?;
        // SAFETY: advice over an empty range of our own mapping: only checks the advice.
        let rc = unsafe { libc::madvise(mapping.addr, 0, libc::MADV_POPULATE_READ) };
        (rc == 0).then_some(mapping)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The start of the mapping, for system calls that inspect it (mincore).
    pub fn as_ptr(&self) -> *mut libc::c_void {
        self.addr
    }

    /// Brings the pages of `len` bytes from `offset` (page-aligned) into this process's
    /// memory, reading them from storage if they are not in the page cache (the tests'
    /// way to map pages; the stream lets its copies fault them in).
    #[cfg(test)]
    pub fn populate(&self, offset: u64, len: usize) -> Result<()> {
        self.advise(offset, len, libc::MADV_POPULATE_READ)
            .map_err(|e| {
                Error::io(
                    format!(
                        "reading {} at {offset} through its mapping (it changed under the run?)",
                        self.path
                    ),
                    e,
                )
            })
    }

    /// How many of the pages of `len` bytes from `offset` (page-aligned) are in the page
    /// cache, and of how many (mincore: it never touches them).
    pub fn cached_pages(&self, offset: u64, len: usize) -> Result<(usize, usize)> {
        let start = offset as usize;
        assert!(
            start <= self.len && len <= self.len - start,
            "inside the mapping"
        );
        let mut pages = vec![0u8; len.div_ceil(page_size())];
        // SAFETY: the range lies inside our live mapping and `pages` has one byte per page
        // of it; mincore only reports which pages are cached.
        let rc = unsafe {
            libc::mincore(
                self.addr.cast::<u8>().add(start).cast(),
                len,
                pages.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(Error::io(
                format!("mincore on {} to check its cached pages", self.path),
                std::io::Error::last_os_error(),
            ));
        }
        Ok((pages.iter().filter(|&&p| p & 1 != 0).count(), pages.len()))
    }

    /// Lets go of the pages of `len` bytes from `offset` (page-aligned): they leave this
    /// process's memory and stay in the page cache.
    pub fn release(&self, offset: u64, len: usize) {
        // Only fails for a range outside the mapping, which `advise` rules out.
        let _ = self.advise(offset, len, libc::MADV_DONTNEED);
    }

    /// The `len` bytes from `offset`: they must have been populated (or the copy out of
    /// them reads the storage page by page).
    pub fn bytes(&self, offset: u64, len: usize) -> &[u8] {
        let start = offset as usize;
        assert!(
            start <= self.len && len <= self.len - start,
            "inside the mapping"
        );
        // SAFETY: the range lies inside the live read-only mapping, which lives as long
        // as `self`; the file is only read, so the bytes do not change under the slice
        // (a file truncated under the run raises SIGBUS on a page past its new end: a
        // fetching mapping is registered, and the handler says so and exits 1).
        unsafe { std::slice::from_raw_parts(self.addr.cast::<u8>().add(start), len) }
    }

    fn advise(&self, offset: u64, len: usize, advice: libc::c_int) -> std::io::Result<()> {
        let start = offset as usize;
        assert!(
            start <= self.len && len <= self.len - start,
            "inside the mapping"
        );
        // SAFETY: the range lies inside our own mapping; the advice only maps or unmaps
        // its pages, never touching memory anything else owns.
        let rc = unsafe { libc::madvise(self.addr.cast::<u8>().add(start).cast(), len, advice) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // The handler forgets it first: the addresses may be mapped again for another.
        drop(self.registered.take());
        // SAFETY: unmaps exactly the mapping made in `new`, whose slices borrow `self`.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// The size of a memory page.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A file of `len` bytes (byte `i` is `i * 7 % 251`) in a fresh directory, removed
    /// when it drops.
    pub(crate) struct TempFile {
        /// Removed, the file with it, when this drops.
        _dir: crate::util::temp::TempDir,
        pub path: std::path::PathBuf,
        pub bytes: Vec<u8>,
    }

    impl TempFile {
        pub(crate) fn new(name: &str, len: usize) -> TempFile {
            let dir = crate::util::temp::TempDir::new(&format!("seek-{name}"));
            let path = dir.join("o");
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            // Written in 256 KiB pieces: the page cache may hold them as large folios of
            // that size, which the kernel maps whole, with page table entries.
            let mut file = File::create(&path).unwrap();
            for piece in bytes.chunks(256 << 10) {
                std::io::Write::write_all(&mut file, piece).unwrap();
            }
            TempFile {
                _dir: dir,
                path,
                bytes,
            }
        }
    }

    /// The KiB of `mapping` in this process's memory (its Rss in /proc/self/smaps).
    pub(crate) fn resident_kib(mapping: &Mapping) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let header = format!("{:x}-", mapping.as_ptr() as usize);
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&header));
        lines.next().expect("the mapping is listed");
        let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
        rss.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// The test a child process runs for [`a_file_cut_short_under_its_mapping_is_one_line_and_exit_1`]:
    /// maps a file, reads it, truncates it and reads past its new end.
    #[test]
    #[ignore = "a child process of a_file_cut_short_under_its_mapping_is_one_line_and_exit_1"]
    fn read_a_mapping_past_the_end_of_its_truncated_file() {
        let f = TempFile::new("sigbus-child", 1 << 20);
        let file = File::open(&f.path).unwrap();
        let m = Mapping::for_fetching(&file, &f.path, 1 << 20).expect("registered");
        assert_eq!(m.bytes(700_000, 3), &f.bytes[700_000..700_003]);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f.path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let byte = std::hint::black_box(m.bytes(700_000, 1))[0];
        panic!("read {byte} past the end of the file, no SIGBUS");
    }

    /// The other child: with the handler installed, a SIGBUS outside every registered
    /// mapping (one mapped here without this module) ends the process as before.
    #[test]
    #[ignore = "a child process of a_file_cut_short_under_its_mapping_is_one_line_and_exit_1"]
    fn read_another_mapping_past_the_end_of_its_truncated_file() {
        let f = TempFile::new("sigbus-other", 1 << 20);
        let file = File::open(&f.path).unwrap();
        let _ours = Mapping::for_fetching(&file, &f.path, 1 << 20).expect("registered");
        // SAFETY: a fresh read-only shared mapping of the file, read once below.
        let other = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                1 << 20,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(other, libc::MAP_FAILED);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f.path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        // SAFETY: inside the mapping; past the file's new end, so it raises SIGBUS.
        let byte = unsafe { std::ptr::read_volatile(other.cast::<u8>().add(700_000)) };
        panic!("read {byte} past the end of the file, no SIGBUS");
    }

    /// Runs the ignored test `name` in a child process of this test binary, with a
    /// TMPDIR of this process's: the child ends by its SIGBUS, its own temporary
    /// directory never dropped.
    fn child(name: &str) -> (std::process::ExitStatus, String) {
        let tmp = crate::util::temp::TempDir::new("seek-sigbus");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env("TMPDIR", tmp.path())
            .args([
                "--exact",
                &format!("seek::mapping::tests::{name}"),
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .unwrap();
        (out.status, String::from_utf8_lossy(&out.stderr).to_string())
    }

    #[test]
    fn a_file_cut_short_under_its_mapping_is_one_line_and_exit_1() {
        use std::os::unix::process::ExitStatusExt;
        let (status, stderr) = child("read_a_mapping_past_the_end_of_its_truncated_file");
        assert_eq!(
            (status.code(), status.signal()),
            (Some(1), None),
            "{stderr}"
        );
        let line = stderr
            .lines()
            .find(|l| l.contains("error:"))
            .unwrap_or_else(|| panic!("no message: {stderr}"));
        assert!(line.ends_with(
            "/o ended at 4096, before the 1048576 bytes it should hold (it changed under the run?)"
        ), "{line}");
        assert!(line.contains("bb-unit-seek-sigbus-child-"), "{line}");
        assert_eq!(stderr.matches("ended at").count(), 1, "{stderr}");
        // A SIGBUS of a mapping it does not know is not taken for one of its own.
        let (status, stderr) = child("read_another_mapping_past_the_end_of_its_truncated_file");
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}: {stderr}");
        assert!(!stderr.contains("ended at"), "{stderr}");
    }

    #[test]
    fn populated_pages_come_in_and_released_ones_go() {
        let f = TempFile::new("mapping", 1 << 20);
        let file = File::open(&f.path).unwrap();
        let m = Mapping::for_fetching(&file, &f.path, 1 << 20).expect("Linux 5.14 or later");
        assert_eq!(resident_kib(&m), 0, "mapping brings nothing in");
        m.populate(256 << 10, 128 << 10).unwrap();
        // At least what was asked for (the kernel may map a whole large folio around it).
        let populated = resident_kib(&m);
        assert!(populated >= 128, "{populated} KiB");
        assert_eq!(m.bytes(300_000, 3), &f.bytes[300_000..300_003]);
        m.release(256 << 10, 128 << 10);
        assert!(resident_kib(&m) <= populated - 128);
        m.release(0, m.len());
        assert_eq!(resident_kib(&m), 0);
        let empty = TempFile::new("mapping-empty", 0);
        let file = File::open(&empty.path).unwrap();
        assert!(Mapping::for_fetching(&file, &empty.path, 0).is_none());
    }
}
