"""Mutation testing of the kernel against the lesson pages: do the examples bite?

cosmic-ray (configured in ``mutation.toml``) makes one small change at a time
to a kernel module -- ``<`` to ``<=``, ``1`` to ``2``, ``-`` to ``+`` -- and,
for each such *mutant*, runs ``pytest docs`` alone. A mutant is *killed* when
some example on some page fails (or the run times out), and *survives* when
every page still passes: then no page pins down that piece of the kernel.

This script, run from the project root (``make mutation``):

1. finds the modules from ``mutation.toml`` (every ``src/llmmath/*.py`` but
   ``__init__.py``; ``--module NAME`` keeps only the named ones);
2. copies the work tree once per worker (``--jobs``, default: the number of
   cores). cosmic-ray mutates files in place and its local distributor runs
   one mutant at a time, so each worker gets its own copy, its own
   ``PYTHONPATH`` and its own shard of each module's session;
3. runs ``pytest docs`` unmutated in a copy (it must pass) and sets the
   per-mutant timeout to ``max(timeout in mutation.toml, 4 x that run)``;
4. initializes one cosmic-ray session per module in ``tools/out/mutation/``
   (``cosmic-ray init``), splits its pending mutants between the workers and
   runs them (``cosmic-ray exec``), merging the results back;
5. prints (and writes to ``tools/out/mutation/report.txt``) per module and
   overall: mutants, killed, timeouts, survived, equivalent, kill ratio, then
   every surviving mutant (``module:line:col``, operator, diff) by module.

The kill ratio is ``(killed + timeouts) / (killed + timeouts + survived)``,
where survivors listed in ``--equivalent FILE`` leave the denominator. That
file holds one reviewed mutant per line, ``<id> <reason>``, with the id as
the report prints it; a mutant goes there only when no input at all can tell
it from the kernel, never to hide a missing example.

``--prescreen docs/PAGE.md`` (what ``make mutation`` uses) saves time without
changing any verdict: each mutant first runs against that one page, and only
the mutants it does not kill run the whole of ``pytest docs``. A mutant that
makes an example on the page fail makes ``pytest docs`` fail as well (the
same example runs there, with the same conftest and the same page
namespace), so the prescreen can only find kills that the full command would
also find; survivors are always confirmed by the full command.

Other options: ``--resume`` keeps the existing sessions and runs only what is
pending, e.g. after an interrupted run (a session made from an older version
of its module, as the ``.source-sha256`` stamp beside it tells, is started
afresh instead); ``--retest-survivors`` re-runs the
survivors of the existing sessions (after adding examples); ``--report-only``
prints the report of the existing sessions; ``--fail-under PCT`` exits 1 when
the overall kill ratio of a complete run is below PCT.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import toml
from cosmic_ray.modules import filter_paths, find_modules

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tools" / "out" / "mutation"
BIN = Path(sys.executable).parent
# Not copied into the workers' trees: environments, caches, build output, VCS.
SKIP_NAMES = {
    ".venv", "node_modules", "site", ".git", ".cache", "__pycache__", ".pytest_cache",
    ".hypothesis", ".mypy_cache", ".ruff_cache",
}  # fmt: skip
SKIP_PATHS = {ROOT / "tools" / "out"}
INVALID = "not valid Python"


# --------------------------------------------------------------------------- set-up


def load_config(path: Path) -> dict:
    with path.open("rb") as handle:
        return tomllib.load(handle)["cosmic-ray"]


def kernel_modules(cfg: dict) -> list[Path]:
    """The module files ``mutation.toml`` selects, relative to the project root."""
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        paths = cfg["module-path"]
        paths = [paths] if isinstance(paths, str) else paths
        found = filter_paths(
            find_modules([Path(p) for p in paths]), cfg.get("excluded-modules", ())
        )
    finally:
        os.chdir(cwd)
    return sorted(Path(p) for p in found)


def select(modules: list[Path], names: list[str] | None) -> list[Path]:
    if not names:
        return modules
    by_name = {m.stem: m for m in modules}
    chosen = []
    for name in names:
        stem = Path(name).stem
        if stem not in by_name:
            sys.exit(f"mutation: no kernel module {name!r}; choose from {sorted(by_name)}")
        chosen.append(by_name[stem])
    return chosen


def _skip(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIP_NAMES or Path(directory, n) in SKIP_PATHS}


def make_workers(base: Path, jobs: int) -> list[tuple[Path, dict]]:
    """One copy of the work tree per worker, each importing llmmath from its own src/."""
    workers = []
    for i in range(jobs):
        tree = base / f"worker{i}"
        shutil.copytree(ROOT, tree, ignore=_skip, symlinks=True)
        env = dict(os.environ)
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(tree / "src")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        where = subprocess.run(
            [sys.executable, "-c", "import llmmath; print(llmmath.__file__)"],
            cwd=tree, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        if not Path(where).is_relative_to(tree):
            sys.exit(f"mutation: worker {i} imports llmmath from {where}, not from its copy {tree}")
        workers.append((tree, env))
    return workers


def baseline(command: str, worker: tuple[Path, dict]) -> float:
    """Run the test command unmutated; it must pass. Returns its wall time."""
    tree, env = worker
    start = time.perf_counter()
    proc = subprocess.run(shlex.split(command), cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(
            f"mutation: `{command}` fails on the unmutated kernel, so no mutant can be judged:\n"
            + proc.stdout[-3000:]
        )
    return seconds


# --------------------------------------------------------------------------- sessions


def session_paths(module: Path) -> tuple[Path, Path]:
    return OUT / f"{module.stem}.sqlite", OUT / f"{module.stem}.toml"


def write_module_config(
    cfg: dict, module: Path, timeout: float, path: Path, command: str | None = None
) -> None:
    one = dict(cfg)
    one["module-path"] = str(module)
    if command:
        one["test-command"] = command
    one.pop("excluded-modules", None)
    one["timeout"] = float(timeout)
    path.write_text(toml.dumps({"cosmic-ray": one}))


def source_stamp(session: Path) -> Path:
    return session.with_suffix(".source-sha256")


def source_digest(module: Path) -> str:
    return hashlib.sha256(module.read_bytes()).hexdigest()


def session_is_current(session: Path, module: Path) -> bool:
    """A session may be resumed only against the module source it was made from.

    cosmic-ray records mutants by position, so after an edit to the module an
    old session would apply them to the wrong code.
    """
    stamp = source_stamp(session)
    return session.exists() and stamp.exists() and stamp.read_text() == source_digest(module)


def init_session(config: Path, session: Path, module: Path) -> None:
    session.unlink(missing_ok=True)
    subprocess.run(
        [str(BIN / "cosmic-ray"), "init", str(config), str(session)], cwd=ROOT, check=True
    )
    source_stamp(session).write_text(source_digest(module))


def skip_invalid(session: Path) -> int:
    """Mark mutants whose mutated module is not valid Python as skipped; returns how many.

    cosmic-ray's operators also rewrite the bare ``*`` that starts keyword-only
    parameters (``def f(a, *, b)`` becomes ``def f(a, <<, b)``): such a file
    does not even compile, so it is not a mutant of the kernel and is never run.
    """
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    sources: dict[str, list[str]] = {}
    skipped = 0
    with use_db(str(session)) as db:
        for item in db.work_items:
            (spec,) = item.mutations
            path = str(spec.module_path)
            if path not in sources:
                sources[path] = (ROOT / path).read_text().splitlines(keepends=True)
            lines = sources[path]
            row, col = spec.start_pos
            # Only an operator token standing alone (``*,``) can turn into bad syntax;
            # checking just those keeps this fast (parsing every mutant takes minutes).
            after = lines[row - 1][spec.end_pos[1] :].lstrip()
            if not after.startswith((",", ")")):
                continue
            operator = get_operator(spec.operator_name)(**(spec.operator_args or {}))
            mutated = mutate_code("".join(lines), operator, spec.occurrence)
            if mutated is None:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SyntaxWarning)
                    compile(mutated, path, "exec")
            except SyntaxError as err:
                result = WorkResult(
                    worker_outcome=WorkerOutcome.SKIPPED,
                    output=f"{INVALID}: {err.msg} (line {err.lineno})",
                    test_outcome=None,
                    diff=None,
                )
                db.set_result(item.job_id, result)
                skipped += 1
    return skipped


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=60)
    con.execute("pragma foreign_keys=OFF")
    return con


def pending_jobs(session: Path) -> list[str]:
    with _connect(session) as con:
        rows = con.execute(
            "select m.job_id from mutation_specs m left join work_results r using (job_id) "
            "where r.job_id is null order by m.start_pos_row, m.start_pos_col, m.occurrence"
        ).fetchall()
    return [r[0] for r in rows]


def count_results(session: Path) -> int:
    try:
        with _connect(session) as con:
            return con.execute("select count(*) from work_results").fetchone()[0]
    except sqlite3.Error:
        return 0


def merge_shards(session: Path) -> None:
    """Copy the results of any shard sessions into the module session, then drop them."""
    for shard in sorted(session.parent.glob(f"{session.stem}.shard*.sqlite")):
        with _connect(session) as con:
            con.execute("attach database ? as shard", (str(shard),))
            con.execute(
                "insert or replace into work_results "
                "(worker_outcome, output, test_outcome, diff, job_id) "
                "select worker_outcome, output, test_outcome, diff, job_id from shard.work_results"
            )
            con.commit()
            con.execute("detach database shard")
        shard.unlink()


def retest_survivors(session: Path) -> int:
    with _connect(session) as con:
        n = con.execute("delete from work_results where test_outcome = 'SURVIVED'").rowcount
        con.commit()
    return n


def keep_prescreen_kills(session: Path, jobs: list[str], page: str) -> int:
    """After the prescreen: label its kills, and make its survivors pending again."""
    with _connect(session) as con:
        con.execute("create temp table stage (job_id text primary key)")
        con.executemany("insert into stage values (?)", [(j,) for j in jobs])
        con.execute(
            "update work_results set output = ? || output "
            "where test_outcome = 'KILLED' and job_id in (select job_id from stage)",
            (f"[prescreen: failed `pytest {page}`] ",),
        )
        n = con.execute(
            "delete from work_results where test_outcome = 'SURVIVED' "
            "and job_id in (select job_id from stage)"
        ).rowcount
        con.commit()
    return n


def make_shard(session: Path, shard: Path, jobs: list[str]) -> None:
    shutil.copyfile(session, shard)
    with _connect(shard) as con:
        con.execute("create temp table keep (job_id text primary key)")
        con.executemany("insert into keep values (?)", [(j,) for j in jobs])
        con.execute("delete from work_results")
        con.execute("delete from mutation_specs where job_id not in (select job_id from keep)")
        con.execute("delete from work_items where job_id not in (select job_id from keep)")
        con.commit()


def run_module(
    module: Path, config: Path, session: Path, workers: list[tuple[Path, dict]], stage: str
) -> list[str]:
    """Run the pending mutants of one module's session on all workers; returns their ids."""
    jobs = pending_jobs(session)
    if not jobs:
        print(f"{module.stem} [{stage}]: nothing pending", flush=True)
        return jobs
    start = time.perf_counter()
    procs = []
    for i, (tree, env) in enumerate(workers):
        part = jobs[i :: len(workers)]
        if not part:
            continue
        shard = OUT / f"{session.stem}.shard{i}.sqlite"
        make_shard(session, shard, part)
        log = (OUT / f"{session.stem}.shard{i}.log").open("w")
        cmd = [str(BIN / "cosmic-ray"), "exec", str(config), str(shard)]
        procs.append((subprocess.Popen(cmd, cwd=tree, env=env, stdout=log, stderr=log), shard))
    print(f"{module.stem} [{stage}]: {len(jobs)} mutants on {len(procs)} worker(s)", flush=True)
    while any(p.poll() is None for p, _ in procs):
        time.sleep(30)
        done = sum(count_results(s) for _, s in procs)
        minutes = (time.perf_counter() - start) / 60
        print(f"{module.stem} [{stage}]: {done}/{len(jobs)} done, {minutes:.1f} min", flush=True)
    failed = [p.returncode for p, _ in procs if p.returncode]
    merge_shards(session)
    minutes = (time.perf_counter() - start) / 60
    print(f"{module.stem} [{stage}]: finished in {minutes:.1f} min", flush=True)
    if failed:
        sys.exit(f"mutation: cosmic-ray exec failed for {module.stem} (see {OUT}/*.log)")
    return jobs


# --------------------------------------------------------------------------- report


@dataclass
class Mutant:
    key: str
    module: str
    line: int
    col: int
    operator: str
    status: str  # killed, timeout, survived, equivalent, invalid, incompetent, pending
    diff: list[str]
    prescreen: bool = False  # killed by the prescreen page


def read_mutants(session: Path, module: Path) -> list[Mutant]:
    with _connect(session) as con:
        rows = con.execute(
            "select m.operator_name, m.start_pos_row, m.start_pos_col, m.occurrence, "
            "r.worker_outcome, r.test_outcome, r.output, r.diff "
            "from mutation_specs m left join work_results r using (job_id) "
            "order by m.start_pos_row, m.start_pos_col, m.operator_name, m.occurrence"
        ).fetchall()
    seen: dict[tuple, int] = defaultdict(int)
    counts: dict[tuple, int] = defaultdict(int)
    for op, row, col, *_ in rows:
        counts[(op, row, col)] += 1
    mutants = []
    for op, row, col, _occ, worker, test, output, diff in rows:
        name = op.removeprefix("core/")
        key = f"{module.stem}:{row}:{col}:{name}"
        if counts[(op, row, col)] > 1:  # e.g. NumberReplacer: +1 and -1 at one spot
            key += f":{seen[(op, row, col)]}"
            seen[(op, row, col)] += 1
        if worker is None:
            status = "pending"
        elif worker == "SKIPPED" and (output or "").startswith(INVALID):
            status = "invalid"
        elif worker != "NORMAL" or test == "INCOMPETENT":
            status = "incompetent"
        elif test == "KILLED":
            status = "timeout" if output == "timeout" else "killed"
        else:
            status = "survived"
        changed = [
            line
            for line in (diff or "").splitlines()
            if line[:1] in "+-" and not line.startswith(("---", "+++"))
        ]
        early = (output or "").startswith("[prescreen")
        mutants.append(Mutant(key, module.name, row, col, name, status, changed, early))
    return mutants


def annotation_spans(module: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation in ``module`` (line 1-based, col 0-based)."""
    spans = []
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        found = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None and arg.annotation is not None:
                    found.append(arg.annotation)
            if node.returns is not None:
                found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        spans += [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in found]
    return spans


def read_equivalent(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    listed = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition(" ")  # "@annotations <reason>" covers a whole class
        if not reason.strip():
            sys.exit(
                f"mutation: {path}:{n}: {key} has no reason; every equivalent mutant needs one"
            )
        listed[key] = reason.strip()
    return listed


def report(modules: list[Path], equivalent: dict[str, str]) -> tuple[str, float | None, int]:
    lines: list[str] = []
    survivors: dict[str, list[Mutant]] = defaultdict(list)
    totals: dict[str, int] = defaultdict(int)
    found_keys: dict[str, str] = {}
    header = f"{'module':<16}{'mutants':>8}{'killed':>8}{'timeout':>8}{'survived':>9}{'equiv':>7}{'invalid':>8}{'other':>7}{'pending':>8}{'kill ratio':>12}"
    lines += ["Mutation testing: the kernel against `pytest docs` alone", "", header]
    for module in modules:
        session, _ = session_paths(module)
        if not session.exists():
            lines.append(f"{module.stem:<16}{'(no session: not run yet)':>40}")
            continue
        counts: dict[str, int] = defaultdict(int)
        spans = annotation_spans(module) if "@annotations" in equivalent else []
        for m in read_mutants(session, module):
            found_keys[m.key] = m.status
            in_annotation = any(a <= (m.line, m.col) < b for a, b in spans)
            if m.status == "survived" and (m.key in equivalent or in_annotation):
                m.status = "equivalent"
            counts[m.status] += 1
            totals["prescreen"] += m.prescreen
            if m.status == "survived":
                survivors[module.name].append(m)
        n = sum(counts.values())
        for k, v in counts.items():
            totals[k] += v
        totals["mutants"] += n
        lines.append(_row(module.stem, n, counts))
    lines.append(_row("all", totals["mutants"], totals))
    ratio = _ratio(totals)
    lines += [
        "",
        "kill ratio = (killed + timeout) / (killed + timeout + survived); equivalent mutants",
        "(reviewed, listed with a reason) are left out, and so are invalid ones (the mutated",
        "file does not compile) and other (cosmic-ray could not run it).",
    ]
    if totals["prescreen"]:
        lines.append(
            f"{totals['prescreen']} of the kills came from the prescreen page alone "
            "(a failing page is a failing `pytest docs`)."
        )
    stale = [k for k in equivalent if found_keys.get(k) not in (None, "survived")]
    missing = [k for k in equivalent if k not in found_keys and not k.startswith("@")]
    if stale:
        lines.append(f"listed as equivalent but not surviving (drop them): {', '.join(stale)}")
    if missing and len(modules) > 1:
        lines.append(f"listed as equivalent but no such mutant: {', '.join(missing)}")
    lines += ["", f"Surviving mutants ({sum(len(v) for v in survivors.values())}):"]
    for name, ms in survivors.items():
        lines += ["", f"## {name} ({len(ms)})"]
        for m in ms:
            lines.append(f"{m.module}:{m.line}:{m.col}  {m.operator}  [{m.key}]")
            lines += [f"    {d}" for d in m.diff]
    return "\n".join(lines) + "\n", ratio, totals["pending"]


def _ratio(c: dict[str, int]) -> float | None:
    detected = c["killed"] + c["timeout"]
    judged = detected + c["survived"]
    return detected / judged if judged else None


def _row(name: str, n: int, c: dict[str, int]) -> str:
    ratio = _ratio(c)
    shown = "-" if ratio is None else f"{100 * ratio:.1f}%"
    return (
        f"{name:<16}{n:>8}{c['killed']:>8}{c['timeout']:>8}{c['survived']:>9}"
        f"{c['equivalent']:>7}{c['invalid']:>8}{c['incompetent']:>7}{c['pending']:>8}{shown:>12}"
    )


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "mutation.toml")
    parser.add_argument("--module", action="append", help="mutate only this module (repeatable)")
    parser.add_argument("--equivalent", type=Path, help="reviewed list of equivalent mutants")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: see above)")
    parser.add_argument("--resume", action="store_true", help="keep sessions, run what is pending")
    parser.add_argument("--retest-survivors", action="store_true", help="re-run the survivors")
    parser.add_argument("--report-only", action="store_true", help="only print the report")
    parser.add_argument(
        "--prescreen",
        metavar="PAGE",
        help="first run each mutant against this one page (a kill there is a kill by pytest docs)",
    )
    parser.add_argument("--fail-under", type=float, default=0.0, help="minimum kill ratio, in %%")
    args = parser.parse_args()

    cfg = load_config(args.config)
    modules = select(kernel_modules(cfg), args.module)
    equivalent = read_equivalent(args.equivalent)
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    if not args.report_only:
        with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
            workers = make_workers(Path(tmp), max(1, args.jobs))
            base = baseline(cfg["test-command"], workers[0])
            timeout = args.timeout or max(float(cfg["timeout"]), 4 * base)
            print(
                f"unmutated `{cfg['test-command']}`: passes in {base:.1f} s; "
                f"timeout per mutant {timeout:.0f} s; {len(workers)} worker(s)",
                flush=True,
            )
            if args.prescreen:
                docs = cfg["test-command"].split()
                if "docs" not in docs or not args.prescreen.startswith("docs/"):
                    sys.exit(
                        "mutation: --prescreen needs a page under docs/ and a `pytest docs` command"
                    )
                docs[docs.index("docs")] = args.prescreen
                pre_command = " ".join(docs)
                pre_base = baseline(pre_command, workers[0])
                pre_timeout = args.timeout or max(30.0, 4 * pre_base)
                print(f"prescreen `{pre_command}`: passes in {pre_base:.1f} s", flush=True)
            for module in modules:
                session, config = session_paths(module)
                write_module_config(cfg, module, timeout, config)
                keep = (args.resume or args.retest_survivors) and session.exists()
                if keep and not session_is_current(session, module):
                    print(f"{module.stem}: the module changed since its session; starting afresh")
                    keep = False
                if keep:
                    merge_shards(session)
                    if args.retest_survivors:
                        print(f"{module.stem}: re-testing {retest_survivors(session)} survivors")
                else:
                    for old in OUT.glob(f"{module.stem}.shard*.sqlite"):
                        old.unlink()
                    init_session(config, session, module)
                n = skip_invalid(session)  # cheap: only operators standing alone are checked
                print(f"{module.stem}: {n} mutants are not valid Python; skipped", flush=True)
                if args.prescreen:
                    pre_config = OUT / f"{module.stem}.prescreen.toml"
                    write_module_config(cfg, module, pre_timeout, pre_config, pre_command)
                    staged = run_module(module, pre_config, session, workers, "prescreen")
                    n = keep_prescreen_kills(session, staged, args.prescreen)
                    print(f"{module.stem}: {n} prescreen survivors go on to `pytest docs`")
                run_module(module, config, session, workers, "pytest docs")

    text, ratio, pending = report(modules, equivalent)
    if not args.report_only:
        text += f"\nRuntime: {(time.perf_counter() - start) / 60:.1f} min\n"
    print("\n" + text, end="")
    (OUT / "report.txt").write_text(text)
    if ratio is not None and not pending and 100 * ratio < args.fail_under:
        print(f"\nkill ratio {100 * ratio:.1f}% is below --fail-under {args.fail_under}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
