//! Welch's t-test: is the difference between two runs' iteration scores more than noise?
//! bb-compare's verdicts rest on it.

use super::student_t::student_t_cdf;
use super::summary::Summary;

/// Welch's t-test for two samples: returns (t, degrees of freedom, two-sided p-value).
/// NaN when either side has fewer than two values.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let (sa, sb) = (Summary::of(a), Summary::of(b));
    if sa.n < 2 || sb.n < 2 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let (va, vb) = (
        sa.stdev.powi(2) / sa.n as f64,
        sb.stdev.powi(2) / sb.n as f64,
    );
    if va + vb == 0.0 {
        let p = if sa.mean == sb.mean { 1.0 } else { 0.0 };
        return (f64::INFINITY, f64::INFINITY, p);
    }
    let t = (sb.mean - sa.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
    let p = 2.0 * (1.0 - student_t_cdf(t.abs(), df));
    (t, df, p.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_detects_clear_difference_and_not_noise() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [80.0, 81.0, 79.0, 80.5, 79.5];
        let (_, _, p) = welch_t_test(&a, &b);
        assert!(p < 1e-6, "{p}");
        let c = [100.2, 100.8, 99.1, 100.1, 99.9];
        let (_, _, p) = welch_t_test(&a, &c);
        assert!(p > 0.5, "{p}");
    }
}
