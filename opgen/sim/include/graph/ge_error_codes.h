// Mirrors graph/ge_error_codes.h (hicann/metadef: inc/external/graph/ge_error_codes.h).
#ifndef CANN_API_GRAPH_GE_ERROR_CODES_H
#define CANN_API_GRAPH_GE_ERROR_CODES_H

#include <cstdint>

namespace ge {
using graphStatus = uint32_t;
const graphStatus GRAPH_FAILED = 0xFFFFFFFF;
const graphStatus GRAPH_SUCCESS = 0;
const graphStatus GRAPH_NOT_CHANGED = 1343242304;
const graphStatus GRAPH_PARAM_INVALID = 50331649;
}  // namespace ge

#endif  // CANN_API_GRAPH_GE_ERROR_CODES_H
