"""Hand-written orders for the foundation tests, independent of schedules.generators."""

from __future__ import annotations


def gpipe_orders(P: int, m: int, split: bool = False) -> dict[int, list[str]]:
    """All forwards, then all backwards in microbatch order (v = 1)."""
    orders = {}
    for p in range(P):
        bwd = []
        for j in range(m):
            bwd += [f"{p}I{j}", f"{p}W{j}"] if split else [f"{p}B{j}"]
        orders[p] = [f"{p}F{j}" for j in range(m)] + bwd
    return orders


def one_f_one_b_orders(P: int, m: int) -> dict[int, list[str]]:
    """1F1B (v = 1): GPU p runs min(P-p, m) forwards, then alternates backward and forward."""
    orders = {}
    for p in range(P):
        warm = min(P - p, m)
        seq = [f"{p}F{j}" for j in range(warm)]
        nxt = warm
        for j in range(m):
            seq.append(f"{p}B{j}")
            if nxt < m:
                seq.append(f"{p}F{nxt}")
                nxt += 1
        orders[p] = seq
    return orders
