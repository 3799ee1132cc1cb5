//! What a comparison could have seen: the smallest true change a two-sided test calls in
//! [`POWER`] of tries, from its standard error and degrees of freedom, and the units
//! (pairs, forks) a spread needs to see a given change. A tie is only as informative as
//! this figure: `a tie (1.01x; this run could see 4% or more)`.

use super::student_t::student_t_quantile;

/// The power a smallest visible change is stated at: a change that large is called in
/// 95 tries of 100.
pub const POWER: f64 = 0.95;

/// The smallest true difference, in the statistic's own scale (a log-ratio, a mean), that
/// a two-sided test at `alpha` with standard error `se` on `df` degrees of freedom calls
/// in [`POWER`] of tries: (t₁₋α/₂ + t_power) × se. NaN where `df` is not positive.
pub fn detectable(se: f64, df: f64, alpha: f64) -> f64 {
    if !(df > 0.0 && se.is_finite()) {
        return f64::NAN;
    }
    let sides = student_t_quantile(1.0 - alpha / 2.0, df) + student_t_quantile(POWER, df);
    sides * se
}

/// The fewest units, from `fewest` to `most`, whose mean over a `spread` (one unit's
/// standard deviation) detects `change` (same scale) at `alpha`; `most` where even that
/// many fall short, `fewest` where the spread is nothing.
pub fn units_for(spread: f64, change: f64, alpha: f64, fewest: usize, most: usize) -> usize {
    let fewest = fewest.max(2);
    let most = most.max(fewest);
    if !(spread.is_finite() && change > 0.0) {
        return most;
    }
    (fewest..=most)
        .find(|&n| detectable(spread / (n as f64).sqrt(), n as f64 - 1.0, alpha) <= change)
        .unwrap_or(most)
}

/// A relative change as a person reads it: `4%`, `0.8%`, `120%`.
pub fn percent(change: f64) -> String {
    let p = change * 100.0;
    match p {
        p if !p.is_finite() => "?%".into(),
        p if p < 1.0 => format!("{p:.1}%"),
        p => format!("{p:.0}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// A standard normal draw (Box–Muller), here so that this leaf imports no sibling.
    fn normal(rng: &mut Rng) -> f64 {
        let u = 1.0 - rng.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos()
    }

    #[test]
    fn the_detectable_change_is_called_in_ninety_five_tries_of_a_hundred() {
        // Ten units of spread 1 at alpha 0.01: simulate the one-sample t-test on a true
        // shift of exactly the detectable size, and on a third of it.
        let (n, alpha) = (10usize, 0.01);
        let d = detectable(1.0 / (n as f64).sqrt(), n as f64 - 1.0, alpha);
        // By hand: t(0.995, 9) = 3.2498, t(0.95, 9) = 1.8331; (5.0829) / √10 = 1.6074.
        assert!((d - 1.6074).abs() < 1e-3, "{d}");
        let t = student_t_quantile(1.0 - alpha / 2.0, n as f64 - 1.0);
        let mut rng = Rng::new(5);
        let called = |shift: f64, rng: &mut Rng| {
            (0..4000)
                .filter(|_| {
                    let xs: Vec<f64> = (0..n).map(|_| shift + normal(rng)).collect();
                    let m = xs.iter().sum::<f64>() / n as f64;
                    let s =
                        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
                    m.abs() > t * s / (n as f64).sqrt()
                })
                .count() as f64
                / 4000.0
        };
        let power = called(d, &mut rng);
        assert!(
            (0.93..=0.97).contains(&power),
            "power at the figure: {power}"
        );
        assert!(called(d / 3.0, &mut rng) < 0.5);
        assert!(called(0.0, &mut rng) < 0.02);
    }

    #[test]
    fn units_are_the_fewest_that_see_the_change() {
        let n = units_for(1.0, 1.0, 0.01, 3, 1000);
        let see = |n: usize| detectable(1.0 / (n as f64).sqrt(), n as f64 - 1.0, 0.01);
        assert!(see(n) <= 1.0 && see(n - 1) > 1.0, "{n}");
        assert_eq!(units_for(1.0, 1.0, 0.01, 3, 10), 10, "capped at most");
        assert_eq!(units_for(0.0, 0.05, 0.01, 3, 10), 3);
        assert_eq!(units_for(f64::NAN, 0.05, 0.01, 3, 10), 10);
        assert!(detectable(1.0, 0.0, 0.01).is_nan());
        assert_eq!(percent(0.041), "4%");
        assert_eq!(percent(0.008), "0.8%");
    }
}
