"""zoo_export: builds zoobench's model zoo (TorchScript, AOTInductor packages, inputs, manifests).

The command line is tools/export_zoo.py; this package holds its parts:
  suite_config  suite lists (upstream formats) and suite yaml, batch sizes, selection
  model_bundle  what a source hands over: module, inputs, input spec, export options
  sources/      one module per place models come from (torchvision, timm, huggingface,
                text_encoder, torchbench_checkout, user_torchscript)
  torchscript_export, aoti_export   the artifacts
  manifest      sha256, manifest.json, zoo/index.json
  zoo_lock      the locks of a zoo shared by several runs (zoo/.locks/, index.json.lock)
  exporter      the per-model loop: progress, failures, summary
"""

EXPORTER_VERSION = "1"
