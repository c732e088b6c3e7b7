"""What the exporter's tests share: the repository root (with tools/ and scripts/ on sys.path,
so the exporter's modules import as they do in export_zoo.py) and the exporter's command line,
run in this process with its output captured."""

import contextlib
import io
import os
import sys

REPO_ROOT = os.environ.get("ZOOBENCH_REPO_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
for _folder in ("scripts", "tools"):
    _path = os.path.join(REPO_ROOT, _folder)
    if _path not in sys.path:
        sys.path.insert(0, _path)


def run_cli(*argv):
    """export_zoo.py ARGV in this process: (exit status, everything it printed)."""
    import export_zoo

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = export_zoo.main(list(argv))
    return code, out.getvalue()
