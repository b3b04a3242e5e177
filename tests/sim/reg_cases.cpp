/**
 * Small kernels for the twin's register-based vector API of __NPU_ARCH__ 3510 (opgen_sim/reg.h: MicroAPI / Reg,
 * VF_CALL, __local_mem__, GetVecLen), the 3510 forms of GatherMask and Sum the real Ascend 950 DispatchTeardown
 * calls, and TILING_KEY_IS (opgen_sim/tiling_key_is.h). Built with -D__NPU_ARCH__=3510 and
 * -DOPGEN_SIM_TILING_KEY_IS=10011 (or without __NPU_ARCH__ 3510, where only the GatherMask / Sum cases exist).
 * `reg_cases CASE` runs CASE on 1 rank x 1 core (UB 248 KiB) and prints `value <text>` / `fault <message>` lines;
 * tests/test_sim_reg.py checks them.
 */
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernel_operator.h"
#include "adv_api/reduce/sum.h"
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
#include "adv_api/reduce/reduce.h"
#include "lib/hccl/hccl.h"
#endif

using namespace AscendC;

namespace {
alignas(64) uint8_t g_gm[4096];  // the rank's GM (a region of the world)
std::mutex g_outMu;
std::vector<std::string> g_values;

void Report(const std::string& v)
{
    std::lock_guard<std::mutex> lock(g_outMu);
    g_values.push_back(v);
}

template <HardEvent E>
void Sync()
{
    SetFlag<E>(0);
    WaitFlag<E>(0);
}

template <typename Tensor>
std::string Ints(const Tensor& t, uint32_t n)
{
    std::string s;
    for (uint32_t i = 0; i < n; ++i) {
        s += (i ? "," : "") + std::to_string(static_cast<long long>(t.GetValue(i)));
    }
    return s;
}

// A 4 KiB UB buffer of int32.
struct Ub {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    LocalTensor<int32_t> t;
    Ub()
    {
        pipe.InitBuffer(buf, 4096);
        t = buf.Get<int32_t>();
    }
};

void GatherMaskZeroRepeats(uint32_t)
{
    Ub ub;
    LocalTensor<float> src = ub.t.ReinterpretCast<float>();
    LocalTensor<float> dst = ub.t[512].ReinterpretCast<float>();
    LocalTensor<uint32_t> pattern = ub.t[768].ReinterpretCast<uint32_t>();
    pattern.SetValue(0, 1U);
    dst.SetValue(0, 5.0f);
    Sync<HardEvent::S_V>();
    uint64_t kept = 7;
    GatherMask(dst, src, pattern, true, 1U, {1, 0, 1, 0}, kept);
    Sync<HardEvent::V_S>();
    Report("kept " + std::to_string(kept) + " dst " + std::to_string(static_cast<int>(dst.GetValue(0))));
}

void SumOneRow(uint32_t rows)
{
    Ub ub;
    LocalTensor<float> x = ub.t.ReinterpretCast<float>();
    LocalTensor<float> y = ub.t[256].ReinterpretCast<float>();
    for (uint32_t i = 0; i < 8; ++i) {
        x.SetValue(i, static_cast<float>(i + 1));
    }
    Sync<HardEvent::S_V>();
    Sum(y, x, SumParams{rows, 4, 4});  // 4 floats: 16 bytes a row
    Sync<HardEvent::V_S>();
    Report("sum " + std::to_string(static_cast<int>(y.GetValue(0))));
}

// Level-0 ReduceSum of `repeats` repeats of the same 64 floats (srcRepStride 0): 1.0 each, or with lane 1 = 2^-30
void ReduceSumRepeats(uint32_t repeats, bool inexact)
{
    Ub ub;
    LocalTensor<float> x = ub.t.ReinterpretCast<float>();
    for (uint32_t i = 0; i < 64; ++i) {
        x.SetValue(i, (inexact && i == 1U) ? 9.313225746154785e-10f : 1.0f);
    }
    Sync<HardEvent::S_V>();
    ReduceSum(x[512], x, x[600], 64, static_cast<int32_t>(repeats), 0);
    Sync<HardEvent::V_S>();
    Report("sum " + std::to_string(static_cast<long long>(x.GetValue(512))));
}

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// ---- MicroAPI: semantics ----------------------------------------------------------------------------------------
// common.h ReduceLoop's shape: per row, UpdateMask over `elements`, ReduceSum of each 64-lane register, Add into
// lane 0 (VL1), and a DIST_FIRST_ELEMENT_B32 store of lane 0.
void RowSums(__local_mem__ int32_t* dst, __local_mem__ int32_t* src, uint16_t rows, uint32_t rowStride,
             uint16_t regs, uint32_t elements)
{
    MicroAPI::MaskReg first = MicroAPI::CreateMask<int32_t, MicroAPI::MaskPattern::VL1>();
    for (uint16_t r = 0; r < rows; ++r) {
        MicroAPI::RegTensor<int32_t> sum;
        uint32_t left = elements;
        MicroAPI::Duplicate(sum, 0);
        for (uint16_t i = 0; i < regs; ++i) {
            MicroAPI::RegTensor<int32_t> v;
            MicroAPI::RegTensor<int32_t> part;
            MicroAPI::MaskReg mask = MicroAPI::UpdateMask<int32_t>(left);
            MicroAPI::DataCopy(v, src + r * rowStride + i * (GetVecLen() / sizeof(int32_t)));
            MicroAPI::ReduceSum(part, v, mask);
            MicroAPI::Add(sum, sum, part, first);
        }
        MicroAPI::DataCopy<int32_t, MicroAPI::StoreDist::DIST_FIRST_ELEMENT_B32>(dst + r * 8, sum, first);
    }
}

void RegRowSums(uint32_t)
{
    Ub ub;
    for (uint32_t i = 0; i < 256; ++i) {
        ub.t.SetValue(i, static_cast<int32_t>(i));
    }
    LocalTensor<int32_t> out = ub.t[512];
    for (uint32_t i = 0; i < 16; ++i) {
        out.SetValue(i, -1);
    }
    Sync<HardEvent::S_V>();
    // rows of 100 elements 128 apart: 0..99 and 128..227
    VF_CALL<RowSums>((__local_mem__ int32_t*)out.GetPhyAddr(), (__local_mem__ int32_t*)ub.t.GetPhyAddr(),
                     static_cast<uint16_t>(2), 128U, static_cast<uint16_t>(2), 100U);
    PipeBarrier<PIPE_V>();
    Sync<HardEvent::V_S>();
    Report("vl " + std::to_string(GetVecLen()) + " sums " + Ints(out, 16));
}

void MaskLanesStore(__local_mem__ int16_t* dst, uint32_t count)
{
    MicroAPI::RegTensor<int16_t> v;
    MicroAPI::Duplicate(v, static_cast<int16_t>(7));
    MicroAPI::MaskReg a = MicroAPI::UpdateMask<int16_t>(count);  // 128 lanes of 16 bits: min(count, 128)
    MicroAPI::DataCopy(dst, v, a);
    MicroAPI::MaskReg b = MicroAPI::UpdateMask<int16_t>(count);  // what is left
    MicroAPI::DataCopy(dst + 128, v, b);
    MicroAPI::MaskReg c = MicroAPI::CreateMask<int16_t, MicroAPI::MaskPattern::VL16>();
    MicroAPI::DataCopy(dst + 256, v, c);
}

void RegMaskLanes(uint32_t)
{
    Ub ub;
    LocalTensor<int16_t> h = ub.t.ReinterpretCast<int16_t>();
    for (uint32_t i = 0; i < 512; ++i) {
        h.SetValue(i, -1);
    }
    Sync<HardEvent::S_V>();
    VF_CALL<MaskLanesStore>((__local_mem__ int16_t*)h.GetPhyAddr(), 130U);
    PipeBarrier<PIPE_V>();
    Sync<HardEvent::V_S>();
    uint32_t seven[3] = {0, 0, 0};
    for (uint32_t i = 0; i < 384; ++i) {
        seven[i / 128] += h.GetValue(i) == 7 ? 1U : 0U;
    }
    Report("lanes " + std::to_string(seven[0]) + "," + std::to_string(seven[1]) + "," + std::to_string(seven[2]) +
           " after " + std::to_string(h.GetValue(130)) + "," + std::to_string(h.GetValue(272)));
}

// ---- MicroAPI: misuses that fault --------------------------------------------------------------------------------
void LoadAt(__local_mem__ int32_t* src)
{
    MicroAPI::RegTensor<int32_t> v;
    MicroAPI::DataCopy(v, src);
}

void RegUnalignedLoad(uint32_t)
{
    Ub ub;
    VF_CALL<LoadAt>((__local_mem__ int32_t*)ub.t.GetPhyAddr() + 1);
}

void RegLoadPastUb(uint32_t)
{
    Ub ub;
    VF_CALL<LoadAt>((__local_mem__ int32_t*)(TOTAL_UB_SIZE - 128));
}

void StoreUnwritten(__local_mem__ int32_t* dst)
{
    MicroAPI::RegTensor<int32_t> v;
    MicroAPI::MaskReg all = MicroAPI::CreateMask<int32_t>();
    MicroAPI::DataCopy(dst, v, all);
}

void RegUnwrittenLane(uint32_t)
{
    Ub ub;
    VF_CALL<StoreUnwritten>((__local_mem__ int32_t*)ub.t.GetPhyAddr());
}

void StoreWithWordMask(__local_mem__ int16_t* dst)
{
    MicroAPI::RegTensor<int16_t> v;
    MicroAPI::Duplicate(v, 1);
    MicroAPI::MaskReg word = MicroAPI::CreateMask<int32_t>();
    MicroAPI::DataCopy(dst, v, word);
}

void RegMaskWidth(uint32_t)
{
    Ub ub;
    VF_CALL<StoreWithWordMask>((__local_mem__ int16_t*)ub.t.GetPhyAddr());
}

void Histogram(__local_mem__ uint16_t* dst, __local_mem__ uint8_t* src)
{
    MicroAPI::RegTensor<uint8_t> s;
    MicroAPI::RegTensor<uint16_t> d;
    MicroAPI::MaskReg all = MicroAPI::CreateMask<uint8_t>();
    MicroAPI::Duplicate(d, 0);
    MicroAPI::DataCopy(s, src);
    MicroAPI::Histograms<uint8_t, uint16_t, MicroAPI::HistogramsBinType::BIN0, MicroAPI::HistogramsType::FREQUENCY>(
        d, s, all);
    (void)dst;
}

void RegHistograms(uint32_t)
{
    Ub ub;
    Sync<HardEvent::S_V>();
    VF_CALL<Histogram>((__local_mem__ uint16_t*)ub.t[512].GetPhyAddr(), (__local_mem__ uint8_t*)ub.t.GetPhyAddr());
}

void PatternM3(__local_mem__ int32_t*)
{
    MicroAPI::MaskReg m = MicroAPI::CreateMask<int32_t, MicroAPI::MaskPattern::M3>();
    (void)m;
}

void RegMaskPattern(uint32_t)
{
    Ub ub;
    VF_CALL<PatternM3>((__local_mem__ int32_t*)ub.t.GetPhyAddr());
}

void RegStoreThenScalarRead(uint32_t)
{
    Ub ub;
    VF_CALL<RowSums>((__local_mem__ int32_t*)ub.t[512].GetPhyAddr(), (__local_mem__ int32_t*)ub.t.GetPhyAddr(),
                     static_cast<uint16_t>(1), 64U, static_cast<uint16_t>(1), 8U);
    Report(std::to_string(ub.t.GetValue(512)));  // no V_S sync: the scalar unit may read the old bytes
}


// ---- MicroAPI: the quantising calls (opgen_sim/reg_ops.h) --------------------------------------------------------
template <typename T>
std::string Bits(const LocalTensor<T>& t, uint32_t i)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%x", static_cast<unsigned>(t.GetValue(i)));
    return buf;
}

// x[i] = i - 32.5 (64 floats at UB 0): Abs, Mul by 2 under the first 10 lanes, Div 1 / 3, Max with 2, ReduceMax of
// |x| over the first 10 lanes, Duplicate of its lane 0; results at UB 1024 + 256 * k
void FloatLanes(__local_mem__ float* x, __local_mem__ float* out)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    uint32_t ten = 10;
    MicroAPI::MaskReg first10 = MicroAPI::UpdateMask<float>(ten);
    MicroAPI::RegTensor<float> v, two, one, three, r;
    MicroAPI::DataCopy(v, x);
    MicroAPI::Duplicate(two, 2.0f);
    MicroAPI::Duplicate(one, 1.0f);
    MicroAPI::Duplicate(three, 3.0f);
    MicroAPI::Abs(r, v, all);
    MicroAPI::DataCopy(out, r, all);
    MicroAPI::ReduceMax(r, r, first10);
    MicroAPI::DataCopy(out + 64, r, all);
    MicroAPI::Duplicate(r, r, all);
    MicroAPI::DataCopy(out + 128, r, all);
    MicroAPI::Mul(r, v, two, first10);
    MicroAPI::DataCopy(out + 192, r, all);
    MicroAPI::Div(r, one, three, all);
    MicroAPI::DataCopy(out + 256, r, all);
    MicroAPI::Max(r, v, two, all);
    MicroAPI::DataCopy(out + 320, r, all);
    MicroAPI::Sub(r, v, two, all);
    MicroAPI::DataCopy(out + 384, r, all);
    MicroAPI::Add(r, v, two, first10);
    MicroAPI::DataCopy(out + 448, r, all);
    MicroAPI::Muls(r, v, 0.5f, all);
    MicroAPI::DataCopy(out + 512, r, all);
}

void RegFloatLanes(uint32_t)
{
    Ub ub;
    LocalTensor<float> f = ub.t.ReinterpretCast<float>();
    for (uint32_t i = 0; i < 64; ++i) {
        f.SetValue(i, static_cast<float>(i) - 32.5f);
    }
    Sync<HardEvent::S_V>();
    VF_CALL<FloatLanes>((__local_mem__ float*)f.GetPhyAddr(), (__local_mem__ float*)f[256].GetPhyAddr());
    Sync<HardEvent::V_S>();
    LocalTensor<uint32_t> u = ub.t.ReinterpretCast<uint32_t>();
    Report("abs " + std::to_string(f.GetValue(256)) + " rmax " + std::to_string(f.GetValue(320)) + "," +
           std::to_string(f.GetValue(321)) + " dup " + std::to_string(f.GetValue(447)) + " mul " +
           std::to_string(f.GetValue(449)) + "," + std::to_string(f.GetValue(458)) + " div " + Bits(u, 512) +
           " max " + std::to_string(f.GetValue(576)) + "," + std::to_string(f.GetValue(639)) + " sub " +
           std::to_string(f.GetValue(640)) + " add " + std::to_string(f.GetValue(705)) + "," +
           std::to_string(f.GetValue(714)) + " muls " + std::to_string(f.GetValue(831)));
}

// uint16 lanes a[i] = i, b = 0x00F0: And, Or, Sub, ShiftRights 4, ShiftLefts 8, Compare LT / CompareScalar GE, the
// masks combined, Select; uint32 Adds
void IntLanes(__local_mem__ uint16_t* out, __local_mem__ uint32_t* out32)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<uint16_t>();
    MicroAPI::RegTensor<uint16_t> a, b, r;
    for (uint16_t i = 0; i < 128; ++i) {
        opgen_sim::reg::Put(a, i, i);
    }
    MicroAPI::Duplicate(b, static_cast<uint16_t>(0x00F0));
    MicroAPI::And(r, a, b, all);
    MicroAPI::DataCopy(out, r, all);
    MicroAPI::Or(r, a, b, all);
    MicroAPI::DataCopy(out + 128, r, all);
    MicroAPI::Sub(r, a, b, all);
    MicroAPI::DataCopy(out + 256, r, all);
    MicroAPI::ShiftRights(r, a, static_cast<int16_t>(4), all);
    MicroAPI::DataCopy(out + 384, r, all);
    MicroAPI::ShiftLefts(r, a, static_cast<int16_t>(8), all);
    MicroAPI::DataCopy(out + 512, r, all);
    MicroAPI::MaskReg lt, ge, both, either;
    MicroAPI::Compare<uint16_t, CMPMODE::LT>(lt, a, b, all);         // i < 240: every lane
    MicroAPI::CompareScalar<uint16_t, CMPMODE::GE>(ge, a, 100, all);  // i >= 100
    MicroAPI::MaskAnd(both, lt, ge, all);
    MicroAPI::Select(r, a, b, both);                                  // i >= 100 ? i : 0xF0
    MicroAPI::DataCopy(out + 640, r, all);
    MicroAPI::CompareScalar<uint16_t, CMPMODE::EQ>(lt, a, 3, all);
    MicroAPI::MaskOr(either, lt, ge, all);
    MicroAPI::Select(r, a, b, either);                                // i == 3 or i >= 100 ? i : 0xF0
    MicroAPI::DataCopy(out + 768, r, all);
    MicroAPI::MaskReg all32 = MicroAPI::CreateMask<uint32_t>();
    MicroAPI::RegTensor<uint32_t> w;
    MicroAPI::Duplicate(w, 0xFFFFFFFFU);
    MicroAPI::Adds(w, w, 2, all32);
    MicroAPI::DataCopy(out32, w, all32);
}

void RegIntLanes(uint32_t)
{
    Ub ub;
    LocalTensor<uint16_t> h = ub.t.ReinterpretCast<uint16_t>();
    VF_CALL<IntLanes>((__local_mem__ uint16_t*)h.GetPhyAddr(), (__local_mem__ uint32_t*)ub.t[512].GetPhyAddr());
    Sync<HardEvent::V_S>();
    Report("and " + std::to_string(h.GetValue(117)) + " or " + std::to_string(h.GetValue(128 + 5)) +
           " sub " + std::to_string(h.GetValue(256 + 127)) + "," + std::to_string(h.GetValue(256 + 16)) +
           " shr " + std::to_string(h.GetValue(384 + 127)) + " shl " + std::to_string(h.GetValue(512 + 127)) +
           " sel " + std::to_string(h.GetValue(640 + 3)) + "," + std::to_string(h.GetValue(640 + 100)) + " or " +
           std::to_string(h.GetValue(768 + 3)) + "," + std::to_string(h.GetValue(768 + 4)) + " adds " +
           std::to_string(ub.t.ReinterpretCast<uint32_t>().GetValue(512)));
}

// half h[i] = i (256 at UB 0): the de-interleaving dual load, Cast<float, half> of the even (ZERO) / odd (ONE)
// lanes, Interleave back to 0..63 / 64..127; float -> fp8 e4m3 (SAT / NO_SAT, RINT) into byte 0 of each 32-bit slot,
// the DIST_PACK4_B32 store; half -> bf16 CAST_TRUNC
void CastLanes(__local_mem__ half* src, __local_mem__ float* outF, __local_mem__ int8_t* out8,
               __local_mem__ uint16_t* outB)
{
    static constexpr MicroAPI::CastTrait zero = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::UNKNOWN,
                                                 MicroAPI::MaskMergeMode::ZEROING, RoundMode::UNKNOWN};
    static constexpr MicroAPI::CastTrait one = {MicroAPI::RegLayout::ONE, MicroAPI::SatMode::UNKNOWN,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::UNKNOWN};
    static constexpr MicroAPI::CastTrait sat = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::SAT,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
    static constexpr MicroAPI::CastTrait noSat = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::NO_SAT,
                                                  MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
    static constexpr MicroAPI::CastTrait trunc = {MicroAPI::RegLayout::UNKNOWN, MicroAPI::SatMode::UNKNOWN,
                                                  MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_TRUNC};
    uint32_t count = 128;
    MicroAPI::MaskReg m16 = MicroAPI::UpdateMask<half>(count);
    MicroAPI::MaskReg all32 = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<half> even, odd;
    MicroAPI::DataCopy<half, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::LoadDist::DIST_DINTLV_B16>(
        even, odd, src, 256);
    MicroAPI::RegTensor<float> f0, f1;
    MicroAPI::Cast<float, half, zero>(f0, even, m16);  // lane j: h[2 * (2j)] = 4j
    MicroAPI::Cast<float, half, one>(f1, even, m16);   // lane j: h[2 * (2j + 1)] = 4j + 2
    MicroAPI::Interleave(f0, f1, f0, f1);              // f0: 0, 2, 4, ..., 126
    MicroAPI::DataCopy(outF, f0, all32);
    MicroAPI::DataCopy(outF + 64, f1, all32);
    MicroAPI::RegTensor<float> big;
    MicroAPI::Duplicate(big, 500.0f);
    MicroAPI::RegTensor<fp8_e4m3fn_t> q;
    int8_t* p = out8;
    MicroAPI::Cast<fp8_e4m3fn_t, float, sat>(q, big, all32);     // 500 -> 448 (0x7E)
    MicroAPI::DataCopy<int8_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK4_B32>(
        p, (MicroAPI::RegTensor<int8_t>&)q, 64, all32);
    MicroAPI::Cast<fp8_e4m3fn_t, float, noSat>(q, big, all32);   // 500 -> NaN (0x7F)
    MicroAPI::DataCopy<int8_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK4_B32>(
        p, (MicroAPI::RegTensor<int8_t>&)q, 64, all32);
    MicroAPI::Cast<fp8_e4m3fn_t, float, sat>(q, f0, all32);      // 0, 2, ..., 126 -> e4m3, RINT
    MicroAPI::DataCopy<int8_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK4_B32>(
        p, (MicroAPI::RegTensor<int8_t>&)q, 64, all32);
    MicroAPI::RegTensor<half> x;
    MicroAPI::Duplicate(x, half(1.0f + 1.0f / 1024.0f) );
    MicroAPI::RegTensor<bfloat16_t> b;
    MicroAPI::Cast<bfloat16_t, half, trunc>(b, x, m16);         // 1 + 2^-10 -> 1.0 (0x3F80)
    MicroAPI::DataCopy(outB, (MicroAPI::RegTensor<uint16_t>&)b, m16);
}

void RegCastLanes(uint32_t)
{
    Ub ub;
    LocalTensor<half> h = ub.t.ReinterpretCast<half>();
    for (uint32_t i = 0; i < 256; ++i) {
        h.SetValue(i, half(static_cast<float>(i)));
    }
    LocalTensor<float> f = ub.t[256].ReinterpretCast<float>();
    LocalTensor<uint8_t> q = ub.t[512].ReinterpretCast<uint8_t>();
    LocalTensor<uint16_t> b = ub.t[640].ReinterpretCast<uint16_t>();
    Sync<HardEvent::S_V>();
    VF_CALL<CastLanes>((__local_mem__ half*)h.GetPhyAddr(), (__local_mem__ float*)f.GetPhyAddr(),
                       (__local_mem__ int8_t*)q.GetPhyAddr(), (__local_mem__ uint16_t*)b.GetPhyAddr());
    Sync<HardEvent::V_S>();
    Report("f " + std::to_string(static_cast<int>(f.GetValue(0))) + "," + std::to_string(static_cast<int>(f.GetValue(1))) +
           "," + std::to_string(static_cast<int>(f.GetValue(63))) + "," + std::to_string(static_cast<int>(f.GetValue(64))) +
           "," + std::to_string(static_cast<int>(f.GetValue(127))) + " q " + Bits(q, 0) + "," + Bits(q, 63) + "," +
           Bits(q, 64) + "," + Bits(q, 128) + "," + Bits(q, 129) + "," + Bits(q, 191) + " bf16 " + Bits(b, 0));
}

// int8 s[i] = i - 64 (128 at UB 0): the DIST_UNPACK_B8 load, Cast<half, int8_t> (ZERO) and Cast<float, half> of the
// even (ZERO) / odd (ONE) lanes, the DIST_INTLV_B32 dual store of the two (floats s[0..127] in order at UB 1024), the
// DIST_DINTLV_B32 dual load of them back (even / odd) and their DIST_INTLV_B32 store at UB 2048 (the inverse)
void UnpackInterleave(__local_mem__ int8_t* src, __local_mem__ float* out, __local_mem__ float* out2)
{
    static constexpr MicroAPI::CastTrait zero = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::UNKNOWN,
                                                 MicroAPI::MaskMergeMode::ZEROING, RoundMode::UNKNOWN};
    static constexpr MicroAPI::CastTrait one = {MicroAPI::RegLayout::ONE, MicroAPI::SatMode::UNKNOWN,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::UNKNOWN};
    MicroAPI::MaskReg m16 = MicroAPI::CreateMask<half>();
    MicroAPI::MaskReg m32 = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<int8_t> b;
    MicroAPI::DataCopy<int8_t, MicroAPI::LoadDist::DIST_UNPACK_B8>(b, src);
    MicroAPI::RegTensor<half> h;
    MicroAPI::Cast<half, int8_t, zero>(h, b, m16);
    MicroAPI::RegTensor<float> even, odd;
    MicroAPI::Cast<float, half, zero>(even, h, m16);
    MicroAPI::Cast<float, half, one>(odd, h, m16);
    MicroAPI::DataCopy<float, MicroAPI::StoreDist::DIST_INTLV_B32>(out, even, odd, m32);
    MicroAPI::RegTensor<float> e2, o2;
    MicroAPI::DataCopy<float, MicroAPI::LoadDist::DIST_DINTLV_B32>(e2, o2, out);
    MicroAPI::DataCopy<float, MicroAPI::StoreDist::DIST_INTLV_B32>(out2, e2, o2, m32);
}

void RegUnpackInterleave(uint32_t)
{
    Ub ub;
    LocalTensor<int8_t> s = ub.t.ReinterpretCast<int8_t>();
    for (uint32_t i = 0; i < 128; ++i) {
        s.SetValue(i, static_cast<int8_t>(static_cast<int32_t>(i) - 64));
    }
    LocalTensor<float> f = ub.t[256].ReinterpretCast<float>();
    LocalTensor<float> g = ub.t[512].ReinterpretCast<float>();
    Sync<HardEvent::S_V>();
    VF_CALL<UnpackInterleave>((__local_mem__ int8_t*)s.GetPhyAddr(), (__local_mem__ float*)f.GetPhyAddr(),
                              (__local_mem__ float*)g.GetPhyAddr());
    Sync<HardEvent::V_S>();
    std::string v = "f";
    for (uint32_t i : {0U, 1U, 2U, 63U, 64U, 127U}) {
        v += " " + std::to_string(static_cast<int>(f.GetValue(i)));
    }
    v += " g";
    for (uint32_t i : {0U, 1U, 127U}) {
        v += " " + std::to_string(static_cast<int>(g.GetValue(i)));
    }
    Report(v);
}

// the odd byte of an unpacked slot is never written; a dual store under a partial mask
void UnpackOddByte(__local_mem__ int8_t* x)
{
    MicroAPI::MaskReg m8 = MicroAPI::CreateMask<int8_t>();
    MicroAPI::RegTensor<int8_t> b;
    MicroAPI::DataCopy<int8_t, MicroAPI::LoadDist::DIST_UNPACK_B8>(b, x);
    MicroAPI::DataCopy(x + 256, b, m8);
}
void IntlvPartialMask(__local_mem__ float* x)
{
    uint32_t n = 10;
    MicroAPI::MaskReg m = MicroAPI::UpdateMask<float>(n);
    MicroAPI::RegTensor<float> a;
    MicroAPI::Duplicate(a, 1.0f);
    MicroAPI::DataCopy<float, MicroAPI::StoreDist::DIST_INTLV_B32>(x, a, a, m);
}

// uint16 u[i] = i % 16 + 16 * (i / 16) (256 at UB 0, the same as i): ReduceMaxWithDataBlock of the first 128 lanes
// (block maxima 15, 31, ..., 127), two DataCopyUnAlign stores of its 8 lanes at an unaligned address (UB 2 elements
// in) and the Post; the DIST_E2B_B16 load of 8 elements broadcasting each to its block, the post-updating
// DIST_NORM load, the DIST_PACK_B16 store (the low bytes) and the post-updating DIST_NORM store
void BlockLanes(__local_mem__ uint16_t* src, __local_mem__ uint16_t* out, __local_mem__ uint16_t* out2)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<uint16_t>();
    MicroAPI::RegTensor<uint16_t> v, m, e;
    uint16_t* p = src;
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(v, p, 128);
    MicroAPI::ReduceMaxWithDataBlock(m, v, all);
    MicroAPI::UnalignReg u;
    uint16_t* q = out + 2;
    MicroAPI::DataCopyUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(q, m, u, 8);
    MicroAPI::DataCopyUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(q, m, u, 8);
    MicroAPI::DataCopyUnAlignPost(q, u, 0);
    uint16_t* s = src + 8;  // 16 bytes in: the E2B load reads 8 elements, 16-byte aligned
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::LoadDist::DIST_E2B_B16>(e, s, 8);
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::LoadDist::DIST_E2B_B16>(e, s, 8);
    uint16_t* o = out2;
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(o, e, 128, all);  // 16..23, each x16
    MicroAPI::DataCopy(v, p);                                                             // u[128..255]
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK_B16>(
        o, v, 64, all);                                                                   // their low bytes
}

void RegBlockLanes(uint32_t)
{
    Ub ub;
    LocalTensor<uint16_t> h = ub.t.ReinterpretCast<uint16_t>();
    for (uint32_t i = 0; i < 256; ++i) {
        h.SetValue(i, static_cast<uint16_t>(i));
    }
    for (uint32_t i = 256; i < 320; ++i) {
        h.SetValue(i, 0xFFFF);
    }
    LocalTensor<uint16_t> out = h[256];
    LocalTensor<uint16_t> out2 = h[512];
    Sync<HardEvent::S_V>();
    VF_CALL<BlockLanes>((__local_mem__ uint16_t*)h.GetPhyAddr(), (__local_mem__ uint16_t*)out.GetPhyAddr(),
                        (__local_mem__ uint16_t*)out2.GetPhyAddr());
    Sync<HardEvent::V_S>();
    LocalTensor<uint8_t> packed = out2[128].ReinterpretCast<uint8_t>();
    Report("blk " + Ints(out, 19) + " e2b " + std::to_string(out2.GetValue(0)) + "," + std::to_string(out2.GetValue(15)) +
           "," + std::to_string(out2.GetValue(16)) + "," + std::to_string(out2.GetValue(127)) + " pack " +
           std::to_string(packed.GetValue(0)) + "," + std::to_string(packed.GetValue(127)));
}

// bf16 -> fp4x2 e2m1 (RegLayout ZERO, CAST_RINT): b16 lanes 2j / 2j + 1 become the low / high nibble of byte 0 of
// 32-bit slot j; the DIST_PACK4_B32 store writes those bytes packed. Lanes: 0.5, 1.0, 1.25 (RINT to 1.0), 6.0,
// 7.0 (saturates to 6.0), -2.0, then 0
void Fp4Lanes(__local_mem__ uint16_t* src, __local_mem__ int8_t* out)
{
    static constexpr MicroAPI::CastTrait fp4 = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::UNKNOWN,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
    MicroAPI::MaskReg all = MicroAPI::CreateMask<bfloat16_t>();
    MicroAPI::RegTensor<uint16_t> raw;
    MicroAPI::DataCopy(raw, src);
    MicroAPI::RegTensor<fp4x2_e2m1_t> q;
    MicroAPI::Cast<fp4x2_e2m1_t, bfloat16_t, fp4>(q, (MicroAPI::RegTensor<bfloat16_t>&)raw, all);
    int8_t* p = out;
    MicroAPI::DataCopy<int8_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK4_B32>(
        p, (MicroAPI::RegTensor<int8_t>&)q, 64, all);
}

void RegFp4Lanes(uint32_t)
{
    Ub ub;
    LocalTensor<bfloat16_t> b = ub.t.ReinterpretCast<bfloat16_t>();
    const float v[6] = {0.5f, 1.0f, 1.25f, 6.0f, 7.0f, -2.0f};
    for (uint32_t i = 0; i < 128; ++i) {
        b.SetValue(i, bfloat16_t(i < 6 ? v[i] : 0.0f));
    }
    LocalTensor<uint8_t> q = ub.t[256].ReinterpretCast<uint8_t>();
    Sync<HardEvent::S_V>();
    VF_CALL<Fp4Lanes>((__local_mem__ uint16_t*)b.GetPhyAddr(), (__local_mem__ int8_t*)q.GetPhyAddr());
    Sync<HardEvent::V_S>();
    Report("fp4 " + Bits(q, 0) + "," + Bits(q, 1) + "," + Bits(q, 2) + "," + Bits(q, 63));
}

// ---- MicroAPI quantising calls: misuses that fault ---------------------------------------------------------------
void MixedMask(__local_mem__ float* x)
{
    uint32_t three = 3;
    MicroAPI::MaskReg m16 = MicroAPI::UpdateMask<half>(three);  // half lanes 0..2: 32-bit lane 1 half on
    MicroAPI::RegTensor<float> v;
    MicroAPI::DataCopy(v, x);
    MicroAPI::Abs(v, v, m16);
}
void NoLaneReduceMax(__local_mem__ float* x)
{
    uint32_t none = 0;
    MicroAPI::MaskReg m = MicroAPI::UpdateMask<float>(none);
    MicroAPI::RegTensor<float> v;
    MicroAPI::DataCopy(v, x);
    MicroAPI::ReduceMax(v, v, m);
}
void NanMax(__local_mem__ float* x)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<float> v, n;
    MicroAPI::DataCopy(v, x);
    MicroAPI::Duplicate(n, std::nanf(""));
    MicroAPI::Max(v, v, n, all);
}
void UnalignNoPost(__local_mem__ uint16_t* x)
{
    MicroAPI::RegTensor<uint16_t> v;
    MicroAPI::Duplicate(v, static_cast<uint16_t>(1));
    MicroAPI::UnalignReg u;
    uint16_t* p = x + 1;
    MicroAPI::DataCopyUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(p, v, u, 8);
}
void PostNoStore(__local_mem__ uint16_t* x)
{
    MicroAPI::UnalignReg u;
    uint16_t* p = x;
    MicroAPI::DataCopyUnAlignPost(p, u, 0);
}
void UnalignTooMany(__local_mem__ uint16_t* x)
{
    MicroAPI::RegTensor<uint16_t> v;
    MicroAPI::Duplicate(v, static_cast<uint16_t>(1));
    MicroAPI::UnalignReg u;
    uint16_t* p = x;
    MicroAPI::DataCopyUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(p, v, u, 200);
    MicroAPI::DataCopyUnAlignPost(p, u, 0);
}
void DintlvPastUb(__local_mem__ half* x)
{
    MicroAPI::RegTensor<half> a, b;
    half* p = x;
    MicroAPI::DataCopy<half, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::LoadDist::DIST_DINTLV_B16>(a, b, p, 256);
}
void PackUnaligned(__local_mem__ int8_t* x)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<int8_t> v;
    MicroAPI::Duplicate(v, static_cast<int8_t>(1));
    int8_t* p = x + 16;
    MicroAPI::DataCopy<int8_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK4_B32>(
        p, v, 64, all);
}
void E2bUnaligned(__local_mem__ uint16_t* x)
{
    MicroAPI::RegTensor<uint16_t> v;
    uint16_t* p = x + 4;
    MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::LoadDist::DIST_E2B_B16>(v, p, 8);
}
void SatNan(__local_mem__ float*)
{
    static constexpr MicroAPI::CastTrait sat = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::SAT,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<float> n;
    MicroAPI::Duplicate(n, std::nanf(""));
    MicroAPI::RegTensor<fp8_e4m3fn_t> q;
    MicroAPI::Cast<fp8_e4m3fn_t, float, sat>(q, n, all);
}
void UnknownRound(__local_mem__ float*)
{
    static constexpr MicroAPI::CastTrait unknown = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::SAT,
                                                    MicroAPI::MaskMergeMode::ZEROING, RoundMode::UNKNOWN};
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<float> v;
    MicroAPI::Duplicate(v, 1.0f);
    MicroAPI::RegTensor<fp8_e4m3fn_t> q;
    MicroAPI::Cast<fp8_e4m3fn_t, float, unknown>(q, v, all);
}
void NarrowUnwritten(__local_mem__ int8_t* x)
{
    static constexpr MicroAPI::CastTrait sat = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::SAT,
                                                MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::MaskReg all8 = MicroAPI::CreateMask<int8_t>();
    MicroAPI::RegTensor<float> v;
    MicroAPI::Duplicate(v, 1.0f);
    MicroAPI::RegTensor<fp8_e4m3fn_t> q;
    MicroAPI::Cast<fp8_e4m3fn_t, float, sat>(q, v, all);
    MicroAPI::DataCopy(x, (MicroAPI::RegTensor<int8_t>&)q, all8);  // bytes 1..3 of each slot: never written
}
void ShiftTooFar(__local_mem__ uint16_t*)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<uint16_t>();
    MicroAPI::RegTensor<uint16_t> v;
    MicroAPI::Duplicate(v, static_cast<uint16_t>(1));
    MicroAPI::ShiftRights(v, v, static_cast<int16_t>(16), all);
}
void MulsUnwritten(__local_mem__ float*)
{
    MicroAPI::MaskReg all = MicroAPI::CreateMask<float>();
    MicroAPI::RegTensor<float> v;
    MicroAPI::Muls(v, v, 2.0f, all);
}
// One misuse per call: an unwritten source register (w: never written), a mask made for wider elements (m32 on
// 16-bit lanes), a misaligned or past-the-UB address
#define OPGEN_REG_MISUSE(NAME, ...)                                                                      \
    void NAME(__local_mem__ uint16_t* x)                                                                 \
    {                                                                                                    \
        (void)x;                                                                                         \
        MicroAPI::MaskReg all = MicroAPI::CreateMask<uint16_t>();                                        \
        MicroAPI::MaskReg m32 = MicroAPI::CreateMask<uint32_t>();                                        \
        MicroAPI::MaskReg allF = MicroAPI::CreateMask<float>();                                          \
        MicroAPI::RegTensor<uint16_t> w, d, one;                                                          \
        MicroAPI::RegTensor<float> wf, df, onef;                                                          \
        MicroAPI::Duplicate(one, static_cast<uint16_t>(1));                                              \
        MicroAPI::Duplicate(onef, 1.0f);                                                                 \
        (void)all, (void)m32, (void)allF;                                                                \
        __VA_ARGS__;                                                                                     \
    }
OPGEN_REG_MISUSE(MisSub, MicroAPI::Sub(d, w, one, all))
OPGEN_REG_MISUSE(MisMul, MicroAPI::Mul(df, wf, onef, allF))
OPGEN_REG_MISUSE(MisDiv, MicroAPI::Div(df, onef, wf, allF))
OPGEN_REG_MISUSE(MisMin, MicroAPI::Min(d, one, one, m32))
OPGEN_REG_MISUSE(MisAnd, MicroAPI::And(d, one, w, all))
OPGEN_REG_MISUSE(MisOr, MicroAPI::Or(d, one, one, m32))
OPGEN_REG_MISUSE(MisAdds, MicroAPI::Adds(d, w, 1, all))
OPGEN_REG_MISUSE(MisAddF, MicroAPI::Add(df, onef, wf, allF))
OPGEN_REG_MISUSE(MisShiftLefts, MicroAPI::ShiftLefts(d, one, static_cast<int16_t>(-1), all))
OPGEN_REG_MISUSE(MisCompare, MicroAPI::MaskReg c; MicroAPI::Compare<uint16_t, CMPMODE::LT>(c, one, w, all))
OPGEN_REG_MISUSE(MisCompareScalar, MicroAPI::MaskReg c; MicroAPI::CompareScalar<uint16_t, CMPMODE::GT>(c, one, 0, m32))
OPGEN_REG_MISUSE(MisSelect, MicroAPI::Select(d, w, one, all))
OPGEN_REG_MISUSE(MisMaskOr, MicroAPI::MaskReg never; MicroAPI::MaskOr(all, all, never, all))
OPGEN_REG_MISUSE(MisInterleave, MicroAPI::Interleave(d, one, w, one))
OPGEN_REG_MISUSE(MisBlockMax, uint32_t n = 16; MicroAPI::MaskReg m = MicroAPI::UpdateMask<uint16_t>(n);
                 MicroAPI::ReduceMaxWithDataBlock(d, one, m))
OPGEN_REG_MISUSE(MisDupLane, MicroAPI::Duplicate(d, w, all))
OPGEN_REG_MISUSE(MisPackB16, uint16_t* p = x + 8;
                 MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE, MicroAPI::StoreDist::DIST_PACK_B16>(
                     p, one, 64, all))
OPGEN_REG_MISUSE(MisPostLoad, uint16_t* p = x + 1;
                 MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(d, p, 128))
OPGEN_REG_MISUSE(MisPostStore, uint16_t* p = x;
                 MicroAPI::DataCopy<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(p, w, 128, all))
OPGEN_REG_MISUSE(MisLoadAlign, uint16_t* p = x + 4;
                 MicroAPI::LoadAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(d, p, 128))
OPGEN_REG_MISUSE(MisStoreAlign, MicroAPI::StoreAlign<uint16_t, MicroAPI::StoreDist::DIST_PACK_B16>(x, one, m32))
OPGEN_REG_MISUSE(MisStoreUnAlign, MicroAPI::UnalignReg u; uint16_t* p = x + 1;
                 MicroAPI::StoreUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(p, w, u, 4);
                 MicroAPI::StoreUnAlignPost(p, u, 0))
OPGEN_REG_MISUSE(MisStoreUnAlignPost, MicroAPI::UnalignReg u; uint16_t* p = x; MicroAPI::StoreUnAlignPost(p, u, 0))
OPGEN_REG_MISUSE(MisUnAlignOdd, MicroAPI::UnalignReg u; uint8_t* b = reinterpret_cast<uint8_t*>(x) + 1;
                 uint16_t* p = reinterpret_cast<uint16_t*>(b);
                 MicroAPI::DataCopyUnAlign<uint16_t, MicroAPI::PostLiteral::POST_MODE_UPDATE>(p, one, u, 4);
                 MicroAPI::DataCopyUnAlignPost(p, u, 0))
OPGEN_REG_MISUSE(MisFp4Cast, static constexpr MicroAPI::CastTrait t = {MicroAPI::RegLayout::ZERO, MicroAPI::SatMode::UNKNOWN,
                                                                       MicroAPI::MaskMergeMode::ZEROING, RoundMode::CAST_RINT};
                 MicroAPI::RegTensor<bfloat16_t> b; MicroAPI::RegTensor<fp4x2_e2m1_t> q;
                 MicroAPI::Cast<fp4x2_e2m1_t, bfloat16_t, t>(q, b, all))
#undef OPGEN_REG_MISUSE

void MaskAndWidths(__local_mem__ uint16_t*)
{
    MicroAPI::MaskReg a = MicroAPI::CreateMask<uint16_t>();
    MicroAPI::MaskReg b = MicroAPI::CreateMask<uint32_t>();
    MicroAPI::MaskAnd(a, a, b, a);
}

template <auto F, typename T>
void RunAt(uint32_t elementOffset)
{
    Ub ub;
    for (uint32_t i = 0; i < 1024; ++i) {
        ub.t.SetValue(i, 0);
    }
    Sync<HardEvent::S_V>();
    VF_CALL<F>((__local_mem__ T*)ub.t.ReinterpretCast<T>()[elementOffset].GetPhyAddr());
}

void DintlvPastUbCase(uint32_t)
{
    VF_CALL<DintlvPastUb>((__local_mem__ half*)(uintptr_t)(TOTAL_UB_SIZE - 256));
}

// ---- TILING_KEY_IS in a binary built for key 10011 ----------------------------------------------------------------
void TilingKeyIs(uint32_t)
{
    opgen_sim::t_tilingKeyTaken = false;
    const bool other = TILING_KEY_IS(10000);
    const bool before = opgen_sim::t_tilingKeyTaken;
    const bool mine = TILING_KEY_IS(10011);
    Report("10000 " + std::to_string(other) + " taken " + std::to_string(before) + " 10011 " + std::to_string(mine) +
           " taken " + std::to_string(opgen_sim::t_tilingKeyTaken) + " var " + std::to_string(TILING_KEY_VAR));
}

// ---- adv_api ReduceSum (AR / RA), TBufPool, the loop mode of DataCopyPad ---------------------------------------
template <class P>
void ReduceSum2x3(const std::vector<float>& values)
{
    Ub ub;
    LocalTensor<float> x = ub.t.ReinterpretCast<float>();
    LocalTensor<float> y = ub.t[256].ReinterpretCast<float>();
    for (uint32_t i = 0; i < values.size(); ++i) {
        x.SetValue(i, values[i]);
    }
    Sync<HardEvent::S_V>();
    const uint32_t shape[] = {2U, 3U};
    ReduceSum<float, P, true>(y, x, shape, false);
    Sync<HardEvent::V_S>();
    const uint32_t n = std::is_same<P, Pattern::Reduce::AR>::value ? 2U : 3U;
    std::string s;
    for (uint32_t i = 0; i < n; ++i) {
        s += (i ? "," : "") + std::to_string(y.GetValue(i));
    }
    Report(s);
}

void BufPools(uint32_t overrun)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> first;
    pipe.InitBuffer(first, 64);
    TBufPool<TPosition::VECIN> pool0;
    TBufPool<TPosition::VECIN> pool1;
    pipe.InitBufPool(pool0, 1024);
    pipe.InitBufPool(pool1, 1024, pool0);
    TQue<TPosition::VECIN, 1> que;
    TBuf<TPosition::VECCALC> shared;
    pool0.InitBuffer(que, 2, 512);
    pool1.InitBuffer(shared, 1024);
    LocalTensor<int32_t> a = que.AllocTensor<int32_t>();
    LocalTensor<int32_t> b = shared.Get<int32_t>();
    TBuf<TPosition::VECCALC> after;
    pipe.InitBuffer(after, 32);
    if (overrun != 0U) {
        TBuf<TPosition::VECCALC> more;
        pool0.InitBuffer(more, 32);  // pool0's 1024 bytes are the queue's
    }
    Report("que " + std::to_string(a.SimOffset()) + " shared " + std::to_string(b.SimOffset()) + " after " +
           std::to_string(after.Get<int32_t>().SimOffset()));
}

// GM int32 0..15; a Compact DataCopyPad of 4 blocks of 4 bytes, 12 bytes apart in GM (elements 0, 4, 8, 12), lands
// packed in UB; the UB's elements 4.. keep -1; back to GM elements 16.. packed with a Compact UB->GM copy of 2 blocks
// of 8 bytes from UB elements 0..3, 8 bytes apart in GM
void CompactCopies(uint32_t)
{
    Ub ub;
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm), 1024);
    for (int32_t i = 0; i < 32; ++i) {
        gm.SetValue(i, i < 16 ? i : -1);
        ub.t.SetValue(i, -1);
    }
    Sync<HardEvent::S_MTE2>();
    DataCopyPad<int32_t, PaddingMode::Compact>(ub.t, gm, {4, 4, 12, 5, 0}, {true, 1, 1, 7});
    Sync<HardEvent::MTE2_MTE3>();
    DataCopyPad<int32_t, PaddingMode::Compact>(gm[16], ub.t, {2, 8, 0, 8, 0});
    Sync<HardEvent::MTE3_S>();
    Sync<HardEvent::MTE2_S>();
    GlobalTensor<int64_t> wide = gm.ReinterpretCast<int64_t>();
    Report("ub " + Ints(ub.t, 6) + " gm " + Ints(gm[16], 6) + " wide " + std::to_string(wide.GetSize()) + " " +
           std::to_string(wide.GetValue(0) == ((int64_t{1} << 32) | 0) ? 1 : 0));
}

// Cast int32_t -> int64_t (CAST_NONE, 3510): sign extension
void CastInt64(uint32_t)
{
    Ub ub;
    ub.t.SetValue(0, -5);
    ub.t.SetValue(1, 2147483647);
    Sync<HardEvent::S_V>();
    LocalTensor<int64_t> wide = ub.t[64].ReinterpretCast<int64_t>();
    Cast(wide, ub.t, RoundMode::CAST_NONE, 2);
    Sync<HardEvent::V_S>();
    Report(std::to_string(wide.GetValue(0)) + " " + std::to_string(wide.GetValue(1)));
}

// the CCU server of HCCL (Ascend 950's CCU kernels): not modelled, its InitV2 faults
void HcclCcu(uint32_t)
{
    Hccl<HcclServerType::HCCL_SERVER_TYPE_CCU> hccl;
    hccl.InitV2(nullptr, nullptr);
}

void LoopModePara(uint32_t)
{
    LoopModeParams loop;
    loop.loop1Size = 2;
    SetLoopModePara(loop, DataCopyMVType::OUT_TO_UB);
}
#endif

const std::map<std::string, std::function<void(uint32_t)>>& Cases()
{
    static const std::map<std::string, std::function<void(uint32_t)>> cases = {
        {"gathermask_zero_repeats", GatherMaskZeroRepeats},
        {"sum_one_row_inner_unaligned", [](uint32_t) { SumOneRow(1U); }},
        {"sum_two_rows_inner_unaligned", [](uint32_t) { SumOneRow(2U); }},
        {"reduce_sum_300_repeats", [](uint32_t) { ReduceSumRepeats(300U, false); }},
        {"reduce_sum_inexact_repeat", [](uint32_t) { ReduceSumRepeats(2U, true); }},
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        {"reg_row_sums", RegRowSums},
        {"reg_mask_lanes", RegMaskLanes},
        {"reg_unaligned_load", RegUnalignedLoad},
        {"reg_load_past_ub", RegLoadPastUb},
        {"reg_unwritten_lane", RegUnwrittenLane},
        {"reg_mask_width", RegMaskWidth},
        {"reg_histograms", RegHistograms},
        {"reg_mask_pattern", RegMaskPattern},
        {"reg_store_then_scalar_read", RegStoreThenScalarRead},
        {"tiling_key_is", TilingKeyIs},
        {"reduce_sum_ar", [](uint32_t) { ReduceSum2x3<Pattern::Reduce::AR>({1, 2, 3, 4, 5, 6}); }},
        {"reduce_sum_ra", [](uint32_t) { ReduceSum2x3<Pattern::Reduce::RA>({1, 2, 3, 4, 5, 6}); }},
        {"reduce_sum_inexact", [](uint32_t) { ReduceSum2x3<Pattern::Reduce::AR>({1, 1e-10f, -1, 4, 5, 6}); }},
        {"buf_pools", [](uint32_t) { BufPools(0U); }},
        {"buf_pool_overrun", [](uint32_t) { BufPools(1U); }},
        {"loop_mode_para", LoopModePara},
        {"hccl_ccu", HcclCcu},
        {"compact_copies", CompactCopies},
        {"reg_float_lanes", RegFloatLanes},
        {"reg_int_lanes", RegIntLanes},
        {"reg_cast_lanes", RegCastLanes},
        {"reg_block_lanes", RegBlockLanes},
        {"reg_fp4_lanes", RegFp4Lanes},
        {"reg_unpack_interleave", RegUnpackInterleave},
        {"reg_unpack_odd_byte", [](uint32_t) { RunAt<UnpackOddByte, int8_t>(0); }},
        {"reg_intlv_partial_mask", [](uint32_t) { RunAt<IntlvPartialMask, float>(0); }},
        {"reg_mixed_mask", [](uint32_t) { RunAt<MixedMask, float>(0); }},
        {"reg_reduce_max_no_lane", [](uint32_t) { RunAt<NoLaneReduceMax, float>(0); }},
        {"reg_max_nan", [](uint32_t) { RunAt<NanMax, float>(0); }},
        {"reg_unalign_no_post", [](uint32_t) { RunAt<UnalignNoPost, uint16_t>(0); }},
        {"reg_post_no_store", [](uint32_t) { RunAt<PostNoStore, uint16_t>(0); }},
        {"reg_unalign_too_many", [](uint32_t) { RunAt<UnalignTooMany, uint16_t>(0); }},
        {"reg_dintlv_past_ub", DintlvPastUbCase},
        {"reg_pack_unaligned", [](uint32_t) { RunAt<PackUnaligned, int8_t>(0); }},
        {"reg_e2b_unaligned", [](uint32_t) { RunAt<E2bUnaligned, uint16_t>(0); }},
        {"reg_cast_sat_nan", [](uint32_t) { RunAt<SatNan, float>(0); }},
        {"reg_cast_unknown_round", [](uint32_t) { RunAt<UnknownRound, float>(0); }},
        {"reg_narrow_unwritten", [](uint32_t) { RunAt<NarrowUnwritten, int8_t>(0); }},
        {"reg_shift_too_far", [](uint32_t) { RunAt<ShiftTooFar, uint16_t>(0); }},
        {"reg_muls_unwritten", [](uint32_t) { RunAt<MulsUnwritten, float>(0); }},
        {"reg_mis_sub", [](uint32_t) { RunAt<MisSub, uint16_t>(0); }},
        {"reg_mis_mul", [](uint32_t) { RunAt<MisMul, uint16_t>(0); }},
        {"reg_mis_div", [](uint32_t) { RunAt<MisDiv, uint16_t>(0); }},
        {"reg_mis_min", [](uint32_t) { RunAt<MisMin, uint16_t>(0); }},
        {"reg_mis_and", [](uint32_t) { RunAt<MisAnd, uint16_t>(0); }},
        {"reg_mis_or", [](uint32_t) { RunAt<MisOr, uint16_t>(0); }},
        {"reg_mis_adds", [](uint32_t) { RunAt<MisAdds, uint16_t>(0); }},
        {"reg_mis_add_f", [](uint32_t) { RunAt<MisAddF, uint16_t>(0); }},
        {"reg_mis_shift_lefts", [](uint32_t) { RunAt<MisShiftLefts, uint16_t>(0); }},
        {"reg_mis_compare", [](uint32_t) { RunAt<MisCompare, uint16_t>(0); }},
        {"reg_mis_compare_scalar", [](uint32_t) { RunAt<MisCompareScalar, uint16_t>(0); }},
        {"reg_mis_select", [](uint32_t) { RunAt<MisSelect, uint16_t>(0); }},
        {"reg_mis_mask_or", [](uint32_t) { RunAt<MisMaskOr, uint16_t>(0); }},
        {"reg_mis_interleave", [](uint32_t) { RunAt<MisInterleave, uint16_t>(0); }},
        {"reg_mis_block_max", [](uint32_t) { RunAt<MisBlockMax, uint16_t>(0); }},
        {"reg_mis_dup_lane", [](uint32_t) { RunAt<MisDupLane, uint16_t>(0); }},
        {"reg_mis_pack_b16", [](uint32_t) { RunAt<MisPackB16, uint16_t>(0); }},
        {"reg_mis_post_load", [](uint32_t) { RunAt<MisPostLoad, uint16_t>(0); }},
        {"reg_mis_post_store", [](uint32_t) { RunAt<MisPostStore, uint16_t>(0); }},
        {"reg_mis_load_align", [](uint32_t) { RunAt<MisLoadAlign, uint16_t>(0); }},
        {"reg_mis_store_align", [](uint32_t) { RunAt<MisStoreAlign, uint16_t>(0); }},
        {"reg_mis_store_un_align", [](uint32_t) { RunAt<MisStoreUnAlign, uint16_t>(0); }},
        {"reg_mis_store_un_align_post", [](uint32_t) { RunAt<MisStoreUnAlignPost, uint16_t>(0); }},
        {"reg_mis_un_align_odd", [](uint32_t) { RunAt<MisUnAlignOdd, uint16_t>(0); }},
        {"reg_mis_fp4_cast", [](uint32_t) { RunAt<MisFp4Cast, uint16_t>(0); }},
        {"reg_mask_and_widths", [](uint32_t) { RunAt<MaskAndWidths, uint16_t>(0); }},
        {"cast_int64", CastInt64},
#endif
    };
    return cases;
}
}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2 || Cases().count(argv[1]) == 0U) {
        std::fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 3;
    }
    opgen_sim::World world;
    world.ubBytes = TOTAL_UB_SIZE;
    world.timeoutSeconds = 1.0;
    world.ranks = std::vector<opgen_sim::RankState>(1);
    world.ranks[0].blockDim = 1;
    world.regions.push_back({reinterpret_cast<uintptr_t>(g_gm), sizeof(g_gm), "gm",
                             std::make_shared<opgen_sim::WriteLog>()});
    opgen_sim::RunWorld(world, Cases().at(argv[1]));
    for (const std::string& v : g_values) {
        std::printf("value %s\n", v.c_str());
    }
    for (const std::string& f : world.faults) {
        std::printf("fault %s\n", f.c_str());
    }
    return world.faults.empty() ? 0 : 1;
}
