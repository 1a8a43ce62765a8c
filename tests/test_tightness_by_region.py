"""tools/tightness_by_region.py: regions, the loosest instance and the table's place in
docs/theory.md, on a few rows given to it (the stored data are read by the script itself)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from bounds import lower_bound
from schedules import Instance

from tool_module import load_tool

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    return load_tool("tightness_by_region")


def test_regions_and_loosest():
    tool = _tool()
    a = Instance(P=3, m=8, K=2, f=3, b=2)          # fused single wave, K >= 2
    b = Instance(P=2, m=4, K=2, f=1, b=2)
    k1 = Instance(P=2, m=3, K=1, f=1, b=1)
    lb_a, lb_b, lb_k1 = (lower_bound(i).value for i in (a, b, k1))
    data = [(b, "plain", lb_b, {}), (a, "plain", lb_a + 2, {}), (k1, "plain", lb_k1, {})]
    lines, loosest = tool.table(data)
    assert set(loosest) == {"v1_fused", "k1"}
    inst, model, opt, lb, _ = loosest["v1_fused"]
    assert inst == a and opt == lb_a + 2 and lb == lb_a
    fused = next(x for x in lines if x.startswith("| single wave, fused"))
    cells = [c.strip() for c in fused.strip("|").split("|")]
    assert cells[1:4] == ["2", "1", f"{float((Fraction(1) + (lb_a + 2) / lb_a) / 2):.4f}"]
    assert "img/tight_v1_fused.png" in fused
    empty = next(x for x in lines if x.startswith("| multi-wave, finite"))
    assert empty.split("|")[2].strip() == "0"


def test_the_full_model_uses_the_backward_bound():
    tool = _tool()
    inst = Instance(P=3, m=3, K=2, f=3, b_I=3, b_W=1)   # S1 = 32 > OPT of the full model 31
    back = lower_bound(inst, backward_remat=True).value
    _, loosest = tool.table([(inst, "backward", Fraction(31), {})])
    assert loosest["backward"][3] == back < lower_bound(inst).value


def test_theory_has_the_generated_table():
    tool = _tool()
    text = (ROOT / "docs" / "theory.md").read_text()
    assert text.count(tool.BEGIN) == 1 and text.count(tool.END) == 1
    part = text[text.index(tool.BEGIN):text.index(tool.END)]
    assert part.count("img/tight_") == len(tool.REGIONS)
    for key, _, _ in tool.REGIONS:
        assert (ROOT / "docs" / "img" / f"tight_{key}.png").exists(), key
    assert tool.replace_in_theory(["| x |"], text).count("| x |") == 1
