/**
 * The register-based vector API of __NPU_ARCH__ 3510 (asc-devkit include/basic_api/reg_compute/, namespace AscendC::Reg,
 * aliased AscendC::MicroAPI by impl/basic_api/kernel_macros.h): the subset the real Ascend 950 kernels
 * call through mc2/moe_distribute_dispatch_setup/op_kernel/common.h.
 *
 * A vector function (`VF_CALL<f>(args...)`, `__VEC_SCOPE__`) addresses the UB through `__local_mem__` pointers
 * (`__ubuf__`): on the device their value is the UB byte address, what `LocalTensor::GetPhyAddr()` returns, and the
 * twin keeps it so: a pointer here is never dereferenced, each register load / store translates its value into the
 * calling core's UB, bounded by the UB (the device knows no other bound), 32-byte aligned as `LoadAlign` /
 * `StoreAlign` (vld / vsts) need, and recorded for the cross-pipe hazard check on PIPE_V.
 *
 * A RegTensor<T> holds VECTOR_REG_WIDTH (256) bytes; the twin marks which lanes were ever written and faults on an
 * active lane read before any write (a fresh register's content is not defined). A MaskReg is a predicate over the
 * lanes of the element width it was made for (UpdateMask<T> / CreateMask<T>): plt_b<N> makes min(count, lanes)
 * lanes active and post-decrements count (POST_UPDATE), pset_b<N> the lanes of its pattern; used on wider elements
 * it predicates a lane by the lanes it covers when they agree (LanesOf), anything else faults. Operations are ZEROING (every reg_compute operation the kernels use
 * defaults to MaskMergeMode::ZEROING): an inactive lane of the destination becomes 0.
 *
 * What no public header or document gives the semantics of faults naming the call instead of being imitated:
 * `Histograms` (dhistv2 / chistv2), the mask patterns M3 / M4 / H / Q / ALLF, a float `ReduceSum` (the order of
 * vcadd's additions).
 */
#ifndef OPGEN_SIM_REG_H
#define OPGEN_SIM_REG_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "opgen_sim/hazard.h"
#include "opgen_sim/numeric.h"
#include "opgen_sim/world.h"

// include/basic_api/reg_compute/kernel_reg_compute_common_intf.h: `#define __local_mem__ __ubuf__`; the CPU-debug
// stub_def.h defines __ubuf__ and __VEC_SCOPE__ empty.
#ifndef __ubuf__
#define __ubuf__
#endif
#define __local_mem__ __ubuf__
#define __VEC_SCOPE__
#define __simd_callee__
#define __simd_vf__

namespace AscendC {

// impl/basic_api/utils/kernel_utils_constants.h (3510)
const uint32_t VECTOR_REG_WIDTH = 256;

// include/basic_api/kernel_operator_sys_var_intf.h: VECTOR_REG_WIDTH on 3510
__aicore__ inline constexpr uint32_t GetVecLen()
{
    return VECTOR_REG_WIDTH;
}

namespace Reg {

// include/basic_api/reg_compute/kernel_reg_compute_utils.h
enum class MaskMergeMode { UNKNOWN, MERGING, ZEROING };
enum class HistogramsBinType { BIN0 = 0, BIN1, BIN2, BIN3, BIN4, BIN5, BIN6, BIN7 };
enum class HistogramsType { FREQUENCY = 0, ACCUMULATE };
enum class HighLowPart { LOWEST, HIGHEST };
enum class PostLiteral { POST_MODE_NORMAL, POST_MODE_UPDATE };
enum class MaskPattern { ALL, VL1, VL2, VL3, VL4, VL8, VL16, VL32, VL64, VL128, M3, M4, H, Q, ALLF = 15 };
enum class LoadDist {
    DIST_NORM,
    DIST_BRC_B8,
    DIST_BRC_B16,
    DIST_BRC_B32,
    DIST_US_B8 = 6,
    DIST_US_B16,
    DIST_DS_B8,
    DIST_DS_B16,
    DIST_BDINTLV,
    DIST_DINTLV_B8,
    DIST_DINTLV_B16,
    DIST_UNPACK_B8,
    DIST_UNPACK_B16,
    DIST_BLK,
    DIST_E2B_B16,
    DIST_E2B_B32,
    DIST_UNPACK_B32,
    DIST_DINTLV_B32,
    DIST_UNPACK4_B8,
    DIST_SPLT4CHN_B8,
    DIST_SPLT2CHN_B8,
    DIST_SPLT2CHN_B16
};
enum class StoreDist {
    DIST_NORM_B8,
    DIST_NORM_B16,
    DIST_NORM_B32,
    DIST_FIRST_ELEMENT_B8,
    DIST_FIRST_ELEMENT_B16,
    DIST_FIRST_ELEMENT_B32,
    DIST_PACK_B16,
    DIST_PACK_B32,
    DIST_INTLV_B8,
    DIST_INTLV_B16,
    DIST_PACK_B64,
    DIST_INTLV_B32,
    DIST_PACK4_B32,
    DIST_MRG4CHN_B8,
    DIST_MRG2CHN_B8,
    DIST_MRG2CHN_B16,
    DIST_NORM
};

template <typename T>
struct RegTensor {
    using ActualT = T;
    static constexpr uint32_t LANES = VECTOR_REG_WIDTH / sizeof(T);
    T lane[LANES];
    // twin only: whether an instruction wrote each byte (bytes, so that a register reinterpreted as another
    // element type, `(RegTensor<uint16_t>&)reg` as the kernels do, keeps what was written)
    bool set[VECTOR_REG_WIDTH] = {};
};

struct MaskReg {
    uint32_t bytes = 0;  // the element width the mask was made for (0: never made)
    bool on[VECTOR_REG_WIDTH] = {};
};

}  // namespace Reg
}  // namespace AscendC

namespace opgen_sim {
namespace reg {

// The UB bytes [addr, addr + n) of the calling core for register access `what`, addr the `__local_mem__` pointer's
// value: inside the UB, 32-byte aligned (vld / vsts), recorded as a PIPE_V access.
template <typename T>
inline uint8_t* Ub(const T* p, uint32_t n, bool write, const char* what)
{
    CoreState& core = Core(what);
    const uint64_t addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    const uint64_t ub = g_world->ubBytes;
    if (addr + n > ub) {
        Raise("%s: UB bytes [%llu, %llu) lie past the %llu-byte UB", what, static_cast<unsigned long long>(addr),
              static_cast<unsigned long long>(addr + n), static_cast<unsigned long long>(ub));
    }
    if (addr % 32U != 0U) {
        Raise("%s: UB address %llu is not 32-byte aligned", what, static_cast<unsigned long long>(addr));
    }
    if (write) {
        UbWritten(PIPE_V_, static_cast<uint32_t>(addr), static_cast<uint32_t>(addr + n), what);
    } else {
        UbRead(PIPE_V_, static_cast<uint32_t>(addr), static_cast<uint32_t>(addr + n), what);
    }
    return core.ub + addr;
}

// The UB bytes of a register access that needs only `align`-byte alignment (an unaligned store: the element's).
template <typename T>
inline uint8_t* UbAligned(const T* p, uint32_t n, bool write, const char* what, uint32_t align)
{
    const uint64_t addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    if (addr % align != 0U) {
        Raise("%s: UB address %llu is not %u-byte aligned", what, static_cast<unsigned long long>(addr), align);
    }
    const uint64_t down = addr - addr % 32U;  // Ub() checks 32-byte alignment: hand it the block, record the span
    uint8_t* base = Ub(reinterpret_cast<const T*>(static_cast<uintptr_t>(down)), static_cast<uint32_t>(addr + n - down),
                       write, what);
    return base + (addr - down);
}

// The mask's active lanes for elements of `width` bytes. A mask made for that width gives its own lanes. One made for
// narrower elements predicates a wider lane by the lanes it covers, which must agree (UpdateMask<half>(2 * n) is n
// 32-bit lanes: the real quantize_functions.h ComputeFp8Data / ComputePerTileDynamic predicate their b32 casts and
// DIST_PACK4_B32 stores so, `totalCountInUB2 = totalCountInUB * 2`); lanes that disagree, or a mask made for wider
// elements, would need the predicate's byte layout, which no public header or document gives: a fault.
struct LaneMask {
    bool on[AscendC::VECTOR_REG_WIDTH] = {};
    bool operator[](uint32_t i) const { return on[i]; }
};
inline LaneMask LanesOf(const AscendC::Reg::MaskReg& mask, uint32_t width, const char* what, const char* type)
{
    if (mask.bytes == 0U) {
        Raise("%s: a MaskReg no UpdateMask / CreateMask / Compare made", what);
    }
    if (mask.bytes > width) {
        Raise("%s: a MaskReg made for %u-byte elements used on %u-byte elements (%s): not modelled", what, mask.bytes,
              width, type);
    }
    LaneMask out;
    const uint32_t per = width / mask.bytes;
    for (uint32_t i = 0; i < AscendC::VECTOR_REG_WIDTH / width; ++i) {
        const bool first = mask.on[i * per];
        for (uint32_t k = 1; k < per; ++k) {
            if (mask.on[i * per + k] != first) {
                Raise("%s: %u-byte lane %u of a MaskReg made for %u-byte elements covers active and inactive lanes: "
                      "which one predicates it is not documented", what, width, i, mask.bytes);
            }
        }
        out.on[i] = first;
    }
    return out;
}
template <typename T>
inline LaneMask Lanes(const AscendC::Reg::MaskReg& mask, const char* what)
{
    return LanesOf(mask, sizeof(T), what, TypeName<T>());
}

template <typename T>
inline T Read(const AscendC::Reg::RegTensor<T>& r, uint32_t i, const char* what)
{
    for (uint32_t b = 0; b < sizeof(T); ++b) {
        if (!r.set[i * sizeof(T) + b]) {
            Raise("%s: reads lane %u of a RegTensor<%s> no instruction wrote", what, i, TypeName<T>());
        }
    }
    return r.lane[i];
}

// Lane i of r written with v.
template <typename T>
inline void Put(AscendC::Reg::RegTensor<T>& r, uint32_t i, T v)
{
    r.lane[i] = v;
    for (uint32_t b = 0; b < sizeof(T); ++b) {
        r.set[i * sizeof(T) + b] = true;
    }
}

}  // namespace reg
}  // namespace opgen_sim

namespace AscendC {
namespace Reg {

// kernel_reg_compute_maskreg_intf.h UpdateMask (plt_b<N>, POST_UPDATE): the first min(count, lanes) lanes, count
// decremented by as many
template <typename T>
__simd_callee__ inline MaskReg UpdateMask(uint32_t& scalarValue)
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "UpdateMask: the twin models b8 / b16 / b32 elements");
    constexpr uint32_t lanes = VECTOR_REG_WIDTH / sizeof(T);
    const uint32_t n = scalarValue < lanes ? scalarValue : lanes;
    MaskReg m;
    m.bytes = sizeof(T);
    for (uint32_t i = 0; i < n; ++i) {
        m.on[i] = true;
    }
    scalarValue -= n;
    return m;
}

// kernel_reg_compute_maskreg_intf.h CreateMask (pset_b<N>): ALL every lane, VL<k> the first k lanes
template <typename T, MaskPattern mode = MaskPattern::ALL>
__simd_callee__ inline MaskReg CreateMask()
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "CreateMask: the twin models b8 / b16 / b32 elements");
    constexpr uint32_t lanes = VECTOR_REG_WIDTH / sizeof(T);
    uint32_t n = 0;
    switch (mode) {
        case MaskPattern::ALL: n = lanes; break;
        case MaskPattern::VL1: n = 1; break;
        case MaskPattern::VL2: n = 2; break;
        case MaskPattern::VL3: n = 3; break;
        case MaskPattern::VL4: n = 4; break;
        case MaskPattern::VL8: n = 8; break;
        case MaskPattern::VL16: n = 16; break;
        case MaskPattern::VL32: n = 32; break;
        case MaskPattern::VL64: n = 64; break;
        case MaskPattern::VL128: n = 128; break;
        default:
            opgen_sim::Raise("CreateMask: MaskPattern %d (M3 / M4 / H / Q / ALLF) is not modelled: no public header "
                             "or document gives its lanes", static_cast<int>(mode));
    }
    if (n > lanes) {
        opgen_sim::Raise("CreateMask<%s>: pattern VL%u exceeds the register's %u lanes", opgen_sim::TypeName<T>(), n,
                         lanes);
    }
    MaskReg m;
    m.bytes = sizeof(T);
    for (uint32_t i = 0; i < n; ++i) {
        m.on[i] = true;
    }
    return m;
}

// kernel_reg_compute_vec_duplicate_intf.h Duplicate(dstReg, scalar): every lane
template <typename T = void, typename U, typename S>
__simd_callee__ inline void Duplicate(S& dstReg, U scalarValue)
{
    for (uint32_t i = 0; i < S::LANES; ++i) {
        opgen_sim::reg::Put(dstReg, i, static_cast<typename S::ActualT>(scalarValue));
    }
}

// kernel_reg_compute_datacopy_intf.h DataCopy / LoadAlign (vld): LoadDist::DIST_NORM loads VECTOR_REG_WIDTH bytes
// from an aligned UB address; DIST_UNPACK_B8 loads VECTOR_REG_WIDTH / 2 bytes, byte i into the low byte of 16-bit
// slot i (register byte 2i; the other byte of the slot unwritten, reading it faults). The slot is the one a
// RegLayout::ZERO widening Cast to a 16-bit type reads for lane i: the level-2 Cast of b8 to b16 elements is that
// load, that Cast and a NORM store, element i to element i (asc-devkit impl/basic_api/dav_3510/
// kernel_operator_vec_vconv_impl.h GenLoadL2 / CastIntrinsicsImplVF: castTrait RegLayout::ZERO).
template <typename T = void, LoadDist dist = LoadDist::DIST_NORM, typename U, typename P>
__simd_callee__ inline void DataCopy(U& dstReg, __ubuf__ P* srcAddr)
{
    static_assert(dist == LoadDist::DIST_NORM || dist == LoadDist::DIST_UNPACK_B8,
                  "MicroAPI::DataCopy (load): the twin models LoadDist::DIST_NORM and DIST_UNPACK_B8 only");
    static_assert(std::is_same<std::remove_cv_t<P>, typename U::ActualT>::value,
                  "MicroAPI::DataCopy (load): the address's element type is the register's");
    if constexpr (dist == LoadDist::DIST_UNPACK_B8) {
        static_assert(sizeof(typename U::ActualT) == 1, "MicroAPI::DataCopy DIST_UNPACK_B8: an 8-bit register");
        const uint8_t* p = opgen_sim::reg::Ub(srcAddr, VECTOR_REG_WIDTH / 2U, false,
                                              "MicroAPI::DataCopy (a DIST_UNPACK_B8 register load)");
        uint8_t* bytes = reinterpret_cast<uint8_t*>(dstReg.lane);
        for (uint32_t i = 0; i < VECTOR_REG_WIDTH / 2U; ++i) {
            bytes[2U * i] = p[i];
            dstReg.set[2U * i] = true;
            dstReg.set[2U * i + 1U] = false;
        }
    } else {
        const uint8_t* p = opgen_sim::reg::Ub(srcAddr, VECTOR_REG_WIDTH, false, "MicroAPI::DataCopy (a register load)");
        std::memcpy(dstReg.lane, p, VECTOR_REG_WIDTH);
        for (uint32_t i = 0; i < VECTOR_REG_WIDTH; ++i) {
            dstReg.set[i] = true;
        }
    }
}

// kernel_reg_compute_datacopy_intf.h DataCopy / StoreAlign (vsts): DIST_NORM stores the active lanes at their
// places, DIST_FIRST_ELEMENT_B<N> lane 0 alone (when the mask has it active)
template <typename T = void, StoreDist dist = StoreDist::DIST_NORM, typename U, typename P>
__simd_callee__ inline void DataCopy(__ubuf__ P* dstAddr, U& srcReg, MaskReg& mask)
{
    using E = typename U::ActualT;
    static_assert(std::is_same<std::remove_cv_t<P>, E>::value,
                  "MicroAPI::DataCopy (store): the address's element type is the register's");
    constexpr bool first = dist == StoreDist::DIST_FIRST_ELEMENT_B8 || dist == StoreDist::DIST_FIRST_ELEMENT_B16 ||
                           dist == StoreDist::DIST_FIRST_ELEMENT_B32;
    static_assert(first || dist == StoreDist::DIST_NORM || dist == StoreDist::DIST_NORM_B8 ||
                      dist == StoreDist::DIST_NORM_B16 || dist == StoreDist::DIST_NORM_B32,
                  "MicroAPI::DataCopy (store): the twin models the NORM and FIRST_ELEMENT distributions only");
    constexpr uint32_t width = (dist == StoreDist::DIST_FIRST_ELEMENT_B8 || dist == StoreDist::DIST_NORM_B8) ? 1U
                               : (dist == StoreDist::DIST_FIRST_ELEMENT_B16 || dist == StoreDist::DIST_NORM_B16) ? 2U
                               : (dist == StoreDist::DIST_FIRST_ELEMENT_B32 || dist == StoreDist::DIST_NORM_B32) ? 4U
                                                                                                  : sizeof(E);
    static_assert(width == sizeof(E), "MicroAPI::DataCopy (store): the distribution's width is not the element's");
    const char* what = "MicroAPI::DataCopy (a register store)";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    const uint32_t lanes = first ? 1U : U::LANES;
    uint32_t end = 0;
    for (uint32_t i = 0; i < lanes; ++i) {
        if (on[i]) {
            end = i + 1U;
        }
    }
    if (end == 0U) {
        return;
    }
    // FIRST_ELEMENT stores one element, at its own alignment: the real ComputePerTileDynamic stores a tile's scale
    // at `scaleOutLocalAddr + i` (code: mc2/moe_distribute_dispatch_v2/op_kernel/quantize_functions.h)
    uint8_t* base = first ? opgen_sim::reg::UbAligned(dstAddr, static_cast<uint32_t>(end * sizeof(E)), true, what,
                                                      static_cast<uint32_t>(sizeof(E)))
                          : opgen_sim::reg::Ub(dstAddr, static_cast<uint32_t>(end * sizeof(E)), true, what);
    for (uint32_t i = 0; i < end; ++i) {
        if (on[i]) {
            const E v = opgen_sim::reg::Read(srcReg, i, what);
            std::memcpy(base + i * sizeof(E), &v, sizeof(E));
        }
    }
}

// kernel_reg_compute_vec_binary_intf.h Add (ZEROING): active lanes the sum, the others 0
template <typename T = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>
__simd_callee__ inline void Add(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask)
{
    using E = typename U::ActualT;
    static_assert(mode == MaskMergeMode::ZEROING, "MicroAPI::Add: the twin models MaskMergeMode::ZEROING only");
    // fp32 lanes the IEEE sum (the real 950 CombineV2's dequantising sums, moe_distribute_combine_v2_quant.h); a half
    // / bf16 sum is not exact in fp32, so it is not modelled (rounding twice could differ from the device's once)
    static_assert(std::is_integral<E>::value || std::is_same<E, float>::value,
                  "MicroAPI::Add: the twin models integer and float lanes only");
    const char* what = "MicroAPI::Add";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    U out;
    for (uint32_t i = 0; i < U::LANES; ++i) {
        E v{0};
        if (on[i]) {
            const E a = opgen_sim::reg::Read(srcReg0, i, what);
            const E b = opgen_sim::reg::Read(srcReg1, i, what);
            if constexpr (std::is_same<E, float>::value) {
                v = a + b;
            } else {
                v = static_cast<E>(static_cast<std::make_unsigned_t<E>>(a) + static_cast<std::make_unsigned_t<E>>(b));
            }
        }
        opgen_sim::reg::Put(out, i, v);
    }
    dstReg = out;
}

// kernel_reg_compute_vec_reduce_intf.h ReduceSum (vcadd, ZEROING): lane 0 the sum of the active lanes, the others 0.
// Integer lanes (modulo 2^N, any order of addition gives it); the order of a float vcadd is not documented.
template <typename T = void, typename V = void, MaskMergeMode mode = MaskMergeMode::ZEROING, typename S, typename W>
__simd_callee__ inline void ReduceSum(S& dstReg, W srcReg, MaskReg mask)
{
    using D = typename S::ActualT;
    using E = typename W::ActualT;
    static_assert(mode == MaskMergeMode::ZEROING, "current Reduce api only supported Mode ZEROING on current device!");
    static_assert((std::is_same<D, int32_t>::value && (std::is_same<E, int32_t>::value || std::is_same<E, int16_t>::value)) ||
                      (std::is_same<D, uint32_t>::value && (std::is_same<E, uint32_t>::value || std::is_same<E, uint16_t>::value)),
                  "MicroAPI::ReduceSum: the twin models the integer forms (int32 <- int32 / int16, uint32 <- uint32 / "
                  "uint16); the order of a float vcadd's additions is not documented");
    const char* what = "MicroAPI::ReduceSum";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    uint32_t sum = 0;
    for (uint32_t i = 0; i < W::LANES; ++i) {
        if (on[i]) {
            sum += static_cast<uint32_t>(static_cast<D>(opgen_sim::reg::Read(srcReg, i, what)));
        }
    }
    for (uint32_t i = 0; i < S::LANES; ++i) {
        opgen_sim::reg::Put(dstReg, i, D{0});
    }
    dstReg.lane[0] = static_cast<D>(sum);
}

// kernel_reg_compute_histograms_intf.h Histograms (dhistv2 / chistv2): no public header or document gives what a
// bin register counts, so the twin faults when a kernel calls it
template <typename T = void, typename U = void, HistogramsBinType mode, HistogramsType type, typename S, typename V>
__simd_callee__ inline void Histograms(V& dstReg, S& srcReg, MaskReg& mask)
{
    (void)dstReg;
    (void)srcReg;
    (void)mask;
    opgen_sim::Raise("MicroAPI::Histograms (bin %d, %s): not modelled: no public header or document of asc-devkit gives "
                     "the semantics of dhistv2 / chistv2", static_cast<int>(mode),
                     type == HistogramsType::FREQUENCY ? "FREQUENCY" : "ACCUMULATE");
}

}  // namespace Reg

// impl/basic_api/kernel_macros.h (3510)
namespace MicroAPI = Reg;

// impl/basic_api/utils/kernel_utils_ceil_oom_que.h (3510, CPU debug): the vector function run in a __VEC_SCOPE__
template <auto funcPtr, typename... Args>
__aicore__ inline void VF_CALL(Args&&... args)
{
    __VEC_SCOPE__ { funcPtr(args...); }
}

}  // namespace AscendC

#endif  // OPGEN_SIM_REG_H
