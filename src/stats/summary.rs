//! The summary of a set of iteration scores, computed exactly as JMH does: the mean, the
//! half-width of the 99.9% Student-t confidence interval, min, median, max, the standard
//! deviation, and Tukey-fence outlier counts (outliers are counted, never dropped).

use super::percentile::percentile;
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
    pub fn of(values: &[f64]) -> Summary {
        let n = values.len();
        if n == 0 {
            return Summary {
                n,
                mean: f64::NAN,
                error: f64::NAN,
                min: f64::NAN,
                median: f64::NAN,
                max: f64::NAN,
                stdev: f64::NAN,
                outliers_mild: 0,
                outliers_severe: 0,
            };
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n < 2 {
            f64::NAN
        } else {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        let error = if n <= 2 {
            f64::NAN
        } else {
            student_t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, (n - 1) as f64) * stdev
                / (n as f64).sqrt()
        };
        let (q1, q3) = (percentile(&sorted, 25.0), percentile(&sorted, 75.0));
        let iqr = q3 - q1;
        let beyond = |k: f64| {
            sorted
                .iter()
                .filter(|&&v| v < q1 - k * iqr || v > q3 + k * iqr)
                .count()
        };
        Summary {
            n,
            mean,
            error,
            min: sorted[0],
            median: percentile(&sorted, 50.0),
            max: sorted[n - 1],
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
