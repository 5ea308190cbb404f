"""The offline copy's differences from the site (``mkdocs.offline.yml`` only).

Material's offline plugin makes search work from ``file://``: the index
becomes a script, and the search Web Worker (which ``file://`` forbids) runs
in an iframe through the ``iframe-worker`` shim. The plugin links that shim
from unpkg.com unless ``extra.polyfills`` already names one; this hook names
its own copy, taken from the npm package (``node_modules/iframe-worker``,
installed from the lock file like KaTeX, see hooks/katex.py), so the copy
never asks a CDN for anything.

It also switches off instant navigation, which fetches each page it opens
(``file://`` blocks that) and needs a server's sitemap.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

SHIM = (
    Path(__file__).resolve().parent.parent / "node_modules" / "iframe-worker" / "shim" / "index.js"
)
SHIM_URI = "assets/javascripts/iframe-worker.js"


@event_priority(100)  # before the offline plugin looks for an iframe-worker polyfill
def on_config(config):
    config.extra["polyfills"] = [*config.extra.get("polyfills", []), SHIM_URI]
    features = config.theme["features"]
    if "navigation.instant" in features:
        features.remove("navigation.instant")
    return config


def on_files(files: Files, config) -> Files:
    if not SHIM.is_file():
        raise PluginError(
            f"iframe-worker not found at {SHIM}; run `make install` (it runs `npm ci`)."
        )
    files.append(File.generated(config, SHIM_URI, abs_src_path=str(SHIM)))
    return files
