//! The `tap-opt` driver as a library function: read, split, parse, verify, run the pipeline, print; report
//! diagnostics, timing and statistics. `src/bin/tap-opt.rs` only forwards its arguments here.

pub mod expected;
pub mod lowered;
pub mod options;
pub mod run;
pub mod split;
pub mod timing;

use crate::dialects;
use crate::ir::print::{print_op_to, PrintOptions};
use crate::ir::verify::{verify, VerifyOptions};
use crate::ir::{Context, Diagnostic, Registry, Severity};
use crate::passes::{parse_pipeline, Instrumentation, PassManager, PassRegistry, Pipeline, PipelineElement, Selection};
use crate::render::{render_all, Style};
use options::{Options, HELP};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;
use timing::TimingReport;

/// Runs `tap-opt` with `args` (without the program name), writing to `stdout` (unless `-o` says otherwise) and
/// `stderr`; returns the exit code.
pub fn main(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let passes = PassRegistry::with_builtin();
    let result = options::parse_args(args, &passes).and_then(|opts| run(&opts, &passes, stdout, stderr));
    let code = match result {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            1
        }
    };
    let _ = stdout.flush();
    let _ = stderr.flush();
    code
}

fn run(opts: &Options, passes: &PassRegistry, stdout: &mut dyn Write, err: &mut dyn Write) -> Result<bool, String> {
    let start = Instant::now();
    let registry = dialects::all();
    if introspect(opts, &registry, passes, stdout).map_err(write_error)? {
        return Ok(true);
    }
    let Some(pm) = build_pass_manager(opts, passes, err).map_err(write_error)? else { return Ok(false) };
    if opts.dump_pass_pipeline {
        write!(err, "{}", pm.dump()).map_err(write_error)?;
    }
    let (name, text) = read_input(&opts.input)?;
    let file = open_output(&opts.output)?;
    let mut driver = Driver {
        opts,
        registry,
        pm,
        timing: TimingReport::default(),
        name,
        text,
        stdout,
        file,
        err,
        statistics: String::new(),
    };
    let ok = driver.process_all()?;
    driver.ir_out().flush().map_err(write_error)?;
    if opts.pass_statistics {
        let report = if driver.statistics.is_empty() { timing::statistics_banner() } else { driver.statistics.clone() };
        write!(driver.err, "{report}").map_err(write_error)?;
    }
    if opts.timing {
        write!(driver.err, "{}", driver.timing.render(start.elapsed())).map_err(write_error)?;
    }
    Ok(ok)
}

/// The pass manager for `--pass-pipeline` or the individual pass flags; `None` after reporting an error.
fn build_pass_manager(
    opts: &Options,
    passes: &PassRegistry,
    err: &mut dyn Write,
) -> std::io::Result<Option<PassManager>> {
    if opts.pipeline.is_some() && !opts.pass_flags.is_empty() {
        writeln!(err, "<unknown>:0: error: '-pass-pipeline' option can't be used with individual pass options")?;
        return Ok(None);
    }
    let pipeline = match &opts.pipeline {
        Some(text) => match parse_pipeline(text, passes) {
            Ok(p) => p,
            Err(e) => {
                write!(err, "{}", e.render())?;
                return Ok(None);
            }
        },
        None => {
            let elements = opts
                .pass_flags
                .iter()
                .map(|(name, options)| PipelineElement::Pass { name: name.clone(), options: options.clone() });
            Pipeline { anchor: "builtin.module".into(), elements: elements.collect() }
        }
    };
    match PassManager::from_pipeline(&pipeline, passes) {
        Ok(pm) => Ok(Some(pm)),
        Err(lines) => {
            for l in lines {
                writeln!(err, "{l}")?;
            }
            Ok(None)
        }
    }
}

/// `--help`, `--version`, `--list-passes`, `--show-dialects`: print and report that nothing else is to be done.
fn introspect(
    opts: &Options,
    registry: &Registry,
    passes: &PassRegistry,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    if opts.help {
        write!(out, "{HELP}")?;
    } else if opts.version {
        writeln!(out, "tap-opt (Tapestry) {}", env!("CARGO_PKG_VERSION"))?;
    } else if opts.list_passes {
        write!(out, "{}", passes.list())?;
    } else if opts.show_dialects {
        writeln!(out, "Available Dialects: {}", registry.dialects().map(|d| d.name).collect::<Vec<_>>().join(", "))?;
        for op in registry.ops() {
            writeln!(out, "  {}  -   {}", op.info.name, op.info.summary)?;
        }
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn read_input(path: &str) -> Result<(String, Arc<str>), String> {
    let mut bytes = Vec::new();
    let name = if path == "-" {
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| format!("tap-opt: could not read standard input: {e}"))?;
        "<stdin>".to_string()
    } else {
        bytes = std::fs::read(path).map_err(|e| format!("tap-opt: could not open input file '{path}': {e}"))?;
        path.to_string()
    };
    Ok((name.clone(), Arc::from(utf8_text(&name, bytes)?)))
}

/// The text of input `name`, or an error at the line and column of its first byte that is not UTF-8.
pub fn utf8_text(name: &str, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = String::from_utf8_lossy(&bytes[line_start..at]).chars().count() + 1;
        format!("{name}:{line}:{column}: error: input is not valid UTF-8 (byte 0x{:02x} at offset {at})", bytes[at])
    })
}

/// The `-o` file, or `None` for standard output.
fn open_output(path: &str) -> Result<Option<std::io::BufWriter<std::fs::File>>, String> {
    if path == "-" {
        return Ok(None);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("tap-opt: could not open output file '{path}': {e}"))?;
    Ok(Some(std::io::BufWriter::with_capacity(1 << 16, file)))
}

struct Driver<'o> {
    opts: &'o Options,
    registry: Arc<Registry>,
    pm: PassManager,
    timing: TimingReport,
    statistics: String,
    name: String,
    text: Arc<str>,
    /// Standard output: the IR unless `-o` names a file, and what passes print.
    stdout: &'o mut dyn Write,
    /// The `-o` file.
    file: Option<std::io::BufWriter<std::fs::File>>,
    err: &'o mut dyn Write,
}

impl Driver<'_> {
    /// Where the IR goes.
    fn ir_out(&mut self) -> &mut dyn Write {
        match &mut self.file {
            Some(f) => f,
            None => &mut *self.stdout,
        }
    }

    fn process_all(&mut self) -> Result<bool, String> {
        let ranges = match &self.opts.split_marker {
            Some(marker) => split::split(&self.text, marker),
            None => std::iter::once(0..self.text.len()).collect(),
        };
        let mut ok = true;
        let last = ranges.len() - 1;
        for (i, range) in ranges.into_iter().enumerate() {
            if i > 0 {
                let marker = self.opts.output_split_marker.clone();
                writeln!(self.ir_out(), "{marker}").map_err(write_error)?;
            }
            ok &= self.process_chunk(range, i == last)?;
        }
        Ok(ok)
    }

    fn process_chunk(&mut self, range: std::ops::Range<usize>, last: bool) -> Result<bool, String> {
        let mut ctx = Context::new(self.registry.clone());
        ctx.allow_unregistered = self.opts.allow_unregistered;
        let file = ctx.sources.add(self.name.clone(), self.text.clone());
        let t = Instant::now();
        let parsed = crate::parse::parse_range(&mut ctx, file, range.clone());
        self.timing.add(0, "Parser", t.elapsed());
        let mut failure_dump = None;
        let (module, mut diags) = match parsed {
            Ok(m) => (Some(m), Vec::new()),
            Err(d) => (None, d),
        };
        if let Some(m) = module {
            let vopts = VerifyOptions { print_op_on_diagnostic: self.opts.verify_diagnostics.is_none() };
            diags.extend(verify(&ctx, m, vopts));
            if !has_error(&diags) {
                let (pass_diags, dump) = self.run_pipeline(&mut ctx, m);
                diags.extend(pass_diags);
                failure_dump = dump;
            }
        }
        let ok = self.report(&ctx, file, range, &diags);
        if let Some(dump) = failure_dump {
            write!(self.err, "{dump}").map_err(write_error)?;
        }
        if let (Some(m), false) = (module, has_error(&diags)) {
            let t = Instant::now();
            let popts = PrintOptions { generic: self.opts.print_generic, debug_info: self.opts.print_debuginfo };
            print_op_to(&ctx, m, popts, self.ir_out()).map_err(write_error)?;
            self.timing.add(0, "Output", t.elapsed());
        }
        if last {
            // The process ends right after the last chunk: let the OS reclaim the IR instead of freeing it op by op.
            std::mem::forget(ctx);
        }
        Ok(ok)
    }

    /// Runs the pass pipeline with the instrumentation the flags ask for; returns its diagnostics and the dump of a
    /// failed pass (printed after the diagnostics, as mlir-opt does).
    fn run_pipeline(&mut self, ctx: &mut Context, module: crate::ir::OpId) -> (Vec<Diagnostic>, Option<String>) {
        let o = self.opts;
        let select = |all: bool, some: &Vec<String>| match (all, some.is_empty()) {
            (true, _) => Selection::All,
            (false, false) => Selection::Some(some.clone()),
            (false, true) => Selection::None,
        };
        let mut instr = Instrumentation::quiet(&mut *self.err);
        instr.print_before = select(o.print_before_all, &o.print_before);
        instr.print_after = select(o.print_after_all, &o.print_after);
        instr.print_after_change = o.print_after_change;
        instr.print_after_failure = o.print_after_failure;
        instr.print_module_scope = o.print_module_scope;
        instr.print_options = PrintOptions { generic: o.print_generic, debug_info: o.print_debuginfo };
        instr.verify_each = o.verify_each;
        let result = self.pm.run(ctx, module, &mut instr);
        for ((depth, name), t) in &instr.timing {
            self.timing.add(*depth, name, *t);
        }
        if o.pass_statistics {
            self.statistics.push_str(&instr.statistics_report());
        }
        let (dump, output) = (instr.failure_dump.take(), std::mem::take(&mut instr.output));
        let mut diags = std::mem::take(&mut instr.remarks);
        drop(instr);
        let _ = self.stdout.write_all(&output);
        diags.extend(result.err().unwrap_or_default());
        (diags, dump)
    }

    /// Renders diagnostics (or checks them under `--verify-diagnostics`); returns whether the chunk succeeded.
    fn report(
        &mut self,
        ctx: &Context,
        file: crate::ir::FileId,
        range: std::ops::Range<usize>,
        diags: &[Diagnostic],
    ) -> bool {
        let style = if self.opts.rich_diagnostics { Style::Rich } else { Style::Mlir };
        let Some(mode) = self.opts.verify_diagnostics else {
            let _ = write!(self.err, "{}", render_all(ctx, diags, style));
            return !has_error(diags);
        };
        let (mut expected, mut failures) = expected::collect(&self.text, range, file);
        failures.extend(expected::check(ctx, file, &mut expected, diags, mode));
        let _ = write!(self.err, "{}", render_all(ctx, &failures, style));
        failures.is_empty()
    }
}

fn has_error(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

fn write_error(e: std::io::Error) -> String {
    format!("tap-opt: error writing output: {e}")
}
