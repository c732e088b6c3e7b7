"""scripts/eager_check.py: the same models' timings from several runs side by side. Its input
is a real run's performance file (the torchbench list's, docs/data), once as written and once
with one model's eager side made slower and another model left out, as two runs."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

import helpers  # noqa: F401  (scripts/ on sys.path)
import eager_check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "docs", "data", "lists-inductor-inference")
FILE = "torchbench_inductor_inference_float32_cuda_performance.json"


def table(*folders):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eager_check.main(list(folders))
    return out.getvalue()


def cells_of(text, model):
    line = next(l for l in text.splitlines() if l.startswith(f"| {model} |"))
    return [c.strip() for c in line.strip().strip("|").split("|")][1:]


class EagerCheck(unittest.TestCase):
    def test_each_run_is_a_column_and_a_slower_eager_side_shows(self):
        with open(os.path.join(RUN, FILE), encoding="utf-8") as f:
            results = json.load(f)
        records = {r["cells"]["name"]: r for r in results["records"]}
        bert = records["BERT_pytorch"]["cells"]
        own_cost = records["BERT_pytorch"].get("detail", {}).get("timed_section", {}).get("op_launch_us")
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "time-only"), os.path.join(tmp, "paused")
            os.makedirs(first)
            shutil.copy(os.path.join(RUN, FILE), first)
            slower = dict(results)
            slower["records"] = [r for r in results["records"] if r["cells"]["name"] != "dcgan"]
            for r in slower["records"]:
                if r["cells"]["name"] == "BERT_pytorch":
                    r["cells"] = dict(r["cells"], eager_latency=str(2 * float(bert["eager_latency"])),
                                      speedup=str(2 * float(bert["speedup"])))
                    r["detail"] = dict(r["detail"], timed_section={"paused": ["a", "b"],
                                                                   "op_launch_us": 9.25})
            os.makedirs(second)
            with open(os.path.join(second, FILE), "w", encoding="utf-8") as f:
                json.dump(slower, f)

            text = table(first, second)
        self.assertIn("| model | time-only | paused |", text)
        before, after = cells_of(text, "BERT_pytorch")
        self.assertTrue(before.startswith(f"{float(bert['eager_latency']):.3f} / "), before)
        self.assertTrue(after.startswith(f"{2 * float(bert['eager_latency']):.3f} / "), after)
        self.assertIn(f"{2 * float(bert['speedup']):.2f}x", after)
        self.assertIn("paused 2", after)
        self.assertIn("op 9.2 us", after)
        self.assertNotIn("paused", before)
        if own_cost is None:
            self.assertNotIn(" us", before)  # rows made before the cost was kept
        else:
            self.assertIn(f"op {own_cost:.1f} us", before)  # each run's own cost, not the other's
        self.assertEqual(cells_of(text, "dcgan")[1], "-")
        self.assertEqual(len([l for l in text.splitlines() if l.startswith("| ") and "model" not in l]),
                         len(records))


if __name__ == "__main__":
    unittest.main()
