//! Executes parsed RUN lines like lit's internal shell: pipelines with pipefail semantics, `&&`/`||`/`;`,
//! redirections, the `not` and `env` prefixes, the built-ins `echo cat diff rm mkdir cd export true false :`,
//! and external tools (run with a timeout), recording a transcript for failure reports.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::shell::{self, Command, List, ListOp, Pipeline, RedirOp};

/// Each captured stream shown in a transcript is cut to this many bytes (head and tail kept).
const SHOW_LIMIT: usize = 12_000;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The exit code (`128 + signal` for a signal, like a POSIX shell reports it).
    pub code: i32,
    /// The signal that killed the process, if one did.
    pub signal: Option<i32>,
}

impl Status {
    pub const OK: Status = Status { code: 0, signal: None };

    pub fn exit(code: i32) -> Status {
        Status { code, signal: None }
    }

    pub fn success(self) -> bool {
        self.code == 0 && self.signal.is_none()
    }
}

/// The shell state of one test: working directory, environment changes and the transcript so far.
pub struct Shell<'a> {
    pub cwd: PathBuf,
    /// Changes on top of the runner's own environment (`None` removes the variable).
    pub env: BTreeMap<String, Option<String>>,
    /// Maps a command name to the program to run; `None` leaves it to a `PATH` search.
    pub resolve: &'a dyn Fn(&str) -> Option<PathBuf>,
    /// Per external command.
    pub timeout: Duration,
    pub transcript: String,
}

/// Where a file descriptor of a command writes to.
#[derive(Clone)]
enum Sink {
    /// The command's stdout pipe: the next stage's stdin, or the pipeline's output.
    Out,
    /// The captured stderr, shown in the transcript.
    Err,
    File(Rc<File>),
}

/// What one simple command produced.
struct Outcome {
    status: Status,
    /// What it wrote to its stdout pipe.
    out: Vec<u8>,
    /// What it wrote to the captured stderr.
    err: Vec<u8>,
    /// Why it could not run (bad redirection, unknown command, timeout, …).
    note: Option<String>,
    /// The program a tool name resolved to, when that differs from the name.
    program: Option<PathBuf>,
}

impl Outcome {
    fn error(msg: impl Into<String>) -> Outcome {
        Outcome { status: Status::exit(127), out: Vec::new(), err: Vec::new(), note: Some(msg.into()), program: None }
    }
}

impl Shell<'_> {
    /// Runs one (already substituted) RUN line and returns its status; the transcript records what ran.
    pub fn run_line(&mut self, line: &str) -> Status {
        let list = match shell::parse(line) {
            Ok(l) => l,
            Err(e) => {
                let _ = writeln!(self.transcript, "# shell parser error: {e}");
                return Status::exit(2);
            }
        };
        self.run_list(&list)
    }

    fn run_list(&mut self, list: &List) -> Status {
        let mut status = self.run_pipeline(&list.first);
        for (op, p) in &list.rest {
            let run = match op {
                ListOp::Seq => true,
                ListOp::And => status.success(),
                ListOp::Or => !status.success(),
            };
            if run {
                status = self.run_pipeline(p);
            }
        }
        status
    }

    /// Runs the stages one after the other, each one's stdout buffered as the next one's stdin. The pipeline
    /// fails if any stage fails (pipefail); its status is that of the last failing stage.
    fn run_pipeline(&mut self, p: &Pipeline) -> Status {
        let mut input = Vec::new();
        let mut status = Status::OK;
        let n = p.commands.len();
        for (i, cmd) in p.commands.iter().enumerate() {
            let o = self.run_command(cmd, std::mem::take(&mut input), n == 1);
            let last = i + 1 == n;
            self.record(cmd, &o, last);
            if !o.status.success() {
                status = o.status;
            }
            input = o.out;
        }
        status
    }

    fn record(&mut self, cmd: &Command, o: &Outcome, last: bool) {
        let t = &mut self.transcript;
        let words: Vec<String> = cmd.args.iter().map(|a| shell::quote(a)).collect();
        let redirs: Vec<String> = cmd.redirects.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(t, "$ {}{}{}", words.join(" "), if redirs.is_empty() { "" } else { " " }, redirs.join(" "));
        if let Some(p) = &o.program {
            let _ = writeln!(t, "# executed: {}", p.display());
        }
        if let Some(note) = &o.note {
            let _ = writeln!(t, "# error: {note}");
        }
        // A stage's stdout is shown when it is the pipeline's output or the stage failed.
        if !o.out.is_empty() && (last || !o.status.success()) {
            show(t, "stdout", &o.out);
        }
        if !o.err.is_empty() {
            show(t, "stderr", &o.err);
        }
        if !o.status.success() {
            match o.status.signal {
                Some(sig) => {
                    let _ = writeln!(t, "# error: command failed: killed by signal {sig}");
                }
                None => {
                    let _ = writeln!(t, "# error: command failed with exit status: {}", o.status.code);
                }
            }
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.cwd.join(p)
    }

    /// Runs a simple command with `input` as its stdin (unless redirected).
    fn run_command(&mut self, cmd: &Command, input: Vec<u8>, alone: bool) -> Outcome {
        // Redirections, applied left to right on descriptors 1 and 2.
        let mut stdin = input;
        let mut fds = [Sink::Out, Sink::Err];
        for r in &cmd.redirects {
            let fd = r.fd.unwrap_or(if r.op == RedirOp::Read { 0 } else { 1 });
            let open = |append: bool| -> io::Result<Sink> {
                let path = self.path(&r.target);
                let f =
                    if append { OpenOptions::new().create(true).append(true).open(path)? } else { File::create(path)? };
                Ok(Sink::File(Rc::new(f)))
            };
            let res: Result<(), String> = match (r.op, fd) {
                (RedirOp::Read, 0) => fs::read(self.path(&r.target)).map(|d| stdin = d).map_err(|e| e.to_string()),
                (RedirOp::Write | RedirOp::Append, 1 | 2) => {
                    open(r.op == RedirOp::Append).map(|s| fds[fd as usize - 1] = s).map_err(|e| e.to_string())
                }
                (RedirOp::Both, 1) => open(false).map(|s| fds = [s.clone(), s]).map_err(|e| e.to_string()),
                (RedirOp::Dup, 1 | 2) => match r.target.as_str() {
                    "1" | "2" => {
                        fds[fd as usize - 1] = fds[(r.target == "2") as usize].clone();
                        Ok(())
                    }
                    _ => Err(format!("unsupported redirection target '{}'", r.target)),
                },
                _ => Err(format!("unsupported redirection '{r}'")),
            };
            if let Err(e) = res {
                return Outcome::error(format!("redirection '{r}': {e}"));
            }
        }

        // `not`, `not --crash` and `env` prefixes, in any order.
        let mut args: &[String] = &cmd.args;
        let mut nots: Vec<bool> = Vec::new(); // true: `--crash`
        let mut env: Vec<(String, Option<String>)> = Vec::new();
        loop {
            match args.first().map(String::as_str) {
                Some("not") => {
                    args = &args[1..];
                    let crash = args.first().is_some_and(|a| a == "--crash");
                    if crash {
                        args = &args[1..];
                    }
                    nots.push(crash);
                }
                Some("env") => {
                    args = &args[1..];
                    loop {
                        match args.first().map(String::as_str) {
                            Some("-u") if args.len() > 1 => {
                                env.push((args[1].clone(), None));
                                args = &args[2..];
                            }
                            Some(a) if a.contains('=') && !a.starts_with('=') => {
                                let (k, v) = a.split_once('=').unwrap();
                                env.push((k.to_string(), Some(v.to_string())));
                                args = &args[1..];
                            }
                            _ => break,
                        }
                    }
                }
                _ => break,
            }
        }
        if args.is_empty() {
            return Outcome::error("missing command after `not`/`env`");
        }

        let mut o = match self.builtin(args, &stdin, alone) {
            Some(r) => {
                let (status, out, err) = r;
                let mut o = Outcome { status, out: Vec::new(), err: Vec::new(), note: None, program: None };
                for (sink, data) in [(&fds[0], out), (&fds[1], err)] {
                    let res = match sink {
                        Sink::Out => {
                            o.out.extend_from_slice(&data);
                            Ok(())
                        }
                        Sink::Err => {
                            o.err.extend_from_slice(&data);
                            Ok(())
                        }
                        Sink::File(f) => (&**f).write_all(&data),
                    };
                    if let Err(e) = res {
                        o.note = Some(format!("writing output: {e}"));
                        o.status = Status::exit(1);
                    }
                }
                o
            }
            None => self.external(args, stdin, &fds, &env),
        };
        for crash in nots.into_iter().rev() {
            let crashed = o.status.signal.is_some();
            let ok = if crash { crashed } else { !crashed && o.status.code != 0 };
            o.status = Status::exit(if ok { 0 } else { 1 });
        }
        o
    }

    /// Runs a built-in: `Some((status, stdout, stderr))`, or `None` if `args[0]` is not one.
    fn builtin(&mut self, args: &[String], stdin: &[u8], alone: bool) -> Option<(Status, Vec<u8>, Vec<u8>)> {
        let rest = &args[1..];
        let fail = |msg: String| (Status::exit(1), Vec::new(), format!("{}: {msg}\n", args[0]).into_bytes());
        Some(match args[0].as_str() {
            "true" | ":" => (Status::OK, Vec::new(), Vec::new()),
            "false" => (Status::exit(1), Vec::new(), Vec::new()),
            "echo" => (Status::OK, echo(rest), Vec::new()),
            "cat" => {
                let mut out = Vec::new();
                let files: Vec<&str> =
                    if rest.is_empty() { vec!["-"] } else { rest.iter().map(|s| s.as_str()).collect() };
                for f in files {
                    if f == "-" {
                        out.extend_from_slice(stdin);
                    } else {
                        match fs::read(self.path(f)) {
                            Ok(d) => out.extend_from_slice(&d),
                            Err(e) => return Some(fail(format!("{f}: {e}"))),
                        }
                    }
                }
                (Status::OK, out, Vec::new())
            }
            "diff" => self.diff(rest, stdin),
            "rm" => {
                let (flags, paths) = split_flags(rest);
                let recursive = flags.contains('r') || flags.contains('R');
                let force = flags.contains('f');
                for p in paths {
                    let path = self.path(p);
                    let res = match fs::symlink_metadata(&path) {
                        Err(_) if force => Ok(()),
                        Err(e) => Err(e),
                        Ok(m) if m.is_dir() && recursive => fs::remove_dir_all(&path),
                        Ok(m) if m.is_dir() => Err(io::Error::other("is a directory")),
                        Ok(_) => fs::remove_file(&path),
                    };
                    if let Err(e) = res {
                        return Some(fail(format!("{p}: {e}")));
                    }
                }
                (Status::OK, Vec::new(), Vec::new())
            }
            "mkdir" => {
                let (flags, paths) = split_flags(rest);
                for p in paths {
                    let path = self.path(p);
                    let res = if flags.contains('p') { fs::create_dir_all(&path) } else { fs::create_dir(&path) };
                    if let Err(e) = res {
                        return Some(fail(format!("{p}: {e}")));
                    }
                }
                (Status::OK, Vec::new(), Vec::new())
            }
            "cd" => {
                if !alone || rest.len() != 1 {
                    return Some(fail("'cd' must be a whole command with one argument".into()));
                }
                let dir = self.path(&rest[0]);
                if !dir.is_dir() {
                    return Some(fail(format!("{}: no such directory", rest[0])));
                }
                self.cwd = dir;
                (Status::OK, Vec::new(), Vec::new())
            }
            "export" => {
                for a in rest {
                    match a.split_once('=') {
                        Some((k, v)) => {
                            self.env.insert(k.to_string(), Some(v.to_string()));
                        }
                        None => return Some(fail(format!("'{a}': expected NAME=VALUE"))),
                    }
                }
                (Status::OK, Vec::new(), Vec::new())
            }
            _ => return None,
        })
    }

    /// `diff [-u] [-b] [-w] [--strip-trailing-cr] A B` (`-` reads stdin): exit 0 if equal, 1 if different
    /// (with a line diff on stdout), 2 on trouble.
    fn diff(&self, rest: &[String], stdin: &[u8]) -> (Status, Vec<u8>, Vec<u8>) {
        let trouble = |m: String| (Status::exit(2), Vec::new(), format!("diff: {m}\n").into_bytes());
        let (mut ignore_space_change, mut ignore_all_space, mut strip_cr) = (false, false, false);
        let mut files = Vec::new();
        for a in rest {
            match a.as_str() {
                "-u" | "-U0" | "-U1" | "-U2" | "-U3" => {}
                "-b" => ignore_space_change = true,
                "-w" => ignore_all_space = true,
                "--strip-trailing-cr" => strip_cr = true,
                f if f == "-" || !f.starts_with('-') => files.push(f),
                other => return trouble(format!("unsupported option '{other}'")),
            }
        }
        if files.len() != 2 {
            return trouble("expected two files".into());
        }
        let mut texts = Vec::new();
        for f in &files {
            let data = if *f == "-" { Ok(stdin.to_vec()) } else { fs::read(self.path(f)) };
            match data {
                Ok(d) => texts.push(String::from_utf8_lossy(&d).into_owned()),
                Err(e) => return trouble(format!("{f}: {e}")),
            }
        }
        let norm = |l: &str| -> String {
            let l = if strip_cr { l.strip_suffix('\r').unwrap_or(l) } else { l };
            if ignore_all_space {
                l.chars().filter(|c| !c.is_whitespace()).collect()
            } else if ignore_space_change {
                l.split_whitespace().collect::<Vec<_>>().join(" ")
            } else {
                l.to_string()
            }
        };
        let a: Vec<&str> = texts[0].lines().collect();
        let b: Vec<&str> = texts[1].lines().collect();
        let na: Vec<String> = a.iter().map(|l| norm(l)).collect();
        let nb: Vec<String> = b.iter().map(|l| norm(l)).collect();
        if na == nb {
            return (Status::OK, Vec::new(), Vec::new());
        }
        let mut out = format!("--- {}\n+++ {}\n", files[0], files[1]);
        for line in line_diff(&na, &nb, &a, &b) {
            out.push_str(&line);
            out.push('\n');
        }
        (Status::exit(1), out.into_bytes(), Vec::new())
    }

    /// Spawns an external program with stdout/stderr wired to `fds`, feeding it `stdin`.
    fn external(&self, args: &[String], stdin: Vec<u8>, fds: &[Sink; 2], env: &[(String, Option<String>)]) -> Outcome {
        let program = match (self.resolve)(&args[0]) {
            Some(p) => p,
            None if args[0].contains('/') => self.path(&args[0]),
            None => PathBuf::from(&args[0]),
        };
        match self.spawn(&program, args, stdin, fds, env) {
            Ok(mut o) => {
                if program.as_os_str() != args[0].as_str() {
                    o.program = Some(program);
                }
                o
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Outcome::error(format!("command not found: {} ({})", args[0], program.display()))
            }
            Err(e) => Outcome::error(format!("could not run {}: {e}", program.display())),
        }
    }

    fn spawn(
        &self,
        program: &Path,
        args: &[String],
        stdin: Vec<u8>,
        fds: &[Sink; 2],
        env: &[(String, Option<String>)],
    ) -> io::Result<Outcome> {
        let (mut out_r, out_w) = io::pipe()?;
        let (mut err_r, err_w) = io::pipe()?;
        let stdio = |s: &Sink| -> io::Result<Stdio> {
            Ok(match s {
                Sink::Out => out_w.try_clone()?.into(),
                Sink::Err => err_w.try_clone()?.into(),
                Sink::File(f) => f.try_clone()?.into(),
            })
        };
        let mut p = Process::new(program);
        p.args(&args[1..]).current_dir(&self.cwd).stdin(Stdio::piped()).stdout(stdio(&fds[0])?).stderr(stdio(&fds[1])?);
        for (k, v) in self.env.iter().map(|(k, v)| (k, v.as_ref())).chain(env.iter().map(|(k, v)| (k, v.as_ref()))) {
            match v {
                Some(v) => p.env(k, v),
                None => p.env_remove(k),
            };
        }
        let spawned = p.spawn();
        // Close this side's write ends, or the readers below would never see end of file.
        drop(p);
        drop(out_w);
        drop(err_w);
        let mut child = spawned?;
        let mut child_in = child.stdin.take();
        let mut timed_out = false;
        let (out, err, status) = std::thread::scope(|s| {
            s.spawn(move || {
                if let Some(w) = child_in.as_mut() {
                    let _ = w.write_all(&stdin); // a child that does not read its input is fine
                }
                drop(child_in);
            });
            let out = s.spawn(move || {
                let mut v = Vec::new();
                let _ = out_r.read_to_end(&mut v);
                v
            });
            let err = s.spawn(move || {
                let mut v = Vec::new();
                let _ = err_r.read_to_end(&mut v);
                v
            });
            let start = Instant::now();
            let mut pause = Duration::from_millis(1);
            let status = loop {
                match child.try_wait() {
                    Ok(Some(st)) => break Ok(st),
                    Ok(None) if start.elapsed() > self.timeout => {
                        timed_out = true;
                        let _ = child.kill();
                        break child.wait();
                    }
                    Ok(None) => {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_millis(20));
                    }
                    Err(e) => break Err(e),
                }
            };
            (out.join().unwrap_or_default(), err.join().unwrap_or_default(), status)
        });
        let status = status?;
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal: Option<i32> = None;
        let status = match (status.code(), signal) {
            (Some(c), _) => Status::exit(c),
            (None, Some(sig)) => Status { code: 128 + sig, signal: Some(sig) },
            (None, None) => Status::exit(1),
        };
        let note = timed_out.then(|| format!("timed out after {} s (TAP_LIT_TIMEOUT)", self.timeout.as_secs()));
        Ok(Outcome { status, out, err, note, program: None })
    }
}

/// lit's `echo`: `-n` drops the newline, `-e` interprets backslash escapes; other words are printed as they are.
fn echo(args: &[String]) -> Vec<u8> {
    let mut args = args;
    let (mut newline, mut escapes) = (true, false);
    while let Some(flag) = args.first().filter(|a| *a == "-n" || *a == "-e") {
        if flag == "-n" {
            newline = false;
        } else {
            escapes = true;
        }
        args = &args[1..];
    }
    let joined = args.join(" ");
    let mut out = if escapes { unescape(&joined) } else { joined.into_bytes() };
    if newline {
        out.push(b'\n');
    }
    out
}

/// Backslash escapes of `echo -e`: `\n \t \r \\ \a \b \f \v \0NNN \xHH`.
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'0' => {
                let end =
                    (i..b.len().min(i + 3)).find(|&j| !(b'0'..=b'7').contains(&b[j])).unwrap_or(b.len().min(i + 3));
                let v = b[i..end].iter().fold(0u32, |a, d| a * 8 + (d - b'0') as u32);
                out.push(v as u8);
                i = end;
            }
            b'x' => {
                let end = (i..b.len().min(i + 2)).find(|&j| !b[j].is_ascii_hexdigit()).unwrap_or(b.len().min(i + 2));
                if end == i {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(u8::from_str_radix(std::str::from_utf8(&b[i..end]).unwrap(), 16).unwrap());
                    i = end;
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    out
}

/// Splits `-rf`-style single-letter flags from operands.
fn split_flags(args: &[String]) -> (String, Vec<&str>) {
    let mut flags = String::new();
    let mut rest = Vec::new();
    for a in args {
        match a.strip_prefix('-') {
            Some(f) if !f.is_empty() && rest.is_empty() => flags.push_str(f),
            _ => rest.push(a.as_str()),
        }
    }
    (flags, rest)
}

/// A whole-file line diff (` `, `-`, `+` prefixes) from a longest common subsequence of the normalized lines;
/// inputs too large for the quadratic table are shown as a full replacement.
fn line_diff(na: &[String], nb: &[String], a: &[&str], b: &[&str]) -> Vec<String> {
    let (n, m) = (na.len(), nb.len());
    let mut out = Vec::new();
    if n.saturating_mul(m) > 4_000_000 {
        out.extend(a.iter().map(|l| format!("-{l}")));
        out.extend(b.iter().map(|l| format!("+{l}")));
        return out;
    }
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] =
                if na[i] == nb[j] { lcs[at(i + 1, j + 1)] + 1 } else { lcs[at(i + 1, j)].max(lcs[at(i, j + 1)]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && na[i] == nb[j] {
            out.push(format!(" {}", a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            out.push(format!("-{}", a[i]));
            i += 1;
        } else {
            out.push(format!("+{}", b[j]));
            j += 1;
        }
    }
    out
}

/// Appends a captured stream to a transcript, cut to `SHOW_LIMIT` bytes (keeping head and tail).
fn show(t: &mut String, what: &str, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = writeln!(t, "# .---command {what}------------");
    let body: String = if text.len() > SHOW_LIMIT {
        let head = floor_char(&text, SHOW_LIMIT * 3 / 4);
        let tail = ceil_char(&text, text.len() - SHOW_LIMIT / 4);
        format!("{}\n... [{} bytes cut] ...\n{}", &text[..head], tail - head, &text[tail..])
    } else {
        text.into_owned()
    };
    for l in body.lines() {
        let _ = writeln!(t, "# | {l}");
    }
    let _ = writeln!(t, "# `-----------------------------");
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}
