"""scripts/drop_result_rows.py on a real run's files (the torchbench list's, docs/data): the rows
of the matching models leave the CSV and its JSON twin, every other row stays as it was written,
upstream's files go, and zoobench reads what is left (merge, where this build's zoobench is)."""

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import helpers  # noqa: F401  (scripts/ on sys.path)
import drop_result_rows

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "docs", "data", "lists-inductor-inference")
ACCURACY = "torchbench_inductor_inference_float32_cuda_accuracy"
UPSTREAM = "inductor_torchbench_float32_inference_cuda_accuracy.csv"


def names_in_csv(path):
    with open(path, newline="") as f:
        return [row["name"] for row in csv.DictReader(f)]


class DropResultRows(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.folder = os.path.join(tmp.name, "run")
        shutil.copytree(RUN, self.folder)
        self.csv = os.path.join(self.folder, ACCURACY + ".csv")
        self.before = names_in_csv(self.csv)
        with contextlib.redirect_stdout(io.StringIO()):
            self.status = drop_result_rows.main(["^hf_", self.folder])

    def test_the_matching_rows_leave_both_files_and_the_others_stay_as_written(self):
        self.assertEqual(self.status, 0)
        kept = [n for n in self.before if not n.startswith("hf_")]
        self.assertLess(len(kept), len(self.before), "the run has hf_ models to drop")
        self.assertEqual(names_in_csv(self.csv), kept)
        with open(os.path.join(RUN, ACCURACY + ".csv")) as f:
            original = [line for line in f if ",hf_" not in line]
        with open(self.csv) as f:
            self.assertEqual(f.readlines(), original)
        with open(os.path.join(self.folder, ACCURACY + ".json")) as f:
            records = json.load(f)["records"]
        self.assertEqual([r["cells"]["name"] for r in records], kept)

    def test_upstreams_files_are_removed_for_the_resumed_run_to_write_again(self):
        self.assertTrue(os.path.exists(os.path.join(RUN, UPSTREAM)))
        self.assertFalse(os.path.exists(os.path.join(self.folder, UPSTREAM)))

    @unittest.skipUnless(os.environ.get("ZOOBENCH_BIN"), "ZOOBENCH_BIN (ctest sets it) not set")
    def test_zoobench_reads_the_files_left(self):
        merged = os.path.join(self.folder, "merged.csv")
        done = subprocess.run([os.environ["ZOOBENCH_BIN"], "merge", self.csv, "-o", merged],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("warn", done.stderr.lower())
        self.assertEqual(sorted(names_in_csv(merged)), sorted(names_in_csv(self.csv)))


if __name__ == "__main__":
    unittest.main()
