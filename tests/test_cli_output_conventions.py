"""Every command's output, read by a script and by a person (docs/CLI.md, "JSON numbers").

One set of runs (every command, a few instances, JSON and text) feeds two checks:

* JSON: a quantity ``X`` is a JSON number and ``X_exact`` its exact string (equal to it); a
  string that reads as a number under a key without ``_exact``, a list of numeric strings, a
  non-integral float without its ``_exact`` twin, or a Python repr fails. Orders documents and
  instance objects (keys ``schedule``, ``instance``, ``durations``, ``memory``, ``orders``,
  ``comms``) keep their input format and are not walked.
* text: no ``None``, no list reprs (``[2, 2]``, ``['2', '2']``), no ``True``/``False``, no bare
  fraction for a gap (a percentage), no line naming ``makespan`` twice.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from fractions import Fraction

import pytest

from pipebounds.cli import main

SPLIT = ["--b-input", "1", "--b-weight", "1"]


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code in (0, 1), (argv, code, err.getvalue())
    return code, out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    made = {}
    for name, argv in {"zbh2": ["zb-h2", "-P", "4", "-m", "8", *SPLIT],
                       "1f1b_K2": ["1f1b", "-P", "3", "-m", "5", "-K", "2"],
                       "frac": ["1f1b", "-P", "2", "-m", "3", "-f", "1/2", "-b", "1/3"],
                       "inter": ["interleaved", "-P", "2", "-m", "4", "-v", "2"]}.items():
        _, text = _run(["generate", *argv, "--json"])
        (d / f"{name}.json").write_text(text)
        made[name] = str(d / f"{name}.json")
    docs = [json.loads(open(made[n]).read()) for n in ("frac", "1f1b_K2")]
    (d / "list.json").write_text(json.dumps(docs))
    made["list"] = str(d / "list.json")
    mem = json.loads(open(made["frac"]).read())
    mem["memory"] = {"activation": [3, 5], "budget": 20}
    (d / "bytes.json").write_text(json.dumps(mem))
    made["bytes"] = str(d / "bytes.json")
    (d / "batch.jsonl").write_text('{"P": 4, "m": 8, "K": 1}\n{"P": 2, "m": 3, "f": "1/2", '
                                   '"b": "1/3"}\nnot json\n')
    made["batch"] = str(d / "batch.jsonl")
    (d / "grid.json").write_text('{"product": {"P": [2], "m": [2, 3], "K": [1]}}')
    made["grid"] = str(d / "grid.json")
    made["dir"] = str(d)
    return made


def commands(f) -> dict[str, list[str]]:
    """Every command on a few instances (small limits: the machine is shared)."""
    t = ["--time-limit", "2"]
    return {
        "bound fused K=2": ["bound", "-P", "4", "-m", "8", "-K", "2"],
        "bound split inf": ["bound", "-P", "4", "-m", "12", *SPLIT],
        "bound rational": ["bound", "-P", "2", "-m", "3", "-f", "1/2", "-b", "1/3"],
        "bound waves": ["bound", "-P", "2", "-m", "4", "-v", "2", "-K", "3"],
        "bound batch": ["bound", "--batch", f["batch"]],
        "solve search": ["solve", "-P", "2", "-m", "3", "-K", "1", "--engine", "search", *t],
        "solve rational": ["solve", "-P", "2", "-m", "2", "-f", "1/2", "-b", "1/3",
                           "--engine", "search", *t],
        "generate": ["generate", "1f1b", "-P", "3", "-m", "4", "-K", "2", "--quiet"],
        "generate list": ["generate", "--list"],
        "simulate": ["simulate", f["zbh2"]],
        "simulate K": ["simulate", f["1f1b_K2"]],
        "simulate list": ["simulate", f["list"]],
        "simulate bytes": ["simulate", f["bytes"]],
        "simulate waves": ["simulate", f["inter"]],
        "remat infeasible": ["remat", f["zbh2"], "-K", "2", *t],
        "remat backward": ["remat", f["zbh2"], "-K", "4", "--backward", *t],
        "remat span": ["remat", f["1f1b_K2"], "-K", "1", "--objective", "span", *t],
        "best": ["best", "-P", "3", "-m", "4", "-K", "2", *SPLIT, "--time-limit", "2",
                 "--solve-time-limit", "1"],
        "frontier": ["frontier", "-P", "3", "-m", "6", "--time-limit", "1"],
        "frontier rational": ["frontier", "-P", "2", "-m", "3", "-f", "1/2", "-b", "1/3",
                              "--time-limit", "1"],
        "report": ["report", "-P", "2", "-m", "3", "--no-figures", "--quiet",
                   "-o", f["dir"] + "/report"],
        "audit": ["audit", "--only", "zb-h1"],
        "synthesize": ["synthesize", "-P", "3", "-m", "4", "-K", "2", "--time-limit", "2",
                       "--quiet"],
        "synthesize rational": ["synthesize", "-P", "2", "-m", "3", "-K", "1", "-f", "1/2",
                                "-b", "1/3", "--time-limit", "2", "--quiet"],
        "sweep": ["sweep", f["grid"], "--task", "bound", "--store", f["dir"] + "/s.db",
                  "--workers", "1", "--executor", "inprocess", "--quiet"],
    }


JSON_ONLY = {"export chrome-trace": lambda f: ["export", f["frac"], "--format", "chrome-trace",
                                               "-o", "-"]}


@pytest.fixture(scope="module")
def outputs(files):
    """``name -> (json object, text output)`` of every command."""
    res = {}
    for name, argv in commands(files).items():
        _, js = _run(argv + ["--json"])
        if name == "sweep":  # a second run would skip the stored items: a fresh store
            argv = argv[:argv.index("--store") + 1] + [files["dir"] + "/s2.db"] + \
                argv[argv.index("--store") + 2:]
        _, text = _run(argv)
        res[name] = (json.loads(js), text)
    for name, make in JSON_ONLY.items():
        _, js = _run(make(files))
        res[name] = (json.loads(js), None)
    return res


# --- JSON ----------------------------------------------------------------------------------

NUMERIC = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?(\s*/\s*\d+)?\s*\Z"
                     r"|\s*[+-]?(inf|infinity|nan)\s*\Z", re.I)
EXACT = re.compile(r"-?\d+(/\d+)?\Z")
REPR = re.compile(r"Fraction\(|Decimal\(|object at 0x|\A<.*>\Z|\A\[.*\]\Z|\A\(.*\)\Z"
                  r"|\A\{.*\}\Z|\ANone\Z|\A(True|False)\Z")
INPUT_FORMAT = {"instance", "schedule", "durations", "memory", "orders", "comms"}
"""Keys whose values are documents or instance objects (their own input format)."""
FLAGS = {"K_star_exact"}
"""``_exact`` keys that are booleans (frontier: "is K* exact"), kept for the contract."""
MEASURED_FLOATS = {"seconds", "ts", "dur", "us_per_unit"}
"""Float keys that are measurements or units, not exact quantities."""


def violations(obj, path="$") -> list[str]:
    """Breaches of the JSON number convention in ``obj`` (see the module docstring)."""
    out: list[str] = []
    if isinstance(obj, list):
        for k, x in enumerate(obj):
            out += violations(x, f"{path}[{k}]")
        return out
    if isinstance(obj, str):
        if NUMERIC.match(obj):
            out.append(f"{path}: numeric string {obj!r} under a key without _exact")
        elif REPR.search(obj):
            out.append(f"{path}: a repr {obj!r}")
        return out
    if not isinstance(obj, dict):
        return out
    for key, x in obj.items():
        where = f"{path}.{key}"
        if key in INPUT_FORMAT:
            continue
        if key.endswith("_exact") and key not in FLAGS:
            base = key[:-len("_exact")]
            if base not in obj:
                out.append(f"{where}: no {base!r} beside it")
                continue
            out += _exact_pair(obj[base], x, where)
        elif isinstance(x, float) and not x.is_integer() and key not in MEASURED_FLOATS \
                and f"{key}_exact" not in obj:
            out.append(f"{where}: float {x} without {key}_exact")
        elif isinstance(x, list) and any(isinstance(y, float) and not y.is_integer()
                                         for y in x) and f"{key}_exact" not in obj:
            out.append(f"{where}: floats without {key}_exact")
        else:
            out += violations(x, where)
    return out


def _exact_pair(value, exact, where) -> list[str]:
    if exact is None:
        return [] if value is None else [f"{where}: null beside {value!r}"]
    if isinstance(exact, list):
        if not isinstance(value, list) or len(value) != len(exact):
            return [f"{where}: a list beside {value!r}"]
        return [e for v, x in zip(value, exact) for e in _exact_pair(v, x, where)]
    if isinstance(exact, dict):
        if not isinstance(value, dict) or value.keys() != exact.keys():
            return [f"{where}: a mapping beside {value!r}"]
        return [e for k in exact for e in _exact_pair(value[k], exact[k], f"{where}.{k}")]
    if not isinstance(exact, str) or not EXACT.match(exact):
        return [f"{where}: {exact!r} is not an exact string"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [f"{where}: its number is {value!r}, not a JSON number"]
    q = Fraction(exact)
    if (q.denominator == 1 and not isinstance(value, int)) or \
            (q.denominator == 1 and value != q) or abs(value - float(q)) > 1e-9 * max(1, abs(q)):
        return [f"{where}: {exact!r} does not equal {value!r}"]
    return []


def test_walker_catches_what_it_should():
    """The checker itself: each breach of the convention is found, a clean object passes."""
    assert violations({"makespan": 3.5, "makespan_exact": "7/2", "peak": [2, 2],
                       "peak_exact": ["2", "2"], "seconds": 0.25, "K_star_exact": True,
                       "schedule": {"durations": {"F": "1/2"}}}) == []
    for bad in ({"optimum": "27"}, {"peak": ["2", "2"]}, {"gap": 0.25}, {"x": "Fraction(1, 2)"},
                {"x": "[1, 2]"}, {"x": "None"}, {"makespan": 3, "makespan_exact": "7/2"},
                {"makespan_exact": "3"}, {"busy": ["24"]}, {"a": [{"lower_bound": "3/2"}]}):
        assert violations(bad), bad


def test_every_command_json_follows_the_number_convention(outputs):
    bad = {name: v for name, (js, _) in outputs.items() if (v := violations(js))}
    assert not bad, bad


# --- text ----------------------------------------------------------------------------------

TEXT_FAULTS = {
    "None": re.compile(r"\bNone\b"),
    "True/False": re.compile(r"\b(True|False)\b"),
    "list repr": re.compile(r"\[\s*'|\[\s*-?\d+(/\d+)?,\s*-?\d"),
    "Fraction repr": re.compile(r"Fraction\("),
    "bare number for a gap": re.compile(r"\bgap\s*:?\s*-?\d+(/\d+)?(?![\d.%/])"),
}


def text_faults(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("{"):  # generate prints the document after its summary
            continue
        out += [f"{what}: {line.strip()!r}" for what, rx in TEXT_FAULTS.items() if rx.search(line)]
        if len(re.findall(r"\bmakespan\b", line)) > 1:
            out.append(f"makespan twice: {line.strip()!r}")
    return out


def test_text_checker_catches_what_it_should():
    for bad in ("optimum None (feasible)", "peak ['2', '2', '2', '1']", "gap 6/29",
                "peak memory [7, 7, 7, 7]", "infeasible  makespan 3  lower bound 2  makespan 3"):
        assert text_faults(bad), bad
    assert text_faults("optimum 27, gap 20.7% (to the optimum)\npeak 2 2 2 1") == []


def test_every_command_text_is_written_for_people(outputs):
    bad = {name: f for name, (_, text) in outputs.items() if text and (f := text_faults(text))}
    assert not bad, bad
