//! Statistics over iteration scores, computed exactly as JMH does: the mean, the
//! half-width of the 99.9% Student-t confidence interval, percentiles with the estimator
//! JMH uses (Apache Commons Math's default), and Tukey-fence outlier counts.

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

/// The cumulative distribution function of Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The inverse of [`student_t_cdf`] for p in (0.5, 1), found by bisection: exact to far
/// more digits than any score is printed with.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b), by Lentz's continued fraction.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast only below this point; use the symmetry otherwise.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut f = d;
    for m in 1..500 {
        let m = m as f64;
        for numerator in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + numerator * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // Two-sided 99.9% critical values from standard t tables.
        for (df, expected) in [
            (1.0, 636.619),
            (2.0, 31.599),
            (4.0, 8.610),
            (9.0, 4.781),
            (29.0, 3.659),
        ] {
            let q = student_t_quantile(0.9995, df);
            assert!(close(q, expected, 2e-4), "df {df}: {q} vs {expected}");
        }
        assert!(close(student_t_quantile(0.975, 10.0), 2.228, 2e-4));
    }

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
    fn percentiles_use_commons_math_estimator() {
        let sorted = [1.0, 2.0, 3.0, 4.0];
        // pos = 0.5 * 5 = 2.5 -> 2 + 0.5 * (3 - 2)
        assert_eq!(percentile(&sorted, 50.0), 2.5);
        // pos = 0.25 * 5 = 1.25 -> 1 + 0.25 * 1
        assert_eq!(percentile(&sorted, 25.0), 1.25);
        assert_eq!(percentile(&sorted, 0.0), 1.0);
        assert_eq!(percentile(&sorted, 100.0), 4.0);
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
