"""``pipebounds profile [--model mlp|transformer] [--stages S] [-P N] [-m M] [--microbatch-size B]
[--json] [-o FILE]``: measure a built-in model cut into S stages on this device and write the
instance object that ``--instance FILE`` reads (CLI.md third round, docs/interop.md).

A thin layer over :func:`pipebounds.torch.profile.profile_stages` and
:func:`~pipebounds.torch.profile.instance_object`: per-stage ``f``, ``b_input``, ``b_weight``
(whole microseconds; ``--fused`` writes ``b``) and ``memory`` (bytes: ``activation``,
``kept_after_input``, ``static`` per GPU, ``budget`` from ``--budget-bytes`` or null).
"""

from __future__ import annotations


def register(sub) -> None:
    from .execute import add_model_flags

    p = sub.add_parser("profile", help="measure a model's stages and write an instance object",
                       description="Measure per-stage F, I, W times and activation bytes of a "
                                   "built-in model cut into stages on this device; write the "
                                   "instance object that --instance FILE reads.")
    add_model_flags(p)
    p.add_argument("--stages", type=int, default=None, help="stages S (default P*v)")
    p.add_argument("-P", type=int, default=None, help="GPUs (default S, or 2)")
    p.add_argument("-m", type=int, default=8, help="microbatches of the instance (default 8)")
    p.add_argument("-v", type=int, default=None, help="stages per GPU (default S/P)")
    p.add_argument("--placement", default="looped", choices=("looped", "vshape"))
    p.add_argument("--fused", action="store_true", help="write b = b_input + b_weight")
    p.add_argument("--budget-bytes", default=None, help="memory.budget (default null)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per stage (default 5)")
    p.add_argument("-o", "--output", default=None, help="also write the instance object here")
    p.add_argument("--json", action="store_true", help="print the instance object")
    p.set_defaults(func=run)


def run(args) -> int:
    import json

    from schedules.instance import InstanceError, to_fraction
    from .common import CLIError, print_json
    from .execute import model_spec

    spec = model_spec(args)
    P, S, v = args.P, args.stages, args.v
    if S is None:
        P = P or 2
        S = P * (v or 1)
    P = P or (S // v if v else S)
    v = v or (S // P if P else 0)
    for name, value in (("--stages", S), ("-P", P), ("-v", v), ("-m", args.m),
                        ("--repeat", args.repeat)):
        if value < 1:
            raise CLIError(f"{name} must be >= 1, got {value}")
    if S != P * v:
        raise CLIError(f"--stages {S} is not P*v = {P}*{v}")
    budget = None
    if args.budget_bytes is not None:
        try:
            budget = to_fraction(args.budget_bytes, "--budget-bytes")
        except InstanceError as exc:
            raise CLIError(str(exc)) from None
        budget = int(budget) if budget.denominator == 1 else str(budget)
    from pipebounds.torch.launch import profile_spec
    from pipebounds.torch.profile import instance_object

    profile = profile_spec(spec, S, args.repeat)
    model = {"name": spec.name, "width": spec.width, "microbatch_size": spec.microbatch_size,
             "dtype": spec.dtype, "units": "f, b_input, b_weight in microseconds; memory in bytes"}
    if spec.name == "transformer":
        model.update(seq=spec.seq, heads=spec.heads)
    obj = instance_object(profile, P, args.m, v, args.placement, split=not args.fused,
                          budget=budget, model=model)
    if args.output:
        from .output import atomic_output, check_output_path

        check_output_path(args.output)
        try:
            with atomic_output(args.output) as tmp:
                with open(tmp, "w", encoding="utf-8") as fh:
                    json.dump(obj, fh)
                    fh.write("\n")
        except OSError as exc:
            raise CLIError(f"cannot write {args.output}: {exc.strerror}") from None
    if args.json:
        print_json(obj)
    else:
        print(f"model {spec.name} d={spec.width} B={spec.microbatch_size} {spec.dtype}: "
              f"S={S} stages on P={P} GPUs (v={v}), m={args.m}")
        for s in range(S):
            print(f"  stage {s}: F {obj['f'][s]} us  I {profile['b_input'][s] * 1e6:.0f} us  "
                  f"W {profile['b_weight'][s] * 1e6:.0f} us  activation "
                  f"{obj['memory']['activation'][s]} B (kept after I "
                  f"{obj['memory']['kept_after_input'][s]} B)")
    return 0
