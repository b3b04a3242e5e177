"""The twin's register-based vector API of __NPU_ARCH__ 3510 (opgen_sim/reg.h), the 3510 forms of GatherMask and Sum,
and TILING_KEY_IS (opgen_sim/tiling_key_is.h), on their own: ``tests/sim/reg_cases.cpp`` holds one small kernel per
behaviour, run on 1 rank x 1 core; the expected values are computed here.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from .test_sim_twin import _build_cases, run

SOURCE = Path(__file__).resolve().parent / "sim" / "reg_cases.cpp"
KEY = 10011  # the binary's key: TILING_KEY_IS of 10011 holds, of any other key not


@pytest.fixture(scope="module")
def cases_3510(tmp_path_factory) -> Path:
    return _build_cases(tmp_path_factory, "-D__NPU_ARCH__=3510", f"-DOPGEN_SIM_TILING_KEY_IS={KEY}", source=SOURCE)


@pytest.fixture(scope="module")
def cases_2201(tmp_path_factory) -> Path:
    return _build_cases(tmp_path_factory, "-D__NPU_ARCH__=2201", source=SOURCE)


def test_register_row_sums_as_common_h_reduce_loop_computes_them(cases_3510):
    """UpdateMask over 100 int32 elements (64, then 36 lanes), ReduceSum of each register, Add into the VL1 lane,
    the DIST_FIRST_ELEMENT_B32 store of lane 0 alone: rows 0..99 and 128..227, every other word left as it was."""
    rows = [sum(range(0, 100)), sum(range(128, 228))]
    want = [rows[0]] + [-1] * 7 + [rows[1]] + [-1] * 7
    assert run(cases_3510, "reg_row_sums") == ([f"vl 256 sums {','.join(map(str, want))}"], [])


def test_update_mask_counts_down_and_create_mask_takes_its_pattern(cases_3510):
    """130 int16 elements: UpdateMask gives all 128 lanes, then the 2 left; VL16 the first 16 lanes; the masked-off
    lanes of a store keep the UB's bytes (-1)."""
    assert run(cases_3510, "reg_mask_lanes") == (["lanes 128,2,16 after -1,-1"], [])


REG_FAULTS = {
    "reg_unaligned_load": "MicroAPI::DataCopy (a register load): UB address 4 is not 32-byte aligned",
    "reg_load_past_ub": "MicroAPI::DataCopy (a register load): UB bytes [253824, 254080) lie past the 253952-byte UB",
    "reg_unwritten_lane": "MicroAPI::DataCopy (a register store): reads lane 0 of a RegTensor<int32_t> no "
                          "instruction wrote",
    "reg_mask_width": "MicroAPI::DataCopy (a register store): a MaskReg made for 4-byte elements used on 2-byte "
                      "elements (int16_t): not modelled",
    "reg_histograms": "MicroAPI::Histograms (bin 0, FREQUENCY): not modelled: no public header or document of "
                      "asc-devkit gives the semantics of dhistv2 / chistv2",
    "reg_mask_pattern": "CreateMask: MaskPattern 10 (M3 / M4 / H / Q / ALLF) is not modelled",
    "reg_store_then_scalar_read": "LocalTensor::GetValue: reads UB [2048, 2052) on pipe S (scalar), written on pipe "
                                  "V (vector)",
    "reduce_sum_inexact": "ReduceSum (__NPU_ARCH__ 3510): row 0 of 3 float values rounds differently in different "
                          "orders of addition, and the order of Reg::Add / Reg::ReduceSum is not documented",
    "buf_pool_overrun": "TBufPool::InitBuffer (TBuf): TBufPool capacity exceeded: 1 x 32 bytes at pool offset 1024 "
                        "need 1056 bytes, the pool has 1024",
    "loop_mode_para": "SetLoopModePara (OUT_TO_UB): the loop mode of DataCopyPad is not modelled by the twin",
    "hccl_ccu": "Hccl<HCCL_SERVER_TYPE_CCU>::InitV2: the twin does not model the CCU server (the Ascend 950 CCU "
                "paths of the real ops cannot run on it)",
}


@pytest.mark.parametrize("case", sorted(REG_FAULTS))
def test_a_register_api_misuse_faults_naming_the_call(cases_3510, case):
    values, faults = run(cases_3510, case)
    assert values == [] and len(faults) == 1, (values, faults)
    assert faults[0].startswith("rank 0 core 0: ") and REG_FAULTS[case] in faults[0], faults


def test_tiling_key_is_holds_for_the_binarys_key_only(cases_3510):
    assert run(cases_3510, "tiling_key_is") == ([f"10000 0 taken 0 10011 1 taken 1 var {KEY}"], [])


def test_on_3510_gathermask_of_0_repeats_gathers_nothing(cases_3510, cases_2201):
    """3510 gathers in a register loop of repeatTimes iterations after clearing the count it returns (asc-devkit
    dav_3510 kernel_operator_vec_gather_mask_impl.h): 0 repeats keep dst and count 0; on 2201 the twin faults."""
    assert run(cases_3510, "gathermask_zero_repeats") == (["kept 0 dst 5"], [])
    values, faults = run(cases_2201, "gathermask_zero_repeats")
    assert values == [] and len(faults) == 1 and faults[0].endswith("GatherMask: repeatTimes 0"), faults


def test_on_3510_sum_needs_an_aligned_inner_only_past_the_first_row(cases_3510, cases_2201):
    """3510's Sum reads ``inner`` only as the stride of the rows after the first (sum_3510_impl.h), so one row of 4
    floats sums (1 + 2 + 3 + 4); a second row 16 bytes on faults, and on 2201 the unaligned inner faults at once."""
    assert run(cases_3510, "sum_one_row_inner_unaligned") == (["sum 10"], [])
    need = "Sum: SumParams {outter %d, inner 4, n 4}: need outter >= 1, 1 <= n <= inner and inner * 4 bytes a multiple"
    for exe, case, rows in ((cases_3510, "sum_two_rows_inner_unaligned", 2),
                            (cases_2201, "sum_one_row_inner_unaligned", 1)):
        values, faults = run(exe, case)
        assert values == [] and len(faults) == 1 and need % rows in faults[0], faults


def test_reduce_sum_adds_the_rows_of_ar_and_the_columns_of_ra(cases_3510):
    """adv_api ReduceSum on 3510 (reduce_sum_3510_impl.h): rows packed at srcShape[1]; {1 2 3 / 4 5 6}: AR 6, 15;
    RA 5, 7, 9."""
    assert run(cases_3510, "reduce_sum_ar") == (["6.000000,15.000000"], [])
    assert run(cases_3510, "reduce_sum_ra") == (["5.000000,7.000000,9.000000"], [])


def test_buffer_pools_carve_their_own_bytes_and_a_shared_pool_reuses_them(cases_3510):
    """TPipe::InitBufPool after a 64-byte TBuf: pool0 at UB 64, pool1 sharing it (also 64), the pipe's next buffer
    past pool0's 1024 bytes (1088)."""
    assert run(cases_3510, "buf_pools") == (["que 64 shared 64 after 1088"], [])


UNMODELLED = """
#include "kernel_operator.h"
__aicore__ inline void Vf(__local_mem__ float* p)
{
    AscendC::MicroAPI::RegTensor<float> a;
    AscendC::MicroAPI::MaskReg m = AscendC::MicroAPI::CreateMask<float>();
    AscendC::MicroAPI::DataCopy(a, p);
    AscendC::MicroAPI::Maxs(a, a, 2.0f, m);
}
int main() { return 0; }
"""


def test_an_unmodelled_register_call_fails_the_build_of_the_instance_calling_it(tmp_path):
    """The register calls the twin declares without modelling (opgen_sim/unmodelled_3510.h) compile where a kernel
    header names them, and fail the build, naming the call, of a kernel that calls one."""
    import shutil
    import subprocess
    from opgen.sim.build import INCLUDE
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++)")
    src = tmp_path / "unmodelled.cpp"
    src.write_text(UNMODELLED, encoding="utf-8")
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1", "-D__NPU_ARCH__=3510",
           f"-I{INCLUDE}", str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode != 0
    assert ("MicroAPI::Maxs: the twin does not model this register-API call (opgen_sim/unmodelled_3510.h): the kernel "
            "instance calling it cannot run on the twin") in proc.stderr, proc.stderr[-3000:]
    src.write_text(UNMODELLED.replace("    AscendC::MicroAPI::Maxs(a, a, 2.0f, m);\n", ""), encoding="utf-8")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_compact_copies_pack_the_ub_side_and_a_global_tensor_reinterprets_its_bytes(cases_3510):
    """DataCopyPad<PaddingMode::Compact> (3510): GM -> UB packs 4 blocks of one int32 (GM 16 bytes apart) into UB
    elements 0..3, ignoring the UB stride and the padding asked for; UB -> GM takes 2 blocks of two int32 packed
    from UB to GM 8 bytes apart. GlobalTensor<int32_t>::ReinterpretCast<int64_t>: 1024 int32 are 512 int64, the
    first the bytes of 0 and 1."""
    assert run(cases_3510, "compact_copies") == (["ub 0,4,8,12,-1,-1 gm 0,4,-1,-1,8,12 wide 512 1"], [])


def test_on_3510_cast_widens_int32_to_int64(cases_3510):
    assert run(cases_3510, "cast_int64") == (["-5 2147483647"], [])


def test_on_3510_a_level0_reduce_sum_takes_more_than_255_repeats_and_exact_rows_only(cases_3510, cases_2201):
    """3510's level-0 ReduceSum takes an int32 repeat past 255 (dav_3510 ReduceSumImpl: a third level of register
    sums; the [0, 255] check is CPU-debug only): 300 repeats of 64 ones sum 19200; on 2201 the twin faults. Its
    order of additions is not documented: a repeat that rounds differently in another order faults on 3510."""
    assert run(cases_3510, "reduce_sum_300_repeats") == (["sum 19200"], [])
    values, faults = run(cases_2201, "reduce_sum_300_repeats")
    assert values == [] and len(faults) == 1 and faults[0].endswith("ReduceSum (level 0): repeatTime 300 outside "
                                                                    "[1, 255]"), faults
    values, faults = run(cases_3510, "reduce_sum_inexact_repeat")
    assert values == [] and len(faults) == 1 and faults[0].endswith(
        "ReduceSum (level 0, __NPU_ARCH__ 3510): repeat 0's float lanes round differently in different orders of "
        "addition, and the order of Reg::ReduceSum is not documented"), faults


# ---- the quantising register calls of the real Ascend 950 DispatchV2 (opgen_sim/reg_ops.h) ---------------------

def test_register_float_lanes_abs_reducemax_duplicate_mul_div_max_sub(cases_3510):
    """x[i] = i - 32.5: Abs lane 0 32.5; ReduceMax of |x| over the first 10 lanes 32.5 in lane 0, 0 in lane 1
    (ZEROING); Duplicate of that lane to lane 63; Mul by 2 under the first 10 lanes: lane 1 -63, lane 10 0; Div
    1 / 3 the fp32 quotient 0x3eaaaaab; Max with 2: 2 and 30.5; Sub 2: -34.5; Add 2 under the first 10 lanes: lane 1
    -29.5, lane 10 0; Muls 0.5: lane 63 15.25."""
    assert run(cases_3510, "reg_float_lanes") == ([
        "abs 32.500000 rmax 32.500000,0.000000 dup 32.500000 mul -63.000000,0.000000 div 3eaaaaab "
        "max 2.000000,30.500000 sub -34.500000 add -29.500000,0.000000 muls 15.250000"], [])


def test_register_integer_lanes_and_masks(cases_3510):
    """uint16 a[i] = i, b = 0xF0: And 117 & 0xF0 = 112, Or 5 | 0xF0 = 245, Sub 127 - 240 and 16 - 240 modulo 2^16,
    127 >> 4 = 7, 127 << 8 = 32512; Compare LT (every lane) MaskAnd CompareScalar GE 100 selects a from lane 100
    on (lane 3: b); MaskOr with EQ 3 selects lane 3 too (lane 4: b); uint32 Adds wraps 0xFFFFFFFF + 2 = 1."""
    assert run(cases_3510, "reg_int_lanes") == ([
        f"and 112 or 245 sub {127 - 240 + 65536},{16 - 240 + 65536} shr 7 shl 32512 sel 240,100 or 3,240 adds 1"], [])


def test_register_casts_deinterleave_interleave_and_pack(cases_3510):
    """half h[i] = i: the DINTLV_B16 load's even lanes cast to float, RegLayout ZERO h[4j], ONE h[4j + 2];
    Interleave restores 0, 2, ..., 126 / 128, ..., 254. float -> e4m3 RINT: 500 SAT 448 (0x7e), NO_SAT NaN
    (0x7f); 2 is 0x40, 126 rounds to 128 (0x70); the DIST_PACK4_B32 store packs byte 0 of each 32-bit slot, the
    pointer advancing 64 bytes a store. half 1 + 2^-10 -> bf16 CAST_TRUNC 1.0 (0x3f80)."""
    assert run(cases_3510, "reg_cast_lanes") == (["f 0,2,126,128,254 q 7e,7e,7f,0,40,70 bf16 3f80"], [])


def test_register_block_max_unaligned_stores_e2b_loads_and_pack_b16(cases_3510):
    """ReduceMaxWithDataBlock of u[0..127] = i: the 8 block maxima 15, 31, ..., 127; two DataCopyUnAlign stores of 8
    lanes from element 2 (4 bytes in) and the Post: elements 2..17, element 18 kept (0xFFFF). DIST_E2B_B16 from
    element 8, twice (post-updating by 8): lane k holds u[16 + k / 16]. The post-updating load left the pointer at
    element 128: DIST_PACK_B16 stores the low bytes of u[128..255]: 128 .. 255."""
    blk = [65535, 65535] + [16 * k + 15 for k in range(8)] * 2 + [65535]
    assert run(cases_3510, "reg_block_lanes") == ([f"blk {','.join(map(str, blk))} e2b 16,16,17,23 pack 128,255"],
                                                  [])


def test_register_bf16_to_fp4_cast_packs_lane_pairs_into_byte_0_of_each_slot(cases_3510):
    """bf16 -> fp4x2 e2m1, RegLayout ZERO, CAST_RINT: lanes 2j / 2j + 1 the low / high nibble of byte 0 of 32-bit slot
    j, stored packed by DIST_PACK4_B32: 0.5 (1) 1.0 (2) -> 0x21; 1.25 (RINT to 1.0, 2) 6.0 (7) -> 0x72; 7.0 (saturates
    to 6.0, 7) -2.0 (0xc) -> 0xc7; zeros -> 0."""
    assert run(cases_3510, "reg_fp4_lanes") == (["fp4 21,72,c7,0"], [])


def test_register_unpack_b8_load_and_the_interleaving_dual_store(cases_3510):
    """int8 s[i] = i - 64: DIST_UNPACK_B8, Cast<half, int8_t> ZERO, Cast<float, half> ZERO / ONE (even / odd) and the
    DIST_INTLV_B32 dual store give s[0..127] in order (what the real 950 CombineV2's int8 dequant relies on:
    moe_distribute_combine_v2_quant.h Int8DequantProcessA5); DIST_DINTLV_B32 then DIST_INTLV_B32 is the identity."""
    assert run(cases_3510, "reg_unpack_interleave") == (["f -64 -63 -62 -1 0 63 g -64 -63 63"], [])


QUANT_FAULTS = {
    "reg_mixed_mask": "MicroAPI::Abs: 4-byte lane 1 of a MaskReg made for 2-byte elements covers active and inactive "
                      "lanes: which one predicates it is not documented",
    "reg_unpack_odd_byte": "MicroAPI::DataCopy (a register store): reads lane 1 of a RegTensor<int8_t> no instruction "
                           "wrote",
    "reg_intlv_partial_mask": "MicroAPI::DataCopy (a DIST_INTLV_B32 dual register store): lane 10 of the mask is "
                              "inactive: how a partial mask predicates a dual store is not documented",
    "reg_reduce_max_no_lane": "MicroAPI::ReduceMax: no active lane: no documented result",
    "reg_max_nan": "MicroAPI::Max: a NaN lane: what the instruction gives for it is not documented",
    "reg_unalign_no_post": "MicroAPI::DataCopyUnAlign (store): the UnalignReg goes out of scope with data no "
                           "DataCopyUnAlignPost / StoreUnAlignPost flushed",
    "reg_post_no_store": "MicroAPI::DataCopyUnAlignPost: no unaligned store to flush",
    "reg_unalign_too_many": "MicroAPI::DataCopyUnAlign (store): 200 elements: the register holds 128",
    "reg_dintlv_past_ub": "MicroAPI::DataCopy (a post-updating dual register load): UB bytes [253696, 254208) lie "
                          "past the 253952-byte UB",
    "reg_pack_unaligned": "MicroAPI::DataCopy (a post-updating register store): UB address 16 is not 32-byte aligned",
    "reg_e2b_unaligned": "MicroAPI::DataCopy (a post-updating register load): UB address 8 is not 16-byte aligned",
    "reg_cast_sat_nan": "MicroAPI::Cast: SatMode::SAT of a NaN float: the result is not documented",
    "reg_cast_unknown_round": "MicroAPI::Cast<fp8_e4m3fn_t, float>: RoundMode::UNKNOWN: the twin does not know which "
                              "rounding the device takes",
    "reg_narrow_unwritten": "MicroAPI::DataCopy (a register store): reads lane 1 of a RegTensor<int8_t> no "
                            "instruction wrote",
    "reg_shift_too_far": "MicroAPI::ShiftRights: shift 16 outside [0, 16)",
    "reg_muls_unwritten": "MicroAPI::Muls: reads lane 0 of a RegTensor<float> no instruction wrote",
    "reg_mask_and_widths": "MicroAPI::MaskAnd: masks made for 2-, 4- and 2-byte elements: not modelled (one width "
                           "only)",
}

# one misuse of each of the other quantising calls: an unwritten source register, a mask made for wider elements,
# an address off its alignment, a Post with nothing to flush, a block with no active lane
QUANT_FAULTS.update({
    "reg_mis_sub": "MicroAPI::Sub: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_mul": "MicroAPI::Mul: reads lane 0 of a RegTensor<float> no instruction wrote",
    "reg_mis_div": "MicroAPI::Div: reads lane 0 of a RegTensor<float> no instruction wrote",
    "reg_mis_min": "MicroAPI::Min: a MaskReg made for 4-byte elements used on 2-byte elements (uint16_t): not modelled",
    "reg_mis_and": "MicroAPI::And: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_or": "MicroAPI::Or: a MaskReg made for 4-byte elements used on 2-byte elements (uint16_t): not modelled",
    "reg_mis_adds": "MicroAPI::Adds: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_add_f": "MicroAPI::Add: reads lane 0 of a RegTensor<float> no instruction wrote",
    "reg_mis_shift_lefts": "MicroAPI::ShiftLefts: shift -1 outside [0, 16)",
    "reg_mis_compare": "MicroAPI::Compare: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_compare_scalar": "MicroAPI::CompareScalar: a MaskReg made for 4-byte elements used on 2-byte elements "
                              "(uint16_t): not modelled",
    "reg_mis_select": "MicroAPI::Select: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_mask_or": "MicroAPI::MaskOr: masks made for 2-, 0- and 2-byte elements: not modelled (one width only)",
    "reg_mis_interleave": "MicroAPI::Interleave: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_block_max": "MicroAPI::ReduceMaxWithDataBlock: block 1 has no active lane: no documented result",
    "reg_mis_dup_lane": "MicroAPI::Duplicate (a lane of a register): reads lane 0 of a RegTensor<uint16_t> no "
                        "instruction wrote",
    "reg_mis_pack_b16": "MicroAPI::DataCopy (a post-updating register store): UB address 16 is not 32-byte aligned",
    "reg_mis_post_load": "MicroAPI::DataCopy (a post-updating register load): UB address 2 is not 32-byte aligned",
    "reg_mis_post_store": "MicroAPI::DataCopy (a post-updating register store): reads byte 0 of a "
                          "RegTensor<uint16_t> no instruction wrote",
    "reg_mis_load_align": "MicroAPI::LoadAlign (post-updating): UB address 8 is not 32-byte aligned",
    "reg_mis_store_align": "MicroAPI::StoreAlign: a MaskReg made for 4-byte elements used on 2-byte elements "
                           "(uint16_t): not modelled",
    "reg_mis_store_un_align": "MicroAPI::StoreUnAlign: reads lane 0 of a RegTensor<uint16_t> no instruction wrote",
    "reg_mis_store_un_align_post": "MicroAPI::StoreUnAlignPost: no unaligned store to flush",
    "reg_mis_un_align_odd": "MicroAPI::DataCopyUnAlign (store): UB address 1 is not 2-byte aligned",
    "reg_mis_fp4_cast": "MicroAPI::Cast: reads lane 0 of a RegTensor<bfloat16_t> no instruction wrote",
})


@pytest.mark.parametrize("case", sorted(QUANT_FAULTS))
def test_a_quantising_register_call_misused_faults_naming_the_call(cases_3510, case):
    values, faults = run(cases_3510, case)
    assert values == [] and len(faults) == 1, (values, faults)
    assert faults[0] == "rank 0 core 0: " + QUANT_FAULTS[case], faults
