// Mirrors graph/types.h (hicann/metadef: inc/external/graph/types.h); the DataType values come from
// inc/external/graph/c_types.h and equal opgen/dtypes.py.
#ifndef CANN_API_GRAPH_TYPES_H
#define CANN_API_GRAPH_TYPES_H

#include <cstdint>
#include "graph/ge_error_codes.h"

namespace ge {
enum DataType {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_STRING = 13,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
    DT_HIFLOAT8 = 34,
    DT_FLOAT8_E5M2 = 35,
    DT_FLOAT8_E4M3FN = 36,
    DT_FLOAT8_E8M0 = 37,
    DT_FLOAT4_E2M1 = 40,
    DT_FLOAT4_E1M2 = 41,
    DT_MAX
};

enum Format {
    FORMAT_NCHW = 0,
    FORMAT_NHWC = 1,
    FORMAT_ND = 2,
    FORMAT_NC1HWC0 = 3,
    FORMAT_FRACTAL_Z = 4,
    FORMAT_FRACTAL_NZ = 29,
    FORMAT_RESERVED = 40,
    FORMAT_MAX = 0xff
};

int GetSizeByDataType(DataType data_type);

// As hicann/metadef inc/external/graph/types.h: the low byte of a format value (the sub-format and C0 bits off).
inline int32_t GetPrimaryFormat(int32_t format)
{
    return static_cast<int32_t>(static_cast<uint32_t>(format) & 0xffU);
}
}  // namespace ge

#endif  // CANN_API_GRAPH_TYPES_H
