"""Inline SVG line charts for the static report: axes, ticks, labels, a legend, and no script.

A chart is data in, markup out. Every text that reaches the markup is escaped here, so callers may pass
labels taken from the repository. Long series are downsampled for display (`downsample` keeps each bucket's
extremes, so a spike stays visible); the `data-total` attribute of a series keeps the true count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

Point = tuple[float, float]

# Colours distinguishable with the common colour-vision deficiencies (Okabe–Ito).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7")
TICKS = 6  # about this many ticks per axis
MARKERS_UP_TO = 60  # points of a series drawn as dots (with a tooltip) when it has at most this many
FONT_PX = 12
CHAR_PX = 7.0  # average width of a digit at FONT_PX, for the left margin


def fmt_number(value: float) -> str:
    """A tick label: integers plainly, thousands as `12k`, others with at most two decimals."""
    if abs(value) >= 10_000:
        return f"{value / 1000:.4g}k"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def fmt_usd(value: float) -> str:
    return f"${value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"${value:,.2f}"


@dataclass(frozen=True)
class Axis:
    label: str
    lo: float | None = None  # a fixed bound; None: from the data, widened to a tick
    hi: float | None = None
    integer: bool = False  # ticks on whole numbers only (cycle numbers, counts)
    format: Callable[[float], str] = fmt_number


@dataclass(frozen=True)
class Series:
    name: str  # the legend's text, and the `data-series` attribute
    points: Sequence[Point]
    color: str = PALETTE[0]
    width: float = 2.0
    unit: str = ""  # appended to a point's value in its tooltip ("sorries")


@dataclass(frozen=True)
class Chart:
    id: str  # the SVG element's id (and prefix of its title and description ids)
    title: str
    x: Axis
    y: Axis
    series: Sequence[Series]
    description: str = ""  # what the chart shows, for screen readers
    width: int = 540
    height: int = 260
    max_points: int = 600  # per series, after downsampling
    legend: bool | None = None  # None: when there is more than one series

    @property
    def has_legend(self) -> bool:
        return len(self.series) > 1 if self.legend is None else self.legend


@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    ticks: list[float]


def nice_step(span: float, count: int = TICKS, integer: bool = False) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about `count` intervals over `span`."""
    raw = span / max(count - 1, 1) if span > 0 else 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if raw <= m * magnitude * (1 + 1e-9))
    if integer:
        step = 1.0 if step < 1 else 2.0 if step == 2.5 else step
    return step


def scale(values: Sequence[float], axis: Axis, count: int = TICKS) -> Scale:
    """The axis range and its ticks: fixed bounds kept (unless the data passes them), free bounds widened to
    the nearest tick."""
    fixed_lo = axis.lo is not None and all(v >= axis.lo for v in values)
    fixed_hi = axis.hi is not None and all(v <= axis.hi for v in values)
    lo = axis.lo if fixed_lo and axis.lo is not None else min(values, default=0.0)
    hi = axis.hi if fixed_hi and axis.hi is not None else max(values, default=max(lo + 1, 1.0))
    if lo == hi:  # one value (or one point): give it room on the free sides
        lo, hi = (lo, lo + 1) if fixed_lo else (lo - 1, hi) if fixed_hi else (lo - 1, hi + 1)
    step = nice_step(hi - lo, count, axis.integer)
    if not fixed_lo:
        lo = math.floor(lo / step + 1e-9) * step
    if not fixed_hi:
        hi = math.ceil(hi / step - 1e-9) * step
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return Scale(lo, hi, [_clean(k * step) for k in range(first, last + 1)])


def downsample(points: Sequence[Point], max_points: int) -> list[Point]:
    """At most `max_points` of `points`, in order: the first, the last, and each bucket's lowest and highest."""
    if len(points) <= max_points:
        return list(points)
    if max_points < 4:
        return [points[0], points[-1]][:max(max_points, 0)]
    inner = points[1:-1]
    buckets = (max_points - 2) // 2
    out = [points[0]]
    for b in range(buckets):
        chunk = inner[b * len(inner) // buckets:(b + 1) * len(inner) // buckets]
        if not chunk:
            continue
        low = min(range(len(chunk)), key=lambda i: chunk[i][1])
        high = max(range(len(chunk)), key=lambda i: chunk[i][1])
        out.extend(chunk[i] for i in sorted({low, high}))
    out.append(points[-1])
    return out


def line_chart(chart: Chart) -> str:
    """The chart as one `<svg>` element, labelled for screen readers (`role="img"`, title, description)."""
    shown = [(s, downsample(s.points, chart.max_points)) for s in chart.series]
    xs = [x for _, pts in shown for x, _ in pts]
    ys = [y for _, pts in shown for _, y in pts]
    xscale, yscale = scale(xs, chart.x), scale(ys, chart.y)
    frame = _Frame.of(chart, yscale)
    cid = escape(chart.id)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{cid}" viewBox="0 0 {chart.width} {chart.height}"'
        f' width="{chart.width}" height="{chart.height}" role="img" aria-labelledby="{cid}-title {cid}-desc"'
        f' font-size="{FONT_PX}">',
        f'<title id="{cid}-title">{escape(chart.title)}</title>',
        f'<desc id="{cid}-desc">{escape(chart.description or chart.title)}</desc>',
        f'<rect class="plot-area" x="{frame.left}" y="{frame.top}" width="{frame.plot_w}" height="{frame.plot_h}"'
        ' fill="#ffffff" stroke="#b8b8b8"/>',
        _y_axis(chart.y, yscale, frame),
        _x_axis(chart.x, xscale, frame),
    ]
    if not xs:
        parts.append(f'<text class="empty" x="{frame.left + frame.plot_w / 2}" y="{frame.top + frame.plot_h / 2}"'
                     ' text-anchor="middle" fill="#555555">No data yet</text>')
    for series, points in shown:
        parts.append(_series(series, points, xscale, yscale, frame, chart))
    if chart.has_legend:
        parts.append(_legend(chart.series, frame))
    parts.append("</svg>")
    return "\n".join(parts)


@dataclass(frozen=True)
class _Frame:
    left: float
    top: float
    plot_w: float
    plot_h: float

    @classmethod
    def of(cls, chart: Chart, yscale: Scale) -> _Frame:
        widest = max((len(chart.y.format(t)) for t in yscale.ticks), default=1)
        left = 22 + 8 + widest * CHAR_PX + 6  # rotated y label, gap, tick labels, tick mark
        top = 26 if chart.has_legend else 12  # room for the legend
        bottom = 44  # tick labels and the x label
        return cls(left, top, chart.width - left - 14, chart.height - top - bottom)

    def px(self, x: float, s: Scale) -> float:
        return self.left + (x - s.lo) / (s.hi - s.lo) * self.plot_w

    def py(self, y: float, s: Scale) -> float:
        return self.top + self.plot_h - (y - s.lo) / (s.hi - s.lo) * self.plot_h


def _y_axis(axis: Axis, s: Scale, f: _Frame) -> str:
    out = ['<g class="axis y-axis">']
    for t in s.ticks:
        y = _r(f.py(t, s))
        out.append(f'<line class="grid" x1="{f.left}" x2="{_r(f.left + f.plot_w)}" y1="{y}" y2="{y}"'
                   ' stroke="#e4e4e4"/>')
        out.append(f'<line x1="{_r(f.left - 5)}" x2="{f.left}" y1="{y}" y2="{y}" stroke="#555555"/>')
        out.append(f'<text x="{_r(f.left - 8)}" y="{y}" text-anchor="end" dominant-baseline="middle"'
                   f' fill="#333333">{escape(axis.format(t))}</text>')
    cy = _r(f.top + f.plot_h / 2)
    out.append(f'<text class="axis-label" x="14" y="{cy}" transform="rotate(-90 14 {cy})" text-anchor="middle"'
               f' fill="#222222">{escape(axis.label)}</text>')
    out.append("</g>")
    return "\n".join(out)


def _x_axis(axis: Axis, s: Scale, f: _Frame) -> str:
    base = _r(f.top + f.plot_h)
    out = ['<g class="axis x-axis">',
           f'<line x1="{f.left}" x2="{_r(f.left + f.plot_w)}" y1="{base}" y2="{base}" stroke="#555555"/>']
    for t in s.ticks:
        x = _r(f.px(t, s))
        out.append(f'<line x1="{x}" x2="{x}" y1="{base}" y2="{_r(base + 5)}" stroke="#555555"/>')
        out.append(f'<text x="{x}" y="{_r(base + 18)}" text-anchor="middle" fill="#333333">'
                   f'{escape(axis.format(t))}</text>')
    out.append(f'<text class="axis-label" x="{_r(f.left + f.plot_w / 2)}" y="{_r(base + 38)}" text-anchor="middle"'
               f' fill="#222222">{escape(axis.label)}</text>')
    out.append("</g>")
    return "\n".join(out)


def _series(series: Series, points: list[Point], xs: Scale, ys: Scale, f: _Frame, chart: Chart) -> str:
    coords = [(_r(f.px(x, xs)), _r(f.py(y, ys))) for x, y in points]
    name = escape(series.name)
    out = [f'<g class="series" data-series="{name}">',
           f'<polyline points="{" ".join(f"{x},{y}" for x, y in coords)}" fill="none" stroke="{series.color}"'
           f' stroke-width="{series.width}" stroke-linejoin="round" stroke-linecap="round"'
           f' data-count="{len(points)}" data-total="{len(series.points)}"/>']
    if len(points) <= MARKERS_UP_TO:
        unit = f" {series.unit}" if series.unit else ""
        for (x, y), (cx, cy) in zip(points, coords, strict=True):
            tip = f"{chart.x.label} {chart.x.format(x)}: {chart.y.format(y)}{unit}"
            out.append(f'<circle cx="{cx}" cy="{cy}" r="{series.width + 1.5}" fill="{series.color}">'
                       f"<title>{escape(tip)}</title></circle>")
    out.append("</g>")
    return "\n".join(out)


def _legend(series: Sequence[Series], f: _Frame) -> str:
    out = ['<g class="legend">']
    x = f.left + f.plot_w
    for s in reversed(series):  # right-aligned, in the series' order
        x -= len(s.name) * CHAR_PX + 30
        out.append(f'<line x1="{_r(x)}" x2="{_r(x + 18)}" y1="10" y2="10" stroke="{s.color}"'
                   f' stroke-width="{s.width + 1}"/>')
        out.append(f'<text x="{_r(x + 23)}" y="10" dominant-baseline="middle" fill="#222222">{escape(s.name)}</text>')
    out.append("</g>")
    return "\n".join(out)


def _r(v: float) -> float:
    return round(v, 1)


def _clean(v: float) -> float:
    """`v` without the float noise of a multiplication (0.30000000000000004 → 0.3)."""
    return round(v, 9) + 0.0
