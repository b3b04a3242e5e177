"""An op in its family's role names: what the family's kernel template is written against.

A spec may name some of its family's parameters differently (``role ROLE = PARAM;``, opgen/model/decl.py
RoleBinding).  The kernel is generated from the op with those parameters renamed to their roles, in every
declaration and every expression (checks, lets, formulas, shapes, windows), so that the template reads one set of
names whatever the op calls them.  What the outside sees keeps the op's names: the IR names (the OpDef, hence
CANN's ``ORIG_DTYPE_<IR>`` macros), the aclnn entry points, the docs.  The tiling data names those fields by
role on both sides (opgen/emit/tiling_layout.py ``tiling_fields``), as it is private to the host tiling and the
kernel.  The front end guarantees a role's name is no other parameter's (E132), so the renaming is one-to-one.
"""
from __future__ import annotations

import dataclasses

from opgen.core.diagnostics import did_you_mean
from opgen.core.families import FAMILIES
from opgen.lang.expr import Name, Str
from opgen.model.decl import Op
from opgen.model.resolve import attach_views

# fields that hold text or identities, never a reference to a parameter
_KEEP = frozenset({"doc", "ir_name", "source", "span", "text", "message", "display", "soc"})


def _rename(value, names: dict[str, str]):
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Str):  # a string literal is a value, not a reference
        return value
    if isinstance(value, Name):
        return dataclasses.replace(value, id=names.get(value.id, value.id))
    if isinstance(value, tuple):
        return tuple(_rename(v, names) for v in value)
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {_rename(k, names): _rename(v, names) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _rename(getattr(value, f.name), names) for f in dataclasses.fields(value)
                   if f.init and f.name not in _KEEP}
        return dataclasses.replace(value, **changes)
    return value


def in_role_names(op: Op) -> Op:
    """``op`` with every parameter it binds to a role under the role's name (``op`` itself when it binds none),
    its product views resolved again."""
    if not op.roles:
        return op
    cached = op.__dict__.get("_in_role_names")  # derived data, kept beside the fields as Op.views is
    if cached is None:
        names = {r.name: r.role for r in op.roles}
        cached = op.__dict__["_in_role_names"] = attach_views(_rename(dataclasses.replace(op, roles=()), names))
    return cached


def missing_roles(op: Op) -> list[tuple[str, str]]:
    """(message, help) per parameter kind of which the op lacks roles its family reads unconditionally
    (``Family.expected_roles``: neither declared under the role's name nor bound), naming the roles of that kind
    the family expects and the op's parameter of that kind whose name is near."""
    family = FAMILIES.get(op.semantics or "")
    if family is None:
        return []
    kinds = family.role_kinds
    declared = {t.name: t.role for t in op.inputs + op.outputs} | {a.name: "attr" for a in op.attrs}
    have = set(declared) | {r.role for r in op.roles}
    out = []
    for kind in ("input", "output", "attr"):
        lacks = [r for r, k in family.expected_roles if k == kind and r not in have]
        if not lacks:
            continue
        expected = ", ".join(r for r, k in family.expected_roles if k == kind)
        free = [n for n, k in declared.items() if k == kind and n not in kinds]
        near = {r: g for r in lacks if (g := did_you_mean(r, free)) is not None}
        binds = " ".join(f"`role {r} = {g};`" for r, g in near.items())
        out.append((f"semantics {family.name} reads {kind}{'s' if len(lacks) > 1 else ''} {', '.join(lacks)}, "
                    f"which op {op.name} neither declares nor binds; the {kind}s it expects: {expected}",
                    f"did you mean {', '.join(repr(g) for g in near.values())}? bind: {binds}" if near else
                    f"declare the {kind}, or bind the op's {kind} of that meaning: `role ROLE = PARAM;` "
                    f"(`opgen explain roles` lists every family's)"))
    return out
