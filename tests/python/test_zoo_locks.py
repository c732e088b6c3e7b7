"""A zoo shared by several runs (tools/zoo_export/zoo_lock.py, docs/formats.md): two exporters of
one model into one zoo take turns on the model's export lock, and the second finds the first's
export instead of undoing it; staging folders are each process's own, a live process's is never
removed and a dead one's is. The exports are recipes of the demo list's smallest model (one
eager run, no tracing), so that the real exporter runs in well under a second."""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

from zoo_export import exporter, zoo_lock  # noqa: E402

SUITE, MODEL = "demo", "text_encoder_small"
EXPORT_ARGS = ["--suites-dir", os.path.join(REPO_ROOT, "suites"), "--suite", SUITE,
               "--only", MODEL, "--no-torchscript"]


class Exporter:
    """tools/export_zoo.py in a process of its own, its output lines collected as they come."""

    def __init__(self, zoo):
        command = [sys.executable, "-u", os.path.join(REPO_ROOT, "tools", "export_zoo.py"),
                   "--zoo", zoo] + EXPORT_ARGS
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)

    def said(self, text, timeout_s=60.0):
        """Whether a line with `text` came within timeout_s (False as soon as it ended)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(text in line for line in list(self.lines)):
                return True
            if self.process.poll() is not None and not self.reader.is_alive():
                return False
            time.sleep(0.05)
        return False

    def finish(self, timeout_s=60.0):
        """(exit status, everything it printed); killed after timeout_s."""
        try:
            code = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.reader.join(timeout=10)
        self.process.stdout.close()
        return code, "".join(self.lines)


def index_entries(zoo):
    with open(os.path.join(zoo, "index.json")) as f:
        return [m for m in json.load(f)["models"] if (m["suite"], m["name"]) == (SUITE, MODEL)]


class TwoExportersOfOneModel(unittest.TestCase):
    """Both exporters start while this test holds the model's export lock, so that both must
    wait for it; released, they race for it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.zoo = os.path.join(cls.tmp.name, "zoo")
        cls.lock = zoo_lock.lock_path(cls.zoo, SUITE, MODEL, "export")
        with zoo_lock.held_exclusively(cls.lock):
            exporters = [Exporter(cls.zoo), Exporter(cls.zoo)]
            cls.waited = [e.said(f"waiting for {cls.lock}") for e in exporters]
            cls.running_while_held = [e.process.poll() is None for e in exporters]
            cls.exported_while_held = os.path.exists(os.path.join(cls.zoo, SUITE, MODEL))
        cls.results = [e.finish() for e in exporters]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_each_said_which_lock_it_waits_on_and_did_nothing_while_it_was_held(self):
        self.assertEqual(self.waited, [True, True], self.results)
        self.assertEqual(self.running_while_held, [True, True])
        self.assertFalse(self.exported_while_held)

    def test_both_end_successfully_one_exporting_the_other_finding_its_export(self):
        codes = [code for code, _ in self.results]
        self.assertEqual(codes, [0, 0], self.results)
        outputs = sorted((out for _, out in self.results),
                         key=lambda out: "kept" in out)
        self.assertRegex(outputs[0], rf"{SUITE}/{MODEL}: exported in ")
        self.assertIn(f"{SUITE}/{MODEL}: kept (already exported by another process)", outputs[1])
        self.assertNotIn("FAILED", "".join(outputs))

    def test_the_index_has_one_exported_entry(self):
        entries = index_entries(self.zoo)
        self.assertEqual(len(entries), 1, entries)
        self.assertEqual(entries[0]["status"], "exported")
        self.assertIsNone(entries[0]["reason"])

    def test_the_model_folder_is_complete_and_nothing_is_left_over(self):
        folder = os.path.join(self.zoo, SUITE, MODEL)
        with open(os.path.join(folder, "manifest.json")) as f:
            doc = json.load(f)
        self.assertIn("rebuild", doc)
        with open(os.path.join(folder, doc["inputs"]["path"]), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), doc["inputs"]["sha256"])
        self.assertFalse(os.path.exists(os.path.join(self.zoo, exporter.STAGING)))
        self.assertTrue(os.path.isfile(self.lock), "a lock file is never deleted")


class StagingFolders(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.zoo = os.path.join(self.tmp.name, "zoo")
        self.staging = os.path.join(self.zoo, exporter.STAGING, SUITE)
        self.live = subprocess.Popen(["sleep", "60"])
        gone = subprocess.Popen(["true"])
        gone.wait()
        self.dead_pid = gone.pid

    def tearDown(self):
        self.live.kill()
        self.live.wait()
        self.tmp.cleanup()

    def folder(self, name, pid, what="partial"):
        path = os.path.join(self.staging, f"{name}.{pid}.{what}")
        os.makedirs(path)
        return path

    def test_staging_folders_are_named_for_their_process(self):
        self.assertEqual(exporter._staging_dir(self.zoo, SUITE, MODEL, "partial"),
                         os.path.join(self.staging, f"{MODEL}.{os.getpid()}.partial"))

    def test_a_live_process_folder_stays_and_a_dead_one_goes(self):
        # Empty, as a live exporter's folder is just after it made it: the export's tidying
        # (_remove_empty_staging) must not take it either.
        live = self.folder(MODEL, self.live.pid)
        dead = [self.folder(MODEL, self.dead_pid), self.folder(MODEL, self.dead_pid, "old")]
        with open(os.path.join(dead[0], "eval.pt"), "w") as f:
            f.write("half-written")
        other_model = self.folder(MODEL + "_v2", self.dead_pid)  # its own exporter's to tidy
        code, out = run_cli("--zoo", self.zoo, *EXPORT_ARGS)
        self.assertEqual(code, 0, out)
        self.assertTrue(os.path.isdir(live), "another live process's staging folder was removed")
        self.assertEqual([os.path.exists(d) for d in dead], [False, False])
        self.assertTrue(os.path.isdir(other_model))
        self.assertEqual(sorted(os.listdir(self.staging)),
                         sorted(os.path.basename(d) for d in (live, other_model)))

    def test_an_entry_that_did_not_change_while_waiting_is_exported_again(self):
        """Only a wait behind another exporter makes an export redundant: a model exported
        before, asked for again, is exported again."""
        for _ in range(2):
            code, out = run_cli("--zoo", self.zoo, *EXPORT_ARGS)
            self.assertEqual(code, 0, out)
            self.assertRegex(out, rf"{SUITE}/{MODEL}: exported in ")
        self.assertEqual(len(index_entries(self.zoo)), 1)


if __name__ == "__main__":
    unittest.main()
