// `zoobench run` on models the zoo does not hold yet: it exports them itself (the real exporter,
// from a small TorchBench checkout made here), a model whose constructor raises gets a row with
// the exporter's reason while the others run, --batch-size keeps its own zoo entries, and
// --zoo-max-gb deletes finished models so that --resume finds nothing left to do.
#include "integration_helpers.h"
#include "zoobench/util/files.h"

namespace zoobench::integration {
namespace {

using ::testing::Not;

// A TorchBench model package (Model(test, device, batch_size, extra_args), get_module()).
const char* kTinyMlp = R"(import torch

class Model:
    DEFAULT_EVAL_BSIZE = 4

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        self.batch_size = batch_size or self.DEFAULT_EVAL_BSIZE
        self.model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                         torch.nn.Linear(32, 4)).to(device)
        self.example_inputs = (torch.randn(self.batch_size, 16, device=device),)

    def get_module(self):
        return self.model, self.example_inputs
)";

const char* kBrokenInit = R"(class Model:
    def __init__(self, test, device, batch_size=None, extra_args=[]):
        raise RuntimeError("broken_init refuses to build: no weights here")
)";

struct ZooSetup {
  std::string checkout, suites, zoo, out;
};

// A checkout with the given models (name -> package source), and a suites folder whose
// torchbench list names them in order.
ZooSetup make_setup(const zt::ScratchDir& dir,
                    const std::vector<std::pair<std::string, const char*>>& models) {
  ZooSetup s{dir.file("checkout"), dir.file("suites"), dir.file("zoo"), dir.file("out")};
  write_text(s.checkout + "/torchbenchmark/__init__.py", "");
  write_text(s.checkout + "/torchbenchmark/models/__init__.py", "");
  write_text(s.checkout + "/userbenchmark/dynamo/dynamobench/torchbench.yaml",
             "skip:\n  all: []\n");
  std::string list;
  for (const auto& [name, source] : models) {
    write_text(s.checkout + "/torchbenchmark/models/" + name + "/__init__.py", source);
    list += name + "\n";
  }
  write_text(s.suites + "/torchbench_models_list.txt", list);
  write_text(s.suites + "/torchbench.yaml", "skip:\n  all: []\n");
  return s;
}

std::string run_command(const ZooSetup& s, const std::string& extra) {
  return zoobench_command(
      "run --suite torchbench --backend jit --devices cpu --timeout 300 --zoo " + quote(s.zoo) +
      " --suites-dir " + quote(s.suites) + " --torchbench-dir " + quote(s.checkout) +
      " --output-directory " + quote(s.out) + " " + extra);
}

std::map<std::string, Row> rows_by_name(const std::string& csv) {
  std::map<std::string, Row> out;
  for (const auto& row : read_csv(csv)) out[row.at("name")] = row;
  return out;
}

TEST(ExportOnDemand, ARunExportsWhatItLacksAndAModelThatCannotBeBuiltIsARowWithTheReason) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}, {"broken_init", kBrokenInit}});
  auto run = zt::run_command(run_command(s, "--accuracy --performance --repeat 3 --warmup 1"));
  ASSERT_EQ(run.exit_code, 1) << run.output;  // broken_init's rows

  auto accuracy = rows_by_name(accuracy_csv(s.out, "torchbench"));
  auto performance = rows_by_name(performance_csv(s.out, "torchbench"));
  ASSERT_EQ(accuracy.size(), 2u) << run.output;
  EXPECT_EQ(accuracy.at("tiny_mlp").at("accuracy"), "pass") << accuracy.at("tiny_mlp").at("reason");
  EXPECT_EQ(performance.at("tiny_mlp").at("status"), "pass");
  EXPECT_EQ(accuracy.at("tiny_mlp").at("batch_size"), "4");  // the model's own default
  for (const auto* rows : {&accuracy, &performance}) {
    const Row& broken = rows->at("broken_init");
    EXPECT_THAT(broken.at("reason"), HasSubstr("export failed"));
    EXPECT_THAT(broken.at("reason"), HasSubstr("broken_init refuses to build"));
  }
  EXPECT_EQ(accuracy.at("broken_init").at("accuracy"), "model_fail_to_load");
  EXPECT_EQ(performance.at("broken_init").at("status"), "model_fail_to_load");
  EXPECT_TRUE(fs::exists(s.zoo + "/torchbench/tiny_mlp/manifest.json"));
  EXPECT_FALSE(fs::exists(s.zoo + "/torchbench/broken_init/manifest.json"));
  EXPECT_THAT(read_text(s.out + "/logs/broken_init.export.log"), HasSubstr("no weights here"));

  // Everything is in the zoo now: a second run exports nothing.
  ZooSetup second = s;
  second.out = dir.file("again");
  auto again = zt::run_command(run_command(second, "--accuracy --only tiny_mlp"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, Not(HasSubstr("export tiny_mlp: started"))) << again.output;
  EXPECT_EQ(rows_by_name(accuracy_csv(second.out, "torchbench")).at("tiny_mlp").at("accuracy"),
            "pass");
}

TEST(ExportOnDemand, ATinyBudgetDeletesFinishedModelsAndResumeRedoesNothing) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}, {"tiny_mlp_two", kTinyMlp}});
  const std::string flags = "--accuracy --batch-size 3 --zoo-max-gb 0.000001";
  auto run = zt::run_command(run_command(s, flags));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto rows = rows_by_name(accuracy_csv(s.out, "torchbench"));
  ASSERT_EQ(rows.size(), 2u) << run.output;
  for (const auto& [name, row] : rows) {
    EXPECT_EQ(row.at("accuracy"), "pass") << name << ": " << row.at("reason");
    EXPECT_EQ(row.at("batch_size"), "3") << name;
  }
  // --batch-size 3's entries live in the zoo's batch-3 folder, and went once their rows were in.
  EXPECT_THAT(read_text(s.out + "/logs/tiny_mlp.export.log"),
              HasSubstr("--zoo " + s.zoo + "/batch-3"));
  EXPECT_THAT(run.output, HasSubstr("deleted tiny_mlp"));
  // The model's log opens with its plan, resolved once from the suite, the flags and the entry.
  const std::string log = read_text(s.out + "/logs/tiny_mlp.inference.jit.cpu.log");
  EXPECT_THAT(log, HasSubstr("plan: tiny_mlp with jit, inference float32, on cpu, batch size 3"));
  EXPECT_THAT(log, HasSubstr("plan: artifacts eval\n"));
  EXPECT_THAT(log, HasSubstr("plan: accuracy rule tolerance 0.0001 (from default)"));
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp"));
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp_two"));

  auto resumed = zt::run_command(run_command(s, flags + " --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("already has its rows"));
  EXPECT_THAT(resumed.output, Not(HasSubstr(": started"))) << resumed.output;
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp"));
  EXPECT_EQ(read_csv(accuracy_csv(s.out, "torchbench")).size(), 2u);
}

// --zoo-max-gb deleted what it did not make: models exported before the run (a --from-torchscript
// model cannot be made again). It deletes only what this run exported, and says so.
TEST(ExportOnDemand, ATinyBudgetKeepsModelsThatWereThereBeforeTheRun) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}, {"tiny_mlp_two", kTinyMlp}});
  auto first = zt::run_command(run_command(s, "--accuracy --batch-size 3 -k '^tiny_mlp$'"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_TRUE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp/manifest.json"));
  ASSERT_TRUE(remove_tree(s.out));
  auto budget = zt::run_command(run_command(s, "--accuracy --batch-size 3 --zoo-max-gb 0.000001"));
  ASSERT_EQ(budget.exit_code, 0) << budget.output;
  EXPECT_EQ(rows_by_name(accuracy_csv(s.out, "torchbench")).size(), 2u);
  EXPECT_TRUE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp/manifest.json")) << budget.output;
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp_two")) << budget.output;
  EXPECT_THAT(budget.output, HasSubstr("deleted tiny_mlp_two from ")) << budget.output;
  EXPECT_THAT(budget.output, Not(HasSubstr("deleted tiny_mlp from "))) << budget.output;
}

// Two runs on one zoo at once (two partitions, two users), exporting and evicting the same
// models: they deleted each other's staging folders and folders in use, and both failed. Now
// each waits for the other's export lock and never deletes what the other uses: both end with
// every row passing and index.json intact, naming each model once.
TEST(ExportOnDemand, TwoRunsOnOneZooExportingAndEvictingTheSameModelsBothEndWell) {
  // jit: an exporter process per model; python_eager (the torch.compile family): each model's
  // own process exports its recipe, two pipelines at once in each run.
  for (const std::string backend : {"jit", "python_eager"}) {
    SCOPED_TRACE(backend);
    zt::ScratchDir dir;
    const ZooSetup s = make_setup(
        dir, {{"tiny_mlp", kTinyMlp}, {"tiny_mlp_two", kTinyMlp}, {"tiny_mlp_three", kTinyMlp}});
    std::string both;
    for (const std::string run : {"a", "b"}) {
      std::string command = run_command(s, "--accuracy --zoo-max-gb 0.000001 --jobs 2");
      command.replace(command.find("--backend jit"), 13, "--backend " + backend);
      command.replace(command.find(quote(s.out)), quote(s.out).size(), quote(s.out + run));
      both += "(" + command + " > " + quote(dir.file(run + ".log")) + " 2>&1; echo $? > " +
              quote(dir.file(run + ".rc")) + ") & ";
    }
    auto ran = zt::run_command(both + "wait");
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    for (const std::string run : {"a", "b"}) {
      const std::string log = read_text(dir.file(run + ".log"));
      EXPECT_EQ(read_text(dir.file(run + ".rc")), "0\n") << log;
      auto rows = rows_by_name(accuracy_csv(s.out + run, "torchbench", backend));
      ASSERT_EQ(rows.size(), 3u) << log;
      for (const auto& [name, row] : rows)
        EXPECT_EQ(row.at("accuracy"), "pass") << run << " " << name << ": " << row.at("reason");
    }
    const auto index = nlohmann::json::parse(read_text(s.zoo + "/batch-4/index.json"));
    std::map<std::string, int> entries;
    for (const auto& model : index.at("models")) {
      ++entries[model.at("name").get<std::string>()];
      EXPECT_NE(model.value("status", ""), "failed") << model.dump();
    }
    EXPECT_EQ(entries, (std::map<std::string, int>{{"tiny_mlp", 1}, {"tiny_mlp_three", 1},
                                                   {"tiny_mlp_two", 1}}));
  }
}

// A run whose backends are all of the torch.compile family traces nothing: each model's own
// process exports its recipe and inputs (no exporter process) and keeps the module it built, and
// the eager reference, float64 golden and speedup baseline are that Python module. python_eager
// is of that family and runs here (torch.compile itself needs torch 2). A model that cannot be
// built is a row with the exporter's reason. Two pipelines at once: their timed sections never
// overlap.
TEST(ExportOnDemand, ATorchCompileFamilyRunExportsRecipesAndTracesNothing) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(
      dir, {{"tiny_mlp", kTinyMlp}, {"tiny_mlp_two", kTinyMlp}, {"broken_init", kBrokenInit}});
  // The list's batch size for the timings, 6; upstream's for the checks, 4.
  write_text(s.suites + "/torchbench.yaml",
             "skip:\n  all: []\nbatch_size:\n  inference:\n    tiny_mlp: 6\n    tiny_mlp_two: 6\n");
  auto run = zt::run_command(zoobench_command(
      "run --suite torchbench --backend python_eager --devices cpu --timeout 300 --jobs 2"
      " --accuracy --performance --repeat 5 --warmup 1 --zoo " +
      quote(s.zoo) + " --suites-dir " + quote(s.suites) + " --torchbench-dir " + quote(s.checkout) +
      " --output-directory " + quote(s.out)));
  ASSERT_EQ(run.exit_code, 1) << run.output;  // broken_init's rows
  EXPECT_THAT(run.output, HasSubstr("pipelines: 2 model pipeline(s) per device (--jobs)"));
  EXPECT_THAT(run.output, HasSubstr("speedups: against the model's own Python module"));
  EXPECT_THAT(run.output, HasSubstr("then performance at the list's batch sizes, each model's in "
                                    "one process"));

  const std::string performance_file = performance_csv(s.out, "torchbench", "python_eager");
  auto accuracy = rows_by_name(accuracy_csv(s.out, "torchbench", "python_eager"));
  auto performance = rows_by_name(performance_file);
  ASSERT_EQ(accuracy.size(), 3u) << run.output;
  ASSERT_EQ(performance.size(), 3u) << run.output;
  for (const auto* rows : {&accuracy, &performance}) {
    const Row& broken = rows->at("broken_init");
    EXPECT_EQ(broken.count("accuracy") ? broken.at("accuracy") : broken.at("status"),
              "model_fail_to_load");
    EXPECT_THAT(broken.at("reason"), HasSubstr("export failed"));
    EXPECT_THAT(broken.at("reason"), HasSubstr("broken_init refuses to build"));
  }
  for (const std::string model : {"tiny_mlp", "tiny_mlp_two"}) {
    SCOPED_TRACE(model);
    EXPECT_EQ(accuracy.at(model).at("accuracy"), "pass") << accuracy.at(model).at("reason");
    EXPECT_EQ(accuracy.at(model).at("eager_reference"), "python");
    const Row& timed = performance.at(model);
    EXPECT_EQ(timed.at("status"), "pass") << timed.at("reason");
    EXPECT_EQ(timed.at("eager_reference"), "python");
    // Upstream's speedup (against Python eager) is the row's own.
    EXPECT_EQ(timed.at("python_speedup"), timed.at("speedup"));
    EXPECT_EQ(timed.at("python_eager_latency"), timed.at("eager_latency"));
    EXPECT_EQ(accuracy.at(model).at("batch_size"), "4");
    EXPECT_EQ(timed.at("batch_size"), "6");
    // One process checked and timed the model: both rows carry its seconds.
    EXPECT_EQ(accuracy.at(model).at("job_s"), timed.at("job_s"));
    // Accuracy at upstream's torchbench batch size, timing at the list's: two recipes, no file
    // traced for either.
    for (const std::string folder :
         {s.zoo + "/batch-4/torchbench/" + model, s.zoo + "/torchbench/" + model}) {
      ASSERT_TRUE(fs::exists(folder + "/manifest.json")) << folder;
      EXPECT_FALSE(fs::exists(folder + "/eval.pt")) << folder;
      const auto manifest = nlohmann::json::parse(read_text(folder + "/manifest.json"));
      EXPECT_TRUE(manifest.at("artifacts").empty()) << manifest.dump();
      EXPECT_TRUE(manifest.contains("rebuild")) << manifest.dump();
    }
    // Exported by the model's own process, each batch size's entry.
    EXPECT_FALSE(fs::exists(s.out + "/logs/" + model + ".export.log"));
    const std::string log = read_text(s.out + "/logs/" + model + ".inference.python_eager.cpu.log");
    EXPECT_THAT(log, HasSubstr("exporting its recipe in this process"));
    EXPECT_THAT(log, HasSubstr("plan: eager reference the model's Python module"));
    EXPECT_GT(std::stod(accuracy.at(model).at("export_s")), 0.0);
  }
  // Both processes recorded their export in the zoo's index.
  const auto index = nlohmann::json::parse(read_text(s.zoo + "/batch-4/index.json"));
  EXPECT_EQ(index.at("models").size(), 3u) << index.dump();
  std::vector<std::pair<double, double>> sections;
  for (const auto& section : timed_sections(performance_file)) sections.push_back(section);
  EXPECT_EQ(sections.size(), 2u);
  EXPECT_EQ(overlapping(sections), "");
}

// A torch.compile-family run checks each model at upstream's batch size and times it at the
// list's in one process: both entries are the run's own, so --zoo-max-gb deletes both once the
// model's rows are in, and --resume then redoes nothing.
TEST(ExportOnDemand, ACheckAndItsTimingsInOneProcessStayWithinTheZooBudget) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}, {"tiny_mlp_two", kTinyMlp}});
  const std::string command = zoobench_command(
      "run --suite torchbench --backend python_eager --devices cpu --timeout 300 --accuracy"
      " --performance --repeat 3 --warmup 1 --zoo-max-gb 0.000001 --zoo " + quote(s.zoo) +
      " --suites-dir " + quote(s.suites) + " --torchbench-dir " + quote(s.checkout) +
      " --output-directory " + quote(s.out));
  auto run = zt::run_command(command);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const std::string model : {"tiny_mlp", "tiny_mlp_two"}) {
    EXPECT_THAT(run.output, HasSubstr("deleted " + model + " from " + s.zoo + "/batch-4 ("));
    EXPECT_THAT(run.output, HasSubstr("deleted " + model + " from " + s.zoo + " ("));
    EXPECT_FALSE(fs::exists(s.zoo + "/batch-4/torchbench/" + model)) << run.output;
    EXPECT_FALSE(fs::exists(s.zoo + "/torchbench/" + model)) << run.output;
  }
  EXPECT_EQ(read_csv(accuracy_csv(s.out, "torchbench", "python_eager")).size(), 2u);
  EXPECT_EQ(read_csv(performance_csv(s.out, "torchbench", "python_eager")).size(), 2u);

  auto resumed = zt::run_command(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("already has its rows"));
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-4/torchbench/tiny_mlp")) << resumed.output;
}

// One model in the run's own process (--only --in-process): it exports its recipe there too.
TEST(ExportOnDemand, OneModelInTheRunsProcessExportsItsRecipeThere) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}});
  auto run = zt::run_command(zoobench_command(
      "run --suite torchbench --backend python_eager --devices cpu --accuracy --only tiny_mlp"
      " --in-process --batch-size 3 --zoo " +
      quote(s.zoo) + " --suites-dir " + quote(s.suites) + " --torchbench-dir " + quote(s.checkout) +
      " --output-directory " + quote(s.out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("exporting its recipe in this process"));
  const Row row = rows_by_name(accuracy_csv(s.out, "torchbench", "python_eager")).at("tiny_mlp");
  EXPECT_EQ(row.at("accuracy"), "pass") << row.at("reason");
  EXPECT_EQ(row.at("batch_size"), "3");
  EXPECT_GT(std::stod(row.at("export_s")), 0.0);
  EXPECT_TRUE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp/manifest.json"));
  EXPECT_FALSE(fs::exists(s.zoo + "/batch-3/torchbench/tiny_mlp/eval.pt"));
}

TEST(ExportOnDemand, NoExportRefusesAModelTheZooLacks) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}});
  fs::create_directories(s.zoo);
  auto run = zt::run_command(run_command(s, "--accuracy --no-export"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("has no models"));
  auto budget = zt::run_command(run_command(s, "--accuracy --no-export --zoo-max-gb 1"));
  EXPECT_EQ(budget.exit_code, 2) << budget.output;
  EXPECT_THAT(budget.output, HasSubstr("--zoo-max-gb"));
}

// Settings that cannot work were one `model_fail_to_load` row per model (final for --resume), and
// a filter that selected nothing exited 0 (a CI typo passing green). Each is refused before
// anything starts, with what to do, and leaves no result file.
TEST(ExportOnDemand, WhatCannotWorkIsRefusedBeforeAnythingStarts) {
  zt::ScratchDir dir;
  const ZooSetup s = make_setup(dir, {{"tiny_mlp", kTinyMlp}});
  const std::string csv = s.out + "/torchbench_jit_inference_float32_cpu_accuracy.csv";
  const auto refused = [&](const std::string& command, const std::string& says) {
    auto run = zt::run_command(command + " 2>&1");
    EXPECT_EQ(run.exit_code, 2) << command << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr(says)) << command;
    EXPECT_FALSE(fs::exists(csv)) << command;
  };
  refused(run_command(s, "--accuracy -k '^nothing_matches$'"), "no model is selected");
  refused(run_command(s, "--accuracy -x tiny"), "--allow-empty-selection");
  refused("ZOOBENCH_PYTHON=/nonexistent/python3 " + run_command(s, "--accuracy"),
          "the exporter's Python /nonexistent/python3 cannot be run");
  refused("ZOOBENCH_PYTHON=/bin/true ZOOBENCH_TOOLS_DIR=" + quote(dir.path()) + " " +
              run_command(s, "--accuracy"),
          "the exporter is not at");
  refused("ZOOBENCH_PYTHON=/bin/false " + run_command(s, "--accuracy"),
          "the exporter cannot run");
  const std::string expected = dir.file("expected.csv");
  write_text(expected, "name,accuracy\ntiny_mlp,pass\n");
  refused(run_command(s, "--accuracy --expected " + quote(expected) + " --output " + quote(expected)),
          "would destroy what this command reads");
  EXPECT_EQ(read_text(expected), "name,accuracy\ntiny_mlp,pass\n");
  write_text(dir.file("zoo_file"), "not a folder");
  refused(zoobench_command("run --suite torchbench --backend jit --devices cpu --accuracy --zoo " +
                           quote(dir.file("zoo_file")) + " --suites-dir " + quote(s.suites) +
                           " --output-directory " + quote(s.out)),
          "is not a folder");
  auto empty_allowed =
      zt::run_command(run_command(s, "--accuracy -k '^nothing$' --allow-empty-selection") + " 2>&1");
  EXPECT_EQ(empty_allowed.exit_code, 0) << empty_allowed.output;
}

}  // namespace
}  // namespace zoobench::integration
