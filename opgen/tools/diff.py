"""Semantic changelog of two operator models (`opgen diff`).

The diff compares models and their product views, never spec text, so
reformatting, comments and reordered declarations that mean the same thing
report nothing.  Changes fall into three groups, reported in this order:

* **ABI** - the aclnn entry points and the OpDef: entry points added (新增接口,
  not a break), removed or with a changed C signature; the op name, parameters added,
  removed, renamed (a removed and an added parameter of the same role, slot
  and type), reordered, and their optionality, type / dtype set, format,
  shape, default or IR name; HCCL comm groups.
* **behaviour** - what a call does on each product: attribute domains and
  string lengths (range widened / narrowed, both ranges shown), dtypes,
  shapes, unsupported attributes / inputs, quant modes, declared checks
  (matched by id, compared by condition, expression, class, blame and
  message), buffer formulas, products added / removed, each product's OpDef
  config (its kernel entry, jitCompile.flag; not in the md); and op-wide facts:
  env vars, derived quantities, quant formulas, tiling key, semantics, each
  tensor's non-contiguous support (the documents' 非连续Tensor).  A
  change that is the same on every product is reported once, for all.
* **docs** - doc and note text, product display names, the unsupported
  product list.
* **limits** - opgen's own rules, not the documents': checks declared with
  `limit` (a call the documents accept that the generated op does not build),
  the env vars and derived quantities only such checks read, and the
  unreachable marks of those checks.  Not a release change: the md (the
  release change list) leaves them out; text and json list them apart.

``--format md`` writes the list as CANN's own change lists read, in Chinese: the ABI items, then each
parameter's changes (per product), the op-wide ones, the products', the documents' (the sentences are
``Change.zh``, made by opgen.tools.changelog_zh where the change is found); text and json keep ``Change.text``.

Two specs of differently named ops (a successor such as MoeDistributeDispatch
-> MoeDistributeDispatchV2) compare like two versions of one op: the new name is a
new IR op (an ABI change, ``Diff.same_op`` false), and its aclnn entry points are
compared with the old op's by name (removed, added, changed), never as renamed.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field, replace

from opgen.core import builtins as B
from opgen.emit.docs import kind_label, type_label
from opgen.emit.pipeline import EmitError, emit
from opgen.lower.aclnn_abi import workspace_params
from opgen.lang.expr import Expr, Float, InRange, InSet, Int, Name, Unary, names, quote, to_spec
from opgen.model.printer import state_place
from opgen.model.spec_text import literal as spec_literal
from opgen.model.decl import Buffer, Check, Domain, Op, Product, ProductView, Tensor, Window
from opgen.model.spec_text import domain_text as _domain, range_text as _range, shape_text as _shape
from opgen.model.resolve import dim_bindings, layout_lets
from opgen.tools import changelog_zh as zh

ABI, BEHAVIOUR, DOCS, LIMITS = "abi", "behaviour", "docs", "limits"
_COMPATIBLE = frozenset(("entry.added",))  # ABI changes that break no existing caller
GROUPS = (ABI, BEHAVIOUR, DOCS, LIMITS)
ROLES = ("input", "attr", "output")


@dataclass(frozen=True)
class Change:
    group: str                # abi | behaviour | docs | limits
    kind: str                 # e.g. "param.renamed", "range.widened", "note.changed"
    subject: str              # what changed: "output expandIdxOut", "check ascend910b.x", "env E", "op"
    text: str                 # one line, for people
    products: tuple[str, ...] = ()  # the SoCs a change applies to; (): the op as a whole (every product)
    old: object = None        # str, tuple of str, or None
    new: object = None
    # What `--format md` shows (neither is compared nor in the json): the parameter (or dim, env var) the change
    # concerns, "" for the op as a whole; the Chinese sentence without that parameter (changelog_zh), "" for a
    # change the md does not list (a check's message alone) or renders itself (ABI).
    param: str = field(default="", compare=False)
    zh: str = field(default="", compare=False)

    def __post_init__(self):
        if not isinstance(self.products, tuple):  # one SoC, or None for the whole op
            object.__setattr__(self, "products", (self.products,) if self.products else ())

    def as_dict(self) -> dict:
        def plain(v):
            return list(v) if isinstance(v, tuple) else v
        return {"group": self.group, "kind": self.kind, "subject": self.subject, "products": list(self.products),
                "old": plain(self.old), "new": plain(self.new), "text": self.text}


@dataclass(frozen=True)
class Diff:
    old: Op
    new: Op
    changes: tuple[Change, ...]
    replaces: dict = field(default_factory=dict)  # added attribute -> the removed env vars it takes over

    @property
    def same_op(self) -> bool:
        return self.old.name == self.new.name

    @property
    def abi_break(self) -> bool:
        """A change a caller built against the old op can notice; a new entry point is not one."""
        return any(c.group == ABI and c.kind not in _COMPATIBLE for c in self.changes)

    def group(self, group: str) -> list[Change]:
        return [c for c in self.changes if c.group == group]

    @property
    def release(self) -> list[Change]:
        """The changes of the documents (the release change list): all but opgen's own limits."""
        return [c for c in self.changes if c.group != LIMITS]


# ---- small formatting helpers --------------------------------------------------------------

def _role(p) -> str:
    return p.role if isinstance(p, Tensor) else "attr"


def _conds(conds: tuple[Expr, ...]) -> str:
    return " and ".join(to_spec(c) for c in conds) if conds else "always"


def _domain_text(d: Domain | None) -> str:
    return _domain(d)[3:] if d is not None else "any value"


def _check_text(c: Check) -> str:
    when = f"when {_conds(c.conditions)}: " if c.conditions else ""
    blame = c.param + (f"({to_spec(c.value)})" if c.value is not None else "")
    return f"{when}{to_spec(c.expr)} else {c.error_class} {blame} {quote(c.message)}"


def _window_text(w: Window | None) -> str:
    if w is None:
        return ""
    areas = ", ".join(a.spec_text for a in w.areas)
    reserve = f" after a reserve of {to_spec(w.reserve)}" if w.reserve is not None else ""
    word = f", buffer id at {to_spec(w.buffer_id)}" if w.buffer_id is not None else ""
    step = f", rank r's {to_spec(w.rank_step)} * r further in" if w.rank_step is not None else ""
    return (f"{w.source_text}: {w.halves} halves of [{areas}]{reserve}{word}, state {w.state_in}{state_place(w)} = "
            f"{to_spec(w.state)}{step}")


def _buffer_text(b: Buffer) -> str:
    when = f"when {_conds(b.conditions)}: " if b.conditions else ""
    return f"{when}{b.env} >= {to_spec(b.expr)} else {b.error_class} {quote(b.message)}"


def _param_text(p) -> str:
    if isinstance(p, Tensor):
        shape = f" shape {_shape(p.shape)}" if p.shape is not None else ""
        return f"{'optional ' if p.optional else ''}{p.role} {p.name}: {' | '.join(p.dtypes)}{shape}"
    default = f" = {spec_literal(p.default)}" if p.default is not None else ""
    return f"{'optional ' if p.optional else ''}attr {p.name}: {p.type}{default}"


# ---- numeric ranges: widened or narrowed -------------------------------------------------------

def _number(e: Expr):
    if isinstance(e, (Int, Float)) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, Unary) and e.op == "-":
        v = _number(e.operand)
        return None if v is None else -v
    if isinstance(e, Name) and e.id in B.CONSTANTS:
        return B.CONSTANTS[e.id]
    return None


def _interval(lo: Expr, hi: Expr, lo_closed: bool, hi_closed: bool, integer: bool):
    a, b = _number(lo), _number(hi)
    if a is None or b is None:
        return None
    if integer and isinstance(a, int) and isinstance(b, int):  # (0, 256] is [1, 256] for integers
        return (a if lo_closed else a + 1, True, b if hi_closed else b - 1, True)
    return (a, lo_closed, b, hi_closed)


def _covers(outer, inner) -> bool:
    lo_ok = outer[0] < inner[0] or (outer[0] == inner[0] and (outer[1] or not inner[1]))
    hi_ok = outer[2] > inner[2] or (outer[2] == inner[2] and (outer[3] or not inner[3]))
    return lo_ok and hi_ok


def _comm_text(domain: str, handle: str, context: bool) -> str:
    return f"MC2 context domain {domain} (its context in input {handle})" if context else \
        f"HCCL comm group {domain} (named by {handle})"


def _comm_when(g) -> str:
    """Where a comm group is in use, as the diff shows it."""
    return to_spec(g.when) if g.when is not None else "its name is set"


def _relation(old, new) -> str:
    """'widened', 'narrowed', 'changed' (neither contains the other) or 'rewritten' (the same values, written
    differently) for two intervals (None: bounds that are not constants) or two item sets."""
    if old is None or new is None:
        return "changed"
    if old == new:
        return "rewritten"
    if isinstance(old, frozenset):
        if old < new:
            return "widened"
        return "narrowed" if new < old else "changed"
    if _covers(new, old):
        return "widened"
    return "narrowed" if _covers(old, new) else "changed"


def _domain_relation(old: Domain, new: Domain, integer: bool) -> str:
    if old.range is not None and new.range is not None:
        o, n = old.range, new.range
        return _relation(_interval(o.lo, o.hi, o.lo_closed, o.hi_closed, integer),
                         _interval(n.lo, n.hi, n.lo_closed, n.hi_closed, integer))
    if old.range is None and new.range is None:
        return _relation(frozenset(to_spec(i) for i in old.items), frozenset(to_spec(i) for i in new.items))
    return "changed"


def _expr_relation(old: Expr, new: Expr, integer_names: set[str]) -> str | None:
    """How a range / set check on one operand changed, or None when the two are not such checks."""
    if isinstance(old, InRange) and isinstance(new, InRange) and old.operand == new.operand:
        integer = isinstance(old.operand, Name) and old.operand.id in integer_names
        return _relation(_interval(old.lo, old.hi, old.lo_closed, old.hi_closed, integer),
                         _interval(new.lo, new.hi, new.lo_closed, new.hi_closed, integer))
    if isinstance(old, InSet) and isinstance(new, InSet) and old.operand == new.operand and \
            not old.negated and not new.negated:
        return _relation(frozenset(to_spec(i) for i in old.items), frozenset(to_spec(i) for i in new.items))
    return None


def _integer_names(op: Op) -> set[str]:
    return set(dim_bindings(op)) | {a.name for a in op.attrs if a.type == "int64"}


# ---- the diff ---------------------------------------------------------------------------------

def _unsupported_to_ignored(changes: list[Change]) -> list[Change]:
    """A parameter that was unsupported (must keep its default / be null) and is now ignored (anything accepted)
    is one change, not "supported again" followed by "reserved"."""
    now_ignored = {c.subject for c in changes if c.kind == "ignored.added"}
    was_unsupported = {c.subject for c in changes if c.kind == "unsupported.removed"}
    out = []
    for c in changes:
        if c.kind == "unsupported.removed" and c.subject in now_ignored:
            continue
        if c.kind == "ignored.added" and c.subject in was_unsupported:
            role = c.subject.split()[0]
            c = replace(c, text=f"{c.subject} was unsupported, is ignored here (any value accepted)",
                        zh=zh.unsupported_to_ignored(role))
        out.append(c)
    return out


class _Differ:
    def __init__(self, old: Op, new: Op):
        self.old, self.new = old, new
        self.renamed = self._renames()                          # old param name -> new param name
        self.back = {n: o for o, n in self.renamed.items()}     # new param name -> old param name
        self.common = [p.soc for p in new.products if old.product(p.soc) is not None]
        self.replaces = self._replacements()                    # added attr -> removed envs it takes over
        self.integers = _integer_names(old) | _integer_names(new)

    def old_name(self, new_name: str) -> str:
        return self.back.get(new_name, new_name)

    # ---- parameters: renames and replacements ------------------------------------------------

    @staticmethod
    def _slots(op: Op, role: str, common: set[str]) -> dict[str, str | None]:
        """Each parameter's slot: the nearest earlier parameter of its role that both versions have."""
        slots, anchor = {}, None
        for p in op.params:
            if _role(p) != role:
                continue
            slots[p.name] = anchor
            if p.name in common:
                anchor = p.name
        return slots

    def _renames(self) -> dict[str, str]:
        """A removed and an added parameter of one role, in the same slot and of the same type, are a rename."""
        out: dict[str, str] = {}
        for role in ROLES:
            olds = {p.name: p for p in self.old.params if _role(p) == role}
            news = {p.name: p for p in self.new.params if _role(p) == role}
            common = set(olds) & set(news)
            old_slot, new_slot = self._slots(self.old, role, common), self._slots(self.new, role, common)
            taken: set[str] = set()
            for name, p in olds.items():
                if name in common:
                    continue
                for cand, q in news.items():
                    if cand in common or cand in taken or old_slot[name] != new_slot[cand]:
                        continue
                    same_type = set(p.dtypes) == set(q.dtypes) if isinstance(p, Tensor) else p.type == q.type
                    if same_type:
                        out[name] = cand
                        taken.add(cand)
                        break
        return out

    def _replacements(self) -> dict[str, tuple[str, ...]]:
        """Added attributes that took over the job of removed env vars.

        An added attribute replaces a removed env var when some check (same id on a product both versions
        have) or tiling-key field read the env var, through derived quantities or directly, in the old
        version and reads the attribute in the new one.
        """
        added = [a.name for a in self.new.attrs if self.old.attr(self.old_name(a.name)) is None]
        gone = [e.name for e in self.old.envs if e.name not in {x.name for x in self.new.envs}]
        if not added or not gone:
            return {}
        found: dict[str, set[str]] = {}

        def note(old_expr_names: set[str], new_expr_names: set[str]):
            for a in added:
                if a in new_expr_names:
                    found.setdefault(a, set()).update(e for e in gone if e in old_expr_names)

        for soc in self.common:
            ov, nv = self.old.views[soc], self.new.views[soc]
            old_checks = {c.id: c for c in ov.checks}
            for c in nv.checks:
                o = old_checks.get(c.id)
                if o is not None:
                    note(_reads(o, ov), _reads(c, nv))
        old_keys, new_keys = dict(self.old.tiling_key), dict(self.new.tiling_key)
        for key_name, e in new_keys.items():
            if key_name in old_keys:
                note(_reads_expr(old_keys[key_name], self.old.lets), _reads_expr(e, self.new.lets))
        return {a: tuple(e for e in gone if e in envs) for a, envs in found.items() if envs}

    # ---- ABI -------------------------------------------------------------------------------

    def abi(self) -> list[Change]:
        old, new = self.old, self.new
        out: list[Change] = []
        if old.name != new.name:
            out.append(Change(ABI, "op.new", "op",
                              f"new IR op {new.name} (the successor of {old.name}, which it does not register)",
                              old=old.name, new=new.name))
        old_comm = [(g.domain, g.attr, g.context) for g in old.comm_groups]
        new_comm = [(g.domain, g.attr, g.context) for g in new.comm_groups]
        for d, a, ctx in new_comm:
            if (d, a, ctx) not in old_comm:
                out.append(Change(ABI, "comm.added", f"comm {d}", f"{_comm_text(d, a, ctx)} added", new=a))
        for d, a, ctx in old_comm:
            if (d, a, ctx) not in new_comm:
                out.append(Change(ABI, "comm.removed", f"comm {d}", f"{_comm_text(d, a, ctx)} removed", old=a))
        old_when = {(g.domain, g.attr): _comm_when(g) for g in old.comm_groups}
        for g in new.comm_groups:
            before, after = old_when.get((g.domain, g.attr)), _comm_when(g)
            if before is not None and before != after:
                out.append(Change(BEHAVIOUR, "comm.when", f"comm {g.domain}",
                                  f"HCCL comm group {g.domain} in use when {before} -> when {after}",
                                  old=before, new=after))
        # Entry points are compared by name, a successor op's too (its entry points are new names, not renames);
        # between two specs of one op that both declare no entry point, the one default entry point changes
        # exactly as the parameters below do.
        if old.name != new.name or old.aclnn or new.aclnn:
            out += self._entries()
        for role in ROLES:
            out += self._abi_role(role)
        return out

    def _entries(self) -> list[Change]:
        """Entry points by name: a new one is 新增接口; a removed one, or one whose C signature changed, breaks
        the callers linked against it."""
        olds = {e.name: e for e in self.old.entries}
        news = {e.name: e for e in self.new.entries}
        out: list[Change] = []
        for name, e in news.items():
            sig = tuple(workspace_params(self.new, e))
            if name not in olds:
                out.append(Change(ABI, "entry.added", f"aclnn {name}", f"aclnn entry point {name} added", new=sig))
                continue
            was = tuple(workspace_params(self.old, olds[name]))
            if was != sig:
                out.append(Change(ABI, "entry.changed", f"aclnn {name}",
                                  f"aclnn entry point {name}: signature changed ({_sig_delta(was, sig)})",
                                  old=was, new=sig))
        for name in olds:
            if name not in news:
                out.append(Change(ABI, "entry.removed", f"aclnn {name}", f"aclnn entry point {name} removed",
                                  old=tuple(workspace_params(self.old, olds[name]))))
        return out

    def _abi_role(self, role: str) -> list[Change]:
        olds = [p for p in self.old.params if _role(p) == role]
        news = [p for p in self.new.params if _role(p) == role]
        old_by = {p.name: p for p in olds}
        out: list[Change] = []
        for i, p in enumerate(news):
            o = old_by.get(self.old_name(p.name))
            subject = f"{role} {p.name}"
            if o is None:
                where = f", after {news[i - 1].name}" if i else ""
                text = f"{role} {p.name} added as {role} {i + 1} of {len(news)}{where}: {_param_text(p)}"
                if p.name in self.replaces:
                    text += "; replaces env " + ", ".join(self.replaces[p.name])
                out.append(Change(ABI, "param.added", subject, text, new=_param_text(p), param=p.name))
                continue
            if o.name != p.name:
                # the IR name follows the parameter's name unless the spec sets it: then it is part of the rename
                ir = f", IR name {quote(o.ir_name)} -> {quote(p.ir_name)}" if o.ir_name != p.ir_name else ""
                out.append(Change(ABI, "param.renamed", subject,
                                  f"{role} {o.name} renamed to {p.name} ({role} {i + 1} of {len(news)}{ir})",
                                  old=o.name, new=p.name, param=p.name))
            out += self._abi_fields(role, o, p, subject)
        news_old_names = {self.old_name(p.name) for p in news}
        for p in olds:
            if p.name not in news_old_names:
                out.append(Change(ABI, "param.removed", f"{role} {p.name}", f"{role} {p.name} removed: "
                                  f"{_param_text(p)}", old=_param_text(p), param=p.name))
        out += self._reordered(role, olds, news)
        return out

    def _abi_fields(self, role: str, o, p, subject: str) -> list[Change]:
        out: list[Change] = []
        name = p.name

        def add(kind, label, a, b):
            out.append(Change(ABI, kind, subject, f"{role} {name}: {label} {a} -> {b}", old=a, new=b, param=name))

        if o.optional != p.optional:
            a, b = ("optional" if x.optional else "required" for x in (o, p))
            out.append(Change(ABI, "param.optional", subject, f"{role} {name}: {a} -> {b}", old=a, new=b, param=name))
        if isinstance(p, Tensor):
            if o.dtypes != p.dtypes:
                plus = [d for d in p.dtypes if d not in o.dtypes]
                minus = [d for d in o.dtypes if d not in p.dtypes]
                what = ", ".join(x for x in (("+" + " +".join(plus)) if plus else "",
                                             ("-" + " -".join(minus)) if minus else "") if x) or "reordered"
                out.append(Change(ABI, "param.dtypes", subject,
                                  f"{role} {name}: dtypes {' | '.join(o.dtypes)} -> {' | '.join(p.dtypes)} ({what})",
                                  old=o.dtypes, new=p.dtypes, param=name))
            if o.formats != p.formats:
                add("param.format", "format", " | ".join(o.formats), " | ".join(p.formats))
            if o.shape != p.shape:
                add("param.shape", "shape", _shape(o.shape) if o.shape else "any",
                    _shape(p.shape) if p.shape else "any")
        else:
            if o.type != p.type:
                add("param.type", "type", o.type, p.type)
            a, b = (spec_literal(x.default) if x.default is not None else "none" for x in (o, p))
            if a != b:  # compared as spec text: false is not 0, and 1.0 is not 1
                add("param.default", "default", a, b)
        if o.ir_name != p.ir_name and o.name == p.name:
            add("param.ir_name", "IR name", quote(o.ir_name), quote(p.ir_name))
        return out

    def _reordered(self, role: str, olds, news) -> list[Change]:
        new_names = [p.name for p in news]
        old_seq = [self.renamed.get(p.name, p.name) for p in olds if self.renamed.get(p.name, p.name) in new_names]
        new_seq = [n for n in new_names if n in old_seq]
        if old_seq == new_seq:
            return []
        kept: set[str] = set()
        for block in difflib.SequenceMatcher(None, old_seq, new_seq, autojunk=False).get_matching_blocks():
            kept.update(old_seq[block.a:block.a + block.size])
        old_pos = {self.renamed.get(p.name, p.name): i + 1 for i, p in enumerate(olds)}
        out = []
        for i, n in enumerate(new_names):
            if n in old_seq and n not in kept:
                out.append(Change(ABI, "param.reordered", f"{role} {n}",
                                  f"{role} {n} moved: {role} {old_pos[n]} of {len(olds)} -> {i + 1} of {len(news)}",
                                  old=str(old_pos[n]), new=str(i + 1), param=n))
        return out

    # ---- behaviour: op-wide ------------------------------------------------------------------

    def op_behaviour(self) -> list[Change]:
        old, new = self.old, self.new
        out: list[Change] = []

        def add(kind, subject, text, a=None, b=None, sentence="", param=""):
            out.append(Change(BEHAVIOUR, kind, subject, text, old=a, new=b, param=param, zh=sentence))

        old_envs, new_envs = {e.name: e for e in old.envs}, {e.name: e for e in new.envs}
        by_env = {e: a for a, envs in self.replaces.items() for e in envs}
        for n, e in new_envs.items():
            o = old_envs.get(n)
            text = f"{e.type} = {spec_literal(e.default)}{' ' + e.unit if e.unit else ''}"
            if o is None:
                add("env.added", f"env {n}", f"env {n} added: {text}", b=text, sentence=zh.env_added(e))
            else:
                was = f"{o.type} = {spec_literal(o.default)}{' ' + o.unit if o.unit else ''}"
                if was != text:
                    add("env.changed", f"env {n}", f"env {n}: {was} -> {text}", was, text, zh.env_changed(o, e))
        for n, o in old_envs.items():
            if n not in new_envs:
                why = f" (replaced by attr {by_env[n]})" if n in by_env else ""
                add("env.removed", f"env {n}", f"env {n} removed{why}", a=n, sentence=zh.env_removed(n, by_env.get(n)))
        for kind, olds, news in (("let", old.lets, new.lets), ("def", old.defs, new.defs)):
            out += self._named_exprs(kind, olds, news, None)
        out += self._quant_formulas()
        out += self._special_formulas()
        out += self._post_stage()
        out += self._roles()
        for what in ("quant_by", "semantics"):
            a, b = getattr(old, what), getattr(new, what)
            if a != b:
                add(f"{what}.changed", what, f"{what}: {a or 'none'} -> {b or 'none'}", a, b,
                    zh.op_field_changed(what, a, b))
        old_keys, new_keys = dict(old.tiling_key), dict(new.tiling_key)
        for k, e in new_keys.items():
            if k not in old_keys:
                add("tiling_key.added", f"tiling_key {k}", f"tiling key field {k} added: {to_spec(e)}", b=to_spec(e),
                    sentence=zh.tiling_key_zh("added", k, n=e))
            elif old_keys[k] != e:
                a, b = to_spec(old_keys[k]), to_spec(e)
                add("tiling_key.changed", f"tiling_key {k}", f"tiling key field {k}: {a} -> {b}", a, b,
                    zh.tiling_key_zh("changed", k, old_keys[k], e))
        for k, e in old_keys.items():
            if k not in new_keys:
                add("tiling_key.removed", f"tiling_key {k}", f"tiling key field {k} removed", a=to_spec(e),
                    sentence=zh.tiling_key_zh("removed", k, o=e))
        if [k for k in old_keys if k in new_keys] != [k for k in new_keys if k in old_keys]:  # digit positions
            add("tiling_key.reordered", "tiling_key", "tiling key fields reordered: "
                f"{', '.join(old_keys)} -> {', '.join(new_keys)}", ", ".join(old_keys), ", ".join(new_keys),
                zh.tiling_key_reordered(old_keys, new_keys))
        for t in new.outputs:
            o = old.tensor(self.old_name(t.name))
            if o is not None and o.dtype_rule != t.dtype_rule:
                a = to_spec(o.dtype_rule) if o.dtype_rule else "none"
                b = to_spec(t.dtype_rule) if t.dtype_rule else "none"
                add("dtype_rule.changed", f"output {t.name}", f"output {t.name}: default dtype {a} -> {b}", a, b,
                    zh.dtype_rule_changed(o.dtype_rule, t.dtype_rule), t.name)
        # A tensor's non-contiguous support (the documents' 非连续Tensor column) is behaviour, not ABI: the aclnn
        # signature takes an aclTensor* either way and the OpDef has no contiguity field, so nothing a caller
        # builds or links changes; what changes is whether a call passing a non-contiguous view is accepted.  It is
        # declared per tensor, not per product, so it is reported once, for all products.
        for t in new.inputs + new.outputs:
            o = old.tensor(self.old_name(t.name))
            if o is not None and o.noncontiguous != t.noncontiguous:
                a, b = ("√" if x.noncontiguous else "-" for x in (o, t))
                text = f"{t.role} {t.name}: " + ("accepted non-contiguous" if t.noncontiguous else
                                                 "no longer accepted non-contiguous") + f" (非连续Tensor {a} -> {b})"
                add(f"noncontiguous.{'added' if t.noncontiguous else 'removed'}", f"{t.role} {t.name}", text, a, b,
                    zh.flag_sentence("noncontiguous", t.role, t.noncontiguous), t.name)
        return out

    def _named_exprs(self, kind: str, olds, news, product: str | None) -> list[Change]:
        """lets / defs by name: added, removed, expression changed."""
        def text(x) -> str:
            if kind == "def":
                return f"{x.name}({', '.join(x.params)}) = {to_spec(x.body)}"
            return f"{x.name} = {to_spec(x.expr)}"
        label = "derived quantity" if kind == "let" else "macro"
        old_by, new_by = {x.name: x for x in olds}, {x.name: x for x in news}
        out = []
        for n, x in new_by.items():
            o = old_by.get(n)
            if o is None:
                out.append(Change(BEHAVIOUR, f"{kind}.added", f"{kind} {n}", f"{label} {text(x)} added",
                                  product, new=text(x), zh=zh.named_added(kind, x)))
            elif text(o) != text(x):
                out.append(Change(BEHAVIOUR, f"{kind}.changed", f"{kind} {n}",
                                  f"{label} {n}: {text(o)} -> {text(x)}", product, text(o), text(x),
                                  zh=zh.named_changed(kind, o, x)))
        for n, o in old_by.items():
            if n not in new_by:
                out.append(Change(BEHAVIOUR, f"{kind}.removed", f"{kind} {n}", f"{label} {text(o)} removed",
                                  product, old=text(o), zh=zh.named_removed(kind, o)))
        return out

    def _quant_formulas(self) -> list[Change]:
        out = []
        for q in self.new.quant_modes:
            o = self.old.quant_mode(q.value)
            subject = f"quant {q.value}"
            if o is None:
                out.append(Change(BEHAVIOUR, "quant.added", subject,
                                  f"quant mode {q.value} ({q.name}) declared, assigning {', '.join(q.outputs)}",
                                  zh=zh.quant_added(q)))
            elif o.body != q.body or _wire(o) != _wire(q):  # what travels between the ranks is behaviour too
                out.append(Change(BEHAVIOUR, "quant.changed", subject,
                                  f"quant mode {q.value} ({q.name}): formulas changed "
                                  f"({len(o.body)} -> {len(q.body)} statements)",
                                  old=_quant_text(o), new=_quant_text(q), zh=zh.quant_changed(o, q)))
        for o in self.old.quant_modes:
            if self.new.quant_mode(o.value) is None:
                out.append(Change(BEHAVIOUR, "quant.removed", f"quant {o.value}",
                                  f"quant mode {o.value} ({o.name}) no longer declared", zh=zh.quant_removed(o)))
        return out

    def _special_formulas(self) -> list[Change]:
        """Special experts added, removed, re-counted or recomputed (their order is their id ranges)."""
        out = []
        old = {s.name: s for s in self.old.specials}
        order_o, order_n = [s.name for s in self.old.specials], [s.name for s in self.new.specials]
        for s in self.new.specials:
            o = old.get(s.name)
            subject = f"special {s.name}"
            text = _special_text(s)
            # a range declared alone (the dispatch side) changes what the docs say, not what the op computes
            kind = DOCS if s.body is None and (o is None or o.body is None) else BEHAVIOUR
            if o is None:
                out.append(Change(kind, "special.added", subject, f"special expert {s.name} ({s.count}) "
                                  f"declared: {text}", new=text, zh=f"新增特殊专家{s.doc}（{s.count}）：{_special_zh(s)}"))
            elif (o.count, o.body) != (s.count, s.body):
                out.append(Change(kind, "special.changed", subject, f"special expert {s.name}: "
                                  f"{_special_text(o)} -> {text}", old=_special_text(o), new=text,
                                  zh=f"特殊专家{s.doc}的计算公式由「{_special_zh(o)}」变更为「{_special_zh(s)}」"))
        for o in self.old.specials:
            if o.name not in {s.name for s in self.new.specials}:
                out.append(Change(DOCS if o.body is None else BEHAVIOUR, "special.removed", f"special {o.name}", f"special expert {o.name} "
                                  "no longer declared", old=_special_text(o), zh=f"删除特殊专家{o.doc}"))
        kept_o = [n for n in order_o if n in order_n]
        if kept_o != [n for n in order_n if n in order_o]:
            ranges_only = all(x.body is None for x in (*self.old.specials, *self.new.specials))
            out.append(Change(DOCS if ranges_only else BEHAVIOUR, "special.order", "special experts", "special experts reordered (their "
                              f"ids move): {', '.join(order_o)} -> {', '.join(order_n)}", ", ".join(order_o),
                              ", ".join(order_n), zh="特殊专家顺序（专家ID区间）变更为" + "、".join(order_n)))
        return out

    def _roles(self) -> list[Change]:
        """Role bindings added, removed or rebound: which of the op's parameters the family reads as what."""
        o, n = self.old.role_names, self.new.role_names
        out = []
        for role, name in n.items():
            if role not in o:
                out.append(Change(BEHAVIOUR, "role.added", f"role {role}", f"role {role} is now parameter {name}",
                                  new=name, zh=f"{name}承担{self.new.semantics}的{role}角色"))
            elif o[role] != name:
                out.append(Change(BEHAVIOUR, "role.changed", f"role {role}", f"role {role}: {o[role]} -> {name}",
                                  old=o[role], new=name, zh=f"{self.new.semantics}的{role}角色由{o[role]}改为{name}"))
        for role, name in o.items():
            if role not in n:
                out.append(Change(BEHAVIOUR, "role.removed", f"role {role}", f"role {role} is no longer bound to "
                                  f"{name}: the family reads the parameter named {role}", old=name,
                                  zh=f"{name}不再承担{role}角色"))
        return out

    def _post_stage(self) -> list[Change]:
        """The post stage added, removed or recomputed (what the outputs after the reduce are)."""
        o, n = self.old.post, self.new.post
        if o is None and n is None:
            return []
        if o is None:
            text = _post_text(n)
            return [Change(BEHAVIOUR, "post.added", "post", f"post stage over {n.name} declared: {text}", new=text,
                           zh=f"新增归约后计算（{n.doc}）：{text}")]
        if n is None:
            return [Change(BEHAVIOUR, "post.removed", "post", "post stage no longer declared: the family writes "
                           "its reduced output", old=_post_text(o), zh=f"删除归约后计算（{o.doc}）")]
        if (o.name, o.body) != (n.name, n.body):
            return [Change(BEHAVIOUR, "post.changed", "post", f"post stage: {_post_text(o)} -> {_post_text(n)}",
                           old=_post_text(o), new=_post_text(n),
                           zh=f"归约后计算（{n.doc}）由「{_post_text(o)}」变更为「{_post_text(n)}」")]
        return []

    # ---- behaviour: per product --------------------------------------------------------------

    def products(self) -> list[Change]:
        out: list[Change] = []
        for p in self.new.products:
            o = self.old.product(p.soc)
            if o is None:
                ext = f", extends {p.extends}" if p.extends else ""
                out.append(Change(BEHAVIOUR, "product.added", f"product {p.soc}",
                                  f"product {p.soc} added ({p.display}{ext}; quant modes "
                                  f"{_modes(self.new.views[p.soc].quant_modes)})", p.soc, new=p.display,
                                  zh=zh.product_added(p.display)))
        for o in self.old.products:
            if self.new.product(o.soc) is None:
                out.append(Change(BEHAVIOUR, "product.removed", f"product {o.soc}",
                                  f"product {o.soc} removed ({o.display})", o.soc, old=o.display,
                                  zh=zh.product_removed(o.display)))
        # A change found identically on several products is reported once, naming them; on every product
        # both versions have (two or more), it is a change of the whole op.
        where: dict[tuple, list[str]] = {}
        first: dict[tuple, Change] = {}
        for soc in self.common:
            for c in self._product(soc):
                where.setdefault(_key(c), []).append(soc)
                first.setdefault(_key(c), c)
        merged = []
        for key, socs in where.items():
            c = first[key]
            every = len(self.common) >= 2 and socs == self.common
            merged.append(replace(c, products=() if every else tuple(socs)))
        return [c for c in merged if not c.products] + out + [c for c in merged if c.products]

    def _product(self, soc: str) -> list[Change]:
        old, new = self.old, self.new
        ov, nv = old.views[soc], new.views[soc]
        op_, np_ = old.product(soc), new.product(soc)
        out: list[Change] = []

        def add(kind, subject, text, a=None, b=None, sentence="", param=""):
            out.append(Change(BEHAVIOUR, kind, subject, text, soc, a, b, param=param, zh=sentence))

        def display(parent):
            p = (new.product(parent) or old.product(parent)) if parent else None
            return p.display if p is not None else parent

        if op_.extends != np_.extends:
            add("product.extends", f"product {soc}", f"extends {op_.extends or 'nothing'} -> "
                f"{np_.extends or 'nothing'}", op_.extends, np_.extends,
                zh.product_extends(np_.display, display(op_.extends), display(np_.extends)))
        if ov.pairs_with != nv.pairs_with:
            add("pairs.changed", "pairs_with", f"pairs with {', '.join(ov.pairs_with) or 'nothing'} -> "
                f"{', '.join(nv.pairs_with) or 'nothing'}", ov.pairs_with, nv.pairs_with,
                zh.pairs_changed(ov.pairs_with, nv.pairs_with))
        # its OpDef config (the kernel entry its SoC builds, jitCompile.flag): what the generated tree and the op
        # build do, which CANN's change lists never mention (no md sentence)
        if ov.op_file != nv.op_file:  # (the op's one entry moves with its name: the rename says so)
            add("opdef.op_file", "OpDef config", f"kernel entry (opFile) {ov.kernel_entry} -> {nv.kernel_entry}",
                ov.kernel_entry, nv.kernel_entry)
        if ov.jit_compile != nv.jit_compile:
            add("opdef.jit_compile", "OpDef config", f"jitCompile.flag {ov.jit_compile} -> {nv.jit_compile}",
                ov.jit_compile, nv.jit_compile)
        old_t = {t.name: t for t in ov.inputs + ov.outputs}
        for t in nv.inputs + nv.outputs:
            decl = new.tensor(t.name)
            o = old_t.get(self.old_name(t.name))
            subject = f"{t.role} {t.name}"
            if o is None:
                if t.dtypes != decl.dtypes:
                    add("dtypes.declared", subject, f"{subject} (new): {' | '.join(t.dtypes)} on this product",
                        b=t.dtypes, sentence=zh.dtypes_declared(t), param=t.name)
                continue
            odecl = old.tensor(o.name)
            if o.dtypes != t.dtypes and not (o.dtypes == odecl.dtypes and t.dtypes == decl.dtypes):
                plus = tuple(d for d in t.dtypes if d not in o.dtypes)
                minus = tuple(d for d in o.dtypes if d not in t.dtypes)
                if plus:
                    add("dtype.added", subject, f"{subject}: dtype {', '.join(plus)} added "
                        f"({' | '.join(o.dtypes)} -> {' | '.join(t.dtypes)})", o.dtypes, t.dtypes,
                        zh.dtypes_added(plus), t.name)
                if minus:
                    add("dtype.removed", subject, f"{subject}: dtype {', '.join(minus)} removed "
                        f"({' | '.join(o.dtypes)} -> {' | '.join(t.dtypes)})", o.dtypes, t.dtypes,
                        zh.dtypes_removed(minus), t.name)
            if o.shape != t.shape and not (o.shape == odecl.shape and t.shape == decl.shape):
                a = _shape(o.shape) if o.shape else "any"
                b = _shape(t.shape) if t.shape else "any"
                add("shape.changed", subject, f"{subject}: shape {a} -> {b}", a, b, zh.shape_changed(o.shape, t.shape),
                    t.name)
        out += self._domains(ov, nv, soc)
        for what, olds, news, live in (
                ("unsupported", ov.unsupported_attrs, nv.unsupported_attrs, "attr"),
                ("unsupported", ov.unsupported_inputs, nv.unsupported_inputs, "input"),
                ("unspecified", ov.unspecified_outputs, nv.unspecified_outputs, "output"),
                ("empty_absent", ov.empty_absent_inputs, nv.empty_absent_inputs, "input"),
                ("ignored", ov.ignored_inputs, nv.ignored_inputs, "input"),
                ("ignored", ov.ignored_attrs, nv.ignored_attrs, "attr")):
            out += self._flags(what, live, olds, news, soc)
        out = _unsupported_to_ignored(out)
        om, nm = set(ov.quant_modes), set(nv.quant_modes)
        for m in sorted(nm - om):
            q = new.quant_mode(m)
            add("quant_mode.added", f"quant_mode {m}", f"quant mode {m} ({q.name if q else '?'}) added "
                f"({_modes(ov.quant_modes)} -> {_modes(nv.quant_modes)})", _modes(ov.quant_modes),
                _modes(nv.quant_modes), zh.quant_mode_changed(m, q.doc if q else "", True), new.quant_by or "")
        for m in sorted(om - nm):
            q = old.quant_mode(m)
            add("quant_mode.removed", f"quant_mode {m}", f"quant mode {m} ({q.name if q else '?'}) removed "
                f"({_modes(ov.quant_modes)} -> {_modes(nv.quant_modes)})", _modes(ov.quant_modes),
                _modes(nv.quant_modes), zh.quant_mode_changed(m, q.doc if q else "", False), new.quant_by or "")
        out += self._product_lets(ov, nv, soc)
        out += self._checks(ov, nv, soc)
        out += self._buffers(ov, nv, soc)
        out += self._window(ov.window, nv.window, soc)
        return out

    @staticmethod
    def _window(o: Window | None, n: Window | None, soc: str) -> list[Change]:
        """The HCCL window layout: added, removed, or its text changed.  A fact of the generated kernels, which
        the documents' change lists (``--format md``) never describe: no Chinese sentence."""
        a, b = _window_text(o), _window_text(n)
        if a == b:
            return []
        kind = "window.added" if o is None else "window.removed" if n is None else "window.changed"
        w = n or o
        return [Change(BEHAVIOUR, kind, f"window {w.domain}", f"window {w.domain}: {a or 'none'} -> {b or 'none'}",
                       soc, a or None, b or None, param=w.env)]

    def _domains(self, ov: ProductView, nv: ProductView, soc: str) -> list[Change]:
        out = []
        old_a = {a.name: a for a in ov.attrs}
        for a in nv.attrs:
            o = old_a.get(self.old_name(a.name))
            subject = f"attr {a.name}"
            if o is None:
                if a.domain is not None:
                    out.append(Change(BEHAVIOUR, "domain.added", subject,
                                      f"attr {a.name} (new): {_domain_text(a.domain)}", soc, new=_domain_text(a.domain),
                                      param=a.name, zh=zh.domain_added(a.domain, True)))
                continue
            if o.domain != a.domain:
                a_txt, b_txt = _domain_text(o.domain), _domain_text(a.domain)
                if o.domain is None or a.domain is None:
                    kind = "domain.added" if o.domain is None else "domain.removed"
                    text = f"attr {a.name}: {a_txt} -> {b_txt}"
                    sentence = zh.domain_added(a.domain, False) if o.domain is None else zh.domain_removed(o.domain)
                else:
                    rel = _domain_relation(o.domain, a.domain, a.type == "int64")
                    kind = f"range.{rel}"
                    text = f"attr {a.name}: range {rel} {a_txt} -> {b_txt}"
                    sentence = zh.domain_changed(o.domain, a.domain, rel)
                    if o.domain.range is None and a.domain.range is None:
                        moved = ["+" + to_spec(i) for i in a.domain.items if i not in o.domain.items] + \
                            ["-" + to_spec(i) for i in o.domain.items if i not in a.domain.items]
                        text += f" ({', '.join(moved)})" if moved else ""
                out.append(Change(BEHAVIOUR, kind, subject, text, soc, a_txt, b_txt, param=a.name, zh=sentence))
            if o.length != a.length:
                a_txt = _range(o.length) if o.length else "any"
                b_txt = _range(a.length) if a.length else "any"
                if o.length and a.length:
                    rel = _relation(_interval(o.length.lo, o.length.hi, o.length.lo_closed, o.length.hi_closed, True),
                                    _interval(a.length.lo, a.length.hi, a.length.lo_closed, a.length.hi_closed, True))
                else:
                    rel = "changed"
                out.append(Change(BEHAVIOUR, f"range.{rel}", subject,
                                  f"attr {a.name}: string length {rel} {a_txt} -> {b_txt}", soc, a_txt, b_txt,
                                  param=a.name, zh=zh.length_changed(o.length, a.length)))
        return out

    def _flags(self, what: str, role: str, olds, news, soc: str) -> list[Change]:
        """Unsupported attrs / inputs and unspecified outputs: which names joined or left the list."""
        out = []
        params = {p.name for p in self.new.params if _role(p) == role}
        old_now = {self.renamed.get(n, n) for n in olds}
        for n in news:
            if n not in old_now:
                new_param = self.old_name(n) not in {p.name for p in self.old.params}
                out.append(Change(BEHAVIOUR, f"{what}.added", f"{role} {n}",
                                  f"{role} {n}{' (new)' if new_param else ''} is {what} here", soc,
                                  param=n, zh=zh.flag_sentence(what, role, True)))
        for n in olds:
            m = self.renamed.get(n, n)
            if m in params and m not in news:
                out.append(Change(BEHAVIOUR, f"{what}.removed", f"{role} {m}", f"{role} {m} is no longer {what}",
                                  soc, param=m, zh=zh.flag_sentence(what, role, False)))
        return out

    def _product_lets(self, ov: ProductView, nv: ProductView, soc: str) -> list[Change]:
        """Derived quantities a product overrides (the op-wide ones are reported once, op-wide; a window's
        layout fields are reported as the window)."""
        old_decl, new_decl = {l.name: l for l in self.old.lets}, {l.name: l for l in self.new.lets}
        layout = {l.name for v, op in ((ov, self.old), (nv, self.new)) if v.window is not None
                  for l in layout_lets(op, v.window)}
        olds = [l for l in ov.lets if old_decl.get(l.name) != l and l.name not in layout]
        news = [l for l in nv.lets if new_decl.get(l.name) != l and l.name not in layout]
        names_ = {l.name for l in olds} | {l.name for l in news}
        olds = [l for l in ov.lets if l.name in names_]
        news = [l for l in nv.lets if l.name in names_]
        return [c for c in self._named_exprs("let", olds, news, soc)
                if not (c.kind != "let.changed" and _explained_let(c, old_decl, new_decl))]

    def _checks(self, ov: ProductView, nv: ProductView, soc: str) -> list[Change]:
        olds = [c for c in ov.checks if c.origin == "declared" and not c.id.startswith("buffer.")]
        news = [c for c in nv.checks if c.origin == "declared" and not c.id.startswith("buffer.")]
        pairs, removed, added = _match(olds, news, _check_content, lambda c: c.id)
        out = []
        for n in news:
            o = pairs.get(n.id)
            if n.id in added:
                out.append(Change(LIMITS if n.limit else BEHAVIOUR, "constraint.added", f"check {n.id}", f"check {n.id} added: "
                                  f"{_check_text(n)}", soc, new=_check_text(n), param=zh.check_param(n),
                                  zh=zh.constraint_added(n)))
            elif o is not None and (_check_content(o), o.limit) != (_check_content(n), n.limit):
                out.append(self._check_changed(o, n, soc))
        for o in olds:
            if o.id in removed:
                out.append(Change(LIMITS if o.limit else BEHAVIOUR, "constraint.removed", f"check {o.id}", f"check {o.id} removed: "
                                  f"{_check_text(o)}", soc, old=_check_text(o), param=zh.check_param(o),
                                  zh=zh.constraint_removed(o)))
        return out

    def _check_changed(self, o: Check, n: Check, soc: str) -> Change:
        parts, kind, rel = [], "constraint.changed", None
        if o.conditions != n.conditions:
            parts.append(f"condition {_conds(o.conditions)} -> {_conds(n.conditions)}")
        if o.expr != n.expr:
            rel = _expr_relation(o.expr, n.expr, self.integers) if o.conditions == n.conditions else None
            if rel is not None:
                kind = f"range.{rel}"
                parts.append(f"range {rel} {to_spec(o.expr)} -> {to_spec(n.expr)}")
            else:
                parts.append(f"{to_spec(o.expr)} -> {to_spec(n.expr)}")
        if o.error_class != n.error_class:
            parts.append(f"class {o.error_class} -> {n.error_class}")
        blame_o = o.param + (f"({to_spec(o.value)})" if o.value is not None else "")
        blame_n = n.param + (f"({to_spec(n.value)})" if n.value is not None else "")
        if blame_o != blame_n:
            parts.append(f"blames {blame_o} -> {blame_n}")
        if o.message != n.message:
            parts.append(f"message {quote(o.message)} -> {quote(n.message)}")
        if o.limit != n.limit:
            parts.append("now opgen's own limit (`limit`), not the documents' rule" if n.limit else
                         "now the documents' rule, no longer opgen's own limit")
        param = zh.check_param(n)
        # a rule that is (or was) opgen's limit is no change of the documents, unless it becomes or stops being one
        group = LIMITS if o.limit and n.limit else BEHAVIOUR
        return Change(group, kind, f"check {n.id}", f"check {n.id}: " + "; ".join(parts), soc,
                      _check_text(o), _check_text(n), param=param, zh=zh.constraint_changed(o, n, rel, param))

    def _buffers(self, ov: ProductView, nv: ProductView, soc: str) -> list[Change]:
        def key(b: Buffer) -> str:
            return b.label or b.env
        old_by = {key(b): b for b in ov.buffers}
        new_by = {key(b): b for b in nv.buffers}
        out = []
        for k, b in new_by.items():
            o = old_by.get(k)
            if o is None:
                out.append(Change(BEHAVIOUR, "buffer.added", f"buffer {k}", f"buffer {k} added: {_buffer_text(b)}",
                                  soc, new=_buffer_text(b), param=b.env, zh=zh.constraint_added(b)))
            elif _buffer_text(o) != _buffer_text(b):
                parts = []
                if o.expr != b.expr or o.env != b.env:
                    parts.append(f"formula {o.env} >= {to_spec(o.expr)} -> {b.env} >= {to_spec(b.expr)}")
                if o.conditions != b.conditions:
                    parts.append(f"condition {_conds(o.conditions)} -> {_conds(b.conditions)}")
                if o.error_class != b.error_class:
                    parts.append(f"class {o.error_class} -> {b.error_class}")
                if o.message != b.message:
                    parts.append(f"message {quote(o.message)} -> {quote(b.message)}")
                out.append(Change(BEHAVIOUR, "buffer.changed", f"buffer {k}", f"buffer {k}: " + "; ".join(parts),
                                  soc, _buffer_text(o), _buffer_text(b), param=b.env, zh=zh.constraint_changed(o, b)))
        for k, o in old_by.items():
            if k not in new_by:
                out.append(Change(BEHAVIOUR, "buffer.removed", f"buffer {k}", f"buffer {k} removed: "
                                  f"{_buffer_text(o)}", soc, old=_buffer_text(o), param=o.env,
                                  zh=zh.constraint_removed(o)))
        return out

    # ---- docs ----------------------------------------------------------------------------------

    def docs(self) -> list[Change]:
        old, new = self.old, self.new
        out: list[Change] = []

        def text_change(subject, a, b, product=None, what="", param=""):
            if a != b:
                out.append(Change(DOCS, "doc.changed", subject, f"{subject}: doc {quote(a)} -> {quote(b)}",
                                  product, a, b, param=param, zh=zh.text_changed(what, a, b)))

        text_change("op", old.doc, new.doc, what="算子功能说明")
        out += _notes(old.notes, new.notes, None)
        if old.unsupported_products != new.unsupported_products:
            out.append(Change(DOCS, "unsupported_products.changed", "unsupported products",
                              f"unsupported products: {', '.join(old.unsupported_products) or 'none'} -> "
                              f"{', '.join(new.unsupported_products) or 'none'}",
                              None, old.unsupported_products, new.unsupported_products,
                              zh=zh.unsupported_products_changed(old.unsupported_products, new.unsupported_products)))
        for p in new.params:
            o = next((x for x in old.params if x.name == self.old_name(p.name) and _role(x) == _role(p)), None)
            if o is not None:
                text_change(f"{_role(p)} {p.name}", o.doc, p.doc, what="参数说明", param=p.name)
        for e in new.envs:
            o = next((x for x in old.envs if x.name == e.name), None)
            if o is not None:
                text_change(f"env {e.name}", o.doc, e.doc, what=f"环境变量{e.name}的说明")
        for l in new.lets:
            o = next((x for x in old.lets if x.name == l.name), None)
            if o is not None:
                text_change(f"let {l.name}", o.doc, l.doc, what=f"派生量{l.name}的说明")
        for q in new.quant_modes:
            o = old.quant_mode(q.value)
            if o is not None and (o.name, o.doc) != (q.name, q.doc):
                out.append(Change(DOCS, "quant.renamed", f"quant {q.value}", f"quant mode {q.value}: "
                                  f"{o.name} {quote(o.doc)} -> {q.name} {quote(q.doc)}", None,
                                  f"{o.name} {o.doc}", f"{q.name} {q.doc}", zh=zh.quant_renamed(o, q)))
        for p in new.products:
            o = old.product(p.soc)
            if o is None:
                continue
            if o.display != p.display:
                out.append(Change(DOCS, "display.changed", f"product {p.soc}",
                                  f"display name {quote(o.display)} -> {quote(p.display)}", p.soc, o.display, p.display,
                                  zh=zh.display_changed(o.display, p.display)))
            text_change(f"product {p.soc}", o.doc, p.doc, p.soc, what="产品说明")
            out += _notes(o.notes, p.notes, p.soc)
            # why an output stays unspecified (the docs show it): the output's status itself is a behaviour change
            ov, nv = old.view(p.soc), new.view(p.soc)
            for name in nv.unspecified_outputs:
                was = self.old_name(name)
                if was in ov.unspecified_outputs and ov.unspecified_reason(was) != nv.unspecified_reason(name):
                    a, b = ov.unspecified_reason(was), nv.unspecified_reason(name)
                    out.append(Change(DOCS, "unspecified.reason", f"output {name}",
                                      f"output {name}: why it is unspecified {quote(a)} -> {quote(b)}", p.soc, a, b,
                                      param=name, zh=f"无有效内容的原因变更为：{b}" if b else "删除无有效内容的原因说明"))
            # which checks the spec says no call can reach, and why: what the generated suite leaves untested
            marks_o = {c: m.reason for m in o.unreachable for c in m.checks}
            marks_n = {c: m.reason for m in p.unreachable for c in m.checks}
            for cid in sorted(marks_o.keys() | marks_n.keys()):
                a, b = marks_o.get(cid), marks_n.get(cid)
                if a == b:
                    continue
                kind = "unreachable.added" if a is None else "unreachable.removed" if b is None else \
                    "unreachable.reason"
                text = (f"check {cid}: marked unreachable ({quote(b)})" if a is None else
                        f"check {cid}: no longer marked unreachable" if b is None else
                        f"check {cid}: why it is unreachable {quote(a)} -> {quote(b)}")
                # no zh sentence: the Chinese change list is the documents' (render_md shows only changes with one)
                out.append(Change(DOCS, kind, f"check {cid}", text, p.soc, a, b))
            # where the documents are narrower than the real op (the checks stay; the docs show the op's range)
            params = {c.id: c.param for view in (self.old.views.get(o.soc), self.new.views.get(p.soc)) if view
                      for c in view.checks}
            out += _narrower_changes(o, p, params)
        return out

    def run(self) -> Diff:
        changes = self.abi() + self.op_behaviour() + self.products() + self.docs()
        return Diff(self.old, self.new, tuple(self._limits(c) for c in changes), self.replaces)

    def _limits(self, c: Change) -> Change:
        """An env var or derived quantity that only `limit` checks read (in each version declaring it), and the
        unreachable mark of a `limit` check, are opgen's too: moved to the limits group."""
        what, _, name = c.subject.partition(" ")
        if c.kind.startswith(("env.", "let.")):
            versions = [op for op in (self.old, self.new) if any(x.name == name for x in (*op.envs, *op.lets)) or
                        any(l.name == name for v in op.views.values() for l in v.lets)]
            if versions and all(name in _limit_reads(op) for op in versions):
                return replace(c, group=LIMITS)
        elif c.kind.startswith("unreachable.") and what == "check":
            views = [op.views.get(s) for op in (self.old, self.new) for s in c.products]
            if any(ch.limit for v in views if v is not None for ch in v.checks if ch.id == name):
                return replace(c, group=LIMITS)
        return c


def _narrower_changes(old: Product, new: Product, params: dict[str, str]) -> list[Change]:
    """``narrower`` marks added, removed or changed on one product: docs only (the checks do not change). The
    Chinese line names the check's parameter, as the documents would, not its internal id."""
    was = {m.check: (m.accepts, m.source) for m in old.narrower}
    now = {m.check: (m.accepts, m.source) for m in new.narrower}
    out = []
    for cid in sorted(was.keys() | now.keys()):
        a, b = was.get(cid), now.get(cid)
        if a == b:
            continue
        kind = "narrower.added" if a is None else "narrower.removed" if b is None else "narrower.changed"
        text = (f"check {cid}: documented narrower than the op, which accepts {b[0]} (code: {b[1]})" if a is None else
                f"check {cid}: no longer marked narrower than the op" if b is None else
                f"check {cid}: the op accepts {a[0]} (code: {a[1]}) -> {b[0]} (code: {b[1]})")
        param = params.get(cid, cid)
        zh = (f"{param}的文档范围窄于算子实现，算子实现接受{b[0]}" if b is not None else
              f"删除{param}的“文档范围窄于算子实现”说明")
        out.append(Change(DOCS, kind, f"check {cid}", text, new.soc, a and a[0], b and b[0], zh=zh))
    return out


def _sig_delta(old: tuple[str, ...], new: tuple[str, ...], zh: bool = False) -> str:
    """What changed between two C parameter lists: parameters added, removed, retyped, or only their order."""
    def name(decl: str) -> str:
        return re.split(r"[\s*&]+", decl.strip())[-1]
    was, now = {name(p): p for p in old}, {name(p): p for p in new}
    added = [p for n, p in now.items() if n not in was]
    removed = [p for n, p in was.items() if n not in now]
    retyped = [f"{was[n]} -> {now[n]}" for n in now if n in was and was[n] != now[n]]
    parts = []
    for label, zh_label, items in (("added", "新增", added), ("removed", "删除", removed),
                                   ("retyped", "类型变更", retyped)):
        if items:
            parts.append(f"{zh_label if zh else label} " + ", ".join(f"`{x}`" for x in items))
    if not parts:
        parts.append("参数顺序调整" if zh else "parameters reordered")
    return "；".join(parts) if zh else "; ".join(parts)


def _modes(modes) -> str:
    return ", ".join(map(str, modes)) or "none"


def _special_text(s) -> str:
    if s.body is None:
        return f"{s.count}: ids only (never sent)"
    return f"{s.count}: " + "; ".join(("let " if x.kind == "let" else "") + f"{x.name} = {to_spec(x.expr)}"
                                      for x in s.body)


def _special_zh(s) -> str:
    """The change lists' wording: the formula as the spec writes it, or that the op only leaves the ids unsent."""
    return f"{s.count}个专家ID，不发送" if s.body is None else _special_text(s)


def _post_text(p) -> str:
    return f"{p.name}: " + "; ".join(_quant_text(p))


def _wire(q) -> tuple | None:
    """Where a quant mode splits between the ranks and what it sends (None: no split)."""
    return (q.send.names, q.send.at) if q.send is not None else None


def _quant_text(q) -> tuple[str, ...]:
    """A formula body as text lines (a quant mode, a special expert, a post stage; only a quant mode splits)."""
    out = []
    send = getattr(q, "send", None)
    for i, s in enumerate(q.body):
        if send is not None and send.at == i:
            out.append(f"send {', '.join(send.names)}")
        stmt = f"let {s.name} = {to_spec(s.expr)}" if s.kind == "let" else f"{s.name} = {to_spec(s.expr)}"
        out.append((f"when {_conds(s.conditions)}: " if s.conditions else "") + stmt)
    return tuple(out)


def _notes(olds, news, product) -> list[Change]:
    """Notes added, removed or reworded (a replaced note is "reworded" when at least half of it survives)."""
    subject = f"product {product} notes" if product else "op notes"
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, list(olds), list(news), autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        pairs, start = {}, i1
        for j in range(j1, j2):
            scores = [(difflib.SequenceMatcher(None, olds[i], news[j], autojunk=False).ratio(), -i)
                      for i in range(start, i2)]
            best = max(scores, default=(0.0, 0))
            if best[0] >= 0.5:
                pairs[j] = -best[1]
                start = -best[1] + 1
        paired_old = set(pairs.values())
        for i in range(i1, i2):
            if i not in paired_old:
                out.append(Change(DOCS, "note.removed", subject, f"note {i + 1} removed: {quote(olds[i])}", product,
                                  olds[i], zh=zh.note_removed(olds[i])))
        for j in range(j1, j2):
            if j in pairs:
                a, b = olds[pairs[j]], news[j]
                out.append(Change(DOCS, "note.changed", subject, f"note {j + 1} changed: {quote(a)} -> {quote(b)}",
                                  product, a, b, zh=zh.note_changed(a, b)))
            else:
                out.append(Change(DOCS, "note.added", subject, f"note {j + 1} added: {quote(news[j])}", product,
                                  None, news[j], zh=zh.note_added(news[j])))
    return out


def _reads_expr(e: Expr, lets, seen: set[str] | None = None) -> set[str]:
    """Names an expression reads, following derived quantities (lets) to what they read."""
    seen = set() if seen is None else seen
    by_name = {l.name: l for l in lets}
    out: set[str] = set()
    for n in names(e):
        out.add(n)
        if n in by_name and n not in seen:
            seen.add(n)
            out |= _reads_expr(by_name[n].expr, lets, seen)
    return out


def _reads(c: Check, view: ProductView) -> set[str]:
    out: set[str] = set()
    for e in (*c.conditions, c.expr):
        out |= _reads_expr(e, view.lets)
    return out


def _limit_reads(op: Op) -> set[str]:
    """The names (env vars, derived quantities) only `limit` checks read, on every product, through derived
    quantities: read by some limit and by no other check nor the tiling key."""
    limits: set[str] = set()
    others: set[str] = set()
    for view in op.views.values():
        for c in view.checks:
            (limits if c.limit else others).update(_reads(c, view))
    for _, e in op.tiling_key:
        others |= _reads_expr(e, op.lets)
    return limits - others


def _check_content(c: Check):
    return (c.conditions, c.expr, c.error_class, c.param, c.value, c.message)


def _base_id(check_id: str) -> str:
    return re.sub(r"\.\d+$", "", check_id)


def _match(olds: list[Check], news: list[Check], content, ident):
    """Pair old and new checks: identical content first, then the same id, then the same id but its `.N`.

    Returns ({new id: old check}, ids of removed old checks, ids of added new checks).
    """
    free_old = list(olds)
    pairs: dict[str, Check] = {}
    pending = []
    for n in news:
        hit = next((o for o in free_old if content(o) == content(n)), None)
        if hit is not None:
            free_old.remove(hit)
            pairs[ident(n)] = hit
        else:
            pending.append(n)
    for same in (lambda o, n: ident(o) == ident(n), lambda o, n: _base_id(ident(o)) == _base_id(ident(n))):
        rest = []
        for n in pending:
            hit = next((o for o in free_old if same(o, n)), None)
            if hit is not None:
                free_old.remove(hit)
                pairs[ident(n)] = hit
            else:
                rest.append(n)
        pending = rest
    return pairs, {ident(o) for o in free_old}, {ident(n) for n in pending}


def _key(c: Change):
    return (c.group, c.kind, c.subject, c.text, c.old, c.new)


def _explained_let(c: Change, old_decl, new_decl) -> bool:
    """A let added / removed on a product only because the op-wide let was added / removed."""
    name = c.subject.split(" ", 1)[1]
    return (c.kind == "let.added" and name in new_decl and name not in old_decl) or \
        (c.kind == "let.removed" and name in old_decl and name not in new_decl)


def diff_ops(old: Op, new: Op) -> Diff:
    return _Differ(old, new).run()


# ---- generated files ------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileChange:
    old_path: str | None   # "<op_snake>/<path>" as `opgen build` writes it; None: a new file
    new_path: str | None   # None: a file the new spec no longer generates
    added: int             # lines
    removed: int

    @property
    def status(self) -> str:
        if self.old_path is None:
            return "added"
        return "removed" if self.new_path is None else "changed"

    def as_dict(self) -> dict:
        return {"old": self.old_path, "new": self.new_path, "status": self.status, "added": self.added,
                "removed": self.removed}


def _emitted(op: Op) -> list:
    """The files ``op`` generates; for an op a generator cannot express (``opgen build`` fails it with located
    diagnostics, e.g. an old spec the kernel template no longer fits) the files the other generators produce."""
    try:
        return emit(op)
    except EmitError as err:
        return err.artifacts


def generated_changes(old: Op, new: Op) -> tuple[list[FileChange], int]:
    """The generated files that change, with line counts (difflib over the emitted artefacts), and how many
    files stay byte-identical.  Files of differently named ops are paired after renaming the op in the path."""
    olds = {a.path: a.content for a in _emitted(old)}
    news = {a.path: a.content for a in _emitted(new)}

    def renamed(path: str) -> str:
        return path.replace(old.name, new.name).replace(old.snake_name, new.snake_name)

    paired = {renamed(p): p for p in olds}
    out: list[FileChange] = []
    unchanged = 0
    for path in sorted(set(paired) | set(news)):
        o_path = paired.get(path)
        a = olds[o_path].splitlines() if o_path is not None else []
        b = news[path].splitlines() if path in news else []
        plus = minus = 0
        for line in difflib.unified_diff(a, b, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                plus += 1
            elif line.startswith("-") and not line.startswith("---"):
                minus += 1
        if o_path is not None and path in news and olds[o_path] == news[path] and old.snake_name == new.snake_name:
            unchanged += 1
            continue
        out.append(FileChange(f"{old.snake_name}/{o_path}" if o_path is not None else None,
                              f"{new.snake_name}/{path}" if path in news else None, plus, minus))
    return out, unchanged


# ---- rendering --------------------------------------------------------------------------------------

_HEAD = {ABI: "ABI (aclnn signature / OpDef)", BEHAVIOUR: "Behaviour", DOCS: "Docs only",
         LIMITS: "opgen limits (the generated op's own rules, not a change of the documents)"}


def _mark(c: Change) -> str:
    if c.kind.endswith((".added", ".widened", ".new")):
        return "+"
    if c.kind.endswith(".removed") or c.kind.endswith(".narrowed"):
        return "-"
    return "~"


def _header(d: Diff, old_label: str, new_label: str) -> list[str]:
    lines = [f"{d.old.name} version {d.old.version} ({old_label}) -> {d.new.name} version {d.new.version} "
             f"({new_label})"]
    if not d.same_op:
        lines.append(f"different operators: {d.new.name} is compared as the successor of {d.old.name}; the list is "
                     f"what a caller moving from {d.old.name} to {d.new.name} sees")
    return lines


def _by_products(d: Diff, items: list[Change]) -> list[tuple[tuple[str, ...], list[Change]]]:
    """Behaviour / docs items grouped by the products they apply to: the whole op first, then in the order of
    the new spec's products (removed products last), a group of several products before a single one."""
    order = [p.soc for p in d.new.products] + [p.soc for p in d.old.products if d.new.product(p.soc) is None]
    groups = sorted({c.products for c in items},
                    key=lambda g: (bool(g), order.index(g[0]) if g else -1, -len(g), [order.index(s) for s in g]))
    return [(g, [c for c in items if c.products == g]) for g in groups]


def _products_title(d: Diff, socs: tuple[str, ...], group: str) -> str:
    if not socs:
        return "all products" if group in (BEHAVIOUR, LIMITS) else "op"
    if len(socs) > 1:
        return ", ".join(socs)
    p = d.new.product(socs[0]) or d.old.product(socs[0])
    return f"{socs[0]} ({p.display})"


def render_text(d: Diff, old_label: str, new_label: str, files=None) -> str:
    lines = _header(d, old_label, new_label)
    if not d.changes:
        lines.append("no semantic changes")
    for group in GROUPS:
        items = d.group(group)
        if not items:
            continue
        tail = ": ABI break" if group == ABI else ""
        lines += ["", f"{_HEAD[group]} - {len(items)} change{'s' if len(items) != 1 else ''}{tail}"]
        if group == ABI:
            lines += [f"  {_mark(c)} {c.text}" for c in items]
            continue
        for socs, cs in _by_products(d, items):
            lines.append(f"  {_products_title(d, socs, group)}:")
            lines += [f"    {_mark(c)} {c.text}" for c in cs]
    if files is not None:
        lines += ["", *_files_text(files)]
    return "\n".join(lines) + "\n"


def _file_rows(changes) -> list[tuple[FileChange, str]]:
    """Each changed file with the name to show: both paths when the file moved (a renamed op)."""
    return [(f, f"{f.old_path} -> {f.new_path}" if f.status == "changed" and f.old_path != f.new_path
             else f.new_path or f.old_path) for f in changes]


def _files_text(files) -> list[str]:
    changes, unchanged = files
    lines = [f"Generated files - {len(changes)} changed, {unchanged} unchanged (nothing written)"]
    lines += [f"  {f.status:<8} {name}: +{f.added} -{f.removed}" for f, name in _file_rows(changes)]
    return lines


def render_json(d: Diff, old_label: str, new_label: str, files=None) -> str:
    doc = {
        "old": {"op": d.old.name, "version": d.old.version, "spec": old_label},
        "new": {"op": d.new.name, "version": d.new.version, "spec": new_label},
        "same_op": d.same_op,
        "abi_break": d.abi_break,
        "changes": {g: [c.as_dict() for c in d.group(g)] for g in GROUPS},
    }
    if files is not None:
        doc["generated"] = {"files": [f.as_dict() for f in files[0]], "unchanged": files[1]}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_ROLE_ZH = {"input": "入参", "attr": "入参", "output": "出参"}
_OPTIONAL_ZH = {"optional": "可选", "required": "必选"}


def _param_zh(p) -> str:
    """A parameter as a CANN parameter table row reads: 可选属性，STRING，默认值为"" / 输入，FLOAT16、BFLOAT16."""
    parts = [kind_label(p), type_label(p)]
    if isinstance(p, Tensor) and p.shape is not None:
        parts.append(f"shape为{zh.shape_zh(p.shape, capacity=False)}")
    if not isinstance(p, Tensor) and p.default is not None:
        parts.append(f"默认值为{spec_literal(p.default)}")
    return "，".join(parts)


def _md_abi(d: Diff) -> list[str]:
    """ABI items in the style of the CANN docs' change lists ("原算子中shape为…的X出参替换为…")."""
    items = d.group(ABI)
    shape_of = {c.subject: c for c in items if c.kind == "param.shape"}
    used: set[int] = set()
    out = []

    def shapes(old_name: str, new_name: str) -> tuple[str, str]:
        # the documents write a capacity dim (">= A") as its bound, defining the bound's name as a lower limit
        # ("A：表示本卡可能接收的最大token数量，要满足A >= …")
        return (zh.shape_zh(d.old.tensor(old_name).shape, capacity=False),
                zh.shape_zh(d.new.tensor(new_name).shape, capacity=False))

    for i, c in enumerate(items):
        if i in used or (c.kind == "op.new"):  # (the lead sentence names the predecessor)
            continue
        role, name = c.subject.split(" ", 1) if " " in c.subject else ("", c.subject)
        role_zh = _ROLE_ZH.get(role, "")
        if c.kind == "param.renamed":
            s = shape_of.get(c.subject)
            if s is not None:
                used.add(items.index(s))
                a, b = shapes(c.old, c.new)
                out.append(f"原算子中shape为{a}的{c.old}{role_zh}替换为shape为{b}的{c.new}参数；")
            else:
                out.append(f"原算子中的{c.old}{role_zh}更名为{c.new}；")
        elif c.kind == "entry.added":
            out.append(f"新增接口{name}（{len(c.new) - 2}个参数）；")
        elif c.kind == "entry.removed":
            out.append(f"删除接口{name}；")
        elif c.kind == "entry.changed":
            out.append(f"接口{name}的参数变更：{_sig_delta(c.old, c.new, zh=True)}；")
        elif c.kind in ("comm.added", "comm.removed"):
            verb, was = ("新增", "") if c.kind == "comm.added" else ("删除", "原")
            out.append(f"{verb}{name.upper()}通信域（{was}由{c.new or c.old}入参指定）；")
        elif c.kind == "param.added":
            envs = d.replaces.get(name, ())
            out.append(f"新增{name}{role_zh}（{_param_zh(d.new.param(name))}）" +
                       ("，代替" + "和".join(envs) + "环境变量" if envs else "") + "；")
        elif c.kind == "param.removed":
            out.append(f"删除{name}{role_zh}（{_param_zh(d.old.param(name))}）；")
        elif c.kind == "param.shape":
            a, b = shapes(name, name)
            out.append(f"{name}{role_zh}的shape{b}改为容量下限（可传更大的Tensor）；" if a == b else
                       f"{name}{role_zh}的shape由{a}变更为{b}；")
        elif c.kind == "param.reordered":
            out.append(f"{name}{role_zh}的位置由第{c.old}个调整为第{c.new}个；")
        elif c.kind in _ABI_FIELDS_ZH:
            what, a, b = _ABI_FIELDS_ZH[c.kind](d, c, name)
            out.append(f"{name}{role_zh}{what}由{a}变更为{b}；")
        else:
            out.append(f"{c.text}；")
    return out


# A field of a parameter that changed: what the documents call it, and its old and new value as they write it.
_ABI_FIELDS_ZH = {
    "param.default": lambda d, c, name: ("的默认值", c.old, c.new),
    "param.optional": lambda d, c, name: ("", _OPTIONAL_ZH[c.old], _OPTIONAL_ZH[c.new]),
    "param.dtypes": lambda d, c, name: ("支持的数据类型", "、".join(c.old), "、".join(c.new)),
    "param.format": lambda d, c, name: ("的数据格式", c.old.replace(" | ", "、"), c.new.replace(" | ", "、")),
    "param.type": lambda d, c, name: ("的数据类型", type_label(d.old.param(name)), type_label(d.new.param(name))),
    "param.ir_name": lambda d, c, name: ("在算子原型中的名称", c.old, c.new),
}


# The md sections after the ABI, in order: each parameter's changes (behaviour and its doc), then what concerns
# the op as a whole, the products, the documents.
_MD_PRODUCT_KINDS = frozenset(("product.added", "product.removed", "product.extends", "pairs.changed",
                               "display.changed", "unsupported_products.changed"))
_MD_NAMES_PRODUCT = frozenset(("product.added", "product.removed", "product.extends", "display.changed"))
_FILE_STATUS_ZH = {"added": "新增", "removed": "删除", "changed": "变更"}


def _md_section(c: Change) -> str:
    if c.param:
        return "参数变更"
    if c.kind in _MD_PRODUCT_KINDS:
        return "产品变更"
    return "算子变更" if c.group == BEHAVIOUR else "文档变更"


def _md_bullets(d: Diff, items: list[Change], head: str | None) -> list[str]:
    """One bullet per sentence, naming every product it holds on (the same sentence on several products is one
    bullet), the whole op first, then in the new spec's product order (removed products last).  ``head``: the
    parameter the bullets are listed under ("epWorldSize（Ascend 950DT）…"); None: op-wide bullets, which name
    the products they are limited to ("Atlas A2 训练系列产品/Atlas A2 推理系列产品：…")."""
    order = [p.soc for p in d.new.products] + [p.soc for p in d.old.products if d.new.product(p.soc) is None]
    merged: dict[str, tuple[Change, set[str] | None]] = {}
    for c in items:
        first, socs = merged.setdefault(c.zh, (c, set()))
        merged[c.zh] = (first, None if socs is None or not c.products else socs | set(c.products))
    rows = []
    for sentence, (c, socs) in merged.items():
        if socs is not None and set(order[:len(d.new.products)]) <= socs:
            socs = None
        where = [s for s in order if s in socs] if socs is not None else []
        label = "、".join((d.new.product(s) or d.old.product(s)).display for s in where) or "所有产品"
        if head is not None:
            text = f"{head}（{label}）{sentence}"
        else:
            text = sentence if not where or c.kind in _MD_NAMES_PRODUCT else f"{label}：{sentence}"
        rows.append(((bool(where), [order.index(s) for s in where]), f"- {text}。"))
    return [text for _, text in sorted(rows, key=lambda r: r[0])]


def render_md(d: Diff, old_label: str, new_label: str, files=None) -> str:
    if d.same_op:
        lead = f"相较于版本{d.old.version}（{old_label}），{d.new.name}（版本{d.new.version}）变更如下："
    else:
        lead = f"相较于{d.old.name}算子，该算子（{d.new.name}）变更如下："
    lines = [f"# {d.new.name} 变更说明", "", lead]
    if not d.release:
        # opgen's own limits are no change of the documents: the release change list leaves them out
        lines += ["", "无语义变更。" if not d.changes else "无语义变更（仅生成算子自身的限制变更，不属于发布变更）。"]
    if d.group(ABI):
        lines += ["", "## 接口变更", ""] + [f"- {t}" for t in _md_abi(d)]
    shown = [c for c in d.release if c.group != ABI and c.zh]
    params = [p.name for p in d.new.params]
    params += list(dict.fromkeys(c.param for c in shown if c.param and c.param not in params))
    for section in ("参数变更", "算子变更", "产品变更", "文档变更"):
        items = [c for c in shown if _md_section(c) == section]
        if not items:
            continue
        lines += ["", f"## {section}"]
        if section != "参数变更":
            lines += [""] + _md_bullets(d, items, None)
            continue
        for p in params:
            mine = [c for c in items if c.param == p]
            if mine:
                lines += ["", f"### {p}", ""] + _md_bullets(d, mine, p)
    if d.release and not shown and not d.group(ABI):
        lines += ["", "仅报错信息变更。"]
    if files is not None:
        changes, unchanged = files
        lines += ["", "## 生成文件变更", "", f"{len(changes)}个文件变更，{unchanged}个文件不变（未写入任何文件）。", ""]
        lines += [f"- {_FILE_STATUS_ZH[f.status]} {name}：+{f.added} -{f.removed}" for f, name in _file_rows(changes)]
    return "\n".join(lines) + "\n"
