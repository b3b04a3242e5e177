/**
 * Test driver of the twin's tiling TU (tests/test_sim_tiling.py): links with opgen/sim/tiling_entry.cpp, reads
 * tiling requests from stdin and prints one result line per request.
 *
 * A request is directives, one a line, then `run`; every `run` starts the next request afresh:
 *   node NAME | soc NAME | aiv N | aic N | ub BYTES | window BYTES
 *   attr KIND VALUE             IR order; KIND i (int64), b (0/1), f (C99 hex float), s (hex of UTF-8, '' = empty),
 *                               I (comma ints, '' = empty), - (absent, no VALUE)
 *   input DTYPE FORMAT DIMS     IR order; comma dims ('' = scalar); `input -` for an absent input
 *   output DTYPE FORMAT DIMS    IR order; `output -` for an output whose dtype the caller leaves open
 *   run
 * Result line: `ok|fail TILINGKEY BLOCKDIM SCHEDULEMODE WORKSPACEBYTES DATAHEX LOGHEX` ('-' for empty hex).
 * A malformed line prints `error LINE` and exits with status 2.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "opgen_sim/launch.h"

namespace {

[[noreturn]] void Malformed(const std::string &line)
{
    std::cout << "error " << line << std::endl;
    std::exit(2);
}

std::vector<int64_t> Ints(const std::string &text)
{
    std::vector<int64_t> out;
    if (text == "''") {
        return out;
    }
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        out.push_back(std::stoll(item));
    }
    return out;
}

std::string Unhex(const std::string &text)
{
    std::string out;
    if (text == "''") {
        return out;
    }
    for (size_t i = 0; i + 1 < text.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16)));
    }
    return out;
}

std::string Hex(const void *data, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    if (size == 0) {
        return "-";
    }
    std::string out;
    const auto *bytes = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < size; ++i) {
        out.push_back(digits[bytes[i] >> 4]);
        out.push_back(digits[bytes[i] & 0xF]);
    }
    return out;
}

opgen_sim::TensorArg Tensor(std::istringstream &in, const std::string &line)
{
    opgen_sim::TensorArg tensor;
    std::string dtype;
    if (!(in >> dtype)) {
        Malformed(line);
    }
    if (dtype == "-") {
        return tensor;
    }
    std::string dims;
    if (!(in >> tensor.format >> dims)) {
        Malformed(line);
    }
    tensor.present = true;
    tensor.dtype = std::stoi(dtype);
    tensor.dims = Ints(dims);
    return tensor;
}

opgen_sim::AttrArg Attr(std::istringstream &in, const std::string &line)
{
    opgen_sim::AttrArg attr;
    std::string value;
    if (!(in >> attr.kind) || (attr.kind != '-' && !(in >> value))) {
        Malformed(line);
    }
    switch (attr.kind) {
        case 'i':
        case 'b': attr.i = std::stoll(value); break;
        case 'f': attr.f = std::strtod(value.c_str(), nullptr); break;
        case 's': attr.s = Unhex(value); break;
        case 'I': attr.ints = Ints(value); break;
        case '-': break;
        default: Malformed(line);
    }
    return attr;
}

}  // namespace

int main()
{
    opgen_sim::TilingRequest request;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string directive;
        if (!(in >> directive)) {
            continue;
        }
        try {
            if (directive == "node") {
                in >> request.nodeName;
            } else if (directive == "soc") {
                in >> request.socVersion;
            } else if (directive == "aiv") {
                in >> request.aivNum;
            } else if (directive == "aic") {
                in >> request.aicNum;
            } else if (directive == "ub") {
                in >> request.ubBytes;
            } else if (directive == "window") {
                in >> request.windowBytes;
            } else if (directive == "attr") {
                request.attrs.push_back(Attr(in, line));
            } else if (directive == "input") {
                request.inputs.push_back(Tensor(in, line));
            } else if (directive == "output") {
                request.outputs.push_back(Tensor(in, line));
            } else if (directive == "run") {
                const opgen_sim::TilingResult result = OpgenSimTiling(request);
                std::cout << (result.ok ? "ok" : "fail") << ' ' << result.tilingKey << ' ' << result.blockDim << ' '
                          << result.scheduleMode << ' ' << result.workspaceBytes << ' '
                          << Hex(result.data.data(), result.data.size()) << ' '
                          << Hex(result.log.data(), result.log.size()) << '\n';
                request = opgen_sim::TilingRequest{};
            } else {
                Malformed(line);
            }
        } catch (const std::exception &) {  // std::stoll / std::stoi on a malformed number
            Malformed(line);
        }
        if (in.fail()) {
            Malformed(line);
        }
    }
    std::cout.flush();
    return 0;
}
