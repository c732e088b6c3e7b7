// Every branch of torch._dynamo.utils.same (PyTorch 2.11) on hand-built cases whose verdicts,
// margins and smallest passing tolerances were worked out by hand (noted beside each case).
// Errors are built from powers of two so that float32/bfloat16 hold them exactly and rmse is
// exact: base values on a 2^-10 (bfloat16: 2^-4) grid in [0, 1), errors of k * 2^-3.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "zoobench/accuracy/compare.h"

namespace zoobench::accuracy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

c10::IValue list(std::vector<c10::IValue> items) {
  c10::impl::GenericList l(c10::AnyType::get());
  for (auto& item : items) l.push_back(std::move(item));
  return l;
}

c10::IValue dict(std::vector<std::pair<std::string, c10::IValue>> items) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  for (auto& [k, v] : items) d.insert(k, std::move(v));
  return d;
}

at::Tensor values(std::vector<double> v, c10::ScalarType dtype = at::kFloat) {
  return at::tensor(v, at::kDouble).to(dtype);
}

// fp64 golden of `shape` on a grid, and ref = fp64 + ref_error, res = fp64 + res_error (same
// sign everywhere), both in `dtype`: rmse(fp64, ref) == ref_error exactly, likewise res.
struct Triple {
  at::Tensor fp64, ref, res;
};
Triple triple(std::vector<int64_t> shape, double ref_error, double res_error,
              c10::ScalarType dtype = at::kFloat) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  const double step = dtype == at::kBFloat16 ? 1.0 / 16 : 1.0 / 1024;
  at::Tensor fp64 = (at::arange(n, at::kDouble) * step).fmod(1.0).reshape(shape);
  return {fp64, (fp64 + ref_error).to(dtype), (fp64 + res_error).to(dtype)};
}

SameResult same_tensors(const Triple& t, const SameOptions& options = {}) {
  return same(t.ref, t.res, t.fp64, options);
}

const TensorDiagnosis& only_leaf(const SameResult& r) {
  EXPECT_EQ(r.leaves.size(), 1u);
  return r.leaves.at(0);
}

// ---------------- containers ----------------

TEST(SameContainers, ListLengthMismatchFailsAtTheList) {
  auto r = same(list({at::ones({2}), list({at::ones({1}), at::ones({1})})}),
                list({at::ones({2}), list({at::ones({1})})}));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.summary.first_failure, "output[1]");
  const auto& leaf = r.leaves.at(1);
  EXPECT_EQ(leaf.rule, Rule::kStructure);
  EXPECT_NE(leaf.reason.find("length mismatch"), std::string::npos) << leaf.reason;
  EXPECT_EQ(leaf.margin, kInf);
}

TEST(SameContainers, DictKeyMismatchFailsAndNamesTheKeys) {
  auto r = same(dict({{"a", at::ones({2})}, {"b", at::ones({2})}}),
                dict({{"a", at::ones({2})}, {"c", at::ones({2})}}));
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.leaves.size(), 2u);
  EXPECT_EQ(r.leaves[0].path, "output");
  EXPECT_EQ(r.leaves[0].rule, Rule::kStructure);
  EXPECT_NE(r.leaves[0].reason.find("only in ref ['b']"), std::string::npos) << r.leaves[0].reason;
  EXPECT_NE(r.leaves[0].reason.find("only in res ['c']"), std::string::npos) << r.leaves[0].reason;
  // The common key is still compared, for the diagnosis.
  EXPECT_EQ(r.leaves[1].path, "output['a']");
  EXPECT_TRUE(r.leaves[1].pass);
}

TEST(SameContainers, NestedFailureReportsItsPathAndKeysAreVisitedSorted) {
  auto good = at::ones({3});
  auto bad = at::full({3}, 2.0);
  auto r = same(dict({{"z", good}, {"logits", list({good, good})}}),
                dict({{"z", good}, {"logits", list({good, bad})}}));
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.leaves.size(), 3u);
  EXPECT_EQ(r.leaves[0].path, "output['logits'][0]");
  EXPECT_EQ(r.leaves[1].path, "output['logits'][1]");
  EXPECT_EQ(r.leaves[2].path, "output['z']");
  EXPECT_EQ(r.summary.first_failure, "output['logits'][1]");
  EXPECT_EQ(r.summary.worst_path, "output['logits'][1]");
  EXPECT_EQ(r.summary.failed, 1u);
  EXPECT_EQ(r.summary.total, 3u);
}

TEST(SameContainers, TupleAndListCompareAsSequencesButTypesMustMatch) {
  auto t = at::ones({2});
  EXPECT_TRUE(same(c10::ivalue::Tuple::create({t, t}), list({t, t})).pass);
  auto r = same(list({t}), t);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(only_leaf(r).reason.find("type mismatch"), std::string::npos);
  EXPECT_FALSE(same(t, list({t})).pass);
  EXPECT_FALSE(same(dict({{"a", t}}), list({t})).pass);
}

TEST(SameContainers, NoneInTheFp64TreeMeansUseRef) {
  // A float64 leaf uses itself as fp64 when fp64 is None there: rmse(ref)=0, so res must be
  // within tol/10 in rmse or allclose.
  auto ref = values({1.0, 2.0}, at::kDouble);
  auto res = values({1.0, 2.001}, at::kDouble);
  auto r = same(list({ref}), list({res}), list({c10::IValue()}));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kRmse);
}

// ---------------- dtypes ----------------

TEST(SameDtype, MismatchFailsUnlessExactDtypeIsOff) {
  auto ref = values({1.0, 2.0});
  auto res = values({1.0, 2.0}, at::kHalf);
  auto r = same(ref, res);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kDtype);
  EXPECT_EQ(only_leaf(r).max_abs, 0);  // the numbers are still measured
  SameOptions loose;
  loose.exact_dtype = false;
  EXPECT_TRUE(same(ref, res, c10::IValue(), loose).pass);
}

// ---------------- bool ----------------

at::Tensor mask(int64_t n, int64_t on, int64_t first = 0) {
  at::Tensor m = at::zeros({n}, at::kBool);
  m.slice(0, first, first + on).fill_(true);
  return m;
}

TEST(SameBool, IouAtTheThreshold) {
  SameOptions o;
  o.use_iou_for_bool = true;
  // 99 of 100 set pixels agree: IoU = float32(99/100) = 0.99000001 >= 0.99.
  auto r = same(mask(200, 100), mask(200, 99), c10::IValue(), o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kIou);
  EXPECT_NEAR(only_leaf(r).iou, 0.99, 1e-7);
  EXPECT_NEAR(only_leaf(r).margin, 1.0, 1e-5);
  EXPECT_LE(only_leaf(r).margin, 1.0);
  // 98 of 100: IoU 0.98, margin (1 - 0.98) / (1 - 0.99) = 2.
  r = same(mask(200, 100), mask(200, 98), c10::IValue(), o);
  EXPECT_FALSE(r.pass);
  EXPECT_NEAR(only_leaf(r).margin, 2.0, 1e-5);
  EXPECT_EQ(only_leaf(r).min_passing_tol, kInf);
  // Shifted masks: intersection 90, union 110, IoU 0.818; a lower threshold accepts it.
  o.iou_threshold = 0.8;
  EXPECT_TRUE(same(mask(200, 100), mask(200, 100, 10), c10::IValue(), o).pass);
}

TEST(SameBool, TwoEmptyMasksPassIou) {
  SameOptions o;
  o.use_iou_for_bool = true;
  auto r = same(mask(10, 0), mask(10, 0), c10::IValue(), o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).margin, 0);
}

TEST(SameBool, AllcloseOnUint8WithoutIou) {
  auto r = same(mask(10, 5), mask(10, 4));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kAllclose);
  EXPECT_EQ(only_leaf(r).mismatched, 1);
  // |1 - 0| = 1 <= tol + tol * 0 needs tol >= 1.
  EXPECT_DOUBLE_EQ(only_leaf(r).min_passing_tol, 1.0);
  EXPECT_TRUE(same(mask(10, 5), mask(10, 5)).pass);
  SameOptions ignore;
  ignore.ignore_non_fp = true;
  EXPECT_TRUE(same(mask(10, 5), mask(10, 4), c10::IValue(), ignore).pass);
}

// ---------------- cosine ----------------

TEST(SameCosine, EarlyAllclosePassHandlesZeros) {
  SameOptions o;
  o.cos_similarity = true;
  // cosine_similarity(zeros, zeros) is 0: only the allclose early exit passes this.
  auto r = same(at::zeros({10}), at::zeros({10}), c10::IValue(), o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kAllclose);
}

TEST(SameCosine, SimilarityDecidesAfterAllcloseFails) {
  SameOptions o;
  o.cos_similarity = true;
  // cos([1, 0], [1, 0.1]) = 1 / sqrt(1.01) = 0.995037: passes, margin 0.4963.
  auto r = same(values({1.0, 0.0}), values({1.0, 0.1}), c10::IValue(), o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kCosine);
  EXPECT_NEAR(only_leaf(r).cosine, 0.9950372, 1e-6);
  EXPECT_NEAR(only_leaf(r).margin, (1 - 0.9950372) / 0.01, 1e-4);
  EXPECT_EQ(only_leaf(r).min_passing_tol, 0);
  // cos([1, 0], [1, 0.2]) = 1 / sqrt(1.04) = 0.980581: fails, margin 1.9419.
  r = same(values({1.0, 0.0}), values({1.0, 0.2}), c10::IValue(), o);
  EXPECT_FALSE(r.pass);
  EXPECT_NEAR(only_leaf(r).margin, (1 - 0.980581) / 0.01, 1e-4);
  // allclose would need |0 - 0.2| <= t (1 + 0.2): t = 1/6.
  EXPECT_NEAR(only_leaf(r).min_passing_tol, 0.2f / 1.2f, 1e-7);
}

// ---------------- NaN ----------------

TEST(SameNan, FallbackPassesWhenOnlyRefHasNan) {
  // ref NaN where fp64 and res are finite, res within 4e-2 of fp64: pass by the NaN rule.
  auto fp64 = values({1.0, 2.0, 3.0}, at::kDouble);
  auto ref = values({1.0, kNaN, 3.0});
  auto res = values({1.0, 2.05, 3.0});
  auto r = same(ref, res, fp64);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kNanFallback);
  // |2 - 2.05| <= t (1 + 2.05) needs t = 0.05 / 3.05 = 0.016393, ratio to 4e-2 = 0.4098.
  EXPECT_NEAR(only_leaf(r).margin, (0.05 / 3.05) / 0.04, 1e-5);
  EXPECT_EQ(only_leaf(r).min_passing_tol, 0);
  // Further than 4e-2 allows: rmse then compares with a NaN ref error and fails.
  res = values({1.0, 2.5, 3.0});
  r = same(ref, res, fp64);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kRmse);
  EXPECT_TRUE(std::isnan(only_leaf(r).rmse_ref));
}

TEST(SameNan, EqualNan) {
  auto a = values({1.0, kNaN});
  EXPECT_FALSE(same(a, a.clone()).pass);
  SameOptions o;
  o.equal_nan = true;
  auto r = same(a, a.clone(), c10::IValue(), o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).max_abs, 0);
}

TEST(SameNan, EqualNanAcceptsTwoNanRmseErrors) {
  // NaNs at different places: allclose fails, res has NaN so no fallback; both rmse are NaN.
  auto fp64 = values({1.0, 2.0}, at::kDouble);
  auto ref = values({kNaN, 2.0});
  auto res = values({1.0, kNaN});
  EXPECT_FALSE(same(ref, res, fp64).pass);
  SameOptions o;
  o.equal_nan = true;
  auto r = same(ref, res, fp64, o);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kRmse);
  EXPECT_EQ(only_leaf(r).margin, 0);
}

// ---------------- rmse and its multiplier ----------------

TEST(SameRmse, DefaultMultiplierTwo) {
  // 2048 float32, ref error 1/8: allowed = 2 * 0.125 + 1e-5 = 0.25001.
  auto r = same_tensors(triple({32, 64}, 0.125, 0.25));
  EXPECT_TRUE(r.pass);
  const auto& leaf = only_leaf(r);
  EXPECT_EQ(leaf.rule, Rule::kRmse);
  EXPECT_EQ(leaf.multiplier, 2.0);
  EXPECT_DOUBLE_EQ(leaf.rmse_ref, 0.125);
  EXPECT_DOUBLE_EQ(leaf.rmse_res, 0.25);
  EXPECT_DOUBLE_EQ(leaf.margin, 0.25 / 0.25001);
  EXPECT_DOUBLE_EQ(leaf.max_abs, 0.125);
  EXPECT_DOUBLE_EQ(leaf.mean_abs, 0.125);
  // res error 5/16: margin 0.3125 / 0.25001 = 1.24995.
  r = same_tensors(triple({32, 64}, 0.125, 0.3125));
  EXPECT_FALSE(r.pass);
  EXPECT_DOUBLE_EQ(only_leaf(r).margin, 0.3125 / 0.25001);
  EXPECT_NE(only_leaf(r).reason.find("rmse"), std::string::npos);
}

TEST(SameRmse, MinPassingTolAccountsForTheMultiplierBump) {
  // Below 2e-2 the multiplier is 2: 0.3125 <= 0.25 + t/10 needs t = 0.625 (>= 2e-2), but from
  // 2e-2 on it is 3 and 0.3125 <= 0.375 + t/10 holds: the smallest passing tol is 2e-2.
  // allclose would need 0.1875 / (1 + 0.3125) = 0.142857.
  Triple t = triple({32, 64}, 0.125, 0.3125);
  auto r = same_tensors(t);
  EXPECT_DOUBLE_EQ(only_leaf(r).min_passing_tol, 2e-2);
  SameOptions o;
  o.tol = 2e-2;
  EXPECT_TRUE(same_tensors(t, o).pass);
  EXPECT_EQ(only_leaf(same_tensors(t, o)).multiplier, 3.0);
  o.tol = 0.0199;
  EXPECT_FALSE(same_tensors(t, o).pass);
}

TEST(SameRmse, MinPassingTolBelowTheBump) {
  // res error 0.25 + 2^-10: 10 * (0.2509765625 - 0.25) = 0.009765625 with multiplier 2.
  Triple t = triple({32, 64}, 0.125, 0.25 + 1.0 / 1024);
  auto r = same_tensors(t);
  EXPECT_FALSE(r.pass);
  EXPECT_NEAR(only_leaf(r).min_passing_tol, 0.009765625, 1e-15);
  SameOptions o;
  o.tol = 0.009765625 * 1.0001;
  EXPECT_TRUE(same_tensors(t, o).pass);
  o.tol = 0.009765625 * 0.9999;
  EXPECT_FALSE(same_tensors(t, o).pass);
}

TEST(SameRmse, HalfAndBfloat16UseThree) {
  // bfloat16 res: 3 * 0.125 + 1e-5 allows 0.375.
  auto r = same_tensors(triple({32, 64}, 0.125, 0.375, at::kBFloat16));
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).multiplier, 3.0);
  EXPECT_FALSE(same_tensors(triple({32, 64}, 0.125, 0.5, at::kBFloat16)).pass);
  EXPECT_EQ(only_leaf(same_tensors(triple({32, 64}, 0.125, 0.375, at::kHalf))).multiplier, 3.0);
}

TEST(SameRmse, LargerMultiplierForSmallerTensors) {
  SameOptions larger;
  larger.use_larger_multiplier_for_smaller_tensor = true;
  // numel 10: multiplier 10 (1.25 passes); without the flag numel < 1000 gives 3.
  Triple ten = triple({10}, 0.125, 1.25);
  EXPECT_TRUE(same_tensors(ten, larger).pass);
  EXPECT_EQ(only_leaf(same_tensors(ten, larger)).multiplier, 10.0);
  EXPECT_FALSE(same_tensors(ten).pass);
  EXPECT_EQ(only_leaf(same_tensors(ten)).multiplier, 3.0);
  // numel 11..500: multiplier 8 (1.0 passes, 1.125 not).
  EXPECT_TRUE(same_tensors(triple({500}, 0.125, 1.0), larger).pass);
  EXPECT_EQ(only_leaf(same_tensors(triple({11}, 0.125, 1.0), larger)).multiplier, 8.0);
  EXPECT_FALSE(same_tensors(triple({500}, 0.125, 1.125), larger).pass);
  // numel 501..999: back to 3.
  EXPECT_EQ(only_leaf(same_tensors(triple({501}, 0.125, 1.0), larger)).multiplier, 3.0);
}

TEST(SameRmse, SmallTensorsOneByOneKernelsAndHighTolUseThree) {
  // numel 999 < 1000.
  EXPECT_EQ(only_leaf(same_tensors(triple({999}, 0.125, 0.375))).multiplier, 3.0);
  EXPECT_TRUE(same_tensors(triple({999}, 0.125, 0.375)).pass);
  // 4-D with the last two dims 1 (1x1 kernels), 2048 elements.
  EXPECT_TRUE(same_tensors(triple({1024, 2, 1, 1}, 0.125, 0.375)).pass);
  EXPECT_EQ(only_leaf(same_tensors(triple({1024, 2, 1, 1}, 0.125, 0.375))).multiplier, 3.0);
  // Only one trailing 1: the default 2.
  EXPECT_FALSE(same_tensors(triple({1024, 1, 2, 1}, 0.125, 0.375)).pass);
  // tol >= 2e-2 ("REQUIRE_HIGHER_TOLERANCE").
  SameOptions high;
  high.tol = 2e-2;
  EXPECT_EQ(only_leaf(same_tensors(triple({32, 64}, 0.125, 0.375), high)).multiplier, 3.0);
  high.tol = 1.99e-2;
  EXPECT_EQ(only_leaf(same_tensors(triple({32, 64}, 0.125, 0.3), high)).multiplier, 2.0);
}

TEST(SameRmse, ForceMaxMultiplierIsTen) {
  SameOptions o;
  o.force_max_multiplier = true;
  Triple t = triple({32, 64}, 0.125, 1.25);
  EXPECT_TRUE(same_tensors(t, o).pass);
  EXPECT_EQ(only_leaf(same_tensors(t, o)).multiplier, 10.0);
  EXPECT_FALSE(same_tensors(t).pass);
}

TEST(SameRmse, MultiplierFunction) {
  SameOptions o;
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 5000, {50, 100}), 2.0);
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kHalf, 5000, {50, 100}), 3.0);
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 999, {999}), 3.0);
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 5000, {5000, 1, 1, 1}), 3.0);
  EXPECT_EQ(rmse_multiplier(o, 2e-2, at::kFloat, 5000, {5000}), 3.0);
  o.use_larger_multiplier_for_smaller_tensor = true;
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kHalf, 10, {10}), 10.0);
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 500, {500}), 8.0);
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 5000, {5000}), 2.0);
  o.force_max_multiplier = true;
  EXPECT_EQ(rmse_multiplier(o, 1e-4, at::kFloat, 5000, {5000}), 10.0);
}

// ---------------- allclose-only cases ----------------

TEST(SameAllclose, IntegersWithoutAFloat64ReferencePassOnlyByAllclose) {
  auto ref = values({1, 2, 3}, at::kLong);
  auto res = values({1, 2, 4}, at::kLong);
  auto r = same(ref, res, ref);  // the fp64 run leaves integer outputs integer
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kAllclose);
  // |3 - 4| <= t (1 + 4): t = 0.2.
  EXPECT_NEAR(only_leaf(r).min_passing_tol, 0.2, 1e-7);
  EXPECT_TRUE(same(ref, ref.clone()).pass);
  SameOptions ignore;
  ignore.ignore_non_fp = true;
  EXPECT_TRUE(same(ref, res, ref, ignore).pass);
}

TEST(SameAllclose, MarginIsTheAllcloseRatio) {
  // float64 tensors are their own fp64 reference, so use float32 to stay on allclose alone:
  // |1 - 1.00005| = 5e-5 against 1e-4 * (1 + 1.00005): margin 0.24999.
  auto r = same(values({1.0}), values({1.00005}));
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kAllclose);
  const double diff = static_cast<double>(1.00005f) - 1.0;
  EXPECT_NEAR(only_leaf(r).margin, diff / (1e-4 * (1 + 1.00005)), 1e-6);
}

TEST(SameAllclose, Float64WithoutGoldenUsesItselfForRmse) {
  // |1 - 1.001|: allclose fails; rmse(ref, ref) = 0 and rmse(ref, res) = 0.001 > 1e-5.
  auto r = same(values({1.0}, at::kDouble), values({1.001}, at::kDouble));
  EXPECT_FALSE(r.pass);
  const auto& leaf = only_leaf(r);
  EXPECT_EQ(leaf.rule, Rule::kRmse);
  EXPECT_EQ(leaf.multiplier, 3.0);  // one element < 1000
  EXPECT_NEAR(leaf.margin, 0.001 / 1e-5, 1e-6);
  // allclose needs 0.001 / 2.001; rmse needs 10 * 0.001 = 0.01: the smaller wins.
  EXPECT_NEAR(leaf.min_passing_tol, 0.001 / 2.001, 1e-12);
}

TEST(SameAllclose, ShapesBroadcastLikeTorchOrFail) {
  EXPECT_TRUE(same(at::ones({3}), at::ones({1})).pass);
  auto r = same(at::ones({2, 3}), at::ones({3, 2}));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).rule, Rule::kStructure);
}

TEST(SameAllclose, EmptyAndZeroDimTensors) {
  EXPECT_TRUE(same(at::empty({0, 4}), at::empty({0, 4})).pass);
  EXPECT_TRUE(same(at::scalar_tensor(2.5), at::scalar_tensor(2.5)).pass);
  EXPECT_FALSE(same(at::scalar_tensor(2.5), at::scalar_tensor(2.6)).pass);
}

// ---------------- Python scalars ----------------

TEST(SameScalars, FloatsAreFloat32Tensors) {
  EXPECT_TRUE(same(1.5, 1.5).pass);
  EXPECT_TRUE(same(1.5, 1.50001).pass);  // 1e-5 <= 1e-4 + 1e-4 * 1.5
  auto r = same(1.0, 1.01);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(only_leaf(r).dtype, "float32");
  // A Python float fp64 is float32 too: no rmse rule.
  EXPECT_EQ(only_leaf(same(1.0, 1.01, 1.0)).rule, Rule::kAllclose);
  // A float64 0-d golden brings the rmse rule: 0.01 > 3 * 0 + 1e-5.
  auto g = same(1.0, 1.01, at::scalar_tensor(1.0, at::kDouble));
  EXPECT_FALSE(g.pass);
  EXPECT_EQ(only_leaf(g).rule, Rule::kRmse);
  // float vs int: float32 vs int64 tensors.
  EXPECT_EQ(only_leaf(same(1.0, int64_t{1})).rule, Rule::kDtype);
}

TEST(SameScalars, NoneStrIntBoolDeviceCompareWithPythonEquality) {
  EXPECT_TRUE(same(c10::IValue(), c10::IValue()).pass);
  EXPECT_FALSE(same(c10::IValue(), int64_t{1}).pass);
  EXPECT_TRUE(same(std::string("a"), std::string("a")).pass);
  EXPECT_FALSE(same(std::string("a"), std::string("b")).pass);
  EXPECT_TRUE(same(int64_t{3}, int64_t{3}).pass);
  EXPECT_FALSE(same(int64_t{2}, int64_t{3}).pass);
  EXPECT_TRUE(same(int64_t{1}, 1.0).pass);   // 1 == 1.0
  EXPECT_TRUE(same(true, int64_t{1}).pass);  // True == 1
  EXPECT_TRUE(same(c10::IValue(c10::Device("cpu")), c10::IValue(c10::Device("cpu"))).pass);
  auto r = same(int64_t{2}, int64_t{3});
  EXPECT_EQ(only_leaf(r).rule, Rule::kExact);
  EXPECT_EQ(only_leaf(r).reason, "2 != 3");
  EXPECT_FALSE(only_leaf(r).is_tensor);
  SameOptions ignore;
  ignore.ignore_non_fp = true;
  EXPECT_TRUE(same(int64_t{2}, int64_t{3}, c10::IValue(), ignore).pass);
}

// ---------------- named lists, flattening, summaries ----------------

TEST(SameNamed, GradientsAreNamedInTheDiagnosis) {
  std::vector<NamedTensor> ref = {{"layer1.weight", at::ones({4})}, {"layer1.bias", at::ones({2})}};
  std::vector<NamedTensor> res = {{"layer1.weight", at::ones({4})},
                                  {"layer1.bias", at::full({2}, 1.5)}};
  auto r = compare_named("grad", ref, res, {}, SameOptions());
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.summary.first_failure, "grad:layer1.bias");
  EXPECT_EQ(r.summary.worst_path, "grad:layer1.bias");
  EXPECT_EQ(r.leaves[0].path, "grad:layer1.weight");
  // Different lengths fail as a whole.
  res.pop_back();
  EXPECT_FALSE(compare_named("grad", ref, res, {}, SameOptions()).pass);
  // A missing gradient on both sides (undefined) is None == None.
  std::vector<NamedTensor> none = {{"frozen", at::Tensor()}};
  EXPECT_TRUE(compare_named("grad", none, none, {}, SameOptions()).pass);
}

// Backends list a module's tensors in their own order (TorchScript's and Python's may differ):
// tensors are matched by name, and a name one side lacks fails the group and is named.
TEST(SameNamed, TensorsAreMatchedByNameNotByPosition) {
  std::vector<NamedTensor> ref = {{"a.weight", at::ones({3})}, {"b.weight", at::full({2}, 2.0)}};
  std::vector<NamedTensor> reordered = {{"b.weight", at::full({2}, 2.0)}, {"a.weight", at::ones({3})}};
  EXPECT_TRUE(compare_named("param", ref, reordered, {}, SameOptions()).pass);
  std::vector<NamedTensor> renamed = {{"b.weight", at::full({2}, 2.0)}, {"c.weight", at::ones({3})}};
  auto r = compare_named("param", ref, renamed, {}, SameOptions());
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.leaves.empty());
  EXPECT_NE(r.leaves.back().reason.find("missing in res: a.weight"), std::string::npos) << r.leaves.back().reason;
}

TEST(SameSummary, CombinesGroupsAndTakesTheWorst) {
  auto outputs =
      same(list({at::ones({4}), at::full({4}, 2.0)}), list({at::ones({4}), at::full({4}, 2.0005)}));
  auto grads = compare_named("grad", {{"w", at::zeros({100})}}, {{"w", at::full({100}, 0.5)}}, {},
                             SameOptions());
  auto all = combine({outputs, grads});
  EXPECT_FALSE(all.pass);
  EXPECT_EQ(all.summary.total, 3u);
  EXPECT_EQ(all.summary.failed, 2u);
  EXPECT_EQ(all.summary.first_failure, "output[1]");
  // output[1]: 5e-4 / (1e-4 * 3.0005) = 1.67; grad:w: 0.5 / (1e-4 * 1.5) = 3333.
  EXPECT_EQ(all.summary.worst_path, "grad:w");
  EXPECT_DOUBLE_EQ(all.summary.max_abs, 0.5);
  EXPECT_NEAR(all.summary.mean_abs, (4 * (2.0005f - 2.0f) + 100 * 0.5) / 108.0, 1e-9);
  EXPECT_NEAR(all.summary.min_passing_tol, 0.5 / 1.5, 1e-7);
  auto worst = worst_leaves(all, 5);
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_EQ(worst[0]->path, "grad:w");
  EXPECT_EQ(worst[1]->path, "output[1]");
}

TEST(SameFlatten, PathsAndOrderMatchTheComparison) {
  auto tree = dict({{"b", list({at::ones({1}), c10::IValue(int64_t{3})})}, {"a", at::ones({2})}});
  auto leaves = flatten_leaves(tree);
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[0].path, "output['a']");
  EXPECT_EQ(leaves[1].path, "output['b'][0]");
  EXPECT_EQ(leaves[2].path, "output['b'][1]");
  EXPECT_EQ(leaves[2].value.toInt(), 3);
  auto r = same(tree, tree);
  ASSERT_EQ(r.leaves.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r.leaves[i].path, leaves[i].path);
}

}  // namespace
}  // namespace zoobench::accuracy
