// Mirrors runtime/rt_external_base.h (CANN runtime: inc/external/runtime/rt_external_base.h): rtGetSocSpec, which
// infershape code uses to read the SoC ("version", "Short_SoC_version").
#ifndef CANN_API_RUNTIME_RT_EXTERNAL_BASE_H
#define CANN_API_RUNTIME_RT_EXTERNAL_BASE_H

#include <cstdint>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t rtError_t;
#define RT_ERROR_NONE 0

rtError_t rtGetSocSpec(const char *label, const char *key, char *val, const uint32_t maxLen);

#ifdef __cplusplus
}
#endif

#endif  // CANN_API_RUNTIME_RT_EXTERNAL_BASE_H
