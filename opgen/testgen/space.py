"""The parameter space of one product view, and cases in it.

A ``Case`` assigns every *field* an aclnn call has: attributes, environment variables, the dims the inputs
bind (``BS``, ``H``, ``K``), each optional input's presence, each input's dtype and shape rule, each output's
dtype (``None``: the spec's dtype rule), and a data recipe per input (what tensor contents the suite builds).
Shapes are rules, not numbers: a declared alternative of the spec (``("decl", i)``), a shape read off a
constraint (``("cand", i)``, for inputs the spec leaves unshaped), or a literal (``("fixed", dims)``, negative
cases only).  So changing ``epWorldSize`` moves every shape that depends on it, and a case stays one edit away
from its neighbours.

A *world* case stands for every rank of a communication world: rank ids come from the runtime's rank rule
(``opgen.runtime.drivers.RANK_ATTRS``) and bound dims may differ per rank (``("ranks", "BS")``, uneven batch
sizes).  A *rank* case is one aclnn call (negative cases): its rank ids are ordinary attributes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPE_NAMES, FORMATS
from opgen.lang.expr import Binary, Call, Expr, InRange, InSet, Int, Name, Str, walk
from opgen.lower.python import ScalarPy
from opgen.model.inline import inline as _inline
from opgen.model.decl import Op, ProductView, ShapeCond
from opgen.model.resolve import dim_bindings
from opgen.runtime import OpError, drivers
from opgen.runtime.driving import EP_RANK_ATTRS
from opgen.runtime.scope import EvalError, Meta

Field = tuple[str, str]  # (kind, name): attr env dim present empty dtype format shape out oshape oformat data ranks


@dataclass(frozen=True, eq=False)
class Case:
    """An immutable assignment of fields (a sorted tuple, so equal cases compare and hash equal)."""
    product: str
    items: tuple[tuple[Field, object], ...]
    world: bool = True
    index: dict = field(default=None, compare=False, repr=False, hash=False)

    def __post_init__(self):
        if self.index is None:  # given: a case set() derives, its parent's index with the one value replaced
            object.__setattr__(self, "index", dict(self.items))

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not Case:
            return NotImplemented
        return self.product == other.product and self.world == other.world and self.items == other.items

    def __hash__(self):
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        """The search keys its memos on cases: the ~50 fields are hashed once, not at every lookup."""
        return hash((self.product, self.items, self.world))

    @functools.cached_property
    def kinds(self) -> dict:
        kinds: dict = {}
        for (kind, name), value in self.items:
            kinds.setdefault(kind, {})[name] = value
        return kinds

    @staticmethod
    def make(product: str, values: dict, world: bool = True) -> "Case":
        # fields are unique, so sorting the pairs orders them by field alone
        return Case(product, tuple(sorted(values.items())), world)

    def values(self) -> dict:
        return dict(self.index)

    def get(self, key: Field, default=None):
        return self.index.get(key, default)

    @functools.cached_property
    def positions(self) -> dict:
        """field -> its position in ``items`` (shared by the cases :meth:`set` derives: the same fields)."""
        return {kv[0]: i for i, kv in enumerate(self.items)}

    def set(self, key: Field, value) -> "Case":
        if key in self.index:  # the same fields in the same order: replace the one pair
            i = self.positions[key]
            index = dict(self.index)
            index[key] = value
            new = Case(self.product, self.items[:i] + ((key, value),) + self.items[i + 1:], self.world, index)
            new.__dict__["positions"] = self.positions
            new.__dict__["parent"] = (self, key)  # Space.failures reuses the parent's verdicts of other checks
            kinds = self.__dict__.get("kinds")
            if kinds is not None:  # the same grouping with one value replaced (never mutated: of_kind copies)
                kinds = dict(kinds)
                kinds[key[0]] = {**kinds[key[0]], key[1]: value}
                new.__dict__["kinds"] = kinds
            return new
        d = self.values()
        d[key] = value
        return Case.make(self.product, d, self.world)

    def update(self, changes: dict) -> "Case":
        d = self.values()
        d.update(changes)
        return Case.make(self.product, d, self.world)

    def drop(self, key: Field) -> "Case":
        d = self.values()
        d.pop(key, None)
        return Case.make(self.product, d, self.world)

    def of_kind(self, kind: str) -> dict:
        return dict(self.kinds.get(kind, {}))


class Space:
    """Fields, shape rules and expression evaluation of one product view, over the generated reference."""

    def __init__(self, op: Op, soc: str, ref):
        self.op = op
        self.soc = soc
        self.view: ProductView = op.views[soc]
        self.ref = ref
        self.info = ref.INFO
        self.checks = ref.INFO.checks[soc]
        self.check_index = {c.id: i for i, c in enumerate(self.checks)}
        self.error_checks = [(i, c) for i, c in enumerate(self.checks) if c.code != 0]  # warnings never reject
        self.bound = dim_bindings(op)
        self.lowering = ScalarPy(self.view)
        self.inputs = {t.name: t for t in self.view.inputs}
        self.empty_absent = self.view.empty_absent_inputs
        self.outputs = {t.name: t for t in self.view.outputs}
        self.attrs = {a.name: a for a in self.view.attrs}
        self.envs = {e.name: e for e in op.envs}
        self.lets = {l.name: l for l in self.view.lets}
        rank_rule = drivers.rank_rule(op.semantics, op.role_names)
        self.rank_rule = rank_rule
        self.rank_attrs = tuple(op.named(n) for n in EP_RANK_ATTRS
                                if rank_rule is not None and op.named(n) in self.attrs)
        # a group's world size: <domain>WorldSize in the family's role names
        self.world_attrs = tuple(op.named(f"{g.domain}WorldSize") for g in op.comm_groups
                                 if op.named(f"{g.domain}WorldSize") in self.attrs)
        self._code: dict[int, tuple] = {}
        self._scopes: dict = {}
        self._expr_memo: dict = {}
        self._calls: dict = {}
        self._verdicts: dict = {}  # (case, rank) -> (checks evaluated: those before this index, failing indices)
        self._affected: dict = {}  # field -> the error checks a change of it may decide otherwise (None: all)
        self.shape_cands = {t.name: self._shape_candidates(t) for t in self.view.inputs}

    # ---- expressions -----------------------------------------------------------------------------------
    def eval(self, e: Expr, scope):
        """Value of a spec expression in a scope (None when it has none)."""
        entry = self._code.get(id(e))
        if entry is None:
            entry = self._code[id(e)] = (compile(self.lowering(e), "<spec>", "eval"), e)
        try:
            return eval(entry[0], vars(self.ref), {"s": scope})  # noqa: S307 - lowered spec expressions
        except (EvalError, KeyError, TypeError, ValueError, OpError, ZeroDivisionError, OverflowError):
            return None

    def _of_exprs(self, fn, exprs) -> list:
        """``fn(exprs)`` (a pure function of the expressions), computed once per tuple of expression objects: the
        repair search asks for the same check's fields and numbers at every step.  The memo holds the
        expressions, so no other object takes their ids while it is kept."""
        exprs = tuple(exprs)
        key = (fn, tuple(map(id, exprs)))
        hit = self._expr_memo.get(key)
        if hit is None:
            hit = self._expr_memo[key] = (exprs, fn(exprs))
        return list(hit[1])

    def related(self, exprs) -> list[Field]:
        """The fields an expression reads (lets and bound dims followed to their sources), first use first."""
        return self._of_exprs(self._related, exprs)

    def _related(self, exprs) -> list[Field]:
        out: dict[Field, None] = {}
        seen: set[str] = set()
        todo = list(exprs)
        while todo:
            e = _inline(self.op, todo.pop(0))
            for n in walk(e):
                if isinstance(n, Call) and n.args and isinstance(n.args[0], Name):
                    t = n.args[0].id
                    if t in self.inputs:
                        if n.fn == "dtype":
                            kinds = ("dtype",)
                        elif n.fn == "format":
                            kinds = ("present", "format")
                        elif n.fn == "present":
                            kinds = ("present",)
                        elif n.fn in ("prefix_true", "all_true"):
                            kinds = ("data",)
                        else:
                            kinds = ("present", "shape")
                        for k in kinds:
                            out[(k, t)] = None
                    elif t in self.outputs:
                        kind = "oshape" if n.fn in ("rank", "dim", "shape", "numel", "shaped") else \
                            "oformat" if n.fn == "format" else "out"
                        out[(kind, t)] = None
                if not isinstance(n, Name):
                    continue
                if n.id in self.attrs:
                    out[("attr", n.id)] = None
                elif n.id in self.envs:
                    out[("env", n.id)] = None
                elif n.id in self.lets and n.id not in seen:
                    seen.add(n.id)
                    todo.append(self.lets[n.id].expr)
                elif n.id in self.bound:
                    out[("dim", n.id)] = None
        return list(out)

    def literals(self, exprs) -> list[int]:
        """Integer literals of expressions, lets followed (the numbers a constraint is made of)."""
        return self._of_exprs(self._literals, exprs)

    def _literals(self, exprs) -> list[int]:
        out: list[int] = []
        seen: set[str] = set()
        todo = list(exprs)
        while todo:
            for n in walk(_inline(self.op, todo.pop(0))):
                if isinstance(n, Int):
                    out.append(n.value)
                elif isinstance(n, Name) and n.id in B.CONSTANTS and isinstance(B.CONSTANTS[n.id], int):
                    out.append(B.CONSTANTS[n.id])
                elif isinstance(n, Name) and n.id in self.lets and n.id not in seen:
                    seen.add(n.id)
                    todo.append(self.lets[n.id].expr)
        return out

    def strings(self, exprs) -> list[str]:
        return self._of_exprs(self._strings, exprs)

    def _strings(self, exprs) -> list[str]:
        return [n.value for e in exprs for n in walk(_inline(self.op, e)) if isinstance(n, Str)]

    def env_candidates(self, case: Case, field: Field, exprs) -> list:
        """Values to try for an env variable: a string one takes its default and the strings the failing rules
        and the product's lets compare with (HCCL_INTRA_PCIE_ENABLE == "1"); a number one, None (the caller's)."""
        e = self.envs[field[1]]
        if e.type != "string":
            return None
        lets = [l.expr for l in self.view.lets]
        pool = [e.default] + self.strings(list(exprs) + lets)
        return [v for v in dict.fromkeys(pool) if v != case.get(field)]

    # ---- shape rules ---------------------------------------------------------------------------------
    def _shape_candidates(self, t) -> list[tuple]:
        """Shapes an unshaped input may take, read off the constraints that test its rank and dims."""
        if t.shape is not None:
            return []
        found: list[tuple] = []
        exprs = [c.expr for c in self.view.checks] + [k for c in self.view.checks for k in c.conditions]
        for e in exprs:
            for alt in _alternatives(_inline(self.op, e)):
                dims = _dims_of(alt, t.name)
                if dims is not None and dims not in found:
                    found.append(dims)
        return found or [(Int(1),)]

    def shape_rules(self, name: str) -> list[tuple]:
        t = self.inputs[name]
        if t.shape is not None:
            return [("decl", i) for i in range(len(t.shape.alts))]
        return [("cand", i) for i in range(len(self.shape_cands[name]))]

    # ---- materialising a case ---------------------------------------------------------------------------
    def world_size(self, case: Case) -> int:
        n = 1
        for a in self.world_attrs:
            v = case.get(("attr", a), self.attrs[a].default)
            n *= max(v, 1) if isinstance(v, int) and not isinstance(v, bool) else 1
        return n

    def call_attrs(self, case: Case, rank: int | None) -> dict:
        attrs = dict(case.kinds.get("attr", ()))
        if rank is not None and self.rank_rule is not None:
            for k, v in self.rank_rule(rank, attrs).items():
                if k in self.attrs:
                    attrs[k] = v
        attrs.update(case.kinds.get("env", ()))
        return attrs

    def dims(self, case: Case, rank: int | None) -> dict:
        dims = dict(case.kinds.get("dim", ()))
        if rank is not None:
            for name, per_rank in case.kinds.get("ranks", {}).items():
                dims[name] = per_rank[rank]
        return dims

    def call(self, case: Case, rank: int | None = None):
        """(inputs as Meta tensors, attrs with env, out_dtypes, out_shapes) of one call."""
        attrs = self.call_attrs(case, rank)
        dims = self.dims(case, rank)
        kinds = case.kinds
        out_dtypes = {n: d for n, d in kinds.get("out", {}).items() if d is not None}
        out_shapes = {n: tuple(r[1]) for n, r in kinds.get("oshape", {}).items() if r is not None}
        inputs: dict = {n: None for n in self.inputs}
        present = [n for n in self.inputs if case.get(("present", n), False)]
        later = []
        for name in present:  # shapes made of bound dims and literals need no evaluation
            shape = self.shape(case, name, dims, None)
            if shape is None:
                later.append(name)
            else:
                inputs[name] = Meta(shape, case.get(("dtype", name)), case.get(("format", name)) or "ND")
        # The rest read lets of the bound dims (A of (A, H) needs BS), so they are evaluated once every
        # input that binds a dim is in place; a shape that reads another such shape gets a second pass.
        for _ in range(2):
            if not later:
                break
            scope = self.ref.reference.make_scope(self.info, inputs, attrs, self.soc, out_dtypes, out_shapes)
            shapes = {name: self.shape(case, name, dims, scope) for name in later}
            for name in later:
                inputs[name] = Meta(shapes[name], case.get(("dtype", name)), case.get(("format", name)) or "ND")
            if not any(0 in sh for sh in shapes.values()):
                break
        for name in self.empty_absent:  # absent, passed as an empty tensor (which the op reads as absent)
            if inputs[name] is None and case.get(("empty", name)):
                inputs[name] = Meta((0,), case.get(("dtype", name)) or self.inputs[name].dtypes[0], "ND")
        return inputs, attrs, out_dtypes, out_shapes

    def metas(self, case: Case, rank: int | None) -> dict:
        """The inputs of :meth:`call` without data (read-only)."""
        return self._call(case, rank)[0]

    def _call(self, case: Case, rank: int | None) -> tuple:
        """:meth:`call` without data, kept per case and rank like the scopes (its dicts are read-only)."""
        key = (case, rank)
        hit = self._calls.get(key)
        if hit is None:
            if len(self._calls) > 20000:
                self._calls.clear()
            hit = self._calls[key] = self.call(case, rank)
        return hit

    @staticmethod
    def out_formats(case: Case) -> dict:
        """The formats of the output buffers a case gives (the others are ND)."""
        return {n: f for n, f in case.kinds.get("oformat", {}).items() if f is not None}

    def shape(self, case: Case, name: str, dims: dict, scope) -> tuple:
        rule = case.get(("shape", name))
        if rule[0] == "fixed":
            return tuple(rule[1])
        t = self.inputs[name]
        if rule[0] == "decl":
            alt = t.shape.alts[rule[1]]
            while isinstance(alt, ShapeCond):
                if scope is None:
                    return None
                alt = alt.then if self.eval(alt.test, scope) else alt.orelse
            exprs = alt.dims
        else:
            exprs = self.shape_cands[name][rule[1]]
        out = []
        for d in exprs:
            if isinstance(d, Name) and d.id in self.bound:
                v = dims.get(d.id)
            elif isinstance(d, Int):
                v = d.value
            elif scope is None:
                return None
            else:
                v = self.eval(d, scope)
            out.append(v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**40 else 0)
        return tuple(out)

    def scope(self, case: Case, rank: int | None = None, data=None):
        """The reference's evaluation scope of one call (kept per case and rank: scopes are read-only)."""
        if not data:  # no arrays: the call's scope is the one without data
            data = None
        key = (case, rank)
        if data is None and key in self._scopes:
            return self._scopes[key]
        inputs, attrs, out_dtypes, out_shapes = self._call(case, rank)
        if data:  # arrays instead of the descriptors; a tensor of another format stays a descriptor (an array is ND)
            inputs = dict(inputs)
            for name, array in data.items():
                if inputs.get(name) is not None and case.get(("format", name)) in (None, "ND"):
                    inputs[name] = array
        s = self.ref.reference.make_scope(self.info, inputs, attrs, self.soc, out_dtypes, out_shapes,
                                          self.out_formats(case))
        if data is None:
            if len(self._scopes) > 20000:
                self._scopes.clear()
            self._scopes[key] = s
        return s

    # ---- running the checks ------------------------------------------------------------------------------
    def ranks(self, case: Case, limit: int = 8) -> list:
        """The ranks a world case is validated on during search (all of them for small worlds)."""
        if not case.world:
            return [None]
        n = self.world_size(case)
        if n <= limit:
            return list(range(n))
        rs = case.get(("attr", "sharedExpertRankNum"), 0) or 0
        t = max(n // max(case.get(("attr", self.world_attrs[0]), 1), 1), 1) if self.world_attrs else 1
        picks = {0, 1, n - 2, n - 1, rs * t - 1, rs * t, rs * t + 1}
        return sorted(r for r in picks if 0 <= r < n)

    def first_failure(self, case: Case, ranks=None, data=None) -> tuple[int, str, object] | None:
        """(check index, check id, the OpError) of the first failing error check over ``ranks``; None: accepted."""
        worst = None
        for rank in (self.ranks(case) if ranks is None else ranks):
            arrays = None if data is None else data.get(rank)
            try:
                s = self.scope(case, rank, arrays)
            except OpError as err:
                return (-1, "call", err)
            # without arrays the scope is the one :meth:`failures` decided on, if it did: its verdicts stand
            known = None if arrays else self._verdicts.get((case, rank))
            for i, chk in self._failing(s, known, len(self.checks) if worst is None else worst[0]):
                try:
                    chk.run(s, self.info.name)
                except OpError as err:
                    worst = (i, chk.id, err)
                    break
        return worst

    def _failing(self, s, known, limit: int):
        """(index, check) of the error checks below ``limit`` that fail in ``s``, in order (fails: what run
        decides, without making its message); ``known``: :meth:`failures`' verdicts on ``s`` (its bound, the
        failing indices below it), which only the checks from the bound on are evaluated beyond."""
        start = 0
        if known is not None:
            start, here = known
            for i in sorted(here):
                if i >= limit:
                    return
                yield i, self.checks[i]
        for i in range(start, limit):
            chk = self.checks[i]
            if chk.code != 0 and chk.fails(s):
                yield i, chk

    def failures(self, case: Case, ranks=None, upto: int | None = None) -> list[tuple[int, str]]:
        """The error checks failing on any search rank, as sorted (index, id), each check evaluated on its own;
        ``upto``: only the checks before that index (the others are not evaluated).

        A case :meth:`Case.set` made from another differs from it in one field: a check that cannot read that
        field (:meth:`affected`) decides as it did on the parent's same rank.  The ranks of a world differ only in
        the ids the rank rule gives and the per-rank dims: a check that reads neither decides on every rank as on
        the first.  Only the other checks are run."""
        bound = len(self.checks) if upto is None else upto
        checks = self.error_checks if upto is None else [ic for ic in self.error_checks if ic[0] < upto]
        parent, changed = case.__dict__.get("parent") or (None, None)
        affected = self.affected(changed) if parent is not None else None
        ranks = self.ranks(case) if ranks is None else ranks
        ranked = frozenset()  # the checks that read a rank id or a per-rank dim
        if case.world and self.rank_rule is not None:
            attrs = dict(case.kinds.get("attr", ()))
            for key in {k for r in ranks if r is not None for k in self.rank_rule(r, attrs)}:
                ranked = ranked | self.affected(("attr", key))
        for name in case.kinds.get("ranks", {}):
            ranked = ranked | self.affected(("ranks", name))
        if affected is not None and changed[0] == "attr":
            affected = affected | ranked  # the rank rule's ids (epRankId = i // tpWorldSize) may move with it
        indices = self._error_indices if upto is None else frozenset(i for i, _ in checks)
        failed: set[int] = set()
        first = None  # the verdicts on the first rank
        for rank in ranks:
            try:
                s = self.scope(case, rank)
            except OpError:
                return [(-1, "call")]
            before = self._verdicts.get((parent, rank)) if affected is not None else None
            if before is None and first is None:
                here = {i for i, chk in checks if chk.fails(s)}
            else:
                # by sets, not check by check: the parent's verdict where the change cannot reach (``was`` holds
                # only indices below its bound ``done``), the first rank's where the rank cannot, else evaluated
                done, was = before or (0, ())
                here = (was - affected) & indices if was else set()
                rest = (indices & affected) if done else indices
                if done < bound:
                    rest = rest | indices.difference(range(done))
                if first is not None:
                    here |= (rest - ranked) & first
                    rest = rest & ranked
                here.update(i for i in sorted(rest) if self.checks[i].fails(s))
            if len(self._verdicts) > 20000:
                self._verdicts.clear()
            self._verdicts[(case, rank)] = (bound, here)
            if first is None:
                first = here
            failed |= here
        return [(i, self.checks[i].id) for i in sorted(failed)]

    @functools.cached_property
    def _error_indices(self) -> frozenset:
        return frozenset(i for i, _ in self.error_checks)

    def affected(self, field: Field) -> frozenset:
        """The indices of the error checks whose verdict a change of ``field`` alone may change: those whose
        expression or conditions read it, through lets, bound dims (and the inputs binding them), the shape
        rules of the inputs they read and the env variables they skip on.  A check reading an output's dtype
        rule or a name the search does not model counts as reading every field."""
        if field not in self._affected:
            deps = self._check_fields
            self._affected[field] = frozenset(i for i, f in deps.items() if f is None or field in f)
        return self._affected[field]

    @functools.cached_property
    def _check_fields(self) -> dict:
        """error check index -> the fields it may read (None: any)."""
        view = {c.id: c for c in self.view.checks}
        return {i: None if view.get(chk.id) is None else
                self._closure([view[chk.id].expr, *view[chk.id].conditions], chk.envs)
                for i, chk in self.error_checks}

    def _closure(self, exprs, envs) -> frozenset | None:
        known = set(self.attrs) | set(self.envs) | set(self.lets) | set(self.bound) | set(self.inputs) | \
            set(self.outputs) | set(B.CONSTANTS) | set(DTYPE_NAMES) | set(FORMATS)  # the last two: literals
        todo: list = [("env", e) for e in envs]
        pending = list(exprs)
        out: set = set()
        seen_inputs: set = set()
        seen_lets: set = set()
        while pending or todo:
            if pending:
                e = pending.pop()
                for n in walk(_inline(self.op, e)):
                    if isinstance(n, Name) and n.id not in known:
                        return None  # a name the fields do not model
                    if isinstance(n, Name) and n.id in self.lets and n.id not in seen_lets:
                        seen_lets.add(n.id)
                        pending.append(self.lets[n.id].expr)
                todo += self.related([e])
                continue
            f = todo.pop()
            if f in out:
                continue
            out.add(f)
            kind, name = f
            if kind == "out":
                return None  # an output's dtype rule reads fields of its own
            if kind in ("present", "shape", "dtype", "format", "empty") and name in self.inputs \
                    and name not in seen_inputs:
                seen_inputs.add(name)
                todo += [(k, name) for k in ("present", "shape", "dtype", "format", "empty")]
                t = self.inputs[name]
                pending += (t.shape.exprs() if t.shape is not None else []) + \
                    [d for dims in self.shape_cands[name] for d in dims]
            elif kind == "dim":
                todo.append(("ranks", name))
                if name in self.bound:
                    todo.append(("shape", self.bound[name][0]))
        return frozenset(out)

    def inferred_shape(self, case: Case, name: str) -> tuple | None:
        """The shape the reference infers for output ``name`` of a call (None: it has none)."""
        try:
            s = self.scope(case, 0 if case.world else None)
            return tuple(self.ref.reference.infer_shapes(self.info, s)[name])
        except (OpError, EvalError, KeyError):
            return None

    def holds(self, exprs, case: Case, rank=None) -> bool:
        s = self.scope(case, rank)
        return all(self.eval(e, s) is True for e in exprs)


def _alternatives(e: Expr) -> list[Expr]:
    """The disjuncts of an expression (its top-level `or`s), each a conjunction to read shapes from."""
    if isinstance(e, Binary) and e.op == "or":
        return _alternatives(e.lhs) + _alternatives(e.rhs)
    return [e]


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "and":
        return _conjuncts(e.lhs) + _conjuncts(e.rhs)
    return [e]


def _dims_of(e: Expr, tensor: str):
    """The dims ``rank(t) == n and dim(t, i) == d ...`` pins down, as a tuple of expressions (or None)."""
    def is_call(x, fn):
        return isinstance(x, Call) and x.fn == fn and x.args and isinstance(x.args[0], Name) and \
            x.args[0].id == tensor

    rank, dims = None, {}
    for c in _conjuncts(e):
        if isinstance(c, Binary) and c.op == "==" and is_call(c.lhs, "rank") and isinstance(c.rhs, Int):
            rank = c.rhs.value
        elif isinstance(c, Binary) and c.op in ("==", "<=") and is_call(c.lhs, "dim") and isinstance(c.lhs.args[1], Int):
            dims.setdefault(c.lhs.args[1].value, c.rhs)
        elif isinstance(c, InSet) and not c.negated and is_call(c.operand, "dim") and isinstance(c.operand.args[1], Int):
            dims.setdefault(c.operand.args[1].value, c.items[-1])
        elif isinstance(c, InRange) and is_call(c.operand, "dim") and isinstance(c.operand.args[1], Int):
            dims.setdefault(c.operand.args[1].value, c.lo)
    if rank is None or set(dims) != set(range(rank)):
        return None
    return tuple(dims[i] for i in range(rank))


def default_case(space: Space, world: bool = True) -> Case:
    """Every field at its simplest: attribute defaults, required inputs present with their first dtype."""
    values: dict = {}
    for a in space.view.attrs:
        if world and a.name in space.rank_attrs:
            continue
        values[("attr", a.name)] = a.default if a.default is not None else _zero(a.type)
    for e in space.op.envs:
        values[("env", e.name)] = e.default
    for i, name in enumerate(space.bound):  # a few tokens and two experts each: routing worth testing
        values[("dim", name)] = 4 if i == 0 else 2
    for t in space.view.inputs:
        values[("present", t.name)] = not t.optional
        values[("dtype", t.name)] = t.dtypes[0]
        values[("shape", t.name)] = space.shape_rules(t.name)[0]
        values[("data", t.name)] = "all_true" if "BOOL" in t.dtypes else "random"
    for t in space.view.outputs:
        values[("out", t.name)] = None
    return Case.make(space.soc, values, world)


def _zero(typ: str):
    return {"int64": 0, "float": 0.0, "bool": False, "string": ""}.get(typ, ())


__all__ = ["Case", "Field", "Space", "default_case"]
