"""Loop oracles for the MoE reference, written from the text of semantics.md §2/§5/§6/§8.

Deliberately naive: Python loops over ranks, tokens and k, receive lists keyed and
sorted as in the §8 skeleton, and no code shared with ``opgen.runtime.moe*``.
Float arithmetic is done on float32 scalars / rows so every rounding is explicit.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

F32 = np.float32


def layout(W, Rs, S, E):
    """(S after the Rs==0 && S==1 normalisation, L, P)."""
    if Rs == 0 and S == 1:
        S = 0
    L = E // (W - Rs)
    P = Rs // S if S else 0
    return S, L, P


def active_tokens(mask, bs):
    if mask is None:
        return list(range(bs))
    mask = np.asarray(mask)
    if mask.ndim == 1:
        return list(range(int(sum(bool(m) for m in mask))))
    return [t for t in range(bs) if any(bool(m) for m in mask[t])]


def sent_pairs(ids, mask, E):
    """(t, k) pairs a rank sends to MoE experts, flattened order."""
    ids = np.asarray(ids)
    bs, K = ids.shape
    two_d = mask is not None and np.asarray(mask).ndim == 2
    pairs = []
    for t in active_tokens(mask, bs):
        for k in range(K):
            if two_d and not mask[t][k]:
                continue
            if int(ids[t][k]) < E:
                pairs.append((t, k))
    return pairs


def dispatch_oracle(ids_list, masks, *, W, Rs, S, E, K):
    """Per destination: {"rows": [(src, t, k, smooth_row)], "counts": L_d x W lists, "shared": bool}."""
    S, L, P = layout(W, Rs, S, E)
    masks = masks if masks is not None else [None] * W
    recv = {d: [] for d in range(W)}
    for r in range(W):
        ids = np.asarray(ids_list[r])
        seen = defaultdict(int)
        for t, k in sent_pairs(ids, masks[r], E):
            e = int(ids[t][k])
            d = Rs + e // L
            recv[d].append(((e % L, r, seen[e]), (r, t, k, e + S)))
            seen[e] += 1
        act = active_tokens(masks[r], len(ids))
        for s in range(S):
            d = (r % P) + s * P
            for j, t in enumerate(act):
                recv[d].append(((0, r, j), (r, t, K + s, s)))
    result = []
    for d in range(W):
        shared = d < Rs
        n_local = 1 if shared else L
        counts = [[0] * W for _ in range(n_local)]
        for (le, r, _), _ in recv[d]:
            counts[le][r] += 1
        rows = [row for _, row in sorted(recv[d], key=lambda item: item[0])]
        result.append({"rows": rows, "counts": counts, "shared": shared})
    return result


def ep_recv_counts(counts):
    out, running = [], 0
    for le in range(len(counts)):
        for r in range(len(counts[le])):
            running += counts[le][r]
            out.append(running)
    return out


def expert_token_nums(counts, kind):
    per_expert = [sum(row) for row in counts]
    if kind == 1:
        return per_expert
    out, running = [], 0
    for n in per_expert:
        running += n
        out.append(running)
    return out


def assist_triples(rows, A):
    out = [0] * (A * 128)
    for i, (r, t, k, _) in enumerate(rows):
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = r, t, k
    return out


def expand_scales(rows, scales_list, K, A):
    out = [F32(0)] * A
    for i, (r, t, k, _) in enumerate(rows):
        if k < K and scales_list is not None and scales_list[r] is not None:
            out[i] = F32(scales_list[r][t][k])
    return out


def a2_expand_idx(ids, mask, E):
    ids = np.asarray(ids)
    bs, K = ids.shape
    out = [0] * (bs * K)
    seen = defaultdict(int)
    for t, k in sent_pairs(ids, mask, E):
        e = int(ids[t][k])
        out[t * K + k] = seen[e]
        seen[e] += 1
    return out


def gather(xs, rows):
    return [np.asarray(xs[r])[t] for (r, t, _, _) in rows]


# --------------------------------------------------------------------------- combine

def comm_quant_round_trip(rows, x_dtype):
    """commQuantMode 2, one 8-element block at a time, scalar float32/float16 casts."""
    rows = np.asarray(rows)
    n, h = rows.shape
    out = np.zeros((n, h), dtype=x_dtype)
    inv127 = F32(1) / F32(127)
    for i in range(n):
        for b0 in range(0, h, 8):
            block = [F32(rows[i][j]) for j in range(b0, min(b0 + 8, h))]
            biggest = F32(0)
            for v in block:
                biggest = max(biggest, F32(abs(v)))
            scale = F32(biggest * inv127)
            stored = np.array([scale], dtype=np.float32).astype(x_dtype)[0]
            for j, v in enumerate(block):
                q = 0 if scale == 0 else int(np.rint(np.float16(F32(v / scale))))
                q = min(127, max(-128, q))
                back = F32(F32(np.float16(q)) * F32(stored))
                out[i][b0 + j] = np.array([back], dtype=np.float32).astype(x_dtype)[0]
    return out


def returned_rows(rank, dispatch, expert_outputs, comm_quant=None):
    """{(t, k): fp32 row} that the expert ranks send back to ``rank``."""
    back = {}
    for d, info in enumerate(dispatch):
        for i, (r, t, k, _) in enumerate(info["rows"]):
            if r != rank:
                continue
            row = np.asarray(expert_outputs[d][i])
            if comm_quant is not None:
                row = comm_quant(row[None, :])[0]
            back[(t, k)] = row.astype(np.float32)
    return back


def combine_oracle(rank, *, dispatch, expert_outputs, ids, scales, mask, K, S, E,
                   zero=0, copy=0, ori_x=None, alpha1=None, alpha2=None, const_v=None,
                   shared_x=None, out_dtype=np.float16, comm_quant=None):
    """xOut of one token owner per the §5 pseudo-code, token by token, k by k."""
    ids = np.asarray(ids)
    bs = ids.shape[0]
    H = np.asarray(expert_outputs[0]).shape[1]
    back = returned_rows(rank, dispatch, expert_outputs, comm_quant)
    two_d = mask is not None and np.asarray(mask).ndim == 2
    out = np.zeros((bs, H), dtype=out_dtype)
    for t in active_tokens(mask, bs):
        acc = np.zeros(H, dtype=np.float32)
        for k in range(K):
            if two_d and not mask[t][k]:
                continue
            e = int(ids[t][k])
            if e < E:
                value = back[(t, k)]
            elif e < E + zero:
                continue
            elif e < E + zero + copy:
                value = np.asarray(ori_x[t]).astype(np.float32)
            else:
                value = const_value(np.asarray(ori_x[t]).astype(np.float32),
                                    alpha1[e - E - zero - copy], alpha2[e - E - zero - copy],
                                    const_v[e - E - zero - copy])
            if scales is not None:
                value = value * F32(scales[t][k])
            acc = acc + value
        for s in range(S):
            acc = acc + back[(t, K + s)]
        if shared_x is not None:
            acc = acc + np.asarray(shared_x[t]).astype(np.float32)
        out[t] = acc.astype(out_dtype)
    return out


def const_value(x, alpha1, alpha2, v):
    """A const expert as the real kernel computes it (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/
    moe_distribute_combine_v2.h ProcessConstantExpert, CalConstExpertAlpha; the documents' elementwise
    alpha1 * oriX + alpha2 * V is its shorthand): logits a_i = sum_h alpha_i[h] * x[h] in fp32, (p1, p2) their
    softmax less the max (e^x rounded to fp32 from float64, fp32 quotients), then fl32(fl32(x * p1) + fl32(v * p2))
    element by element; written here by hand, not from the spec."""
    f = lambda a: np.asarray(a).astype(np.float32)  # noqa: E731
    a1, a2 = F32(0), F32(0)
    for h in range(len(x)):
        a1 = F32(a1 + F32(f(alpha1)[h] * F32(x[h])))
        a2 = F32(a2 + F32(f(alpha2)[h] * F32(x[h])))
    m = a1 if a1 > a2 else a2
    e1, e2 = F32(math.exp(float(F32(a1 - m)))), F32(math.exp(float(F32(a2 - m))))
    s = F32(e1 + e2)
    p1, p2 = F32(e1 / s), F32(e2 / s)
    out = np.empty(len(x), dtype=np.float32)
    for h in range(len(x)):
        out[h] = F32(F32(F32(x[h]) * p1) + F32(f(v)[h] * p2))
    return out


# --------------------------------------------------------------------------- setup family

def dispatch_setup_oracle(ids, mask, *, S, E):
    """(y rows as {y_row: (t, k)}, expand_idx) of one rank, per §6."""
    ids = np.asarray(ids)
    bs, K = ids.shape
    pairs = sent_pairs(ids, mask, E)
    by_expert = sorted(range(len(pairs)), key=lambda i: (int(ids[pairs[i]]), i))
    y = {}
    for row, i in enumerate(by_expert):
        y[row] = pairs[i]
    act = active_tokens(mask, bs)
    for s in range(S):
        for j, t in enumerate(act):
            y[bs * K + s * len(act) + j] = (t, K + s)
    return y, a2_expand_idx(ids, mask, E)


def dispatch_teardown_oracle(d_info, staged_payload):
    """expandX rows of one destination in DispatchV2 order; ``staged_payload(src, t, smooth_row)``."""
    return [staged_payload(r, t, smooth_row) for r, t, _, smooth_row in d_info["rows"]]


def combine_teardown_oracle(rank, *, dispatch, expert_outputs, ids, expand_idx, scales, mask,
                            out_dtype=np.float16):
    """x of one owner: each pair reads slot expand_idx[t*K+k] of its expert's returned block.

    The combine setup family has no shared experts, so a row's smooth-scale row is its
    global expert id.
    """
    ids = np.asarray(ids)
    bs, K = ids.shape
    H = np.asarray(expert_outputs[0]).shape[1]
    blocks = defaultdict(list)        # global expert -> rows in arrival (= slot) order
    for d, info in enumerate(dispatch):
        for i, (r, t, k, smooth_row) in enumerate(info["rows"]):
            if r == rank:
                blocks[smooth_row].append(np.asarray(expert_outputs[d][i]))
    two_d = mask is not None and np.asarray(mask).ndim == 2
    out = np.zeros((bs, H), dtype=out_dtype)
    for t in active_tokens(mask, bs):
        acc = np.zeros(H, dtype=np.float32)
        for k in range(K):
            if two_d and not mask[t][k]:
                continue
            row = blocks[int(ids[t][k])][expand_idx[t * K + k]].astype(np.float32)
            acc = acc + row * F32(scales[t][k])
        out[t] = acc.astype(out_dtype)
    return out
