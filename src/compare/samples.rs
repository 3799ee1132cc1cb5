//! The raw data behind one result in bb-compare, and how two results are told apart.
//!
//! A result's raw data is kept per fork as (value, count) pairs: an iteration score
//! counts once; sample mode's `rawDataHistogram` gives each bucket's value with its count,
//! so the mean and the sample count weigh every sample, as JMH's own score does. The
//! verdict rests on the fork, the unit of replication ([`crate::stats::uncertainty`]):
//! Welch's t-test over the fork means where both sides have [`MIN_FORKS`] forks or more,
//! else the ratio's honest interval (the noise band, or the spread the forks and
//! iterations show where wider) against 1. Iterations or samples pooled are never the
//! test: samples of one run are not independent draws of the next, and an A/A
//! comparison over them called one row in six different. A histogram against iteration
//! scores alone (a sample row whose file kept only `rawData`) is compared on both sides'
//! iteration means.

use crate::stats::student_t::student_t_quantile;
use crate::stats::summary::CONFIDENCE;
use crate::stats::uncertainty::{judge, Judgement, Side, Uncertainty};
use crate::stats::welch::Moments;

pub use crate::stats::uncertainty::MIN_FORKS;

/// One result's raw data, per fork.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// Per fork, the values: iteration scores, or histogram buckets' values.
    pub forks: Vec<Vec<f64>>,
    /// Per fork, each value's count (a histogram's); a fork without counts (iteration
    /// scores: all of them) counts each value once. Apart from the values, so that
    /// millions of iteration scores take 8 bytes each.
    pub counts: Vec<Vec<u64>>,
    /// Whether the values are sample mode's histogram buckets rather than iterations.
    pub histogram: bool,
    /// With a histogram, each iteration's mean (count-weighted), per fork: what a file
    /// without the histogram would hold as `rawData`. Empty for iteration scores, which
    /// are their own.
    pub iteration_means: Vec<Vec<f64>>,
}

/// How a difference was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// Welch's t-test over the fork means (both sides with at least [`MIN_FORKS`] forks).
    ForkMeans,
    /// A side with fewer forks: the ratio's honest interval against 1, no p-value.
    Band,
    /// An A/B file's two builds: their pairs of forks, the pairs' ratio's interval
    /// against 1 ([`super::paired`]), no p-value.
    Pairs,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::ForkMeans => "fork means",
            Test::Band => "noise band",
            Test::Pairs => "pairs",
        }
    }

    /// What the tables show in the p column where there is no p-value.
    pub fn mark(self) -> &'static str {
        match self {
            Test::ForkMeans => "",
            Test::Band => "band",
            Test::Pairs => "pairs",
        }
    }
}

impl Samples {
    /// Iteration scores, one list per fork (kept as they are, not copied).
    pub fn iterations(forks: Vec<Vec<f64>>) -> Samples {
        Samples {
            forks,
            counts: Vec::new(),
            histogram: false,
            iteration_means: Vec::new(),
        }
    }

    /// A histogram: per fork, (value, count) buckets, and each iteration's mean.
    pub fn buckets(forks: Vec<Vec<(f64, u64)>>, iteration_means: Vec<Vec<f64>>) -> Samples {
        let (forks, counts) = forks.into_iter().map(|f| f.into_iter().unzip()).unzip();
        Samples {
            forks,
            counts,
            histogram: true,
            iteration_means,
        }
    }

    /// Fork `i`'s (value, count) pairs.
    pub fn fork(&self, i: usize) -> impl Iterator<Item = (f64, u64)> + Clone + '_ {
        let counts = self.counts.get(i).map_or(&[][..], Vec::as_slice);
        self.forks[i]
            .iter()
            .enumerate()
            .map(move |(j, &v)| (v, counts.get(j).copied().unwrap_or(1)))
    }

    /// The scores of the iterations, per fork: the iteration means of a histogram, the
    /// values themselves otherwise (borrowed: raw data can be millions of values).
    pub fn by_iteration(&self) -> std::borrow::Cow<'_, Samples> {
        if !self.histogram {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(Samples::iterations(self.iteration_means.clone()))
    }

    fn all(&self) -> impl Iterator<Item = (f64, u64)> + Clone + '_ {
        (0..self.forks.len()).flat_map(|i| self.fork(i))
    }

    /// The number of iterations, or of samples for a histogram.
    pub fn count(&self) -> u64 {
        self.all()
            .filter(|(v, _)| v.is_finite())
            .map(|(_, c)| c)
            .sum()
    }

    /// The forks that hold data.
    pub fn fork_count(&self) -> usize {
        self.fork_means().len()
    }

    /// The same data in another unit, scaled where it is rather than copied.
    pub fn scaled(mut self, by: f64) -> Samples {
        if by != 1.0 {
            for v in self.forks.iter_mut().flatten() {
                *v *= by;
            }
            for v in self.iteration_means.iter_mut().flatten() {
                *v *= by;
            }
        }
        self
    }

    /// Every value of every fork, weighted by its count.
    pub fn pooled(&self) -> Moments {
        Moments::of(self.all())
    }

    /// The (weighted) mean of each fork that holds data.
    pub fn fork_means(&self) -> Vec<f64> {
        (0..self.forks.len())
            .map(|i| Moments::of(self.fork(i)).mean)
            .filter(|m| m.is_finite())
            .collect()
    }

    /// The (weighted) mean of every fork in its place, NaN for one without data: fork
    /// i of an A/B run's build is paired with fork i of the other.
    pub fn fork_means_in_place(&self) -> Vec<f64> {
        (0..self.forks.len())
            .map(|i| Moments::of(self.fork(i)).mean)
            .collect()
    }

    /// Percentile `p` (0 to 100) of every value of every fork, count-weighted: the
    /// smallest value with at least `p`% of the count at or below it. None without data.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let mut values: Vec<(f64, u64)> = self.all().filter(|(v, _)| v.is_finite()).collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: u64 = values.iter().map(|(_, c)| c).sum();
        let rank = ((p / 100.0 * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        values.into_iter().find_map(|(v, c)| {
            seen += c;
            (seen >= rank).then_some(v)
        })
    }

    /// The honest uncertainty of `score` (in these samples' unit) over these forks, with
    /// `band` the noise band of one fork.
    pub fn uncertainty(&self, score: f64, band: f64) -> Uncertainty {
        Uncertainty::of(score, &self.fork_means(), band)
    }

    /// The mean of all values and the half-width of its 99.9% confidence interval, as
    /// JMH computes a score and its error from the same data (NaN error for n ≤ 2).
    pub fn mean_and_error(&self) -> (f64, f64) {
        let m = self.pooled();
        let error = if m.n <= 2.0 {
            f64::NAN
        } else {
            student_t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, m.n - 1.0) * m.variance.sqrt()
                / m.n.sqrt()
        };
        (m.mean, error)
    }
}

/// Whether `base` and `new` are a histogram and iteration scores alone: then both are
/// compared on their iteration means ([`Samples::by_iteration`]).
pub fn mixed(base: &Samples, new: &Samples) -> bool {
    base.histogram != new.histogram
}

/// Whether `new` differs from `base` beyond noise at `alpha`, from each side's fork
/// means and honest uncertainty; and the test that told.
pub fn significance(
    base: (&Samples, Uncertainty),
    new: (&Samples, Uncertainty),
    alpha: f64,
) -> (Judgement, Test) {
    let (a, b) = (base.0.fork_means(), new.0.fork_means());
    let side = |fork_means, uncertainty| Side {
        fork_means,
        uncertainty,
    };
    let judged = judge(side(&a, base.1), side(&b, new.1), alpha);
    let test = if judged.by_forks {
        Test::ForkMeans
    } else {
        Test::Band
    };
    (judged, test)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn counts_weigh_every_sample() {
        let h = Samples::buckets(
            vec![vec![(1.0, 3), (5.0, 1)], vec![(2.0, 4)]],
            vec![vec![1.0, 5.0], vec![2.0]],
        );
        assert_eq!(
            *h.clone().scaled(2.0).by_iteration(),
            Samples::iterations(vec![vec![2.0, 10.0], vec![4.0]])
        );
        let flat = Samples::iterations(vec![vec![1.0, 1.0, 1.0, 5.0], vec![2.0, 2.0, 2.0, 2.0]]);
        assert_eq!(h.count(), 8);
        assert_eq!(h.pooled(), flat.pooled());
        assert_eq!(h.mean_and_error(), flat.mean_and_error());
        assert_eq!(h.fork_means(), vec![2.0, 2.0]);
        let gap = Samples::iterations(vec![vec![1.0, 3.0], vec![], vec![4.0]]);
        let placed = gap.fork_means_in_place();
        assert!(placed[0] == 2.0 && placed[1].is_nan() && placed[2] == 4.0);
        let scaled = h.clone().scaled(1e3);
        assert_eq!(scaled.fork(1).collect::<Vec<_>>(), vec![(2000.0, 4)]);
        // Sorted 1 1 1 2 2 2 2 5: the median is the fourth, the top eighth the last.
        let p = |q: f64| h.percentile(q);
        assert_eq!(
            (p(0.0), p(37.5), p(50.0), p(87.5), p(87.6)),
            (Some(1.0), Some(1.0), Some(2.0), Some(2.0), Some(5.0))
        );
        assert_eq!(p(100.0), Some(5.0));
        assert_eq!(Samples::default().percentile(50.0), None);
        let (mean, error) =
            Samples::iterations(vec![vec![10.0, 12.0, 14.0, 16.0, 18.0]]).mean_and_error();
        // The same half-width JMH prints (stats.rs works it by hand).
        assert_eq!(mean, 14.0);
        assert!(close(error, 12.1768, 1e-4), "{error}");
    }

    use crate::stats::uncertainty::NOISE_BAND;

    fn judged(a: &Samples, b: &Samples) -> (Judgement, Test) {
        let u = |s: &Samples| s.uncertainty(s.mean_and_error().0, NOISE_BAND);
        significance((a, u(a)), (b, u(b)), 0.01)
    }

    #[test]
    fn three_forks_a_side_test_the_fork_means_never_the_iterations_pooled() {
        // Forks that differ from each other more than their iterations do: pooled, the
        // iterations make a 2% change look significant; the fork means see the noise.
        let forks = |shift: f64| {
            [100.0, 104.0, 96.0]
                .iter()
                .map(|m| (0..10).map(|i| m + shift + 0.01 * i as f64).collect())
                .collect::<Vec<Vec<f64>>>()
        };
        let (a, b) = (
            Samples::iterations(forks(0.0)),
            Samples::iterations(forks(2.0)),
        );
        let (j, test) = judged(&a, &b);
        assert_eq!(test, Test::ForkMeans);
        assert!(j.p_value > 0.3 && !j.beyond, "{j:?}");
        let far = Samples::iterations(forks(30.0));
        let (j, _) = judged(&a, &far);
        assert!(j.p_value < 0.01 && j.beyond, "{j:?}");
        // Two forks on a side: the band, however tight the iterations.
        let two = Samples::iterations(forks(0.0)[..2].to_vec());
        let (j, test) = judged(&two, &b);
        assert_eq!(test, Test::Band);
        assert!(j.p_value.is_nan() && !j.beyond);
        let one = Samples::iterations(vec![vec![100.0; 50]]);
        let tenfold = Samples::iterations(vec![vec![1000.0; 50]]);
        let (j, test) = judged(&one, &tenfold);
        assert!(j.beyond && !j.by_forks && test == Test::Band, "{j:?}");
    }

    #[test]
    fn a_histograms_forks_are_count_weighted() {
        let h = Samples::buckets(
            vec![
                vec![(1.0, 3), (5.0, 1)],
                vec![(2.0, 4)],
                vec![(4.0, 1), (2.0, 1)],
            ],
            vec![vec![1.0, 5.0], vec![2.0], vec![3.0]],
        );
        assert_eq!(h.fork_means(), vec![2.0, 2.0, 3.0]);
        assert_eq!(
            h.uncertainty(2.0, NOISE_BAND).basis,
            crate::stats::uncertainty::Basis::Forks(3)
        );
    }
}
