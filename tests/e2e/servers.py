"""Real servers for the browser tests: JupyterLab, Notebook 7 and marimo, each in its own
process group.

Each runs this interpreter's environment (the project's venv) with ``src/`` on PYTHONPATH and JAX
on CPU, on 127.0.0.1 and a free port, with every per-user folder pointed at a temporary one, and
are stopped with SIGTERM to the whole group (SIGKILL if that is not enough). Their output goes to
a log file, which the tests copy into ``test-artifacts/`` when they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
ARTIFACTS = ROOT / "test-artifacts"


@dataclass
class Server:
    url: str  # base URL, ending in "/"
    log: pathlib.Path
    proc: subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env(tmp: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(ROOT / "src"), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env.update(
        PYTHONPATH=os.pathsep.join(paths),
        JAX_PLATFORMS="cpu",
        PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
        IPYTHONDIR=str(tmp / "ipython"),
        MPLBACKEND="agg",
    )
    env.pop("VIRTUAL_ENV_PROMPT", None)
    return env


def _tail(log: pathlib.Path, n: int = 4000) -> str:
    try:
        return log.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: pathlib.Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{_tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status < 500:
                    return
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no answer from {url} after {timeout:.0f} s:\n{_tail(log)}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM to the process group, then SIGKILL if it is still there after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


@contextlib.contextmanager
def _run(
    argv: list[str], env: dict[str, str], log: pathlib.Path, probe: str, timeout: float
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=str(log.parent),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the kernels go with it
        )
        try:
            _wait_http(probe, proc, log, timeout)
            yield proc
        finally:
            stop(proc)


def _write_json(path: pathlib.Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _jupyter_env(tmp: pathlib.Path) -> dict[str, str]:
    """The environment of a Jupyter server whose every per-user folder is under ``tmp``, whose
    kernel ``python3`` is this interpreter, and whose front end settings (JupyterLab's, which
    Notebook 7 reads too) show no pop-up and every cell."""
    from ipykernel.kernelspec import install

    for d in ("config", "runtime", "settings", "workspaces", "ipython", "data"):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    # A kernelspec found first through JUPYTER_PATH: argv[0] is this Python, whatever else exists.
    install(kernel_name="python3", prefix=str(tmp / "kernel"))
    settings = tmp / "settings"
    # No news / update pop-up over the page.
    _write_json(
        settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    # Every cell in the DOM (no virtual scrolling): all the views render, wherever they are; and
    # the notebook's kernel starts without a "Select Kernel" dialog.
    _write_json(
        settings / "@jupyterlab/notebook-extension/tracker.jupyterlab-settings",
        {"windowingMode": "none", "autoStartDefaultKernel": True},
    )
    env = base_env(tmp)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_PATH=str(tmp / "kernel" / "share" / "jupyter"),
        JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    return env


@contextlib.contextmanager
def _jupyter(
    app: str, root: pathlib.Path, tmp: pathlib.Path, flags: list[str], timeout: float
) -> Iterator[Server]:
    """``jupyter <app>`` serving ``root`` on 127.0.0.1 without a token."""
    env = _jupyter_env(tmp)
    port = free_port()
    argv = [
        str(BIN / "jupyter"),
        app,
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        # JupyterLab's server extension (also loaded by Notebook 7): no news, no update check
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *flags,
    ]
    url = f"http://127.0.0.1:{port}/"
    log = tmp / f"jupyter{app}.log"
    with _run(argv, env, log, url + "api/status", timeout) as proc:
        yield Server(url, log, proc)


@contextlib.contextmanager
def jupyter_lab(root: pathlib.Path, tmp: pathlib.Path, timeout: float = 60) -> Iterator[Server]:
    """``jupyter lab`` serving ``root``, ``window.jupyterapp`` in its page; its kernel
    ``python3`` is this interpreter."""
    with _jupyter("lab", root, tmp, ["--LabApp.expose_app_in_browser=True"], timeout) as server:
        yield server


@contextlib.contextmanager
def jupyter_notebook(
    root: pathlib.Path, tmp: pathlib.Path, timeout: float = 60
) -> Iterator[Server]:
    """``jupyter notebook`` (Notebook 7) serving ``root``: its pages are ``tree/`` and
    ``notebooks/<path>``, with ``window.jupyterapp`` (its own flag: ``JupyterNotebookApp``, not
    ``LabApp``); its kernel ``python3`` is this interpreter."""
    flags = ["--JupyterNotebookApp.expose_app_in_browser=True"]
    with _jupyter("notebook", root, tmp, flags, timeout) as server:
        yield server


@contextlib.contextmanager
def marimo_run(app: pathlib.Path, tmp: pathlib.Path, timeout: float = 60) -> Iterator[Server]:
    """``marimo run app`` (read-only app mode), headless, without a token."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = base_env(tmp)
    env.update(
        MARIMO_SKIP_UPDATE_CHECK="1",
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_STATE_HOME=str(tmp / "state"),
    )
    port = free_port()
    argv = [
        str(BIN / "marimo"),
        "-y",
        "run",
        str(app),
        "--headless",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-token",
    ]
    url = f"http://127.0.0.1:{port}/"
    log = tmp / "marimo.log"
    with _run(argv, env, log, url + "health", timeout) as proc:
        yield Server(url, log, proc)


@contextlib.contextmanager
def artifacts_on_failure(name: str, page: object, *logs: pathlib.Path) -> Iterator[pathlib.Path]:
    """On an exception: a screenshot, the console errors and the server logs in
    ``test-artifacts/<name>/``, and the folder named in the re-raised message."""
    folder = ARTIFACTS / name
    shutil.rmtree(folder, ignore_errors=True)
    try:
        yield folder
    except Exception as e:
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):
            page.screenshot(path=str(folder / "page.png"), full_page=True)  # type: ignore[attr-defined]
        with contextlib.suppress(Exception):
            errors = getattr(page, "errors", [])
            (folder / "console-errors.txt").write_text("\n".join(errors))
        for log in logs:
            with contextlib.suppress(OSError):
                shutil.copy(log, folder / log.name)
        raise AssertionError(f"{type(e).__name__}: {e}\n[artifacts: {folder}]") from e
