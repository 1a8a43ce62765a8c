"""``pipebounds simulate FILE|- [--json]``: validate and time orders documents (CLI.md)."""

from __future__ import annotations

from schedules.io import INPUT_ERRORS, load_documents, schedule_from_document
from schedules.simulate import simulate
from .common import CLIError, exact_string, number, print_json, read_text


def register(sub) -> None:
    p = sub.add_parser("simulate", help="validate and time orders documents",
                       description="Validate and ASAP-time one orders document or a JSON list of "
                                   "them. Exit 0 if all are valid, 1 if one is not, 2 on bad input.")
    p.add_argument("file", help="orders document (JSON), or - for standard input")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def simulation_report(schedule) -> dict:
    """The JSON object of one simulated document (CLI.md keys, plus extras)."""
    from bounds import lower_bound

    from ..certify import certify

    res = simulate(schedule)
    out = {"valid": res.valid, "errors": res.errors}
    if res.makespan is not None:
        out["makespan"] = number(res.makespan)
        out["makespan_exact"] = exact_string(res.makespan)
        out["bubble_ratio"] = [float(x) for x in res.bubble_ratio]
        out["bubble_ratio_exact"] = [exact_string(x) for x in res.bubble_ratio]
        out["busy"] = [exact_string(x) for x in res.busy]
    else:
        out.update(makespan=None, makespan_exact=None, bubble_ratio=None)
    out["peak_memory"] = res.peak_memory
    inst = schedule.instance
    out.update(_bytes_report(inst, res))
    if res.peak_memory is not None:
        K = inst.K if inst.K is not None else max(max(res.peak_memory), 1)
        kinst = inst.with_(K=K)
        lb = lower_bound(kinst)
        out["lower_bound"] = number(lb.value)
        out["lower_bound_exact"] = exact_string(lb.value)
        out["lower_bound_K"] = K
        out["respects_bound"] = (res.makespan >= lb.value) if res.makespan is not None else None
        # the certifier (lookups, and this document as a certificate): is the bound the optimum
        cert = certify(kinst, lb=lb, schedules=[(schedule, res)] if res.valid else [])
        out["exact_basis"] = cert.exact_basis
        out["optimum"] = None if cert.optimum is None else exact_string(cert.optimum)
        out["optimal"] = (res.valid and cert.optimum is not None
                          and res.makespan == cert.optimum)
    else:
        out.update(lower_bound=None, respects_bound=None)
    return out


def _bytes_report(inst, res) -> dict:
    """``peak_bytes`` (exact strings, one per GPU) and ``budget`` when the document has a
    ``memory`` object (CLI.md additions); nothing otherwise."""
    if inst.memory is None:
        return {}
    budget = inst.memory.budget
    return {"peak_bytes": None if res.peak_bytes is None else [exact_string(x) for x in
                                                               res.peak_bytes],
            "budget": None if budget is None else exact_string(budget)}


def run(args) -> int:
    docs, was_list = load_documents(read_text(args.file))
    schedules = []
    for k, doc in enumerate(docs):
        try:
            schedules.append(schedule_from_document(doc))
        except INPUT_ERRORS as exc:
            where = f"document {k}: " if was_list else ""
            raise CLIError(f"{where}{exc}") from None
    reports = [simulation_report(s) for s in schedules]
    if args.json:
        print_json(reports if was_list else reports[0])
    else:
        for k, (s, r) in enumerate(zip(schedules, reports)):
            inst = s.instance
            head = f"document {k}: " if was_list else ""
            print(f"{head}P={inst.P} m={inst.m} v={inst.v} K={inst.K if inst.K else 'inf'} "
                  f"{'valid' if r['valid'] else 'INVALID'}")
            for e in r["errors"]:
                print(f"  {e}")
            if r["makespan"] is not None:
                print(f"  makespan {r['makespan_exact']}  lower bound {r['lower_bound_exact']} "
                      f"(K={r['lower_bound_K']})  peak memory {r['peak_memory']}")
                print("  bubble ratio " + " ".join(f"{x:.3f}" for x in r["bubble_ratio"]))
            if r.get("peak_bytes") is not None:
                print(f"  peak bytes {' '.join(r['peak_bytes'])}  budget {r['budget']}")
    return 0 if all(r["valid"] for r in reports) else 1
