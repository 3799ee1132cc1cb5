//! An A/B run's file (`--against`) judged as the pairs it holds, not as two runs: each
//! pair is a fork of each build run together, so a drift of the machine cancels in the
//! pair's ratio, which two sides judged as independent runs would count as noise twice.
//! The ratio and interval are the ones its run recorded (`boardbench.against`, at the
//! level it judged); the pairs' own fork means, where the file holds both builds'
//! `rawData` (fork i of one build paired with fork i of the other), give their spread,
//! and so the smallest change they could have called at 95% power
//! ([`crate::stats::power`]). A file whose `against` is missing or malformed is judged
//! from those pairs alone.

use super::{verdict_of, Cell, Change, Criteria, Test};
use crate::stats::paired::PairedRatio;
use crate::stats::power::detectable;
use crate::stats::student_t::student_t_quantile;
use crate::stats::uncertainty::{Basis, MIN_FORKS};
use crate::util::json::Json;

/// The level of the A/B files written before they recorded one (`level`): JMH's 99.9%.
const LEVEL_BEFORE: f64 = 0.999;

/// What an A/B run recorded of its pairs in this build's entry (`boardbench.against`):
/// this build's speed over the other's, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recorded {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// What the interval rests on: `Forks(n)`, a t interval over `n` pairs; `Band(n)`,
    /// fewer than [`MIN_FORKS`] pairs (from `basis`, else from `pairs`).
    pub basis: Basis,
    /// The interval's level: `level` where the file has it, else 99.9%, the level of
    /// the builds that wrote none.
    pub level: f64,
    /// The smallest change the run itself recorded (`smallestChange`), where it did.
    pub smallest: Option<f64>,
}

impl Recorded {
    /// From `boardbench.against`; None where it is null, or where its numbers are not a
    /// positive ratio inside its interval with a count of pairs or a basis. A `level` or
    /// `smallestChange` past its range is an error: obeyed, it would have said what the
    /// run never measured.
    pub fn read(against: &Json) -> Result<Option<Recorded>, String> {
        let number = |key: &str| against.get(key)?.as_f64();
        let in_range =
            |key: &str, range: std::ops::RangeInclusive<f64>, text: &str| match number(key) {
                Some(v) if !range.contains(&v) => Err(format!("{key} is not {text}")),
                v => Ok(v),
            };
        let level = in_range("level", 0.5..=0.999_999, "a level from 50% to below 100%")?;
        let smallest = in_range("smallestChange", 0.0..=10.0, "a change from 0 to 1000%")?;
        let (Some(ratio), Some(low), Some(high)) = (number("ratio"), number("low"), number("high"))
        else {
            return Ok(None);
        };
        if !(low > 0.0 && low <= ratio && ratio <= high && high.is_finite()) {
            return Ok(None);
        }
        let pairs = number("pairs")
            .filter(|n| *n >= 1.0 && n.fract() == 0.0)
            .map(|n| n as usize);
        let basis = match against.get("basis").and_then(Json::as_str) {
            Some(text) => Basis::parse(text),
            None => pairs.map(|n| match n >= MIN_FORKS {
                true => Basis::Forks(n),
                false => Basis::Band(n),
            }),
        };
        Ok(basis.map(|basis| Recorded {
            ratio,
            low,
            high,
            basis,
            level: level.unwrap_or(LEVEL_BEFORE),
            smallest,
        }))
    }

    /// The smallest change the recorded interval could have called at 95% power: the
    /// standard error the interval's half-width implies at its level (its wider side,
    /// on a log scale), as [`PairedRatio::of`] works it; by the band, the interval itself.
    fn implied_smallest(&self) -> f64 {
        let half = (self.high / self.ratio)
            .ln()
            .max((self.ratio / self.low).ln());
        match self.basis {
            Basis::Band(_) => half.exp_m1(),
            Basis::Forks(n) => {
                let (alpha, df) = (1.0 - self.level, n as f64 - 1.0);
                let se = half / student_t_quantile(1.0 - alpha / 2.0, df);
                detectable(se, df, alpha).exp_m1()
            }
        }
    }
}

/// Each pair's speed ratio, this build's over the other's (a throughput's fork means
/// over the other's; a time's turned over), forks paired by position.
pub fn speedups(this: &Cell, other: &Cell, higher_is_better: bool) -> Vec<f64> {
    let (a, b) = (
        this.samples.fork_means_in_place(),
        other.samples.fork_means_in_place(),
    );
    a.iter()
        .zip(&b)
        .map(|(t, o)| match higher_is_better {
            true => t / o,
            false => o / t,
        })
        .collect()
}

/// The pairs' ratio (this build's speed over the other's): the recorded one where the
/// file has it, with the smallest change from the pairs' own spread where the file
/// holds as many pairs as were recorded (else from the recorded interval); without a
/// record, from the pairs alone. None with neither.
pub fn ratio_of(this: &Cell, other: &Cell, higher_is_better: bool) -> Option<PairedRatio> {
    let pairs = PairedRatio::of(&speedups(this, other, higher_is_better), this.noise_band);
    let Some(recorded) = this.against else {
        return pairs;
    };
    let same_pairs = pairs.filter(|p| p.basis == recorded.basis);
    Some(PairedRatio {
        ratio: recorded.ratio,
        low: recorded.low,
        high: recorded.high,
        basis: recorded.basis,
        spread: same_pairs.map_or(f64::NAN, |p| p.spread),
        smallest: match (recorded.smallest, same_pairs) {
            (Some(said), _) => said,
            (None, Some(p)) => p.smallest,
            (None, None) => recorded.implied_smallest(),
        },
    })
}

/// `new` (this build of an A/B file) against `base` (its other build) as the pairs they
/// are: the ratio of scores with the pairs' interval, their verdict (beyond noise where
/// the interval leaves out 1) and the smallest change they could see. None where the
/// file holds neither a record nor a pair.
pub fn judge(
    base: &Cell,
    new: &Cell,
    higher_is_better: bool,
    criteria: &Criteria,
) -> Option<Change> {
    let speed = ratio_of(new, base, higher_is_better)?;
    // The table's ratio is of scores: a time's is the speed's turned over.
    let r = match higher_is_better {
        true => speed,
        false => speed.inverse(),
    };
    let beyond = r.low > 1.0 || r.high < 1.0;
    let flagged = !base.flags.is_empty() || !new.flags.is_empty();
    Some(Change {
        ratio: r.ratio,
        ratio_error: r.error(),
        low: r.low,
        high: r.high,
        smallest: r.smallest,
        p_value: f64::NAN,
        test: Test::Pairs,
        verdict: verdict_of(r.ratio, beyond, false, flagged, higher_is_better, criteria),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::criteria;
    use super::super::{Samples, Verdict};
    use super::*;

    fn cell(forks: &[f64], against: Option<Recorded>) -> Cell {
        Cell {
            score: forks.iter().sum::<f64>() / forks.len() as f64,
            error: f64::NAN,
            samples: Samples::iterations(forks.iter().map(|&v| vec![v, v]).collect()),
            change: None,
            offered_load: None,
            noise_band: 0.25,
            run_floor: 0.0,
            calibrated: false,
            flags: vec![],
            against,
            paired: true,
        }
    }

    fn recorded(text: &str) -> Option<Recorded> {
        Recorded::read(&Json::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn a_level_or_smallest_change_out_of_range_is_refused_not_obeyed() {
        let base = r#""ratio":1.1,"low":1.0,"high":1.2,"pairs":5,"basis":"forks 5""#;
        for (field, named) in [
            (r#""level":7"#, "level"),
            (r#""level":0.1"#, "level"),
            (r#""smallestChange":1e308"#, "smallestChange"),
            (r#""smallestChange":-1"#, "smallestChange"),
        ] {
            let text = format!("{{{base},{field}}}");
            let why = Recorded::read(&Json::parse(&text).unwrap()).unwrap_err();
            assert!(why.starts_with(named), "{field}: {why}");
        }
    }

    #[test]
    fn the_record_is_read_whole_or_not_at_all() {
        let r = recorded(r#"{"ratio":1.1,"low":1.0,"high":1.2,"pairs":5,"basis":"forks 5"}"#);
        assert_eq!(
            r,
            Some(Recorded {
                ratio: 1.1,
                low: 1.0,
                high: 1.2,
                basis: Basis::Forks(5),
                level: LEVEL_BEFORE,
                smallest: None,
            })
        );
        // A file that says its level and what it could see is taken at its word.
        let r = recorded(
            r#"{"ratio":1.1,"low":1.0,"high":1.2,"pairs":5,"basis":"forks 5","level":0.99,"smallestChange":0.07}"#,
        )
        .unwrap();
        assert_eq!((r.level, r.smallest), (0.99, Some(0.07)));
        // At 99% the same interval implies a smaller standard error's change than at
        // 99.9%: a wider t for the same width.
        let old = Recorded {
            level: LEVEL_BEFORE,
            smallest: None,
            ..r
        };
        let new = Recorded {
            level: 0.99,
            smallest: None,
            ..r
        };
        assert!(old.implied_smallest() < new.implied_smallest());
        // Without a basis, the count of pairs says which; with neither, nothing.
        let band = recorded(r#"{"ratio":1,"low":0.5,"high":2,"pairs":1}"#).unwrap();
        assert_eq!(band.basis, Basis::Band(1));
        for bad in [
            "null",
            r#"{"ratio":1,"low":0.5,"high":2}"#,
            r#"{"ratio":3,"low":0.5,"high":2,"pairs":5}"#,
            r#"{"ratio":1,"low":0,"high":2,"pairs":5}"#,
            r#"{"ratio":1,"low":0.5,"high":2,"pairs":5,"basis":"elves"}"#,
        ] {
            assert_eq!(recorded(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_pairs_are_judged_as_pairs_not_as_two_runs() {
        // A machine that drifts by 20% through the run, this build 3% faster in every
        // pair: as two runs the forks' spread hides it, as pairs it is plain.
        let other = [100.0, 110.0, 120.0, 105.0, 115.0];
        let this: Vec<f64> = other.iter().map(|v| v * 1.03).collect();
        let (base, new) = (cell(&other, None), cell(&this, None));
        let c = criteria();
        let as_runs = super::super::judge(&base, &new, true, &c);
        assert_eq!(as_runs.verdict, Verdict::Same, "within the 5% threshold");
        let strict = Criteria {
            threshold: 0.0,
            ..c.clone()
        };
        assert_eq!(
            super::super::judge(&base, &new, true, &strict).verdict,
            Verdict::Noise
        );
        let pairs = judge(&base, &new, true, &strict).unwrap();
        assert_eq!(pairs.test, Test::Pairs);
        assert_eq!(pairs.verdict, Verdict::Faster);
        assert!((pairs.ratio - 1.03).abs() < 1e-12);
        // Pairs that agree to the last digit could see any change at all.
        assert!(pairs.smallest < 1e-9, "{}", pairs.smallest);
        assert!(as_runs.smallest > 0.1, "{}", as_runs.smallest);
    }

    #[test]
    fn a_record_gives_the_interval_and_the_pairs_their_spread() {
        let other = [100.0, 100.0, 100.0, 100.0, 100.0];
        let this = [101.0, 99.0, 102.0, 98.0, 100.0];
        let rec = |basis: &str| {
            recorded(&format!(
                r#"{{"ratio":1.0,"low":0.97,"high":1.03,"pairs":5,"basis":"{basis}","level":0.99}}"#
            ))
        };
        let from_pairs = PairedRatio::of(&[1.01, 0.99, 1.02, 0.98, 1.0], 0.25).unwrap();
        let r = ratio_of(&cell(&this, rec("forks 5")), &cell(&other, None), true).unwrap();
        assert_eq!((r.ratio, r.low, r.high), (1.0, 0.97, 1.03));
        assert!((r.smallest - from_pairs.smallest).abs() < 1e-12);
        assert!((r.spread - from_pairs.spread).abs() < 1e-12);
        // Fewer pairs in the file than recorded: the figure from the interval, which
        // at 99% over five pairs is (t₉₉.₅ + t₉₅)/t₉₉.₅ of its half-width.
        let short = cell(&this[..3], rec("forks 5"));
        let r = ratio_of(&short, &cell(&other[..3], None), true).unwrap();
        let half = (1.0f64 / 0.97).ln(); // the wider side
        let t = student_t_quantile(0.995, 4.0);
        let expected = (half / t * (t + student_t_quantile(0.95, 4.0))).exp_m1();
        assert!((r.smallest - expected).abs() < 1e-12, "{}", r.smallest);
        assert!(r.spread.is_nan());
        // By the band, the interval itself.
        let band = recorded(r#"{"ratio":1.0,"low":0.7,"high":1.4,"pairs":1}"#);
        let r = ratio_of(&cell(&[1.0], band), &cell(&[], None), true).unwrap();
        assert!(
            (r.smallest - (1.0 / 0.7 - 1.0)).abs() < 1e-12,
            "{}",
            r.smallest
        );
    }

    #[test]
    fn a_time_per_op_is_turned_over_and_a_slower_build_is_slower() {
        // Times: this build takes 1.5 times as long in every pair.
        let other = [10.0, 11.0, 12.0];
        let this: Vec<f64> = other.iter().map(|v| v * 1.5).collect();
        let rec = recorded(r#"{"ratio":0.6667,"low":0.6,"high":0.7,"pairs":3}"#);
        let c = judge(&cell(&other, None), &cell(&this, rec), false, &criteria()).unwrap();
        assert!((c.ratio - 1.0 / 0.6667).abs() < 1e-9, "{}", c.ratio);
        assert!((c.low - 1.0 / 0.7).abs() < 1e-9 && (c.high - 1.0 / 0.6).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(
            speedups(&cell(&this, None), &cell(&other, None), false).len(),
            3
        );
        // Nothing to judge: no record, no pair.
        assert_eq!(
            judge(&cell(&[], None), &cell(&[], None), true, &criteria()),
            None
        );
    }
}
