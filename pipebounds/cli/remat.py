"""``pipebounds remat FILE (-K N | --budget-bytes X) [--backward] [--options 1,2,3]
[--objective makespan|span] [--positions anywhere|adjacent] [--time-limit S] [--json]``
(CLI.md, docs/remat.md).

Optimal rematerialization of the document's fixed order (:func:`schedules.remat_optimal.
optimal_remat`). JSON keys: ``status``, ``makespan`` (+ ``makespan_exact``), ``lower_bound``
(+ ``lower_bound_exact``: a proven lower bound on the objective over the recompute choices of
this order; equal to the objective value when ``optimal``; null when ``infeasible``), ``span``
(objective ``span``), ``theory_lower_bound`` (``bounds.lower_bound`` of the instance at that
``K``, any order; with a byte budget, the bound without a memory limit), ``fit_memory_makespan``
(the greedy :func:`schedules.remat.fit_memory`, count model only; it may move ``W`` ops
earlier, so it can beat the fixed order: ``fit_memory_order`` says ``same`` or ``changed``),
``recomputed`` (action strings of every ``R`` and ``RI`` op), ``backward_recomputed`` (the
``R`` ops between an ``I`` and its ``W``), ``input_recomputed`` (the ``RI`` ops, option 3),
``options`` (the recompute options allowed), ``peak``,
``dropped`` (``R`` ops of the input removed first), ``seconds``, ``schedule`` (orders document).
"""

from __future__ import annotations

from fractions import Fraction

from schedules.deadline import Deadline
from schedules.stopping import signalled
from schedules.io import INPUT_ERRORS, load_documents, schedule_from_document
from schedules.instance import to_fraction, InstanceError
from schedules.remat import RematError
from schedules.remat_policies import POLICIES
from .common import (END_SECONDS, CLIError, add_document_arg, exact_or_none, limit_flag,
                     number_or_none, print_json, quantity, read_text, seconds_flag)


def register(sub) -> None:
    from schedules.remat_optimal import DEFAULT_TIME_LIMIT

    p = sub.add_parser("remat", help="optimal rematerialization of a fixed order",
                       description="Keep every GPU's order of the document's ops and choose, for "
                                   "every (microbatch, stage), keep or recompute, minimising the "
                                   "makespan (or the largest per-GPU span) under the memory "
                                   "limit; exact (CP-SAT), status optimal only when proven.")
    add_document_arg(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("-K", type=str, default=None,
                   help="activations per GPU (default: the document's K)")
    g.add_argument("--budget-bytes", type=str, default=None, metavar="X",
                   help="bytes per GPU, with the document's 'memory' model")
    p.add_argument("--backward", action="store_true",
                   help="also free after I and recompute before W (split form)")
    p.add_argument("--options", type=options_flag, default=None, metavar="LIST",
                   help="recompute options allowed per pair, comma-separated (default 1; "
                        "--backward adds 2): 1 recompute F before the backward, 2 free after I "
                        "and recompute F before W, 3 free activations and gradients after I "
                        "and recompute F and I before W (split form)")
    p.add_argument("--objective", choices=("makespan", "span"), default="makespan",
                   help="makespan (default) or span: the largest per-GPU span (paper 2)")
    p.add_argument("--positions", choices=("anywhere", "adjacent"), default="anywhere",
                   help="where a recompute may go: anywhere between F and its backward "
                        "(default) or right before it")
    p.add_argument("--time-limit", type=seconds_flag("--time-limit"), default=DEFAULT_TIME_LIMIT,
                   metavar="S",
                   help=f"CP-SAT seconds (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--policy", choices=POLICIES, default="optimal",
                   help="optimal (default: the exact optimum), or a fixed rule recomputing "
                        "right before the backward, its parameter chosen for the limit: "
                        "megatron (microbatch j checkpointed iff j mod max_outstanding >= k), "
                        "deepspeed (every n-th stage), all, none; compared with the optimum")
    p.add_argument("--instance", metavar="FILE", default=None,
                   help="an instance object (JSON, or - for standard input) that replaces the "
                        "document's instance (e.g. profiled per-stage costs, c, memory); same P "
                        "and stages")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run, defer_signals=True)  # a signal stops CP-SAT; its best is printed


def options_flag(text: str) -> tuple[int, ...]:
    """``--options 1,2,3``: a non-empty comma-separated subset of 1, 2, 3."""
    import argparse

    try:
        opts = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        opts = ()
    if not opts or not set(opts) <= {1, 2, 3}:
        raise argparse.ArgumentTypeError(f"--options takes a comma-separated subset of 1,2,3 "
                                         f"(like 1,2,3), got {text[:40]!r}")
    return opts


def remat_report(schedule, K=None, budget_bytes=None, backward=False, objective="makespan",
                 positions="anywhere", time_limit=None, options=None) -> dict:
    """The JSON object of one ``remat`` run."""
    from schedules.io import document_from_schedule
    from schedules.remat import fit_memory
    from schedules.remat_optimal import memory_floor, optimal_remat, remat_options
    from schedules.simulate import simulate

    # the comparison below (fit_memory's polish) gets the time the solve left, and stops on a
    # signal, so the whole run stays within the time limit plus the unpolished fit
    deadline = Deadline.after(time_limit)
    opts = remat_options(backward, options)
    backward = 2 in opts or 3 in opts
    res = optimal_remat(schedule, K=K, budget_bytes=budget_bytes, options=opts,
                        objective=objective, positions=positions, time_limit=time_limit,
                        grace=0.0)  # the limit is the command's promise
    inst = schedule.instance
    fit_ms = fit_reordered = None
    limit = K if K is not None else (inst.K if budget_bytes is None else None)
    if limit is not None and getattr(inst, "memory", None) is None or K is not None:
        try:
            fitted = fit_memory(schedule.with_instance(inst.with_(memory=None)), limit,
                                deadline=deadline)
            fit_ms = simulate(fitted).makespan
            fit_reordered = _base_orders(fitted) != _base_orders(schedule)
        except (RematError, InstanceError):
            fit_ms = None
    floor = floor_backward = None
    if budget_bytes is None and limit is not None:  # the count model: the order's least K
        floor = memory_floor(schedule, backward=backward).K
        if inst.split and not backward:
            floor_backward = memory_floor(schedule, backward=True).K
    theory = None
    try:  # with a byte budget: the bound without memory limit (a limit only lengthens)
        from bounds import lower_bound

        theory = lower_bound(inst.with_(K=limit, memory=None),
                             backward_remat=backward and inst.split).value
    except (ValueError, ArithmeticError, NotImplementedError):
        theory = None
    lb = None if res.status == "infeasible" else res.lower_bound
    return {
        "status": res.status, "objective": res.objective,
        "makespan": number_or_none(res.makespan), "makespan_exact": exact_or_none(res.makespan),
        "span": number_or_none(res.span), "span_exact": exact_or_none(res.span),
        "lower_bound": number_or_none(lb), "lower_bound_exact": exact_or_none(lb),
        "theory_lower_bound": number_or_none(theory), "theory_lower_bound_exact": exact_or_none(theory),
        "fit_memory_makespan": number_or_none(fit_ms), "fit_memory_makespan_exact": exact_or_none(fit_ms),
        "fit_memory_reordered": fit_reordered,
        "recomputed": [str(op) for op in res.recomputed + res.backward_recomputed
                       + res.input_recomputed],
        "forward_recomputed": [str(op) for op in res.recomputed],
        "backward_recomputed": [str(op) for op in res.backward_recomputed],
        "input_recomputed": [str(op) for op in res.input_recomputed],
        "options": list(res.options),
        "least_K": floor, "least_K_backward": floor_backward,
        **quantity("peak", res.peak),
        "positions": res.positions, "backward": res.backward, "dropped": res.dropped,
        "dropped_ops": [str(op) for _, op in schedule.ops() if op.kind in ("R", "RI")],
        "seconds": round(res.seconds, 3), "interrupted": signalled() is not None,
        "schedule": None if res.schedule is None else document_from_schedule(
            res.schedule, source=f"pipebounds remat ({res.status})"),
    }


def policy_report(schedule, policy: str, K=None, budget_bytes=None, time_limit=None) -> dict:
    """``remat --policy`` with a fixed rule: its result and the exact optimum of the same order
    and limit (``optimal_makespan``; ``ratio`` = the rule's makespan over it)."""
    from schedules.io import document_from_schedule
    from schedules.remat_policies import remat_policy

    r = remat_policy(schedule, policy, K=K, budget_bytes=budget_bytes)
    opt = remat_policy(schedule, "optimal", K=K, budget_bytes=budget_bytes,
                       time_limit=time_limit)
    ratio = (r.makespan / opt.makespan if r.feasible and opt.feasible and opt.makespan
             else None)
    return {
        "policy": policy, "status": r.status, "feasible": r.feasible,
        "makespan": number_or_none(r.makespan if r.feasible else None),
        "makespan_exact": exact_or_none(r.makespan if r.feasible else None),
        **quantity("peak", r.peak),
        "parameters": r.parameters,
        "recomputed": [str(op) for op in r.recomputed],
        "optimal_status": opt.status,
        "optimal_makespan": number_or_none(opt.makespan if opt.feasible else None),
        "optimal_makespan_exact": exact_or_none(opt.makespan if opt.feasible else None),
        "ratio": None if ratio is None else float(ratio), "ratio_exact": exact_or_none(ratio),
        "schedule": None if not r.feasible else document_from_schedule(
            r.schedule, source=f"pipebounds remat --policy {policy}"),
    }


def policy_text(inst, r: dict, K, budget) -> list[str]:
    """The text output of ``remat --policy`` with a fixed rule."""
    limit = f"K={K}" if K is not None else (f"budget {budget} bytes" if budget is not None
                                           else f"K={inst.K}")
    head = f"P={inst.P} m={inst.m} v={inst.v} {limit}, this order fixed, policy {r['policy']}: "
    params = ", ".join(f"{k} {v if not isinstance(v, list) else ' '.join(map(str, v))}"
                       for k, v in r["parameters"].items())
    if not r["feasible"]:
        lines = [head + "infeasible (no parameter of the rule fits the limit)"]
    else:
        lines = [head + f"makespan {r['makespan_exact']}" + (f" ({params})" if params else ""),
                 "  peak " + " ".join(r["peak_exact"]) + " (per GPU); "
                 f"recomputes {len(r['recomputed'])}"]
    if r["optimal_makespan_exact"] is not None:
        tail = (f"; the rule is {float(Fraction(r['ratio_exact'])):.4g}x it"
                if r["ratio_exact"] is not None else "")
        lines.append(f"  optimal recomputation of this order: {r['optimal_status']} makespan "
                     f"{r['optimal_makespan_exact']}{tail}")
    else:
        lines.append(f"  optimal recomputation of this order: {r['optimal_status']}")
    return lines


def _base_orders(schedule) -> tuple:
    """Each GPU's order without its ``R`` ops."""
    return tuple(tuple(op for op in seq if op.kind != "R") for seq in schedule.orders)


def remat_text(inst, r: dict, K, budget, objective: str) -> list[str]:
    """The text output of one ``remat`` run (written for people: no None, labels)."""
    limit = f"K={K}" if K is not None else (f"budget {budget} bytes" if budget is not None
                                           else f"K={inst.K}")
    head = f"P={inst.P} m={inst.m} v={inst.v} {limit}, this order fixed: "
    lines = []
    if r["status"] == "infeasible":
        lines.append(head + "infeasible (no choice of recomputes fits it)")
        if r["least_K"] is not None:
            why = (f"  why: this order needs K >= {r['least_K']} even with every activation "
                   "recomputed right before its backward")
            if inst.split and not r["backward"]:
                why += (" (a W op deferred after its I keeps that activation until the W; "
                        "deferred W ops hold more than K)")
            lines.append(why)
        fits = []
        if r["least_K_backward"] is not None and (K or inst.K or 0) >= r["least_K_backward"]:
            fits.append("--backward (frees after I, recomputes before W)")
        if r["least_K"] is not None:
            fits.append(f"-K {r['least_K']} (this order)")
        if r["fit_memory_makespan_exact"] is not None:
            fits.append(f"fit_memory's order (it moves W ops earlier): makespan "
                        f"{r['fit_memory_makespan_exact']} within this limit")
        if fits:
            lines.append("  what fits: " + "; ".join(fits))
    else:
        value = r["span_exact"] if objective == "span" else r["makespan_exact"]
        status = r["status"]
        bound = r["lower_bound_exact"]
        text = head + (f"{status} {objective} {value}" if value is not None else status)
        if objective == "span" and r["makespan_exact"] is not None:
            text += f" (makespan {r['makespan_exact']})"
        if bound is not None and status != "optimal":
            text += f", proven lower bound {bound} on this order"
        lines.append(text + f"  ({r['seconds']:.2f} s)")
        if r["peak"] is not None:
            lines.append("  peak " + " ".join(r["peak_exact"]) + " (per GPU)")
    compare = []
    if r["fit_memory_makespan_exact"] is not None:
        how = (" in its own order (it moved W ops earlier)" if r["fit_memory_reordered"]
               else " in this order")
        compare.append(f"fit_memory reaches {r['fit_memory_makespan_exact']}{how}")
    if r["theory_lower_bound_exact"] is not None:
        compare.append(f"the theory's lower bound (any order) is {r['theory_lower_bound_exact']}")
    if compare and r["status"] != "infeasible":
        lines.append("  compare: " + "; ".join(compare))
    elif r["status"] == "infeasible" and r["theory_lower_bound_exact"] is not None:
        lines.append(f"  the theory's lower bound (any order) is {r['theory_lower_bound_exact']}")
    if r["status"] != "infeasible":
        fwd, bwd = r["forward_recomputed"], r["backward_recomputed"]
        lines.append(f"  forward recomputes ({len(fwd)}): " + (" ".join(fwd) or "none"))
        if r["backward"]:
            lines.append(f"  backward recomputes, between I and W ({len(bwd)}): "
                         + (" ".join(bwd) or "none"))
        if 3 in r.get("options", ()):
            ri = r["input_recomputed"]
            lines.append(f"  input-gradient recomputes before W, option 3 ({len(ri)}): "
                         + (" ".join(ri) or "none"))
    if r["dropped_ops"]:
        lines.append(f"  dropped from the input first ({len(r['dropped_ops'])} recompute ops): "
                     + " ".join(r["dropped_ops"]))
    if r["schedule"] is not None:
        for p, seq in r["schedule"]["orders"].items():
            lines.append(f"  GPU {p}: " + " ".join(seq))
    return lines


def _with_instance_file(schedule, path: str):
    """The document's orders on the instance of ``--instance`` (same GPUs and stage placement,
    else CLIError)."""
    from .common import read_instance_file

    inst = read_instance_file(path)
    if inst.P != schedule.instance.P or inst.stage_to_rank != schedule.instance.stage_to_rank:
        raise CLIError(f"--instance: its P={inst.P} and stage placement must be the document's "
                       f"(P={schedule.instance.P}, stage_to_rank "
                       f"{list(schedule.instance.stage_to_rank)})"[:300])
    return schedule.with_instance(inst)


def run(args) -> int:
    docs, was_list = load_documents(read_text(args.file))
    if was_list and len(docs) != 1:
        raise CLIError(f"{args.file} holds {len(docs)} documents, remat takes one")
    try:
        schedule = schedule_from_document(docs[0])
    except INPUT_ERRORS as exc:
        raise CLIError(str(exc)) from None
    if args.instance is not None:
        schedule = _with_instance_file(schedule, args.instance)
    K = budget = None
    if args.K is not None:
        K = limit_flag(args.K)
        if K is None:
            raise CLIError("remat -K needs a whole number >= 1 (omit -K for the document's K)")
    if args.budget_bytes is not None:
        try:
            budget = to_fraction(args.budget_bytes, "--budget-bytes")
        except InstanceError as exc:
            raise CLIError(str(exc)) from None
    if args.time_limit is not None and args.time_limit <= 0:
        raise CLIError("--time-limit must be > 0")
    # the limit is the user's wait: the process start-up and the output included
    left = Deadline.since_start(args.time_limit).remaining()
    left = None if left is None else max(1e-9, left - END_SECONDS)  # none left: no solver import
    if args.policy != "optimal":
        try:
            r = policy_report(schedule, args.policy, K, budget, left)
        except RematError as exc:
            raise CLIError(str(exc)) from None
        if args.json:
            print_json(r)
        else:
            print("\n".join(policy_text(schedule.instance, r, K, args.budget_bytes)))
        return 0
    try:
        r = remat_report(schedule, K, budget, args.backward, args.objective, args.positions,
                         left, args.options)
    except RematError as exc:
        raise CLIError(str(exc)) from None
    if args.json:
        print_json(r)
        return 0
    print("\n".join(remat_text(schedule.instance, r, K, args.budget_bytes, args.objective)))
    return 0
