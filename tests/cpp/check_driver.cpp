// Differential-test driver of a generated check core (tests/test_check_core.py).
//
// Built once per op with
//   g++ -std=c++17 -O1 -DOPGEN_CHECK_HEADER='"<op>_check.h"' -DOPGEN_CHECK_NS=opgen_check::<op>
//       -DOPGEN_CHECK_FIELDS='"<op>_fields.inc"' check_driver.cpp
// where the fields file lists the Params fields in line order as X-macros:
//   INPUT(name) OUTPUT(name) INT(name) REAL(name) BOOL(name) STR(name) INT_LIST(name) REAL_LIST(name) ...
// and OUTPUT_FIELD(name) once per output (for the inferred shapes and dtypes).
//
// Usage: check_driver <soc> [--show-float], one case per stdin line, one result line per case on stdout.
// Case tokens, separated by single spaces, in field order:
//   input tensor  "-" (null) or "<dtype>:<d0>,<d1>,..." ("<dtype>:" for rank 0)
//   output        "-" (dtype not fixed) or "<dtype>"
//   int / bool    decimal (bool: 0 or 1)          float  C99 hex float, "inf", "-inf" or "nan"
//   string        "h" followed by the hex of its UTF-8 bytes
//   list          "l" followed by its items, comma-separated, each encoded as above
// Result: "<code> h<id> h<param> h<message> <n> h<warning message>... S<ok> <shape>... D<ok> <dtype>..."
// with shapes as comma-separated dims ("_" for rank 0), in output order.
// With --show-float, each stdin line is one hex float and the output is detail::ShowFloat of it.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include OPGEN_CHECK_HEADER

namespace ck = OPGEN_CHECK_NS;

namespace {

std::string Hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out = "h";
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Unhex(const std::string& token) {  // token is "h<hex>"
  std::string out;
  for (std::size_t i = 1; i + 1 < token.size(); i += 2) {
    out += static_cast<char>(std::stoi(token.substr(i, 2), nullptr, 16));
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) {
    out.push_back(item);
  }
  return out;
}

int64_t ReadInt(const std::string& t) { return std::stoll(t); }
double ReadReal(const std::string& t) { return std::strtod(t.c_str(), nullptr); }
bool ReadBool(const std::string& t) { return t == "1"; }

void ReadInput(const std::string& t, ck::TensorDesc* desc) {
  desc->present = t != "-";
  desc->dims.clear();
  if (!desc->present) {
    return;
  }
  const std::size_t colon = t.find(':');
  desc->dtype = static_cast<int32_t>(std::stoi(t.substr(0, colon)));
  for (const std::string& d : Split(t.substr(colon + 1), ',')) {
    desc->dims.push_back(std::stoll(d));
  }
}

void ReadOutput(const std::string& t, ck::TensorDesc* desc) {
  desc->present = t != "-";
  desc->dtype = desc->present ? static_cast<int32_t>(std::stoi(t)) : 0;
}

template <typename T, typename F>
std::vector<T> ReadList(const std::string& t, F item) {
  std::vector<T> out;
  for (const std::string& s : Split(t.substr(1), ',')) {
    out.push_back(item(s));
  }
  return out;
}

void ParseCase(const std::vector<std::string>& tok, ck::Params* p) {
  std::size_t i = 0;
#define INPUT(name) ReadInput(tok.at(i++), &p->name);
#define OUTPUT(name) ReadOutput(tok.at(i++), &p->name);
#define INT(name) p->name = ReadInt(tok.at(i++));
#define REAL(name) p->name = ReadReal(tok.at(i++));
#define BOOL(name) p->name = ReadBool(tok.at(i++));
#define STR(name) p->name = Unhex(tok.at(i++));
#define INT_LIST(name) p->name = ReadList<int64_t>(tok.at(i++), ReadInt);
#define REAL_LIST(name) p->name = ReadList<double>(tok.at(i++), ReadReal);
#define BOOL_LIST(name) p->name = ReadList<bool>(tok.at(i++), ReadBool);
#define STR_LIST(name) p->name = ReadList<std::string>(tok.at(i++), Unhex);
// an env variable: its value, or "?" where tiling could not read it (Params::<name>_read false)
#define ENV_READ(name, read)         \
  p->name##_read = tok.at(i) != "?"; \
  if (p->name##_read) {              \
    p->name = read(tok.at(i));       \
  }                                  \
  ++i;
#define ENV_INT(name) ENV_READ(name, ReadInt)
#define ENV_REAL(name) ENV_READ(name, ReadReal)
#define ENV_BOOL(name) ENV_READ(name, ReadBool)
#define ENV_STR(name) ENV_READ(name, Unhex)
#define OUTPUT_FIELD(name)
#include OPGEN_CHECK_FIELDS
#undef INPUT
#undef OUTPUT
#undef INT
#undef REAL
#undef BOOL
#undef STR
#undef INT_LIST
#undef REAL_LIST
#undef BOOL_LIST
#undef STR_LIST
#undef ENV_READ
#undef ENV_INT
#undef ENV_REAL
#undef ENV_BOOL
#undef ENV_STR
#undef OUTPUT_FIELD
}

std::string Dims(const std::vector<int64_t>& dims) {
  if (dims.empty()) {
    return "_";
  }
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    out += (i > 0 ? "," : "") + std::to_string(dims[i]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <soc> [--show-float]\n", argv[0]);
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string line;
  if (argc > 2 && std::string(argv[2]) == "--show-float") {
    while (std::getline(std::cin, line)) {
      std::cout << ck::detail::ShowFloat(ReadReal(line)) << '\n';
    }
    return 0;
  }
  ck::Soc soc;
  if (!ck::ParseSoc(argv[1], &soc)) {
    std::fprintf(stderr, "unknown soc %s\n", argv[1]);
    return 2;
  }
  while (std::getline(std::cin, line)) {
    ck::Params params;
    ParseCase(Split(line, ' '), &params);
    std::vector<ck::CheckResult> warnings;
    const ck::CheckResult r = ck::Check(params, soc, &warnings);
    std::string out = std::to_string(r.code) + " " + Hex(r.id) + " " + Hex(r.param) + " " + Hex(r.message) + " " +
                      std::to_string(warnings.size());
    for (const ck::CheckResult& w : warnings) {
      out += " " + Hex(w.message);
    }
    ck::OutputShapes shapes;
    out += ck::InferShapes(params, soc, &shapes) ? " S1" : " S0";
#define OUTPUT_FIELD(name) out += " " + Dims(shapes.name);
#define INPUT(name)
#define OUTPUT(name)
#define INT(name)
#define REAL(name)
#define BOOL(name)
#define STR(name)
#define INT_LIST(name)
#define REAL_LIST(name)
#define BOOL_LIST(name)
#define STR_LIST(name)
#define ENV_INT(name)
#define ENV_REAL(name)
#define ENV_BOOL(name)
#define ENV_STR(name)
#include OPGEN_CHECK_FIELDS
#undef OUTPUT_FIELD
    ck::OutputDtypes dtypes;
    out += ck::InferDtypes(params, soc, &dtypes) ? " D1" : " D0";
#define OUTPUT_FIELD(name) out += " " + std::to_string(dtypes.name);
#include OPGEN_CHECK_FIELDS
#undef OUTPUT_FIELD
    std::cout << out << '\n';
  }
  return 0;
}
