/**
 * libboundscheck's memset_s (securec.h), which the exe_graph headers' inline constructors call.  Its
 * runtime-constraint handling: no buffer (or a size past SECUREC_MEM_MAX_LEN) is EINVAL / ERANGE with nothing
 * written; a count past the buffer fills the buffer and answers ERANGE_AND_RESET.
 */
#include <cstring>

#include "securec.h"

errno_t memset_s(void *dest, size_t destMax, int c, size_t count)
{
    if (destMax == 0U || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (dest == nullptr) {
        return EINVAL;
    }
    if (count > destMax) {
        std::memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    std::memset(dest, c, count);
    return EOK;
}
