//! FuriosaAI mapping expressions (`m![A, B # 64]` over `axes![A = 8, B = 512]`), written
//! `#layout.furiosa<axes[A = 8, B = 512], m[A, B # 64]>`, with named aliases for escapes
//! (`L = m[A]`, `N = 64`, used as `{L}`, `{N}`). This file holds the expression tree, its sizes and its printing;
//! `furiosa_to_core.rs` gives it the core meaning.

use crate::layout::strided::{fail, Factor, Layout, LayoutError, PadKind};
use std::fmt;

/// A mapping expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// An axis symbol `A`.
    Axis(String),
    /// A skewed axis `B'` (declared `B' = B - A`).
    Skewed(String),
    /// `n`: a broadcast of size `n` (`1` is the identity).
    Broadcast(u64),
    /// `{ T }`: the alias `T`.
    Escape(String),
    /// `L, R`: `L` major, `R` minor.
    Pair(Box<Expr>, Box<Expr>),
    /// `E / n`.
    Stride(Box<Expr>, Operand),
    /// `E % n`.
    Modulo(Box<Expr>, Operand),
    /// `E = n`.
    Resize(Box<Expr>, Operand),
    /// `E # n`, `E #{0} n`, `E #{!} n`.
    Pad(Box<Expr>, PadKind, Operand),
    /// `$(e1:n1, ...)`: positions `Σ p_k · n_k` (a sliding window).
    Sliding(Vec<(Expr, Operand)>),
}

/// The number after an operator: a literal, an axis (its size), an alias (`{N}`: its value or size) or a
/// parenthesized mapping (its size).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A literal.
    Int(u64),
    /// An axis: its size.
    Axis(String),
    /// `{ N }`: an alias.
    Alias(String),
    /// `( mapping )`: its size.
    Mapping(Box<Expr>),
}

/// What an alias names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AliasValue {
    /// `N = 64`.
    Const(u64),
    /// `L = m[...]`.
    Mapping(Expr),
}

/// `#layout.furiosa<axes[...], aliases..., m[...]>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FuriosaLayout {
    /// Declared axes and sizes, in order.
    pub axes: Vec<(String, u64)>,
    /// Skewed axes: `(name, of, minus)` for `name' = of - minus`.
    pub skews: Vec<(String, String, String)>,
    /// Aliases, in order (an alias may use earlier ones).
    pub aliases: Vec<(String, AliasValue)>,
    /// The mapping.
    pub mapping: Expr,
}

impl FuriosaLayout {
    /// The size of an axis.
    pub fn axis_size(&self, name: &str) -> Result<u64, LayoutError> {
        match self.axes.iter().find(|(a, _)| a == name) {
            Some((_, n)) => Ok(*n),
            None => fail(format!("undeclared axis '{name}'")),
        }
    }

    /// The alias `name`.
    pub fn alias(&self, name: &str) -> Result<&AliasValue, LayoutError> {
        match self.aliases.iter().find(|(a, _)| a == name) {
            Some((_, v)) => Ok(v),
            None => fail(format!("undefined alias '{{{name}}}'")),
        }
    }

    /// The value of an operand.
    pub fn operand(&self, op: &Operand) -> Result<u64, LayoutError> {
        match op {
            Operand::Int(n) => Ok(*n),
            Operand::Axis(a) => self.axis_size(a),
            Operand::Alias(a) => match self.alias(a)? {
                AliasValue::Const(n) => Ok(*n),
                AliasValue::Mapping(e) => self.size(e),
            },
            Operand::Mapping(e) => self.size(e),
        }
    }

    /// `SIZE` of an expression, checking each constructor's precondition.
    pub fn size(&self, e: &Expr) -> Result<u64, LayoutError> {
        Ok(match e {
            Expr::Axis(a) => self.axis_size(a)?,
            Expr::Skewed(a) => self.skew(a).and_then(|(_, of, _)| self.axis_size(of))?,
            Expr::Broadcast(n) => *n,
            Expr::Escape(a) => match self.alias(a)? {
                AliasValue::Const(n) => *n,
                AliasValue::Mapping(e) => self.size(e)?,
            },
            Expr::Pair(l, r) => {
                self.size(l)?.checked_mul(self.size(r)?).ok_or_else(|| LayoutError("mapping too large".into()))?
            }
            Expr::Stride(inner, n) => {
                let (size, n) = (self.size(inner)?, self.operand(n)?);
                if n == 0 || size % n != 0 {
                    return fail(format!("stride {n} must divide the size {size} of {inner}"));
                }
                size / n
            }
            Expr::Modulo(inner, n) => {
                let (size, n) = (self.size(inner)?, self.operand(n)?);
                if n == 0 || size % n != 0 {
                    return fail(format!("modulo {n} must divide the size {size} of {inner}"));
                }
                n
            }
            Expr::Resize(inner, n) => {
                let (size, n) = (self.size(inner)?, self.operand(n)?);
                if n > size {
                    return fail(format!("resize to {n} exceeds the size {size} of {inner}"));
                }
                n
            }
            Expr::Pad(inner, _, n) => {
                let (size, n) = (self.size(inner)?, self.operand(n)?);
                if n < size {
                    return fail(format!("padding to {n} is less than the size {size} of {inner}"));
                }
                n
            }
            Expr::Sliding(items) => {
                let mut total = 1u64;
                for (e, n) in items {
                    let reach = self.size(e)?.saturating_sub(1).checked_mul(self.operand(n)?);
                    total = reach
                        .and_then(|r| total.checked_add(r))
                        .ok_or_else(|| LayoutError("mapping too large".into()))?;
                }
                total
            }
        })
    }

    fn skew(&self, name: &str) -> Result<&(String, String, String), LayoutError> {
        match self.skews.iter().find(|(a, _, _)| a == name) {
            Some(s) => Ok(s),
            None => fail(format!("undeclared skewed axis '{name}''")),
        }
    }

    /// Checks names, sizes and every constructor's precondition.
    pub fn validate(&self) -> Result<(), LayoutError> {
        for (i, (a, _)) in self.axes.iter().enumerate() {
            if self.axes[..i].iter().any(|(b, _)| b == a) {
                return fail(format!("axis '{a}' is declared twice"));
            }
        }
        for (name, of, minus) in &self.skews {
            self.axis_size(of)?;
            self.axis_size(minus)?;
            if self.skews.iter().filter(|(a, _, _)| a == name).count() > 1 {
                return fail(format!("skewed axis '{name}'' is declared twice"));
            }
        }
        let mut nodes = std::collections::HashMap::new();
        for (i, (name, value)) in self.aliases.iter().enumerate() {
            if self.aliases[..i].iter().any(|(b, _)| b == name) {
                return fail(format!("alias '{name}' is defined twice"));
            }
            if let AliasValue::Mapping(e) = value {
                nodes.insert(name.as_str(), expanded_nodes(e, &nodes)?);
                let earlier = FuriosaLayout { aliases: self.aliases[..i].to_vec(), ..self.clone() };
                earlier.size(e)?;
            }
        }
        expanded_nodes(&self.mapping, &nodes)?;
        self.size(&self.mapping)?;
        Ok(())
    }
}

/// The most nodes a mapping may have with its escapes expanded: aliases that each use the previous one twice
/// double at every step, and the mapping's meaning is computed on the expanded tree.
pub const MAX_EXPANDED_NODES: u64 = 1 << 12;

/// Nodes of `e` with its escapes expanded, given the counts of the aliases before it (an escape to a constant or
/// to an alias not counted is one node; `validate` reports unknown aliases); an error past
/// [`MAX_EXPANDED_NODES`].
fn expanded_nodes(e: &Expr, aliases: &std::collections::HashMap<&str, u64>) -> Result<u64, LayoutError> {
    let count = match e {
        Expr::Escape(a) => aliases.get(a.as_str()).copied().unwrap_or(1),
        Expr::Pair(l, r) => 1 + expanded_nodes(l, aliases)? + expanded_nodes(r, aliases)?,
        Expr::Stride(i, _) | Expr::Modulo(i, _) | Expr::Resize(i, _) | Expr::Pad(i, _, _) => {
            1 + expanded_nodes(i, aliases)?
        }
        Expr::Sliding(items) => {
            1 + items.iter().map(|(x, _)| expanded_nodes(x, aliases)).sum::<Result<u64, LayoutError>>()?
        }
        _ => 1,
    };
    if count > MAX_EXPANDED_NODES {
        return fail(format!("the mapping expands to more than {MAX_EXPANDED_NODES} nodes through its escapes"));
    }
    Ok(count)
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Int(n) => write!(f, "{n}"),
            Operand::Axis(a) => write!(f, "{a}"),
            Operand::Alias(a) => write!(f, "{{{a}}}"),
            Operand::Mapping(e) => write!(f, "({e})"),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Pair(l, r) => write!(f, "{}, {r}", Operand::wrap(l)),
            other => write!(f, "{}", Operand::wrap(other)),
        }
    }
}

impl Operand {
    /// An expression as an operator's left side: a pair needs brackets.
    fn wrap(e: &Expr) -> String {
        match e {
            Expr::Axis(a) => a.clone(),
            Expr::Skewed(a) => format!("{a}'"),
            Expr::Broadcast(n) => n.to_string(),
            Expr::Escape(a) => format!("{{{a}}}"),
            Expr::Pair(..) => format!("[{e}]"),
            Expr::Stride(i, n) => format!("{} / {n}", Operand::wrap(i)),
            Expr::Modulo(i, n) => format!("{} % {n}", Operand::wrap(i)),
            Expr::Resize(i, n) => format!("{} = {n}", Operand::wrap(i)),
            Expr::Pad(i, kind, n) => {
                let op = match kind {
                    PadKind::Top => "#",
                    PadKind::Zero => "#{0}",
                    PadKind::Bottom => "#{!}",
                };
                format!("{} {op} {n}", Operand::wrap(i))
            }
            Expr::Sliding(items) => {
                let items: Vec<String> = items.iter().map(|(e, n)| format!("{}:{n}", Operand::wrap(e))).collect();
                format!("$({})", items.join(", "))
            }
        }
    }
}

impl fmt::Display for FuriosaLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(a, n)| format!("{a} = {n}"))
            .chain(self.skews.iter().map(|(a, of, minus)| format!("{a}' = {of} - {minus}")))
            .collect();
        write!(f, "axes[{}]", axes.join(", "))?;
        for (name, value) in &self.aliases {
            match value {
                AliasValue::Const(n) => write!(f, ", {name} = {n}")?,
                AliasValue::Mapping(e) => write!(f, ", {name} = m[{e}]")?,
            }
        }
        write!(f, ", m[{}]", self.mapping)
    }
}

impl FuriosaLayout {
    /// A Furiosa mapping for a core layout whose digits, by decreasing stride, nest into the buffer (each stride a
    /// multiple of the next one's span): a pair of digit expressions, each padded to the room its stride gives it
    /// (`1 # s` below a smallest stride `s > 1`). Axes keep their names, or are named `A`, `B`, ... in order. Base offsets, negative or zero
    /// strides, replicas and coordinates stored from a non-zero start have no Furiosa form.
    pub fn from_repr(l: &Layout) -> Result<FuriosaLayout, LayoutError> {
        let no = |why: &str| Err(LayoutError(format!("Furiosa mappings cannot express this layout: {why}")));
        if l.base != 0 {
            return no("it starts at a base offset");
        }
        let axes: Vec<(String, u64)> = l
            .dims
            .iter()
            .enumerate()
            .map(|(k, d)| (d.name.clone().unwrap_or_else(|| axis_name(k)), d.extent))
            .collect();
        let mut digits: Vec<Factor> = l.factors.iter().copied().filter(|f| f.extent > 1).collect();
        if digits.iter().any(|f| f.dim.is_none()) {
            return no("it stores elements twice");
        }
        if digits.iter().any(|f| f.stride <= 0) || l.dims.iter().any(|d| d.start > 0) {
            return no("it has a reversed, broadcast or offset dimension");
        }
        digits.sort_by_key(|f| std::cmp::Reverse(f.stride));
        let mut room = l.cosize;
        let mut parts = Vec::new();
        for f in &digits {
            let stride = f.stride as u64;
            if !room.is_multiple_of(stride) || room / stride < f.extent {
                return no("its digits do not nest by stride");
            }
            let k = f.dim.unwrap();
            let digit = digit_expr(&axes[k].0, l, k, f);
            let slots = room / stride;
            parts.push(if slots > f.extent {
                Expr::Pad(Box::new(digit), PadKind::Top, Operand::Int(slots))
            } else {
                digit
            });
            room = stride;
        }
        if room > 1 {
            // Holes below the smallest stride: `1 # room`, one position then padding.
            parts.push(Expr::Pad(Box::new(Expr::Broadcast(1)), PadKind::Top, Operand::Int(room)));
        }
        let mapping = parts
            .into_iter()
            .rev()
            .reduce(|minor, major| Expr::Pair(Box::new(major), Box::new(minor)))
            .unwrap_or(Expr::Broadcast(1));
        Ok(FuriosaLayout { axes, skews: Vec::new(), aliases: Vec::new(), mapping })
    }
}

/// `A`, `B`, ..., `Z`, `A1`, ...: a name for the `k`-th positional dimension.
fn axis_name(k: usize) -> String {
    let letter = (b'A' + (k % 26) as u8) as char;
    if k < 26 {
        letter.to_string()
    } else {
        format!("{letter}{}", k / 26)
    }
}

/// The expression of one digit of axis `name` (dimension `k`): `X / place % extent` over the axis resized to its
/// stored coordinates and padded to the digits' span.
fn digit_expr(name: &str, l: &Layout, k: usize, f: &Factor) -> Expr {
    let d = &l.dims[k];
    let span = l.padded(k);
    let mut base = Expr::Axis(name.to_string());
    if d.stored < d.extent {
        base = Expr::Resize(Box::new(base), Operand::Int(d.stored));
    }
    let size = d.stored;
    if span > size {
        base = Expr::Pad(Box::new(base), d.pad, Operand::Int(span));
    }
    let mut e = base;
    if f.place > 1 {
        e = Expr::Stride(Box::new(e), Operand::Int(f.place));
    }
    if f.place * f.extent < span {
        e = Expr::Modulo(Box::new(e), Operand::Int(f.extent));
    }
    e
}
