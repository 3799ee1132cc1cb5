//! The objects made ready before they are read: `bb-seek gen` writes them to a directory
//! or uploads them to an HTTP server or an S3 bucket (in parts when large), each with its
//! manifest, in bounded chunks whatever their size; a run makes sure its local directory
//! holds them (generating what is missing or wrong, after checking that the disk has
//! room) and, with `--cold`, checks once that their pages can be dropped.

use super::data::{self, Object, Outcome};
use super::file::FileSource;
use super::options::{Dest, GenOptions};
use super::s3;
use super::spec::SourceSpec;
use crate::harness::signals;
use crate::net::http::HttpClient;
use crate::report::print_stdout;
use crate::system::exit;
use crate::util::error::{Error, Result};
use crate::util::file;
use crate::util::terminal::{program_name, warn};
use std::path::Path;
use std::time::Duration;

/// `bb-seek gen`: the objects into a directory, onto an HTTP server, or into an S3 bucket
/// (made when missing); a line per object on stdout.
pub fn run(o: &GenOptions) -> Result<()> {
    let out = match &o.dest {
        Dest::Dir(dir) => {
            check_room("--sizes", dir, &o.sizes, o.seed)?;
            write_dir(dir, &o.sizes, o.seed)?
        }
        Dest::Upload { spec, parts } => {
            if let Some(objects) = spec.s3_objects() {
                crate::stderr!("{}", objects.settings_line());
                if s3::ensure_bucket(objects, o.timeout)? {
                    crate::stderr!("bb-seek: made the bucket {}", objects.location.bucket);
                }
            }
            upload(spec, &o.sizes, o.seed, o.timeout, *parts)?
        }
    };
    print_stdout(&out)
}

/// Refuses sizes whose missing objects the file system under `dir` has no room for (a
/// usage error, exit 2, before anything is written); `flag` names the sizes' flag.
pub fn check_room(flag: &str, dir: &Path, sizes: &[u64], seed: u64) -> Result<()> {
    let missing: u64 = sizes
        .iter()
        .map(|&size| Object::new(size, seed))
        .filter(|o| std::fs::metadata(dir.join(&o.name)).map(|m| m.len()).ok() != Some(o.size))
        .map(|o| o.size)
        .sum();
    // The directory may not exist yet: the room is that of its nearest existing parent.
    let Some(existing) = dir
        .ancestors()
        .find(|d| d.as_os_str().is_empty() || d.exists())
    else {
        return Ok(());
    };
    let existing = if existing.as_os_str().is_empty() {
        Path::new(".")
    } else {
        existing
    };
    let Ok(fs) = nix::sys::statvfs::statvfs(existing) else {
        return Ok(());
    };
    // Both are 32 bits on armv7, 64 here.
    #[allow(clippy::unnecessary_cast)]
    let free = (fs.blocks_available() as u64).saturating_mul(fs.fragment_size() as u64);
    if missing > free {
        return Err(Error::usage(format!(
            "{flag}: the objects to generate need {} MiB in {} and {} MiB are free there",
            missing >> 20,
            dir.display(),
            free >> 20
        )));
    }
    Ok(())
}

/// [`data::ensure_dir`] leaving no temporary file behind: those of runs that died are
/// removed first, and this run's are removed by an exit hook if a signal ends it while
/// it writes them (SIGINT, SIGTERM, SIGHUP).
fn ensure_dir(dir: &Path, sizes: &[u64], seed: u64, check_content: bool) -> Result<data::Ensured> {
    remove_stale_temp_files(dir);
    let pid = std::process::id();
    let temps: Vec<_> = sizes
        .iter()
        .map(|&size| Object::new(size, seed).name)
        .chain([data::MANIFEST.to_string()])
        .map(|name| file::temp_path(&dir.join(name), pid))
        .collect();
    signals::exit_on_signals();
    let hook = exit::add_exit_hook(move || {
        for t in &temps {
            let _ = std::fs::remove_file(t);
        }
    });
    let ensured = data::ensure_dir(dir, sizes, seed, check_content);
    exit::remove_exit_hook(hook);
    ensured
}

/// Removes the temporary files (`.NAME.tmp.PID`) of objects and manifests that runs
/// killed outright left in `dir` (SIGKILL gives no time to clean up): only regular files,
/// only of the names this generator writes, only those whose PID is gone.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((file, pid)) = name.to_str().and_then(file::temp_file_of) else {
            continue;
        };
        // Objects are `random-SIZE.txt` (data::object_name).
        let ours = file.starts_with("random-") || file == data::MANIFEST;
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) && exit::pid_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Says (on stderr) why a directory's objects were made again, if they were.
fn say_why(ensured: &data::Ensured) {
    if let Some(why) = &ensured.stale {
        crate::stderr!("{}: {why}", program_name());
    }
}

/// Writes the objects of `sizes` and their manifest to `dir`, keeping valid ones; returns
/// a line per file saying what became of it.
pub fn write_dir(dir: &Path, sizes: &[u64], seed: u64) -> Result<String> {
    let mut out = String::new();
    let ensured = ensure_dir(dir, sizes, seed, true)?;
    say_why(&ensured);
    for (object, outcome) in ensured.outcomes {
        let what = match outcome {
            Outcome::Kept => "kept (valid)",
            Outcome::Written => "written",
        };
        out.push_str(&format!(
            "{}  {} bytes  {what}\n",
            dir.join(&object.name).display(),
            object.size
        ));
    }
    out.push_str(&format!(
        "{}  manifest\n",
        dir.join(data::MANIFEST).display()
    ));
    Ok(out)
}

/// Uploads the objects of `sizes` and their manifest to `dest` with PUT (in `parts`
/// when given and the object is large), each streamed in chunks with its length known up
/// front, skipping objects already there with the right size and checking the size of
/// each one sent; returns a line per object saying what became of it. Each request may
/// take `timeout` (an upload a second more per MiB).
pub fn upload(
    dest: &SourceSpec,
    sizes: &[u64],
    seed: u64,
    timeout: Duration,
    parts: Option<s3::Parts>,
) -> Result<String> {
    let (origin, _) = dest.origin()?;
    let mut out = String::new();
    let mut client = HttpClient::new(origin.clone(), timeout);
    let mut entries = Vec::new();
    for &size in sizes {
        let object = Object::new(size, seed);
        let name = object.name.as_str();
        let what = if client.size(name)? == Some(size) {
            "kept (already there with this size)".to_string()
        } else {
            let how = match parts {
                Some(p) if size > p.threshold => {
                    let objects = match dest {
                        SourceSpec::S3(place) => place.objects.as_deref(),
                        _ => None,
                    };
                    let objects = objects.ok_or_else(|| {
                        Error::failed("parts are for S3 destinations whose settings were read")
                    })?;
                    s3::multipart_upload(
                        &mut client,
                        &origin,
                        objects,
                        &object,
                        p.part_size,
                        timeout,
                    )?;
                    format!("uploaded in {} parts", size.div_ceil(p.part_size))
                }
                _ => {
                    client.put(name, size, &mut |w| object.write_range(0, size, w))?;
                    "uploaded".to_string()
                }
            };
            match client.size(name)? {
                Some(n) if n == size => how,
                got => {
                    return Err(Error::failed(format!(
                        "{}: uploaded {size} bytes, but the server now has {} (checked with HEAD)",
                        origin.describe(Some(name)),
                        got.map_or("no such object".to_string(), |n| format!("{n} bytes"))
                    )))
                }
            }
        };
        out.push_str(&format!(
            "{}  {size} bytes  {what}\n",
            origin.describe(Some(name))
        ));
        entries.push((object.name.clone(), size, object.checksum()));
    }
    let manifest = data::manifest(seed, &entries);
    client.put(data::MANIFEST, manifest.len() as u64, &mut |w| {
        w.write_all(manifest.as_bytes())
    })?;
    out.push_str(&format!(
        "{}  manifest\n",
        origin.describe(Some(data::MANIFEST))
    ));
    Ok(out)
}

/// Generates missing or wrong objects (the reviewers' "create the data if it does not
/// exist, then run"), and with `cold` checks once that their pages can be dropped.
pub fn prepare_dir(dir: &Path, sizes: &[u64], seed: u64, cold: bool) -> Result<()> {
    let ensured = ensure_dir(dir, sizes, seed, false)?;
    say_why(&ensured);
    for (object, outcome) in ensured.outcomes {
        if outcome == Outcome::Written {
            crate::stderr!(
                "{}: generated {} ({} bytes, seed {seed})",
                program_name(),
                dir.join(&object.name).display(),
                object.size
            );
        }
    }
    if cold {
        let object = Object::new(sizes[0], seed);
        let path = dir.join(&object.name);
        match FileSource::open(&path, object.size).and_then(|f| f.drop_cache()) {
            Ok(cached) if cached > 0.1 => warn(&format!(
                "--cold: {:.0}% of {}'s pages stay cached after posix_fadvise DONTNEED (tmpfs keeps files in memory): its reads are not cold",
                cached * 100.0,
                path.display()
            )),
            Ok(_) => {}
            Err(e) => warn(&format!(
                "--cold: could not drop the cache ({e}): reads are not cold"
            )),
        }
    }
    Ok(())
}

/// The warning that `--cold` cannot drop the page cache of a server, as a line.
pub fn remote_cold_note(place: &str) -> String {
    format!(
        "{}: warning: --cold: the page cache of the server behind {place} cannot be dropped from here; its reads are as warm as the server keeps them",
        program_name()
    )
}
