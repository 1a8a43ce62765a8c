"""``pipebounds simulate FILE|- [--json]``: validate and time orders documents (CLI.md)."""

from __future__ import annotations

from fractions import Fraction

from schedules.comms import P2P_MODES, check_p2p
from schedules.compiled import has_backward_recompute
from schedules.io import INPUT_ERRORS, load_documents, schedule_from_document
from schedules.simulate import simulate
from .common import (CLIError, add_document_arg, exact_string, number, print_json, quantities,
                     quantity, read_text)


def register(sub) -> None:
    p = sub.add_parser("simulate", help="validate and time orders documents",
                       description="Validate and ASAP-time one orders document or a JSON list of "
                                   "them. Exit 0 if all are valid, 1 if one is not, 2 on bad input.")
    add_document_arg(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--p2p", choices=P2P_MODES, default=None,
                   help="also run the send/receive order (the document's comms, or receives "
                        "right before and sends right after their ops) under these send "
                        "semantics: buffered (torch's dry run) or blocking (NCCL: a send waits "
                        "for its receive); a hang is a comm_deadlock error, reported with a "
                        "corrected order when rank parity or deferred receives fix it")
    p.set_defaults(func=run)


def p2p_report(schedule, semantics: str) -> dict:
    """``simulate --p2p``: the send/receive order under ``semantics`` (CLI.md, issue 24)."""
    chk = check_p2p(schedule, semantics)
    return {"semantics": semantics, "comms_derived": chk.derived, "hangs": chk.hangs,
            "only_blocking": chk.only_blocking, "blocked": list(chk.blocked),
            "correction": chk.correction,
            "corrected": None if chk.corrected is None else
            {str(p): list(seq) for p, seq in enumerate(chk.corrected)}}


def simulation_report(schedule, p2p=None) -> dict:
    """The JSON object of one simulated document (CLI.md keys, plus extras); ``p2p``: also
    check the send/receive order under that semantics (:func:`p2p_report`)."""
    from bounds import lower_bound

    from ..certify import certify

    res = simulate(schedule)
    out = {"valid": res.valid, "errors": res.errors}
    if p2p is not None and res.makespan is not None:
        out["p2p"] = rep = p2p_report(schedule, p2p)
        if rep["hangs"] and not (schedule.comms is not None and not rep["only_blocking"]):
            out["valid"] = False
            out["errors"] = res.errors + [
                f"comm_deadlock: under {p2p} sends the send/receive order "
                f"{'(receives before, sends after their ops) ' if rep['comms_derived'] else ''}"
                f"cannot run to its end: " + "; ".join(rep["blocked"][:10])]
    if res.makespan is not None:
        out["makespan"] = number(res.makespan)
        out["makespan_exact"] = exact_string(res.makespan)
        out["bubble_ratio"] = [float(x) for x in res.bubble_ratio]
        out["bubble_ratio_exact"] = [exact_string(x) for x in res.bubble_ratio]
        out.update(quantity("busy", res.busy))
    else:
        out.update(makespan=None, makespan_exact=None, bubble_ratio=None,
                   bubble_ratio_exact=None, busy=None, busy_exact=None)
    out["peak_memory"] = res.peak_memory
    inst = schedule.instance
    out.update(_bytes_report(inst, res))
    if res.peak_memory is not None:
        K = inst.K if inst.K is not None else max(max(res.peak_memory), 1)
        kinst = inst.with_(K=K)
        # a schedule with backward recomputes is bounded by the full model's theorems
        # (docs/theory.md A.11); the optima of the table and the checked ranges (without them)
        # do not apply, only this document can certify the bound
        backward = has_backward_recompute(schedule)
        lb = lower_bound(kinst, backward_remat=backward)
        out["lower_bound"] = number(lb.value)
        out["lower_bound_exact"] = exact_string(lb.value)
        out["lower_bound_K"] = K
        out["lower_bound_backward_remat"] = backward
        out["respects_bound"] = (res.makespan >= lb.value) if res.makespan is not None else None
        if backward:
            reached = res.valid and res.makespan == lb.value
            optimum, basis = (lb.value, "certificate") if reached else (None, None)
        else:
            # the certifier (lookups, and this document as a certificate): is the bound the optimum
            cert = certify(kinst, lb=lb, schedules=[(schedule, res)] if res.valid else [])
            optimum = cert.optimum
            basis = cert.basis if cert.optimum is not None else None
            out["exact_basis"] = cert.exact_basis
        if backward:
            out["exact_basis"] = basis
        out.update(quantity("optimum", optimum))
        out["optimal"] = (res.valid and optimum is not None and res.makespan == optimum)
        out["optimum_basis"] = basis
        ref = optimum if optimum is not None else lb.value
        gap = (res.makespan / ref - 1) if res.makespan is not None and ref > 0 else None
        out.update(quantity("gap", gap))
        out["gap_to"] = None if gap is None else (
            "optimum" if optimum is not None else "lower_bound")
        out["K_from_peak"] = inst.K is None
    else:
        out.update(lower_bound=None, respects_bound=None)
    return out


def percent(gap) -> str:
    """A gap ``makespan / reference - 1`` for people: ``3.8%`` (``0%`` when it is zero)."""
    g = Fraction(gap) * 100
    return "0%" if g == 0 else f"{float(g):.3g}%"


def simulation_text(r: dict) -> list[str]:
    """The lines under a document's heading in ``simulate``'s text output."""
    lines: list[str] = []
    if r["makespan"] is None:
        return lines
    K = r["lower_bound_K"]
    lines.append(f"  makespan {r['makespan_exact']}  peak memory "
                 + " ".join(str(x) for x in r["peak_memory"]) + " (per GPU)")
    if r["K_from_peak"]:
        lines.append(f"  the document sets no K: bound and optimum below are at K={K}, its "
                     "peak memory")
    if r.get("optimum") is not None:
        verdict = ("this schedule is optimal" if r["optimal"]
                   else f"gap {percent(Fraction(r['gap_exact']))} to it")
        lines.append(f"  lower bound {r['lower_bound_exact']} at K={K}; known optimum "
                     f"{r['optimum_exact']} (basis {r['optimum_basis']}): {verdict}")
    elif r.get("lower_bound") is not None:
        gap = "" if r.get("gap_exact") is None else \
            f"; gap {percent(Fraction(r['gap_exact']))} to the bound"
        lines.append(f"  lower bound {r['lower_bound_exact']} at K={K}; optimum not known{gap}")
    lines.append("  bubble ratio " + " ".join(f"{x:.3f}" for x in r["bubble_ratio"]))
    if r.get("p2p") is not None:
        q = r["p2p"]
        if not q["hangs"]:
            lines.append(f"  p2p {q['semantics']}: the send/receive order runs to its end")
        else:
            how = "only under blocking sends" if q["only_blocking"] else "under buffered sends too"
            fix = (f"; corrected by {q['correction']} (corrected order in --json)"
                   if q["correction"] else "; no rank-parity or deferred-receive order fixes it")
            lines.append(f"  p2p {q['semantics']}: hangs {how}{fix}")
    return lines


def _bytes_report(inst, res) -> dict:
    """``peak_bytes`` (exact strings, one per GPU) and ``budget`` when the document has a
    ``memory`` object (CLI.md additions), numbers with their ``_exact`` strings; nothing
    otherwise."""
    if inst.memory is None:
        return {}
    budget = inst.memory.budget
    return quantities(peak_bytes=res.peak_bytes, budget=budget)


def run(args) -> int:
    docs, was_list = load_documents(read_text(args.file))
    schedules = []
    for k, doc in enumerate(docs):
        try:
            schedules.append(schedule_from_document(doc))
        except INPUT_ERRORS as exc:
            where = f"document {k}: " if was_list else ""
            raise CLIError(f"{where}{exc}") from None
    reports = [simulation_report(s, getattr(args, "p2p", None)) for s in schedules]
    if args.json:
        print_json(reports if was_list else reports[0])
    else:
        for k, (s, r) in enumerate(zip(schedules, reports)):
            inst = s.instance
            head = f"document {k}: " if was_list else ""
            two = " directions=2" if inst.directions == 2 else ""
            print(f"{head}P={inst.P} m={inst.m} v={inst.v}{two} K={inst.K if inst.K else 'inf'} "
                  f"{'valid' if r['valid'] else 'INVALID'}")
            for e in r["errors"]:
                print(f"  {e}")
            print("\n".join(simulation_text(r)))
    return 0 if all(r["valid"] for r in reports) else 1
