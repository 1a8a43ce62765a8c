"""Regenerate the Gantt pictures of docs/img/ (linked from README.md and docs/schedules.md).

    python tools/make_figures.py            # writes docs/img/*.png

Each picture is one schedule of :mod:`schedules.generators` drawn by
:func:`pipebounds.viz.gantt.save_gantt` (ops by kind with their microbatch, idle time visible,
makespan and peak memory in the title, live activations per GPU below).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from schedules import Instance  # noqa: E402
from pipebounds.viz.gantt import save_gantt  # noqa: E402
from schedules.generators import generate  # noqa: E402

FIGURES = [
    ("gantt_1f1b.png", "1f1b", Instance(P=4, m=8)),
    ("gantt_interleaved.png", "interleaved", Instance(P=4, m=8, v=2)),
    ("gantt_zb_h2.png", "zb-h2", Instance(P=4, m=8, b_I=1, b_W=1)),
    ("gantt_1f1b_K1.png", "1f1b", Instance(P=4, m=8, K=1)),
    ("gantt_zbv.png", "zbv", Instance(P=4, m=8, v=2, placement="vshape", b_I=1, b_W=1)),
    ("gantt_v_min.png", "v-min", Instance(P=4, m=8, v=2, placement="vshape", b_I=1, b_W=1)),
    # the bidirectional DualPipe (MODEL.md, Directions): P = 4, and the README's P = 8, m = 20
    # with its overlapped chunks as F&B ops (d_FB = f + b, the figure's cell widths)
    ("gantt_dualpipe_P4.png", "dualpipe", Instance(P=4, m=10, directions=2, b_I=1, b_W=1)),
    ("gantt_dualpipe_P8.png", "dualpipe", Instance(P=8, m=20, directions=2, b_I=1, b_W=1,
                                                   d_FB=3)),
]


def main(out_dir: str = os.path.join(HERE, "img")) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for filename, name, inst in FIGURES:
        path = os.path.join(out_dir, filename)
        save_gantt(generate(name, inst), path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in main(*sys.argv[1:]):
        print(path)
