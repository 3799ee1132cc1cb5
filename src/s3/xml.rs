//! The little XML that S3 speaks with us: the text of one element of a response
//! (`UploadId`, an error's `Code` and `Message`); the bodies we send are escaped with
//! `util::xml::escape`. Not a parser: S3's answers are flat enough that the first
//! `<Name>…</Name>` is the one.

use crate::util::xml::unescape;

/// The unescaped text of the first `<name>…</name>` in `body`.
pub fn element(body: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = body.find(&open)? + open.len();
    let len = body[start..].find(&format!("</{name}>"))?;
    Some(unescape(&body[start..start + len]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::xml::escape;

    #[test]
    fn elements_are_found_and_text_round_trips() {
        let body = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>a &lt;b&gt; &amp;amp; &quot;c&quot;</Message></Error>";
        assert_eq!(element(body, "Code").as_deref(), Some("NoSuchKey"));
        assert_eq!(
            element(body, "Message").as_deref(),
            Some("a <b> &amp; \"c\"")
        );
        assert_eq!(element(body, "UploadId"), None);
        let text = "\"e&t<a>g'\"";
        assert_eq!(unescape(&escape(text)), text);
    }
}
