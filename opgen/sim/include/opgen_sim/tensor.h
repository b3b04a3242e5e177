/**
 * Tensors, queues and the pipe of the twin (include/basic_api/kernel_tensor.h, kernel_tpipe.h).
 *
 * A LocalTensor is a window [off, end) of its core's UB: the buffer (or the GetWithOffset / Get(len) slice)
 * it came from.  Every element access and vector operand is checked against that window, so a kernel that
 * spills into the neighbouring buffer faults here instead of silently corrupting it on the device.  Buffers
 * carry the pipe generation they were made in: a tensor of a buffer from before TPipe::Reset is stale.
 * A GlobalTensor is a pointer (and, when SetGlobalBuffer was given one, a size); its accesses are checked
 * against its size and against the world's registered GM regions.
 */
#ifndef OPGEN_SIM_TENSOR_H
#define OPGEN_SIM_TENSOR_H

#include <cstdint>
#include <cstring>
#include <deque>
#include <type_traits>
#include <vector>

#include "opgen_sim/hazard.h"
#include "opgen_sim/numeric.h"
#include "opgen_sim/world.h"

namespace AscendC {

constexpr uint32_t SIM_UB_ALIGN = 32U;  // UB addresses of DataCopy and vector operands

template <typename T>
constexpr uint64_t SimBits()
{
    return static_cast<uint64_t>(opgen_sim::ElementBits<T>::value);
}

// Bytes of `elems` elements of T (a packed 4-bit type: two per byte).
template <typename T>
constexpr uint64_t SimBytes(uint64_t elems)
{
    return (elems * SimBits<T>() + 7U) / 8U;
}

// What LocalTensor::operator() hands out: the element at UB offset `at`, read or written by the scalar unit.
template <typename T>
class UbScalar {
public:
    UbScalar(uint8_t* p, uint32_t at) : p_(p), at_(at) {}
    UbScalar(const UbScalar&) = default;
    operator T() const
    {
        opgen_sim::UbRead(opgen_sim::PIPE_S_, at_, at_ + sizeof(T), "LocalTensor::operator() (a read)");
        T v;
        std::memcpy(&v, p_, sizeof(T));
        return v;
    }
    const UbScalar& operator=(const T& v) const
    {
        opgen_sim::UbWritten(opgen_sim::PIPE_S_, at_, at_ + sizeof(T), "LocalTensor::operator() (a store)");
        std::memcpy(p_, &v, sizeof(T));
        return *this;
    }
    const UbScalar& operator=(const UbScalar& o) const { return *this = static_cast<T>(o); }
    const UbScalar& operator++() const { return *this = static_cast<T>(static_cast<T>(*this) + 1); }
    T operator++(int) const
    {
        const T old = *this;
        *this = static_cast<T>(old + 1);
        return old;
    }
    template <typename U>
    const UbScalar& operator+=(const U& v) const { return *this = static_cast<T>(static_cast<T>(*this) + v); }
    template <typename U>
    const UbScalar& operator-=(const U& v) const { return *this = static_cast<T>(static_cast<T>(*this) - v); }
    template <typename U>
    const UbScalar& operator|=(const U& v) const { return *this = static_cast<T>(static_cast<T>(*this) | v); }
    template <typename U>
    const UbScalar& operator&=(const U& v) const { return *this = static_cast<T>(static_cast<T>(*this) & v); }
    // an address the kernel keeps in UB, cast to a pointer as a reference to a 64-bit element casts
    // (`(__gm__ uint32_t *)(sqInfoU64(WQ_DBADDR_OFFSET))`): a read of the element
    template <typename P, typename U = T, typename = std::enable_if_t<std::is_integral<U>::value && sizeof(U) == sizeof(void*)>>
    explicit operator P*() const { return reinterpret_cast<P*>(static_cast<uintptr_t>(static_cast<T>(*this))); }

private:
    uint8_t* p_;
    uint32_t at_;
};

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor() = default;
    __aicore__ LocalTensor(const LocalTensor<T>& other) = default;
    // A tensor of `tileSize` elements at UB byte `addr`, outside any TPipe buffer (kernel_tensor.h): a base address
    // in the UB, as the device has it. The device checks nothing here and knows no bound but the UB's, so the twin
    // checks its accesses against [addr, UB end) and DataCopy / vector operands for their 32-byte alignment where they
    // are used; GetSize() is tileSize. (asc-devkit's CPU-debug CreateTensor also asserts addr and the length 32-byte
    // aligned and tileSize > 0, and its operand checks hold a call to tileSize, neither of which the real A2 kernels
    // keep: moe_distribute_dispatch_a2.h makes LocalTensor<uint16_t>{TPosition::LCM, 448, 4}, 8 bytes, and
    // CleanUpFlags Duplicates worldSize * statusSize bytes over statusTensor_, 4160 bytes over 256 at w2.)
    __aicore__ LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
    {
        const uint64_t bytes = SimBytes<T>(tileSize);
        const uint64_t ubBytes = opgen_sim::g_world != nullptr ? opgen_sim::g_world->ubBytes : 0U;
        if (pos == TPosition::GM || pos == TPosition::MAX || opgen_sim::t_core == nullptr) {
            opgen_sim::Raise("LocalTensor(pos %d, %u, %u): not a UB position or not on a kernel core",
                             static_cast<int>(pos), addr, tileSize);
        }
        if (addr + bytes > ubBytes) {
            opgen_sim::Raise("LocalTensor(pos, addr %u, %u %s elements): %llu bytes past the %llu-byte UB", addr,
                             tileSize, opgen_sim::TypeName<T>(), static_cast<unsigned long long>(addr + bytes - ubBytes),
                             static_cast<unsigned long long>(ubBytes));
        }
        ub_ = opgen_sim::t_core->ub;
        off_ = addr;
        end_ = static_cast<uint32_t>(ubBytes);
        size_ = tileSize;
    }
    __aicore__ LocalTensor<T>& operator=(const LocalTensor<T>& other) = default;
    __aicore__ ~LocalTensor() = default;

    __aicore__ PrimType GetValue(const uint32_t index) const
    {
        PrimType v;
        std::memcpy(&v, Scalar(index, "LocalTensor::GetValue"), sizeof(PrimType));
        opgen_sim::UbRead(opgen_sim::PIPE_S_, static_cast<uint32_t>(off_ + index * sizeof(PrimType)),
                          static_cast<uint32_t>(off_ + (index + 1U) * sizeof(PrimType)), "LocalTensor::GetValue");
        return v;
    }
    // The element for the scalar unit (kernel_tensor.h returns a reference): a read where the kernel reads it, a
    // write where it assigns to it, each checked against the other pipes like GetValue / SetValue.
    __aicore__ UbScalar<PrimType> operator()(const uint32_t offset) const
    {
        uint8_t* p = Scalar(offset, "LocalTensor::operator()");
        return UbScalar<PrimType>(p, static_cast<uint32_t>(p - ub_));
    }
    template <typename U>
    __aicore__ LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> r;
        r.ub_ = ub_;
        r.off_ = off_;
        r.end_ = end_;
        r.gen_ = gen_;
        r.pipe_ = pipe_;
        // the same bytes as U (kernel_tensor.h keeps dataLen): a tensor made on a UB address keeps its declared size
        r.size_ = static_cast<uint32_t>((static_cast<uint64_t>(size_) * SimBits<T>()) / SimBits<U>());
        return r;
    }
    template <typename S>
    __aicore__ void SetValue(const uint32_t index, const S value) const
    {
        const PrimType v = static_cast<PrimType>(value);
        std::memcpy(Scalar(index, "LocalTensor::SetValue"), &v, sizeof(PrimType));
        opgen_sim::UbWritten(opgen_sim::PIPE_S_, static_cast<uint32_t>(off_ + index * sizeof(PrimType)),
                             static_cast<uint32_t>(off_ + (index + 1U) * sizeof(PrimType)), "LocalTensor::SetValue");
    }
    __aicore__ LocalTensor operator[](const uint32_t offset) const
    {
        Live("LocalTensor::operator[]");
        const uint64_t bits = static_cast<uint64_t>(offset) * SimBits<T>();
        if (bits % 8U != 0U || off_ + bits / 8U > end_) {
            opgen_sim::Raise("LocalTensor<%s>::operator[](%u): outside the %u-byte buffer at UB %u",
                             opgen_sim::TypeName<T>(), offset, end_ - off_, off_);
        }
        LocalTensor r = *this;
        r.off_ = static_cast<uint32_t>(off_ + bits / 8U);
        r.size_ = size_ > offset ? size_ - offset : 0U;
        return r;
    }
    __aicore__ uint32_t GetSize() const { return size_; }
    __aicore__ void SetSize(const uint32_t size) { size_ = size; }
    // The device's UB address of element 0 (offset): what a device kernel computes UB sizes from (kernel_tensor.h,
    // the non-CPU-debug declaration; the twin is the device).
    __aicore__ uint64_t GetPhyAddr() const
    {
        Live("LocalTensor::GetPhyAddr");
        return off_;
    }
    __aicore__ uint64_t GetPhyAddr(const uint32_t offset) const { return (*this)[offset].GetPhyAddr(); }

    // ---- twin only ----
    // The UB bytes of elements [first, first + count), checked against the tensor's buffer; `aligned`
    // also requires the 32-byte UB alignment that DataCopy and vector instructions need.
    uint8_t* SimSpan(uint64_t first, uint64_t count, const char* what, bool aligned = true) const
    {
        Live(what);
        const uint64_t startBits = first * SimBits<T>();
        const uint64_t start = off_ + startBits / 8U;
        const uint64_t bytes = SimBytes<T>(count);
        if (start + bytes > end_) {
            opgen_sim::Raise("%s: out-of-bounds UB access: %s elements [%llu, %llu) need bytes [%llu, %llu) of UB, "
                             "the tensor's buffer is [%u, %u)", what, opgen_sim::TypeName<T>(),
                             static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + count),
                             static_cast<unsigned long long>(start), static_cast<unsigned long long>(start + bytes),
                             off_, end_);
        }
        if (aligned && (start % SIM_UB_ALIGN != 0U || startBits % 8U != 0U)) {
            opgen_sim::Raise("%s: UB address %llu is not 32-byte aligned", what, static_cast<unsigned long long>(start));
        }
        return ub_ + start;
    }
    // SimSpan, and the access recorded for the cross-pipe hazard check (hazard.h): a read by `pipe` ...
    const uint8_t* SimRead(uint64_t first, uint64_t count, const char* what, bool aligned = true,
                           uint8_t pipe = opgen_sim::PIPE_V_) const
    {
        uint8_t* p = SimSpan(first, count, what, aligned);
        const uint32_t begin = static_cast<uint32_t>(p - ub_);
        opgen_sim::UbRead(pipe, begin, static_cast<uint32_t>(begin + SimBytes<T>(count)), what);
        return p;
    }
    // ... and a write by `pipe`.
    uint8_t* SimWrite(uint64_t first, uint64_t count, const char* what, bool aligned = true,
                      uint8_t pipe = opgen_sim::PIPE_V_) const
    {
        uint8_t* p = SimSpan(first, count, what, aligned);
        const uint32_t begin = static_cast<uint32_t>(p - ub_);
        opgen_sim::UbWritten(pipe, begin, static_cast<uint32_t>(begin + SimBytes<T>(count)), what);
        return p;
    }
    uint32_t SimOffset() const { return off_; }
    uint32_t SimEnd() const { return end_; }
    // A tensor over UB bytes [off, end) of buffer generation `gen` of `pipe`.
    static LocalTensor SimMake(uint8_t* ub, uint32_t off, uint32_t end, const uint64_t* pipeGen, uint64_t gen)
    {
        LocalTensor r;
        r.ub_ = ub;
        r.off_ = off;
        r.end_ = end;
        r.pipe_ = pipeGen;
        r.gen_ = gen;
        r.size_ = static_cast<uint32_t>((static_cast<uint64_t>(end - off) * 8U) / SimBits<T>());
        return r;
    }

private:
    template <typename U>
    friend class LocalTensor;

    void Live(const char* what) const
    {
        if (ub_ == nullptr) {
            opgen_sim::Raise("%s: a LocalTensor that no queue or buffer handed out", what);
        }
        if (pipe_ != nullptr && *pipe_ != gen_) {
            opgen_sim::Raise("%s: a LocalTensor of a buffer released by TPipe::Reset (UB [%u, %u))", what, off_, end_);
        }
    }
    uint8_t* Scalar(uint32_t index, const char* what) const
    {
        static_assert(opgen_sim::ElementBits<T>::value % 8 == 0, "scalar access of packed 4-bit elements");
        opgen_sim::CountScalar();
        return SimSpan(index, 1U, what, false);
    }

    uint8_t* ub_ = nullptr;
    uint32_t off_ = 0U;
    uint32_t end_ = 0U;
    uint32_t size_ = 0U;
    const uint64_t* pipe_ = nullptr;
    uint64_t gen_ = 0U;
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor() = default;
    __aicore__ void SetGlobalBuffer(__gm__ PrimType* buffer, uint64_t bufferSize)
    {
        addr_ = reinterpret_cast<uint8_t*>(buffer);
        size_ = bufferSize;
        sized_ = true;
    }
    __aicore__ void SetGlobalBuffer(__gm__ PrimType* buffer)
    {
        addr_ = reinterpret_cast<uint8_t*>(buffer);
        size_ = 0U;
        sized_ = false;
    }
    __aicore__ const __gm__ PrimType* GetPhyAddr() const { return reinterpret_cast<const PrimType*>(addr_); }
    __aicore__ __gm__ PrimType* GetPhyAddr(const uint64_t offset) const
    {
        return reinterpret_cast<PrimType*>(addr_ + SimBytes<T>(offset));
    }
    __aicore__ PrimType GetValue(const uint64_t offset) const
    {
        static_assert(opgen_sim::ElementBits<T>::value % 8 == 0, "scalar access of packed 4-bit elements");
        const uint8_t* p = SimSpan(offset, 1U, "GlobalTensor::GetValue");
        opgen_sim::CountScalar();
        opgen_sim::PollPoint(p, sizeof(PrimType));
        PrimType v;
        std::memcpy(&v, p, sizeof(PrimType));
        return v;
    }
    __aicore__ void SetValue(const uint64_t offset, PrimType value)
    {
        static_assert(opgen_sim::ElementBits<T>::value % 8 == 0, "scalar access of packed 4-bit elements");
        uint8_t* p = SimSpan(offset, 1U, "GlobalTensor::SetValue");
        opgen_sim::CountScalar();
        opgen_sim::GmWritten(p, sizeof(PrimType));
        std::memcpy(p, &value, sizeof(PrimType));
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    // A reference to the GM element for the scalar unit: checked like GetValue; a store through it is not recorded
    // for the GM race check (the twin cannot see it happen).
    __aicore__ __gm__ PrimType& operator()(const uint64_t offset) const
    {
        static_assert(opgen_sim::ElementBits<T>::value % 8 == 0, "scalar access of packed 4-bit elements");
        uint8_t* p = SimSpan(offset, 1U, "GlobalTensor::operator()");
        opgen_sim::CountScalar();
        opgen_sim::PollPoint(p, sizeof(PrimType));
        return *reinterpret_cast<PrimType*>(p);
    }
    __aicore__ uint64_t GetSize() const { return size_; }
    __aicore__ GlobalTensor operator[](const uint64_t offset) const
    {
        GlobalTensor r = *this;
        r.addr_ = addr_ + SimBytes<T>(offset);
        if (sized_) {
            if (offset > size_) {
                opgen_sim::Raise("GlobalTensor<%s>::operator[](%llu): past the tensor's %llu elements",
                                 opgen_sim::TypeName<T>(), static_cast<unsigned long long>(offset),
                                 static_cast<unsigned long long>(size_));
            }
            r.size_ = size_ - offset;
        }
        return r;
    }
    template <typename U = T>
    __aicore__ void SetL2CacheHint(CacheMode mode)
    {
        (void)mode;  // a cache policy: no effect on the values
    }
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // include/basic_api/kernel_tensor.h (3510 / 5102 only; impl/basic_api/kernel_tensor_impl.h): the same GM bytes
    // as U, the size in U's elements (bits scaled; an unsized tensor stays unsized)
    template <typename U>
    __aicore__ GlobalTensor<U> ReinterpretCast() const
    {
        GlobalTensor<U> r;
        if (sized_) {
            r.SetGlobalBuffer(reinterpret_cast<U*>(addr_), size_ * SimBits<T>() / SimBits<U>());
        } else {
            r.SetGlobalBuffer(reinterpret_cast<U*>(addr_));
        }
        return r;
    }
#endif

    // ---- twin only: the GM bytes of elements [first, first + count), checked ----
    uint8_t* SimSpan(uint64_t first, uint64_t count, const char* what) const
    {
        if (sized_ && first + count > size_) {
            opgen_sim::Raise("%s: out-of-bounds GlobalTensor access: %s elements [%llu, %llu) of a tensor of %llu",
                             what, opgen_sim::TypeName<T>(), static_cast<unsigned long long>(first),
                             static_cast<unsigned long long>(first + count), static_cast<unsigned long long>(size_));
        }
        if ((first * SimBits<T>()) % 8U != 0U) {
            opgen_sim::Raise("%s: element %llu of a packed 4-bit tensor starts inside a byte", what,
                             static_cast<unsigned long long>(first));
        }
        uint8_t* p = addr_ + first * SimBits<T>() / 8U;
        opgen_sim::CheckGm(p, SimBytes<T>(count), what);
        return p;
    }

private:
    uint8_t* addr_ = nullptr;
    uint64_t size_ = 0U;
    bool sized_ = false;
};

// ---- queues and buffers ------------------------------------------------------------------------------------
class TPipe;

// The buffers InitBuffer gave a queue or TBuf, and where each one is in its life cycle.
struct SimQueue {
    enum State : uint8_t { FREE, ALLOCATED, ENQUEUED, DEQUEUED };
    struct Buffer {
        uint32_t off;
        uint32_t bytes;
        State state;
    };
    std::vector<Buffer> buffers;
    std::deque<uint32_t> fifo;  // enqueued buffers, oldest first
    const uint64_t* pipeGen = nullptr;
    uint64_t gen = 0U;
    uint8_t* ub = nullptr;

    void Live(const char* what) const
    {
        if (pipeGen == nullptr || buffers.empty()) {
            opgen_sim::Raise("%s: the queue or buffer has no memory (TPipe::InitBuffer was not called)", what);
        }
        if (*pipeGen != gen) {
            opgen_sim::Raise("%s: the queue's memory was released by TPipe::Reset; call InitBuffer again", what);
        }
    }
    uint32_t Find(uint32_t off, const char* what) const
    {
        for (uint32_t i = 0U; i < buffers.size(); ++i) {
            if (buffers[i].off == off) {
                return i;
            }
        }
        opgen_sim::Raise("%s: the tensor (UB %u) is not a buffer of this queue", what, off);
    }
};

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    __aicore__ TQueBind() = default;
    template <typename T>
    __aicore__ LocalTensor<T> AllocTensor()
    {
        sim_.Live("AllocTensor");
        for (SimQueue::Buffer& b : sim_.buffers) {
            if (b.state == SimQueue::FREE) {
                b.state = SimQueue::ALLOCATED;
                opgen_sim::MakeAllVisible(b.off, b.off + b.bytes);  // FreeTensor -> AllocTensor is a sync
                opgen_sim::QueueBufferAllocated(b.off);
                return LocalTensor<T>::SimMake(sim_.ub, b.off, b.off + b.bytes, sim_.pipeGen, sim_.gen);
            }
        }
        opgen_sim::Raise("AllocTensor: all %zu buffers of the queue are in use (a FreeTensor missing?): the device "
                         "would wait forever", sim_.buffers.size());
    }
    template <typename T>
    __aicore__ void FreeTensor(LocalTensor<T>& tensor)
    {
        sim_.Live("FreeTensor");
        SimQueue::Buffer& b = sim_.buffers[sim_.Find(tensor.SimOffset(), "FreeTensor")];
        if (b.state == SimQueue::FREE || b.state == SimQueue::ENQUEUED) {
            opgen_sim::Raise("FreeTensor: the buffer at UB %u is %s", b.off,
                             b.state == SimQueue::FREE ? "already free" : "still in the queue (EnQue without DeQue)");
        }
        b.state = SimQueue::FREE;
        opgen_sim::QueueBufferFreed(b.off, b.off + b.bytes);
    }
    template <typename T>
    __aicore__ bool EnQue(const LocalTensor<T>& tensor)
    {
        sim_.Live("EnQue");
        opgen_sim::CountSync(opgen_sim::SYNC_ENQUE);
        const uint32_t i = sim_.Find(tensor.SimOffset(), "EnQue");
        if (sim_.buffers[i].state != SimQueue::ALLOCATED) {
            opgen_sim::Raise("EnQue: the buffer at UB %u was not allocated (AllocTensor) or is already queued",
                             sim_.buffers[i].off);
        }
        sim_.buffers[i].state = SimQueue::ENQUEUED;
        sim_.fifo.push_back(i);
        // the queue orders its producer's pipe before its consumer's
        opgen_sim::MakeAllVisible(sim_.buffers[i].off, sim_.buffers[i].off + sim_.buffers[i].bytes);
        return true;
    }
    template <typename T>
    __aicore__ LocalTensor<T> DeQue()
    {
        sim_.Live("DeQue");
        opgen_sim::CountSync(opgen_sim::SYNC_DEQUE);
        if (sim_.fifo.empty()) {
            opgen_sim::Raise("DeQue without EnQue: the queue is empty (the device would wait forever)");
        }
        const uint32_t i = sim_.fifo.front();
        sim_.fifo.pop_front();
        SimQueue::Buffer& b = sim_.buffers[i];
        b.state = SimQueue::DEQUEUED;
        return LocalTensor<T>::SimMake(sim_.ub, b.off, b.off + b.bytes, sim_.pipeGen, sim_.gen);
    }
    __aicore__ bool VacantInQue() { return sim_.fifo.size() < sim_.buffers.size(); }
    __aicore__ bool HasTensorInQue() { return !sim_.fifo.empty(); }

    SimQueue sim_;  // twin state
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {
public:
    __aicore__ TQue() = default;
};

template <TPosition pos = TPosition::LCM>
class TBuf : public TQueBind<pos, pos, 0, 0> {
public:
    __aicore__ TBuf() = default;
    template <typename T>
    __aicore__ LocalTensor<T> Get()
    {
        const SimQueue::Buffer& b = Whole("TBuf::Get");
        return LocalTensor<T>::SimMake(this->sim_.ub, b.off, b.off + b.bytes, this->sim_.pipeGen, this->sim_.gen);
    }
    template <typename T>
    __aicore__ LocalTensor<T> Get(uint32_t len)
    {
        return GetWithOffset<T>(len, 0U);
    }
    template <typename T>
    __aicore__ LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset)
    {
        const SimQueue::Buffer& b = Whole("TBuf::GetWithOffset");
        const uint64_t bytes = SimBytes<T>(size);
        if (bufOffset % SIM_UB_ALIGN != 0U) {
            opgen_sim::Raise("TBuf::GetWithOffset: offset %u is not 32-byte aligned", bufOffset);
        }
        if (bufOffset + bytes > b.bytes) {
            opgen_sim::Raise("TBuf::GetWithOffset: %u %s at byte %u overrun the %u-byte buffer", size,
                             opgen_sim::TypeName<T>(), bufOffset, b.bytes);
        }
        const uint32_t off = b.off + bufOffset;
        return LocalTensor<T>::SimMake(this->sim_.ub, off, static_cast<uint32_t>(off + bytes), this->sim_.pipeGen,
                                       this->sim_.gen);
    }

private:
    const SimQueue::Buffer& Whole(const char* what) const
    {
        this->sim_.Live(what);
        return this->sim_.buffers[0];
    }
};

class TPipe {
public:
    __aicore__ TPipe()
    {
        if (opgen_sim::t_core != nullptr) {
            opgen_sim::t_core->pipe = this;
        }
        opgen_sim::InitSocState();
    }
    __aicore__ ~TPipe()
    {
        if (opgen_sim::t_core != nullptr && opgen_sim::t_core->pipe == this) {
            opgen_sim::t_core->pipe = nullptr;
        }
    }
    __aicore__ void Init() {}
    template <class T>
    __aicore__ bool InitBuffer(T& que, uint8_t num, uint32_t len)
    {
        if (num == 0U) {
            opgen_sim::Raise("TPipe::InitBuffer: a queue of 0 buffers");
        }
        Give(que.sim_, num, len, "TPipe::InitBuffer (queue)");
        return true;
    }
    template <TPosition pos>
    __aicore__ bool InitBuffer(TBuf<pos>& buf, uint32_t len)
    {
        Give(buf.sim_, 1U, len, "TPipe::InitBuffer (TBuf)");
        return true;
    }
    template <HardEvent evt>
    __aicore__ TEventID AllocEventID()
    {
        return 0;
    }
    template <HardEvent evt>
    __aicore__ void ReleaseEventID(TEventID id)
    {
        (void)id;
    }
    template <HardEvent evt>
    __aicore__ TEventID FetchEventID()
    {
        return 0;
    }
    __aicore__ TEventID FetchEventID(HardEvent evt)
    {
        (void)evt;
        return 0;
    }
    __aicore__ void Destroy() { Reset(); }
    // Releases every buffer: tensors and queues from before are stale until InitBuffer gives them memory again.
    __aicore__ void Reset()
    {
        used_ = 0U;
        ++gen_;
        opgen_sim::PipeReset();  // orders the freed queue buffers only: the UB accesses before it stay recorded
        opgen_sim::InitSocState();
    }

    uint64_t SimUsed() const { return used_; }

private:
    void Give(SimQueue& q, uint32_t num, uint32_t len, const char* what)
    {
        SimGive(q, num, len, used_, 0U, nullptr, &gen_, what);
    }

public:
    // twin only: num buffers of len bytes (32-byte aligned) for q at UB `base + used`, bounded by `limit` bytes from
    // base (0: the UB), used advanced; `gen` the pipe generation the queue lives in
    static void SimGive(SimQueue& q, uint32_t num, uint32_t len, uint64_t& used, uint64_t base, const uint64_t* limit,
                        const uint64_t* gen, const char* what)
    {
        if (opgen_sim::t_core == nullptr || opgen_sim::g_world == nullptr) {
            opgen_sim::Raise("%s outside a twin core", what);
        }
        const uint64_t each = (static_cast<uint64_t>(len) + SIM_UB_ALIGN - 1U) / SIM_UB_ALIGN * SIM_UB_ALIGN;
        const uint64_t capacity = limit != nullptr ? *limit : opgen_sim::g_world->ubBytes;
        if (used + each * num > capacity) {
            opgen_sim::Raise("%s: %s capacity exceeded: %u x %llu bytes at %s offset %llu need %llu bytes, the %s has "
                             "%llu", what, limit != nullptr ? "TBufPool" : "UB", num,
                             static_cast<unsigned long long>(each), limit != nullptr ? "pool" : "UB",
                             static_cast<unsigned long long>(used), static_cast<unsigned long long>(used + each * num),
                             limit != nullptr ? "pool" : "core", static_cast<unsigned long long>(capacity));
        }
        q.buffers.clear();
        q.fifo.clear();
        for (uint32_t i = 0U; i < num; ++i) {
            q.buffers.push_back({static_cast<uint32_t>(base + used), static_cast<uint32_t>(each), SimQueue::FREE});
            used += each;
        }
        q.pipeGen = gen;
        q.gen = *gen;
        q.ub = opgen_sim::t_core->ub;
    }

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // include/basic_api/kernel_tpipe.h (3510) TPipe::InitBufPool: a pool of len bytes from the pipe's UB; with a
    // shareBuf, the pool starts where shareBuf does (the two reuse the same bytes), len at most shareBuf's
    template <class T>
    __aicore__ bool InitBufPool(T& bufPool, uint32_t len)
    {
        SimQueue whole;
        Give(whole, 1U, len, "TPipe::InitBufPool");
        bufPool.SimSet(whole.buffers[0].off, whole.buffers[0].bytes, &gen_);
        return true;
    }
    template <class T, class U>
    __aicore__ bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf)
    {
        const uint64_t each = (static_cast<uint64_t>(len) + SIM_UB_ALIGN - 1U) / SIM_UB_ALIGN * SIM_UB_ALIGN;
        if (shareBuf.SimGen() != &gen_ || each > shareBuf.SimBytes()) {
            opgen_sim::Raise("TPipe::InitBufPool: a pool of %u bytes sharing a pool of %llu bytes%s", len,
                             static_cast<unsigned long long>(shareBuf.SimBytes()),
                             shareBuf.SimGen() != &gen_ ? " this pipe did not make" : ": longer than it");
        }
        bufPool.SimSet(shareBuf.SimBase(), each, &gen_);
        return true;
    }
#endif

private:
    uint64_t used_ = 0U;
    uint64_t gen_ = 1U;
};

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// include/basic_api/kernel_tpipe.h (3510) TBufPool: a part of the UB (TPipe::InitBufPool) whose InitBuffer carves
// queues and TBufs from its own bytes, bounded by them
template <TPosition pos, uint32_t bufIDSize = 4>
class TBufPool {
public:
    __aicore__ TBufPool() = default;
    template <class T>
    __aicore__ bool InitBuffer(T& que, uint8_t num, uint32_t len)
    {
        Live("TBufPool::InitBuffer (queue)");
        if (num == 0U) {
            opgen_sim::Raise("TBufPool::InitBuffer: a queue of 0 buffers");
        }
        TPipe::SimGive(que.sim_, num, len, used_, base_, &bytes_, gen_, "TBufPool::InitBuffer (queue)");
        return true;
    }
    template <TPosition bufPos>
    __aicore__ bool InitBuffer(TBuf<bufPos>& buf, uint32_t len)
    {
        Live("TBufPool::InitBuffer (TBuf)");
        TPipe::SimGive(buf.sim_, 1U, len, used_, base_, &bytes_, gen_, "TBufPool::InitBuffer (TBuf)");
        return true;
    }
    __aicore__ void Reset() { used_ = 0U; }

    void SimSet(uint64_t base, uint64_t bytes, const uint64_t* gen)
    {
        base_ = base;
        bytes_ = bytes;
        gen_ = gen;
        pipeGen_ = *gen;
        used_ = 0U;
    }
    uint64_t SimBase() const { return base_; }
    uint64_t SimBytes() const { return bytes_; }
    const uint64_t* SimGen() const { return gen_; }

private:
    void Live(const char* what) const
    {
        if (gen_ == nullptr) {
            opgen_sim::Raise("%s: the pool has no memory (TPipe::InitBufPool was not called)", what);
        }
        if (*gen_ != pipeGen_) {
            opgen_sim::Raise("%s: the pool's memory was released by TPipe::Reset", what);
        }
    }
    uint64_t base_ = 0U;
    uint64_t bytes_ = 0U;
    uint64_t used_ = 0U;
    const uint64_t* gen_ = nullptr;
    uint64_t pipeGen_ = 0U;
};
#endif

__aicore__ inline TPipe* GetTPipePtr()
{
    if (opgen_sim::t_core == nullptr || opgen_sim::t_core->pipe == nullptr) {
        opgen_sim::Raise("GetTPipePtr: no TPipe is alive on this core");
    }
    return static_cast<TPipe*>(opgen_sim::t_core->pipe);
}

}  // namespace AscendC

#endif  // OPGEN_SIM_TENSOR_H
