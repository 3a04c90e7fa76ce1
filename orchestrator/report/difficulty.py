"""The dashboard's difficulty panel: the open targets' difficulty by chapter, the hardest of them, and the
burn-down with its forecast band (`autoformalize forecast`, drawn from the same document).

Every name here was chosen by a Worker and every text is escaped before it reaches the page, as in `site`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from difficulty.forecast import Forecast, basis, money
from orchestrator.report import svg

HARDEST = 10  # targets listed by name, hardest first
BAND = "#e69f00"  # the forecast's P10 and P90 lines (Okabe–Ito orange, lighter than the median's)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def panel(forecast: Forecast | None, sorries: Sequence[svg.Point]) -> str:
    """The section: nothing without a forecast (no census could be read)."""
    if forecast is None:
        return ""
    c = forecast.remaining.cycles
    if forecast.targets and (c.p10 is None or c.p50 is None or c.p90 is None):
        summary = (f"{len(forecast.targets)} open targets; no forecast yet: no recorded cycle closed a target, so "
                   "there is no rate to go by.")
    elif forecast.targets:
        summary = (f"{len(forecast.targets)} open targets; closing them all takes {c.p50:g} cycles (P50), "
                   f"{c.p10:g} to {c.p90:g} (P10–P90); {money(forecast)}; {basis(forecast)} at cycle "
                   f"{forecast.cycle} ({forecast.attempts} attempts, {forecast.method}). Sorries opened later are "
                   "not foreseen.")
    else:
        summary = "No open target: nothing holds a sorry."
    warnings = "".join(f'<p class="warning">{_e(w)}</p>' for w in forecast.warnings)
    return ('<section id="difficulty" aria-labelledby="difficulty-h"><h2 id="difficulty-h">Difficulty and forecast'
            f'</h2><p id="forecast-line">{_e(summary)}</p>{warnings}{_chapters(forecast)}{_hardest(forecast)}'
            f"{_burndown(forecast, sorries)}</section>")


def _chapters(f: Forecast) -> str:
    if not f.chapters:
        return ""
    rows = "".join(f'<tr data-chapter="{_e(r.chapter)}"><th scope="row">{_e(r.chapter)}</th>'
                   f'<td class="num">{r.targets}</td><td class="num">{_bar(r.mean)}</td>'
                   f'<td class="num">{r.hardest:.2f}</td></tr>' for r in f.chapters)
    return ('<h3>Difficulty by chapter</h3><p class="note">The mean and the highest difficulty of each chapter\'s '
            'open targets: the chance an attempt by a Worker of average ability fails, fitted on the loop\'s '
            'attempts.</p><div class="scroll"><table id="difficulty-chapters"><thead><tr>'
            '<th scope="col">Chapter</th><th scope="col" class="num">Open targets</th>'
            '<th scope="col" class="num">Mean difficulty</th><th scope="col" class="num">Hardest</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def _bar(value: float) -> str:
    return (f'{value:.2f}<span class="bar" role="presentation"><span style="width:{100 * value:.0f}%"></span>'
            "</span>")


def _hardest(f: Forecast) -> str:
    if not f.targets:
        return ""
    rows = "".join(f'<tr><th scope="row"><code>{_e(t.declaration)}</code></th><td>{_e(t.file)}</td>'
                   f'<td class="num">{t.difficulty:.2f}</td><td class="num">{t.attempts}</td>'
                   f'<td class="num">{t.p_next:.2f}</td></tr>' for t in f.targets[:HARDEST])
    more = f'<p class="note">{len(f.targets) - HARDEST} more in <code>autoformalize forecast</code>.</p>' \
        if len(f.targets) > HARDEST else ""
    return ('<h3>Hardest open targets</h3><div class="scroll"><table id="difficulty-targets"><thead><tr>'
            '<th scope="col">Declaration</th><th scope="col">File</th><th scope="col" class="num">Difficulty</th>'
            '<th scope="col" class="num">Attempts</th><th scope="col" class="num">Chance at the next</th></tr>'
            f"</thead><tbody>{rows}</tbody></table></div>{more}")


def _burndown(f: Forecast, sorries: Sequence[svg.Point]) -> str:
    """The sorries after each recorded cycle, then the forecast's P10, P50 and P90 of the open targets' sorries
    left, from the last recorded cycle on; before the first cycle, no plot (as the other charts)."""
    if not sorries:
        return ('<p class="note" id="no-burndown">No cycle yet: the burn-down and its forecast band start with the '
                "first cycle.</p>")
    start = float(f.cycle)
    series = [svg.Series("recorded", list(sorries), svg.PALETTE[0], unit="sorries")]
    if f.band:
        for name, pick, colour, width in (("forecast P90", lambda p: p.p90, BAND, 1.4),
                                          ("forecast P50", lambda p: p.p50, svg.PALETTE[1], 2.2),
                                          ("forecast P10", lambda p: p.p10, BAND, 1.4)):
            series.append(svg.Series(name, [(start + p.cycle, pick(p)) for p in f.band], colour, width,
                                     unit="sorries left"))
    chart = svg.Chart("chart-burndown", "Burn-down and its forecast", svg.Axis("cycle", integer=True),
                      svg.Axis("sorries", lo=0, integer=True), series,
                      f"Sorries after each recorded cycle ({len(sorries)} cycles), then the forecast band: the "
                      "sorries the open targets still hold at each later cycle, P10, P50 and P90.", legend=True)
    return (f'<figure><figcaption><h3>{_e(chart.title)}</h3><p>The recorded sorries and admits, then, from cycle '
            f"{f.cycle}, the sorries the targets open now still hold: half the simulated runs end below the P50 "
            f"line, eight in ten between P10 and P90.</p></figcaption>{svg.line_chart(chart)}</figure>")
