"""The orders documents tests/test_torch_run.py executes in torch (no torch import here).

Every family of :data:`schedules.generators.GENERATORS` on its smallest fitting instance, memory
fitted at ``K = 1`` (:func:`schedules.remat.fit_memory`), an optimal recompute with backward
rematerialization (:func:`schedules.remat_optimal.optimal_remat`, ``backward=True``), and solver
schedules (CP-SAT, recorded below) whose last stage runs its forwards out of microbatch order.
"""

from __future__ import annotations

from schedules import Instance
from schedules.generators import GENERATORS, generate
from schedules.generators.common import GeneratorError
from schedules.io import document_from_schedule, schedule_from_document
from schedules.remat import fit_memory

ONE_DIRECTION = [n for n, g in GENERATORS.items() if g.requires.directions == 1]
"""The families torch can run: its pipelining has no bidirectional model (``dualpipe``, MODEL.md
*Directions*; the torch export refuses it, tests/test_dualpipe.py)."""

# recorded from pipebounds.search.cpsat.solve_cpsat(Instance(...), time_limit=3, use_known=False)
SOLVER_DOCS = {
    2: [
        {"P": 2, "m": 4, "v": 1, "placement": "looped", "K": 2,
         "durations": {"F": 1, "B": 2, "I": 1, "W": 1}, "source": "cpsat",
         "orders": {"0": ["0F0", "0F1", "0F2", "0I0", "0W0", "0R1", "0I2", "0W2", "0F3", "0I1",
                          "0W1", "0I3", "0W3"],
                    "1": ["1F0", "1I0", "1W0", "1F2", "1I2", "1W2", "1F1", "1I1", "1F3", "1I3",
                          "1W3", "1W1"]}},
        {"P": 2, "m": 3, "v": 1, "placement": "looped", "K": 1,
         "durations": {"F": 1, "B": 2}, "source": "cpsat",
         "orders": {"0": ["0F0", "0F1", "0F2", "0R0", "0B0", "0R2", "0B2", "0R1", "0B1"],
                    "1": ["1F0", "1B0", "1F2", "1B2", "1F1", "1B1"]}},
    ],
    4: [
        {"P": 4, "m": 4, "v": 1, "placement": "looped", "K": 2, "durations": {"F": 1, "B": 2},
         "source": "cpsat",
         "orders": {"0": ["0F0", "0F1", "0F2", "0F3", "0R0", "0B0", "0R2", "0B3", "0R1", "0B2",
                          "0B1"],
                    "1": ["1F0", "1F1", "1F2", "1F3", "1B0", "1R3", "1B3", "1R1", "1B2", "1B1"],
                    "2": ["2F0", "2R0", "2F1", "2F3", "2B0", "2F2", "2R1", "2B3", "2R2", "2B2",
                          "2B1"],
                    "3": ["3F0", "3B0", "3F3", "3B3", "3F1", "3F2", "3B2", "3B1"]}},
        {"P": 4, "m": 4, "v": 1, "placement": "looped", "K": 3,
         "durations": {"F": 1, "B": 2, "I": 1, "W": 1}, "source": "cpsat",
         "orders": {"0": ["0F0", "0F1", "0F2", "0F3", "0I0", "0W0", "0R1", "0I2", "0W2", "0I1",
                          "0W1", "0I3", "0W3"],
                    "1": ["1F0", "1F1", "1F2", "1F3", "1R3", "1I0", "1W0", "1R1", "1I2", "1W2",
                          "1I1", "1W1", "1I3", "1W3"],
                    "2": ["2F0", "2R0", "2F2", "2I0", "2F3", "2F1", "2I2", "2W0", "2I1", "2R3",
                          "2I3", "2W3", "2W2", "2W1"],
                    "3": ["3F0", "3I0", "3W0", "3F2", "3I2", "3F1", "3I1", "3F3", "3I3", "3W1",
                          "3W3", "3W2"]}},
    ],
}


def family_instance(name: str, P: int, m: int) -> Instance:
    """The smallest instance family ``name`` accepts with ``P`` GPUs and ``m`` microbatches."""
    req = GENERATORS[name].requires
    kw = dict(b_I=1, b_W=1) if req.split else {}
    return Instance(P=P, m=m, v=req.v_min if req.v_min > 1 else 1,
                    placement=req.placement or "looped", **kw)


def family_document(name: str, P: int, ms=(4, 8)) -> dict:
    """The document of family ``name`` on :func:`family_instance` (first ``m`` of ``ms`` it
    accepts)."""
    last = None
    for m in ms:
        try:
            return document_from_schedule(generate(name, family_instance(name, P, m)))
        except GeneratorError as exc:
            last = exc
    raise last


def last_stage_out_of_order(doc: dict) -> bool:
    """Whether the last stage's forwards run in another order than 0..m-1."""
    sched = schedule_from_document(doc)
    inst = sched.instance
    last = [op.microbatch for op in sched.orders[inst.gpu(inst.S - 1)]
            if op.kind == "F" and op.stage == inst.S - 1]
    return last != list(range(inst.m))


def backward_remat_document(P: int) -> dict:
    """An optimal recompute (``backward=True``) of ZB-H1 at a memory that makes it free after
    ``I`` for some pair."""
    from schedules.remat_optimal import optimal_remat

    base = generate("zb-h1", Instance(P=P, m=4, b_I=1, b_W=3))
    res = optimal_remat(base, K=1, backward=True, time_limit=5, workers=1)
    return document_from_schedule(res.schedule)


def has_backward_remat(doc: dict) -> bool:
    sched = schedule_from_document(doc)
    for seq in sched.orders:
        done = set()
        for op in seq:
            if op.kind == "I":
                done.add((op.stage, op.microbatch))
            if op.kind == "R" and (op.stage, op.microbatch) in done:
                return True
    return False


def cases(P: int) -> dict[str, dict]:
    """Name -> orders document, for ``P`` GPUs (every family at ``P = 2``, a few at ``P = 4``)."""
    names = sorted(ONE_DIRECTION) if P == 2 else ["1f1b", "zb-h1", "interleaved", "zbv", "dualpipev"]
    out = {f"family {name}": family_document(name, P) for name in names}
    out["1f1b split"] = document_from_schedule(generate("1f1b", Instance(P=P, m=4, b_I=1, b_W=1)))
    out["fit_memory K=1 1f1b"] = document_from_schedule(
        fit_memory(generate("1f1b", Instance(P=P, m=4)), 1))
    out["fit_memory K=1 zb-h1"] = document_from_schedule(
        fit_memory(generate("zb-h1", Instance(P=P, m=4, b_I=1, b_W=1)), 1))
    out["fit_memory K=2 interleaved v=2"] = document_from_schedule(
        fit_memory(generate("interleaved", Instance(P=P, m=4, v=2)), 2))
    out["optimal_remat backward"] = backward_remat_document(P)
    for k, doc in enumerate(SOLVER_DOCS[P]):
        out[f"solver {k}"] = doc
    return out
