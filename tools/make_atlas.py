"""Write docs/atlas.md and its figures from the atlas store (data/atlas/atlas.sqlite).

    python -m pipebounds sweep data/atlas/grid.json --task generate \\
        --store data/atlas/atlas.sqlite --resume          # the rows (hours on 2 cores)
    python -m pipebounds sweep data/atlas/optima_grid.json --task solve \\
        --store data/atlas/optima.sqlite --resume         # proven optima of the small ones
    python tools/atlas_frontier_grid.py --time-limit 2      # the frontier pairs as a grid
    python -m pipebounds sweep data/atlas/frontier_grid.json --task synthesize \
        --store data/atlas/synthesis.sqlite --executor inprocess --resume
    python tools/atlas_frontier_grid.py --optima --max-P 4  # the open pairs left, P <= 4
    python -m pipebounds sweep data/atlas/frontier_optima_grid.json --task solve \
        --store data/atlas/optima.sqlite --resume         # their optima, where proven
    python tools/atlas_frontier_grid.py --optima --min-P 8 --max-P 8 --sample 36 --seed 43 \
        --time-limit 120 --synthesize 10 --out data/atlas/frontier_optima_grid_p8.json
    python -m pipebounds sweep data/atlas/frontier_optima_grid_p8.json --task solve \
        --store data/atlas/optima.sqlite --resume         # a sample of P = 8
    python tools/make_atlas.py                              # this page

Loading the store checks every row (makespan >= its lower bound, exactly). For each instance and
memory ``K`` the best family is the one with the least makespan among those that fit in ``K``
(a family whose natural peak is below ``K`` runs unchanged); an instance-``K`` pair where even
the best is more than 2 % above the lower bound is listed as the research frontier: there,
either the bound is weak or a better schedule exists that nobody has published.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipebounds.sweep import flat_rows  # noqa: E402

STORE = Path(__import__("os").environ.get("ATLAS_STORE", ROOT / "data" / "atlas" / "atlas.sqlite"))
OPTIMA = ROOT / "data" / "atlas" / "optima.sqlite"
OUT = ROOT / "docs" / "atlas.md"
IMG = ROOT / "docs" / "img"
THRESHOLD = Fraction(102, 100)
SHOWN = 60


def _inst_key(r: dict) -> tuple:
    return (r["P"], r["m"], r.get("v", 1), r.get("placement") or "-", str(r.get("f")),
            str(r.get("b")), str(r.get("b_input")), str(r.get("b_weight")))


def _durations(k: tuple) -> str:
    f, b, bi, bw = k[4:]
    return f"f={f} b={b}" if bi in ("None", "nan") else f"f={f} b_I={bi} b_W={bw}"


INSTANCE_KEYS = ("P", "m", "v", "placement", "f", "b", "b_input", "b_weight", "c")


def instance_object(r: dict) -> dict:
    """The instance fields of a stored row (its ``K`` left out), as ``Instance.from_dict``
    takes them."""
    return {k: (str(r[k]) if isinstance(r[k], Fraction) else r[k]) for k in INSTANCE_KEYS
            if r.get(k) is not None and r.get(k) == r.get(k)}  # NaN: a key the item lacks


def bound_structure(obj: dict, K: int, cache: Optional[dict] = None) -> tuple[tuple[str, ...], bool]:
    """Which terms set the bound of the instance ``obj`` at memory ``K``: the theorem ids of
    the binding terms (:data:`bounds.evaluate.TERM_IDS`, sorted), and whether the memory limit
    raises the bound at all (the bound at ``K`` above the bound of the same instance with no
    limit). ``cache``: a dict reused across calls for the bounds without a limit.

    >>> bound_structure({"P": 32, "m": 128, "f": 1, "b": 1}, 16)
    (('T1', 'T2'), False)
    >>> bound_structure({"P": 32, "m": 128, "f": 1, "b": 1}, 8)
    (('T2',), True)
    """
    from bounds import lower_bound
    from bounds.evaluate import TERM_IDS
    from schedules.instance import Instance

    cache = {} if cache is None else cache
    key = tuple(sorted(obj.items()))
    if key not in cache:
        cache[key] = lower_bound(Instance.from_dict(obj)).value
    lb = lower_bound(Instance.from_dict({**obj, "K": K}))
    return tuple(sorted({TERM_IDS[name] for name in lb.binding})), lb.value > cache[key]


def current_bounds(rows: list[dict]) -> int:
    """Recompute, in place, the lower bound and gap of every row computed under another theory
    version than the current one (:func:`pipebounds.sweep.store.theory_version`): a row's
    bound is then the current theory's, never a stale one mixed in. Returns how many rows were
    recomputed. The family makespans are the rows' own (the code versions are reported)."""
    from bounds import lower_bound
    from pipebounds.sweep.store import theory_version
    from schedules.instance import Instance

    now = theory_version()
    cache: dict = {}
    changed = 0
    for r in rows:
        if r["theory_version"] == now:
            continue
        obj = instance_object(r)
        key = (tuple(sorted(obj.items())), r["K"])
        if key not in cache:
            cache[key] = lower_bound(Instance.from_dict({**obj, "K": r["K"]})).value
        lb = cache[key]
        if lb > r["makespan_exact"]:
            raise ValueError(f"row {r['key']}: the current bound {lb} is above its makespan "
                             f"{r['makespan_exact']} ({obj}, K={r['K']})")
        r["lower_bound_exact"], r["gap_exact"] = lb, r["makespan_exact"] / lb
        r["theory_version"] = now
        changed += 1
    return changed


def best_per_K(rows: list[dict]) -> dict:
    """(instance key, K) -> (best makespan, its family, lower bound) over families fitting K."""
    by_inst: dict = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        by_inst[_inst_key(r)][r["family"]][r["K"]] = r
    out = {}
    for key, fams in by_inst.items():
        lbs = {K: r["lower_bound_exact"] for fam in fams.values() for K, r in fam.items()}
        for K, lb in lbs.items():
            cands = []
            for fam, per_K in fams.items():
                peak = max(per_K)
                row = per_K.get(min(K, peak))
                if row is not None:
                    cands.append((row["makespan_exact"], fam))
            ms, fam = min(cands)
            out[(key, K)] = (ms, fam, lb)
    return out


def solve_results() -> tuple[dict, dict]:
    """``(optima, found)`` from data/atlas/optima.sqlite, read once: ``(instance key, K) ->``
    the proven optimum, and ``->`` the least makespan of a valid schedule that ``solve`` found,
    proven optimal or not (an upper bound on the optimum)."""
    if not OPTIMA.exists():
        return {}, {}
    opt: dict = {}
    found: dict = {}
    for r in flat_rows(OPTIMA):
        ms = r.get("makespan_exact")
        if r.get("status") not in ("optimal", "feasible") or ms is None:
            continue
        key = (_inst_key(r), r["K"])
        if r["status"] == "optimal":
            opt[key] = ms
        found[key] = min(found.get(key, ms), ms)
    return opt, found


def solve_runs() -> str:
    """The ``solve`` runs of data/atlas/optima.sqlite by engine and time limit: how many pairs,
    how many proven optimal."""
    from pipebounds.sweep import Store

    if not OPTIMA.exists():
        return "none"
    runs: dict = defaultdict(lambda: [0, 0])
    with Store(OPTIMA, read_only=True) as st:
        for res in st.results("solve"):
            if res["status"] != "ok":
                continue
            prm, rows = res["params"], res["rows"] or []
            engine = prm.get("engine") or next((r["engine"] for r in rows if r.get("engine")),
                                               "default")  # the engine the row says ran
            key = (engine, float(prm.get("time_limit", 10)))
            runs[key][0] += 1
            runs[key][1] += any(r.get("status") == "optimal" for r in rows)
    return "; ".join(f"`{e}` {t:g} s each, {n} pairs, {k} proven optimal"
                     for (e, t), (n, k) in sorted(runs.items(), key=lambda x: (x[0][1], x[0][0])))


def figures(rows: list[dict]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")  # a script, not library code: it may choose its backend
    import matplotlib.pyplot as plt

    IMG.mkdir(parents=True, exist_ok=True)
    names = []
    for v in (1, 2):
        fams = sorted({r["family"] for r in rows if r.get("v", 1) == v})
        if not fams:
            continue
        data = [[float(r["gap_exact"]) for r in rows if r["family"] == f and r.get("v", 1) == v]
                for f in fams]
        fig, ax = plt.subplots(figsize=(8, 3.6))
        ax.boxplot(data, whis=(0, 100))
        ax.set_xticks(range(1, len(fams) + 1), fams, rotation=20)
        ax.set_yscale("log")
        ax.set_ylabel("makespan / lower bound")
        ax.set_title(f"atlas, v = {v}: gap to the bound per family, every P, m, K, durations")
        ax.axhline(1.02, color="tab:red", lw=0.8, ls="--", label="2 % above the bound")
        ax.legend(loc="upper right")
        fig.tight_layout()
        name = f"atlas_gap_v{v}.png"
        fig.savefig(IMG / name, dpi=110)
        plt.close(fig)
        names.append(name)
    return names


def _families_text(fams: list[str]) -> str:
    """Which families of ``pipebounds generate --list`` the atlas holds (all, or which not)."""
    from schedules.generators import GENERATORS

    missing = [g for g in GENERATORS if g not in fams]
    if not missing:
        return "every family of `pipebounds generate --list`"
    return (f"{len(fams)} of the {len(GENERATORS)} families of `pipebounds generate --list` "
            f"(not {', '.join(f'`{g}`' for g in missing)}: added after the sweep ran)")


SYNTH = Path(__import__("os").environ.get("ATLAS_SYNTH",
                                           ROOT / "data" / "atlas" / "synthesis.sqlite"))


def synthesized(rows_of_store: list[dict], current: str) -> tuple[dict, int]:
    """``(instance key, K) -> row`` of the ``synthesize`` sweep's rows of the ``current``
    synthesis version, and how many rows of another version were left out (never mixed in)."""
    out, stale = {}, 0
    for r in rows_of_store:
        if r.get("makespan_exact") is None:  # a failed item (its row's ``status`` is the
            continue                         # synthesis's: optimal or feasible)
        if r.get("synthesis_version") != current:
            stale += 1
            continue
        out[(_inst_key(r), r["K"])] = r
    return out, stale


def classify(best_ms: Fraction, lb: Fraction, optimum, found=None) -> str:
    """Why a pair is on the frontier: ``bound weak`` when a proven optimum is itself more than
    2 % above the bound (no schedule can close it), ``schedules weak`` when the optimum is
    within 2 % but no schedule found is, ``open`` otherwise. ``found``: the makespan of a
    schedule the exact solver found without proving it (an upper bound on the optimum): within
    2 % of the bound it shows the optimum is too, so the pair's schedules are weak.

    >>> classify(Fraction(110), Fraction(100), None, Fraction(102))
    'schedules weak'
    >>> classify(Fraction(110), Fraction(100), None, Fraction(103))
    'open'
    >>> classify(Fraction(110), Fraction(100), Fraction(103))
    'bound weak'
    """
    if found is not None and found <= THRESHOLD * lb:
        return "schedules weak"
    if optimum is None:
        return "open"
    return "bound weak" if optimum > THRESHOLD * lb else "schedules weak"


def synthesis_sweep_section(frontier: list, opt: dict, found: Optional[dict] = None
                            ) -> list[str]:
    """The page's section on the ``synthesize`` sweep over the frontier pairs
    (``data/atlas/frontier_grid.json`` -> ``data/atlas/synthesis.sqlite``): per ``P``, the
    pairs run, those the synthesized schedule brings within 2 %, the frontier left among the
    run ones (measured), and for the pairs not run an estimate (their count times the share
    left among the run pairs of that ``P``), labelled as such."""
    from pipebounds.sweep.store import synthesis_version

    if not SYNTH.exists():
        return []
    now = synthesis_version()
    syn, stale = synthesized(flat_rows(SYNTH, "synthesize"), now)
    from pipebounds.sweep import Store

    with Store(SYNTH, read_only=True) as st:
        tls = sorted({res["params"].get("time_limit") for res in st.results("synthesize")})
    by_P: dict = defaultdict(lambda: {"pairs": 0, "run": 0, "closed": 0, "left": 0,
                                      "gaps": [], "why": defaultdict(int)})
    left_rows = []
    free_bounds: dict = {}
    for gap, key, K, ms, fam, lb in frontier:
        d = by_P[key[0]]
        d["pairs"] += 1
        r = syn.get((key, K))
        if r is None:
            continue
        d["run"] += 1
        best_ms = min(ms, r["makespan_exact"])
        o = opt.get((key, K))
        if r.get("status") == "optimal" and (o is None or o > r["makespan_exact"]):
            o = r["makespan_exact"]  # proven by the synthesis (bound met, or its exact phase)
        d["gaps"].append(best_ms / lb)
        if best_ms <= THRESHOLD * lb:
            d["closed"] += 1
        else:
            d["left"] += 1
            u = (found or {}).get((key, K))
            why = classify(best_ms, lb, o, u)
            d["why"][why] += 1
            ids, mem = bound_structure(instance_object(r), K, free_bounds)
            left_rows.append((key, K, fam, ms, r, best_ms, lb, o, u, why, ids, mem))
    complete = all(d["run"] == d["pairs"] for d in by_P.values())
    out = ["", "## The frontier after synthesis (the synthesize sweep)", "",
           "`pipebounds sweep data/atlas/frontier_grid.json --task synthesize` "
           "(`tools/atlas_frontier_grid.py`) ran `synthesize` with "
           f"{', '.join(f'{t:g}' for t in tls)} CPU s per pair (`clock='cpu'`) on the frontier "
           "pairs: every pair of P = 2, 4 first, then the pairs of P = 8, 16 and 32 round robin, "
           "each P in a seeded random order ("
           + ("every pair was run" if complete else
              "a uniform sample of each, as far as the sweep got; the sweep was stopped there")
           + "). Rows carry the "
           f"synthesis version (a hash of the code of the synthesis, generators, remat, simulator and "
           f"bounds, comments and docstrings left out); this page uses those of the current one ({now}): "
           f"{sum(d['run'] for d in by_P.values())} pairs; {stale} rows of another version left out. "
           "A pair's best schedule is the "
           "better of the best family (the atlas row) and the synthesized one; the 2 % is against "
           "the current bound.", "",
           "| P | frontier pairs | run | within 2 % after synthesis | left (measured) | "
           "mean gap (run) | not run | left among the not run (estimate) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    measured = estimate = 0.0
    for P_, d in sorted(by_P.items()):
        unrun = d["pairs"] - d["run"]
        est = unrun * d["left"] / d["run"] if d["run"] else float(unrun)
        measured += d["left"]
        estimate += est
        mean = f"{float(sum(d['gaps']) / len(d['gaps'])):.4f}" if d["gaps"] else "-"
        out.append(f"| {P_} | {d['pairs']} | {d['run']} | {d['closed']} | {d['left']} | {mean} | "
                   f"{unrun} | {est:.0f}{'' if d['run'] else ' (none run: all counted)'} |")
    total = (f"Frontier after synthesis: **{measured:.0f} measured** of the {len(frontier)} "
             "pairs, every one run." if complete else
             f"Frontier after synthesis: **{measured:.0f} measured** on the pairs run, plus "
             f"**about {estimate:.0f} estimated** on the pairs not run (their count times the share "
             f"left among the run pairs of the same P; for P = 8, 16, 32 the run pairs are a uniform "
             f"random sample), so about {measured + estimate:.0f} of the {len(frontier)} pairs "
             "(an estimate, not a measurement, for the part not run).")
    out += ["", total, "",
            "Why the pairs left (run) are left: `bound weak` (a proven optimum more than 2 % "
            "above the bound: no schedule can close the pair), `schedules weak` (the optimum is "
            "within 2 % of the bound, proven, or shown by a schedule that `solve` found without "
            "proving it, but no schedule of the families or the synthesis is), `open` (neither "
            "known: either may hold). The optima and the schedules found are `solve`'s "
            "(data/atlas/optima.sqlite: the atlas's smallest instances, and the open pairs of "
            "P <= 4 left by earlier synthesize sweeps and a seeded sample of 36 of those of "
            "P = 8, `tools/atlas_frontier_grid.py --optima`; "
            f"its runs: {solve_runs()}) or the synthesis's own "
            "(its schedule meets the bound, or its exact phase proves it).", "",
            "| P | bound weak | schedules weak | open |", "| --- | --- | --- | --- |"]
    for P_, d in sorted(by_P.items()):
        if d["run"]:
            w = d["why"]
            out.append(f"| {P_} | {w['bound weak']} | {w['schedules weak']} | {w['open']} |")
    out += binding_section(left_rows)
    import csv

    with open(ROOT / "data" / "atlas" / "frontier_after_synthesis.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["P", "m", "v", "placement", "durations", "K", "best_family",
                    "family_makespan", "synthesized", "source", "lower_bound", "gap", "optimum",
                    "why", "solve_found", "binding", "memory_in_bound"])
        for key, K, fam, ms, r, best_ms, lb, o, u, why, ids, mem in left_rows:
            w.writerow([key[0], key[1], key[2], key[3], _durations(key), K, fam, str(ms),
                        str(r["makespan_exact"]), r.get("source", ""), str(lb),
                        f"{float(best_ms / lb):.6f}", "" if o is None else str(o), why,
                        "" if u is None else str(u), " ".join(ids), "yes" if mem else "no"])
    out += ["", "The pairs left are listed in `data/atlas/frontier_after_synthesis.csv` "
            "(with the synthesized schedule's source and the reason).", ""]
    return out


BINDING_SHOWN = 12


def binding_section(left_rows: list) -> list[str]:
    """The pairs left after synthesis grouped by the theorems that set their bound (the
    binding terms' ids): how many, their mean gap, how many have a bound that the memory limit
    raises at all, and why each is left (:func:`classify`). The groups with the most pairs
    first, the :data:`BINDING_SHOWN` largest shown and the rest summed."""
    groups: dict = defaultdict(lambda: {"gaps": [], "mem": 0, "why": defaultdict(int)})
    for key, K, fam, ms, r, best_ms, lb, o, u, why, ids, mem in left_rows:
        g = groups[ids]
        g["gaps"].append(best_ms / lb)
        g["mem"] += mem
        g["why"][why] += 1
    if not groups:
        return []
    ranked = sorted(groups.items(), key=lambda t: (-len(t[1]["gaps"]), t[0]))
    shown, rest = ranked[:BINDING_SHOWN], ranked[BINDING_SHOWN:]
    free = sum(not row[-1] for row in left_rows)
    out = ["", "### Which theorems set the bound of the pairs left", "",
           f"Of the {len(left_rows)} pairs left, {len(left_rows) - free} have a bound that the "
           f"memory limit raises (the bound at `K` above the same instance's bound with no limit) "
           f"and {free} a bound that it does not: there no memory term is above the fill and "
           "drain's and the work's, so the bound is what it would be with no limit. By the "
           "binding terms (`pipebounds bound` lists them; docs/theory.md, docs/theory_multiwave.md), "
           "the most frequent first; the CSV has each pair's (`binding`, `memory_in_bound`):", "",
           "| binding terms | pairs left | mean gap | memory raises the bound | bound weak | "
           "schedules weak | open |", "| --- | --- | --- | --- | --- | --- | --- |"]

    def row(label: str, gs: list) -> str:
        gaps = [x for g in gs for x in g["gaps"]]
        n = len(gaps)
        w = {k: sum(g["why"][k] for g in gs) for k in ("bound weak", "schedules weak", "open")}
        return (f"| {label} | {n} | {float(sum(gaps) / len(gaps)):.4f} | "
                f"{sum(g['mem'] for g in gs)} | {w['bound weak']} | {w['schedules weak']} | "
                f"{w['open']} |")

    out += [row(", ".join(ids), [g]) for ids, g in shown]
    if rest:
        out.append(row(f"{len(rest)} other sets", [g for _, g in rest]))
    return out


def main() -> int:
    rows = [r for r in flat_rows(STORE) if r["status"] == "ok"]
    errors = [r for r in flat_rows(STORE) if r["status"] != "ok"]
    stored = sorted({(r["code_version"], r["theory_version"]) for r in rows})
    recomputed = current_bounds(rows)
    best = best_per_K(rows)
    opt, found = solve_results()
    imgs = figures(rows)
    from pipebounds.sweep.store import theory_version
    fams = sorted({r["family"] for r in rows})
    lines = ["# The certified-gap atlas", "",
             "<!-- generated by tools/make_atlas.py from data/atlas/atlas.sqlite; do not edit -->", "",
             f"{len(rows):,} rows: {_families_text(fams)} at every `K` from 1 to",
             "its natural peak (rematerialized by `fit_memory`, no polish), over the grid of",
             "`data/atlas/grid.json`: P in {2, 4, 8, 16, 32}, m in {P, 2P, 4P, 8P}, v in {1, 2} (both",
             "placements at v = 2), fused f : b in {1 : 1, 1 : 2}, split f : b_I : b_W in {1 : 1 : 1,",
             "11.57 : 13.30 : 10.23}. Each row: makespan, peak, lower bound (`bounds.lower_bound`)",
             "and gap = makespan / bound, exact rationals in the store; every row was checked on",
             "loading (makespan >= bound). Rows computed with " +
             ", ".join(f"code {c}, theory {t}" for c, t in stored) + f"; the bound and gap of "
             f"{recomputed:,} rows computed under another theory were recomputed with the current "
             f"one ({theory_version()}) when this page was made, so every bound here is the "
             "current theory's. The makespans are the rows' own (families with `fit_memory`); "
             "the frontier pairs' synthesized schedules are the section *The frontier after "
             "synthesis* below (a sweep over the frontier pairs).",
             f"Items that failed: {len(errors)}.", "",
             "Reproduce: see the docstring of `tools/make_atlas.py` (the sweep resumes where it stops).", ""]
    lines += ["## Gap per family", ""]
    lines += [f"![{n}](img/{n})" for n in imgs] + [""]
    lines += ["| family | rows | within 2 % | median gap | worst gap |", "| --- | --- | --- | --- | --- |"]
    for fam in fams:
        gaps = sorted(r["gap_exact"] for r in rows if r["family"] == fam)
        near = sum(g <= THRESHOLD for g in gaps)
        lines.append(f"| {fam} | {len(gaps)} | {near} | {float(gaps[len(gaps) // 2]):.4f} | "
                     f"{float(gaps[-1]):.4f} |")
    lines += ["", "## Best family per memory", "",
              "For each instance and K, the family with the least makespan among those that fit",
              "(a family whose natural peak is at most K runs unchanged). How often each family is",
              "the best:", "", "| family | best at (instance, K) pairs |", "| --- | --- |"]
    wins: dict = defaultdict(int)
    for (_, _), (_, fam, _) in best.items():
        wins[fam] += 1
    for fam, n in sorted(wins.items(), key=lambda t: -t[1]):
        lines.append(f"| {fam} | {n} |")
    frontier = sorted(((ms / lb, key, K, ms, fam, lb) for (key, K), (ms, fam, lb) in best.items()
                       if ms > THRESHOLD * lb), key=lambda t: (t[1], t[2]))
    proven = sum(1 for (key, K) in best if (key, K) in opt)
    lines += ["", "## The frontier: no family within 2 % of the bound", "",
              f"{len(frontier)} of {len(best)} (instance, K) pairs. Each is either a weak bound or",
              "a schedule nobody has published. `optimum` is the proven optimum where the exact",
              f"solver proved it within its limit ({proven} pairs have one)."]
    weak = sum(1 for _, key, K, ms, _, lb in frontier if opt.get((key, K)) == ms)
    better = sum(1 for _, key, K, ms, _, lb in frontier
                 if opt.get((key, K)) is not None and opt[(key, K)] < ms)
    lines += [f"Of the frontier pairs with a proven optimum, {weak} have optimum = the best "
              f"family's makespan (the bound is weak there) and {better} have a better schedule "
              "than every family (an unpublished schedule exists).", ""]
    import csv

    with open(ROOT / "data" / "atlas" / "frontier.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["P", "m", "v", "placement", "durations", "K", "best_family", "makespan",
                    "lower_bound", "gap", "optimum"])
        for gap, key, K, ms, fam, lb in frontier:
            o = opt.get((key, K))
            w.writerow([key[0], key[1], key[2], key[3], _durations(key), K, fam, str(ms), str(lb),
                        f"{float(gap):.6f}", "" if o is None else str(o)])
    by_size: dict = defaultdict(lambda: [0, 0])
    for (key, K), (ms, fam, lb) in best.items():
        by_size[(key[0], key[2])][1] += 1
        by_size[(key[0], key[2])][0] += ms > THRESHOLD * lb
    lines += ["How many (instance, K) pairs are on the frontier, by P and v:", "",
              "| P | v | frontier pairs | of |", "| --- | --- | --- | --- |"]
    lines += [f"| {P_} | {v_} | {a} | {b} |" for (P_, v_), (a, b) in sorted(by_size.items())]
    lines += ["", f"The full list is `data/atlas/frontier.csv`; the {min(SHOWN, len(frontier))} "
              "smallest instances (by P, m) with their largest gap first:", "",
              "| P | m | v | placement | durations | K | best family | makespan | bound | gap | optimum |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    shown = sorted(frontier, key=lambda t: (t[1][0], t[1][1], -t[0]))[:SHOWN]
    for gap, key, K, ms, fam, lb in shown:
        o = opt.get((key, K))
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {_durations(key)} | {K} | "
                     f"{fam} | {ms} | {lb} | {float(gap):.4f} | {'-' if o is None else o} |")
    lines += synthesis_sweep_section(frontier, opt, found)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(rows)} rows, {len(frontier)} frontier pairs, figures {imgs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
