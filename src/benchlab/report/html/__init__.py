"""Self-contained HTML reports: jinja2 templates in ``templates/``, figures drawn by bokeh.

Public entry points: :func:`benchlab.report.html.render.render_html` and
:func:`benchlab.report.html.render.write_atomically`. Nothing heavy is imported here.
"""
