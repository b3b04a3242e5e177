/**
 * Copyright (c) 2025 Huawei Technologies Co., Ltd.
 * This program is free software, you can redistribute it and/or modify it under the terms and conditions of
 * CANN Open Software License Agreement Version 2.0 (the "License").
 * Please refer to the License for details. You may not use this file except in compliance with the License.
 * THIS SOFTWARE IS PROVIDED ON AN "AS IS" BASIS, WITHOUT WARRANTIES OF ANY KIND, EITHER EXPRESS OR IMPLIED,
 * INCLUDING BUT NOT LIMITED TO NON-INFRINGEMENT, MERCHANTABILITY, OR FITNESS FOR A PARTICULAR PURPOSE.
 * See LICENSE in the root of the software repository for the full text of the License.
 */
/**
 * The kernel library every generated kernel includes, once, inside the op's namespace (op_kernel/<op>_gen.h): the
 * element types' facts (opgen_kernel_types.h), the layout constants, window reads, scalar helpers and row primitives
 * (opgen_kernel_helpers.h), the HCCL context's and tiling data's reads (opgen_kernel_context.h), in that order, and
 * what the generated text itself uses. A file of opgen's kernel library, copied into the generated tree's
 * common/op_kernel/ (not generated: edit it in opgen's templates/cpp/common/op_kernel/).
 */
#ifndef OPGEN_KERNEL_H
#define OPGEN_KERNEL_H

#include "opgen_kernel_types.h"
#include "opgen_kernel_helpers.h"
#include "opgen_kernel_context.h"

// Marks values a generated body may leave unread (the lowered formulas' row, token and expert of a mode that reads
// none of them): one call for the lot, where each would otherwise need its own (void) cast.
template <typename... Ts>
__aicore__ inline void Unused(const Ts &...)
{
}

#endif // OPGEN_KERNEL_H
