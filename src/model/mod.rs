//! Results and what describes them, as data: modes, profiles and formats (`modes`), a
//! benchmark's settings and unit (`settings`), its parameters (`params`), the measured
//! results (`result`), the benchmarks that failed (`failure`), and warnings. No I/O: the harness fills them, the reports and
//! bb-compare read them.

pub mod answer;
pub mod failure;
pub mod modes;
pub mod noise;
pub mod params;
pub mod result;
pub mod settings;
pub mod warning;
