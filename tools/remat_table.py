"""How much the fixed order costs: the best family with optimal rematerialization against the
order-free optimum (docs/remat.md).

For every instance of the grid (``v = 1``, ``P`` in {2, 3, 4}, ``m`` in {4, 8}, ``K`` in
{1, 2, 3} below ``m``; fused ``f : b`` in {1:1, 1:2, 1:3}; split ``f : b_I : b_W`` = 1:1:1
(``P <= 3``, ``m`` in {4, 6}) and the profiled 11.57 : 13.30 : 10.23 as exact rationals):

* every family of :data:`schedules.generators.GENERATORS` that applies, in its natural order,
  optimally rematerialized to ``K`` by :func:`schedules.remat_optimal.optimal_remat` (forward
  recomputes, the model of the optimum; split instances also with backward recomputes, a
  column apart since the optimum does not model them), and fitted by the greedy
  :func:`schedules.remat.fit_memory`;
* the order-free optimum: the proven row of pipebounds/data/optima.jsonl when there is one, else
  :func:`pipebounds.search.solve` (engine ``auto``, ``--solve-limit`` seconds; the row then shows
  the proven interval when not closed).

Then the paper's qualitative result on one instance (``P = 4, m = 8``, profiled ratios, every
``K`` from 1 to 8, backward recomputes allowed): the best family per budget.

Writes the tables between the ``<!-- remat_table -->`` markers of docs/remat.md (``--write``)
and the figures docs/img/remat_gap.png and docs/img/remat_budget.png.

    python tools/remat_table.py --write          # a few minutes on one core
    python tools/remat_table.py --quick          # P <= 3, no profiled solves
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from fractions import Fraction as Fr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from pipebounds.services.best import best, family_schedules  # noqa: E402
from schedules import Instance, simulate  # noqa: E402
from schedules.remat import fit_memory  # noqa: E402

PROFILED = (Fr(1157, 100), Fr(1330, 100), Fr(1023, 100))
MARK_A, MARK_B = "<!-- remat_table -->", "<!-- /remat_table -->"


def grid(quick: bool):
    Ps = (2, 3) if quick else (2, 3, 4)
    for f, b in ((1, 1), (1, 2), (1, 3)):
        for P in Ps:
            for m in (4, 8):
                for K in (1, 2, 3):
                    if K < m:
                        yield Instance(P=P, m=m, K=K, f=f, b=b)
    for P in (2, 3):
        for m in (4, 6):
            for K in (1, 2, 3):
                yield Instance(P=P, m=m, K=K, f=1, b_I=1, b_W=1)
    if not quick:
        for P in Ps:
            for m in (4, 8):
                for K in (1, 2):
                    yield Instance(P=P, m=m, K=K, f=PROFILED[0], b_I=PROFILED[1],
                                   b_W=PROFILED[2])


def known_optima() -> dict:
    out = {}
    path = os.path.join(ROOT, "data", "optima.jsonl")
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("status") == "optimal":
                key = json.dumps(Instance.from_dict(row).to_dict(), sort_keys=True)
                out[key] = Fr(row["opt"])
    return out


def ratio(inst: Instance) -> str:
    if inst.split:
        if (inst.f, inst.b_I, inst.b_W) == PROFILED:
            return "11.57:13.30:10.23"
        return f"{inst.f}:{inst.b_I}:{inst.b_W}"
    return f"{inst.f}:{inst.b}"


def fmt(x) -> str:
    if x is None:
        return "–"
    x = Fr(x)
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.2f}"


def table(quick: bool, solve_limit: float, remat_limit: float):
    from pipebounds.search import solve

    optima = known_optima()
    rows, times = [], []
    for inst in grid(quick):
        fams, _ = family_schedules(inst)
        res = best(inst, K=inst.K, time_limit=remat_limit, solve_time_limit=None, families=fams)
        times += [x.seconds for e in res.ranking for x in {id(e.result): e.result,
                                                             id(e.natural_result): e.natural_result}.values()]
        bw = None
        if inst.split:
            rb = best(inst, K=inst.K, backward=True, time_limit=remat_limit,
                      solve_time_limit=None, families=fams)
            times += [e.result.seconds for e in rb.ranking]
            bw = rb.best
        fit = {}
        for name, sched in fams.items():
            try:
                fit[name] = simulate(fit_memory(sched, inst.K)).makespan
            except ValueError:
                pass
        fit_best = min(fit.items(), key=lambda kv: (kv[1], kv[0]))
        key = json.dumps(inst.to_dict(), sort_keys=True)
        opt, lo, src = optima.get(key), None, "table"
        if opt is None:
            sol = solve(inst, time_limit=solve_limit, engine="auto")
            src = f"solve {sol.seconds:.1f}s"
            if sol.status == "optimal":
                opt = sol.makespan
            else:
                lo = (sol.lower_bound, sol.makespan)
        top = res.best
        nat = min(((e.natural_result.makespan, e.family) for e in res.ranking
                   if e.natural_result.makespan is not None), default=(None, None))
        rows.append(dict(inst=inst, top=top, nat=nat, fit=fit_best, opt=opt, interval=lo,
                         src=src, bw=bw, lb=res.lower_bound))
        print(f"P={inst.P} m={inst.m} K={inst.K} {ratio(inst)}: natural {nat[1]} {fmt(nat[0])}"
              f"  best {top.family} ({top.order}) {fmt(top.makespan)}  fit {fit_best[0]} "
              f"{fmt(fit_best[1])}  opt {fmt(opt)} "
              f"{'' if lo is None else f'[{fmt(lo[0])}, {fmt(lo[1])}]'}"
              + ("" if bw is None else f"  +bwd {bw.family} {fmt(bw.makespan)}"), flush=True)
    return rows, times


def budget_curve(remat_limit: float):
    inst = Instance(P=4, m=8, f=PROFILED[0], b_I=PROFILED[1], b_W=PROFILED[2])
    fams, _ = family_schedules(inst)
    curve = []
    for K in range(1, 9):
        res = best(inst, K=K, backward=True, time_limit=remat_limit, solve_time_limit=None,
                   families=fams)
        nat = min(((e.natural_result.makespan, e.family) for e in res.ranking
                   if e.natural_result.makespan is not None))
        curve.append((K, {e.family: e.makespan for e in res.ranking}, res.best.family,
                      res.lower_bound, {e.family: e.natural_result.makespan
                                        for e in res.ranking}, nat[1]))
        print(f"K={K}: best {res.best.family} {fmt(res.best.makespan)}, natural orders: "
              f"{nat[1]} {fmt(nat[0])}", flush=True)
    return inst, curve


def markdown(rows, times, curve) -> str:
    out = ["| P | m | K | f : b (f : b_I : b_W) | natural order, optimal remat | `best` "
           "(natural or fit_memory's order) | fit_memory | OPT (order free) | natural / OPT "
           "| best / OPT | fit / OPT | split: with backward remat |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    gaps, bgaps, fgaps = [], [], []
    for r in rows:
        inst, top, opt, nat = r["inst"], r["top"], r["opt"], r["nat"]
        star = "" if top.order == "natural" else "*"
        if opt is not None:
            g, bg, fg = nat[0] / opt, top.makespan / opt, r["fit"][1] / opt
            gaps.append(g)
            bgaps.append(bg)
            fgaps.append(fg)
            ref = fmt(opt)
            gs, bgs, fgs = f"{float(g):.3f}", f"{float(bg):.3f}", f"{float(fg):.3f}"
        else:
            lo, hi = r["interval"]
            ref = f"[{fmt(lo)}, {fmt(hi)}]"
            gs, bgs, fgs = (f"≤ {float(x / lo):.3f}" for x in (nat[0], top.makespan,
                                                               r["fit"][1]))
        bw = "" if r["bw"] is None else (f"{r['bw'].family}{'' if r['bw'].order == 'natural' else '*'}"
                                         f" {fmt(r['bw'].makespan)}")
        out.append(f"| {inst.P} | {inst.m} | {inst.K} | {ratio(inst)} | {nat[1]} {fmt(nat[0])} | "
                   f"{top.family}{star} {fmt(top.makespan)} | {r['fit'][0]} {fmt(r['fit'][1])} "
                   f"| {ref} | {gs} | {bgs} | {fgs} | {bw} |")
    n = len(gaps)
    better = sum(1 for r in rows if r["top"].makespan < r["fit"][1])
    above = sum(1 for r in rows if r["top"].makespan > r["fit"][1])
    nat_worse = sum(1 for r in rows if r["nat"][0] > r["fit"][1])
    bw_better = sum(1 for r in rows if r["bw"] is not None and r["bw"].makespan < r["top"].makespan)
    n_split = sum(1 for r in rows if r["bw"] is not None)

    def stat(xs):
        return f"mean {float(sum(xs) / len(xs)):.3f}, worst {float(max(xs)):.3f}, " \
               f"= OPT on {sum(1 for x in xs if x == 1)}"

    summary = [
        "",
        "`*`: the family's order after fit_memory moved some `W` ops earlier (the natural order "
        "cannot fit, or fits worse).",
        "",
        f"{len(rows)} instances; the order-free optimum is proven on {n}. Ratio to OPT over "
        f"those: natural order with optimal remat {stat(gaps)}; `best` {stat(bgaps)}; "
        f"fit_memory {stat(fgaps)}. `best` is below fit_memory on {better} of {len(rows)} "
        f"instances and above it on {above}; the natural order alone is above fit_memory on "
        f"{nat_worse} (split instances where fit_memory moves `W` ops). Backward remat improves "
        f"`best` on {bw_better} of {n_split} split instances. optimal_remat solve times: "
        f"{len(times)} runs, mean {sum(times) / len(times):.2f} s, max {max(times):.2f} s "
        f"(one core, CP-SAT one worker).",
        "",
        "Best family per budget, P = 4, m = 8, f : b_I : b_W = 11.57 : 13.30 : 10.23, forward "
        "and backward recomputes. Each cell: the family's natural order with optimal remat "
        "(the paper's setting) / `best` (natural or fit_memory's order); – = no recompute "
        "choice fits:",
        "",
    ]
    fams = sorted({f for c in curve for f in c[1]})
    summary.append("| K | " + " | ".join(fams) + " | best, natural orders | best | lower bound |")
    summary.append("|---" * (len(fams) + 4) + "|")
    for K, ms, top, lb, nat, nat_top in curve:
        summary.append(f"| {K} | " + " | ".join(f"{fmt(nat.get(f))} / {fmt(ms.get(f))}"
                                                 for f in fams)
                       + f" | **{nat_top}** | **{top}** | {fmt(lb)} |")
    return "\n".join(out + summary)


def figures(rows, curve, img_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    proven = [r for r in rows if r["opt"] is not None]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    xs = range(len(proven))
    ax.bar([x - 0.27 for x in xs], [float(r["fit"][1] / r["opt"]) for r in proven], 0.27,
           label="best family, fit_memory (greedy)", color="#bbbbbb")
    ax.bar(list(xs), [float(r["nat"][0] / r["opt"]) for r in proven], 0.27,
           label="best family, natural order, optimal remat", color="#9ecae1")
    ax.bar([x + 0.27 for x in xs], [float(r["top"].makespan / r["opt"]) for r in proven], 0.27,
           label="best (natural or fit_memory order), optimal remat", color="#3b6ea5")
    ax.axhline(1, color="black", lw=0.8)
    ax.set_ylim(0.95, max(1.3, max(float(max(r["fit"][1], r["nat"][0]) / r["opt"])
                                   for r in proven) + 0.02))
    ax.set_ylabel("makespan / OPT")
    ax.set_xticks(list(xs))
    short = {"11.57:13.30:10.23": "prof"}
    ax.set_xticklabels([f"{r['inst'].P},{r['inst'].m},{r['inst'].K} "
                        f"{short.get(ratio(r['inst']), ratio(r['inst']))}"
                        for r in proven], fontsize=5, rotation=90)
    ax.set_xlabel("P, m, K and f:b (f:b_I:b_W; prof = 11.57:13.30:10.23)")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title("How much the fixed order costs: best family vs the order-free optimum")
    fig.tight_layout()
    fig.savefig(os.path.join(img_dir, "remat_gap.png"), dpi=150)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.6))
    fams = sorted({f for c in curve for f in c[1]})
    for f in fams:  # the paper's setting: each family's natural order
        pts = [(c[0], float(c[4][f])) for c in curve if c[4].get(f) is not None]
        same = [g for g in fams if g < f and all(c[4].get(g) == c[4].get(f) for c in curve)]
        if same:  # identical curve (gpipe and looped-bfs at v = 1): one line, both names
            continue
        twins = [g for g in fams if g > f and all(c[4].get(g) == c[4].get(f) for c in curve)]
        ax.plot([k for k, _ in pts], [y for _, y in pts], marker="o",
                label=" = ".join([f] + twins))
    ax.plot([c[0] for c in curve], [float(c[3]) for c in curve], "k--", lw=0.8,
            label="lower bound")
    ax.set_xlabel("K (activations per GPU)")
    ax.set_ylabel("makespan (natural order, optimal remat)")
    ax.set_title("P=4, m=8, 11.57:13.30:10.23: the best family changes with K", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(img_dir, "remat_budget.png"), dpi=150)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="P <= 3, no profiled instances")
    ap.add_argument("--solve-limit", type=float, default=10.0,
                    help="seconds per order-free solve not in pipebounds/data/optima.jsonl")
    ap.add_argument("--remat-limit", type=float, default=20.0,
                    help="CP-SAT seconds per optimal_remat")
    ap.add_argument("--write", action="store_true", help="update docs/remat.md and docs/img/")
    args = ap.parse_args()
    t0 = time.monotonic()
    rows, times = table(args.quick, args.solve_limit, args.remat_limit)
    _, curve = budget_curve(args.remat_limit)
    text = markdown(rows, times, curve)
    print(text)
    print(f"total {time.monotonic() - t0:.0f} s")
    if args.write:
        path = os.path.join(ROOT, "docs", "remat.md")
        with open(path, encoding="utf-8") as fh:
            doc = fh.read()
        a, b = doc.index(MARK_A) + len(MARK_A), doc.index(MARK_B)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(doc[:a] + "\n" + text + "\n" + doc[b:])
        figures(rows, curve, os.path.join(ROOT, "docs", "img"))


if __name__ == "__main__":
    main()
