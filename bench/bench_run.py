"""``make bench``: serve generated definitions with gunicorn, drive them, print one table.

Every figure is the median of ``--runs`` runs; the raw results go to bench/results/latest.json.
Figures are meant as ratios inside one run (e.g. /secrets against /health), so they hold on a
busy machine. Run: ``.venv/bin/python bench/bench_run.py [--quick] [--workers N]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_during_sync
import bench_remote
import bench_support as b

RESULTS = Path(__file__).resolve().parent / "results"
DEFINITION_LIMIT = 16 * 1_048_576  # SERVICE_MAX_DEFINITION_BYTES' default
AUDIT_QUERIES = {
    "no filter": "/audit/logs?limit=50",
    "action": "/audit/logs?limit=50&action=check_drift",
    "resource": "/audit/logs?limit=50&resource=secret:s00042",
    "action+resource": "/audit/logs?limit=50&action=check_drift&resource=secret:s00042",
    "offset=100000": "/audit/logs?limit=50&offset=100000",
}


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: median([run[key] for run in runs]) for key in runs[0]} | {"runs": len(runs)}


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="secrets-bench-"))
        self.results: dict[str, Any] = {"endpoints": {}, "operations": {}, "rss_mb": {}, "notes": []}
        self.started = time.monotonic()

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:6.1f}s] {message}", file=sys.stderr, flush=True)

    def instance(self, size: int, name: str, audit_rows: int) -> tuple[b.Server, Path, Path]:
        folder = self.tmp / f"{name}-def"
        folder.mkdir()
        b.write_definition(folder, size)
        data = self.tmp / f"{name}-data"
        data.mkdir()
        env = b.service_env(folder, data)
        b.migrate(env)
        seconds = b.seed_audit(data / "service.sqlite3", audit_rows)
        self.log(f"{name}: {size} secrets, {audit_rows} audit rows seeded in {seconds:.1f}s")
        server = b.Server(env, self.args.workers)
        server.start()
        return server, folder, data

    def load(self, plan: dict[str, tuple[b.Server, str]], *, rounds: int | None = None,
             seconds: float | None = None) -> dict[str, list[dict[str, float]]]:
        """Load runs in rounds (each endpoint once per round), so a machine that gets busier
        during the run slows every endpoint alike and per-round ratios between them hold; each
        run also records the workers' CPU milliseconds per request, which a busy host barely
        moves. ``plan`` maps a label to the instance and path it loads."""
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in plan}
        for _ in range(rounds or self.args.runs):
            for label, (server, path) in plan.items():
                cpu = server.cpu_seconds()
                run = b.load(server.port, path, seconds=seconds or self.args.seconds,
                             connections=self.args.connections)
                run["cpu_ms"] = (server.cpu_seconds() - cpu) * 1000 / max(1, run["requests"])
                runs[label].append(run)
        for label in plan:
            self.results["endpoints"][label] = median_of(runs[label]) | {"raw": runs[label]}
            self.log(f"{label}: {self.results['endpoints'][label]['rps']:.0f} req/s")
        return runs

    def ratio(self, runs: dict[str, list[dict[str, float]]], label: str, reference: str, key: str) -> None:
        """The median of per-round ratios ``label / reference`` of ``key``, kept with ``label``:
        each round is compared with the same round's reference, as the host's speed drifts."""
        pairs = zip(runs[label], runs[reference], strict=True)
        self.results["endpoints"][label][f"{key}_ratio"] = median([run[key] / ref[key] for run, ref in pairs])

    def operation(self, label: str, timings: list[float]) -> None:
        self.results["operations"][label] = {"seconds": median(timings), "raw": timings}
        self.log(f"{label}: {median(timings):.3f}s")

    def sync_runs(self, server: b.Server, folder: Path, size: int) -> None:
        """Fresh syncs (nothing generated yet), twice: right after the definition file changed
        (each worker parses it again) and with the definition already parsed by every worker."""
        definition = folder / "Secretfile.yml"
        cold, warm = [], []
        for _ in range(self.args.runs):
            b.reset_state(folder)
            stat = definition.stat()
            os.utime(definition, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
            cold.append(b.timed(server.port, "POST", "/sync", {}))
        for _ in range(self.args.runs):
            b.reset_state(folder)
            # Enough concurrent reads that every worker has parsed the definition, and every
            # process of the job worker (where the sync runs).
            b.load(server.port, "/secrets", seconds=1, connections=8)
            b.warm_job_workers(server)
            warm.append(b.timed(server.port, "POST", "/sync", {}))
        self.operation(f"POST /sync ({size}), definition just changed", cold)
        self.operation(f"POST /sync ({size}), definition parsed", warm)

    def rss(self, server: b.Server, label: str) -> None:
        peaks, jobs = server.peak_rss_mb(), server.peak_rss_job_workers_mb()
        self.results["rss_mb"][label] = {"max": max(peaks, default=float("nan")), "workers": peaks,
                                         "job_workers": max(jobs, default=float("nan"))}

    def run(self) -> None:
        sizes: list[int] = self.args.sizes
        # 1. 1,000 secrets, 1,000 audit rows: reads, checks, audit pages, sync.
        server, folder, data_small = self.instance(1000, "s1000", 1000)
        try:
            b.timed(server.port, "POST", "/sync", {})
            reads = {
                "GET /health": "/health",
                "GET /secrets (1000)": "/secrets",
                "GET /secrets/{name}/status": "/secrets/s00500/status",
            }
            # Short interleaved rounds, many of them: the ratio targets are medians of per-round ratios.
            runs = self.load({label: (server, path) for label, path in reads.items()},
                             rounds=3 * self.args.runs, seconds=max(1.0, self.args.seconds / 2))
            for label in list(reads)[1:]:
                self.ratio(runs, label, "GET /health", "rps")
            b.warm_job_workers(server)
            for op in ("/rotation/check", "/policy/check", "/drift/check"):
                self.operation(f"POST {op} (1000)", [b.timed(server.port, "POST", op, {})
                                                     for _ in range(self.args.runs)])
            if 1000 in sizes:
                self.sync_runs(server, folder, 1000)
            self.rss(server, "1000 secrets")

            # 2. The same definition with 1,000,000 audit rows, beside the first instance: each
            # audit query runs on both in turn, so the 1M/1k ratios are per round too.
            big, big_folder, data_big = self.instance(1000, "s1000-1m", self.args.big_audit)
            try:
                plan = {"GET /health (1M-row instance)": (big, "/health")}
                for label, path in AUDIT_QUERIES.items():
                    plan[f"GET /audit/logs 1k rows, {label}"] = (server, path)
                    plan[f"GET /audit/logs 1M rows, {label}"] = (big, path)
                # A p50 under 8 connections is mostly queueing, which follows the host's speed
                # by the second: many short rounds, like the reads above.
                runs = self.load(plan, rounds=3 * self.args.runs, seconds=max(1.0, self.args.seconds / 2))
                for label in AUDIT_QUERIES:
                    self.ratio(runs, f"GET /audit/logs 1M rows, {label}", f"GET /audit/logs 1k rows, {label}", "p50_ms")
                # Under 8 connections a p50 is mostly queueing (8 / req/s); one connection shows
                # what a single large-offset page costs.
                one = [b.load(big.port, AUDIT_QUERIES["offset=100000"], seconds=self.args.seconds, connections=1)
                       for _ in range(self.args.runs)]
                self.results["endpoints"]["GET /audit/logs 1M rows, offset=100000, 1 connection"] = (
                    median_of(one) | {"raw": one})
            finally:
                big.stop()
        finally:
            server.stop()
        self.results["audit_rows_after"] = {"1k": b.audit_rows(data_small / "service.sqlite3"),
                                            "1M": b.audit_rows(data_big / "service.sqlite3")}
        self.results["audit_write_ms"] = {"1k": b.audit_write_cost(b.service_env(folder, data_small)),
                                          "1M": b.audit_write_cost(b.service_env(big_folder, data_big))}

        # 3. Syncs of every other size; /health while the 5,000-secret sync runs; RSS.
        for size in [s for s in sizes if s != 1000]:
            probe = self.tmp / f"probe-{size}"
            probe.mkdir()
            definition_bytes = b.write_definition(probe, size).stat().st_size
            if definition_bytes > DEFINITION_LIMIT:
                note = (f"{size} secrets: definition is {definition_bytes} bytes, over the service's "
                        f"{DEFINITION_LIMIT}-byte definition limit; not measured")
                self.results["notes"].append(note)
                self.log(note)
                continue
            server, folder, _ = self.instance(size, f"s{size}", 1000)
            try:
                self.sync_runs(server, folder, size)
                if size == 5000:
                    sync_s, health = [], []
                    definition = folder / "Secretfile.yml"
                    for _ in range(self.args.runs):
                        b.reset_state(folder)
                        # The longer case: the sync parses the changed definition first.
                        stat = definition.stat()
                        os.utime(definition, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
                        seconds, lat = b.health_during(
                            server.port, functools.partial(b.timed, server.port, "POST", "/sync", {}))
                        sync_s.append(seconds)
                        health.append(lat)
                    self.results["endpoints"]["GET /health during 5000 sync"] = median_of(health) | {
                        "raw": health, "sync_seconds": sync_s}
                    self.log(f"/health during sync: p99 {median([h['p99_ms'] for h in health]):.1f} ms")
                self.rss(server, f"{size} secrets")
                if size == 20000:
                    # After the RSS figure, which stays the sync sequence's alone.
                    self.results["during_sync"] = bench_during_sync.measure(server)
                    self.rss(server, "20000 secrets, after the forced syncs under probes")
            finally:
                server.stop()

        # 4. Remote targets behind added latency (bench_remote.py), unless --no-remote.
        if not self.args.no_remote:
            self.results["remote"] = bench_remote.run(self.log, full=self.args.remote_full)

    def finish(self) -> None:
        self.results["meta"] = {
            "commit": _commit(),
            "workers": self.args.workers,
            "threads_per_worker": 4,
            "connections": self.args.connections,
            "seconds_per_load": self.args.seconds,
            "runs": self.args.runs,
            "load_generator": "wrk" if shutil.which("wrk") else "python http.client threads",
            "cpus": _cpus(),
            "python": platform.python_version(),
            "elapsed_s": round(time.monotonic() - self.started, 1),
        }
        self.results["targets"] = targets(self.results)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "latest.json").write_text(json.dumps(self.results, indent=2) + "\n")
        print(table(self.results))
        shutil.rmtree(self.tmp, ignore_errors=True)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=b.ROOT, capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each as {target, figure, met}."""
    ep, ops = r["endpoints"], r["operations"]
    out: list[dict[str, Any]] = []

    def add(name: str, figure: str, met: bool | None) -> None:
        out.append({"target": name, "figure": figure, "met": met})

    for label in ("GET /secrets (1000)", "GET /secrets/{name}/status"):
        ratio = ep[label]["rps_ratio"]
        add(f"1. {label} >= 0.5x /health req/s (median per round)", f"{ratio:.2f}x", ratio >= 0.5)
    for op in ("rotation", "policy", "drift"):
        label = f"POST /{op}/check (1000)"
        add(f"2. {label} < 100 ms", f"{ops[label]['seconds'] * 1000:.0f} ms", ops[label]["seconds"] < 0.1)
    for state in ("definition just changed", "definition parsed"):
        s5 = ops.get(f"POST /sync (5000), {state}", {}).get("seconds")
        s20 = ops.get(f"POST /sync (20000), {state}", {}).get("seconds")
        add(f"3. POST /sync (5000), {state} < 2 s", f"{s5:.2f} s" if s5 else "not measured",
            s5 < 2 if s5 else None)
        add(f"3. POST /sync (20000) < 4.5x (5000), {state}", f"{s20 / s5:.2f}x" if s5 and s20 else "not measured",
            s20 / s5 < 4.5 if s5 and s20 else None)
    during = ep.get("GET /health during 5000 sync")
    add("4. /health p99 during 5000 sync < 100 ms", f"{during['p99_ms']:.1f} ms" if during else "not measured",
        during["p99_ms"] < 100 if during else None)
    for label in ("no filter", "action", "resource", "action+resource"):
        ratio = ep[f"GET /audit/logs 1M rows, {label}"]["p50_ms_ratio"]
        add(f"5. audit p50 1M/1k, {label} <= 2x (median per round)", f"{ratio:.2f}x", ratio <= 2)
    off = ep["GET /audit/logs 1M rows, offset=100000"]["p50_ms"]
    add("5. audit offset=100000 on 1M rows < 50 ms (p50, 8 conns)", f"{off:.1f} ms", off < 50)
    off1 = ep["GET /audit/logs 1M rows, offset=100000, 1 connection"]
    add("5. audit offset=100000 on 1M rows < 50 ms (p99, 1 conn)", f"{off1['p99_ms']:.1f} ms", off1["p99_ms"] < 50)
    write = max(r["audit_write_ms"].values())
    add("5. audit write < 1 ms", f"{write:.2f} ms", write < 1)
    for name, figure, met in bench_during_sync.targets(r.get("during_sync")):
        add(name, figure, met)
    rss = r["rss_mb"].get("20000 secrets", {}).get("max")
    add("6. peak RSS per worker (20000) < 150 MB", f"{rss:.0f} MB" if rss else "not measured",
        rss < 150 if rss else None)
    remote: list[dict[str, Any]] = r.get("remote", {}).get("targets", [])
    return out + remote


def table(r: dict[str, Any]) -> str:
    m = r["meta"]
    lines = [
        f"secrets-api bench: commit {m['commit']}, {m['workers']} workers x {m['threads_per_worker']} threads, "
        f"{m['cpus']} CPUs, {m['load_generator']} ({m['connections']} connections, {m['seconds_per_load']}s), "
        f"median of {m['runs']} runs, {m['elapsed_s']}s total",
        "",
        f"{'endpoint':<52} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms':>7}",
    ]
    for label, fig in r["endpoints"].items():
        lines.append(f"{label:<52} {fig['rps'] if 'rps' in fig else float('nan'):>8.0f} "
                     f"{fig['p50_ms']:>8.2f} {fig['p99_ms']:>8.2f} {fig.get('cpu_ms', float('nan')):>7.2f}")
    lines += ["", f"{'operation':<52} {'seconds':>8}"]
    for label, fig in r["operations"].items():
        lines.append(f"{label:<52} {fig['seconds']:>8.3f}")
    if r.get("during_sync"):
        lines += ["", *bench_during_sync.table_lines(r["during_sync"])]
    lines += ["", f"{'peak RSS per worker (VmHWM)':<52} {'max MB':>8} {'job max':>8}"]
    for label, fig in r["rss_mb"].items():
        lines.append(f"{label:<52} {fig['max']:>8.0f} {fig.get('job_workers', float('nan')):>8.0f}")
    lines += ["", f"{'audit write (recorder.record, in-process)':<52} {'ms':>8}"]
    for label, ms in r["audit_write_ms"].items():
        lines.append(f"{label + ' rows':<52} {ms:>8.3f}")
    if "remote" in r:
        lines += ["", bench_remote.table(r["remote"])]
    lines += ["", f"{'target':<60} {'figure':>12}  met"]
    for t in r["targets"]:
        met = {True: "yes", False: "NO", None: "n/a"}[t["met"]]
        lines.append(f"{t['target']:<60} {t['figure']:>12}  {met}")
    for note in r["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each load run")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 1000, 5000, 20000])
    parser.add_argument("--big-audit", type=int, default=1_000_000, help="rows of the large audit table")
    parser.add_argument("--no-remote", action="store_true", help="skip the remote targets section")
    parser.add_argument("--remote-full", action="store_true",
                        help="remote section: also 1,000 Vault, and 1,000 SSM at max_concurrency 1 and 16 (minutes)")
    args = parser.parse_args()
    bench = Bench(args)
    try:
        bench.run()
    except BaseException:
        shutil.rmtree(bench.tmp, ignore_errors=True)
        raise
    bench.finish()


if __name__ == "__main__":
    main()
