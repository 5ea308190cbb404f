"""Each lesson page as a notebook (``hooks/page_notebooks.py``): made from the page, and it runs.

Three layers:

* **the page, parsed as the build parses it** (``page_items``, no build
  needed): every example sybil collects on the page is a code cell, in order,
  with its prompts gone and its expected output kept as a comment;
* **the built site** (``site/``, or the folder in ``$MFL_SITE_DIR``): each
  lesson page with examples has ``<page>.ipynb`` beside it and a "Download as
  notebook" link to it; every notebook is valid, installs the kernel first,
  and every link in it lands on a page, figure and anchor that exist;
* **a reader's download runs**: the built notebooks are executed headless
  (nbclient) in a clean venv that has no kernel until the notebooks' first
  cell, ``%pip install math-for-llms==<version>``, installs it from the wheel
  ``tools/dist.py`` builds (pip is pointed at that wheel and at no index): that
  cell, the same in every notebook, runs once (``wheel_kernel``), the rest of
  each notebook in a kernel of its own. The venv's other packages (numpy,
  ipykernel, pytest) come from this environment (``clean_venv`` in
  ``conftest.py``), so this runs offline. About two seconds a notebook:
  marked ``slow``; ``make test`` runs a sample and every page with
  uncommitted changes, .ci/run every notebook (``notebooks_to_run``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import nbformat
import pytest
from mkdocs.exceptions import PluginError
from sybil import Document

import llmmath

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NAME = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
SITE_URL = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M)[1]
SITE_URL = SITE_URL.rstrip("/") + "/"


def _load(relative: str, name: str):
    """Import a file once per session (as conftest's ``load``, needed here at collection)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / relative)
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses need it
        spec.loader.exec_module(module)
    return sys.modules[name]


HOOK = _load("hooks/page_notebooks.py", "mfl_hooks_page_notebooks")
CONFTEST = _load("docs/conftest.py", "mfl_docs_conftest")  # the pages' sybil set-up

PAGES = sorted(
    p for p in DOCS.glob("*/*.md") if HOOK.is_lesson_page(p.relative_to(DOCS).as_posix())
)


def _items(page: Path):
    return HOOK.page_items(page.read_text(encoding="utf-8"), str(page))[1]


def _has_examples(page: Path) -> bool:
    try:
        return any(i.kind == "code" for i in _items(page))
    except PluginError:  # a page being edited: its own tests below report the error
        return True


# Pages with at least one example get a notebook; the lesson overviews have none.
WITH_EXAMPLES = [p for p in PAGES if _has_examples(p)]


def ids(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def test_every_lesson_page_but_the_overviews_has_examples():
    assert len(WITH_EXAMPLES) >= 20
    assert {p.name for p in PAGES if p not in WITH_EXAMPLES} <= {"index.md"}


# Running a notebook takes a Jupyter kernel of its own, about two seconds for
# each of some forty pages. `make test` runs a sample, one page a lesson: two
# lessons' common mistakes (the install cell that adds pytest, errors the page
# expects) and one lesson's exercises (collapsed solutions, the plain install
# cell), and every page with uncommitted changes; .ci/run, and so every push,
# runs every page (MFL_EVERY_NOTEBOOK=1). Every page's examples run in
# `pytest docs` either way, against the same kernel.
SAMPLED_PAGES = (
    "tokenization-math/unigram-language-model.md",
    "embedding-space-math/common-mistakes.md",
    "attention-mechanism-math/exercises.md",
    "positional-encodings/common-mistakes.md",
    "language-model-probability/training-objective.md",
)


def _sampled(page: Path) -> bool:
    return ids(page) in SAMPLED_PAGES


def _edited_pages() -> set[Path] | None:
    """Pages under docs/ that git reports changed or new; None outside a git checkout."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", "docs"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {
        (ROOT / line[3:].split(" -> ")[-1].strip('"')).resolve() for line in status.splitlines()
    }


def notebooks_to_run() -> list[Path]:
    if os.environ.get("MFL_EVERY_NOTEBOOK"):
        return WITH_EXAMPLES
    edited = _edited_pages()
    if edited is None:
        return WITH_EXAMPLES
    return [p for p in WITH_EXAMPLES if _sampled(p) or p.resolve() in edited]


def test_the_sample_of_notebooks_covers_each_lesson_and_every_install_cell(built):
    sample = [p for p in WITH_EXAMPLES if _sampled(p)]
    assert len(sample) == len(SAMPLED_PAGES)
    assert {p.parent for p in sample} == {p.parent for p in WITH_EXAMPLES}

    def install_cell(page: Path) -> str:
        return nbformat.read(_notebook_path(built, page), as_version=4).cells[0].source

    assert {install_cell(p) for p in sample} == {install_cell(p) for p in WITH_EXAMPLES}


# ---------------------------------------------------------------------------
# The page, as the build parses it


@pytest.mark.parametrize("page", WITH_EXAMPLES, ids=ids)
def test_every_example_sybil_runs_is_a_code_cell_in_order(page):
    text = page.read_text(encoding="utf-8")
    document = Document(text, str(page))
    fences = sum(1 for _ in CONFTEST.PythonExamplesParser().codeblock_parser(document))
    items = _items(page)
    assert sum(i.kind in ("code", "skipped") for i in items) == fences

    code = "\n".join(HOOK.code_cell_source(i.text) for i in items if i.kind == "code")
    lines = [line.strip() for line in code.split("\n")]
    at = 0
    for region in CONFTEST.PythonExamplesParser()(document):
        parsed = region.parsed
        source = parsed.source if hasattr(parsed, "source") else parsed
        for line in filter(None, (s.strip() for s in source.split("\n"))):
            assert line in lines[at:], f"{page.name}: `{line}` is not in the notebook's code"
            at = lines.index(line, at) + 1


@pytest.mark.parametrize("page", WITH_EXAMPLES, ids=ids)
def test_prompts_go_and_expected_output_stays_as_a_comment(page):
    for item in _items(page):
        if item.kind != "code" or not item.text.startswith(">>>"):
            continue
        cell = HOOK.code_cell_source(item.text)
        assert not re.search(r"^(>>>|\.\.\.)( |$)", cell, re.M), cell
        compile(
            "\n".join(line for line in cell.split("\n") if not line.lstrip().startswith("%")),
            page.name,
            "exec",
        )
        comments = {line for line in cell.split("\n") if line.startswith("#")}
        for example in __import__("doctest").DocTestParser().get_examples(item.text):
            want = example.want.rstrip("\n").split("\n")[-1] if example.want else ""
            assert not want or f"# {want}".rstrip() in comments, (page.name, want)


def test_collapsed_solutions_are_included():
    for page in DOCS.glob("*/exercises.md"):
        text = page.read_text(encoding="utf-8")
        items = _items(page)
        solutions = [i for i in items if i.text.startswith("**Solution**") and i.depth]
        assert len(solutions) == text.count('??? success "Solution"') > 0
        tagged = [i for i in items if i.kind == "code" and "solution" in i.tags]
        assert len(tagged) >= len(solutions)


SAMPLE = """# 9. A sample

Intro with [`lm.dot`][llmmath.similarity.dot], [a page](other.md#9-x), a
[heading](#9-a-sample), a cite [@vaswani2017attention; @su2021roformer], and
code that looks like a link: `a[0](1)`, math $x_{[i]}(y)$.

![Alt text](figures/plot.svg){ loading=lazy }

```python
>>> import numpy as np
>>> import llmmath as lm
>>> lm.lookup(np.eye(2), [5])
Traceback (most recent call last):
...
IndexError: lookup: ids must lie in [0, 2); got 5
>>> 1 + 1
2
```

!!! warning "Pitfall: nested"
    Body text.

    ```python
    assert True
    ```

??? success "Solution"

    Answer prose.

    ```python
    x = 3
    ```

<!-- skip: next "needs a GPU" -->
```python
gpu()
```

<!-- invisible-code-block: python
y = 4
-->

```text
# not a heading
```

## Skill check

```quiz
- id: sample-q
  type: numeric
  question: 'What is 1 + 1?'
  answer: 2
  tolerance: 0
  explain: 'It is [two](other.md).'
  teaches: '#9-a-sample'
  check: '1 + 1'
```
"""


def _site(extra=()):
    from mkdocs.structure.files import File, Files

    uris = ["lesson/sample.md", "lesson/other.md", "reference/similarity.md", "references.md"]
    files = Files([File(uri, "/nowhere", "/out", use_directory_urls=True) for uri in uris])
    files.append(File("lesson/figures/plot.svg", "/nowhere", "/out", use_directory_urls=True))
    labels = {"vaswani2017attention": "Vaswani et al. 2017", "su2021roformer": "Su et al. 2021"}
    return HOOK.Site("https://example.org/course/", files, labels)


def test_a_sample_page_becomes_the_notebook_it_should():
    text = HOOK.build_notebook(
        SAMPLE, "lesson/sample.md", _site(), distribution="pkg-name", version="1.2.3"
    )
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    sources = ["".join(c.source) if isinstance(c.source, list) else c.source for c in nb.cells]
    kinds = [c.cell_type for c in nb.cells]
    assert kinds[0] == "code" and "%pip install -q pkg-name==1.2.3" in sources[0]
    assert sources[1].startswith('# 9. A sample <a id="9-a-sample"></a>\n')
    md = "\n".join(s for s, k in zip(sources, kinds) if k == "markdown")
    code = "\n".join(s for s, k in zip(sources, kinds) if k == "code")
    site = "https://example.org/course/"
    assert f"[`lm.dot`]({site}reference/similarity/#llmmath.similarity.dot)" in md
    assert f"[a page]({site}lesson/other/#9-x)" in md
    assert "[heading](#9-a-sample)" in md  # a heading of the page: inside the notebook
    # every "#..." link lands on an anchor of the notebook
    for anchor in re.findall(r"\]\(#([^)\s]+)\)", md):
        assert f'<a id="{anchor}"></a>' in md, anchor
    assert (
        f"([Vaswani et al. 2017]({site}references/#ref-vaswani2017attention); "
        f"[Su et al. 2021]({site}references/#ref-su2021roformer))"
    ) in md
    assert "`a[0](1)`" in md and "$x_{[i]}(y)$" in md  # code and math untouched
    assert f"![Alt text]({site}lesson/figures/plot.svg)\n" in md  # attribute list dropped
    assert (
        textwrap.dedent("""\
        try:
            lm.lookup(np.eye(2), [5])
        except IndexError as err:  # the page expects this error
            print(f"{type(err).__name__}: {err}")
        # IndexError: lookup: ids must lie in [0, 2); got 5
        1 + 1
        # 2""")
        in code
    )
    assert "> **Pitfall: nested**\n>\n> Body text." in md
    assert "assert True" in code and "x = 3" in code and "y = 4" in code
    solution = [c for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    assert [c.cell_type for c in solution] == ["markdown", "code"]
    assert "gpu()" not in code and "*Not run here (needs a GPU):*" in md
    assert "```text\n# not a heading\n```" in md
    assert "**1.** What is 1 + 1?" in md and f"It is [two]({site}lesson/other/)." in md
    assert "<details><summary>Answer</summary>" in md
    assert text == HOOK.build_notebook(  # deterministic: cell ids included
        SAMPLE, "lesson/sample.md", _site(), distribution="pkg-name", version="1.2.3"
    )


def test_an_import_the_notebook_would_not_install_fails_the_build():
    page = "# T\n\n```python\nimport pandas\n```\n"
    with pytest.raises(PluginError, match="imports `pandas`"):
        HOOK.build_notebook(page, "lesson/sample.md", _site(), distribution="d", version="1")
    page = "# T\n\n```python\nimport pytest, math\nfrom os import path\n```\n"
    nb = json.loads(
        HOOK.build_notebook(page, "lesson/sample.md", _site(), distribution="d", version="1")
    )
    assert "".join(nb["cells"][0]["source"]).endswith("%pip install -q d==1 pytest")


def test_citation_labels_read_references_bib():
    labels = HOOK.citation_labels()
    assert labels["vaswani2017attention"] == "Vaswani et al. 2017"
    assert all(re.fullmatch(r"\S.* \d{4}", label) for label in labels.values()), labels
    assert not [label for label in labels.values() if "\\" in label or "{" in label]


# ---------------------------------------------------------------------------
# The built site


@pytest.fixture(scope="session")
def built(request) -> Path:
    """The built site: $MFL_SITE_DIR if set (a build elsewhere), else site/."""
    given = os.environ.get("MFL_SITE_DIR")
    return Path(given) if given else request.getfixturevalue("site_dir")


def _notebook_path(site: Path, page: Path) -> Path:
    return site / HOOK.notebook_uri(page.relative_to(DOCS).as_posix())


def test_each_page_with_examples_has_its_notebook_and_a_link_to_it(built):
    for page in PAGES:
        if page.name == "index.md":  # the overview: no examples, no notebook
            assert not (built / page.relative_to(DOCS).parent / "index.ipynb").exists()
            continue
        notebook = _notebook_path(built, page)
        html = (notebook.with_suffix("") / "index.html").read_text(encoding="utf-8")
        if page not in WITH_EXAMPLES:
            assert not notebook.exists()
            continue
        name = f"{page.parent.name}-{notebook.name}"  # every lesson has exercises.ipynb
        link = re.search(
            rf'<a href="\.\./{re.escape(notebook.name)}" download="{re.escape(name)}" '
            r'type="application/x-ipynb\+json">Download as notebook</a> \(\.ipynb, (\d+) KB',
            html,
        )
        assert link, f"{page}: no download link"
        assert link.start() > html.index("</h1>")
        assert abs(int(link[1]) - notebook.stat().st_size / 1024) <= 1
        nb = nbformat.read(notebook, as_version=4)
        nbformat.validate(nb)
        first = nb.cells[0]
        assert first.cell_type == "code"
        assert f"%pip install -q {NAME}=={llmmath.__version__}" in first.source
        assert not [c for c in nb.cells if c.cell_type == "code" and c.outputs]


LINK = re.compile(r"\]\((?P<url>https?://[^)\s]+)\)")


def test_every_link_in_the_notebooks_resolves_in_the_site(built):
    broken = []
    for page in WITH_EXAMPLES:
        nb = nbformat.read(_notebook_path(built, page), as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for m in LINK.finditer(cell.source):
                url = m["url"]
                if not url.startswith(SITE_URL):
                    continue
                path, _, anchor = url.removeprefix(SITE_URL).partition("#")
                target = built / path / "index.html" if path.endswith("/") or not path else None
                target = target or built / path
                if not target.is_file():
                    broken.append((page.name, url))
                elif anchor and f'id="{anchor}"' not in target.read_text(encoding="utf-8"):
                    broken.append((page.name, url))
    assert not broken, broken[:20]


# ---------------------------------------------------------------------------
# A reader's download runs


def _execute(nb, root: Path, env: dict[str, str], cwd: Path) -> str:
    """Run ``nb`` in the clean venv's kernel; returns where that kernel imported llmmath from."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    nb.cells.append(nbformat.v4.new_code_cell("import llmmath\nprint(llmmath.__file__)"))
    specs = KernelSpecManager(kernel_dirs=[str(root / "kernels")])
    # IPC sockets in the test's own folder, not TCP ports: two pytest-xdist
    # workers starting kernels at once could pick the same free port
    km = AsyncKernelManager(
        kernel_name="mfl-wheel", kernel_spec_manager=specs, transport="ipc", ip=str(cwd / "k")
    )
    client = NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(cwd)}})
    client.execute(env=env)
    return nb.cells[-1].outputs[0]["text"].strip()


@pytest.fixture(scope="session")
def wheel_kernel(tmp_path_factory, kernel_dist, venv_tools, built):
    """A Jupyter kernelspec for a clean venv in which the notebooks' first cells,
    ``%pip install``, have run: pip there installs only from the built wheel.

    Every notebook starts with one of two such cells (the common-mistakes pages
    install pytest too), and pip takes three to four seconds even when it has
    nothing to do, so each distinct cell runs here, once, in a kernel of its
    own; each notebook then runs from its second cell."""
    clean_venv, clean_environ = venv_tools
    root = tmp_path_factory.mktemp("notebook-kernel")
    python = clean_venv(root / "venv")
    spec = root / "kernels" / "mfl-wheel"
    spec.mkdir(parents=True)
    spec.joinpath("kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python (kernel from its wheel)",
                "language": "python",
            }
        )
    )
    _, wheel = kernel_dist
    env = clean_environ(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheel.parent))
    installs = sorted(
        {
            nbformat.read(_notebook_path(built, p), as_version=4).cells[0].source
            for p in WITH_EXAMPLES
        }
    )
    cells = [nbformat.v4.new_code_cell(source) for source in installs]
    where = _execute(nbformat.v4.new_notebook(cells=cells), root, env, root)
    assert Path(where).is_relative_to(root / "venv" / "lib"), f"llmmath came from {where}"
    return root, env, installs


@pytest.mark.slow
@pytest.mark.parametrize("page", notebooks_to_run(), ids=ids)
def test_the_notebook_runs_against_the_wheel(page, built, wheel_kernel, tmp_path):
    root, env, installs = wheel_kernel
    nb = nbformat.read(_notebook_path(built, page), as_version=4)
    assert nb.cells[0].source in installs, "the first cell is not an install cell that ran"
    nb.cells = nb.cells[1:]
    where = _execute(nb, root, env, tmp_path)
    assert Path(where).is_relative_to(root / "venv" / "lib"), f"llmmath came from {where}"
