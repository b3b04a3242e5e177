"""Syntax tree → validated ``model.Op``.

Builds the model from lark's tree and runs every semantic check, reporting all
problems of a file into one ``Diagnostics`` bag.  Returns ``None`` when any
error was found: later stages only ever see a valid model.
"""
from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Iterable

from lark import Token, Tree

from opgen.core import builtins as B
from opgen.core import products
from opgen.core.diagnostics import Diagnostics
from opgen.core.dtypes import DTYPES, FORMATS
from opgen.core.families import FAMILIES, SPECIALS_COMPUTED, SPECIALS_UNSENT
from opgen.lang.expr import (Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Span, Str, Unary,
                              children, to_spec, walk)
from opgen.model.decl import (AclnnEntry, AclnnParam, AclnnSize, Attr, Buffer, CommGroup, Constraint, Def, Domain, Env, Let, GraphFact, Op, Product, QuantMode, QuantStmt, RoleBinding, Send,
                    Range, Shape, ShapeCond, ShapeTuple, Tensor, snake, SpecialExpert, PostStage, Tolerance, UnreachableMark, NarrowerMark, alt_exprs, WINDOW_PLACES, Window,
                    WindowArea, window_lets)
from opgen.model.resolve import dim_bindings
from opgen.model.written import assigned_by_formulas, family_writes
from opgen.model.spec_text import domain_text
from opgen.core.diagnostics import guess_help as _guess
from opgen.model.kinds import MISSING, Typer, attr_kind as _attr_kind
from opgen.lang.parse import span_of

_OP_NAME = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
_ACLNN_NAME = re.compile(r"aclnn[A-Z][A-Za-z0-9]*\Z")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}
_INT64 = (-(2**63), 2**63 - 1)


def _value_names(e: Expr):
    """The names whose values ``e`` reads: not a tensor named only for its dtype (``dtype(t)``), which both ranks
    know."""
    if isinstance(e, Call) and e.fn == "dtype":
        return
    if isinstance(e, Name):
        yield e.id
        return
    for child in children(e):
        yield from _value_names(child)


class _Builder:
    def __init__(self, file: str, diags: Diagnostics):
        self.file = file
        self.d = diags

    # ---- helpers ------------------------------------------------------------------
    def span(self, node) -> Span | None:
        return span_of(self.file, node) if node is not None else None

    def text(self, node) -> str:
        tok = node.children[0] if isinstance(node, Tree) else node
        raw = str(tok)
        if raw.startswith('"""'):
            body = raw[3:-3]
            # Long strings are verbatim except for common indentation, so docs can be laid out freely.
            lines = body.split("\n")
            indents = [len(l) - len(l.lstrip()) for l in lines[1:] if l.strip()]
            cut = min(indents) if indents else 0
            return "\n".join([lines[0]] + [l[cut:] for l in lines[1:]]).strip()
        return self.unquote(tok)

    def unquote(self, tok: Token) -> str:
        raw = str(tok)[1:-1]
        out, i = [], 0
        while i < len(raw):
            c = raw[i]
            if c == "\\":
                nxt = raw[i + 1] if i + 1 < len(raw) else ""
                if nxt not in _ESCAPES:
                    sp = self.span(tok)
                    if sp is not None and sp.line == sp.end_line:
                        sp = Span(sp.file, sp.line, sp.col + 1 + i, sp.line, sp.col + 2 + i + len(nxt))
                    self.d.error("E121", f"unknown escape '\\{nxt}' in string literal", sp,
                                 "use \\\\, \\\", \\n or \\t")
                    i += 2
                    continue
                out.append(_ESCAPES[nxt])
                i += 2
            else:
                out.append(c)
                i += 1
        return "".join(out)

    def int_value(self, tok: Token, negative: bool = False) -> int:
        v = -int(tok) if negative else int(tok)
        if not _INT64[0] <= v <= _INT64[1]:
            self.d.error("E121", f"integer {v} does not fit in int64", self.span(tok))
            return 0
        return v

    # ---- expressions --------------------------------------------------------------
    def expr(self, t) -> Expr:
        sp = self.span(t)
        if isinstance(t, Token):  # bare tokens only appear as names inside lists
            return Name(str(t), span=sp)
        k, c = t.data, t.children
        if k == "int_lit":
            return Int(self.int_value(c[0]), span=sp)
        if k == "neg_int_lit":
            return Int(self.int_value(c[0], negative=True), span=sp)
        if k == "float_lit":
            return Float(float(c[0]), span=sp)
        if k == "neg_float_lit":
            return Float(-float(c[0]), span=sp)
        if k == "str_lit":
            return Str(self.unquote(c[0]), span=sp)
        if k == "true_lit":
            return Bool(True, span=sp)
        if k == "false_lit":
            return Bool(False, span=sp)
        if k == "name":
            return Name(str(c[0]), span=sp)
        if k == "call":
            args, kwargs = [], []
            for a in c[1:]:
                if a is None:
                    continue
                if isinstance(a, Tree) and a.data == "kwarg":
                    kwargs.append((str(a.children[0]), self.expr(a.children[1])))
                else:
                    args.append(self.expr(a))
            return Call(str(c[0]), tuple(args), tuple(kwargs), span=sp)
        if k == "binop":
            return Binary(str(c[1]), self.expr(c[0]), self.expr(c[2]), span=sp)
        if k == "compare":
            return Binary(str(c[1]), self.expr(c[0]), self.expr(c[2]), span=sp)
        if k == "pow":
            return Binary("**", self.expr(c[0]), self.expr(c[1]), span=sp)
        if k in ("and_", "or_"):
            return Binary(k[:-1], self.expr(c[0]), self.expr(c[1]), span=sp)
        if k == "not_":
            return Unary("not", self.expr(c[0]), span=sp)
        if k == "neg":
            inner = self.expr(c[0])
            # Fold negative literals so printing and re-parsing gives equal nodes.
            if isinstance(inner, Int):
                return Int(-inner.value, span=sp)
            if isinstance(inner, Float):
                return Float(-inner.value, span=sp)
            return Unary("-", inner, span=sp)
        if k == "cond":
            return Cond(self.expr(c[0]), self.expr(c[1]), self.expr(c[2]), span=sp)
        if k == "in_range":
            r = self.range(c[1])
            return InRange(self.expr(c[0]), r.lo, r.hi, r.lo_closed, r.hi_closed, span=sp)
        if k in ("in_set", "not_in_set"):
            return InSet(self.expr(c[0]), self.set_items(c[1]), k == "not_in_set", span=sp)
        if k == "list_lit":
            raise ValueError("list literal outside a default")  # grammar only allows it in literals
        raise ValueError(f"unexpected expression node {k}")

    def range(self, t: Tree) -> Range:
        lo_b, lo, hi, hi_b = t.children
        return Range(self.expr(lo), self.expr(hi), lo_b.data == "closed_bound", hi_b.data == "closed_bound")

    def set_items(self, t: Tree) -> tuple[Expr, ...]:
        return tuple(self.expr(x) for x in t.children if x is not None)

    def literal(self, t: Tree):
        """A default value: Python int/float/bool/str, or a tuple for list literals."""
        if t.data == "list_lit":
            return tuple(self.literal(x) for x in t.children if x is not None)
        e = self.expr(t)
        return e.value  # type: ignore[union-attr]

    # ---- shapes -------------------------------------------------------------------
    def shape(self, t: Tree) -> Shape:
        alts = t.children if t.data == "shape_alts" else [t]
        return Shape(tuple(self.shape_alt(a) for a in alts))

    def shape_alt(self, t: Tree):
        if t.data == "shape_cond":
            return ShapeCond(self.expr(t.children[0]), self.shape_alt(t.children[1]), self.shape_alt(t.children[2]))
        if t.data == "shape_empty":
            return ShapeTuple(())
        dims = [(d.children[0] is not None, self.expr(d.children[1])) for d in t.children]
        flags = tuple(f for f, _ in dims)
        return ShapeTuple(tuple(e for _, e in dims), flags if any(flags) else ())


def _name_tokens(t: Tree) -> list[Token]:
    return [x for x in t.children if isinstance(x, Token)]


class Analyzer(_Builder):
    """Builds the Op and checks it; errors go to the Diagnostics bag."""

    def __init__(self, file: str, diags: Diagnostics):
        super().__init__(file, diags)
        self.labels: dict[str, set[str]] = {}

    def run(self, tree: Tree, source: str) -> Op | None:
        op_tree = tree.children[0] if tree.data == "start" else tree
        name_tok = op_tree.children[0]
        name = str(name_tok)
        if not _OP_NAME.match(name):
            camel = "".join(w[:1].upper() + w[1:] for w in name.split("_"))
            self.d.error("E115", f"op name '{name}' is not UpperCamelCase ASCII", self.span(name_tok),
                         f"did you mean '{camel}'?" if _OP_NAME.match(camel) else None)
        fields = dict(version=None, doc="", notes=[], pairs=[], unsupported=[], comm=[], envs=[], inputs=[],
                      outputs=[], attrs=[], lets=[], defs=[], constraints=[], buffers=[], quant=[], products=[],
                      quant_by=None, semantics=None, tiling_key=[], tolerances=[], aclnn=[], window=None, specials=[], post=[],
                      roles=[], graph=[])
        for item in op_tree.children[1:]:
            self.op_item(item, fields)
        env_names = {e.name for e in fields["envs"]}
        attr_names = {a.name for a in fields["attrs"]} - env_names
        fields["window"] = _sized(fields["window"], attr_names, env_names)
        fields["products"] = [dataclasses.replace(p, window=_sized(p.window, attr_names, env_names))
                              if p.window is not None else p for p in fields["products"]]
        op = Op(
            name=name, version=fields["version"] or 0, doc=fields["doc"], notes=tuple(fields["notes"]),
            pairs_with=tuple(fields["pairs"]), unsupported_products=tuple(fields["unsupported"]),
            comm_groups=tuple(_with_handles(fields["comm"], fields["inputs"])), envs=tuple(fields["envs"]),
            inputs=tuple(fields["inputs"]),
            outputs=tuple(fields["outputs"]), attrs=tuple(fields["attrs"]), lets=tuple(fields["lets"]),
            defs=tuple(fields["defs"]), constraints=tuple(fields["constraints"]), buffers=tuple(fields["buffers"]),
            quant_modes=tuple(fields["quant"]), products=tuple(fields["products"]), quant_by=fields["quant_by"],
            semantics=fields["semantics"], tiling_key=tuple(fields["tiling_key"]),
            tolerances=tuple(fields["tolerances"]), aclnn=tuple(fields["aclnn"]), window=fields["window"],
            specials=tuple(fields["specials"]), post=fields["post"][0] if fields["post"] else None,
            roles=tuple(fields["roles"]), graph=tuple(fields["graph"]), source=source,
            span=self.span(op_tree))
        self.check_required(op, fields, name_tok)
        _Checker(op, self.d).run()
        return None if self.d.has_errors else op

    def check_required(self, op: Op, fields: dict, name_tok: Token) -> None:
        sp = self.span(name_tok)
        for what, missing in (("a `version`", fields["version"] is None), ("a `doc`", not op.doc),
                              ("at least one `product`", not op.products), ("at least one `input`", not op.inputs),
                              ("at least one `output`", not op.outputs)):
            if missing:
                self.d.error("E116", f"op '{op.name}' needs {what}", sp)

    # ---- op items -----------------------------------------------------------------
    def op_item(self, t: Tree, f: dict) -> None:
        k, c = t.data, t.children
        if k == "version_stmt":
            f["version"] = self.int_value(c[0])
        elif k == "doc_stmt":
            f["doc"] = self.text(c[0])
        elif k == "note_stmt":
            f["notes"].append(self.text(c[0]))
        elif k == "pairs_stmt":
            f["pairs"].extend(str(x) for x in _name_tokens(c[0]))
        elif k == "unsupported_stmt":
            f["unsupported"].extend(self.text(x) for x in c[0].children)
        elif k == "comm_stmt":
            when = self.expr(c[2].children[0]) if c[2] is not None else None
            f["comm"].append(CommGroup(str(c[0]), str(c[1]), when))
        elif k == "env_decl":
            unit = self.unquote(c[3].children[0]) if c[3] is not None else ""
            doc = self.text(c[4].children[0]) if c[4] is not None else ""
            f["envs"].append(Env(str(c[0]), str(c[1]), self.literal(c[2]), unit, doc, span=self.span(t)))
        elif k == "input_decl":
            f["inputs"].append(self.tensor(t, "input"))
        elif k == "output_decl":
            f["outputs"].append(self.tensor(t, "output"))
        elif k == "attr_decl":
            f["attrs"].append(self.attr(t))
        elif k == "let_decl":
            f["lets"].append(self.let(t))
        elif k == "def_decl":
            f["defs"].append(Def(str(c[0]), tuple(str(x) for x in _name_tokens(c[1])), self.expr(c[2]),
                                 span=self.span(t)))
        elif k == "quant_decl":
            sends: list[Send] = []
            body = tuple(self.quant_body(c[3:], (), sends))
            for extra in sends[1:]:
                self.d.error("E131", "a quant mode has one `send`; this is the second", extra.span)
            f["quant"].append(QuantMode(self.int_value(c[0]), str(c[1]), self.text(c[2]), body, span=self.span(t),
                                        send=sends[0] if sends else None))
        elif k == "special_decl":
            body = c[3]
            f["specials"].append(SpecialExpert(str(c[0]), str(c[1]), self.text(c[2]),
                                               tuple(self.quant_body(body.children, ()))
                                               if body.data == "special_formula" else None, span=self.span(t)))
        elif k == "post_decl":
            stage = PostStage(str(c[0]), self.text(c[1]), tuple(self.quant_body(c[2:], ())), span=self.span(t))
            if f["post"]:
                self.d.error("E130", "an op has one `post` stage; this is the second", stage.span)
            else:
                f["post"].append(stage)
        elif k == "product_decl":
            f["products"].append(self.product(t))
        elif k == "quant_by_stmt":
            f["quant_by"] = str(c[0])
        elif k == "tolerance_stmt":
            f["tolerances"].append(self.tolerance(t))
        elif k == "tiling_key_decl":
            for fld in c:
                f["tiling_key"].append((str(fld.children[0]), self.expr(fld.children[1])))
        elif k == "aclnn_decl":
            params = tuple(AclnnParam(str(p.children[1]), p.children[0] is None,
                                      str(p.children[2]) if p.children[2] is not None else None,
                                      str(p.children[3]) if p.children[3] is not None else None,
                                      span=self.span(p.children[1]))
                           for p in c[1:-2])
            sizes = tuple(AclnnSize(str(z.children[0]), self.expr(z.children[1]), span=self.span(z.children[0]))
                          for z in (c[-2].children if c[-2] is not None else ()))
            doc = self.text(c[-1].children[0]) if c[-1] is not None else ""
            f["aclnn"].append(AclnnEntry(str(c[0]), params, doc, sizes, span=self.span(c[0])))
        elif k == "window_decl":
            f["window"] = self.window(t, f["window"], "the op")
        elif k in ("graph_input", "graph_output", "graph_attr"):
            f["graph"].append(self.graph_fact(t, k.removeprefix("graph_")))
        elif k == "role_stmt":
            f["roles"].append(RoleBinding(str(c[0]), str(c[1]), span=self.span(t)))
        elif k == "semantics_stmt":
            f["semantics"] = str(c[0])
            if f["semantics"] not in B.SEMANTICS:
                self.d.unknown("E122", "semantics", f["semantics"], B.SEMANTICS, self.span(c[0]))
        else:
            self.body(t, (), f["constraints"], f["buffers"], "op")

    def graph_fact(self, t: Tree, role: str) -> GraphFact:
        """``graph ROLE NAME clause+;`` (each clause once: E135)."""
        name, clauses = str(t.children[0]), t.children[1:]
        got: dict = {}
        for cl in clauses:
            key = {"ir_clause": "ir_name", "graph_dtypes": "dtypes", "default_clause": "default",
                   "graph_after": "after"}[cl.data]
            if key in got:
                self.d.error("E135", f"graph {role} '{name}' gives `{cl.data.split('_')[-1]}` twice", self.span(cl))
            if cl.data == "ir_clause":
                got[key] = self.unquote(cl.children[0])
            elif cl.data == "graph_dtypes":
                got[key] = tuple(str(x) for x in cl.children[0].scan_values(lambda v: isinstance(v, Token)))
            elif cl.data == "default_clause":
                got[key] = self.literal(cl.children[0])
                got["has_default"] = True
            else:
                got[key] = str(cl.children[0])
        return GraphFact(role, name, **got, span=self.span(t))

    def tensor(self, t: Tree, role: str) -> Tensor:
        c = list(t.children)
        optional = c[0] is not None if role == "input" else False
        if role == "input":
            c = c[1:]
        name = str(c[0])
        dtypes = tuple(str(x) for x in _name_tokens(c[1]))
        formats, shape, doc, ir, rule, empty_absent, noncontiguous = ("ND",), None, "", "", None, False, False
        for cl in c[2:]:
            if cl.data == "noncontig_clause":
                noncontiguous = True
            elif cl.data == "empty_clause":
                if role != "input":
                    self.d.error("E118", f"output '{name}' cannot be empty_absent (only an input can be passed "
                                         f"as an empty tensor meaning absent)", self.span(cl))
                empty_absent = role == "input"
            elif cl.data == "format_clause":
                formats = tuple(str(x) for x in cl.children)
            elif cl.data == "shape_clause":
                shape = self.shape(cl.children[0])
            elif cl.data == "doc_clause":
                doc = self.text(cl.children[0])
            elif cl.data == "ir_clause":
                ir = self.unquote(cl.children[0])
            elif cl.data == "dtype_rule":
                if role == "input":
                    self.d.error("E118", f"input '{name}' cannot have a dtype rule (only outputs infer a dtype)",
                                 self.span(cl))
                rule = self.expr(cl.children[0])
        return Tensor(name, role, optional, dtypes, formats, shape, doc, ir or default_ir_name(name), rule,
                      empty_absent, noncontiguous=noncontiguous, span=self.span(t))

    def attr(self, t: Tree) -> Attr:
        c = list(t.children)
        optional = c[0] is not None
        name_tok, type_tree = c[1], c[2]
        if type_tree.data == "list_type":
            typ = f"list<{type_tree.children[0]}>"
        else:
            typ = str(type_tree.children[0])
        default, domain, length, doc, ir, omitted = None, None, None, "", "", None
        for cl in c[3:]:
            if cl.data == "default_clause":
                default = self.literal(cl.children[0])
            elif cl.data == "domain_clause":
                domain = self.domain(cl.children[0])
            elif cl.data == "len_clause":
                length = self.range(cl.children[0])
            elif cl.data == "doc_clause":
                doc = self.text(cl.children[0])
            elif cl.data == "ir_clause":
                ir = self.unquote(cl.children[0])
            elif cl.data == "omitted_clause":
                fn, *args = cl.children
                omitted = Call(str(fn), tuple(Name(str(a)) for a in args if a is not None), span=self.span(cl))
        name = str(name_tok)
        return Attr(name, typ, optional, default, domain, length, doc, ir or snake(name), omitted=omitted,
                    span=self.span(t))

    def domain(self, t: Tree) -> Domain:
        if t.data == "range_domain":
            return Domain(range=self.range(t.children[0]))
        return Domain(items=self.set_items(t.children[0]))

    def let(self, t: Tree) -> Let:
        c = t.children
        doc = self.text(c[2].children[0]) if len(c) > 2 and c[2] is not None else ""
        return Let(str(c[0]), self.expr(c[1]), doc, span=self.span(t))

    def quant_body(self, items: Iterable[Tree], conds: tuple[Expr, ...],
                   sends: list | None = None) -> list[QuantStmt]:
        """A formula body's statements; a quant mode's top-level `send` goes to ``sends`` (None: no `send` here)."""
        out: list[QuantStmt] = []
        for s in items:
            if s.data == "quant_when":
                out.extend(self.quant_body(s.children[1:], conds + (self.expr(s.children[0]),),
                                           None if sends is None else []))
            elif s.data == "quant_send":
                if sends is None or conds:
                    self.d.error("E131", "`send` splits a quant mode between the sending and the receiving rank; "
                                 + ("it stands at the top level of the mode, not under `when`" if conds else
                                    "a special expert or post stage runs on one rank"), self.span(s))
                else:
                    sends.append(Send(tuple(str(n) for n in s.children), len(out), span=self.span(s)))
            else:
                kind = "let" if s.data == "quant_let" else "assign"
                out.append(QuantStmt(kind, str(s.children[0]), self.expr(s.children[1]), conds, span=self.span(s)))
        return out

    def body(self, t: Tree, conds: tuple[Expr, ...], constraints: list, buffers: list, scope: str) -> None:
        c = t.children
        if t.data == "when_block":
            cond = self.expr(c[0])
            for s in c[1:]:
                self.body(s, conds + (cond,), constraints, buffers, scope)
            return
        label = str(c[0].children[0]) if c[0] is not None else None
        rest = list(c[1:])
        if label is not None:
            seen = self.labels.setdefault(scope, set())
            if label in seen:
                self.d.error("E120", f"duplicate constraint label '{label}' in {scope}", self.span(c[0]))
            seen.add(label)
        if t.data in ("require_stmt", "limit_stmt"):
            expr_t, cls_tok, blame_t, msg_t = rest
            cls = self.error_class(cls_tok)
            param = str(blame_t.children[0])
            value = self.expr(blame_t.children[1]) if len(blame_t.children) > 1 and blame_t.children[1] is not None else None
            constraints.append(Constraint(label, conds, self.expr(expr_t), cls, param, value, self.text(msg_t),
                                          span=self.span(t), limit=t.data == "limit_stmt"))
        elif t.data == "buffer_stmt":
            env_tok, expr_t, cls_tok, msg_t = rest
            buffers.append(Buffer(label, conds, str(env_tok), self.expr(expr_t), self.error_class(cls_tok),
                                  self.text(msg_t), span=self.span(t)))

    def tolerance(self, t: Tree) -> Tolerance:
        name, dts, spec = t.children
        dtypes = tuple(str(x) for x in dts.scan_values(lambda v: isinstance(v, Token))) if dts is not None else ()
        if spec.data == "tol_exact":
            return Tolerance(str(name), dtypes, True, span=self.span(t))
        rtol, atol = (float(self.expr(x).value) for x in spec.children)
        return Tolerance(str(name), dtypes, False, rtol, atol, span=self.span(t))

    def error_class(self, tok: Token) -> str:
        cls = str(tok)
        if cls not in B.ERROR_CLASSES:
            self.d.unknown("E114", "error class", cls, B.ERROR_CLASSES, self.span(tok))
            return "tiling"
        return cls

    def product(self, t: Tree) -> Product:
        c = t.children
        soc_tok, display_t, ext = c[0], c[1], c[2]
        extends = str(ext.children[0]) if ext is not None else None
        soc = str(soc_tok)
        f = dict(doc="", notes=[], pairs=[], domains=[], unsup_attrs=[], unsup_inputs=[], in_dtypes=[], in_shapes=[],
                 out_dtypes=[], out_shapes=[], unspecified=[], unspecified_why=[], lets=[], quant=None, constraints=[],
                 buffers=[], tolerances=[], empty_absent=[], ignored=[], ignored_attrs=[], window=None,
                 unreachable=[], narrower=[], op_file=None, jit_compile=None)
        for item in c[3:]:
            k, ic = item.data, item.children
            if k == "doc_stmt":
                f["doc"] = self.text(ic[0])
            elif k == "note_stmt":
                f["notes"].append(self.text(ic[0]))
            elif k == "pairs_stmt":
                f["pairs"].extend(str(x) for x in _name_tokens(ic[0]))
            elif k == "attr_domain":
                f["domains"].append((str(ic[0]), self.domain(ic[1])))
            elif k == "attr_unsupported":
                f["unsup_attrs"].append(str(ic[0]))
            elif k == "attr_ignored":
                f["ignored_attrs"].append(str(ic[0]))
            elif k == "input_unsupported":
                f["unsup_inputs"].append(str(ic[0]))
            elif k == "input_empty_absent":
                f["empty_absent"].append(str(ic[0]))
            elif k == "input_ignored":
                f["ignored"].append(str(ic[0]))
            elif k == "input_dtypes":
                f["in_dtypes"].append((str(ic[0]), tuple(str(x) for x in _name_tokens(ic[1]))))
            elif k == "input_shape":
                f["in_shapes"].append((str(ic[0]), self.shape(ic[1])))
            elif k == "output_dtypes":
                f["out_dtypes"].append((str(ic[0]), tuple(str(x) for x in _name_tokens(ic[1]))))
            elif k == "output_shape":
                f["out_shapes"].append((str(ic[0]), self.shape(ic[1])))
            elif k == "output_unspecified":
                f["unspecified"].append(str(ic[0]))
                if ic[1] is not None:
                    f["unspecified_why"].append((str(ic[0]), self.text(ic[1])))
            elif k == "let_decl":
                f["lets"].append(self.let(item))
            elif k == "tolerance_stmt":
                f["tolerances"].append(self.tolerance(item))
            elif k == "quant_modes_stmt":
                f["quant"] = tuple(self.int_value(x) for x in ic[0].children)
            elif k == "window_decl":
                f["window"] = self.window(item, f["window"], f"product {soc}")
            elif k == "unreachable_stmt":
                ids = tuple("".join(str(x) if i == 0 else f".{x}" for i, x in enumerate(r.children))
                            for r in ic[:-1])
                f["unreachable"].append(UnreachableMark(ids, self.text(ic[-1]), span=self.span(item)))
            elif k == "narrower_stmt":
                cid = "".join(str(x) if i == 0 else f".{x}" for i, x in enumerate(ic[0].children))
                f["narrower"].append(NarrowerMark(cid, self.text(ic[1]), self.text(ic[2]), span=self.span(item)))
            elif k in ("op_file_stmt", "jit_compile_stmt"):
                self.opdef_config(item, f, soc)
            else:
                self.body(item, (), f["constraints"], f["buffers"], f"product {soc}")
        return Product(soc, self.text(display_t), extends, f["doc"], tuple(f["notes"]), tuple(f["pairs"]),
                       tuple(f["domains"]), tuple(f["unsup_attrs"]), tuple(f["unsup_inputs"]), tuple(f["in_dtypes"]),
                       tuple(f["in_shapes"]), tuple(f["out_dtypes"]), tuple(f["out_shapes"]), tuple(f["unspecified"]),
                       tuple(f["lets"]), f["quant"], tuple(f["constraints"]), tuple(f["buffers"]),
                       tuple(f["tolerances"]), tuple(f["empty_absent"]), tuple(f["ignored"]),
                       tuple(f["ignored_attrs"]), f["window"], tuple(f["unspecified_why"]), tuple(f["unreachable"]),
                       op_file=f["op_file"], jit_compile=f["jit_compile"], narrower=tuple(f["narrower"]),
                       span=self.span(t))

    def opdef_config(self, item: Tree, f: dict, soc: str) -> None:
        """``op_file "NAME";`` / ``jit_compile FLAG;`` of product ``soc`` (E133): each once, NAME a C identifier
        (it names a file and the build flow's kernel entry), FLAG a known jitCompile.flag."""
        key = "op_file" if item.data == "op_file_stmt" else "jit_compile"
        if f[key] is not None:
            self.d.error("E133", f"product {soc} gives `{key}` twice (once per product)", self.span(item))
            return
        if key == "op_file":
            name = self.text(item.children[0])
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                self.d.error("E133", f"op_file {name!r} of product {soc} is not a C identifier: it names the "
                                     f"kernel entry file op_kernel/<arch dir>/{name}.cpp", self.span(item.children[0]))
                return
            f[key] = name
        else:
            flag = str(item.children[0])
            if flag not in B.JIT_COMPILE_FLAGS:
                self.d.unknown("E133", "jitCompile.flag", flag, B.JIT_COMPILE_FLAGS, self.span(item.children[0]))
                return
            f[key] = flag

    def window(self, t: Tree, earlier: Window | None, scope: str) -> Window:
        """One ``window`` block: its items, each once (areas: each name once, at least one)."""
        c = t.children
        if earlier is not None:
            self.d.error("E126", f"{scope} declares a second window (one per op and per product)", self.span(t))
        halves, state, areas, lets, reserve, buffer_id, rank_step = None, None, [], [], None, None, None
        over_spans: dict[int, Span | None] = {}  # the OTHER of `area NAME over OTHER`, by the area's index
        for it in c[2:]:
            if it.data == "window_let":
                if any(l.name == str(it.children[0]) for l in lets):
                    self.d.error("E126", f"window let '{it.children[0]}' is declared twice", self.span(it.children[0]))
                lets.append(Let(str(it.children[0]), self.expr(it.children[1]), span=self.span(it)))
            elif it.data == "window_halves":
                if halves is not None:
                    self.d.error("E126", "window declares `halves` twice", self.span(it))
                halves = self.int_value(it.children[0])
                if halves < 1:
                    self.d.error("E126", f"window halves must be at least 1, got {halves}", self.span(it.children[0]))
            elif it.data in ("window_area", "window_area_over"):
                name = str(it.children[0])
                if any(a.name == name for a in areas):
                    self.d.error("E126", f"window area '{name}' is declared twice", self.span(it.children[0]))
                over = str(it.children[1]) if it.data == "window_area_over" else None
                if over is not None:
                    over_spans[len(areas)] = self.span(it.children[1])
                areas.append(WindowArea(name, self.expr(it.children[-1]), span=self.span(it.children[0]), over=over))
            elif it.data == "window_rank_step":
                if rank_step is not None:
                    self.d.error("E126", "window declares `rank_step` twice", self.span(it))
                rank_step = (str(it.children[0]), self.expr(it.children[1]), self.span(it))
            elif it.data in ("window_reserve", "window_buffer_id"):
                word = "reserve" if it.data == "window_reserve" else "buffer_id"
                if (reserve if word == "reserve" else buffer_id) is not None:
                    self.d.error("E126", f"window declares `{word}` twice", self.span(it))
                if word == "reserve":
                    reserve = (self.expr(it.children[0]), self.span(it))
                else:
                    buffer_id = (self.expr(it.children[0]), self.span(it))
            else:
                if state is not None:
                    self.d.error("E126", "window declares `state` twice", self.span(it))
                place = str(it.children[0])
                if place not in WINDOW_PLACES:
                    self.d.unknown("E126", "HCCL window", place, WINDOW_PLACES, self.span(it.children[0]))
                state = (place, self.expr(it.children[1]), it.data == "window_state_at_start",
                         it.data == "window_state_in_reserve", self.span(it))
        for i, at in over_spans.items():  # an earlier area: the later one starts where it starts
            earlier, over = [a.name for a in areas[:i]], areas[i].over
            if over in earlier:
                continue
            if over in [a.name for a in areas]:
                self.d.error("E126", f"window area '{areas[i].name}' is over area '{over}', declared after it (an "
                             "area can start only where an earlier one starts)", at)
            else:
                self.d.unknown("E126", "window area", over, earlier, at)
        for what, missing in (("`halves N;`", halves is None), ("an `area NAME = bytes;`", not areas),
                              ("`state windowsIn = bytes;`", state is None)):
            if missing:
                self.d.error("E126", f"window {c[0]} needs {what}", self.span(c[0]))
        place, size, at_start, in_reserve, state_span = state or (WINDOW_PLACES[0], Int(0), False, False, None)
        # the reserve layout (the real Atlas A2 ops'): the status area in the last half's reserve, the half-select
        # word within the first reserve; either without the other would place the status or the data nowhere
        if in_reserve and (reserve is None or place != WINDOW_PLACES[0]):
            self.d.error("E126", f"`state {place} in_reserve` needs `reserve = bytes;` and the status area in "
                                 f"{WINDOW_PLACES[0]}", state_span)
        if reserve is not None and state is not None and not in_reserve:
            self.d.error("E126", f"window {c[0]} declares `reserve`: its status area goes in the last half's "
                                 f"reserve (`state {WINDOW_PLACES[0]} in_reserve = bytes;`)", state_span)
        if buffer_id is not None and reserve is None:
            self.d.error("E126", f"`buffer_id` of window {c[0]} needs `reserve = bytes;` (the word lies in the "
                                 f"first half's reserve)", buffer_id[1])
        # a rank step staggers the status areas and the halves after them from the window's start: the status
        # area first in windowsIn (the real 950 MTE ops'), not in another window or a half's reserve
        if rank_step is not None and state is not None and not (at_start and place == WINDOW_PLACES[0]):
            self.d.error("E126", f"`rank_step` of window {c[0]} needs the status area first in {WINDOW_PLACES[0]} "
                                 f"(`state {WINDOW_PLACES[0]} at_start = bytes;`): rank r's status area and data "
                                 "halves start r steps into its window", rank_step[2])
        extra = dict(reserve=reserve and reserve[0], buffer_id=buffer_id and buffer_id[0], state_in_reserve=in_reserve,
                     rank_step=rank_step and rank_step[1], rank_count=rank_step and rank_step[0])
        source = self.expr(c[1])
        if isinstance(source, Name):  # an env variable sizes the window, in its unit
            return Window(str(c[0]), source.id, halves or 1, tuple(areas), place, size, tuple(lets), at_start,
                          span=self.span(t), **extra)
        # bytes computed from attributes (the MC2 context ops: ccl_buffer_size less 1 MiB): a too small window
        # blames the first attribute the expression reads
        blamed = next((n.id for n in walk(source) if isinstance(n, Name) and n.id not in B.CONSTANTS), "")
        return Window(str(c[0]), blamed, halves or 1, tuple(areas), place, size, tuple(lets), at_start,
                      span=self.span(t), size=source, **extra)


def _sized(w: Window | None, attrs: set[str], envs: set[str]) -> Window | None:
    """`window DOMAIN: NAME {` with NAME an attribute (not an env): the window is that many bytes; `window DOMAIN:
    ENV // 2 {`, an expression that reads an env: that many bytes of the env's (Window.size_env)."""
    if w is None:
        return w
    if w.size is not None:
        env = next((n.id for n in walk(w.size) if isinstance(n, Name) and n.id in envs), None)
        return w if env is None else dataclasses.replace(w, env=env, size_env=True)
    if w.env not in attrs:
        return w
    return dataclasses.replace(w, size=Name(w.env, span=w.span))


def _with_handles(groups: list[CommGroup], inputs: list[Tensor]) -> list[CommGroup]:
    """A comm group whose handle names an input is an MC2 context domain (CommGroup.context)."""
    names = {t.name for t in inputs}
    return [dataclasses.replace(g, context=True) if g.attr in names else g for g in groups]


def _windows(op: Op) -> list[Window]:
    """The op's window and its products' own."""
    return [w for w in [op.window] + [p.window for p in op.products] if w is not None]


def default_ir_name(name: str) -> str:
    """OpDef/IR name of an aclnn tensor parameter: drop the Optional/Out suffix, then snake_case."""
    for suffix in ("Optional", "Out"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return snake(name)


# ---------------------------------------------------------------------------------------------
# Semantic checks over the built model
# ---------------------------------------------------------------------------------------------

class _Checker:
    """Name resolution, typing and consistency checks over a built (unvalidated) Op."""

    def __init__(self, op: Op, diags: Diagnostics):
        self.op = op
        self.d = diags
        self.let_kinds: dict[str, str | None] = {}
        self.defs = {df.name: df for df in op.defs}
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", op.source)]
        self.typer = Typer(_OpNames(self), _Report(self))

    def at(self, span: Span | None, pattern: str) -> Span | None:
        """Span of group 1 of the first match of ``pattern`` inside ``span`` (``span`` itself when none).

        The model keeps names as strings; this narrows a declaration's span to the word a diagnostic is about.
        """
        if span is None or not 1 <= span.line <= span.end_line <= len(self.line_starts):
            return span
        start = self.line_starts[span.line - 1] + span.col - 1
        end = self.line_starts[span.end_line - 1] + span.end_col - 1
        m = re.compile(pattern).search(self.op.source, start, end)
        if m is None:
            return span

        def pos(offset: int) -> tuple[int, int]:
            line = bisect.bisect_right(self.line_starts, offset)
            return line, offset - self.line_starts[line - 1] + 1

        (l0, c0), (l1, c1) = pos(m.start(1)), pos(m.end(1))
        return Span(span.file, l0, c0, l1, c1)

    def run(self) -> None:
        op = self.op
        self.bound = dim_bindings(op)
        self.check_duplicates()
        for t in op.inputs + op.outputs:
            self.check_tensor(t)
        for a in op.attrs:
            self.check_attr(a)
        for e in op.envs:
            if e.type not in B.ATTR_TYPES:
                self.d.unknown("E113", "env type", e.type, B.ATTR_TYPES, self.at(e.span, rf":\s*({_w(e.type)})\b"))
            elif not _literal_fits(e.default, e.type):
                self.d.error("E107", f"default {_show(e.default)} of env '{e.name}' is not {_a(e.type)}",
                             self.at(e.span, _DEFAULT_RE))
        for g in op.comm_groups:
            if g.context:
                self.check_context_group(g)
                continue
            a = op.attr(g.attr)
            if a is None or a.type != "string":
                self.d.error("E119", f"comm group '{g.domain}' must name a string attribute (the HCCL group) or an "
                             f"INT32 input (an MC2 context), got '{g.attr}'",
                             self.at(op.span, rf"\bcomm\s+{_w(g.domain)}\s+({_w(g.attr)})\b"),
                             _guess(g.attr, [x.name for x in op.attrs if x.type == "string"]))
            if g.when is not None:
                self.expect_bool(g.when)
                if g is op.comm_groups[0]:
                    self.d.error("E119", f"comm group '{g.domain}' is the op's first group, which every call uses: "
                                 "it takes no 'when'", g.when.span)
        self.check_shapes()
        self.check_lets(op.lets, "op")
        for df in op.defs:
            self.kind(df.body, scope=("scalar", set(df.params)))
        for c in op.constraints:
            self.check_constraint(c)
        for b in op.buffers:
            self.check_buffer(b)
        self.check_products()
        self.check_windows()
        self.check_cycles()
        self.check_quant()
        self.check_tiling_key()
        self.check_tolerances()
        self.check_aclnn()
        self.check_roles()
        self.check_graph()

    def check_graph(self) -> None:
        """The `graph` facts (E135): each names a declared parameter of its kind once, with clauses that fit it."""
        op, seen = self.op, set()
        for g in op.graph:
            where = self.at(g.span, rf"\bgraph\s+{g.role}\s+({_w(g.name)})\b")
            pool = op.attrs if g.role == "attr" else op.inputs if g.role == "input" else op.outputs
            p = next((x for x in pool if x.name == g.name), None)
            if p is None:
                self.d.error("E135", f"unknown {g.role} '{g.name}'", where, _guess(g.name, [x.name for x in pool]))
                continue
            if g.name in seen:
                self.d.error("E135", f"graph {g.role} '{g.name}' is stated twice (give its facts in one statement)",
                             where)
            seen.add(g.name)
            if g.ir_name is not None and not re.fullmatch(r"[A-Za-z_]\w*", g.ir_name):
                self.d.error("E135", f"proto name {g.ir_name!r} of {g.role} '{g.name}' is not a C identifier",
                             self.at(g.span, r"\bir\s+(\"[^\"]*\")"))
            if g.dtypes is not None:
                if g.role == "attr":
                    self.d.error("E135", f"attribute '{g.name}' has no dtype set (only a tensor does)", where)
                for dt in g.dtypes:
                    if dt not in DTYPES:
                        self.d.unknown("E103", "dtype", dt, DTYPES, self.at(g.span, rf"[:|]\s*({_w(dt)})\b"))
                if len(set(g.dtypes)) != len(g.dtypes):
                    self.d.error("E135", f"the proto dtype set of {g.role} '{g.name}' names a dtype twice", where)
            if g.role != "attr" and (g.has_default or g.after is not None):
                self.d.error("E135", f"{g.role} '{g.name}' has no default or attribute place (only an attribute "
                                     f"does)", where)
            if g.role == "attr" and g.has_default:
                if not p.optional:
                    self.d.error("E135", f"required attribute '{g.name}' has no default in the proto either "
                                         f"(REQUIRED_ATTR)", self.at(g.span, _DEFAULT_RE))
                elif not _literal_fits(g.default, p.type):
                    self.d.error("E107", f"proto default {_show(g.default)} of attribute '{g.name}' is not "
                                         f"{_a(p.type)}", self.at(g.span, _DEFAULT_RE))
            if g.role == "attr" and g.after is not None:
                other = op.attr(g.after)
                at = self.at(g.span, rf"\bafter\s+({_w(g.after)})\b")
                if other is None:
                    self.d.error("E135", f"unknown attribute '{g.after}'", at,
                                 _guess(g.after, [x.name for x in op.attrs]))
                elif other.optional != p.optional or other is p:
                    self.d.error("E135", f"attribute '{g.name}' can only follow another "
                                         f"{'optional' if p.optional else 'required'} attribute (REG_OP lists "
                                         f"REQUIRED_ATTR, then ATTR), not '{g.after}'", at)
        renamed = {g.name: g for g in op.graph if g.ir_name}
        proto_names = [renamed[p.name].ir_name if p.name in renamed else p.ir_name for p in op.params]
        for g in renamed.values():
            if proto_names.count(g.ir_name) > 1:
                self.d.error("E135", f"two parameters of the proto are named '{g.ir_name}'",
                             self.at(g.span, r"\bir\s+(\"[^\"]*\")"))

    def check_context_group(self, g: CommGroup) -> None:
        """``comm DOMAIN CONTEXT;`` with CONTEXT an input: the op's one domain (the real MC2 context ops have no
        other group), a required INT32 1-D tensor, its window sized by attributes (E119)."""
        op, t = self.op, self.op.tensor(g.attr)
        at = self.at(op.span, rf"\bcomm\s+{_w(g.domain)}\s+({_w(g.attr)})\b")
        if len(op.comm_groups) > 1:
            self.d.error("E119", f"comm group '{g.domain}' is an MC2 context ({g.attr}): it is the op's only "
                         "communication domain (the context carries no other group's windows)", at)
        if t.optional or t.dtypes != ("INT32",) or t.shape is None or any(
                len(alt.dims) != 1 for alt in t.shape.alts if isinstance(alt, ShapeTuple)):
            self.d.error("E119", f"the MC2 context {g.attr} of comm group '{g.domain}' is a required INT32 1-D "
                         f"input (code: mc2/moe_distribute_dispatch_v2 op_tiling CheckMc2Context)", at)
        for w in [op.window] + [p.window for p in op.products]:
            if w is not None and w.domain == g.domain and w.env_sized:
                self.d.error("E119", f"window {w.domain} of the MC2 context domain is sized by env {w.env}, which "
                             "no HCCL group reports here: size it by attributes (`window "
                             f"{w.domain}: cclBufferSize {{`, the ccl_buffer_size the context was built with)",
                             self.at(w.span, rf":\s*({_w(w.env)})\b"))

    def check_roles(self) -> None:
        """``role ROLE = PARAM;`` (E132): ROLE is a role of the op's family, PARAM a declared parameter of that
        kind; each role and each parameter is bound once, and the op does not also declare a parameter under the
        role's default name (the family's code would then read two parameters under one name)."""
        op = self.op
        if not op.roles:
            return
        family = FAMILIES.get(op.semantics or "")
        if family is None:
            self.d.error("E132", "a `role` binds a parameter of the op's family, but the op names no family "
                         "(`semantics NAME;`)", self.at(op.roles[0].span, r"\b(role)\b"))
            return
        kinds = family.role_kinds
        declared = {t.name: t.role for t in op.inputs + op.outputs} | {a.name: "attr" for a in op.attrs}
        roles_seen: set[str] = set()
        names_seen: dict[str, str] = {}
        for r in op.roles:
            role_at = self.at(r.span, rf"\brole\s+({_w(r.role)})\b")
            name_at = self.at(r.span, rf"=\s*({_w(r.name)})\b")
            if r.role not in kinds:
                self.d.unknown("E132", f"{family.name} role", r.role, kinds, role_at)
                continue
            if r.role in roles_seen:
                self.d.error("E132", f"role {r.role} is bound twice", role_at)
            roles_seen.add(r.role)
            if r.name == r.role:
                self.d.error("E132", f"role {r.role} is bound to its own name; only a parameter named differently "
                             "needs a `role`", name_at)
                continue
            if r.name not in declared:
                self.d.unknown("E132", "parameter", r.name, [n for n, k in declared.items() if k == kinds[r.role]],
                               name_at)
            elif declared[r.name] != kinds[r.role]:
                self.d.error("E132", f"role {r.role} of semantics {family.name} is an {kinds[r.role]}, but {r.name} "
                             f"is an {declared[r.name]}", name_at)
            if r.name in names_seen:
                self.d.error("E132", f"{r.name} is bound to two roles, {names_seen[r.name]} and {r.role}", name_at)
            names_seen.setdefault(r.name, r.role)
            if r.role in declared:
                self.d.error("E132", f"the op declares a parameter named {r.role}, so role {r.role} cannot be "
                             f"{r.name}: the family's code would read both under one name", role_at)
        for r in op.roles:  # a bound parameter's own name must not be another role the family reads by default
            other = kinds.get(r.name)
            if other is not None and r.name != r.role and r.name not in roles_seen and r.role in kinds:
                self.d.error("E132", f"{r.name} is itself a role of semantics {family.name}; binding it to role "
                             f"{r.role} leaves role {r.name} without its parameter: bind role {r.name} too",
                             self.at(r.span, rf"=\s*({_w(r.name)})\b"))

    # ---- namespaces ---------------------------------------------------------------
    def check_duplicates(self) -> None:
        seen: dict[str, Span | None] = {}
        op = self.op
        decls = [(t.name, t.span) for t in op.inputs + op.outputs] + [(a.name, a.span) for a in op.attrs] + \
                [(l.name, l.span) for l in op.lets] + [(df.name, df.span) for df in op.defs] + \
                [(e.name, e.span) for e in op.envs]
        in_windows: set[str] = set()  # a window's lets share the op's namespace; each product's window may
        for w in _windows(op):        # declare its own of one name
            decls += [(l.name, l.span) for l in w.lets if l.name not in in_windows]
            in_windows |= {l.name for l in w.lets}
        for name, span in decls:
            span = self.at(span, rf"\b(?:input|output|attr|let|def|env)\s+({_w(name)})\b")
            if name in seen:
                first = seen[name]
                self.d.error("E101", f"'{name}' is declared twice (first at line {first.line})" if first else
                             f"'{name}' is declared twice", span)
            else:
                seen[name] = span
            if name in B.CONSTANTS or name in DTYPES or name in B.BUILTINS:
                self.d.error("E101", f"'{name}' shadows a builtin name", span)
        socs: dict[str, Span | None] = {}
        for p in op.products:
            if p.soc in socs:
                self.d.error("E101", f"product '{p.soc}' is declared twice", self.at(p.span, _PRODUCT_RE))
            socs[p.soc] = p.span
        modes: set[int] = set()
        for q in op.quant_modes:
            if q.value in modes:
                self.d.error("E110", f"quant mode {q.value} is declared twice", self.at(q.span, r"quant\s+(\d+)"))
            modes.add(q.value)

    def symbols(self) -> list[str]:
        op = self.op
        return [t.name for t in op.inputs + op.outputs] + [a.name for a in op.attrs] + \
            [l.name for l in op.lets] + [e.name for e in op.envs] + list(self.bound) + list(B.CONSTANTS) + \
            [l.name for p in op.products for l in p.lets] + [l.name for w in _windows(op) for l in w.lets]

    # ---- declarations -------------------------------------------------------------
    def check_tensor(self, t: Tensor) -> None:
        for dt in t.dtypes:
            if dt not in DTYPES:
                self.d.unknown("E103", "dtype", dt, DTYPES, self.at(t.span, rf"[:|]\s*({_w(dt)})\b"))
        for fmt in t.formats:
            if fmt not in FORMATS:
                self.d.unknown("E105", "format", fmt, FORMATS, self.at(t.span, rf"(?:\bformat|\|)\s*({_w(fmt)})\b"))
        if t.dtype_rule is not None:
            k = self.kind(t.dtype_rule)
            if k not in (None, B.DTYPE):
                self.d.error("E111", f"dtype rule of '{t.name}' must be a dtype, got {k}", t.dtype_rule.span)

    def check_attr(self, a: Attr) -> None:
        base = a.type[5:-1] if a.type.startswith("list<") and a.type.endswith(">") else a.type
        if base not in B.ATTR_TYPES:
            self.d.unknown("E113", "attribute type", base, B.ATTR_TYPES,
                           self.at(a.span, rf":\s*(?:list\s*<\s*)?({_w(base)})\b"))
            return
        kind = _attr_kind(a.type)
        default_span = self.at(a.span, _DEFAULT_RE)
        if a.default is not None and not _literal_fits(a.default, a.type):
            self.d.error("E107", f"default {_show(a.default)} of attribute '{a.name}' is not {_a(a.type)}",
                         default_span)
        if not a.optional and a.default is not None:
            self.d.error("E107", f"required attribute '{a.name}' cannot have a default; declare it `optional attr`",
                         default_span)
        if a.optional and a.default is None:
            self.d.error("E107", f"optional attribute '{a.name}' needs a default",
                         self.at(a.span, rf"\battr\s+({_w(a.name)})\b"), "add `= VALUE` after the type")
        if a.domain is not None:
            before = len(self.d.items)
            self.check_domain(a.name, kind, a.domain, a.span)
            if a.default is not None and not a.type.startswith("list") and len(self.d.items) == before \
                    and _literal_fits(a.default, a.type) and not _in_domain(a.default, a.domain):
                self.d.error("E107", f"default {_show(a.default)} of attribute '{a.name}' is not "
                                     f"{domain_text(a.domain)}", default_span)
        if a.length is not None:
            if a.type != "string":
                self.d.error("E108", f"`len` only applies to string attributes, '{a.name}' is {a.type}",
                             self.at(a.span, r"\b(len\s*[\[(][^\])]*[\])])"))
            self.check_range(a.name, B.INT, a.length, a.span)

    def check_domain(self, name: str, kind: str | None, dom: Domain, span) -> None:
        if kind is None:  # the attribute's type is unknown, which is reported already
            return
        if dom.range is not None:
            if kind in (B.STR, B.BOOL):
                self.d.error("E108", f"a range only applies to numeric attributes, '{name}' is "
                                     f"{_a('string' if kind == B.STR else 'bool')}",
                             self.at(span, r"\b(in\s*[\[(][^\])]*[\])])"))
                return
            self.check_range(name, kind, dom.range, span)
        for item in dom.items:
            if not isinstance(item, (Int, Float, Str, Bool)):
                self.d.error("E108", f"set items of '{name}' must be literals", item.span)
            elif _lit_kind(item) != kind and not (kind == B.FLOAT and isinstance(item, Int)):
                self.d.error("E108", f"set item {_show(item.value)} does not have the type of '{name}' ({kind})",
                             item.span)

    def check_range(self, name: str, kind: str, r: Range, span) -> None:
        vals = []
        for b in (r.lo, r.hi):
            v = const_value(b)
            if v is None or isinstance(v, (str, bool)):
                self.d.error("E108", f"range bounds of '{name}' must be numeric constants", b.span or span)
                return
            vals.append(v)
        if kind == B.INT and any(isinstance(v, float) for v in vals):
            self.d.error("E108", f"integer attribute '{name}' has a non-integer bound", span)
        if vals[0] > vals[1] or (vals[0] == vals[1] and not (r.lo_closed and r.hi_closed)):
            self.d.error("E108", f"empty range for '{name}': lower bound {vals[0]} is not below upper bound {vals[1]}",
                         r.lo.span or span)

    def check_shapes(self) -> None:
        for t in self.op.inputs + self.op.outputs:
            if t.shape is not None:
                self.check_shape(t.shape)
        for p in self.op.products:
            for _, sh in p.input_shapes + p.output_shapes:
                self.check_shape(sh)

    def check_shape(self, sh: Shape) -> None:
        for alt in sh.alts:
            for e in alt_exprs(alt):
                for n in walk(e):
                    if isinstance(n, Name) and n.id not in self.symbols() and n.id not in DTYPES:
                        self.d.unknown("E117", "shape dim", n.id, self.symbols(), n.span)
                self.kind(e, skip_names=True)

    def check_cycles(self) -> None:
        """Defs (which the lowerings inline) and product lets must not depend on themselves through others.

        Cycles of op lets alone and a def calling itself directly are reported where they are typed.
        """
        op = self.op
        reported: set[frozenset] = set()
        scopes: list[list[Let]] = [list(op.lets)]
        for p in op.products:
            chain = _chain(op, p)
            lets = {l.name: l for l in op.lets}
            for q in reversed(chain):
                lets.update((l.name, l) for l in q.lets)
            window = next((q.window for q in chain if q.window is not None), op.window)
            lets.update((l.name, l) for l in (window.lets if window is not None else ()))
            scopes.append(list(lets.values()))
        for lets in scopes:
            by_name: dict[str, Let] = {l.name: l for l in lets}

            def deps(node, params=()):
                e = node.expr if isinstance(node, Let) else node.body
                out = []
                for n in walk(e):
                    if isinstance(n, Name) and n.id in by_name and n.id not in params:
                        out.append(by_name[n.id])
                    elif isinstance(n, Call) and n.fn in self.defs:
                        out.append(self.defs[n.fn])
                return out

            graph = {node: deps(node, getattr(node, "params", ())) for node in list(lets) + list(op.defs)}
            for cycle in _cycles(graph):
                key = frozenset(cycle)
                only_op_lets = all(isinstance(n, Let) and n in op.lets for n in cycle)
                if key in reported or only_op_lets or (len(cycle) == 1 and isinstance(cycle[0], Def)):
                    continue
                reported.add(key)
                first = cycle[0]
                what = "def" if isinstance(first, Def) else "let"
                path = " -> ".join(n.name for n in cycle + [first])
                self.d.error("E112", f"{what} '{first.name}' depends on itself ({path})",
                             self.at(first.span, rf"\b{what}\s+({_w(first.name)})\b"))

    def check_lets(self, lets: Iterable[Let], scope: str) -> None:
        for l in lets:
            self.let_kind(l.name, l.expr, [])

    def let_kind(self, name: str, e: Expr, stack: list[str]) -> str | None:
        if name in stack:
            self.d.error("E112", f"let '{name}' depends on itself ({' -> '.join(stack + [name])})", e.span)
            self.let_kinds[name] = None
            return None
        if name not in self.let_kinds:
            stack.append(name)
            self.let_kinds[name] = self.kind(e, let_stack=stack)
            stack.pop()
        return self.let_kinds[name]

    # ---- constraints --------------------------------------------------------------
    def check_constraint(self, c: Constraint, extra_lets=()) -> None:
        for cond in c.conditions:
            self.expect_bool(cond)
        self.expect_bool(c.expr)
        blameable = [t.name for t in self.op.inputs + self.op.outputs] + [a.name for a in self.op.attrs] + \
            [l.name for l in self.op.lets] + [e.name for e in self.op.envs] + list(self.bound) + list(extra_lets)
        if c.param not in blameable:
            self.d.error("E119", f"check blames unknown parameter '{c.param}'",
                         self.at(c.span, rf"\belse\s+\w+\s+({_w(c.param)})\b"), _guess(c.param, blameable))
        if c.value is not None:
            self.kind(c.value)

    def check_buffer(self, b: Buffer) -> None:
        for cond in b.conditions:
            self.expect_bool(cond)
        if b.env not in [e.name for e in self.op.envs]:
            self.d.unknown("E102", "env", b.env, [e.name for e in self.op.envs],
                           self.at(b.span, rf"\b({_w(b.env)})\s*>="))
        k = self.kind(b.expr)
        if k not in (None, B.INT, B.FLOAT):
            self.d.error("E111", f"buffer requirement must be a number of bytes, got {k}", b.expr.span)

    def expect_bool(self, e: Expr) -> None:
        k = self.kind(e)
        if k not in (None, B.BOOL):
            self.d.error("E111", f"condition must be a boolean, got {k}", e.span)

    # ---- products -----------------------------------------------------------------
    def check_products(self) -> None:
        op = self.op
        socs = {p.soc for p in op.products}
        modes = {q.value for q in op.quant_modes}
        family = FAMILIES.get(op.semantics or "")
        # outputs something writes on some product: the family's driver and kernel, or a quant formula
        written_somewhere = family_writes(op) if family is not None else {t.name for t in op.outputs}
        written_somewhere |= assigned_by_formulas(op)
        for p in op.products:
            if not products.known(p.soc, lambda s: op.product(s).extends if op.product(s) is not None else None):
                self.d.unknown("E104", "product", p.soc, B.PRODUCTS, self.at(p.span, _PRODUCT_RE))
            if p.extends is not None and p.extends not in socs:
                self.d.unknown("E109", "base product", p.extends, socs, self.at(p.span, _EXTENDS_RE))
            for name, dom in p.attr_domains:
                a = op.attr(name)
                if a is None:
                    self.d.unknown("E118", "attribute", name, [x.name for x in op.attrs],
                                   self.at(p.span, rf"\battr\s+({_w(name)})\s+in\b"))
                else:
                    self.check_domain(name, _attr_kind(a.type), dom, p.span)
            for name in p.unsupported_attrs:
                where = self.at(p.span, rf"\battr\s+({_w(name)})\s+unsupported\b")
                if op.attr(name) is None:
                    self.d.unknown("E118", "attribute", name, [x.name for x in op.attrs], where)
                elif not op.attr(name).optional:
                    self.d.error("E118", f"required attribute '{name}' cannot be unsupported", where)
                elif op.attr(name).type.startswith("list"):
                    self.d.error("E118", f"list attribute '{name}' cannot be unsupported (the check that it keeps "
                                         f"its default needs a scalar)", where)
            for name in p.ignored_attrs:
                where = self.at(p.span, rf"\battr\s+({_w(name)})\s+ignored\b")
                if op.attr(name) is None:
                    self.d.unknown("E118", "attribute", name, [x.name for x in op.attrs], where)
                elif not op.attr(name).optional:
                    self.d.error("E118", f"attribute '{name}' is required, only optional attributes can be ignored "
                                         f"(an ignored attribute is read as its default)", where)
                elif name in p.unsupported_attrs:
                    self.d.error("E118", f"attribute '{name}' cannot be both unsupported (must keep its default) and "
                                         f"ignored (any value accepted, the default read)", where)
                elif any(n == name for n, _ in p.attr_domains):
                    self.d.error("E118", f"attribute '{name}' is ignored, so a domain for it is never checked",
                                 where)
            for name in p.empty_absent_inputs:
                if not any(x.name == name for x in op.inputs):
                    self.d.unknown("E118", "input", name, [x.name for x in op.inputs],
                                   self.at(p.span, rf"\binput\s+({_w(name)})\s+empty_absent\b"))
            for name in p.ignored_inputs:
                t = next((x for x in op.inputs if x.name == name), None)
                where = self.at(p.span, rf"\binput\s+({_w(name)})\s+ignored\b")
                if t is None:
                    self.d.unknown("E118", "input", name, [x.name for x in op.inputs], where)
                elif not t.optional:
                    self.d.error("E118", f"input '{name}' is required, only optional inputs can be ignored", where)
                elif name in p.unsupported_inputs:
                    self.d.error("E118", f"input '{name}' cannot be both unsupported (must be null) and ignored "
                                         f"(anything accepted, nothing read)", where)
            for name in p.unsupported_inputs:
                t = next((x for x in op.inputs if x.name == name), None)
                where = self.at(p.span, rf"\binput\s+({_w(name)})\s+unsupported\b")
                if t is None:
                    self.d.unknown("E118", "input", name, [x.name for x in op.inputs], where)
                elif not t.optional:
                    self.d.error("E118", f"input '{name}' is required, only optional inputs can be unsupported",
                                 where)
            for role, pairs in (("input", p.input_dtypes), ("output", p.output_dtypes)):
                pool = op.inputs if role == "input" else op.outputs
                for name, dts in pairs:
                    if not any(x.name == name for x in pool):
                        self.d.unknown("E118", role, name, [x.name for x in pool],
                                       self.at(p.span, rf"\b{role}\s+({_w(name)})\s*:"))
                    for dt in dts:
                        if dt not in DTYPES:
                            self.d.unknown("E103", "dtype", dt, DTYPES, self.at(p.span, rf"[:|]\s*({_w(dt)})\b"))
            for role, pairs in (("input", p.input_shapes), ("output", p.output_shapes)):
                pool = op.inputs if role == "input" else op.outputs
                for name, _ in pairs:
                    if not any(x.name == name for x in pool):
                        self.d.unknown("E118", role, name, [x.name for x in pool],
                                       self.at(p.span, rf"\b{role}\s+({_w(name)})\s+shape\b"))
            why = dict(p.unspecified_why)
            for name in p.unspecified_outputs:
                if op.tensor(name) is None or op.tensor(name).role != "output":
                    self.d.unknown("E118", "output", name, [x.name for x in op.outputs],
                                   self.at(p.span, rf"\boutput\s+({_w(name)})\s+unspecified\b"))
                elif not why.get(name) and name not in written_somewhere:
                    self.d.error("E127", f"output {name} is unspecified on product {p.soc} without a reason: "
                                 f"nothing writes it (semantics {op.semantics} does not, no quant formula "
                                 "assigns it)", self.at(p.span, rf"\boutput\s+({_w(name)})\s+unspecified\b"),
                                 f'say why it has no contents: `output {name} unspecified "...";` (shown in the docs)')
            for m in p.quant_modes or ():
                if m not in modes:
                    self.d.error("E110", f"product {p.soc} lists quant mode {m}, which the op does not declare",
                                 self.at(p.span, rf"\bquant_modes\b[^;]*?\b({m})\b"),
                                 f"declared modes: {', '.join(map(str, sorted(modes))) or 'none'}")
            for l in p.lets:
                self.kind(l.expr)
            for c in p.constraints:
                self.check_constraint(c, [l.name for l in p.lets])
            for b in p.buffers:
                self.check_buffer(b)
        # inheritance cycles
        parent = {p.soc: p.extends for p in op.products}
        cycles: set[frozenset[str]] = set()
        for p in op.products:
            seen, cur = [], p.soc
            while cur is not None and cur in parent:
                if cur in seen:
                    cycle = seen[seen.index(cur):]
                    if frozenset(cycle) not in cycles:  # report each cycle once, at its first product
                        cycles.add(frozenset(cycle))
                        first = next(x for x in op.products if x.soc in cycle)
                        path = cycle[cycle.index(first.soc):] + cycle[:cycle.index(first.soc)] + [first.soc]
                        self.d.error("E109", f"product inheritance cycle: {' -> '.join(path)}",
                                     self.at(first.span, _EXTENDS_RE))
                    break
                seen.append(cur)
                cur = parent[cur]

    def check_rank_step(self, w: Window) -> None:
        """``rank_step RANKS = bytes;``: RANKS an int64 attribute (the ranks of the domain, which the layout check
        counts to the last rank's data), the step whole bytes, on a window of HCCL groups (an MC2 context's holder
        addresses each rank's window with no step: code: mc2/common/op_kernel/mc2_moe_context.h)."""
        op = self.op
        at = self.at(w.span, r"\brank_step\s+(\w+)")
        attr = op.attr(w.rank_count or "")
        if attr is None or attr.type != "int64":
            self.d.unknown("E102", "int64 attribute", w.rank_count, [a.name for a in op.attrs if a.type == "int64"], at)
        k = self.kind(w.rank_step)
        if k not in (None, B.INT, B.ANY):
            self.d.error("E111", f"window rank_step must be a whole number of bytes, got {k}", w.rank_step.span)
        if w.size is not None and not w.size_env:
            self.d.error("E126", f"window {w.domain} is sized by attributes (an MC2 context's): its holder addresses "
                                 "each rank's window with no step, so `rank_step` cannot apply", at)

    def check_windows(self) -> None:
        """Each window's names and its areas' bytes (which areas a kernel needs is the kernel lowering's rule)."""
        op = self.op
        domains = [g.domain for g in op.comm_groups]
        for w in _windows(op):
            if w.domain not in domains:
                self.d.unknown("E126", "comm domain", w.domain, domains,
                               self.at(w.span, rf"\bwindow\s+({_w(w.domain)})"))
            if w.size is not None and w.size_env:  # bytes from one env (in bytes) and constants
                for n in walk(w.size):
                    if isinstance(n, Name) and n.id not in B.CONSTANTS and n.id != w.env:
                        self.d.error("E126", f"window {w.domain}: its size reads env {w.env} and {n.id}; an "
                                     f"expression of an env reads that env alone (in bytes) and constants, "
                                     f"`window {w.domain}: {w.env} // 2 {{`", n.span)
                if self.kind(w.size) not in (None, B.INT):
                    self.d.error("E111", f"window {w.domain} size must be a whole number of bytes, got "
                                 f"{self.kind(w.size)}", w.size.span)
            elif w.size is not None:  # bytes from attributes: int64 attributes and constants only
                reads = [n for n in walk(w.size) if isinstance(n, Name) and n.id not in B.CONSTANTS]
                for n in reads:
                    if op.attr(n.id) is None:
                        self.d.unknown("E102", "attribute", n.id, [a.name for a in op.attrs if a.type == "int64"],
                                       n.span)
                k = self.kind(w.size) if all(op.attr(n.id) is not None for n in reads) else None
                if not w.env:
                    self.d.error("E126", f"window {w.domain}: its size reads no attribute (a window sized by an env "
                                 "names the env alone: `window DOMAIN: ENV {`)", w.size.span)
                elif k not in (None, B.INT):
                    self.d.error("E111", f"window {w.domain} size must be a whole number of bytes, got {k}",
                                 w.size.span)
            elif w.env not in [e.name for e in op.envs]:
                self.d.unknown("E102", "env", w.env, [e.name for e in op.envs],
                               self.at(w.span, rf":\s*({_w(w.env)})\b"))
            for l in w.lets:
                self.kind(l.expr)
            if w.rank_step is not None:
                self.check_rank_step(w)
            for what, e in [(f"area {a.name}", a.expr) for a in w.areas] + [("state", w.state)]:
                k = self.kind(e)
                if k not in (None, B.INT, B.ANY):  # any: a product's or window's let, typed with its view
                    self.d.error("E111", f"window {what} must be a whole number of bytes, got {k}", e.span)
        family = FAMILIES.get(op.semantics or "")
        for w in _windows(op):  # the family's kernel must know where to find the status area
            if family is not None and w.state_in not in family.status_places:
                self.d.error("E126", f"the {family.name} kernel keeps no status area in {w.state_in} (it can: "
                             f"{', '.join(family.status_places)}; opgen/families/{family.name}/facts.py status_places)",
                             self.at(w.span, rf"\bstate\s+({_w(w.state_in)})\b"))
        for p in op.products:  # the status area's window must be one the product's HCCL context lists
            chain = _chain(op, p)
            w = next((q.window for q in chain if q.window is not None), op.window)
            if w is None or w.state_in == WINDOW_PLACES[0]:
                continue
            try:
                facts = products.facts_for(q.soc for q in chain)
            except KeyError:  # no table row up the chain: reported as E104
                continue
            # windowsExp: the context must list one; windowsOut: the kernels must read the context's window lists
            exp = w.state_in == WINDOW_PLACES[1]
            if not (facts.exp_window if exp else facts.context_windows):
                why = ("has no windowsExp: its HCCL context lists none (ProductFacts.exp_window)" if exp else
                       "has kernels that do not read windowsOut[] from its HCCL context (ProductFacts.context_windows)")
                self.d.error("E126", f"product {p.soc} ({facts.display}) {why}; keep its status area in windowsIn",
                             self.at(w.span, rf"\bstate\s+({w.state_in})\b"))

    def check_tolerances(self) -> None:
        outputs = {t.name for t in self.op.outputs}
        for tol in self.op.tolerances + tuple(t for p in self.op.products for t in p.tolerances):
            if tol.output not in outputs:
                self.d.unknown("E118", "output", tol.output, outputs, tol.span)
            for dt in tol.dtypes:
                if dt not in DTYPES:
                    self.d.unknown("E103", "dtype", dt, DTYPES, tol.span)
            if tol.rtol < 0 or tol.atol < 0:
                self.d.error("E108", f"tolerance of '{tol.output}' must not be negative", tol.span)

    def check_aclnn(self) -> None:
        op = self.op
        names = [p.name for p in op.params]
        stems: dict[str, str] = {}
        omitted_ok = self.omitted_forms()
        for entry in op.aclnn:
            if not _ACLNN_NAME.match(entry.name):
                self.d.error("E125", f"aclnn entry point '{entry.name}' is not `aclnn` followed by UpperCamelCase",
                             entry.span)
            elif entry.stem in stems:
                self.d.error("E125", f"aclnn entry point '{entry.name}' is declared twice" if stems[entry.stem] ==
                             entry.name else f"aclnn entry points '{stems[entry.stem]}' and '{entry.name}' would "
                             f"share the op_api files aclnn_{entry.stem}.h/.cpp", entry.span)
            else:
                stems[entry.stem] = entry.name
            seen: set[str] = set()
            c_names = [p.c_name for p in entry.params]
            for p in entry.params:
                decl = op.param(p.name)
                if p.alias is not None and (c_names.count(p.alias) > 1 or p.alias in names and p.alias != p.name):
                    self.d.error("E125", f"{entry.name}: the C name '{p.alias}' of {p.name} is another parameter's",
                                 p.span)
                if p.type is not None:  # a parameter of this entry point only
                    if decl is not None:
                        self.d.error("E125", f"{entry.name}: '{p.name}' is a parameter of {op.name}; write it "
                                             f"without a type", p.span)
                    elif p.type not in B.ATTR_TYPES:
                        self.d.unknown("E113", "parameter type", p.type, B.ATTR_TYPES, p.span)
                    if p.name in seen:
                        self.d.error("E125", f"{entry.name} takes '{p.name}' twice", p.span)
                    seen.add(p.name)
                    continue
                if decl is None:
                    self.d.error("E125", f"{entry.name} takes '{p.name}', which is no parameter of {op.name}",
                                 p.span, _guess(p.name, names))
                    continue
                if p.name in seen:
                    self.d.error("E125", f"{entry.name} takes '{p.name}' twice", p.span)
                seen.add(p.name)
                if not p.const and not (isinstance(decl, Tensor) and decl.role == "input" or
                                        isinstance(decl, Attr) and decl.type == "string"):
                    self.d.error("E125", f"`nonconst` {p.name}: only an input tensor or a string attribute is passed "
                                         f"as a const pointer", p.span)
            if entry.sizes:
                self.check_sizes(entry, seen)
            for a in op.attrs:
                if a.name in omitted_ok and a.name not in seen:
                    self.check_omitted(entry, a, seen)
            for decl in op.params:
                if entry.sizes and isinstance(decl, Tensor) and decl.role == "output":
                    continue  # a size function sizes the outputs: it takes none
                if decl.name not in seen and not getattr(decl, "optional", False):
                    what = "output" if isinstance(decl, Tensor) and decl.role == "output" else \
                        f"required {'input' if isinstance(decl, Tensor) else 'attribute'}"
                    self.d.error("E125", f"{entry.name} leaves out the {what} '{decl.name}', which has no default",
                                 entry.span, f"add {decl.name} to its parameters, or make it optional with a default")

    def omitted_forms(self) -> set[str]:
        """`omitted = dtype(t)` is the one form (an int64 attribute taking a tensor's ge::DataType value, as the
        real op_api passes y_dtype); the names of the attributes that have it well formed."""
        ok = set()
        for a in self.op.attrs:
            e = a.omitted
            if e is None:
                continue
            if isinstance(e, Call) and e.fn == "dtype" and len(e.args) == 1 and isinstance(e.args[0], Name) \
                    and isinstance(self.op.param(e.args[0].id), Tensor) and a.type == "int64":
                ok.add(a.name)
            else:
                self.d.error("E125", f"attribute '{a.name}': `omitted =` takes dtype(<tensor>) for an int64 "
                                     f"attribute (the ge::DataType value the op_api passes)", self._omitted_at(a))
        return ok

    def _omitted_at(self, a: Attr):
        return self.at(a.span, r"\bomitted\s*=\s*(\S[^;]*?)\s*(?:doc\b|;|$)")

    def check_omitted(self, entry: AclnnEntry, a: Attr, taken: set[str]) -> None:
        """An entry point that leaves the attribute out passes the dtype of a tensor it takes (a size function
        takes no outputs, so it passes the default for an output's dtype)."""
        t = self.op.param(a.omitted.args[0].id)
        if t.name not in taken and not (entry.sizes and t.role == "output"):
            self.d.error("E125", f"{entry.name} leaves out '{a.name}', whose `omitted = {to_spec(a.omitted)}` "
                                 f"reads '{t.name}', a tensor {entry.name} does not take", self._omitted_at(a))

    def check_sizes(self, entry: AclnnEntry, taken: set[str]) -> None:
        """Each size is an int64 expression of what the size function takes: its parameters, the dims its
        input tensors bind, lets of those (product lets are typed with their views), constants."""
        op = self.op
        names: dict[str, None] = {}
        for z in entry.sizes:
            if z.name in names:
                self.d.error("E125", f"{entry.name} returns '{z.name}' twice", z.span)
            names[z.name] = None
            kind = self.kind(z.expr)
            if kind not in (None, B.INT, B.ANY):
                self.d.error("E125", f"size {z.name} of {entry.name} must be an int64, got {kind}", z.expr.span)
            for name in sorted(self._reads(z.expr)):
                if name not in taken and op.param(name) is not None and not getattr(op.param(name), "optional", False):
                    self.d.error("E125", f"size {z.name} of {entry.name} reads '{name}', which {entry.name} "
                                         f"does not take", z.expr.span)

    def _reads(self, e: Expr) -> set[str]:
        """The op parameters an expression reads, following lets (op and product) and bound dims."""
        op = self.op
        lets: dict[str, list[Expr]] = {}
        for l in list(op.lets) + [l for p in op.products for l in p.lets] + [l for w in _windows(op) for l in w.lets]:
            lets.setdefault(l.name, []).append(l.expr)
        defs = {d.name: d.body for d in op.defs}
        out: set[str] = set()
        seen: set[str] = set()
        todo = [e]
        while todo:
            for n in walk(todo.pop()):
                if isinstance(n, Call) and n.fn in defs and n.fn not in seen:
                    seen.add(n.fn)
                    todo.append(defs[n.fn])
                if not isinstance(n, Name):
                    continue
                if op.param(n.id) is not None:
                    out.add(n.id)
                elif n.id in self.bound:
                    out.add(self.bound[n.id][0])
                elif n.id in lets and n.id not in seen:
                    seen.add(n.id)
                    todo += lets[n.id]
        return out

    def check_tiling_key(self) -> None:
        seen: set[str] = set()
        for name, e in self.op.tiling_key:
            if name in seen:
                self.d.error("E101", f"tiling key field '{name}' is declared twice", e.span)
            seen.add(name)
            k = self.kind(e)
            if k not in (None, B.INT, B.ANY):
                self.d.error("E111", f"tiling key field '{name}' must be an integer digit, got {k}", e.span)
        if len(self.op.tiling_key) > 9:
            self.d.error("E111", "a tiling key has at most 9 fields (one decimal digit each)", self.op.span)

    # ---- quant modes --------------------------------------------------------------
    def check_quant(self) -> None:
        outputs = {t.name for t in self.op.outputs}
        qb = self.op.quant_by
        if self.op.quant_modes and qb is None:
            self.d.error("E110", "quant modes are declared but no `quant_by ATTR;` says which attribute selects them",
                         self.at(self.op.quant_modes[0].span, r"(quant\s+\d+\s+\w+)"))
        if qb is not None and (self.op.attr(qb) is None or self.op.attr(qb).type != "int64"):
            self.d.error("E110", f"`quant_by` must name an int64 attribute, got '{qb}'",
                         self.at(self.op.span, rf"\bquant_by\s+({_w(qb)})\b"),
                         _guess(qb, [a.name for a in self.op.attrs if a.type == "int64"]))
        for q in self.op.quant_modes:
            if q.value < 0:
                self.d.error("E110", f"quant mode {q.value} must be non-negative", q.span)
            for s in self.typed_assignments(q.body):
                if s.name not in outputs:
                    self.d.error("E110", f"quant mode {q.value} assigns '{s.name}', which is not an output",
                                 self.at(s.span, rf"({_w(s.name)})\b"), _guess(s.name, outputs))
            if q.send is not None:
                self.check_send(q)
        self.check_specials()
        self.check_post(outputs)

    def check_send(self, q: QuantMode) -> None:
        """``send a, b;`` (E131): the family runs a quant formula's rest on the receiving rank, the sent names are
        lets of the sender's part, no output is assigned before the split, and the receiver's part reads no value
        of the sending rank (a tensor, a let) but the sent ones; a tensor's dtype is known on both ranks."""
        family = FAMILIES.get(self.op.semantics or "")
        where = self.at(q.send.span, r"\b(send)\b")
        if family is None or not family.quant_send:
            self.d.error("E131", f"semantics {self.op.semantics} does not split a quant formula between ranks; "
                         f"`send` belongs to {', '.join(f.name for f in FAMILIES.values() if f.quant_send) or 'no family'}",
                         where)
            return
        sender, receiver = q.sender, q.receiver
        lets = {st.name for st in sender if st.kind == "let"}
        for n in dict.fromkeys(q.send.names):
            if n not in lets:
                self.d.error("E131", f"quant mode {q.value} sends '{n}', which is not a let before the `send`",
                             self.at(q.send.span, rf"\b({_w(n)})\b"), _guess(n, sorted(lets)))
        if len(set(q.send.names)) != len(q.send.names):
            self.d.error("E131", f"quant mode {q.value} sends a value twice", where)
        for st in sender:
            if st.kind == "assign":
                self.d.error("E131", f"quant mode {q.value} assigns {st.name} before its `send`; the outputs are "
                             "the receiving rank's", self.at(st.span, rf"({_w(st.name)})\b"))
        if not any(st.kind == "assign" for st in receiver):
            self.d.error("E131", f"quant mode {q.value} assigns nothing after its `send`: the receiving rank has no "
                         "row to add", where)
        tensors = {t.name for t in self.op.inputs + self.op.outputs}
        sent = set(q.send.names)
        for st in receiver:
            for e in (*st.conditions, st.expr):
                for n in _value_names(e):
                    if (n in tensors and n not in sent) or (n in lets and n not in sent):
                        what = "tensor" if n in tensors else "let"
                        self.d.error("E131", f"quant mode {q.value} reads the {what} {n} after its `send`; the "
                                     f"receiving rank has only the sent values ({', '.join(q.send.names)})",
                                     self.at(st.span, rf"\b({_w(n)})\b"))

    def typed_assignments(self, body, given=()) -> list:
        """Type a formula body (each let in scope after its statement, ``given`` rows in scope from the start);
        its assignments, in order."""
        locals_: set[str] = set(given)
        assigns = []
        for s in body:
            for cond in s.conditions:
                self.kind(cond, scope=("quant", locals_))
            self.kind(s.expr, scope=("quant", locals_))
            if s.kind == "let":
                locals_.add(s.name)
            else:
                assigns.append(s)
        return assigns

    def check_specials(self) -> None:
        """``special NAME: COUNT "doc" { Moe = ...; }``: COUNT an int64 attribute, the body assigns Moe once and
        only Moe, outside any `when` (E129); its expressions are typed as a quant formula's. A family that
        computes special experts needs the formula; one that only leaves their ids unsent takes none."""
        seen: set[str] = set()
        ints = [a.name for a in self.op.attrs if a.type == "int64"]
        family = FAMILIES.get(self.op.semantics or "")
        handling = family.special_experts if family is not None else None
        if self.op.specials and handling is None:
            self.d.error("E129", f"semantics {self.op.semantics} has no special experts; only "
                         f"{', '.join(f.name for f in FAMILIES.values() if f.special_experts)} do",
                         self.op.specials[0].span)
        for sp in self.op.specials:
            if handling == SPECIALS_COMPUTED and sp.body is None:
                self.d.error("E129", f"special expert {sp.name} has no formula; semantics {self.op.semantics} "
                             f"computes each special expert's value: write `{{ {SpecialExpert.TARGET} = ...; }}`",
                             sp.span)
            elif handling == SPECIALS_UNSENT and sp.body is not None:
                self.d.error("E129", f"special expert {sp.name} has a formula, but semantics {self.op.semantics} "
                             "computes nothing for special experts (it only sends no row to their ids): declare "
                             f"`special {sp.name}: {sp.count} \"...\";` without a body", sp.span)
            if sp.name in seen:
                self.d.error("E129", f"special expert '{sp.name}' is declared twice", sp.span)
            seen.add(sp.name)
            a = self.op.attr(sp.count)
            if a is None or a.type != "int64":
                self.d.error("E129", f"special expert {sp.name} counts its experts with '{sp.count}', which is not "
                             "an int64 attribute", self.at(sp.span, rf":\s*({_w(sp.count)})\b"), _guess(sp.count, ints))
            if sp.body is None:
                continue
            assigns, wrong = 0, False
            for s in self.typed_assignments(sp.body):
                if s.name != SpecialExpert.TARGET:
                    wrong = True
                    self.d.error("E129", f"special expert {sp.name} assigns '{s.name}'; its formula assigns only "
                                 f"{SpecialExpert.TARGET}", self.at(s.span, rf"({_w(s.name)})\b"))
                elif s.conditions:
                    self.d.error("E129", f"special expert {sp.name} assigns {SpecialExpert.TARGET} under `when`; "
                                 "it has one value for every token", s.span)
                else:
                    assigns += 1
            if assigns != 1 and not (wrong and assigns == 0):
                self.d.error("E129", f"special expert {sp.name} must assign {SpecialExpert.TARGET} exactly once "
                             f"(it does {assigns} times)", sp.span)

    def check_post(self, outputs) -> None:
        """``post NAME "doc" { OUT = ...; }`` (E130): the family reduces, NAME is a fresh name, each assignment is
        an output, once, outside `when`."""
        post = self.op.post
        if post is None:
            return
        family = FAMILIES.get(self.op.semantics or "")
        if family is None or family.reduced is None:
            self.d.error("E130", f"semantics {self.op.semantics} has no reduction to follow; a `post` stage belongs "
                         f"to {', '.join(f.name for f in FAMILIES.values() if f.reduced) or 'no family'}",
                         self.at(post.span, r"\b(post)\b"))
        if post.name in self.typer.names.symbols():
            self.d.error("E130", f"the reduced row's name '{post.name}' is already declared", 
                         self.at(post.span, rf"post\s+({_w(post.name)})\b"))
        seen: set[str] = set()
        for s in self.typed_assignments(post.body, given=(post.name,)):
            where = self.at(s.span, rf"({_w(s.name)})\b")
            if s.name == post.name:
                self.d.error("E130", f"the post stage assigns its reduced row '{s.name}'; it assigns outputs", where)
            elif s.name not in outputs:
                self.d.error("E130", f"the post stage assigns '{s.name}', which is not an output", where,
                             _guess(s.name, outputs))
            elif s.name in seen:
                self.d.error("E130", f"the post stage assigns {s.name} twice", where)
            elif s.conditions:
                self.d.error("E130", f"the post stage assigns {s.name} under `when`; every token row gets one value",
                             s.span)
            seen.add(s.name)

    # ---- typing: the rules are opgen.model.kinds.Typer's; names resolve against the unvalidated op -------------
    def kind(self, e: Expr, scope=("scalar", frozenset()), let_stack=None, skip_names=False) -> str | None:
        return self.typer.kind(e, scope, let_stack, skip_names)

    def let_kind_of(self, name: str, let_stack):
        """Names.let_kind for the typer: an op let is typed here (cycles reported); a product's let is
        typed with its product view, so here it is ``any``."""
        let = next((l for l in self.op.lets if l.name == name), None)
        if let is not None:
            return self.let_kind(name, let.expr, let_stack if let_stack is not None else [])
        if any(l.name == name for p in self.op.products for l in p.lets) or \
                any(l.name == name for w in _windows(self.op) for l in window_lets(w, w.size or Name(w.env))):
            return B.ANY  # a window's lets and layout fields too: typed with the view that has the window
        return MISSING


class _OpNames:
    """The checker as the typer's ``Names`` (opgen.model.kinds)."""

    def __init__(self, checker: "_Checker"):
        self.op = checker.op
        self.defs = checker.defs
        self._checker = checker

    @property
    def bound(self):
        return self._checker.bound

    def let_kind(self, name, let_stack):
        return self._checker.let_kind_of(name, let_stack)

    def symbols(self):
        return self._checker.symbols()


class _Report:
    """Type errors of the checker are diagnostics, narrowed to their word in the source."""

    def __init__(self, checker: "_Checker"):
        self.error = checker.d.error
        self.unknown = checker.d.unknown
        self.at = checker.at


# ---------------------------------------------------------------------------------------------

def _cycles(graph: dict) -> list[list]:
    """The cycles a depth-first search meets in ``graph`` (node -> successors), each once, in meeting order."""
    state: dict = {}
    stack: list = []
    found: list[list] = []

    def visit(node) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node)
    return found


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _w(word: str) -> str:
    return re.escape(word)


_PRODUCT_RE = r"\bproduct\s+(\w+)"


def _chain(op: Op, p: Product) -> list[Product]:
    """The product, then the products it extends (up to a cycle, which check_products reports)."""
    chain, cur = [], p
    while cur is not None and cur not in chain:
        chain.append(cur)
        cur = op.product(cur.extends) if cur.extends else None
    return chain


_EXTENDS_RE = r"\bextends\s+(\w+)"
_DEFAULT_RE = r'(=\s*(?:"(?:[^"\\\n]|\\.)*"|\[[^\]]*\]|[^\s;]+))'


def _lit_kind(e: Expr) -> str:
    return {Int: B.INT, Float: B.FLOAT, Str: B.STR, Bool: B.BOOL}[type(e)]


def _literal_fits(v, typ: str) -> bool:
    if typ.startswith("list<"):
        return isinstance(v, tuple) and all(_literal_fits(x, typ[5:-1]) for x in v)
    if typ == "int64":
        return isinstance(v, int) and not isinstance(v, bool)
    if typ == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if typ == "bool":
        return isinstance(v, bool)
    if typ == "string":
        return isinstance(v, str)
    return False


def _show(v) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_show(x) for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def const_value(e: Expr):
    """Value of a constant expression (literals, builtin constants, arithmetic), else None."""
    if isinstance(e, (Int, Float, Str, Bool)):
        return e.value
    if isinstance(e, Name) and e.id in B.CONSTANTS:
        return B.CONSTANTS[e.id]
    if isinstance(e, Unary) and e.op == "-":
        v = const_value(e.operand)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(e, Binary) and e.op in ("+", "-", "*", "//", "**"):
        l, r = const_value(e.lhs), const_value(e.rhs)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (l, r)):
            return None
        if e.op == "//" and r == 0:
            return None
        return {"+": l + r, "-": l - r, "*": l * r, "//": l // r if r else None, "**": l ** r if 0 <= r < 64 else None}[e.op]
    return None


def _in_domain(v, dom: Domain) -> bool:
    if dom.range is not None:
        lo, hi = const_value(dom.range.lo), const_value(dom.range.hi)
        if lo is None or hi is None or isinstance(v, (str, bool)):
            return True
        ok_lo = v >= lo if dom.range.lo_closed else v > lo
        ok_hi = v <= hi if dom.range.hi_closed else v < hi
        return ok_lo and ok_hi
    return any(const_value(i) == v and type(const_value(i)) is type(v) or
               (isinstance(v, float) and const_value(i) == v) for i in dom.items)


def analyze(tree: Tree, file: str, source: str, diags: Diagnostics) -> Op | None:
    return Analyzer(file, diags).run(tree, source)
