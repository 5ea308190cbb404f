"""Draw the lesson figures with matplotlib at build time.

Every ``docs/**/figures/<name>.py`` script builds a matplotlib figure named
``fig``. This hook runs it and adds ``<name>.svg`` to the build through the
files collection, so nothing is written into ``docs/`` (writing there would
make ``mkdocs serve`` rebuild forever) and no image is committed.

A page shows a figure with ``![alt text](figures/<name>.svg)`` on its own line;
the hook then appends a collapsed block with the script's source, so the code
the reader sees is the code that drew the picture. A figure without alt text
fails the build.

SVGs are deterministic (fixed hash salt, no date: ``pool.FIGURE_STYLE``) and
cached under ``.cache/figures`` (``hooks/buildcache.py``) by the hash of the
script, of this hook and ``hooks/pool.py``, of the installed packages
(matplotlib, numpy) and Python, and of the kernel the script imports. The
figures missing from the cache are drawn in worker processes
(``hooks/pool.py``) while the pages render, and collected in ``on_env``, just
before MkDocs copies the files into the site.
"""

from __future__ import annotations

import re
import textwrap
from concurrent.futures import Future
from pathlib import Path

import buildcache
import pool
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

IMAGE = re.compile(
    r"^!\[(?P<alt>[^\]]*)\]\((?P<src>figures/(?P<name>[\w-]+)\.svg)\)(?P<attrs>\{[^}]*\})?\s*$",
    re.M,
)
SOURCES = [Path(__file__).read_bytes(), Path(pool.__file__).read_bytes()]
_DRAWING: list[tuple[File, Path, str, Future]] = []  # figures being drawn for this build


def figure_scripts(docs_dir: Path) -> list[Path]:
    return sorted(docs_dir.glob("**/figures/*.py"))


def cache_stem(script: Path) -> str:
    """The script's cache name, ``<lesson>-<name>``: two lessons may each have a
    ``figures/bridge-pipeline.py``, and the cache keeps one entry per name."""
    return f"{script.parent.parent.name}-{script.stem}"


def render(script: Path) -> bytes:
    """Run ``script`` here and return its figure ``fig`` as SVG bytes (uncached)."""
    return pool.render_figure(str(script))


def on_files(files: Files, config) -> Files:
    docs_dir = Path(config["docs_dir"])
    shared = buildcache.digest([*SOURCES, buildcache.kernel_digest()])
    _DRAWING.clear()
    for script in figure_scripts(docs_dir):
        uri = script.relative_to(docs_dir).with_suffix(".svg").as_posix()
        key = buildcache.digest([script.read_bytes(), shared])
        svg = buildcache.lookup("figures", cache_stem(script), key, "svg")
        file = File.generated(config, uri, content=svg or b"")
        if svg is None:
            _DRAWING.append((file, script, key, pool.submit(pool.render_figure, str(script))))
        files.append(file)
    return files


def on_env(env, config, files):
    for file, script, key, drawing in _DRAWING:
        try:
            svg = drawing.result()
        except Exception as exc:
            raise PluginError(f"{script}: the figure script failed: {exc!r}") from exc
        buildcache.store("figures", cache_stem(script), key, "svg", svg)
        file.content_bytes = svg
    _DRAWING.clear()
    return env


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
