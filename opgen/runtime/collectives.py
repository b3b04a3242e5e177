"""Simulated collectives over a world of W ranks held in one process.

Ranks are list positions.  Everything is vectorised over rows: a plan is one
stable sort of all (source rank, source row) pairs by destination.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _check_world(W: int) -> None:
    if isinstance(W, bool) or not isinstance(W, (int, np.integer)) or W <= 0:
        raise ValueError(f"world size must be a positive integer, got {W!r}")


def _dst_arrays(send_dst: Sequence, W: int) -> list[np.ndarray]:
    _check_world(W)
    if len(send_dst) != W:
        raise ValueError(f"expected {W} destination arrays (one per rank), got {len(send_dst)}")
    out = []
    for src, d in enumerate(send_dst):
        a = np.asarray(d)
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise TypeError(f"send_dst[{src}] must be a 1-D integer array, got {a.dtype} {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= W):
            raise ValueError(f"send_dst[{src}] has a destination outside [0, {W})")
        out.append(a.astype(np.int64, copy=False))
    return out


def _routing(dsts: list[np.ndarray], W: int) -> tuple[np.ndarray, np.ndarray]:
    """Global row order for the receivers, and how many rows each receiver gets.

    The concatenation is already in (source rank, source row) order, so a
    stable sort by destination keeps that order within each receiver.
    """
    dst = np.concatenate(dsts) if dsts else np.zeros(0, np.int64)
    order = np.argsort(dst, kind="stable")
    counts = np.bincount(dst, minlength=W)
    return order, counts


def all_to_all_v_plan(send_dst: Sequence, W: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per destination rank, the (source rank, source row) of each row it receives.

    Rows arrive ordered by source rank, then by the sender's row order.
    """
    dsts = _dst_arrays(send_dst, W)
    lens = np.array([len(d) for d in dsts], dtype=np.int64)
    src_rank = np.repeat(np.arange(W, dtype=np.int64), lens)
    src_row = np.arange(lens.sum(), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    order, counts = _routing(dsts, W)
    cuts = np.cumsum(counts)[:-1]
    return list(zip(np.split(src_rank[order], cuts), np.split(src_row[order], cuts)))


def all_to_all_v(send_rows: Sequence, send_dst: Sequence, W: int) -> list[np.ndarray]:
    """AllToAllV: rank ``src`` sends row i of send_rows[src] to rank send_dst[src][i].

    Receiver r gets its rows ordered by source rank, then by the sender's row order.
    """
    dsts = _dst_arrays(send_dst, W)
    if len(send_rows) != W:
        raise ValueError(f"expected {W} send buffers (one per rank), got {len(send_rows)}")
    rows = [np.asarray(r) for r in send_rows]
    for src, (r, d) in enumerate(zip(rows, dsts)):
        if r.ndim == 0 or r.shape[0] != d.shape[0]:
            raise ValueError(f"send_rows[{src}] has shape {r.shape} but {d.shape[0]} destinations")
        if r.dtype != rows[0].dtype or r.shape[1:] != rows[0].shape[1:]:
            raise TypeError(f"send_rows[{src}] is {r.dtype} {r.shape[1:]}, rank 0 sends "
                            f"{rows[0].dtype} {rows[0].shape[1:]}")
    order, counts = _routing(dsts, W)
    gathered = np.concatenate(rows)[order]
    return np.split(gathered, np.cumsum(counts)[:-1])


def all_gather_v(parts: Sequence) -> np.ndarray:
    """AllGatherV: every rank's rows concatenated in rank order."""
    if len(parts) == 0:
        raise ValueError("all_gather_v needs at least one rank")
    return np.concatenate([np.asarray(p) for p in parts], axis=0)


def all_gather_v_group(parts: Sequence, group: Sequence[int]) -> np.ndarray:
    """AllGatherV within a communication group.

    ``parts`` is indexed by world rank; ``group`` lists the member world ranks
    in group-rank order (group rank i is world rank group[i]), which is also the
    concatenation order.
    """
    members = [int(r) for r in group]
    if not members:
        raise ValueError("group must name at least one rank")
    if len(set(members)) != len(members):
        raise ValueError(f"group has repeated ranks: {members}")
    if min(members) < 0 or max(members) >= len(parts):
        raise ValueError(f"group ranks {members} fall outside the world of {len(parts)} ranks")
    return all_gather_v([parts[r] for r in members])
