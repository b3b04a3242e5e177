/**
 * The tiling-registration macro of the kernel side as the CPU debug build defines it (used by the twin as is)
 * (CANN kernel_tiling/kernel_tiling.h), and the HCCL tiling blobs that header declares (generated at CANN build
 * time from asc-devkit include/adv_api/hccl/hccl_tilingdata.h: 64 and 512 opaque bytes, 8-byte packing).
 * Plain-struct tiling data is registered by its type name.
 */
#ifndef OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H
#define OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H

#include <cstdint>

#include <cstring>

#include "opgen_sim/hccl_tiling_msg.h"
#include "opgen_sim/world.h"

#pragma pack(push, 8)
struct Mc2InitTiling {
    uint8_t reserved[64] = {};
};
#pragma pack(pop)
#pragma pack(push, 8)
struct Mc2CcTiling {
    uint8_t reserved[512] = {};
};
#pragma pack(pop)
static_assert(sizeof(opgen_sim::Mc2InitTilingInner) == sizeof(Mc2InitTiling), "Mc2InitTiling layout");
static_assert(sizeof(opgen_sim::Mc2CcTilingInner) <= sizeof(Mc2CcTiling), "Mc2CcTiling layout");

#define REGISTER_TILING_DEFAULT(tiling_struct) static_assert(sizeof(tiling_struct) > 0, #tiling_struct)

// GET_TILING_DATA_WITH_STRUCT (generated per op by CANN's op compiler): the kernel's copy of the tiling struct, read
// from the tiling data the host wrote; tiling data shorter than the struct is an out-of-bounds GM read.
namespace opgen_sim {
template <class T>
inline void ReadTilingData(const void* tilingGm, T* dst)
{
    CheckGm(tilingGm, sizeof(T), "GET_TILING_DATA_WITH_STRUCT");
    std::memcpy(static_cast<void*>(dst), tilingGm, sizeof(T));
}
}  // namespace opgen_sim
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg) \
    tiling_struct tiling_data;                                              \
    ::opgen_sim::ReadTilingData<tiling_struct>((const void*)(tiling_arg), &tiling_data)

#endif  // OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H
