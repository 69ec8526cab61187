"""Opens a report in real headless Chromium and reports what the page did.

A copy of the report gets two probes: one at the top of ``<head>`` (before bokeh's scripts)
records ``console.error`` calls and uncaught errors; one after ``load`` measures every figure's
rendered box, counts the canvases bokeh drew (through shadow roots), reads the sentinel
``window.__pwned`` that hostile test data would set if any of it ran as script, and writes all
of it as JSON into the DOM, which ``--dump-dom`` prints. The network is blocked (a dead proxy),
so a report that needed a CDN would show no figures.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import needs_tool

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = needs_tool("chromium-browser" if shutil.which("chromium-browser")
                            else "chromium")  # skipped here without it, failed in CI

HEAD_PROBE = """<script>
window.__errors = [];
(function () {
  var original = console.error;
  console.error = function () { window.__errors.push(Array.prototype.join.call(arguments, " "));
                                return original.apply(console, arguments); };
  window.addEventListener("error", function (e) { window.__errors.push("uncaught: " + e.message); });
})();
</script>"""

BODY_PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  function canvases(node) {
    var n = 0;
    node.querySelectorAll("*").forEach(function (el) {
      if (el.tagName === "CANVAS") n += 1;
      if (el.shadowRoot) n += canvases(el.shadowRoot);
    });
    return n;
  }
  var out = {figures: [], errors: window.__errors, pwned: String(window.__pwned),
             javascript_links: document.querySelectorAll("a[href^='javascript' i]").length};
  document.querySelectorAll(".fig").forEach(function (f) {
    var root = f.querySelector("div[data-root-id]");
    var el = root && root.firstElementChild;
    var r = el ? el.getBoundingClientRect() : {width: 0, height: 0};
    out.figures.push({width: Math.round(r.width), height: Math.round(r.height),
                      canvases: el ? canvases(el.shadowRoot || el) : 0});
  });
  var pre = document.createElement("pre");
  pre.id = "benchlab-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 2000); });
</script>"""


@dataclass
class PageResult:
    """What Chromium saw: figure boxes, console errors, the sentinel, the DOM, stderr."""

    figures: list[dict]
    errors: list[str]
    pwned: str
    javascript_links: int
    dom: str
    stderr: str


def _flags(tmp: Path) -> list[str]:
    return [CHROMIUM, "--headless=new", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
            "--proxy-server=127.0.0.1:9", f"--user-data-dir={tmp / 'chromium-profile'}",
            "--virtual-time-budget=15000", "--enable-logging=stderr", "--v=0"]


def open_report(report: Path, tmp: Path, shot: Path | None = None,
                height: int = 1000) -> PageResult:
    """Load ``report`` (with the probes, as a copy in ``tmp``) and return what happened.

    ``shot``: also a full-width PNG screenshot (to look at) of the page ``height`` px tall (the
    window's height then), in the same Chromium start (a second start rendered the whole
    report again: ~3.5 s of CPU).
    """
    html = report.read_text()
    probed = tmp / ("probed-" + report.name)
    head_at = html.index("<head>") + len("<head>")
    probed.write_text(html[:head_at] + HEAD_PROBE + html[head_at:].replace(
        "</body>", BODY_PROBE + "</body>"))
    argv = [*_flags(tmp), "--window-size=1300,1000", "--dump-dom"]
    if shot is not None:
        shot.parent.mkdir(parents=True, exist_ok=True)
        argv[-2:-1] = [f"--window-size=1300,{height}", f"--screenshot={shot}"]
    proc = subprocess.run([*argv, probed.as_uri()], capture_output=True, text=True,
                          timeout=120)
    match = re.search(r'<pre id="benchlab-probe">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"the probe did not run; chromium said:\n{proc.stderr[-3000:]}"
    if shot is not None:
        assert shot.is_file() and shot.stat().st_size > 10_000, proc.stderr[-3000:]
    data = json.loads(match.group(1).replace("&quot;", '"').replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))
    uncaught = [l for l in proc.stderr.splitlines() if ":CONSOLE" in l and "Uncaught" in l]
    return PageResult(data["figures"], data["errors"] + uncaught, data["pwned"],
                      data["javascript_links"], proc.stdout, proc.stderr)
