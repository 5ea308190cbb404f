"""Draw the lesson figures with matplotlib at build time.

Every ``docs/**/figures/<name>.py`` script builds a matplotlib figure named
``fig``. This hook runs it and adds ``<name>.svg`` to the build through the
files collection, so nothing is written into ``docs/`` (writing there would
make ``mkdocs serve`` rebuild forever) and no image is committed.

A page shows a figure with ``![alt text](figures/<name>.svg)`` on its own line;
the hook then appends a collapsed block with the script's source, so the code
the reader sees is the code that drew the picture. A figure without alt text
fails the build.

SVGs are deterministic (fixed hash salt, no date) and cached under
``.cache/figures`` (``hooks/buildcache.py``) by the hash of the script, of
this hook, of the installed packages (matplotlib, numpy) and Python, and of
the kernel the script imports.
"""

from __future__ import annotations

import io
import re
import runpy
import textwrap
from pathlib import Path

import buildcache
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

STYLE = {
    "svg.hashsalt": "math-for-llms",
    "svg.fonttype": "path",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
IMAGE = re.compile(
    r"^!\[(?P<alt>[^\]]*)\]\((?P<src>figures/(?P<name>[\w-]+)\.svg)\)(?P<attrs>\{[^}]*\})?\s*$",
    re.M,
)


def figure_scripts(docs_dir: Path) -> list[Path]:
    return sorted(docs_dir.glob("**/figures/*.py"))


def render(script: Path) -> bytes:
    """Run ``script`` and return its figure ``fig`` as SVG bytes (uncached)."""
    # Imported here, not at the top: a warm build takes every figure from the
    # cache and need not pay the second that importing pyplot costs.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(STYLE):
        namespace = runpy.run_path(str(script), run_name="__figure__")
        fig = namespace.get("fig")
        if fig is None:
            raise PluginError(
                f"{script}: a figure script must define a matplotlib figure named `fig`"
            )
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close("all")
    return buf.getvalue()


def cached_render(script: Path, shared: str) -> bytes:
    """``render(script)`` through the build cache.

    ``shared`` hashes what every figure depends on besides its own script:
    this hook and the kernel (see ``on_files``); ``buildcache.cached`` adds
    Python and the installed packages (matplotlib, numpy).
    """
    key = buildcache.digest([script.read_bytes(), shared])
    return buildcache.cached("figures", script.stem, key, "svg", lambda: render(script))


def on_files(files: Files, config) -> Files:
    docs_dir = Path(config["docs_dir"])
    shared = buildcache.digest([Path(__file__).read_bytes(), buildcache.kernel_digest()])
    for script in figure_scripts(docs_dir):
        uri = script.relative_to(docs_dir).with_suffix(".svg").as_posix()
        files.append(File.generated(config, uri, content=cached_render(script, shared)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    page_dir = Path(config["docs_dir"]) / Path(page.file.src_uri).parent

    def with_source(match: re.Match) -> str:
        script = page_dir / "figures" / f"{match['name']}.py"
        if not match["alt"].strip():
            raise PluginError(f"{page.file.src_uri}: figure {match['src']} has no alt text")
        if not script.exists():
            raise PluginError(f"{page.file.src_uri}: no script {script} draws {match['src']}")
        code = textwrap.indent(script.read_text(encoding="utf-8").rstrip(), "    ")
        return (
            f"{match.group(0).rstrip()}\n\n"
            f'??? example "Code for this figure ({script.name})"\n\n'
            f'    ```python title="{script.relative_to(page_dir).as_posix()}"\n{code}\n    ```\n'
        )

    return IMAGE.sub(with_source, markdown)
