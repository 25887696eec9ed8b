//! What the scaling benchmark derives from its runs: least-squares fits of time and
//! memory against the problem size, and the peak resident size of a process.
use serde::Serialize;

/// Peak resident set size of this process in bytes (`VmHWM` of `/proc/self/status`), or
/// `None` where that file does not exist (not Linux). A high-water mark over the whole
/// process lifetime: to compare problem sizes run each in its own process.
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

/// The `VmHWM:  <n> kB` line of a `/proc/<pid>/status` text, in bytes.
pub fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => value.checked_mul(1024),
        _ => None,
    }
}

/// A least-squares straight line `y ≈ slope · x + intercept`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LineFit {
    /// Slope (units of y per unit of x).
    pub slope: f64,
    /// Value at x = 0.
    pub intercept: f64,
    /// Coefficient of determination R² ∈ [0, 1] (1: every point on the line).
    pub r_squared: f64,
}

/// Ordinary least squares through `(x, y)` points:
///
/// ```text
/// slope = Σ (x − x̄)(y − ȳ) / Σ (x − x̄)²,   intercept = ȳ − slope · x̄,
/// R²    = 1 − Σ (y − slope·x − intercept)² / Σ (y − ȳ)²
/// ```
/// `None` for fewer than two points, non-finite values or all x equal.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    if points.len() < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx <= f64::EPSILON * mx.abs().max(1.0) {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let syy: f64 = points.iter().map(|(_, y)| (y - my) * (y - my)).sum();
    let residual: f64 = points
        .iter()
        .map(|(x, y)| (y - slope * x - intercept).powi(2))
        .sum();
    let r_squared = if syy > 0.0 { 1.0 - residual / syy } else { 1.0 };
    Some(LineFit {
        slope,
        intercept,
        r_squared,
    })
}

/// A power law `t ≈ coefficient · n^exponent`, fitted as a straight line in log–log space.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PowerFit {
    /// The exponent p (Baraff & Witkin §8 measured about 1.5 for time per frame).
    pub exponent: f64,
    /// The coefficient c (units of t at n = 1).
    pub coefficient: f64,
    /// R² of the straight line through (ln n, ln t).
    pub r_squared: f64,
}

/// Least-squares fit of `t = c · n^p` to `(n, t)` points, minimising the squared error of
/// `ln t = ln c + p ln n` (every point weighs the same in relative terms). `None` for fewer
/// than two points, a non-positive n or t, or all n equal.
pub fn fit_power_law(points: &[(f64, f64)]) -> Option<PowerFit> {
    if points
        .iter()
        .any(|&(n, t)| n.is_nan() || t.is_nan() || n <= 0.0 || t <= 0.0)
    {
        return None;
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|(n, t)| (n.ln(), t.ln())).collect();
    let line = fit_line(&logs)?;
    Some(PowerFit {
        exponent: line.slope,
        coefficient: line.intercept.exp(),
        r_squared: line.r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_law_fit_recovers_exponent_and_coefficient_of_exact_data() {
        let points: Vec<(f64, f64)> = [2601.0, 5041.0, 10_000.0, 19_881.0, 29_929.0]
            .iter()
            .map(|&n: &f64| (n, 3e-4 * n.powf(1.3)))
            .collect();
        let fit = fit_power_law(&points).expect("fit");
        assert!((fit.exponent - 1.3).abs() < 1e-12, "{fit:?}");
        assert!((fit.coefficient / 3e-4 - 1.0).abs() < 1e-10, "{fit:?}");
        assert!((fit.r_squared - 1.0).abs() < 1e-12, "{fit:?}");
    }

    #[test]
    fn power_law_fit_of_scattered_data_matches_the_normal_equations() {
        // Points off any power law: the fitted exponent is the slope solving the 2x2
        // normal equations [Σ1 Σx; Σx Σx²] [a; p] = [Σy; Σxy] in log space.
        let points = [(1.0, 2.0), (2.0, 3.0), (4.0, 9.0), (8.0, 14.0)];
        let fit = fit_power_law(&points).expect("fit");
        let (mut s1, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (n, t) in points {
            let (x, y) = (f64::ln(n), f64::ln(t));
            s1 += 1.0;
            sx += x;
            sxx += x * x;
            sy += y;
            sxy += x * y;
        }
        let det = s1 * sxx - sx * sx;
        let p = (s1 * sxy - sx * sy) / det;
        let a = (sxx * sy - sx * sxy) / det;
        assert!((fit.exponent - p).abs() < 1e-12, "{} vs {p}", fit.exponent);
        assert!((fit.coefficient.ln() - a).abs() < 1e-12);
        assert!(
            fit.r_squared > 0.9 && fit.r_squared < 1.0,
            "{}",
            fit.r_squared
        );
    }

    #[test]
    fn fits_refuse_degenerate_input() {
        assert_eq!(fit_power_law(&[(10.0, 1.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (10.0, 2.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (20.0, 0.0)]), None);
        assert_eq!(fit_power_law(&[(10.0, 1.0), (-20.0, 2.0)]), None);
        assert_eq!(fit_line(&[(0.0, 1.0), (f64::NAN, 2.0)]), None);
        let line = fit_line(&[(0.0, 1.0), (2.0, 5.0), (4.0, 9.0)]).expect("line");
        assert_eq!(
            (line.slope, line.intercept, line.r_squared),
            (2.0, 1.0, 1.0)
        );
    }

    #[test]
    fn peak_resident_size_is_read_from_the_status_text() {
        let status = "Name:\tscaling\nVmPeak:\t  20000 kB\nVmHWM:\t   1536 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(1536 * 1024));
        assert_eq!(parse_vm_hwm("VmRSS: 5 kB\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM: lots kB\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM: 5 MB\n"), None);
        if let Some(bytes) = peak_resident_bytes() {
            assert!(
                bytes > 1024 * 1024,
                "a test process holds more than 1 MB: {bytes}"
            );
        }
    }
}
