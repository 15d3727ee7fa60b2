"""Resume at scale: how long `--resume` takes on transcripts of 1, 10 and 100 MB, side by side.

    .venv/bin/python benchmarks/resume_scale.py [--sizes 1,10,100] [--runs 3] [--baseline DIR] [--no-app] [--continue]

The transcripts come from the real loop: a session reads files against the emulator in a small
window (so it compacts a few times), then its turns are repeated with fresh uuids and ids until
the file reaches each size. They are cached in benchmarks/.cache/resume_scale (not committed).

For each size, in one run and in fresh processes:
- the floor: reading the file and parsing every line with `json.loads`;
- `agent-repl --resume ID -p hi`: from spawn to the emulator receiving its first request, the
  whole run, and the process's peak RSS (its own VmHWM, read while it runs);
- the full-screen app as `agent-repl --resume ID` launches it (the CLI's own path: credentials
  moved out of the environment, settings, the model check and the resume in the launcher's thread),
  headless under Textual's pilot, from spawn until the resumed session is shown
  (the newest history entry mounted and painted), and its peak RSS. "Drawn" is when the first
  frame holding the newest entry went to the terminal (the resume's preview of its newest entries,
  read from the transcript's end, or the opened session's history when there is no preview);
  "shown" waits after that until the app is idle (the pilot's pause: no CPU used for 20 ms), so it
  also counts what the app does right after the paint (in threads too); "session open" is when the
  opened session's own history holds the same newest entry, mounted, and the app is idle again.
A resume runs in a home that holds the endpoint's model list, as the home of the session that wrote
the transcript does (the fresh `-p` runs are a newcomer's: they ask for it). Each code's packages are
compiled to bytecode first, as an installed package is, so that no run
pays for compiling them (PYTHONDONTWRITEBYTECODE would otherwise have every run compile its
modules again). With `--baseline DIR` (a checkout of an earlier commit, e.g. `git archive COMMIT | tar -x -C DIR`),
each measurement also runs with that code, interleaved. With `--continue` the runs resume with
`--continue` instead of `--resume ID` (the folder holds the one session, so its listing is the
least it can be). Medians are printed, with the ratio to the
floor; absolute times are background (they depend on the machine and its load).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid as uuidlib
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):  # a measured child runs the code PYTHONPATH names
    sys.path.insert(0, str(ROOT))
CACHE = ROOT / "benchmarks" / ".cache" / "resume_scale"
SESSION_ID = "5e551011-0000-4000-8000-00000000be4c"
# How the measured runs name the session: `--resume ID`, or `--continue` (the newest session of the
# folder, found by listing its transcripts) with the script's `--continue`.
RESUME_FLAGS = ["--resume", SESSION_ID]
WINDOW = 60_000
# The folder every session here runs in, the generating one and the measured resumes alike: a
# resume runs where its session was written (the system prompt names the folder), as `--resume` does.
PROJECT = Path(tempfile.gettempdir()) / "agent-repl-resume-scale" / "project"
BASE_TURNS = 24
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_IDS = re.compile(r"\b(?:msg|toolu|req|srvtoolu)_[A-Za-z0-9]+")


# -- generating the transcripts -------------------------------------------------------------------


def _reading_steps(files: list[Path], turns: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        path = files[turn % len(files)]
        steps.append(
            {
                "text": f"Reading {path.name}.",
                "tools": [
                    {"name": "Read", "input": {"file_path": str(path)}},
                    {"name": "Bash", "input": {"command": f"wc -l {path} && head -c 6000 {path}"}},
                ],
            }
        )
        steps.append({"text": f"Read `{path.name}`: it defines a few classes.\n\n- nothing odd\n- no TODOs"})
    return steps


async def _base_session(work: Path) -> Path:
    """A session run by the real loop against the emulator; returns its transcript."""
    import rich

    from agent_repl.bootstrap import close_session, open_session
    from agent_repl.core.config.settings import load_settings
    from agent_repl.emulator.policies import ScriptPolicy
    from agent_repl.emulator.server import EmulatorServer
    from agent_repl.offline.summary import AgentSummarizer

    files = sorted(p for p in Path(rich.__file__).parent.glob("*.py") if 6_000 < p.stat().st_size < 40_000)
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": _reading_steps(files, BASE_TURNS)}),
        context_window=WINDOW,
        summarizer=AgentSummarizer(),
    )
    server.start()
    env = {
        "AGENT_REPL_HOME": str(work / "home"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "k",
    }
    PROJECT.mkdir(parents=True, exist_ok=True)
    settings = load_settings(
        cwd=PROJECT,
        env=env,
        overrides={
            "skip_permissions": True,
            "api_compaction": False,
            "context_window": WINDOW,
            "session_id": SESSION_ID,
        },
    )
    session = await open_session(settings, PROJECT)
    try:
        for turn in range(BASE_TURNS):
            async for _ in session.run_turn(f"Turn {turn}: please look at {files[turn % len(files)].name}."):
                pass
    finally:
        await close_session(session)
        server.stop()
    return session.sink.path  # type: ignore[attr-defined,no-any-return]


def _fresh_ids(line: str, mapping: dict[str, str]) -> str:
    def uuid_for(match: re.Match[str]) -> str:
        old = match.group(0)
        if old == SESSION_ID:
            return old
        return mapping.setdefault(old, str(uuidlib.uuid4()))

    def id_for(match: re.Match[str]) -> str:
        old = match.group(0)
        return mapping.setdefault(old, old.split("_", 1)[0] + "_" + uuidlib.uuid4().hex[:24])

    return _IDS.sub(id_for, _UUID.sub(uuid_for, line))


def expand(base: Path, target: Path, size_mb: float) -> None:
    """`base`'s turns repeated (after its first entry) with fresh ids until `target` has `size_mb`."""
    lines = base.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    first = next(i for i, r in enumerate(records) if r.get("type") == "user")
    head, unit = lines[: first + 1], lines[first + 1 :]
    unit_messages = [json.loads(line) for line in unit if json.loads(line).get("uuid")]
    entry_parent = unit_messages[0]["parentUuid"]  # the head's last entry
    exit_uuid = unit_messages[-1]["uuid"]
    limit = int(size_mb * 1024 * 1024)
    with open(target, "w", encoding="utf-8") as out:
        written = sum(out.write(line) for line in head)
        previous_exit = entry_parent
        while written < limit:
            mapping = {entry_parent: previous_exit}
            for line in unit:
                written += out.write(_fresh_ids(line, mapping))
            previous_exit = mapping[exit_uuid]


def transcripts(sizes: list[float], cache: Path = CACHE) -> dict[float, Path]:
    cache.mkdir(parents=True, exist_ok=True)
    base = cache / "base.jsonl"
    if not base.exists():
        import asyncio

        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(asyncio.run(_base_session(Path(tmp))), base)
    out = {}
    for size in sizes:
        path = cache / f"{size:g}mb.jsonl"
        if not path.exists():
            expand(base, path, size)
        out[size] = path
    return out


# -- measuring ------------------------------------------------------------------------------------


def _wait(child: subprocess.Popen[Any], timeout: float = 600) -> tuple[int, float, float]:
    """(exit status, peak RSS in MB, CPU seconds) of a child.

    The peak is the child's own high-water mark (VmHWM), read while it runs: the `ru_maxrss` that
    wait4 reports counts the memory of this benchmark process, which the child was forked from
    (and it is larger than any agent run), so every run reported the same figure."""
    deadline = time.monotonic() + timeout
    peak_kb = 0
    while True:
        peak_kb = max(peak_kb, _high_water_kb(child.pid))
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            child.returncode = os.waitstatus_to_exitcode(status)
            return child.returncode, peak_kb / 1024, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            child.kill()
        time.sleep(0.002)


def _wait_reading(child: subprocess.Popen[str]) -> tuple[int, float, float, list[str]]:
    """`_wait` for a child whose output is read: the output is read in a thread, so that its peak
    is read while it runs (reading to the end first left only an exited child, with no peak)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(child.stdout or ()), daemon=True)
    reader.start()
    status, peak, cpu = _wait(child)
    reader.join()
    return status, peak, cpu, lines


def _high_water_kb(pid: int) -> int:
    """The peak resident size of the program `pid` runs now, in kB (0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _session_home(transcript: Path | None, work: Path) -> tuple[Path, Path]:
    """A fresh home holding a copy of `transcript` (if any) as this project's session."""
    from agent_repl.transcript.paths import project_dir

    home, project = work / "home", PROJECT
    # A resumed session's home holds what the session that wrote it kept there: the endpoint's
    # model list (so the launch does not ask for it again) is carried from one run to the next.
    kept = work.parent / "kept-model-cache"
    if (home / "cache").is_dir():
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(home / "cache", kept)
    shutil.rmtree(work, ignore_errors=True)
    project.mkdir(parents=True, exist_ok=True)
    sessions = project_dir(home, project.resolve())
    sessions.mkdir(parents=True)
    if transcript is not None:
        shutil.copy(transcript, sessions / f"{SESSION_ID}.jsonl")
        if kept.is_dir():
            shutil.copytree(kept, home / "cache")
    return home, project


def _env(home: Path, base_url: str, code: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_REPL_"))}
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="sk-ant-bench", AGENT_REPL_HOME=str(home))
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


def measure_floor(transcript: Path) -> tuple[float, float]:
    """(seconds, peak MB) of a fresh process reading the file and parsing every line (the time of
    the parsing alone, not the interpreter's start)."""
    code = (
        "import json,sys,time\n"
        "t=time.process_time()\n"
        "with open(sys.argv[1],'rb') as f:\n"
        "    for line in f:\n"
        "        json.loads(line)\n"
        "print(time.process_time()-t)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(transcript)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    seconds = float(child.stdout.read())
    _, peak, _cpu = _wait(child)
    return seconds, peak


class FirstRequest:
    """The emulator's answer, noting the CPU time the measured process had used when its first
    request arrived (from /proc, so a loaded machine does not blur it)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.cpu: float | None = None

    def __call__(self, request: Any) -> Any:
        from agent_repl.emulator.policies import Reply

        if self.pid is not None and self.cpu is None:
            self.cpu = _process_cpu(self.pid)
        return Reply(content=[{"type": "text", "text": "hello"}])


def _process_cpu(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_print(
    transcript: Path | None, work: Path, server: Any, code: Path | None, first: FirstRequest
) -> dict[str, float]:
    """`agent-repl --resume ID -p hi` (a fresh `agent-repl -p hi` when `transcript` is None)."""
    home, project = _session_home(transcript, work)
    seen = len(server.recordings.messages)
    resume = RESUME_FLAGS if transcript is not None else []
    started = time.time()
    child = subprocess.Popen(
        [sys.executable, "-m", "agent_repl", *resume, "-p", "hi"],
        cwd=project, env=_env(home, server.base_url, code),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    first.pid, first.cpu = child.pid, None
    status, peak, cpu = _wait(child)
    total = time.time() - started
    if status != 0:
        raise SystemExit(
            f"agent-repl failed ({status}): {child.stderr.read().decode()[-2000:] if child.stderr else ''}"
        )
    requests = [e for e in list(server.recordings.messages)[seen:] if e.path == "/v1/messages"]
    if not requests:
        raise SystemExit("agent-repl made no request")
    return {
        "first_request": requests[0].started_at - started,
        "first_cpu": first.cpu if first.cpu is not None else float("nan"),
        "total": total,
        "peak_mb": peak,
        "cpu": cpu,
    }


def measure_app(transcript: Path, work: Path, server: Any, code: Path | None) -> dict[str, float]:
    home, project = _session_home(transcript, work)
    env = _env(home, server.base_url, code)
    started = time.time()
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), f"--child-app={' '.join(RESUME_FLAGS)}"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    status, peak, cpu, lines = _wait_reading(child)
    shown = shown_cpu = drawn = drawn_cpu = ready = ready_cpu = None
    for line in lines:
        if line.startswith("SHOWN "):
            shown, shown_cpu = float(line.split()[1]) - started, float(line.split()[2])
        elif line.startswith("READY "):
            ready, ready_cpu = float(line.split()[1]) - started, float(line.split()[2])
        elif line.startswith("DRAWN "):
            drawn, drawn_cpu = float(line.split()[1]) - started, float(line.split()[2])
    if status != 0 or shown is None:
        raise SystemExit(f"the app failed ({status}): {child.stderr.read()[-2000:] if child.stderr else ''}")
    return {
        "shown": shown,
        "shown_cpu": shown_cpu or 0.0,
        "drawn": drawn if drawn is not None else float("nan"),
        "drawn_cpu": drawn_cpu if drawn_cpu is not None else float("nan"),
        "ready": ready if ready is not None else float("nan"),
        "ready_cpu": ready_cpu if ready_cpu is not None else float("nan"),
        "peak_mb": peak,
        "cpu": cpu,
    }


def child_app(flags: str) -> None:
    """The app as `agent-repl --resume ID` (or `--continue`: `flags`) builds it (the CLI's own launch: credentials moved out
    of the environment, which re-executes this process; settings, the model check and the resume
    made in the launcher's thread while the app paints), headless; prints the time when the newest
    history entry is mounted and painted."""
    import asyncio

    from agent_repl.core.permissions.credentials import take_credentials

    cwd = Path.cwd()
    credentials = take_credentials(cwd)  # first, as agent_repl.entry does: it may re-execute

    from agent_repl.cli import build_parser, prepare_launch
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher

    args = build_parser().parse_args(flags.split())

    async def run() -> None:
        try:  # the CLI's own launcher (with the preview of the newest entries)
            from agent_repl.cli import app_launcher

            launcher = app_launcher(args, cwd, credentials)
        except ImportError:  # older checkouts
            try:
                from agent_repl.cli import _tail_preview as tail_preview
            except ImportError:
                tail_preview = None
            prepare = partial(prepare_launch, args, cwd, credentials=credentials)
            preview = tail_preview(args, cwd) if tail_preview is not None else None
            launcher = Launcher(cwd, prepare, preview) if preview is not None else Launcher(cwd, prepare)
        app = AgentApp(launcher)
        display, drawn = app._display, []

        def display_noting_the_newest(screen: Any, renderable: Any) -> None:
            """Textual's frame output, noting when the first frame holding the newest entry went out
            (the resume's preview of the newest entries, or the opened session's history)."""
            display(screen, renderable)
            if renderable is None or drawn:
                return
            conversation = app.conversation
            items = conversation.view.items
            widget = conversation.widgets.get(items[-1].key) if items else None
            if widget is not None and widget.region:
                drawn.append(f"DRAWN {time.time()} {time.process_time()}")

        def newest_mounted() -> str | None:
            items = app.conversation.view.items
            return items[-1].key if items and items[-1].key in app.conversation.widgets else None

        app._display = display_noting_the_newest  # type: ignore[method-assign]
        async with app.run_test(size=(120, 40)) as pilot:
            while (shown := newest_mounted()) is None:  # noqa: ASYNC110 (polled as a user's eye would)
                await asyncio.sleep(0.002)
            await pilot.pause()  # the next refresh paints it
            print(f"SHOWN {time.time()} {time.process_time()}", flush=True)
            while app.holder is None or newest_mounted() is None:  # noqa: ASYNC110
                await asyncio.sleep(0.002)
            await pilot.pause()
            print(f"READY {time.time()} {time.process_time()}", flush=True)
            if newest_mounted() != shown:
                raise SystemExit(
                    f"the session's newest entry ({newest_mounted()}) is not the one shown first ({shown})"
                )
            print(*drawn, sep="\n", flush=True)

    asyncio.run(run())


def _compile(code: Path | None) -> None:
    """The code's packages compiled to bytecode beside their sources (what an install does)."""
    packages = (
        [str(p) for p in (code / "agent_repl", code / "tools") if p.is_dir()] if code is not None else []
    )
    if packages:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", *packages], check=True, stdout=subprocess.DEVNULL
        )


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _print_growth(
    table: dict[str, dict[float, dict[str, float]]], floors: dict[float, tuple[float, float]]
) -> None:
    """What the largest transcript costs over the smallest, per code, next to the floor's difference."""
    small, large = min(floors), max(floors)
    if small == large:
        return
    floor = floors[large][0] - floors[small][0]
    mb = floors[large][1] - floors[small][1]
    print(f"from {small:g} MB to {large:g} MB (+{mb:.0f} MB; the floor +{floor:.2f} s CPU):")
    for name, rows in table.items():
        a, b = rows[small], rows[large]
        cpu = b["first_cpu"] - a["first_cpu"]
        line = (
            f"  {name:>8} -p: CPU to the first request +{cpu:.2f} s ({cpu / floor:.2f}x the floor's), "
            f"peak +{b['peak_mb'] - a['peak_mb']:.0f} MB ({(b['peak_mb'] - a['peak_mb']) / mb:.2f} MB per MB)"
        )
        if "app_shown_cpu" in a:
            shown = b["app_shown_cpu"] - a["app_shown_cpu"]
            line += (
                f"; app: CPU until shown +{shown:.2f} s ({shown / floor:.2f}x the floor's), "
                f"peak +{b['app_peak_mb'] - a['app_peak_mb']:.0f} MB ({(b['app_peak_mb'] - a['app_peak_mb']) / mb:.2f} MB per MB)"
            )
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,100")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--baseline", type=Path, help="a checkout of an earlier commit, measured beside this one"
    )
    parser.add_argument("--no-app", action="store_true", help="skip the full-screen app")
    parser.add_argument(
        "--continue", dest="continue_latest", action="store_true",
        help="resume with --continue (the folder's newest session) instead of --resume ID",
    )  # fmt: skip
    parser.add_argument(
        "--cache", type=Path, help="where the generated transcripts are kept (default: benchmarks/.cache)"
    )
    parser.add_argument("--child-app", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_app:
        child_app(args.child_app)
        return
    if args.continue_latest:
        RESUME_FLAGS[:] = ["--continue"]

    from agent_repl.emulator.policies import CallablePolicy
    from agent_repl.emulator.server import EmulatorServer

    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    files = transcripts(sizes, args.cache or CACHE)
    # The code of this checkout (not whatever the environment installed), and the baseline's.
    codes: list[tuple[str, Path | None]] = [("this", ROOT)]
    if args.baseline is not None:
        codes.insert(0, ("baseline", args.baseline.resolve()))
    for _, code in codes:
        _compile(code)
    first = FirstRequest()
    server = EmulatorServer(policy=CallablePolicy(first))
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fresh: dict[str, list[dict[str, float]]] = {name: [] for name, _ in codes}
            for _ in range(args.runs):
                for name, code in codes:
                    fresh[name].append(measure_print(None, Path(tmp) / "w", server, code, first))
            for name, _ in codes:
                print(
                    f"{name:>8} fresh `agent-repl -p hi`: first request {_median(fresh[name], 'first_request'):.2f} s "
                    f"({_median(fresh[name], 'first_cpu'):.2f} s CPU), peak {_median(fresh[name], 'peak_mb'):.0f} MB",
                    flush=True,
                )
            table: dict[str, dict[float, dict[str, float]]] = {name: {} for name, _ in codes}
            floors_by_size: dict[float, tuple[float, float]] = {}
            for _, code in codes:  # untimed: the model list a real resume finds in its home
                measure_print(next(iter(files.values())), Path(tmp) / "w", server, code, first)
            for size, path in files.items():
                entries = sum(1 for _ in open(path, "rb"))
                floor = statistics.median(measure_floor(path)[0] for _ in range(args.runs))
                mb = path.stat().st_size / 2**20
                floors_by_size[size] = (floor, mb)
                print(
                    f"{size:g} MB ({mb:.1f} MB, {entries:,} lines): floor (json.loads of every line) {floor:.2f} s CPU",
                    flush=True,
                )
                results: dict[str, dict[str, list[dict[str, float]]]] = {
                    name: {"print": [], "app": []} for name, _ in codes
                }
                for _ in range(args.runs):
                    for name, code in codes:
                        results[name]["print"].append(
                            measure_print(path, Path(tmp) / "w", server, code, first)
                        )
                        if not args.no_app:
                            results[name]["app"].append(measure_app(path, Path(tmp) / "w", server, code))
                for name, _ in codes:
                    runs, app = results[name]["print"], results[name]["app"]
                    row = {
                        key: _median(runs, key)
                        for key in ("first_request", "first_cpu", "total", "cpu", "peak_mb")
                    }
                    if app:
                        row.update(
                            {
                                f"app_{key}": _median(app, key)
                                for key in (
                                    "shown",
                                    "shown_cpu",
                                    "drawn",
                                    "drawn_cpu",
                                    "ready",
                                    "ready_cpu",
                                    "peak_mb",
                                )
                            }
                        )
                    table[name][size] = row
                    print(
                        f"  {name:>8} -p: first request {row['first_request']:.2f} s, {row['first_cpu']:.2f} s CPU; "
                        f"total {row['total']:.2f} s, {row['cpu']:.2f} s CPU; peak {row['peak_mb']:.0f} MB",
                        flush=True,
                    )
                    if app:
                        print(
                            f"  {name:>8} app: newest entry drawn {row['app_drawn']:.2f} s, {row['app_drawn_cpu']:.2f} s CPU; "
                            f"shown {row['app_shown']:.2f} s, {row['app_shown_cpu']:.2f} s CPU; "
                            f"session open {row['app_ready']:.2f} s, {row['app_ready_cpu']:.2f} s CPU; "
                            f"peak {row['app_peak_mb']:.0f} MB",
                            flush=True,
                        )
            _print_growth(table, floors_by_size)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
