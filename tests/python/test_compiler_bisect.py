"""tools/zoo_compile/compiler_bisect.py, the driver of Inductor's compiler bisector for
`zoobench bisect`: the pieces that need no torch.compile (how a check's child is named and
judged, the result line), and the whole driver on this Python's torch, which on a torch without
torch._inductor.compiler_bisector (Debian's 1.13) says so in its result line without running
anything. The search itself runs on the GPU machine (tests/integration/gpu/)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT  # noqa: F401 (also puts tools/ on sys.path)

from zoo_compile import compiler_bisect as cb


def has_compiler_bisector() -> bool:
    try:
        from torch._inductor import compiler_bisector  # noqa: F401
    except ImportError:
        return False
    return True


class ChildCommand(unittest.TestCase):
    def test_the_stages_run_dynamos_backends_and_inductor_runs_the_users(self):
        self.assertEqual(cb.zoobench_backend("eager", "inductor:max-autotune"), "compile:eager")
        self.assertEqual(cb.zoobench_backend("aot_eager_decomp_partition", "inductor"),
                         "compile:aot_eager_decomp_partition")
        self.assertEqual(cb.zoobench_backend("inductor", "inductor:max-autotune"),
                         "inductor:max-autotune")

    def test_slots_are_filled_where_they_stand(self):
        template = ["zoobench", "run", "--backend", "{backend}", "--row-out", "{rows}",
                    "--log-file", "{log}", "--only", "{backend}x"]
        self.assertEqual(cb.child_argv(template, "compile:eager", "r.json", "c.log"),
                         ["zoobench", "run", "--backend", "compile:eager", "--row-out", "r.json",
                          "--log-file", "c.log", "--only", "{backend}x"])


class AccuracyOutcome(unittest.TestCase):
    """A check is judged by the child's accuracy row, as a bisect step is; without one, by how
    the child ended."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.rows = os.path.join(self.tmp.name, "rows.json")

    def tearDown(self):
        self.tmp.cleanup()

    def write_rows(self, rows):
        # The shape of zoobench's rows file (runner/child_rows.cpp): numbers as JSON numbers.
        with open(self.rows, "w") as f:
            json.dump({"rows": rows}, f)

    def test_the_accuracy_row_decides(self):
        self.write_rows([{"kind": "performance", "cells": {"status": "pass"}},
                         {"kind": "accuracy", "cells": {"accuracy": "fail_accuracy",
                                                        "max_abs": 0.75, "reason": "2/2 tensors"}}])
        outcome = cb.accuracy_outcome(self.rows, 0, 60, "c.log")
        self.assertEqual(outcome, {"status": "fail_accuracy", "max_abs": "0.75",
                                   "reason": "2/2 tensors"})

    def test_a_child_without_a_row_fails_with_how_it_ended(self):
        self.assertEqual(cb.accuracy_outcome(self.rows, -11, 60, "c.log")["status"], "crash")
        self.assertIn("SIGSEGV", cb.accuracy_outcome(self.rows, -11, 60, "c.log")["reason"])
        self.assertEqual(cb.accuracy_outcome(self.rows, None, 60, "c.log")["status"], "timeout")
        self.assertEqual(cb.accuracy_outcome(self.rows, 2, 60, "c.log")["status"], "infra_error")
        self.write_rows([])
        self.assertEqual(cb.accuracy_outcome(self.rows, 0, 60, "c.log")["status"], "infra_error")

    def test_a_timeout_wins_over_a_row_written_before_it(self):
        self.write_rows([{"kind": "accuracy", "cells": {"accuracy": "pass"}}])
        self.assertEqual(cb.accuracy_outcome(self.rows, None, 5, "c.log")["status"], "timeout")


class ResultLine(unittest.TestCase):
    def test_one_line_with_the_prefix_and_every_key(self):
        check = cb.check_record("inductor", "lowerings", "bisect", "inductor")
        check.update(status="pass", max_abs="0.0", reason="", log="c.log", seconds=1.5,
                     range=[0, 2])
        line = cb.result_line(cb.result("found", "2.11.0", checks=[check], backend="inductor",
                                        subsystem="lowerings", bisect_number=2, debug_info="relu"))
        self.assertTrue(line.startswith(cb.RESULT_PREFIX))
        self.assertNotIn("\n", line)
        parsed = json.loads(line[len(cb.RESULT_PREFIX):])
        self.assertEqual(set(parsed), {"status", "torch", "note", "checks", "backend", "subsystem",
                                       "bisect_number", "debug_info", "config_change"})
        self.assertEqual(parsed["checks"][0]["range"], [0, 2])


class Driver(unittest.TestCase):
    """The driver as zoobench starts it: python -m zoo_compile.compiler_bisect CONFIG."""

    def test_a_torch_without_the_bisector_is_reported_in_the_result_line(self):
        if has_compiler_bisector():
            self.skipTest("this torch has torch._inductor.compiler_bisector")
        import torch

        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "config.json")
            with open(config, "w") as f:
                json.dump({"argv": ["false"], "environment": [], "inductor_backend": "inductor",
                           "timeout_s": 10, "logs_dir": os.path.join(tmp, "logs")}, f)
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, "tools"))
            run = subprocess.run([sys.executable, "-m", "zoo_compile.compiler_bisect", config],
                                 env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            lines = [l for l in run.stdout.splitlines() if l.startswith(cb.RESULT_PREFIX)]
            self.assertEqual(len(lines), 1, run.stdout)
            parsed = json.loads(lines[0][len(cb.RESULT_PREFIX):])
            self.assertEqual(parsed["status"], "not_available")
            self.assertEqual(parsed["torch"], str(torch.__version__))
            self.assertEqual(parsed["note"],
                             f"torch {torch.__version__} has no torch._inductor.compiler_bisector")
            self.assertFalse(os.path.exists(os.path.join(tmp, "logs")))  # nothing ran


if __name__ == "__main__":
    unittest.main()
