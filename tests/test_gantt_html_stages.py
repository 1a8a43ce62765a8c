"""The HTML Gantt shades a GPU's later stages lighter, as the picture does (one rule,
`pipebounds.viz.gantt_data.wave_alpha`)."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

from pipebounds.viz.gantt_data import gantt_data, stage_waves, wave_alpha  # noqa: E402
from pipebounds.viz.gantt_html import gantt_figure  # noqa: E402
from schedules import Instance  # noqa: E402
from schedules.generators import generate  # noqa: E402


def test_later_stages_are_lighter_in_the_page_as_in_the_picture():
    sched = generate("interleaved", Instance(P=2, m=4, v=2))
    fig, _ = gantt_figure(sched)
    waves = stage_waves(gantt_data(sched)).tolist()
    seen = {}
    for t in fig.data:
        if t.meta != "ops":
            continue
        for row, alpha in zip(t.customdata, t.marker.opacity):
            seen[row[0]] = alpha
    assert len(seen) == sched.num_ops
    assert all(seen[k] == wave_alpha(w) for k, w in enumerate(waves))
    assert {round(a, 3) for a in seen.values()} == {1.0, 0.7}  # two stages per GPU, two shades


def test_one_wave_is_one_shade():
    sched = generate("1f1b", Instance(P=3, m=4))
    fig, _ = gantt_figure(sched)
    assert {a for t in fig.data if t.meta == "ops" for a in t.marker.opacity} == {1.0}
