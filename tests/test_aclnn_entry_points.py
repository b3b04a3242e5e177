"""The generated op_api headers declare every aclnn entry point of the current CANN documents, exactly.

The documents are `specs/sources/current/` (copies of `../shared/cann/docs/current/`, the release the specs
track); each one's 函数原型 gives the C prototypes of its entry point. For every op opgen ships, every prototype
there must be declared by a generated header with the same parameter types, names and order (`const` included),
and the headers declare nothing the documents do not.
"""
import re
from pathlib import Path

import pytest

from opgen.core.diagnostics import Diagnostics
from opgen.emit.host import emit_host_aclnn
from opgen.frontend.loader import load

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "specs" / "sources" / "current"
SHARED_DOCS = ROOT.parent / "shared" / "cann" / "docs" / "current"
SPECS = sorted((ROOT / "specs").glob("*.spec"))
# Documents of ops opgen does not ship (none: every copied aclnn document is a spec's entry point).
NOT_SHIPPED: set[str] = set()
_PROTOTYPE = re.compile(r"aclnnStatus\s+(aclnn\w+)\s*\((.*?)\)", re.S)


def _params(text: str) -> tuple[tuple[str, ...], ...]:
    """A C parameter list as token tuples: spacing around `*` / `&` does not matter, everything else does."""
    return tuple(tuple(re.findall(r"[A-Za-z_]\w*|\*|&", p)) for p in text.split(",") if p.strip())


def documented() -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for doc in sorted(DOCS.glob("aclnn*.md")):
        if doc.name in NOT_SHIPPED:
            continue
        for block in re.findall(r"```cpp\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            for m in _PROTOTYPE.finditer(block):
                if "{" not in block[m.end():m.end() + 3]:  # a prototype, not a call in the sample code
                    out.setdefault(m.group(1), (doc.name, _params(m.group(2))))
    return out


def generated() -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for spec in SPECS:
        op = load(spec, Diagnostics())
        for art in emit_host_aclnn(op):
            if art.path.endswith(".h"):
                for m in re.finditer(r"ACLNN_API\s+aclnnStatus\s+(aclnn\w+)\s*\((.*?)\);", art.content, re.S):
                    out[m.group(1)] = (f"{spec.name}: {art.path}", _params(m.group(2)))
    return out


DOCUMENTED = documented()
GENERATED = generated()


def test_the_documents_were_read():
    # 7 shipped ops: DispatchV2 and CombineV2 with V2/V3/V4, CombineAddRmsNorm with V1/V2, Setup/Teardown once
    # each, two of them with a CalcOutputSize function; each two-stage entry point has two prototypes.
    assert len(DOCUMENTED) == 2 * (3 + 3 + 2 + 4) + 2, sorted(DOCUMENTED)


@pytest.mark.parametrize("fn", sorted(DOCUMENTED))
def test_every_documented_prototype_is_generated_exactly(fn):
    doc, want = DOCUMENTED[fn]
    assert fn in GENERATED, f"{doc} declares {fn}, which no generated header declares"
    where, got = GENERATED[fn]
    assert got == want, f"{where} declares {fn} differently from {doc}"


# Entry points of ops the current documents do not cover yet, declared from the real op_api instead
# (tests/test_v3_pair.py compares them with it).
FROM_CODE = {"aclnnMoeDistributeDispatchV5": "mc2/moe_distribute_dispatch_v3/op_api/aclnn_moe_distribute_dispatch_v5.cpp",
             "aclnnMoeDistributeCombineV5": "mc2/moe_distribute_combine_v3/op_api/aclnn_moe_distribute_combine_v5.cpp"}


def test_no_undocumented_entry_point_is_generated():
    from_code = {n for e in FROM_CODE for n in (e, f"{e}GetWorkspaceSize")}  # both stages
    assert set(GENERATED) - from_code <= set(DOCUMENTED), sorted(set(GENERATED) - set(DOCUMENTED))
    assert not set(FROM_CODE) & set(DOCUMENTED), "documented now: compare with the document, drop from FROM_CODE"


def test_the_params_reading_is_exact():
    # const, pointer depth and reference all count
    assert _params("const aclTensor* x, char *commAlg") == (("const", "aclTensor", "*", "x"), ("char", "*", "commAlg"))
    assert _params("const aclTensor *x") == _params("const aclTensor* x")
    assert _params("aclTensor *x") != _params("const aclTensor *x")
    assert _params("uint64_t &n") != _params("uint64_t *n")


@pytest.mark.skipif(not SHARED_DOCS.is_dir(), reason=f"{SHARED_DOCS} is not beside the clone (CI has it)")
def test_the_copies_are_the_current_documents():
    shared = {p.name: p.read_bytes() for p in SHARED_DOCS.glob("*.md")}
    copies = {p.name: p.read_bytes() for p in DOCS.glob("*.md")}
    assert copies == shared
