"""scripts/upstream_harness.py prepare: upstream's harness copied from the TorchBench checkout and
made to build TorchBench's torchvision models with random weights, as zoobench does offline, so
that both sides judge the same models. A download is made to fail loudly in the child process:
without the copy's weights module torchvision asks for one, with it none is asked for."""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT

CHECKOUT = os.path.join(REPO_ROOT, "..", "shared", "torchbench")
EXTRAS = os.path.join(REPO_ROOT, "..", "shared", "upstream-dynamo")
HAVE_INPUTS = (os.path.isdir(os.path.join(CHECKOUT, "userbenchmark", "dynamo", "dynamobench"))
               and os.path.isfile(os.path.join(EXTRAS, "timm_models.yaml")))

try:
    import torchvision  # noqa: F401
    HAVE_TORCHVISION = True
except ImportError:
    HAVE_TORCHVISION = False

# torchvision's builders as TorchBench calls them, any download turned into an error.
BUILD_AS_TORCHBENCH_DOES = """
import torch.hub
def no_download(*args, **kwargs):
    raise RuntimeError("asked for a download: " + str(args[0] if args else kwargs))
torch.hub.load_state_dict_from_url = no_download
import torchvision.models._api
torchvision.models._api.load_state_dict_from_url = no_download
{first}
from torchvision import models
with torch.no_grad():
    a = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
    b = models.mobilenet_v2(pretrained=True)
print("built", sum(p.numel() for p in a.parameters()), sum(p.numel() for p in b.parameters()))
"""


@unittest.skipUnless(HAVE_INPUTS and HAVE_TORCHVISION,
                     "needs ../shared/torchbench, ../shared/upstream-dynamo and torchvision")
class PreparedHarnessBuildsTorchVisionWithoutDownloads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.harness = os.path.join(cls.tmp.name, "upstream")
        subprocess.run([sys.executable, os.path.join(REPO_ROOT, "scripts", "upstream_harness.py"),
                        "prepare", cls.harness, "--torchbench-dir", CHECKOUT, "--extras", EXTRAS],
                       check=True, capture_output=True, text=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def build(self, first_line):
        home = os.path.join(self.tmp.name, "torch-home")
        env = dict(os.environ, TORCH_HOME=home)
        code = BUILD_AS_TORCHBENCH_DOES.format(first=first_line)
        return subprocess.run([sys.executable, "-c", code], cwd=self.harness, env=env,
                              capture_output=True, text=True, timeout=300)

    def test_torchbench_py_imports_the_weights_module_before_any_model(self):
        with open(os.path.join(self.harness, "torchbench.py")) as f:
            text = f.read()
        self.assertIn("import zoobench_offline_weights", text)
        self.assertLess(text.index("import zoobench_offline_weights"), text.index("from common import"))

    def test_pretrained_builders_build_random_models_without_asking_for_weights(self):
        done = self.build("import zoobench_offline_weights")
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        # resnet18 and mobilenet_v2 with ImageNet's 1000 classes, as the pretrained ones have
        self.assertIn("built 11689512 3504872", done.stdout)

    def test_without_the_module_torchvision_asks_for_the_download(self):
        done = self.build("")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("asked for a download", done.stderr)


def harness(*args):
    done = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "scripts", "upstream_harness.py"),
                           *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout.strip(), done.stderr


def write_rows(path, names, extra_field=None):
    fields = ["dev", "name", "accuracy"] + ([extra_field] if extra_field else [])
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for name in names:
            writer.writerow(dict(dev="cuda", name=name, accuracy="pass",
                                 **({extra_field: "1"} if extra_field else {})))


class NamesForUpstreamsParts(unittest.TestCase):
    """The -k filters of parallel upstream runs: every name once, none already done."""

    def test_parts_cover_the_rows_names_once_less_the_done_ones(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows, done = os.path.join(tmp, "rows.csv"), os.path.join(tmp, "done.csv")
            names = ["m%02d" % i for i in range(11)] + ["a.b"]
            write_rows(rows, names)
            write_rows(done, ["m03", "m07"])
            seen = []
            for shard in range(3):
                code, out, err = harness("models", rows, "--done", done, "--shards", "3",
                                         "--shard", str(shard))
                self.assertEqual(code, 0, err)
                self.assertTrue(out.startswith("^(") and out.endswith(")$"), out)
                seen += [n.replace("\\.", ".") for n in out[2:-2].split("|")]
            self.assertEqual(sorted(seen), sorted(set(names) - {"m03", "m07"}))
            self.assertIn("a\\.b", harness("models", rows, "--shards", "3", "--shard", "0")[1]
                          + harness("models", rows, "--shards", "3", "--shard", "1")[1]
                          + harness("models", rows, "--shards", "3", "--shard", "2")[1])

    def test_a_shard_out_of_range_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = os.path.join(tmp, "rows.csv")
            write_rows(rows, ["a", "b"])
            code, _, err = harness("models", rows, "--shards", "2", "--shard", "2")
            self.assertNotEqual(code, 0)
            self.assertIn("--shard 2", err)

    def test_merge_keeps_every_row_and_removes_the_parts(self):
        with tempfile.TemporaryDirectory() as tmp:
            into = os.path.join(tmp, "all.csv")
            parts = [os.path.join(tmp, "all.part%d.csv" % i) for i in range(2)]
            write_rows(into, ["old"])
            write_rows(parts[0], ["x", "y"])
            write_rows(parts[1], ["z"], extra_field="graph_breaks")
            code, _, err = harness("merge", into, *parts)
            self.assertEqual(code, 0, err)
            with open(into, newline="") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([r["name"] for r in rows], ["old", "x", "y", "z"])
            self.assertEqual([r["graph_breaks"] for r in rows], ["", "", "", "1"])
            self.assertFalse(any(os.path.exists(p) for p in parts))


if __name__ == "__main__":
    unittest.main()
