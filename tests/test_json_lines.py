"""pipebounds.cli.json_lines: a line read by its shape is the line's ``json.loads``, whatever
the line (odd formatting, digits inside strings or keys, signs, fractions, leading zeros,
duplicate keys, NUL bytes, a BOM, blank lines)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings, strategies as st

from pipebounds.cli import json_lines
from pipebounds.cli.json_lines import read_shapes


def _decoded(shape, i: int) -> dict:
    """The object the shape says its ``i``-th line is."""
    return {**shape.consts, **{k: int(c[i]) for k, c in shape.ints.items()}}


def mismatches(data: bytes, min_lines: int = 1) -> list:
    """The lines taken by a shape whose object is not ``json.loads`` of the line (with the
    same types), and a wrong bookkeeping of blank lines, line numbers or the lines left."""
    shapes, texts, rest, linenos = read_shapes(data, min_lines)
    lines = data.split(b"\n")
    want_idx = [k for k, ln in enumerate(lines) if ln.strip()]
    bad: list = []
    if [texts[i] for i in range(len(texts))] != [lines[k] for k in want_idx]:
        bad.append("texts")
    if linenos != [k + 1 for k in want_idx]:
        bad.append("linenos")
    seen = sorted(rest.tolist() + [k for s in shapes for k in s.lines.tolist()])
    if seen != list(range(len(texts))):
        bad.append("each line once")
    for s in shapes:
        for i, k in enumerate(s.lines.tolist()):
            got, want = _decoded(s, i), json.loads(texts[k])
            if got != want or [type(x) for x in got.values()] != [type(want[x]) for x in got]:
                bad.append((texts[k], got))
    return bad


_keys = st.sampled_from(["P", "m", "K", "v", "f", "b", "b_input", "placement", "P1", "x2",
                         "\u00e9", ""])
_values = st.one_of(st.integers(0, 10 ** 20), st.integers(-5, -1), st.none(), st.booleans(),
                    st.sampled_from([1.5, 2.0, 1e3, "inf", "looped", "x7", "1/2", "", [1, 2],
                                     {"a": 3}, []]))
_formats = st.sampled_from([(", ", ": "), (",", ":"), (" , ", " :  ")])


@st.composite
def batches(draw):
    """Lines of a few formats, each repeated with other values (so that shapes hold several
    lines), with a chance of one character inserted (a digit, sign, quote, escape...)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        keys = draw(st.lists(_keys, min_size=0, max_size=5))
        sep = draw(_formats)
        ascii_ = draw(st.booleans())
        for _ in range(draw(st.integers(1, 5))):
            obj = {k: draw(_values) for k in keys}
            text = json.dumps(obj, separators=sep, ensure_ascii=ascii_)
            if draw(st.integers(0, 3)) == 0:
                at = draw(st.integers(0, len(text)))
                text = text[:at] + draw(st.sampled_from(list("0-.e\"\\ \t1u"))) + text[at:]
            if draw(st.booleans()) and len(keys) > 1:   # a duplicate key
                text = text[:-1] + sep[0] + json.dumps(keys[0]) + sep[1] + "7}"
            out.append(text + draw(st.sampled_from(["", "", "\r", " "])))
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(st.sampled_from(["", "  ", "\t"])))
    return "\n".join(out).encode()


@given(batches())
@example(b'{"P": 07, "m": 2}\n{"P": 7, "m": 2}')              # leading zero: not JSON
@example(b'{"P": -1}\n{"P": 1.5}\n{"P": 1e3}\n{"P": 10}')         # sign, fraction, exponent
@example(b'{"P1": 2}\n{"p": "x1"}\n{"\\u0050": 3}\n{"P": 2}')     # digits in keys, strings
@example(b'{"P": 2, "P": 3}\n{"P": 22, "P": 33}')                 # duplicate keys
@example(b'{"P": 2}, {"P": 3}\n[1\n2]\n{"P": 4}')                  # several values on a line
@example(b'\xef\xbb\xbf{"P": 2}\n{"P": 3}\r\n  \n\n{"P": 1234567890123456789}\n')
@example(b'{"P": 2, "m": 3}\n{"P": 2, "m": \x00}\n')              # a NUL byte
@settings(max_examples=150, deadline=None)
def test_a_line_read_by_its_shape_is_its_json(data):
    assert mismatches(data) == []


def test_the_common_lines_are_read_by_shape_and_the_others_are_left():
    common = [json.dumps({"P": p, "m": 2 * p + 1, "K": None, "placement": "vshape"})
              for p in range(100, 300)]             # one shape: 3 digits each
    odd = ['{"P": 07}', '{"P": -1}', '{"P": 1.5}', '{"P": "3"}', '{"P": 2, "P": 3}',
           '{"P": 12345678901234567890}', "not json", '{"P": 2}, {"P": 3}']
    data = "\n".join(common + odd * 70).encode()
    shapes, texts, rest, linenos = read_shapes(data, 64)
    taken = {k for s in shapes for k in s.lines.tolist()}
    assert taken == set(range(len(common)))          # the common shape, all of it
    assert rest.tolist() == list(range(len(common), len(texts)))
    assert shapes[0].consts == {"K": None, "placement": "vshape"}
    assert shapes[0].ints["m"].tolist() == [2 * p + 1 for p in range(100, 300)]
    assert mismatches(data, 64) == []
    assert read_shapes(data, 64, {"P", "m", "K"})[0] == []            # a key not allowed
    assert len(read_shapes(data, 64, {"P", "m", "K", "placement"})[0]) == 1
    assert read_shapes(data.replace(b"not json", b"\x00"), 64)[0] == []   # a NUL: no shapes


def test_a_wrong_reader_is_caught(monkeypatch):
    """The check can fail: digit runs read with wrong powers of ten differ from json.loads."""
    data = "\n".join(json.dumps({"P": p, "m": 3}) for p in range(10, 40)).encode()
    assert mismatches(data) == []
    monkeypatch.setattr(json_lines, "_POW10", json_lines._POW10 * 2)
    assert mismatches(data)


@pytest.mark.parametrize("min_lines", [1, 64])
def test_batch_output_is_the_same_whichever_path_reads_the_lines(min_lines):
    """``bound --batch`` gives the same text when every line is read by ``json.loads``
    (min_lines above the batch) as when lines are read by shape."""
    from pipebounds.cli.bound import bound_report
    from pipebounds.cli.bound_batch import batch_bound_json

    lines = [json.dumps({"P": p % 7 + 1, "m": p % 13 + 1, "K": [1, 2, None, "inf"][p % 4],
                         "v": p % 3 + 1, "placement": ["looped", "vshape"][p % 2],
                         "f": p % 3 + 1, **({"b": p % 4 + 1} if p % 3 else
                                            {"b_input": 1, "b_weight": p % 2 + 1})})
             for p in range(300)]
    lines[5] = '{"P": 2, "m": 3, "f": "1/2"}'
    lines[9] = '{"P": 2, "m": 03}'
    data = "\n".join(lines).encode()
    assert (batch_bound_json(data, bound_report, min_lines)
            == batch_bound_json(data, bound_report, 10 ** 9))
