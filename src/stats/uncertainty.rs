//! The honest uncertainty of a score, and whether two scores differ by more than it.
//!
//! A run's iterations (and sample mode's samples) are not independent draws of the next
//! run: a fresh process lands on other cache colours, another heap layout, other
//! neighbours. The unit of replication is the fork. With [`MIN_FORKS`] or more, the
//! error is the half-width of the [`NEXT_RUN_CONFIDENCE`] prediction interval over the
//! fork means for the next run's score: Student's t at forks − 1 degrees of freedom times
//! √2 standard errors (the next run's mean has a spread of its own, as large), so that
//! it holds the next run of as many forks in 95 tries of 100 and is no wider than what
//! the next run moves (the nested model: between forks, with each fork's own iterations'
//! part inside its mean's spread). With fewer there is nothing to estimate the
//! between-fork part from, and the error is the band of a lone fork (this board's, from
//! its calibration, else the binary's default: `model::noise`), or the spread of two
//! forks where that is wider. A fork's own iterations say nothing of the next fork's.
//! Runs minutes apart differ by more than the forks of one run do (another hour on a
//! shared host, another temperature): the board's calibration measures that too, its run
//! floor, which widens the interval of a score meant for the next run and which a
//! difference between two runs must exceed ([`Uncertainty::with_floor`]). A difference
//! is judged on the same footing: Welch's test over both sides' fork means, else the two
//! intervals in quadrature around the ratio.

use super::power::detectable;
use super::student_t::student_t_quantile;
use super::welch::{welch, Moments};

/// Forks each side needs for the interval (and the test) over fork means.
pub const MIN_FORKS: usize = 3;

/// The relative half-width of a score from fewer than [`MIN_FORKS`] forks where nothing
/// better is known (a JMH file): how far apart two A/A runs of one fork each landed. Each
/// binary states its own, measured by scripts/bench-aa.sh (BENCHMARKS.md, "A/A"), in its
/// settings (`noise_band`), and its reports carry it (`boardbench.noiseBand`).
pub const NOISE_BAND: f64 = 0.25;

/// How often the printed interval holds the next run's score.
pub const NEXT_RUN_CONFIDENCE: f64 = 0.95;

/// Below this p-value two sides' fork means differ beyond noise (bb-compare's `--alpha`).
pub const ALPHA: f64 = 0.01;

/// What an error was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// A Student-t interval over this many fork means.
    Forks(usize),
    /// Fewer than [`MIN_FORKS`] forks (this many): the noise band, or the spread of two
    /// forks where that is wider.
    Band(usize),
}

impl Basis {
    /// How many forks (or pairs) it was computed from.
    pub fn count(self) -> usize {
        match self {
            Basis::Forks(n) | Basis::Band(n) => n,
        }
    }

    /// As the JSON names it (`boardbench.errorBasis`): `forks 3`, `band 1`.
    pub fn name(self) -> String {
        match self {
            Basis::Forks(n) => format!("forks {n}"),
            Basis::Band(n) => format!("band {n}"),
        }
    }

    /// The basis [`Basis::name`] wrote; None for anything else.
    pub fn parse(text: &str) -> Option<Basis> {
        let (kind, n) = text.split_once(' ')?;
        let n: usize = n.parse().ok()?;
        match kind {
            "forks" if n >= MIN_FORKS => Some(Basis::Forks(n)),
            "band" if n < MIN_FORKS => Some(Basis::Band(n)),
            _ => None,
        }
    }
}

/// A score with the uncertainty it really has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Uncertainty {
    pub score: f64,
    /// Half-width of the interval, in the score's unit.
    pub error: f64,
    pub basis: Basis,
    /// The run floor inside `error`, relative: what two runs of the same build differ by
    /// beyond their forks' spread (0: one run's own uncertainty).
    pub floor: f64,
}

impl Uncertainty {
    /// Of `score` from its fork means; `band` is the relative noise band of one fork.
    pub fn of(score: f64, fork_means: &[f64], band: f64) -> Uncertainty {
        let forks: Vec<f64> = fork_means
            .iter()
            .copied()
            .filter(|m| m.is_finite())
            .collect();
        let n = forks.len();
        if n >= MIN_FORKS {
            let m = Moments::of(forks.iter().map(|&v| (v, 1)));
            return Uncertainty {
                score,
                error: t_quantile(n as f64 - 1.0)
                    * std::f64::consts::SQRT_2
                    * (m.variance / n as f64).sqrt(),
                basis: Basis::Forks(n),
                floor: 0.0,
            };
        }
        let spread = match forks.as_slice() {
            [a, b] => (a - b).abs(),
            _ => 0.0,
        };
        let error = [band * score.abs(), spread]
            .into_iter()
            .filter(|e| e.is_finite())
            .fold(0.0, f64::max);
        Uncertainty {
            score,
            error,
            basis: Basis::Band(n),
            floor: 0.0,
        }
    }

    /// The same, for what the next run gives: the run floor (relative) added in
    /// quadrature to the forks' interval; a band is at least the floor.
    pub fn with_floor(self, floor: f64) -> Uncertainty {
        let part = floor * self.score.abs();
        let error = match self.basis {
            Basis::Forks(_) => self.error.hypot(part),
            Basis::Band(_) => self.error.max(part),
        };
        Uncertainty {
            error,
            floor,
            ..self
        }
    }

    /// The error relative to the score (0.02 for ±2%).
    pub fn relative(&self) -> f64 {
        (self.error / self.score).abs()
    }

    /// Whether `value` lies inside the interval.
    pub fn holds(&self, value: f64) -> bool {
        (value - self.score).abs() <= self.error
    }

    /// `±2.1%`, as an answer prints it.
    pub fn percent(&self) -> String {
        let r = self.relative() * 100.0;
        match r {
            r if !r.is_finite() => "±?".into(),
            r if r < 10.0 => format!("±{r:.1}%"),
            r => format!("±{r:.0}%"),
        }
    }
}

/// The two-sided t quantile of the interval, [`NEXT_RUN_CONFIDENCE`], at `df` degrees
/// of freedom.
fn t_quantile(df: f64) -> f64 {
    student_t_quantile(1.0 - (1.0 - NEXT_RUN_CONFIDENCE) / 2.0, df)
}

/// One side of a comparison: its score, fork means and honest uncertainty.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub fork_means: &'a [f64],
    pub uncertainty: Uncertainty,
}

/// How two sides were told apart, and whether they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Welch's two-sided p over the fork means; NaN where the band judged.
    pub p_value: f64,
    /// Whether the difference is beyond noise.
    pub beyond: bool,
    /// Whether both sides had [`MIN_FORKS`] fork means (Welch's test), else the band.
    pub by_forks: bool,
    /// The smallest change, relative (0.04: 4%), that this judgement would have called
    /// in 95 tries of 100 ([`super::power`]): Welch's at these sides' spreads and
    /// counts, and never under the run floors; by the band, the band itself.
    pub smallest: f64,
}

/// Whether `b` differs from `a` by more than noise, at `alpha`: Welch's test over the fork
/// means where both sides have [`MIN_FORKS`] (and, where the sides carry run floors, a
/// ratio beyond both floors in quadrature: two runs differ by that much anyway), else
/// whether the ratio's interval (both relative errors in quadrature, on a log scale so
/// that `b` against `a` and `a` against `b` agree) leaves out 1.
pub fn judge(a: Side, b: Side, alpha: f64) -> Judgement {
    let finite = |s: &Side| s.fork_means.iter().filter(|m| m.is_finite()).count();
    if finite(&a) >= MIN_FORKS && finite(&b) >= MIN_FORKS {
        let moments = |s: &Side| Moments::of(s.fork_means.iter().map(|&m| (m, 1)));
        let (ma, mb) = (moments(&a), moments(&b));
        let p = welch(ma, mb);
        let floors = a.uncertainty.floor.hypot(b.uncertainty.floor);
        let log_ratio = (b.uncertainty.score / a.uncertainty.score).ln().abs();
        let (va, vb) = (ma.variance / ma.n, mb.variance / mb.n);
        let df = (va + vb).powi(2) / (va.powi(2) / (ma.n - 1.0) + vb.powi(2) / (mb.n - 1.0));
        let by_welch = detectable((va + vb).sqrt(), df, alpha) / ma.mean.abs();
        // Sides that agree to the last digit leave df undefined: nothing is too small.
        let by_welch = if va + vb == 0.0 { 0.0 } else { by_welch };
        return Judgement {
            p_value: p,
            beyond: p < alpha && log_ratio > floors,
            by_forks: true,
            smallest: by_welch.max(floors.exp_m1()),
        };
    }
    let (ua, ub) = (a.uncertainty, b.uncertainty);
    let log_ratio = (ub.score / ua.score).ln();
    let error = (ua.relative().powi(2) + ub.relative().powi(2)).sqrt();
    Judgement {
        p_value: f64::NAN,
        beyond: log_ratio.is_finite() && error.is_finite() && log_ratio.abs() > error,
        by_forks: false,
        smallest: error.exp_m1(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// A standard normal draw (Box–Muller).
    pub fn normal(rng: &mut Rng) -> f64 {
        rng.normal()
    }

    /// One simulated run on the two-level model: `forks` forks, each with its own offset
    /// (standard deviation `between`), of `iterations` scores around it (`within`).
    pub fn run(
        rng: &mut Rng,
        mean: f64,
        between: f64,
        within: f64,
        forks: usize,
        iterations: usize,
    ) -> Vec<Vec<f64>> {
        (0..forks)
            .map(|_| {
                let fork = mean + between * normal(rng);
                (0..iterations)
                    .map(|_| fork + within * normal(rng))
                    .collect()
            })
            .collect()
    }

    /// One side of a judgement.
    pub fn side(fork_means: &[f64], uncertainty: Uncertainty) -> Side<'_> {
        Side {
            fork_means,
            uncertainty,
        }
    }

    /// A run's score (the mean of every iteration, JMH's), fork means and uncertainty.
    pub fn summarise(raw: &[Vec<f64>]) -> (Vec<f64>, Uncertainty) {
        let means: Vec<f64> = raw
            .iter()
            .map(|f| f.iter().sum::<f64>() / f.len() as f64)
            .collect();
        let all: Vec<f64> = raw.concat();
        let jmh = crate::stats::Summary::of(&all);
        (means.clone(), Uncertainty::of(jmh.mean, &means, NOISE_BAND))
    }

    /// Of `trials` simulated pairs: the share judged beyond noise, the share whose first
    /// run's interval holds the true mean, and the share whose interval holds the second
    /// run's score.
    fn trials(seed: u64, between: f64, forks: usize, shift: f64, trials: usize) -> (f64, f64, f64) {
        let mut rng = Rng::new(seed);
        let (mut beyond, mut holds_mean, mut holds_next) = (0, 0, 0);
        for _ in 0..trials {
            let (ma, ua) = summarise(&run(&mut rng, 100.0, between, 1.0, forks, 5));
            let (mb, ub) = summarise(&run(
                &mut rng,
                100.0 * (1.0 + shift),
                between,
                1.0,
                forks,
                5,
            ));
            beyond += usize::from(judge(side(&ma, ua), side(&mb, ub), ALPHA).beyond);
            holds_mean += usize::from(ua.holds(100.0));
            holds_next += usize::from(ua.holds(ub.score));
        }
        let share = |k: usize| k as f64 / trials as f64;
        (share(beyond), share(holds_mean), share(holds_next))
    }

    #[test]
    fn the_interval_over_fork_means_covers_the_mean_and_the_next_run() {
        // Forks differ from each other five times as much as an iteration's mean does:
        // JMH's interval over the 15 iterations pooled misses the next run far more often.
        for forks in [3, 5, 10] {
            let (beyond, mean, next) = trials(7 + forks as u64, 2.0, forks, 0.0, 1000);
            // √2 standard errors wide, it holds the true mean more often than the next run.
            assert!(mean >= 0.96, "{forks} forks: the mean held in {mean}");
            // A prediction interval for the next run: held in 95 of 100, and no wider.
            assert!(
                (0.93..=0.97).contains(&next),
                "{forks} forks: the next run held in {next}"
            );
            assert!(
                beyond <= 0.01,
                "{forks} forks: {beyond} of A/A pairs beyond noise"
            );
        }
        let mut rng = Rng::new(1);
        let mut pooled = 0;
        for _ in 0..1000 {
            let a = crate::stats::Summary::of(&run(&mut rng, 100.0, 2.0, 1.0, 3, 5).concat());
            let b = crate::stats::Summary::of(&run(&mut rng, 100.0, 2.0, 1.0, 3, 5).concat());
            pooled += usize::from((a.mean - b.mean).abs() <= a.error);
        }
        assert!(
            pooled < 950,
            "JMH's pooled interval held the next run in {pooled} of 1000"
        );
    }

    #[test]
    fn a_real_ten_percent_difference_is_seen_at_the_standard_profile() {
        // Five forks a side, as the standard profile runs, on a quiet machine's spread
        // (fork offsets of 2%): a 10% change is beyond noise at least 95 times in 100.
        let (beyond, _, _) = trials(11, 2.0, 5, 0.10, 1000);
        assert!(beyond >= 0.95, "seen in {beyond}");
        let (beyond, _, _) = trials(12, 2.0, 5, -0.10, 1000);
        assert!(beyond >= 0.95, "seen in {beyond}");
        // Three forks see it only where forks agree more closely.
        let (beyond, _, _) = trials(13, 1.0, 3, 0.10, 1000);
        assert!(beyond >= 0.95, "seen in {beyond}");
    }

    #[test]
    fn one_fork_is_judged_by_the_band_and_never_by_its_iterations() {
        // One fork a side, iterations tight (±0.1) around offsets 10% apart at random:
        // pooled iterations would call nearly every pair different; the band calls none.
        let mut rng = Rng::new(3);
        let mut beyond = 0;
        for _ in 0..1000 {
            let (ma, ua) = summarise(&run(&mut rng, 100.0, 4.0, 0.1, 1, 10));
            let (mb, ub) = summarise(&run(&mut rng, 100.0, 4.0, 0.1, 1, 10));
            assert_eq!(ua.basis, Basis::Band(1));
            beyond += usize::from(judge(side(&ma, ua), side(&mb, ub), ALPHA).beyond);
        }
        assert_eq!(beyond, 0);
        // Beyond both bands in quadrature (25% a side), a difference is seen.
        let side = |score: f64| Uncertainty::of(score, &[score], NOISE_BAND);
        let (a, b) = (side(100.0), side(200.0));
        let judged = judge(
            Side {
                fork_means: &[100.0],
                uncertainty: a,
            },
            Side {
                fork_means: &[200.0],
                uncertainty: b,
            },
            ALPHA,
        );
        assert!(judged.beyond && !judged.by_forks && judged.p_value.is_nan());
        assert_eq!(a.error, 25.0);
        // Either way round, the same judgement.
        for (x, y) in [
            (100.0, 142.0),
            (142.0, 100.0),
            (100.0, 143.0),
            (143.0, 100.0),
        ] {
            let j = judge(
                Side {
                    fork_means: &[x],
                    uncertainty: side(x),
                },
                Side {
                    fork_means: &[y],
                    uncertainty: side(y),
                },
                ALPHA,
            );
            // ln 1.42 = 0.351 and ln 1.43 = 0.358, against 0.25 × √2 = 0.354.
            assert_eq!(j.beyond, x.max(y) == 143.0, "{x} {y}");
        }
    }

    #[test]
    fn two_forks_are_widened_by_their_spread_and_one_is_the_band() {
        let u = Uncertainty::of(100.0, &[70.0, 130.0], NOISE_BAND);
        assert_eq!((u.basis, u.error), (Basis::Band(2), 60.0));
        let u = Uncertainty::of(100.0, &[100.0], NOISE_BAND);
        assert_eq!((u.basis, u.error), (Basis::Band(1), 25.0));
        assert_eq!(
            Uncertainty::of(100.0, &[], NOISE_BAND).basis,
            Basis::Band(0)
        );
        // By hand: fork means 98, 100, 102: sd 2, t(0.975, 2) = 4.3027, √2 standard
        // errors for the next run's.
        let u = Uncertainty::of(100.0, &[98.0, 100.0, 102.0], NOISE_BAND);
        assert_eq!(u.basis, Basis::Forks(3));
        assert!(
            (u.error - 4.3027 * 2f64.sqrt() * 2.0 / 3f64.sqrt()).abs() < 1e-3,
            "{}",
            u.error
        );
        assert_eq!(u.percent(), "±7.0%");
        assert_eq!(
            Uncertainty::of(100.0, &[100.0], NOISE_BAND).percent(),
            "±25%"
        );
        let tight = Uncertainty {
            score: 100.0,
            error: 2.04,
            basis: Basis::Forks(9),
            floor: 0.0,
        };
        assert_eq!(tight.percent(), "±2.0%");
    }

    #[test]
    fn a_run_floor_holds_runs_that_differ_by_more_than_their_forks() {
        // Three-level data: each run shifted as a whole (4%), its forks around that (1%).
        // Forks alone judge two runs different far too often; with the floor measured
        // from such runs (three times a run's shift, 12%, a side) the A/A pairs are left
        // alone and the next run's score is held, while a 50% change is seen.
        let mut rng = Rng::new(21);
        let (mut bare, mut floored, mut held, mut seen) = (0, 0, 0, 0);
        let floor = 0.04 * 3.0;
        for _ in 0..1000 {
            let mut one_run = |shift: f64| {
                let level = 100.0 * (1.0 + shift) * (1.0 + 0.04 * normal(&mut rng));
                summarise(&run(&mut rng, level, 1.0, 1.0, 5, 3))
            };
            let (ma, ua) = one_run(0.0);
            let (mb, ub) = one_run(0.0);
            let (mc, uc) = one_run(0.5);
            bare += usize::from(judge(side(&ma, ua), side(&mb, ub), ALPHA).beyond);
            let (fa, fb) = (ua.with_floor(floor), ub.with_floor(floor));
            let fc = uc.with_floor(floor);
            floored += usize::from(judge(side(&ma, fa), side(&mb, fb), ALPHA).beyond);
            held += usize::from(fa.holds(ub.score));
            seen += usize::from(judge(side(&ma, fa), side(&mc, fc), ALPHA).beyond);
        }
        assert!(
            bare > 100,
            "forks alone: {bare} of 1000 A/A pairs beyond noise"
        );
        assert!(floored <= 10, "with the floor: {floored} of 1000");
        assert!(held >= 950, "the next run held in {held} of 1000");
        assert!(seen >= 950, "a 50% change still seen in {seen} of 1000");
        let u = Uncertainty::of(100.0, &[99.0, 100.0, 101.0], NOISE_BAND).with_floor(0.1);
        assert!(u.error > 10.0 && u.floor == 0.1);
        let band = Uncertainty::of(100.0, &[100.0], 0.25).with_floor(0.1);
        assert_eq!(band.error, 25.0);
    }

    #[test]
    fn a_judgement_says_the_smallest_change_it_could_see() {
        // Five forks a side of 2% spread: the figure is seen in about 95 of 100 pairs of
        // runs, and a floor raises it to the floor.
        let mut rng = Rng::new(31);
        let (ma, ua) = summarise(&run(&mut rng, 100.0, 2.0, 0.5, 5, 3));
        let (mb, ub) = summarise(&run(&mut rng, 100.0, 2.0, 0.5, 5, 3));
        let j = judge(side(&ma, ua), side(&mb, ub), ALPHA);
        assert!(
            j.by_forks && (0.02..0.10).contains(&j.smallest),
            "{}",
            j.smallest
        );
        let floored = judge(
            side(&ma, ua.with_floor(0.3)),
            side(&mb, ub.with_floor(0.3)),
            ALPHA,
        );
        assert!((floored.smallest - (0.3f64 * 2f64.sqrt()).exp_m1()).abs() < 1e-9);
        let truth = detectable(
            (2f64.powi(2) + 0.25 / 3.0).sqrt() * (2.0f64 / 5.0).sqrt(),
            8.0,
            ALPHA,
        ) / 100.0;
        let seen = (0..1000)
            .filter(|_| {
                let (ma, ua) = summarise(&run(&mut rng, 100.0, 2.0, 0.5, 5, 3));
                let (mb, ub) = summarise(&run(&mut rng, 100.0 * (1.0 + truth), 2.0, 0.5, 5, 3));
                judge(side(&ma, ua), side(&mb, ub), ALPHA).beyond
            })
            .count();
        // (t + t) × se is the normal sum: at eight degrees of freedom it is seen in about 90.
        assert!(
            (870..=990).contains(&seen),
            "a change of {truth} seen in {seen} of 1000"
        );
        let band = judge(
            side(&[100.0], Uncertainty::of(100.0, &[100.0], 0.1)),
            side(&[100.0], Uncertainty::of(100.0, &[100.0], 0.1)),
            ALPHA,
        );
        assert!((band.smallest - (0.1f64 * 2f64.sqrt()).exp_m1()).abs() < 1e-9);
    }

    #[test]
    fn the_basis_reads_back_what_it_wrote() {
        for b in [
            Basis::Forks(3),
            Basis::Forks(12),
            Basis::Band(1),
            Basis::Band(0),
        ] {
            assert_eq!(Basis::parse(&b.name()), Some(b));
        }
        for bad in ["forks 2", "band 3", "forks", "band x", "t 3", ""] {
            assert_eq!(Basis::parse(bad), None, "{bad}");
        }
    }
}
