"""``pipebounds execute FILE --world-size N [--model mlp|transformer] [--check] [--json]``: run an
orders document in torch on N local gloo processes (docs/interop.md, *Running a schedule*).

A thin layer over :func:`pipebounds.torch.launch.execute`: one warm-up step, one measured step
of a built-in small model (float64 unless ``--dtype float32``), per rank the measured peak
activations and bytes against the simulator's, the step time against the simulated makespan
with profiled durations, and with ``--check`` the gradient error against a sequential
reference. Exit 0 done (with ``--check``: every rank's gradients within 1e-9 of the reference
and its measured peak equal to the simulator's), 1 a check failed, 2 bad input (also: torch
not installed, the document invalid, its ``P`` not N).
"""

from __future__ import annotations

from .common import add_document_arg

TOLERANCE = 1e-9


def add_model_flags(p) -> None:
    """The built-in model flags shared with ``profile``."""
    p.add_argument("--model", default="mlp", choices=("mlp", "transformer"),
                   help="built-in model (default mlp)")
    p.add_argument("--width", type=int, default=None,
                   help="hidden width d (default 8 for mlp, 16 for transformer)")
    p.add_argument("--seq", type=int, default=8, help="transformer sequence length (default 8)")
    p.add_argument("--heads", type=int, default=2, help="transformer heads (default 2)")
    p.add_argument("--microbatch-size", type=int, default=4,
                   help="samples per microbatch (default 4)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--seed", type=int, default=0, help="parameters and data seed (default 0)")


def model_spec(args):
    from .common import CLIError

    try:
        from pipebounds.torch.models import ModelSpec
    except ImportError as exc:
        raise CLIError(f"{args.command} needs torch ({exc}); install it with "
                       f"pip install torch==2.13.0") from None
    width = args.width if args.width is not None else (8 if args.model == "mlp" else 16)
    try:
        return ModelSpec(name=args.model, width=width, seq=args.seq, heads=args.heads,
                         microbatch_size=args.microbatch_size, dtype=args.dtype, seed=args.seed)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def register(sub) -> None:
    p = sub.add_parser("execute", help="run an orders document in torch on local gloo processes",
                       description="Run one orders document (JSON file, or - for standard input; "
                                   "an object wrapping it under 'schedule' too) for one training "
                                   "step of a built-in model on N local gloo processes.")
    add_document_arg(p)
    p.add_argument("--world-size", type=int, required=True, help="processes (= the document's P)")
    add_model_flags(p)
    p.add_argument("--check", action="store_true",
                   help="compare gradients with a sequential reference (exit 1 if off)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    from schedules.io import document_from_schedule
    from schedules.simulate import simulate
    from .common import CLIError, exact_or_none, number_or_none, print_json, read_one_schedule

    schedule = read_one_schedule(args.file, "execute runs")
    if args.world_size < 1:
        raise CLIError(f"--world-size must be >= 1, got {args.world_size}")
    if schedule.instance.P != args.world_size:
        raise CLIError(f"the document has P={schedule.instance.P} GPUs but --world-size is "
                       f"{args.world_size}")
    res = simulate(schedule)
    if not res.valid:
        raise CLIError(f"the document is not a valid schedule: {res.errors[0]}")
    spec = model_spec(args)  # after the document's checks: bad input is bad with or without torch
    from pipebounds.torch.launch import execute

    report = execute(document_from_schedule(schedule), args.world_size, spec, check=args.check)
    failed = [r for r in report["ranks"] if "error" in r]
    ok = not failed and (not args.check or all(
        r["grad_error"] <= TOLERANCE and r["peak_activations"] == r["simulated_peak"]
        for r in report["ranks"]))
    if args.json:
        out = {k: report[k] for k in ("losses", "measured_seconds", "predicted_seconds",
                                      "model", "profile")}
        out["makespan"] = number_or_none(report["makespan"])  # model units of the document
        out["makespan_exact"] = exact_or_none(report["makespan"])
        out["loss_error"] = report.get("loss_error")
        out["ranks"] = [{k: r.get(k) for k in ("rank", "error", "grad_error", "peak_activations",
                                               "simulated_peak", "peak_bytes",
                                               "predicted_peak_bytes", "peak_checkpoint_bytes",
                                               "step_seconds", "ops", "op_seconds",
                                               "wait_seconds") if k in r}
                        for r in report["ranks"]]
        out["ok"] = ok
        print_json(out)
    else:
        print(f"model {spec.name} d={spec.width} B={spec.microbatch_size} {spec.dtype}, "
              f"P={schedule.instance.P} m={schedule.instance.m} S={schedule.instance.S}")
        for r in report["ranks"]:
            if "error" in r:
                print(f"  rank {r['rank']}: error: {r['error']}")
                continue
            grad = f"grad error {r['grad_error']:.2e}  " if args.check else ""
            print(f"  rank {r['rank']}: {grad}peak activations {r['peak_activations']} "
                  f"(simulated {r['simulated_peak']})  peak bytes {r['peak_bytes']} "
                  f"(predicted {r['predicted_peak_bytes']})  step {r['step_seconds'] * 1e3:.2f} ms")
        pred = report.get("predicted_seconds")
        pred_text = f"{pred * 1e3:.2f} ms" if pred is not None else "none (invalid timing)"
        print(f"  step time {report['measured_seconds'] * 1e3:.2f} ms, simulated makespan with "
              f"the profiled durations {pred_text}")
        if args.check:
            print("  check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1
