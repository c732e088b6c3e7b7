"""scripts/coverage_table.py: every list name gets a row; exported or not, and why, from the
zoos' index.json or saved index files; jit, aot_inductor and inductor (inference and training)
statuses from accuracy CSVs (the JSON beside one says which tensor failed), inductor's speedup
over Python eager from performance CSVs; "not run yet", or the --not-run reason, where an input
is missing."""

import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

from helpers import REPO_ROOT  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import coverage_table  # noqa: E402


def write_index(folder, models):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "index.json"), "w") as f:
        json.dump({"format": "zoobench-index/1", "models": models}, f)


ACCURACY_FIELDS = ["dev", "name", "batch_size", "accuracy", "backend", "reason", "suite"]
PERF_FIELDS = ["dev", "name", "batch_size", "speedup", "backend", "status", "unstable", "reason",
               "python_speedup", "suite"]


def write_csv(path, rows, fields=ACCURACY_FIELDS):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def row_of(text, name):
    return next(line for line in text.splitlines() if line.startswith(f"| {name} |"))


class CoverageTableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def generate(self, *args):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(coverage_table.main(list(args)), 0)
        return out.getvalue()

    def test_cpu_only_says_not_run_yet_for_the_h200(self):
        write_index(self.path("cpu"), [
            {"suite": "torchbench", "name": "resnet18", "status": "exported"},
            {"suite": "torchbench", "name": "hf_Bert", "status": "failed",
             "reason": "transformers is not installed for /usr/bin/python3"}])
        text = self.generate("--cpu-zoo", self.path("cpu"))
        self.assertIn("| torchbench | 56 | 1/56 | not run yet | not run yet | not run yet |",
                      text)
        self.assertIn("| huggingface | 37 |", text)
        self.assertIn("| timm_models | 14 |", text)
        self.assertEqual(row_of(text, "resnet18"),
                         "| resnet18 | built in: torchvision:resnet18 | yes | not run yet | "
                         "not run yet | not run yet | not run yet | not run yet | not run yet |  |")
        self.assertIn("CPU: transformers is not installed", row_of(text, "hf_Bert"))
        self.assertIn("library mapping: hf:AutoModelForMaskedLM(BertConfig())",
                      row_of(text, "hf_Bert"))
        drq = row_of(text, "drq")
        # a skip is the yaml's: known for the H200 before any run there, and said once
        self.assertIn("| drq | checkout | skipped | skipped | not run yet | not run yet | "
                      "not run yet | not run yet | not run yet | CPU, H200: skipped, "
                      "torchbench.yaml skip.all: impossible offline", drq)

    def test_h200_exports_and_accuracy_with_reasons(self):
        write_index(self.path("cpu"), [])
        write_index(self.path("gpu"), [
            {"suite": "timm_models", "name": "repvgg_a2", "status": "exported"},
            {"suite": "timm_models", "name": "ghostnet_100", "status": "exported"},
            {"suite": "timm_models", "name": "nfnet_l0", "status": "failed",
             "reason": "making eval.pt: OutOfMemoryError: CUDA out of memory"}])
        write_csv(self.path("timm_models_jit_inference_float32_cuda_accuracy.csv"), [
            {"dev": "cuda", "name": "repvgg_a2", "accuracy": "pass", "backend": "jit"},
            {"dev": "cuda:1", "name": "ghostnet_100", "accuracy": "fail_accuracy",
             "backend": "jit", "reason": "output[0] differs by 3e-2"},
            {"dev": "cpu", "name": "nfnet_l0", "accuracy": "pass", "backend": "jit"}])
        text = self.generate("--cpu-zoo", self.path("cpu"), "--gpu-zoo", self.path("gpu"),
                             "--jit", self.path("timm_models_jit_inference_float32_cuda_"
                                                "accuracy.csv"))
        self.assertIn("| timm_models | 14 | 0/14 | 2/14 | 1/14 | not run yet |", text)
        self.assertIn("| yes | pass | not run yet |", row_of(text, "repvgg_a2"))
        ghost = row_of(text, "ghostnet_100")
        self.assertIn("| fail_accuracy |", ghost)
        self.assertIn("jit: fail_accuracy (output[0] differs by 3e-2)", ghost)
        nfnet = row_of(text, "nfnet_l0")  # a CPU row does not count for the H200
        self.assertIn("H200: making eval.pt: OutOfMemoryError", nfnet)
        self.assertIn("| no | - |", nfnet)

    def test_saved_cpu_index_and_what_the_h200_run_left_out(self):
        # the CPU column from a saved index file (with its provenance) rather than a zoo
        with open(self.path("cpu-zoo.json"), "w") as f:
            json.dump({"format": "zoobench-index/1", "provenance": {"date": "2026-12-01"},
                       "models": [{"suite": "torchbench", "name": "tts_angular",
                                   "status": "exported"}]}, f)
        write_index(self.path("gpu"), [
            {"suite": "torchbench", "name": name, "status": "exported", "batch_size": 64}
            for name in ("tts_angular", "Super_SloMo", "BERT_pytorch", "dcgan")] + [
            {"suite": "timm_models", "name": "repvgg_a2", "status": "exported",
             "batch_size": 128}])
        torchbench_csv = self.path("torchbench_jit_inference_float32_cuda_1_accuracy.csv")
        oom = ("CUDA out of memory. Tried to allocate 12.27 GiB. Of the allocated memory 104 GiB "
               "is allocated by PyTorch. See documentation for Memory Management")
        write_csv(torchbench_csv, [
            {"dev": "cuda:1", "name": "Super_SloMo", "batch_size": "64", "suite": "torchbench",
             "accuracy": "fail_accuracy", "reason": "1/2 tensors failed; worst output[1]"},
            {"dev": "cuda:1", "name": "BERT_pytorch", "batch_size": "64", "suite": "torchbench",
             "accuracy": "OOM", "reason": oom},
            {"dev": "cuda:1", "name": "dcgan", "batch_size": "64", "suite": "torchbench",
             "accuracy": "pass"}])
        with open(torchbench_csv[: -len(".csv")] + ".json", "w") as f:
            json.dump({"records": [{"cells": {"suite": "torchbench", "name": "Super_SloMo"},
                                    "detail": {"tensors": [
                                        {"path": "output[1]", "pass": False,
                                         "reason": "dtype mismatch: ref float64, res float32"},
                                        {"path": "output[0]", "pass": True}]}}]}, f)
        timm_csv = self.path("timm_models_aot_inductor_inference_float32_cuda_accuracy.csv")
        write_csv(timm_csv, [{"dev": "cuda", "name": "repvgg_a2", "batch_size": "8",
                              "suite": "timm_models", "accuracy": "pass"}])
        with open(self.path("notes.md"), "w") as f:
            f.write("## Diagnosis\n\nhand-written\n")
        text = self.generate("--cpu-index", self.path("cpu-zoo.json"),
                             "--gpu-zoo", self.path("gpu"), "--jit", torchbench_csv,
                             "--aoti", timm_csv, "--not-run", "aot_inductor=no device time",
                             "--notes", self.path("notes.md"))
        self.assertIn(f"--cpu-index {self.path('cpu-zoo.json')} \\\n", text)
        self.assertIn("  --not-run 'aot_inductor=no device time' \\\n"
                      f"  --notes {self.path('notes.md')}\n```", text)
        self.assertIn("## Diagnosis\n\nhand-written\n", text)
        # a list with no CSV of a backend says why; one with a CSV counts its passes
        self.assertIn("| torchbench | 56 | 1/56 | 4/56 | 1/56 | not run (no device time) |", text)
        self.assertIn("| huggingface | 37 | 0/37 | 0/37 | not run yet | not run (no device "
                      "time) |", text)
        # a row at another batch size than the H200 export's says so, and the count too
        self.assertIn("| timm_models | 14 | 0/14 | 1/14 | not run yet | 1/14 (batch 8) |", text)
        self.assertIn("| yes | not run yet | pass (batch 8) |", row_of(text, "repvgg_a2"))
        # exported but no row: the runner's own skip from the suite yaml
        tts = row_of(text, "tts_angular")
        self.assertIn("| yes | yes | skipped | not run (no device time) |", tts)
        self.assertIn("jit: skipped by the runner, only_training in torchbench.yaml", tts)
        self.assertIn("jit: fail_accuracy (1/2 tensors failed; worst output[1]; output[1]: "
                      "dtype mismatch: ref float64, res float32)", row_of(text, "Super_SloMo"))
        bert = row_of(text, "BERT_pytorch")  # PyTorch's allocator advice is left out
        self.assertIn("jit: OOM (CUDA out of memory. Tried to allocate 12.27 GiB.)", bert)
        self.assertEqual(row_of(text, "drq").split(" | ")[4:6], ["-", "not run (no device time)"])

    def test_unfinished_runs_say_not_reached_instead_of_no_row(self):
        write_index(self.path("gpu"), [
            {"suite": "torchbench", "name": name, "status": "exported", "batch_size": 64}
            for name in ("dcgan", "BERT_pytorch", "tts_angular")])
        aoti_csv = self.path("torchbench_aot_inductor_inference_float32_cuda_0_accuracy.csv")
        write_csv(aoti_csv, [{"dev": "cuda:0", "name": "dcgan", "batch_size": "64",
                              "suite": "torchbench", "accuracy": "pass"}])
        args = ["--cpu-zoo", self.path("gpu"), "--gpu-zoo", self.path("gpu"), "--aoti", aoti_csv]
        plain = self.generate(*args)
        self.assertIn("| no row |", row_of(plain, "BERT_pytorch"))
        text = self.generate(*args, "--unfinished", "aot_inductor=the stream's calls ended first")
        bert = row_of(text, "BERT_pytorch")
        self.assertIn("| yes | yes | not run yet | not reached |", bert)
        self.assertIn("aot_inductor: the stream's calls ended first", bert)
        self.assertIn("| pass |", row_of(text, "dcgan"))
        # the runner's own skip still reads as one
        self.assertIn("| skipped |", row_of(text, "tts_angular").split("only_training")[0])
        self.assertIn("1/56", text.split("| torchbench |")[1].split("\n")[0])

    def test_a_package_the_export_could_not_make_says_why(self):
        why = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 1)"
        write_index(self.path("gpu"), [
            {"suite": "torchbench", "name": "cm3leon_generate", "status": "exported",
             "batch_size": 1, "notes": [f"no aoti.float32.cuda: {why}"]},
            {"suite": "torchbench", "name": "dcgan", "status": "exported", "batch_size": 64}])
        aoti_csv = self.path("torchbench_aot_inductor_inference_float32_cuda_0_accuracy.csv")
        missing = "aot_inductor: {} has no AOTInductor package 'aoti.float32.cuda'; export it"
        write_csv(aoti_csv, [
            {"dev": "cuda:0", "name": name, "batch_size": batch, "suite": "torchbench",
             "accuracy": "model_fail_to_load", "reason": missing.format(name)}
            for name, batch in (("cm3leon_generate", "1"), ("dcgan", "64"))])
        text = self.generate("--cpu-zoo", self.path("gpu"), "--gpu-zoo", self.path("gpu"),
                             "--aoti", aoti_csv)
        cm3leon = row_of(text, "cm3leon_generate")
        self.assertIn("aot_inductor: model_fail_to_load (the export could not make its package: "
                      + why, cm3leon)
        self.assertNotIn("export it", cm3leon)
        # without a note from the export, the row's own reason stands
        self.assertIn("has no AOTInductor package 'aoti.float32.cuda'; export it", row_of(text, "dcgan"))

    def test_the_index_field_says_why_and_a_cpu_package_failure_is_not_the_h200s(self):
        write_index(self.path("gpu"), [
            {"suite": "torchbench", "name": "llama", "status": "exported", "batch_size": 32,
             "aoti_failures": {"aoti.float32.cpu": "not asked for here",
                               "aoti.float32.cuda": "RuntimeError: mutating a constant"}},
            {"suite": "torchbench", "name": "dcgan", "status": "exported", "batch_size": 64,
             "aoti_failures": {"aoti.float32.cpu": "the CPU package failed"}}])
        aoti_csv = self.path("torchbench_aot_inductor_inference_float32_cuda_0_accuracy.csv")
        write_csv(aoti_csv, [
            {"dev": "cuda:0", "name": name, "batch_size": batch, "suite": "torchbench",
             "accuracy": "model_fail_to_load", "reason": f"{name} has no package"}
            for name, batch in (("llama", "32"), ("dcgan", "64"))])
        text = self.generate("--cpu-zoo", self.path("gpu"), "--gpu-zoo", self.path("gpu"),
                             "--aoti", aoti_csv)
        self.assertIn("(the export could not make its package: RuntimeError: mutating a constant)",
                      row_of(text, "llama"))
        self.assertIn("(dcgan has no package)", row_of(text, "dcgan"))

    def inductor_inputs(self):
        """An H200 zoo of torchbench models and one CSV of each inductor column; alexnet has no
        row in any of them."""
        write_index(self.path("gpu"), [
            {"suite": "torchbench", "name": name, "status": "exported", "batch_size": batch}
            for name, batch in (("BERT_pytorch", 16), ("LearningToPaint", 96), ("dcgan", 256),
                                ("Super_SloMo", 6), ("tts_angular", 64), ("llama", 32),
                                ("alexnet", 128))])
        rebuild = ("inductor: RebuildError: the rebuilt Python module is not the exported model:"
                   "\n  output[0] differs\n  Hint: re-export it")
        graph_break = "graph break: Unsupported Tensor.backward() call\n  Explanation: Dynamo"
        accuracy = self.path("torchbench_inductor_inference_float32_cuda_accuracy.csv")
        write_csv(accuracy, [
            {"dev": "cuda", "name": "BERT_pytorch", "batch_size": "16", "accuracy": "pass"},
            {"dev": "cuda", "name": "LearningToPaint", "batch_size": "96", "accuracy": "pass",
             "reason": graph_break},
            {"dev": "cuda", "name": "dcgan", "batch_size": "128", "accuracy": "fail_accuracy",
             "reason": "1/1 tensors failed"},
            {"dev": "cuda", "name": "Super_SloMo", "batch_size": "6",
             "accuracy": "model_fail_to_load", "reason": rebuild}])
        perf = self.path("torchbench_inductor_inference_float32_cuda_performance.csv")
        write_csv(perf, [
            {"dev": "cuda", "name": name, "batch_size": batch, "status": "pass",
             "speedup": "1.1", "python_speedup": speedup, "unstable": unstable}
            for name, batch, speedup, unstable in (("BERT_pytorch", "16", "2.28238", "0"),
                                                   ("LearningToPaint", "96", "1.37675", "1"),
                                                   ("dcgan", "256", "0.71889", "1"))] + [
            {"dev": "cuda", "name": "Super_SloMo", "batch_size": "6", "speedup": "0",
             "status": "model_fail_to_load", "reason": rebuild}], PERF_FIELDS)
        train = self.path("torchbench_inductor_training_float32_cuda_accuracy.csv")
        write_csv(train, [
            {"dev": "cuda", "name": "BERT_pytorch", "batch_size": "16",
             "accuracy": "eager_two_runs_differ", "reason": "two eager runs differ at output[0]"},
            {"dev": "cuda", "name": "LearningToPaint", "batch_size": "96", "accuracy": "pass",
             "reason": graph_break},
            {"dev": "cuda", "name": "dcgan", "batch_size": "32", "accuracy": "pass"},
            {"dev": "cuda", "name": "tts_angular", "batch_size": "64", "accuracy": "pass"}])
        with open(accuracy) as f:  # the reason's lines are one quoted cell
            self.assertIn('"inductor: RebuildError: the rebuilt Python module is not the exported '
                          'model:\n  output[0] differs', f.read())
        return ["--cpu-zoo", self.path("gpu"), "--gpu-zoo", self.path("gpu"),
                "--inductor", accuracy, "--inductor-perf", perf, "--inductor-train", train]

    def test_inductor_accuracy_speedup_and_training_columns(self):
        text = self.generate(*self.inductor_inputs(),
                             "--unfinished", "inductor=not reached yet: the run continues",
                             "--unfinished", "inductor-train=not reached yet: the run continues",
                             "--not-run", "inductor-perf=no device time")
        self.assertIn("  --inductor-perf " + self.path("torchbench_inductor_inference_float32_"
                                                        "cuda_performance.csv") + " \\\n", text)
        self.assertIn("inductor CSVs: 1; inductor speedup CSVs: 1; inductor training CSVs: 1",
                      text)
        self.assertIn("| jit (H200) | aot_inductor (H200) | inductor inference accuracy | "
                      "inductor speedup vs Python eager | inductor training accuracy | why not |",
                      text)

        def cells(name):  # jit, aot_inductor, inductor, its speedup, inductor training
            return row_of(text, name).split(" | ")[4:9]

        self.assertEqual(cells("BERT_pytorch")[2:], ["pass", "2.28x", "eager_two_runs_differ"])
        self.assertEqual(cells("LearningToPaint")[2:], ["pass", "1.38x†", "pass"])
        self.assertNotIn("graph break", row_of(text, "LearningToPaint"))  # a pass has no reason
        # another batch size than the export's is noted in inference, not in training, whose
        # batch sizes are the yaml's own
        self.assertEqual(cells("dcgan")[2:], ["fail_accuracy (batch 128)", "0.72x†",
                                              "pass"])
        slomo = row_of(text, "Super_SloMo")
        self.assertEqual(cells("Super_SloMo")[2:4], ["model_fail_to_load", "model_fail_to_load"])
        # the multi-line reason is one line of the table, said once for both inference columns
        self.assertIn("inductor, inductor speedup: model_fail_to_load (inductor: RebuildError: the "
                      "rebuilt Python module is not the exported model: output[0] differs Hint: "
                      "re-export it)", slomo)
        self.assertIn("inductor training: not reached yet: the run continues", slomo)
        # no row: the runner's own skips in each mode, --unfinished's reason, or "no row"
        self.assertEqual(cells("tts_angular")[2:], ["skipped", "skipped", "pass"])
        self.assertIn("inductor speedup: skipped by the runner, only_training", row_of(
            text, "tts_angular"))
        self.assertEqual(cells("llama")[2:], ["not reached", "no row", "skipped"])
        self.assertIn("inductor training: skipped by the runner, skip.test.training in "
                      "torchbench.yaml", row_of(text, "llama"))
        alexnet = row_of(text, "alexnet")
        self.assertEqual(cells("alexnet")[2:], ["not reached", "no row", "not reached"])
        self.assertIn("inductor, inductor training: not reached yet: the run continues; "
                      "inductor speedup: no row in the results", alexnet)
        self.assertEqual(cells("drq")[2:], ["-", "-", "-"])  # not exported
        # Numbers: passes, and the models with a speedup with their geometric mean
        self.assertIn("| inductor inference pass (GPU) | inductor speedup vs Python eager (GPU) "
                      "| inductor training pass (GPU) |", text)
        self.assertIn("| torchbench | 56 | 7/56 | 7/56 | not run yet | not run yet | "
                      "2/56 (batch 128) | "
                      "3 models, geomean 1.31x (2 †) | 3/56 |", text)
        # a list with no CSV: "not run yet", or --not-run's reason for its column
        self.assertIn("| timm_models | 14 | 0/14 | 0/14 | not run yet | not run yet | not run yet "
                      "| not run (no device time) | not run yet |", text)

    def test_a_cpu_input_is_required(self):
        with redirect_stdout(io.StringIO()), self.assertRaises(SystemExit), \
                contextlib.redirect_stderr(io.StringIO()):
            coverage_table.main(["--gpu-zoo", self.path("gpu")])


if __name__ == "__main__":
    unittest.main()
