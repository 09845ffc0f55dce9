"""Fitness across generations as an SVG line chart, drawn by slopd (no script, no CDN). Pure.

Rules:
1. One polyline per series, over the generations that have a value; a gap is skipped, never
   drawn as zero. The y axis spans the values (a flat series gets a band of ±1).
2. The chart is an `<svg role="img">` with a `<title>` naming what it shows and a `<desc>`
   listing every point, so it reads without seeing it; colours are presentation attributes,
   never `style`, so the strict Content-Security-Policy holds.
3. Text is escaped; values are plain floats, whatever the history file held (`baton.metrics`).
"""

from __future__ import annotations

from html import escape

_W, _H, _PAD = 320, 160, 28
COLOURS = ("#2563eb", "#d97706", "#059669")


def line_chart(title: str, series: dict[str, list[tuple[int, float | None]]]) -> str:
    """Rules 1-3: `series` maps a name to its (generation, value) points."""
    points = [(g, v) for values in series.values() for g, v in values if v is not None]
    description = "; ".join(
        f"{name}: " + ", ".join(f"generation {g} {v:g}" for g, v in values if v is not None)
        for name, values in series.items()
    )
    head = (
        f'<svg role="img" viewBox="0 0 {_W} {_H}" xmlns="http://www.w3.org/2000/svg" class="chart">'
        f"<title>{escape(title)}</title><desc>{escape(description or 'no values yet')}</desc>"
    )
    if not points:
        return head + f'<text x="{_W // 2}" y="{_H // 2}" text-anchor="middle">no values yet</text></svg>'
    low_g, high_g = min(g for g, _ in points), max(g for g, _ in points)
    low_v, high_v = min(v for _, v in points), max(v for _, v in points)
    if high_v == low_v:
        low_v, high_v = low_v - 1, high_v + 1

    def x(g: int) -> float:
        return _PAD + (g - low_g) / max(high_g - low_g, 1) * (_W - 2 * _PAD)

    def y(v: float) -> float:
        return _H - _PAD - (v - low_v) / (high_v - low_v) * (_H - 2 * _PAD)

    parts = [
        head,
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#888"/>',
        f'<text x="{_PAD}" y="{_H - 8}" font-size="10">gen {low_g}</text>',
        f'<text x="{_W - _PAD}" y="{_H - 8}" font-size="10" text-anchor="end">gen {high_g}</text>',
        f'<text x="2" y="{_PAD}" font-size="10">{high_v:g}</text>',
        f'<text x="2" y="{_H - _PAD}" font-size="10">{low_v:g}</text>',
    ]
    for index, (name, values) in enumerate(series.items()):
        colour = COLOURS[index % len(COLOURS)]
        coords = " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in values if v is not None)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
        parts.append(
            f'<text x="{_W - _PAD}" y="{14 + 12 * index}" font-size="10" fill="{colour}" '
            f'text-anchor="end">{escape(name)}</text>'
        )
    return "".join(parts) + "</svg>"
