"""scripts/gpu-lists.sh's `stream` part, the mechanics on the CPU: two real TorchBench checkout
models exported one at a time by two pipelines, each run by zoobench right after its export and
its model files deleted (manifest, index and rows kept); a second call finds nothing left; a
model whose run was cut keeps its files and the next call runs it without exporting it again; a
check out of memory beside the other pipelines runs again alone. And
scripts/lists_todo.py, which decides what is left: a row for every backend, a failed export or
a yaml skip of eval runs takes a model off. (On the GPU machine the same part exports
AOTInductor packages and runs jit and aot_inductor; docs/coverage.md.) Skipped, saying so,
without the checkout or zoobench."""

import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "scripts", "gpu-lists.sh")
TODO = os.path.join(REPO_ROOT, "scripts", "lists_todo.py")
CHECKOUT = os.path.join(REPO_ROOT, "..", "shared", "torchbench")
BUILD = os.environ.get("ZOOBENCH_BINARY_DIR", os.path.join(REPO_ROOT, "build"))
MODELS = ("lennard_jones", "phlippe_resnet")


def pipeline_of(name, says, output):
    """The pipeline whose line about NAME says SAYS in the stream's OUTPUT (fails the test
    when there is none)."""
    found = re.search(rf"^-- torchbench/{re.escape(name)} \(pipeline (\d+)\): .*{re.escape(says)}",
                      output, re.MULTILINE)
    if not found:
        raise AssertionError(f"no line about {name} saying {says!r} in:\n{output}")
    return int(found.group(1))


def todo(*args):
    return subprocess.run([sys.executable, TODO, *args], check=True, capture_output=True,
                          text=True).stdout.split()


class ListsTodo(unittest.TestCase):
    def test_rows_for_every_backend_or_a_failed_export_take_a_model_off(self):
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, "results", "torchbench-0")
            os.makedirs(results)
            with open(os.path.join(results, "torchbench_jit_inference_float32_cuda_0_accuracy.csv"), "w",
                      newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["dev", "name", "accuracy", "backend", "suite"])
                writer.writerow(["cuda:0", "both", "pass", "jit", "torchbench"])
                writer.writerow(["cuda:0", "jit_only", "pass", "jit", "torchbench"])
                writer.writerow(["cuda:0", "both", "fail_accuracy", "aot_inductor", "torchbench"])
                writer.writerow(["cuda:0", "other_suite", "pass", "jit", "huggingface"])
            zoo = os.path.join(tmp, "zoo")
            os.makedirs(zoo)
            with open(os.path.join(zoo, "index.json"), "w") as f:
                json.dump({"models": [{"suite": "torchbench", "name": "broken", "status": "failed"},
                                      {"suite": "torchbench", "name": "fine", "status": "exported"}]}, f)
            # tts_angular: only_training in suites/torchbench.yaml, so an eval run never writes
            # its row and it must not wait for one.
            names = ["both", "jit_only", "broken", "fine", "other_suite", "new", "tts_angular"]
            left = todo("--suite", "torchbench", "--backends", "jit,aot_inductor",
                        "--results", os.path.join(tmp, "results"), "--zoo", zoo, *names)
            self.assertEqual(left, ["jit_only", "fine", "other_suite", "new"])
            self.assertEqual(todo("--suite", "torchbench", "--backends", "jit",
                                  "--results", os.path.join(tmp, "results"), *names),
                             ["broken", "fine", "other_suite", "new"])
            # rows in a second folder (the side-by-side table's) count as well
            table = os.path.join(tmp, "table")
            os.makedirs(table)
            with open(os.path.join(table, "torchbench_aot_inductor_inference_float32_cuda_accuracy.csv"), "w",
                      newline="") as f:
                f.write("dev,name,accuracy,backend,suite\ncuda:0,jit_only,pass,aot_inductor,torchbench\n")
            self.assertEqual(todo("--suite", "torchbench", "--backends", "jit,aot_inductor",
                                  "--results", os.path.join(tmp, "results"), "--results", table,
                                  "--zoo", zoo, *names),
                             ["fine", "other_suite", "new"])

    def test_with_experiments_a_model_needs_its_timings_too(self):
        # The side-by-side table's next models (gpu-check.sh's HF_TABLE_NEXT): a model checked
        # but not timed with every backend is not done, and one whose aot_inductor rows are all
        # there needs no package.
        with tempfile.TemporaryDirectory() as tmp:
            rows = {"accuracy": [("checked", "jit"), ("checked", "aot_inductor"), ("timed", "jit"),
                                 ("timed", "aot_inductor"), ("no_package", "aot_inductor")],
                    "performance": [("checked", "jit"), ("timed", "jit"), ("timed", "aot_inductor"),
                                    ("no_package", "aot_inductor")]}
            for experiment, pairs in rows.items():
                for backend in ("jit", "aot_inductor"):
                    path = os.path.join(tmp, f"huggingface_{backend}_inference_float32_cuda_{experiment}.csv")
                    with open(path, "w", newline="") as f:
                        writer = csv.writer(f)
                        writer.writerow(["dev", "name", "backend", "suite"])
                        writer.writerows(["cuda", n, b, "huggingface"] for n, b in pairs if b == backend)
            names = ["timed", "checked", "no_package", "new"]

            def left(backends, experiments):
                return todo("--suite", "huggingface", "--backends", backends, "--experiments", experiments,
                            "--results", tmp, *names)
            self.assertEqual(left("jit,aot_inductor", "accuracy,performance"), ["checked", "no_package", "new"])
            self.assertEqual(left("aot_inductor", "accuracy,performance"), ["checked", "new"])
            self.assertEqual(left("jit,aot_inductor", "accuracy"), ["no_package", "new"])
            self.assertEqual(left("jit", "performance"), ["no_package", "new"])
            # the exporter skips Speech2Text2ForCausalLM on every device (the repository's
            # huggingface.yaml, skip.all): with --device it is not left over forever
            skipped = ["new", "Speech2Text2ForCausalLM"]
            self.assertEqual(todo("--suite", "huggingface", "--backends", "jit", "--results", tmp, *skipped),
                             skipped)
            self.assertEqual(todo("--suite", "huggingface", "--backends", "jit", "--results", tmp,
                                  "--device", "cuda", *skipped), ["new"])
            wrong = subprocess.run([sys.executable, TODO, "--suite", "huggingface", "--backends", "jit",
                                    "--experiments", "timing", "--results", tmp, "new"], capture_output=True,
                                   text=True)
            self.assertEqual(wrong.returncode, 2, wrong.stdout)
            self.assertIn("--experiments", wrong.stderr)


@unittest.skipUnless(os.path.isdir(os.path.join(CHECKOUT, "torchbenchmark")), f"no TorchBench checkout at {CHECKOUT}")
@unittest.skipUnless(os.access(os.path.join(BUILD, "zoobench"), os.X_OK), f"no zoobench binary in {BUILD}")
class StreamPart(unittest.TestCase):
    def run_stream(self, root, build=BUILD, models=MODELS):
        env = dict(os.environ, PY=sys.executable, BUILD=build, LISTS_ZOO=os.path.join(root, "zoo"),
                   RESULTS=os.path.join(root, "results"), LOGS=os.path.join(root, "logs"),
                   OUT=os.path.join(root, "out"), LISTS_GPUS="cpu", STREAM_BACKENDS="jit",
                   STREAM_EXPORT_FLAGS="--device cpu", STREAM_SUITES="torchbench",
                   STREAM_FILTER="^(" + "|".join(models) + ")$", STREAM_PIPELINES="2",
                   TORCHBENCH_DIR=CHECKOUT)
        return subprocess.run(["bash", SCRIPT, "stream"], env=env, capture_output=True, text=True, timeout=900)

    def test_each_model_exported_run_and_deleted_then_nothing_left(self):
        with tempfile.TemporaryDirectory() as root:
            first = self.run_stream(root)
            self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
            self.assertIn("torchbench: 2 models left for jit, 2 pipelines", first.stdout)
            rows = {}
            for path in glob.glob(os.path.join(root, "results", "lists-stream", "torchbench-*", "*_accuracy.csv")):
                with open(path, newline="") as f:
                    rows.update({r["name"]: r for r in csv.DictReader(f)})
            self.assertEqual(sorted(rows), sorted(MODELS))
            for name in MODELS:
                self.assertEqual(rows[name]["accuracy"], "pass", rows[name])
            zoo = os.path.join(root, "zoo")
            self.assertEqual(glob.glob(os.path.join(zoo, "**", "*.pt"), recursive=True), [])
            manifests = glob.glob(os.path.join(zoo, "stream-torchbench-*", "torchbench", "*", "manifest.json"))
            self.assertEqual(sorted(os.path.basename(os.path.dirname(m)) for m in manifests), sorted(MODELS))
            second = self.run_stream(root)
            self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
            self.assertIn("torchbench: 0 models left for jit", second.stdout)
            self.assertIn("all parts done", second.stdout)

    def test_a_model_whose_run_was_cut_keeps_its_files_and_is_not_exported_again(self):
        with tempfile.TemporaryDirectory() as root:
            # A run that ends without rows, as one the call's deadline stops does.
            cut = os.path.join(root, "cut-build")
            os.makedirs(cut)
            with open(os.path.join(cut, "zoobench"), "w") as f:
                f.write("#!/bin/sh\nexit 130\n")
            os.chmod(os.path.join(cut, "zoobench"), 0o755)
            first = self.run_stream(root, build=cut, models=MODELS[:1])
            self.assertIn("not finished", first.stdout)  # 130: the status of a run SIGINT stopped
            self.assertNotEqual(first.returncode, 0, first.stdout + first.stderr)
            # either pipeline may have taken it from the queue; the next call must give it back
            # to that one, whose zoo holds its files
            k = pipeline_of(MODELS[0], "rows missing, its files kept", first.stdout)
            zoo = os.path.join(root, "zoo", f"stream-torchbench-{k}", "torchbench", MODELS[0])
            self.assertTrue(os.path.isfile(os.path.join(zoo, "eval.pt")))

            second = self.run_stream(root, models=MODELS[:1])
            self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
            self.assertEqual(pipeline_of(MODELS[0], "[1/1]", second.stdout), k)
            with open(os.path.join(root, "logs", f"lists-stream-export-torchbench-{k}.log")) as f:
                exports = f.read()
            self.assertEqual(exports.count(": exported in "), 1, exports)
            self.assertIn("kept (already in the zoo (--skip-exported))", exports)
            other = os.path.join(root, "logs", f"lists-stream-export-torchbench-{1 - k}.log")
            self.assertFalse(os.path.exists(other), "the other pipeline exported it again")
            with open(os.path.join(root, "results", "lists-stream", f"torchbench-{k}",
                                   "torchbench_jit_inference_float32_cpu_accuracy.csv"), newline="") as f:
                self.assertEqual([(r["name"], r["accuracy"]) for r in csv.DictReader(f)], [(MODELS[0], "pass")])
            self.assertFalse(os.path.exists(os.path.join(zoo, "eval.pt")))

    def test_a_check_out_of_memory_beside_the_others_runs_again_alone(self):
        with tempfile.TemporaryDirectory() as root:
            # A zoobench whose check runs out of memory unless it runs alone (what a GPU shared
            # by the pipelines does to a large model); the real runner's OOM rows are tested in
            # the integration tests, this is the stream's answer to one.
            fake = os.path.join(root, "oom-build")
            os.makedirs(fake)
            with open(os.path.join(fake, "zoobench"), "w") as f:
                f.write(OOM_UNLESS_ALONE)
            os.chmod(os.path.join(fake, "zoobench"), 0o755)
            run = self.run_stream(root, build=fake, models=MODELS[:1])
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            k = pipeline_of(MODELS[0], "a check out of memory beside the other pipelines; again alone",
                            run.stdout)
            results = os.path.join(root, "results", "lists-stream")
            status = {}
            for folder in (f"torchbench-{k}", f"torchbench-{k}-alone"):
                with open(os.path.join(results, folder, "torchbench_jit_inference_float32_cpu_accuracy.csv"),
                          newline="") as f:
                    status[folder] = [(r["name"], r["accuracy"]) for r in csv.DictReader(f)]
            self.assertEqual(status, {f"torchbench-{k}": [(MODELS[0], "OOM")],
                                      f"torchbench-{k}-alone": [(MODELS[0], "pass")]})
            # done: its files are gone and a later call has nothing left
            self.assertEqual(glob.glob(os.path.join(root, "zoo", "**", "*.pt"), recursive=True), [])


# Writes the row a check of the model would: OOM into the pipeline's folder, pass into the
# retry's (SUITE-K-alone).
OOM_UNLESS_ALONE = """#!/bin/sh
out=""; name=""
while [ $# -gt 0 ]; do
  case "$1" in
    --output-directory) out=$2; shift ;;
    -k) name=$(printf '%s' "$2" | tr -d '^$'); shift ;;
  esac
  shift
done
case "$out" in *-alone) status=pass ;; *) status=OOM ;; esac
mkdir -p "$out"
printf 'dev,name,batch_size,accuracy,backend,suite\ncpu,%s,1,%s,jit,torchbench\n' "$name" "$status" \
  > "$out/torchbench_jit_inference_float32_cpu_accuracy.csv"
"""


if __name__ == "__main__":
    unittest.main()
