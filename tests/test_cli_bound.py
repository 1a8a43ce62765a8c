"""`pipebounds bound`: JSON keys of CLI.md, batch mode, exit codes, one-line errors."""

import json

import pytest
from hypothesis import example, given, settings, strategies as st

from pipebounds.cli import main


def run(capsys, *args, stdin=None, monkeypatch=None):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_keys_and_values(capsys):
    code, out, err = run(capsys, "bound", "-P", "4", "-m", "8", "--json")
    res = json.loads(out)
    assert code == 0 and err == ""
    for key in ("lower_bound", "lower_bound_exact", "exact", "exact_basis", "terms"):
        assert key in res
    assert res["lower_bound"] == 33 and res["lower_bound_exact"] == "33" and res["exact"] is True
    assert res["exact_basis"] == "theorem"
    assert {"name": "fill_drain", "id": "T1", "value": 33, "value_exact": "33"} in res["terms"]
    assert max(t["value"] for t in res["terms"]) == res["lower_bound"]


def test_k1_single_slot_exact_and_rational_durations(capsys):
    code, out, _ = run(capsys, "bound", "-P", "3", "-m", "4", "-K", "1", "-f", "3", "-b", "2",
                       "--json")
    res = json.loads(out)
    assert res["lower_bound_exact"] == "34" and res["exact"] is True
    assert res["exact_basis"] == "checked"  # T3 = OPT on the exhaustively checked range
    code, out, _ = run(capsys, "bound", "-P", "2", "-m", "3", "-f", "1/2", "-b", "1/3", "--json")
    res = json.loads(out)
    assert res["lower_bound_exact"] == "10/3" and abs(res["lower_bound"] - 10 / 3) < 1e-12


def test_text_output(capsys):
    code, out, _ = run(capsys, "bound", "-P", "2", "-m", "2", "-K", "1")
    assert code == 0 and "lower bound" in out and "single_slot" in out


def test_batch_one_result_per_line_and_bad_lines(tmp_path, capsys):
    lines = ['{"P": 4, "m": 8, "K": 1, "v": 1, "placement": "looped", "f": 1, "b": 2}',
             "not json",
             '{"P": 0, "m": 2}',
             "",
             '{"P": 2, "m": 3, "K": "inf", "b_input": 1, "b_weight": 1}']
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "bound", "--batch", str(path))
    res = json.loads(out)
    assert code == 0 and len(res) == 4
    assert res[0]["instance"]["K"] == 1 and res[0]["lower_bound"] == 36 and res[0]["exact"]
    assert "error" in res[1] and "error" in res[2] and "P" in res[2]["error"]
    assert res[3]["instance"]["b_input"] == 1 and "lower_bound" in res[3]


def test_batch_from_stdin(monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO('{"P": 2, "m": 2}\n'))
    code, out, _ = run(capsys, "bound", "--batch", "-")
    assert code == 0 and json.loads(out)[0]["lower_bound"] == 9


@pytest.mark.parametrize("args", [["bound", "-P", "x", "-m", "2"], ["bound", "-m", "2"],
                                  ["bound", "-P", "2", "-m", "2", "-K", "0"],
                                  ["bound", "-P", "2", "-m", "2", "--b-input", "1"],
                                  ["bound", "-P", "2", "-m", "2", "--batch", "/nonexistent"]])
def test_bad_input_exits_2_with_one_line(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error:")


def _bound(capsys, *args):
    code, out, err = run(capsys, "bound", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_exact_basis_from_the_table_and_the_optimum_above_the_bound(capsys):
    # P=4, m=8, K=2: LB 33 = OPT 33 proven by a row of pipebounds/data/optima.jsonl (no theorem covers it)
    res = _bound(capsys, "-P", "4", "-m", "8", "-K", "2")
    assert (res["exact"], res["exact_basis"], res["optimum"]) == (True, "table", 33)
    # P=3, m=4, K=2, v=2 vshape, f=3, b=1: LB 49 < OPT 52 (table): optimum known, not exact
    res = _bound(capsys, "-P", "3", "-m", "4", "-K", "2", "-v", "2", "--placement", "vshape",
                 "-f", "3", "-b", "1")
    assert res["lower_bound"] == 49 and res["exact"] is False and res["exact_basis"] is None
    assert res["optimum"] == 52 and res["optimum_basis"] == "table"
    # P=3, m=2, K=2, v=2 vshape: MW11 = 24 reaches the table's optimum (22 before MW11)
    res = _bound(capsys, "-P", "3", "-m", "2", "-K", "2", "-v", "2", "--placement", "vshape")
    assert res["lower_bound"] == 24 == res["optimum"] and res["exact_basis"] == "table"
    # P=3, m=12, K=1, f=5, b=3: T3 = 144 < OPT = 146, and T3d = 146 reaches the table's optimum
    res = _bound(capsys, "-P", "3", "-m", "12", "-K", "1", "-f", "5", "-b", "3")
    terms = {t["id"]: t["value"] for t in res["terms"]}
    assert terms["T3"] == 144 and terms["T3d"] == 146 == res["lower_bound"]
    assert res["optimum"] == 146 and res["exact"] is True and res["exact_basis"] == "table"


def test_certify_finds_a_certificate_only_when_asked(capsys):
    # split K = 4: ZB-H1 reaches S1 = 27; without --certify nothing is searched
    args = ("-P", "4", "-m", "8", "-K", "4", "--b-input", "1", "--b-weight", "1")
    res = _bound(capsys, *args)
    assert res["lower_bound"] == 27 and res["exact"] is False and res["exact_basis"] is None
    res = _bound(capsys, *args, "--certify", "20")
    assert res["exact"] is True and res["exact_basis"] == "certificate"


def test_every_term_carries_a_theorem_id(capsys):
    from bounds.evaluate import TERM_IDS

    for args in (("-P", "3", "-m", "4", "-K", "1"), ("-P", "3", "-m", "4", "-K", "2", "-v", "2",
                                                      "--placement", "vshape"),
                 ("-P", "3", "-m", "4", "-K", "2", "--b-input", "1", "--b-weight", "2")):
        for t in _bound(capsys, *args)["terms"]:
            assert t["id"] == TERM_IDS[t["name"]]


@pytest.mark.parametrize("args,limit", [(["-P", "4", "-m", "8", "-v", "1000"], "P*v^2"),
                                        (["-P", "1000000", "-m", "4", "-K", "1"], "MAX_STAGES")])
def test_too_large_instances_are_refused_with_the_limit(capsys, args, limit):
    code, out, err = run(capsys, "bound", *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and limit in err


def test_large_m_and_P_are_closed_forms(capsys):
    # O(1) in m (closed forms, no loop over microbatches); O(1) in P when K is unconstrained
    # (sizes inside the door's limits MAX_PAIRS and MAX_STAGES, docs/reliability.md)
    assert _bound(capsys, "-P", "4", "-m", "500000", "-v", "2", "-K", "2")["lower_bound"] > 0
    assert _bound(capsys, "-P", "60000", "-m", "4")["lower_bound"] == 3 * (60000 + 3)


def test_batch_array_path_equals_the_per_instance_reports(tmp_path, capsys):
    """The array path of --batch (bounds.batch, certify lookups) gives, line for line, the
    object the per-instance path gives, on a mixed batch (single and multi wave, both
    placements, fused and split, every kind of K, table rows, checked ranges) with lines that
    take the per-instance path (rational durations, c, errors) in between."""
    import random

    from pipebounds.cli.bound import bound_report
    from schedules import Instance

    rng = random.Random(5)
    lines, want = [], []
    for k in range(400):
        v = rng.choice([1, 1, 2, 3])
        d = {"P": rng.randint(1, 6), "m": rng.randint(1, 12), "v": v,
             "K": rng.choice([1, 2, 3, None, "inf", 2 * v]),
             "placement": rng.choice(["looped", "vshape"]), "f": rng.randint(1, 3)}
        if rng.random() < 0.4:
            d.update(b_input=rng.randint(1, 3), b_weight=rng.randint(1, 3))
        else:
            d["b"] = rng.randint(1, 4)
        if k % 50 == 7:
            d["f"] = "1/2"            # per-instance path
        if k % 50 == 9:
            d["c"] = 1
        lines.append(json.dumps(d))
        inst = Instance.from_dict(d)
        want.append(json.loads(json.dumps({"instance": inst.to_dict(), **bound_report(inst)})))
    lines.insert(3, '{"P": 2, "m": 2, "K": 0}')
    lines.insert(5, "not json")
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "bound", "--batch", str(path))
    got = json.loads(out)
    assert code == 0 and len(got) == len(want) + 2
    assert "error" in got[3] and "K" in got[3]["error"] and "error" in got[5]
    del got[5], got[3]
    assert got == want
    assert {g["exact_basis"] for g in got} >= {"theorem", "checked", "table", None}


_odd_values = st.one_of(st.integers(-2, 5), st.sampled_from([0, 2 ** 63, 2 ** 70, 1 << 21]),
                        st.booleans(), st.none(), st.sampled_from(["inf", "looped", "vshape",
                                                                   "x", 1.5, 2.0, [1], {}]))


@st.composite
def _near_valid_line(draw):
    """A good instance (some optional fields), then zero to two fields replaced by odd values
    (a bool, a huge int, null, a string, a float, an alias key, ``c``...)."""
    d = draw(st.fixed_dictionaries(
        {"P": st.integers(1, 8), "m": st.integers(1, 40)},
        optional={"K": st.one_of(st.integers(1, 4), st.none(), st.just("inf")),
                  "v": st.integers(1, 3), "f": st.integers(1, 3), "b": st.integers(1, 6),
                  "b_input": st.integers(1, 3), "b_weight": st.integers(1, 3),
                  "placement": st.sampled_from(["looped", "vshape"])}))
    keys = ["P", "m", "K", "v", "placement", "f", "b", "b_input", "b_weight", "b_I", "b_W", "c"]
    for _ in range(draw(st.integers(0, 2))):
        d[draw(st.sampled_from(keys))] = draw(_odd_values)
    return d


@given(st.one_of(
    st.lists(_near_valid_line(), min_size=1, max_size=4),   # columns of one kind: the reader's
    st.lists(st.one_of(                                      # type checks decide alone
        _near_valid_line(),
        st.dictionaries(st.sampled_from(sorted(["P", "m", "K", "v", "placement", "f", "b",
                                                "b_input", "b_weight", "b_I", "c"])),
                        _odd_values),
        _odd_values), max_size=30)))
@example([{"P": True, "m": 4}])
@example([{"P": 2, "m": 4, "K": True}, {"P": 2, "m": 4, "K": 0}])
@example([{"P": 2, "m": 2 ** 70}, {"P": 2, "m": 3, "f": 2.0}])
@example([{"P": 2, "m": 3, "b_input": 1}, {"P": 2, "m": 3, "b": 3, "b_input": 1, "b_weight": 1}])
@example([{"P": 2, "m": 3, "placement": None}, {"P": 2, "m": 3, "b": None}])
@settings(max_examples=150, deadline=None)
def test_batch_array_path_answers_every_line_as_the_per_instance_path(raws):
    """Whatever the line (odd values, aliases, bools, huge ints, missing keys), the result of
    ``bound --batch`` is the per-instance path's: the column reader takes a line only when the
    array path gives the same object (and leaves the rest, errors included, to that path)."""
    from pipebounds.cli.bound import bound_report
    from pipebounds.cli.bound_batch import batch_bound_json, slow_line
    from pipebounds.cli.common import jsonable

    lines = [json.dumps(r).encode() for r in raws]
    want = [json.loads(json.dumps(jsonable(slow_line(ln, k, bound_report))))
            for k, ln in enumerate(lines, 1)]
    for min_lines in (64, 1):   # json.loads line by line; every line read by its shape
        got = (json.loads(batch_bound_json(b"\n".join(lines), bound_report, min_lines))
               if lines else [])
        assert got == want


def test_batch_array_path_writes_the_bytes_of_json_dumps(tmp_path, capsys):
    """The array path writes its text directly (no JSON encoder): the bytes equal
    ``json.dumps`` of the per-instance objects, on a batch of the benchmark's sizes (P up to
    16, m up to 64; fractions of K in the memory terms, table rows, checked ranges, split and
    fused, both placements), blank lines and per-instance lines in between."""
    import random

    from pipebounds.cli.bound import bound_report
    from schedules import Instance

    rng = random.Random(11)
    lines, want = [], []
    for k in range(300):
        v = rng.choice([1, 2, 3])
        d = {"P": rng.randint(1, 16), "m": rng.randint(1, 64), "v": v,
             "K": rng.choice([1, 2, 3, 5, None, "inf"]),
             "placement": rng.choice(["looped", "vshape"]), "f": rng.randint(1, 4)}
        if rng.random() < 0.35:
            d.update(b_input=rng.randint(1, 4), b_weight=rng.randint(1, 4))
        else:
            d["b"] = rng.randint(1, 5)
        if k % 40 == 3:
            d = {"P": rng.randint(3, 5), "m": rng.randint(5, 8), "K": 1, "f": 1, "b": 2}
        if k % 60 == 5:
            d["c"] = 1                 # per-instance path
        lines.append(json.dumps(d) + ("\n" if k % 70 == 9 else ""))
        inst = Instance.from_dict(d)
        want.append({"instance": inst.to_dict(), **bound_report(inst)})
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "bound", "--batch", str(path), "--json")
    assert code == 0
    assert out == json.dumps(want) + "\n"
    got = json.loads(out)
    assert {g["exact_basis"] for g in got} >= {"theorem", "checked", None}
    assert any("/" in t["value_exact"] for g in got for t in g["terms"])   # fractions written


def test_binding_terms_and_basis_detail(capsys):
    """``binding``: the terms equal to the bound (the text's ``<- binding``); ``basis_detail``:
    why the optimum is known, named (theorem id, checked range, table file, certificate)."""
    cases = [(("-P", "4", "-m", "8"), "theorem", "T1", ["fill_drain"]),
             (("-P", "4", "-m", "8", "-K", "1"), "checked", "T3-checked",
              ["memory_time", "single_slot", "single_slot_coupled"]),
             (("-P", "3", "-m", "2", "-K", "1", "-v", "2", "-f", "1", "-b", "1"), "table",
              "optima.jsonl", ["mw_gpu_subset", "mw_first_backward"]),
             (("-P", "4", "-m", "8", "-K", "4", "--b-input", "1", "--b-weight", "1",
               "--certify", "10"), "certificate", "zb-h1",
              ["split_drain", "split_memory_time", "mw_first_backward"]),   # MW11 at v = 1: 27
             (("-P", "9", "-m", "40", "-K", "3", "-v", "2", "-f", "2", "-b", "3"), None, None,
              None)]
    for args, basis, detail, binding in cases:
        res = _bound(capsys, *args)
        assert res["exact_basis"] == basis and res["basis_detail"] == detail, args
        marked = [t["name"] for t in res["terms"] if t["value_exact"] == res["lower_bound_exact"]]
        assert res["binding"] == marked and marked
        if binding is not None:
            assert res["binding"] == binding
        code, out, _ = run(capsys, "bound", *args)
        assert [ln.split()[1] for ln in out.splitlines() if "<- binding" in ln] == marked


def test_batch_line_with_two_values_is_an_error(tmp_path, capsys):
    """A line holding two JSON values (or half of one) is an error on that line, never
    answered with a neighbour's object (the lines were once parsed joined by commas)."""
    path = tmp_path / "b.jsonl"
    path.write_text('{"P": 2, "m": 2}, {"P": 3, "m": 3}\n[1\n2]\n{"P": 2, "m": 2}\n')
    code, out, _ = run(capsys, "bound", "--batch", str(path), "--json")
    got = json.loads(out)
    assert code == 0 and len(got) == 4
    assert all("error" in g for g in got[:3]) and got[3]["lower_bound"] == 9


def test_batch_bytes_with_large_numbers(tmp_path, capsys):
    """Numbers past the writer's table of small ints (2^16) and instance tails past its packed
    key (durations and K near the array path's limits) are written as ``json.dumps`` does."""
    from pipebounds.cli.bound import bound_report
    from schedules import Instance

    lines = [{"P": 3, "m": 1000003, "K": 65536, "f": 1048576, "b": 999999},
             {"P": 5, "m": 70001, "K": 7, "v": 2, "f": 3, "b_input": 1048575, "b_weight": 2},
             {"P": 2, "m": 3, "K": 1, "f": 1, "b": 2},
             {"P": 4, "m": 65537, "K": None, "v": 3, "placement": "looped", "f": 1, "b": 1},
             {"P": 6, "m": 9, "K": 2, "f": 77777, "b": 3}]
    want = [{"instance": Instance.from_dict(d).to_dict(), **bound_report(Instance.from_dict(d))}
            for d in lines]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    code, out, _ = run(capsys, "bound", "--batch", str(path), "--json")
    assert code == 0 and out == json.dumps(want) + "\n"
    assert max(json.loads(out)[0]["lower_bound"], json.loads(out)[3]["lower_bound"]) > 1 << 16
