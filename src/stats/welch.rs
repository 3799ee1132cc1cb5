//! Welch's t-test: is the difference between two runs more than noise? bb-compare's
//! verdicts rest on it, over iteration scores, sample-mode histograms (each bucket's value
//! weighted by its count) or fork means.

use super::student_t::student_t_cdf;

/// Count, mean and variance (n − 1 in the denominator) of weighted values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub n: f64,
    pub mean: f64,
    pub variance: f64,
}

impl Moments {
    pub fn of(values: impl Iterator<Item = (f64, u64)> + Clone) -> Moments {
        let finite = values.filter(|(v, c)| v.is_finite() && *c > 0);
        let n: f64 = finite.clone().map(|(_, c)| c as f64).sum();
        let mean = finite.clone().map(|(v, c)| v * c as f64).sum::<f64>() / n;
        let variance = if n < 2.0 {
            f64::NAN
        } else {
            finite
                .map(|(v, c)| c as f64 * (v - mean).powi(2))
                .sum::<f64>()
                / (n - 1.0)
        };
        Moments { n, mean, variance }
    }
}

/// The two-sided p-value of Welch's t-test; NaN when a side has fewer than two values.
/// Computed from the tail itself, not as 1 − cdf, so tiny p-values keep their digits
/// down to where a double ends (about 1e-308; below that it is 0).
pub fn welch(a: Moments, b: Moments) -> f64 {
    if !(a.n >= 2.0 && b.n >= 2.0) {
        return f64::NAN;
    }
    let (va, vb) = (a.variance / a.n, b.variance / b.n);
    if va + vb == 0.0 {
        return if a.mean == b.mean { 1.0 } else { 0.0 };
    }
    let t = (b.mean - a.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (a.n - 1.0) + vb.powi(2) / (b.n - 1.0));
    (2.0 * student_t_cdf(-t.abs(), df)).clamp(0.0_f64, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ones(v: &[f64]) -> Moments {
        Moments::of(v.iter().map(|&x| (x, 1)))
    }

    #[test]
    fn welch_detects_clear_difference_and_not_noise() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [80.0, 81.0, 79.0, 80.5, 79.5];
        let p = welch(ones(&a), ones(&b));
        assert!(p < 1e-6, "{p}");
        let c = [100.2, 100.8, 99.1, 100.1, 99.9];
        let p = welch(ones(&a), ones(&c));
        assert!(p > 0.5, "{p}");
    }
}
