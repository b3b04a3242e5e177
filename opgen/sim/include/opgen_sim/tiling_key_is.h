/**
 * TILING_KEY_IS of a hand-written entry keyed by tiling-key numbers (no template tiling key): asc-devkit
 * impl/basic_api/utils/kernel_utils_macros.h defines `TILING_KEY_IS(k)` as `(TILING_KEY_VAR == (k))`, and CANN's op
 * build compiles one kernel binary per key the entry names, the runtime launching the binary of the key the tiling
 * set. The twin builds the binary of one key, -DOPGEN_SIM_TILING_KEY_IS=K (the key the real tiling set): there
 * TILING_KEY_VAR is K. A launch under another key faults (kernel_entry.cpp), and so does a launch in which no
 * TILING_KEY_IS(k) of the entry held, e.g. a key whose branch the entry's dtype `#if` leaves out of this column:
 * CANN builds no kernel for it.
 */
#ifndef OPGEN_SIM_TILING_KEY_IS_H
#define OPGEN_SIM_TILING_KEY_IS_H

#include <cstdint>

#ifdef OPGEN_SIM_TILING_KEY_IS
namespace opgen_sim {
// whether a TILING_KEY_IS of this core's launch held (kernel_entry.cpp resets and reads it around the entry)
inline thread_local bool t_tilingKeyTaken = false;

inline bool TilingKeyIs(uint64_t k)
{
    const bool taken = k == static_cast<uint64_t>(OPGEN_SIM_TILING_KEY_IS);
    t_tilingKeyTaken = t_tilingKeyTaken || taken;
    return taken;
}
}  // namespace opgen_sim

#define TILING_KEY_VAR (static_cast<uint64_t>(OPGEN_SIM_TILING_KEY_IS))
#define TILING_KEY_IS(k) (::opgen_sim::TilingKeyIs(k))
#endif

#endif  // OPGEN_SIM_TILING_KEY_IS_H
