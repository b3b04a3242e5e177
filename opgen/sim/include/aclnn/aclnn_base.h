// Mirrors aclnn/aclnn_base.h (hicann/ops-base: include/nnopbase/aclnn/aclnn_base.h).
#ifndef CANN_API_ACLNN_ACLNN_BASE_H
#define CANN_API_ACLNN_ACLNN_BASE_H

#include <cstdint>
#include <cstdlib>
#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize();

#ifdef __cplusplus
}
#endif

#endif  // CANN_API_ACLNN_ACLNN_BASE_H
