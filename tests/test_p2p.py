"""Blocking point-to-point semantics (MODEL.md third round; ``simulate --p2p``).

Under blocking sends (NCCL) a send and its matching receive complete together, when both GPUs
have reached them; under buffered sends (torch's dry run) a send completes at once. Checked on
a hand-traced case and against a naive reference written here from that rule alone.
"""

from __future__ import annotations

import json

from hypothesis import given

from pipebounds.cli import main
from schedules import Instance, Schedule, simulate
from schedules.comms import check_p2p, natural_comms
from schedules.generators import generate
from schedules.io import document_from_schedule
from schedules.ops import split_action
from strategies import instances, note_schedule, valid_schedules


def reference_runs(inst, comms, blocking: bool) -> bool:
    """Naive replay: repeatedly take any GPU whose next action may run (or, blocking, any two
    GPUs whose next actions are a matching send and receive) until nothing moves."""
    seqs = [[split_action(a) for a in seq] for seq in comms]
    done = set()
    ptr = [0] * inst.P
    S = inst.S

    def data_ready(a):
        s, k, j = a
        if k == "F":
            return s == 0 or (s, "RECV_F", j) in done or (s - 1, "F", j) in done
        if k in ("B", "I"):
            return (s == S - 1 or (s, "RECV_B", j) in done or (s + 1, "B", j) in done
                    or (s + 1, "I", j) in done)
        if k == "SEND_F":
            return (s, "F", j) in done
        if k == "SEND_B":
            return (s, "B", j) in done or (s, "I", j) in done
        if k == "RECV_F":
            return (s - 1, "SEND_F", j) in done
        if k == "RECV_B":
            return (s + 1, "SEND_B", j) in done
        return True

    def match(a):
        s, k, j = a
        return {"SEND_F": (s + 1, "RECV_F", j), "SEND_B": (s - 1, "RECV_B", j)}.get(k)

    moved = True
    while moved:
        moved = False
        heads = {p: seqs[p][ptr[p]] for p in range(inst.P) if ptr[p] < len(seqs[p])}
        for p, a in heads.items():
            partner = match(a) if blocking else None
            if partner is not None:
                q = next((q for q, b in heads.items() if b == partner and q != p), None)
                if q is not None and data_ready(a):
                    done.update((a, partner))
                    ptr[p] += 1
                    ptr[q] += 1
                    moved = True
                    break
                continue
            if blocking and a[1].startswith("RECV"):
                continue  # a receive completes only with its send
            if data_ready(a):
                done.add(a)
                ptr[p] += 1
                moved = True
                break
    return all(ptr[p] == len(seqs[p]) for p in range(inst.P))


def test_hand_traced_1f1b_hangs_only_under_blocking_and_rank_parity_fixes_it():
    # 1F1B, P = 2, m = 2, receives right before and sends right after their ops. GPU 0 runs
    # 0F0, sends 0F0 (GPU 1 is at 1RECV_F0: they meet), runs 0F1 and stops at 0SEND_F1: GPU 1
    # is not at 1RECV_F1 but at 1SEND_B0 (after 1F0, 1B0), which waits for GPU 0 to post
    # 0RECV_B0, behind 0SEND_F1. Buffered sends run through. Rank parity: GPU 1 (odd) posts
    # 1RECV_F1 before 1SEND_B0.
    sched = generate("1f1b", Instance(P=2, m=2))
    chk = check_p2p(sched, "blocking")
    assert chk.derived and chk.hangs and chk.only_blocking
    assert chk.blocked == ("GPU 0 is blocked at 0SEND_F1 (action 3 of its order) waiting for "
                           "1RECV_F1 (GPU 1)",
                           "GPU 1 is blocked at 1SEND_B0 (action 3 of its order) waiting for "
                           "0RECV_B0 (GPU 0)")
    assert chk.correction == "rank parity"
    assert chk.corrected[1] == ("1RECV_F0", "1F0", "1B0", "1RECV_F1", "1SEND_B0", "1F1", "1B1",
                                "1SEND_B1")
    assert chk.corrected[0] == chk.comms[0]
    fixed = Schedule(sched.instance, sched.orders, comms=chk.corrected)
    assert simulate(fixed).valid                       # buffered: still a valid runtime order
    assert not check_p2p(fixed, "blocking").hangs
    assert not check_p2p(sched, "buffered").hangs


def test_deferred_receives_fix_an_early_receive():
    # GPU 0 posts 0RECV_B0 before 0SEND_F0: GPU 1 never gets its input, under either
    # semantics; moving the receive to right before 0B0 fixes it.
    inst = Instance(P=2, m=1)
    sched = generate("1f1b", inst)
    comms = (("0F0", "0RECV_B0", "0SEND_F0", "0B0"), ("1RECV_F0", "1F0", "1B0", "1SEND_B0"))
    early = Schedule(inst, sched.orders, comms=comms)
    assert "comm_deadlock" in {v.rule for v in simulate(early).violations}
    chk = check_p2p(early, "blocking")
    assert chk.hangs and chk.hangs_buffered and not chk.only_blocking
    assert not reference_runs(inst, comms, True) and not reference_runs(inst, comms, False)
    assert chk.correction == "deferred receives"
    assert chk.corrected == (("0F0", "0SEND_F0", "0RECV_B0", "0B0"), comms[1])
    assert reference_runs(inst, chk.corrected, True)


@given(valid_schedules(instances(max_pairs=12)))
def test_blocking_and_buffered_match_the_naive_reference(sched):
    note_schedule(sched)
    inst = sched.instance
    comms = natural_comms(sched)
    for semantics in ("buffered", "blocking"):
        chk = check_p2p(Schedule(inst, sched.orders, comms=comms), semantics)
        assert chk.hangs == (not reference_runs(inst, comms, semantics == "blocking"))
        if chk.corrected is not None:
            assert reference_runs(inst, chk.corrected, semantics == "blocking")
            assert simulate(Schedule(inst, sched.orders, comms=chk.corrected)).valid
    # the natural order of a valid schedule never hangs with buffered sends
    assert not check_p2p(sched, "buffered").hangs


def test_cli_simulate_p2p(tmp_path, capsys):
    path = tmp_path / "o.json"
    path.write_text(json.dumps(document_from_schedule(generate("1f1b", Instance(P=2, m=2)))))
    assert main(["simulate", str(path), "--json", "--p2p", "blocking"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is False and out["p2p"]["only_blocking"] is True
    assert out["p2p"]["correction"] == "rank parity"
    assert out["p2p"]["corrected"]["1"][3:5] == ["1RECV_F1", "1SEND_B0"]
    assert any(e.startswith("comm_deadlock: under blocking") for e in out["errors"])
    assert main(["simulate", str(path), "--p2p", "buffered"]) == 0
    assert "runs to its end" in capsys.readouterr().out
    assert main(["simulate", str(path)]) == 0
    assert "p2p" not in capsys.readouterr().out
