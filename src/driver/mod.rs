//! The `tap-opt` driver as a library function: read, split, parse, verify, run the pipeline, print; report
//! diagnostics, timing and statistics. `src/bin/tap-opt.rs` only forwards its arguments here.

pub mod expected;
pub mod options;
pub mod split;
pub mod timing;

use crate::dialects;
use crate::ir::print::{print_op_to, PrintOptions};
use crate::ir::verify::{verify, VerifyOptions};
use crate::ir::{Context, Diagnostic, Registry, Severity};
use crate::passes::{parse_pipeline, registered_passes, Pipeline};
use crate::render::{render_all, Style};
use options::{Options, HELP};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};
use timing::TimingReport;

/// Runs `tap-opt` with `args` (without the program name), writing to `stdout` (unless `-o` says otherwise) and
/// `stderr`; returns the exit code.
pub fn main(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let result = options::parse_args(args).and_then(|opts| run(&opts, stdout, stderr));
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

fn run(opts: &Options, stdout: &mut dyn Write, err: &mut dyn Write) -> Result<bool, String> {
    let start = Instant::now();
    let registry = dialects::all();
    if introspect(opts, &registry, stdout).map_err(write_error)? {
        return Ok(true);
    }
    let pipeline = match opts.pipeline.as_deref().map(parse_pipeline).transpose() {
        Ok(p) => p.unwrap_or(Pipeline { anchor: "builtin.module".into(), elements: Vec::new() }),
        Err(e) => {
            write!(err, "{}", e.render()).map_err(write_error)?;
            return Ok(false);
        }
    };
    if opts.dump_pass_pipeline {
        write!(err, "Pass Manager with {} passes:\n{}", pipeline.num_passes(), pipeline.dump()).map_err(write_error)?;
    }
    let (name, text) = read_input(&opts.input)?;
    let mut file_out = open_output(&opts.output)?;
    let out: &mut dyn Write = match file_out.as_mut() {
        Some(f) => f,
        None => stdout,
    };
    let mut driver = Driver { opts, registry, pipeline, timing: TimingReport::default(), name, text, err };
    let ok = driver.process_all(out)?;
    out.flush().map_err(write_error)?;
    if opts.pass_statistics {
        write!(driver.err, "{}", timing::statistics_banner()).map_err(write_error)?;
    }
    if opts.timing {
        write!(driver.err, "{}", driver.timing.render(start.elapsed())).map_err(write_error)?;
    }
    Ok(ok)
}

/// `--help`, `--version`, `--list-passes`, `--show-dialects`: print and report that nothing else is to be done.
fn introspect(opts: &Options, registry: &Registry, out: &mut dyn Write) -> std::io::Result<bool> {
    if opts.help {
        write!(out, "{HELP}")?;
    } else if opts.version {
        writeln!(out, "tap-opt (Tapestry) {}", env!("CARGO_PKG_VERSION"))?;
    } else if opts.list_passes {
        writeln!(out, "Available Passes:")?;
        for p in registered_passes() {
            writeln!(out, "  --{}  -   {}", p.argument, p.description)?;
        }
        writeln!(out, "Available Pass Pipelines:")?;
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
    match String::from_utf8(bytes) {
        Ok(s) => Ok((name, Arc::from(s))),
        Err(e) => Err(format!(
            "{name}: error: input is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )),
    }
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
    pipeline: Pipeline,
    timing: TimingReport,
    name: String,
    text: Arc<str>,
    err: &'o mut dyn Write,
}

impl Driver<'_> {
    fn process_all(&mut self, out: &mut dyn Write) -> Result<bool, String> {
        let ranges = match &self.opts.split_marker {
            Some(marker) => split::split(&self.text, marker),
            None => std::iter::once(0..self.text.len()).collect(),
        };
        let mut ok = true;
        let last = ranges.len() - 1;
        for (i, range) in ranges.into_iter().enumerate() {
            if i > 0 {
                writeln!(out, "{}", self.opts.output_split_marker).map_err(write_error)?;
            }
            ok &= self.process_chunk(range, out, i == last)?;
        }
        Ok(ok)
    }

    fn process_chunk(
        &mut self,
        range: std::ops::Range<usize>,
        out: &mut dyn Write,
        last: bool,
    ) -> Result<bool, String> {
        let mut ctx = Context::new(self.registry.clone());
        ctx.allow_unregistered = self.opts.allow_unregistered;
        let file = ctx.sources.add(self.name.clone(), self.text.clone());
        let t = Instant::now();
        let parsed = crate::parse::parse_range(&mut ctx, file, range.clone());
        self.timing.add(0, "Parser", t.elapsed());
        let (module, mut diags) = match parsed {
            Ok(m) => (Some(m), Vec::new()),
            Err(d) => (None, d),
        };
        if let Some(m) = module {
            let vopts = VerifyOptions { print_op_on_diagnostic: self.opts.verify_diagnostics.is_none() };
            diags.extend(verify(&ctx, m, vopts));
            if !has_error(&diags) {
                diags.extend(self.run_pipeline(&ctx, m));
            }
        }
        let ok = self.report(&ctx, file, range, &diags);
        if let (Some(m), false) = (module, has_error(&diags)) {
            let t = Instant::now();
            let popts = PrintOptions { generic: self.opts.print_generic, debug_info: self.opts.print_debuginfo };
            print_op_to(&ctx, m, popts, out).map_err(write_error)?;
            self.timing.add(0, "Output", t.elapsed());
        }
        if last {
            // The process ends right after the last chunk: let the OS reclaim the IR instead of freeing it op by op.
            std::mem::forget(ctx);
        }
        Ok(ok)
    }

    /// Runs the pipeline; with no pass manager yet, only checks that the anchor can run on the module.
    fn run_pipeline(&mut self, ctx: &Context, module: crate::ir::OpId) -> Vec<Diagnostic> {
        let anchor = &self.pipeline.anchor;
        if anchor != "any" && anchor != ctx.op_name(module) {
            let msg = format!("can't run '{anchor}' pass manager on '{}' op", ctx.op_name(module));
            return vec![Diagnostic::error(ctx.body.op(module).loc, msg)];
        }
        self.timing.add(0, &format!("'{anchor}' Pipeline"), Duration::ZERO);
        Vec::new()
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
