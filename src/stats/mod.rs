//! Statistics over iteration scores, computed as JMH computes them: the summary with the
//! 99.9% Student-t error, percentiles, Welch's t-test for comparisons, and the
//! log-bucketed latency histogram of sample mode; and beside JMH's error, the honest
//! uncertainty over forks that answers and verdicts use (`uncertainty`).

pub mod components;
pub mod histogram;
pub mod paired;
pub mod percentile;
pub mod power;
pub(crate) mod student_t;
pub(crate) mod summary;
pub mod uncertainty;
pub(crate) mod welch;

pub use self::percentile::{
    multiset, percentile_of_counts, percentiles_of, percentiles_of_counts, PERCENTILES,
};
pub use self::summary::Summary;

#[cfg(test)]
pub(crate) mod tests {
    /// Whether `a` is within `tol`, relative, of `b`.
    pub fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    /// A real entry: where it is from, its samples as (value, count), its primaryMetric.
    type RealEntry = (String, Vec<(f64, u64)>, serde_json::Value);

    /// Every sample-mode entry of real JMH files (tests/data/jmh, SOURCES.md) that has a
    /// `rawDataHistogram`: its samples as JMH's multiset, and its primaryMetric.
    fn real_sample_entries() -> Vec<RealEntry> {
        let mut out = Vec::new();
        for file in [
            "victoriengb-sample-jmh1.37.json",
            "vietj-sample-jmh1.21.json",
        ] {
            let path = format!("{}/tests/data/jmh/{file}", env!("CARGO_MANIFEST_DIR"));
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for e in doc.as_array().unwrap() {
                let pm = &e["primaryMetric"];
                let pairs = pm["rawDataHistogram"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|fork| fork.as_array().unwrap())
                    .flat_map(|iteration| iteration.as_array().unwrap())
                    .map(|p| (p[0].as_f64().unwrap(), p[1].as_u64().unwrap()));
                let name = format!("{file}: {}", e["benchmark"]);
                out.push((name, super::multiset(pairs), pm.clone()));
            }
        }
        out
    }

    #[test]
    fn real_jmh_sample_files_percentiles_are_reproduced_exactly() {
        let entries = real_sample_entries();
        assert_eq!(entries.len(), 6);
        let (mut exact, mut all) = (0, 0);
        for (name, samples, pm) in entries {
            for (p, v) in super::percentiles_of_counts(&samples) {
                let theirs = pm["scorePercentiles"][format!("{p:?}")].as_f64().unwrap();
                // One of the 60 (victoriengb's partialMatch p99.999, 9728.297280002385
                // against JMH's …384) is one unit in the last place apart: the same
                // formula over the same doubles gives …385, here and in exact arithmetic.
                let ulps = (v.to_bits() as i64 - theirs.to_bits() as i64).abs();
                assert!(ulps <= 1, "{name} p{p}: {v:?} against {theirs:?}");
                exact += usize::from(ulps == 0);
                all += 1;
            }
        }
        assert_eq!((exact, all), (59, 60));
    }

    #[test]
    fn real_jmh_sample_files_score_and_error_come_from_every_sample() {
        for (name, samples, pm) in real_sample_entries() {
            let s = super::Summary::of_counts(&samples);
            let n: u64 = samples.iter().map(|p| p.1).sum();
            assert_eq!(s.n as u64, n, "{name}");
            assert!(
                close(s.mean, pm["score"].as_f64().unwrap(), 1e-15),
                "{name}: {}",
                s.mean
            );
            // The t quantile is computed otherwise than Commons Math's, to ~1e-12.
            let error = pm["scoreError"].as_f64().unwrap();
            assert!(
                close(s.error, error, 1e-9),
                "{name}: {} against {error}",
                s.error
            );
            let (lo, hi) = s.confidence();
            let conf = pm["scoreConfidence"].as_array().unwrap();
            assert!(close(lo, conf[0].as_f64().unwrap(), 1e-9), "{name}");
            assert!(close(hi, conf[1].as_f64().unwrap(), 1e-9), "{name}");
        }
    }
}
