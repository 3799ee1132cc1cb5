//! Two builds measured fork by fork in pairs (`--against`): how many times faster one is,
//! and the interval of that ratio. Each pair is two forks alive together, one of each
//! build, driven in turn iteration by iteration in a balanced order (AB BA AB …), so
//! that a drift of the machine through the run (heat, clocks, a neighbour) falls on both
//! sides of a pair alike and cancels in its ratio. The pairs, not the forks, are the
//! unit: the ratio is the geometric mean of the pairs' ratios, its interval the
//! [`PAIRED_CONFIDENCE`] Student-t interval over their logarithms (with [`MIN_FORKS`]
//! pairs or more); with fewer, both sides' noise band in quadrature, or two pairs'
//! spread where wider. Beside it, the smallest change those pairs could have called
//! ([`super::power`]): what a tie is worth.

use super::power::detectable;
use super::student_t::student_t_quantile;
use super::uncertainty::{Basis, MIN_FORKS};
use super::welch::Moments;

/// The level of an A/B verdict: 99%, so that a build against a copy of itself is called
/// different in about one row of a hundred, each row judged on its own (docs/ab.md).
/// JMH's 99.9% would take about a third again as many pairs to see the same change.
pub const PAIRED_CONFIDENCE: f64 = 0.99;

/// The ratio of two builds' speeds from their pairs, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedRatio {
    /// How many times faster the first build is (above 1) or slower (below 1).
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The pairs it comes from: `Forks(n)` for a t interval over `n` pairs, `Band(n)`
    /// for fewer than [`MIN_FORKS`].
    pub basis: Basis,
    /// The standard deviation of one pair's log-ratio (NaN with fewer than two pairs):
    /// what the next run's number of pairs is planned from.
    pub spread: f64,
    /// The smallest change these pairs could have called in 95 tries of 100, relative
    /// (0.04: 4%); with fewer than [`MIN_FORKS`] pairs, the interval's own half-width.
    pub smallest: f64,
}

/// Which way a paired ratio goes, beyond its interval or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The interval holds 1.
    Tie,
}

impl Verdict {
    /// As the JSON writes it: `faster`, `slower`, `tie`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Tie => "tie",
        }
    }
}

impl PairedRatio {
    /// From `speedups`, each pair's first build's speed over the second's (a throughput
    /// ratio, or a time ratio turned over); `band` is one fork's relative noise band.
    /// None with no finite, positive pair.
    pub fn of(speedups: &[f64], band: f64) -> Option<PairedRatio> {
        let logs: Vec<f64> = speedups
            .iter()
            .filter(|r| r.is_finite() && **r > 0.0)
            .map(|r| r.ln())
            .collect();
        let n = logs.len();
        if n == 0 {
            return None;
        }
        let m = Moments::of(logs.iter().map(|&l| (l, 1)));
        let alpha = 1.0 - PAIRED_CONFIDENCE;
        let (half, basis, smallest) = if n >= MIN_FORKS {
            let se = (m.variance / n as f64).sqrt();
            let t = student_t_quantile(1.0 - alpha / 2.0, n as f64 - 1.0);
            let df = n as f64 - 1.0;
            (t * se, Basis::Forks(n), detectable(se, df, alpha).exp_m1())
        } else {
            let spread = match logs.as_slice() {
                [a, b] => (a - b).abs(),
                _ => 0.0,
            };
            let bands = std::f64::consts::SQRT_2 * (1.0 + band).ln();
            let half = bands.max(spread);
            (half, Basis::Band(n), half.exp_m1())
        };
        Some(PairedRatio {
            ratio: m.mean.exp(),
            low: (m.mean - half).exp(),
            high: (m.mean + half).exp(),
            basis,
            spread: m.variance.sqrt(),
            smallest,
        })
    }

    /// Faster or slower where the interval leaves out 1, else a tie.
    pub fn verdict(&self) -> Verdict {
        if self.low > 1.0 {
            Verdict::Faster
        } else if self.high < 1.0 {
            Verdict::Slower
        } else {
            Verdict::Tie
        }
    }

    /// The interval's half-width around the ratio, as `±0.02` prints it: the wider side.
    pub fn error(&self) -> f64 {
        (self.high - self.ratio).max(self.ratio - self.low)
    }

    /// The same seen from the other build: its speed over the first's.
    pub fn inverse(&self) -> PairedRatio {
        PairedRatio {
            ratio: 1.0 / self.ratio,
            low: 1.0 / self.high,
            high: 1.0 / self.low,
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::uncertainty::tests::normal;
    use crate::stats::uncertainty::{judge, Side, Uncertainty, ALPHA, NOISE_BAND};
    use crate::util::rng::Rng;

    /// One simulated run of two builds, `pairs` pairs in the balanced order, on a machine
    /// whose every score rises by `drift` (relative) a fork through the run: each fork
    /// `true speed × (1 + drift × its place) × its own noise`. Returns the pairs'
    /// speedups (A over B) and each side's fork speeds.
    fn interleaved(
        rng: &mut Rng,
        speedup: f64,
        drift: f64,
        noise: f64,
        pairs: usize,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (mut a, mut b, mut ratios) = (vec![], vec![], vec![]);
        let mut place = 0.0;
        let mut fork = |true_speed: f64| {
            place += 1.0;
            true_speed * (1.0 + drift * place) * (1.0 + noise * normal(rng))
        };
        for pair in 0..pairs {
            let (sa, sb) = if pair % 2 == 0 {
                let sa = fork(speedup);
                (sa, fork(1.0))
            } else {
                let sb = fork(1.0);
                (fork(speedup), sb)
            };
            a.push(sa);
            b.push(sb);
            ratios.push(sa / sb);
        }
        (ratios, a, b)
    }

    #[test]
    fn a_tie_is_a_tie_and_a_difference_is_seen() {
        let mut rng = Rng::new(7);
        let trials = 2000;
        let (mut false_verdicts, mut found, mut held) = (0, 0, 0);
        for _ in 0..trials {
            let (aa, _, _) = interleaved(&mut rng, 1.0, 0.0, 0.02, 5);
            let r = PairedRatio::of(&aa, NOISE_BAND).unwrap();
            false_verdicts += usize::from(r.verdict() != Verdict::Tie);
            // Five pairs at 99% (t = 4.6 at 4 degrees of freedom): 10% is seen where
            // forks are 1% apart.
            let (ab, _, _) = interleaved(&mut rng, 1.10, 0.0, 0.01, 5);
            let r = PairedRatio::of(&ab, NOISE_BAND).unwrap();
            found += usize::from(r.verdict() == Verdict::Faster);
            held += usize::from(r.low <= 1.10 && 1.10 <= r.high);
        }
        // 99% intervals: about 20 in 2000 A/A pairs beyond; allow a little more.
        assert!(false_verdicts <= trials * 15 / 1000, "{false_verdicts}");
        assert!(found >= trials * 95 / 100, "power at 10%: {found}");
        assert!(
            held >= trials * 98 / 100,
            "coverage of the true ratio: {held}"
        );
    }

    #[test]
    fn a_drift_through_the_run_cancels_in_pairs_and_not_between_runs() {
        // Every fork 1% slower than the one before (a SoC heating up), noise 1%.
        let mut rng = Rng::new(11);
        let trials = 500;
        let (mut paired_false, mut sequential_false) = (0, 0);
        for _ in 0..trials {
            let (ratios, _, _) = interleaved(&mut rng, 1.0, -0.01, 0.01, 6);
            let r = PairedRatio::of(&ratios, NOISE_BAND).unwrap();
            paired_false += usize::from(r.verdict() != Verdict::Tie);
            // The same twelve forks run as A's six, then B's six.
            let mut place = 0.0;
            let mut forks = |n: usize| -> Vec<f64> {
                (0..n)
                    .map(|_| {
                        place += 1.0;
                        (1.0 - 0.01 * place) * (1.0 + 0.01 * normal(&mut rng))
                    })
                    .collect()
            };
            let (a, b) = (forks(6), forks(6));
            let side = |m: &[f64]| Uncertainty::of(m.iter().sum::<f64>() / 6.0, m, NOISE_BAND);
            let (ua, ub) = (side(&a), side(&b));
            let judged = judge(
                Side {
                    fork_means: &a,
                    uncertainty: ua,
                },
                Side {
                    fork_means: &b,
                    uncertainty: ub,
                },
                ALPHA,
            );
            sequential_false += usize::from(judged.beyond);
        }
        assert!(paired_false <= trials * 2 / 100, "paired: {paired_false}");
        assert!(
            sequential_false >= trials * 9 / 10,
            "sequential: {sequential_false}"
        );
    }

    #[test]
    fn a_tie_says_the_smallest_change_it_could_see_and_that_change_is_seen() {
        // Ten pairs of 3% spread: the figure a tie prints is a change those pairs call
        // in about 95 tries of 100, and a third of it mostly not.
        let mut rng = Rng::new(17);
        let (aa, _, _) = interleaved(&mut rng, 1.0, 0.0, 0.03 / std::f64::consts::SQRT_2, 10);
        let smallest = PairedRatio::of(&aa, NOISE_BAND).unwrap().smallest;
        assert!((0.02..0.06).contains(&smallest), "{smallest}");
        let power = |change: f64, rng: &mut Rng| {
            (0..2000)
                .filter(|_| {
                    let noise = 0.03 / std::f64::consts::SQRT_2;
                    let (ab, _, _) = interleaved(rng, 1.0 + change, 0.0, noise, 10);
                    PairedRatio::of(&ab, NOISE_BAND).unwrap().verdict() == Verdict::Faster
                })
                .count() as f64
                / 2000.0
        };
        // The figure from one run's spread is itself an estimate: use the true one.
        let truth = crate::stats::power::detectable(0.03 / 10f64.sqrt(), 9.0, 0.01).exp_m1();
        let seen = power(truth, &mut rng);
        assert!((0.92..=0.98).contains(&seen), "power at {truth}: {seen}");
        assert!(power(truth / 3.0, &mut rng) < 0.5);
        // With fewer than three pairs, the figure is the band's interval.
        let one = PairedRatio::of(&[1.0], 0.25).unwrap();
        assert!((one.smallest - (std::f64::consts::SQRT_2 * 1.25f64.ln()).exp_m1()).abs() < 1e-12);
    }

    #[test]
    fn fewer_than_three_pairs_fall_back_on_the_band() {
        let one = PairedRatio::of(&[1.2], 0.25).unwrap();
        assert_eq!(one.basis, Basis::Band(1));
        assert_eq!(one.verdict(), Verdict::Tie, "20% is within two bands");
        let far = PairedRatio::of(&[2.0, 2.1], 0.25).unwrap();
        assert_eq!(
            (far.basis, far.verdict()),
            (Basis::Band(2), Verdict::Faster)
        );
        let slow = PairedRatio::of(&[0.5, 0.52, 0.49], 0.25).unwrap();
        assert_eq!(
            (slow.basis, slow.verdict()),
            (Basis::Forks(3), Verdict::Slower)
        );
        let back = slow.inverse();
        assert!((back.ratio * slow.ratio - 1.0).abs() < 1e-12);
        assert_eq!(back.verdict(), Verdict::Faster);
        assert!(PairedRatio::of(&[f64::NAN, 0.0], 0.25).is_none());
        let r = PairedRatio::of(&[1.0, 1.1, 0.9, 1.05], 0.25).unwrap();
        assert!(r.low < r.ratio && r.ratio < r.high && r.error() > 0.0);
    }
}
