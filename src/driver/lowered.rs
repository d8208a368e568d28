//! Running a lowered graph: an `npu.kernel` whose `npu.tensors` attribute says which of the graph's sources or
//! sinks each buffer holds, in which layout (`convert-teg-to-npu` writes it). The harness writes each named
//! input into its buffer's layout (padding zero, `i1` as `i8`), runs the kernel on the interpreter, and reads
//! each sink back out of its buffer; [`compare`] checks the sinks against the reference evaluator's.

use crate::array::{Array, DType, Data};
use crate::dialects::npu::interp::{run_kernel, Run};
use crate::dialects::npu::ops::kernel::TENSORS_ATTR;
use crate::dialects::npu::types::{as_buf, elem_name};
use crate::dialects::teg::eval::{evaluate, Values};
use crate::interfaces::layout::layout_of;
use crate::ir::symbols::symbol_name;
use crate::ir::{Attr, AttrId, Context, OpId};
use crate::layout::table::Order;
use crate::map_data;
use crate::passes::convert_teg_to_npu::{npu_elem, AFTER_ATTR, HOST_ATTR};
use indexmap::IndexMap;

/// Relative and absolute tolerance of `--check` for `f32` sinks, normwise: every cell within
/// `ATOL + RTOL · max |reference|` (the sink's largest magnitude). Normwise, because a lowered reduction sums in
/// another order (and in f32, where the reference sums in f64): its error grows with what it sums, not with its
/// result, which may be near 0.
pub const F32_TOLERANCE: (f64, f64) = (1e-4, 1e-6);
/// The same for `bf16` (8 bits of mantissa).
pub const BF16_TOLERANCE: (f64, f64) = (1e-2, 1e-2);

/// One argument of a lowered kernel as the harness sees it.
#[derive(Clone, Debug)]
pub struct Binding {
    /// `source`, `sink` or `scratch`.
    pub role: String,
    /// The source or sink name.
    pub name: String,
    /// The tensor's shape and element type.
    pub shape: Vec<u64>,
    /// Its element type.
    pub dtype: DType,
    /// The buffer offset of each element, in row-major order.
    pub offsets: Vec<usize>,
}

/// The bindings of `kernel`'s arguments, or `None` when it has no `npu.tensors` (a kernel written by hand).
pub fn bindings(ctx: &Context, kernel: OpId) -> Result<Option<Vec<Binding>>, String> {
    let Some(attr) = ctx.op_attr(kernel, TENSORS_ATTR) else { return Ok(None) };
    let Attr::Array(items) = ctx.attr_data(attr) else { return Err(format!("'{TENSORS_ATTR}' must be a list")) };
    let bindings = items.iter().map(|&item| binding(ctx, item)).collect::<Result<Vec<_>, _>>()?;
    check_against(ctx, kernel, &bindings)?;
    Ok(Some(bindings))
}

/// Checks `bindings` against the kernel's buffers: one entry per argument, each source or sink named once per role,
/// of the buffer's element type, its layout placing every element once inside the buffer.
fn check_against(ctx: &Context, kernel: OpId, bindings: &[Binding]) -> Result<(), String> {
    let block = ctx.body.region(ctx.body.regions(kernel)[0]).blocks[0];
    let bufs: Vec<_> =
        ctx.body.block(block).args.iter().map(|&v| as_buf(ctx, ctx.body.value_type(v)).cloned()).collect();
    if bufs.len() != bindings.len() {
        return Err(format!("'{TENSORS_ATTR}' has {} entries for {} buffers", bindings.len(), bufs.len()));
    }
    let mut names = std::collections::HashSet::new();
    for (i, (b, buf)) in bindings.iter().zip(&bufs).enumerate() {
        if b.role == "scratch" {
            continue;
        }
        let buf = buf.as_ref().ok_or(format!("argument {i} is not a buffer"))?;
        let at = format!("'{TENSORS_ATTR}' entry {i} ({} '{}')", b.role, b.name);
        if !names.insert((b.role.clone(), b.name.clone())) {
            return Err(format!("{at}: a second {} of that name", b.role));
        }
        if npu_elem(b.dtype) != Some(buf.elem) {
            return Err(format!("{at}: {} does not live in a buffer of {}", b.dtype, elem_name(buf.elem)));
        }
        let mut seen = vec![false; buf.len as usize];
        for &o in &b.offsets {
            match seen.get_mut(o) {
                Some(s) if !*s => *s = true,
                Some(_) => return Err(format!("{at}: its layout places two elements at offset {o}")),
                None => return Err(format!("{at}: its layout reaches offset {o}, past the buffer's {}", buf.len)),
            }
        }
    }
    Ok(())
}

fn binding(ctx: &Context, item: AttrId) -> Result<Binding, String> {
    let get = |key: &str| ctx.dict_get(item, key);
    let text = |key: &str| get(key).and_then(|a| ctx.attr_data(a).as_str().map(str::to_string));
    let role = text("role").ok_or(format!("every entry of '{TENSORS_ATTR}' needs a role"))?;
    if !["source", "sink", "scratch"].contains(&role.as_str()) {
        return Err(format!("'{TENSORS_ATTR}': '{role}' is not a role (source, sink or scratch)"));
    }
    if role == "scratch" {
        return Ok(Binding { role, name: String::new(), shape: Vec::new(), dtype: DType::F32, offsets: Vec::new() });
    }
    let bad = |what: &str| format!("the '{TENSORS_ATTR}' entry of a {role} has no valid {what}");
    let name = text("name").ok_or_else(|| bad("name"))?;
    let dtype: DType = text("dtype").and_then(|d| DType::from_name(&d)).ok_or_else(|| bad("dtype"))?;
    let shape: Vec<u64> = match get("shape").map(|a| ctx.attr_data(a)) {
        Some(Attr::Array(dims)) => dims
            .iter()
            .map(|&d| ctx.attr_data(d).as_int().and_then(|v| u64::try_from(v).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("shape"))?,
        _ => return Err(bad("shape")),
    };
    let layout = get("layout").and_then(|a| layout_of(&ctx.interners, a)).ok_or_else(|| bad("layout"))?;
    let offsets = layout.offsets(Order::RowMajor).map_err(|e| format!("'{name}': {e}"))?;
    let offsets: Vec<usize> = offsets
        .into_iter()
        .map(|o| o.and_then(|o| usize::try_from(o).ok()))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("'{name}': its layout stores an element nowhere"))?;
    if offsets.len() as u64 != shape.iter().product::<u64>().max(1) {
        return Err(format!("'{name}': its layout places {} elements, its shape has others", offsets.len()));
    }
    Ok(Binding { role, name, shape, dtype, offsets })
}

/// Runs the lowered `kernel` on `inputs` (by source name), between its host graphs (`npu.host` before it,
/// `npu.host_after` after it, each run by the reference evaluator); the graph's sinks by name: each stage's, but
/// for the values it hands to a later stage (`host.N`, `device.N`).
pub fn run_lowered(
    ctx: &Context,
    kernel: OpId,
    bindings: &[Binding],
    inputs: &Values,
) -> Result<(Values, Run), String> {
    let before = host_graph(ctx, kernel, HOST_ATTR)?;
    let after = host_graph(ctx, kernel, AFTER_ATTR)?;
    let pre = before.map(|g| run_host(ctx, g, &[inputs])).transpose()?.unwrap_or_default();
    let args = kernel_inputs(ctx, kernel, bindings, &[inputs, &pre])?;
    let run = run_kernel(ctx, kernel, &args).map_err(|e| e.message)?;
    let mut device = Values::new();
    for (i, b) in bindings.iter().enumerate().filter(|(_, b)| b.role == "sink") {
        let flat = run.buffers.get(&format!("arg{i}")).ok_or(format!("the kernel did not write sink '{}'", b.name))?;
        device.insert(b.name.clone(), unpack(b, flat));
    }
    let post = after.map(|g| run_host(ctx, g, &[inputs, &pre, &device])).transpose()?.unwrap_or_default();
    // A stage's sink that a later stage reads as a source (and the caller did not bind) is handed on, not the graph's.
    let mut handed: std::collections::HashSet<String> =
        bindings.iter().filter(|b| b.role == "source").map(|b| b.name.clone()).collect();
    handed.extend(after.into_iter().flat_map(|g| source_names(ctx, g)));
    let stages = [pre, device, post].into_iter().flatten();
    let sinks = stages.filter(|(n, _)| !handed.contains(n) || inputs.contains_key(n)).collect();
    Ok((sinks, run))
}

/// The array named `name` in the first of `layers` that has one (the caller's inputs first, so a stage's sink
/// that shares a source's name does not replace it).
fn find<'a>(layers: &[&'a Values], name: &str) -> Option<&'a Array> {
    layers.iter().find_map(|l| l.get(name))
}

/// The host graph `kernel`'s attribute `key` names, if it has one.
fn host_graph(ctx: &Context, kernel: OpId, key: &str) -> Result<Option<OpId>, String> {
    let Some(name) = ctx.op_attr(kernel, key).and_then(|a| ctx.attr_data(a).as_str()) else { return Ok(None) };
    let parent = ctx.body.op_parent(kernel).expect("a kernel inside a module");
    let host = ctx.body.block_ops(parent).find(|&o| ctx.op_name(o) == "teg.graph" && symbol_name(ctx, o) == Some(name));
    host.map(Some).ok_or(format!("'{key}' names @{name}, which is not a teg.graph next to the kernel"))
}

/// The names of `graph`'s sources.
fn source_names(ctx: &Context, graph: OpId) -> Vec<String> {
    crate::dialects::teg::eval::sources(ctx, graph).into_iter().map(|s| s.0).collect()
}

/// Runs a host graph with the reference evaluator, its sources bound by name from `layers`; its sinks.
fn run_host(ctx: &Context, graph: OpId, layers: &[&Values]) -> Result<Values, String> {
    let bound: Values =
        source_names(ctx, graph).into_iter().filter_map(|n| find(layers, &n).map(|a| (n, a.clone()))).collect();
    let name = symbol_name(ctx, graph).unwrap_or("graph");
    evaluate(ctx, graph, &bound).map_err(|e| format!("the host segment @{name}: {}", e.message))
}

/// The kernel's inputs (`arg0`, ...) from the graph's (by source name, from the first of `layers` that has it):
/// each written into its buffer's layout.
pub fn kernel_inputs(
    ctx: &Context,
    kernel: OpId,
    bindings: &[Binding],
    layers: &[&Values],
) -> Result<IndexMap<String, Array>, String> {
    let lens = buffer_lens(ctx, kernel);
    let mut args = IndexMap::new();
    for (i, b) in bindings.iter().enumerate().filter(|(_, b)| b.role == "source") {
        let a = find(layers, &b.name).ok_or(format!("source '{}' is not bound: pass --input {0}=PATH.npy", b.name))?;
        if a.shape() != b.shape.as_slice() || a.dtype() != b.dtype {
            return Err(format!(
                "source '{}' is {} of shape {:?}, but its input holds {} of shape {:?}",
                b.name,
                b.dtype,
                b.shape,
                a.dtype(),
                a.shape()
            ));
        }
        args.insert(format!("arg{i}"), pack(b, a, lens[i]));
    }
    Ok(args)
}

/// Each argument's length in elements.
fn buffer_lens(ctx: &Context, kernel: OpId) -> Vec<usize> {
    let block = ctx.body.region(ctx.body.regions(kernel)[0]).blocks[0];
    let buf = |v| crate::dialects::npu::types::as_buf(ctx, ctx.body.value_type(v)).map_or(0, |t| t.len as usize);
    ctx.body.block(block).args.iter().map(|&v| buf(v)).collect()
}

/// `a` written into a buffer of `len` elements at `b`'s offsets, the rest zero; `i1` as `i8`.
fn pack(b: &Binding, a: &Array, len: usize) -> Array {
    let zero = a.len();
    let mut slots = vec![zero; len];
    for (logical, &at) in b.offsets.iter().enumerate() {
        slots[at] = logical;
    }
    let data = a.data();
    let data = match data {
        Data::I1(v) => Data::I8(v.iter().map(|&x| x as i8).collect()),
        other => other.clone(),
    };
    let padded = map_data!(&data, v => v.iter().copied().chain([Default::default()]).collect::<Vec<_>>());
    Array::new(vec![len as u64], padded.gather(&slots)).expect("a flat array of its own length")
}

/// The tensor `b` reads out of its buffer's contents `flat`.
fn unpack(b: &Binding, flat: &Array) -> Array {
    let data = flat.data().gather(&b.offsets);
    let data = match (b.dtype, data) {
        (DType::I1, Data::I8(v)) => Data::I1(v.iter().map(|&x| x != 0).collect()),
        (_, d) => d,
    };
    Array::new(b.shape.clone(), data).expect("as many elements as the shape")
}

/// Compares each sink of `lowered` with the reference's: exactly for integers, within [`F32_TOLERANCE`] or
/// [`BF16_TOLERANCE`] of the sink's largest magnitude for floats (NaN equals NaN, infinities must agree); the first
/// differing cell, with its coordinates.
pub fn compare(lowered: &Values, reference: &Values) -> Result<(), String> {
    for (name, want) in reference {
        let got = lowered.get(name).ok_or(format!("the lowered kernel has no sink '{name}'"))?;
        let (rtol, atol) = match want.dtype() {
            DType::BF16 | DType::F16 => BF16_TOLERANCE,
            DType::F32 | DType::F64 => F32_TOLERANCE,
            _ => (0.0, 0.0),
        };
        let norm = (0..want.len()).map(|i| want.data().get_f64(i).abs()).filter(|x| x.is_finite()).fold(0.0, f64::max);
        let tolerance = atol + rtol * norm;
        for i in 0..want.len() {
            let (g, w) = (got.data().get_f64(i), want.data().get_f64(i));
            let same = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= tolerance;
            if !same {
                return Err(format!(
                    "sink '{name}' differs at {:?}: lowered {g}, reference {w} (tolerance {atol} + {rtol} x {norm}, \
                     the sink's largest magnitude)",
                    coordinates(want.shape(), i)
                ));
            }
        }
    }
    Ok(())
}

/// The coordinates of row-major index `i` in `shape`.
fn coordinates(shape: &[u64], mut i: usize) -> Vec<u64> {
    let mut out = vec![0; shape.len()];
    for (k, &e) in shape.iter().enumerate().rev() {
        out[k] = i as u64 % e.max(1);
        i /= e.max(1) as usize;
    }
    out
}
