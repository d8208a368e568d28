//! A run as a Chrome trace (the JSON Trace Event Format that Perfetto and `chrome://tracing` open): one track per
//! queue, named after it, with one complete event (`"ph": "X"`) per instruction from its start to its end, and an
//! instant event (`"ph": "i"`) per barrier. Times are in microseconds of the machine's clock.

use super::Run;
use serde_json::{json, Value};

/// The trace of `run` on a machine clocked at `clock_hz`.
pub fn chrome_trace(run: &Run, clock_hz: f64) -> Value {
    let micros = |cycles: u64| cycles as f64 * 1e6 / clock_hz;
    let mut events: Vec<Value> = Vec::new();
    events.push(json!({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "tap-npu"}}));
    for (tid, name) in run.queues.iter().enumerate() {
        events.push(json!({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid, "args": {"name": name}}));
        events.push(json!({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": tid, "args": {"sort_index": tid}}));
    }
    for (k, (label, queue)) in run.steps.iter().enumerate() {
        let (start, end) = (run.schedule.start[k], run.schedule.end[k]);
        let args = json!({"cycles": end - start, "start": start});
        events.push(match queue {
            Some(tid) => json!({
                "name": label, "cat": run.queues[*tid], "ph": "X", "pid": 0, "tid": tid,
                "ts": micros(start), "dur": micros(end - start), "args": args,
            }),
            None => json!({"name": label, "ph": "i", "s": "p", "pid": 0, "tid": 0, "ts": micros(start)}),
        });
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}
