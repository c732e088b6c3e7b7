// The search for the first submodule that fails alone (bisect/divergence.h), on a fake model
// tree: which children it checks, in what order, where it stops, and what it reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "zoobench/bisect/divergence.h"

namespace zoobench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A model tree: children of each path in call order; the paths whose check fails, and how.
struct FakeModel {
  std::map<std::string, std::vector<std::string>> children;
  std::map<std::string, std::string> status;  // default "pass"
  std::set<std::string> unwritable;           // captured, but not writable as a repro

  CaptureLevel capture() const {
    return [this](const std::string& parent) {
      std::vector<SubmoduleCandidate> out;
      auto it = children.find(parent);
      if (it == children.end()) return out;
      for (const auto& child : it->second) {
        SubmoduleCandidate c;
        c.path = child;
        c.model = "m@" + child;
        c.folder = "/zoo/suite/m@" + child;
        if (unwritable.count(child)) c.skipped = "its inputs are not all tensors (Int)";
        out.push_back(c);
      }
      return out;
    };
  }
  CheckSubmodule check(std::vector<std::string>& checked) const {
    return [this, &checked](const SubmoduleCandidate& c) {
      checked.push_back(c.path);
      SubmoduleCheck result;
      result.candidate = c;
      auto it = status.find(c.path);
      result.status = it == status.end() ? "pass" : it->second;
      if (result.status == "fail_accuracy") result.max_abs = "0.5";
      return result;
    };
  }
};

TEST(Divergence, DescendsIntoTheFirstFailingChildUntilNoneOfItsChildrenFails) {
  FakeModel model;
  model.children = {{"", {"embed", "encoder", "head"}},
                    {"encoder", {"encoder.0", "encoder.1", "encoder.2"}},
                    {"encoder.1", {"encoder.1.attn", "encoder.1.mlp"}}};
  // encoder.1 fails alone, and so do encoder and head; only encoder.1.mlp of its children.
  model.status = {{"encoder", "fail_accuracy"}, {"encoder.1", "fail_accuracy"},
                  {"encoder.1.mlp", "fail_accuracy"}, {"head", "fail_accuracy"}};
  std::vector<std::string> checked;
  DivergenceReport report = find_first_divergence(model.capture(), model.check(checked));
  EXPECT_EQ(report.verdict, DivergenceVerdict::kFound);
  EXPECT_EQ(report.path, "encoder.1.mlp");
  EXPECT_EQ(report.repro, "/zoo/suite/m@encoder.1.mlp");
  // Call order at each level, stopping at the first failure (head is never checked).
  EXPECT_THAT(checked, ElementsAre("embed", "encoder", "encoder.0", "encoder.1", "encoder.1.attn",
                                   "encoder.1.mlp"));
  EXPECT_THAT(report.levels, ElementsAre("", "encoder", "encoder.1", "encoder.1.mlp"));
  EXPECT_THAT(report.note, HasSubstr("calls no submodule"));
  const std::string text = format_divergence(report);
  EXPECT_THAT(text, HasSubstr("first diverging submodule: encoder.1.mlp"));
  EXPECT_THAT(text, HasSubstr("repro: /zoo/suite/m@encoder.1.mlp"));
  const auto json = divergence_json(report);
  EXPECT_EQ(json["verdict"], "found");
  EXPECT_EQ(json["checks"].size(), 6u);
  EXPECT_EQ(json["checks"][5]["max_abs"], "0.5");
}

TEST(Divergence, AFailingParentWhoseChildrenAllPassIsTheAnswer) {
  FakeModel model;
  model.children = {{"", {"a", "b"}}, {"b", {"b.0", "b.1"}}};
  model.status = {{"b", "fail_accuracy"}};
  std::vector<std::string> checked;
  DivergenceReport report = find_first_divergence(model.capture(), model.check(checked));
  EXPECT_EQ(report.verdict, DivergenceVerdict::kFound);
  EXPECT_EQ(report.path, "b");
  EXPECT_THAT(report.note, HasSubstr("none of its 2 children checked fails alone"));
}

TEST(Divergence, NoChildFailingAloneIsSaidSo) {
  FakeModel model;
  model.children = {{"", {"a", "b"}}};
  std::vector<std::string> checked;
  DivergenceReport report = find_first_divergence(model.capture(), model.check(checked));
  EXPECT_EQ(report.verdict, DivergenceVerdict::kNoChildFailsAlone);
  EXPECT_EQ(report.path, "");
  EXPECT_THAT(checked, ElementsAre("a", "b"));
  EXPECT_THAT(format_divergence(report), HasSubstr("needs several of them together"));
}

// A child that cannot be written out is not checked; one whose eager side failed says nothing
// about the backend and does not stop the search; a crash of the compiled side does.
TEST(Divergence, OnlyTheCompiledSidesFailuresCount) {
  FakeModel model;
  model.children = {{"", {"ints", "eager_broken", "crasher", "later"}}};
  model.unwritable = {"ints"};
  model.status = {{"eager_broken", "eager_1st_run_fail"}, {"crasher", "crash"}, {"later", "fail_accuracy"}};
  std::vector<std::string> checked;
  DivergenceReport report = find_first_divergence(model.capture(), model.check(checked));
  EXPECT_THAT(checked, ElementsAre("eager_broken", "crasher"));
  EXPECT_EQ(report.path, "crasher");
}

}  // namespace
}  // namespace zoobench
