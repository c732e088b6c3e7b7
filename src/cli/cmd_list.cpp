// `zoobench list`: the zoo's models by suite with batch size, artifacts and why any would be
// skipped, plus models the exporter could not export.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/backends/backend.h"
#include "zoobench/patches/registry.h"
#include "zoobench/runner/selection.h"
#include "zoobench/util/characters.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/manifest.h"

namespace zoobench::cli {
namespace {

struct ListArgs {
  RunOptions options;
  bool training = false;
  bool backends = false;
  bool switches = false;
  std::string backend = "jit";
  std::string device = "cpu";
};

// `zoobench list --switches --backend NAME`: the optimization switches --disable-switches and
// `zoobench bisect` know for that backend, the patch switches, and what the backend applies
// that no switch turns off. Static: a torch.compile backend's list needs no Python.
int list_switches(const std::string& backend_name) {
  auto backend = make_backend(backend_name);
  auto listed = backend->switches();
  std::size_t width = std::string("patch:<name>").size();
  for (const auto& s : listed) width = std::max(width, s.name.size());
  std::cout << fmt::format("{:<{}}  {:<10} {}\n", "switch", width, "applies", "what it does when on");
  for (const auto& s : listed) {
    std::string what = s.description;
    if (!s.requires_switch.empty()) what += " (needs " + s.requires_switch + ")";
    std::cout << fmt::format("{:<{}}  {:<10} {}\n", s.name, width, s.applies, what);
  }
  std::vector<std::string> patch_names;
  for (const auto& p : patches::list_patches()) patch_names.push_back(p.name);
  std::cout << fmt::format("{:<{}}  {:<10} {}\n", "patch:<name>", width, "all",
                           "each patch the suite yaml assigns to the model (known: " +
                               join(patch_names, ", ") + ")");
  if (listed.empty()) std::cout << backend_name << " declares no switches of its own\n";
  if (const std::string fixed = backend->fixed_steps(); !fixed.empty()) std::cout << fixed << "\n";
  return kExitOk;
}

// `zoobench list --backends`: every backend, and why it cannot run here where it cannot.
int list_backends_here() {
  auto listed = list_backends(/*probe_python=*/true);
  std::size_t width = 0;
  for (const auto& backend : listed) width = std::max(width, backend.name.size());
  for (const auto& backend : listed) {
    std::cout << fmt::format("{:<{}}  {:<10} {}\n", backend.name, width,
                             backend.unavailable ? "no" : "available", backend.description);
    if (backend.unavailable) std::cout << fmt::format("{:<{}}  {:<10} why not: {}\n", "", width, "", *backend.unavailable);
  }
  std::cout << "torch.compile backends: any name dynamo knows, NAME[:MODE] with MODE one of default, reduce-overhead, "
               "max-autotune, max-autotune-no-cudagraphs (compile:NAME for dynamo's eager and cudagraphs)\n";
  return kExitOk;
}

int run_list(ListArgs& args) {
  RunOptions& o = args.options;
  o.mode = args.training ? Mode::kTraining : Mode::kInference;
  o.accuracy = true;
  const std::string suites_dir = o.suites_dir.empty() ? default_suites_dir() : o.suites_dir;
  ZooCatalog catalog = ZooCatalog::scan(o.zoo_dir);
  auto suites = o.suite == "all" ? catalog.suites() : std::vector<std::string>{o.suite};
  auto configs = load_suite_configs(suites_dir, suites);
  auto selected = select_models(catalog, o, configs, args.device.substr(0, args.device.find(':')));
  std::cout << fmt::format("{:<14} {:<40} {:>5}  {:<44} {}\n", "suite", "model", "bs", "artifacts", "status");
  int runnable = 0;
  for (const auto& model : selected) {
    std::string artifacts, status;
    int64_t batch = 0;
    try {
      Manifest m = read_manifest(model.entry.manifest_path);
      batch = m.batch_size;
      std::vector<std::string> roles;
      for (const auto& [role, artifact] : m.artifacts) roles.push_back(role);
      artifacts = join(roles, ",");
      status = model.skip_reason ? "skipped: " + *model.skip_reason : "ok";
      auto patches = configs.at(model.entry.suite).patches_for(model.entry.name, o.mode);
      if (!patches.empty()) status += " (patches: " + join(patches, ",") + ")";
    } catch (const std::exception& e) {
      status = "will fail to load: " + first_line(e.what());
    }
    if (status.rfind("ok", 0) == 0) ++runnable;
    // index.json, manifests and yaml are files anyone may have written: no raw escapes.
    std::cout << terminal_safe(fmt::format("{:<14} {:<40} {:>5}  {:<44} {}", model.entry.suite,
                                           model.entry.name, batch, artifacts, status))
              << "\n";
  }
  for (const auto& failure : catalog.export_failures()) {
    if (o.suite != "all" && failure.suite != o.suite) continue;
    std::cout << terminal_safe(fmt::format("{:<14} {:<40} {:>5}  {:<44} {}", failure.suite,
                                           failure.name, "-", "-",
                                           "not exported: " + first_line(failure.reason)))
              << "\n";
  }
  std::cout << fmt::format("{} models, {} would run ({} mode on {})\n", selected.size(), runnable,
                           mode_name(o.mode), args.device);
  return kExitOk;
}

void setup_list(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* c = app.add_subcommand("list", "The zoo's models, and why any would be skipped");
  c->add_option("--zoo", args->options.zoo_dir, "zoo folder")->capture_default_str();
  c->add_option("--suites-dir", args->options.suites_dir, "folder with <suite>.yaml");
  c->add_option("--suite", args->options.suite, "suite name or all")->capture_default_str();
  c->add_option("-k,--filter", args->options.filters, "regex a model name must match");
  c->add_option("-x,--exclude", args->options.excludes, "regex of models to leave out");
  c->add_flag("--training", args->training, "show skips for training");
  c->add_option("--devices", args->device, "device whose skip lists apply")->capture_default_str();
  c->add_flag("--backends", args->backends, "list the backends and whether each can run here, instead of models");
  c->add_flag("--switches", args->switches,
              "list the optimization switches of --backend (for --disable-switches and bisect): "
              "jit's steps, aot_inductor's run-time steps (its Inductor options are fixed at "
              "export), Inductor's config steps for inductor[:MODE] (each a torch.compile "
              "option when off); every backend also has patch:<name>");
  c->add_option("--backend", args->backend, "with --switches: the backend")->capture_default_str();
  c->callback([args, &exit_status] {
    exit_status = args->switches   ? list_switches(args->backend)
                  : args->backends ? list_backends_here()
                                   : run_list(*args);
  });
}

}  // namespace

ZOOBENCH_COMMAND(list, setup_list);

}  // namespace zoobench::cli
