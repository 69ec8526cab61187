"""Draws :class:`benchlab.report.figures.Figure` specifications with matplotlib: PNG and SVG.

For ``--plots DIR`` and the Markdown report's linked figures. matplotlib is imported inside
the functions (``benchlab --version`` never pays for it), through ``matplotlib.figure.Figure``
rather than pyplot, so no GUI backend or global figure state is involved.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchlab.errors import UserError
from benchlab.report.figures import Figure, short_label

_DASH = {"solid": "-", "dashed": "--", "dotted": ":"}
FORMATS = ("png", "svg")


def draw(spec: Figure):
    """A matplotlib Figure drawing ``spec`` (legend below the axes, like the HTML one)."""
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(spec.width / 100, max(2.4, spec.height / 100 + 0.8)),
                    layout="constrained")
    ax = fig.add_subplot()
    for layer in spec.layers:
        _draw_layer(ax, layer)
    ax.set_title(spec.title)
    ax.set_xlabel(spec.x_label)
    ax.set_ylabel(spec.y_label)
    if spec.log_x:
        ax.set_xscale("log")
    if spec.x_ticks:
        ax.set_xticks(list(spec.x_ticks), [short_label(v) for v in spec.x_ticks.values()],
                      rotation=30,
                      ha="right", fontsize=7)
    if spec.y_ticks:
        ax.set_yticks(list(spec.y_ticks), [short_label(v) for v in spec.y_ticks.values()])
    ax.grid(alpha=0.3)
    if any(layer.label for layer in spec.layers):
        fig.legend(loc="outside lower center", ncols=3, fontsize=7, frameon=False)
    return fig


def _draw_layer(ax, layer) -> None:
    """One layer of a figure specification on matplotlib axes ``ax``, by its kind."""
    d, c, ls = layer.data, layer.color, _DASH.get(layer.dash, "-")
    kw = {"color": c, "alpha": layer.alpha, "label": layer.label}
    if layer.kind == "line":
        ax.plot(d["x"], d["y"], linestyle=ls, linewidth=1.6, **kw)
    elif layer.kind == "step":
        ax.step(d["x"], d["y"], where="post", linewidth=1.6, **kw)
    elif layer.kind == "scatter":
        ax.scatter(d["x"], d["y"], s=layer.size ** 2 * 0.8, linewidths=0, **kw)
    elif layer.kind == "quad":
        ax.bar(d["left"], d["top"] - d["bottom"], width=d["right"] - d["left"],
               bottom=d["bottom"], align="edge", linewidth=0, **kw)
    elif layer.kind == "segment":
        for i in range(len(d["x0"])):
            ax.plot([d["x0"][i], d["x1"][i]], [d["y0"][i], d["y1"][i]], linestyle=ls,
                    linewidth=layer.size * 0.8, color=c, alpha=layer.alpha,
                    label=layer.label if i == 0 else None)
    elif layer.kind == "band":
        ax.fill_between(d["x"], d["low"], d["high"], linewidth=0, **kw)
    elif layer.kind in ("vline", "hline"):
        line = ax.axvline if layer.kind == "vline" else ax.axhline
        for i, v in enumerate(d["x" if layer.kind == "vline" else "y"]):
            line(v, color=c, linestyle=ls, linewidth=1.4, alpha=layer.alpha,
                 label=layer.label if i == 0 else None)
    else:
        raise ValueError(f"unknown layer kind {layer.kind!r}")


def write_plots(figures: list[Figure], directory: str | os.PathLike, *,
                formats: tuple[str, ...] = FORMATS, dpi: int = 110) -> list[Path]:
    """Write each figure as ``DIR/<key>.<format>``; return the paths written.

    Keys are slugs (:func:`benchlab.report.figures.slug`), so a hostile benchmark name cannot
    write outside ``DIR``. A file is written to a temporary name and renamed into place.
    """
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the plots directory {out}: {exc.strerror}; "
                        f"choose another --plots DIR") from None
    written = []
    for spec in figures:
        fig = draw(spec)
        for fmt in formats:
            path = out / f"{spec.key}.{fmt}"
            tmp = out / f".{spec.key}.{fmt}.tmp"
            try:
                fig.savefig(tmp, format=fmt, dpi=dpi)
                os.replace(tmp, path)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise UserError(f"cannot write {path}: {exc.strerror}; choose another "
                                f"--plots DIR") from None
            written.append(path)
    return written
