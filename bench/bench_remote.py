"""Remote targets: sync, drift and rotation of 100 and 1,000 secrets in AWS SSM (moto's server)
and Vault (the test peer), at 0 and 50 ms of added latency per request, next to local files.

Each store runs in its own process behind bench/latency_proxy.py (one delay per request round
trip); the engine runs in this process, as a worker runs it. A sequential row (the provider's
``max_concurrency: 1``, as before concurrent writes) shows what the pool buys. Every figure is
one run (a fresh store and workspace each); the section takes about two minutes.

Run alone: ``.venv/bin/python bench/bench_remote.py [--quick] [--full]``; ``make
bench`` runs it as its last section (``--no-remote`` skips it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_support as b

sys.path.insert(0, str(b.ROOT))
RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 10.0  # issue 19: 1,000 SSM secrets behind 50 ms: sync and drift at most 10 s each


@dataclass(frozen=True)
class Case:
    store: str  # "local", "ssm", "vault"
    delay_ms: int
    size: int
    concurrency: int | None = None  # None: the default (max_concurrency unset)

    @property
    def label(self) -> str:
        pool = "default pool" if self.concurrency is None else f"max_concurrency {self.concurrency}"
        if self.store == "local":
            return f"local files, {self.size}"
        return f"{self.store} @{self.delay_ms} ms, {self.size}, {pool}"


def cases(quick: bool, full: bool) -> list[Case]:
    sizes = (100,) if quick else (100, 1000)
    out = [Case("local", 0, size) for size in sizes]
    for delay in (0, 50):
        out += [Case("ssm", delay, size) for size in sizes]
        out.append(Case("ssm", delay, 100, 1))  # sequential, as before the pool
    out += [Case("vault", delay, 100) for delay in (0, 50)]
    if full:  # the sequential ones take minutes: for the README, not for every `make bench`
        out += [Case("vault", 50, 1000), Case("ssm", 50, 1000, 16), Case("ssm", 0, 1000, 1),
                Case("ssm", 50, 1000, 1)]
    return out


# -- stores ---------------------------------------------------------------------------------------


def _spawn(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a helper that prints ``listening <port>``; its stdin kept open is its lifeline."""
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=b.ROOT)
    assert process.stdout is not None
    line = process.stdout.readline().split()
    if line[:1] != ["listening"]:
        process.kill()
        raise RuntimeError(f"{args[1]} did not start")
    return process, line[1]


@contextmanager
def _running(args: list[str]) -> Iterator[str]:
    process, port = _spawn(args)
    try:
        yield port
    finally:
        if process.stdin:
            process.stdin.close()
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def moto_server() -> Iterator[int]:
    port = b.free_port()
    # werkzeug writes an answer's headers and body apart; with Nagle's algorithm on, the body
    # waits for the client's delayed ACK (up to 40 ms a request), which AWS never makes clients do.
    launch = ("import sys, werkzeug.serving as s; s.WSGIRequestHandler.disable_nagle_algorithm = True; "
              "from moto.server import main; main(sys.argv[1:])")
    process = subprocess.Popen([b.PYTHON, "-c", launch, "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=b.ROOT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("moto's server did not start")
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def proxy(upstream_port: int, delay_ms: int) -> Any:
    return _running([b.PYTHON, str(HERE / "latency_proxy.py"), "--upstream", f"127.0.0.1:{upstream_port}",
                     "--delay-ms", str(delay_ms)])


def serve_vault() -> None:
    """``--serve-vault``: the Vault test peer in this process until stdin closes."""
    from tests.peers.vault_server import VaultServer

    with VaultServer() as server:
        print(f"listening {server.url.rsplit(':', 1)[1]}", flush=True)
        sys.stdin.read()


# -- definitions ----------------------------------------------------------------------------------


def definition(folder: Path, case: Case, endpoint: str, run: str) -> Path:
    concurrency = {} if case.concurrency is None else {"max_concurrency": case.concurrency}
    if case.store == "ssm":
        provider = {"kind": "aws", "auth": {"kind": "static", "config": {
            "access_key_id": "testing", "secret_access_key": "testing"}},
            "config": {"region": "us-east-1", "endpoint_url": endpoint, **concurrency}}
    else:
        provider = {"kind": "vault", "auth": {"kind": "token", "config": {"token": "root-token"}},
                    "config": {"address": endpoint, **concurrency}}
    secrets = []
    for i in range(case.size):
        config = {"name": f"/bench/{run}/s{i:05d}"} if case.store == "ssm" else {"path": f"bench/{run}/s{i:05d}"}
        kind = "ssm_parameter" if case.store == "ssm" else "vault_kv"
        secrets.append({"name": f"s{i:05d}", "kind": "random_password", "config": {"length": 24},
                        "targets": [{"provider": "store", "kind": kind, "config": config}]})
    path = folder / "Secretfile.yml"
    path.write_text(json.dumps({"version": "1.0", "providers": {"store": provider}, "secrets": secrets}))
    return path


# -- measurement ----------------------------------------------------------------------------------


def measure(definition_path: Path, size: int) -> dict[str, float]:
    """Seconds of a first sync, a drift check and a forced rotation of every secret; each checked."""
    from secretsapi.service.drift import detect_drift
    from secretsapi.service.rotation import execute_rotation
    from secretsapi.service.sync import sync
    from secretsapi.service.workspace import Workspace

    ws = Workspace(definition_path=definition_path, environ={}, lock_timeout=120)
    figures: dict[str, float] = {}
    steps: list[tuple[str, Callable[[], Any], Callable[[Any], bool]]] = [
        ("sync", lambda: sync(ws), lambda r: len(r.secrets_generated) == size and not r.errors),
        ("drift", lambda: detect_drift(ws), lambda r: not r.has_drift),
        ("rotation", lambda: execute_rotation(ws, force=True), lambda r: len(r.rotated) == size and not r.errors),
    ]
    for name, step, ok in steps:
        started = time.perf_counter()
        result = step()
        figures[name] = time.perf_counter() - started
        if not ok(result):
            raise RuntimeError(f"{name} of {definition_path.parent.name} did not succeed")
    return figures


def warm(folder: Path, case: Case, endpoint: str) -> None:
    """A small sync first: the SDK's service models, the store's backend and its proxy warm up."""
    folder.mkdir()
    small = Case(case.store, case.delay_ms, 16)
    measure(definition(folder, small, endpoint, f"warm-{folder.name}"), small.size)


def run(log: Callable[[str], None], *, quick: bool = False, full: bool = False) -> dict[str, Any]:
    """The section's figures and targets, logging each case as it ends."""
    figures: dict[str, dict[str, float]] = {}
    todo = cases(quick, full)
    with tempfile.TemporaryDirectory(prefix="secrets-bench-remote-") as tmp, ExitStack() as stack:
        upstream = {"ssm": stack.enter_context(moto_server()),
                    "vault": int(stack.enter_context(_running([b.PYTHON, __file__, "--serve-vault"])))}
        proxies: dict[tuple[str, int], str] = {}
        for index, case in enumerate(todo):
            folder = Path(tmp) / f"case{index}"
            folder.mkdir()
            if case.store == "local":
                b.write_definition(folder, case.size)
                path = folder / "Secretfile.yml"
            else:
                key = (case.store, case.delay_ms)
                if key not in proxies:
                    proxies[key] = stack.enter_context(proxy(upstream[case.store], case.delay_ms))
                    warm(Path(tmp) / f"warm{index}", case, f"http://127.0.0.1:{proxies[key]}")
                path = definition(folder, case, f"http://127.0.0.1:{proxies[key]}", f"c{index}")
            figures[case.label] = measure(path, case.size)
            log(f"remote: {case.label}: " + ", ".join(f"{k} {v:.2f}s" for k, v in figures[case.label].items()))
    return {"figures": figures, "targets": targets(figures)}


def targets(figures: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    at50 = figures.get(Case("ssm", 50, 1000).label)
    for step in ("sync", "drift"):
        seconds = at50[step] if at50 else None
        out.append({"target": f"R. 1000 SSM @50 ms: {step} <= {TARGET_SECONDS:.0f} s",
                    "figure": f"{seconds:.2f} s" if seconds is not None else "not measured",
                    "met": seconds <= TARGET_SECONDS if seconds is not None else None})
    for size in (100, 1000):
        pooled, sequential = figures.get(Case("ssm", 0, size).label), figures.get(Case("ssm", 0, size, 1).label)
        if pooled and sequential:
            ratio = pooled["sync"] / sequential["sync"]
            out.append({"target": f"R. {size} SSM @0 ms: sync no slower than sequential",
                        "figure": f"{ratio:.2f}x", "met": ratio <= 1.1})
    return out


def table(section: dict[str, Any]) -> str:
    lines = [f"{'remote targets (in-process engine, one run)':<52} {'sync s':>8} {'drift s':>8} {'rotate s':>8}"]
    for label, fig in section["figures"].items():
        lines.append(f"{label:<52} {fig['sync']:>8.2f} {fig['drift']:>8.2f} {fig['rotation']:>8.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 secrets only")
    parser.add_argument("--full", action="store_true",
                        help="also 1,000 Vault secrets, and 1,000 SSM at max_concurrency 1 and 16 (minutes)")
    parser.add_argument("--serve-vault", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_vault:
        serve_vault()
        return
    started = time.monotonic()
    section = run(lambda message: print(f"[{time.monotonic() - started:6.1f}s] {message}", file=sys.stderr,
                                        flush=True), quick=args.quick, full=args.full)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "remote.json").write_text(json.dumps(section, indent=2) + "\n")
    print(table(section))
    for t in section["targets"]:
        print(f"{t['target']:<60} {t['figure']:>12}  {({True: 'yes', False: 'NO', None: 'n/a'})[t['met']]}")


if __name__ == "__main__":
    main()
