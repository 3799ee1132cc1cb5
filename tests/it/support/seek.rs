//! bb-seek's short runs and the checks every source's report must pass, for the tests of
//! files, HTTP and S3.

use super::entry;

/// One shot of each after one warm-up, in this process: the behaviour is the same.
pub const SHORT: &[&str] = &[
    "--quick",
    "--warmup",
    "1",
    "--iterations",
    "2",
    "--forks",
    "0",
    "--format",
    "json",
];

pub fn metric(e: &serde_json::Value, name: &str) -> f64 {
    e["secondaryMetrics"][name]["score"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {e:#}"))
}

/// Checks the requests and amplification of every pattern × client of a report over
/// objects of 64 KiB and 1 MiB, and that every read was a real read (MB/s > 0).
pub fn check_all_patterns(json: &serde_json::Value, source: &str) {
    assert_eq!(
        json.as_array().unwrap().len(),
        20,
        "2 sizes × (2 sequential + 3) × 2 clients"
    );
    for e in json.as_array().unwrap() {
        assert_eq!(e["mode"], "ss");
        assert_eq!(e["params"]["source"], source);
        assert_eq!(e["primaryMetric"]["scoreUnit"], "ms/op");
        assert!(metric(e, "MB/s") > 0.0);
        if e["params"]["client"] == "plain" {
            assert_eq!(metric(e, "amplification"), 1.0, "{e:#}");
        }
    }
    let key = |size: &str| format!("random-{size}.txt");
    let seq = |size: &str, client: &str, rs: &str| {
        entry(
            json,
            "bb.seek.sequential",
            &[("key", &key(size)), ("client", client), ("read-size", rs)],
        )
    };
    assert_eq!(metric(seq("1mb", "plain", "4k"), "requests"), 256.0);
    assert_eq!(metric(seq("1mb", "plain", "1m"), "requests"), 1.0);
    // Over HTTP (S3 too): a block, then read-ahead of 128k, 256k, 512k, and the last 64k: five
    // requests. From a file, with the small cache: a block, then 64k, then 128k at most:
    // nine.
    let expected = if source.starts_with("file:") {
        9.0
    } else {
        5.0
    };
    assert_eq!(metric(seq("1mb", "stream", "4k"), "requests"), expected);
    assert_eq!(metric(seq("1mb", "stream", "4k"), "amplification"), 1.0);
    for pattern in ["sequential", "forward", "backward", "parquet"] {
        // 64 KiB is small: the stream fetches it whole, once.
        let e = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("64kb")), ("client", "stream")],
        );
        assert_eq!(metric(e, "requests"), 1.0, "{pattern}");
    }
    for (pattern, plain, stream) in [
        ("forward", 5.0, 5.0),
        ("backward", 5.0, 5.0),
        ("parquet", 4.0, 3.0),
    ] {
        let p = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("1mb")), ("client", "plain")],
        );
        let s = entry(
            json,
            &format!("bb.seek.{pattern}"),
            &[("key", &key("1mb")), ("client", "stream")],
        );
        assert_eq!(
            (metric(p, "requests"), metric(s, "requests")),
            (plain, stream),
            "{pattern}"
        );
    }
}
