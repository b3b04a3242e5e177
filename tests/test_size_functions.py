"""The aclnn size functions (…SetupTeardownCalcOutputSize) against the formulas of their documents, written out
here by hand (specs/sources/current/aclnnMoeDistribute{Dispatch,Combine}Setup.md: the CalcOutputSize tables and
the sample code), not read from the specs; and their C ABI in the generated headers."""
from __future__ import annotations

import itertools

import pytest

from opgen.runtime import OpError
from opgen.runtime.scope import Meta

from .conftest import build_reference

DISPATCH_FN = "aclnnMoeDistributeDispatchSetupTeardownCalcOutputSize"
COMBINE_FN = "aclnnMoeDistributeCombineSetupTeardownCalcOutputSize"


def align(x: int, n: int) -> int:
    return (x + n - 1) // n * n


def ceil_div(n: int, m: int) -> int:
    return (n + m - 1) // m


@pytest.fixture(scope="module")
def dispatch_setup(tmp_path_factory):
    return build_reference("dispatch_setup.spec", tmp_path_factory.mktemp("sizes_dispatch"))


@pytest.fixture(scope="module")
def combine_setup(tmp_path_factory):
    return build_reference("combine_setup.spec", tmp_path_factory.mktemp("sizes_combine"))


# The values the documents support ("当前仅支持"): H 4096/7168, BS 8/16/256, K 6/8, moeExpertNum 32, W 2/8.
GRID = list(itertools.product((4096, 7168), (8, 16, 256), (6, 8), (2, 8)))


@pytest.mark.parametrize("h, bs, k, w", GRID)
@pytest.mark.parametrize("quant", (0, 4))
def test_dispatch_setup_sizes_are_the_documented_formulas(dispatch_setup, h, bs, k, w, quant):
    attrs = dict(groupEp="ep", epWorldSize=w, epRankId=0, moeExpertNum=32, sharedExpertNum=0,
                 sharedExpertRankNum=0, quantMode=quant, commType=2)
    got = dispatch_setup.sizes(DISPATCH_FN, {"x": Meta((bs, h), "FLOAT16"), "expertIds": Meta((bs, k), "INT32")},
                               attrs, "ascend950")
    local = 32 // w                      # localExpertNum of a MoE expert rank
    token = align(h, 256) if quant == 0 else align(align(h, 128) + align(ceil_div(h, 32), 2), 512)  # the table
    assert got == {
        "tokenMsgSize": token,
        "expandIdxOutSize": bs * k,
        "assistInfoForCombineOutSize": bs * w * min(local, k) * 128,  # localToken * 128, globalBS = BS * W
        "commCmdInfoOutSize": (bs * (k + 0) + w * local) * 16,
    }


@pytest.mark.parametrize("h, bs, k, w", GRID)
def test_combine_setup_sizes_are_the_documented_formulas(combine_setup, h, bs, k, w):
    a = bs * w * min(32 // w, k)          # the rows of expandX for MoE experts at globalBs = 0
    attrs = dict(groupEp="ep", epWorldSize=w, epRankId=0, moeExpertNum=32, sharedExpertNum=0,
                 sharedExpertRankNum=0, commQuantMode=0, commType=2)
    inputs = {"expandX": Meta((a, h), "FLOAT16"), "expertIds": Meta((bs, k), "INT32"),
              "assistInfoForCombine": Meta((a * 128,), "INT32")}
    product = combine_setup.PRODUCTS[0]
    got = combine_setup.sizes(COMBINE_FN, inputs, attrs, product)
    assert got == {"tokenMsgSize": align(align(h, 32) + align(h, 8) // 8 * 4, 512),
                   "commCmdInfoOutSize": (a + w) * 16}


def test_a_size_function_checks_its_parameters_first(dispatch_setup):
    attrs = dict(groupEp="ep", epWorldSize=2, epRankId=0, moeExpertNum=32, sharedExpertNum=0,
                 sharedExpertRankNum=0, quantMode=0, commType=2)
    with pytest.raises(OpError) as err:  # null x: 161001 as in the first stage of aclnnMoeDistributeDispatchSetup
        dispatch_setup.sizes(DISPATCH_FN, {"x": None, "expertIds": Meta((8, 6), "INT32")}, attrs, "ascend950")
    assert (err.value.code, err.value.param) == (161001, "x")
    with pytest.raises(OpError, match="has no size function 'aclnnNope'"):
        dispatch_setup.sizes("aclnnNope", {}, attrs, "ascend950")
