//! Ruby's `Benchmark.bm` layout: `user system total (real)` per benchmark over its
//! measured iterations, so a result can be put beside the original Ruby output. Rows keep
//! the order the benchmarks ran in; where they ran in several modes, each label names its mode.

use crate::harness::result::BenchResult;

pub fn render(results: &[BenchResult]) -> String {
    let mixed_modes = results.iter().any(|r| r.mode() != results[0].mode());
    let labels: Vec<String> = results
        .iter()
        .map(|r| match mixed_modes {
            true => format!("{} [{}]", r.label(), r.mode().short()),
            false => r.label(),
        })
        .collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = format!(
        "{:width$}  {:>9}  {:>9}  {:>9}  {:>12}  ops\n",
        "", "user", "system", "total", "real"
    );
    for (r, label) in results.iter().zip(&labels) {
        let c = &r.cpu;
        out.push_str(&format!(
            "{label:<width$}  {:>9.6}  {:>9.6}  {:>9.6} ({:>10.6})  {}\n",
            c.user(),
            c.sys(),
            c.user() + c.sys(),
            c.wall,
            r.ops
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::result::tests::sample_result;

    #[test]
    fn bm_layout() {
        let text = render(&[sample_result("bb.x", "1", vec![1.0])]);
        assert_eq!(
            text,
            "                                user     system      total          real  ops\n\
             bb.x (level=3, threads=1)   3.500000   0.250000   3.750000 (  2.000000)  100\n"
        );
    }

    #[test]
    fn labels_name_their_mode_when_modes_are_mixed() {
        let avgt = sample_result("bb.x", "1", vec![1.0]);
        let mut sample = avgt.clone();
        sample.settings.mode = crate::harness::cli::Mode::Sample;
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
