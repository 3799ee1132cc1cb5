//! The summary of a set of iteration scores, or of sample mode's samples, computed
//! exactly as JMH does (`ListStatistics`, `MultisetStatistics`): the mean, the half-width
//! of the 99.9% Student-t confidence interval, min, median, max, the standard deviation,
//! and Tukey-fence outlier counts (outliers are counted, never dropped).

use super::percentile::percentile_of_counts;
use super::student_t::student_t_quantile;

/// The confidence level of the error, as JMH reports it.
pub const CONFIDENCE: f64 = 0.999;

/// Summary statistics of a set of scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Half-width of the 99.9% confidence interval; NaN when n <= 2, as in JMH.
    pub error: f64,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator); NaN when n < 2.
    pub stdev: f64,
    /// Scores beyond the inner Tukey fences (1.5 IQR), severe ones included.
    pub outliers_mild: usize,
    /// Scores beyond the outer Tukey fences (3 IQR).
    pub outliers_severe: usize,
}

impl Summary {
    fn empty() -> Summary {
        Summary {
            n: 0,
            mean: f64::NAN,
            error: f64::NAN,
            min: f64::NAN,
            median: f64::NAN,
            max: f64::NAN,
            stdev: f64::NAN,
            outliers_mild: 0,
            outliers_severe: 0,
        }
    }

    /// Of iteration scores, as JMH's `ListStatistics`: sums in the order given.
    pub fn of(values: &[f64]) -> Summary {
        let n = values.len();
        if n == 0 {
            return Summary::empty();
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n < 2 {
            f64::NAN
        } else {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        let counts: Vec<(f64, u64)> = sorted.iter().map(|&v| (v, 1)).collect();
        Summary::with(&counts, mean, stdev)
    }

    /// Of samples as sorted (value, count) pairs with equal values merged
    /// ([`super::percentile::multiset`]), as JMH's `MultisetStatistics` in sample mode:
    /// n is the number of samples, the mean Σ value × count / n summed lowest value
    /// first, the variance Σ (value − mean)² × count / (n − 1).
    pub fn of_counts(sorted: &[(f64, u64)]) -> Summary {
        let n: u64 = sorted.iter().map(|&(_, c)| c).sum();
        if n == 0 {
            return Summary::empty();
        }
        let mean = sorted.iter().map(|&(v, c)| v * c as f64).sum::<f64>() / n as f64;
        let variance = sorted
            .iter()
            .map(|&(v, c)| (v - mean).powi(2) * c as f64)
            .sum::<f64>()
            / (n - 1) as f64;
        Summary::with(sorted, mean, variance.sqrt())
    }

    /// The rest from the mean and standard deviation, over sorted (value, count) pairs.
    fn with(sorted: &[(f64, u64)], mean: f64, stdev: f64) -> Summary {
        let n: u64 = sorted.iter().map(|&(_, c)| c).sum();
        let error = if n <= 2 {
            f64::NAN
        } else {
            student_t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, (n - 1) as f64) * stdev
                / (n as f64).sqrt()
        };
        let q = |p: f64| percentile_of_counts(sorted, p);
        let (q1, q3) = (q(25.0), q(75.0));
        let iqr = q3 - q1;
        let beyond = |k: f64| {
            sorted
                .iter()
                .filter(|&&(v, _)| v < q1 - k * iqr || v > q3 + k * iqr)
                .map(|&(_, c)| c as usize)
                .sum()
        };
        Summary {
            n: n as usize,
            mean,
            error,
            min: sorted.first().map_or(f64::NAN, |v| v.0),
            median: q(50.0),
            max: sorted.last().map_or(f64::NAN, |v| v.0),
            stdev,
            outliers_mild: beyond(1.5),
            outliers_severe: beyond(3.0),
        }
    }

    /// The confidence interval (mean - error, mean + error).
    pub fn confidence(&self) -> (f64, f64) {
        (self.mean - self.error, self.mean + self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::close;

    #[test]
    fn error_is_jmh_half_width_by_hand() {
        // Scores 10, 12, 14, 16, 18: mean 14, stdev sqrt(10), t(0.9995, 4) = 8.6103.
        // Error = 8.6103 * sqrt(10) / sqrt(5) = 8.6103 * sqrt(2) = 12.1768.
        let s = Summary::of(&[10.0, 12.0, 14.0, 16.0, 18.0]);
        assert_eq!(s.mean, 14.0);
        assert!(close(s.stdev, 10f64.sqrt(), 1e-12));
        assert!(close(s.error, 12.1768, 1e-4), "{}", s.error);
        assert_eq!((s.min, s.median, s.max), (10.0, 14.0, 18.0));
        assert_eq!(s.confidence().0, 14.0 - s.error);
    }

    #[test]
    fn sample_error_is_jmh_half_width_over_every_sample_by_hand() {
        // 10 ×2, 20 ×1, 40 ×1: n 4, mean (20 + 20 + 40) / 4 = 20, variance
        // (2·100 + 0 + 400) / 3 = 200, error t(0.9995, 3) · sqrt(200) / sqrt(4).
        let s = Summary::of_counts(&[(10.0, 2), (20.0, 1), (40.0, 1)]);
        assert_eq!((s.n, s.mean), (4, 20.0));
        assert!(close(s.stdev, 200f64.sqrt(), 1e-15));
        let t = student_t_quantile(0.9995, 3.0);
        assert!(close(t, 12.924, 1e-4), "{t}");
        assert!(
            close(s.error, t * 200f64.sqrt() / 2.0, 1e-15),
            "{}",
            s.error
        );
        assert_eq!((s.min, s.median, s.max), (10.0, 15.0, 40.0));
        // The same samples as a list: the same summary.
        let list = Summary::of(&[10.0, 40.0, 10.0, 20.0]);
        assert_eq!((list.n, list.mean, list.median), (4, 20.0, 15.0));
        assert!(close(list.error, s.error, 1e-15));
        assert!(Summary::of_counts(&[(3.0, 2)]).error.is_nan(), "n ≤ 2");
        assert_eq!(Summary::of_counts(&[]).n, 0);
    }

    #[test]
    fn error_is_nan_for_two_or_fewer() {
        assert!(Summary::of(&[1.0, 2.0]).error.is_nan());
        assert!(Summary::of(&[1.0]).error.is_nan());
        assert!(Summary::of(&[1.0]).stdev.is_nan());
        assert!(!Summary::of(&[1.0, 2.0, 3.0]).error.is_nan());
    }

    #[test]
    fn tukey_fences_count_but_keep_outliers() {
        // Q1 = 12, Q3 = 18, IQR = 6: inner fences 3..27, outer fences -6..36.
        let v = [
            10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 30.0, 100.0,
        ];
        let s = Summary::of(&v);
        assert_eq!(s.outliers_severe, 1);
        assert_eq!(s.outliers_mild, 2);
        assert_eq!(s.n, 11, "outliers are never dropped");
        assert_eq!(s.max, 100.0);
    }
}
