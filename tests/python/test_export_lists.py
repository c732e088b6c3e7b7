"""The exporter's suite layer: list formats, suite yaml, batch-size precedence, selection, and
the repository's own suites/ files."""

import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

from zoo_export import exporter, sources  # noqa: E402
from zoo_export.suite_config import SuiteConfig, SuiteError, matches, names_in  # noqa: E402


def write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def load_list(text, suite="s"):
    """The list `text` as the exporter reads it: through zoobench (suite_config.py)."""
    with tempfile.TemporaryDirectory() as d:
        write(d, f"{suite}_models_list.txt", text)
        return SuiteConfig.load(d, suite).entries


class ListFormatTest(unittest.TestCase):
    def test_all_three_upstream_forms_in_one_list(self):
        entries = load_list(
            "# comment\nadv_inception_v3 128\nBertForMaskedLM,32\nalexnet\n\n"
            "  resnet18   8  # trailing comment\nT5Small, 4")
        self.assertEqual([(e.name, e.batch_size) for e in entries],
                         [("adv_inception_v3", 128), ("BertForMaskedLM", 32), ("alexnet", None),
                          ("resnet18", 8), ("T5Small", 4)])

    def test_errors_name_file_and_line_in_zoobench_words(self):
        # one reader: the harness's refusals reach the exporter word for word
        for text, needle in (("ok 1\nbad x\n", "s_models_list.txt:2: batch size 'x'"),
                             ("a 1 2\n", "s_models_list.txt:1:"),
                             ("a,-3\n", "not a whole number from 1"),
                             ("a 1\nb 2\na 3\n", "s_models_list.txt:3: 'a' is listed already")):
            with self.assertRaises(SuiteError) as ctx:
                load_list(text)
            self.assertIn(needle, str(ctx.exception))

    def test_names_that_would_be_paths_are_refused(self):
        # the exporter once deleted `<entry>.partial` for a `../` line, outside the zoo
        for bad in ("../outside", "a/b", "..", "bell\a"):
            with self.assertRaises(SuiteError) as ctx:
                load_list(f"ok 1\n{bad} 2\n")
            self.assertIn("s_models_list.txt:2:", str(ctx.exception))
            self.assertIn("cannot be a model's name", str(ctx.exception))

    def test_upstream_reference_lists_parse(self):
        for suite, n in (("timm_models", 14), ("huggingface", 37)):
            cfg = SuiteConfig.load(os.path.join(REPO_ROOT, "suites"), suite)
            with_bs = [e for e in cfg.entries if e.batch_size]
            self.assertEqual(len(with_bs), n, suite)


class YamlTest(unittest.TestCase):
    def test_names_in_flattens_anchor_lists_and_ignores_nulls(self):
        self.assertEqual(names_in([None, "a", ["b", ["c"]], {"d": 1}]), ["a", "b", "c", "d"])

    def test_malformed_yaml_names_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "broken.yaml", "skip:\n  all:\n    - a\n  - b: [\n")
            with self.assertRaises(SuiteError) as ctx:
                SuiteConfig.load(d, "broken")
            self.assertRegex(str(ctx.exception), r"broken\.yaml:\d+")

    def test_duplicate_keys_are_refused_with_file_line_and_key(self):
        # PyYAML kept the last of two keys, zoobench's yaml-cpp the first: the exporter and the
        # harness followed different lines of one file
        cases = (("skip:\n  all: [a]\nskip:\n  all: [b]\n", "twice.yaml:3:", "'skip' (first on line 1)"),
                 ("batch_size:\n  training:\n    demucs: 4\n    demucs: 8\n", "twice.yaml:4:",
                  "'demucs' (first on line 3)"))
        for text, where, key in cases:
            with tempfile.TemporaryDirectory() as d:
                write(d, "twice_models_list.txt", "demucs\n")
                write(d, "twice.yaml", text)
                with self.assertRaises(SuiteError) as ctx:
                    SuiteConfig.load(d, "twice")
                self.assertIn(where, str(ctx.exception))
                self.assertIn("duplicate key " + key, str(ctx.exception))
                self.assertIn("keep one", str(ctx.exception))
        with tempfile.TemporaryDirectory() as d:  # one key in two mappings is no duplicate
            write(d, "apart_models_list.txt", "a\n")
            write(d, "apart.yaml", "skip:\n  test:\n    training: [a]\n    inference: [a]\n")
            SuiteConfig.load(d, "apart")

    def test_unknown_suite_lists_known_ones(self):
        with self.assertRaises(SuiteError) as ctx:
            SuiteConfig.load(os.path.join(REPO_ROOT, "suites"), "no_such_suite")
        self.assertIn("timm_models", str(ctx.exception))

    def test_batch_size_precedence(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "s_models_list.txt", "listed 32\nunlisted_bs\nfixed 7\ndivided 33\n")
            write(d, "s.yaml", "batch_size:\n  training: {unlisted_bs: 4, listed: 2}\n"
                               "  inference: {unlisted_bs: 6}\n  divisors: {divided: 4}\n"
                               "dont_change_batch_size: [fixed]\n")
            cfg = SuiteConfig.load(d, "s")
            self.assertEqual(cfg.resolve_batch_size("listed", True, 3, 16)[0], 3)
            self.assertEqual(cfg.resolve_batch_size("listed", True, None, 16)[0], 32)
            self.assertEqual(cfg.resolve_batch_size("unlisted_bs", True, None, 16)[0], 4)
            self.assertEqual(cfg.resolve_batch_size("unlisted_bs", False, None, 16)[0], 6)
            self.assertEqual(cfg.resolve_batch_size("other", False, None, 16)[0], 16)
            self.assertEqual(cfg.resolve_batch_size("divided", False, None, 16)[0], 8)
            self.assertEqual(cfg.resolve_batch_size("divided", False, 5, 16)[0], 5)
            bs, origin = cfg.resolve_batch_size("fixed", False, 5, 1)
            self.assertEqual(bs, 1)
            self.assertIn("dont_change_batch_size", origin)

    def test_accuracy_batch_is_capped_by_accuracy_max_batch_size(self):
        # upstream's torchbench.py: in --accuracy, min(batch size, accuracy.max_batch_size)
        with tempfile.TemporaryDirectory() as d:
            write(d, "s_models_list.txt", "unet 16\nother 16\n")
            write(d, "s.yaml", "accuracy:\n  max_batch_size:\n    unet: 2\n")
            cfg = SuiteConfig.load(d, "s")
            bs, origin = cfg.resolve_batch_size("unet", False, 4, 1, accuracy_batch=True)
            self.assertEqual(bs, 2)
            self.assertIn("accuracy.max_batch_size", origin)
            self.assertEqual(cfg.resolve_batch_size("other", False, 4, 1, accuracy_batch=True)[0], 4)
            self.assertEqual(cfg.resolve_batch_size("unet", False, 1, 1, accuracy_batch=True)[0], 1)
            # a batch size the user gave is theirs
            self.assertEqual(cfg.resolve_batch_size("unet", False, 4, 1)[0], 4)

    def test_repository_yaml_as_the_exporter_takes_it(self):
        # the keys the exporter uses, in the yaml's shape; the harness's own (tolerances,
        # patches) stay with zoobench
        suites = os.path.join(REPO_ROOT, "suites")
        tb = SuiteConfig.load(suites, "torchbench")
        for key in ("batch_size", "dont_change_batch_size", "skip", "accuracy", "canary_models",
                    "only_training"):
            self.assertIn(key, tb.config)
        self.assertNotIn("tolerance", tb.config)
        self.assertEqual(tb.yaml_batch_size("densenet121", True), 4)
        self.assertEqual(tb.accuracy_max_batch_size("pytorch_unet"), 2)
        self.assertIn("vision_maskrcnn", tb.models())  # zoobench.extra_models
        self.assertIn("skip.all", tb.skip_reason("drq", "cpu"))
        self.assertIn("skip.device.cpu", tb.skip_reason("nanogpt", "cpu"))
        self.assertIsNone(tb.skip_reason("nanogpt", "cuda"))
        timm = SuiteConfig.load(suites, "timm_models")
        self.assertEqual(timm.loss_scale("mobilevit_s"), 1e-3)
        self.assertEqual(timm.loss_scale("ghostnet_100"), 1.0)
        hf = SuiteConfig.load(suites, "huggingface")
        self.assertIn("AllenaiLongformerBase", hf.models())
        self.assertEqual(hf.resolve_batch_size("BertForMaskedLM", False, None, 16)[0], 16)

    def test_demo_list_is_small_and_builtin(self):
        cfg = SuiteConfig.load(os.path.join(REPO_ROOT, "suites"), "demo")
        names = cfg.models()
        self.assertIn("text_encoder_small", names)
        self.assertGreaterEqual(len(names), 6)
        for name in names:
            source, _ = sources.resolve(name, "demo", None)
            self.assertIsNotNone(source, name)
            self.assertLessEqual(cfg.list_batch_size(name), 4)


class OneReaderTest(unittest.TestCase):
    """A suite file has one reader, zoobench: what a yaml line says reaches the harness and the
    exporter alike, and a line zoobench refuses stops both with the same words."""

    def harness_list(self, zoo, suites):
        from zoo_export.suite_config import zoobench_binary
        return subprocess.run([zoobench_binary(), "list", "--zoo", zoo, "--suite", "s",
                               "--suites-dir", suites, "--devices", "cpu"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def exporter_plan(self, zoo, suites):
        options = exporter.ExportOptions(zoo=zoo, suites_dir=suites, device="cpu")
        return exporter.plan(options, "s", None, [], [])

    def test_a_yaml_change_reaches_harness_and_exporter(self):
        with tempfile.TemporaryDirectory() as d:
            suites, zoo = os.path.join(d, "suites"), os.path.join(d, "zoo")
            os.makedirs(suites)
            write(suites, "s_models_list.txt", "squeezenet1_1 1\n")
            code, out = run_cli("--zoo", zoo, "--suite", "s", "--suites-dir", suites,
                                "--device", "cpu")
            self.assertEqual(code, 0, out)
            self.assertIn("ok", self.harness_list(zoo, suites).stdout)
            self.assertIsNone(self.exporter_plan(zoo, suites)[0].skip_reason)

            write(suites, "s.yaml", "skip:\n  device:\n    cpu: [squeezenet1_1]\n"
                                    "batch_size:\n  divisors: {squeezenet1_1: 1}\n")
            listed = self.harness_list(zoo, suites)
            self.assertIn("skipped: skip.device.cpu in s.yaml", listed.stdout)
            self.assertIn("skip.device.cpu", self.exporter_plan(zoo, suites)[0].skip_reason)

            write(suites, "s.yaml", "skip:\n  devices:\n    cpu: [squeezenet1_1]\n")
            listed = self.harness_list(zoo, suites)
            self.assertEqual(listed.returncode, 2, listed.stdout)
            refusal = "s.yaml:2:3: unknown key 'devices' in `skip`; did you mean 'device'?"
            self.assertIn(refusal, listed.stdout)
            with self.assertRaises(SuiteError) as ctx:
                self.exporter_plan(zoo, suites)
            self.assertIn(refusal, str(ctx.exception))


class ReadingsKeptTest(unittest.TestCase):
    """Each zoobench start loads LibTorch, so a process reads the same suite files once: a second
    reading of unchanged files starts no zoobench, a changed file is read again, and a refusal is
    not kept (the fixed file is read)."""

    def test_same_files_are_read_once_and_a_changed_file_again(self):
        from zoo_export.suite_config import zoobench_binary
        with tempfile.TemporaryDirectory() as d:
            suites, starts = os.path.join(d, "suites"), os.path.join(d, "starts")
            os.makedirs(suites)
            counting = os.path.join(d, "zoobench")
            write(d, "zoobench",
                  f'#!/bin/sh\necho >> "{starts}"\nexec "{zoobench_binary()}" "$@"\n')
            os.chmod(counting, 0o755)

            def read(suite="s"):
                with mock.patch.dict(os.environ, {"ZOOBENCH_BIN": counting}):
                    return SuiteConfig.load(suites, suite)

            def started():
                with open(starts) as f:
                    return len(f.readlines())

            write(suites, "s_models_list.txt", "squeezenet1_1 2\n")
            first = read()
            first.entries.clear()  # a caller's change does not reach the next reading
            self.assertEqual([(e.name, e.batch_size) for e in read().entries],
                             [("squeezenet1_1", 2)])
            self.assertEqual(started(), 1)

            write(suites, "s_models_list.txt", "squeezenet1_1 3\n")  # same size, new contents
            self.assertEqual(read().entries[0].batch_size, 3)
            self.assertEqual(started(), 2)

            write(suites, "s.yaml", "skip:\n  devices:\n    cpu: [squeezenet1_1]\n")
            for _ in range(2):
                with self.assertRaises(SuiteError):
                    read()
            self.assertEqual(started(), 4)
            write(suites, "s.yaml", "skip:\n  device:\n    cpu: [squeezenet1_1]\n")
            self.assertEqual(read().names_at("skip", "device", "cpu"), ["squeezenet1_1"])
            self.assertEqual(started(), 5)


class SelectionTest(unittest.TestCase):
    def test_filters_are_case_insensitive_searches(self):
        self.assertTrue(matches("ResNet18", ["resnet"], []))
        self.assertFalse(matches("resnet18", ["vgg", "dense"], []))
        self.assertFalse(matches("resnet18", [], ["18$"]))
        self.assertTrue(matches("resnet50", [], ["18$"]))

    def test_plan_selects_skips_and_resolves_sources(self):
        options = exporter.ExportOptions(suites_dir=os.path.join(REPO_ROOT, "suites"))
        planned = {p.name: p for p in exporter.plan(options, "torchbench", None,
                                                    ["^hf_Bert$", "resnet18", "^drq$"], [])}
        self.assertEqual(set(planned), {"hf_Bert", "resnet18", "drq"})
        # upstream skips hf_* in torchbench; zoobench builds it offline and runs it
        self.assertIsNone(planned["hf_Bert"].skip_reason)
        self.assertEqual(planned["hf_Bert"].source_label, "hf:AutoModelForMaskedLM(BertConfig())")
        # skip.all with the reason of zoobench.skip_reasons
        self.assertRegex(planned["drq"].skip_reason,
                         r"^torchbench.yaml skip.all: impossible offline: needs gym")
        self.assertIsNone(planned["resnet18"].skip_reason)
        self.assertEqual(planned["resnet18"].source_label, "torchvision:resnet18")
        # --only names a model explicitly: no skip
        only = exporter.plan(options, "all", "hf_Bert", [], [])
        self.assertEqual([(p.suite, p.skip_reason) for p in only], [("torchbench", None)])
        # a name in no list still goes to a suite when a source knows it
        custom = exporter.plan(options, "all", "resnet152", [], [])
        self.assertEqual(custom[0].suite, "torchbench")
        stray = exporter.plan(options, "all", "torchvision:resnet34", [], [])
        self.assertEqual((stray[0].suite, stray[0].name, stray[0].problem),
                         ("custom", "resnet34", None))

    def test_unbuildable_torchbench_name_says_what_to_do(self):
        options = exporter.ExportOptions(suites_dir=os.path.join(REPO_ROOT, "suites"))
        planned = exporter.plan(options, "torchbench", "dcgan", [], [])
        self.assertIn("--torchbench-dir", planned[0].problem)


if __name__ == "__main__":
    unittest.main()


class SourceInterfaceTest(unittest.TestCase):
    """Every source a name can resolve to is a ModelSource: the functions exist, with the
    parameters the exporter and the torch.compile backends' rebuild call them with."""

    def test_every_source_implements_the_protocol(self):
        import inspect

        from zoo_export import sources

        expected = {name: [p for p in inspect.signature(getattr(sources.ModelSource, name)).parameters
                           if p != "self"]
                    for name in ("provides", "label", "default_batch_size", "unavailable_reason",
                                 "build")}
        for source in sources.ALL_SOURCES:
            with self.subTest(source=source.__name__):
                self.assertIsInstance(source, sources.ModelSource)
                for name, parameters in expected.items():
                    got = list(inspect.signature(getattr(source, name)).parameters)
                    self.assertEqual(got[:len(parameters)], parameters, f"{source.__name__}.{name}")

    def test_a_module_missing_a_function_is_not_a_source(self):
        import types

        from zoo_export import sources

        partial = types.SimpleNamespace(provides=lambda n: False, label=lambda n: n)
        self.assertNotIsInstance(partial, sources.ModelSource)
