/**
 * The tiling-registration macro of the kernel side as the CPU debug build defines it (used by the twin as is)
 * (CANN kernel_tiling/kernel_tiling.h).  Plain-struct tiling data is registered by its type name.
 */
#ifndef OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H
#define OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H

#define REGISTER_TILING_DEFAULT(tiling_struct) static_assert(sizeof(tiling_struct) > 0, #tiling_struct)

#endif  // OPGEN_TEST_KERNEL_TILING_KERNEL_TILING_H
