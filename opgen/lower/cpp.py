"""Spec expressions → C++17 for the portable check core (``<op_snake>_check.h``).

Scalar expressions only: checks, lets, output shapes and dtype rules.  The code
is emitted into one evaluator class per product (see
templates/cpp/op_host/op_tiling/check.h.j2) whose base class ``EvalBase``
(templates/cpp/common/op_host/op_tiling/opgen_check_common.h.j2) gives
each builtin the semantics of the Python lowering (``opgen.lower.python`` with
``opgen.runtime.scope``), so the two validators accept and reject the same
calls with the same messages:

* integers are int64_t.  Overflow in + - * ** abs ceil_div align numel and
  unary minus, and // or % by zero, leave the expression without a value
  ("undefined": ``EvalBase::undefined_`` is set), which fails the check using it,
  as ``EvalError`` does in Python;
* ``//`` rounds toward -inf and ``%`` takes the sign of the divisor; ``/`` is
  IEEE double division (x/0 is ±inf, 0/0 NaN);
* int operands of float arithmetic, and int branches or arguments of a float
  ``if`` / ``min`` / ``max``, are converted to double first; comparisons
  between an int and a float are exact (as Python compares them);
* a float ``//`` or ``%`` with a non-finite operand or quotient, and a float
  ``**`` whose finite operands give a non-finite result, are undefined;
* strings are the UTF-8 bytes (``len`` counts bytes); dtypes are the
  ``ge::DataType`` values of ``opgen.dtypes`` (the header's own ``DataType``);
* ``prefix_true`` / ``all_true`` read tensor data, which tiling never sees:
  they hold for every non-null tensor, as for ``Meta`` tensors in Python;
* lets are evaluated lazily and at most once per call; spec ``def`` macros are
  inlined (``opgen.lower.python._inline``).
"""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary, format_float, to_spec
from opgen.lower.literals import cpp_literal, cpp_string
from opgen.core.errors import LoweringError
from opgen.model.inline import inline as _inline
from opgen.model.env_reads import check_envs
from opgen.model.decl import Check, Op, ProductView, Shape, ShapeCond, TextChoice

from opgen.model.kinds import TENSOR_FNS, BOOL, DTYPE, FLOAT, INT, LIST, SHAPE, STR, ScalarKinds

CPP_TYPES = {INT: "int64_t", FLOAT: "double", BOOL: "bool", STR: "std::string", DTYPE: "DataType", SHAPE: "Dims"}
_SCALAR_TYPES = {"int64": "int64_t", "float": "double", "bool": "bool", "string": "std::string"}
_SHOW = {INT: "ShowInt", FLOAT: "ShowFloat", BOOL: "ShowBool", STR: "ShowStr", DTYPE: "ShowDtype",
         SHAPE: "ShowShape", LIST: "ShowList"}
_COMPARE = {"==": "Eq", "!=": "Ne", "<": "Lt", "<=": "Le", ">": "Gt", ">=": "Ge"}
_INT_ARITH = {"+": "Add", "-": "Sub", "*": "Mul", "//": "FloorDiv", "%": "Mod", "**": "Pow"}
_REAL_ARITH = {"//": "FloorDivReal", "%": "ModReal", "**": "PowReal"}
_ACCESSORS = {"present": "Present", "rank": "Rank", "dim": "Dim", "numel": "Numel", "dtype": "Dtype",
              "shape": "Shape", "format": "FormatOf", "shaped": "Shaped", "prefix_true": "PrefixTrue",
              "all_true": "AllTrue"}

# C++ keywords (and the alternative operator spellings) cannot be field names: such a name gets a trailing '_'.
CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class compl
concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype default delete
do double dynamic_cast else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept not not_eq nullptr operator or or_eq private protected public register reinterpret_cast
requires return short signed sizeof static static_assert static_cast struct switch template this thread_local throw
true try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())


def cpp_ident(name: str) -> str:
    """A spec name as a C++ identifier (parameter fields, output fields)."""
    return name + "_" if name in CPP_KEYWORDS else name


def const_name(name: str) -> str:
    """The header's constant for a builtin spec constant: MB → kMB, MAX_INT32 → kMaxInt32."""
    parts = name.split("_")
    if len(parts) == 1 and len(name) <= 2:
        return "k" + name
    return "k" + "".join(p[:1].upper() + p[1:].lower() for p in parts)


def constants() -> list[tuple[str, str, str]]:
    """(C++ type, name, value) of every builtin constant, in table order."""
    out = []
    for name, value in B.CONSTANTS.items():
        if isinstance(value, float):
            out.append(("double", const_name(name), real_literal(value)))
        else:
            out.append(("int64_t", const_name(name), cpp_literal(value)))
    return out


def real_literal(v: float) -> str:
    """A double literal; NaN and infinities through std::numeric_limits<double>."""
    if v != v:
        return "std::numeric_limits<double>::quiet_NaN()"
    if v in (float("inf"), float("-inf")):
        return ("-" if v < 0 else "") + "std::numeric_limits<double>::infinity()"
    text = format_float(v)
    return f"({text})" if v < 0 else text



def attr_type(typ: str) -> str:
    """C++ type of an attribute or env variable of spec type ``typ``."""
    if typ.startswith("list<"):
        return f"std::vector<{_SCALAR_TYPES[typ[5:-1]]}>"
    return _SCALAR_TYPES[typ]


def attr_default(value, typ: str) -> str:
    """Initializer of a Params field: the spec default, or the type's zero for a required attribute."""
    if typ.startswith("list<"):
        base = typ[5:-1]
        items = ", ".join(attr_default(v, base) for v in (value or ()))
        return "{" + items + "}"
    if value is None:
        return {"int64": "0", "float": "0.0", "bool": "false", "string": '""'}[typ]
    if typ == "float":
        return real_literal(float(value))
    return cpp_literal(value)


def _strip(code: str) -> str:
    """Drop one pair of parentheses around the whole expression."""
    if not (code.startswith("(") and code.endswith(")")):
        return code
    depth = 0
    for i, ch in enumerate(code):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(code) - 1:
            return code
    return code[1:-1]


class ScalarCpp:
    """Lowering of scalar expressions of one product view to C++ inside that view's evaluator class."""

    def __init__(self, view: ProductView):
        self.view = view
        self.op = view.op
        self.kind = ScalarKinds(view)

    def __call__(self, e: Expr) -> str:
        return _strip(self.lower(_inline(self.op, e)))

    # ---- names ------------------------------------------------------------------------------
    def name(self, n: str) -> str:
        k = self.kind
        if n in self.view.ignored_attrs:  # any value passes, and the op reads the default
            a = next(x for x in self.view.attrs if x.name == n)
            value = attr_default(a.default, a.type)
            return f"std::string_view({value})" if a.type == "string" else \
                f"{attr_type(a.type)}{value}" if a.type.startswith("list<") else value
        if n in k.attrs or (n not in k.lets and n in k.envs):
            return f"p.{cpp_ident(n)}"
        if n in k.lets:
            return f"let_{n}()"
        if n in k.bound:
            return f"dim_{n}()"
        if n in B.CONSTANTS:
            return const_name(n)
        if n in DTYPES:
            return f"DataType::{DTYPES[n].ge_enum}"
        raise LoweringError(f"name {n} has no scalar value")

    def real(self, e: Expr) -> str:
        """``e`` as a double (an int converted as Python's float() does)."""
        if self.kind(e) != INT:
            return self.lower(e)
        if isinstance(e, Int):
            return real_literal(float(e.value))
        return f"static_cast<double>({_strip(self.lower(e))})"

    # ---- expressions ----------------------------------------------------------------------
    def lower(self, e: Expr) -> str:
        L, K = self.lower, self.kind
        if isinstance(e, Int):
            return f"({cpp_literal(e.value)})" if e.value < 0 else cpp_literal(e.value)
        if isinstance(e, Float):
            return real_literal(e.value)
        if isinstance(e, Str):
            return cpp_string(e.value) + "sv"
        if isinstance(e, Bool):
            return "true" if e.value else "false"
        if isinstance(e, Name):
            return self.name(e.id)
        if isinstance(e, Unary):
            if e.op == "not":
                return f"!{L(e.operand)}"
            return f"Neg({_strip(L(e.operand))})" if K(e) == INT else f"(-{L(e.operand)})"
        if isinstance(e, Binary):
            return self.binary(e)
        if isinstance(e, InRange):
            lo = "[" if e.lo_closed else "("
            hi = "]" if e.hi_closed else ")"
            return (f"InRange<'{lo}', '{hi}'>({_strip(L(e.operand))}, {_strip(L(e.lo))}, "
                    f"{_strip(L(e.hi))})")
        if isinstance(e, InSet):
            items = "".join(", " + _strip(L(i)) for i in e.items)
            return f"{'!' if e.negated else ''}OneOf({_strip(L(e.operand))}{items})"
        if isinstance(e, Cond):
            kind = K(e)
            if kind == FLOAT:
                a, b = self.real(e.then), self.real(e.orelse)
            elif kind == STR:
                a, b = f"std::string({_strip(L(e.then))})", f"std::string({_strip(L(e.orelse))})"
            else:
                a, b = L(e.then), L(e.orelse)
            return f"({L(e.test)} ? {a} : {b})"
        if isinstance(e, Call):
            return self.call(e)
        raise LoweringError(f"cannot lower {e!r}")

    def binary(self, e: Binary) -> str:
        L, K = self.lower, self.kind
        if e.op in ("and", "or"):
            return f"({L(e.lhs)} {'&&' if e.op == 'and' else '||'} {L(e.rhs)})"
        kinds = {K(e.lhs), K(e.rhs)}
        if e.op in _COMPARE:
            if kinds == {INT, FLOAT}:  # exact, as Python compares an int with a float
                return f"{_COMPARE[e.op]}({_strip(L(e.lhs))}, {_strip(L(e.rhs))})"
            return f"({L(e.lhs)} {e.op} {L(e.rhs)})"
        if e.op == "/":
            return f"Div({_strip(self.real(e.lhs))}, {_strip(self.real(e.rhs))})"
        if kinds == {INT}:
            return f"{_INT_ARITH[e.op]}({_strip(L(e.lhs))}, {_strip(L(e.rhs))})"
        a, b = self.real(e.lhs), self.real(e.rhs)
        if e.op in _REAL_ARITH:
            return f"{_REAL_ARITH[e.op]}({_strip(a)}, {_strip(b)})"
        return f"({a} {e.op} {b})"

    def call(self, e: Call) -> str:
        fn = e.fn
        if fn in TENSOR_FNS:
            return self.tensor_call(e)
        K = self.kind
        args = [_strip(self.lower(a)) for a in e.args]
        if fn in ("min", "max"):
            if K(e) == INT:
                return f"{fn.capitalize()}({{{', '.join(args)}}})"
            reals = [_strip(self.real(a)) for a in e.args]
            return f"{fn.capitalize()}Real({{{', '.join(reals)}}})"
        if fn == "abs":
            return f"Abs({args[0]})" if K(e) == INT else f"std::fabs({args[0]})"
        if fn == "floor":
            return self.lower(e.args[0]) if K(e) == INT else f"std::floor({args[0]})"
        if fn == "ceil_div":
            return f"CeilDiv({args[0]}, {args[1]})"
        if fn == "align":
            return f"Align({args[0]}, {args[1]})"
        if fn == "len":
            return f"Len({args[0]})"
        if fn == "log2":
            return f"std::log2({_strip(self.real(e.args[0]))})"
        if fn == "exp2":
            return f"std::pow(2.0, {_strip(self.real(e.args[0]))})"
        if fn == "qmax":
            return f"QMax({args[0]})"
        if fn == "emax":
            return f"EMax({args[0]})"
        if fn == "ge_dtype":
            return f"GeDtype({args[0]})"
        raise LoweringError(f"builtin {fn} is not available in scalar expressions")

    def tensor_call(self, e: Call) -> str:
        fn = e.fn
        arg = e.args[0] if e.args else None
        if not isinstance(arg, Name) or arg.id not in self.kind.inputs | self.kind.outputs:
            raise LoweringError(f"{fn}() takes a tensor parameter")
        t = arg.id
        if t in self.kind.outputs:
            # Outputs are always present; their dtype is the caller's choice or the rule; their shape is read
            # where it is known (TensorDesc.shaped: tiling and aclnn, the driver when the case gives one); their
            # format always.
            if fn in ("present", "passed"):
                return "true"
            if fn == "dtype":
                return f"dtype_{t}()"
            if fn == "format":  # always known: tiling and aclnn read the output's desc (the driver: ND unless given)
                return f"FormatOf(OutFormatDesc(p.{cpp_ident(t)}))"
            if fn == "shaped":
                return f"p.{cpp_ident(t)}.shaped"
            if fn in ("prefix_true", "all_true"):
                return f"Undefined<{CPP_TYPES[TENSOR_FNS[fn]]}>()"
            if fn == "dim":
                return f"OutDim(p.{cpp_ident(t)}, {_strip(self.lower(e.args[1]))})"
            return f"{_ACCESSORS[fn]}(OutDesc(p.{cpp_ident(t)}))"
        if fn == "dim":
            return f"Dim(p.{cpp_ident(t)}, {_strip(self.lower(e.args[1]))})"
        if fn == "passed":  # the pointer, for the null check of an input an empty tensor passes as absent
            return f"Present(p.{cpp_ident(t)})"
        if fn == "present" and t in self.view.ignored_inputs:  # never read, whatever was passed
            return "false"
        if fn == "present" and t in self.view.empty_absent_inputs:
            return f"HasContents(p.{cpp_ident(t)})"
        return f"{_ACCESSORS[fn]}(p.{cpp_ident(t)})"

    # ---- conditional chains as statements ---------------------------------------------------------
    def arms(self, e: Expr) -> list[tuple[str | None, str]]:
        """``if a then x else if b then y else z`` as (test, value) arms of an if / else-if chain, the last arm's
        test None; an expression that is no conditional is one arm.  The branches are converted as :meth:`lower`
        converts them (a float chain's int branches to double, a string chain's to std::string), and an arm is
        evaluated only where its test selects it, as in the conditional expression."""
        e = _inline(self.op, e)
        kind = self.kind(e)
        out = []
        while isinstance(e, Cond):
            out.append((_strip(self.lower(e.test)), self._arm(e.then, kind)))
            e = e.orelse
            if not (isinstance(e, Cond) and self.kind(e) == kind):
                break
        out.append((None, self._arm(e, kind)))
        return out

    def _arm(self, e: Expr, kind: str) -> str:
        if kind == FLOAT:
            return _strip(self.real(e))
        if kind == STR:
            return f"std::string({_strip(self.lower(e))})"
        return _strip(self.lower(e))

    # ---- display -----------------------------------------------------------------------------
    def show(self, e: Expr) -> str:
        """C++ code giving ``e`` as ``opgen.runtime.scope.show`` prints it."""
        e = _inline(self.op, e)
        return f"{_SHOW[self.kind(e)]}({_strip(self.lower(e))})"

    def show_param(self, name: str) -> str:
        """What a failing check shows when it names no value: ``Scope.value_of(name)``."""
        k = self.kind
        if name in k.attrs or name in k.envs:
            return self.show(Name(name))
        if name in k.inputs:
            return f"ShowTensor(p.{cpp_ident(name)})"
        if name in k.outputs:
            return f"ShowDtype(dtype_{name}())"
        if name in k.lets or name in k.bound:
            return self.show(Name(name))
        raise LoweringError(f"check blames {name}, which has no value")

    # ---- shapes --------------------------------------------------------------------------
    def dim(self, e: Expr) -> str:
        e = _inline(self.op, e)
        code = _strip(self.lower(e))
        return code if self.kind(e) == INT else f"ToDim({code})"

    def shape(self, shape: Shape | None) -> str:
        if shape is None or len(shape.alts) != 1:
            raise LoweringError("an output shape must have exactly one alternative")

        def alt(a) -> str:
            if isinstance(a, ShapeCond):
                return f"({self.lower(_inline(self.op, a.test))} ? {alt(a.then)} : {alt(a.orelse)})"
            return "Dims{" + ", ".join(self.dim(d) for d in a.dims) + "}"

        return _strip(alt(shape.alts[0]))


# ---- what the check-core template reads ----------------------------------------------------

def check_comment(c: Check) -> str:
    """One-line spec text of a check, for the comment above its C++ code."""
    text = to_spec(c.expr)
    if c.conditions:
        text = "when " + " and ".join(to_spec(x) for x in c.conditions) + ": " + text
    return comment_text(text)


def comment_text(text: str) -> str:
    """Text safe inside a // comment: one line, and no trailing backslash (a line continuation)."""
    return " ".join(text.split()).rstrip("\\")


# ---- Jinja filters -----------------------------------------------------------------------------

def cpp_expr(e: Expr, view: ProductView) -> str:
    return ScalarCpp(view)(e)


def cpp_when(conds, view: ProductView) -> str:
    low = ScalarCpp(view)
    if len(conds) == 1:
        return low(conds[0])
    return " && ".join(low.lower(_inline(view.op, c)) for c in conds)


def cpp_shown(c: Check, view: ProductView) -> str:
    low = ScalarCpp(view)
    return low.show(c.value) if c.value is not None else low.show_param(c.param)


def cpp_text(parts, view: ProductView) -> str:
    """A check's concrete expectation (``decl.TextPart`` parts) as a std::string expression, equal to the Python
    lowering's text (values shown by the Show* functions, a choice as a conditional)."""
    low = ScalarCpp(view)

    def text(ps) -> str:
        code = ["std::string()"]
        for p in ps:
            if isinstance(p, str):
                code.append(cpp_string(p))
            elif isinstance(p, TextChoice):
                code.append(f"({low.lower(_inline(view.op, p.test))} ? {text(p.then)} : {text(p.orelse)})")
            else:
                code.append(low.show(p))
        return "(" + " + ".join(code) + ")"

    return text(parts)


def cpp_shape(shape, view: ProductView) -> str:
    return ScalarCpp(view).shape(shape)


# ---- conditionals as statements ---------------------------------------------------------------------
# A conditional chain at the top of a check, a concrete expectation, an output shape or a dtype rule is written as an
# if / else-if chain of short statements rather than as one nested `?:` expression: clang-format's line-breaking
# search grows with the nesting of a line (the DispatchV2 check core's 34 longest lines took 2.0 s of its 2.4 s),
# and a chain reads as the spec's `if ... then ... else if`.  Each arm is evaluated only where its test selects it,
# as the conditional expression evaluates one branch, so the "undefined" flag and the lazy lets see the same
# evaluations.

def if_chain(arms: list[tuple[str | None, str]], lead: str) -> list[str]:
    """``if (a) { <lead> x; } else if (b) { ... } else { <lead> z; }`` over (test, value) arms, one line each."""
    lines = []
    for i, (test, value) in enumerate(arms):
        if test is None:
            lines.append("} else {")
        else:
            lines.append(f"{'} else ' if i else ''}if ({test}) {{")
        lines.append(f"  {lead}{value};")
    lines.append("}")
    return lines


def return_chain(arms: list[tuple[str | None, str]]) -> list[str]:
    """``if (a) { return x; } if (b) { return y; } return z;`` over (test, value) arms: early returns."""
    lines = []
    for test, value in arms[:-1]:
        lines += [f"if ({test}) {{", f"  return {value};", "}"]
    lines.append(f"return {arms[-1][1]};")
    return lines


def cpp_arms(e: Expr, view: ProductView) -> list[tuple[str | None, str]]:
    """The (test, value) arms of a scalar expression (``ScalarCpp.arms``): more than one for a conditional."""
    return ScalarCpp(view).arms(e)


def cpp_is_chain(e: Expr, view: ProductView) -> bool:
    """Whether ``e`` (its defs inlined) is a conditional, written as statements (:func:`cpp_arms`)."""
    return isinstance(_inline(view.op, e), Cond)


def cpp_holds(c: Check, view: ProductView) -> list[str]:
    """A check whose expression is a conditional chain: ``bool holds`` assigned by an if / else-if chain."""
    return ["bool holds = false;"] + if_chain(cpp_arms(c.expr, view), "holds = ")


def cpp_check_open(c: Check, view: ProductView) -> str:
    """The line opening a check whose expression is computed as statements (:func:`cpp_holds`): its guards and
    conditions as an ``if``, or a plain block where it has neither."""
    guards = cpp_stage_guard(c) + cpp_env_guard(c, view)
    if c.conditions:
        return f"if ({guards}Applies({cpp_when(c.conditions, view)})) {{"
    if guards:
        return f"if ({guards.removesuffix(' && ')}) {{"
    return "{"


def cpp_return_chain(e: Expr, view: ProductView) -> list[str]:
    """``return <e>;`` as statements: early returns for a conditional chain."""
    return return_chain(cpp_arms(e, view))


def cpp_shape_assign(shape: Shape, target: str, view: ProductView) -> list[str]:
    """``<target> = <shape>;`` as statements: an if / else-if chain for a conditional shape."""
    low = ScalarCpp(view)
    alt = shape.alts[0] if shape is not None and len(shape.alts) == 1 else None
    if not isinstance(alt, ShapeCond):
        return [f"{target} = {low.shape(shape)};"]
    arms = []
    while isinstance(alt, ShapeCond):
        arms.append((_strip(low.lower(_inline(view.op, alt.test))), low.shape(Shape((alt.then,)))))
        alt = alt.orelse
    arms.append((None, low.shape(Shape((alt,)))))
    return if_chain(arms, f"{target} = ")


def has_choice(parts) -> bool:
    return any(isinstance(p, TextChoice) for p in parts)


def cpp_text_lines(parts, view: ProductView, target: str = "concrete") -> list[str]:
    """A concrete expectation with a choice (:func:`has_choice`; ``opgen.model.concrete``: a conditional shape
    states the branch the call takes) as statements: ``std::string <target>`` and an if / else-if chain assigning
    each branch's text (a choice within a branch nests), the same text :func:`cpp_text` builds."""
    low = ScalarCpp(view)

    def text(ps) -> str:
        merged: list = []
        for p in ps:
            if isinstance(p, str) and merged and isinstance(merged[-1], str):
                merged[-1] += p
            else:
                merged.append(p)
        return " + ".join(cpp_string(p) if isinstance(p, str) else low.show(p) for p in merged)

    def assign(ps) -> list[str]:
        if not has_choice(ps):
            return [f"{target} = {text(ps)};"] if ps else []
        if len(ps) != 1:
            raise LoweringError("a choice of a concrete expectation has text beside it")
        lines, choice, first = [], ps[0], True
        while True:
            lines.append(f"{'' if first else '} else '}if ({_strip(low.lower(_inline(view.op, choice.test)))}) {{")
            lines += ["  " + line for line in assign(choice.then)]
            first = False
            if len(choice.orelse) == 1 and isinstance(choice.orelse[0], TextChoice):
                choice = choice.orelse[0]
                continue
            lines.append("} else {")
            lines += ["  " + line for line in assign(choice.orelse)]
            lines.append("}")
            return lines

    return [f"std::string {target};"] + assign(parts)


def cpp_kind_type(e: Expr, view: ProductView) -> str:
    """C++ type of a scalar expression (lets)."""
    kind = ScalarKinds(view)(_inline(view.op, e))
    if kind not in CPP_TYPES:
        raise LoweringError(f"a let of kind {kind} has no C++ type")
    return CPP_TYPES[kind]


def cpp_stage_guard(c: Check) -> str:
    """``all && `` before a check that only tiling runs (its class is not in the op_api stage), else nothing."""
    return "" if c.error_class in B.STAGES["op_api"] else "all && "


def cpp_env_guard(c: Check, view: ProductView) -> str:
    """``p.ENV_read && `` for each env variable the check reads (``Params::ENV_read`` is false where tiling could
    not read it: the check is skipped, as the real tilings skip it), else nothing."""
    return "".join(f"p.{cpp_ident(e)}_read && " for e in check_envs(c, view))


def cpp_error_code(error_class: str) -> str:
    """The header's constant for an error class: ``tiling`` → ``kCodeTiling``."""
    return "kCode" + error_class[:1].upper() + error_class[1:]


def cpp_soc_enum(soc: str) -> str:
    """``ascend910_93`` → ``kAscend910_93`` (the Soc enumerator)."""
    return "k" + cpp_soc_class(soc)


def cpp_soc_class(soc: str) -> str:
    """``ascend910_93`` → ``Ascend910_93`` (the product's evaluator class)."""
    if not soc.replace("_", "").isalnum() or not soc[:1].isalpha():
        raise TypeError(f"SoC id {soc!r} is not a C++ identifier")
    return soc[:1].upper() + soc[1:]


def cpp_ge_enum(dtype: str) -> str:
    """``BFLOAT16`` → ``DT_BF16`` (a DataType enumerator of the header)."""
    return DTYPES[dtype].ge_enum


def cpp_attr_init(decl) -> str:
    """Initializer of the Params field of an attribute or env variable."""
    return attr_default(decl.default, decl.type)


FILTERS = {
    "cpp_expr": cpp_expr,
    "cpp_when": cpp_when,
    "cpp_kind_type": cpp_kind_type,
    "cpp_shown": cpp_shown,
    "cpp_shape": cpp_shape,
    "cpp_is_chain": cpp_is_chain,
    "cpp_holds": cpp_holds,
    "cpp_check_open": cpp_check_open,
    "cpp_return_chain": cpp_return_chain,
    "cpp_shape_assign": cpp_shape_assign,
    "cpp_text_lines": cpp_text_lines,
    "cpp_has_choice": has_choice,
    "cpp_text": cpp_text,
    "cpp_ident": cpp_ident,
    "cpp_attr_type": attr_type,
    "cpp_error_code": cpp_error_code,
    "cpp_stage_guard": cpp_stage_guard,
    "cpp_env_guard": cpp_env_guard,
    "cpp_soc_enum": cpp_soc_enum,
    "cpp_soc_class": cpp_soc_class,
    "cpp_ge_enum": cpp_ge_enum,
    "cpp_attr_init": cpp_attr_init,
    "cpp_check_comment": check_comment,
    "cpp_comment": comment_text,
    "cpp_real": real_literal,
}
