//! Ruby's `Benchmark.bm` layout, byte for byte: `user system total (real)` per benchmark
//! over its measured iterations, so a result can be put beside the original Ruby output.
//! The labels are as wide as `Benchmark.bm(WIDTH)` makes them with WIDTH the longest
//! label: one space after it. Rows keep the order the benchmarks ran in; where they ran
//! in several modes, each label names its mode.

use crate::model::result::BenchResult;

/// Ruby's `Benchmark::CAPTION`: `real` ends just before the column of the closing
/// parenthesis of the rows.
pub const CAPTION: &str = "      user     system      total        real\n";

pub fn render(results: &[BenchResult]) -> String {
    let mixed_modes = results.iter().any(|r| r.mode() != results[0].mode());
    let labels: Vec<String> = results
        .iter()
        .map(|r| match mixed_modes {
            true => format!("{} [{}]", r.label(), r.mode().short()),
            false => r.label(),
        })
        .collect();
    // Benchmark.bm(w) pads labels to w + 1 columns, or to the longest label if longer.
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) + 1;
    let mut out = format!("{:width$}{CAPTION}", "");
    for (r, label) in results.iter().zip(&labels) {
        let c = &r.cpu;
        // Ruby's Benchmark::FORMAT, "%10.6u %10.6y %10.6t %10.6r\n".
        out.push_str(&format!(
            "{label:<width$}{:>10.6} {:>10.6} {:>10.6} ({:>10.6})\n",
            c.user(),
            c.sys(),
            c.user() + c.sys(),
            c.wall,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;

    #[test]
    fn bm_layout() {
        let text = render(&[sample_result("bb.x", "1", vec![1.0])]);
        assert_eq!(
            text,
            "                                user     system      total        real\n\
             bb.x (level=3, threads=1)   3.500000   0.250000   3.750000 (  2.000000)\n"
        );
        let (header, row) = text.split_once('\n').unwrap();
        assert_eq!(
            header.find("real").unwrap() + 4,
            row.rfind(')').unwrap(),
            "real ends just before the closing parenthesis"
        );
    }

    #[test]
    fn labels_name_their_mode_when_modes_are_mixed() {
        let avgt = sample_result("bb.x", "1", vec![1.0]);
        let mut sample = avgt.clone();
        sample.settings.mode = crate::model::modes::Mode::Sample;
        let text = render(&[avgt, sample]);
        let labels: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split("  ").next().unwrap())
            .collect();
        assert_eq!(
            labels,
            [
                "bb.x (level=3, threads=1) [thrpt]",
                "bb.x (level=3, threads=1) [sample]"
            ]
        );
    }
}
