"""examples/test_aclnn_<op>.cpp: the generated call of each op's newest aclnn entry point (issue 34).

Each example is compiled with ``g++ -fsyntax-only`` (``../shared/cann/tools/cann_syntax_check.sh``, kind aclnn)
against the real public CANN headers and the op's generated op_api headers, laid out as a CANN install has them
(the example includes them as the real examples do): ``aclnnop/aclnn_<entry>.h`` is the generated op_api header,
``hccl/hccl.h`` the HCCL host API (vendored in asc-devkit), ``aclnn/opdev`` opbase's ``opdev``.  A copy whose call
passes one argument too few must fail the same compile: the check sees the entry point's prototype.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from opgen.emit.examples import newest_entry
from .conftest import ROOT, SPECS, load_ok
from .real_cann import MISSING, SHARED_CANN
from .test_cann_real import cann, syntax_check  # noqa: F401 - the session fixture of the unpacked headers

GENERATED = ROOT / "generated"
OPS = {op.snake_name: op for op in map(load_ok, SPECS)}

needs_cann = [pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
              pytest.mark.skipif(shutil.which("g++") is None, reason="the compile checks need g++")]


def _example(snake: str) -> Path:
    return GENERATED / snake / "examples" / f"test_aclnn_{snake}.cpp"


@pytest.mark.parametrize("snake", sorted(OPS))
def test_every_op_has_an_example_calling_its_newest_entry(snake):
    op, text = OPS[snake], _example(snake).read_text(encoding="utf-8")
    entry = newest_entry(op)
    assert f'#include "aclnnop/aclnn_{entry.stem}.h"' in text
    assert re.search(rf"\b{entry.name}GetWorkspaceSize\(", text) and re.search(rf"\b{entry.name}\(", text)
    for step in ("aclInit(", "HcclCommInitAll(", "std::thread(", "aclrtSynchronizeStreamWithTimeout(",
                 "PrintOutput<", "aclFinalize("):
        assert step in text, step
    # one tensor per input the case passes and per output, each created, destroyed and its memory freed
    created = re.findall(r"CreateAclTensor\(\w+,\s*\w+,\s*&(\w+)DeviceAddr,\s*aclDataType::\w+,\s*&(\w+)\)", text)
    assert created and all(a == b for a, b in created)
    names = sorted(a for a, _ in created)
    assert sorted(set(re.findall(r"\bDestroyTensor\((\w+)\);", text)) - {"mc2Context"}) == names
    assert sorted(re.findall(r"\bFreeDeviceAddr\((\w+)DeviceAddr\);", text)) == names


def _shim(repos: Path, op_dir: Path, into: Path) -> Path:
    """The installed-CANN include paths the example names, over the unpacked headers and the op's op_api."""
    hccl = repos / "mirror-cann+asc-devkit/include/adv_api/hccl/internal/hccl.h"
    (into / "hccl").mkdir(parents=True)
    (into / "hccl" / "hccl.h").symlink_to(hccl)
    (into / "aclnn").mkdir()
    (into / "aclnn" / "opdev").symlink_to(repos / "hicann+opbase/include/nnopbase/opdev")
    (into / "aclnnop").mkdir()
    for header in sorted((op_dir / "op_api").glob("aclnn_*.h")):
        (into / "aclnnop" / header.name).symlink_to(header)
    return into


def _compile(cann, op_dir: Path, tmp: Path):  # noqa: F811 - cann is the fixture's value
    shim = _shim(cann[0], op_dir, tmp / "shim")
    rel = f"examples/test_aclnn_{op_dir.name}.cpp"
    return rel, syntax_check(cann, op_dir, rel, None, "host", ["--kind", "aclnn", "-I", str(shim)])


@pytest.mark.parametrize("snake", sorted(OPS))
@needs_cann[0]
@needs_cann[1]
def test_example_compiles_against_real_cann(cann, snake, tmp_path):  # noqa: F811
    rel, res = _compile(cann, GENERATED / snake, tmp_path)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert re.search(rf"^PASS \[aclnn\] {re.escape(rel)} ", res.stdout, re.M), res.stdout


@needs_cann[0]
@needs_cann[1]
def test_an_example_with_a_wrong_argument_count_fails(cann, tmp_path):  # noqa: F811
    """The compile is not vacuous: the call with one argument too few (its last before the workspace dropped) is
    refused, at the call."""
    snake = "moe_distribute_combine_v2"
    op_dir = tmp_path / snake
    shutil.copytree(GENERATED / snake, op_dir)
    example = op_dir / "examples" / f"test_aclnn_{snake}.cpp"
    text = example.read_text(encoding="utf-8")
    broken, n = re.subn(r",\s*[^,()]+,\s*&workspaceSize, &executor\)", ", &workspaceSize, &executor)", text)
    assert n == 1
    example.write_text(broken, encoding="utf-8")
    rel, res = _compile(cann, op_dir, tmp_path)
    assert res.returncode != 0, res.stdout
    assert f"FAIL [aclnn] {rel}" in res.stdout
    # the error is the call's: on one of the lines of the GetWorkspaceSize statement
    lines = broken.split("\n")
    first = next(i for i, l in enumerate(lines, 1) if f"{newest_entry(OPS[snake]).name}GetWorkspaceSize(" in l
                 and "ret =" in l)
    last = next(i for i, l in enumerate(lines, 1) if i >= first and "&executor);" in l)
    at = [int(n) for n in re.findall(rf"test_aclnn_{snake}\.cpp:(\d+):\d+: error", res.stdout)]
    assert at and all(first <= n <= last for n in at), res.stdout
