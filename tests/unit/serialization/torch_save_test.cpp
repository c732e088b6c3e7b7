// The torch.save reader and writer against the real torch.save / torch.load: Python describes
// each object it wrote (or read) one line per node, and the C++ side must print the same.
#include "zoobench/serialization/torch_save.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"
#include "unit/serialization/torch_save_cases.h"
#include "zoobench/util/files.h"

namespace zoobench::serialization {
namespace {

using testing::ScratchDir;
using torch_save_cases::cases_script;
using torch_save_cases::describe;
using torch_save_cases::run_cases_function;

// Every <name>.pt in `dir` with a <name>.txt must load to what the .txt says.
int expect_files_match_descriptions(const std::string& dir) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".pt") continue;
    auto text = entry.path();
    text.replace_extension(".txt");
    if (!std::filesystem::exists(text)) continue;
    SCOPED_TRACE(entry.path().filename().string());
    try {
      EXPECT_EQ(describe(load_torch_save(entry.path().string())), read_text_file(text.string()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    ++checked;
  }
  return checked;
}

TEST(TorchSaveRead, EveryCasePythonWritesWithProtocol2) {
  ScratchDir dir;
  run_cases_function("write_cases", fmt::format("'{}'", dir.path()));
  EXPECT_GE(expect_files_match_descriptions(dir.path()), 30);
}

TEST(TorchSaveRead, EveryCasePythonWritesWithProtocol4) {
  // Protocol 4 brings FRAME, MEMOIZE, SHORT_BINUNICODE and STACK_GLOBAL.
  ScratchDir dir;
  run_cases_function("write_cases", fmt::format("'{}', protocol=4", dir.path()));
  EXPECT_GE(expect_files_match_descriptions(dir.path()), 30);
}

TEST(TorchSaveRead, Torch2Shapes) {
  ScratchDir dir;
  run_cases_function("write_torch2_cases", fmt::format("'{}'", dir.path()));
  EXPECT_EQ(expect_files_match_descriptions(dir.path()), 1);
}

TEST(TorchSaveRead, ViewsShareOneStorage) {
  ScratchDir dir;
  testing::run_python(fmt::format(
      "import torch\nx = torch.arange(6.).reshape(2, 3)\ntorch.save([x, x.t(), x[1]], '{}')\n",
      dir.file("views.pt")));
  c10::IValue loaded = load_torch_save(dir.file("views.pt"));
  auto list = loaded.toListRef();
  ASSERT_EQ(list.size(), 3u);
  at::Tensor x = list[0].toTensor();
  at::Tensor xt = list[1].toTensor();
  at::Tensor row = list[2].toTensor();
  EXPECT_TRUE(x.is_alias_of(xt));
  EXPECT_TRUE(x.is_alias_of(row));
  EXPECT_EQ(xt.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(row.storage_offset(), 3);
  x.mul_(2);  // one storage: the views see the write
  EXPECT_EQ(row[0].item<float>(), 6.0f);
}

// `zoobench same REF FIFO` blocked forever in the archive reader's open; a device or a folder
// is no archive either. Refused at once, naming the path.
TEST(TorchSaveRead, AnythingButARegularFileIsRefusedWithoutBlocking) {
  ScratchDir dir;
  const std::string fifo = dir.file("outputs.pt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.path()}) {
    try {
      serialization::load_torch_save(path, c10::Device(c10::kCPU));
      ADD_FAILURE() << path << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(TorchSaveRead, MapLocationCpu) {
  ScratchDir dir;
  testing::run_python(
      fmt::format("import torch\ntorch.save({{'a': torch.ones(2)}}, '{}')\n", dir.file("a.pt")));
  auto value = load_torch_save(dir.file("a.pt"), c10::Device("cpu"));
  EXPECT_TRUE(value.toGenericDict().at("a").toTensor().device().is_cpu());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TorchSaveRead, MissingFileNamesTheFile) {
  std::string message = error_of([] { load_torch_save("/nonexistent/ref.pt"); });
  EXPECT_NE(message.find("/nonexistent/ref.pt"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST(TorchSaveRead, NotAZipFileSaysSo) {
  ScratchDir dir;
  write_file_atomically(dir.file("text.pt"), "just text");
  std::string message = error_of([&] { load_torch_save(dir.file("text.pt")); });
  EXPECT_NE(message.find("not a torch.save zip file"), std::string::npos) << message;
}

TEST(TorchSaveRead, UnknownGlobalNamesGlobalAndFile) {
  ScratchDir dir;
  testing::run_python(
      fmt::format("import torch, fractions\ntorch.save({{'x': fractions.Fraction(1, 3)}}, '{}')\n",
                  dir.file("fraction.pt")));
  std::string message = error_of([&] { load_torch_save(dir.file("fraction.pt")); });
  EXPECT_NE(message.find("fractions.Fraction"), std::string::npos) << message;
  EXPECT_NE(message.find(dir.file("fraction.pt")), std::string::npos) << message;
}

TEST(TorchSaveRead, TorchScriptModuleIsRejectedWithAReason) {
  ScratchDir dir;
  testing::run_python(
      fmt::format("import torch\ntorch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), '{}')\n",
                  dir.file("module.pt")));
  std::string message = error_of([&] { load_torch_save(dir.file("module.pt")); });
  EXPECT_NE(message.find("TorchScript"), std::string::npos) << message;
}

TEST(TorchSaveRead, TruncatedFileIsAnErrorNotACrash) {
  ScratchDir dir;
  testing::run_python(
      fmt::format("import torch\ntorch.save(torch.randn(1000), '{}')\n", dir.file("full.pt")));
  std::string bytes = read_text_file(dir.file("full.pt"));
  write_file_atomically(dir.file("cut.pt"), bytes.substr(0, bytes.size() / 2));
  std::string message = error_of([&] { load_torch_save(dir.file("cut.pt")); });
  EXPECT_NE(message.find("cut.pt"), std::string::npos) << message;
}

// A storage record that declares far more bytes than its storage needs (deflated, so the file
// stays small) is refused from the zip directory, before anything is inflated: the process's
// peak memory does not grow by the 512 MB the record would inflate to.
TEST(TorchSaveRead, ARecordLargerThanItsStorageIsRefusedBeforeItIsInflated) {
  ScratchDir dir;
  const std::string small = dir.file("small.pt"), inflated = dir.file("inflated.pt");
  // torch.save's file, with data/0 rewritten deflated: 512 MB of zeros in about half a megabyte.
  testing::run_python(fmt::format(
      "import torch, zipfile\n"
      "torch.save(torch.zeros(4), '{0}')\n"
      "src = zipfile.ZipFile('{0}')\n"
      "record = [n for n in src.namelist() if n.endswith('/data/0')][0]\n"
      "with zipfile.ZipFile('{1}', 'w') as dst:\n"
      "    for info in src.infolist():\n"
      "        if info.filename != record:\n"
      "            dst.writestr(info, src.read(info.filename))\n"
      "    big = zipfile.ZipInfo(record)\n"
      "    big.compress_type = zipfile.ZIP_DEFLATED\n"
      "    with dst.open(big, 'w', force_zip64=True) as out:\n"
      "        chunk = bytes(1 << 20)\n"
      "        for _ in range(512):\n"
      "            out.write(chunk)\n",
      small, inflated));
  EXPECT_LT(std::filesystem::file_size(inflated), 4u << 20);
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  std::string message = error_of([&] { load_torch_save(inflated); });
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_NE(message.find("declares 536870912 bytes, its storage needs 16"), std::string::npos)
      << message;
  EXPECT_NE(message.find(inflated), std::string::npos) << message;
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 100 * 1024) << "KB more at the peak";
  // The same file with the record its storage needs reads.
  EXPECT_EQ(describe(load_torch_save(small)), describe(c10::IValue(at::zeros({4}))));
}

// Tensors every comparison would choke on: 100 dimensions (quadratic before the bound), and a
// 32768x32768 view of one float that each comparison would materialise as 4 GB. A small
// expanded view still reads, as the view it is.
TEST(TorchSaveRead, TensorsBeyondTheComparisonsLimitsAreRefusedWithTheirShape) {
  ScratchDir dir;
  testing::run_python(fmt::format(
      "import torch\n"
      "torch.save(torch.zeros([1] * 100), '{}')\n"
      "torch.save(torch.zeros(1).expand(32768, 32768), '{}')\n"
      "torch.save(torch.arange(3.0).expand(1000, 3), '{}')\n",
      dir.file("many.pt"), dir.file("expanded.pt"), dir.file("small_expanded.pt")));
  std::string message = error_of([&] { load_torch_save(dir.file("many.pt")); });
  EXPECT_NE(message.find("100 dimensions (at most 64)"), std::string::npos) << message;
  EXPECT_NE(message.find("many.pt"), std::string::npos) << message;
  message = error_of([&] { load_torch_save(dir.file("expanded.pt")); });
  EXPECT_NE(message.find("32768x32768"), std::string::npos) << message;
  EXPECT_NE(message.find("expanded view"), std::string::npos) << message;
  const at::Tensor small = load_torch_save(dir.file("small_expanded.pt")).toTensor();
  EXPECT_EQ(small.strides(), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(at::equal(small, at::arange(3.0).expand({1000, 3})));
}

// ---- writer ----

c10::IValue structures_to_write() {
  at::manual_seed(0);
  at::Tensor base = at::arange(24, at::kFloat).reshape({2, 3, 4});
  c10::impl::GenericDict one(c10::StringType::get(), c10::AnyType::get());
  one.insert("only", at::ones({2}));
  c10::impl::GenericDict dtypes(c10::StringType::get(), c10::AnyType::get());
  for (auto dtype :
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kBool, at::kChar, at::kShort,
        at::kInt, at::kLong, at::kByte, at::kComplexFloat, at::kComplexDouble}) {
    dtypes.insert(c10::toString(dtype), (at::randn({2, 3}) * 5).to(dtype));
  }
  c10::impl::GenericDict int_keys(c10::IntType::get(), c10::AnyType::get());
  int_keys.insert(int64_t{3}, std::string("three"));
  int_keys.insert(int64_t{-1}, at::zeros({0, 2}));
  c10::impl::GenericList list(c10::AnyType::get());
  list.push_back(int64_t{1});
  list.push_back(2.5);
  list.push_back(c10::IValue());
  list.push_back(true);
  list.push_back(std::string("text \xc3\xbc"));
  list.push_back(int64_t{1} << 40);
  list.push_back(-(int64_t{1} << 40));
  list.push_back(int64_t{-70000});
  list.push_back(c10::IValue(c10::Device("cpu")));
  list.push_back(c10::IValue(c10::complex<double>(1.0, -2.0)));
  at::Tensor grad = at::randn({3});
  grad.set_requires_grad(true);
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  root.insert("views", c10::ivalue::Tuple::create({base, base.permute({2, 0, 1}),
                                                   base.slice(1, 1).slice(2, 0, 4, 2), base[1]}));
  root.insert("one_item", one);
  root.insert("dtypes", dtypes);
  root.insert("int_keys", int_keys);
  root.insert("scalars", list);
  root.insert("zero_dim", at::scalar_tensor(3.5));
  root.insert("channels_last", at::randn({2, 3, 4, 5}).contiguous(at::MemoryFormat::ChannelsLast));
  root.insert("requires_grad", grad);
  root.insert("empty_tuple", c10::ivalue::Tuple::create({}));
  return root;
}

TEST(TorchSaveWrite, PythonTorchLoadReadsWhatWeWrite) {
  ScratchDir dir;
  c10::IValue value = structures_to_write();
  save_for_python(value, dir.file("all.pt"));
  write_file_atomically(dir.file("all.txt"), describe(value));
  // torch 1.13's weights_only unpickler knows no floats, devices or complex numbers (2.x does):
  // check it on the tensors and containers alone.
  c10::impl::GenericDict tensors(c10::StringType::get(), c10::AnyType::get());
  for (const char* key : {"views", "one_item", "dtypes", "int_keys", "zero_dim", "channels_last",
                          "requires_grad", "empty_tuple"}) {
    tensors.insert(key, value.toGenericDict().at(key));
  }
  save_for_python(tensors, dir.file("tensors.pt"));
  write_file_atomically(dir.file("tensors.txt"), describe(tensors));
  auto result = testing::run_python(fmt::format(
      "import sys\nsys.path.insert(0, '{}')\nimport torch, torch_save_cases\n"
      "for name, weights_only in (('all', False), ('tensors', False), ('tensors', True)):\n"
      "    expected = open(f'{}/{{name}}.txt').read()\n"
      "    got = torch_save_cases.describe(torch.load(f'{}/{{name}}.pt', "
      "weights_only=weights_only))\n"
      "    if got != expected:\n"
      "        print(name, 'weights_only', weights_only)\n"
      "        print('GOT\\n' + got + '\\nEXPECTED\\n' + expected)\n"
      "        sys.exit(1)\n"
      "print('same')\n",
      std::filesystem::path(cases_script()).parent_path().string(), dir.path(), dir.path()));
  EXPECT_NE(result.output.find("same"), std::string::npos) << result.output;
}

TEST(TorchSaveWrite, RoundTripThroughOurReader) {
  ScratchDir dir;
  c10::IValue value = structures_to_write();
  save_for_python(value, dir.file("cpp.pt"));
  EXPECT_EQ(describe(load_torch_save(dir.file("cpp.pt"))), describe(value));
}

TEST(TorchSaveWrite, SharedStorageIsWrittenOnce) {
  ScratchDir dir;
  at::Tensor big = at::randn({1000});
  save_for_python(c10::ivalue::Tuple::create({big, big.slice(0, 10, 20), big}), dir.file("s.pt"));
  EXPECT_LT(std::filesystem::file_size(dir.file("s.pt")), 6000u);
  c10::IValue loaded = load_torch_save(dir.file("s.pt"));
  const auto& elements = loaded.toTupleRef().elements();
  EXPECT_TRUE(elements[0].toTensor().is_alias_of(elements[1].toTensor()));
}

}  // namespace
}  // namespace zoobench::serialization
