// A zoo of small hand-made models for the backend and experiment tests (unit_backends,
// unit_runner, gpu_backends), exported through the real exporter: each model is scripted in
// Python and added with tools/export_zoo.py --from-torchscript --training (the user-model path),
// optionally with torchvision's resnet18 from the demo suite (small images, batch 1) and, on a
// machine whose torch has CUDA and AOTInductor, an aoti.float32.cuda package per model.
//
// ctest runs every test in its own process, so the zoo is built once per build tree and
// content: it lives in <build>/test-fixtures/small-zoo-[resnet18-][aoti-]<key>/, where the key
// hashes the Python below and the exporter's sources (older keys of a flavour are removed). A
// half-built zoo is never visible (built aside, then renamed).
//
// Models (scripted, not traced, so train()/eval() switch batch norm as in Python):
//   conv_bn_relu   conv -> batch norm (non-trivial running stats) -> relu -> 1x1 conv; a tensor
//   mlp            linear -> gelu -> linear; a tuple (logits, hidden)
//   encoder_layer  int64 ids -> embedding + position embedding (an int64 position_ids buffer)
//                  -> transformer encoder layer; a dict {hidden, pooled}
//   host_sync      linear, then a branch on a value read back to the host: cannot be captured
//                  in a CUDA graph, and the backends see that before trying (capture skipped)
//   host_copy      linear, a copy to the host and back: reads no value, so only the capture
//                  itself finds out (capture failed); not in the backend table (kModels)
//   kv_cache       a cache in a plain tensor attribute, moved and written in forward (llama's
//                  pattern): its package comes from the exporter's buffers retry; not in kModels
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "testing/testing.h"
#include "zoobench/util/files.h"
#include "zoobench/util/sha256.h"

namespace zoobench::testing {

struct SmallZooOptions {
  bool resnet18 = false;   // also demo's resnet18: batch 1, 64x64 images, eval.pt + train.pt
  bool aoti_cuda = false;  // also aoti.float32.cuda packages where torch can make them
};

inline const char* small_models_python() {
  return R"PY(
import json, hashlib, os, sys
import torch
from torch import nn

sys.path.insert(0, os.path.join(REPO, "tools"))
import export_zoo


sys.path.insert(0, os.path.join(REPO, "tests", "unit", "backends"))
from small_models import make


def export(argv):
    code = export_zoo.main(argv)
    if code != 0:
        raise SystemExit(f"export_zoo {argv} exited {code}")


work = os.path.join(OUT, "work")
os.makedirs(work, exist_ok=True)
names = ["conv_bn_relu", "mlp", "encoder_layer", "host_sync", "host_copy", "kv_cache"]
for name in names:
    module, inputs = make(name)
    torch.jit.script(module).save(os.path.join(work, name + ".pt"))
    torch.save(inputs, os.path.join(work, name + ".inputs.pt"))
    export(["--from-torchscript", os.path.join(work, name + ".pt"),
            "--inputs", os.path.join(work, name + ".inputs.pt"), "--name", name,
            "--training", "--zoo", OUT])
    # The Python backends rebuild these from small_models.py, as they rebuild a zoo model from
    # its exporter source.
    manifest_path = os.path.join(OUT, "custom", name, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["rebuild"] = {"source": "small_models", "name": name, "seed": 0,
                           "python_path": os.path.join(REPO, "tests", "unit", "backends"),
                           "context": {"batch_size": int(inputs[0].shape[0])}}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
if RESNET18:
    export(["--suite", "demo", "--only", "resnet18", "--batch-size", "1", "--image-size", "64",
            "--training", "--zoo", OUT])



# Expected results computed by PyTorch itself in float64, independent of zoobench: inference
# outputs (eval mode), and after TRAINING_STEPS steps of SGD(lr=0.01) on the mean of the
# floating outputs (train mode): the last outputs, loss, gradients, parameters and buffers.
TRAINING_STEPS = 2


def leaves(value, path, out):
    if isinstance(value, torch.Tensor):
        out[path] = value.detach().clone()
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            leaves(v, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            leaves(v, f"{path}['{k}']", out)


def mean_of_floating_outputs(value):
    if isinstance(value, torch.Tensor):
        return value.sum() / value.numel()
    parts = list(value.values()) if isinstance(value, dict) else list(value)
    return sum(mean_of_floating_outputs(p) for p in parts) / len(parts)


class Holder(nn.Module):
    def __init__(self, values):
        super().__init__()
        self.values = values


os.makedirs(os.path.join(OUT, "expected"), exist_ok=True)
for name in names:
    module, inputs = make(name)
    module = module.double()
    inputs = tuple(t.double() if t.is_floating_point() else t for t in inputs)
    values = {}
    with torch.no_grad():
        leaves(module.eval()(*inputs), "output", values)
    torch.jit.script(Holder(values)).save(os.path.join(OUT, "expected", name + ".inference.pt"))
    module.train()
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01)
    for _ in range(TRAINING_STEPS):
        optimizer.zero_grad()
        outputs = module(*inputs)
        loss = mean_of_floating_outputs(outputs)
        loss.backward()
        optimizer.step()
    values = {}
    leaves(outputs, "output", values)
    values["loss"] = loss.detach().clone()
    for n, p in module.named_parameters():
        values[f"grad:{n}.grad"] = p.grad.detach().clone()
    for n, p in module.named_parameters():
        values[f"param:{n}"] = p.detach().clone()
    for n, b in module.named_buffers():
        values[f"buffer:{n}"] = b.detach().clone()
    torch.jit.script(Holder(values)).save(os.path.join(OUT, "expected", name + ".training.pt"))

failures = {}
if AOTI_CUDA:
    import torch._inductor
    from zoo_export import aoti_export
    for name in names:
        folder = os.path.join(OUT, "custom", name)
        path = os.path.join(folder, "aoti.float32.cuda.pt2")
        try:
            module, inputs = make(name)
            module = module.eval().cuda()
            inputs = tuple(t.cuda() for t in inputs)
            with torch.no_grad():
                # The exporter's way: its eager reference runs first (kv_cache's moves its
                # cache to the GPU), then torch.export with the buffers retry, then the compile.
                module(*inputs)
                _, adaptations, _, _ = aoti_export.export_and_compile(
                    module, module, inputs,
                    lambda program: torch._inductor.aoti_compile_and_package(
                        program, package_path=path))
            with open(path, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
            manifest_path = os.path.join(folder, "manifest.json")
            with open(manifest_path) as f:
                manifest = json.load(f)
            manifest["artifacts"]["aoti.float32.cuda"] = {
                "path": "aoti.float32.cuda.pt2", "sha256": sha, "kind": "aoti",
                "device": "cuda", "dtype": "float32"}
            if adaptations:
                manifest["artifacts"]["aoti.float32.cuda"]["adaptations"] = adaptations
            with open(manifest_path, "w") as f:
                json.dump(manifest, f, indent=2)
        except Exception as e:  # a model torch.export cannot take has no package
            failures[name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
with open(os.path.join(OUT, "aoti_failures.json"), "w") as f:
    json.dump(failures, f)
)PY";
}

// The zoo's folder, built on first use in this build tree. Fails the calling test (and returns
// an empty string) when the exporter fails.
inline std::string small_zoo_dir(const SmallZooOptions& options = {}) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string root = repo_root();
  std::string key_material = small_models_python();
  key_material += options.resnet18 ? "|resnet18" : "";
  key_material += options.aoti_cuda ? "|aoti_cuda" : "";
  key_material += "|" + python();
  for (const char* source :
       {"tests/unit/backends/small_models.py", "tools/export_zoo.py",
        "tools/zoo_export/exporter.py", "tools/zoo_export/manifest.py",
        "tools/zoo_export/aoti_export.py", "tools/zoo_export/torchscript_export.py",
        "tools/zoo_export/sources/user_torchscript.py",
        "tools/zoo_export/sources/torchvision_models.py"}) {
    const std::string path = root + "/" + source;
    if (std::filesystem::exists(path)) key_material += read_text_file(path);
  }
  const std::string key = sha256_hex(key_material.data(), key_material.size()).substr(0, 16);
  const std::string flavour = std::string("small-zoo-") + (options.resnet18 ? "resnet18-" : "") +
                              (options.aoti_cuda ? "aoti-" : "");
  const std::string fixtures = binary_dir() + "/test-fixtures";
  const std::string dir = fixtures + "/" + flavour + key;
  if (std::filesystem::exists(dir + "/COMPLETE")) return dir;

  const std::string building = dir + ".building." + std::to_string(::getpid());
  remove_tree(building);
  std::filesystem::create_directories(building);
  std::string code = "REPO = r'''" + root + "'''\nOUT = r'''" + building + "'''\n";
  code += std::string("RESNET18 = ") + (options.resnet18 ? "True" : "False") + "\n";
  code += std::string("AOTI_CUDA = ") + (options.aoti_cuda ? "True" : "False") + "\n";
  code += small_models_python();
  CommandResult result = run_python(code);
  if (result.exit_code != 0) {
    remove_tree(building);
    return "";
  }
  std::ofstream(building + "/COMPLETE") << "built by " << ::getpid() << "\n";
  std::error_code error;
  std::filesystem::rename(building, dir, error);
  // Another test process may have finished first; its zoo is as good as ours.
  if (error) remove_tree(building);
  // Zoos of this flavour made by older versions of this file or of the exporter are stale.
  for (const auto& entry : std::filesystem::directory_iterator(fixtures)) {
    const std::string name = entry.path().filename().string();
    const std::string rest = name.rfind(flavour, 0) == 0 ? name.substr(flavour.size()) : "";
    const bool same_flavour = rest.size() == key.size() &&
                              rest.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (same_flavour && entry.path().string() != dir &&
        std::filesystem::exists(entry.path() / "COMPLETE")) {
      remove_tree(entry.path().string());
    }
  }
  return dir;
}

// <zoo>/custom/<name>/manifest.json (resnet18: <zoo>/demo/resnet18/manifest.json).
inline std::string small_model_manifest(const std::string& zoo, const std::string& name) {
  return zoo + (name == "resnet18" ? "/demo/" : "/custom/") + name + "/manifest.json";
}

}  // namespace zoobench::testing
