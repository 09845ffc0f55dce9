"""`slopd baton metrics --plot F.png`: the metrics table drawn, one panel per metric.

matplotlib is the `slopd[plot]` extra and is imported only here, only when a plot is asked
for (with the file-only Agg backend: no display needed); without it, `PlotError` says
how to install it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slopd.baton.metrics import COLUMNS
from slopd.core.errors import SetupError

PANELS = [
    (key, label) for key, label in COLUMNS if key not in ("generation", "confidence_delta", "skills_growth")
]


class PlotError(SetupError):
    pass


def draw(vessel: str, table: list[dict[str, Any]], path: Path) -> None:
    try:
        import matplotlib  # noqa: PLC0415  # an optional extra, loaded only for a plot

        matplotlib.use("Agg")
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'slopd[plot]'") from None
    figure, axes = pyplot.subplots(len(PANELS), 1, figsize=(7, 2 * len(PANELS)), sharex=True, squeeze=False)
    generations = [row["generation"] for row in table]
    for axis, (key, label) in zip(axes[:, 0], PANELS, strict=True):
        points = [
            (generation, row[key])
            for generation, row in zip(generations, table, strict=True)
            if row[key] is not None
        ]
        if points:
            axis.plot([x for x, _ in points], [y for _, y in points], marker="o")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("generation")
    figure.suptitle(f"{vessel}: the baton chain, generation by generation")
    figure.tight_layout()
    figure.savefig(path, format="png")
    pyplot.close(figure)
