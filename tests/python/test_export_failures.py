"""One model failing never stops the export: it is reported with its reason (summary and
zoo/index.json) and skipped; libraries missing from this python give a clear reason."""

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

import torch

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402
from zoo_export import exporter  # noqa: E402
from zoo_export.model_bundle import ExportableModel, make_input  # noqa: E402

HAVE_TIMM = importlib.util.find_spec("timm") is not None
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None


def read_index(zoo):
    with open(os.path.join(zoo, "index.json")) as f:
        return {(m["suite"], m["name"]): m for m in json.load(f)["models"]}


class MixedSuiteTest(unittest.TestCase):
    """A suite whose list holds a good model, names no source knows and models of libraries
    this python may lack."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.suites = os.path.join(cls.tmp.name, "suites")
        cls.zoo = os.path.join(cls.tmp.name, "zoo")
        os.makedirs(cls.suites)
        # models of libraries this python lacks fail; where they are installed, leave them out
        names = ["no_such_model", "squeezenet1_1 1"]
        names += [] if HAVE_TRANSFORMERS else ["BertForMaskedLM,1"]
        names += [] if HAVE_TIMM else ["timm:resnet18 1"]
        names += ["skipped_one"]
        cls.failed = len(names) - 2
        with open(os.path.join(cls.suites, "mixed_models_list.txt"), "w") as f:
            f.write("\n".join(names) + "\n")
        with open(os.path.join(cls.suites, "mixed.yaml"), "w") as f:
            f.write("skip:\n  all: [skipped_one]\n")
        cls.code, cls.output = run_cli("--suite", "mixed", "--suites-dir", cls.suites,
                                       "--zoo", cls.zoo, "--image-size", "64", "--aoti")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status_is_zero_when_one_model_exported(self):
        self.assertEqual(self.code, 0, self.output)
        self.assertIn(f"exported 1, failed {self.failed}, skipped 1", self.output)

    def test_every_failure_is_in_the_index_with_its_reason(self):
        index = read_index(self.zoo)
        self.assertEqual(index[("mixed", "squeezenet1_1")]["status"], "exported")
        self.assertIsNone(index[("mixed", "squeezenet1_1")]["reason"])
        failed = index[("mixed", "no_such_model")]
        self.assertEqual(failed["status"], "failed")
        self.assertIn("no source knows 'no_such_model'", failed["reason"])
        self.assertNotIn(("mixed", "skipped_one"), index)
        self.assertFalse(os.path.exists(os.path.join(self.zoo, "mixed", "no_such_model")))
        # The lock files stay (a lock that another exporter may hold must not go): index.json's,
        # and the models' export locks under .locks/ (tools/zoo_export/zoo_lock.py).
        self.assertEqual(sorted(os.listdir(self.zoo)),
                         [".locks", "index.json", "index.json.lock", "mixed"],
                         "no work folder is left behind")
        self.assertEqual(os.listdir(os.path.join(self.zoo, "mixed")), ["squeezenet1_1"])

    def test_summary_lists_failures_and_skips(self):
        self.assertRegex(self.output, r"\[1/\d\] mixed/no_such_model: FAILED in [\d.]+s: ")
        self.assertIn("failed (recorded in the index, status failed):", self.output)
        self.assertIn("mixed/skipped_one: mixed.yaml skip.all", self.output)

    @unittest.skipIf(HAVE_TRANSFORMERS, "transformers is installed for this python")
    def test_missing_transformers_is_a_clear_reason(self):
        reason = read_index(self.zoo)[("mixed", "BertForMaskedLM")]["reason"]
        self.assertEqual(reason, f"transformers is not installed for {sys.executable}")

    @unittest.skipIf(HAVE_TIMM, "timm is installed for this python")
    def test_missing_timm_is_a_clear_reason(self):
        reason = read_index(self.zoo)[("mixed", "resnet18")]["reason"]
        self.assertEqual(reason, f"timm is not installed for {sys.executable}")

    def test_aoti_unavailable_is_noted_and_keeps_the_model(self):
        with open(os.path.join(self.zoo, "mixed", "squeezenet1_1", "manifest.json")) as f:
            m = json.load(f)
        if "aoti.float32.cpu" in m["artifacts"]:
            self.assertTrue(os.path.isfile(os.path.join(self.zoo, "mixed", "squeezenet1_1",
                                                        "aoti.float32.cpu.pt2")))
        else:
            self.assertIn("aoti.float32.cpu", m["aoti_failures"])
            self.assertIn(torch.__version__, m["aoti_failures"]["aoti.float32.cpu"])
            # the zoo's index says it too, in the same field (scripts/coverage_table.py reads it)
            entry = read_index(self.zoo)[("mixed", "squeezenet1_1")]
            self.assertEqual(entry["aoti_failures"], m["aoti_failures"])


class Explodes(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("kernel not implemented for this device\nsecond line")


class FailureStagesTest(unittest.TestCase):
    def export(self, zoo, build):
        source = types.SimpleNamespace(label=lambda n: "test:" + n, build=build,
                                       unavailable_reason=lambda: None)
        planned = exporter.PlannedModel(suite="custom", name="m", source=source,
                                        source_name="m", batch_size=1)
        return exporter.export_one(planned, exporter.ExportOptions(zoo=zoo), {})

    def test_reason_names_the_stage_and_first_line(self):
        def build(name, ctx):
            x, spec = make_input("x", [2], "randn")
            return ExportableModel(module=Explodes(), inputs=(x,), input_specs=[spec],
                                   source="test:m", batch_size=1)

        def build_fails(name, ctx):
            raise ValueError("config has no vocab_size")

        with tempfile.TemporaryDirectory() as zoo:
            outcome = self.export(zoo, build)
            self.assertEqual(outcome.status, "failed")
            self.assertEqual(outcome.reason, "making eval.pt: RuntimeError: kernel not "
                                             "implemented for this device")
            outcome = self.export(zoo, build_fails)
            self.assertEqual(outcome.reason, "building the model: ValueError: config has no "
                                             "vocab_size")

    def test_a_first_line_that_only_announces_keeps_the_line_after_it(self):
        def build(name, ctx):
            raise RuntimeError("Error(s) in loading state_dict for Model:\n"
                               "\tUnexpected key(s) in state_dict: \"grid\".\n\tthird line")

        with tempfile.TemporaryDirectory() as zoo:
            outcome = self.export(zoo, build)
        self.assertEqual(outcome.reason, "building the model: RuntimeError: Error(s) in loading "
                                         "state_dict for Model: Unexpected key(s) in state_dict: "
                                         "\"grid\".")

    def test_failed_reexport_keeps_the_previous_export(self):
        def good(name, ctx):
            x, spec = make_input("x", [2], "randn")
            return ExportableModel(module=torch.nn.ReLU(), inputs=(x,), input_specs=[spec],
                                   source="test:m", batch_size=1)

        def bad(name, ctx):
            raise RuntimeError("out of memory")

        with tempfile.TemporaryDirectory() as zoo:
            self.assertEqual(self.export(zoo, good).status, "exported")
            outcome = self.export(zoo, bad)
            self.assertEqual(outcome.status, "failed")
            self.assertIn("the previous export in the zoo is kept", outcome.notes)
            self.assertTrue(os.path.isfile(os.path.join(zoo, "custom", "m", "manifest.json")))


class OutOfMemoryRetryTest(unittest.TestCase):
    """A model that ran out of CUDA memory (another exporter or a run held it) is exported
    again once memory is free; any other failure is final at once."""

    def export_all(self, zoo, failures, retries=2):
        """Exports one model whose build raises failures[0], failures[1], ... and then builds;
        returns the outcome, the number of builds and the progress lines."""
        builds = []

        def build(name, ctx):
            builds.append(name)
            if len(builds) <= len(failures):
                raise failures[len(builds) - 1]
            x, spec = make_input("x", [2], "randn")
            return ExportableModel(module=torch.nn.ReLU(), inputs=(x,), input_specs=[spec],
                                   source="test:m", batch_size=1)

        source = types.SimpleNamespace(label=lambda n: "test:" + n, build=build,
                                       unavailable_reason=lambda: None)
        planned = exporter.PlannedModel(suite="custom", name="m", source=source,
                                        source_name="m", batch_size=1)
        lines = []
        (outcome,) = exporter.export_all(
            [planned], exporter.ExportOptions(zoo=zoo, oom_retries=retries), emit=lines.append)
        return outcome, len(builds), lines

    def oom(self):
        return torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB. "
                                           "GPU 0 has a total capacity of 139.80 GiB")

    def test_an_out_of_memory_export_is_done_again(self):
        with tempfile.TemporaryDirectory() as zoo:
            outcome, builds, lines = self.export_all(zoo, [self.oom()])
            entry = read_index(zoo)[("custom", "m")]
        self.assertEqual(builds, 2)
        self.assertEqual(outcome.status, "exported", outcome.reason)
        self.assertEqual(entry["status"], "exported")
        self.assertTrue(any("out of CUDA memory" in line and "export 2 of 3" in line
                            for line in lines), lines)
        # The progress line counts the models, whatever the retry looked up about the device.
        self.assertTrue(lines[-1].startswith("[1/1] custom/m: exported"), lines)
        self.assertTrue(any(n.startswith("exported again after running out of CUDA memory")
                            for n in entry["notes"]), entry)

    def test_the_message_wrapped_in_another_error_counts_too(self):
        wrapped = RuntimeError("The following operation failed in the TorchScript "
                               "interpreter.\nRuntimeError: CUDA out of memory. Tried to allocate")
        with tempfile.TemporaryDirectory() as zoo:
            outcome, builds, _ = self.export_all(zoo, [wrapped])
        self.assertEqual((builds, outcome.status), (2, "exported"))

    def test_retries_end_and_the_model_fails_with_the_reason(self):
        with tempfile.TemporaryDirectory() as zoo:
            outcome, builds, _ = self.export_all(zoo, [self.oom()] * 5, retries=2)
            entry = read_index(zoo)[("custom", "m")]
        self.assertEqual(builds, 3)
        self.assertEqual(entry["status"], "failed")
        self.assertIn("building the model: OutOfMemoryError: CUDA out of memory", entry["reason"])

    def test_other_failures_are_not_retried(self):
        with tempfile.TemporaryDirectory() as zoo:
            outcome, builds, lines = self.export_all(zoo, [ValueError("no vocab_size")])
        self.assertEqual((builds, outcome.status), (1, "failed"))
        self.assertFalse(any("out of CUDA memory" in line for line in lines), lines)

    # PyTorch 2.11's message on the H200 (2026-12-03d, BlenderbotSmallForCausalLM, batch 256).
    H200_MESSAGE = (
        "making eval.pt: OutOfMemoryError: CUDA out of memory. Tried to allocate 36.82 GiB. GPU 0 "
        "has a total capacity of 139.80 GiB of which 27.73 GiB is free. Including non-PyTorch "
        "memory, this process has 87.24 GiB memory in use. Process 594 has 1.23 GiB memory in "
        "use. Of the allocated memory 51.10 GiB is allocated by PyTorch, and 35.48 GiB is "
        "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")

    def test_what_the_export_needed_is_read_from_the_message(self):
        needed = exporter.memory_needed(self.H200_MESSAGE)
        self.assertAlmostEqual(needed / 2**30, 36.82 + 51.10, places=2)
        self.assertEqual(exporter.memory_needed("CUDA out of memory. Tried to allocate 512.00 "
                                                "MiB."), 512 * 2**20)
        self.assertIsNone(exporter.memory_needed("CUDA out of memory"))

    def test_a_retry_waits_for_what_was_needed_or_a_quarter(self):
        total = 140 * 2**30
        self.assertEqual(exporter.free_memory_wanted(total, 88 * 2**30), 88 * 2**30)
        self.assertEqual(exporter.free_memory_wanted(total, 2**20), 35 * 2**30)
        self.assertEqual(exporter.free_memory_wanted(total, None), 35 * 2**30)

    def test_a_need_beyond_the_device_is_not_retried(self):
        with tempfile.TemporaryDirectory() as zoo, \
                mock.patch.object(exporter, "device_memory", return_value=80 * 2**30):
            outcome, builds, lines = self.export_all(
                zoo, [torch.cuda.OutOfMemoryError(self.H200_MESSAGE)] * 3)
            entry = read_index(zoo)[("custom", "m")]
        self.assertEqual((builds, entry["status"]), (1, "failed"))
        self.assertTrue(any("needed at least 87.9 GiB" in n and "80.0 GiB" in n and
                            "--batch-size" in n for n in entry["notes"]), entry)


class SkipExportedTest(unittest.TestCase):
    """--skip-exported continues an interrupted export of a list: a model already in the zoo
    with every artifact asked for is kept, one lacking an artifact is exported again."""

    def test_kept_only_with_every_artifact_asked_for(self):
        with tempfile.TemporaryDirectory() as zoo:
            args = ("--suite", "torchbench", "--only", "squeezenet1_1", "--batch-size", "1",
                    "--image-size", "64", "--zoo", zoo, "--skip-exported")
            code, out = run_cli(*args)
            self.assertIn("exported 1, failed 0", out)
            path = os.path.join(zoo, "torchbench", "squeezenet1_1", "manifest.json")
            first = os.path.getmtime(path)
            code, out = run_cli(*args)
            self.assertEqual(code, 0, out)
            self.assertIn("kept (already in the zoo (--skip-exported))", out)
            self.assertIn("exported 0, failed 0, skipped 0, kept 1", out)
            self.assertEqual(os.path.getmtime(path), first)
            code, out = run_cli(*args, "--training")  # train.pt is missing: export again
            self.assertIn("exported 1, failed 0", out)
            with open(path) as f:
                self.assertEqual(set(json.load(f)["artifacts"]), {"eval", "train"})
            code, out = run_cli(*args, "--aoti")  # an aoti package, or why not, is missing
            self.assertIn("exported 1, failed 0", out)
            code, out = run_cli(*args, "--aoti")
            self.assertIn("kept 1", out)


class CommandLineTest(unittest.TestCase):
    def test_nothing_exported_exits_one_and_usage_errors_exit_two(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out = run_cli("--suite", "torchbench", "--only", "dcgan", "--zoo", tmp)
            self.assertEqual(code, 1, out)
            self.assertIn("needs a TorchBench checkout", out)
            self.assertIn("no model was exported", out)
            code, out = run_cli("--suite", "no_such_suite", "--zoo", tmp)
            self.assertEqual(code, 2)
            self.assertIn("unknown suite 'no_such_suite'", out)
            code, out = run_cli("--suite", "demo", "-k", "^nothing_matches$", "--zoo", tmp)
            self.assertEqual(code, 2)

    def test_flag_errors_exit_two_from_the_real_program(self):
        # argparse errors (exit 2) need a real process
        result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "tools", "export_zoo.py"),
                                 "--float16"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("go with --aoti", result.stderr)
        # --aoti-options: a JSON object of Inductor config keys, with --aoti only.
        for args, message in ((["--aoti-options", "{}"], "go with --aoti"),
                              (["--aoti", "--aoti-options", "{oops"], "is not JSON"),
                              (["--aoti", "--aoti-options", "[1]"], "must be a JSON object"),
                              (["--oom-retries", "-1"], "cannot be negative")):
            result = subprocess.run(
                [sys.executable, os.path.join(REPO_ROOT, "tools", "export_zoo.py"), *args],
                capture_output=True, text=True)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(message, result.stderr)

    def test_list_prints_sources_and_reasons_without_exporting(self):
        with tempfile.TemporaryDirectory() as tmp:
            zoo = os.path.join(tmp, "zoo")
            code, out = run_cli("--suite", "all", "--list", "--zoo", zoo)
            self.assertEqual(code, 0)
            self.assertFalse(os.path.exists(zoo))
        # TorchBench's eval batch size of resnet18
        self.assertRegex(out, r"torchbench/resnet18 +8 .*torchvision:resnet18 +export")
        self.assertRegex(out, r"torchbench/drq .*skip: torchbench.yaml skip.all: impossible offline")
        self.assertIn("hf:LongformerForMaskedLM(allenai/longformer-base-4096 config)", out)
        self.assertIn("timm:mobilevit_s", out)


if __name__ == "__main__":
    unittest.main()
