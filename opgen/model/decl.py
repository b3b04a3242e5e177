"""The validated semantic model of one operator.

Frozen dataclasses only; emitters and lowerings read this and never see
syntax trees.  The model keeps what the spec *declares* (so it can be printed
back to spec text); ``Op.view(soc)`` resolves product inheritance and yields
the effective per-product facts, including the full ordered list of checks
(implicit ones derived from declarations, then the spec's own constraints).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from opgen.core.builtins import ERROR_CLASSES, JIT_COMPILE_FLAGS
from opgen.core.dtypes import DTYPES
from opgen.core.products import ProductFacts, facts_for
from opgen.lang.expr import Binary, Call, Expr, Float, Int, Name, Span, to_spec, walk


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False, kw_only=True)


def snake(name: str) -> str:
    """CamelCase → snake_case (``MoeDistributeDispatchV2`` → ``moe_distribute_dispatch_v2``)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


@dataclass(frozen=True)
class Range:
    lo: Expr
    hi: Expr
    lo_closed: bool
    hi_closed: bool


@dataclass(frozen=True)
class Domain:
    """An attribute's allowed values: a range or an explicit set of literals."""
    range: Range | None = None
    items: tuple[Expr, ...] = ()

    @property
    def is_range(self) -> bool:
        return self.range is not None


@dataclass(frozen=True)
class ShapeTuple:
    dims: tuple[Expr, ...]
    at_least: tuple[bool, ...] = ()  # per dim: the tensor may be larger there (a capacity); () = every dim exact

    def is_at_least(self, axis: int) -> bool:
        return axis < len(self.at_least) and self.at_least[axis]


@dataclass(frozen=True)
class ShapeCond:
    test: Expr
    then: ShapeTuple
    orelse: "ShapeTuple | ShapeCond"


ShapeAlt = ShapeTuple | ShapeCond


def alt_exprs(alt: ShapeAlt) -> list[Expr]:
    """Every expression of one shape alternative: conditions and dims, in source order."""
    if isinstance(alt, ShapeCond):
        return [alt.test] + alt_exprs(alt.then) + alt_exprs(alt.orelse)
    return list(alt.dims)


@dataclass(frozen=True)
class Shape:
    """Alternatives separated by '|' in the spec (e.g. a 1-D or 2-D mask)."""
    alts: tuple[ShapeAlt, ...]

    def exprs(self) -> list[Expr]:
        return [e for a in self.alts for e in alt_exprs(a)]


@dataclass(frozen=True)
class Tensor:
    name: str
    role: str  # "input" | "output"
    optional: bool
    dtypes: tuple[str, ...]
    formats: tuple[str, ...] = ("ND",)
    shape: Shape | None = None
    doc: str = ""
    ir_name: str = ""
    dtype_rule: Expr | None = None  # outputs: the default dtype when the caller does not choose
    empty_absent: bool = False      # inputs: an empty tensor (a dim of 0) means absent (present() false)
    ignored: bool = False           # optional inputs a product never reads: any tensor is accepted, none is read
    noncontiguous: bool = False     # the aclnn API accepts it non-contiguous (the documents' 非连续Tensor √)
    span: Span | None = _span()


@dataclass(frozen=True)
class Attr:
    name: str
    type: str  # "int64" | "float" | "bool" | "string" | "list<int64>" ...
    optional: bool
    default: object = None  # a Python literal (int, float, bool, str, tuple) or None
    domain: Domain | None = None
    length: Range | None = None
    doc: str = ""
    ir_name: str = ""
    ignored: bool = False  # optional attributes a product never reads: any value passes, the default is used
    omitted: Expr | None = None  # what an aclnn entry point without it passes: dtype(t), or (None) the default
    span: Span | None = _span()


@dataclass(frozen=True)
class Env:
    name: str
    type: str
    default: object
    unit: str = ""
    doc: str = ""
    span: Span | None = _span()


@dataclass(frozen=True)
class Let:
    name: str
    expr: Expr
    doc: str = ""
    span: Span | None = _span()


@dataclass(frozen=True)
class Def:
    name: str
    params: tuple[str, ...]
    body: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Constraint:
    """A declared `require`: under ``conditions`` (from enclosing `when`s), ``expr`` must hold."""
    label: str | None
    conditions: tuple[Expr, ...]
    expr: Expr
    error_class: str
    param: str
    value: Expr | None  # what the message shows as the bad value (default: the blamed parameter)
    message: str
    span: Span | None = _span()
    # a `limit`: opgen's own rule (a call the documents accept that the generated op does not build), not the
    # documents'; checked the same, listed apart by `opgen diff` (not a release change)
    limit: bool = False


@dataclass(frozen=True)
class Buffer:
    """A communication-buffer requirement: env (in its unit) must be >= expr bytes."""
    label: str | None
    conditions: tuple[Expr, ...]
    env: str
    expr: Expr
    error_class: str
    message: str
    span: Span | None = _span()


@dataclass(frozen=True)
class WindowArea:
    name: str
    expr: Expr  # bytes of the area in one data half
    span: Span | None = _span()
    # `area NAME over OTHER = bytes;`: the area starts where the earlier area OTHER starts (the two share their
    # bytes, as the real Ascend 950 Setup/Teardown ops' dispatch and combine blocks do: each call's half holds the
    # dispatch rows until DispatchTeardown has copied them, then the combine rows); None: after the previous areas
    over: str | None = None

    @property
    def spec_text(self) -> str:
        """The area as the spec writes it, after `area `."""
        return f"{self.name}{'' if self.over is None else ' over ' + self.over} = {to_spec(self.expr)}"


# The HCCL windows a status area can live in (the kernels reach them through the HCCL context): the data window,
# the expansion window where the product's context lists one (ProductFacts.exp_window), or windowsOut where the
# kernels read the context's windowsOut[] (ProductFacts.context_windows: the real Ascend 950 Setup/Teardown ops keep
# their status and data-state words there, code: mc2/moe_distribute_combine_setup/op_kernel/moe_distribute_base.h
# WIN_STATE_OFFSET, STATE_WIN_OFFSET).
WINDOW_PLACES = ("windowsIn", "windowsExp", "windowsOut")


@dataclass(frozen=True)
class Window:
    """One rank's HCCL window of a communication domain, as the kernels lay it out: the window the ``env`` sizes,
    less the status area (``state`` bytes in ``state_in``; windowsIn: at its end), splits into ``halves`` data
    halves (the kernels alternate between them per call), each holding the ``areas`` in order.  The one source
    of the layout: tiling checks that the areas fit a half and fills the tiling data fields the kernels address
    the window with (``window_lets``)."""
    domain: str
    env: str
    halves: int
    areas: tuple[WindowArea, ...]
    state_in: str
    state: Expr  # bytes of the status area
    lets: tuple["Let", ...] = ()  # the layout's own derived quantities (e.g. a row message's bytes)
    state_at_start: bool = False  # the status area first and the data halves after it (else: status at the end)
    span: Span | None = _span()
    # the window's bytes as an expression over attributes (`window ep: cclBufferSize - 1 * MB`, the MC2 context
    # ops' window size): None when the env ``env`` sizes it; else ``env`` is the attribute a too small window blames
    size: Expr | None = None
    # the real Atlas A2 ops' layout (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
    # moe_distribute_a2_constant.h ADUMP_WIN_SIZE, FULLMESH_BUFFERID_ADDR): each half is the window / ``halves``
    # and begins with ``reserve`` bytes of no data; the uint32 word at ``buffer_id`` of windowsIn selects the half
    reserve: Expr | None = None
    buffer_id: Expr | None = None
    state_in_reserve: bool = False  # the status area in the last half's reserve (which the real ops leave unused)
    # ``size`` reads the env ``env`` (its value in bytes, as a buffer rule reads it) rather than attributes:
    # `window ep: HCCL_BUFFSIZE // 2 {`, the window the real Ascend 950 Setup/Teardown tilings hand their kernels
    size_env: bool = False
    # `rank_step RANKS = bytes;`: rank r's status area and data halves lie r * rank_step bytes further into its
    # windowsIn (RANKS: the attribute counting the domain's ranks), and the halves split the window less the status
    # area and RANKS steps: the real Ascend 950 MTE ops' layout (code: mc2/common/op_kernel/moe_distribute_base.h,
    # __NPU_ARCH__ 3510: GetBaseWindStateAddrByRankId = windowsIn[r] + r * EP_RANK_OFFSET_STEP,
    # GetBaseWindAddrByRankId = windowsIn[r] + A5_MTE_STATE_WIN_SIZE + r * EP_RANK_OFFSET_STEP; a half
    # totalWinSizeEp / 2, mc2/moe_distribute_dispatch_v2/op_host/op_tiling/moe_distribute_check_win_size.h
    # CheckWinSize: totalWinSizeEp = window - MTE_STATE_ZONE_SIZE - epWorldSize * EP_RANK_OFFSET_STEP)
    rank_step: Expr | None = None
    rank_count: str | None = None

    @property
    def env_sized(self) -> bool:
        """Whether an env sizes the window (alone, or in an expression ``size``), so the tiling reads that env."""
        return self.size is None or self.size_env

    @property
    def source_text(self) -> str:
        """What sizes the window, as the spec writes it."""
        return self.env if self.size is None else to_spec(self.size)

    @property
    def state_in_data(self) -> bool:
        """Whether the status area shares the data window (windowsIn) rather than having one of its own."""
        return self.state_in == WINDOW_PLACES[0]


def window_lets(w: Window, window_bytes: Expr) -> tuple[Let, ...]:
    """The layout as lets, one tiling data field each, so that the host computes every number once and the
    kernels address the window with exactly what tiling checked.  As the real MoE ops split it (code: mc2/
    moe_distribute_dispatch_v2 op_kernel, winDataSizeOffset = dataState * totalWinSize / 2): the window tiling
    sees (``win_window``, the env in bytes) less the status area (``win_state`` bytes at ``win_state_at``, the
    end of windowsIn, or its start with ``at_start``; in windowsExp or windowsOut (``win_state_exp`` 1) the status takes none of
    it) splits into ``halves`` data halves of ``win_half`` bytes (512-aligned), and each half holds
    the areas in order (``win_<area>`` bytes at ``win_<area>_at``), ``win_need`` bytes in all; the window's own
    lets come first, as declared.  With a ``reserve`` (the real Atlas A2 ops' layout) the halves are the whole
    window / ``halves``, each begins with ``win_reserve`` bytes of no data (the first data half at
    ``win_data_at`` = ``win_reserve``), and the status area lies in the last half's reserve.  The paired ops
    see one window, so they agree on the halves as long as they declare the areas they share alike.  With a
    ``rank_step`` (the real Ascend 950 MTE ops' layout) rank r's status area lies ``win_rank_step`` * r into its
    windowsIn and its data halves ``win_rank_step`` * r after ``win_data_at``; the halves split the window less the
    status area and ``win_ranks`` steps, so data half s of rank r starts at win_data_at + r * win_rank_step + s *
    win_half and the last rank's last half ends a step before the window's end."""
    out: list[Let] = list(w.lets)
    reserve = w.reserve if w.reserve is not None else Int(0)
    out += [Let("win_reserve", reserve, "bytes at the start of each data half that hold no data", span=w.span),
            Let("win_buffer_id", Int(0 if w.buffer_id is None else 1),
                "1: the word at win_buffer_id_at of windowsIn selects the data half (else per-core state words)",
                span=w.span),
            Let("win_buffer_id_at", w.buffer_id if w.buffer_id is not None else Int(0),
                "offset in windowsIn of the word that selects the data half", span=w.span)]
    at: Expr = Int(0)  # the offset of the next area: the end of the areas so far
    for a in w.areas:
        start = at if a.over is None else Name(f"win_{a.over}_at")
        out.append(Let(f"win_{a.name}", a.expr, f"bytes of window area {a.name} in one data half", span=a.span))
        out.append(Let(f"win_{a.name}_at", start, f"offset of window area {a.name} in a data half"
                       + ("" if a.over is None else f" (over area {a.over})"), span=a.span))
        end = Binary("+", Name(f"win_{a.name}_at"), Name(f"win_{a.name}"))
        at = end if a.over is None else Call("max", (at, end))
    in_data_window = w.state_in_data
    apart = in_data_window and not w.state_in_reserve  # the status area takes bytes of the window apart from halves
    data = Binary("-", Name("win_window"), Name("win_state")) if apart else Name("win_window")
    if w.rank_step is not None:  # and the ranks' steps (the real 950 ops' totalWinSizeEp: the window less both)
        data = Binary("-", data, Binary("*", Name("win_ranks"), Name("win_rank_step")))
    half = Binary("*", Binary("//", Binary("//", data, Name("win_halves")), Int(512)), Int(512))
    first = in_data_window and w.state_at_start
    state_at = (Binary("*", Int(w.halves - 1), half) if w.state_in_reserve
                else Int(0) if first or not in_data_window else data)
    out += [Let("win_need", at, "bytes the areas need of one data half", span=w.span),
            Let("win_window", window_bytes, f"bytes of the window ({w.source_text}) tiling checks", span=w.span),
            Let("win_halves", Int(w.halves), "data halves (alternating per call)", span=w.span),
            Let("win_state", w.state, f"bytes of the status area (in {w.state_in})", span=w.span),
            Let("win_state_exp", Int(0 if in_data_window else 1),
                "1: the status area is in a window of its own (windowsExp or windowsOut; else in windowsIn)", span=w.span),
            Let("win_state_at", state_at, f"offset of the status area in {w.state_in}", span=w.span),
            Let("win_data_at", Name("win_state") if first else Name("win_reserve"),
                "offset of the first data half in windowsIn", span=w.span),
            Let("win_half", half, "bytes of one data half (512-aligned)", span=w.span),
            Let("win_ranks", Name(w.rank_count) if w.rank_count is not None else Int(0),
                "ranks whose status areas and data halves stagger by win_rank_step (0: none do)", span=w.span),
            Let("win_rank_step", w.rank_step if w.rank_step is not None else Int(0),
                "bytes rank r's status area and data halves lie further into its windowsIn, per r", span=w.span)]
    return tuple(out)


@dataclass(frozen=True)
class QuantStmt:
    kind: str  # "let" | "assign"
    name: str
    expr: Expr
    conditions: tuple[Expr, ...] = ()
    span: Span | None = _span()


def body_reads(body) -> frozenset[str]:
    """The names a formula body reads (a bare name, or the tensor a builtin such as row() / routed() takes)."""
    return frozenset(n.args[0].id if isinstance(n, Call) and n.args and isinstance(n.args[0], Name)
                     else getattr(n, "id", "") for st in body for e in (st.expr, *st.conditions)
                     for n in walk(e)) - {""}


@dataclass(frozen=True)
class SpecialExpert:
    """``special NAME: COUNT "doc" { Moe = ...; }``: COUNT expert ids after the MoE experts (the specials take
    consecutive ranges in declaration order) whose value for a token the combine side computes itself, never
    sent: the formula is written for one token row, as a quant formula; ``routed(T)`` is the row of T for this
    special expert (its index within its kind), ``Moe`` the fp32 row that is weighted and summed (0: nothing).

    ``special NAME: COUNT "doc";`` (``body`` None) declares the id range alone: the dispatch side, which sends no
    row to these ids and computes nothing for them (the documents define the ranges on both ops of the pair)."""
    name: str
    count: str
    doc: str
    body: tuple[QuantStmt, ...] | None
    span: Span | None = _span()

    TARGET = "Moe"

    @property
    def value(self) -> Expr | None:
        return next((s.expr for s in reversed(self.body or ()) if s.kind == "assign" and s.name == self.TARGET),
                    None)

    def reads(self) -> frozenset[str]:
        """The names its formula reads (directly, or through row() / routed()); none without a formula."""
        return body_reads(self.body or ())

    @property
    def adds_nothing(self) -> bool:
        """``Moe = 0``: the expert contributes nothing (the kernel skips it)."""
        v = self.value
        return isinstance(v, (Int, Float)) and v.value == 0


@dataclass(frozen=True)
class RoleBinding:
    """``role ROLE = PARAM;``: the parameter the op family's code calls ROLE (its default name, the one the
    family's first op uses) is PARAM in this op, whose documents name it differently."""
    role: str
    name: str
    span: Span | None = _span()


@dataclass(frozen=True)
class GraphFact:
    """``graph input|output|attr NAME ...;``: where the op's REG_OP proto differs from its OpDef (the real
    repositories' protos are written by hand, apart from the OpDef): the parameter's IR name there, its dtype set
    (proto order), an attribute's default (when ``has_default``), or the attribute it follows. ``None`` keeps the
    OpDef's."""
    role: str  # input | output | attr
    name: str
    ir_name: str | None = None
    dtypes: tuple[str, ...] | None = None
    has_default: bool = False
    default: object = None
    after: str | None = None
    span: Span | None = _span()


@dataclass(frozen=True)
class PostStage:
    """``post NAME "doc" { OUT = ...; }``: formulas over one token row after the family's reduction. ``NAME`` is the
    token's reduced row (fp32, before any cast: for the combine family the weighted sum over its experts plus the
    shared rows and sharedExpertX); the body assigns outputs, each one token row of it (an output (BS, 1, H) takes
    a row, (BS, 1, 1) one value per token). Without one the family writes its reduced output itself
    (``Family.reduced``: CombineV2's xOut = Cast(RINT, NAME))."""
    name: str
    doc: str
    body: tuple[QuantStmt, ...]
    span: Span | None = _span()

    @property
    def assigned(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.body if s.kind == "assign")

    def reads(self) -> frozenset[str]:
        """The names its formulas read (directly, or through row() / routed())."""
        return body_reads(self.body)


@dataclass(frozen=True)
class Send:
    """``send a, b;`` in a quant mode: the lets ``names`` are what travels between the ranks. The first ``at``
    statements of the body run on the sending rank, the rest on the receiving one, which reads only the sent values
    (and attributes, dtypes): the body's value is the same as without the split, so the reference evaluates it
    whole; the kernel sends the named values instead of the formula's output row."""
    names: tuple[str, ...]
    at: int
    span: Span | None = _span()


@dataclass(frozen=True)
class QuantMode:
    value: int
    name: str
    doc: str
    body: tuple[QuantStmt, ...]
    span: Span | None = _span()
    send: Send | None = None

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.name for s in self.body if s.kind == "assign"))

    @property
    def sender(self) -> tuple[QuantStmt, ...]:
        """The statements the sending rank runs (the whole body without a ``send``)."""
        return self.body if self.send is None else self.body[:self.send.at]

    @property
    def receiver(self) -> tuple[QuantStmt, ...]:
        """The statements the receiving rank runs over the sent values (none without a ``send``)."""
        return () if self.send is None else self.body[self.send.at:]


@dataclass(frozen=True)
class Tolerance:
    """How tests compare ``output`` (of the listed dtypes; all when empty) with the reference."""
    output: str
    dtypes: tuple[str, ...]
    exact: bool
    rtol: float = 0.0
    atol: float = 0.0
    span: Span | None = _span()

    def applies(self, output: str, dtype: str) -> bool:
        return self.output == output and (not self.dtypes or dtype in self.dtypes)


@dataclass(frozen=True)
class Product:
    soc: str
    display: str
    extends: str | None = None
    doc: str = ""
    notes: tuple[str, ...] = ()
    pairs_with: tuple[str, ...] = ()
    attr_domains: tuple[tuple[str, Domain], ...] = ()
    unsupported_attrs: tuple[str, ...] = ()
    unsupported_inputs: tuple[str, ...] = ()
    input_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    input_shapes: tuple[tuple[str, Shape], ...] = ()
    output_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    output_shapes: tuple[tuple[str, Shape], ...] = ()
    unspecified_outputs: tuple[str, ...] = ()
    lets: tuple[Let, ...] = ()
    quant_modes: tuple[int, ...] | None = None
    constraints: tuple[Constraint, ...] = ()
    buffers: tuple[Buffer, ...] = ()
    tolerances: tuple[Tolerance, ...] = ()
    empty_absent_inputs: tuple[str, ...] = ()  # inputs an empty tensor passes as absent on this product
    ignored_inputs: tuple[str, ...] = ()       # optional inputs this product accepts and never reads
    ignored_attrs: tuple[str, ...] = ()        # optional attributes it accepts with any value and reads as default
    window: Window | None = None                # replaces the window of the op or of the product it extends
    # why an unspecified output has no contents here (`output X unspecified "why";`), by output; "" when not said
    unspecified_why: tuple[tuple[str, str], ...] = ()
    unreachable: tuple[UnreachableMark, ...] = ()  # checks this product says no accepted call can trip
    narrower: tuple[NarrowerMark, ...] = ()  # checks whose documented domain is narrower than the real op's
    # its AI Core config of the OpDef: the kernel entry (`op_file`, opFile.value) and jitCompile.flag; None: not
    # declared here (the nearest product it extends decides, else the defaults: ProductView.op_file / jit_compile)
    op_file: str | None = None
    jit_compile: str | None = None
    span: Span | None = _span()


@dataclass(frozen=True)
class UnreachableMark:
    """``unreachable ID, ... "why";`` in a product: these checks of its view can never be the one that rejects an
    accepted call the negative search can build, for the reason given. Products that extend it inherit the
    reasons; the build fails on an unreachable check without one and on a product's own mark whose check a
    negative test trips."""
    checks: tuple[str, ...]
    reason: str
    span: Span | None = _span()


@dataclass(frozen=True)
class NarrowerMark:
    """``narrower ID "RANGE" code "SOURCE";`` in a product: check ID of its view keeps the documents' domain,
    which is narrower than what the real op accepts, RANGE, as read in the code file SOURCE. The check stays as
    it is; the mark makes the narrowing visible (``opgen products``, the generated docs). Products that extend
    it inherit the mark where they have the check."""
    check: str
    accepts: str
    source: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Narrowing:
    """A narrowing as a product view shows it: the check (its documented requirement) and the mark."""
    check: Check
    mark: NarrowerMark


@dataclass(frozen=True)
class CommGroup:
    domain: str  # e.g. "ep", "tp"
    attr: str    # the string attribute naming the HCCL group, or the INT32 input carrying an MC2 context
    when: Expr | None = None  # where a group after the first is in use (None: where its name is non-empty)
    # True: ``attr`` is an input, the MC2 context the caller's op_api built for the domain (MoeDistributeDispatchV3:
    # input 0, an INT32 tensor holding Mc2MoeContext): no HCCL group in the OpDef, no HCCL client or cc tiling, the
    # kernel reads every rank's window from the tensor (code: mc2/common/op_kernel/mc2_moe_context.h)
    context: bool = False


@dataclass(frozen=True)
class TextChoice:
    """A part of a check's concrete expectation that depends on a condition (a conditional shape's branch)."""
    test: Expr
    then: tuple
    orelse: tuple


# The concrete expectation a failing check states instead of its message, as parts: text, the value of an
# expression (shown as the messages show values) and choices. Evaluated when the check fails; where a value has
# none, the check states its message.
TextPart = str | Expr | TextChoice


@dataclass(frozen=True)
class Check:
    """One executable check of a product view: the unit both validators lower."""
    id: str
    conditions: tuple[Expr, ...]
    expr: Expr
    error_class: str
    param: str
    value: Expr | None
    message: str
    origin: str  # "declared" | "implicit"
    span: Span | None = _span()
    detail: tuple[TextPart, ...] | None = None  # the concrete expectation (TextPart), None: the message is
    limit: bool = False  # opgen's own rule, not the documents' (a `limit`, or the implicit transport / kernel checks)

    @property
    def code(self) -> int:
        return ERROR_CLASSES[self.error_class]


@dataclass(frozen=True)
class AclnnParam:
    name: str              # an input, output or attribute of the op, or (with a type) one of this entry point only
    const: bool = True     # pointer parameters: const as the document writes it (a `nonconst` one is not)
    type: str | None = None  # an attribute type: a parameter the document lists that the OpDef does not have
    alias: str | None = None  # its C name where the document writes another (`globalBS as globalBs`)
    span: Span | None = _span()

    @property
    def c_name(self) -> str:
        return self.alias or self.name


@dataclass(frozen=True)
class AclnnSize:
    name: str              # the uint64_t& result, e.g. tokenMsgSize
    expr: Expr             # its value: a scalar expression over the parameters the entry point takes
    span: Span | None = _span()


@dataclass(frozen=True)
class AclnnEntry:
    """One aclnn entry point over the op's OpDef: the parameters it takes, in its document's order; every other
    parameter of the op gets its default (null for an optional tensor, the declared default for an attribute).
    Two-stage (``aclnnXGetWorkspaceSize`` + ``aclnnX``), or, with ``sizes``, a size function
    (``aclnnX(..., uint64_t &size, ...)``, e.g. aclnnMoeDistributeDispatchSetupTeardownCalcOutputSize)."""
    name: str              # e.g. aclnnMoeDistributeDispatchV3
    params: tuple[AclnnParam, ...]
    doc: str = ""
    sizes: tuple[AclnnSize, ...] = ()
    span: Span | None = _span()

    @property
    def two_stage(self) -> bool:
        return not self.sizes

    @property
    def stem(self) -> str:
        """File stem of its op_api files and document: aclnnMoeDistributeDispatchV3 -> moe_distribute_dispatch_v3."""
        return snake(self.name[len("aclnn"):])


@dataclass(frozen=True)
class Op:
    name: str
    version: int
    doc: str
    notes: tuple[str, ...]
    pairs_with: tuple[str, ...]
    unsupported_products: tuple[str, ...]
    comm_groups: tuple[CommGroup, ...]
    envs: tuple[Env, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    attrs: tuple[Attr, ...]
    lets: tuple[Let, ...]
    defs: tuple[Def, ...]
    constraints: tuple[Constraint, ...]
    buffers: tuple[Buffer, ...]
    quant_modes: tuple[QuantMode, ...]
    products: tuple[Product, ...]
    quant_by: str | None = None  # the attribute that selects the quant mode
    semantics: str | None = None  # the data-movement pattern (a driver in opgen.runtime.drivers)
    tiling_key: tuple[tuple[str, Expr], ...] = ()  # key fields, one decimal digit each, lowest first
    tolerances: tuple[Tolerance, ...] = ()
    aclnn: tuple[AclnnEntry, ...] = ()  # declared entry points (none: one, aclnn<Name>, over every parameter)
    window: Window | None = None  # the op's HCCL window layout (a product may declare its own)
    specials: tuple[SpecialExpert, ...] = ()  # special experts after the MoE experts, in id order
    post: PostStage | None = None  # formulas over the reduced row (none: the family writes its reduced output)
    roles: tuple[RoleBinding, ...] = ()  # the family's parameters this op names differently
    graph: tuple[GraphFact, ...] = ()  # where the REG_OP proto differs from the OpDef
    source: str = field(default="", compare=False)
    span: Span | None = _span()

    TILING_KEY_BASE = 10000

    @property
    def snake_name(self) -> str:
        return snake(self.name)

    @property
    def params(self) -> tuple:
        """The op's parameters in IR order: inputs, then attributes, then outputs."""
        return self.inputs + self.attrs + self.outputs

    @property
    def hccl_groups(self) -> tuple[CommGroup, ...]:
        """The comm groups named by a string attribute: the HCCL groups of the OpDef, the host's cc tilings and
        the kernel's HCCL clients (an MC2 context domain is none of them)."""
        return tuple(g for g in self.comm_groups if not g.context)

    @property
    def context_group(self) -> CommGroup | None:
        """The comm group whose handle is an input tensor (an MC2 context), if any."""
        return next((g for g in self.comm_groups if g.context), None)

    @property
    def entries(self) -> tuple[AclnnEntry, ...]:
        """The aclnn entry points: the declared ones; without a declared two-stage one, aclnn<Name> over every
        parameter in IR order comes first."""
        if any(e.two_stage for e in self.aclnn):
            return self.aclnn
        return (AclnnEntry(f"aclnn{self.name}", tuple(AclnnParam(p.name) for p in self.params), span=self.span),
                ) + self.aclnn

    @property
    def files_entry(self) -> "AclnnEntry":
        """The entry point whose op_api files and document also carry the size functions (the first two-stage
        one, as CANN declares aclnnMoeDistributeDispatchSetupTeardownCalcOutputSize in
        aclnn_moe_distribute_dispatch_setup.h)."""
        return next(e for e in self.entries if e.two_stage)

    @property
    def role_names(self) -> dict[str, str]:
        """Role -> the op's name of it, for the roles the spec binds (every other role keeps its default name)."""
        return {r.role: r.name for r in self.roles}

    def named(self, role: str) -> str:
        """The op's name of the parameter its family's code calls ``role``."""
        return next((r.name for r in self.roles if r.role == role), role)

    def role_of(self, name: str) -> str:
        """The family's name (role) of the op's parameter ``name``: ``name`` itself unless the spec binds it."""
        return next((r.role for r in self.roles if r.name == name), name)

    def param(self, name: str):
        """The input, output or attribute called ``name`` (None: no such parameter)."""
        return next((p for p in self.params if p.name == name), None)

    def tensor(self, name: str) -> Tensor | None:
        return next((t for t in self.inputs + self.outputs if t.name == name), None)

    def attr(self, name: str) -> Attr | None:
        return next((a for a in self.attrs if a.name == name), None)

    def product(self, soc: str) -> Product | None:
        return next((p for p in self.products if p.soc == soc), None)

    def quant_mode(self, value: int) -> QuantMode | None:
        return next((q for q in self.quant_modes if q.value == value), None)

    @property
    def socs(self) -> tuple[str, ...]:
        return tuple(p.soc for p in self.products)

    def view(self, soc: str) -> "ProductView":
        return self.views[soc]

    @property
    def views(self) -> dict[str, "ProductView"]:
        """Every product's resolved view, in product order.

        Resolution builds on the model (``opgen.model.resolve``), so the model cannot compute its views
        itself without an import back up; the front end attaches them once (``resolve.attach_views``) to
        the op it returns, and every later stage only reads them."""
        try:
            return self.__dict__["_views"]
        except KeyError:
            raise LookupError(f"op {self.name}: product views not attached (load specs through "
                              "opgen.frontend.loader, or call opgen.model.resolve.attach_views)") from None


@dataclass(frozen=True)
class ProductView:
    """Everything that holds on one product after inheritance is resolved."""
    op: Op
    product: Product
    chain: tuple[str, ...]  # the product and its ancestors, nearest first
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    attrs: tuple[Attr, ...]
    unsupported_attrs: tuple[str, ...]
    unsupported_inputs: tuple[str, ...]
    unspecified_outputs: tuple[str, ...]
    lets: tuple[Let, ...]
    quant_modes: tuple[int, ...]
    pairs_with: tuple[str, ...]
    notes: tuple[str, ...]
    checks: tuple[Check, ...]
    buffers: tuple[Buffer, ...]
    tolerances: tuple[Tolerance, ...] = ()  # nearest declaration first: the first that applies wins
    window: Window | None = None            # the nearest declaration (the product's, an ancestor's, the op's)
    unspecified_why: tuple[tuple[str, str], ...] = ()  # per unspecified output, the nearest declaration's reason

    @property
    def soc(self) -> str:
        return self.product.soc

    @property
    def unreachable_marks(self) -> tuple[UnreachableMark, ...]:
        """The product's own ``unreachable`` marks (a base product's do not carry over)."""
        return self.product.unreachable

    def unreachable_reason(self, check_id: str) -> str:
        """Why the spec says check ``check_id`` cannot trip on this product, the nearest mark of its chain first
        ("" when none says). An inherited mark explains only where the check is unreachable here too; only the
        product's own marks must be true of it (the build checks that)."""
        for soc in self.chain:
            p = self.op.product(soc)
            for m in (p.unreachable if p is not None else ()):
                if check_id in m.checks:
                    return m.reason
        return ""

    @property
    def narrowings(self) -> tuple[Narrowing, ...]:
        """The checks of this view whose documented domain is narrower than the real op's, in check order: the
        nearest ``narrower`` mark of the chain for each (an inherited mark applies where the check is here)."""
        marks: dict[str, NarrowerMark] = {}
        for soc in reversed(self.chain):  # farthest first: the nearest mark wins
            p = self.op.product(soc)
            for m in (p.narrower if p is not None else ()):
                marks[m.check] = m
        return tuple(Narrowing(c, marks[c.id]) for c in self.checks if c.id in marks)

    def _nearest(self, field_name: str):
        for soc in self.chain:
            p = self.op.product(soc)
            value = getattr(p, field_name) if p is not None else None
            if value is not None:
                return value
        return None

    @property
    def op_file(self) -> str | None:
        """The kernel entry its OpDef config names (opFile.value; the file op_kernel/<kernel_dir>/<op_file>.cpp), the
        nearest declaration of its chain; None: the op's one entry for every such product, op_kernel/<op>.cpp."""
        return self._nearest("op_file")

    @property
    def kernel_entry(self) -> str:
        """The kernel entry file its OpDef config builds, relative to the op's directory: op_kernel/<kernel_dir of
        its product-table row>/<op_file>.cpp, or the op's one entry op_kernel/<op>.cpp without an op_file."""
        if self.op_file is None:
            return f"op_kernel/{self.op.snake_name}.cpp"
        return f"op_kernel/{self.facts.kernel_dir}/{self.op_file}.cpp"

    @property
    def jit_compile(self) -> str:
        """jitCompile.flag of its OpDef config: the nearest declaration of its chain, else the default (the first
        of builtins.JIT_COMPILE_FLAGS)."""
        return self._nearest("jit_compile") or JIT_COMPILE_FLAGS[0]

    def unspecified_reason(self, output: str) -> str:
        """Why ``output`` has no contents on this product, as the spec says it ("" when it does not)."""
        return dict(self.unspecified_why).get(output, "")

    @property
    def empty_absent_inputs(self) -> tuple[str, ...]:
        """Inputs an empty tensor passes as absent on this product (declared ``empty_absent``)."""
        return tuple(t.name for t in self.inputs if t.empty_absent)

    @property
    def ignored_inputs(self) -> tuple[str, ...]:
        """Optional inputs this product accepts whatever they are and never reads (declared ``ignored``)."""
        return tuple(t.name for t in self.inputs if t.ignored)

    @property
    def ignored_attrs(self) -> tuple[str, ...]:
        """Optional attributes this product accepts with any value and reads as their default (``ignored``)."""
        return tuple(a.name for a in self.attrs if a.ignored)

    @property
    def facts(self) -> ProductFacts:
        """The product-table facts of this product: its own row, else its nearest ancestor's (core.products)."""
        return facts_for(self.chain)

    def tolerance(self, output: str, dtype: str) -> Tolerance:
        """The declared tolerance of an output in a dtype; integer and bool outputs are always exact."""
        for t in self.tolerances:
            if t.applies(output, dtype):
                return t
        if DTYPES[dtype].kind != "float":
            return Tolerance(output, (dtype,), True)
        raise KeyError(f"no tolerance declared for {output} ({dtype}) on {self.soc}")
