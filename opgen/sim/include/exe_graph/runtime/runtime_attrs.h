// Mirrors exe_graph/runtime/runtime_attrs.h (hicann/metadef: inc/external/exe_graph/runtime/runtime_attrs.h).
// Implemented (the twin runs the tiling code).  Each attribute keeps the bytes CANN keeps for its type (int64: 8,
// bool: 1, float: a 4-byte float, string: NUL-terminated chars, list of int64: a ContinuousVector), so
// GetAttrPointer<T> reinterprets them exactly as on the device: reading an attribute as the wrong type misreads it
// there too.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H
#define CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gert {
class ContinuousVector {
public:
    size_t GetSize() const;
    const void *GetData() const;

    // ---- opgen twin only: setup ----
    void OpgenSimAssign(const std::vector<int64_t> &values) { values_ = values; }

private:
    std::vector<int64_t> values_;  // the only list type the generated code reads (ListInt)
};

inline size_t ContinuousVector::GetSize() const
{
    return values_.size();
}

inline const void *ContinuousVector::GetData() const
{
    return values_.data();
}

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

    // ---- opgen twin only: setup, one call per attribute in IR order ----
    void OpgenSimAppendAbsent() { attrs_.emplace_back(); }  // an attribute the node does not carry: nullptr
    void OpgenSimAppendInt(int64_t value) { AppendBytes(&value, sizeof(value)); }
    void OpgenSimAppendBool(bool value) { AppendBytes(&value, sizeof(value)); }
    void OpgenSimAppendFloat(float value) { AppendBytes(&value, sizeof(value)); }
    void OpgenSimAppendStr(const std::string &value) { AppendBytes(value.c_str(), value.size() + 1); }
    void OpgenSimAppendListInt(const std::vector<int64_t> &values)
    {
        attrs_.emplace_back();
        attrs_.back().present = true;
        attrs_.back().is_list = true;
        attrs_.back().list.OpgenSimAssign(values);
    }

private:
    struct Attr {
        bool present = false;
        bool is_list = false;
        std::vector<uint64_t> bytes;  // 8-byte aligned, like the device's attribute area
        ContinuousVector list;
    };

    void AppendBytes(const void *data, size_t size)
    {
        attrs_.emplace_back();
        attrs_.back().present = true;
        attrs_.back().bytes.assign((size + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
        std::memcpy(attrs_.back().bytes.data(), data, size);
    }

    std::vector<Attr> attrs_;
};

template <typename T>
inline const T *RuntimeAttrs::GetAttrPointer(size_t index) const
{
    if (index >= attrs_.size() || !attrs_[index].present) {
        return nullptr;
    }
    const Attr &attr = attrs_[index];
    const void *data = attr.is_list ? static_cast<const void *>(&attr.list) : attr.bytes.data();
    return static_cast<const T *>(data);
}

inline const char *RuntimeAttrs::GetStr(size_t index) const
{
    return GetAttrPointer<char>(index);
}

inline const int64_t *RuntimeAttrs::GetInt(size_t index) const
{
    return GetAttrPointer<int64_t>(index);
}

inline const bool *RuntimeAttrs::GetBool(size_t index) const
{
    return GetAttrPointer<bool>(index);
}

inline const float *RuntimeAttrs::GetFloat(size_t index) const
{
    return GetAttrPointer<float>(index);
}

inline const ContinuousVector *RuntimeAttrs::GetListInt(size_t index) const
{
    return GetAttrPointer<ContinuousVector>(index);
}

inline size_t RuntimeAttrs::GetAttrNum() const
{
    return attrs_.size();
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H
