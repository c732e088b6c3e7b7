// manifest.json parsing (docs/formats.md) and artifact verification: every field of the
// documented example lands where it should, and every way a manifest can be wrong is a
// ModelLoadError that names the file.
#include "zoobench/zoo/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <fstream>

#include "testing/testing.h"
#include "zoobench/util/sha256.h"

namespace zoobench {
namespace {

using testing::ScratchDir;

// docs/formats.md's example, with an AOTInductor input contract and non-default training keys.
nlohmann::json example_manifest() {
  return nlohmann::json::parse(R"JSON({
    "format": "zoobench-manifest/1",
    "name": "resnet18",
    "suite": "torchbench",
    "source": "torchvision:resnet18",
    "batch_size": 4,
    "artifacts": {
      "eval":  {"path": "eval.pt",  "sha256": "aa", "kind": "torchscript", "traced_on": "cpu", "method": "trace"},
      "train": {"path": "sub/../train.pt", "sha256": "bb", "kind": "torchscript", "traced_on": "cuda"},
      "aoti.float32.cuda": {"path": "aoti.float32.cuda.pt2", "sha256": "cc", "kind": "aoti",
                            "device": "cuda", "dtype": "float32",
                            "input_contract": [{"name": "input_ids", "dtype": "int32",
                                                "sizes": [8, 512], "strides": [512, 1]}]}
    },
    "inputs": {
      "path": "inputs.pt", "sha256": "dd",
      "spec": [{"name": "x", "dtype": "float32", "shape": [4, 3, 224, 224], "init": "randn"}]
    },
    "outputs": {"names": ["logits"]},
    "mutated_inputs": [0],
    "training": {"loss": "first_output", "loss_scale": 0.001},
    "dropout": true,
    "deepcopy": false,
    "aoti_failures": {"aoti.float16.cuda": "GuardOnDataDependentSymNode: Eq(u0, 1)"},
    "versions": {"exporter": "1", "torch": "1.13.1", "timm": null}
  })JSON");
}

std::string write_manifest(const ScratchDir& dir, const std::string& text) {
  const std::string path = dir.file("manifest.json");
  std::ofstream(path) << text;
  return path;
}

std::string load_error(const std::string& path) {
  try {
    read_manifest(path);
  } catch (const ModelLoadError& e) {
    return e.what();
  }
  ADD_FAILURE() << "read_manifest(" << path << ") did not throw ModelLoadError";
  return "";
}

TEST(ReadManifest, EveryDocumentedField) {
  ScratchDir dir;
  Manifest m = read_manifest(write_manifest(dir, example_manifest().dump()));
  EXPECT_EQ(m.directory, dir.path());
  EXPECT_EQ(m.name, "resnet18");
  EXPECT_EQ(m.suite, "torchbench");
  EXPECT_EQ(m.source, "torchvision:resnet18");
  EXPECT_EQ(m.batch_size, 4);
  ASSERT_EQ(m.artifacts.size(), 3u);

  const Artifact* eval = m.artifact("eval");
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(eval->role, "eval");
  EXPECT_EQ(eval->path, dir.path() + "/eval.pt");  // relative to the manifest's folder
  EXPECT_EQ(eval->sha256, "aa");
  EXPECT_EQ(eval->kind, "torchscript");
  EXPECT_EQ(eval->device, "cpu");  // traced_on
  EXPECT_EQ(m.artifact("train")->path, dir.path() + "/train.pt");
  EXPECT_EQ(m.artifact("train")->device, "cuda");

  const Artifact* aoti = m.artifact("aoti.float32.cuda");
  ASSERT_NE(aoti, nullptr);
  EXPECT_EQ(aoti->kind, "aoti");
  EXPECT_EQ(aoti->device, "cuda");
  EXPECT_EQ(aoti->dtype, "float32");
  ASSERT_EQ(aoti->input_contract.size(), 1u);
  EXPECT_EQ(aoti->input_contract[0].name, "input_ids");
  EXPECT_EQ(aoti->input_contract[0].dtype, "int32");
  EXPECT_EQ(aoti->input_contract[0].sizes, (std::vector<int64_t>{8, 512}));
  EXPECT_EQ(aoti->input_contract[0].strides, (std::vector<int64_t>{512, 1}));
  EXPECT_EQ(m.artifact("aoti.float16.cuda"), nullptr);
  EXPECT_EQ(m.artifact_failures,
            (std::map<std::string, std::string>{
                {"aoti.float16.cuda", "GuardOnDataDependentSymNode: Eq(u0, 1)"}}));

  EXPECT_EQ(m.inputs_path, dir.path() + "/inputs.pt");
  EXPECT_EQ(m.inputs_sha256, "dd");
  ASSERT_EQ(m.input_specs.size(), 1u);
  EXPECT_EQ(m.input_specs[0].name, "x");
  EXPECT_EQ(m.input_specs[0].dtype, "float32");
  EXPECT_EQ(m.input_specs[0].shape, (std::vector<int64_t>{4, 3, 224, 224}));
  EXPECT_EQ(m.input_specs[0].init, "randn");
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"logits"}));
  EXPECT_EQ(m.mutated_inputs, (std::vector<int64_t>{0}));
  EXPECT_EQ(m.loss, "first_output");
  EXPECT_DOUBLE_EQ(m.loss_scale, 0.001);
  EXPECT_TRUE(m.dropout);
  EXPECT_FALSE(m.deepcopy);
  EXPECT_EQ(m.versions["torch"], "1.13.1");
}

TEST(ReadManifest, OptionalFieldsTakeTheirDefaults) {
  ScratchDir dir;
  nlohmann::json json = example_manifest();
  for (const char* key : {"suite", "source", "batch_size", "outputs", "mutated_inputs", "training",
                          "dropout", "deepcopy", "versions", "aoti_failures"}) {
    json.erase(key);
  }
  json["inputs"].erase("spec");
  Manifest m = read_manifest(write_manifest(dir, json.dump()));
  EXPECT_EQ(m.batch_size, 0);
  EXPECT_TRUE(m.input_specs.empty());
  EXPECT_TRUE(m.mutated_inputs.empty());
  EXPECT_EQ(m.loss, "mean_of_floating_outputs");
  EXPECT_DOUBLE_EQ(m.loss_scale, 1.0);
  EXPECT_FALSE(m.dropout);
  EXPECT_TRUE(m.deepcopy);
  EXPECT_TRUE(m.artifact_failures.empty());
}

// A training package's step (tools/zoo_export/training_step.py's step_contract): read as
// written, and refused when the harness would pair a gradient with the wrong parameter.
TEST(ReadManifest, ATrainingPackagesStepIsReadAndCheckedAgainstItsParameters) {
  ScratchDir dir;
  nlohmann::json json = example_manifest();
  json["artifacts"]["aoti_train.float32.cuda"] = nlohmann::json::parse(R"JSON({
    "path": "aoti_train.float32.cuda.pt2", "sha256": "ee", "kind": "aoti_training",
    "step": {"parameters": ["conv.weight", "fc.bias"], "buffers": ["bn.running_mean"],
             "inputs": 1, "outputs": ["loss", "grad:conv.weight", "grad:fc.bias"],
             "buffers_written_in_place": true, "dropout": false}})JSON");
  const Manifest m = read_manifest(write_manifest(dir, json.dump()));
  const Artifact* package = m.artifact("aoti_train.float32.cuda");
  ASSERT_TRUE(package && package->step);
  EXPECT_EQ(package->kind, "aoti_training");
  EXPECT_EQ(package->step->parameters, (std::vector<std::string>{"conv.weight", "fc.bias"}));
  EXPECT_EQ(package->step->buffers, (std::vector<std::string>{"bn.running_mean"}));
  EXPECT_EQ(package->step->inputs, 1);
  EXPECT_FALSE(m.artifact("eval")->step);

  const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil) {
    nlohmann::json bad = json;
    spoil(bad["artifacts"]["aoti_train.float32.cuda"]);
    return load_error(write_manifest(dir, bad.dump()));
  };
  EXPECT_THAT(refused([](nlohmann::json& a) {
                a["step"]["outputs"] = {"loss", "grad:fc.bias", "grad:conv.weight"};
              }),
              ::testing::HasSubstr("artifact aoti_train.float32.cuda: step.outputs must be"));
  EXPECT_THAT(refused([](nlohmann::json& a) { a["step"]["buffers"] = {"fc.bias"}; }),
              ::testing::HasSubstr("step names 'fc.bias' twice"));
  EXPECT_THAT(refused([](nlohmann::json& a) { a["step"]["inputs"] = 1.5; }),
              ::testing::HasSubstr("step.inputs is not an integer"));
  EXPECT_THAT(refused([](nlohmann::json& a) { a["step"]["inputs"] = 2; }),
              ::testing::HasSubstr("step.inputs is 2 but inputs.spec lists 1"));
  EXPECT_THAT(
      refused([](nlohmann::json& a) { a.erase("step"); }),
      ::testing::HasSubstr("a step contract goes with kind aoti_training and only with it"));
}

TEST(ReadManifest, MissingFileNamesIt) {
  ScratchDir dir;
  std::string message = load_error(dir.file("nowhere/manifest.json"));
  EXPECT_NE(message.find(dir.file("nowhere/manifest.json")), std::string::npos) << message;
}

TEST(ReadManifest, BadJsonNamesTheFile) {
  ScratchDir dir;
  const std::string path = write_manifest(dir, "{\"format\": \"zoobench-manifest/1\", \"name\": ");
  std::string message = load_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("JSON"), std::string::npos) << message;
  // A number beyond double's range is nlohmann's out_of_range, not a parse_error: it too names
  // the file (the fuzzer found it without: docs/reliability.md).
  const std::string huge =
      write_manifest(dir, "{\"format\": \"zoobench-manifest/1\", \"batch_size\": 1e309}");
  message = load_error(huge);
  EXPECT_NE(message.find(huge), std::string::npos) << message;
  EXPECT_NE(message.find("JSON"), std::string::npos) << message;
}

TEST(ReadManifest, WrongFormatStringNamesFileAndFormat) {
  for (const char* format : {"zoobench-manifest/2", "", "something-else"}) {
    ScratchDir dir;
    nlohmann::json json = example_manifest();
    json["format"] = format;
    const std::string path = write_manifest(dir, json.dump());
    std::string message = load_error(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("zoobench-manifest/1"), std::string::npos) << message;
  }
  ScratchDir dir;
  nlohmann::json json = example_manifest();
  json.erase("format");
  const std::string path = write_manifest(dir, json.dump());
  EXPECT_NE(load_error(path).find(path), std::string::npos);
}

TEST(ReadManifest, MissingOrMalformedRequiredFieldsNameTheFile) {
  struct Breakage {
    const char* what;
    std::function<void(nlohmann::json&)> apply;
  };
  const std::vector<Breakage> breakages = {
      {"no name", [](nlohmann::json& j) { j.erase("name"); }},
      {"name not a string", [](nlohmann::json& j) { j["name"] = 5; }},
      {"no artifacts", [](nlohmann::json& j) { j.erase("artifacts"); }},
      {"artifact without path", [](nlohmann::json& j) { j["artifacts"]["eval"].erase("path"); }},
      {"artifact without sha256",
       [](nlohmann::json& j) { j["artifacts"]["eval"].erase("sha256"); }},
      {"no inputs", [](nlohmann::json& j) { j.erase("inputs"); }},
      {"inputs without sha256", [](nlohmann::json& j) { j["inputs"].erase("sha256"); }},
      {"batch size a string", [](nlohmann::json& j) { j["batch_size"] = "four"; }},
      {"unknown loss rule", [](nlohmann::json& j) { j["training"]["loss"] = "sum_of_everything"; }},
  };
  for (const auto& breakage : breakages) {
    SCOPED_TRACE(breakage.what);
    ScratchDir dir;
    nlohmann::json json = example_manifest();
    breakage.apply(json);
    const std::string path = write_manifest(dir, json.dump());
    std::string message = load_error(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
}

// A batch size of -5, 0, 2^70 (which JSON reads as a float) or 1.5 was read as some int64_t
// and reported; it is a model_fail_to_load naming the file, the value and the range.
TEST(ReadManifest, BatchSizeOutOfRangeNamesValueAndRange) {
  struct Case {
    std::string written, shown;  // as in the file, as the message shows it
  };
  const std::vector<Case> cases = {{"-5", "-5"},
                                   {"0", "0"},
                                   {"1180591620717411303424", "1.1805916207174113e+21"},
                                   {"1.5", "1.5"},
                                   {"18446744073709551615", "18446744073709551615"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.written);
    ScratchDir dir;
    std::string text = example_manifest().dump();
    const std::string valid = "\"batch_size\":4";
    text.replace(text.find(valid), valid.size(), "\"batch_size\":" + c.written);
    const std::string path = write_manifest(dir, text);
    std::string message = load_error(path);
    EXPECT_NE(message.find(path + ": batch_size " + c.shown + " is out of range"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("expected a positive integer, 1 to 9223372036854775807"),
              std::string::npos)
        << message;
  }
}

// mutated_inputs names inputs by index: one that names none had the runner clone nothing.
TEST(ReadManifest, MutatedInputOutOfRangeNamesIndexAndRange) {
  struct Case {
    nlohmann::json mutated;
    bool with_spec;
    std::string value, range;
  };
  const std::vector<Case> cases = {
      {{1}, true, "index 1 ", "the 1 input(s) that inputs.spec lists, 0 to 0"},
      {{0, -1}, true, "index -1 ", "0 to 0"},
      {{-3}, false, "index -3 ", "an input index, 0 or more"},
      {{"first"}, true, "index \"first\" ", "0 to 0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.mutated.dump());
    ScratchDir dir;
    nlohmann::json json = example_manifest();
    json["mutated_inputs"] = c.mutated;
    if (!c.with_spec) json["inputs"].erase("spec");
    const std::string path = write_manifest(dir, json.dump());
    std::string message = load_error(path);
    EXPECT_NE(message.find(path + ": mutated_inputs " + c.value), std::string::npos) << message;
    EXPECT_NE(message.find(c.range), std::string::npos) << message;
  }
  ScratchDir dir;
  nlohmann::json json = example_manifest();
  json["mutated_inputs"] = {5};
  json["inputs"].erase("spec");  // without a spec the count is unknown here
  EXPECT_EQ(read_manifest(write_manifest(dir, json.dump())).mutated_inputs,
            (std::vector<int64_t>{5}));
}

TEST(VerifyArtifact, MatchingShaPassesMismatchIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("eval.pt");
  std::ofstream(path) << "the model's bytes";
  const std::string good = sha256_file(path);
  EXPECT_NO_THROW(verify_artifact(path, good, "TorchScript"));

  std::string bad = good;
  bad[0] = bad[0] == '0' ? '1' : '0';
  try {
    verify_artifact(path, bad, "TorchScript");
    FAIL() << "a sha256 mismatch was accepted";
  } catch (const ModelLoadError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("sha256"), std::string::npos) << message;
    EXPECT_NE(message.find("TorchScript"), std::string::npos) << message;
  }

  // One changed byte in the file, same manifest: refused.
  std::ofstream(path, std::ios::app) << "!";
  EXPECT_THROW(verify_artifact(path, good, "TorchScript"), ModelLoadError);
}

// A digest in capitals is the same digest; a manifest whose digest is no digest says so (it
// read as "the file changed after export").
TEST(VerifyArtifact, DigestsInCapitalsPassMalformedOnesAreNamed) {
  ScratchDir dir;
  const std::string path = dir.file("eval.pt");
  std::ofstream(path) << "the model's bytes";
  std::string upper = sha256_file(path);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_NO_THROW(verify_artifact(path, upper, "TorchScript"));
  try {
    verify_artifact(path, "aa", "TorchScript");
    FAIL() << "a two-digit digest was accepted";
  } catch (const ModelLoadError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("is not 64 hexadecimal digits"));
  }
}

// name and suite become paths (zoo/<suite>/<name>, bisect's repro folders); loss_scale
// multiplies every gradient: out of their rules, the manifest is refused naming the field.
TEST(ReadManifest, NamesThatWouldBePathsAndWildLossScalesAreRefused) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"name '../../x'", [](nlohmann::json& j) { j["name"] = "../../x"; }},
      {"suite '/tmp'", [](nlohmann::json& j) { j["suite"] = "/tmp"; }},
      {"training.loss_scale 0", [](nlohmann::json& j) { j["training"]["loss_scale"] = 0; }},
      {"training.loss_scale -1", [](nlohmann::json& j) { j["training"]["loss_scale"] = -1; }},
      {"training.loss_scale 1000000000", [](nlohmann::json& j) { j["training"]["loss_scale"] = 1e9; }},
  };
  for (const auto& [expected, edit] : cases) {
    nlohmann::json json = example_manifest();
    edit(json);
    EXPECT_THAT(load_error(write_manifest(dir, json.dump())), ::testing::HasSubstr(expected));
  }
}

TEST(VerifyArtifact, MissingFileIsRefused) {
  ScratchDir dir;
  try {
    verify_artifact(dir.file("gone.pt"), std::string(64, 'a'), "inputs");
    FAIL() << "a missing file was accepted";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("gone.pt")), std::string::npos) << e.what();
  }
}

// Artifact paths stay inside the model's folder: absolute paths, `..` and symbolic links out of
// it are refused before anything is opened, naming the manifest and the path.
TEST(ReadManifest, ArtifactPathsOutOfTheModelFolderAreRefused) {
  ScratchDir root;  // one per test: the model folders are folders inside it
  const std::string foreign = root.file("secret.txt");
  std::ofstream(foreign) << "not a model";
  int case_number = 0;
  for (const std::string bad : {std::string("/etc/passwd"), std::string("../../../../etc/passwd"),
                                std::string("sub/../../eval.pt"), std::string("link.pt")}) {
    for (const std::string role : {"eval", "inputs"}) {
      const std::filesystem::path folder = root.file("model" + std::to_string(case_number++));
      std::filesystem::create_directories(folder);
      std::filesystem::create_symlink(foreign, folder / "link.pt");
      nlohmann::json json = example_manifest();
      if (role == "eval") {
        json["artifacts"]["eval"]["path"] = bad;
      } else {
        json["inputs"]["path"] = bad;
      }
      const std::string path = (folder / "manifest.json").string();
      std::ofstream(path) << json.dump();
      const std::string message = load_error(path);
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find("'" + bad + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("folder"), std::string::npos) << message;
    }
  }
  // A link that stays inside the folder is fine.
  const std::filesystem::path folder = root.file("linked_inside");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "real.pt") << "bytes";
  std::filesystem::create_symlink(folder / "real.pt", folder / "eval.pt");
  std::ofstream((folder / "manifest.json").string()) << example_manifest().dump();
  EXPECT_NO_THROW(read_manifest((folder / "manifest.json").string()));
}

// manifest.json itself linked from another model's (or anyone's) folder: its paths would be
// confined, but its digests and inputs' spec would be another file's. Refused before it is read;
// a link to a manifest inside the folder is fine.
TEST(ReadManifest, AManifestLinkedFromOutsideItsFolderIsRefused) {
  ScratchDir root;
  const std::filesystem::path elsewhere = root.file("elsewhere"), model = root.file("model");
  std::filesystem::create_directories(elsewhere);
  std::filesystem::create_directories(model);
  std::ofstream((elsewhere / "manifest.json").string()) << example_manifest().dump();
  std::filesystem::create_symlink(elsewhere / "manifest.json", model / "manifest.json");
  const std::string message = load_error((model / "manifest.json").string());
  EXPECT_NE(message.find("leads out of the model folder"), std::string::npos) << message;

  const std::filesystem::path inside = root.file("inside");
  std::filesystem::create_directories(inside);
  std::ofstream((inside / "real.json").string()) << example_manifest().dump();
  std::filesystem::create_symlink("real.json", inside / "manifest.json");
  EXPECT_NO_THROW(read_manifest((inside / "manifest.json").string()));
}

TEST(VerifyArtifact, AnythingButARegularFileIsRefused) {
  ScratchDir dir;
  const std::string fifo = dir.file("inputs.pt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    verify_artifact(fifo, std::string(64, 'a'), "inputs");  // would block forever if opened
    FAIL() << "a FIFO was hashed";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  std::filesystem::create_directory(dir.file("eval.pt"));
  EXPECT_THROW(verify_artifact(dir.file("eval.pt"), std::string(64, 'a'), "TorchScript"),
               ModelLoadError);
}

// A path that cannot be resolved (a link to itself, a name longer than the system takes) is a
// model that cannot load, named as such: std::filesystem's exception escaped instead, and the
// row read eager_1st_run_fail.
TEST(VerifyArtifact, APathThatCannotBeResolvedIsAModelThatCannotLoad) {
  ScratchDir dir;
  std::filesystem::create_symlink("eval.pt", dir.file("eval.pt"));
  try {
    read_verified_artifact(dir.file("eval.pt"), std::string(64, 'a'), "TorchScript");
    FAIL() << "a link to itself was read";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("eval.pt")), std::string::npos) << e.what();
  }
  EXPECT_THROW(verify_artifact(dir.file(std::string(300, 'x')), std::string(64, 'a'), "inputs"),
               ModelLoadError);
}

}  // namespace
}  // namespace zoobench
