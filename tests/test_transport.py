"""Worlds whose windows the generated kernels cannot reach, the generated op does not accept.

The kernels move rows with MTE copies into the other ranks' HCCL windows. On Atlas A2 (8 NPUs per server,
ProductFacts.ranks_per_server) those reach only the windows of the own server (HCCS); the real A2 ops send to
other servers through HCCL (RDMA, or BatchWrite served by the AICPU), which the generated kernels do not
implement. So every family's tiling rejects an A2 world past one server (an implicit check, families.py
one_server_attr), and the CPU twin faults an MTE copy into another server's window (test_sim_twin).

On Ascend 950 (__NPU_ARCH__ 3510) Hccl<AICPU>::GetWindowsInAddr gives no address (it always returns 0), so the
kernels read the peers' windows from the HCCL context's windowsIn[], which lists 64 ranks
(ProductFacts.context_windows): a larger world is rejected the same way.
"""
from __future__ import annotations

import pytest

from opgen.lang.expr import Binary, Int, Name
from opgen.runtime import OpError

from .conftest import ROOT, build_reference, load_ok


def test_a2_views_reject_a_world_past_one_server_and_the_others_do_not():
    for name in ("dispatch_v2", "combine_v2"):
        op = load_ok(ROOT / "specs" / f"{name}.spec")
        a2 = {c.id: c for c in op.views["ascend910b"].checks}
        check = a2["transport.epWorldSize"]
        assert (check.origin, check.error_class, check.param) == ("implicit", "tiling", "epWorldSize")
        assert check.message.startswith("at most 8, one server on Atlas A2")
        assert "transport.epWorldSize" not in {c.id for c in op.views["ascend910_93"].checks}
        a5 = {c.id: c for c in op.views["ascend950"].checks}["transport.epWorldSize"]
        assert a5.expr == Binary("<=", Name("epWorldSize"), Int(64))
        assert a5.message.startswith("at most 64, the windows the HCCL context lists on Ascend 950DT")
    # Ascend 950 only, epWorldSize in {2, 8}: the domain keeps the world within both limits, so no check
    for name in ("dispatch_setup", "dispatch_teardown", "combine_setup", "combine_teardown"):
        family = load_ok(ROOT / "specs" / f"{name}.spec")
        assert not [c for v in family.views.values() for c in v.checks if c.id.startswith("transport.")], name


@pytest.fixture(scope="module")
def dispatch(tmp_path_factory):
    return build_reference("dispatch_v2.spec", tmp_path_factory.mktemp("transport"))


def _inputs(bs=2, h=32, k=1):
    import numpy as np
    return {"x": np.zeros((bs, h), dtype=np.float16), "expertIds": np.zeros((bs, k), dtype=np.int32)}


def test_the_reference_names_the_limit(dispatch):
    attrs = {"groupEp": "ep", "epWorldSize": 16, "epRankId": 0, "moeExpertNum": 16, "commAlg": "fullmesh"}
    with pytest.raises(OpError) as err:
        dispatch.validate(_inputs(), attrs, "ascend910b")
    assert "epWorldSize" in str(err.value) and "at most 8, one server on Atlas A2" in str(err.value)
    dispatch.validate(_inputs(), dict(attrs, epWorldSize=8, moeExpertNum=8), "ascend910b")  # one server: accepted
    # A3 reaches every rank with MTE
    dispatch.validate(_inputs(h=1024), dict(attrs, commAlg=""), "ascend910_93")
    # Ascend 950: 64 ranks, the windows its HCCL context lists (the documents accept up to 1024)
    a5 = dict(attrs, commAlg="", epWorldSize=128, moeExpertNum=128)
    with pytest.raises(OpError) as err:
        dispatch.validate(_inputs(h=1024), a5, "ascend950")
    assert "epWorldSize" in str(err.value) and "at most 64, the windows the HCCL context lists" in str(err.value)
    dispatch.validate(_inputs(h=1024), dict(a5, epWorldSize=64, moeExpertNum=64), "ascend950")
