"""The output tree as ops-transformer lays out mc2/: one folder per op, beside ``common/`` with what they share.

code: ops-transformer mc2/ (mc2/<op>/ per op; mc2/common/op_host/op_tiling holds the host helpers the ops share
and is on the include path of every op's tiling, infershape and op_api objects, cmake/obj_func.cmake).  The
generated tree mirrors it, so ``<out>/<op>`` and ``<out>/common`` drop into mc2/ as they are.
"""
from __future__ import annotations

from pathlib import Path

SHARED_DIR = "common"                        # beside the op folders, as mc2/common
SHARED_HOST_INCLUDE = "op_host/op_tiling"    # inside SHARED_DIR: on every host object's include path
CHECK_COMMON = f"{SHARED_HOST_INCLUDE}/opgen_check_common.h"  # what every op's check core includes
SHARED_KERNEL_INCLUDE = "op_kernel"          # inside SHARED_DIR: the C++ family kernels (mc2/common/op_kernel)
SHARED_KERNEL_WINDOW = "opgen_family_window.h"  # the Setup/Teardown family's window, beside its four kernels
SHARED_KERNEL_LIB = "opgen_kernel.h"  # what every kernel includes: the three below, and Unused
SHARED_KERNEL_HELPERS = "opgen_kernel_helpers.h"  # the kernel helpers no spec changes, every kernel includes
SHARED_KERNEL_TYPES = "opgen_kernel_types.h"  # the element types' facts (DTypeTraits), before the helpers
SHARED_KERNEL_CONTEXT = "opgen_kernel_context.h"  # the HCCL context's and tiling data's reads, after them
SHARED_KERNEL_BATCH_WRITE = "opgen_batch_write.h"  # the BatchWrite helpers no spec changes (_batch_write.j2)


def shared_host_include(op_dir: Path) -> Path:
    """The include directory of the shared host headers for the op folder ``op_dir`` (``<op_dir>/../common/...``),
    which a compile of the op's host code passes as -I, as the ops-transformer build does."""
    return op_dir.parent / SHARED_DIR / SHARED_HOST_INCLUDE


def shared_kernel_include(op_dir: Path) -> Path:
    """The shared kernel headers for the op folder ``op_dir`` (``<op_dir>/../common/op_kernel``), which its
    op_kernel/<op>_gen.h includes by that relative path, as the real ops include mc2/common/op_kernel."""
    return op_dir.parent / SHARED_DIR / SHARED_KERNEL_INCLUDE
