//! A log-bucketed latency histogram: 128 linear sub-buckets per power of two, so any
//! recorded value is reported within 0.4% (well inside the 1% the harness promises),
//! in fixed memory (7424 counters), however many samples a run takes.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// Counts of values (nanoseconds, usually) in logarithmic buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS],
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    pub fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.counts[bucket_of(value)] += n;
        self.total += n;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest recorded value, exactly.
    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The smallest recorded value, exactly.
    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    /// The mean of the recorded values, each taken as its bucket's midpoint (clamped to
    /// the exact min and max), so within 0.4% of the exact mean.
    pub fn mean(&self) -> Option<f64> {
        let sum: f64 = self.values().map(|(v, n)| v * n as f64).sum();
        (self.total > 0).then(|| sum / self.total as f64)
    }

    /// The value at percentile `p` (0..=100) by nearest rank: the midpoint of the bucket
    /// holding that rank, clamped to the exact min and max.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        if p >= 100.0 {
            return Some(self.max as f64);
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (low, width) = bucket_bounds(index);
                let mid = low as f64 + (width as f64 - 1.0) / 2.0;
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Non-empty buckets as (value, count), lowest first: each bucket's midpoint, clamped
    /// to the exact min and max (so a bucket below 128 is its exact value), as JMH's
    /// `rawDataHistogram` lists an iteration's samples.
    pub fn values(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.nonzero().map(|(index, count)| {
            let (low, width) = bucket_bounds(index);
            let mid = low as f64 + (width as f64 - 1.0) / 2.0;
            (mid.clamp(self.min as f64, self.max as f64), count)
        })
    }

    /// Non-empty buckets as (bucket index, count), to send a histogram across a pipe.
    pub fn nonzero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i, c))
    }

    /// Rebuilds a histogram from [`Histogram::nonzero`] output and the exact min and max.
    pub fn from_buckets(buckets: &[(usize, u64)], min: u64, max: u64) -> Option<Histogram> {
        let mut h = Histogram::new();
        for &(index, count) in buckets {
            *h.counts.get_mut(index)? += count;
            h.total += count;
        }
        h.min = min;
        h.max = max;
        Some(h)
    }
}

fn bucket_of(value: u64) -> usize {
    if value < SUB {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros();
    let shift = exponent - SUB_BITS;
    let mantissa = value >> shift; // in SUB..2*SUB
    (SUB + shift as u64 * SUB + (mantissa - SUB)) as usize
}

/// The lowest value of bucket `index` and its width.
fn bucket_bounds(index: usize) -> (u64, u64) {
    let index = index as u64;
    if index < SUB {
        return (index, 1);
    }
    let shift = (index - SUB) / SUB;
    let mantissa = SUB + (index - SUB) % SUB;
    (mantissa << shift, 1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_reported_within_one_percent() {
        let mut v: u64 = 1;
        while v < u64::MAX / 3 {
            let mut h = Histogram::new();
            h.record(v);
            h.record(v.saturating_mul(3)); // so the clamp to max does not hide an error
            let reported = h.percentile(50.0).unwrap();
            assert!(
                (reported - v as f64).abs() <= 0.01 * v as f64,
                "{v} reported as {reported}"
            );
            v = (v as u128 * 5 / 3 + 1) as u64;
        }
    }

    #[test]
    fn buckets_round_trip_and_are_contiguous() {
        for index in 0..BUCKETS - 1 {
            let (low, width) = bucket_bounds(index);
            assert_eq!(bucket_of(low), index);
            assert_eq!(bucket_of(low + width - 1), index);
            assert_eq!(bucket_bounds(index + 1).0, low + width);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_uniform_values() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        for (p, expected) in [
            (50.0, 5_000_000.0),
            (90.0, 9_000_000.0),
            (99.0, 9_900_000.0),
            (99.99, 9_999_000.0),
        ] {
            let got = h.percentile(p).unwrap();
            assert!((got - expected).abs() <= 0.01 * expected, "p{p}: {got}");
        }
        assert_eq!(h.max(), Some(10_000_000));
        assert_eq!(h.percentile(100.0).unwrap(), 10_000_000.0);
        assert_eq!(h.count(), 10_000);
        let mean = h.mean().unwrap();
        assert!((mean - 5_000_500.0).abs() <= 0.004 * 5e6, "{mean}");
        assert_eq!(Histogram::new().mean(), None);
    }

    #[test]
    fn values_are_bucket_midpoints_within_min_and_max() {
        let mut h = Histogram::new();
        h.record_n(100, 2);
        h.record(1_000_000);
        h.record(3_000_000);
        let v: Vec<(f64, u64)> = h.values().collect();
        assert_eq!(v.len(), 3, "{v:?}");
        assert_eq!(v[0], (100.0, 2), "below 128 a bucket is one value");
        assert_eq!(v[2].0, 3_000_000.0, "the top bucket is clamped to the max");
        assert!((v[1].0 - 1e6).abs() <= 0.004 * 1e6, "{v:?}");
        assert_eq!(v.iter().map(|p| p.1).sum::<u64>(), h.count());
    }

    #[test]
    fn merge_and_rebuild_preserve_counts() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        a.record_n(500, 3);
        b.record(70_000);
        a.merge(&b);
        let buckets: Vec<_> = a.nonzero().collect();
        let rebuilt =
            Histogram::from_buckets(&buckets, a.min().unwrap(), a.max().unwrap()).unwrap();
        assert_eq!(rebuilt, a);
        assert_eq!(rebuilt.count(), 4);
        assert!(Histogram::from_buckets(&[(BUCKETS, 1)], 0, 0).is_none());
        assert!(Histogram::new().percentile(50.0).is_none());
    }
}
