//! Typed access to a TEG op's attributes while it is decoded, with errors that name the attribute.

use crate::ir::{Attr, Context, OpId};

/// An op's attributes.
pub struct Attrs<'c> {
    /// The context holding the op.
    pub ctx: &'c Context,
    /// The op.
    pub op: OpId,
}

impl Attrs<'_> {
    /// Whether the op has attribute `name`.
    pub fn has(&self, name: &str) -> bool {
        self.ctx.op_attr(self.op, name).is_some()
    }

    fn get(&self, name: &str) -> Result<&Attr, String> {
        self.ctx
            .op_attr(self.op, name)
            .map(|a| self.ctx.attr_data(a))
            .ok_or_else(|| format!("needs attribute '{name}'"))
    }

    /// A string attribute.
    pub fn string(&self, name: &str) -> Result<String, String> {
        self.get(name)?.as_str().map(str::to_string).ok_or_else(|| format!("attribute '{name}' must be a string"))
    }

    /// A string attribute that may be left out.
    pub fn optional_string(&self, name: &str) -> Result<Option<String>, String> {
        self.has(name).then(|| self.string(name)).transpose()
    }

    /// An integer attribute (in `i64`).
    pub fn int(&self, name: &str) -> Result<i64, String> {
        let v = self.get(name)?.as_int().ok_or_else(|| format!("attribute '{name}' must be an integer"))?;
        i64::try_from(v).map_err(|_| format!("attribute '{name}' is out of range"))
    }

    /// A number (a float, or an integer read as one).
    pub fn float(&self, name: &str) -> Result<f64, String> {
        match self.get(name)? {
            Attr::Float { bits, .. } => Ok(f64::from_bits(*bits)),
            other => other.as_int().map(|v| v as f64).ok_or_else(|| format!("attribute '{name}' must be a number")),
        }
    }

    /// A number that may be left out.
    pub fn optional_float(&self, name: &str) -> Result<Option<f64>, String> {
        self.has(name).then(|| self.float(name)).transpose()
    }

    /// A list of dimension names.
    pub fn strings(&self, name: &str) -> Result<Vec<String>, String> {
        let Attr::Array(items) = self.get(name)? else { return Err(format!("attribute '{name}' must be a list")) };
        items
            .iter()
            .map(|&i| self.ctx.attr_data(i).as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("attribute '{name}' must be a list of dimension names"))
    }

    /// A two-element integer list, `default` for both when absent.
    pub fn pair(&self, name: &str, default: i64) -> Result<[i64; 2], String> {
        if !self.has(name) {
            return Ok([default; 2]);
        }
        let Attr::Array(items) = self.get(name)? else { return Err(format!("attribute '{name}' must be a list")) };
        let values: Option<Vec<i64>> =
            items.iter().map(|&i| self.ctx.attr_data(i).as_int().and_then(|v| i64::try_from(v).ok())).collect();
        match values.as_deref() {
            Some(&[a, b]) => Ok([a, b]),
            _ => Err(format!("attribute '{name}' must be a list of two integers")),
        }
    }

    /// A list of integers.
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, String> {
        self.int_list(self.get(name)?).ok_or_else(|| format!("attribute '{name}' must be a list of integers"))
    }

    /// A list of lists of integers.
    pub fn int_lists(&self, name: &str) -> Result<Vec<Vec<i64>>, String> {
        let Attr::Array(items) = self.get(name)? else { return Err(format!("attribute '{name}' must be a list")) };
        items
            .iter()
            .map(|&i| self.int_list(self.ctx.attr_data(i)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("attribute '{name}' must be a list of lists of integers"))
    }

    fn int_list(&self, a: &Attr) -> Option<Vec<i64>> {
        let Attr::Array(items) = a else { return None };
        items.iter().map(|&i| self.ctx.attr_data(i).as_int().and_then(|v| i64::try_from(v).ok())).collect()
    }
}
