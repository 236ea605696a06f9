"""The self-contained HTML report: overview with plots, episodes on demand, comparison of runs.

``build_html(runs)`` turns runs read back from episode logs into one HTML file that needs
no network: plots are inline SVG, the page's script and style are inlined, and the
episodes are embedded compressed and opened one chunk at a time in the browser.
"""

from __future__ import annotations

from .page import build_html, write_html
from .runs import Run, read_runs

__all__ = ["Run", "build_html", "read_runs", "write_html"]
