//! Local objects read with positioned reads (pread64 and preadv64, so offsets past 2 GiB work on
//! 32-bit boards too), and the page-cache controls: `--cold`'s, dropping an object's
//! pages (posix_fadvise DONTNEED) and checking with mincore that they really went, and a
//! hot fork's, placing its object's pages afresh before its shots.

use crate::seek::data::Object;
use crate::seek::mapping::Mapping;
use crate::seek::source::Source;
use crate::util::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The most buffers one preadv fills (more take another call: only a stream whose cache
/// holds more blocks than this fills more at once; a file's holds 4 by default).
const IOVECS: usize = 16;

/// The reads [`FileSource::place_afresh`] brings an object back into the page cache with.
const PLACE_CHUNK: usize = 1 << 20;

/// One local object.
pub struct FileSource {
    file: File,
    pub(crate) path: PathBuf,
    size: u64,
}

impl FileSource {
    /// Opens `path`, a generated object, which must hold `size` bytes.
    pub fn open(path: &Path, size: u64) -> Result<FileSource> {
        FileSource::open_with(path, size, true)
    }

    /// Opens `object` at `path`: a generated one (whose wrong size `gen` mends), or one of
    /// `--object`'s, whose size was read when the run began: another size now means it
    /// changed since.
    pub fn open_object(path: &Path, object: &Object) -> Result<FileSource> {
        FileSource::open_with(path, object.size, object.generated())
    }

    fn open_with(path: &Path, size: u64, generated: bool) -> Result<FileSource> {
        let file =
            File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let actual = file
            .metadata()
            .map_err(|e| Error::io(format!("reading the size of {}", path.display()), e))?
            .len();
        if actual != size {
            let what = match generated {
                true => format!("expected {size} (rerun bb-seek gen)"),
                false => format!(
                    "not the {size} it had when the run began: it changed since (an --object \
                     must stay as it is through the run)"
                ),
            };
            return Err(Error::failed(format!(
                "{} has {actual} bytes, {what}",
                path.display()
            )));
        }
        Ok(FileSource {
            file,
            path: path.to_path_buf(),
            size,
        })
    }

    /// Asks the kernel to drop the object's cached pages, so the next reads come from
    /// the storage; returns the fraction of its pages still cached afterwards (tmpfs, and
    /// pages someone else has mapped, stay).
    pub fn drop_cache(&self) -> Result<f64> {
        // SAFETY: a plain system call on a descriptor this struct owns; no memory passed.
        let rc = unsafe {
            libc::posix_fadvise64(self.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED)
        };
        if rc != 0 {
            return Err(Error::io(
                format!("posix_fadvise DONTNEED on {}", self.path.display()),
                std::io::Error::from_raw_os_error(rc),
            ));
        }
        self.cached_fraction()
    }

    /// Places the object's page-cache pages afresh, as a reader's first read places them:
    /// its dirty pages written back, all of them dropped (posix_fadvise DONTNEED), then
    /// the whole object read back in [`PLACE_CHUNK`] preads, so the page cache's readahead
    /// gives it new pages (their folio sizes, their physical places). A fork's hot shots
    /// then read pages placed for that fork, not pages placed once for the whole run (by
    /// `gen`, whose written folios read up to x2 faster than readahead's, or by whatever
    /// read them back after an eviction): what differed between runs varies between forks,
    /// where the run's interval sees it (issue 44, BENCHMARKS.md "bb-seek's run-level shift").
    /// Returns the fraction of its pages that stayed cached through the drop (tmpfs keeps
    /// them all: its pages stay where they were written) and the fraction cached after.
    pub fn place_afresh(&mut self) -> Result<(f64, f64)> {
        // Dirty pages are not dropped; one that cannot be written back (a read-only
        // mount's file has none) only stays where it was.
        let _ = self.file.sync_data();
        let stayed = self.drop_cache()?;
        let mut buf = vec![0; (self.size.min(PLACE_CHUNK as u64)) as usize];
        let mut at = 0;
        while at < self.size {
            let n = (self.size - at).min(buf.len() as u64) as usize;
            self.read_at(at, &mut [&mut buf[..n]])?;
            at += n as u64;
        }
        Ok((stayed, self.cached_fraction()?))
    }

    /// The fraction of the object's pages in the page cache (mincore over a mapping).
    pub fn cached_fraction(&self) -> Result<f64> {
        self.cached_fraction_of(0, self.size)
    }

    /// The fraction of the pages of `len` bytes from `offset` in the page cache.
    pub fn cached_fraction_of(&self, offset: u64, len: u64) -> Result<f64> {
        let end = offset.saturating_add(len).min(self.size);
        if offset >= end {
            return Ok(0.0);
        }
        let mapping = Mapping::new(&self.file, &self.path, self.size as usize)?;
        let page = crate::seek::mapping::page_size() as u64;
        let from = offset / page * page;
        let (cached, pages) = mapping.cached_pages(from, (end - from) as usize)?;
        Ok(cached as f64 / pages as f64)
    }
}

impl Source for FileSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn map(&self) -> Option<Mapping> {
        Mapping::for_fetching(&self.file, &self.path, self.size)
    }

    fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let mut first = 0; // the first buffer not yet full
        let mut filled = 0; // bytes already in bufs[first]
        let mut at = offset;
        while first < bufs.len() {
            // On the stack: a read is a system call, and an allocation per read showed.
            let mut iovecs = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; IOVECS];
            let mut count = 0;
            for (i, b) in bufs[first..].iter_mut().take(IOVECS).enumerate() {
                let skip = if i == 0 { filled } else { 0 };
                iovecs[i] = libc::iovec {
                    iov_base: b[skip..].as_mut_ptr().cast(),
                    iov_len: b.len() - skip,
                };
                count = i + 1;
            }
            let fd = self.file.as_raw_fd();
            // SAFETY: the first `count` iovecs point into distinct live buffers borrowed
            // mutably for this call, each with its exact remaining length. One buffer (every
            // read of the plain client) is a pread: the kernel's preadv copies in and frees
            // the iovec array each call (perf: a tenth of a 4 KiB read's time).
            let n = unsafe {
                match count {
                    1 => libc::pread64(
                        fd,
                        iovecs[0].iov_base,
                        iovecs[0].iov_len,
                        at as libc::off64_t,
                    ),
                    _ => libc::preadv64(
                        fd,
                        iovecs.as_ptr(),
                        count as libc::c_int,
                        at as libc::off64_t,
                    ),
                }
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Error::io(
                    format!("reading {} at {at}", self.path.display()),
                    e,
                ));
            }
            if n == 0 {
                // Where it ends now: a read that starts past the new end stops at its start.
                let end = self.file.metadata().map_or(at, |m| m.len().min(at));
                return Err(Error::failed(format!(
                    "{} ended at {end}, before the {} bytes it should hold (it changed under the run?)",
                    self.path.display(),
                    self.size
                )));
            }
            let mut n = n as usize;
            at += n as u64;
            while n > 0 && first < bufs.len() {
                let room = bufs[first].len() - filled;
                if n >= room {
                    n -= room;
                    first += 1;
                    filled = 0;
                } else {
                    filled += n;
                    n = 0;
                }
            }
            while first < bufs.len() && bufs[first].is_empty() {
                first += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exact_ranges_into_several_buffers_and_reports_short_files() {
        let dir = crate::util::temp::TempDir::new("seek-file");
        let path = dir.join("o");
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut f = FileSource::open(&path, 5000).unwrap();
        let (mut a, mut b, mut c) = (vec![0; 10], vec![0; 0], vec![0; 4000]);
        f.read_at(100, &mut [&mut a, &mut b, &mut c]).unwrap();
        assert_eq!(a, bytes[100..110]);
        assert_eq!(c, bytes[110..4110]);
        let e = FileSource::open(&path, 6000).err().unwrap();
        assert!(
            e.to_string()
                .contains("has 5000 bytes, expected 6000 (rerun bb-seek gen)"),
            "{e}"
        );
        // An --object's file was never gen's: it changed since the run began.
        let e = FileSource::open_object(&path, &Object::existing("o", 6000))
            .err()
            .unwrap();
        let e = e.to_string();
        assert!(
            e.contains("has 5000 bytes, not the 6000 it had when the run began: it changed since"),
            "{e}"
        );
        assert!(!e.contains("gen"), "{e}");
        // The file shrinks under an open source: a clear error, not a hang or a panic.
        std::fs::write(&path, &bytes[..1000]).unwrap();
        let e = f.read_at(900, &mut [&mut c]).unwrap_err();
        assert!(e.to_string().contains("ended at 1000"), "{e}");
        // A read past the new end says where the file ends, not where the read began.
        let e = f.read_at(3000, &mut [&mut a]).unwrap_err();
        assert!(
            e.to_string()
                .contains("ended at 1000, before the 5000 bytes"),
            "{e}"
        );
        let fraction = f.cached_fraction().unwrap();
        assert!((0.0..=1.0).contains(&fraction));
    }
}
