"""The environment variables a check reads, directly or through the lets of its product view.

Tiling cannot always read an env: HCCL_BUFFSIZE comes from the comm domain, which online compilation and super
kernels do not have.  The real MoE tilings then skip the checks that need it (code: mc2/moe_distribute_dispatch_v2/
op_host/op_tiling/arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp MoeDistributeDispatchA2CheckWinSize: "Can't
get HCCL_BUFFSIZE and skip validation."), so both validators skip exactly the checks this names.
"""
from __future__ import annotations

from opgen.lang.expr import Name, walk
from opgen.model.decl import Check, ProductView
from opgen.model.inline import inline


def check_envs(c: Check, view: ProductView) -> tuple[str, ...]:
    """The envs ``c`` reads on ``view`` (its rule and its conditions, through lets), in declaration order."""
    envs = [e.name for e in view.op.envs]
    lets = {l.name: l.expr for l in view.lets}
    seen: set[str] = set()
    todo = [inline(view.op, e) for e in (c.expr, *c.conditions)]
    while todo:
        for node in walk(todo.pop()):
            if isinstance(node, Name) and node.id not in seen:
                seen.add(node.id)
                if node.id in lets:
                    todo.append(inline(view.op, lets[node.id]))
    return tuple(e for e in envs if e in seen)
