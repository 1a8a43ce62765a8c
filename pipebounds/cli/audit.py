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
                                   "interleaved, torch's interleaved zero bubble, ZB-2p's "
                                   "optimality, F/B/W balance, T3's exactness at K = 1) on exact "
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

    if args.only is not None and not args.only.strip():  # an unset shell variable, say:
        raise CLIError("--only needs a claim id (or part of one); omit it for every claim")
    verdicts = audit(args.only, progress=progress_arg(args))
    if not verdicts:
        raise CLIError(f"no claim id contains {args.only!r}")
    if args.json:
        print_json({"claims": [verdict_json(v) for v in verdicts]})
    elif args.markdown:
        print(markdown(verdicts), end="")
    else:
        print("\n\n".join("\n".join(verdict_text(v)) for v in verdicts))
    return 0


def verdict_text(v) -> list[str]:
    """One claim for people: its statement, verdict, source, range and where its smallest
    counterexample is (the orders document that ``--json`` prints and ``simulate`` replays)."""
    from pipebounds.services.audit import show_value

    c = v.claim
    lines = [f"{v.verdict}: {c.claim}",
             f"  id {c.id}, definition {c.definition}, schedule {c.generator}; source: {c.source}",
             f"  checked on {v.range} ({v.instances} instances, {v.failures} failing)"]
    d = v.counterexample
    if d:
        dur = d["durations"]
        sizes = " ".join(f"{k}={show_value(dur[k])}" for k in ("F", "B", "I", "W") if k in dur)
        lines.append(f"  smallest counterexample: P={d['P']} m={d['m']} v={d.get('v', 1)} "
                     f"{sizes}: claimed {show_value(d['claimed_exact'])}, measured "
                     f"{show_value(d['measured_exact'])}")
        lines.append(f"  (its schedule: pipebounds audit --only {c.id} --json, under "
                     "claims[].counterexample, an orders document pipebounds simulate replays)")
    if c.note:
        lines.append(f"  note: {c.note}")
    return lines
