/**
 * Twin only: the state of the host tiling API that the CANN signatures reach through no object.  The OP_LOG*
 * functions (log/log.h) take no context, nor does mc2tiling::GetCclBufferSize, so the tiling TU
 * (opgen/sim/tiling_entry.cpp) sets this up around each tiling call and reads the log back.  One per thread: ranks
 * may be tiled on several threads at once.
 */
#ifndef OPGEN_SIM_HOST_H
#define OPGEN_SIM_HOST_H

#include <cstdint>
#include <string>
#include <vector>

namespace opgen_sim {

struct HostLogLine {
    char level;        // 'D', 'I', 'W', 'E'
    std::string text;  // "[ERROR] <op info>: <message>"
};

struct HostCall {
    std::vector<HostLogLine> log;  // every OpLog* line of the call, in order
    uint64_t windowBytes = 0;      // what GetCclBufferSize reports for every group
    bool windowReadable = true;    // false: GetCclBufferSize fails for every group (it cannot ask the domain)
};

inline HostCall &CurrentHostCall()
{
    thread_local HostCall call;
    return call;
}

}  // namespace opgen_sim

#endif  // OPGEN_SIM_HOST_H
