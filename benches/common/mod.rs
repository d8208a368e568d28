//! Shared by the benchmarks: timing a tool on a file (median of 3 runs, peak RSS through `/usr/bin/time`) and
//! finding `mlir-opt-22`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// One run of `tool FLAGS FILE -o /dev/null`: wall seconds and peak RSS in MB (if `/usr/bin/time` is there).
pub fn run_once(tool: &str, flags: &[&str], file: &Path) -> (f64, Option<f64>) {
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.args(["-f", "%M", tool]);
        c
    } else {
        Command::new(tool)
    };
    cmd.args(flags).arg(file).args(["-o", "/dev/null"]);
    let start = Instant::now();
    let out = cmd.output().expect("failed to start the tool");
    let wall = start.elapsed().as_secs_f64();
    assert!(out.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&out.stderr));
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0);
    (wall, rss)
}

/// The median of three runs (by wall time).
pub fn median_run(tool: &str, flags: &[&str], file: &Path) -> (f64, Option<f64>) {
    let mut runs: Vec<(f64, Option<f64>)> = (0..3).map(|_| run_once(tool, flags, file)).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[1]
}

/// `mlir-opt-22` if it is on the path.
pub fn find_mlir_opt() -> Option<String> {
    let ok = Command::new("mlir-opt-22").arg("--version").output().is_ok_and(|o| o.status.success());
    ok.then(|| "mlir-opt-22".to_string())
}

/// The op counts to run (`TAP_BENCH_SIZES`, default 100000 and 1000000).
pub fn sizes() -> Vec<usize> {
    std::env::var("TAP_BENCH_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("TAP_BENCH_SIZES is a comma-separated list of op counts"))
        .collect()
}

/// The folder generated inputs go to.
pub fn work_dir() -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
