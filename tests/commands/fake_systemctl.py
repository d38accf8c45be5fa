"""``systemctl`` for the test of docs/operations.md's systemd steps (tests/commands/test_doc_production.py):
``daemon-reload`` does nothing; ``enable --now UNIT...`` starts each unit from the file the steps
copied, as systemd would run it (its ``EnvironmentFile=``, ``Environment=``, ``WorkingDirectory=``
and ``ExecStart=``), its host paths mapped into the test's folder (``FAKE_HOST_PATHS``, JSON).
The proxy's nginx runs the shipped config derived for a test (tests/processes/proxy.py) with the
certificate the steps made, on ``FAKE_PROXY_PORT``. Each started process group is listed in
``FAKE_PIDS`` for the test to end.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.processes.live import free_port
from tests.processes.proxy import NGINX, derive_config

PATHS: dict[str, str] = json.loads(os.environ["FAKE_HOST_PATHS"])


def mapped(text: str) -> str:
    for host, here in PATHS.items():
        text = text.replace(host, here)
    return text


def service(unit: Path) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    section = ""
    for line in unit.read_text().splitlines():
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def start(name: str) -> None:
    unit = Path(mapped("/etc/systemd/system/")) / f"{name}.service"
    settings = service(unit)
    log = open(Path(os.environ["FAKE_PIDS"]).parent / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it
    if name == "secretsapi-proxy":
        folder = Path(os.environ["FAKE_PIDS"]).parent / "proxy"
        (folder / "tls").mkdir(parents=True, exist_ok=True)
        for pem in ("fullchain.pem", "privkey.pem"):
            (folder / "tls" / pem).write_bytes(Path(mapped(f"/etc/secretsapi/tls/{pem}")).read_bytes())
        conf = derive_config(folder, port=int(os.environ["FAKE_PROXY_PORT"]), http_port=free_port(),
                             upstream_socket=Path(mapped("/run/secretsapi/web.sock")))
        argv = [NGINX, "-p", str(folder), "-c", str(conf), "-e", "stderr", "-g", "daemon off;"]
        env, cwd = dict(os.environ), str(folder)
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
        for path in settings.get("EnvironmentFile", []):
            for line in Path(mapped(path)).read_text().splitlines():
                if line.strip() and not line.startswith("#"):
                    key, _, value = line.partition("=")
                    env[key] = mapped(value)
        for line in settings.get("Environment", []):
            env.update((key, mapped(value)) for key, _, value in (item.partition("=") for item in shlex.split(line)))
        for name_ in settings.get("RuntimeDirectory", []) + settings.get("StateDirectory", []):
            root = "/run/" if name_ in settings.get("RuntimeDirectory", []) else "/var/lib/"
            Path(mapped(root + name_)).mkdir(mode=0o700, parents=True, exist_ok=True)
        argv = [mapped(word) for word in shlex.split(settings["ExecStart"][0])]
        cwd = mapped(settings["WorkingDirectory"][0])
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    with open(os.environ["FAKE_PIDS"], "a") as pids:
        pids.write(f"{proc.pid}\n")


def main(argv: list[str]) -> int:
    if argv == ["daemon-reload"]:
        return 0
    if argv[:2] == ["enable", "--now"]:
        for name in argv[2:]:
            start(name.removesuffix(".service"))
        return 0
    print(f"fake systemctl: not emulated: {argv}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
