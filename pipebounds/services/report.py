"""The main job: lower bounds against the known schedules, across memory limits.

For each *setting* (a base instance: single-wave fused, single-wave split, two waves looped,
two waves V-shape) and each memory limit ``K`` from 1 to the largest peak any schedule reaches
(and unconstrained), the report gives the lower bound ``LB(K)`` (starred when proven exact), the
optimum ``OPT(K)`` wherever it is known on any basis of :mod:`pipebounds.certify` (a theorem, a
checked range, a row of pipebounds/data/optima.jsonl, a schedule reaching the bound: the constructions and
the fitted families below are tried as certificates), and the makespan of every known schedule
family fitted to ``K`` with rematerialization (:func:`schedules.remat.fit_memory`).
Every number is exact; every schedule is validated before it is reported.

:func:`build_report` returns the data; :func:`write_report` writes ``report.json``, a text table
and the figures (bound-vs-memory curves, Gantt charts) into a folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Optional

from schedules.instance import Instance
from schedules.json_numbers import exact_or_none, number_or_none, quantity
from schedules.progress import Progress, progress_for
from schedules.simulate import simulate


def default_settings(P: int = 4, m: int = 8) -> list[tuple[str, Instance]]:
    """The report's default instances: ``P = 4, m = 8``, ``f = 1``, ``b = 2`` (``b_I = b_W = 1``)."""
    return [
        ("single-wave, fused", Instance(P=P, m=m, f=1, b=2)),
        ("single-wave, split", Instance(P=P, m=m, f=1, b_I=1, b_W=1)),
        ("two waves, looped, fused", Instance(P=P, m=m, v=2, placement="looped", f=1, b=2)),
        ("two waves, V-shape, split", Instance(P=P, m=m, v=2, placement="vshape", f=1, b_I=1,
                                               b_W=1)),
    ]


@dataclass(frozen=True)
class Row:
    """One memory limit of one setting: bound, optimum (if known) and each schedule's makespan."""

    K: Optional[int]
    lower_bound: Fraction
    exact: bool
    optimum: Optional[Fraction]
    makespans: dict = field(default_factory=dict)  # family -> Fraction (None: not valid at K)
    basis: Optional[str] = None  # the evidence for optimum (pipebounds.certify.BASES)
    detail: str = ""  # the theorem id, checked range, or the certificate schedule's source


@dataclass(frozen=True)
class SettingReport:
    name: str
    instance: Instance
    families: tuple[str, ...]
    natural_peak: dict          # family -> peak memory of the unfitted schedule
    rows: tuple[Row, ...]


def _families_for(inst: Instance) -> dict:
    """``{name: schedule}`` of every generator that accepts ``inst`` (K ignored)."""
    from schedules.generators import GENERATORS, generate

    out = {}
    for name in GENERATORS:
        try:
            sched = generate(name, inst.with_(K=None))
        except ValueError:
            continue
        out[name] = sched
    return out


def setting_report(name: str, inst: Instance) -> SettingReport:
    """Bounds, optima and fitted schedules of one setting for every ``K``."""
    from pipebounds.constructions import optimal_schedule
    from schedules.remat import fit_memory

    from pipebounds.certify import certify

    base = _families_for(inst)
    peaks = {}
    for fam, sched in base.items():
        res = simulate(sched)
        if not res.valid:
            raise AssertionError(f"generator {fam} produced an invalid schedule: {res.errors[:2]}")
        peaks[fam] = max(res.peak_memory)
    k_max = max(list(peaks.values()) + [1])
    rows = []
    for K in list(range(1, k_max + 1)) + [None]:
        kinst = inst.with_(K=K)
        candidates = []
        opt_sched = optimal_schedule(kinst)
        if opt_sched is not None:
            res = simulate(opt_sched)
            if not res.valid:
                raise AssertionError(f"optimal construction invalid at K={K}: {res.errors[:2]}")
            candidates.append((opt_sched, res))
        spans = {}
        for fam, sched in base.items():
            fitted = fit_memory(sched.with_instance(kinst), K) if K is not None else sched
            res = simulate(fitted)
            spans[fam] = res.makespan if res.valid else None
            if res.valid:
                candidates.append((fitted, res))
        cert = certify(kinst, schedules=candidates)
        rows.append(Row(K, cert.value, cert.exact, cert.optimum, spans, cert.basis,
                        cert.detail))
    return SettingReport(name, inst, tuple(base), peaks, tuple(rows))


def build_report(settings: Optional[list[tuple[str, Instance]]] = None,
                 progress: Progress = None) -> list[SettingReport]:
    """The report for ``settings`` (default: :func:`default_settings`); ``progress`` as in
    :mod:`schedules.progress` (one step per setting)."""
    settings = settings or default_settings()
    bar = progress_for(progress, len(settings), "report")
    out = []
    try:
        for name, inst in settings:
            bar.set_postfix_str(name)
            out.append(setting_report(name, inst))
            bar.update()
    finally:
        bar.close()
    return out


def _fmt(x: Optional[Fraction]) -> str:
    if x is None:
        return "-"
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def format_text(reports: list[SettingReport]) -> str:
    """The report as plain-text tables (one per setting; ``*`` marks a bound proven exact)."""
    lines = []
    for rep in reports:
        inst = rep.instance
        dur = f"f={_fmt(inst.f)} " + (f"b_I={_fmt(inst.b_I)} b_W={_fmt(inst.b_W)}" if inst.split
                                      else f"b={_fmt(inst.b)}")
        lines.append(f"== {rep.name}: P={inst.P} m={inst.m} v={inst.v} {inst.placement} {dur}")
        peaks = "  ".join(f"{fam} {rep.natural_peak[fam]}" for fam in rep.families)
        lines.append(f"   natural peak memory: {peaks}")
        head = ["K", "LB", "OPT", "basis"] + list(rep.families)
        table = [[("inf" if r.K is None else str(r.K)), _fmt(r.lower_bound) + ("*" if r.exact else ""),
                  _fmt(r.optimum), r.basis or "-"] + [_fmt(r.makespans[f]) for f in rep.families]
                 for r in rep.rows]
        widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(head)]
        lines.append("   " + "  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for row in table:
            lines.append("   " + "  ".join(c.rjust(w) for c, w in zip(row, widths)))
        certs = [f"K={'inf' if r.K is None else r.K}: {r.detail}" for r in rep.rows
                 if r.basis == "certificate" and r.detail]
        if certs:
            lines.append("   certificates (a schedule reaching the bound): " + "; ".join(certs))
        lines.append("")
    lines.append("LB: lower bound (* proven equal to the optimum); OPT: the optimum where it is "
                 "known; basis: why (theorem, checked range, pipebounds/data/optima.jsonl table, certificate "
                 "schedule reaching the bound, solver; pipebounds.certify); schedule columns: "
                 "makespan of the family rematerialized to fit K (fit_memory). Makespans are "
                 "global (first op to last op).")
    return "\n".join(lines)


def to_json(reports: list[SettingReport]) -> list[dict]:
    out = []
    for rep in reports:
        out.append({
            "setting": rep.name, "instance": rep.instance.to_dict(),
            "families": list(rep.families),
            "natural_peak_memory": rep.natural_peak,
            "rows": [{"K": r.K, **quantity("lower_bound", r.lower_bound), "exact": r.exact,
                      "exact_basis": r.basis if r.exact else None, "optimum_basis": r.basis,
                      "basis_detail": r.detail or None,
                      **quantity("optimum", r.optimum),
                      "makespans": {f: number_or_none(v) for f, v in r.makespans.items()},
                      "makespans_exact": {f: exact_or_none(v) for f, v in r.makespans.items()}}
                     for r in rep.rows]})
    return out


def plot_bounds_vs_memory(rep: SettingReport, path: Path) -> None:
    """Lower bound, optimum and each family's makespan as functions of ``K``."""
    from matplotlib.figure import Figure  # no pyplot: the global backend is never touched

    finite = [r for r in rep.rows if r.K is not None]
    ks = [r.K for r in finite]
    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    ax.plot(ks, [float(r.lower_bound) for r in finite], "k-", lw=2.5, label="lower bound", zorder=5)
    opt = [(r.K, float(r.optimum)) for r in finite if r.optimum is not None]
    if opt:
        ax.plot(*zip(*opt), "k*", ms=12, label="optimum (known)", zorder=6)
    markers = "os^vD<>phx+"
    for i, fam in enumerate(rep.families):
        pts = [(r.K, float(r.makespans[fam])) for r in finite if r.makespans[fam] is not None]
        if pts:
            ax.plot(*zip(*pts), marker=markers[i % len(markers)], ls="--", lw=1, label=fam)
    ax.set_xlabel("memory limit K (stage activations per GPU)")
    ax.set_ylabel("makespan")
    inst = rep.instance
    ax.set_title(f"{rep.name}: P={inst.P}, m={inst.m}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_report(reports: list[SettingReport], out_dir: str | Path, figures: bool = True) -> list[Path]:
    """Write ``report.json``, ``report.txt`` and (if ``figures``) PNG figures; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.json", out / "report.txt"]
    written[0].write_text(json.dumps(to_json(reports), indent=1) + "\n")
    written[1].write_text(format_text(reports) + "\n")
    if figures:
        from pipebounds.viz.gantt import save_gantt
        from schedules.generators import generate

        for k, rep in enumerate(reports):
            path = out / f"bounds_vs_memory_{k}.png"
            plot_bounds_vs_memory(rep, path)
            written.append(path)
        first = reports[0]
        if "1f1b" in first.families:
            path = out / "gantt_1f1b.png"
            save_gantt(generate("1f1b", first.instance), path)
            written.append(path)
        from pipebounds.constructions import optimal_schedule

        k1 = optimal_schedule(first.instance.with_(K=1))
        if k1 is not None:
            path = out / "gantt_optimal_K1.png"
            save_gantt(k1, path)
            written.append(path)
    return written
