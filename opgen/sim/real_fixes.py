"""Findings of the real kernels fixed in temp copies, so the oracle tests and the cost benchmark run a real op past
a line the twin rightly faults on (the findings themselves stay pinned on the unmodified kernels:
tests/test_real_ops_world.py). Never the tarball's files: each fix is a text replacement in a copy of the op's
kernel folder that must match exactly once, so a changed kernel is noticed."""
from __future__ import annotations

import shutil
from pathlib import Path


def kernel_copy_with(ops_root: Path, tmp: Path, header: str, fixes, copied: tuple[str, ...] = ()) -> Path:
    """An ``ops-transformer/`` whose mc2 folders link the tarball's, but for copies of the op_kernel folders of
    ``header``'s op and of the ops in ``copied`` (the twin resolves an entry's path, so an entry in a linked folder
    would include the tarball's headers), in which ``header`` (a path under the tree, ``mc2/<op>/op_kernel/...``)
    has each (text, fixed text) of ``fixes`` replaced: a finding of the real code fixed in a temp copy (never the
    tarball's file) so the op runs on past it. Each text must occur exactly once, so a changed kernel is noticed."""
    mc2, op, kernel = header.split("/", 3)[:3]
    assert (mc2, kernel) == ("mc2", "op_kernel"), header
    for entry in (ops_root / "mc2").iterdir():
        (tmp / "mc2").mkdir(parents=True, exist_ok=True)
        if entry.name == op or entry.name in copied:
            (tmp / "mc2" / entry.name).mkdir()
            for part in entry.iterdir():
                if part.name == "op_kernel":
                    shutil.copytree(part, tmp / "mc2" / entry.name / "op_kernel")
                else:
                    (tmp / "mc2" / entry.name / part.name).symlink_to(part)
        else:
            (tmp / "mc2" / entry.name).symlink_to(entry)
    path = tmp / header
    text = path.read_text(encoding="utf-8")
    for old, new in fixes:
        assert text.count(old) == 1, f"the real {header} changed: update the fix of\n{old}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return tmp


# The real Ascend 950 MTE combine (CombineV2's A5 kernel, which CombineAddRmsNorm's 950 entry instantiates with
# HasAddRmsNorm) with its findings fixed, each a text replacement in a temp copy (never the tarball's file) that
# must match exactly once (tests/test_real_ops_world.py: A5_COMBINE_CONTEXT, A5_COMBINE_PACK_SOURCE).
# code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h
A5_MTE_COMBINE = "mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h"
# 1. Init reads winSize through epWinContext_ before InitAttrs (InitCommContext) sets it: the check moves after
A5_INIT = """    } else {
        auto realWinSize = Mc2Kernel::GetWinSize(epWinContext_);
        CheckWindowSize(totalWinSizeEp_, realWinSize, tpipe_, XOut);
    }
    InitAttrs(mc2Context, tilingData);
"""
A5_INIT_FIXED = """    }
    InitAttrs(mc2Context, tilingData);
    if (!isMc2Context_) {
        auto realWinSize = Mc2Kernel::GetWinSize(epWinContext_);
        CheckWindowSize(totalWinSizeEp_, realWinSize, tpipe_, XOut);
    }
"""
# 2. ExpertAlltoAllDispatchInnerCopyAdd (comm quant 0) packs a row with Copy repeats of 480 source bytes
# (blockCntPerToken_ = Ceil(commDataBytes_, SPLIT_BLOCK_DATA_SIZE) of them) from an expandXInQueue_ buffer of
# hExpandXAlign32Size_ bytes: the buffer is sized to the bytes the Copy reads, blockCntPerToken_ * 480 (what the
# receiving side's moeQueueBytes already is: packedDataBytes = blockCntPerToken_ * SPLIT_BLOCK_DATA_SIZE). The
# kernel's arithmetic is unchanged (dispatchBufferNum_ is computed before, from hExpandXAlign32Size_).
A5_PACK_SOURCE = "        tpipe_->InitBuffer(expandXInQueue_, dispatchBufferNum_, hExpandXAlign32Size_);\n"
A5_PACK_SOURCE_FIXED = ("        tpipe_->InitBuffer(expandXInQueue_, dispatchBufferNum_, "
                        "blockCntPerToken_ * SPLIT_BLOCK_DATA_SIZE);\n")
# 3. The same packing under comm quantisation reads the quantised row (tokenScaleCnt_ elements: the int8 row and its
# scales, commDataBytes_ = tokenScaleCnt_ * sizeof(ExpandXType)) from quantResultBuf_, of Ceil(commDataBytes_, 32)
# * 32 bytes: sized likewise (no other use of the buffer; BuffInit runs after InitAttrs set blockCntPerToken_)
A5_PACK_QUANT_SOURCE = "        tpipe_->InitBuffer(quantResultBuf_, tokenScaleAlign32Size);\n"
A5_PACK_QUANT_SOURCE_FIXED = "        tpipe_->InitBuffer(quantResultBuf_, blockCntPerToken_ * SPLIT_BLOCK_DATA_SIZE);\n"
A5_COMBINE_FIXES = ((A5_INIT, A5_INIT_FIXED), (A5_PACK_SOURCE, A5_PACK_SOURCE_FIXED),
                    (A5_PACK_QUANT_SOURCE, A5_PACK_QUANT_SOURCE_FIXED))
# the op folders whose kernel entries include the A5 MTE combine: copied, not linked (the twin resolves an entry's
# path, so an entry in a linked folder would include the tarball's header)
A5_COMBINE_OPS = ("moe_distribute_combine_v2", "moe_distribute_combine_add_rms_norm")


def a5_combine_fixed(ops_root: Path, tmp: Path, fixes=A5_COMBINE_FIXES) -> Path:
    """The tree with the A5 MTE combine's ``fixes`` applied (``kernel_copy_with``; both entries that include it
    copied)."""
    return kernel_copy_with(ops_root, tmp, A5_MTE_COMBINE, fixes, A5_COMBINE_OPS)


# The real Atlas A2 one-server combine (tests/test_real_ops_world.py A2_COMBINE_FLAG): the S_MTE3 sync added
# between its flag's scalar store and the MTE3 copy that sends it, the order SingleServerDispatch keeps for
# tokenNumTensor a few lines above (SyncFunc<HardEvent::S_MTE3>() before CopyUb2Gm(tokenNumInWindow, ...)).
# code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h SingleServerDispatch
A2_COMBINE_HEADER = "mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h"
A2_FLAG_STORE = "        flagLocal_(0) = FLAG_VALUE;\n"
A2_FLAG_STORE_SYNCED = "        flagLocal_(0) = FLAG_VALUE;\n        SyncFunc<HardEvent::S_MTE3>();\n"


def a2_combine_flag_synced(ops_root: Path, tmp: Path) -> Path:
    """The tree with the A2 combine's flag store synced (``A2_FLAG_STORE_SYNCED``)."""
    return kernel_copy_with(ops_root, tmp, A2_COMBINE_HEADER, ((A2_FLAG_STORE, A2_FLAG_STORE_SYNCED),))
