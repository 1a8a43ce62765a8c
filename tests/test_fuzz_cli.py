"""Fuzz suite of the command line (issue 16, docs/reliability.md).

Three parts:

* the corpus (tests/fuzz_corpus/): every cause the fuzzing pass of issue 16 found, each as a file
  or a command line, with the answer it must now give (in-process: fast);
* hypothesis strategies producing hostile documents, flags and batch lines (in-process);
* a handful of cases in a subprocess under RLIMIT_AS = 1 GiB and a 5 s budget beyond start-up:
  sizes that would allocate gigabytes, numbers that would take hours, a full stdout, a closed
  pipe, a closed stdin.

Every answer obeys :func:`fuzz_cli.assert_answer`: exit 0/1/2, one line for 2, no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from fuzz_cli import (BOUNDED, CORPUS, HANG_SECONDS, assert_answer, big_document,
                      run_in_process, run_subprocess)


def corpus(name: str) -> str:
    return str(CORPUS / name)


# ----------------------------------------------------------------------------- the corpus
CASES = [
    # (id, argv, exit status, text the answer must contain: stderr for 2, stdout otherwise)
    ("valid", ["simulate", corpus("valid.json"), "--json"], 0, '"valid": true'),
    ("non_utf8", ["simulate", corpus("non_utf8.json")], 2, "not UTF-8"),
    ("deep_ignored_key", ["simulate", corpus("deep_ignored_key.json")], 2, "MAX_JSON_DEPTH"),
    ("deep_65", ["simulate", corpus("deep_65.json")], 2, "MAX_JSON_DEPTH"),
    ("int_5000_digits", ["simulate", corpus("int_5000_digits.json")], 2, "MAX_NUMBER_DIGITS"),
    ("int_5000_digits_P", ["simulate", corpus("int_5000_digits_P.json")], 2, "MAX_NUMBER_DIGITS"),
    ("action_5000_digits", ["simulate", corpus("action_5000_digits.json")], 2, "malformed action"),
    ("flag_1e5000", ["bound", "-P", "4", "-m", "8", "-f", "1e5000"], 2, "MAX_NUMBER_DIGITS"),
    ("flag_int_5000", ["bound", "-P", "4" * 5000, "-m", "8"], 2, "MAX_NUMBER_DIGITS"),
    ("duration_1e19", ["simulate", corpus("duration_1e19.json")], 2, "MAX_TIME_UNITS"),
    ("duration_1e19_gantt", ["gantt", corpus("duration_1e19.json"), "-o", "{tmp}/g.png"], 2,
     "MAX_TIME_UNITS"),
    ("duration_1e19_solve", ["solve", "-P", "2", "-m", "2", "-f", "10000000000000000000"], 2,
     "MAX_TIME_UNITS"),
    ("duration_1e19_split_bound", ["bound", "-P", "4", "-m", "8", "--b-input",
                                   "10000000000000000000", "--b-weight", "1"], 2, "MAX_TIME_UNITS"),
    ("comm_huge", ["simulate", corpus("comm_huge.json")], 2, "MAX_TIME_UNITS"),
    ("comm_huge_flag", ["bound", "-P", "4", "-m", "8", "-c", "1e30"], 2, "MAX_TIME_UNITS"),
    ("stage_to_rank_text", ["simulate", corpus("stage_to_rank_text.json")], 2, "stage_to_rank[0]"),
    ("stage_to_rank_half", ["simulate", corpus("stage_to_rank_half.json")], 2, "stage_to_rank[0]"),
    ("m_1e8", ["simulate", corpus("m_1e8.json")], 2, "MAX_PAIRS"),
    ("P_1e9", ["bound", "-P", "1000000000", "-m", "2"], 2, "MAX_STAGES"),
    ("P_1e6", ["bound", "-P", "1000000", "-m", "8"], 2, "MAX_STAGES"),
    ("m_1e6_v2", ["bound", "-P", "4", "-m", "1000000", "-v", "2"], 2, "MAX_PAIRS"),
    ("generate_m_1e9", ["generate", "1f1b", "-P", "4", "-m", "1000000000"], 2, "MAX_PAIRS"),
    ("flag_1e100000000", ["bound", "-P", "4", "-m", "8", "-f", "1e100000000"], 2,
     "MAX_NUMBER_DIGITS"),
    ("doc_1e100000000", ["simulate", corpus("duration_1e100000000.json")], 2, "MAX_NUMBER_DIGITS"),
    ("memory_1e100000000", ["simulate", corpus("memory_1e100000000.json")], 2,
     "MAX_NUMBER_DIGITS"),
    ("P_true", ["simulate", corpus("P_true.json")], 2, "P must be a whole number"),
    ("K_true", ["simulate", corpus("K_true.json")], 2, "K must be a whole number"),
    ("nan", ["simulate", corpus("nan.json")], 2, "NaN is not a JSON number"),
    ("report_into_file", ["report", "-o", corpus("valid.json"), "--no-figures"], 2,
     "not a directory"),
    ("report_unwritable", ["report", "-o", "/proc/pipebounds-report", "--no-figures"], 2,
     "cannot write"),
    ("gantt_unwritable", ["gantt", corpus("valid.json"), "-o", "/proc/x.png"], 2, "cannot write"),
    ("gantt_into_directory", ["gantt", corpus("valid.json"), "-o", "{tmp}"], 2, "output must end"),
    ("mathtext_source", ["gantt", corpus("mathtext_source.json"), "-o", "{tmp}/m.png"], 0, ""),
    ("mathtext_title", ["gantt", corpus("valid.json"), "-o", "{tmp}/t.svg", "--title",
                        r"$\frac{ broken $$ ^_"], 0, ""),
]


@pytest.mark.parametrize("name, argv, status, text", CASES, ids=[c[0] for c in CASES])
def test_corpus_case(tmp_path, name, argv, status, text):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run_in_process(argv)
    assert_answer(code, err, name)
    assert code == status, (code, err)
    assert text in (err if status == 2 else out), (out[:500], err)
    if name.startswith("mathtext"):
        assert os.path.getsize(argv[3]) > 1000
    if name.startswith(("gantt", "duration_1e19_gantt")):
        assert not [f for f in os.listdir(tmp_path) if f.endswith((".png", ".svg"))]


def test_report_into_existing_file_fails_before_the_work(tmp_path):
    target = tmp_path / "taken"
    target.write_text("keep me")
    code, out, err = run_in_process(["report", "-o", str(target)])
    assert code == 2 and out == "" and target.read_text() == "keep me"
    assert "not a directory" in err


def _batch(path: str) -> list[dict]:
    code, out, err = run_in_process(["bound", "--batch", path, "--json"])
    assert_answer(code, err)
    assert code == 0 and err == ""
    return json.loads(out)


def test_batch_splits_on_newline_only():
    res = _batch(corpus("batch_u2028.jsonl"))
    assert len(res) == 3 and all("lower_bound" in r for r in res)
    assert res[0]["instance"]["P"] == 2 and res[2]["instance"]["P"] == 3


def test_batch_hostile_lines_each_answered():
    res = _batch(corpus("batch_hostile.jsonl"))
    assert len(res) == 13
    assert "lower_bound" in res[0] and "lower_bound" in res[-1]
    expected = ["not UTF-8", "MAX_JSON_DEPTH", "MAX_NUMBER_DIGITS", "P must be a whole number",
                "MAX_PAIRS", "must be a JSON object", "MAX_NUMBER_DIGITS", "stage_to_rank[0]",
                "malformed JSON", "MAX_TIME_UNITS", "NaN"]
    for r, text in zip(res[1:-1], expected):
        assert text in r["error"], (r, text)
        assert "internal error" not in r["error"]


# ------------------------------------------------------------------ hypothesis: documents
VALID = {"P": 2, "m": 2, "K": 2, "durations": {"F": 1, "B": 2},
         "orders": {"0": ["0F0", "0F1", "0B0", "0B1"], "1": ["1F0", "1B0", "1F1", "1B1"]}}

HOSTILE_JSON = [b"true", b"false", b"null", b"0", b"-1", b"0.5", b"2.0", b"1e400", b"-1e400",
                b"1e100000000", b"1e-100000000", b"-0", b"1" + b"0" * 45, b"1" + b"0" * 5000,
                b'"x"', b'"3/2"', b'"1/0"', b'"1e5000"', b"[1]", b"[]", b"{}", b"NaN",
                b"Infinity", b'"\\u0662"', b'"inf"', b"2", b"3", b"1", b'"\\ud800"',
                b"[" * 200 + b"]" * 200, b'["0F0", 1]', b'["0F0", "0F0"]', b'{"0": "0F0"}',
                b'[0.5, 1]', b'["a", 1]', b'"$\\\\frac{"', b'"0F99999999999"', b'"\\u2028"']

FIELDS = ["P", "m", "K", "v", "placement", "stage_to_rank", "c", "durations", "orders", "source",
          "durations.F", "durations.B", "durations.I", "durations.W", "durations.R", "orders.0",
          "orders.1", "orders.0.0", "orders.7", "note"]


def _set(doc: dict, path: str, token: str) -> None:
    keys = path.split(".")
    node = doc
    for k in keys[:-1]:
        node = node.setdefault(k, {}) if isinstance(node, dict) else node
        if isinstance(node, list):
            break
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = token
    elif isinstance(node, dict):
        node[last] = token


@st.composite
def hostile_documents(draw) -> bytes:
    doc = json.loads(json.dumps(VALID))
    doc["orders"]["0"] = list(doc["orders"]["0"])
    replaced = {}
    for k in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(FIELDS))
        token = f"@@{k}@@"
        _set(doc, path, token)
        replaced[token] = draw(st.sampled_from(HOSTILE_JSON))
    data = json.dumps(doc).encode()
    for token, raw in replaced.items():
        data = data.replace(json.dumps(token).encode(), raw)
    cut = draw(st.sampled_from(["none", "none", "truncate", "byte"]))
    if cut == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif cut == "byte":
        k = draw(st.integers(0, len(data)))
        data = data[:k] + bytes([draw(st.integers(0, 255))]) + data[k:]
    return data


@given(hostile_documents())
def test_hostile_documents(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("doc") / "doc.json"
    path.write_bytes(data)
    code, out, err = run_in_process(["simulate", str(path), "--json"])
    assert_answer(code, err, data[:300])
    code2, _, err2 = run_in_process(["simulate", "-"], stdin=data)
    assert code2 == code, (err, err2)


# ---------------------------------------------------------------------- hypothesis: flags
INT_TEXT = ["1", "2", "3", "0", "-1", "x", "2.0", "true", "1e3", "1000000000", "9" * 50,
            "9" * 5000, "\u0663", "", " 2", "0x10", "1_0", "inf", "nan"]
NUM_TEXT = ["1", "2", "3/2", "0", "-1", "1e5000", "1e100000000", "1e-5000", "nan", "inf", "x",
            "1/0", "0.1", "10000000000000000000", "1" * 41, "-0", "2e-3", "\u0663", "1/3", ""]


@st.composite
def hostile_flags(draw) -> list[str]:
    argv = draw(st.sampled_from([["bound", "--json"], ["generate", "1f1b", "--json"],
                                 ["generate", "zb-h1", "--json"], ["bound"]]))
    for flag, pool in (("-P", INT_TEXT[:4] * 3 + INT_TEXT), ("-m", INT_TEXT[:4] * 3 + INT_TEXT),
                       ("-v", ["1", "1", "2", "0", "1.5", "1000000000", "true"]),
                       ("-K", ["inf", "2", "3", "0", "x", "1.5", "nan", "-inf", "9" * 30]),
                       ("-f", NUM_TEXT), ("-b", NUM_TEXT), ("-c", NUM_TEXT),
                       ("--placement", ["looped", "vshape", "zigzag", "", "$"]),
                       ("--b-input", NUM_TEXT), ("--b-weight", NUM_TEXT)):
        if draw(st.booleans()) or flag in ("-P", "-m"):
            argv += [flag, draw(st.sampled_from(pool))]
    return argv


@given(hostile_flags())
def test_hostile_flags(argv):
    code, out, err = run_in_process(argv)
    assert_answer(code, err, argv)
    if code == 0 and "--json" in argv:
        json.loads(out)


# ---------------------------------------------------------------------- hypothesis: batch
LINES = [b'{"P": 2, "m": 2}', b'{"P": 3, "m": 4, "K": 2}', b'{"P": 2, "m": 3, "b_input": 1, '
         b'"b_weight": 1}', b'', b'   ', b'\r', b'{"P": 2, "m": 2, "note": "\xe2\x80\xa8"}',
         b'{"P": 2, "m": 2, "note": "\xc2\x85"}', b'\xff\xfe', b'{"P": 2, "m": 2, "s": "\xff"}',
         b'[' * 3000, b'{"a": ' + b'[' * 100 + b']' * 100 + b', "P": 2, "m": 2}', b'null',
         b'"P"', b'{"P": 2}', b'{"P": 2, "m": 2, "placement": 7}', b'{"P": 2, "m": 2, "K": {}}',
         b'{"P": 2, "m": 2, "stage_to_rank": [[0], [1]]}', b'{"P": 2, "m": 2, "stage_to_rank": 5}']


@st.composite
def hostile_batches(draw) -> list[bytes]:
    lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=6))
    k = draw(st.integers(0, len(lines) - 1))
    field = draw(st.sampled_from(["P", "m", "K", "v", "f", "b", "c", "b_input", "stage_to_rank"]))
    lines[k] = b'{"P": 2, "m": 2, "' + field.encode() + b'": ' + draw(
        st.sampled_from(HOSTILE_JSON)) + b"}"
    return lines


@given(hostile_batches())
def test_hostile_batch_lines(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("batch") / "b.jsonl"
    path.write_bytes(b"\n".join(lines))
    res = _batch(str(path))
    assert len(res) == sum(1 for line in lines if line.strip())
    for r in res:
        assert ("error" in r) != ("lower_bound" in r), r
        assert "internal error" not in r.get("error", "")


# --------------------------------------------------- subprocess: bounded time and memory
# The speed targets (start-up + 5 s, the Gantt + 10 s) are benchmarks/bench_bounded_inputs.py's;
# here each case must answer as the rule says, within 1 GiB, and not hang (HANG_SECONDS).
@pytest.mark.parametrize("argv", BOUNDED, ids=[" ".join(a[:2]) + f" {k}" for k, a in
                                               enumerate(BOUNDED)])
def test_bounded_time_and_memory(argv):
    code, out, err, seconds = run_subprocess(argv, timeout=HANG_SECONDS)
    assert_answer(code, err, argv)
    assert code == 2, (code, err)


def test_full_stdout_is_one_line():
    with open("/dev/full", "wb") as full:
        code, _, err, _ = run_subprocess(["generate", "1f1b", "-P", "4", "-m", "8", "--json"],
                                         stdout=full)
    assert_answer(code, err)
    assert code == 2 and "No space left" in err


def test_closed_pipe_is_quiet():
    env = {**os.environ, "PYTHONPATH": str(CORPUS.parent.parent)}
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", "generate", "1f1b", "-P", "64",
                             "-m", "512", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away, like `| head -c 10`
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert code == 0 and err == "", (code, err)


def test_closed_stdin_is_one_line():
    code, _, err, _ = run_subprocess(["simulate", "-"], close_stdin=True)
    assert_answer(code, err)
    assert code == 2 and "standard input" in err


# ------------------------------------ causes whose cost model is in the bounds and the Gantt
def test_bound_many_waves_answers():
    code, _, err, seconds = run_subprocess(["bound", "-P", "4", "-m", "8", "-v", "1000"],
                                           timeout=HANG_SECONDS)
    assert_answer(code, err)


def test_gantt_of_a_million_ops_is_bounded(tmp_path):
    big_document(tmp_path / "big.json")
    code, _, err, seconds = run_subprocess(["gantt", str(tmp_path / "big.json"), "-o",
                                            str(tmp_path / "big.png")], timeout=HANG_SECONDS)
    assert_answer(code, err)
    assert code == 2 and "MAX_ORDER_ITEMS" in err, (code, err)  # refused before any drawing
