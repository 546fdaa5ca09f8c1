"""A rating history as an SVG line chart, drawn on the server: no script, no style
sheet of its own (attributes only, so the page's Content-Security-Policy holds), and a
title and description for screen readers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT, MARGIN = 320, 120, 28


@dataclass(frozen=True)
class Chart:
    svg: str  # the <svg> element, ready to place in the page
    low: float
    high: float


def rating_chart(title: str, values: Sequence[float]) -> Chart | None:
    """The values, oldest first, as a line; None for fewer than two points."""
    if len(values) < 2:
        return None
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (WIDTH - 2 * MARGIN) / (len(values) - 1)
    points = " ".join(
        f"{MARGIN + i * step:.1f},{HEIGHT - MARGIN - (v - low) / span * (HEIGHT - 2 * MARGIN):.1f}"
        for i, v in enumerate(values)
    )
    summary = (
        f"{title}: from {values[0]:.0f} to {values[-1]:.0f}, lowest {low:.0f}, highest {high:.0f}"
    )
    svg = (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="c-{_id(title)}" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="c-{_id(title)}">{escape(summary)}</title>'
        f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" '
        f'y2="{HEIGHT - MARGIN}" stroke="#666" stroke-width="1"/>'
        f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" '
        f'stroke="#666" stroke-width="1"/>'
        f'<text x="2" y="{MARGIN + 4}" font-size="10" fill="#222">{high:.0f}</text>'
        f'<text x="2" y="{HEIGHT - MARGIN + 4}" font-size="10" fill="#222">{low:.0f}</text>'
        f'<polyline points="{points}" fill="none" stroke="#14508c" stroke-width="2"/>'
        "</svg>"
    )
    return Chart(svg, low, high)


def _id(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())
