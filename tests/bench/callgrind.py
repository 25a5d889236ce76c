"""Instructions executed by a piece of Python code, counted by callgrind: a measure the shared machine's load does not
move (the CPU clock does, by 20 % between runs). Only when the process runs under `valgrind --tool=callgrind
--instr-atstart=no --separate-threads=yes` (everything before the measured code runs uninstrumented, so Django's
start and the test database cost about what they cost under plain valgrind; a dump per thread, of which the calling
thread's is read, as the fake servers on 127.0.0.1 answer from threads of their own):

    mkdir -p /tmp/cg && BENCH_CALLGRIND_OUT=/tmp/cg BENCH_ROUNDS=1 valgrind --tool=callgrind --instr-atstart=no \
        --separate-threads=yes --callgrind-out-file=/tmp/cg/out .venv/bin/pytest \
        tests/bench/test_order_side_effects.py -p no:cacheprovider -s -o testpaths=tests/bench -o norecursedirs=

Python cannot issue valgrind's client requests (they are special machine-code sequences), so a three-function C
helper is compiled with the system's compiler against valgrind's own header (/usr/include/valgrind) into a
temporary folder, once per process. Outside valgrind (or without a compiler or the header) `counter()` is None.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_SOURCE = r"""
#include <valgrind/callgrind.h>
int on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(const char *label) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT(label); }
"""
_HEADER = Path("/usr/include/valgrind/callgrind.h")


class Counter:
    """`count(fn)`: fn's instructions (callgrind's Ir) and its result; each count is one dump file of callgrind's."""

    def __init__(self, library: ctypes.CDLL, out: Path) -> None:
        self.library = library
        self.out = out  # the folder callgrind writes its dumps to
        self.taken = 0

    def count(self, fn: Callable[[], Any]) -> tuple[int, Any]:
        assert threading.current_thread() is threading.main_thread(), "the dump read is valgrind's thread 1"
        self.taken += 1
        label = f"bench-{self.taken}".encode()
        before = set(self.out.glob("*"))
        self.library.start()
        result = fn()
        self.library.stop(label)
        dumps = [path for path in set(self.out.glob("*")) - before if path.is_file()]
        if len(dumps) > 1:  # --separate-threads=yes: the main thread (valgrind's thread 1) is the caller
            dumps = [path for path in dumps if path.name.endswith("-01")]
        assert len(dumps) == 1, f"expected one new callgrind dump of this thread in {self.out}, found {dumps}"
        text = dumps[0].read_text(errors="replace")
        found = re.search(r"^totals: (\d+)", text, re.MULTILINE)  # ("summary:" is 0 in a client request's dump)
        assert found, f"no totals in {dumps[0]}"
        return int(found.group(1)), result


def counter(out: str | None) -> Counter | None:
    """A Counter when this process runs under valgrind and the helper builds; `out`: the folder of
    `--callgrind-out-file` (where the dumps appear)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not out or compiler is None or not _HEADER.exists():
        return None
    folder = Path(tempfile.mkdtemp(prefix="callgrind-helper-"))
    (folder / "helper.c").write_text(_SOURCE)
    subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", "-o", str(folder / "helper.so"), str(folder / "helper.c")], check=True
    )
    library = ctypes.CDLL(str(folder / "helper.so"))
    library.stop.argtypes = [ctypes.c_char_p]
    if not library.on_valgrind():
        return None
    return Counter(library, Path(out))
