// Mirrors aclnn/acl_meta.h (hicann/ops-base: include/nnopbase/aclnn/acl_meta.h): the opaque aclnn handle types.
#ifndef CANN_API_ACLNN_ACL_META_H
#define CANN_API_ACLNN_ACL_META_H

#include <cstdint>
#include <cstdlib>
#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclTensorList aclTensorList;

typedef int32_t aclnnStatus;

ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum);

#ifdef __cplusplus
}
#endif

#endif  // CANN_API_ACLNN_ACL_META_H
