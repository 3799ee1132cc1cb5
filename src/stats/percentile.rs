//! Percentiles with the estimator JMH uses for scorePercentiles and sample mode's
//! percentile rows (`Statistics.getPercentile`: Commons Math's legacy estimator over a
//! list, the same position rule over a multiset), and JMH's list of them.

/// The p-th percentile (0..=100) of `sorted` (value, count) pairs, lowest value first, as
/// JMH's `MultisetStatistics.getPercentile` computes it: the 0th is the minimum; otherwise
/// at position pos = p(n+1)/100 over the n samples, the value of rank ⌊pos⌋ (the minimum
/// below rank 1) plus (pos − ⌊pos⌋) times the step to the value of the next rank (the
/// maximum past the last). NaN when there are no samples.
pub fn percentile_of_counts(sorted: &[(f64, u64)], p: f64) -> f64 {
    let n: u64 = sorted.iter().map(|&(_, c)| c).sum();
    if n == 0 {
        return f64::NAN;
    }
    let max = sorted
        .iter()
        .rev()
        .find(|&&(_, c)| c > 0)
        .map_or(f64::NAN, |v| v.0);
    if p == 0.0 {
        return sorted
            .iter()
            .find(|&&(_, c)| c > 0)
            .map_or(f64::NAN, |v| v.0);
    }
    // The value of the sample at 1-based `rank`: the first whose running count reaches it.
    let at = |rank: u64| {
        let mut seen = 0;
        for &(v, c) in sorted {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        max
    };
    let pos = p * (n as f64 + 1.0) / 100.0;
    let floor = pos.floor();
    let lower = at(floor as u64);
    let upper = at(floor as u64 + 1);
    lower + (upper - lower) * (pos - floor)
}

/// The p-th percentile (0..=100) of sorted values, as JMH's `ListStatistics` computes it
/// (Commons Math's default estimator: position p(n+1)/100, linear interpolation), which
/// is [`percentile_of_counts`] with every count 1.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let ones: Vec<(f64, u64)> = sorted.iter().map(|&v| (v, 1)).collect();
    percentile_of_counts(&ones, p)
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

/// JMH's scorePercentiles of samples, as sorted (value, count) pairs.
pub fn percentiles_of_counts(sorted: &[(f64, u64)]) -> Vec<(f64, f64)> {
    PERCENTILES
        .iter()
        .map(|&p| (p, percentile_of_counts(sorted, p)))
        .collect()
}

/// (value, count) pairs sorted by value, equal values merged and empty counts left out:
/// the multiset JMH keeps of a sample-mode run, from its iterations' histograms.
pub fn multiset(pairs: impl IntoIterator<Item = (f64, u64)>) -> Vec<(f64, u64)> {
    let mut all: Vec<(f64, u64)> = pairs.into_iter().filter(|&(_, c)| c > 0).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, u64)> = Vec::with_capacity(all.len());
    for (v, c) in all {
        match merged.last_mut() {
            Some(last) if last.0 == v => last.1 += c,
            _ => merged.push((v, c)),
        }
    }
    merged
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
        assert_eq!(percentile(&sorted, 10.0), 1.0, "below rank 1: the minimum");
        assert_eq!(percentile(&sorted, 90.0), 4.0, "past rank n: the maximum");
        assert_eq!(percentile(&sorted, 100.0), 4.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn counts_interpolate_across_values_as_the_expanded_list_does() {
        // 1 ×3, 5 ×1, 9 ×2: the list 1 1 1 5 9 9.
        let counts = multiset([(9.0, 2), (1.0, 1), (5.0, 1), (1.0, 2), (7.0, 0)]);
        assert_eq!(counts, [(1.0, 3), (5.0, 1), (9.0, 2)]);
        let list = [1.0, 1.0, 1.0, 5.0, 9.0, 9.0];
        for p in [0.0, 10.0, 50.0, 60.0, 75.0, 90.0, 99.9, 100.0] {
            assert_eq!(
                percentile_of_counts(&counts, p),
                percentile(&list, p),
                "p{p}"
            );
        }
        // pos = 0.5 * 7 = 3.5: rank 3 is 1, rank 4 is 5 -> 3.
        assert_eq!(percentile_of_counts(&counts, 50.0), 3.0);
    }
}
