//! Statistics over iteration scores, computed as JMH computes them: the summary with the
//! 99.9% Student-t error, percentiles, Welch's t-test for comparisons, and the
//! log-bucketed latency histogram of sample mode.

pub mod histogram;
pub mod percentile;
pub(crate) mod student_t;
pub(crate) mod summary;
pub(crate) mod welch;

pub use self::percentile::{percentiles_of, PERCENTILES};
pub use self::summary::Summary;

#[cfg(test)]
pub(crate) mod tests {
    /// Whether `a` is within `tol`, relative, of `b`.
    pub fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }
}
