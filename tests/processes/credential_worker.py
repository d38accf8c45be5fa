"""A rotation in its own process that stops at one phase of a source credential's rotation (the
lifecycle's log line) and waits there to be killed: ``test_credential_crash``.

    python -m tests.processes.credential_worker <definition> <connections JSON> <phase> <now ISO>
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from secretsapi.service.definition.egress import egress_of
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.workspace import Workspace

WAIT_SECONDS = 120  # bounded: a test that never kills it still ends


class StopAt(logging.Handler):
    def __init__(self, phase: str) -> None:
        super().__init__()
        self.phase = phase

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.args, tuple) and len(record.args) > 1 and record.args[1] == self.phase:
            print(f"at {self.phase}", flush=True)
            time.sleep(WAIT_SECONDS)


def main(definition: str, connections: str, phase: str, now: str) -> None:
    logger = logging.getLogger("secretsapi.service.credentials.lifecycle")
    logger.addHandler(StopAt(phase))
    logger.setLevel(logging.INFO)
    moment = datetime.fromisoformat(now)
    ws = Workspace(definition_path=Path(definition), environ={}, clock=lambda: moment)
    ws = replace(ws, egress=egress_of({}, {}, connections=json.loads(connections)))
    result = execute_rotation(ws)
    print(f"done {result.rotated} {result.failed}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
