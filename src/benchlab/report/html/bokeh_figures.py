"""Draws :class:`benchlab.report.figures.Figure` specifications with bokeh (interactive HTML).

Bokeh is imported inside the functions: ``benchlab --version`` and ``benchlab run`` never pay
for it. Every string a user controls (command names in legends, tick labels, hover text)
reaches the page only inside bokeh's JSON document and is drawn on a canvas or through bokeh's
own escaping tooltips (no ``{safe}`` formatter is used), so it is never parsed as HTML.
"""

from __future__ import annotations

from typing import Any

from benchlab.report.figures import Figure, Layer, short_label

_DASH = {"solid": "solid", "dashed": "dashed", "dotted": "dotted"}


def to_bokeh(spec: Figure) -> Any:
    """A bokeh ``figure`` drawing ``spec`` (pan/zoom/hover; legend outside the data)."""
    from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, Span
    from bokeh.plotting import figure

    p = figure(title=spec.title, width=spec.width, height=spec.height,
               x_axis_label=spec.x_label, y_axis_label=spec.y_label,
               x_axis_type="log" if spec.log_x else "linear",
               tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above",
               sizing_mode="stretch_width")
    p.title.text_font_size = "13pt"
    hover_renderers, items = [], []
    for layer in spec.layers:
        r = _draw(p, layer, ColumnDataSource, Span)
        if r is not None and layer.hover:
            hover_renderers.append(r)
        if r is not None and layer.label:
            items.append(LegendItem(label=layer.label, renderers=[r]))
    for r in p.renderers:
        # bokeh.plotting gives every renderer a copy of its glyph for unselected and one for
        # muted data; the report has no selection tool and its legend hides (not mutes), so
        # neither is ever drawn: "auto" (bokeh's default, built in the browser if ever needed)
        # leaves ~10 % of the models out of the document and its JSON
        r.nonselection_glyph = r.muted_glyph = "auto"
    if hover_renderers:
        tooltips = [("series", "@series"), ("x", "@x{0.[0000]}"), ("y", "@y{0.[0000]}")]
        if any(layer.text for layer in spec.layers):
            tooltips.insert(1, ("", "@text"))
        p.add_tools(HoverTool(renderers=hover_renderers, tooltips=tooltips))
    for axis, ticks in ((p.xaxis, spec.x_ticks), (p.yaxis, spec.y_ticks)):
        if ticks:
            axis.ticker = FixedTicker(ticks=list(ticks))
            axis.major_label_overrides = {float(k): short_label(v) for k, v in ticks.items()}
    if spec.x_ticks and max(len(v) for v in spec.x_ticks.values()) > 8:
        p.xaxis.major_label_orientation = 0.5  # radians: long labels side by side overlap
    if items:  # below the plot: a legend inside would hide data, one beside it squeezes it
        p.add_layout(Legend(items=items, click_policy="hide", label_text_font_size="9pt",
                            orientation="horizontal", ncols=min(3, len(items)),
                            glyph_height=12, spacing=2, margin=4), "below")
    return p


def _draw(p: Any, layer: Layer, ColumnDataSource: Any, Span: Any) -> Any:
    d, c = layer.data, layer.color
    kw: dict[str, Any] = {"color": c, "alpha": layer.alpha}
    dash = _DASH.get(layer.dash, "solid")
    if layer.kind in ("line", "step", "scatter"):
        cols = {"x": d["x"], "y": d["y"], "series": [layer.label or ""] * len(d["x"])}
        if layer.text:
            cols["text"] = layer.text
        src = ColumnDataSource(cols)
        if layer.kind == "line":
            return p.line("x", "y", source=src, line_width=2, line_dash=dash, **kw)
        if layer.kind == "step":
            return p.step("x", "y", source=src, mode="after", line_width=2, **kw)
        return p.scatter("x", "y", source=src, size=layer.size, **kw)
    if layer.kind == "quad":
        return p.quad(left=d["left"], right=d["right"], bottom=d["bottom"], top=d["top"],
                      line_color=None, fill_color=c, fill_alpha=layer.alpha)
    if layer.kind == "segment":
        return p.segment(x0=d["x0"], y0=d["y0"], x1=d["x1"], y1=d["y1"],
                         line_width=layer.size, line_dash=dash, **kw)
    if layer.kind == "band":
        return p.varea(x=d["x"], y1=d["low"], y2=d["high"], fill_color=c,
                       fill_alpha=layer.alpha)
    if layer.kind in ("vline", "hline"):
        key = "x" if layer.kind == "vline" else "y"
        for value in d[key]:
            p.add_layout(Span(location=float(value),
                              dimension="height" if key == "x" else "width",
                              line_color=c, line_dash=dash, line_width=2, line_alpha=layer.alpha))
        # Spans have no legend entry: an empty line carries it
        return p.line([], [], line_dash=dash, line_width=2, **kw) if layer.label else None
    raise ValueError(f"unknown layer kind {layer.kind!r}")


def components(figures: list[Figure]) -> tuple[str, list[str]]:
    """Bokeh's (script, one div per figure) for ``figures``, to place into a template."""
    from bokeh.document import Document
    from bokeh.embed import components as bokeh_components

    if not figures:
        return "", []
    plots = [to_bokeh(f) for f in figures]
    # One document holding every figure, its model graph walked once: bokeh's components()
    # would add the figures one by one, walking all the models added so far each time
    doc = Document()
    with doc.models.freeze():
        for p in plots:
            doc.add_root(p)
    script, divs = bokeh_components(plots)  # uses doc as it is: it holds exactly these roots
    return script, list(divs)


def inline_resources() -> str:
    """Bokeh's core JavaScript (~1.3 MB; no widgets, tables, WebGL or MathJax, which the
    report does not use) as inline ``<script>`` tags: the report works offline, no CDN."""
    from bokeh.resources import Resources

    return Resources(mode="inline", components=["bokeh"]).render_js()
