//! Where a score's variance arises (Kalibera & Jones, "Rigorous Benchmarking in
//! Reasonable Time"): between the iterations of one fork, between the forks of one run,
//! and between whole runs of the same build, each measured on the board itself from
//! repeated runs of the same rows; and from them the noise a binary's uncertainty needs
//! where one run cannot show it: the band of a lone fork and the run floor.
//!
//! Scores are taken on a log scale, so that rows of every size pool into one figure per
//! binary: a variance here is of ln(score), and its square root is a relative spread.
//! The estimates are the method of moments of the nested model: the pooled variance at
//! each level less what the level below puts into its means.

/// How far apart two draws of one level may land before either side's interval leaves
/// the other out: 1.96 × √2, so that the next run's score lies inside this run's
/// interval in 95 tries of 100, and two runs told apart by both intervals in quadrature
/// (3.92 σ) are called different in about 1 try of 200 where nothing changed.
pub const NEXT_RUN: f64 = 1.96 * std::f64::consts::SQRT_2;

/// The variance of ln(score) at each level, from repeated runs of the same rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components {
    /// Between the iterations of one fork; None where no fork had two.
    pub iterations: Option<f64>,
    /// Of one fork's mean about its run's mean (its iterations' part included); None
    /// where no run had two forks of a row.
    pub forks: Option<f64>,
    /// Between runs, beyond what their forks' spread puts into their means; None where
    /// no row ran in two runs, or none with two forks in a run.
    pub runs: Option<f64>,
    /// Of one lone fork's mean about the truth, across runs: what a single fork of the
    /// next run may land at; None where no row ran in two runs.
    pub lone_fork: Option<f64>,
    /// Runs (the most that any one row ran in).
    pub run_count: usize,
    /// Rows that ran in two runs or more.
    pub rows: usize,
}

/// One row's scores over repeated runs: per run, per fork, its iteration scores.
pub type RowRuns = Vec<Vec<Vec<f64>>>;

/// A pooled variance: sums of squares and their degrees of freedom.
#[derive(Default)]
struct Pool {
    squares: f64,
    df: f64,
}

impl Pool {
    /// Adds the squared deviations of `values` about their mean (n − 1 degrees).
    fn add(&mut self, values: &[f64]) {
        if values.len() < 2 {
            return;
        }
        let m = mean(values);
        self.squares += values.iter().map(|v| (v - m).powi(2)).sum::<f64>();
        self.df += values.len() as f64 - 1.0;
    }

    fn variance(&self) -> Option<f64> {
        (self.df > 0.0).then(|| self.squares / self.df)
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

impl Components {
    /// Of `rows`, each its runs' forks' iteration scores. Scores that are not positive
    /// and finite are left out, and with them a fork with none left.
    pub fn of(rows: &[RowRuns]) -> Components {
        let (mut iterations, mut forks, mut runs, mut lone) = (
            Pool::default(),
            Pool::default(),
            Pool::default(),
            Pool::default(),
        );
        // The mean over runs of 1/n (n: a run's forks): what the forks put into a run's
        // mean.
        let (mut inverse_forks, mut run_means_seen) = (0.0, 0.0f64);
        let (mut run_count, mut rows_used) = (0, 0);
        for row in rows {
            let mut run_means = Vec::new();
            let mut first_forks = Vec::new();
            for run in row {
                let fork_means: Vec<f64> = run
                    .iter()
                    .filter_map(|scores| {
                        let logs: Vec<f64> = scores
                            .iter()
                            .filter(|s| s.is_finite() && **s > 0.0)
                            .map(|s| s.ln())
                            .collect();
                        if logs.is_empty() {
                            return None;
                        }
                        iterations.add(&logs);
                        Some(mean(&logs))
                    })
                    .collect();
                if fork_means.is_empty() {
                    continue;
                }
                forks.add(&fork_means);
                inverse_forks += 1.0 / fork_means.len() as f64;
                run_means_seen += 1.0;
                run_means.push(mean(&fork_means));
                first_forks.push(fork_means[0]);
            }
            if run_means.len() >= 2 {
                rows_used += 1;
                runs.add(&run_means);
                lone.add(&first_forks);
            }
            run_count = run_count.max(run_means.len());
        }
        let within = forks.variance();
        // With one fork a run, a run's part cannot be told from a fork's.
        let between = runs.variance().zip(within).map(|(b, w)| {
            let forks_part = w * inverse_forks / run_means_seen.max(1.0);
            (b - forks_part).max(0.0)
        });
        // A lone fork across runs: the run's part and one fork's, where both are known;
        // from one fork a run, its spread is that itself.
        let lone_fork = match (between, within) {
            (Some(b), Some(w)) => Some(b + w),
            _ => lone.variance(),
        };
        Components {
            iterations: iterations.variance(),
            forks: within,
            runs: between,
            lone_fork,
            run_count,
            rows: rows_used,
        }
    }

    /// The run floor: how far the next run's score may land from this run's beyond its
    /// forks' spread, relative ([`NEXT_RUN`] × the runs' spread); None where unmeasured.
    pub fn run_floor(&self) -> Option<f64> {
        self.runs.map(|v| (NEXT_RUN * v.sqrt()).exp_m1())
    }

    /// The band of a lone fork: how far a single fork of the next run may land from this
    /// one's, relative; None where unmeasured.
    pub fn band(&self) -> Option<f64> {
        self.lone_fork.map(|v| (NEXT_RUN * v.sqrt()).exp_m1())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::uncertainty::tests::normal;
    use crate::util::rng::Rng;

    /// `rows` rows of `runs` runs of `forks` forks of `iterations` iterations, each
    /// score `truth × e^(run + fork + iteration noise)` at these spreads (log scale).
    fn simulate(
        rng: &mut Rng,
        rows: usize,
        runs: usize,
        forks: usize,
        iterations: usize,
        spreads: [f64; 3],
    ) -> Vec<RowRuns> {
        let [run_sd, fork_sd, iteration_sd] = spreads;
        (0..rows)
            .map(|row| {
                let truth = 100.0 * (row + 1) as f64;
                (0..runs)
                    .map(|_| {
                        let run = run_sd * normal(rng);
                        (0..forks)
                            .map(|_| {
                                let fork = fork_sd * normal(rng);
                                (0..iterations)
                                    .map(|_| {
                                        truth * (run + fork + iteration_sd * normal(rng)).exp()
                                    })
                                    .collect()
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn each_level_is_measured_where_it_arises() {
        let mut rng = Rng::new(3);
        let data = simulate(&mut rng, 40, 6, 5, 4, [0.05, 0.02, 0.04]);
        let c = Components::of(&data);
        let sd = |v: Option<f64>| v.unwrap().sqrt();
        assert!((sd(c.iterations) - 0.04).abs() < 0.004, "{c:?}");
        // A fork's mean: its own part and a quarter of its iterations'.
        let fork_mean = (0.02f64.powi(2) + 0.04f64.powi(2) / 4.0).sqrt();
        assert!((sd(c.forks) - fork_mean).abs() < 0.004, "{c:?}");
        assert!((sd(c.runs) - 0.05).abs() < 0.008, "{c:?}");
        assert!((sd(c.lone_fork) - (0.05f64.powi(2) + fork_mean.powi(2)).sqrt()).abs() < 0.01);
        assert_eq!((c.run_count, c.rows), (6, 40));
    }

    #[test]
    fn runs_that_agree_have_no_floor_beyond_their_forks() {
        let mut rng = Rng::new(5);
        let data = simulate(&mut rng, 30, 4, 5, 3, [0.0, 0.03, 0.01]);
        let floor = Components::of(&data).run_floor().unwrap();
        // The forks' part taken out, what is left is their estimate's own noise.
        assert!(floor < 0.02, "{floor}");
    }

    #[test]
    fn the_floor_holds_the_next_run_in_95_of_100() {
        // Calibrated on three runs of eight rows, as run-all --calibrate does, then a
        // fourth and a fifth run: is the fifth's row mean within the fourth's interval
        // (its forks' error in quadrature with the floor)?
        let mut rng = Rng::new(9);
        let (mut held, mut tries) = (0, 0);
        for _ in 0..200 {
            let spreads = [0.06, 0.02, 0.02];
            let calibration = Components::of(&simulate(&mut rng, 8, 3, 5, 3, spreads));
            let floor = calibration.run_floor().unwrap();
            for row in simulate(&mut rng, 8, 2, 5, 3, spreads) {
                let score = |run: &Vec<Vec<f64>>| {
                    mean(&run.iter().map(|f| mean(f).ln()).collect::<Vec<_>>())
                };
                let (this, next) = (score(&row[0]), score(&row[1]));
                tries += 1;
                held += usize::from((next - this).abs() <= floor.ln_1p());
            }
        }
        let coverage = held as f64 / tries as f64;
        // Three runs pin the floor down only so far: the aim is 95%.
        assert!((0.90..0.99).contains(&coverage), "{coverage}");
    }

    #[test]
    fn one_fork_a_run_gives_a_band_and_nothing_else_is_guessed() {
        let mut rng = Rng::new(13);
        let data = simulate(&mut rng, 20, 3, 1, 1, [0.04, 0.03, 0.0]);
        let c = Components::of(&data);
        assert_eq!(
            (c.iterations, c.forks, c.runs, c.run_floor()),
            (None, None, None, None)
        );
        let lone = c.lone_fork.unwrap().sqrt();
        assert!((lone - 0.05).abs() < 0.015, "{lone}");
        assert!(c.band().unwrap() > 0.1);
    }

    #[test]
    fn scores_that_are_not_numbers_are_left_out() {
        let rows = vec![vec![
            vec![vec![f64::NAN, 0.0, -1.0]],
            vec![vec![100.0, 101.0], vec![99.0]],
        ]];
        let c = Components::of(&rows);
        assert_eq!((c.run_count, c.rows), (1, 0));
        assert_eq!(c.runs, None);
        assert_eq!(Components::of(&[]).band(), None);
    }
}
