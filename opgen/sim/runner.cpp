/**
 * The runner of a twin executable: `<exe> <job dir>` reads job.txt, tiles every rank with the generated tiling
 * function, allocates GM and the HCCL windows, runs blockDim threads per rank through the generated kernel and
 * writes the outputs and result.txt.  The protocol is in opgen/sim/README.md.
 */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "opgen_sim/launch.h"
#include "opgen_sim/world.h"

namespace {

constexpr uint8_t OUTPUT_POISON = 0xA5;  // unwritten output bytes stand out

struct JobError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The world is well formed but this host cannot map its memory (a window of cclBufferSize 2^63 - 1 bytes): not a
// verdict on the op, so its own exit status (4), which opgen.sim.job reports as TwinHostLimit.
struct HostLimitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct TensorFile {
    uint32_t index = 0;
    std::string name;
    opgen_sim::TensorArg arg;
    std::string file;
};

struct GroupSpec {
    uint32_t index = 0;
    uint32_t rankId = 0;
    std::vector<uint32_t> members;
};

struct Mc2ContextSpec {
    uint32_t input = 0;  // the op's input the caller's op_api filled with the domain's Mc2MoeContext
    uint32_t group = 0;  // the domain's group: its windows are what the context lists
};

struct RankJob {
    std::vector<GroupSpec> groups;
    std::vector<Mc2ContextSpec> contexts;
    std::vector<opgen_sim::AttrArg> attrs;
    std::vector<TensorFile> inputs;
    std::vector<TensorFile> outputs;
};

struct Job {
    uint32_t world = 0;
    std::string soc;
    std::string node;
    uint32_t aiv = 0;
    uint32_t aic = 0;
    uint64_t ub = 0;
    uint64_t window = 0;
    uint64_t expWindow = 0;    // bytes of every rank's windowsExp (0: the product's HCCL context lists none)
    uint64_t cclBuffer = 0;    // what GetCclBufferSize reports to tiling (0: the window), e.g. a stale default
    uint64_t platformUb = 0;    // the UB bytes the platform reports to the tiling (0: ub, the core's UB)
    uint64_t hcclBuffsize = 0;  // the HCCL_BUFFSIZE bytes the tiling reads (0: the window); the real HCCL of Ascend
                                // 950 allocates twice it as each window
    bool cclUnreadable = false;  // GetCclBufferSize fails (`ccl_buffer unreadable`)
    uint32_t npuArch = 0;      // the platform's NpuArch (0: not reported); the real op_host tilings read it
    double timeout = 60.0;
    uint32_t serverRanks = 0;  // ranks per server (0: one server holds the whole world)
    std::string windowsIn;   // window pages an earlier kernel of the pipeline left (windows_in)
    std::string windowsOut;  // where to leave this kernel's window pages for the next one (windows_out)
    std::vector<RankJob> ranks;
};

// What the caller's op_api puts in the MC2 context input of an op whose EP domain is one (Mc2MoeContext, code:
// mc2/common/op_kernel/mc2_moe_context.h; the op_api builds it, mc2/common/op_api/mc2_context.cpp): the rank's id in
// the domain, the ranks per server, then the base of every member's window (status area first); the group's HCCL
// context is not handed to the kernel.
constexpr uint32_t MC2_CONTEXT_RANKS = 1024U;
struct Mc2MoeContextLayout {
    uint32_t epRankId;
    uint32_t rankSizePerServer;
    uint64_t kfcContextAddr;
    uint64_t epHcclBuffer[MC2_CONTEXT_RANKS];
    uint64_t hcommHandle[MC2_CONTEXT_RANKS];
};

std::string Unhex(const std::string& hex)
{
    if (hex.size() % 2U != 0U) {
        throw JobError("odd-length hex string: " + hex);
    }
    std::string out;
    for (size_t i = 0; i < hex.size(); i += 2U) {
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2U), nullptr, 16)));
    }
    return out;
}

std::string Hex(const std::string& text)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : text) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15U]);
    }
    return out;
}

std::vector<int64_t> Ints(const std::string& text)
{
    std::vector<int64_t> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) {
            out.push_back(std::stoll(item));
        }
    }
    return out;
}

// `dims` is '' for a scalar; the protocol writes it as "_" so that the fields stay positional.
std::vector<int64_t> Dims(const std::string& text)
{
    return text == "_" ? std::vector<int64_t>{} : Ints(text);
}

opgen_sim::AttrArg ParseAttr(const std::string& kind, const std::string& value)
{
    opgen_sim::AttrArg a;
    a.kind = kind.empty() ? '-' : kind[0];
    switch (a.kind) {
        case 'i':
        case 'b':
            a.i = std::stoll(value);
            break;
        case 'f':
            a.f = std::strtod(value.c_str(), nullptr);
            break;
        case 's':
            a.s = value == "_" ? "" : Unhex(value);
            break;
        case 'I':
            a.ints = value == "_" ? std::vector<int64_t>{} : Ints(value);
            break;
        case '-':
            break;
        default:
            throw JobError("unknown attribute kind " + kind);
    }
    return a;
}

Job ReadJob(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        throw JobError("cannot read " + path);
    }
    Job job;
    RankJob* rank = nullptr;
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) {
            line.resize(hash);
        }
        std::stringstream ss(line);
        std::vector<std::string> w;
        for (std::string t; ss >> t;) {
            w.push_back(t);
        }
        if (w.empty()) {
            continue;
        }
        const std::string& key = w[0];
        auto need = [&](size_t n) {
            if (w.size() < n) {
                throw JobError("job.txt:" + std::to_string(lineNo) + ": `" + key + "` needs " +
                               std::to_string(n - 1) + " fields");
            }
        };
        if (key == "world") {
            need(2);
            job.world = static_cast<uint32_t>(std::stoul(w[1]));
            job.ranks.resize(job.world);
        } else if (key == "soc") {
            need(2);
            job.soc = w[1];
        } else if (key == "node") {
            need(2);
            job.node = w[1];
        } else if (key == "aiv") {
            need(2);
            job.aiv = static_cast<uint32_t>(std::stoul(w[1]));
        } else if (key == "aic") {
            need(2);
            job.aic = static_cast<uint32_t>(std::stoul(w[1]));
        } else if (key == "ub") {
            need(2);
            job.ub = std::stoull(w[1]);
        } else if (key == "window") {
            need(2);
            job.window = std::stoull(w[1]);
        } else if (key == "platform_ub") {
            need(2);
            job.platformUb = std::stoull(w[1]);
        } else if (key == "hccl_buffsize") {
            need(2);
            job.hcclBuffsize = std::stoull(w[1]);
        } else if (key == "exp_window") {
            need(2);
            job.expWindow = std::stoull(w[1]);
        } else if (key == "ccl_buffer") {
            need(2);
            job.cclUnreadable = w[1] == "unreadable";
            job.cclBuffer = job.cclUnreadable ? 0U : std::stoull(w[1]);
        } else if (key == "npu_arch") {
            need(2);
            job.npuArch = static_cast<uint32_t>(std::stoul(w[1]));
        } else if (key == "timeout") {
            need(2);
            job.timeout = std::stod(w[1]);
        } else if (key == "server") {
            need(2);
            job.serverRanks = static_cast<uint32_t>(std::stoul(w[1]));
        } else if (key == "windows_in") {
            need(2);
            job.windowsIn = w[1];
        } else if (key == "windows_out") {
            need(2);
            job.windowsOut = w[1];
        } else if (key == "rank") {
            need(2);
            const uint32_t r = static_cast<uint32_t>(std::stoul(w[1]));
            if (r >= job.ranks.size()) {
                throw JobError("job.txt:" + std::to_string(lineNo) + ": rank " + w[1] + " outside the world");
            }
            rank = &job.ranks[r];
        } else if (key == "end") {
            rank = nullptr;
        } else if (rank == nullptr) {
            throw JobError("job.txt:" + std::to_string(lineNo) + ": `" + key + "` outside a rank block");
        } else if (key == "group") {
            need(3);
            GroupSpec g;
            g.index = static_cast<uint32_t>(std::stoul(w[1]));
            g.rankId = static_cast<uint32_t>(std::stoul(w[2]));
            for (size_t i = 3; i < w.size(); ++i) {
                g.members.push_back(static_cast<uint32_t>(std::stoul(w[i])));
            }
            rank->groups.push_back(g);
        } else if (key == "mc2_context") {
            need(3);
            rank->contexts.push_back(Mc2ContextSpec{static_cast<uint32_t>(std::stoul(w[1])),
                                                    static_cast<uint32_t>(std::stoul(w[2]))});
        } else if (key == "attr") {
            need(4);
            const size_t index = std::stoul(w[1]);
            if (rank->attrs.size() <= index) {
                rank->attrs.resize(index + 1U);
            }
            rank->attrs[index] = ParseAttr(w[3], w.size() > 4 ? w[4] : "");
        } else if (key == "input" || key == "output") {
            need(4);
            TensorFile t;
            t.index = static_cast<uint32_t>(std::stoul(w[1]));
            t.name = w[2];
            if (w[3] != "-") {
                need(7);
                t.arg.present = true;
                t.arg.dtype = std::stoi(w[3]);
                t.arg.format = std::stoi(w[4]);
                t.arg.dims = Dims(w[5]);
                t.file = w[6];
            }
            auto& list = key == "input" ? rank->inputs : rank->outputs;
            if (list.size() <= t.index) {
                list.resize(t.index + 1U);
            }
            list[t.index] = t;
        } else {
            throw JobError("job.txt:" + std::to_string(lineNo) + ": unknown directive `" + key + "`");
        }
    }
    if (job.world == 0U || job.aiv == 0U || job.ub == 0U || job.window == 0U) {
        throw JobError("job.txt must set world, aiv, ub and window");
    }
    return job;
}

// A job's file: absolute, or relative to the job directory.
std::string InJob(const std::string& dir, const std::string& path)
{
    return !path.empty() && path[0] == '/' ? path : dir + "/" + path;
}

// Storage bytes of a tensor: ge::DataType -> bits per element.
uint64_t ElementBits(int32_t dtype)
{
    switch (dtype) {
        case 0: case 3: case 8: return 32;              // FLOAT, INT32, UINT32
        case 1: case 6: case 7: case 27: return 16;     // FLOAT16, INT16, UINT16, BFLOAT16
        case 2: case 4: case 12: return 8;              // INT8, UINT8, BOOL
        case 9: case 10: return 64;                     // INT64, UINT64
        case 11: return 64;                             // DOUBLE
        case 34: case 35: case 36: case 37: return 8;   // HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0
        case 40: case 41: return 4;                     // FLOAT4_E2M1, FLOAT4_E1M2
        default: throw JobError("unknown ge::DataType " + std::to_string(dtype));
    }
}

uint64_t TensorBytes(const opgen_sim::TensorArg& t)
{
    uint64_t n = 1;
    for (int64_t d : t.dims) {
        n *= static_cast<uint64_t>(d);
    }
    return (n * ElementBits(t.dtype) + 7U) / 8U;
}

std::vector<uint8_t> ReadFile(const std::string& path, uint64_t bytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw JobError("cannot read " + path);
    }
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() != bytes) {
        throw JobError(path + ": " + std::to_string(data.size()) + " bytes, the tensor has " + std::to_string(bytes));
    }
    return data;
}

// GM memory of the world: every block is a registered region.
struct Gm {
    std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> blocks;

    // `raced`: the rank's cores must not write the same bytes between SyncAlls (outputs, workspace); windows
    // are written by peers under the flag protocol, inputs and tiling data not at all.
    uint8_t* Add(uint64_t bytes, const std::string& name, opgen_sim::World& world, int fill, bool raced = false)
    {
        const uint64_t padded = bytes == 0U ? 64U : (bytes + 63U) / 64U * 64U;
        // calloc keeps untouched window pages unmapped: W windows of HCCL_BUFFSIZE cost what the kernel writes
        uint8_t* p = static_cast<uint8_t*>(std::calloc(1, padded + 64U));
        if (p == nullptr) {
            throw HostLimitError("this host cannot map " + std::to_string(bytes) + " bytes for " + name);
        }
        blocks.emplace_back(p, std::free);
        uint8_t* base = p + (64U - reinterpret_cast<uintptr_t>(p) % 64U) % 64U;
        if (fill != 0) {
            std::memset(base, fill, bytes);
        }
        world.regions.push_back({reinterpret_cast<uintptr_t>(base), bytes, name,
                                 raced ? std::make_shared<opgen_sim::WriteLog>() : nullptr});
        return base;
    }
};

// The windows of one kind (windowsIn, windowsExp, windowsOut) of every (group, rank): bases[g][r], `bytes` each.
struct WindowSet {
    std::vector<std::vector<uint8_t*>> bases;
    uint64_t bytes = 0;
};

// Window pages carried from one kernel of a pipeline to the next (DispatchSetup -> DispatchTeardown): the
// file lists, per (kind, group, rank) window, its non-zero 4 KiB pages as (kind u32, group u32, rank u32,
// offset u64, page).
constexpr uint64_t PAGE = 4096;

void SaveWindows(const std::string& path, const std::vector<WindowSet>& sets)
{
    std::ofstream out(path, std::ios::binary);
    static const uint8_t zero[PAGE] = {};
    for (uint32_t k = 0; k < sets.size(); ++k) {
        const WindowSet& ws = sets[k];
        for (uint32_t g = 0; g < ws.bases.size(); ++g) {
            for (uint32_t r = 0; r < ws.bases[g].size(); ++r) {
                for (uint64_t off = 0; off < ws.bytes; off += PAGE) {
                    const uint64_t n = std::min<uint64_t>(PAGE, ws.bytes - off);
                    if (std::memcmp(ws.bases[g][r] + off, zero, n) == 0) {
                        continue;
                    }
                    out.write(reinterpret_cast<const char*>(&k), sizeof(k));
                    out.write(reinterpret_cast<const char*>(&g), sizeof(g));
                    out.write(reinterpret_cast<const char*>(&r), sizeof(r));
                    out.write(reinterpret_cast<const char*>(&off), sizeof(off));
                    out.write(reinterpret_cast<const char*>(ws.bases[g][r] + off), static_cast<std::streamsize>(n));
                }
            }
        }
    }
    if (!out) {
        throw JobError("cannot write " + path);
    }
}

void LoadWindows(const std::string& path, const std::vector<WindowSet>& sets)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw JobError("cannot read " + path);
    }
    uint32_t k = 0, g = 0, r = 0;
    uint64_t off = 0;
    while (in.read(reinterpret_cast<char*>(&k), sizeof(k))) {
        in.read(reinterpret_cast<char*>(&g), sizeof(g));
        in.read(reinterpret_cast<char*>(&r), sizeof(r));
        in.read(reinterpret_cast<char*>(&off), sizeof(off));
        if (!in || k >= sets.size() || g >= sets[k].bases.size() || r >= sets[k].bases[g].size() ||
            off >= sets[k].bytes) {
            throw JobError(path + ": a page outside this job's windows (different world or window size?)");
        }
        const WindowSet& ws = sets[k];
        in.read(reinterpret_cast<char*>(ws.bases[g][r] + off), static_cast<std::streamsize>(std::min(PAGE, ws.bytes - off)));
    }
}

// A kernel core's own C++ code reading or writing memory the twin never mapped (a null or wild pointer: the real
// Ascend 950 DispatchTeardown reads `*reinterpret_cast<ExpandXOutType *>(uint8_t(0))`, address 0, for a pad value):
// the twin cannot tell what the device keeps there, so it faults on that core naming the address. The handler only
// formats into static storage, writes result.txt and ends the process.
char g_faultResult[4096];

void OnKernelSegv(int sig, siginfo_t* info, void* /*context*/)
{
    const opgen_sim::CoreState* core = opgen_sim::t_core;
    if (core == nullptr || g_faultResult[0] == '\0') {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    // Several cores may fault at once (every core with slots reads address 0): the first writes result.txt and
    // ends the process; the others wait for that, or one would truncate the file the first is writing.
    static std::atomic_flag taken = ATOMIC_FLAG_INIT;
    if (taken.test_and_set()) {
        for (;;) {
            pause();
        }
    }
    static char text[512];
    static char line[1200];
    const int n = std::snprintf(text, sizeof(text),
                                "rank %u core %u: the kernel's own code accessed address 0x%llx, which no GM, UB or "
                                "window buffer of the twin holds (a null or wild pointer dereferenced by plain C++, "
                                "not an Ascend C call)",
                                core->rank, core->block,
                                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(info->si_addr)));
    static const char* digits = "0123456789abcdef";
    size_t at = 0;
    for (const char* p = "fault "; *p != '\0'; ++p) {
        line[at++] = *p;
    }
    for (int i = 0; i < n && at + 2 < sizeof(line) - 32; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        line[at++] = digits[c >> 4];
        line[at++] = digits[c & 15U];
    }
    for (const char* p = "\nstatus fault\n"; *p != '\0'; ++p) {
        line[at++] = *p;
    }
    const int fd = open(g_faultResult, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ssize_t ignored = write(fd, line, at);
        (void)ignored;
        close(fd);
    }
    _exit(1);
}

void TrapKernelSegv(const std::string& dir)
{
    std::snprintf(g_faultResult, sizeof(g_faultResult), "%s/result.txt", dir.c_str());
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = OnKernelSegv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
}

void WriteResult(const std::string& dir, const std::vector<std::string>& lines, const std::string& status)
{
    std::ofstream out(dir + "/result.txt");
    for (const std::string& l : lines) {
        out << l << "\n";
    }
    out << "status " << status << "\n";
}

void FillMc2Context(const RankJob& rj, const Mc2ContextSpec& c, opgen_sim::RankState& rs,
                    const std::vector<uint8_t*>& args, uint32_t rank)
{
    const std::string who = "mc2_context of rank " + std::to_string(rank);
    if (c.input >= rj.inputs.size() || !rj.inputs[c.input].arg.present || c.group >= rs.groups.size()) {
        throw JobError(who + ": no such input or group");
    }
    if (TensorBytes(rj.inputs[c.input].arg) < sizeof(Mc2MoeContextLayout)) {
        throw JobError(who + ": input " + rj.inputs[c.input].name + " holds fewer bytes than Mc2MoeContext (" +
                       std::to_string(sizeof(Mc2MoeContextLayout)) + ")");
    }
    opgen_sim::HcclGroup& g = rs.groups[c.group];
    if (g.windows.size() > MC2_CONTEXT_RANKS) {
        throw JobError(who + ": the group has more ranks than the context lists");
    }
    Mc2MoeContextLayout ctx{};
    ctx.epRankId = g.rankId;
    ctx.rankSizePerServer = static_cast<uint32_t>(g.windows.size());
    for (size_t i = 0; i < g.windows.size(); ++i) {
        ctx.epHcclBuffer[i] = reinterpret_cast<uint64_t>(g.windows[i]);
    }
    std::memcpy(args[c.input], &ctx, sizeof(ctx));
    g.mc2Input = rj.inputs[c.input].name;
}

int Run(const std::string& dir)
{
    const Job job = ReadJob(dir + "/job.txt");
    std::vector<std::string> lines;

    // ---- tiling, per rank ----
    std::vector<opgen_sim::TilingResult> tilings;
    bool rejected = false;
    bool faulted = false;
    for (uint32_t r = 0; r < job.world; ++r) {
        const RankJob& rj = job.ranks[r];
        opgen_sim::TilingRequest req;
        req.nodeName = job.node;
        req.socVersion = job.soc;
        req.aivNum = job.aiv;
        req.aicNum = job.aic;
        req.ubBytes = job.platformUb != 0U ? job.platformUb : job.ub;
        req.windowBytes = job.cclBuffer != 0U ? job.cclBuffer : job.window;
        req.windowReadable = !job.cclUnreadable;
        req.npuArch = job.npuArch;
        req.hcclBufferBytes = job.hcclBuffsize != 0U ? job.hcclBuffsize : job.window;
        req.attrs = rj.attrs;
        for (const TensorFile& t : rj.inputs) {
            req.inputs.push_back(t.arg);
        }
        for (const TensorFile& t : rj.outputs) {
            req.outputs.push_back(t.arg);
        }
        opgen_sim::TilingResult res = OpgenSimTiling(req);
        char buf[160];
        if (!res.fault.empty()) {
            lines.push_back("fault " + Hex("rank " + std::to_string(r) + " tiling: " + res.fault));
            faulted = true;
        } else if (res.ok) {
            std::snprintf(buf, sizeof(buf), "tiling %u ok %" PRIu64 " %u %" PRIu64, r, res.tilingKey, res.blockDim,
                          res.workspaceBytes);
            lines.push_back(buf);
        } else {
            lines.push_back("tiling " + std::to_string(r) + " fail " + Hex(res.log.empty() ? "rejected" : res.log));
            rejected = true;
        }
        tilings.push_back(std::move(res));
    }
    if (faulted) {
        WriteResult(dir, lines, "fault");
        return 1;
    }
    if (rejected) {
        WriteResult(dir, lines, "tiling");
        return 2;
    }
#ifdef OPGEN_SIM_TILING_ONLY
    // a tiling-only runner (no kernel unit): every rank's tiling data, the context outputs the result line lacks
    // (AI CPU blocks, schedule mode) and what the tiling logged while accepting (a check that logs an error and
    // does not fail the call), then done
    for (uint32_t r = 0; r < job.world; ++r) {
        const std::vector<uint8_t>& data = tilings[r].data;
        lines.push_back("tiling_data " + std::to_string(r) + " " +
                        (data.empty() ? std::string("_") : Hex(std::string(data.begin(), data.end()))));
        lines.push_back("tiling_context " + std::to_string(r) + " " + std::to_string(tilings[r].aicpuBlocks) + " " +
                        std::to_string(tilings[r].scheduleMode));
        if (!tilings[r].log.empty()) {
            lines.push_back("tiling_log " + std::to_string(r) + " " + Hex(tilings[r].log));
        }
    }
    WriteResult(dir, lines, "ok");
    return 0;
#else

    // ---- GM: inputs, outputs, workspace, tiling data, windows ----
    opgen_sim::World world;
    world.ubBytes = job.ub;
    world.timeoutSeconds = job.timeout;
    world.serverRanks = job.serverRanks;
    world.ranks = std::vector<opgen_sim::RankState>(job.world);
    Gm gm;
    std::vector<std::vector<uint8_t*>> args(job.world);
    std::vector<std::vector<std::pair<const TensorFile*, uint8_t*>>> outs(job.world);
    uint32_t groupCount = 0;
    for (const RankJob& rj : job.ranks) {
        for (const GroupSpec& g : rj.groups) {
            groupCount = std::max(groupCount, g.index + 1U);
        }
    }
    // sets[0].bases[g][r]: the window (windowsIn) of global rank r in group g, HCCL_BUFFSIZE bytes; sets[1] its
    // windowsExp, of the product's size, where the product's context lists one (else none); sets[2] its windowsOut,
    // HCCL_BUFFSIZE bytes as windowsIn (HCCL allocates both; what a BatchWrite sends from, where the Ascend 950
    // Setup/Teardown ops keep their state words). All three carry through a pipeline (windows_in / windows_out).
    std::vector<WindowSet> sets(3U);
    const char* kinds[] = {"window", "windowsExp", "windowsOut"};
    for (uint32_t k = 0; k < sets.size(); ++k) {
        sets[k].bytes = k == 1U ? job.expWindow : job.window;
        if (sets[k].bytes == 0U) {
            continue;
        }
        sets[k].bases.assign(groupCount, std::vector<uint8_t*>(job.world, nullptr));
        for (uint32_t g = 0; g < groupCount; ++g) {
            for (uint32_t r = 0; r < job.world; ++r) {
                sets[k].bases[g][r] = gm.Add(sets[k].bytes, std::string(kinds[k]) + " of rank " + std::to_string(r) +
                                             " (group " + std::to_string(g) + ")", world, 0);
                world.regions.back().windowOf = r;
            }
        }
    }
    const std::vector<std::vector<uint8_t*>>& windows = sets[0].bases;
    const WindowSet& outSet = sets[2];
    if (!job.windowsIn.empty()) {
        LoadWindows(InJob(dir, job.windowsIn), sets);
    }
    for (uint32_t r = 0; r < job.world; ++r) {
        const RankJob& rj = job.ranks[r];
        const std::string who = " of rank " + std::to_string(r);
        for (const TensorFile& t : rj.inputs) {
            if (!t.arg.present) {
                args[r].push_back(nullptr);
                continue;
            }
            const uint64_t bytes = TensorBytes(t.arg);
            uint8_t* p = gm.Add(bytes, "input " + t.name + who, world, 0);
            world.regions.back().inputName = t.name;
            const std::vector<uint8_t> data = ReadFile(InJob(dir, t.file), bytes);
            std::memcpy(p, data.data(), bytes);
            args[r].push_back(p);
        }
        for (const TensorFile& t : rj.outputs) {
            uint8_t* p = gm.Add(TensorBytes(t.arg), "output " + t.name + who, world, OUTPUT_POISON, true);
            args[r].push_back(p);
            outs[r].push_back({&t, p});
        }
        const opgen_sim::TilingResult& tl = tilings[r];
        args[r].push_back(gm.Add(std::max<uint64_t>(tl.workspaceBytes, 1U), "workspace" + who, world, 0, true));
        uint8_t* tiling = gm.Add(tl.data.size(), "tiling data" + who, world, 0);
        std::memcpy(tiling, tl.data.data(), tl.data.size());
        args[r].push_back(tiling);
        opgen_sim::RankState& rs = world.ranks[r];
        rs.blockDim = tl.blockDim;
        rs.aicpuBlocks = tl.aicpuBlocks;
        rs.groups.resize(groupCount);
        for (const GroupSpec& g : rj.groups) {
            std::vector<uint8_t*> members, exps, outsOf;
            for (uint32_t m : g.members) {
                if (m >= job.world) {
                    throw JobError("group member " + std::to_string(m) + " outside the world");
                }
                members.push_back(windows[g.index][m]);
                outsOf.push_back(outSet.bases[g.index][m]);
                if (!sets[1].bases.empty()) {
                    exps.push_back(sets[1].bases[g.index][m]);
                }
            }
            rs.groups[g.index].Attach(g.rankId, members, job.window, exps, job.expWindow, outsOf);
            // the context is GM the kernel reads (DataCopy of its fields included): exactly the fields the twin
            // fills; past them (the 950 context's CCU registers and URMA queues sqs[] / cqs[]) nothing is modelled
            opgen_sim::HcclGroup& hg = rs.groups[g.index];
            world.regions.push_back({reinterpret_cast<uintptr_t>(hg.Context()), hg.ContextBytes(),
                                     "HCCL context of rank " + std::to_string(r) + " (group " +
                                         std::to_string(g.index) + hg.ContextNote() + ")",
                                     nullptr});
        }
        for (const Mc2ContextSpec& c : rj.contexts) {
            FillMc2Context(rj, c, rs, args[r], r);
        }
        if (tl.blockDim == 0U) {
            throw JobError("the tiling of rank " + std::to_string(r) + " set block dim 0");
        }
    }
    TrapKernelSegv(dir);
    opgen_sim::RunWorld(world, [&args, &tilings](uint32_t r) {
        OpgenSimKernel(args[r].data(), static_cast<uint32_t>(args[r].size()), tilings[r].tilingKey);
    });

    for (uint32_t r = 0; r < job.world; ++r) {
        for (uint32_t c = 0; c < world.ranks[r].costs.size(); ++c) {
            lines.push_back("cost " + std::to_string(r) + " " + std::to_string(c) + " " +
                            opgen_sim::CostColumns(world.ranks[r].costs[c]));
            for (const auto& [name, bytes] : world.ranks[r].costs[c].inputReads) {
                lines.push_back("input_read " + std::to_string(r) + " " + std::to_string(c) + " " + name + " " +
                                std::to_string(bytes));
            }
        }
    }
    if (!world.faults.empty()) {
        for (const std::string& f : world.faults) {
            lines.push_back("fault " + Hex(f));
        }
        WriteResult(dir, lines, "fault");
        return 1;
    }
    for (uint32_t r = 0; r < job.world; ++r) {
        for (const auto& [t, p] : outs[r]) {
            std::ofstream out(InJob(dir, t->file), std::ios::binary);
            out.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(TensorBytes(t->arg)));
            if (!out) {
                throw JobError("cannot write " + InJob(dir, t->file));
            }
        }
    }
    if (!job.windowsOut.empty()) {
        SaveWindows(InJob(dir, job.windowsOut), sets);
    }
    WriteResult(dir, lines, "ok");
    return 0;
#endif
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s JOB_DIR (see opgen/sim/README.md)\n", argv[0]);
        return 3;
    }
    try {
        return Run(argv[1]);
    } catch (const HostLimitError& e) {
        std::fprintf(stderr, "host limit: %s\n", e.what());
        return 4;
    } catch (const JobError& e) {
        std::fprintf(stderr, "malformed job: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "malformed job: %s\n", e.what());
        return 3;
    }
}
