"""``pipebounds audit [--only ID] [--json | --markdown]`` (CLI.md): published claims, checked.

JSON ``claims``: list of ``{claim, source, definition, verdict, range, counterexample}`` (plus
``id``, ``schedule``, ``instances``, ``failures``, ``note``); the counterexample is an orders
document with ``claimed`` and ``measured`` keys (null when the claim holds). ``--markdown``
prints docs/claims.md. Library: :mod:`pipebounds.services.audit`.
"""

from __future__ import annotations

from .common import add_progress_flags, print_json, progress_arg


def register(sub) -> None:
    p = sub.add_parser("audit", help="check published claims about known schedules",
                       description="Check the published figures of known schedules (1F1B, "
                                   "ZB-H1/H2, ZB-2p, ZB-V, V-Half/V-Min and their zero-"
                                   "bubble condition, DualPipeV, Megatron "
                                   "interleaved, torch's interleaved zero bubble) on exact "
                                   "grids, each under its own definition; verdict holds, "
                                   "holds_on_range or false, with the smallest counterexample.")
    p.add_argument("--only", metavar="ID", default=None, help="claims whose id contains ID")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="machine-readable output")
    out.add_argument("--markdown", action="store_true", help="print docs/claims.md")
    add_progress_flags(p, "a progress bar (instances checked, weighted by size)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pipebounds.services.audit import audit, markdown, verdict_json
    from .common import CLIError

    verdicts = audit(args.only, progress=progress_arg(args))
    if not verdicts:
        raise CLIError(f"no claim id contains {args.only!r}")
    if args.json:
        print_json({"claims": [verdict_json(v) for v in verdicts]})
    elif args.markdown:
        print(markdown(verdicts), end="")
    else:
        for v in verdicts:
            print(f"{v.verdict:<15} {v.claim.id:<28} [{v.claim.definition}] {v.range}")
    return 0
