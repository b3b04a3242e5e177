// Mirrors exe_graph/runtime/runtime_attrs.h (hicann/metadef: inc/external/exe_graph/runtime/runtime_attrs.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H
#define CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H

#include <cstddef>
#include <cstdint>

namespace gert {
class ContinuousVector {
public:
    size_t GetSize() const;
    const void *GetData() const;
};

class RuntimeAttrs {
public:
    template <typename T>
    const T *GetAttrPointer(size_t index) const;
    const char *GetStr(size_t index) const;
    const int64_t *GetInt(size_t index) const;
    const bool *GetBool(size_t index) const;
    const float *GetFloat(size_t index) const;
    const ContinuousVector *GetListInt(size_t index) const;
    size_t GetAttrNum() const;
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H
