"""Blocking point-to-point checks on torch exports (issue 24): the send/receive orders torch's
runtime builds for an exported compute-only order (schedules.interop.torch.torch_runtime_comms,
re-implemented without torch), run with the analysis of ``simulate --p2p blocking``.

The re-implementation is checked against torch 2.13's own lowering (``_add_send_recv``,
``_defer_recv_ops``) when torch is installed; the verdicts are checked on a hand-traced case and
on every family's export at a few sizes; ``export`` warns, and a planted hanging order is caught.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import schedules.interop.torch as torch_interop
from pipebounds.cli import main
from schedules import Instance, document_from_schedule
from schedules.comms import check_p2p
from schedules.generators import GENERATORS, generate
from schedules.interop.torch import (for_torch_runtime, runtime_p2p, to_pipeline_order,
                                     torch_runtime_comms)

SIZES = ((2, 4), (3, 6), (4, 8))


def family_exports():
    """``(name, schedule)``: every family's natural schedule at SIZES (its smallest ``v``, its
    placement, split durations where it needs them), renumbered as ``export`` writes it."""
    out = []
    for name, gen in GENERATORS.items():
        if gen.requires.directions != 1:  # the torch export refuses two directions (dualpipe)
            continue
        for P, m in SIZES:
            kw = dict(b_I=1, b_W=1) if gen.requires.split else {}
            inst = Instance(P=P, m=m, v=gen.requires.v_min,
                            placement=gen.requires.placement or "looped", **kw)
            out.append((name, for_torch_runtime(generate(name, inst))[0]))
    return out


EXPORTS = family_exports()


def torch_lowering(sched, defer: bool):
    """torch 2.13's own lowering of the exported order, as per-GPU action strings (an
    OVERLAP_F_B action as its sub-actions, forward first)."""
    pytest.importorskip("torch")
    from torch.distributed.pipelining.schedules import (_Action, _add_send_recv,
                                                        _defer_recv_ops)

    inst = sched.instance
    acts = {r: [_Action.from_str(a) for a in row]
            for r, row in to_pipeline_order(sched, renumber=False).items()}
    res = _add_send_recv(acts, stage_to_rank=inst.gpu, num_stages=inst.S)
    if defer:
        res = _defer_recv_ops(res, stage_to_rank=inst.gpu)
    return tuple(tuple(str(x) for a in res.get(r, []) for x in (a.sub_actions or (a,)))
                 for r in range(inst.P))


@pytest.mark.parametrize("defer", [False, True])
def test_lowering_is_torchs_own(defer):
    for name, sched in EXPORTS:
        assert torch_runtime_comms(sched, defer_recv=defer) == torch_lowering(sched, defer), name


def test_default_lowering_never_hangs_under_blocking_sends():
    """torch's default lowering appends each receive to the receiver's list at the moment the
    send is placed, so every list follows one global order of the pairs: it runs to its end
    under blocking sends, for every family's export."""
    for name, sched in EXPORTS:
        assert not runtime_p2p(sched)["default"].hangs, name


def test_defer_pp_recv_hang_traced_by_hand():
    """1F1B, P = 2, m = 4 with defer_pp_recv: GPU 1 (the higher rank) defers 1RECV_F1 to right
    before 1F1, after 1SEND_B0; GPU 0 sends 0SEND_F1 before it posts 0RECV_B0 (a receive
    placed after that send, so not flushed by the rank-parity rule). Blocking: GPU 0 waits at
    0SEND_F1 for 1RECV_F1, GPU 1 at 1SEND_B0 for 0RECV_B0."""
    sched = for_torch_runtime(generate("1f1b", Instance(P=2, m=4)))[0]
    comms = torch_runtime_comms(sched, defer_recv=True)
    assert comms[0][:6] == ("0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0")
    assert comms[1][:6] == ("1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1")
    chk = runtime_p2p(sched)["defer_pp_recv"]
    assert chk.hangs and chk.only_blocking
    assert chk.blocked[0].startswith("GPU 0 is blocked at 0SEND_F1")
    assert chk.blocked[1].startswith("GPU 1 is blocked at 1SEND_B0")
    assert chk.correction == "rank parity"
    fixed = dataclasses.replace(sched, comms=chk.corrected)
    assert not check_p2p(fixed, "blocking").hangs


def test_which_family_exports_hang_with_defer_pp_recv():
    """The table of docs/interop.md: with defer_pp_recv every family but GPipe (and
    looped-bfs, whose v = 1 order is GPipe's) hangs under blocking sends at some size (V-Half
    and V-Min not at P = 2), and only 1F1B's is fixed by a simple reordering."""
    hangs: dict[str, list] = {}
    fixed = set()
    for name, sched in EXPORTS:
        chk = runtime_p2p(sched)["defer_pp_recv"]
        if chk.hangs:
            hangs.setdefault(name, []).append(sched.instance.P)
            if chk.correction:
                fixed.add(name)
    exported = {n for n, g in GENERATORS.items() if g.requires.directions == 1}
    assert exported - set(hangs) == {"gpipe", "looped-bfs"}
    assert hangs["v-half"] == hangs["v-min"] == [3, 4]
    assert all(ps == [2, 3, 4] for n, ps in hangs.items() if n not in ("v-half", "v-min"))
    assert fixed == {"1f1b"}


def _write(tmp_path, sched):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(document_from_schedule(sched)))
    return str(path)


def test_export_warns_for_the_lowering_that_hangs(tmp_path, capsys):
    sched = generate("1f1b", Instance(P=2, m=4))
    assert main(["export", _write(tmp_path, sched), "--format", "torch-csv", "-o",
                 str(tmp_path / "o.csv")]) == 0
    assert capsys.readouterr().err == ""            # without --p2p nothing changes
    assert main(["export", _write(tmp_path, sched), "--format", "torch-csv", "-o",
                 str(tmp_path / "o.csv"), "--p2p", "blocking"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: under blocking sends")
    assert "defer_pp_recv=True" in err[0] and "0SEND_F1" in err[0] and "rank parity" in err[0]
    gpipe = generate("gpipe", Instance(P=2, m=4))
    assert main(["export", _write(tmp_path, gpipe), "--format", "torch-csv", "-o",
                 str(tmp_path / "g.csv"), "--p2p", "blocking"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["export", _write(tmp_path, sched), "--format", "torch-csv", "-o",
                 str(tmp_path / "o.csv"), "--p2p", "buffered"]) == 0
    assert capsys.readouterr().err == ""            # buffered sends: no hang
    assert main(["export", _write(tmp_path, sched), "--format", "chrome-trace", "-o",
                 str(tmp_path / "t.json"), "--p2p", "blocking"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs --format torch-csv" in err


def test_a_planted_hanging_default_order_is_reported(tmp_path, capsys, monkeypatch):
    """Plant a hang in the default lowering: GPU 1's receive of microbatch 1 moved down to
    right before 1F1, after 1SEND_B0 (the defer_pp_recv pattern). The check reports the
    default lowering as hanging and export warns for it."""
    real = torch_interop.torch_runtime_comms

    def planted(schedule, defer_recv=False):
        comms = [list(seq) for seq in real(schedule, defer_recv)]
        if not defer_recv:  # GPU 1 posts its receive of microbatch 1 after sending B0 back
            comms[1].remove("1RECV_F1")
            comms[1].insert(comms[1].index("1F1"), "1RECV_F1")
        return tuple(tuple(seq) for seq in comms)

    monkeypatch.setattr(torch_interop, "torch_runtime_comms", planted)
    sched = generate("1f1b", Instance(P=2, m=4))
    assert runtime_p2p(for_torch_runtime(sched)[0])["default"].hangs
    assert main(["export", _write(tmp_path, sched), "--format", "torch-csv", "-o",
                 str(tmp_path / "o.csv"), "--p2p", "blocking"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert any("order torch's runtime builds" in x for x in err)
