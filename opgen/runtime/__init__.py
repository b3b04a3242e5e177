"""Runtime support for generated reference code: errors, dtype codecs, collectives."""
from opgen.runtime.codecs import (
    ROUND_MODES,
    biased_exponent,
    block_broadcast,
    block_reduce,
    cast,
    e1m2_decode,
    e1m2_encode,
    e8m0_from_exponent,
    hif8_decode,
    hif8_encode,
    hif8_encode_reference,
    pack_fp4,
    to_f32,
    unpack_fp4,
)
from opgen.runtime.collectives import (
    all_gather_v,
    all_gather_v_group,
    all_to_all_v,
    all_to_all_v_plan,
)
from opgen.runtime.dtypes import emax, info, np_dtype, qmax
from opgen.runtime.errors import (
    ACLNN_ERR_INNER_TILING_ERROR,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    OpError,
)

__all__ = [
    "ACLNN_ERR_INNER_TILING_ERROR",
    "ACLNN_ERR_PARAM_INVALID",
    "ACLNN_ERR_PARAM_NULLPTR",
    "OpError",
    "ROUND_MODES",
    "all_gather_v",
    "all_gather_v_group",
    "all_to_all_v",
    "all_to_all_v_plan",
    "biased_exponent",
    "block_broadcast",
    "block_reduce",
    "cast",
    "e1m2_decode",
    "e1m2_encode",
    "e8m0_from_exponent",
    "emax",
    "hif8_decode",
    "hif8_encode",
    "hif8_encode_reference",
    "info",
    "np_dtype",
    "pack_fp4",
    "qmax",
    "to_f32",
    "unpack_fp4",
]
