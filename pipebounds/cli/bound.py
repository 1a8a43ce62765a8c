"""``pipebounds bound <instance> [--certify S] [--json]`` and ``--batch FILE|-`` (CLI.md).

JSON of one instance: ``lower_bound`` (number), ``lower_bound_exact`` (string), ``exact`` (the
bound is proven equal to the optimum for this instance), ``exact_basis`` (why:
``theorem``, ``checked``, ``table``, ``certificate``, ``solver``, or null;
:mod:`pipebounds.certify`), ``optimum`` and ``optimum_exact`` (the optimum when known by any
basis, else null; it may exceed the bound), ``basis_detail`` (the theorem id, checked range,
table file, certificate source or engine behind ``optimum_basis``, or null), ``terms`` (list of
``{name, id, value, value_exact}``, ``id`` the theorem id of docs/theory*.md), ``binding`` (the
names of the terms equal to the bound). Without ``--certify`` the command
only evaluates formulas and looks up the checked ranges and pipebounds/data/optima.jsonl (never searches);
``--certify S`` may spend up to ``S`` seconds per instance on a certificate schedule and then
the exact solver. In batch mode: a JSON list, one result per input line with its
``instance``; a bad line gives ``{"instance": ..., "error": ...}`` and the others go on.
"""

from __future__ import annotations

import sys

from bounds.evaluate import BoundLimitError

from .common import (CLIError, add_instance_flags, batch_results, exact_string,
                     instance_from_args, number, print_json, read_bytes, seconds_flag)


def register(sub) -> None:
    p = sub.add_parser("bound", help="lower bound on the makespan of an instance",
                       description="The best proven lower bound on the makespan (docs/theory.md), "
                                   "its terms, and whether it is proven exact.")
    add_instance_flags(p)
    from .common import add_overlap_flags

    add_overlap_flags(p)
    p.add_argument("--batch", metavar="FILE", default=None,
                   help="JSON lines of instances (- for standard input); prints a JSON list")
    p.add_argument("--certify", type=seconds_flag("--certify", allow_zero=True), default=0, metavar="S",
                   help="spend up to S seconds per instance looking for a certificate schedule "
                        "(then the exact solver); default 0: formulas and lookups only")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def bound_report(inst, seconds: float = 0) -> dict:
    """The CLI.md JSON object of one instance's bound and its certification."""
    from ..certify import certify

    return certification_report(certify(inst, seconds=seconds, solver=seconds > 0))


def certification_report(cert) -> dict:
    """The JSON object of a :class:`~pipebounds.certify.Certification`."""
    from bounds.evaluate import TERM_IDS

    opt = cert.optimum
    return {"lower_bound": number(cert.value), "lower_bound_exact": exact_string(cert.value),
            "exact": cert.exact, "exact_basis": cert.exact_basis,
            "optimum": None if opt is None else number(opt),
            "optimum_exact": None if opt is None else exact_string(opt),
            "optimum_basis": cert.basis, "basis_detail": cert.detail or None,
            "terms": [{"name": n, "id": TERM_IDS[n], "value": number(v),
                       "value_exact": exact_string(v)} for n, v in cert.terms],
            "binding": list(cert.binding)}


def basis_text(basis: str, detail: str) -> str:
    """Why an optimum is known, for people: the theorem, range, table or certificate named."""
    return {"theorem": f"theorem {detail}" if detail else "a theorem's exact case",
            "checked": f"inside the exhaustively checked range {detail}" if detail
            else "inside an exhaustively checked range",
            "table": "a proven row of pipebounds/data/optima.jsonl",
            "certificate": f"the schedule {detail or 'given'} reaches the bound",
            "solver": f"the exact solver ({detail}) proved it" if detail
            else "the exact solver proved it"}.get(basis, basis)


def bound_text(inst, cert, rep: dict, certify_seconds: float) -> list[str]:
    """``bound``'s text: the bound, whether and why it is exact, its terms with the binding
    one(s) marked, and what could settle an open case."""
    K = "inf" if inst.K is None else inst.K
    lines = [f"P={inst.P} m={inst.m} K={K} v={inst.v} f={exact_string(inst.f)} "
             + (f"b_I={exact_string(inst.b_I)} b_W={exact_string(inst.b_W)}" if inst.split
                else f"b={exact_string(inst.b)}")
             + (" directions=2" if inst.directions == 2 else "")]
    if inst.directions == 2:
        lines.append("two directions (MODEL.md): theorem D1 only, the one-chain theorems do not "
                     "apply (docs/theory.md A.12)")
    elif inst.overlapped:
        from bounds.overlap import overlap_factor

        lines.append(f"F&B ops allowed: theorem OV1, every term below is rho' = "
                     f"{exact_string(overlap_factor(inst))} times its value without them "
                     f"(docs/theory.md A.10)")
    head = f"lower bound {rep['lower_bound_exact']}"
    if rep["exact"]:
        head += (f"  (exact: proven equal to the optimum; basis {rep['exact_basis']}: "
                 f"{basis_text(cert.basis, cert.detail)})")
    elif rep["optimum"] is not None:
        head += (f"  (not the optimum: the optimum is {rep['optimum_exact']}, basis "
                 f"{rep['optimum_basis']}: {basis_text(cert.basis, cert.detail)})")
    elif certify_seconds > 0:
        head += (f"  (not proven exact: --certify {certify_seconds:g} found no schedule reaching "
                 "the bound among the constructions and families, and the solver did not close "
                 "it; a schedule of yours that reaches it settles it: pipebounds simulate FILE "
                 "says exact_basis certificate)")
    else:
        head += ("  (not proven exact here: no theorem, checked range or table row covers it; "
                 "--certify S may settle it, searching S seconds for a schedule that reaches the "
                 "bound, then the exact solver)")
    lines.append(head)
    for t in rep["terms"]:
        mark = "  <- binding" if t["name"] in rep["binding"] else ""
        lines.append(f"  {t['id']:<4} {t['name']:<22} {t['value_exact']}{mark}")
    return lines


def run(args) -> int:
    if not args.certify >= 0:
        raise CLIError(f"--certify must be a number of seconds >= 0, got {args.certify}")
    if args.batch is not None:
        if args.certify == 0:
            from .bound_batch import write_batch_bound_json

            if args.P is not None or args.m is not None:
                raise CLIError("give either instance flags or --batch, not both")
            write_batch_bound_json(read_bytes(args.batch), bound_report, sys.stdout)
            return 0
        print_json(batch_results(args, lambda inst: bound_report(inst, args.certify)))
        return 0
    from .common import with_overlap_flags

    inst = with_overlap_flags(instance_from_args(args), args)
    from ..certify import certify

    try:
        cert = certify(inst, seconds=args.certify, solver=args.certify > 0)
    except BoundLimitError as exc:
        raise CLIError(str(exc)) from None
    rep = certification_report(cert)
    if args.json:
        print_json({"instance": inst.to_dict(), **rep})
        return 0
    print("\n".join(bound_text(inst, cert, rep, args.certify)))
    return 0
