"""`zoobench run --output-format upstream`: the accuracy file a real run writes is the file
upstream's CI reads. Its name is runner.py's, its header common.py's (the checkout in
../shared/torchbench, skipped with the reason where it is absent;
tests/unit/results/upstream_format_test.cpp compares both column lists), and upstream's
check_accuracy.py rules, restated below from its source, judge it as they judge upstream's own:
an expected failure is XFAIL, a new failure fails, an improvement fails (upstream forces the
expected file to be updated), a model missing from the expected file fails, an expected model
with no result (another shard's) is ignored. `zoobench compare --expected` exits as they do."""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "integration"))
import make_zoo  # noqa: E402

BINARY = os.path.join(os.environ.get("ZOOBENCH_BINARY_DIR", os.path.join(REPO_ROOT, "build")),
                      "zoobench")
UPSTREAM_COMMON = os.path.join(REPO_ROOT, "..", "shared", "torchbench", "userbenchmark", "dynamo",
                               "dynamobench", "common.py")
FLAKY = {"yolov3", "detectron2_maskrcnn_r_101_c4", "XGLMForCausalLM", "moondream",
         "mobilenetv3_large_100", "vision_maskrcnn"}


def check_accuracy(actual_rows, expected_rows):
    """check_accuracy.py's logic (pytorch/pytorch benchmarks/dynamo): over the actual file's
    models only; returns (exit status, failed models, improved models)."""
    expected = {}
    for row in expected_rows:
        expected.setdefault(row["name"], []).append(row["accuracy"])
    failed, improved = [], []
    for row in actual_rows:
        model, accuracy = row["name"], row.get("accuracy")
        want = expected.get(model)
        want = want[0] if want and len(want) == 1 else None
        if accuracy is None or want is None:
            failed.append(model)
        elif accuracy == want:
            continue
        elif model in FLAKY:
            continue
        elif accuracy != "pass":
            failed.append(model)
        else:
            improved.append(model)
    return (1 if failed or improved else 0), failed, improved


def upstream_accuracy_header():
    """common.py's accuracy header: _write_accuracy_row's four, get_dynamo_stats' keys, then
    compilation_latency (read from the source, as upstream writes it)."""
    with open(UPSTREAM_COMMON) as f:
        source = f.read()
    stats = source[source.index("def get_dynamo_stats"):]
    stats = stats[:stats.index("\n\n\n")]
    import re
    keys = re.findall(r'\n\s*"(\w+)":', stats)
    return ["dev", "name", "batch_size", "accuracy"] + keys + ["compilation_latency"]


@unittest.skipUnless(os.path.isfile(BINARY), f"no zoobench binary at {BINARY}")
class UpstreamFormatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.zoo = os.path.join(cls.tmp.name, "zoo")
        cls.suites = os.path.join(cls.tmp.name, "suites")
        cls.out = os.path.join(cls.tmp.name, "out")
        os.makedirs(cls.suites)
        make_zoo.build(cls.zoo, cls.suites, "gate", {"good": "mlp", "raiser": "raiser"})
        cls.result = subprocess.run(
            [BINARY, "run", "--suite", "gate", "--accuracy", "--backend", "jit", "--zoo", cls.zoo,
             "--suites-dir", cls.suites, "--output-directory", cls.out, "--output-format",
             "upstream", "--timeout", "120"],
            capture_output=True, text=True)
        cls.path = os.path.join(cls.out, "jit_gate_float32_inference_cpu_accuracy.csv")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def rows(self):
        with open(self.path, newline="") as f:
            return list(csv.DictReader(f))

    def test_the_file_has_upstreams_name_and_statuses(self):
        self.assertEqual(self.result.returncode, 1, self.result.stdout + self.result.stderr)  # raiser
        self.assertTrue(os.path.isfile(self.path), os.listdir(self.out))
        statuses = {row["name"]: row["accuracy"] for row in self.rows()}
        self.assertEqual(statuses, {"good": "pass", "raiser": "eager_1st_run_fail"})

    def test_the_file_has_upstreams_header(self):
        if not os.path.isfile(UPSTREAM_COMMON):
            self.skipTest(f"no TorchBench checkout at {UPSTREAM_COMMON} (../shared/torchbench "
                          "beside the repository): upstream's header cannot be read to compare")
        self.assertTrue(os.path.isfile(self.path), os.listdir(self.out))
        with open(self.path, newline="") as f:
            header = next(csv.reader(f))
        self.assertEqual(header, upstream_accuracy_header())

    def test_a_resumed_run_gives_upstreams_file_the_earlier_rows_too(self):
        out = os.path.join(self.tmp.name, "resumed")
        common = [BINARY, "run", "--suite", "gate", "--accuracy", "--backend", "jit", "--zoo",
                  self.zoo, "--suites-dir", self.suites, "--output-directory", out]
        first = subprocess.run(common + ["--only", "good"], capture_output=True, text=True)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        path = os.path.join(out, "jit_gate_float32_inference_cpu_accuracy.csv")
        self.assertFalse(os.path.exists(path))  # zoobench's own files only
        second = subprocess.run(common + ["--resume", "--output-format", "upstream"],
                                capture_output=True, text=True)
        self.assertEqual(second.returncode, 1, second.stdout + second.stderr)
        with open(path, newline="") as f:
            names = [row["name"] for row in csv.DictReader(f)]
        self.assertEqual(sorted(names), ["good", "raiser"])

    def test_check_accuracys_rules_judge_it_as_upstreams_own(self):
        actual = self.rows()
        as_now = [{"name": "good", "accuracy": "pass"},
                  {"name": "raiser", "accuracy": "eager_1st_run_fail"}]
        self.assertEqual(check_accuracy(actual, as_now), (0, [], []))
        regressed = [{"name": "good", "accuracy": "pass"}, {"name": "raiser", "accuracy": "pass"}]
        self.assertEqual(check_accuracy(actual, regressed), (1, ["raiser"], []))
        improved = [{"name": "good", "accuracy": "fail_accuracy"},
                    {"name": "raiser", "accuracy": "eager_1st_run_fail"}]
        self.assertEqual(check_accuracy(actual, improved), (1, [], ["good"]))
        self.assertEqual(check_accuracy(actual, as_now[:1]), (1, ["raiser"], []))
        shards = as_now + [{"name": "another_shards", "accuracy": "pass"}]
        self.assertEqual(check_accuracy(actual, shards), (0, [], []))

    def test_zoobench_compare_exits_as_check_accuracy(self):
        """The same file against each expected file: `zoobench compare --expected` exits with
        check_accuracy.py's status (0 or 1)."""
        actual = self.rows()
        cases = {
            "as_now": [("good", "pass"), ("raiser", "eager_1st_run_fail")],
            "regressed": [("good", "pass"), ("raiser", "pass")],
            "improved": [("good", "fail_accuracy"), ("raiser", "eager_1st_run_fail")],
            "not_named": [("good", "pass")],
            "shards": [("good", "pass"), ("raiser", "eager_1st_run_fail"), ("another", "pass")],
        }
        for name, rows in cases.items():
            with self.subTest(name):
                expected = os.path.join(self.tmp.name, f"expected_{name}.csv")
                with open(expected, "w", newline="") as f:
                    f.write("name,accuracy,graph_breaks\n")
                    f.writelines(f"{model},{status},0\n" for model, status in rows)
                upstream, _, _ = check_accuracy(
                    actual, [{"name": model, "accuracy": status} for model, status in rows])
                ours = subprocess.run([BINARY, "compare", self.path, "--expected", expected],
                                      capture_output=True, text=True)
                self.assertEqual(ours.returncode, upstream, ours.stdout + ours.stderr)


if __name__ == "__main__":
    unittest.main()
