"""Simulated collectives: exact receive order on hand examples and a naive cross-check."""
import numpy as np
import pytest

from opgen.runtime import all_gather_v, all_gather_v_group, all_to_all_v, all_to_all_v_plan


def _hand_example():
    # rank 0 sends rows a0 a1 a2 to ranks 1, 0, 1; rank 1 sends nothing; rank 2 sends c0 c1 to 0, 0.
    rows = [np.array([[0, 0], [1, 1], [2, 2]]), np.zeros((0, 2), dtype=int),
            np.array([[20, 20], [21, 21]])]
    dst = [np.array([1, 0, 1]), np.array([], dtype=np.int64), np.array([0, 0])]
    return rows, dst


def test_all_to_all_v_hand_example():
    rows, dst = _hand_example()
    out = all_to_all_v(rows, dst, 3)
    assert [o.tolist() for o in out] == [
        [[1, 1], [20, 20], [21, 21]],   # rank 0: from rank 0 row 1, then rank 2 rows 0, 1
        [[0, 0], [2, 2]],               # rank 1: rank 0 rows 0 and 2, in sender order
        [],
    ]
    assert out[2].shape == (0, 2)


def test_all_to_all_v_plan_hand_example():
    _, dst = _hand_example()
    plan = all_to_all_v_plan(dst, 3)
    assert [(s.tolist(), r.tolist()) for s, r in plan] == [
        ([0, 2, 2], [1, 0, 1]),
        ([0, 0], [0, 2]),
        ([], []),
    ]


def _naive(rows, dst, W):
    recv = [[] for _ in range(W)]
    for src in range(W):
        for i, d in enumerate(dst[src]):
            recv[d].append((src, i, rows[src][i]))
    return recv


def test_all_to_all_v_matches_naive_loop():
    rng = np.random.default_rng(1)
    W, H = 5, 3
    rows = [rng.standard_normal((int(n), H)).astype(np.float32) for n in rng.integers(0, 9, W)]
    dst = [rng.integers(0, W, len(r)) for r in rows]
    out = all_to_all_v(rows, dst, W)
    plan = all_to_all_v_plan(dst, W)
    for r, want in enumerate(_naive(rows, dst, W)):
        assert [(s, i) for s, i, _ in want] == list(zip(plan[r][0].tolist(), plan[r][1].tolist()))
        expect = np.array([v for _, _, v in want], dtype=np.float32).reshape(-1, H)
        np.testing.assert_array_equal(out[r], expect)
        lazy = np.array([rows[s][i] for s, i in zip(*plan[r])], dtype=np.float32).reshape(-1, H)
        np.testing.assert_array_equal(lazy, expect)


def test_all_to_all_v_validation():
    rows, dst = _hand_example()
    with pytest.raises(ValueError):
        all_to_all_v(rows, dst, 4)  # wrong number of ranks
    with pytest.raises(ValueError):
        all_to_all_v_plan([np.array([3]), np.array([0]), np.array([0])], 3)  # destination out of range
    with pytest.raises(ValueError):
        all_to_all_v([rows[0][:2], rows[1], rows[2]], dst, 3)  # rows and destinations disagree
    with pytest.raises(TypeError):
        all_to_all_v([rows[0].astype(np.float32), rows[1], rows[2]], dst, 3)  # mixed dtypes
    with pytest.raises(TypeError):
        all_to_all_v_plan([np.array([0.0]), np.array([0]), np.array([0])], 3)
    with pytest.raises(ValueError):
        all_to_all_v_plan([], 0)


def test_all_gather_v():
    parts = [np.array([[1]]), np.zeros((0, 1), dtype=int), np.array([[3], [4]])]
    assert all_gather_v(parts).tolist() == [[1], [3], [4]]
    with pytest.raises(ValueError):
        all_gather_v([])


def test_all_gather_v_group():
    parts = [np.array([0]), np.array([10, 11]), np.array([20]), np.array([30])]
    assert all_gather_v_group(parts, [1, 3]).tolist() == [10, 11, 30]
    assert all_gather_v_group(parts, [3, 1]).tolist() == [30, 10, 11]  # group-rank order
    for bad in ([], [1, 1], [4]):
        with pytest.raises(ValueError):
            all_gather_v_group(parts, bad)
