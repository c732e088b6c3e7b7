"""scripts/phase_times.py: where a run's time went, summed from zoobench's model logs (phase
lines) and the exporter's output (took: lines). The exporter's lines come from a real export;
the model log is written here in zoobench's format (crash_report::set_phase's line, whose own
test is CrashReport.APhaseThatEndsLogsHowLongItLasted)."""

import contextlib
import io
import os
import tempfile
import unittest

from helpers import run_cli
import phase_times


def report(*paths):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = phase_times.main(list(paths))
    return code, out.getvalue()


def row(text, title, key):
    """The seconds of `key` in the table whose heading starts with `title`."""
    section = text.split(f"### {title}", 1)[1].split("###", 1)[0]
    line = next(l for l in section.splitlines() if l.startswith(f"| {key} |"))
    return float(line.split("|")[2])


class PhaseTimes(unittest.TestCase):
    def test_model_logs_and_exporter_output_are_summed_by_phase_and_by_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            logs = os.path.join(tmp, "logs")
            os.makedirs(logs)
            for name, lines in {
                "bert.inference.inductor.cuda.log": [("accuracy: float64 golden run", 1.5),
                                                     ("performance: inductor prepare", 30.0),
                                                     ("performance: inductor prepare", 10.0)],
                "resnet.inference.jit.cuda_1.log": [("accuracy: float64 golden run", 0.5)],
            }.items():
                with open(os.path.join(logs, name), "w") as f:
                    f.write("zoobench: the worker for cuda runs this model on CPUs 6-10\n")
                    f.writelines(f"zoobench info: phase '{p}' took {s:.2f} s\n" for p, s in lines)
            code, output = run_cli("--suite", "demo", "-k", "^squeezenet1_1$", "--batch-size", "1",
                                   "--image-size", "64", "--zoo", os.path.join(tmp, "zoo"))
            self.assertEqual(code, 0, output)
            with open(os.path.join(tmp, "export.log"), "w") as f:
                f.write(output)

            code, text = report(logs, os.path.join(tmp, "export.log"))
            self.assertEqual(code, 0, text)
            self.assertEqual(row(text, "zoobench's phases, by phase", "inductor: performance: inductor prepare"), 40.0)
            self.assertEqual(row(text, "zoobench's phases, by model", "bert"), 41.5)
            self.assertEqual(row(text, "zoobench's phases, by model", "resnet"), 0.5)
            # the largest first
            by_phase = text.split("### zoobench's phases, by phase", 1)[1]
            self.assertLess(by_phase.index("inductor prepare"), by_phase.index("golden run"))
            # the exporter's stages of the real export, attributed to its model
            self.assertGreater(row(text, "the exporter's stages, by phase", "making eval.pt"), 0.0)
            self.assertGreater(row(text, "the exporter's stages, by model", "squeezenet1_1"), 0.0)

    def test_logs_without_timed_lines_say_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "m.inference.jit.cpu.log"), "w") as f:
                f.write("zoobench info: loading\n")
            code, _ = report(tmp)
            self.assertEqual(code, 1)


if __name__ == "__main__":
    unittest.main()
