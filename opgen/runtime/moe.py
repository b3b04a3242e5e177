"""Routing/assembly half of the MoE numpy reference (DispatchV2, CombineV2, Setup/Teardown).

Generated op references validate attributes, quantise through callbacks and call these.
Row order, index outputs and the combine reduction follow semantics.md §2, §5 and §6;
where that note and the seed documents disagree the seeds win, and each such place says
which one it follows.  Implementation lives in:

* :mod:`.moe_routing` - who sends what where (plans, index outputs, row gathering);
* :mod:`.moe_combine` - CombineV2 reduce and the commQuantMode 2 round trip;
* :mod:`.moe_setup`   - the Ascend950 Setup/Teardown family.
"""
from __future__ import annotations

from opgen.runtime.moe_combine import (SpecialTerm, combine_rank, combine_world,
                          comm_quant_int8_round_trip, reduce_window)
from opgen.runtime.moe_routing import (DispatchPlan, Topology, a2_expand_idx, active_pairs,
                          dispatch_outputs, expert_token_nums, gather_rows, pair_mask,
                          plan_dispatch, plan_dispatch_world, recv_counts_cumsum)
from opgen.runtime.moe_setup import (combine_setup_rank, combine_teardown_rank, dispatch_setup_rank,
                        dispatch_teardown_rank)

__all__ = [
    "DispatchPlan", "SpecialTerm", "Topology",
    "a2_expand_idx", "active_pairs", "pair_mask",
    "plan_dispatch", "plan_dispatch_world", "dispatch_outputs", "gather_rows",
    "recv_counts_cumsum", "expert_token_nums",
    "combine_rank", "combine_world", "reduce_window", "comm_quant_int8_round_trip",
    "dispatch_setup_rank", "dispatch_teardown_rank", "combine_setup_rank",
    "combine_teardown_rank",
]
