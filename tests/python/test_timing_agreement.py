"""scripts/timing_agreement.py: two runs of the same models, one against the other. Its input is
a real run's rows (the torchbench list's, docs/data), once as written and once changed the way
a second run could differ: a status, every speedup a little slower, one a lot slower."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

import helpers  # noqa: F401  (scripts/ on sys.path)
import timing_agreement

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "docs", "data", "lists-inductor-inference")
ACCURACY = "torchbench_inductor_inference_float32_cuda_accuracy.json"
PERFORMANCE = "torchbench_inductor_inference_float32_cuda_performance.json"


def compare(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = timing_agreement.main(list(argv))
    return code, out.getvalue()


def row_of(text, model):
    return next(line for line in text.splitlines() if line.startswith(f"| {model} |"))


class TimingAgreement(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.baseline = os.path.join(self.tmp, "baseline")
        os.makedirs(self.baseline)
        for name in (ACCURACY, PERFORMANCE):
            shutil.copy(os.path.join(RUN, name), self.baseline)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, name, change):
        path = os.path.join(self.baseline, name)
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        for record in results["records"]:
            change(record["cells"])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(results, f)
        return results

    def test_a_run_agrees_with_itself(self):
        code, text = compare(RUN, self.baseline)
        self.assertEqual(code, 0, text)
        with open(os.path.join(RUN, ACCURACY), encoding="utf-8") as f:
            checks = len(json.load(f)["records"])
        with open(os.path.join(RUN, PERFORMANCE), encoding="utf-8") as f:
            timings = len(json.load(f)["records"])
        self.assertIn(f"statuses: {checks + timings} of the {checks + timings} rows both runs "
                      "have are the same", text)
        self.assertIn("median |ratio - 1| 0.0%", text)

    def test_a_different_status_fails_and_is_named(self):
        def fail_resnet50(cells):
            if cells["name"] == "resnet50":
                cells["accuracy"] = "fail_accuracy"
        self.edit(ACCURACY, fail_resnet50)
        code, text = compare(RUN, self.baseline)
        self.assertEqual(code, 1, text)
        self.assertIn("- resnet50 (inductor, inference, cuda, accuracy): pass against "
                      "fail_accuracy", text)
        self.assertIn("median |ratio - 1| 0.0%", text)  # the timings alone would pass

    def test_speedups_are_compared_with_their_intervals_and_the_median(self):
        def slower(cells):
            factor = 1.25 if cells["name"] == "resnet50" else 1.05
            for column in ("speedup", "speedup_ci_low", "speedup_ci_high"):
                cells[column] = float(cells[column]) * factor
        results = self.edit(PERFORMANCE, slower)
        timed = sum(1 for r in results["records"] if r["cells"].get("status") == "pass")
        code, text = compare(RUN, self.baseline)
        self.assertEqual(code, 1, text)
        # Every model but one is 1/1.05 of the baseline: that is the median, 4.8% > 3%.
        self.assertIn(f"median |ratio - 1| 4.8% over {timed} models (target 3%: NOT met)", text)
        self.assertIn("| 0.800 | intervals apart |", row_of(text, "resnet50"))
        # timm_regnet's interval, [1.399, 1.854] as it was timed, still holds 1.05 times it.
        regnet = row_of(text, "timm_regnet")
        self.assertIn("| 0.952 | unstable: run and baseline |", regnet)
        self.assertNotIn("intervals apart", regnet)
        code, text = compare(RUN, self.baseline, "--target", "0.05")
        self.assertEqual(code, 0, text)

    def test_a_folder_without_rows_is_refused(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        with contextlib.redirect_stderr(io.StringIO()):
            code, _ = compare(RUN, empty)
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
