//! HTTP ranges as a source ([`HttpSource`]): one object read with ranged GETs through the HTTP client of
//! [`crate::net::http`], to an origin that is a plain URL prefix or an S3 bucket
//! ([`super::s3`]), its size checked by HEAD when it is opened.

use crate::net::http::{HttpClient, Origin};
use crate::seek::source::{Buffers, Sink, Source};
use crate::util::error::{Error, Result};
use std::sync::Arc;
use std::time::Duration;

/// How long a request may take, connect and retry included, unless `--request-timeout`
/// says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One object read with ranged GETs.
pub(crate) struct HttpSource {
    client: HttpClient,
    name: String,
    size: u64,
}

impl HttpSource {
    /// Checks that object `name` is there with `size` bytes (HEAD), keeping the
    /// connection; `gen` is the command that makes the objects, for messages, or None for
    /// an object bb-seek did not make (`--object`), whose size was read when the run began.
    pub(crate) fn open(
        origin: Arc<dyn Origin>,
        name: &str,
        size: u64,
        timeout: Duration,
        gen: Option<&str>,
    ) -> Result<HttpSource> {
        let mut client = HttpClient::new(origin, timeout);
        let object = client.origin().describe(Some(name));
        match (client.size(name)?, gen) {
            (Some(n), _) if n == size => {}
            (Some(n), Some(gen)) => {
                return Err(Error::failed(format!(
                    "{object} has {n} bytes, expected {size} (run {gen})"
                )))
            }
            (Some(n), None) => {
                return Err(Error::failed(format!(
                    "{object} has {n} bytes, not the {size} it had when the run began: it \
                     changed since (an --object must stay as it is through the run)"
                )))
            }
            (None, Some(gen)) => {
                return Err(Error::failed(format!(
                    "{object} is not there (404); upload the objects first: {gen}"
                )))
            }
            (None, None) => {
                return Err(Error::failed(format!(
                    "{object} is not there (404): it was when the run began, and was removed since"
                )))
            }
        }
        Ok(HttpSource {
            client,
            name: name.to_string(),
            size,
        })
    }
}

impl Source for HttpSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn retries(&self) -> u64 {
        self.client.retries()
    }

    fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let mut sink = Buffers::new(bufs);
        let len = sink.total();
        self.client
            .get_range(&self.name, offset, len, self.size, &mut sink)
    }

    fn read_into(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        self.client
            .get_range(&self.name, offset, len, self.size, sink)
    }
}
