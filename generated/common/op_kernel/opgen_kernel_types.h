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
 * The element-type facts every generated kernel's helpers and lowered formulas read: DTypeTraits (storage bits, the
 * largest finite value a quant formula's qmax() reads, an MX format's emax) and IS_E8M0 / IS_FP4. A file of opgen's
 * kernel library, copied into the generated tree's common/op_kernel/ (not generated: edit it in opgen's
 * templates/cpp/common/op_kernel/); each op's kernel includes it inside the op's namespace, before
 * opgen_kernel_helpers.h. The values are the dtype table's (opgen/core/dtypes.py: bits, qmax, emax), and so are the
 * archs: the FP8, HiF8, FP4 and E8M0 element types exist only on __NPU_ARCH__ 3510 (the kernel headers of the other
 * archs do not declare them); tests/test_kernel_share.py checks this file against the table.
 */
#ifndef OPGEN_KERNEL_TYPES_H
#define OPGEN_KERNEL_TYPES_H

template <typename T>
struct DTypeTraits;
template <>
struct DTypeTraits<float> {
    static constexpr uint32_t BITS = 32U;
    static constexpr float MAX = 3.4028234663852886e+38f;
};
template <>
struct DTypeTraits<half> {
    static constexpr uint32_t BITS = 16U;
    static constexpr float MAX = 65504.0f;
};
template <>
struct DTypeTraits<int8_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 127.0f;
};
template <>
struct DTypeTraits<int32_t> {
    static constexpr uint32_t BITS = 32U;
    static constexpr float MAX = 2147483647.0f;
};
template <>
struct DTypeTraits<uint8_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 255.0f;
};
template <>
struct DTypeTraits<int64_t> {
    static constexpr uint32_t BITS = 64U;
    static constexpr float MAX = 9.223372036854776e+18f;
};
template <>
struct DTypeTraits<bool> {
    static constexpr uint32_t BITS = 8U;
};
template <>
struct DTypeTraits<bfloat16_t> {
    static constexpr uint32_t BITS = 16U;
    static constexpr float MAX = 3.3895313892515355e+38f;
};
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
template <>
struct DTypeTraits<hifloat8_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 32768.0f;
};
template <>
struct DTypeTraits<fp8_e5m2_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 57344.0f;
    static constexpr int32_t EMAX = 15;
};
template <>
struct DTypeTraits<fp8_e4m3fn_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 448.0f;
    static constexpr int32_t EMAX = 8;
};
template <>
struct DTypeTraits<fp8_e8m0_t> {
    static constexpr uint32_t BITS = 8U;
    static constexpr float MAX = 1.7014118346046923e+38f;
};
template <>
struct DTypeTraits<fp4x2_e2m1_t> {
    static constexpr uint32_t BITS = 4U;
    static constexpr float MAX = 6.0f;
    static constexpr int32_t EMAX = 2;
};
template <>
struct DTypeTraits<fp4x2_e1m2_t> {
    static constexpr uint32_t BITS = 4U;
    static constexpr float MAX = 1.75f;
    static constexpr int32_t EMAX = 0;
};
#endif

// Element types that exist on some archs only: false where the type does not.
template <typename T>
constexpr bool IS_E8M0 =
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    std::is_same<T, fp8_e8m0_t>::value;
#else
    false;
#endif
template <typename T>
constexpr bool IS_FP4 =
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    std::is_same<T, fp4x2_e2m1_t>::value || std::is_same<T, fp4x2_e1m2_t>::value;
#else
    false;
#endif

#endif // OPGEN_KERNEL_TYPES_H
