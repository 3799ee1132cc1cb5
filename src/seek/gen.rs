//! The objects made ready before they are read: `bb-seek gen` writes them to a directory
//! or uploads them to an HTTP server or an S3 bucket (in parts when large, with metadata
//! that says whose bytes they are), each with its manifest, in bounded chunks whatever
//! their size, keeping only objects that hold these bytes; a run makes sure its local directory
//! holds them (generating what is missing or wrong, after checking that the disk has
//! room) and, with `--cold`, checks once that their pages can be dropped.

use super::data::{self, Expected, Listed, Object, Outcome};
use super::existing::{self, Algorithm};
use super::file::FileSource;
use super::options::{Dest, GenOptions};
use super::s3;
use super::source::Feeding;
use super::spec::SourceSpec;
use crate::harness::signals;
use crate::net::http::{Ask, Head, HttpClient};
use crate::report::print_stdout;
use crate::system::exit;
use crate::util::digest::{self, Md5};
use crate::util::error::{Error, Result};
use crate::util::file;
use crate::util::format::printable;
use crate::util::terminal::{program_name, warn};
use std::io::Write;
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

/// The user metadata `gen` stores with each object on S3, read back with HEAD: the seed,
/// the generator's version and the manifest's checksum of its bytes, so that an object
/// of the right size with other bytes (another seed's, or not bb-seek's) is known.
const META_SEED: &str = "x-amz-meta-bb-seek-seed";
const META_VERSION: &str = "x-amz-meta-bb-seek-generator";
const META_SUM: &str = "x-amz-meta-bb-seek-fnv1a64";

/// What a request of the read-back of an HTTP destination's object reads at most.
const READ_BACK: u64 = 8 << 20;

/// Uploads the objects of `sizes` and their manifest to `dest` with PUT (in `parts`
/// when given and the object is large), each streamed in chunks with its length known up
/// front; returns a line per object saying what became of it. An object already there is
/// kept only when it holds these bytes: on S3, its metadata says this seed, version and
/// checksum, or (without metadata: uploaded otherwise) its ETag is their MD5; on an HTTP
/// server, which keeps no metadata, it is read back and compared. Every other is
/// uploaded again, and each one sent has its size checked with HEAD. The manifest lists
/// these objects and those the manifest there listed that are still there with their
/// size. Each request may take `timeout` (an upload a second more per MiB).
pub fn upload(
    dest: &SourceSpec,
    sizes: &[u64],
    seed: u64,
    timeout: Duration,
    parts: Option<s3::Parts>,
) -> Result<String> {
    let (origin, _) = dest.origin()?;
    let s3 = dest.s3_objects();
    let mut out = String::new();
    let mut client = HttpClient::new(origin.clone(), timeout);
    let listed = listed_at(&mut client, seed)?;
    let mut entries = Vec::new();
    for &size in sizes {
        let object = Object::new(size, seed);
        let name = object.name.as_str();
        let sum = object.checksum();
        let meta = [
            (META_SEED, seed.to_string()),
            (META_VERSION, data::GENERATOR_VERSION.to_string()),
            (META_SUM, sum.clone()),
        ];
        let what = match there(&mut client, s3.is_some(), &object, &meta, parts)? {
            Ok(how) => format!("kept ({how})"),
            Err(why) => {
                let meta: Vec<(&str, &str)> = meta.iter().map(|(n, v)| (*n, v.as_str())).collect();
                let meta: &[(&str, &str)] = if s3.is_some() { &meta } else { &[] };
                let how = match (parts, s3) {
                    (Some(p), Some(objects)) if size > p.threshold => {
                        s3::multipart_upload(
                            &mut client,
                            &origin,
                            objects,
                            &object,
                            p.part_size,
                            meta,
                            timeout,
                        )?;
                        format!("uploaded in {} parts", size.div_ceil(p.part_size))
                    }
                    _ => {
                        client.put(name, size, meta, &mut |w| object.write_range(0, size, w))?;
                        "uploaded".to_string()
                    }
                };
                match client.size(name)? {
                    Some(n) if n == size => match why {
                        Some(why) => format!("{how} again ({why})"),
                        None => how,
                    },
                    got => {
                        return Err(Error::failed(format!(
                        "{}: uploaded {size} bytes, but the server now has {} (checked with HEAD)",
                        origin.describe(Some(name)),
                        got.map_or("no such object".to_string(), |n| format!("{n} bytes"))
                    )))
                    }
                }
            }
        };
        out.push_str(&format!(
            "{}  {size} bytes  {what}\n",
            origin.describe(Some(name))
        ));
        entries.push((object.name.clone(), size, sum));
    }
    for (name, size, sum) in listed {
        if !entries.iter().any(|(n, _, _)| *n == name)
            && still_there(&mut client, s3.is_some(), &name, size, seed, &sum)?
        {
            entries.push((name, size, sum));
        }
    }
    entries.sort_by_key(|(_, size, _)| *size);
    let manifest = data::manifest(seed, &entries);
    client.put(data::MANIFEST, manifest.len() as u64, &[], &mut |w| {
        w.write_all(manifest.as_bytes())
    })?;
    out.push_str(&format!(
        "{}  manifest\n",
        origin.describe(Some(data::MANIFEST))
    ));
    Ok(out)
}

/// The entries for `seed` of the manifest already at the destination (none where there
/// is none, or it is another seed's or version's).
fn listed_at(client: &mut HttpClient, seed: u64) -> Result<Vec<(String, u64, String)>> {
    let answer = client.call(&Ask::new("GET", Some(data::MANIFEST)), &mut |_| Ok(()))?;
    if answer.head.status != 200 {
        return Ok(Vec::new());
    }
    Ok(
        match data::parse_manifest(&String::from_utf8_lossy(&answer.body), seed) {
            Listed::Entries(entries) => entries,
            Listed::OtherVersion(_) => Vec::new(),
        },
    )
}

/// Whether an object another manifest listed (`name`, `size` bytes, checksum `sum`) is
/// still there with its size, and on S3 with metadata that agrees where it has some.
fn still_there(
    client: &mut HttpClient,
    s3: bool,
    name: &str,
    size: u64,
    seed: u64,
    sum: &str,
) -> Result<bool> {
    Ok(match client.head(name, &[])? {
        Some((n, head)) if n == size => {
            !s3 || head.header(META_SEED).is_none()
                || (head.header(META_SEED).map(str::trim) == Some(&seed.to_string())
                    && head.header(META_SUM).map(str::trim) == Some(sum))
        }
        _ => false,
    })
}

/// Whether `object` is at the destination with its bytes, and how that was known; else
/// why not (None: it is not there). `meta` is the metadata it is uploaded with.
fn there(
    client: &mut HttpClient,
    s3: bool,
    object: &Object,
    meta: &[(&str, String); 3],
    parts: Option<s3::Parts>,
) -> Result<std::result::Result<String, Option<String>>> {
    let Some((size, head)) = client.head(&object.name, &[])? else {
        return Ok(Err(None));
    };
    if size != object.size {
        return Ok(Err(Some(format!("it had {size} bytes"))));
    }
    if s3 {
        if let Some(seed) = head.header(META_SEED) {
            let same = meta
                .iter()
                .all(|(name, value)| head.header(name).map(str::trim) == Some(value.as_str()));
            return Ok(match same {
                true => Ok("its bb-seek metadata: this seed, version and checksum".to_string()),
                false if seed.trim() != meta[0].1 => Err(Some(format!(
                    "it was made with seed {}",
                    printable(&seed.chars().take(40).collect::<String>())
                ))),
                false => Err(Some(
                    "its bb-seek metadata names other bytes (another version)".to_string(),
                )),
            });
        }
        // Uploaded otherwise (or by a bb-seek before the metadata): its ETag says.
        return Ok(match etag_is_md5_of(&head, object, parts) {
            true => Ok("its ETag is the MD5 of these bytes".to_string()),
            false => Err(Some(
                "its ETag is not these bytes' MD5, and it has no bb-seek metadata".to_string(),
            )),
        });
    }
    // A plain HTTP server keeps no metadata: the bytes are read back.
    Ok(match first_difference(client, object)? {
        None => Ok("read back: these bytes".to_string()),
        Some(at) => Err(Some(format!("its byte {at} differed"))),
    })
}

/// Whether an S3 object's ETag is the MD5 of `object`'s bytes: of all of them for a
/// single-part object, or a multipart upload's (the MD5 of its parts' MD5s, then `-N`)
/// in parts of `parts`' size.
fn etag_is_md5_of(head: &Head, object: &Object, parts: Option<s3::Parts>) -> bool {
    let (claims, _) = existing::claims(head);
    let md5 = |offset: u64, len: u64| {
        let mut m = Md5::default();
        let mut into = Handing(|b: &[u8]| m.update(b));
        object
            .write_range(offset, len, &mut into)
            .expect("hashing cannot fail");
        m.finish()
    };
    if let Some(c) = claims.iter().find(|c| c.algorithm == Algorithm::EtagMd5) {
        return c.value == digest::hex(&md5(0, object.size));
    }
    let etag = head
        .header("etag")
        .map(|e| e.trim().trim_matches('"').to_ascii_lowercase());
    let (Some(etag), Some(p)) = (etag, parts) else {
        return false;
    };
    let count = object.size.div_ceil(p.part_size);
    if !etag.ends_with(&format!("-{count}")) {
        return false;
    }
    let mut all = Md5::default();
    let mut offset = 0;
    while offset < object.size {
        let len = p.part_size.min(object.size - offset);
        all.update(&md5(offset, len));
        offset += len;
    }
    etag == format!("{}-{count}", digest::hex(&all.finish()))
}

/// The offset of the first byte of `object` at the destination that is not its own
/// (read back in ranges of [`READ_BACK`]), None when all are.
fn first_difference(client: &mut HttpClient, object: &Object) -> Result<Option<u64>> {
    let size = object.size;
    let mut expected = Expected::new(object);
    let mut buf = vec![0; READ_BACK.min(data::CHUNK as u64).min(size) as usize];
    let mut wrong = None;
    let mut at = 0;
    while at < size && wrong.is_none() {
        let len = READ_BACK.min(size - at);
        let mut offset = at;
        let mut feed = |bytes: &[u8]| {
            if wrong.is_none() {
                wrong = expected.mismatch(offset, bytes).map(|i| offset + i as u64);
            }
            offset += bytes.len() as u64;
        };
        let mut sink = Feeding {
            buf: &mut buf,
            feed: &mut feed,
        };
        client.get_range(&object.name, at, len, size, &mut sink)?;
        at += len;
    }
    Ok(wrong)
}

/// A writer that hands what it is given to a function (a digest's update).
struct Handing<F: FnMut(&[u8])>(F);

impl<F: FnMut(&[u8])> Write for Handing<F> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (self.0)(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
