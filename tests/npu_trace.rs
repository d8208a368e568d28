//! The interpreter's trace follows Chrome's Trace Event Format, which Perfetto opens: an object with a
//! `traceEvents` array; metadata events (`"ph": "M"`) naming the process and one thread per queue; one complete
//! event (`"ph": "X"`, numeric `ts` and `dur`, a `tid` naming a queue) per instruction, never overlapping on one
//! queue (queues run in order); an instant event (`"ph": "i"`) per barrier.

use indexmap::IndexMap;
use tapestry::dialects::npu::interp::{run_kernel, trace::chrome_trace};

const KERNEL: &str = r#"npu.kernel @k(%c: !npu.buf<hbm, 16 x f32>) {
  %s = npu.semaphore
  npu.memset queue(main) on(0, 0:2) dst(dm, base 0, loops [(1, 0)], packet 64) value 1.0 : f32 signals(%s = 1)
  npu.memset queue(sub) on(0, 2) dst(dm, base 0, loops [(1, 0)], packet 64) value 2.0 : f32
  npu.vec.unary exp queue(main) on(0, 0:2) src(dm, base 0, loops [(1, 0)], packet 64) dst(dm, base 64, loops [(1, 0)], packet 64) : f32
  npu.dma queue(dma0) waits(%s = 1) src(dm[0, 1], base 0) dst(%c, base 0) loops [(1, 64, 64)] packet 64 : f32
  npu.barrier
  npu.dma queue(dma1) src(dm[0, 2], base 0) dst(%c, base 0) loops [(1, 64, 64)] packet 64 : f32
}
"#;

#[test]
fn the_trace_is_in_chrome_trace_event_format() {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "k.tap", KERNEL).unwrap();
    let region = ctx.body.regions(module)[0];
    let kernel = ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().unwrap();
    let run = run_kernel(&ctx, kernel, &IndexMap::new()).unwrap();
    let trace = chrome_trace(&run, run.machine.clock_hz);
    let events = trace["traceEvents"].as_array().expect("a traceEvents array");
    let mut spans: Vec<(i64, f64, f64)> = Vec::new();
    let (mut named, mut instants) = (0, 0);
    for e in events {
        assert!(e["name"].is_string() && e["pid"].is_i64(), "{e}");
        match e["ph"].as_str().unwrap() {
            "M" => {
                assert!(e["args"]["name"].is_string() || e["args"]["sort_index"].is_i64(), "{e}");
                named += usize::from(e["name"] == "thread_name");
            }
            "X" => {
                let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                let tid = e["tid"].as_i64().unwrap();
                assert!((tid as usize) < run.queues.len() && e["cat"] == run.queues[tid as usize].as_str(), "{e}");
                spans.push((tid, ts, ts + dur));
            }
            "i" => instants += 1,
            other => panic!("unexpected phase {other}"),
        }
    }
    assert_eq!((named, instants, spans.len()), (run.queues.len(), 1, 5));
    spans.sort_by(|a, b| a.partial_cmp(b).unwrap());
    for w in spans.windows(2) {
        assert!(w[0].0 != w[1].0 || w[0].2 <= w[1].1 + 1e-9, "overlap on queue {}: {w:?}", w[0].0);
    }
    // The second DMA starts after the barrier, which waits for everything before it.
    let last = events.iter().rfind(|e| e["ph"] == "X").unwrap();
    let before = spans.iter().filter(|s| s.0 != last["tid"].as_i64().unwrap()).map(|s| s.2).fold(0.0, f64::max);
    assert!(last["ts"].as_f64().unwrap() >= before - 1e-9);
}
