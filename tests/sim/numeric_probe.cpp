// Probe of opgen_sim/numeric.h for tests/test_sim_numeric.py (g++ -std=c++17 -I opgen/sim/include).
//
//   numeric_probe convert DST SRC MODE COUNT DEQSCALE IN OUT
//       ConvertElements<DST, SRC>(COUNT elements of raw SRC storage read from IN) into a DST buffer pre-filled
//       with 0xA5 bytes (so untouched nibbles show), written to OUT.  DEQSCALE is a C float literal.
//   numeric_probe inplace DST SRC MODE COUNT DEQSCALE IN OUT
//       the same conversion with dst == src: one buffer holding IN (zero-padded to the larger size)
//   numeric_probe documented DST SRC MODE  prints CastDocumented<DST, SRC>(MODE): 1 or 0
//   numeric_probe ctor T COUNT IN OUT      IN: COUNT float32 values; OUT: T(value).bits of each, raw
//   numeric_probe tofloat T COUNT IN OUT   IN: COUNT raw T values (fp4x2: one byte each); OUT: float(T) bits
//
// Type names are opgen_sim::TypeName's, modes the RoundMode enumerator names.  Exit status: 0 done, 3 the
// conversion is not supported (the message on stdout, OUT not written), 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "opgen_sim/numeric.h"

namespace {

template <typename T>
struct Tag {
    using type = T;
};

// Calls f(Tag<T>{}) for the one of Ts named `name`; false when none is.
template <typename... Ts, typename F>
bool WithOneOf(const std::string& name, F&& f)
{
    return ((name == opgen_sim::TypeName<Ts>() && (f(Tag<Ts>{}), true)) || ...);
}

// The float-constructible / float-convertible holder types.
template <typename F>
bool WithFloatType(const std::string& name, F&& f)
{
    return WithOneOf<half, bfloat16_t, hifloat8_t, fp8_e5m2_t, fp8_e4m3fn_t, fp8_e8m0_t, fp4x2_e2m1_t,
                     fp4x2_e1m2_t>(name, f);
}

// Every element type the probe takes.
template <typename F>
bool WithType(const std::string& name, F&& f)
{
    return WithOneOf<int8_t, uint8_t, int16_t, int32_t, float>(name, f) || WithFloatType(name, f);
}

bool ParseMode(const std::string& name, AscendC::RoundMode* mode)
{
    for (int m = 0; m < 8; ++m) {
        if (name == opgen_sim::RoundModeName(static_cast<AscendC::RoundMode>(m))) {
            *mode = static_cast<AscendC::RoundMode>(m);
            return true;
        }
    }
    return false;
}

std::vector<uint8_t> ReadFile(const char* path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool WriteFile(const char* path, const std::vector<uint8_t>& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

int Usage()
{
    std::fprintf(stderr,
                 "usage: numeric_probe convert|inplace DST SRC MODE COUNT DEQSCALE IN OUT\n"
                 "       numeric_probe documented DST SRC MODE\n"
                 "       numeric_probe ctor|tofloat T COUNT IN OUT\n");
    return 2;
}

int Convert(char** argv, bool inPlace)
{
    AscendC::RoundMode mode{};
    if (!ParseMode(argv[4], &mode)) {
        return Usage();
    }
    const uint32_t count = static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 10));
    const float deqScale = std::strtof(argv[6], nullptr);
    const std::vector<uint8_t> in = ReadFile(argv[7]);
    std::vector<uint8_t> out;
    std::string error;
    bool known = false;
    WithType(argv[2], [&](auto d) {
        using D = typename decltype(d)::type;
        known = WithType(argv[3], [&](auto s) {
            using S = typename decltype(s)::type;
            if (in.size() < opgen_sim::StorageBytes<S>(count)) {
                error = "input file too short";
                return;
            }
            const uint64_t dBytes = opgen_sim::StorageBytes<D>(count);
            if (inPlace) {
                out.assign(in.begin(), in.end());
                out.resize(dBytes > out.size() ? dBytes : out.size(), 0U);
                opgen_sim::ConvertElements<D, S>(out.data(), out.data(), count, mode, deqScale, &error);
                out.resize(dBytes);
            } else {
                out.assign(dBytes, 0xA5U);
                opgen_sim::ConvertElements<D, S>(out.data(), in.data(), count, mode, deqScale, &error);
            }
        });
    });
    if (!known) {
        return Usage();
    }
    if (!error.empty()) {
        std::printf("error: %s\n", error.c_str());
        return 3;
    }
    return WriteFile(argv[8], out) ? 0 : 1;
}

int Documented(char** argv)
{
    AscendC::RoundMode mode{};
    if (!ParseMode(argv[4], &mode)) {
        return Usage();
    }
    bool documented = false;
    bool known = false;
    WithType(argv[2], [&](auto d) {
        known = WithType(argv[3], [&](auto s) {
            documented = opgen_sim::CastDocumented<typename decltype(d)::type, typename decltype(s)::type>(mode);
        });
    });
    if (!known) {
        return Usage();
    }
    std::printf("%d\n", documented ? 1 : 0);
    return 0;
}

int Scalar(bool ctor, char** argv)
{
    const uint32_t count = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
    const std::vector<uint8_t> in = ReadFile(argv[4]);
    std::vector<uint8_t> out;
    const bool known = WithFloatType(argv[2], [&](auto tag) {
        using T = typename decltype(tag)::type;
        const size_t inSize = ctor ? sizeof(float) : sizeof(T);
        if (in.size() < inSize * count) {
            return;
        }
        out.resize((ctor ? sizeof(T) : sizeof(float)) * count);
        for (uint32_t i = 0U; i < count; ++i) {
            if (ctor) {
                float v;
                std::memcpy(&v, in.data() + i * sizeof(float), sizeof(float));
                const T t = static_cast<T>(v);
                std::memcpy(out.data() + i * sizeof(T), &t.bits, sizeof(T));
            } else {
                T t;
                std::memcpy(&t.bits, in.data() + i * sizeof(T), sizeof(T));
                const float v = static_cast<float>(t);
                std::memcpy(out.data() + i * sizeof(float), &v, sizeof(float));
            }
        }
    });
    if (!known || out.empty() != (count == 0U)) {
        return Usage();
    }
    return WriteFile(argv[5], out) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    static_assert(std::is_trivially_copyable<half>::value && std::is_trivially_copyable<fp4x2_e2m1_t>::value,
                  "element types are raw storage");
    static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2 && sizeof(hifloat8_t) == 1 &&
                      sizeof(fp8_e8m0_t) == 1 && sizeof(fp4x2_e1m2_t) == 1,
                  "element types are their storage size");
    static_assert(!std::is_same<half, bfloat16_t>::value && !std::is_same<fp8_e5m2_t, fp8_e4m3fn_t>::value &&
                      !std::is_same<hifloat8_t, fp8_e8m0_t>::value && !std::is_same<fp4x2_e2m1_t, fp4x2_e1m2_t>::value,
                  "element types are distinct");
    static_assert(opgen_sim::ElementBits<fp4x2_e2m1_t>::value == 4 && opgen_sim::ElementBits<half>::value == 16 &&
                      opgen_sim::ElementBits<uint64_t>::value == 64 && opgen_sim::IsPacked4<fp4x2_e1m2_t>::value &&
                      !opgen_sim::IsPacked4<int8_t>::value,
                  "element bits");
    const std::string cmd = argc > 1 ? argv[1] : "";
    if ((cmd == "convert" || cmd == "inplace") && argc == 9) {
        return Convert(argv, cmd == "inplace");
    }
    if (cmd == "documented" && argc == 5) {
        return Documented(argv);
    }
    if ((cmd == "ctor" || cmd == "tofloat") && argc == 6) {
        return Scalar(cmd == "ctor", argv);
    }
    return Usage();
}
