"""Spec expressions → Ascend C kernel code (the device side of the C++ target).

Two lowerings live here, all driven by the model only:

* :class:`TilingExpr`: scalar expressions (shapes, lets) over the fields of the plain tiling struct
  ``<Op>TilingData`` the kernel reads (``tiling_.H``, ``tiling_.has_scalesOptional`` ...).
* (the three-valued evaluator the kernel emitter plans instances with is ``opgen.model.static_eval``)
* :class:`QuantLowering`: one quant mode's formula (``QuantStmt`` list) → Ascend C vector
  instructions over ``LocalTensor`` row buffers (``Cast`` with the spec's ``RoundMode``, ``Abs``,
  ``ReduceMax``, ``Muls``/``Mul``/``Div``, block reductions, ``CompareScalar``/``Select``, ...).
  Dtypes stay symbolic (the kernel class's type parameters), so one lowered function serves every
  dtype combination; ``when`` conditions on dtypes and key-encoded presence become ``if constexpr``.

Every literal goes through :func:`opgen.lower.cpp_literal` (or a typed wrapper of it); a construct
the kernel cannot express raises :class:`LoweringError` naming the spec source, so a spec change
either changes the kernel or fails the build loudly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import (Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Unary, to_spec,
                   walk)
from opgen.lower.literals import cpp_literal
from opgen.core.errors import LoweringError
from opgen.model.decl import Op, QuantMode, ShapeCond, Tensor
from opgen.model.inline import inline as _inline
from opgen.model.resolve import dim_bindings


# ---- dtypes ------------------------------------------------------------------------------------

# CANN dtype → Ascend C element type (kernel_operator.h spellings; FP4 types hold two values a byte).
CPP_TYPES: dict[str, str] = {n: r.ascendc for n, r in DTYPES.items()}  # the dtype table's Ascend C types
ROUND_MODES: dict[str, str] = {
    "rint": "RoundMode::CAST_RINT",
    "round": "RoundMode::CAST_ROUND",
    "trunc": "RoundMode::CAST_TRUNC",
    "floor": "RoundMode::CAST_FLOOR",
    "ceil": "RoundMode::CAST_CEIL",
    "none": "RoundMode::CAST_NONE",
}
CMP_MODES = {"==": "EQ", "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
CMP_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
# Dtypes a kernel row can be decoded to float32 from by one Cast (the others need a helper).
FLOATISH = ("FLOAT32", "FLOAT16", "BFLOAT16")
# (dst, src) element types CastRow converts with no scratch row (opgen_kernel_helpers.h CAST_WITHOUT_SCRATCH: one
# Cast, no clamp, no fp32 detour); the lowering gives these casts no scratch slot (a row of UB fewer)
SCRATCH_FREE_CASTS = frozenset({("half", "int8_t"), ("half", "uint8_t"), ("int8_t", "half"), ("uint8_t", "half"),
                                ("float", "half"), ("float", "bfloat16_t")})
FLOATS_PER_BLOCK = 8  # opgen_kernel_helpers.h FLOATS_PER_BLOCK: fp32 values in one 32-byte block (one Brcb block)
_CPP_KEYWORDS = frozenset("""alignas alignof and asm auto bool break case catch char class const constexpr continue
decltype default delete do double else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public register return short signed sizeof
static struct switch template this throw true try typedef typeid typename union unsigned using virtual void volatile
while xor half""".split())


def cpp_type(dtype: str) -> str:
    """The Ascend C element type of a CANN dtype (``BFLOAT16`` → ``bfloat16_t``)."""
    try:
        return CPP_TYPES[dtype]
    except KeyError:
        raise TypeError(f"no Ascend C type for dtype {dtype!r}") from None


def ge_value(dtype: str) -> str:
    """The ge::DataType value of a CANN dtype as a C++ literal."""
    return cpp_literal(DTYPES[dtype].ge_value)


def float_literal(v: float) -> str:
    """A float (fp32) C++ literal; non-finite values use the compiler builtins (no <limits> on device)."""
    v = float(v)
    if math.isnan(v):
        return "__builtin_nanf(\"\")"
    if math.isinf(v):
        return "__builtin_inff()" if v > 0 else "(-__builtin_inff())"
    text = cpp_literal(v)
    return text + "f" if ("." in text or "e" in text) else text + ".0f"


def type_param(tensor: str) -> str:
    """The kernel class's type parameter for a tensor whose dtype varies (``expandXOut`` → ``ExpandXOutT``)."""
    return tensor[0].upper() + tensor[1:] + "T"


def cpp_ident(name: str) -> str:
    """A spec identifier usable as a C++ local name."""
    if not name.replace("_", "").isalnum() or name[0].isdigit():
        raise TypeError(f"{name!r} is not a C++ identifier")
    return name + "_" if name in _CPP_KEYWORDS else name


def inline_defs(op: Op, e: Expr) -> Expr:
    """Expand calls to spec ``def`` macros (shared with the Python lowering)."""
    return _inline(op, e)


# ---- scalar expressions over the tiling struct -------------------------------------------------

class TilingExpr:
    """Scalar spec expressions → C++ over ``<var>.<field>`` of the plain tiling struct.

    Only what the tiling struct carries is expressible: int64/bool attributes, lets, bound dims,
    ``present()`` (``has_<input>``) and ``dtype()`` (``dtype_<tensor>``, ge::DataType values).
    Integer arithmetic is int64 with the spec's floor semantics for ``//`` and ``%``.
    """

    def __init__(self, op: Op, fields: set[str], var: str = "tiling_"):
        self.op = op
        self.fields = fields
        self.var = var

    def __call__(self, e: Expr) -> str:
        return self.lower(inline_defs(self.op, e))

    def lower(self, e: Expr) -> str:
        L = self.lower
        if isinstance(e, Bool):
            return cpp_literal(e.value)
        if isinstance(e, Int):
            return f"static_cast<int64_t>({cpp_literal(e.value)})"
        if isinstance(e, Name):
            if e.id in self.fields:
                return f"{self.var}.{e.id}"
            if e.id in B.CONSTANTS and isinstance(B.CONSTANTS[e.id], int):
                return f"static_cast<int64_t>({cpp_literal(B.CONSTANTS[e.id])})"
            if e.id in DTYPES:
                return ge_value(e.id)
            raise LoweringError(f"{e.id} is not in the tiling data (at {e.span})", e.span)
        if isinstance(e, Unary):
            return f"(!{L(e.operand)})" if e.op == "not" else f"(-{L(e.operand)})"
        if isinstance(e, Binary):
            a, b = L(e.lhs), L(e.rhs)
            if e.op == "//":
                return f"FloorDivI64({a}, {b})"
            if e.op == "%":
                return f"FloorModI64({a}, {b})"
            if e.op in ("and", "or"):
                return f"({a} {'&&' if e.op == 'and' else '||'} {b})"
            if e.op in ("+", "-", "*", "==", "!=", "<", "<=", ">", ">="):
                return f"({a} {e.op} {b})"
            raise LoweringError(f"operator {e.op} is not available in tiling expressions (at {e.span})", e.span)
        if isinstance(e, InSet):
            v = L(e.operand)
            test = " || ".join(f"({v} == {L(i)})" for i in e.items)
            return f"(!({test}))" if e.negated else f"({test})"
        if isinstance(e, InRange):
            v = L(e.operand)
            lo = f"({v} {'>=' if e.lo_closed else '>'} {L(e.lo)})"
            hi = f"({v} {'<=' if e.hi_closed else '<'} {L(e.hi)})"
            return f"({lo} && {hi})"
        if isinstance(e, Cond):
            return f"(({L(e.test)}) ? ({L(e.then)}) : ({L(e.orelse)}))"
        if isinstance(e, Call):
            if e.fn == "dim":
                return self.dim(e)
            if e.fn == "rank" and isinstance(e.args[0], Name):
                probe = self.probe("rank", e.args[0].id)
                if probe is None:
                    raise LoweringError(f"{to_spec(e)} is not in the tiling data (no let carries it)", e.span)
                return probe
            if e.fn == "present" and isinstance(e.args[0], Name):
                return f"({self.var}.has_{e.args[0].id} != 0U)"
            if e.fn == "dtype" and isinstance(e.args[0], Name):
                return f"{self.var}.dtype_{e.args[0].id}"
            args = [L(a) for a in e.args]
            if e.fn == "ceil_div":
                return f"CeilDivI64({args[0]}, {args[1]})"
            if e.fn == "align":
                return f"AlignI64({args[0]}, {args[1]})"
            if e.fn in ("min", "max"):
                out = args[0]
                for a in args[1:]:
                    out = f"{'MinI64' if e.fn == 'min' else 'MaxI64'}({out}, {a})"
                return out
            if e.fn == "abs":
                return f"AbsI64({args[0]})"
        raise LoweringError(f"cannot lower {to_spec(e)} over the tiling data (at {getattr(e, 'span', None)})",
                            getattr(e, "span", None))

    def dim(self, e: Call) -> str:
        """dim(T, i): a bound dim's field, or a let carrying that dim (:meth:`probe`; the tiling data has no other)."""
        for name, (tensor, axis) in dim_bindings(self.op).items():
            if isinstance(e.args[0], Name) and e.args[0].id == tensor and isinstance(e.args[1], Int) \
                    and e.args[1].value == axis and name in self.fields:
                return f"{self.var}.{name}"
        if isinstance(e.args[0], Name) and isinstance(e.args[1], Int):
            probe = self.probe("dim", e.args[0].id, e.args[1].value)
            if probe is not None:
                return probe
        for let in list(self.op.lets) + [l for p in self.op.products for l in p.lets]:
            if let.expr == e and let.name in self.fields:
                return f"{self.var}.{let.name}"
        raise LoweringError(f"{to_spec(e)} is not in the tiling data (no bound dim or let carries it)", e.span)

    def probe(self, fn: str, tensor: str, axis: int | None = None) -> str | None:
        """The tiling field carrying ``rank(T)`` / ``dim(T, axis)`` wherever that value is defined, or None.

        A let carries it when its expression is exactly that call, or ``if GUARD then <call> else ...`` with a
        guard that holds wherever the call is defined: ``present(T)``, and for ``dim(T, i)`` also
        ``rank(T) > i`` / ``rank(T) >= i + 1`` (conjunctions of those).  So ``let scalesLen = if
        present(scalesOptional) then dim(scalesOptional, 0) else 0`` carries ``dim(scalesOptional, 0)``.
        """
        want = Call(fn, (Name(tensor),) + ((Int(axis),) if axis is not None else ()))

        def guard_ok(t: Expr) -> bool:
            if isinstance(t, Binary) and t.op == "and":
                return guard_ok(t.lhs) and guard_ok(t.rhs)
            if isinstance(t, Call) and t.fn == "present" and isinstance(t.args[0], Name):
                return t.args[0].id == tensor
            if axis is not None and isinstance(t, Binary) and t.op in (">", ">=") and t.lhs == Call("rank", (
                    Name(tensor),)) and isinstance(t.rhs, Int):
                return t.rhs.value + (1 if t.op == ">" else 0) <= axis + 1
            return False

        def carries(e: Expr) -> bool:
            return e == want or (isinstance(e, Cond) and e.then == want and guard_ok(e.test))

        lets = list(self.op.lets) + [l for p in self.op.products for l in p.lets]
        for let in lets:  # every definition of the name (a product may override it) must carry the value
            if let.name in self.fields and all(carries(l.expr) for l in lets if l.name == let.name):
                return f"{self.var}.{let.name}"
        return None

    def row_width(self, t: Tensor) -> str:
        """Elements per leading-dimension row of a tensor: the product of its shape's dims after the first."""
        if t.shape is None or len(t.shape.alts) != 1:
            raise LoweringError(f"{t.name} needs exactly one shape to size its rows")

        def alt(a) -> str:
            if isinstance(a, ShapeCond):
                return f"(({self(a.test)}) ? ({alt(a.then)}) : ({alt(a.orelse)}))"
            dims = [self(d) for d in a.dims[1:]]
            return " * ".join(f"({d})" for d in dims) if dims else "static_cast<int64_t>(1)"

        return alt(t.shape.alts[0])


# ---- three-valued static evaluation ------------------------------------------------------------

@dataclass(frozen=True)
class KernelTypes:
    """What the quant lowering needs to know about the kernel it writes into."""
    tensor_types: dict          # tensor name → C++ element type (a type parameter when the dtype varies)
    tensor_dtypes: dict         # tensor name → tuple of possible dtypes (union over products)
    row_input: str              # the per-token input the pipeline loads into ``xRow`` (DispatchV2: x)
    key_present: dict           # optional input → C++ constant expression of its key-encoded presence
    quant_value: str | None     # C++ constant expression of the quant mode (from the tiling key), if any
    out_views: dict             # assigned output → C++ LocalTensor expression of its message row
    out_counts: dict            # assigned output → C++ element count expression of its row
    routed_layout: dict = field(default_factory=dict)  # routed() tensor → C++ RowLayout constant expression
    equal_types: frozenset = frozenset()  # pairs of C++ types every product's checks force equal
    dims: frozenset = frozenset()  # shape variables the tiling data carries (H, BS, K ...: tiling_.<name>)


@dataclass
class Val:
    kind: str                  # "scalar" | "row" | "type"
    ctype: str                 # C++ element / scalar type
    ref: str                   # scalar: C++ expression; row: LocalTensor name; type: C++ type
    count: str = ""            # row: element count (C++ expression)
    block: int | None = None   # row: per-block values of a block_max over blocks of this size
    slots: tuple = ()          # row: the calc slots holding it (empty: not a slot, e.g. the input row)
    owned: bool = False        # row: the consumer may overwrite / release it
    static: bool = False       # scalar: a compile-time constant

    @property
    def slot(self):
        return self.slots[0] if self.slots else None


@dataclass(frozen=True)
class WirePart:
    """One value a split quant mode sends (``send``): its row's element type and count, in message order; each
    part starts 32-byte aligned in the message."""
    name: str
    ctype: str
    count: str                  # C++ element count expression (over ``hLen``)
    block: int | None           # per-block values of blocks of this size (None: one value per element)

    @property
    def ref(self) -> str:
        return f"wire_{cpp_ident(self.name)}"


@dataclass
class LoweredMode:
    value: int
    name: str
    doc: str
    lines: list[str]
    slots: int
    assigns: dict               # output name → C++ constant condition under which the mode assigns it
    wire: tuple[WirePart, ...] = ()  # a split mode's message (``send``): the lines end by writing it into ``msg``


def wire_offsets(wire) -> list[str]:
    """C++ byte offset of each part of a message (parts 32-byte aligned, in order), and the message's size last."""
    out, at = [], "0U"
    for w in wire:
        out.append(at)
        size = f"AlignUp(RowBytes<{w.ctype}>(static_cast<uint32_t>({w.count})), UB_BLOCK)"
        at = size if at == "0U" else f"{at} + {size}"
    return out + [at]


class QuantLowering:
    """One quant mode's formula → the body of ``QuantRowMode<q>`` (Ascend C, one token row).

    The emitted code runs inside the kernel class: ``xRow`` is the token's row of the row input (its
    dtype), ``hLen`` the row length, ``CalcSlot<T>(i)`` a UB row buffer, ``tokenIdx`` / ``expertRow``
    the token and the smooth-scale row of its destination expert.  Assigned outputs are written straight
    into the outgoing message (``out_views``).  Float arithmetic is fp32, as in the numpy reference:
    a scalar divide stays a scalar divide, a row divide a vector ``Div`` (never a reciprocal multiply).
    UB rows are reused as soon as a value dies (each let knows how many uses it has left).

    ``PipeBarrier<PIPE_V>`` goes where the data needs it (the kernels build with --cce-auto-sync=off): before a
    vector instruction that reads a row an earlier one wrote with no barrier since (the V pipe overlaps its
    instructions; a later write over a row an earlier instruction reads needs none, as the pipe issues in order),
    not after every step; the helpers the lowering calls end with no barrier of their own (``BARRIER = false``).
    At the end, one barrier if a written row is still unordered, unless ``queued``: the caller hands the outputs to
    a queue, whose EnQue orders the vector writes before MTE3 reads them (the row message of DispatchV2 / CombineV2).
    A sent value (``send``) that is a cast is computed straight into its part of the message (no copy), as the real
    Int8QuantProcess casts into its send buffer (code: mc2/moe_distribute_combine_v2/op_kernel/
    moe_distribute_combine_v2_quant.h).
    """

    def __init__(self, op: Op, types: KernelTypes, slot_base: int = 0, out_slot: int | None = None,
                 given: dict | None = None, label: str | None = None, queued: bool = False):
        """``slot_base``: the first calc slot the formula may use (the slots below it stay live around it, e.g.
        the combine reduce's accumulator while a special expert's term is computed). ``out_slot``: the calc slot
        the (single, fp32 row) output view is; the formula may use it as a temporary and, when its value ends
        there, nothing is copied."""
        self.op = op
        self.types = types
        self.slot_base = slot_base
        self.out_slot = out_slot
        self.inputs = {t.name for t in op.inputs}
        self.outputs = {t.name for t in op.outputs} | set(types.out_views)
        self.given = dict(given or {})  # rows in scope from the start (a post stage's reduced row), by name
        self.label = label              # how errors name the formula (default: its quant mode)
        self.queued = queued            # the outputs go to a queue: no closing PipeBarrier<PIPE_V>

    # ---- entry ----
    def lower_mode(self, q: QuantMode) -> LoweredMode:
        """The mode's body. A split mode is lowered twice: the first pass finds the message (each sent value's type
        and length), the second computes the sent casts straight into it."""
        if q.send is None:
            return self.lower_once(q, {})
        first = self.lower_once(q, {})
        into = {w.name: (w, at) for w, at in zip(first.wire, wire_offsets(first.wire))}
        second = self.lower_once(q, into)
        if second.wire != first.wire:
            raise LoweringError(f"internal: quant mode {q.value}'s message changed between its two lowerings",
                                q.span)
        return second

    def lower_once(self, q: QuantMode, into: dict) -> LoweredMode:
        self.q = q
        self.into = into                # sent name → (WirePart, byte offset): computed in place in `msg`
        self.in_place: set[str] = set()
        self.dirty: set = set()         # rows written by vector instructions with no PipeBarrier<PIPE_V> since
        self.lines: list[str] = []
        self.depth = 1
        self.free: list[int] = []
        self.nslots = self.slot_base  # the next new slot; LoweredMode.slots is the highest used + 1
        self.lets: dict[str, Val] = dict(self.given)
        self.uses: dict[str, int] = {}
        self.tmp = 0
        self.slot_names: dict[tuple[int, str], tuple[str, int, int]] = {}  # (slot, ctype) → (name, line, depth)
        self.known_eq: list[set] = []
        # a split mode (`send`): this rank runs the statements before it, then writes the sent values into `msg`
        sent = q.send.names if q.send is not None else ()
        body = [replace(s, expr=inline_defs(self.op, s.expr),
                        conditions=tuple(inline_defs(self.op, c) for c in s.conditions)) for s in q.sender]
        for name in self.given:
            self.uses[name] = sum(1 for st in body for x in (st.expr,) + st.conditions
                                  for node in walk(x) if isinstance(node, Name) and node.id == name)
        for i, s in enumerate(body):
            if s.kind != "let":
                continue
            n = sum(1 for later in body[i + 1:] for x in (later.expr,) + later.conditions
                    for node in walk(x) if isinstance(node, Name) and node.id == s.name) + (s.name in sent)
            if n:
                self.uses[s.name] = n
        assigns: dict[str, list[str]] = {}
        for s in body:
            self.stmt(s, assigns)
        conds = {out: ("true" if "true" in cs else " || ".join(f"({c})" for c in cs)) for out, cs in assigns.items()}
        if not body:
            self.comment("no formula: nothing is quantised in this mode")
        wire = self.send(q) if q.send is not None else ()
        if wire:
            receiver = q.receiver
            conds = {out: "true" for out in dict.fromkeys(st.name for st in receiver if st.kind == "assign")}
        if self.dirty and not self.queued:
            self.emit("PipeBarrier<PIPE_V>(); // the outputs are read by the caller's vector instructions")
            self.dirty.clear()
        self.emit("Unused(xRow, tokenIdx, expertRow);")
        return LoweredMode(q.value, q.name, q.doc, self.lines, self.nslots, conds, wire)

    def send(self, q: QuantMode) -> tuple[WirePart, ...]:
        """``send a, b;``: each sent row into ``msg`` at its 32-byte aligned offset, in order."""
        parts = []
        for n in q.send.names:
            v = self.lets[n]
            if v.kind != "row":
                raise LoweringError(f"quant mode {q.value}: `send` of {n}, which is not a row (the message carries "
                                    "rows)", q.send.span, "E201")
            parts.append((n, v))
        wire = tuple(WirePart(n, v.ctype, v.count, v.block) for n, v in parts)
        self.comment(f"send {', '.join(q.send.names)}: the message this rank writes into the window slot")
        for w, (n, v), at in zip(wire, parts, wire_offsets(wire)):
            if n in self.in_place:
                self.comment(f"{n} was computed in its place in the message")
                continue
            self.emit(f"LocalTensor<{w.ctype}> {w.ref} = msg[{at}].template ReinterpretCast<{w.ctype}>();")
            wv = Val("row", w.ctype, w.ref, w.count, w.block)
            self.vec(f"CopyRow<{w.ctype}, {w.ctype}, false>({w.ref}, {v.ref}, static_cast<uint32_t>({w.count}));",
                     (v,), (wv,))
        return wire

    # ---- emission helpers ----
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def comment(self, text: str) -> None:
        self.emit("// " + text)

    @staticmethod
    def buffers(*vals) -> set:
        """The UB buffers of rows: their calc slots, else the named row (the input row, a message part, an output)."""
        out = set()
        for v in vals:
            if isinstance(v, Val) and v.kind == "row":
                out |= {("slot", s) for s in v.slots} if v.slots else {("ref", v.ref)}
        return out

    def vec(self, line: str, reads=(), writes=(), ends: str = "open") -> None:
        """A vector instruction (or a helper issuing some) reading the rows ``reads`` and writing ``writes``: a
        PipeBarrier<PIPE_V> first if it reads a row written since the last one (--cce-auto-sync=off). ``ends``:
        "open" (its writes are unordered after it), "fenced" (it issues a barrier after reading ``reads``, so only its
        own later writes are unordered), "ordered" (it ends with a barrier, or with a wait of the scalar unit on the
        vector pipe: nothing is unordered after it)."""
        if self.dirty & self.buffers(*reads):
            self.emit("PipeBarrier<PIPE_V>();")
            self.dirty.clear()
        self.emit(line)
        if ends == "ordered":
            self.dirty.clear()
        elif ends == "fenced":
            self.dirty = self.buffers(*writes)
        else:
            self.dirty |= self.buffers(*writes)

    def fresh(self, prefix: str = "t") -> str:
        self.tmp += 1
        return f"{prefix}{self.tmp}"

    def alloc(self, ctype: str, count: str, block: int | None = None) -> Val:
        if self.free:
            slot = self.free.pop()
        else:
            slot = self.nslots
            self.nslots += 1
        name = self.slot_name(slot, ctype)
        if name is None:
            name = self.fresh()
            self.emit(f"LocalTensor<{ctype}> {name} = CalcSlot<{ctype}>({slot}U);")
            self.slot_names[(slot, ctype)] = (name, len(self.lines) - 1, self.depth)
        return Val("row", ctype, name, count, block, (slot,), True)

    def slot_name(self, slot: int, ctype: str) -> str | None:
        """The variable already naming calc slot ``slot`` as ``ctype`` rows where the next line is emitted (declared in
        this block or one around it, which has not been closed since), else None: a slot taken again is not declared
        again under a new name (the variable is the slot, CalcSlot's view of it, never assigned)."""
        if (slot, ctype) not in self.slot_names:
            return None
        name, at, depth = self.slot_names[(slot, ctype)]
        indent = "    " * depth
        if depth > self.depth or not all(line.startswith(indent) for line in self.lines[at + 1:]):
            return None
        return name

    def view(self, v: Val, ctype: str) -> Val:
        """The same slot seen with another element type (a reinterpreting view, no instruction)."""
        if v.ctype == ctype:
            return v
        name = self.fresh()
        self.emit(f"LocalTensor<{ctype}> {name} = {v.ref}.template ReinterpretCast<{ctype}>();")
        return replace(v, ctype=ctype, ref=name)

    def release(self, *vals: Val) -> None:
        for v in vals:
            if v.kind == "row" and v.owned:
                for slot in v.slots:
                    if slot not in self.free:
                        self.free.append(slot)

    def release_unless(self, keep: Val, *vals: Val) -> None:
        self.release(*(v for v in vals if not (v.slots and v.slots == keep.slots)))

    def scratch(self) -> Val:
        return self.alloc("float", "hLen")

    def dest(self, ctype: str, count: str, block: int | None, *operands: Val) -> Val:
        """An output buffer for an elementwise op: an operand's slot when it dies here, else a new slot."""
        for v in operands:
            if v.kind == "row" and v.owned and v.slots and v.ctype == ctype:
                return Val("row", ctype, v.ref, count, block, v.slots, True)
        return self.alloc(ctype, count, block)

    def where(self, e) -> str:
        span = getattr(e, "span", None)
        return f"{span.file.rsplit('/', 1)[-1]}:{span.line}" if span else "spec"

    def fail(self, e, why: str, code: str | None = None):
        """The formula ``e`` (the mode's declaration when None) has no Ascend C lowering: a located error."""
        text = to_spec(e) if e is not None else ""
        span = getattr(e, "span", None)
        what = self.label or f"quant mode {self.q.value}"
        if span is not None:
            raise LoweringError(f"{what}: {why}: {text}", span, code)
        raise LoweringError(f"{what}: {why}{': ' + text if text else ''} ({self.where(e)})", self.q.span, code)

    # ---- statements ----
    def stmt(self, s, assigns: dict) -> None:
        self.comment(f"{s.name} = {to_spec(s.expr)}" if s.kind == "assign" else f"let {s.name} = {to_spec(s.expr)}")
        conds = [self.condition(c) for c in s.conditions]
        static = all(st for _, st in conds)
        cond_text = " && ".join(f"({c})" for c, _ in conds) if conds else ""
        if s.kind == "let":
            if conds:
                self.fail(s.expr, "a let under `when` is not supported by the kernel lowering")
            if s.name in self.into and self.uses.get(s.name) == 1 and isinstance(s.expr, Call) and s.expr.fn == "cast":
                self.cast_in_place(s.name, s.expr)
                return
            v = self.lower(s.expr)
            if v.kind == "row":
                if not v.owned and v.slots:
                    # an alias of another live let: the new let gets its own copy
                    c = self.alloc(v.ctype, v.count, v.block)
                    self.copy_row(c, v)
                    v = c
                if s.name in self.uses and v.ref not in ("xRow",):
                    name = cpp_ident(s.name)
                    self.emit(f"LocalTensor<{v.ctype}> {name} = {v.ref};")
                    v = replace(v, ref=name)
                v = replace(v, owned=False)
            elif v.kind == "scalar" and not v.static:
                name = cpp_ident(s.name)
                self.emit(f"const {v.ctype} {name} = {v.ref};")
                v = replace(v, ref=name)
            self.lets[s.name] = v
            if s.name not in self.uses:
                self.release(replace(v, owned=True))
            return
        if s.name not in self.types.out_views:
            self.fail(s.expr, f"output {s.name} is not carried by the kernel's row message")
        assigns.setdefault(s.name, []).append(cond_text if (conds and static) else "true")
        self.known_eq = [self.type_equalities(c) for c in s.conditions]
        before = set(self.dirty)
        if conds:
            self.emit(f"if {'constexpr ' if static else ''}({cond_text}) {{")
            self.depth += 1
        self.assign(s.name, s.expr)
        if conds:
            self.depth -= 1
            self.emit("}")
            self.dirty |= before  # a barrier inside the `if` may not run
        self.known_eq = []

    def cast_in_place(self, name: str, e: Call) -> None:
        """``let name = cast(...)`` whose only use is the ``send``: the cast writes the message part itself."""
        part, at = self.into[name]
        if self.static_type(e.args[1]) != part.ctype:
            self.fail(e, f"internal: the sent {name} changed type between the two lowerings")
        self.emit(f"LocalTensor<{part.ctype}> {part.ref} = msg[{at}].template ReinterpretCast<{part.ctype}>();")
        out = Val("row", part.ctype, part.ref, part.count, part.block)
        self.cast_into(out, e)
        self.lets[name] = out
        self.in_place.add(name)

    def cast_row(self, dst: Val, src: Val, mode: str, sat: bool, count: str | None = None) -> None:
        """dst = CastRow(src), with no barrier of its own; a scratch slot only where the cast needs one."""
        head = f"CastRow<{dst.ctype}, {src.ctype}, {mode}, {cpp_literal(sat)}, false>({dst.ref}, {src.ref}, " \
               f"static_cast<uint32_t>({count or dst.count})"
        if (dst.ctype, src.ctype) in SCRATCH_FREE_CASTS:
            self.vec(head + ");", (src,), (dst,))
            return
        s = self.scratch()
        self.vec(head + f", {s.ref});", (src,), (dst, s))
        self.release(s)

    def copy_row(self, dst: Val, src: Val, count: str | None = None) -> None:
        """dst = src (one element type), with no barrier of its own (``vec``)."""
        self.vec(f"CopyRow<{dst.ctype}, {src.ctype}, false>({dst.ref}, {src.ref}, "
                 f"static_cast<uint32_t>({count or src.count}));", (src,), (dst,))

    def type_equalities(self, c: Expr) -> set:
        """Types a `when` test proves equal (``dtype(a) == dtype(b)``, ``dtype(a) == INT8``, conjunctions)."""
        if isinstance(c, Binary) and c.op == "and":
            return self.type_equalities(c.lhs) | self.type_equalities(c.rhs)
        if isinstance(c, Binary) and c.op == "==" and self.is_type(c.lhs) and self.is_type(c.rhs):
            return {frozenset((self.static_type(c.lhs), self.static_type(c.rhs)))}
        return set()

    def same_type(self, a: str, b: str) -> bool:
        pair = frozenset((a, b))
        return a == b or pair in self.types.equal_types or any(pair in eqs for eqs in self.known_eq)

    def assign(self, out: str, e: Expr) -> None:
        dst_type = self.types.tensor_types[out]
        dst = Val("row", dst_type, self.types.out_views[out], self.types.out_counts[out])
        if self.out_slot is not None:  # the output view is a calc slot: evaluate first, copy only if elsewhere
            self.width_hint = dst.count
            v = self.lower(e)
            self.width_hint = None
            if v.kind != "row":
                self.fail(e, f"{out} must be a row here (a scalar has no row to add)")
            if v.slots == (self.out_slot,) and v.ctype == dst_type:
                self.release(v)
                return
            if not v.slots and v.ref != "xRow":
                # a given row (a received message's view) may lie in the output's own slot: copy it out first
                c = self.alloc(v.ctype, v.count, v.block)
                self.copy_row(c, v)
                v = c
            self.store(dst, v)
            return
        # A cast to the output's own dtype writes straight into the output row.
        if isinstance(e, Call) and e.fn == "cast" and self.same_type(self.static_type(e.args[1]), dst_type):
            self.cast_into(dst, e)
            return
        if isinstance(e, Call) and e.fn == "e8m0":
            self.e8m0_into(dst, e)
            return
        self.width_hint = dst.count
        v = self.lower(e)
        self.width_hint = None
        self.store(dst, v)

    def store(self, dst: Val, v: Val) -> None:
        """Write a value into an output row: same dtype copies, fp32-family dtypes convert (RINT)."""
        if v.kind == "scalar":
            self.emit("SyncFunc<HardEvent::V_S>();")
            self.dirty.clear()  # the scalar unit waited for the vector pipe
            self.emit(f"{dst.ref}.SetValue(0U, static_cast<{dst.ctype}>({v.ref}));")
            return
        if v.kind != "row":
            self.fail(None, "a dtype cannot be assigned to an output")
        if self.same_type(v.ctype, dst.ctype):
            self.vec(f"CopyRow<{dst.ctype}, {dst.ctype}, false>({dst.ref}, {v.ref}, "
                     f"static_cast<uint32_t>({dst.count}));", (v,), (dst,))
        else:
            self.cast_row(dst, v, "RoundMode::CAST_RINT", False, dst.count)
        self.release(v)

    # ---- conditions ----
    def condition(self, e: Expr) -> tuple[str, bool]:
        """A test → (C++ condition, is compile-time)."""
        if isinstance(e, Binary) and e.op in ("and", "or"):
            a, sa = self.condition(e.lhs)
            b, sb = self.condition(e.rhs)
            return f"({a} {'&&' if e.op == 'and' else '||'} {b})", sa and sb
        if isinstance(e, Unary) and e.op == "not":
            a, sa = self.condition(e.operand)
            return f"(!{a})", sa
        if isinstance(e, Call) and e.fn == "present":
            t = e.args[0].id
            if t in self.types.key_present:
                return self.types.key_present[t], True
            return f"(tiling_.has_{t} != 0U)", False
        if isinstance(e, Binary) and e.op in ("==", "!=") and self.is_type(e.lhs) and self.is_type(e.rhs):
            same = f"std::is_same<{self.static_type(e.lhs)}, {self.static_type(e.rhs)}>::value"
            return (same if e.op == "==" else f"(!{same})"), True
        if isinstance(e, InSet) and self.is_type(e.operand):
            t = self.static_type(e.operand)
            test = " || ".join(f"std::is_same<{t}, {self.static_type(i)}>::value" for i in e.items)
            return (f"(!({test}))" if e.negated else f"({test})"), True
        if isinstance(e, Bool):
            return cpp_literal(e.value), True
        v = self.lower(e)
        if v.kind != "scalar":
            self.fail(e, "a row-valued test")
        return v.ref, v.static

    def is_type(self, e: Expr) -> bool:
        return (isinstance(e, Call) and e.fn == "dtype") or (isinstance(e, Name) and e.id in DTYPES)

    def static_type(self, e: Expr) -> str:
        if isinstance(e, Call) and e.fn == "dtype" and isinstance(e.args[0], Name):
            return self.types.tensor_types[e.args[0].id]
        if isinstance(e, Name) and e.id in DTYPES:
            if e.id not in CPP_TYPES:
                self.fail(e, f"dtype {e.id} has no Ascend C element type (CPP_TYPES)", "E202")
            return cpp_type(e.id)
        self.fail(e, "expected a dtype")

    def is_static_test(self, t: Expr) -> bool:
        if isinstance(t, Call) and t.fn == "present":
            return t.args[0].id in self.types.key_present
        if isinstance(t, Binary) and t.op in ("==", "!=") and self.is_type(t.lhs) and self.is_type(t.rhs):
            return True
        if isinstance(t, InSet) and self.is_type(t.operand):
            return True
        if isinstance(t, Binary) and t.op in ("and", "or"):
            return self.is_static_test(t.lhs) and self.is_static_test(t.rhs)
        if isinstance(t, Unary) and t.op == "not":
            return self.is_static_test(t.operand)
        return isinstance(t, Bool)

    # ---- expressions ----
    def lower(self, e: Expr) -> Val:
        if isinstance(e, Int):
            return Val("scalar", "int32_t", cpp_literal(e.value), static=True)
        if isinstance(e, Float):
            return Val("scalar", "float", float_literal(e.value), static=True)
        if isinstance(e, Bool):
            return Val("scalar", "bool", cpp_literal(e.value), static=True)
        if isinstance(e, Name):
            return self.name(e)
        if isinstance(e, Unary):
            v = self.lower(e.operand)
            if e.op == "not":
                if v.kind != "scalar":
                    self.fail(e, "`not` of a row")
                return replace(v, ctype="bool", ref=f"(!{v.ref})")
            if v.kind == "scalar":
                return replace(v, ref=f"(-{v.ref})")
            self.need_float(e, v)
            d = self.dest("float", v.count, v.block, v)
            self.vec(f"Muls({d.ref}, {v.ref}, -1.0f, static_cast<int32_t>({v.count}));", (v,), (d,))
            self.release_unless(d, v)
            return d
        if isinstance(e, Binary):
            return self.binary(e)
        if isinstance(e, Cond):
            return self.cond(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, InSet):
            if self.is_type(e.operand):
                c, st = self.condition(e)
                return Val("scalar", "bool", c, static=st)
            v = self.lower(e.operand)
            if v.kind != "scalar":
                self.fail(e, "`in` on a row")
            test = " || ".join(f"({v.ref} == {self.lower(i).ref})" for i in e.items)
            return Val("scalar", "bool", f"(!({test}))" if e.negated else f"({test})", static=v.static)
        self.fail(e, "unsupported expression")

    def name(self, e: Name) -> Val:
        n = e.id
        if n in self.lets:
            v = self.lets[n]
            if v.kind == "row":
                self.uses[n] -= 1
                return replace(v, owned=self.uses[n] == 0)
            return v
        if n == self.types.row_input:
            return Val("row", self.types.tensor_types[n], "xRow", "hLen")
        if n in self.inputs:
            return self.row_of(n, e, "hLen")
        if n in DTYPES:
            return Val("type", cpp_type(n), cpp_type(n))
        if n in B.CONSTANTS:
            v = B.CONSTANTS[n]
            if isinstance(v, float):
                return Val("scalar", "float", float_literal(v), static=True)
            return Val("scalar", "int64_t", cpp_literal(v), static=True)
        if n == self.op.quant_by and self.types.quant_value is not None:
            return Val("scalar", "int64_t", self.types.quant_value, static=True)
        a = self.op.attr(n)
        if a is not None and a.type == "float":
            return Val("scalar", "float", f"tiling_.{n}")
        if a is not None or any(l.name == n for l in self.op.lets) or n in self.types.dims:
            return Val("scalar", "int64_t", f"tiling_.{n}")
        self.fail(e, f"name {n} has no value in a kernel quant formula")

    def as_float(self, v: Val) -> str:
        if v.kind != "scalar":
            raise LoweringError("internal: a scalar was expected")
        return v.ref if v.ctype == "float" else f"static_cast<float>({v.ref})"

    def binary(self, e: Binary) -> Val:
        if e.op in ("and", "or"):
            a, b = self.lower(e.lhs), self.lower(e.rhs)
            if a.kind != "scalar" or b.kind != "scalar":
                self.fail(e, "logic on rows")
            return Val("scalar", "bool", f"({a.ref} {'&&' if e.op == 'and' else '||'} {b.ref})",
                       static=a.static and b.static)
        if e.op in CMP_MODES:
            if self.is_type(e.lhs) and self.is_type(e.rhs):
                c, st = self.condition(e)
                return Val("scalar", "bool", c, static=st)
            a, b = self.lower(e.lhs), self.lower(e.rhs)
            if a.kind != "scalar" or b.kind != "scalar":
                self.fail(e, "a row comparison outside `if ... then ... else`")
            return Val("scalar", "bool", f"({a.ref} {e.op} {b.ref})", static=a.static and b.static)
        # a per_block broadcast multiplies block by block (one Muls per block, no broadcast row)
        if e.op == "*" and isinstance(e.rhs, Call) and e.rhs.fn == "per_block":
            return self.mul_per_block(e.lhs, e.rhs)
        if e.op == "*" and isinstance(e.lhs, Call) and e.lhs.fn == "per_block":
            return self.mul_per_block(e.rhs, e.lhs)
        a, b = self.lower(e.lhs), self.lower(e.rhs)
        if a.kind == "scalar" and b.kind == "scalar":
            return self.scalar_arith(e, a, b)
        if e.op not in ("+", "-", "*", "/"):
            self.fail(e, f"operator {e.op} on rows")
        if a.kind == "row" and b.kind == "row":
            if a.ctype != "float" or b.ctype != "float":
                self.fail(e, "row arithmetic needs fp32 rows (cast first)")
            if (a.block or 0) != (b.block or 0):
                self.fail(e, "rows of different block sizes")
            d = self.dest("float", a.count, a.block, a, b)
            fn = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div"}[e.op]
            self.vec(f"{fn}({d.ref}, {a.ref}, {b.ref}, static_cast<int32_t>({a.count}));", (a, b), (d,))
            self.release_unless(d, a, b)
            return d
        row, sc = (a, b) if a.kind == "row" else (b, a)
        if row.ctype != "float":
            self.fail(e, "row arithmetic needs an fp32 row (cast first)")
        s = self.as_float(sc)
        n = f"static_cast<int32_t>({row.count})"
        d = self.dest("float", row.count, row.block, row)
        if e.op == "*":
            self.vec(f"Muls({d.ref}, {row.ref}, {s}, {n});", (row,), (d,))
        elif e.op == "+":
            self.vec(f"Adds({d.ref}, {row.ref}, {s}, {n});", (row,), (d,))
        elif e.op == "-" and a.kind == "row":
            self.vec(f"Adds({d.ref}, {row.ref}, -({s}), {n});", (row,), (d,))
        elif e.op == "-":
            self.vec(f"Muls({d.ref}, {row.ref}, -1.0f, {n});", (row,), (d,))
            self.vec(f"Adds({d.ref}, {d.ref}, {s}, {n});", (d,), (d,))
        else:  # division keeps its single rounding: broadcast the scalar, then a vector Div
            c = self.alloc("float", row.count, row.block)
            self.vec(f"Duplicate({c.ref}, {s}, {n});", (), (c,))
            if a.kind == "row":
                self.vec(f"Div({d.ref}, {row.ref}, {c.ref}, {n});", (row, c), (d,))
            else:
                self.vec(f"Div({d.ref}, {c.ref}, {row.ref}, {n});", (c, row), (d,))
            self.release(c)
        self.release_unless(d, row)
        return d

    def scalar_arith(self, e: Binary, a: Val, b: Val) -> Val:
        static = a.static and b.static
        if "float" in (a.ctype, b.ctype) or e.op == "/":
            if e.op not in ("+", "-", "*", "/"):
                self.fail(e, f"operator {e.op} on fp32 scalars")
            return Val("scalar", "float", f"({self.as_float(a)} {e.op} {self.as_float(b)})", static=static)
        if e.op == "//":
            return Val("scalar", "int64_t", f"FloorDivI64({a.ref}, {b.ref})", static=static)
        if e.op == "%":
            return Val("scalar", "int64_t", f"FloorModI64({a.ref}, {b.ref})", static=static)
        if e.op in ("+", "-", "*"):
            return Val("scalar", "int64_t", f"(static_cast<int64_t>({a.ref}) {e.op} {b.ref})", static=static)
        self.fail(e, f"operator {e.op} on integer scalars")

    def cond(self, e: Cond) -> Val:
        if self.is_static_test(e.test):
            c, _ = self.condition(e.test)
            return self.static_select(c, e)
        # data-dependent: CompareScalar → bit mask, then Select between the branches
        t = e.test
        if not (isinstance(t, Binary) and t.op in CMP_MODES):
            self.fail(e, "a data-dependent test must be one comparison")
        lhs, rhs = self.lower(t.lhs), self.lower(t.rhs)
        op_ = t.op
        if lhs.kind == "scalar" and rhs.kind == "row":
            lhs, rhs, op_ = rhs, lhs, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op_, op_)
        if lhs.kind != "row" or rhs.kind != "scalar" or lhs.ctype != "float":
            self.fail(e, "a data-dependent test must compare an fp32 row with a scalar")
        kinds = (self.shape_kind(e.then), self.shape_kind(e.orelse))
        # Select keeps src0 where the mask bit is set: the row branch goes first, so the mask is
        # the test itself or its negation when only the `else` branch is a row.
        mode = CMP_NEGATED[op_] if kinds == ("scalar", "row") or kinds == ("scalar", "scalar") else op_
        cnt = lhs.count
        mask = self.alloc("uint8_t", cnt, lhs.block)
        self.vec(f"CompareScalar({mask.ref}, {lhs.ref}, {self.as_float(rhs)}, CMPMODE::{CMP_MODES[mode]}, "
                 f"AlignUp(static_cast<uint32_t>({cnt}), FLOATS_PER_REPEAT));", (lhs,), (mask,))
        self.release(lhs)  # the mask holds the test; the operand may now be reused
        then, orelse = self.lower(e.then), self.lower(e.orelse)
        if kinds == ("row", "scalar"):
            row, other = then, orelse
        elif kinds == ("scalar", "row"):
            row, other = orelse, then
        elif kinds == ("row", "row"):
            row, other = then, orelse
        else:
            row = self.alloc("float", cnt, lhs.block)
            self.vec(f"Duplicate({row.ref}, {self.as_float(orelse)}, static_cast<int32_t>({cnt}));", (), (row,))
            other = then
        for v in (row, other):
            if v.kind == "row":
                self.need_float(e, v)
        d = self.dest("float", cnt, lhs.block, row, other)
        if other.kind == "row":
            self.vec(f"Select({d.ref}, {mask.ref}, {row.ref}, {other.ref}, SELMODE::VSEL_TENSOR_TENSOR_MODE, "
                     f"static_cast<uint32_t>({cnt}));", (mask, row, other), (d,))
        else:
            self.vec(f"Select({d.ref}, {mask.ref}, {row.ref}, {self.as_float(other)}, "
                     f"SELMODE::VSEL_TENSOR_SCALAR_MODE, static_cast<uint32_t>({cnt}));", (mask, row), (d,))
        self.release(mask)
        self.release_unless(d, row, other)
        return d

    def static_select(self, c: str, e: Cond) -> Val:
        """`if <compile-time test> then a else b`: the branch `if constexpr` keeps fills one variable."""
        kinds = {self.shape_kind(e.then), self.shape_kind(e.orelse)}
        if kinds == {"scalar"}:
            a, b = self.lower(e.then), self.lower(e.orelse)
            fl = "float" in (a.ctype, b.ctype)
            x, y = (self.as_float(a), self.as_float(b)) if fl else (a.ref, b.ref)
            return Val("scalar", "float" if fl else a.ctype, f"(({c}) ? ({x}) : ({y}))",
                       static=a.static and b.static)
        if kinds != {"row"}:
            self.fail(e, "branches of different shapes")
        name = self.fresh("sel")
        self.emit(f"LocalTensor<float> {name};")
        start_free, start_n, start_dirty = list(self.free), self.nslots, set(self.dirty)
        results, dirty = [], set()
        for branch, opener in ((e.then, f"if constexpr ({c}) {{"), (e.orelse, "} else {")):
            # only one branch exists per instantiation: both start from the same free slots and unordered rows
            self.free, self.nslots, self.dirty = list(start_free), start_n, set(start_dirty)
            self.emit(opener)
            self.depth += 1
            v = self.lower(branch)
            if v.kind != "row":
                self.fail(branch, "expected a row")
            if v.ctype != "float" or not v.owned or not v.slots:
                f = self.alloc("float", v.count, v.block)
                if v.ctype == "float":
                    self.copy_row(f, v)
                else:
                    s = self.scratch()
                    self.vec(f"CastRow<float, {v.ctype}, RoundMode::CAST_NONE, false, false>({f.ref}, {v.ref}, "
                             f"static_cast<uint32_t>({v.count}), {s.ref});", (v,), (f, s))
                    self.release(s)
                self.release(v)
                v = f
            self.emit(f"{name} = {v.ref};")
            self.depth -= 1
            results.append((v, set(self.free), self.nslots))
            dirty |= self.dirty
        self.emit("}")
        self.dirty = dirty
        slots = tuple(dict.fromkeys(s for v, _, _ in results for s in v.slots))
        self.nslots = max(n for _, _, n in results)

        def free_in(s: int, branch) -> bool:
            _, free, n = branch
            return s in free or s >= n

        self.free = [s for s in range(self.nslots) if s not in slots and all(free_in(s, b) for b in results)]
        v0 = results[0][0]
        return Val("row", "float", name, v0.count, v0.block, slots, True)

    def shape_kind(self, e: Expr) -> str:
        if isinstance(e, (Int, Float, Bool)):
            return "scalar"
        if isinstance(e, Name):
            if e.id in self.lets:
                return self.lets[e.id].kind
            return "row" if e.id in self.inputs else "scalar"
        if isinstance(e, Call):
            if e.fn in ("reduce_max", "reduce_sum", "qmax", "emax", "present", "dtype"):
                return "scalar"
            if e.fn in ("min", "max", "abs", "floor", "log2", "exp2", "exp", "sqrt", "rsqrt"):
                return "row" if "row" in {self.shape_kind(a) for a in e.args} else "scalar"
            return "row"
        if isinstance(e, Binary):
            if e.op in CMP_MODES or e.op in ("and", "or"):
                return "scalar"
            return "row" if "row" in (self.shape_kind(e.lhs), self.shape_kind(e.rhs)) else "scalar"
        if isinstance(e, Unary):
            return self.shape_kind(e.operand)
        if isinstance(e, Cond):
            return self.shape_kind(e.then)
        return "scalar"

    # ---- calls ----
    def call(self, e: Call) -> Val:
        fn = e.fn
        if fn == "dtype":
            t = self.types.tensor_types[e.args[0].id]
            return Val("type", t, t)
        if fn == "present":
            c, st = self.condition(e)
            return Val("scalar", "bool", c, static=st)
        if fn == "qmax":
            return Val("scalar", "float", f"DTypeTraits<{self.static_type(e.args[0])}>::MAX", static=True)
        if fn == "emax":
            return Val("scalar", "int32_t", f"DTypeTraits<{self.static_type(e.args[0])}>::EMAX", static=True)
        if fn == "cast":
            v = self.lower(e.args[0])
            if v.kind != "row":
                self.fail(e, "cast of a scalar into a row needs the row's length (write it as a row expression)")
            out = self.alloc(self.static_type(e.args[1]), v.count, v.block)
            self.cast_into(out, e, v)
            return out
        if fn == "abs":
            v = self.lower(e.args[0])
            if v.kind == "scalar":
                return Val("scalar", "float", f"AbsF({self.as_float(v)})", static=v.static)
            self.need_float(e, v)
            d = self.dest("float", v.count, v.block, v)
            self.vec(f"Abs({d.ref}, {v.ref}, static_cast<int32_t>({v.count}));", (v,), (d,))
            self.release_unless(d, v)
            return d
        if fn in ("min", "max"):
            return self.minmax(e)
        if fn == "reduce_max":
            v = self.lower(e.args[0])
            if v.kind != "row":
                self.fail(e, "reduce_max of a scalar")
            self.need_float(e, v)
            work = self.scratch()
            var = self.fresh("rmax")
            self.vec(f"const float {var} = ReduceMaxRow({v.ref}, static_cast<uint32_t>({v.count}), {work.ref});",
                     (v,), (work,), ends="ordered")  # ends with the scalar unit's wait on the vector pipe
            self.release(work, v)
            return Val("scalar", "float", var)
        if fn == "reduce_sum":
            v = self.lower(e.args[0])
            if v.kind != "row":
                self.fail(e, "reduce_sum of a scalar")
            self.need_float(e, v)
            work = self.scratch()
            var = self.fresh("rsum")
            self.vec(f"const float {var} = ReduceSumRow({v.ref}, static_cast<uint32_t>({v.count}), {work.ref});",
                     (v,), (work,), ends="ordered")
            self.release(work, v)
            return Val("scalar", "float", var)
        if fn in ("sqrt", "rsqrt"):
            # the vector Sqrt (a scalar goes through one block of it, as the real kernels compute rstd); rsqrt is
            # 1 / Sqrt with a Div, never the approximate Rsqrt
            v = self.lower(e.args[0])
            if v.kind == "scalar":
                var = self.unary_scalar("SQRT", v)
                return Val("scalar", "float", f"(1.0f / {var})" if fn == "rsqrt" else var)
            self.need_float(e, v)
            d = self.dest("float", v.count, v.block, v)
            self.vec(f"Sqrt({d.ref}, {v.ref}, static_cast<int32_t>({v.count}));", (v,), (d,))
            if fn == "rsqrt":
                c = self.alloc("float", v.count, v.block)
                self.vec(f"Duplicate({c.ref}, 1.0f, static_cast<int32_t>({v.count}));", (), (c,))
                self.vec(f"Div({d.ref}, {c.ref}, {d.ref}, static_cast<int32_t>({v.count}));", (c, d), (d,))
                self.release(c)
            self.release_unless(d, v)
            return d
        if fn == "exp":
            # the vector Exp (a scalar goes through one block of it, as the real const-expert softmax does)
            v = self.lower(e.args[0])
            if v.kind == "scalar":
                return Val("scalar", "float", self.unary_scalar("EXP", v))
            self.need_float(e, v)
            d = self.dest("float", v.count, v.block, v)
            self.vec(f"Exp({d.ref}, {v.ref}, static_cast<int32_t>({v.count}));", (v,), (d,))
            self.release_unless(d, v)
            return d
        if fn == "block_max":
            n = self.block_size(e)
            v = self.lower(e.args[0])
            if v.kind != "row" or v.block is not None:
                self.fail(e, "block_max needs a full row")
            self.need_float(e, v)
            if not v.owned:  # block_max zero-pads the row's tail in place: never on a live value
                c = self.alloc("float", v.count)
                self.copy_row(c, v)
                v = c
            d = self.alloc("float", f"CeilDiv(hLen, {n}U)", block=n)
            # it zero-pads v's tail by the scalar unit after a wait on the vector pipe: v is written too
            self.vec(f"BlockMaxRow<{n}U, false>({d.ref}, {v.ref}, static_cast<uint32_t>({v.count}));", (v,), (d, v))
            self.release(v)
            return d
        if fn == "per_block":
            n = self.block_size(e)
            v = self.lower(e.args[0])
            d = self.alloc("float", "hLen")
            if v.kind == "scalar":
                self.vec(f"Duplicate({d.ref}, {self.as_float(v)}, static_cast<int32_t>(hLen));", (), (d,))
                return d
            if v.block != n:
                self.fail(e, f"per_block({n}) of values that are not per block of {n}")
            if n == FLOATS_PER_BLOCK:  # one Brcb block a value: straight into d
                self.vec(f"BroadcastBlocks<{n}U, false>({d.ref}, {v.ref}, hLen);", (v,), (d,))
            else:  # a Brcb block a value into a work row, a barrier, then a Copy repeat per block of n
                w = self.scratch()
                self.vec(f"BroadcastBlocks<{n}U, false>({d.ref}, {v.ref}, hLen, {w.ref});", (v,), (d, w), "fenced")
                self.release(w)
            self.release(v)
            return d
        if fn == "exponent":
            if not isinstance(e.args[0], Name):
                self.fail(e, "exponent() takes a tensor")
            src = self.name(e.args[0])
            d = self.alloc("float", "hLen")
            self.vec(f"ExponentRow({d.ref}, {src.ref}, hLen);  // biased 8-bit exponent field, as fp32 codes",
                     (src,), (d,), "ordered")
            self.release(src)
            return d
        if fn == "exp2":
            v = self.lower(e.args[0])
            if v.kind == "scalar":
                return Val("scalar", "float", f"Exp2F({self.as_float(v)})")
            self.need_float(e, v)
            s = self.scratch()
            d = self.dest("float", v.count, v.block, v)
            self.vec(f"Exp2Row({d.ref}, {v.ref}, static_cast<uint32_t>({v.count}), {s.ref});", (v,), (d, s),
                     "ordered")
            self.release(s)
            self.release_unless(d, v)
            return d
        if fn == "pad_even":
            v = self.lower(e.args[0])
            if v.kind != "row":
                self.fail(e, "pad_even of a scalar")
            self.emit(f"PadEvenRow({v.ref}, static_cast<uint32_t>({v.count}));  // one zero past an odd row")
            return replace(v, count=f"AlignUp(static_cast<uint32_t>({v.count}), 2U)")
        if fn == "e8m0":
            v = self.lower(e.args[0])
            if v.kind != "row":
                self.fail(e, "e8m0 of a scalar")
            self.need_float(e, v)
            out = self.alloc("fp8_e8m0_t", v.count, v.block)
            s = self.scratch()
            self.vec(f"EncodeE8M0Row({out.ref}, {v.ref}, static_cast<uint32_t>({v.count}), {s.ref});", (v,),
                     (out, s))
            self.release(s, v)
            return out
        if fn == "routed":
            return self.routed(e)
        if fn == "row":
            return self.row_of(e.args[0].id, e, getattr(self, "width_hint", None) or "hLen")
        if fn in ("floor", "log2"):
            v = self.lower(e.args[0])
            if v.kind == "scalar":
                return Val("scalar", "float", f"{'FloorF' if fn == 'floor' else 'Log2F'}({self.as_float(v)})")
            self.need_float(e, v)
            d = self.dest("float", v.count, v.block, v)
            if fn == "floor":
                iv = self.view(d, "int32_t")
                self.vec(f"Cast({iv.ref}, {v.ref}, RoundMode::CAST_FLOOR, static_cast<uint32_t>({v.count}));",
                         (v,), (iv,))
                self.vec(f"Cast({d.ref}, {iv.ref}, RoundMode::CAST_NONE, static_cast<uint32_t>({v.count}));",
                         (iv,), (d,))
            else:
                self.vec(f"Ln({d.ref}, {v.ref}, static_cast<int32_t>({v.count}));", (v,), (d,))
                self.vec(f"Muls({d.ref}, {d.ref}, {float_literal(1.0 / math.log(2.0))}, "
                         f"static_cast<int32_t>({v.count}));", (d,), (d,))
            self.release_unless(d, v)
            return d
        self.fail(e, f"builtin {fn} has no Ascend C lowering")

    def need_float(self, e: Expr, v: Val) -> None:
        if v.ctype != "float":
            self.fail(e, "this needs an fp32 row (cast first)")

    def block_size(self, e: Call) -> int:
        n = e.args[1]
        if not isinstance(n, Int) or n.value <= 0:
            self.fail(e, "the block size must be a positive integer literal")
        if n.value % FLOATS_PER_BLOCK:
            self.fail(e, f"the block size must be a multiple of {FLOATS_PER_BLOCK} (one 32-byte fp32 block)")
        return n.value

    def minmax(self, e: Call) -> Val:
        vals = [self.lower(a) for a in e.args]
        rows = [v for v in vals if v.kind == "row"]
        scalars = [v for v in vals if v.kind == "scalar"]
        if not rows:
            fl = any(s.ctype == "float" for s in scalars)
            out = self.as_float(scalars[0]) if fl else scalars[0].ref
            for s in scalars[1:]:
                if fl:
                    out = f"{'MinF' if e.fn == 'min' else 'MaxF'}({out}, {self.as_float(s)})"
                else:
                    out = f"{'MinI64' if e.fn == 'min' else 'MaxI64'}({out}, {s.ref})"
            return Val("scalar", "float" if fl else "int64_t", out, static=all(s.static for s in scalars))
        for r in rows:
            self.need_float(e, r)
        first = rows[0]
        d = self.dest("float", first.count, first.block, *rows)
        acc = first
        for r in rows[1:]:
            self.vec(f"{'Min' if e.fn == 'min' else 'Max'}({d.ref}, {acc.ref}, {r.ref}, "
                     f"static_cast<int32_t>({first.count}));", (acc, r), (d,))
            acc = d
        for s in scalars:
            self.vec(f"{'Mins' if e.fn == 'min' else 'Maxs'}({d.ref}, {acc.ref}, {self.as_float(s)}, "
                     f"static_cast<int32_t>({first.count}));", (acc,), (d,))
            acc = d
        self.release_unless(d, *rows)
        return d

    def unary_scalar(self, op_: str, v: Val) -> str:
        """A local holding ScalarUnary ``op_`` of the fp32 scalar ``v``, through one block of the vector unit."""
        work = self.scratch()
        var = self.fresh(op_.lower())
        self.vec(f"const float {var} = UnaryScalar<ScalarUnary::{op_}>({self.as_float(v)}, {work.ref});", (),
                 (work,), "ordered")
        self.release(work)
        return var

    def mul_per_block(self, row_e: Expr, pb: Call) -> Val:
        n = self.block_size(pb)
        # the block values first: the barrier the row's own chain needs before its last instruction then orders them
        # before MulBlocks' Brcb too (Int8DequantProcess casts the int8 row and the scales with no barrier between)
        vals = self.lower(pb.args[0])
        row = self.lower(row_e)
        if row.kind != "row" or row.block is not None:
            self.fail(pb, "per_block multiplies a full row")
        self.need_float(pb, row)
        d = self.dest("float", row.count, None, row)
        if vals.kind == "scalar":
            self.vec(f"Muls({d.ref}, {row.ref}, {self.as_float(vals)}, static_cast<int32_t>({row.count}));",
                     (row,), (d,))
        else:
            if vals.block != n:
                self.fail(pb, f"per_block({n}) of values that are not per block of {n}")
            w = self.scratch()  # the values broadcast by Brcb (opgen_kernel_helpers.h MulBlocks)
            # a barrier after the Brcb of the values, before the Mul reads the row (MulBlocks)
            self.vec(f"MulBlocks<{n}U, false>({d.ref}, {row.ref}, {vals.ref}, static_cast<uint32_t>({row.count}), "
                     f"{w.ref});", (vals,), (d, w), "fenced")
            self.release(w, vals)
        self.release_unless(d, row)
        return d

    def cast_into(self, out: Val, e: Call, v: Val | None = None) -> None:
        rnd = e.kwarg("round")
        sat = e.kwarg("sat")
        mode = ROUND_MODES[rnd.id] if isinstance(rnd, Name) else ROUND_MODES["rint"]
        if sat is not None and not isinstance(sat, Bool):
            self.fail(e, "sat= must be a literal")
        if v is None:
            v = self.lower(e.args[0])
        if v.kind == "scalar":
            tmp = self.alloc("float", out.count)
            self.vec(f"Duplicate({tmp.ref}, {self.as_float(v)}, static_cast<int32_t>({out.count}));", (), (tmp,))
            v = tmp
        self.cast_row(out, v, mode, bool(sat.value) if sat else False)
        self.release_unless(out, v)

    def e8m0_into(self, out: Val, e: Call) -> None:
        v = self.lower(e.args[0])
        if v.kind != "row":
            self.fail(e, "e8m0 of a scalar")
        self.need_float(e, v)
        s = self.scratch()
        self.emit(f"static_assert(std::is_same<{out.ctype}, fp8_e8m0_t>::value, "
                  f"\"e8m0() produces FLOAT8_E8M0 codes\");")
        self.vec(f"EncodeE8M0Row({out.ref}, {v.ref}, static_cast<uint32_t>({out.count}), {s.ref});", (v,), (out, s))
        self.release(s, v)

    def routed(self, e: Call) -> Val:
        t = e.args[0].id
        layout = self.types.routed_layout.get(t, "RowLayout::ROWS")
        ctype = self.types.tensor_types[t]
        f = self.alloc("float", "hLen")
        s = self.scratch()
        # t as fp32: the destination expert's row ((E, H)), or its (H,) / (1,) broadcast (LoadRowF32's layout)
        self.vec(f"LoadRowF32<{ctype}, {layout}>({f.ref}, {s.ref}, {t}Gm_, expertRow, hLen);", (), (f, s))
        self.release(s)
        return f

    def row_of(self, t: str, e: Expr, width: str) -> Val:
        if t not in self.inputs:
            self.fail(e, f"row() of {t}, which is not an input")
        ctype = self.types.tensor_types[t]
        d = self.alloc(ctype, width)
        self.emit(f"LoadRow({d.ref}, {t}Gm_, tokenIdx, static_cast<uint32_t>({width}));")  # the token's row of t
        self.dirty -= self.buffers(d)  # written by MTE2, ordered before the vector pipe (MTE2_V)
        return d


class PostLowering(QuantLowering):
    """A `post` stage → the body of ``PostStage(tokenIdx, reduced)`` (one token row after the reduce).

    The reduced row is given (a calc slot, free to reuse after its last read); each output it assigns is converted
    to the output's dtype in a calc slot and stored to the output's GM row ``tokenIdx`` right away (``StoreRow``:
    no output queue beside the reduce's slots). A scalar (one value per token, e.g. a (BS, 1, 1) output) is stored
    as a one-element row. ``invariants``: the rows every token shares, by their formula's text, computed once per
    core (the C++ row each is in): where the body reads one, it reads that row (not a slot: never written)."""

    def __init__(self, *args, invariants: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.invariants = dict(invariants or {})

    def lower(self, e: Expr) -> Val:
        ref = self.invariants.get(to_spec(e)) if isinstance(e, (Call, Binary, Unary)) else None
        if ref is not None:
            return Val("row", "float", ref, "hLen")
        return super().lower(e)

    def assign(self, out: str, e: Expr) -> None:
        ctype = self.types.tensor_types[out]
        count = self.types.out_counts[out]
        self.width_hint = count
        v = self.lower(e)
        self.width_hint = None
        if v.kind == "scalar":
            d = self.alloc(ctype, count)
            self.emit(f"{d.ref}.SetValue(0U, static_cast<{ctype}>({v.ref}));")
            self.emit(f"StoreRow<{ctype}, HardEvent::S_MTE3>({out}Gm_, tokenIdx, {d.ref}, "
                      f"static_cast<uint32_t>({count}));  // the token's value of {out}")
            self.release(d)
            return
        if v.kind != "row":
            self.fail(e, f"{out} must be a row or one value per token")
        if not self.same_type(v.ctype, ctype):
            d = self.alloc(ctype, count)
            sc = self.scratch()
            self.vec(f"CastRow<{ctype}, {v.ctype}, RoundMode::CAST_RINT, false, false>({d.ref}, {v.ref}, "
                     f"static_cast<uint32_t>({count}), {sc.ref});", (v,), (d, sc))
            self.release(sc, v)
            v = d
        self.emit(f"StoreRow<{ctype}, HardEvent::V_MTE3>({out}Gm_, tokenIdx, {v.ref}, "
                  f"static_cast<uint32_t>({count}));")  # the token's row of out
        self.release(v)


# ---- Jinja filters -----------------------------------------------------------------------------

def ascendc_type(dtype: str) -> str:
    return cpp_type(dtype)


def ascendc_float(v) -> str:
    return float_literal(v)


FILTERS = {
    "ascendc_type": ascendc_type,
    "ascendc_float": ascendc_float,
    "ascendc_ge_value": ge_value,
}
