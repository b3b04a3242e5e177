// Mirrors graph/ascend_string.h (hicann/metadef: inc/external/graph/ascend_string.h).
#ifndef CANN_API_GRAPH_ASCEND_STRING_H
#define CANN_API_GRAPH_ASCEND_STRING_H

#include <cstddef>

namespace ge {
class AscendString {
public:
    AscendString() = default;
    AscendString(const char *name);
    const char *GetString() const;
    size_t GetLength() const;
};
}  // namespace ge

#endif  // CANN_API_GRAPH_ASCEND_STRING_H
