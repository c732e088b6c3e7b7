// Random tensor triples against a literal transcription of upstream's tensor branch written
// with the same torch operators upstream calls (torch.allclose, rmse as sqrt(mean(square)),
// cosine_similarity): the verdicts must agree, and the smallest passing tolerance the
// diagnosis reports must be where that reference flips from fail to pass.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "zoobench/accuracy/compare.h"

namespace zoobench::accuracy {
namespace {

// Upstream's tensor branch for same-dtype floating tensors, line by line.
bool upstream_same_tensor(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64_ref,
                          const SameOptions& o) {
  if (o.cos_similarity) {
    at::Tensor r = ref.flatten().to(at::kFloat);
    at::Tensor s = res.flatten().to(at::kFloat);
    if (at::allclose(r, s, o.tol, o.tol, /*equal_nan=*/true)) return true;
    at::Tensor score = at::cosine_similarity(r, s, 0, 1e-6);
    return at::ge(score, 0.99).item<bool>();
  }
  if (at::allclose(ref, res, o.tol, o.tol, o.equal_nan)) return true;
  if (fp64_ref.scalar_type() == at::kDouble) {
    const double loose_tol = 1e-2 * 4;
    if (!fp64_ref.isnan().any().item<bool>() && !res.isnan().any().item<bool>() &&
        ref.isnan().any().item<bool>() &&
        at::allclose(fp64_ref.to(res.scalar_type()), res, loose_tol, loose_tol, o.equal_nan)) {
      return true;
    }
    auto rmse = [](const at::Tensor& a, const at::Tensor& b) {
      return at::sqrt(at::mean(at::square(a - b))).item<double>();
    };
    const double ref_error = rmse(fp64_ref, ref);
    const double res_error = rmse(fp64_ref, res);
    double multiplier = 2.0;
    if (o.force_max_multiplier) {
      multiplier = 10.0;
    } else {
      multiplier =
          (res.scalar_type() == at::kHalf || res.scalar_type() == at::kBFloat16) ? 3.0 : 2.0;
      if (o.use_larger_multiplier_for_smaller_tensor && fp64_ref.numel() <= 10) {
        multiplier = 10.0;
      } else if (o.use_larger_multiplier_for_smaller_tensor && fp64_ref.numel() <= 500) {
        multiplier = 8.0;
      } else if (fp64_ref.numel() < 1000 ||
                 (ref.dim() == 4 && ref.size(-1) == 1 && ref.size(-2) == 1) || o.tol >= 2 * 1e-2) {
        multiplier = 3.0;
      }
    }
    bool passes = res_error <= (multiplier * ref_error + o.tol / 10.0);
    if (!passes && o.equal_nan && std::isnan(ref_error) && std::isnan(res_error)) passes = true;
    return passes;
  }
  return false;
}

struct Case {
  at::Tensor ref, res, fp64;
  SameOptions options;
  std::string text;
};

Case random_case(std::mt19937& rng) {
  auto pick = [&](auto const& choices) {
    return choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const std::vector<std::vector<int64_t>> shapes = {
      {1},    {7},    {10},     {64},         {500},          {501},        {999},
      {1000}, {2048}, {33, 40}, {8, 4, 1, 1}, {300, 2, 1, 1}, {2, 3, 4, 5}, {16, 1, 8, 1}};
  const std::vector<c10::ScalarType> dtypes = {at::kFloat, at::kFloat, at::kBFloat16, at::kHalf,
                                               at::kDouble};
  const std::vector<double> noises = {0, 1e-7, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  const std::vector<double> tols = {0, 1e-4, 1e-3, 5e-3, 1e-2, 2e-2, 4e-2};
  Case c;
  auto shape = pick(shapes);
  auto dtype = pick(dtypes);
  const double ref_noise = pick(noises);
  const double res_noise = pick(noises);
  at::Tensor golden = at::randn(shape, at::kDouble) * pick(std::vector<double>{0.01, 1.0, 30.0});
  c.ref = (golden + at::randn(shape, at::kDouble) * ref_noise).to(dtype);
  c.res = (golden + at::randn(shape, at::kDouble) * res_noise).to(dtype);
  c.fp64 = chance(0.8) ? golden : c.ref;
  if (chance(0.1)) c.ref.view(-1)[0] = NAN;
  if (chance(0.1)) c.res.view(-1)[c.res.numel() - 1] = NAN;
  if (chance(0.05)) c.fp64.view(-1)[0] = NAN;
  c.options.tol = pick(tols);
  c.options.equal_nan = chance(0.3);
  c.options.use_larger_multiplier_for_smaller_tensor = chance(0.3);
  c.options.force_max_multiplier = chance(0.1);
  c.options.cos_similarity = chance(0.1);
  std::ostringstream text;
  text << c10::toString(dtype) << " " << c.ref.sizes() << " ref_noise=" << ref_noise
       << " res_noise=" << res_noise << " tol=" << c.options.tol
       << " fp64=" << (c.fp64.scalar_type() == at::kDouble) << " equal_nan=" << c.options.equal_nan
       << " larger=" << c.options.use_larger_multiplier_for_smaller_tensor
       << " force_max=" << c.options.force_max_multiplier << " cos=" << c.options.cos_similarity;
  c.text = text.str();
  return c;
}

TEST(SameRandom, AgreesWithUpstreamTranscription) {
  at::manual_seed(11);
  std::mt19937 rng(11);
  int passes = 0, fails = 0;
  for (int i = 0; i < 1500; ++i) {
    Case c = random_case(rng);
    SCOPED_TRACE(c.text);
    const bool want = upstream_same_tensor(c.ref, c.res, c.fp64, c.options);
    SameResult got = same(c.ref, c.res, c.fp64, c.options);
    ASSERT_EQ(got.pass, want) << "case " << i << ": rule " << rule_name(got.leaves.at(0).rule)
                              << " margin " << got.leaves.at(0).margin;
    // The margin tells the verdict.
    EXPECT_EQ(got.leaves.at(0).margin <= 1.0, want);
    (want ? passes : fails)++;
  }
  // Both verdicts are well represented.
  EXPECT_GT(passes, 300);
  EXPECT_GT(fails, 300);
}

TEST(SameRandom, MinPassingTolIsWhereTheVerdictFlips) {
  at::manual_seed(12);
  std::mt19937 rng(12);
  int checked = 0;
  for (int i = 0; i < 1500; ++i) {
    Case c = random_case(rng);
    SCOPED_TRACE(c.text);
    SameResult got = same(c.ref, c.res, c.fp64, c.options);
    const double t = got.summary.min_passing_tol;
    if (!(t > 1e-9) || !std::isfinite(t)) continue;
    // Half and bfloat16 round the allclose bound to their 8-11 bits: give them room.
    const bool reduced = c.ref.scalar_type() == at::kHalf || c.ref.scalar_type() == at::kBFloat16;
    const double room = reduced ? 1e-2 : 1e-4;
    SameOptions above = c.options;
    above.tol = t * (1 + room);
    SameOptions below = c.options;
    below.tol = t * (1 - room);
    EXPECT_TRUE(upstream_same_tensor(c.ref, c.res, c.fp64, above)) << "case " << i << " t=" << t;
    EXPECT_FALSE(upstream_same_tensor(c.ref, c.res, c.fp64, below)) << "case " << i << " t=" << t;
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

}  // namespace
}  // namespace zoobench::accuracy
