//! The raw data behind one result in bb-compare, and the significance test on it.
//!
//! A result's raw data is kept per fork as (value, count) pairs: an iteration score
//! counts once; sample mode's `rawDataHistogram` gives each bucket's value with its count,
//! so the mean, the sample count and the test weigh every sample, as JMH's own score does.
//! The test is Welch's t-test over the iterations (or samples) of all forks pooled, unless
//! both sides have at least [`MIN_FORKS`] forks: then it is over the fork means, since
//! run-to-run variance lives between forks (JMH's advice) and pooling iterations from
//! several forks understates it. A histogram against iteration scores alone (a sample
//! row whose file kept only `rawData`) is tested on both sides' iteration means: Welch
//! over 368,757 samples against 15 means would weigh unlike things as like.

use crate::stats::student_t::student_t_quantile;
use crate::stats::summary::CONFIDENCE;
use crate::stats::welch::{welch, Moments};

/// Forks each side needs for the test on fork means.
pub const MIN_FORKS: usize = 3;

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

/// Which test a p-value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// Welch's t-test over the iteration scores of all forks, pooled.
    Iterations,
    /// Welch's t-test over every sample of sample mode's histograms, count-weighted.
    Samples,
    /// Welch's t-test over the fork means (both sides with at least [`MIN_FORKS`] forks).
    ForkMeans,
    /// Welch's t-test over the iteration means of all forks, pooled: one side's histogram
    /// against the other's iteration scores alone.
    IterationMeans,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::Iterations => "iterations",
            Test::Samples => "samples",
            Test::ForkMeans => "fork means",
            Test::IterationMeans => "iteration means",
        }
    }

    /// The footnote mark a p-value carries in the tables where its test is not the
    /// pooled iterations', explained once under the table.
    pub fn mark(self) -> &'static str {
        match self {
            Test::Iterations => "",
            Test::Samples => "*",
            Test::ForkMeans => "**",
            Test::IterationMeans => "^",
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

/// The p-value of the difference between `base` and `new`, and the test it comes from.
pub fn significance(base: &Samples, new: &Samples) -> (f64, Test) {
    if mixed(base, new) {
        let (base, new) = (base.by_iteration(), new.by_iteration());
        let (base, new) = (base.as_ref(), new.as_ref());
        return match significance(&base, &new) {
            (p, Test::Iterations) => (p, Test::IterationMeans),
            other => other,
        };
    }
    let (a, b) = (base.fork_means(), new.fork_means());
    if a.len() >= MIN_FORKS && b.len() >= MIN_FORKS {
        let ones = |v: &[f64]| v.iter().map(|&m| (m, 1)).collect::<Vec<_>>();
        let (a, b) = (ones(&a), ones(&b));
        return (
            welch(
                Moments::of(a.iter().copied()),
                Moments::of(b.iter().copied()),
            ),
            Test::ForkMeans,
        );
    }
    let test = if base.histogram || new.histogram {
        Test::Samples
    } else {
        Test::Iterations
    };
    (welch(base.pooled(), new.pooled()), test)
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

    #[test]
    fn welch_matches_the_pooled_test_and_keeps_tiny_p_values() {
        let a = Samples::iterations(vec![vec![100.0, 101.0, 99.0, 100.5, 99.5]]);
        let b = Samples::iterations(vec![vec![80.0, 81.0, 79.0, 80.5, 79.5]]);
        let (p, test) = significance(&a, &b);
        assert_eq!(test, Test::Iterations);
        // 20 apart with a spread of about 1: far beyond noise (stats::welch checks the
        // test itself).
        assert!(p < 1e-6, "{p}");
        // t = 10 with a million samples a side: the normal tail, 1.52e-23, not 0.
        let wide = |mean: f64| Moments {
            n: 1e6,
            mean,
            variance: 1e6 / 2.0,
        };
        let p = welch(wide(0.0), wide(10.0));
        assert!(close(p, 1.524e-23, 1e-2), "{p:e}");
        assert!(welch(wide(0.0), wide(100.0)) < 1e-300);
        assert!(welch(wide(0.0), Moments::of([(1.0, 1)].into_iter())).is_nan());
    }

    #[test]
    fn three_forks_a_side_test_the_fork_means() {
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
        let (p, test) = significance(&a, &b);
        assert_eq!(test, Test::ForkMeans);
        assert!(p > 0.3, "{p}");
        let (pooled, _) = significance(&Samples::iterations(vec![forks(0.0).concat()]), &b);
        assert!(pooled < 0.05, "{pooled}");
        let two = Samples::iterations(forks(0.0)[..2].to_vec());
        assert_eq!(significance(&two, &b).1, Test::Iterations);
        let mut h = two.clone();
        h.histogram = true;
        h.iteration_means = forks(0.0)[..2].to_vec();
        assert_eq!(significance(&h, &h).1, Test::Samples);
        assert_eq!(significance(&h, &b).1, Test::IterationMeans);
    }

    #[test]
    fn a_histogram_against_iteration_scores_alone_is_tested_on_iteration_means() {
        // 100,000 samples around 100 in 15 iterations, against the same 15 iteration
        // means shifted by 0.5%: like against like, the iterations of both sides.
        let means: Vec<f64> = (0..15).map(|i| 100.0 + (i % 5) as f64).collect();
        let h = Samples::buckets(
            vec![means
                .iter()
                .flat_map(|&m| [(m - 1.0, 3333), (m + 1.0, 3333)])
                .collect()],
            vec![means.clone()],
        );
        let shifted = Samples::iterations(vec![means.iter().map(|m| m * 1.005).collect()]);
        let (p, test) = significance(&h, &shifted);
        assert_eq!(test, Test::IterationMeans);
        assert!(p > 0.1, "{p}");
        assert_eq!(significance(&shifted, &h).1, Test::IterationMeans);
        let pooled = welch(h.pooled(), shifted.pooled());
        assert!(pooled < p, "{pooled} {p}");
    }
}
