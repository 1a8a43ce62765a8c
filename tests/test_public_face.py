"""The Python face (`import pipebounds as pb`): a complete `__all__`, real signatures, one default
engine with the CLI, the CLI's exactness answer, short reprs of result objects."""

from __future__ import annotations

import contextlib
import inspect
import io
import json

import pytest

import pipebounds as pb
from pipebounds.cli import build_parser, main


def test_all_is_complete_and_resolves():
    for name in ("certify", "best", "frontier", "audit", "solve", "lower_bound", "simulate",
                 "generate", "optimal_remat", "fit_memory", "Certification", "BestResult",
                 "Frontier", "SolveResult"):
        assert name in pb.__all__, name
    for name in pb.__all__:
        assert getattr(pb, name) is not None, name
    assert set(pb.__all__) <= set(dir(pb))


def test_signatures_are_real():
    params = inspect.signature(pb.solve).parameters
    assert "time_limit" in params and "engine" in params
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
    for fn in (pb.certify, pb.best, pb.frontier, pb.audit):
        assert "inst" in inspect.signature(fn).parameters or fn is pb.audit


def test_one_default_engine_for_library_and_cli():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    engine = next(a for a in sub.choices["solve"]._actions if a.dest == "engine")
    assert inspect.signature(pb.solve).parameters["engine"].default == engine.default \
        == pb.DEFAULT_ENGINE


@pytest.mark.parametrize("flags", [["-P", "4", "-m", "8", "-K", "2"],
                                   ["-P", "3", "-m", "4", "-K", "1", "-f", "3", "-b", "2"],
                                   ["-P", "4", "-m", "12", "--b-input", "1", "--b-weight", "1"],
                                   ["-P", "4", "-m", "8", "-K", "3", "-f", "5", "-b", "3"]])
def test_library_exactness_is_the_clis(flags):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bound", *flags, "--json"]) == 0
    cli = json.loads(out.getvalue())
    c = pb.certify(pb.Instance.from_dict(cli["instance"]))
    assert (c.exact, c.exact_basis) == (cli["exact"], cli["exact_basis"])


def test_short_reprs():
    inst = pb.Instance(P=3, m=4, K=2)
    sched = pb.generate("1f1b", inst)
    objects = [sched, pb.simulate(sched), pb.certify(inst), pb.solve(inst, 5, engine="search"),
               pb.optimal_remat(pb.generate("1f1b", inst.with_(K=None)), K=2, time_limit=5),
               pb.frontier(inst.with_(K=None), time_limit=1)]
    for x in objects:
        r = repr(x)
        assert len(r) < 200 and "Fraction(" not in r and "Op(" not in r, r
    assert "status='optimal'" in repr(objects[3]) and "makespan=18" in repr(objects[3])


def test_term_ids_is_an_attribute_like_terms_and_still_callable():
    lb = pb.lower_bound(pb.Instance(P=3, m=12, K=1, f=5, b=3))
    assert len(lb.term_ids) == len(lb.terms) and lb.term_ids() == lb.term_ids
    assert dict(zip((n for n, _ in lb.terms), lb.term_ids))["single_slot_coupled"] == "T3d"
    assert lb.binding == ("single_slot_coupled",)
