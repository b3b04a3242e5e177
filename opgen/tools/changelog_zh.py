"""Chinese sentences of `opgen diff --format md`, in the register of CANN's own change lists.

The documents (specs/sources/current/*.md) write a formula with the spec's names and numbers, ``=`` for
equality, ``≤`` / ``≥`` / ``≠``, ``/`` for integer division ("本文公式中的"/"表示整除"), 且 / 或 between
conditions, and say what a parameter must be in words: "取值范围为[0, epWorldSize)", "为空指针", "x的维数".
``expr_zh`` writes a spec expression that way; the functions below it give the sentence of each kind of change
the differ (opgen.tools.diff) finds, without the parameter they concern (the changelog puts it first:
"epWorldSize（Ascend 950DT）取值范围由[2, 768]变更为[2, 1024]。") and without a final 。.

A check's English message and its id never appear: a check is written as its condition and requirement, and a
change of its error class as the error codes (ERROR_CLASSES) the caller sees.
"""
from __future__ import annotations

from opgen.core.builtins import ERROR_CLASSES
from opgen.lang.expr import (
    ARITHMETIC, COMPARISONS, LOGICAL, Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary,
    to_spec,
)
from opgen.model.decl import Buffer, Check, Def, Domain, Range, Shape, ShapeCond, Tensor
from opgen.model.spec_text import literal

_OPS = {"==": "=", "!=": "≠", "<=": "≤", ">=": "≥", "<": "<", ">": ">", "//": "/"}
_WORD = {"and": "且", "or": "或"}
# Binding strength (higher binds tighter); the Chinese predicates ("x为空指针", "x取值为…") bind like a comparison.
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6, "neg": 7, "**": 8}
_ATOM = 100
_NUMERALS = "一二三四五六七八"
# calls the documents write in words: f(x) -> "x" + suffix
_OF = {"rank": "的维数", "shape": "的shape", "dtype": "的数据类型", "format": "的数据格式", "len": "的长度",
       "numel": "的元素个数"}
_PREDICATES = {"present": "为有效Tensor", "prefix_true": "中的true均排在false之前", "all_true": "中的元素均为true"}


def _prec(e: Expr) -> int:
    if isinstance(e, Binary):
        return _PREC["cmp"] if e.op in COMPARISONS else _PREC[e.op]
    if isinstance(e, Unary):
        return _PREC["cmp"] if e.op == "not" else _PREC["neg"]  # "x为空指针", "不满足（…）"
    if isinstance(e, (InRange, InSet)) or (isinstance(e, Call) and e.fn in _PREDICATES):
        return _PREC["cmp"]
    if isinstance(e, Cond):
        return 0
    if isinstance(e, (Int, Float)) and e.value < 0:
        return _PREC["neg"]
    return _ATOM


def _sub(e: Expr, min_prec: int) -> str:
    text = expr_zh(e)
    return f"({text})" if _prec(e) < min_prec else text


def _items(items) -> str:
    """a、b或c"""
    texts = [value_zh(i) for i in items]
    return texts[0] if len(texts) == 1 else "、".join(texts[:-1]) + "或" + texts[-1]


def value_zh(e: Expr) -> str:
    """An expression standing as one value inside a sentence or a bracket: a conditional value is bracketed,
    "(c时为a，否则为b)", so that the sentence's own 由…变更为… or commas stay apart from it."""
    return _sub(e, 1)


def interval_zh(lo: Expr, hi: Expr, lo_closed: bool, hi_closed: bool) -> str:
    return f"{'[' if lo_closed else '('}{value_zh(lo)}, {value_zh(hi)}{']' if hi_closed else ')'}"


def _call(e: Call) -> str:
    if e.fn in _OF and len(e.args) == 1:
        return _sub(e.args[0], _ATOM) + _OF[e.fn]
    if e.fn in _PREDICATES and len(e.args) == 1:
        return _sub(e.args[0], _ATOM) + _PREDICATES[e.fn]
    if e.fn == "dim" and len(e.args) == 2:
        i = e.args[1]
        nth = _NUMERALS[i.value] if isinstance(i, Int) and 0 <= i.value < len(_NUMERALS) else \
            f"({expr_zh(Binary('+', i, Int(1)))})"
        return f"{_sub(e.args[0], _ATOM)}的第{nth}维"
    parts = [expr_zh(a) for a in e.args] + [f"{k}={expr_zh(v)}" for k, v in e.kwargs]
    return f"{e.fn}({', '.join(parts)})"


def _not(e: Expr) -> str:
    if isinstance(e, Call) and e.fn == "present" and len(e.args) == 1:
        return _sub(e.args[0], _ATOM) + "为空指针"
    if isinstance(e, InSet):
        return expr_zh(InSet(e.operand, e.items, not e.negated))
    if isinstance(e, Name):
        return f"{e.id}为false"
    return f"不满足（{expr_zh(e)}）"


def _cond(e: Cond) -> str:
    """c时为a，否则为b; an else-if chain stays flat: c1时为a，c2时为b，否则为d."""
    parts = []
    while isinstance(e, Cond):
        parts.append(f"{_sub(e.test, 1)}时为{_sub(e.then, 1)}")
        e = e.orelse
    return "，".join(parts) + f"，否则为{_sub(e, 1)}"


def expr_zh(e: Expr) -> str:
    """``e`` as the Chinese documents write a formula or a condition."""
    if isinstance(e, (Int, Float)) and e.value < 0:
        return "-" + to_spec(type(e)(-e.value))  # the spec text brackets it: (-1)
    if isinstance(e, (Int, Float, Str, Bool, Name)):  # names, numbers and string literals as the spec writes them
        return to_spec(e)
    if isinstance(e, Unary):
        return _not(e.operand) if e.op == "not" else "-" + _sub(e.operand, _PREC["neg"])
    if isinstance(e, Binary):
        p = _prec(e)
        if e.op in LOGICAL:
            def side(x: Expr) -> str:  # a且b或c is ambiguous in words: a mixed and / or is always bracketed
                mixed = isinstance(x, Binary) and x.op in LOGICAL and x.op != e.op
                return f"({expr_zh(x)})" if mixed else _sub(x, p)
            return f"{side(e.lhs)}{_WORD[e.op]}{side(e.rhs)}"
        op = _OPS.get(e.op, e.op)
        if e.op in COMPARISONS:
            return f"{_sub(e.lhs, p + 1)} {op} {_sub(e.rhs, p + 1)}"
        if e.op == "**":
            return f"{_sub(e.lhs, _ATOM)} ** {_sub(e.rhs, _PREC['neg'])}"
        assert e.op in ARITHMETIC, e.op
        return f"{_sub(e.lhs, p)} {op} {_sub(e.rhs, p + 1)}"  # left-associative
    if isinstance(e, InRange):
        return f"{_sub(e.operand, _ATOM)}取值范围为{interval_zh(e.lo, e.hi, e.lo_closed, e.hi_closed)}"
    if isinstance(e, InSet):
        return f"{_sub(e.operand, _ATOM)}{'不为' if e.negated else '取值为'}{_items(e.items)}"
    if isinstance(e, Cond):
        return _cond(e)
    if isinstance(e, Call):
        return _call(e)
    raise TypeError(f"not an expression: {e!r}")


def conds_zh(conds: tuple[Expr, ...]) -> str:
    """Enclosing `when`s as one condition (且); a bare boolean name reads "x为true"."""
    parts = []
    for c in conds:
        mixed = isinstance(c, Binary) and c.op == "or"
        parts.append(f"{c.id}为true" if isinstance(c, Name) else f"({expr_zh(c)})" if mixed else _sub(c, _PREC["and"]))
    return "且".join(parts)


def _when(conds: tuple[Expr, ...]) -> str:
    return f"当{conds_zh(conds)}时，" if conds else ""


def _code(error_class: str) -> str:
    return "告警" if error_class == "warn" else str(ERROR_CLASSES[error_class])


# ---- checks -------------------------------------------------------------------------------------------

def check_param(c: Check) -> str:
    """The entry a check is listed under: its blamed parameter, or the dim it blames (x(BS) -> BS), which the
    documents describe on its own."""
    return c.value.id if isinstance(c.value, Name) else c.param


def _requirement(c: Check | Buffer) -> str:
    expr = Binary(">=", Name(c.env), c.expr) if isinstance(c, Buffer) else c.expr
    return f"{_when(c.conditions)}要求{expr_zh(expr)}"


def requirement_zh(c: Check | Buffer) -> str:
    """当…时，要求… (a warning says so: the call goes on)."""
    return _requirement(c) + ("，否则告警" if c.error_class == "warn" else "")


def constraint_added(c: Check | Buffer) -> str:
    return f"新增约束：{requirement_zh(c)}"


def constraint_removed(c: Check | Buffer) -> str:
    return f"删除约束：{requirement_zh(c)}"


def _values(e: Expr) -> str:
    if isinstance(e, InRange):
        return interval_zh(e.lo, e.hi, e.lo_closed, e.hi_closed)
    return _items(e.items)


def constraint_changed(o: Check | Buffer, n: Check | Buffer, rel: str | None = None, param: str = "") -> str:
    """What a caller notices of a changed check: its condition or requirement, its error code, the parameter
    it reports; ``rel`` (widened / narrowed / changed / rewritten): a range or set check on the same operand
    under the same conditions, written as the range (naming the operand unless it is ``param``, the entry the
    sentence is listed under).  A change of the message alone says nothing ("")."""
    parts = []
    if rel is not None:
        operand = n.expr.operand
        head = "" if isinstance(operand, Name) and operand.id == param else expr_zh(operand)
        if rel == "rewritten":
            parts.append(f"{_when(n.conditions)}{head}取值{_values(o.expr)}改写为{_values(n.expr)}（取值不变）")
        else:
            word = "取值范围" if isinstance(n.expr, InRange) else "取值"
            parts.append(f"{_when(n.conditions)}{head}{word}由{_values(o.expr)}变更为{_values(n.expr)}")
    elif _requirement(o) != _requirement(n):
        parts.append(f"约束变更：由「{_requirement(o)}」变更为「{_requirement(n)}」")
    if o.error_class != n.error_class:
        parts.append(f"报错码由{_code(o.error_class)}变更为{_code(n.error_class)}")
    if isinstance(o, Check) and isinstance(n, Check) and check_param(o) != check_param(n):
        parts.append(f"报错参数由{check_param(o)}变更为{check_param(n)}")
    return "；".join(parts)


# ---- parameters ----------------------------------------------------------------------------------------

def domain_zh(d: Domain) -> str:
    if d.range is not None:
        r = d.range
        return "取值范围为" + interval_zh(r.lo, r.hi, r.lo_closed, r.hi_closed)
    return "取值为" + _items(d.items)


def domain_added(d: Domain, new_param: bool) -> str:
    return domain_zh(d) if new_param else f"新增取值约束：{domain_zh(d)}"


def domain_removed(d: Domain) -> str:
    return f"取消取值约束（原{domain_zh(d)}）"


def domain_changed(o: Domain, n: Domain, rel: str) -> str:
    a, b = domain_zh(o), domain_zh(n)
    if o.range is not None and n.range is not None:
        a, b, word = a[len("取值范围为"):], b[len("取值范围为"):], "取值范围"
    elif o.range is None and n.range is None:
        a, b, word = a[len("取值为"):], b[len("取值为"):], "取值"
    else:
        return f"取值约束由「{a}」变更为「{b}」"
    return f"{word}{a}改写为{b}（取值不变）" if rel == "rewritten" else f"{word}由{a}变更为{b}"


def length_changed(o: Range | None, n: Range | None) -> str:
    def text(r):
        return interval_zh(r.lo, r.hi, r.lo_closed, r.hi_closed) if r is not None else "不限"
    return f"字符串长度范围由{text(o)}变更为{text(n)}"


def dtypes_declared(t: Tensor) -> str:
    return "支持的数据类型为" + "、".join(t.dtypes)


def dtypes_added(dtypes) -> str:
    return "新增支持数据类型" + "、".join(dtypes)


def dtypes_removed(dtypes) -> str:
    return "不再支持数据类型" + "、".join(dtypes)


def _alt_zh(a, capacity: bool) -> str:
    if isinstance(a, ShapeCond):  # an else-if chain stays flat, as _cond writes it
        parts = []
        while isinstance(a, ShapeCond):
            parts.append(f"{_sub(a.test, 1)}时为{_alt_zh(a.then, capacity)}")
            a = a.orelse
        return "，".join(parts) + f"，否则为{_alt_zh(a, capacity)}"
    dims = [("≥" if capacity and a.is_at_least(i) else "") + value_zh(d) for i, d in enumerate(a.dims)]
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def shape_zh(s: Shape | None, capacity: bool = True) -> str:
    """(BS, H); alternatives joined by 或; a capacity dim (the tensor may be larger) as ≥A, or, ``capacity``
    false, as its bound alone, which is how the documents write it ("shape为(A * 128,)", A defined as a minimum).
    A shape that is not one tuple is quoted (「…」), so that it stands apart in a sentence."""
    if s is None:
        return "任意shape"
    text = "或".join(_alt_zh(a, capacity) for a in s.alts)
    return text if len(s.alts) == 1 and not isinstance(s.alts[0], ShapeCond) else f"「{text}」"


def shape_changed(o: Shape | None, n: Shape | None) -> str:
    return f"shape由{shape_zh(o)}变更为{shape_zh(n)}"


FLAG_SENTENCES = {  # (what, added): the sentence of an attribute / input / output joining or leaving the list
    ("unsupported", True): "当前版本不支持（预留参数）",
    ("unsupported", False): "变更为支持（不再是预留参数）",
    ("unspecified", True): "输出内容无效（预留输出）",
    ("unspecified", False): "输出内容变更为有效",
    ("empty_absent", True): "支持传入空Tensor，传入空Tensor时视为未传入",
    ("empty_absent", False): "不再将空Tensor视为未传入",
    ("ignored", True): "预留参数，传入时不读取（不做校验）",
    ("ignored", False): "不再忽略，传入时读取并校验",
    ("ignored", True, "attr"): "预留参数，传入任意值均不校验，按默认值处理",
    ("ignored", False, "attr"): "不再忽略，传入值参与校验与计算",
    # doc: the 非连续Tensor column of the aclnn documents (√ / -)
    ("noncontiguous", True): "由不支持非连续Tensor变更为支持非连续Tensor",
    ("noncontiguous", False): "由支持非连续Tensor变更为不支持非连续Tensor",
}


def unsupported_to_ignored(role: str) -> str:
    """An unsupported parameter (which had to keep its default, or be null) that is now accepted and ignored."""
    if role == "attr":
        return "由「当前版本不支持，需保持默认值」变更为「预留参数，传入任意值均不校验，按默认值处理」"
    return "由「当前版本不支持，需传空指针」变更为「预留参数，传入时不读取（不做校验）」"


def flag_sentence(what: str, role: str, added: bool) -> str:
    """The sentence of a flag change; a role-specific one (an ignored attribute) before the shared one."""
    return FLAG_SENTENCES.get((what, added, role)) or FLAG_SENTENCES[what, added]


def quant_mode_changed(mode: int, doc: str, added: bool) -> str:
    what = f"量化模式{mode}" + (f"（{doc}）" if doc else "")
    return ("新增支持" if added else "不再支持") + what


def dtype_rule_changed(o: Expr | None, n: Expr | None) -> str:
    def text(e):
        return expr_zh(e) if e is not None else "无"
    return f"未指定时的输出数据类型由「{text(o)}」变更为「{text(n)}」"


def text_changed(what: str, o: str, n: str) -> str:
    """参数说明由「old」变更为「new」"""
    return f"{what}由「{o}」变更为「{n}」"


# ---- op-wide -------------------------------------------------------------------------------------------

def env_zh(e) -> str:
    return f"{e.type}类型，默认值为{literal(e.default)}{e.unit}"


def env_added(e) -> str:
    return f"新增环境变量{e.name}（{env_zh(e)}）"


def env_removed(name: str, replaced_by: str | None) -> str:
    return f"删除环境变量{name}" + (f"（由{replaced_by}入参代替）" if replaced_by else "")


def env_changed(o, n) -> str:
    return f"环境变量{n.name}由「{env_zh(o)}」变更为「{env_zh(n)}」"


def named_expr_zh(x) -> str:
    """A let (rowsOut = …) or a def (Align8(x) = …)."""
    return f"{_named_head(x)} = {expr_zh(x.body if isinstance(x, Def) else x.expr)}"


def _named_head(x) -> str:
    return f"{x.name}({', '.join(x.params)})" if isinstance(x, Def) else x.name


_NAMED = {"let": "派生量", "def": "公式函数"}


def named_added(kind: str, x) -> str:
    return f"新增{_NAMED[kind]}{named_expr_zh(x)}"


def named_removed(kind: str, x) -> str:
    return f"删除{_NAMED[kind]}{named_expr_zh(x)}"


def named_changed(kind: str, o, n) -> str:
    """派生量rowsOut由A * max(tpWorldSize, 1)变更为A"""
    if _named_head(o) != _named_head(n):
        return f"{_NAMED[kind]}{o.name}由{named_expr_zh(o)}变更为{named_expr_zh(n)}"
    a, b = (value_zh(x.body if isinstance(x, Def) else x.expr) for x in (o, n))
    return f"{_NAMED[kind]}{_named_head(n)}由{a}变更为{b}"


def tiling_key_zh(kind: str, name: str, o: Expr | None = None, n: Expr | None = None) -> str:
    if kind == "added":
        return f"新增模板选择键字段{name} = {expr_zh(n)}"
    if kind == "removed":
        return f"删除模板选择键字段{name}（原为{expr_zh(o)}）"
    return f"模板选择键字段{name}由{value_zh(o)}变更为{value_zh(n)}"


def tiling_key_reordered(old_names, new_names) -> str:
    return f"模板选择键字段顺序由{'、'.join(old_names)}变更为{'、'.join(new_names)}"


def _mode(q) -> str:
    return f"量化模式{q.value}" + (f"（{q.doc}）" if q.doc else "")


def quant_stmt_zh(s) -> str:
    return f"{_when(s.conditions)}{s.name} = {expr_zh(s.expr)}"


def quant_added(q) -> str:
    return f"新增{_mode(q)}的计算公式，输出{'、'.join(q.outputs)}"


def quant_removed(q) -> str:
    return f"删除{_mode(q)}的计算公式"


def quant_changed(o, n) -> str:
    """The statements removed and added (a statement is one assignment or let under its conditions)."""
    olds, news = [quant_stmt_zh(s) for s in o.body], [quant_stmt_zh(s) for s in n.body]
    parts = [f"删除「{s}」" for s in olds if s not in news] + [f"新增「{s}」" for s in news if s not in olds]
    return f"{_mode(n)}的计算公式变更：" + ("；".join(parts) or "语句顺序调整")


def quant_renamed(o, n) -> str:
    if o.doc != n.doc:
        return f"量化模式{n.value}的说明由「{o.doc}」变更为「{n.doc}」"
    return f"量化模式{n.value}的名称由{o.name}变更为{n.name}"


def op_field_changed(what: str, o: str | None, n: str | None) -> str:
    """quant_by / semantics"""
    label = {"quant_by": "量化模式选择参数", "semantics": "数据搬运模式"}[what]
    return f"{label}由{o or '无'}变更为{n or '无'}"


# ---- products and docs ---------------------------------------------------------------------------------

def _names(xs) -> str:
    return "、".join(xs) or "无"


def product_added(display: str) -> str:
    return f"新增产品{display}"


def product_removed(display: str) -> str:
    return f"删除产品{display}"


def product_extends(display: str, o: str | None, n: str | None) -> str:
    """``o`` / ``n``: the display names of the parent products (None: none)."""
    return f"{display}的约束由继承「{o or '无'}」变更为继承「{n or '无'}」"


def pairs_changed(o, n) -> str:
    return f"配套算子由{_names(o)}变更为{_names(n)}"


def display_changed(o: str, n: str) -> str:
    return f"产品名称由「{o}」变更为「{n}」"


def unsupported_products_changed(o, n) -> str:
    return f"不支持的产品由「{_names(o)}」变更为「{_names(n)}」"


def note_added(text: str) -> str:
    return f"约束说明新增「{text}」"


def note_removed(text: str) -> str:
    return f"约束说明删除「{text}」"


def note_changed(o: str, n: str) -> str:
    return text_changed("约束说明", o, n)
