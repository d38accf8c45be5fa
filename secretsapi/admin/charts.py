"""Bar charts as inline SVG, drawn on the server: no script, no CDN, readable by screen readers.

Each chart is one ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` (what it shows and its
totals), labelled axes, a legend, and a ``<title>`` on every bar giving its exact figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 36, 64
# Colour-blind safe (Okabe-Ito): blue for success, vermillion for failure, orange for a warning.
OK_COLOUR, FAILED_COLOUR, NEUTRAL_COLOUR, WARNING_COLOUR = "#0072B2", "#D55E00", "#009E73", "#E69F00"


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    values: Sequence[int]


def bar_chart(chart_id: str, title: str, *, x_label: str, y_label: str, labels: Sequence[str],
              series: Sequence[Series], every_nth_label: int = 1) -> SafeString:
    """Stacked bars, one per label; ``every_nth_label`` thins a crowded axis (every bar keeps its title)."""
    totals = [sum(s.values[i] for s in series) for i in range(len(labels))]
    top = _nice_ceiling(max(totals, default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(labels), 1)
    bar_w = max(slot * 0.7, 1.0)
    bars = []
    for i, label in enumerate(labels):
        base = 0
        for s in series:
            value = s.values[i]
            if value:
                y0 = TOP + plot_h * (1 - (base + value) / top)
                bars.append(format_html(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}">'
                    "<title>{}: {} {}</title></rect>",
                    _n(LEFT + slot * i + (slot - bar_w) / 2), _n(y0), _n(bar_w), _n(plot_h * value / top), s.colour,
                    label, value, s.name))
            base += value
    ticks = [top * k // 4 for k in range(5)]
    y_axis = format_html_join("", '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#ddd"/>'
                              '<text x="{}" y="{}" text-anchor="end" font-size="11">{}</text>',
                              ((LEFT, WIDTH - RIGHT, _n(TOP + plot_h * (1 - t / top)), _n(TOP + plot_h * (1 - t / top)),
                                LEFT - 6, _n(TOP + plot_h * (1 - t / top) + 4), t) for t in ticks))
    x_axis = format_html_join("", '<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text>',
                              ((_n(LEFT + slot * (i + 0.5)), TOP + plot_h + 16, label)
                               for i, label in enumerate(labels) if i % every_nth_label == 0))
    legend = format_html_join("", '<rect x="{}" y="8" width="12" height="12" fill="{}"/>'
                              '<text x="{}" y="18" font-size="12">{}</text>',
                              ((LEFT + 140 * n, s.colour, LEFT + 140 * n + 16, s.name) for n, s in enumerate(series)))
    summary = "; ".join(f"{s.name}: {sum(s.values)} in all" for s in series)
    return format_html(
        '<figure class="chart"><figcaption>{title}</figcaption>'
        '<svg id="{id}" role="img" aria-labelledby="{id}-title {id}-desc" '
        'viewBox="0 0 {w} {h}" width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg" '
        'font-family="sans-serif">'
        '<title id="{id}-title">{title}</title><desc id="{id}-desc">{desc}</desc>'
        "{legend}{y_axis}{bars}"
        '<line x1="{left}" x2="{right}" y1="{base}" y2="{base}" stroke="#333"/>{x_axis}'
        '<text class="x-label" x="{mid}" y="{xl}" text-anchor="middle" font-size="12">{x_label}</text>'
        '<text class="y-label" transform="translate(14 {ymid}) rotate(-90)" text-anchor="middle" '
        'font-size="12">{y_label}</text></svg></figure>',
        id=chart_id, w=WIDTH, h=HEIGHT, title=title, desc=f"{title}. {summary}.", legend=legend, y_axis=y_axis,
        bars=SafeString("".join(bars)), left=LEFT, right=WIDTH - RIGHT, base=TOP + plot_h, x_axis=x_axis,
        mid=_n(LEFT + plot_w / 2), xl=HEIGHT - 12, x_label=x_label, ymid=_n(TOP + plot_h / 2), y_label=y_label,
    )


def _n(value: float) -> str:
    """A coordinate to a tenth (format_html formats its arguments as text)."""
    return f"{value:.1f}"


def _nice_ceiling(value: int) -> int:
    """The axis top: 4, or the next 1, 2 or 5 times a power of ten that splits into 4 whole steps."""
    if value <= 4:
        return 4
    power = int(10 ** int(math.log10(value)))
    for step in (1, 2, 5, 10):
        top = step * power
        if top >= value and top % 4 == 0:
            return top
    return int(math.ceil(value / 4) * 4)
