"""scripts/kernel_listing.py: two sides' kernel listings, from result JSON as zoobench writes it
(records with cells and detail), lined up by kernel name with each side's total; a record
without a listing is a clear error, not an empty table."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "scripts", "kernel_listing.py")


def record(name, backend, eager, compiled):
    detail = {}
    if eager is not None:
        detail["eager_kernels"] = [{"name": n, "ms": ms, "calls": c} for n, ms, c in eager]
    if compiled is not None:
        detail["compiled_kernels"] = [{"name": n, "ms": ms, "calls": c} for n, ms, c in compiled]
    return {"kind": "performance", "cells": {"name": name, "backend": backend}, "detail": detail}


class KernelListing(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "python_eager.json")
        records = [
            record("Other", "python_eager", [("gemm", 9.0, 1)], [("gemm", 9.0, 1)]),
            record("Bert", "python_eager",
                   [("gemm", 3.0, 4), ("softmax", 1.5, 2), ("fill", 0.25, 8)],
                   [("gemm", 3.0, 4), ("softmax", 0.5, 2), ("fused_attention", 2.0, 2)]),
            record("NoListing", "python_eager", None, None),
        ]
        with open(self.path, "w") as f:
            json.dump({"format": "zoobench-results/1", "records": records}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_lines_up_the_sides_by_name_largest_first(self):
        out = self.run_script("Bert", self.path + ":eager", self.path + ":compiled")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertIn("python_eager:eager", lines[0])
        self.assertIn("python_eager:compiled", lines[0])
        body = [line.split()[0] for line in lines[2:-1]]
        # gemm (3 ms) first, then the attention kernel only the compiled side runs (2 ms)
        self.assertEqual(body, ["gemm", "fused_attention", "softmax", "fill"])
        fused = next(line for line in lines if line.startswith("fused_attention"))
        self.assertEqual(fused.split("|")[1].strip(), "-")
        self.assertIn("2.000 ms", fused.split("|")[2])
        total = lines[-1]
        self.assertIn("4.750 ms", total.split("|")[1])
        self.assertIn("5.500 ms", total.split("|")[2])

    def test_a_record_without_a_listing_says_why(self):
        out = self.run_script("NoListing", self.path)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no compiled_kernels", out.stderr)
        out = self.run_script("Missing", self.path)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no performance record of Missing", out.stderr)


if __name__ == "__main__":
    unittest.main()
