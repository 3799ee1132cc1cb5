//! The objects made ready before they are read: `bb-seek gen` writes them to a directory
//! or uploads them to an HTTP server, each with its manifest; a run makes sure its local
//! directory holds them (generating what is missing or wrong) and, with `--cold`, checks
//! once that their pages can be dropped.

use super::data::{self, Object, Outcome};
use super::file::FileSource;
use super::http::{HttpClient, Url};
use crate::error::Result;
use crate::output::warnings::{program_name, warn, Warning};
use std::path::Path;

/// Writes the objects of `sizes` and their manifest to `dir`, keeping valid ones; returns
/// a line per file saying what became of it.
pub fn write_dir(dir: &Path, sizes: &[u64], seed: u64) -> Result<String> {
    let mut out = String::new();
    for (object, outcome) in data::ensure_dir(dir, sizes, seed, true)? {
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

/// Uploads the objects of `sizes` and their manifest to `url` with PUT, skipping objects
/// already there with the right size; returns a line per object saying what became of it.
pub fn upload(url: &Url, sizes: &[u64], seed: u64) -> Result<String> {
    let mut out = String::new();
    let mut client = HttpClient::new(url);
    let mut entries = Vec::new();
    for &size in sizes {
        let object = Object::new(size, seed);
        let bytes = object.bytes();
        let what = if client.size(&object.name)? == Some(size) {
            "kept (already there with this size)"
        } else {
            client.put(&object.name, &bytes)?;
            "uploaded"
        };
        out.push_str(&format!(
            "{}  {size} bytes  {what}\n",
            url.object(&object.name)
        ));
        entries.push((object.name, size, data::checksum(&bytes)));
    }
    client.put(data::MANIFEST, data::manifest(seed, &entries).as_bytes())?;
    out.push_str(&format!("{}  manifest\n", url.object(data::MANIFEST)));
    Ok(out)
}

/// Generates missing or wrong objects (the reviewers' "create the data if it does not
/// exist, then run"), and with `cold` checks once that their pages can be dropped.
pub fn prepare_dir(dir: &Path, sizes: &[u64], seed: u64, cold: bool) -> Result<()> {
    for (object, outcome) in data::ensure_dir(dir, sizes, seed, false)? {
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
            Ok(cached) if cached > 0.1 => warn(&Warning::Note(format!(
                "--cold: {:.0}% of {}'s pages stay cached after posix_fadvise DONTNEED (tmpfs keeps files in memory): its reads are not cold",
                cached * 100.0,
                path.display()
            ))),
            Ok(_) => {}
            Err(e) => warn(&Warning::Note(format!(
                "--cold: could not drop the cache ({e}): reads are not cold"
            ))),
        }
    }
    Ok(())
}

/// Warns that `--cold` cannot drop the page cache of a server (once, in the parent).
pub fn warn_remote_cold(url: &Url) {
    warn(&Warning::Note(format!(
        "--cold: the page cache of the server behind {url} cannot be dropped from here; its reads are as warm as the server keeps them"
    )));
}
