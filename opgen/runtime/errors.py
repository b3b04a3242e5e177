"""The error type raised by generated host-side checks, with aclnn status codes.

Codes are CANN's aclnn status values as the op docs list them
(e.g. hicann/ops-transformer: mc2/moe_distribute_dispatch_v2/docs/aclnnMoeDistributeDispatchV2.md).
"""
from __future__ import annotations

ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER_TILING_ERROR = 561002


class OpError(Exception):
    """A rejected call: ``code`` is the aclnn status, ``param`` the offending parameter."""

    def __init__(self, code: int, param: str, message: str):
        super().__init__(message)
        self.code = int(code)
        self.param = param
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"OpError(code={self.code}, param={self.param!r}, message={self.message!r})"
