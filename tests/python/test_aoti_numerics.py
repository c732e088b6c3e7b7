"""tools/zoo_export/aoti_export.compile_numerics: a CUDA package is compiled under the float32
switches of zoobench's timed runs (TF32 on, cuDNN benchmark on) unless --aoti-numerics default,
and the process's own switches come back afterwards, also when the compile raises. (The
compile itself needs torch >= 2.6 and a GPU: scripts/gpu-check.sh; here the switches alone.)"""

import unittest

import torch

from helpers import REPO_ROOT  # noqa: F401  (puts tools/ on the path)
from zoo_export import aoti_export


def switches():
    return (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
            torch.backends.cudnn.benchmark)


class CompileNumerics(unittest.TestCase):
    def setUp(self):
        self.saved = switches()
        # PyTorch's defaults for matmul and cuDNN's benchmark, and cuDNN TF32 off as well, so
        # that every switch has to change and come back.
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cudnn.benchmark) = (False, False, False)

    def tearDown(self):
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cudnn.benchmark) = self.saved

    def test_performance_switches_tf32_and_benchmark_on_for_the_compile_only(self):
        with aoti_export.compile_numerics("performance", "cuda") as recorded:
            self.assertEqual(switches(), (True, True, True))
        self.assertEqual(recorded, "performance (TF32 on, cuDNN benchmark on)")
        self.assertEqual(switches(), (False, False, False))

    def test_the_switches_come_back_when_the_compile_raises(self):
        with self.assertRaises(KeyError):
            with aoti_export.compile_numerics("performance", "cuda"):
                raise KeyError("the compile failed")
        self.assertEqual(switches(), (False, False, False))

    def test_default_and_cpu_packages_leave_the_switches_alone(self):
        for numerics, device in (("default", "cuda"), ("performance", "cpu")):
            with aoti_export.compile_numerics(numerics, device) as recorded:
                self.assertEqual(switches(), (False, False, False), (numerics, device))
            self.assertEqual(recorded, "default")

    def test_an_unknown_name_is_refused(self):
        with self.assertRaisesRegex(ValueError, "performance, default"):
            with aoti_export.compile_numerics("fast", "cuda"):
                pass


class CompilePhases(unittest.TestCase):
    """aoti_export.largest_phases: what the manifest's compile_phases_s keeps of torch's
    compile timings (name -> the durations of each time the phase ran)."""

    def test_each_phase_is_summed_and_the_largest_come_first(self):
        timings = {"compile_file": [30.0, 12.5], "async_compile.wait": [20.0],
                   "GraphLowering.codegen": [1.0, 1.0, 1.0], "never_ran": []}
        self.assertEqual(list(aoti_export.largest_phases(timings).items()),
                         [("compile_file", 42.5), ("async_compile.wait", 20.0),
                          ("GraphLowering.codegen", 3.0)])

    def test_only_the_largest_are_kept(self):
        timings = {f"phase{i}": [float(i)] for i in range(10)}
        self.assertEqual(list(aoti_export.largest_phases(timings, count=2)), ["phase9", "phase8"])


if __name__ == "__main__":
    unittest.main()
