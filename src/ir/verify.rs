//! The verifier: structure (registration, arity, attributes, region and terminator rules, parents), then
//! use-def and dominance, then symbol uniqueness, then each op's own verifier. It collects every problem it
//! finds instead of stopping at the first.

use super::attrs::{Attr, AttrId};
use super::body::{BlockId, OpId, RegionId, ValueDef, ValueId};
use super::diag::Diagnostic;
use super::dominance::{op_positions, DomTree};
use super::entity::EntityId;
use super::interner::FxHashMap;
use super::print::op_summary;
use super::registry::{dialect_of, AttrKind, OpInfo, OpTrait};
use super::types::TypeKind;
use super::walk::preorder;
use super::Context;

/// Verifier settings.
#[derive(Copy, Clone, Debug)]
pub struct VerifyOptions {
    /// Attach a "see current operation" note to op errors (off under `--verify-diagnostics`, as in mlir-opt).
    pub print_op_on_diagnostic: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions { print_op_on_diagnostic: true }
    }
}

/// Verifies `root` and everything nested in it; an empty list means the IR is valid.
pub fn verify(ctx: &Context, root: OpId, opts: VerifyOptions) -> Vec<Diagnostic> {
    let mut v = Verifier { ctx, opts, diags: Vec::new(), doms: FxHashMap::default(), positions: Vec::new() };
    let mut ops = vec![root];
    ops.extend(preorder(&ctx.body, root));
    let mut structurally_ok = vec![true; ops.len()];
    for (i, &op) in ops.iter().enumerate() {
        structurally_ok[i] = v.verify_structure(op);
    }
    v.positions = op_positions(&ctx.body, root);
    for &op in &ops {
        v.verify_operands(op);
    }
    for (i, &op) in ops.iter().enumerate() {
        v.verify_symbol_table(op);
        if structurally_ok[i] {
            v.verify_op_specific(op);
        }
    }
    v.diags
}

struct Verifier<'c> {
    ctx: &'c Context,
    opts: VerifyOptions,
    diags: Vec<Diagnostic>,
    doms: FxHashMap<RegionId, DomTree>,
    positions: Vec<u32>,
}

/// The diagnostic `'name' op message` at `op`, MLIR's `emitOpError`.
pub fn op_error(ctx: &Context, op: OpId, message: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(ctx.body.op(op).loc, format!("'{}' op {message}", ctx.op_name(op)))
}

impl<'c> Verifier<'c> {
    fn info(&mut self, op: OpId) -> Option<&'c OpInfo> {
        self.ctx.registered(op).map(|r| &r.info)
    }

    fn report(&mut self, op: OpId, mut diag: Diagnostic) {
        if self.opts.print_op_on_diagnostic {
            let loc = diag.loc;
            let text = op_summary(self.ctx, op);
            diag = diag.with_note(loc, format!("see current operation: {text}"));
        }
        self.diags.push(diag);
    }

    fn op_error(&mut self, op: OpId, message: impl std::fmt::Display) {
        let d = op_error(self.ctx, op, message);
        self.report(op, d);
    }

    // ----- structure -----

    fn verify_structure(&mut self, op: OpId) -> bool {
        let before = self.diags.len();
        match self.info(op) {
            Some(info) => self.verify_registered(op, info),
            None => self.verify_unregistered(op),
        }
        for (i, &r) in self.ctx.body.regions(op).iter().enumerate() {
            self.verify_region(op, i, r);
        }
        self.diags.len() == before
    }

    /// A registered dialect never accepts unknown ops; an unregistered dialect's ops pass only with the flag.
    fn verify_unregistered(&mut self, op: OpId) {
        let name = self.ctx.op_name(op);
        let dialect = dialect_of(name);
        let msg = if self.ctx.registry.dialect(dialect).is_some() {
            format!(
                "unregistered operation '{name}' found in dialect ('{dialect}') that does not allow unknown operations"
            )
        } else if self.ctx.allow_unregistered {
            return;
        } else {
            format!("operation '{name}' is in an unregistered dialect; use --allow-unregistered-dialect to accept it")
        };
        let loc = self.ctx.body.op(op).loc;
        self.diags.push(Diagnostic::error(loc, msg));
    }

    fn verify_registered(&mut self, op: OpId, info: &OpInfo) {
        let body = &self.ctx.body;
        let counts = [
            ("operand", info.operands, body.num_operands(op)),
            ("result", info.results, body.num_results(op)),
            ("region", info.regions, body.regions(op).len()),
            ("successor", info.successors, body.successors(op).len()),
        ];
        for (what, arity, n) in counts {
            if !arity.admits(n) {
                let plural = if matches!(arity, super::Arity::Exact(1)) { "" } else { "s" };
                self.op_error(op, format!("expects {} {what}{plural}, but got {n}", arity.describe()));
            }
        }
        self.verify_declared_attrs(op, info);
        self.verify_parent(op, info);
        self.verify_terminator_position(op, info);
        if info.has_trait(OpTrait::SameOperandsAndResultType) {
            self.verify_same_types(op);
        }
    }

    fn verify_declared_attrs(&mut self, op: OpId, info: &OpInfo) {
        for spec in info.attrs {
            match self.ctx.op_attr(op, spec.name) {
                None if !spec.optional => self.op_error(op, format!("requires attribute '{}'", spec.name)),
                None => {}
                Some(a) if !attr_has_kind(self.ctx, a, spec.kind) => {
                    let msg =
                        format!("attribute '{}' failed to satisfy constraint: {}", spec.name, kind_words(spec.kind));
                    self.op_error(op, msg);
                }
                Some(_) => {}
            }
        }
    }

    fn verify_parent(&mut self, op: OpId, info: &OpInfo) {
        let Some(allowed) = info.allowed_parents() else { return };
        let parent = self.ctx.body.parent_op(op).map(|p| self.ctx.op_name(p));
        if !parent.is_some_and(|p| allowed.contains(&p)) {
            let names: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
            let msg = if names.len() == 1 {
                format!("expects parent op {}", names[0])
            } else {
                format!("expects parent op to be one of {}", names.join(", "))
            };
            self.op_error(op, msg);
        }
    }

    fn verify_terminator_position(&mut self, op: OpId, info: &OpInfo) {
        if info.has_trait(OpTrait::Terminator)
            && self.ctx.body.op_parent(op).is_some()
            && self.ctx.body.next_op(op).is_some()
        {
            self.op_error(op, "must be the last operation in the parent block");
        }
    }

    fn verify_same_types(&mut self, op: OpId) {
        let body = &self.ctx.body;
        let mut types = body.operands(op).chain(body.results(op)).map(|v| body.value_type(v));
        if let Some(first) = types.next() {
            if types.any(|t| t != first) {
                self.op_error(op, "requires the same type for all operands and results");
            }
        }
    }

    fn verify_region(&mut self, op: OpId, index: usize, region: RegionId) {
        let info = self.info(op);
        let blocks = self.ctx.body.region(region).blocks.clone();
        if info.is_some_and(|i| i.has_trait(OpTrait::SingleBlock)) && blocks.len() > 1 {
            self.op_error(op, format!("expects region #{index} to have 0 or 1 blocks"));
        }
        for &b in &blocks {
            self.verify_successors_in_region(b, region);
        }
        let needs_terminator =
            info.is_some_and(|i| !i.has_trait(OpTrait::NoTerminator) && !i.has_trait(OpTrait::GraphRegions));
        if !needs_terminator {
            return;
        }
        for &b in &blocks {
            self.verify_block_terminator(op, b);
        }
    }

    fn verify_block_terminator(&mut self, parent: OpId, b: BlockId) {
        let Some(last) = self.ctx.body.last_op(b) else {
            let loc = self.ctx.body.op(parent).loc;
            self.diags.push(Diagnostic::error(loc, "empty block: expect at least a terminator"));
            return;
        };
        if self.info(last).is_some_and(|i| !i.has_trait(OpTrait::Terminator)) {
            let d = Diagnostic::error(self.ctx.body.op(last).loc, "block with no terminator, has ")
                .with_note(self.ctx.body.op(parent).loc, "in the region of this op");
            let d = Diagnostic { message: format!("{}'{}'", d.message, self.ctx.op_name(last)), ..d };
            self.diags.push(d);
        }
    }

    fn verify_successors_in_region(&mut self, b: BlockId, region: RegionId) {
        for op in self.ctx.body.block_ops(b) {
            for &s in self.ctx.body.successors(op) {
                if self.ctx.body.block_parent(s) != Some(region) {
                    let d = op_error(self.ctx, op, "has a successor in a different region");
                    self.report(op, d);
                }
            }
        }
    }

    // ----- use-def and dominance -----

    fn verify_operands(&mut self, user: OpId) {
        let n = self.ctx.body.num_operands(user);
        for i in 0..n {
            let v = self.ctx.body.operand(user, i);
            if let Err(d) = self.check_use(user, i, v) {
                self.report(user, d);
            }
        }
    }

    fn check_use(&mut self, user: OpId, index: usize, v: ValueId) -> Result<(), Diagnostic> {
        let body = &self.ctx.body;
        let (def_block, def_op) = match body.value_def(v) {
            ValueDef::Result { op, .. } if body.is_erased(op) => {
                return Err(op_error(self.ctx, user, format!("operand #{index} refers to an erased op")));
            }
            ValueDef::Result { op, .. } => match body.op_parent(op) {
                Some(b) => (b, Some(op)),
                None => return Err(op_error(self.ctx, user, format!("operand #{index} is defined by a detached op"))),
            },
            ValueDef::BlockArg { block, .. } => (block, None),
            ValueDef::Placeholder => {
                return Err(op_error(self.ctx, user, format!("operand #{index} has no definition")))
            }
        };
        let Some(def_region) = body.block_parent(def_block) else {
            return Err(op_error(self.ctx, user, format!("operand #{index} is defined in a detached block")));
        };
        // Climb from the user to its ancestor in the definition's region.
        let mut cur = user;
        loop {
            let Some(block) = body.op_parent(cur) else {
                return Err(self.not_dominated(user, index, v));
            };
            if body.block_parent(block) == Some(def_region) {
                break;
            }
            let Some(parent) = body.parent_op(cur) else {
                return Err(self.not_dominated(user, index, v));
            };
            if parent != user && self.info(parent).is_some_and(|i| i.has_trait(OpTrait::IsolatedFromAbove)) {
                let d = op_error(self.ctx, user, "using value defined outside the region")
                    .with_note(self.ctx.body.op(parent).loc, "required by region isolation constraints");
                return Err(d);
            }
            cur = parent;
        }
        if self.is_graph_region(def_region) {
            return Ok(());
        }
        let use_block = body.op_parent(cur).expect("climbed to an attached op");
        let ok = if use_block == def_block {
            def_op.is_none_or(|d| d != cur && self.positions[d.index()] < self.positions[cur.index()])
        } else {
            self.doms
                .entry(def_region)
                .or_insert_with(|| DomTree::compute(body, def_region))
                .dominates(def_block, use_block)
        };
        if ok {
            Ok(())
        } else {
            Err(self.not_dominated(user, index, v))
        }
    }

    fn not_dominated(&self, user: OpId, index: usize, v: ValueId) -> Diagnostic {
        let d = Diagnostic::error(self.ctx.body.op(user).loc, format!("operand #{index} does not dominate this use"));
        match self.ctx.body.value_def(v) {
            ValueDef::Result { op, .. } => d.with_note(self.ctx.body.op(op).loc, "operand defined here"),
            _ => d,
        }
    }

    /// Regions of graph-region ops and of unregistered ops impose no order (MLIR's conservative rule).
    fn is_graph_region(&mut self, region: RegionId) -> bool {
        match self.ctx.body.region_parent(region) {
            Some(owner) => self.info(owner).is_none_or(|i| i.has_trait(OpTrait::GraphRegions)),
            None => true,
        }
    }

    // ----- symbols and op-specific checks -----

    fn verify_symbol_table(&mut self, op: OpId) {
        if !self.info(op).is_some_and(|i| i.has_trait(OpTrait::SymbolTable)) {
            return;
        }
        let mut seen: FxHashMap<&str, OpId> = FxHashMap::default();
        for &r in self.ctx.body.regions(op) {
            for &b in &self.ctx.body.region(r).blocks {
                for child in self.ctx.body.block_ops(b) {
                    let Some(name) = super::symbols::symbol_name(self.ctx, child) else { continue };
                    if let Some(&first) = seen.get(name) {
                        let d = Diagnostic::error(
                            self.ctx.body.op(child).loc,
                            format!("redefinition of symbol named '{name}'"),
                        )
                        .with_note(self.ctx.body.op(first).loc, "see existing symbol definition here");
                        self.diags.push(d);
                    } else {
                        seen.insert(name, child);
                    }
                }
            }
        }
    }

    fn verify_op_specific(&mut self, op: OpId) {
        let Some(check) = self.info(op).and_then(|i| i.verify) else { return };
        if let Err(d) = check(self.ctx, op) {
            self.report(op, d);
        }
    }
}

fn attr_has_kind(ctx: &Context, a: AttrId, kind: AttrKind) -> bool {
    let attr = ctx.attr_data(a);
    match kind {
        AttrKind::Any => true,
        AttrKind::Int => matches!(attr, Attr::Int { .. }),
        AttrKind::Float => matches!(attr, Attr::Float { .. }),
        AttrKind::String => matches!(attr, Attr::String(_)),
        AttrKind::Bool => matches!(attr, Attr::Int { ty, .. } if ctx.type_kind(*ty) == &TypeKind::Int(1)),
        AttrKind::Unit => matches!(attr, Attr::Unit),
        AttrKind::Type => matches!(attr, Attr::Type(_)),
        AttrKind::FunctionType => {
            matches!(attr, Attr::Type(t) if matches!(ctx.type_kind(*t), TypeKind::Function { .. }))
        }
        AttrKind::SymbolRef => matches!(attr, Attr::SymbolRef { .. }),
        AttrKind::Array => matches!(attr, Attr::Array(_)),
        AttrKind::Dict => matches!(attr, Attr::Dict(_)),
        AttrKind::AffineMap => matches!(attr, Attr::AffineMap(_)),
        AttrKind::Dense => matches!(attr, Attr::Dense { .. }),
    }
}

fn kind_words(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Any => "any attribute",
        AttrKind::Int => "integer attribute",
        AttrKind::Float => "float attribute",
        AttrKind::String => "string attribute",
        AttrKind::Bool => "bool attribute",
        AttrKind::Unit => "unit attribute",
        AttrKind::Type => "any type attribute",
        AttrKind::FunctionType => "type attribute of function type",
        AttrKind::SymbolRef => "symbol reference attribute",
        AttrKind::Array => "array attribute",
        AttrKind::Dict => "dictionary of named attribute values",
        AttrKind::AffineMap => "AffineMap attribute",
        AttrKind::Dense => "dense elements attribute",
    }
}
