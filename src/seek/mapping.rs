//! A local object mapped read-only into memory, so the stream serves reads straight from
//! the page cache with one copy instead of two (kernel to cache, cache to caller). Mapping
//! reserves addresses only: a fetched range's pages, all in the page cache (mincore), come
//! into this process's memory as the stream copies out of them (page faults, each mapping
//! up to 64 KiB or a large folio) and leave it when the stream evicts it (`MADV_DONTNEED`:
//! the pages stay in the page cache but are no longer mapped here), so what the process
//! holds of the object stays within the stream's cache bound, as with a copying cache.

use crate::util::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

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
        })
    }

    /// A mapping the stream can fetch into: None for an empty or unmappable file, or where
    /// the kernel lacks `MADV_POPULATE_READ` (before Linux 5.14), so fetches stay counted
    /// requests that really read.
    pub fn for_fetching(file: &File, path: &Path, len: u64) -> Option<Mapping> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        let mapping = Mapping::new(file, path, len).ok()?;
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
        // (a file truncated under the run would raise SIGBUS, as with any mapping).
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
        dir: std::path::PathBuf,
        pub path: std::path::PathBuf,
        pub bytes: Vec<u8>,
    }

    impl TempFile {
        pub(crate) fn new(name: &str, len: usize) -> TempFile {
            let dir = std::env::temp_dir().join(format!("bb-seek-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("o");
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            // Written in 256 KiB pieces: the page cache may hold them as large folios of
            // that size, which the kernel maps whole, with page table entries.
            let mut file = File::create(&path).unwrap();
            for piece in bytes.chunks(256 << 10) {
                std::io::Write::write_all(&mut file, piece).unwrap();
            }
            TempFile { dir, path, bytes }
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
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
