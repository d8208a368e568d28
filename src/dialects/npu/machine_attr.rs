//! The machine an `npu` program is written for: the default `rngd-lite` profile, overridden by the `npu.machine`
//! dictionary of the nearest enclosing op that has one (usually the module):
//!
//! `builtin.module attributes {npu.machine = {profile = "small", slices_per_cluster = 16, dm_slice_bytes = 65536}}`
//!
//! Keys are the [`NpuConfig`] fields (`profile` a string, `clock_hz` a number, the others integers). The verifier,
//! the memory effects and the interpreter all read the machine from here, so they agree; `tap-run --machine`
//! writes the same attribute before verifying.

use crate::ir::{Attr, AttrId, Context, OpId};
use crate::machine::NpuConfig;

/// The attribute's name.
pub const MACHINE_ATTR: &str = "npu.machine";

/// The machine `op` is written for (the defaults when no enclosing op has `npu.machine`); the message says what
/// is wrong with the attribute.
pub fn machine_of(ctx: &Context, op: OpId) -> Result<NpuConfig, String> {
    let mut at = Some(op);
    while let Some(o) = at {
        if let Some(attr) = ctx.op_attr(o, MACHINE_ATTR) {
            return decode(ctx, attr);
        }
        at = ctx.body.parent_op(o);
    }
    Ok(NpuConfig::default())
}

/// The defaults overridden by the dictionary `attr`, validated.
pub fn decode(ctx: &Context, attr: AttrId) -> Result<NpuConfig, String> {
    let bad = |m: String| format!("{MACHINE_ATTR}: {m}");
    let Attr::Dict(entries) = ctx.attr_data(attr) else {
        return Err(bad("must be a dictionary of machine parameters".into()));
    };
    let mut cfg = NpuConfig::default();
    for &(key, value) in entries.iter() {
        let name = ctx.str(key);
        let data = ctx.attr_data(value);
        match name {
            "profile" => cfg.profile = data.as_str().ok_or_else(|| bad("'profile' must be a string".into()))?.into(),
            "clock_hz" => {
                cfg.clock_hz = match data {
                    Attr::Float { bits, .. } => f64::from_bits(*bits),
                    other => other.as_int().ok_or_else(|| bad("'clock_hz' must be a number".into()))? as f64,
                }
            }
            _ => {
                let v = data.as_int().and_then(|v| u64::try_from(v).ok());
                let v = v.ok_or_else(|| bad(format!("'{name}' must be a non-negative integer")))?;
                cfg.set(name, v).map_err(|e| bad(e.to_string()))?;
            }
        }
    }
    cfg.validate().map_err(|e| bad(e.to_string()))?;
    Ok(cfg)
}
