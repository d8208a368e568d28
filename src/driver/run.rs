//! `tap-run` as a library: evaluates a TEG graph of a `.tap` file with the reference evaluator, its sources bound
//! to NumPy `.npy` files by name, its sinks written as `.npy` files (the role `mlir-runner` plays for MLIR); or
//! runs an `npu.kernel` on the NPU interpreter, its buffers `arg0`, `arg1`, ... bound and written the same way.

use super::lowered;
use super::timing::TimingReport;
use crate::array::{npy, Array};
use crate::dialects;
use crate::dialects::npu::interp::Run;
use crate::dialects::teg::eval::{evaluate_timed, sources};
use crate::ir::symbols::symbol_name;
use crate::ir::verify::{verify, VerifyOptions};
use crate::ir::{walk, Context, Diagnostic, OpId};
use crate::render::{render_all, Style};
use indexmap::IndexMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

const HELP: &str = "OVERVIEW: Tapestry graph runner (the TEG reference evaluator and the NPU interpreter)

USAGE: tap-run FILE.tap [--entry NAME] --input NAME=PATH.npy ... (--output-dir DIR | --print) [--lower [--check]]

OPTIONS:
  --entry NAME           The teg.graph or npu.kernel to run (needed when the file has several)
  --input NAME=PATH      Binds source NAME (a kernel's buffers are arg0, arg1, ...) to the .npy file PATH
  --output-dir DIR       Writes each sink (each kernel buffer) as DIR/<name>.npy (created if missing)
  --print                Prints each sink (each kernel buffer) as `name = [[...]]` on standard output
  --lower                For a graph: lowers it to an NPU kernel (the pipeline below) and runs that on the NPU
                         interpreter, binding the same sources and writing the same sinks
  --pipeline PIPELINE    The pipeline --lower runs on the module (default: tap-to-npu; 'builtin.module(...)' too)
  --check                With --lower: also runs the reference evaluator and compares every sink (integers
                         exactly; f32 within 1e-6 + 1e-4 x the sink's largest magnitude, bf16 within 1e-2 + 1e-2 x);
                         fails with the first differing cell
  --cost                 For a kernel: prints each queue's busy cycles and `makespan: N cycles` on standard output
  --trace FILE           For a kernel: writes a Chrome/Perfetto trace (JSON), one track per queue
  --machine KEY=VALUE    For a kernel: sets an NPU machine parameter (slices_per_cluster=16, profile=small, ...),
                         as the module's npu.machine attribute does; repeat or separate with commas
  --print-machine        For a kernel: prints every parameter of the machine it runs on, one `name = value` a line
  --timing               Prints the time of parsing, verifying and of every op evaluated on standard error
  --help                 Prints this help
";

/// Parsed command line.
#[derive(Debug, Default)]
struct Args {
    file: Option<String>,
    entry: Option<String>,
    inputs: Vec<(String, PathBuf)>,
    output_dir: Option<PathBuf>,
    print: bool,
    cost: bool,
    trace: Option<PathBuf>,
    machine: Vec<(String, String)>,
    print_machine: bool,
    timing: bool,
    lower: bool,
    check: bool,
    pipeline: Option<String>,
    help: bool,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value =
            |name: &str| inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{name} needs a value"));
        match flag {
            "--help" | "-h" => out.help = true,
            "--print" => out.print = true,
            "--cost" => out.cost = true,
            "--trace" => out.trace = Some(PathBuf::from(value("--trace")?)),
            "--timing" => out.timing = true,
            "--lower" => out.lower = true,
            "--check" => out.check = true,
            "--pipeline" => out.pipeline = Some(value("--pipeline")?),
            "--print-machine" => out.print_machine = true,
            "--machine" => {
                for item in value("--machine")?.split(',') {
                    let (k, v) = item.split_once('=').ok_or(format!("--machine expects KEY=VALUE, got '{item}'"))?;
                    out.machine.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
            "--entry" => out.entry = Some(value("--entry")?),
            "--output-dir" | "-o" => out.output_dir = Some(PathBuf::from(value("--output-dir")?)),
            "--input" | "-i" => {
                let v = value("--input")?;
                let (name, path) = v.split_once('=').ok_or(format!("--input expects NAME=PATH.npy, got '{v}'"))?;
                out.inputs.push((name.to_string(), PathBuf::from(path)));
            }
            f if f.starts_with('-') && f.len() > 1 => return Err(format!("unknown option '{f}' (see --help)")),
            _ if out.file.is_some() => return Err(format!("only one input file, got a second: '{a}'")),
            _ => out.file = Some(a.clone()),
        }
    }
    Ok(out)
}

/// Runs `tap-run` with `args` (without the program name); returns the exit code.
pub fn main(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let code = match parse_args(args).and_then(|a| run(&a, stdout, stderr)) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(stderr, "error: {e}");
            1
        }
    };
    let _ = stderr.flush();
    code
}

fn run(args: &Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<(), String> {
    if args.help {
        return stdout.write_all(HELP.as_bytes()).map_err(|e| e.to_string());
    }
    let file = args.file.as_deref().ok_or("no input file (see --help)")?;
    if args.output_dir.is_none() && !args.print && !args.check {
        return Err("nowhere to put the results: give --output-dir DIR or --print (or --lower --check)".into());
    }
    if (args.check || args.pipeline.is_some()) && !args.lower {
        return Err("--check and --pipeline go with --lower".into());
    }
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read '{file}': {e}"))?;
    let text = super::utf8_text(file, bytes).map_err(|located| {
        let _ = writeln!(stderr, "{located}");
        "the graph cannot be read".to_string()
    })?;
    let (start, mut timing) = (Instant::now(), TimingReport::default());
    let mut ctx = Context::new(dialects::all());
    let module = match crate::parse::parse_file(&mut ctx, file, &text) {
        Ok(m) => m,
        Err(diags) => return Err(report(&ctx, &diags, stderr)),
    };
    timing.add(0, "Parser", start.elapsed());
    if !args.machine.is_empty() {
        set_machine(&mut ctx, module, &args.machine);
    }
    let verifying = Instant::now();
    let diags = verify(&ctx, module, VerifyOptions::default());
    if !diags.is_empty() {
        return Err(report(&ctx, &diags, stderr));
    }
    timing.add(0, "Verifier", verifying.elapsed());
    let graph = entry(&ctx, module, args.entry.as_deref())?;
    if args.lower {
        if ctx.op_name(graph) != "teg.graph" {
            return Err("--lower lowers a teg.graph; the entry is already an npu.kernel".into());
        }
        return run_lowering(&mut ctx, module, graph, args, stdout, stderr);
    }
    if ctx.op_name(graph) == "npu.kernel" {
        let outputs = run_kernel(&ctx, graph, args, stdout, stderr)?;
        return write_outputs(args, &outputs, stdout);
    }
    let inputs = bind(&ctx, graph, &args.inputs)?;
    let evaluating = Instant::now();
    let mut op_times = Vec::new();
    let outputs =
        evaluate_timed(&ctx, graph, &inputs, &mut |op, t| op_times.push((op, t))).map_err(|e| match e.op {
            Some(op) => report(&ctx, &[Diagnostic::error(ctx.body.op(op).loc, e.message)], stderr),
            None => e.message,
        })?;
    timing.add(0, "Evaluate", evaluating.elapsed());
    for (op, t) in op_times {
        timing.add(1, &format!("{} ({})", ctx.op_name(op), ctx.loc_text(ctx.body.op(op).loc)), t);
    }
    if args.timing {
        stderr.write_all(timing.render(start.elapsed()).as_bytes()).map_err(|e| e.to_string())?;
    }
    write_outputs(args, &outputs, stdout)
}

/// Runs an `npu.kernel` on its machine; with `--print-machine` and `--cost`, prints the machine and the schedule's
/// figures.
fn run_kernel(
    ctx: &Context,
    kernel: OpId,
    args: &Args,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<IndexMap<String, Array>, String> {
    if let Some(bindings) = lowered::bindings(ctx, kernel)? {
        return run_bound_kernel(ctx, kernel, &bindings, args, stdout);
    }
    let mut inputs = IndexMap::new();
    for (name, path) in &args.inputs {
        let bytes =
            std::fs::read(path).map_err(|e| format!("input '{name}': cannot read '{}': {e}", path.display()))?;
        let array = npy::read(&bytes).map_err(|e| format!("input '{name}': '{}': {e}", path.display()))?;
        let flat = Array::new(vec![array.len() as u64], array.data().clone()).map_err(|e| e.to_string())?;
        if inputs.insert(name.clone(), flat).is_some() {
            return Err(format!("input '{name}' is bound twice"));
        }
    }
    let run = crate::dialects::npu::interp::run_kernel(ctx, kernel, &inputs).map_err(|e| match e.diagnostic(ctx) {
        Some(d) => report(ctx, &[d], stderr),
        None => e.message,
    })?;
    report_run(&run, args, stdout)?;
    // The interpreter gives back the buffers the kernel writes and those nothing bound; an input it only read is
    // printed as it was bound.
    let mut outputs = run.buffers;
    for (name, array) in inputs {
        outputs.entry(name).or_insert(array);
    }
    let index = |name: &String| name.strip_prefix("arg").and_then(|n| n.parse::<usize>().ok());
    outputs.sort_by(|a, _, b, _| index(a).cmp(&index(b)));
    Ok(outputs)
}

/// Runs a kernel that says which source or sink each buffer holds (`npu.tensors`, as `convert-teg-to-npu`
/// writes it): its inputs and outputs are the graph's, by name.
fn run_bound_kernel(
    ctx: &Context,
    kernel: OpId,
    bindings: &[lowered::Binding],
    args: &Args,
    stdout: &mut dyn Write,
) -> Result<IndexMap<String, Array>, String> {
    let mut inputs = IndexMap::new();
    for (name, path) in &args.inputs {
        if !bindings.iter().any(|b| b.role == "source" && &b.name == name) {
            return Err(format!("--input {name}: the kernel's buffers hold no source named '{name}'"));
        }
        let bytes =
            std::fs::read(path).map_err(|e| format!("source '{name}': cannot read '{}': {e}", path.display()))?;
        let array = npy::read(&bytes).map_err(|e| format!("source '{name}': '{}': {e}", path.display()))?;
        if inputs.insert(name.clone(), array).is_some() {
            return Err(format!("source '{name}' is bound twice"));
        }
    }
    let (sinks, run) = lowered::run_lowered(ctx, kernel, bindings, &inputs)?;
    report_run(&run, args, stdout)?;
    Ok(sinks)
}

/// Prints the machine (`--print-machine`), the schedule's figures (`--cost`) and writes the trace (`--trace`).
fn report_run(run: &Run, args: &Args, stdout: &mut dyn Write) -> Result<(), String> {
    if args.print_machine {
        write!(stdout, "{}", run.machine).map_err(|e| e.to_string())?;
    }
    if args.cost {
        for (name, busy) in run.queues.iter().zip(&run.schedule.busy).filter(|(_, &b)| b > 0) {
            writeln!(stdout, "queue {name}: busy {busy} cycles").map_err(|e| e.to_string())?;
        }
        writeln!(stdout, "makespan: {} cycles", run.schedule.makespan).map_err(|e| e.to_string())?;
        for (what, bytes) in &run.moved {
            writeln!(stdout, "moved {what}: {bytes} bytes").map_err(|e| e.to_string())?;
        }
    }
    if let Some(path) = &args.trace {
        let trace = crate::dialects::npu::interp::trace::chrome_trace(run, run.machine.clock_hz);
        let text = serde_json::to_string_pretty(&trace).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    }
    Ok(())
}

/// `--lower`: binds the graph's sources, evaluates the reference (`--check`), runs the pipeline on the module,
/// runs the kernel it made of the graph and compares.
fn run_lowering(
    ctx: &mut Context,
    module: OpId,
    graph: OpId,
    args: &Args,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), String> {
    let inputs = bind(ctx, graph, &args.inputs)?;
    let reference = match args.check {
        true => Some(crate::dialects::teg::eval::evaluate(ctx, graph, &inputs).map_err(|e| match e.op {
            Some(op) => report(ctx, &[Diagnostic::error(ctx.body.op(op).loc, e.message)], stderr),
            None => e.message,
        })?),
        false => None,
    };
    let name = symbol_name(ctx, graph).unwrap_or_default().to_string();
    let pipeline = args.pipeline.as_deref().unwrap_or("tap-to-npu");
    let registry = crate::passes::PassRegistry::with_builtin();
    // Written as `tap-opt -p` takes it (anchored on the module) or as the module's pass list.
    let compact: String = pipeline.chars().filter(|c| !c.is_whitespace()).collect();
    let anchored = match compact.starts_with("builtin.module(") {
        true => pipeline.to_string(),
        false => format!("builtin.module({pipeline})"),
    };
    let mut pm =
        crate::passes::PassManager::parse(&anchored, &registry).map_err(|e| format!("--pipeline: {}", e.join("; ")))?;
    let mut sink = Vec::new();
    let mut instr = crate::passes::Instrumentation::quiet(&mut sink);
    let result = pm.run(ctx, module, &mut instr);
    let remarks = std::mem::take(&mut instr.remarks);
    drop(instr);
    let _ = stderr.write_all(render_all(ctx, &remarks, Style::Mlir).as_bytes());
    result.map_err(|diags| report(ctx, &diags, stderr))?;
    let kernel = walk::preorder(&ctx.body, module)
        .into_iter()
        .find(|&op| ctx.op_name(op) == "npu.kernel" && symbol_name(ctx, op) == Some(name.as_str()))
        .ok_or(format!("the pipeline '{pipeline}' made no npu.kernel @{name} of the graph"))?;
    let bindings = lowered::bindings(ctx, kernel)?
        .ok_or(format!("npu.kernel @{name} has no '{}'", crate::dialects::npu::ops::kernel::TENSORS_ATTR))?;
    let (sinks, run) = lowered::run_lowered(ctx, kernel, &bindings, &inputs).map_err(|m| format!("@{name}: {m}"))?;
    report_run(&run, args, stdout)?;
    let estimate = ctx.op_attr(kernel, crate::passes::convert_teg_to_npu::ESTIMATE_ATTR);
    if let Some(cycles) = estimate.and_then(|a| ctx.attr_data(a).as_int()).filter(|_| args.cost) {
        let ratio = match cycles {
            0 => String::new(),
            _ => format!(" (makespan / estimate: {:.2})", run.schedule.makespan as f64 / cycles as f64),
        };
        writeln!(stdout, "estimate: {cycles} cycles by the sharding cost model{ratio}").map_err(|e| e.to_string())?;
    }
    if let Some(reference) = reference {
        lowered::compare(&sinks, &reference)?;
        writeln!(stdout, "check: {} sinks match the reference evaluator", reference.len())
            .map_err(|e| e.to_string())?;
    }
    write_outputs(args, &sinks, stdout)
}

/// Writes the `--machine` parameters into the module's `npu.machine` attribute (over those it has), so that the
/// verifier and the interpreter read the same machine. A value is kept as an integer or a number when it reads as
/// one, else as a string; the verifier checks names and types.
fn set_machine(ctx: &mut Context, module: OpId, overrides: &[(String, String)]) {
    use crate::dialects::npu::machine_attr::MACHINE_ATTR;
    let mut entries: Vec<(crate::ir::Symbol, crate::ir::AttrId)> = match ctx.op_attr(module, MACHINE_ATTR) {
        Some(a) if matches!(ctx.attr_data(a), crate::ir::Attr::Dict(_)) => ctx.dict_entries(a).to_vec(),
        _ => Vec::new(),
    };
    for (key, value) in overrides {
        let attr = if let Ok(v) = value.parse::<i64>() {
            let i64t = ctx.int_type(64);
            ctx.int_attr(v as i128, i64t)
        } else if let Ok(v) = value.parse::<f64>() {
            let f64t = ctx.float_type(crate::ir::types::FloatKind::F64);
            ctx.attr(crate::ir::Attr::Float { bits: v.to_bits(), ty: f64t })
        } else {
            ctx.string_attr(value)
        };
        let sym = ctx.sym(key);
        entries.retain(|(k, _)| *k != sym);
        entries.push((sym, attr));
    }
    let dict = ctx.dict_attr(entries);
    ctx.set_op_attr(module, MACHINE_ATTR, dict);
}

/// Prints the outputs (`--print`) and writes them as `.npy` files (`--output-dir`).
fn write_outputs(args: &Args, outputs: &IndexMap<String, Array>, stdout: &mut dyn Write) -> Result<(), String> {
    if args.print {
        for (name, value) in outputs {
            writeln!(stdout, "{name} = {}", value.to_text()).map_err(|e| e.to_string())?;
        }
    }
    if let Some(out_dir) = &args.output_dir {
        if let Some(name) = outputs.keys().find(|n| !is_file_name(n)) {
            return Err(format!(
                "sink '{name}' cannot name a file in '{}': a sink written to --output-dir needs a name without '/', '\\', NUL or a leading '.'",
                out_dir.display()
            ));
        }
        std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create '{}': {e}", out_dir.display()))?;
        for (name, value) in outputs {
            let path = out_dir.join(format!("{name}.npy"));
            let bytes = npy::write(value).map_err(|e| format!("sink '{name}': {e}"))?;
            std::fs::write(&path, bytes).map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Whether sink name `name` is a plain file name, so that `DIR/<name>.npy` stays in `DIR`.
fn is_file_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

/// Writes rendered diagnostics and gives the one-line summary error.
fn report(ctx: &Context, diags: &[Diagnostic], stderr: &mut dyn Write) -> String {
    let _ = stderr.write_all(render_all(ctx, diags, Style::Mlir).as_bytes());
    "the program cannot be run".into()
}

/// The graph or kernel to run: `--entry`, or the only one.
fn entry(ctx: &Context, module: OpId, name: Option<&str>) -> Result<OpId, String> {
    let runnable = |op: OpId| matches!(ctx.op_name(op), "teg.graph" | "npu.kernel");
    let graphs: Vec<OpId> = walk::preorder(&ctx.body, module).into_iter().filter(|&op| runnable(op)).collect();
    let names: Vec<String> = graphs.iter().map(|&g| format!("@{}", symbol_name(ctx, g).unwrap_or("?"))).collect();
    match name {
        Some(n) => {
            graphs.iter().copied().find(|&g| symbol_name(ctx, g) == Some(n.trim_start_matches('@'))).ok_or_else(|| {
                format!(
                    "no teg.graph or npu.kernel named @{} (the file has {})",
                    n.trim_start_matches('@'),
                    list(&names)
                )
            })
        }
        None => match graphs.as_slice() {
            [g] => Ok(*g),
            [] => Err("the file has no teg.graph or npu.kernel".into()),
            _ => Err(format!("the file has several graphs ({}): choose one with --entry", names.join(", "))),
        },
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Reads every source's `.npy` file; checks that each source is bound exactly once and each binding names one.
fn bind(ctx: &Context, graph: OpId, inputs: &[(String, PathBuf)]) -> Result<IndexMap<String, Array>, String> {
    let wanted = sources(ctx, graph);
    let mut out = IndexMap::new();
    for (name, path) in inputs {
        let Some((_, shape, dtype)) = wanted.iter().find(|s| &s.0 == name) else {
            let names: Vec<String> = wanted.iter().map(|s| s.0.clone()).collect();
            return Err(format!(
                "--input {name}: the graph has no source named '{name}' (its sources: {})",
                list(&names)
            ));
        };
        if out.contains_key(name) {
            return Err(format!("source '{name}' is bound twice"));
        }
        let bytes =
            std::fs::read(path).map_err(|e| format!("source '{name}': cannot read '{}': {e}", path.display()))?;
        let array = npy::read(&bytes).map_err(|e| format!("source '{name}': '{}': {e}", path.display()))?;
        if array.shape() != shape.as_slice() || array.dtype() != *dtype {
            return Err(format!(
                "source '{name}' is {dtype} of shape {shape:?} but '{}' holds {} of shape {:?}",
                path.display(),
                array.dtype(),
                array.shape()
            ));
        }
        out.insert(name.clone(), array);
    }
    if let Some((name, shape, dtype)) = wanted.iter().find(|s| !out.contains_key(&s.0)) {
        return Err(format!("source '{name}' ({dtype} of shape {shape:?}) is not bound: pass --input {name}=PATH.npy"));
    }
    Ok(out)
}
