/**
 * The kernel-side data-type and format ids (the real asc-devkit include/basic_api/kernel_type.h): preprocessor
 * macros, so a kernel can select code with `#if ORIG_DTYPE_X == DT_BF16`. CANN's op build compiles a kernel once
 * per OpDef column and defines DTYPE_<NAME> (the element type) and ORIG_DTYPE_<NAME> (one of these ids) for every
 * input and output; the twin does the same for the column of the world it runs (opgen/sim/build.py). As in the
 * real header, they exist in kernel code only: host code has ge::DataType (graph/types.h) with the same names.
 */
#ifndef OPGEN_SIM_BASIC_API_KERNEL_TYPE_H
#define OPGEN_SIM_BASIC_API_KERNEL_TYPE_H
#if !defined(__NPU_HOST__) && !defined(__NPU_DEVICE__) && !defined(__ASCC_HOST__) && !defined(__ASCC_DEVICE__)

#define DT_FLOAT 0
#define DT_FLOAT16 1
#define DT_INT8 2
#define DT_INT32 3
#define DT_UINT8 4
#define DT_INT16 6
#define DT_UINT16 7
#define DT_UINT32 8
#define DT_INT64 9
#define DT_UINT64 10
#define DT_DOUBLE 11
#define DT_BOOL 12
#define DT_BF16 27
#define DT_UNDEFINED 28
#define DT_HIFLOAT8 34
#define DT_FLOAT8_E5M2 35
#define DT_FLOAT8_E4M3FN 36
#define DT_FLOAT8_E8M0 37
#define DT_FLOAT4_E2M1 40
#define DT_FLOAT4_E1M2 41

#define FORMAT_ND 2

#endif
#endif  // OPGEN_SIM_BASIC_API_KERNEL_TYPE_H
