"""Fixtures of the benchmark: generated definitions, seeded audit tables, a served instance, load.

Everything here is bounded: every loop has a count limit and a time limit, and the service
listens on a free loopback port only.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
API_KEY = "bench-key-0123456789abcdef0123456789abcdef"
FILES = 20
ACTIONS = ("sync", "check_rotation", "check_policy", "check_drift", "list_secrets",
           "get_secret_status", "read_audit_logs", "execute_rotation", "validate_config", "authenticate")


# -- data ---------------------------------------------------------------------------------

def write_definition(folder: Path, size: int) -> Path:
    """``size`` random_password secrets with dotenv targets spread over 20 files."""
    lines = [
        'version: "1.0"',
        "metadata: {project: bench, owner: bench, compliance: [soc2]}",
        "policies:",
        "  rotation: {kind: rotation, require_rotation_period: true, max_age: 90d, severity: warning}",
        "secrets:",
    ]
    for i in range(size):
        lines.append(
            f"  - {{name: s{i:05d}, kind: random_password, rotation_period: 30d, config: {{length: 24}}, "
            f"targets: [{{provider: local, kind: file, config: {{path: out/f{i % FILES:02d}.env, format: dotenv}}}}]}}"
        )
    path = folder / "Secretfile.yml"
    path.write_text("\n".join(lines) + "\n")
    (folder / "out").mkdir(exist_ok=True)
    return path


def reset_state(folder: Path) -> None:
    """Forget every generated secret, so the next sync generates all of them again."""
    (folder / ".gitsecrets.lock").unlink(missing_ok=True)
    shutil.rmtree(folder / "out", ignore_errors=True)
    (folder / "out").mkdir()


def service_env(folder: Path, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update(
        SERVICE_DATA_DIR=str(data_dir),
        SERVICE_CONFIG=str(folder / "Secretfile.yml"),
        SERVICE_LOCKFILE=str(folder / ".gitsecrets.lock"),
        SERVICE_API_KEY=API_KEY,
        SERVICE_LOG_LEVEL="warning",
        SERVICE_SECRET_KEY="bench-" + "x" * 50,
    )
    return env


def migrate(env: dict[str, str]) -> None:
    subprocess.run([PYTHON, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True, timeout=120)


def seed_audit(db: Path, rows: int) -> float:
    """Insert ``rows`` audit rows directly (one transaction, executemany), then ANALYZE; seconds."""
    started = time.perf_counter()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    base = datetime.now(UTC) - timedelta(seconds=rows)

    def generate() -> Any:
        for i in range(rows):
            stamp = (base + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f")
            action = ACTIONS[i % len(ACTIONS)]
            resource = f"secret:s{(i * 7919) % 1000:05d}" if i % 3 else "secrets"
            yield (stamp, action, resource, "service", '{"count": 1}', i % 17 != 0)

    # Building the indexes once after the insert is several times faster than updating four
    # of them on every row; the schema (migrations) stays the source of their definitions.
    indexes = [sql for (sql,) in con.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_auditentry' AND sql IS NOT NULL")]
    with con:
        for (name,) in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_auditentry' "
                "AND sql IS NOT NULL").fetchall():
            con.execute(f'DROP INDEX "{name}"')
        con.executemany(
            "INSERT INTO audit_auditentry (timestamp, action, resource, user, details, success) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            generate(),
        )
        for sql in indexes:
            con.execute(sql)
        # The mentions the recorder writes with each row about one secret (``?secret=``).
        con.execute("INSERT INTO audit_auditmention (entry_id, secret, timestamp) "
                    "SELECT id, substr(resource, 8), timestamp FROM audit_auditentry WHERE resource LIKE 'secret:%'")
    con.execute("ANALYZE")
    con.close()
    return time.perf_counter() - started


def audit_rows(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT count(*) FROM audit_auditentry").fetchone()[0])
    finally:
        con.close()


# -- the served instance ------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    env: dict[str, str]
    workers: int
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    # `manage.py worker`: the long operations run there, as jobs.
    jobs: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        log = open(Path(self.env["SERVICE_DATA_DIR"]) / "serve.log", "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [PYTHON, "manage.py", "serve", "--workers", str(self.workers), "--port", str(self.port), "--worker", "no"],
            cwd=ROOT, env=self.env, stdout=log, stderr=log,
        )
        self.jobs = subprocess.Popen([PYTHON, "manage.py", "worker"], cwd=ROOT, env=self.env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}; see {log.name}")
            try:
                status, body = request(self.port, "GET", "/health")
                ready = status == 200 and json.loads(body).get("workers") == "up"
                if ready and len(self.worker_pids()) == self.workers:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("serve did not answer /health in time")

    def worker_pids(self) -> list[int]:
        """Gunicorn's workers: the children of the master (serve exec's into the master)."""
        assert self.proc is not None
        try:
            text = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def peak_rss_mb(self) -> list[float]:
        peaks = []
        for pid in self.worker_pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
            if match:
                peaks.append(int(match.group(1)) / 1024)
        return peaks

    def peak_rss_job_workers_mb(self) -> list[float]:
        """The VmHWM of the job worker (one process: its runners are threads)."""
        return [_peak_mb(self.jobs.pid)] if self.jobs is not None else []

    def cpu_seconds(self) -> float:
        """User + system CPU the workers have used so far (``/proc/<pid>/stat``)."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for pid in self.worker_pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        return total

    def stop(self) -> None:
        for proc in (self.proc, self.jobs):
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _peak_mb(pid: int) -> float:
    try:
        match = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    except OSError:
        return 0.0
    return int(match.group(1)) / 1024 if match else 0.0


def warm_job_workers(server: Server) -> None:
    """Every process of the job worker parses the definition: concurrent dry runs of one secret
    (the whole definition is parsed; the result and audit row are small), two per process of
    the worker's and of the web workers', so each gets some."""
    body = {"dry_run": True, "secret_name": "s00000"}
    threads = [threading.Thread(target=timed, args=(server.port, "POST", "/sync", body))
               for _ in range(2 * max(server.workers, int(server.env.get("SERVICE_JOB_WORKERS", "2"))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)


def request(port: int, method: str, path: str, body: Any = None, timeout: float = 120.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"X-API-Key": API_KEY}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def timed(port: int, method: str, path: str, body: Any = None) -> float:
    started = time.perf_counter()
    status, payload = request(port, method, path, body)
    elapsed = time.perf_counter() - started
    if status != 200:
        raise RuntimeError(f"{method} {path}: HTTP {status}: {payload[:300]!r}")
    return elapsed


# -- load -----------------------------------------------------------------------------------

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"unexpected wrk latency {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def load(port: int, path: str, *, seconds: float, connections: int) -> dict[str, float]:
    """requests/s, p50 and p99 (ms) of GET ``path`` under closed-loop load."""
    if shutil.which("wrk"):
        return _wrk(port, path, seconds=seconds, connections=connections)
    return _python_load(port, path, seconds=seconds, connections=connections)


def _wrk(port: int, path: str, *, seconds: float, connections: int) -> dict[str, float]:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "--timeout", "10s",
           "-H", f"X-API-Key: {API_KEY}", f"http://127.0.0.1:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=seconds + 30).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"GET {path}: non-2xx answers under load:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return {"rps": rps, "p50_ms": p50, "p99_ms": p99, "requests": requests}


def _python_load(port: int, path: str, *, seconds: float, connections: int) -> dict[str, float]:
    """Fallback when wrk is missing: threads with keep-alive http.client connections."""
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = []
        for _ in range(100_000):
            if time.perf_counter() >= deadline:
                break
            started = time.perf_counter()
            conn.request("GET", path, headers={"X-API-Key": API_KEY})
            response = conn.getresponse()
            response.read()
            mine.append((time.perf_counter() - started) * 1000)
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    elapsed = time.perf_counter() - started
    return {"rps": len(latencies) / elapsed, **percentiles(latencies), "requests": len(latencies)}


def percentiles(latencies_ms: list[float]) -> dict[str, float]:
    ordered = sorted(latencies_ms)
    if not ordered:
        return {"p50_ms": float("nan"), "p99_ms": float("nan")}
    return {"p50_ms": statistics.median(ordered), "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]}


def health_during(
    port: int, operation: Any, *, limit_s: float = 60.0, max_requests: int = 50_000
) -> tuple[float, dict[str, float]]:
    """Run ``operation`` in a thread and poll GET /health meanwhile; (its seconds, health latencies)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["seconds"] = operation()
        except Exception as exc:  # surfaced below
            result["error"] = exc

    thread = threading.Thread(target=run)
    latencies: list[float] = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    deadline = time.monotonic() + limit_s
    thread.start()
    time.sleep(0.02)  # let the operation's request reach the server first
    while thread.is_alive() and len(latencies) < max_requests and time.monotonic() < deadline:
        started = time.perf_counter()
        conn.request("GET", "/health")
        conn.getresponse().read()
        latencies.append((time.perf_counter() - started) * 1000)
    conn.close()
    thread.join(limit_s)
    if "error" in result:
        raise result["error"]
    return result["seconds"], {"samples": len(latencies), **percentiles(latencies)}


def audit_write_cost(env: dict[str, str], count: int = 300) -> float:
    """Median milliseconds of one ``audit.recorder.record`` call, in-process, against env's database."""
    code = (
        "import time, statistics\n"
        "from audit.recorder import record\n"
        "record(action='bench', resource='bench', user='bench', success=True, details={})\n"
        "t = []\n"
        f"for i in range({count}):\n"
        "    s = time.perf_counter()\n"
        "    record(action='bench', resource='secret:s00001', user='service', success=True,"
        " details={'count': i, 'names': ['s00001', 's00002']})\n"
        "    t.append(time.perf_counter() - s)\n"
        "print(statistics.median(t) * 1000)\n"
    )
    out = subprocess.run([PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return float(out.strip().splitlines()[-1])
