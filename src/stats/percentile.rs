//! Percentiles with the estimator JMH uses for scorePercentiles (Apache Commons Math's
//! default), and JMH's list of them.

/// The p-th percentile (0..=100) of sorted values, with Commons Math's default estimator
/// (position p(n+1)/100, linear interpolation), which JMH uses for scorePercentiles.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n == 1 {
        return sorted[0];
    }
    let pos = p * (n as f64 + 1.0) / 100.0;
    if pos < 1.0 {
        return sorted[0];
    }
    if pos >= n as f64 {
        return sorted[n - 1];
    }
    let lower = pos.floor();
    let d = pos - lower;
    let i = lower as usize;
    sorted[i - 1] + d * (sorted[i] - sorted[i - 1])
}

/// The percentiles JMH reports in scorePercentiles.
pub const PERCENTILES: [f64; 10] = [
    0.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 99.9999, 100.0,
];

/// JMH's scorePercentiles of per-iteration values (one list per fork).
pub fn percentiles_of(raw: &[Vec<f64>]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = raw.iter().flatten().copied().collect();
    sorted.sort_by(f64::total_cmp);
    PERCENTILES
        .iter()
        .map(|&p| (p, percentile(&sorted, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_commons_math_estimator() {
        let sorted = [1.0, 2.0, 3.0, 4.0];
        // pos = 0.5 * 5 = 2.5 -> 2 + 0.5 * (3 - 2)
        assert_eq!(percentile(&sorted, 50.0), 2.5);
        // pos = 0.25 * 5 = 1.25 -> 1 + 0.25 * 1
        assert_eq!(percentile(&sorted, 25.0), 1.25);
        assert_eq!(percentile(&sorted, 0.0), 1.0);
        assert_eq!(percentile(&sorted, 100.0), 4.0);
    }
}
