//! Hostile inputs, each generated at a size that broke an earlier version, run through the tools under a time and
//! an address-space limit: every run must end by itself with exit 0, or with exit 1 and a diagnostic that gives its
//! location. Never a crash, an abort or a hang. Each class from the hardening issue gets a case here as it is
//! fixed. `HOSTILE_REPORT=1 cargo test --release --test hostile_inputs -- --nocapture` prints each case's exit,
//! time and peak memory as a table row (the README's figures).

#![cfg(target_os = "linux")]

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tapestry::array::npy::with_header;

/// The longest a case may run (debug binaries, on a 2-core machine).
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// The address space a case may use.
const MEMORY_LIMIT: u64 = 1 << 30;

/// What a case must end with.
enum Expect {
    /// Exit 0.
    Success,
    /// Exit 1 and standard error containing this text.
    Error(&'static str),
    /// This exit code (FileCheck's 2 for a bad check file) and standard error containing this text.
    Status(i32, &'static str),
}

/// A case: its name, the tool, the files it needs (name, contents) in a fresh folder, its arguments (file names
/// relative to that folder), and what it must end with.
struct Case {
    name: &'static str,
    tool: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<String>,
    expect: Expect,
}

/// A graph reading one source `x` of this type and sinking its negation.
fn graph_of(t: &str) -> Vec<u8> {
    format!(
        "teg.graph @g {{\n  %x = teg.source @x : {t}\n  %y = teg.neg %x : {t}\n  %s = teg.sink @y %y : {t} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    )
    .into_bytes()
}

/// A chain of 100k aliases: `first`, then `line(i)` for i = 1..=100000, then `last`.
fn alias_chain(first: &str, line: impl Fn(usize) -> String, last: &str) -> Vec<u8> {
    let mut text = String::from(first);
    (1..=100_000).for_each(|i| text += &line(i));
    (text + last).into_bytes()
}

/// A case of tap-opt on one file: its name and text, the options after the file name, and the outcome.
fn opt(name: &'static str, (file, text): (&'static str, Vec<u8>), options: &[&str], expect: Expect) -> Case {
    let args = std::iter::once(file).chain(options.iter().copied()).map(String::from).collect();
    Case { name, tool: env!("CARGO_BIN_EXE_tap-opt"), files: vec![(file, text)], args, expect }
}

fn cases() -> Vec<Case> {
    let mut bad_utf8 = b"teg.graph @g {\n  %x = teg.source @x ".to_vec();
    bad_utf8.extend([0xff, 0xfe]);
    bad_utf8.extend(b" : !teg.tensor<[n=2] x f32>\n}\n");
    let nested_header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {}(){}, }}", "[".repeat(24), "]".repeat(24));
    let tuples_header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {}2{}, }}", "(".repeat(5000), ",)".repeat(5000));
    // 16 MiB of i8 in Fortran order, reordered without an index vector (which took 8 bytes per cell).
    let fortran = with_header("{'descr': '|i1', 'fortran_order': True, 'shape': (4096, 4096), }", &vec![1u8; 1 << 24]);
    let t = "!teg.tensor<[a=4096, b=4096] x i8>";
    let corner = format!(
        "teg.graph @g {{\n  %x = teg.source @x : {t}\n  %y = teg.select %x along \"a\" at 0 : {t} -> !teg.tensor<[b=4096] x i8>\n  %s = teg.sink @y %y : !teg.tensor<[b=4096] x i8> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let sinks = 50_000;
    // Knowledge per semaphore made canonicalize quadratic in time and memory (1.15 GB here at 12k).
    let semaphores = {
        let mut t = String::from("npu.kernel @k(%a: !npu.buf<hbm, 64 x f32>) {\n");
        (0..12_000).for_each(|i| t += &format!("  %s{i} = npu.semaphore\n"));
        for i in 0..12_000 {
            let wait = if i > 0 { format!("waits(%s{} = 1) ", i - 1) } else { String::new() };
            t += &format!(
                "  npu.dma queue(dma{q}) {wait}src(%a, base 0) dst(dm[0, {q}], base 0) loops [] packet 256 : f32 signals(%s{i} = 1)\n",
                q = i % 2
            );
        }
        t + "}\n"
    };
    // Each contraction walked the whole chain of permutes in front of its weight (9.4 s here at 4k, so 12k would take minutes).
    let permutes = {
        let (kn, nk) = ("!teg.tensor<[k=8, n=8] x f32>", "!teg.tensor<[n=8, k=8] x f32>");
        let mut t = format!(
            "teg.graph @g {{\n  %x = teg.source @x : !teg.tensor<[m=4, k=8] x f32>\n  %p0 = teg.source @w : {kn}\n"
        );
        for i in 1..=12_000 {
            let (from, to, order) = if i % 2 == 1 { (kn, nk, "\"n\", \"k\"") } else { (nk, kn, "\"k\", \"n\"") };
            t += &format!("  %p{i} = teg.permute %p{} to [{order}] : {from} -> {to}\n", i - 1);
            t += &format!(
                "  %y{i} = teg.contract %x, %p{i} : !teg.tensor<[m=4, k=8] x f32>, {to} -> !teg.tensor<[m=4, n=8] x f32>\n"
            );
            t += &format!("  %s{i} = teg.sink @y{i} %y{i} : !teg.tensor<[m=4, n=8] x f32> -> !teg.token\n");
        }
        let tokens: Vec<String> = (1..=12_000).map(|i| format!("%s{i}")).collect();
        t + &format!("  teg.sequence_point {} : {}\n}}\n", tokens.join(", "), vec!["!teg.token"; 12_000].join(", "))
    };
    let mut many_sinks = String::from("teg.graph @g {\n  %x = teg.zeros : !teg.tensor<[n=2] x f32>\n");
    for i in 0..sinks {
        many_sinks += &format!("  %s{i} = teg.sink @y{i} %x : !teg.tensor<[n=2] x f32> -> !teg.token\n");
    }
    let tokens: Vec<String> = (0..sinks).map(|i| format!("%s{i}")).collect();
    many_sinks +=
        &format!("  teg.sequence_point {} : {}\n}}\n", tokens.join(", "), vec!["!teg.token"; sinks].join(", "));
    let mut blocks = String::from("teg.graph @g {\n  %x = teg.source @x : !teg.tensor<[n=1048576] x f32>\n");
    for k in 0..40 {
        blocks += &format!(
            "  %y{k} = teg.block @flat{k} %x over [\"i\", \"j\"] [1024, 1024] maps [affine_map<(i, j) -> (i * 1024 + j)>, affine_map<(i, j) -> (i * 1024 + j)>] boxes [[1], [1]] : !teg.tensor<[n=1048576] x f32> -> !teg.tensor<[n=1048576] x f32> {{\n  ^bb0(%a: !teg.tensor<[n=1] x f32>):\n    %b = teg.neg %a : !teg.tensor<[n=1] x f32>\n    teg.yield %b : !teg.tensor<[n=1] x f32>\n  }}\n"
        );
    }
    blocks += "}\n";
    let names: Vec<String> = (0..70_000).map(|i| format!("%u{i}")).collect();
    let undefined = format!(
        "func.func @f() {{\n  \"foo.bar\"({}) : ({}) -> ()\n  func.return\n}}\n",
        names.join(", "),
        vec!["i32"; names.len()].join(", ")
    );
    let expectations = format!(
        "func.func @f() {{\n{}  \"foo.bar\"(%u0) : (i32) -> ()\n  func.return\n}}\n",
        "  // expected-error @below {{use of undeclared SSA value name}}\n".repeat(30_000)
    );
    let deep = format!("builtin.module({}cse{})", "func.func(".repeat(8000), ")".repeat(8000));
    let keys: Vec<String> = (0..200_000).map(|i| format!("k{i} = {i}")).collect();
    let dictionary = format!("func.func @f() attributes {{{}}} {{\n  func.return\n}}\n", keys.join(", "));
    let mut chain = String::from("func.func @f(%a: i32) {\n  \"t.br\"()[^b1] : () -> ()\n");
    for i in 1..50_000 {
        chain += &format!("^b{i}:\n  \"t.use\"(%a) : (i32) -> ()\n  \"t.br\"()[^b{}] : () -> ()\n", i + 1);
    }
    chain += "^b50000:\n  func.return\n}\n";
    let body = "  ^bb0(%a: !teg.tensor<[n=2] x f32>):\n    %b = teg.neg %a : !teg.tensor<[n=2] x f32>\n    %c = teg.abs %b : !teg.tensor<[n=2] x f32>\n    %d = teg.exp %c : !teg.tensor<[n=2] x f32>\n    %e = teg.mul %d, %c : !teg.tensor<[n=2] x f32>\n    %f = teg.reduce %e along [\"n\"] by \"sum\" : !teg.tensor<[n=2] x f32> -> !teg.tensor<[] x f32>\n    %g = teg.unsqueeze %f as \"n\" at 0 : !teg.tensor<[] x f32> -> !teg.tensor<[n=1] x f32>\n    teg.yield %g : !teg.tensor<[n=1] x f32>\n";
    let big_block = format!(
        "teg.graph @g {{\n  %x = teg.zeros : !teg.tensor<[n=33554432] x f32>\n  %y = teg.block @b %x over [\"i\"] [16777216] maps [affine_map<(i) -> (i * 2)>, affine_map<(i) -> (i)>] boxes [[2], [1]] : !teg.tensor<[n=33554432] x f32> -> !teg.tensor<[n=16777216] x f32> {{\n{body}  }}\n  %s = teg.sink @y %y : !teg.tensor<[n=16777216] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let mut loc_chain = String::from("\"test.op\"() : () -> () loc(#a0)\n");
    for i in 0..100_000 {
        loc_chain += &format!("#a{i} = loc(#a{})\n", i + 1);
    }
    loc_chain += "#a100000 = loc(\"x.c\":1:2)\n";
    let affine = |expr: String| format!("\"t.op\"() {{m = affine_map<(d0) -> ({expr})>}} : () -> ()\n").into_bytes();
    let product = vec![format!("d0{}", " * 2".repeat(20_000)); 16].join(", ");
    let mut products = String::from("func.func @f() -> !layout.layout {\n  %a0 = layout.constant #layout.cute<1:0>\n");
    for i in 1..25 {
        products += &format!("  %a{i} = layout.logical_product %a{}, %a{}\n", i - 1, i - 1);
    }
    products += "  func.return %a24 : !layout.layout\n}\n";
    let mut folds = String::from("%y0 = layout.constant #layout.cute<2:1>\n%n = layout.constant #layout.cute<1:1>\n");
    (1..=300).for_each(|i| folds += &format!("%y{i} = layout.logical_product %y{}, %n\n", i - 1));
    folds += "\"test.u\"(%y300) : (!layout.layout) -> ()\n";
    let cute =
        format!("%x = \"t.op\"() {{l = #layout.cute<{}4{}:1>}} : () -> ()\n", "(".repeat(60_000), ")".repeat(60_000));
    let tuples = format!("%x = \"t.op\"() : () -> {}i32{}\n", "tuple<".repeat(100_000), ">".repeat(100_000));
    let type_chain =
        alias_chain("!t0 = i32\n", |i| format!("!t{i} = tuple<!t{}>\n", i - 1), "\"t.op\"() : () -> !t100000\n");
    let attr_chain = alias_chain(
        "#a0 = 1\n",
        |i| format!("#a{i} = {{k = [#a{}]}}\n", i - 1),
        "\"t.op\"() {x = #a100000} : () -> ()\n",
    );
    let fn_chain =
        alias_chain("!t0 = i32\n", |i| format!("!t{i} = (!t{}) -> ()\n", i - 1), "\"t.op\"() : () -> !t100000\n");
    let callsites = alias_chain(
        "#l0 = loc(\"x\":1:1)\n",
        |i| format!("#l{i} = loc(callsite(#l{} at \"y\":1:1))\n", i - 1),
        "\"t.op\"() : () -> () loc(#l100000)\n",
    );
    let laughs = |first: &str, line: fn(usize) -> String, levels: usize, last: &str| {
        let mut text = String::from(first);
        (1..=levels).for_each(|i| text += &line(i));
        text + last
    };
    let attr_laughs = laughs(
        "#a0 = [1]\n",
        |i| format!("#a{i} = [#a{}, #a{}]\n", i - 1, i - 1),
        40,
        "\"t.op\"() {x = #a40} : () -> ()\n",
    );
    let type_laughs = laughs(
        "!t0 = i32\n",
        |i| format!("!t{i} = tuple<!t{}, !t{}>\n", i - 1, i - 1),
        23,
        &"\"t.op\"() : () -> !t23\n".repeat(3),
    );
    let loc_laughs = laughs(
        "#l0 = loc(\"x\":1:1)\n",
        |i| format!("#l{i} = loc(fused[#l{}, #l{}])\n", i - 1, i - 1),
        23,
        &"\"t.op\"() : () -> () loc(#l23)\n".repeat(3),
    );
    let unknown_laughs = laughs(
        "#l0 = loc(unknown)\n",
        |i| format!("#l{i} = loc(fused[#l{}, #l{}])\n", i - 1, i - 1),
        23,
        &"func.return loc(#l23)\n".repeat(50),
    );
    let shared = laughs(
        "#a0 = [@f, #layout.cute<2:1>]\n",
        |i| format!("#a{i} = [#a{}, #a{}]\n", i - 1, i - 1),
        21,
        &format!("func.func private @f() {{\n  func.return\n}}\n{}", "\"t.op\"() {x = #a21} : () -> ()\n".repeat(20)),
    );
    let layout = |attr: String| format!("\"t.op\"() {{x = {attr}}} : () -> ()\n").into_bytes();
    let furiosa_items = layout(format!("#layout.furiosa<axes[A = 2], m[{}A]>", "1, ".repeat(10_000)));
    let furiosa_resizes = layout(format!("#layout.furiosa<axes[A = 2], m[A{}]>", " = 2".repeat(2000)));
    let escapes: String = (1..=20).map(|i| format!(", L{i} = m[{{L{}}}, {{L{}}}]", i - 1, i - 1)).collect();
    let furiosa_laughs = layout(format!("#layout.furiosa<axes[A = 1], L0 = m[A]{escapes}, m[{{L20}}]>"));
    let axes: Vec<String> = (0..10_000).map(|i| format!("A{i} = 1")).collect();
    let names: Vec<String> = (0..10_000).map(|i| format!("A{i}")).collect();
    let furiosa_axes = layout(format!("#layout.furiosa<axes[{}], m[{}]>", axes.join(", "), names.join(", ")));
    let stages: Vec<&str> = (0..100)
        .map(|i| match i % 2 {
            0 => "transform(unmerge([2048, 2048]) [0] -> [0, 1])",
            _ => "transform(merge([2048, 2048]) [0, 1] -> [0])",
        })
        .collect();
    let ck_stages = layout(format!("#layout.ck<packed([4194304]), {}>", stages.join(", ")));
    let xla = "#layout.xla<f32[2048,2048]{1,0:T(2,2)(*,3)}>";
    let xla_uses: String = (0..40).map(|i| format!("\"t.op\"() {{x = {xla}, i = {i}}} : () -> ()\n")).collect();
    let xla_dims = layout(format!("#layout.xla<f32[{}1]{{0}}>", "1,".repeat(200_000)));
    let ones = vec!["1"; 150_000].join(", ");
    let ck_naive = layout(format!("#layout.ck<naive([{ones}], [{ones}])>"));
    let filecheck = |name: &'static str, check: String, input: String, expect: Expect| Case {
        name,
        tool: env!("CARGO_BIN_EXE_tap-filecheck"),
        files: vec![("check.txt", check.into_bytes()), ("input.txt", input.into_bytes())],
        args: ["check.txt", "--input-file", "input.txt"].map(String::from).to_vec(),
        expect,
    };
    let nested =
        |open: &str, close: &str, n: usize, inner: &str| format!("{}{inner}{}", open.repeat(n), close.repeat(n));
    let filecheck_cases = vec![
        filecheck(
            "60k nested regex parentheses",
            format!("// CHECK: {{{{{}}}}}\n", nested("(", ")", 60_000, "a")),
            "a\n".into(),
            Expect::Status(2, "check.txt:1:13: error: invalid regex: parentheses nest too deep (more than 256 levels)"),
        ),
        filecheck(
            "30k nested alternations",
            format!("// CHECK: {{{{{}}}}}\n", nested("(a|", ")", 30_000, "b")),
            "b\n".into(),
            Expect::Status(2, "error: invalid regex: parentheses nest too deep"),
        ),
        filecheck(
            "30k parentheses in a numeric expression",
            format!("// CHECK: [[#{}]]\n", nested("(", ")", 30_000, "1")),
            "1\n".into(),
            Expect::Status(2, "error: expression is too complex (more than 256 operators)"),
        ),
        filecheck(
            "a numeric expression of 100k terms",
            format!("// CHECK: [[#{}]]\n", vec!["1"; 100_000].join("+")),
            "100000\n".into(),
            Expect::Status(2, "error: expression is too complex (more than 256 operators)"),
        ),
        filecheck(
            "100k uses of a 1000-byte variable on one line",
            format!("// CHECK: [[X:.*]]\n// CHECK: {}\n", "[[X]]".repeat(100_000)),
            format!("{}\n{}\n", "a".repeat(1000), "a".repeat(1000)),
            Expect::Error("check.txt:2:11: error: the pattern is longer than 1048576 bytes after substitution"),
        ),
        filecheck(
            "{{a? x 5000, a x 5000}}",
            format!("// CHECK: {{{{{}{}}}}}\n", "a?".repeat(5000), "a".repeat(5000)),
            format!("{}\n", "a".repeat(5000)),
            Expect::Error("check.txt:1:11: error: matching this regex takes more than 2097152 steps"),
        ),
        filecheck(
            "35k variable definitions on one line",
            format!("// CHECK: {}\n", (0..35_000).map(|i| format!("[[V{i}:a]]")).collect::<String>()),
            format!("{}\n", "a".repeat(35_000)),
            Expect::Error("error: after substitution: regex is too large (more than 16384 atoms)"),
        ),
        filecheck(
            "{{(ab)+c}} on a line of 100k bytes",
            "// CHECK: {{(ab)+c}}\n".into(),
            format!("{}c\n", "ab".repeat(50_000)),
            Expect::Success,
        ),
        filecheck(
            "a back-reference over 200k bytes",
            "// CHECK: {{(a*)\\1b}}\n".into(),
            format!("{}b\n", "a".repeat(200_000)),
            Expect::Error("check.txt:1:11: error: matching this regex"),
        ),
        filecheck(
            "300 CHECK-NOT literals of different lengths over 1 MB",
            format!(
                "// CHECK: start\n{}// CHECK: end\n",
                (1..=300).map(|k| format!("// CHECK-NOT: {}\n", "x".repeat(k))).collect::<String>()
            ),
            format!("start\n{}end\n", format!("{}\n", "a".repeat(1000)).repeat(1000)),
            Expect::Success,
        ),
        filecheck(
            "20k CHECK-DAG lines",
            (0..20_000).map(|i| format!("// CHECK-DAG: x{i}:\n")).collect(),
            (0..20_000).rev().map(|i| format!("x{i}:\n")).collect(),
            Expect::Success,
        ),
        filecheck(
            "20k CHECK-NOT lines",
            format!(
                "// CHECK: start\n{}// CHECK: end\n",
                (0..20_000).map(|i| format!("// CHECK-NOT: y{i}\n")).collect::<String>()
            ),
            format!("start\n{}end\n", (0..20_000).map(|i| format!("x{i}\n")).collect::<String>()),
            Expect::Success,
        ),
    ];
    vec![
        opt("100k chained type aliases", ("types.tap", type_chain), &["--allow-unregistered-dialect"], Expect::Error("types.tap:257:1: error: alias nests 257 levels deep (at most 256)")),
        opt("100k chained attribute aliases (dictionaries of arrays)", ("attrs.tap", attr_chain), &["--allow-unregistered-dialect"], Expect::Error("attrs.tap:129:1: error: alias nests 258 levels deep (at most 256)")),
        opt("100k chained function type aliases", ("fns.tap", fn_chain), &["--allow-unregistered-dialect"], Expect::Error("fns.tap:257:1: error: alias nests 257 levels deep (at most 256)")),
        opt("100k chained call-site location aliases", ("locs.tap", callsites), &["--allow-unregistered-dialect", "--print-debuginfo"], Expect::Error("locs.tap:257:1: error: alias nests 257 levels deep (at most 256)")),
        opt("40 attribute aliases each using the previous one twice", ("laughs.tap", attr_laughs.into_bytes()), &["--allow-unregistered-dialect"], Expect::Error("laughs.tap:24:1: error: alias expands to 33554431 nodes (at most 16777216)")),
        opt("a type of 2^24 nodes through 23 doubling aliases, used 3 times", ("laughs.tap", type_laughs.into_bytes()), &["--allow-unregistered-dialect"], Expect::Success),
        opt("a location of 2^24 nodes through 23 doubling aliases, used 3 times, printed", ("laughs.tap", loc_laughs.into_bytes()), &["--allow-unregistered-dialect", "--print-debuginfo"], Expect::Success),
        opt(
            "50 errors at a location of 2^24 unknown locations",
            ("unknown.tap", unknown_laughs.into_bytes()),
            &[],
            Expect::Error("<unknown>:0: error: 'func.return' op expects parent op 'func.func'"),
        ),
        opt(
            "symbol-dce and layout-print over 20 uses of an attribute of 2^23 nodes",
            ("shared.tap", shared.into_bytes()),
            &["--allow-unregistered-dialect", "-p", "builtin.module(symbol-dce, layout-print)"],
            Expect::Success,
        ),
        opt("a Furiosa mapping of 10k items", ("furiosa.tap", furiosa_items), &["--allow-unregistered-dialect"], Expect::Error("error: layout is too long (more than 4096 tokens)")),
        opt("a Furiosa mapping of 2000 resizes in a row, printed as tables", ("furiosa.tap", furiosa_resizes), &["--allow-unregistered-dialect", "-p", "builtin.module(layout-print)"], Expect::Success),
        opt("Furiosa escapes doubling 20 times, printed as tables", ("furiosa.tap", furiosa_laughs), &["--allow-unregistered-dialect", "-p", "builtin.module(layout-print{format=table})"], Expect::Error("error: the mapping expands to more than 4096 nodes through its escapes")),
        opt("a Furiosa layout of 10k axes", ("furiosa.tap", furiosa_axes), &["--allow-unregistered-dialect"], Expect::Error("error: layout is too long (more than 4096 tokens)")),
        opt("a CK descriptor of 4M elements through 100 stages, printed as tables", ("ck.tap", ck_stages), &["--allow-unregistered-dialect", "-p", "builtin.module(layout-print{format=table})"], Expect::Error("4194304 elements are more than the limit of 1048576")),
        opt("an XLA layout with no strided form used 40 times", ("xla.tap", xla_uses.into_bytes()), &["--allow-unregistered-dialect"], Expect::Success),
        opt("an XLA shape of 200k dimensions", ("xla.tap", xla_dims), &["--allow-unregistered-dialect"], Expect::Error("error: layout is too long (more than 4096 tokens)")),
        opt("a CK naive descriptor of 150k dimensions", ("ck.tap", ck_naive), &["--allow-unregistered-dialect"], Expect::Error("error: layout is too long (more than 4096 tokens)")),
        opt("100k nested tuple< types", ("tuples.tap", tuples.into_bytes()), &["--allow-unregistered-dialect"], Expect::Error("tuples.tap:1:1564: error: nesting is too deep (more than 256 levels of brackets)")),
        Case {
            name: "CHECK-COUNT-1000000000 of a pattern that matches empty",
            tool: env!("CARGO_BIN_EXE_tap-filecheck"),
            files: vec![
                ("check.txt", b"// CHECK-COUNT-1000000000: {{.*}}\n".to_vec()),
                ("input.txt", b"hello\n".to_vec()),
            ],
            args: ["check.txt", "--input-file", "input.txt"].map(String::from).to_vec(),
            expect: Expect::Success,
        },
        Case {
            name: "a numeric precision of 2^32",
            tool: env!("CARGO_BIN_EXE_tap-filecheck"),
            files: vec![("check.txt", b"// CHECK: [[#%.4294967296d,5]]\n".to_vec()), ("input.txt", b"5\n".to_vec())],
            args: ["check.txt", "--input-file", "input.txt"].map(String::from).to_vec(),
            expect: Expect::Status(2, "check.txt:1:16: error: precision in format specifier is larger than 1024"),
        },
        opt("60k nested parentheses inside #layout.cute<...>", ("cute.tap", cute.into_bytes()), &["--allow-unregistered-dialect"], Expect::Error("cute.tap:1:20: error: nesting is too deep (more than 256 levels of brackets)")),
        opt("logical_product of a size-1 layout with itself, 24 times, canonicalized", ("products.tap", products.into_bytes()), &["--canonicalize"], Expect::Error(
                "products.tap:15:3: error: 'layout.logical_product' op logical_product of layouts with 8192 modes",
            )),
        opt("300 logical_products that each nest one level deeper, canonicalized", ("folds.tap", folds.into_bytes()), &["--allow-unregistered-dialect", "--canonicalize"], Expect::Error("folds.tap:67:1: error: 'layout.logical_product' op logical_product makes a layout nested 65 levels deep")),
        Case {
            name: "an affine expression of 30k terms without brackets",
            tool: env!("CARGO_BIN_EXE_tap-opt"),
            files: vec![("affine.tap", affine(vec!["d0"; 30_000].join(" + ")))],
            args: ["affine.tap", "--allow-unregistered-dialect"].map(String::from).to_vec(),
            expect: Expect::Error("affine.tap:1:35: error: affine expression nests deeper than 1000 operators"),
        },
        opt("an affine expression of 30k unary minus signs", ("affine.tap", affine(format!("{}d0", "-".repeat(30_000)))), &["--allow-unregistered-dialect"], Expect::Error("error: affine expression nests deeper than 1000 operators")),
        opt("16 affine results of 20k factors each", ("affine.tap", affine(product)), &["--allow-unregistered-dialect"], Expect::Error("error: affine expression nests deeper than 1000 operators")),
        opt("a chain of 100k location aliases, each used before its definition", ("locs.tap", loc_chain.into_bytes()), &["--allow-unregistered-dialect", "--print-debuginfo", "-o", "/dev/null"], Expect::Success),
        Case {
            name: "a user block of 2^24 points with a body of 7 ops",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("block.tap", big_block.into_bytes())],
            args: ["block.tap", "--print"].map(String::from).to_vec(),
            expect: Expect::Error("block.tap:3:3: error: the body runs op by op at each of the 16777216 index points"),
        },
        opt("50k chained blocks using the entry's value", ("chain.tap", chain.into_bytes()), &["--allow-unregistered-dialect", "-o", "/dev/null"], Expect::Success),
        opt("a dictionary of 200k keys", ("dict.tap", dictionary.into_bytes()), &["-o", "/dev/null"], Expect::Success),
        Case {
            name: "a pass pipeline nested 8000 deep",
            tool: env!("CARGO_BIN_EXE_tap-opt"),
            files: vec![("empty.tap", Vec::new())],
            args: vec!["empty.tap".into(), "-p".into(), deep],
            expect: Expect::Error("error: pass pipelines nest at most 64 deep"),
        },
        opt("30k expected-error @below lines", ("expected.tap", expectations.into_bytes()), &["--allow-unregistered-dialect", "--verify-diagnostics"], Expect::Error("expected error \"use of undeclared SSA value name\" was not produced")),
        opt("70k undefined names on one line", ("undefined.tap", undefined.into_bytes()), &["--allow-unregistered-dialect"], Expect::Error("undefined.tap:2:13: error: use of undeclared SSA value name")),
        opt("a kernel of 12k semaphores, each waited once, canonicalized", ("sems.tap", semaphores.into_bytes()), &["-p", "builtin.module(canonicalize)", "-o", "/dev/null"], Expect::Success),
        opt("12k chained permutes, each the weight of a contraction, laid out", ("permutes.tap", permutes.into_bytes()), &["-p", "builtin.module(resolve-layouts)", "-o", "/dev/null"], Expect::Success),
        opt("40 user blocks of 2^20 points whose output two index dimensions move", ("blocks.tap", blocks.into_bytes()), &["-o", "/dev/null"], Expect::Success),
        Case {
            name: "50k sinks of one value, timed",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("sinks.tap", many_sinks.into_bytes())],
            args: ["sinks.tap", "--print", "--timing"].map(String::from).to_vec(),
            expect: Expect::Success,
        },
        opt("invalid UTF-8 (tap-opt)", ("bad.tap", bad_utf8.clone()), &[], Expect::Error("bad.tap:2:22: error: input is not valid UTF-8 (byte 0xff at offset 36)")),
        Case {
            name: "invalid UTF-8 (tap-run)",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("bad.tap", bad_utf8)],
            args: ["bad.tap", "--print"].map(String::from).to_vec(),
            expect: Expect::Error("bad.tap:2:22: error: input is not valid UTF-8"),
        },
        Case {
            name: ".npy header of 24 nested lists",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("g.tap", graph_of("!teg.tensor<[n=2] x f32>")), ("x.npy", with_header(&nested_header, &[]))],
            args: ["g.tap", "--input", "x=x.npy", "--print"].map(String::from).to_vec(),
            expect: Expect::Error("brackets nest deeper than 4"),
        },
        Case {
            name: ".npy header of 5000 nested tuples",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("g.tap", graph_of("!teg.tensor<[n=2] x f32>")), ("x.npy", with_header(&tuples_header, &[]))],
            args: ["g.tap", "--input", "x=x.npy", "--print"].map(String::from).to_vec(),
            expect: Expect::Error("header is"),
        },
        Case {
            name: "a 16 MiB Fortran-order .npy",
            tool: env!("CARGO_BIN_EXE_tap-run"),
            files: vec![("g.tap", corner.into_bytes()), ("x.npy", fortran)],
            args: ["g.tap", "--input", "x=x.npy", "--print"].map(String::from).to_vec(),
            expect: Expect::Success,
        },
    ]
    .into_iter()
    .chain(filecheck_cases)
    .collect()
}

/// How a run ended: its exit code (`None` when killed), standard error, time and peak resident memory (which
/// includes the few MiB of this process that a forked child shares before it execs).
struct Outcome {
    code: Option<i32>,
    stderr: String,
    took: Duration,
    peak_kib: i64,
}

/// Writes the files of `case` into a fresh folder `dir` and drops their contents.
fn write_files(case: &mut Case, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in std::mem::take(&mut case.files) {
        std::fs::File::create(dir.join(name)).and_then(|mut f| f.write_all(&bytes)).unwrap();
    }
}

/// Runs `case` in `dir` (its files written there) under the limits.
fn run(case: &Case, dir: &Path) -> Outcome {
    let mut cmd = Command::new(case.tool);
    cmd.args(&case.args).current_dir(dir).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: MEMORY_LIMIT, rlim_max: MEMORY_LIMIT };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let start = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let mut child = cmd.spawn().unwrap();
    // Standard error is read as it comes, so that a long report cannot fill the pipe and stall the tool.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut pipe, &mut text).ok();
        text
    });
    // The child is reaped with wait4, which also gives its peak resident memory.
    let pid = child.id() as libc::pid_t;
    let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    loop {
        // SAFETY: plain system call on our own child, with valid pointers.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().ok();
            // SAFETY: as above, blocking until the killed child is gone.
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Outcome { code, stderr, took, peak_kib: usage.ru_maxrss }
}

#[test]
fn hostile_inputs_end_in_time_with_a_located_diagnostic() {
    let root: PathBuf = std::env::temp_dir().join(format!("tap-hostile-{}", std::process::id()));
    let dir_of = |case: &Case| root.join(case.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
    // Every case's files are written, and their text freed, before any tool runs: a child forked from this
    // process counts the pages it shares with it in its peak memory until it execs.
    let mut cases = cases();
    for case in &mut cases {
        write_files(case, &dir_of(case));
    }
    // SAFETY: returns freed heap pages to the system; no allocation is live across it that it could touch.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
    let mut failures = Vec::new();
    for case in cases {
        let dir = dir_of(&case);
        let Outcome { code, stderr, took, peak_kib } = run(&case, &dir);
        if std::env::var_os("HOSTILE_REPORT").is_some() {
            let tool = Path::new(case.tool).file_name().unwrap().to_string_lossy();
            println!("| {} | {tool} | {code:?} | {:.2} s | {} MiB |", case.name, took.as_secs_f64(), peak_kib / 1024);
        }
        let ok = match &case.expect {
            Expect::Success => code == Some(0),
            Expect::Error(text) => code == Some(1) && stderr.contains(text),
            Expect::Status(want, text) => code == Some(*want) && stderr.contains(text),
        };
        if !ok || took > TIME_LIMIT {
            failures.push(format!("{}: exit {code:?} after {took:?}\n{stderr}", case.name));
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    std::fs::remove_dir_all(&root).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
