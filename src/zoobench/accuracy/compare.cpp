// torch._dynamo.utils.same (PyTorch 2.11) over IValue trees, one TensorDiagnosis per leaf.
#include "zoobench/accuracy/compare.h"

#include "zoobench/serialization/pickle.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "zoobench/accuracy/error_stats.h"
#include "zoobench/util/errors.h"

namespace zoobench::accuracy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Upstream's constants.
constexpr double kCosineThreshold = 0.99;
constexpr double kCosineEps = 1e-6;
constexpr double kNanFallbackTol = 1e-2 * 4;
constexpr double kHigherTolerance = 2 * 1e-2;

// Python's name of a dtype ("float32", "int64", ...), from the serialization module's table.
std::string dtype_name(c10::ScalarType dtype) {
  try {
    return serialization::detail::python_name_of_dtype(dtype);
  } catch (const std::exception&) {
    return c10::toString(dtype);  // a dtype torch.save files never hold (quantized, ...)
  }
}

std::string kind_name(const c10::IValue& v) {
  if (v.isNone()) return "None";
  if (v.isBool()) return "bool";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isString()) return "str";
  if (v.isDevice()) return "device";
  if (v.isTuple()) return "tuple";
  if (v.isList()) return "list";
  if (v.isGenericDict()) return "dict";
  if (v.isTensor()) return "Tensor";
  if (v.isComplexDouble()) return "complex";
  return v.tagKind();
}

std::string repr(const c10::IValue& v) {
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return fmt::format("{}", v.toDouble());
  if (v.isString()) return "'" + v.toStringRef() + "'";
  if (v.isDevice()) return "device(" + v.toDevice().str() + ")";
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return fmt::format("Tensor({}, [{}])", dtype_name(t.scalar_type()), fmt::join(t.sizes(), ", "));
  }
  return kind_name(v);
}

// x / limit, with 0/0 = 0, x/0 = inf, NaN = inf.
double ratio(double x, double limit) {
  if (std::isnan(x) || std::isnan(limit)) return kInf;
  if (limit <= 0) return x == 0 ? 0 : kInf;
  return x / limit;
}

// The margin says what the verdict says, also where float64 and the dtype's rounding disagree.
double agreeing_margin(double margin, bool pass) {
  if (std::isnan(margin)) margin = kInf;
  return pass ? std::min(margin, 1.0) : std::max(margin, 1.0);
}

// The smallest tol for which res_error <= multiplier(tol) * ref_error + tol / 10 (upstream's
// rule), given that the multiplier can rise when tol reaches 2e-2.
double rmse_min_passing_tol(double ref_error, double res_error, bool equal_nan,
                            const std::function<double(double)>& multiplier_at) {
  if (equal_nan && std::isnan(ref_error) && std::isnan(res_error)) return 0;
  if (std::isnan(ref_error) || std::isnan(res_error)) return kInf;
  auto smallest = [&](double floor, double multiplier) {
    double t = std::max(floor, 10.0 * (res_error - multiplier * ref_error));
    if (std::isnan(t)) return kInf;
    // The closed form can land an ulp short of the inequality: step up to where it holds.
    for (int i = 0; i < 8 && !(res_error <= multiplier * ref_error + t / 10.0); ++i) {
      t = std::nextafter(t, kInf);
    }
    return t;
  };
  const double below = smallest(0.0, multiplier_at(0.0));
  if (below < kHigherTolerance) return below;
  return smallest(kHigherTolerance, multiplier_at(kHigherTolerance));
}

TensorDiagnosis structural_failure(const std::string& path, Rule rule, std::string reason,
                                   const std::string& dtype) {
  TensorDiagnosis d;
  d.path = path;
  d.rule = rule;
  d.pass = false;
  d.reason = std::move(reason);
  d.dtype = dtype;
  d.max_abs = kNaN;
  d.mean_abs = kNaN;
  d.margin = kInf;
  d.min_passing_tol = kInf;
  return d;
}

void record_stats(TensorDiagnosis& d, const detail::ErrorStats& stats) {
  d.mismatched = stats.mismatched;
  d.max_abs = stats.max_abs;
  d.mean_abs = stats.numel > 0 ? stats.sum_abs / static_cast<double>(stats.numel) : 0.0;
}

void record_rmse(TensorDiagnosis& d, const detail::ErrorStats& stats) {
  const double n = static_cast<double>(stats.numel);
  d.rmse_ref = stats.numel > 0 ? std::sqrt(stats.sum_sq_ref / n) : kNaN;
  d.rmse_res = stats.numel > 0 ? std::sqrt(stats.sum_sq_res / n) : kNaN;
}

std::optional<std::vector<int64_t>> broadcast_shape(c10::IntArrayRef a, c10::IntArrayRef b) {
  if (a.equals(b)) return a.vec();
  try {
    auto shape = at::infer_size(a, b);
    return std::vector<int64_t>(shape.begin(), shape.end());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// fp64 shaped like `shape`, or undefined when it does not broadcast to it.
at::Tensor fp64_like(const at::Tensor& fp64, const std::vector<int64_t>& shape) {
  if (fp64.sizes().equals(shape)) return fp64;
  auto common = broadcast_shape(fp64.sizes(), shape);
  if (!common || *common != shape) return at::Tensor();
  return fp64.expand(shape);
}

// Python's ==, for a scalar ref against whatever res is.
bool python_equal(const c10::IValue& a, const c10::IValue& b, std::string& why) {
  if (a.isNone()) return b.isNone();
  if (a.isString()) return b.isString() && a.toStringRef() == b.toStringRef();
  if (a.isDevice()) return b.isDevice() && a.toDevice() == b.toDevice();
  // bool and int are numbers (True == 1, 1 == 1.0).
  const int64_t x = a.isBool() ? static_cast<int64_t>(a.toBool()) : a.toInt();
  if (b.isBool() || b.isInt())
    return x == (b.isBool() ? static_cast<int64_t>(b.toBool()) : b.toInt());
  if (b.isDouble()) return static_cast<double>(x) == b.toDouble();
  if (b.isComplexDouble()) {
    return static_cast<double>(x) == b.toComplexDouble().real() && b.toComplexDouble().imag() == 0;
  }
  if (b.isTensor()) {
    // `int == tensor` is an elementwise tensor whose truth Python takes only with one element.
    const at::Tensor& t = b.toTensor();
    if (t.numel() != 1) {
      why = "comparing a number with a tensor of several elements is ambiguous";
      return false;
    }
    return (t.eq(x)).all().item<bool>();
  }
  return false;
}

// Dict keys in the order upstream's `same` sorts them: strings, or numbers (a bool as 0 or 1).
bool dict_key_less(const c10::IValue& a, const c10::IValue& b) {
  if (a.isString()) return a.toStringRef() < b.toStringRef();
  auto number = [](const c10::IValue& k) { return k.isBool() ? int64_t{k.toBool()} : k.toInt(); };
  return number(a) < number(b);
}

// A dict key as a tensor's path shows it: 'name', 3, True.
std::string dict_key_text(const c10::IValue& key) {
  if (key.isString()) return "'" + key.toStringRef() + "'";
  if (key.isBool()) return key.toBool() ? "True" : "False";
  if (key.isInt()) return std::to_string(key.toInt());
  return repr(key);
}

class TreeComparer {
 public:
  TreeComparer(const SameOptions& options, std::vector<TensorDiagnosis>& leaves)
      : options_(options), leaves_(leaves) {}

  void visit(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_given,
             const std::string& path) {
    const c10::IValue& fp64 = fp64_given.isNone() ? ref : fp64_given;
    if (ref.isList() || ref.isTuple()) {
      visit_sequence(ref, res, fp64, path);
    } else if (ref.isGenericDict()) {
      visit_dict(ref, res, fp64, path);
    } else if (ref.isTensor() || ref.isDouble()) {
      visit_tensor(ref, res, fp64, path);
    } else if (ref.isNone() || ref.isBool() || ref.isInt() || ref.isString() || ref.isDevice()) {
      visit_scalar(ref, res, path);
    } else {
      fail(path, fmt::format("unsupported type: {}", kind_name(ref)), kind_name(ref));
    }
  }

 private:
  void fail(const std::string& path, std::string reason, const std::string& kind) {
    leaves_.push_back(structural_failure(path, Rule::kStructure, std::move(reason), kind));
  }

  static c10::ArrayRef<c10::IValue> elements(const c10::IValue& v) {
    return v.isTuple() ? v.toTupleRef().elements().asArrayRef() : v.toListRef();
  }

  void visit_sequence(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64,
                      const std::string& path) {
    if (!res.isList() && !res.isTuple()) {
      return fail(
          path, fmt::format("type mismatch: ref is a {}, res a {}", kind_name(ref), kind_name(res)),
          kind_name(ref));
    }
    auto r = elements(ref);
    auto s = elements(res);
    if (r.size() != s.size()) {
      return fail(path, fmt::format("length mismatch: ref has {}, res {}", r.size(), s.size()),
                  kind_name(ref));
    }
    if (!fp64.isList() && !fp64.isTuple()) {
      return fail(path, fmt::format("the fp64 reference is a {}, not a sequence", kind_name(fp64)),
                  kind_name(ref));
    }
    auto f = elements(fp64);
    // Upstream zips the three: elements past a shorter fp64 reference are not compared.
    const size_t n = std::min(r.size(), f.size());
    for (size_t i = 0; i < n; ++i) visit(r[i], s[i], f[i], fmt::format("{}[{}]", path, i));
  }

  void visit_dict(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64,
                  const std::string& path) {
    if (!res.isGenericDict()) {
      return fail(path, fmt::format("type mismatch: ref is a dict, res a {}", kind_name(res)),
                  "dict");
    }
    const auto r = ref.toGenericDict();
    const auto s = res.toGenericDict();
    std::vector<c10::IValue> keys;
    for (const auto& entry : r) keys.push_back(entry.key());
    const bool all_strings =
        std::all_of(keys.begin(), keys.end(), [](const auto& k) { return k.isString(); });
    const bool all_numbers = std::all_of(keys.begin(), keys.end(),
                                         [](const auto& k) { return k.isInt() || k.isBool(); });
    if (!all_strings && !all_numbers) {
      return fail(path, "dict keys of mixed types cannot be sorted", "dict");
    }
    std::sort(keys.begin(), keys.end(), dict_key_less);

    std::vector<std::string> only_ref, only_res;
    for (const auto& k : keys) {
      if (!s.contains(k)) only_ref.push_back(dict_key_text(k));
    }
    for (const auto& entry : s) {
      if (!r.contains(entry.key())) only_res.push_back(dict_key_text(entry.key()));
    }
    if (!only_ref.empty() || !only_res.empty()) {
      // Upstream stops here (an assertion); the common keys are still compared below so the
      // diagnosis shows them.
      fail(path,
           fmt::format("keys differ: only in ref [{}], only in res [{}]", fmt::join(only_ref, ", "),
                       fmt::join(only_res, ", ")),
           "dict");
    }
    for (const auto& k : keys) {
      if (!s.contains(k)) continue;
      const std::string child = fmt::format("{}[{}]", path, dict_key_text(k));
      if (!fp64.isGenericDict()) {
        fail(child, fmt::format("the fp64 reference is a {}, not a dict", kind_name(fp64)), "dict");
        continue;
      }
      const auto f = fp64.toGenericDict();
      if (!f.contains(k)) {
        fail(child, "the fp64 reference lacks this key", kind_name(r.at(k)));
        continue;
      }
      visit(r.at(k), s.at(k), f.at(k), child);
    }
  }

  // Upstream's to_tensor: a Python number becomes torch.tensor(number) (float32 for floats).
  static std::optional<at::Tensor> as_tensor(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor();
    if (v.isDouble()) return at::scalar_tensor(v.toDouble(), at::kFloat);
    if (v.isBool()) return at::scalar_tensor(v.toBool(), at::kBool);
    if (v.isInt()) return at::scalar_tensor(v.toInt(), at::kLong);
    if (v.isComplexDouble()) {
      auto z = v.toComplexDouble();
      return at::scalar_tensor(c10::Scalar(c10::complex<double>(z.real(), z.imag())),
                               at::kComplexFloat);
    }
    return std::nullopt;
  }

  void visit_tensor(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64,
                    const std::string& path) {
    auto r = as_tensor(ref);
    auto s = as_tensor(res);
    auto f = as_tensor(fp64);
    if (!s) {
      return fail(
          path, fmt::format("type mismatch: ref is a {}, res a {}", kind_name(ref), kind_name(res)),
          kind_name(ref));
    }
    if (!f) {
      return fail(path, fmt::format("the fp64 reference is a {}, not a tensor", kind_name(fp64)),
                  kind_name(ref));
    }
    leaves_.push_back(compare_tensors(path, *r, *s, *f, options_));
  }

  void visit_scalar(const c10::IValue& ref, const c10::IValue& res, const std::string& path) {
    TensorDiagnosis d;
    d.path = path;
    d.dtype = kind_name(ref);
    if (options_.ignore_non_fp) {
      d.rule = Rule::kIgnored;
      d.pass = true;
      leaves_.push_back(std::move(d));
      return;
    }
    std::string why;
    d.rule = Rule::kExact;
    d.pass = python_equal(ref, res, why);
    d.margin = d.pass ? 0 : kInf;
    d.min_passing_tol = d.pass ? 0 : kInf;
    if (!d.pass) d.reason = why.empty() ? fmt::format("{} != {}", repr(ref), repr(res)) : why;
    leaves_.push_back(std::move(d));
  }

  const SameOptions& options_;
  std::vector<TensorDiagnosis>& leaves_;
};

void flatten_into(const c10::IValue& v, const std::string& path, std::vector<Leaf>& out) {
  if (v.isList() || v.isTuple()) {
    auto items = v.isTuple() ? v.toTupleRef().elements().asArrayRef() : v.toListRef();
    for (size_t i = 0; i < items.size(); ++i)
      flatten_into(items[i], fmt::format("{}[{}]", path, i), out);
  } else if (v.isGenericDict()) {
    std::vector<std::pair<c10::IValue, c10::IValue>> entries;
    for (const auto& entry : v.toGenericDict()) entries.emplace_back(entry.key(), entry.value());
    const bool sortable = std::all_of(entries.begin(), entries.end(), [&](const auto& e) {
      return e.first.isString() == entries.front().first.isString();
    });
    if (sortable) {
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return dict_key_less(a.first, b.first); });
    }
    for (const auto& [key, value] : entries)
      flatten_into(value, fmt::format("{}[{}]", path, dict_key_text(key)), out);
  } else {
    out.push_back({path, v});
  }
}

}  // namespace

double rmse_multiplier(const SameOptions& options, double tol, c10::ScalarType res_dtype,
                       int64_t fp64_numel, c10::IntArrayRef ref_sizes) {
  if (options.force_max_multiplier) return 10.0;
  double multiplier = (res_dtype == at::kHalf || res_dtype == at::kBFloat16) ? 3.0 : 2.0;
  if (options.use_larger_multiplier_for_smaller_tensor && fp64_numel <= 10) {
    multiplier = 10.0;
  } else if (options.use_larger_multiplier_for_smaller_tensor && fp64_numel <= 500) {
    multiplier = 8.0;
  } else if (fp64_numel < 1000 ||
             (ref_sizes.size() == 4 && ref_sizes[3] == 1 && ref_sizes[2] == 1) ||
             tol >= kHigherTolerance) {
    multiplier = 3.0;
  }
  return multiplier;
}

namespace {

// One function per rule of upstream's `same` for a pair of tensors of one shape. Each fills the
// diagnosis `d` (path, dtype and sizes already set) and returns it.

// Dtypes differ and exact_dtype holds: a failure, with how far apart the values are anyway.
TensorDiagnosis dtype_mismatch(TensorDiagnosis d, const at::Tensor& ref, const at::Tensor& res,
                               const at::Tensor& fp64, const std::vector<int64_t>& shape,
                               const SameOptions& o) {
  d.rule = Rule::kDtype;
  d.pass = false;
  d.reason = fmt::format("dtype mismatch: ref {}, res {}", d.dtype, dtype_name(res.scalar_type()));
  d.margin = kInf;
  d.min_passing_tol = kInf;
  if (!ref.is_complex() && !res.is_complex()) {
    at::Tensor f = fp64.scalar_type() == at::kDouble ? fp64_like(fp64, shape) : at::Tensor();
    auto stats = detail::error_stats(ref.to(at::kDouble).expand(shape),
                                     res.to(at::kDouble).expand(shape), f, o.tol, o.equal_nan);
    record_stats(d, stats);
    if (f.defined()) record_rmse(d, stats);
  }
  return d;
}

// Boolean masks: compared as uint8 as upstream does ("triton stores bool as int8"), or by
// intersection over union where the model asks for it.
TensorDiagnosis compare_bools(TensorDiagnosis d, const at::Tensor& ref, const at::Tensor& res,
                              const SameOptions& o) {
  if (o.ignore_non_fp) {
    d.rule = Rule::kIgnored;
    d.pass = true;
    return d;
  }
  auto stats = detail::error_stats(ref.view(at::kByte), res.view(at::kByte), at::Tensor(), o.tol,
                                   o.equal_nan);
  record_stats(d, stats);
  if (o.use_iou_for_bool) {
    d.rule = Rule::kIou;
    const int64_t intersection = at::logical_and(ref, res).sum().item<int64_t>();
    const int64_t union_count = at::logical_or(ref, res).sum().item<int64_t>();
    if (union_count == 0) {  // two empty masks
      d.pass = intersection == 0;
      d.iou = 1.0;
      d.margin = 0;
      d.min_passing_tol = 0;
      return d;
    }
    // Upstream divides float32 counts.
    const float iou = static_cast<float>(intersection) / static_cast<float>(union_count);
    d.iou = iou;
    d.pass = !(static_cast<double>(iou) < o.iou_threshold);
    d.margin = agreeing_margin(
        o.iou_threshold < 1 ? (1.0 - iou) / (1.0 - o.iou_threshold) : (d.pass ? 0 : kInf), d.pass);
    d.min_passing_tol = d.pass ? 0 : kInf;
    if (!d.pass) {
      d.reason = fmt::format("IoU {:.4f} < {} (intersection {}, union {})", iou, o.iou_threshold,
                             intersection, union_count);
    }
    return d;
  }
  d.rule = Rule::kAllclose;
  d.pass = stats.allclose();
  d.margin = agreeing_margin(ratio(stats.tol_needed, o.tol), d.pass);
  d.min_passing_tol = stats.tol_needed;
  if (!d.pass) d.reason = fmt::format("{} of {} booleans differ", stats.mismatched, stats.numel);
  return d;
}

// --cosine: allclose first (upstream's early exit on float32 copies), else cosine similarity.
TensorDiagnosis compare_cosine(TensorDiagnosis d, const at::Tensor& ref, const at::Tensor& res,
                               const at::Tensor& fp64, const std::vector<int64_t>& shape,
                               const SameOptions& o) {
  const at::Tensor ref32 = ref.flatten().to(at::kFloat);
  const at::Tensor res32 = res.flatten().to(at::kFloat);
  at::Tensor f = fp64.scalar_type() == at::kDouble ? fp64_like(fp64, shape) : at::Tensor();
  if (f.defined()) f = f.flatten();
  auto stats = detail::error_stats(ref32, res32, f, o.tol, /*equal_nan=*/true);
  record_stats(d, stats);
  if (f.defined()) record_rmse(d, stats);
  float score = 1.0f;
  if (stats.numel > 0) score = at::cosine_similarity(ref32, res32, 0, kCosineEps).item<float>();
  d.cosine = score;
  // The comparison `score >= 0.99` happens in float32 (a float32 tensor and a Python float).
  const bool score_passes = score >= static_cast<float>(kCosineThreshold);
  d.min_passing_tol = score_passes ? 0 : stats.tol_needed;
  if (stats.allclose()) {
    d.rule = Rule::kAllclose;
    d.pass = true;
    d.margin = agreeing_margin(ratio(stats.tol_needed, o.tol), true);
    return d;
  }
  d.rule = Rule::kCosine;
  d.pass = score_passes;
  d.margin = agreeing_margin(ratio(1.0 - score, 1.0 - kCosineThreshold), d.pass);
  if (!d.pass) d.reason = fmt::format("cosine similarity {:.6f} < {}", score, kCosineThreshold);
  return d;
}

// Upstream's float path: allclose; else, with a float64 reference, its NaN corner case and the
// RMSE rule (res may be `multiplier` times as far from float64 as ref); else a failure, unless
// non-floating results are ignored.
TensorDiagnosis compare_values(TensorDiagnosis d, at::Tensor ref, const at::Tensor& res,
                               const at::Tensor& fp64, const std::vector<int64_t>& shape,
                               c10::IntArrayRef original_ref_sizes, const SameOptions& o) {
  if (!o.exact_dtype && ref.scalar_type() != res.scalar_type()) ref = ref.to(res.scalar_type());
  const bool fp64_is_double = fp64.scalar_type() == at::kDouble;
  const at::Tensor f = fp64_is_double ? fp64_like(fp64, shape) : at::Tensor();
  const auto stats = detail::error_stats(ref, res, f, o.tol, o.equal_nan);
  record_stats(d, stats);
  if (f.defined()) record_rmse(d, stats);

  const double ref_error = d.rmse_ref;
  const double res_error = d.rmse_res;
  auto multiplier_at = [&](double tol) {
    return rmse_multiplier(o, tol, res.scalar_type(), fp64.numel(), original_ref_sizes);
  };
  const double rmse_tol =
      f.defined() ? rmse_min_passing_tol(ref_error, res_error, o.equal_nan, multiplier_at) : kInf;
  d.min_passing_tol = std::min(stats.tol_needed, rmse_tol);

  if (stats.allclose()) {
    d.rule = Rule::kAllclose;
    d.pass = true;
    d.margin = agreeing_margin(ratio(stats.tol_needed, o.tol), true);
    return d;
  }
  if (fp64_is_double) {
    if (!f.defined()) {
      TensorDiagnosis failure = structural_failure(
          d.path, Rule::kStructure,
          fmt::format("the fp64 reference's shape [{}] does not broadcast to [{}]",
                      fmt::join(fp64.sizes(), ", "), fmt::join(shape, ", ")),
          d.dtype);
      failure.is_tensor = true;
      return failure;
    }
    // Upstream's corner case: ref has NaN where res and fp64 have none, and res is close to fp64.
    if (!stats.fp64_has_nan && !stats.res_has_nan && stats.ref_has_nan) {
      const auto loose = detail::error_stats(f.to(res.scalar_type()), res, at::Tensor(),
                                             kNanFallbackTol, o.equal_nan);
      if (loose.allclose()) {
        d.rule = Rule::kNanFallback;
        d.pass = true;
        d.margin = agreeing_margin(ratio(loose.tol_needed, kNanFallbackTol), true);
        d.min_passing_tol = 0;
        return d;
      }
    }
    const double multiplier = multiplier_at(o.tol);
    d.rule = Rule::kRmse;
    d.multiplier = multiplier;
    const double allowed = multiplier * ref_error + o.tol / 10.0;
    d.pass = res_error <= allowed;
    if (!d.pass && o.equal_nan && std::isnan(ref_error) && std::isnan(res_error)) {
      d.pass = true;
      d.margin = 0;
      return d;
    }
    d.margin = agreeing_margin(ratio(res_error, allowed), d.pass);
    if (!d.pass) {
      d.reason = fmt::format("rmse(fp64, res) {:.4g} > {} * rmse(fp64, ref) {:.4g} + tol/10 {:.4g}",
                             res_error, multiplier, ref_error, o.tol / 10.0);
    }
    return d;
  }
  if (o.ignore_non_fp) {
    d.rule = Rule::kIgnored;
    d.pass = true;
    d.margin = 0;
    d.min_passing_tol = 0;
    return d;
  }
  d.rule = Rule::kAllclose;
  d.pass = false;
  d.margin = agreeing_margin(ratio(stats.tol_needed, o.tol), false);
  d.reason = fmt::format("{} of {} elements outside allclose(atol=rtol={})", stats.mismatched,
                         stats.numel, o.tol);
  return d;
}

}  // namespace

TensorDiagnosis compare_tensors(const std::string& path, const at::Tensor& ref_in,
                                const at::Tensor& res_in, const at::Tensor& fp64_in,
                                const SameOptions& o) {
  at::NoGradGuard no_grad;
  at::Tensor ref = ref_in;
  at::Tensor res = res_in;
  at::Tensor fp64 = fp64_in.defined() ? fp64_in : ref_in;
  const std::string dtype = dtype_name(ref.scalar_type());

  if (ref.is_sparse()) {
    if (!res.is_sparse())
      return structural_failure(path, Rule::kStructure, "ref is sparse, res is not", dtype);
    ref = ref.to_dense();
    res = res.to_dense();
  }
  if (fp64.is_sparse()) fp64 = fp64.to_dense();
  // Upstream expects one device; moving is what a caller would have to do anyway.
  if (res.device() != ref.device()) res = res.to(ref.device());
  if (fp64.device() != ref.device()) fp64 = fp64.to(ref.device());

  TensorDiagnosis d;
  d.path = path;
  d.is_tensor = true;
  d.dtype = dtype;
  d.sizes = ref.sizes().vec();
  d.numel = ref.numel();

  auto shape = broadcast_shape(ref.sizes(), res.sizes());
  if (!shape) {
    TensorDiagnosis failure =
        structural_failure(path, Rule::kStructure,
                           fmt::format("shapes do not broadcast: ref [{}], res [{}]",
                                       fmt::join(ref.sizes(), ", "), fmt::join(res.sizes(), ", ")),
                           dtype);
    failure.is_tensor = true;
    failure.sizes = d.sizes;
    failure.numel = d.numel;
    return failure;
  }
  if (o.exact_dtype && ref.scalar_type() != res.scalar_type())
    return dtype_mismatch(d, ref, res, fp64, *shape, o);
  if (!ref.sizes().equals(*shape)) ref = ref.expand(*shape);
  if (!res.sizes().equals(*shape)) res = res.expand(*shape);
  if (o.exact_dtype && ref.scalar_type() == at::kBool) return compare_bools(d, ref, res, o);
  if (o.cos_similarity) return compare_cosine(d, ref, res, fp64, *shape, o);
  return compare_values(d, ref, res, fp64, *shape, ref_in.sizes(), o);
}

SameResult same(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_ref,
                const SameOptions& options, const std::string& root) {
  SameResult result;
  TreeComparer(options, result.leaves).visit(ref, res, fp64_ref, root);
  result.summary = summarize(result.leaves);
  result.pass = result.summary.pass;
  return result;
}

SameResult compare_named(const std::string& group, const std::vector<NamedTensor>& ref,
                         const std::vector<NamedTensor>& res,
                         const std::vector<NamedTensor>& fp64_ref, const SameOptions& options) {
  SameResult result;
  auto as_ivalue = [](const at::Tensor& t) { return t.defined() ? c10::IValue(t) : c10::IValue(); };
  // Tensors are matched by name: backends list a module's tensors in their own order (a
  // TorchScript module and its Python module may differ). The fp64 reference comes from the
  // same backend as `ref`, in its order.
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& named : res) by_name.emplace(named.name, &named.tensor);
  std::vector<std::string> missing;
  TreeComparer comparer(options, result.leaves);
  for (size_t i = 0; i < ref.size(); ++i) {
    auto found = by_name.find(ref[i].name);
    if (found == by_name.end()) {
      missing.push_back(ref[i].name);
      continue;
    }
    const c10::IValue fp64 = i < fp64_ref.size() && fp64_ref[i].name == ref[i].name ? as_ivalue(fp64_ref[i].tensor)
                                                                                     : c10::IValue();
    comparer.visit(as_ivalue(ref[i].tensor), as_ivalue(*found->second), fp64, group + ":" + ref[i].name);
  }
  if (!missing.empty() || ref.size() != res.size()) {
    result.leaves.push_back(structural_failure(
        group, Rule::kStructure,
        fmt::format("ref has {} tensors, res {}{}", ref.size(), res.size(),
                    missing.empty() ? std::string() : "; missing in res: " + missing.front() +
                                                          (missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : "")),
        "list"));
  }
  result.summary = summarize(result.leaves);
  result.pass = result.summary.pass;
  return result;
}

std::vector<Leaf> flatten_leaves(const c10::IValue& tree, const std::string& root) {
  std::vector<Leaf> leaves;
  flatten_into(tree, root, leaves);
  return leaves;
}

}  // namespace zoobench::accuracy
