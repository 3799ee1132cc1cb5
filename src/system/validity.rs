//! Validity as data: what happened to the board while a row ran that makes its figure
//! not the board's own at its best, as sbc-bench declares a run invalid (throttling,
//! under-voltage, swapping, an OOM kill, a core taken offline, a busy board), each a
//! [`Flag`] a result carries, its report marks and bb-compare respects.

/// One thing that went wrong while a row ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flag {
    /// The SoC throttled or capped its clock (a Pi's firmware bits).
    Throttled,
    /// cpufreq ran below its maximum under the performance governor, whose target it is.
    ClockBelowTarget,
    /// The supply sagged: a Pi's firmware or its `rpi_volt` alarm.
    UnderVoltage,
    /// The clock measured by a timed loop differs from the one cpufreq reports by more
    /// than 5%.
    ClockMismatch,
    /// Pages were swapped in or out.
    Swapped,
    /// The kernel killed a process for memory.
    OomKill,
    /// A core went offline (heat, a hotplug governor).
    CoreOffline,
    /// Other processes used the board: it never went idle before the run.
    Busy,
    /// A cluster it ran on was not under the performance governor: its clock followed
    /// the load rather than holding its maximum.
    Governor,
}

/// Every flag, in the order reports list them.
pub const ALL: [Flag; 9] = [
    Flag::Throttled,
    Flag::ClockBelowTarget,
    Flag::UnderVoltage,
    Flag::ClockMismatch,
    Flag::Swapped,
    Flag::OomKill,
    Flag::CoreOffline,
    Flag::Busy,
    Flag::Governor,
];

impl Flag {
    /// Its name in reports and JSON (`under-voltage`).
    pub fn name(self) -> &'static str {
        match self {
            Flag::Throttled => "throttled",
            Flag::ClockBelowTarget => "clock-below-target",
            Flag::UnderVoltage => "under-voltage",
            Flag::ClockMismatch => "clock-mismatch",
            Flag::Swapped => "swapped",
            Flag::OomKill => "oom-kill",
            Flag::CoreOffline => "core-offline",
            Flag::Busy => "busy",
            Flag::Governor => "governor",
        }
    }

    /// The flag named `name`; None for a name this build does not know.
    pub fn parse(name: &str) -> Option<Flag> {
        ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether it is the clock's or the supply's: what the report has long called
    /// throttled.
    pub fn is_throttling(self) -> bool {
        matches!(
            self,
            Flag::Throttled | Flag::ClockBelowTarget | Flag::UnderVoltage
        )
    }
}

/// `flags` in order, each once.
pub fn sorted(flags: impl IntoIterator<Item = Flag>) -> Vec<Flag> {
    let mut out: Vec<Flag> = flags.into_iter().collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// `throttled, swapped`.
pub fn names(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What /proc/vmstat counts that flags a row: pages swapped in and out, OOM kills.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmCounts {
    pub swapped_in: u64,
    pub swapped_out: u64,
    pub oom_kills: u64,
}

impl VmCounts {
    /// From /proc/vmstat's `pswpin`, `pswpout` and `oom_kill` lines; None where it has
    /// neither swap counter.
    pub fn parse(vmstat: &str) -> Option<VmCounts> {
        let value = |key: &str| {
            vmstat.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse::<u64>().ok())?
            })
        };
        let (swapped_in, swapped_out) = (value("pswpin"), value("pswpout"));
        if swapped_in.is_none() && swapped_out.is_none() {
            return None;
        }
        Some(VmCounts {
            swapped_in: swapped_in.unwrap_or(0),
            swapped_out: swapped_out.unwrap_or(0),
            oom_kills: value("oom_kill").unwrap_or(0),
        })
    }

    /// The flags and their reasons between two readings.
    pub fn flags_between(before: VmCounts, after: VmCounts) -> Vec<(Flag, String)> {
        let (swap_in, swap_out) = (
            after.swapped_in.saturating_sub(before.swapped_in),
            after.swapped_out.saturating_sub(before.swapped_out),
        );
        let mut out = Vec::new();
        if swap_in > 0 || swap_out > 0 {
            out.push((
                Flag::Swapped,
                format!("swapped: {swap_in} pages in, {swap_out} out"),
            ));
        }
        let kills = after.oom_kills.saturating_sub(before.oom_kills);
        if kills > 0 {
            out.push((
                Flag::OomKill,
                format!("the kernel killed {kills} process(es) for memory (oom_kill)"),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort_in_report_order() {
        for f in ALL {
            assert_eq!(Flag::parse(f.name()), Some(f));
        }
        assert_eq!(Flag::parse("hot"), None);
        let got = sorted([
            Flag::Governor,
            Flag::Swapped,
            Flag::Throttled,
            Flag::Swapped,
        ]);
        assert_eq!(names(&got), "throttled, swapped, governor");
    }

    #[test]
    fn swapping_and_oom_kills_between_two_readings_flag() {
        let vm = |i, o, k| format!("nr_free_pages 100\npswpin {i}\npswpout {o}\noom_kill {k}\n");
        let a = VmCounts::parse(&vm(10, 20, 0)).unwrap();
        assert_eq!(VmCounts::flags_between(a, a), []);
        let b = VmCounts::parse(&vm(12, 20, 1)).unwrap();
        let flags: Vec<Flag> = VmCounts::flags_between(a, b)
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(flags, [Flag::Swapped, Flag::OomKill]);
        assert_eq!(
            VmCounts::flags_between(a, b)[0].1,
            "swapped: 2 pages in, 0 out"
        );
        assert_eq!(VmCounts::parse("nr_free_pages 1\n"), None);
        // A counter that goes back (a reading of another boot) flags nothing.
        assert_eq!(VmCounts::flags_between(b, a), []);
    }
}
