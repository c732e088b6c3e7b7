// A pickle virtual machine for the programs torch.save writes. LibTorch's own unpickler is
// written for TorchScript archives and stops on opcodes CPython emits for ordinary objects
// (SETITEM for a one-item dict, for instance), so this one follows CPython's pickle.py instead,
// restricted to the globals torch.save uses for tensors and plain containers.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "zoobench/serialization/pickle.h"

namespace zoobench::serialization::detail {
namespace {

// A stack entry: an IValue, or one of the things a pickle builds on the way to one (a tuple
// that may hold them, a global, a storage, a dtype).
enum class Kind { kValue, kTuple, kGlobal, kStorage, kDtype };

struct Item;
using Items = std::vector<Item>;

struct Item {
  Kind kind = Kind::kValue;
  c10::IValue value;                                   // kValue
  std::shared_ptr<const Items> elements;               // kTuple
  std::string name;                                    // kGlobal: "module.name"
  c10::Storage storage;                                // kStorage
  c10::ScalarType dtype = c10::ScalarType::Undefined;  // kStorage (elements), kDtype
  bool untyped = false;                                // kStorage
  // kTuple: its nesting (tuples are immutable, so it is known when one is made, and bounded
  // then; lists and dicts can change after they are nested and are checked at the end).
  std::size_t depth = 0;

  static Item of(c10::IValue v) {
    Item item;
    item.value = std::move(v);
    return item;
  }
  static Item tuple(Items elements) {
    Item item;
    item.kind = Kind::kTuple;
    for (const auto& element : elements) item.depth = std::max(item.depth, element.depth + 1);
    item.elements = std::make_shared<const Items>(std::move(elements));
    return item;
  }
  static Item global(std::string name) {
    Item item;
    item.kind = Kind::kGlobal;
    item.name = std::move(name);
    return item;
  }
};

// Python's pickle cannot write deeper than its recursion limit (1000 by default) without the
// limit raised; PyTorch's own outputs nest a few levels.
constexpr std::size_t kMaxDepth = 1000;
// The comparison and the printers copy shared parts: 10 million values is far beyond any model's
// outputs (they are tensors, not values) and still a bounded walk.
constexpr uint64_t kMaxExpandedValues = 10'000'000;
// PyTorch's own limit for many kernels (TensorIterator's).
constexpr std::size_t kMaxDims = 64;
// An expanded view up to 2^26 elements (256 MB of float32) is compared as it is materialised.
constexpr int64_t kMaxExpandedElements = int64_t{1} << 26;

// A failure already said with the file and the byte.
struct PickleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_container(const c10::IValue& value) {
  return value.isList() || value.isGenericDict() || value.isTuple();
}

// What a list, dict or tuple holds (a dict's values: its keys are plain str, int, bool or
// float); nothing for anything else.
std::vector<c10::IValue> contained_values(const c10::IValue& value) {
  std::vector<c10::IValue> out;
  if (value.isList()) {
    for (const c10::IValue& element : value.toListRef()) out.push_back(element);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) out.push_back(entry.value());
  } else if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) out.push_back(element);
  }
  return out;
}

const char* kWhatWeRead =
    "zoobench reads tensors, None, bool, int, float, complex, str, tuple, list, dict, "
    "OrderedDict, torch.Size, torch.device and torch dtypes";

class Unpickler {
 public:
  Unpickler(std::string_view data, const StorageResolver& resolve, const std::string& source)
      : data_(data), resolve_(resolve), source_(source) {}

  c10::IValue run() {
    while (true) {
      if (pos_ >= data_.size()) fail("the pickle ends without a STOP opcode (truncated file?)");
      op_pos_ = pos_;
      const auto op = static_cast<uint8_t>(data_[pos_++]);
      if (op == '.') {  // STOP
        if (stack_.empty()) fail("STOP with an empty stack");
        c10::IValue result = to_ivalue(stack_.back(), "the saved object");
        check_shape(result);
        return result;
      }
      try {
        step(op);
      } catch (const PickleError&) {
        throw;
      } catch (const std::exception& e) {
        // stoull, stod, c10's size checks, bad_alloc: said with the file and the byte.
        fail(e.what());
      }
    }
  }

  // After a failure: the containers the program built are emptied one by one, so that neither
  // a cycle (a leak) nor a chain thousands of levels deep (a recursive destructor, a stack
  // overflow) is left for the destructors.
  void dismantle() {
    std::vector<c10::IValue> work;
    std::unordered_set<const Items*> seen_tuples;
    for (const auto& item : stack_) collect_values(item, work, seen_tuples);
    for (const auto& [index, item] : memo_) collect_values(item, work, seen_tuples);
    for (const auto& [key, converted] : converted_tuples_) work.push_back(converted.second);
    stack_.clear();
    memo_.clear();
    converted_tuples_.clear();
    std::unordered_set<const void*> visited;  // shared containers: each once
    while (!work.empty()) {
      c10::IValue value = std::move(work.back());
      work.pop_back();
      if (!is_container(value) || !visited.insert(value.internalToPointer()).second) continue;
      for (c10::IValue& element : contained_values(value)) work.push_back(std::move(element));
      // Tuples stay as they are: immutable, and bounded in depth when made.
      if (value.isList()) value.toList().clear();
      if (value.isGenericDict()) value.toGenericDict().clear();
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PickleError(
        fmt::format("{}: cannot read data.pkl (byte {}): {}", source_, op_pos_, what));
  }

  // The IValues inside `item`, each shared tuple visited once (a DAG of tuples is small as
  // stored and astronomic as a tree); recursion bounded by the tuples' depth limit.
  static void collect_values(const Item& item, std::vector<c10::IValue>& out,
                             std::unordered_set<const Items*>& seen_tuples) {
    if (item.kind == Kind::kValue) out.push_back(item.value);
    if (item.kind == Kind::kTuple && seen_tuples.insert(item.elements.get()).second)
      for (const auto& element : *item.elements) collect_values(element, out, seen_tuples);
  }

  // The object's shape, before anything walks it recursively (the comparison, the printer, a
  // destructor): no container inside itself, no deeper nesting than kMaxDepth, and no more
  // than kMaxExpandedValues values once shared parts are counted as the copies the
  // comparison makes. Iterative: the shape it checks may be what would overflow a recursion.
  void check_shape(const c10::IValue& root) const {
    enum class State { kOpen, kDone };
    struct Visit {
      const void* id;
      std::vector<c10::IValue> children;
      std::size_t next = 0;
      uint64_t expanded = 1;
    };
    std::unordered_map<const void*, std::pair<State, uint64_t>> seen;
    // Counts saturate just past the limit, so no sum overflows.
    auto add = [](uint64_t& total, uint64_t more) {
      total = std::min(kMaxExpandedValues + 1, total + more);
    };
    if (!is_container(root)) return;
    std::vector<Visit> path;
    path.push_back({root.internalToPointer(), contained_values(root)});
    seen[root.internalToPointer()] = {State::kOpen, 0};
    while (!path.empty()) {
      Visit& visit = path.back();
      if (visit.next == visit.children.size()) {
        seen[visit.id] = {State::kDone, visit.expanded};
        const uint64_t expanded = visit.expanded;
        path.pop_back();
        if (!path.empty()) add(path.back().expanded, expanded);
        if (!path.empty() && path.back().expanded > kMaxExpandedValues) {
          fail(
              fmt::format("the saved object holds more than {} values once its shared parts are "
                          "copied (a structure of shared containers; the comparison would walk "
                          "every copy)",
                          kMaxExpandedValues));
        }
        continue;
      }
      const c10::IValue child = visit.children[visit.next++];
      if (!is_container(child)) {
        add(visit.expanded, 1);
        continue;
      }
      const void* id = child.internalToPointer();
      auto found = seen.find(id);
      if (found != seen.end()) {
        if (found->second.first == State::kOpen)
          fail("the saved object contains itself (a list or dict inside its own elements)");
        add(visit.expanded, found->second.second);
        continue;
      }
      if (path.size() >= kMaxDepth)
        fail(fmt::format("the saved object is nested deeper than {} levels", kMaxDepth));
      seen[id] = {State::kOpen, 0};
      path.push_back({id, contained_values(child)});
    }
  }

  // ---- reading the program ----
  std::string_view read_bytes(uint64_t n) {
    if (n > data_.size() - pos_) fail("the pickle is truncated");
    std::string_view bytes = data_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }
  template <typename T>
  T read_le() {
    std::string_view bytes = read_bytes(sizeof(T));
    T value;
    std::memcpy(&value, bytes.data(), sizeof(T));  // pickle integers are little-endian, as we are
    return value;
  }
  std::string read_line() {
    auto end = data_.find('\n', pos_);
    if (end == std::string_view::npos) fail("the pickle is truncated (no end of line)");
    std::string line(data_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return line;
  }

  // ---- the stack ----
  Item pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back())) {
      fail("the pickle pops from an empty stack");
    }
    Item item = std::move(stack_.back());
    stack_.pop_back();
    return item;
  }
  Item& top() {
    if (stack_.empty()) fail("the pickle reads from an empty stack");
    return stack_.back();
  }
  Items pop_to_mark() {
    if (marks_.empty()) fail("the pickle has no MARK to pop to");
    size_t mark = marks_.back();
    marks_.pop_back();
    Items items(std::make_move_iterator(stack_.begin() + mark),
                std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return items;
  }

  c10::IValue to_ivalue(const Item& item, const char* context) {
    switch (item.kind) {
      case Kind::kValue:
        return item.value;
      case Kind::kTuple: {
        // Converted once: a memoised tuple used many times stays one shared object, not a copy
        // per use (60 levels of shared pairs are 2^60 copies).
        auto found = converted_tuples_.find(item.elements.get());
        if (found != converted_tuples_.end()) return found->second.second;
        std::vector<c10::IValue> elements;
        elements.reserve(item.elements->size());
        for (const auto& element : *item.elements) elements.push_back(to_ivalue(element, context));
        c10::IValue tuple = c10::ivalue::Tuple::create(std::move(elements));
        converted_tuples_.emplace(item.elements.get(), std::make_pair(item.elements, tuple));
        return tuple;
      }
      case Kind::kDtype:
        return c10::IValue(item.dtype);
      case Kind::kGlobal:
        fail(fmt::format("{} is the Python object '{}', which is not data ({})", context, item.name,
                         kWhatWeRead));
      case Kind::kStorage:
        fail(fmt::format("{} is a bare storage; save tensors instead", context));
    }
    fail("unreachable item kind");
  }

  Items elements_of(const Item& item, const char* what) {
    if (item.kind == Kind::kTuple) return *item.elements;
    if (item.kind == Kind::kValue && (item.value.isTuple() || item.value.isList())) {
      c10::ArrayRef<c10::IValue> values = item.value.isTuple()
                                              ? item.value.toTupleRef().elements().asArrayRef()
                                              : item.value.toListRef();
      Items items;
      for (const auto& element : values) items.push_back(Item::of(element));
      return items;
    }
    fail(fmt::format("{} should be a tuple", what));
  }
  int64_t int_of(const Item& item, const char* what) {
    if (item.kind != Kind::kValue || !item.value.isInt())
      fail(fmt::format("{} should be an int", what));
    return item.value.toInt();
  }
  bool bool_of(const Item& item, const char* what) {
    if (item.kind != Kind::kValue || !item.value.isBool())
      fail(fmt::format("{} should be a bool", what));
    return item.value.toBool();
  }
  std::string string_of(const Item& item, const char* what) {
    if (item.kind != Kind::kValue || !item.value.isString()) {
      fail(fmt::format("{} should be a str", what));
    }
    return item.value.toStringRef();
  }
  std::vector<int64_t> ints_of(const Item& item, const char* what) {
    std::vector<int64_t> ints;
    for (const auto& element : elements_of(item, what)) ints.push_back(int_of(element, what));
    return ints;
  }
  double number_of(const Item& item, const char* what) {
    if (item.kind == Kind::kValue && item.value.isDouble()) return item.value.toDouble();
    if (item.kind == Kind::kValue && item.value.isInt())
      return static_cast<double>(item.value.toInt());
    fail(fmt::format("{} should be a number", what));
  }

  // ---- globals and what calling them builds ----
  void push_global(std::string module, const std::string& name) {
    if (module == "__builtin__") module = "builtins";  // protocol 2 names Python 2's module
    if (module == "torch") {
      if (auto dtype = dtype_of_python_name(name)) {
        Item item;
        item.kind = Kind::kDtype;
        item.dtype = *dtype;
        stack_.push_back(std::move(item));
        return;
      }
      if (dtype_of_storage_type(name) || name == "UntypedStorage" || name == "Size" ||
          name == "device" || name == "Tensor") {
        stack_.push_back(Item::global("torch." + name));
        return;
      }
    }
    if ((module == "torch.storage" && name == "UntypedStorage") ||
        (module == "torch" && name == "_UntypedStorage")) {
      // Where torch 1.13's pickler finds torch.UntypedStorage (2.x names it torch.UntypedStorage).
      stack_.push_back(Item::global("torch.UntypedStorage"));
      return;
    }
    static const char* const kCallables[] = {
        "torch._utils._rebuild_tensor_v2",
        "torch._utils._rebuild_tensor_v3",
        "torch._utils._rebuild_parameter",
        "torch._utils._rebuild_parameter_with_state",
        "torch._tensor._rebuild_from_type_v2",
        "torch._utils._rebuild_from_type_v2",
        "torch.nn.parameter.Parameter",
        "collections.OrderedDict",
        "builtins.dict",
        "builtins.complex",
        "_codecs.encode",
    };
    std::string full = module + "." + name;
    for (const char* known : kCallables) {
      if (full == known) {
        stack_.push_back(Item::global(full));
        return;
      }
    }
    fail(
        fmt::format("it uses the Python global '{}', which zoobench cannot rebuild ({}); "
                    "save plain tensors and containers (e.g. tuple(output) or dict(output))",
                    full, kWhatWeRead));
  }

  Item call(const Item& callable, const Item& args_item) {
    if (callable.kind != Kind::kGlobal) fail("REDUCE calls something that is not a global");
    const std::string& name = callable.name;
    Items args = elements_of(args_item, "the arguments of a call");
    if (name == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args, /*v3=*/false);
    if (name == "torch._utils._rebuild_tensor_v3") return rebuild_tensor(args, /*v3=*/true);
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state") {
      if (args.size() < 2 || args[0].kind != Kind::kValue || !args[0].value.isTensor()) {
        fail(name + " expects (tensor, requires_grad, ...)");
      }
      // Like nn.Parameter(data): a new tensor over the same storage; `data` may be shared.
      at::Tensor tensor = args[0].value.toTensor().detach();
      set_requires_grad(tensor, bool_of(args[1], "requires_grad"));
      return Item::of(tensor);
    }
    if (name == "torch._tensor._rebuild_from_type_v2" ||
        name == "torch._utils._rebuild_from_type_v2") {
      // (func, type, args, state): a Tensor with Python attributes; the attributes are dropped.
      if (args.size() < 3) fail(name + " expects (func, type, args, state)");
      if (args[1].kind != Kind::kGlobal ||
          (args[1].name != "torch.Tensor" && args[1].name != "torch.nn.parameter.Parameter")) {
        fail("it holds a tensor subclass, which zoobench cannot rebuild; save plain tensors");
      }
      return call(args[0], args[2]);
    }
    if (name == "collections.OrderedDict" || name == "builtins.dict") {
      c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
      if (!args.empty()) {
        for (const auto& pair : elements_of(args[0], "an OrderedDict item list")) {
          Items kv = elements_of(pair, "an OrderedDict item");
          if (kv.size() != 2) fail("an OrderedDict item should be a (key, value) pair");
          dict.insert_or_assign(to_ivalue(kv[0], "a dict key"), to_ivalue(kv[1], "a dict value"));
        }
      }
      return Item::of(c10::IValue(dict));
    }
    if (name == "torch.Size") {
      if (args.size() != 1) fail("torch.Size expects one tuple of ints");
      std::vector<c10::IValue> dims;
      for (int64_t dim : ints_of(args[0], "a torch.Size dimension")) dims.emplace_back(dim);
      return Item::of(c10::ivalue::Tuple::create(std::move(dims)));
    }
    if (name == "torch.device") {
      if (args.empty()) fail("torch.device expects a device string");
      std::string type = string_of(args[0], "the device type");
      if (args.size() > 1 && args[1].kind == Kind::kValue && args[1].value.isInt()) {
        type += ":" + std::to_string(args[1].value.toInt());
      }
      try {
        return Item::of(c10::IValue(c10::Device(type)));
      } catch (const std::exception&) {
        fail(fmt::format("unknown device '{}'", type));
      }
    }
    if (name == "builtins.complex") {
      double real = args.empty() ? 0.0 : number_of(args[0], "the real part");
      double imag = args.size() < 2 ? 0.0 : number_of(args[1], "the imaginary part");
      return Item::of(c10::IValue(c10::complex<double>(real, imag)));
    }
    if (name == "_codecs.encode") {  // bytes under protocol 2: encode(latin-1 text, 'latin1')
      if (args.empty()) fail("_codecs.encode expects a str");
      return Item::of(c10::IValue(latin1_bytes(string_of(args[0], "encoded bytes"))));
    }
    fail(fmt::format("cannot call the Python global '{}' ({})", name, kWhatWeRead));
  }

  // UTF-8 text whose code points are all below 256 -> those code points as bytes.
  std::string latin1_bytes(const std::string& utf8) {
    std::string bytes;
    for (size_t i = 0; i < utf8.size(); ++i) {
      auto c = static_cast<unsigned char>(utf8[i]);
      if (c < 0x80) {
        bytes.push_back(static_cast<char>(c));
      } else if ((c & 0xE0) == 0xC0 && i + 1 < utf8.size()) {
        bytes.push_back(static_cast<char>(((c & 0x1F) << 6) | (utf8[++i] & 0x3F)));
      } else {
        fail("bytes encoded with characters beyond latin-1");
      }
    }
    return bytes;
  }

  static void set_requires_grad(at::Tensor& tensor, bool requires_grad) {
    if (requires_grad &&
        (at::isFloatingType(tensor.scalar_type()) || at::isComplexType(tensor.scalar_type()))) {
      tensor.set_requires_grad(true);
    }
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) and
  // _rebuild_tensor_v3(untyped storage, offset, size, stride, requires_grad, hooks, dtype[, ...]).
  Item rebuild_tensor(const Items& args, bool v3) {
    if (args.size() < (v3 ? 7u : 6u) || args[0].kind != Kind::kStorage) {
      fail("a tensor is rebuilt with unexpected arguments");
    }
    const Item& storage = args[0];
    c10::ScalarType dtype = storage.dtype;
    if (v3) {
      if (args[6].kind != Kind::kDtype) fail("_rebuild_tensor_v3 expects a dtype");
      dtype = args[6].dtype;
    } else if (storage.untyped) {
      fail("a tensor is rebuilt from an untyped storage without a dtype");
    }
    int64_t offset = int_of(args[1], "a tensor's storage offset");
    std::vector<int64_t> sizes = ints_of(args[2], "a tensor's size");
    std::vector<int64_t> strides = ints_of(args[3], "a tensor's stride");
    bool requires_grad = bool_of(args[4], "a tensor's requires_grad");
    if (sizes.size() != strides.size()) fail("a tensor's size and stride differ in length");

    // PyTorch's kernels take at most 64 dimensions; more made the comparison quadratic (a
    // 100,000-dimension tensor took 58 s).
    if (sizes.size() > kMaxDims)
      fail(fmt::format("a tensor with {} dimensions (at most {})", sizes.size(), kMaxDims));
    // Python checks this when it rebuilds the view; check it here too, with a clear message
    // (and without overflow: sizes and strides come from the file).
    int64_t last = offset, numel = 1;
    bool empty = false, overflow = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] < 0 || strides[d] < 0) fail("a tensor has a negative size or stride");
      if (sizes[d] == 0) empty = true;
      int64_t reach = 0;
      overflow |= __builtin_mul_overflow(sizes[d] == 0 ? 0 : sizes[d] - 1, strides[d], &reach);
      overflow |= __builtin_add_overflow(last, reach, &last);
      overflow |= __builtin_mul_overflow(numel, sizes[d], &numel);
    }
    const auto item_size = static_cast<int64_t>(c10::elementSize(dtype));
    const auto storage_bytes = static_cast<int64_t>(storage.storage.nbytes());
    if (!empty && (overflow || offset < 0 || last >= storage_bytes / std::max<int64_t>(item_size, 1))) {
      fail(fmt::format("a {} tensor of size {} reaches past its storage ({} bytes)",
                       c10::toString(dtype), fmt::join(sizes, "x"), storage_bytes));
    }
    // A view that repeats its storage (zero strides, expand) is fine to hold, but every
    // comparison materialises it: a 32768x32768 view of 4 bytes became 4 GB.
    if (!empty && numel > kMaxExpandedElements && numel * item_size > storage_bytes) {
      fail(fmt::format(
          "a {} tensor of size {} repeats its {}-byte storage {} elements' worth (an expanded "
          "view): zoobench compares expanded views of at most {} elements",
          c10::toString(dtype), fmt::join(sizes, "x"), storage_bytes, numel, kMaxExpandedElements));
    }
    at::Tensor tensor =
        at::empty({0}, at::TensorOptions().dtype(dtype).device(storage.storage.device()));
    tensor.set_(storage.storage, offset, sizes, strides);
    set_requires_grad(tensor, requires_grad);
    return Item::of(tensor);
  }

  Item persistent_load(const Item& pid) {
    Items fields = elements_of(pid, "a persistent id");
    if (fields.size() < 5 || fields[0].kind != Kind::kValue || !fields[0].value.isString() ||
        fields[0].value.toStringRef() != "storage") {
      fail("a persistent id that is not a ('storage', type, key, location, numel) tuple");
    }
    if (fields[1].kind != Kind::kGlobal) fail("a storage whose type is not a torch storage class");
    PersistentStorage request;
    const std::string type = fields[1].name.substr(fields[1].name.rfind('.') + 1);
    if (type == "UntypedStorage") {
      request.untyped = true;
      request.dtype = c10::ScalarType::Byte;
    } else if (auto dtype = dtype_of_storage_type(type)) {
      request.dtype = *dtype;
    } else {
      fail(fmt::format("unsupported storage type torch.{}", type));
    }
    request.key = string_of(fields[2], "a storage key");
    request.location = string_of(fields[3], "a storage location");
    request.numel = int_of(fields[4], "a storage size");
    // A size whose bytes would not fit in 2^62 is no file's (and would overflow the checks).
    if (request.numel < 0 || request.numel > (int64_t{1} << 62) / 16)
      fail(fmt::format("a storage of {} elements", request.numel));
    Item item;
    item.kind = Kind::kStorage;
    item.storage = resolve_(request);
    item.dtype = request.dtype;
    item.untyped = request.untyped;
    return item;
  }

  void push_tuple(Items elements) {
    Item tuple = Item::tuple(std::move(elements));
    if (tuple.depth > kMaxDepth)
      fail(fmt::format("the saved object is nested deeper than {} levels", kMaxDepth));
    stack_.push_back(std::move(tuple));
  }

  // ---- one opcode ----
  void memo_put(uint64_t index) { memo_[index] = top(); }
  void memo_get(uint64_t index) {
    auto found = memo_.find(index);
    if (found == memo_.end())
      fail(fmt::format("memo entry {} is read before it is written", index));
    stack_.push_back(found->second);
  }

  c10::impl::GenericList list_on_top() {
    Item& item = top();
    if (item.kind != Kind::kValue || !item.value.isList()) fail("APPEND to something not a list");
    return item.value.toList();
  }
  c10::impl::GenericDict dict_on_top() {
    Item& item = top();
    if (item.kind != Kind::kValue || !item.value.isGenericDict()) {
      fail("SETITEM on something not a dict");
    }
    return item.value.toGenericDict();
  }
  void set_item(c10::impl::GenericDict& dict, const Item& key, const Item& value) {
    c10::IValue k = to_ivalue(key, "a dict key");
    if (!k.isString() && !k.isInt() && !k.isBool() && !k.isDouble()) {
      fail(fmt::format("a dict key of type {} (zoobench reads str and int keys)", k.tagKind()));
    }
    dict.insert_or_assign(std::move(k), to_ivalue(value, "a dict value"));
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80:  // PROTO
        read_bytes(1);
        return;
      case 0x95:  // FRAME
        read_bytes(8);
        return;
      case '(':  // MARK
        marks_.push_back(stack_.size());
        return;
      case '0':  // POP
        pop();
        return;
      case '1':  // POP_MARK
        pop_to_mark();
        return;
      case '2':  // DUP
        stack_.push_back(top());
        return;
      case 'N':
        stack_.push_back(Item::of(c10::IValue()));
        return;
      case 0x88:  // NEWTRUE
        stack_.push_back(Item::of(true));
        return;
      case 0x89:  // NEWFALSE
        stack_.push_back(Item::of(false));
        return;
      case 'K':  // BININT1
        stack_.push_back(Item::of(static_cast<int64_t>(read_le<uint8_t>())));
        return;
      case 'M':  // BININT2
        stack_.push_back(Item::of(static_cast<int64_t>(read_le<uint16_t>())));
        return;
      case 'J':  // BININT
        stack_.push_back(Item::of(static_cast<int64_t>(read_le<int32_t>())));
        return;
      case 0x8a:  // LONG1
        push_long(read_le<uint8_t>());
        return;
      case 0x8b:  // LONG4
        push_long(read_le<uint32_t>());
        return;
      case 'I': {  // INT (text): also True/False in protocol 0
        std::string line = read_line();
        if (line == "01" || line == "00") {
          stack_.push_back(Item::of(line == "01"));
        } else {
          stack_.push_back(Item::of(static_cast<int64_t>(std::stoll(line))));
        }
        return;
      }
      case 'L': {  // LONG (text)
        std::string line = read_line();
        if (!line.empty() && line.back() == 'L') line.pop_back();
        stack_.push_back(Item::of(static_cast<int64_t>(std::stoll(line))));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian
        std::string_view bytes = read_bytes(8);
        uint64_t bits = 0;
        for (char c : bytes) bits = (bits << 8) | static_cast<uint8_t>(c);
        double value;
        std::memcpy(&value, &bits, sizeof(value));
        stack_.push_back(Item::of(value));
        return;
      }
      case 'F':  // FLOAT (text)
        stack_.push_back(Item::of(std::stod(read_line())));
        return;
      case 'X':  // BINUNICODE
        push_string(read_le<uint32_t>());
        return;
      case 0x8c:  // SHORT_BINUNICODE
        push_string(read_le<uint8_t>());
        return;
      case 0x8d:  // BINUNICODE8
        push_string(read_le<uint64_t>());
        return;
      case 'T':  // BINSTRING
      case 'B':  // BINBYTES
        push_string(read_le<uint32_t>());
        return;
      case 'U':  // SHORT_BINSTRING
      case 'C':  // SHORT_BINBYTES
        push_string(read_le<uint8_t>());
        return;
      case 0x8e:  // BINBYTES8
      case 0x96:  // BYTEARRAY8
        push_string(read_le<uint64_t>());
        return;
      case '}':  // EMPTY_DICT
        stack_.push_back(
            Item::of(c10::impl::GenericDict(c10::AnyType::get(), c10::AnyType::get())));
        return;
      case ']':  // EMPTY_LIST
        stack_.push_back(Item::of(c10::impl::GenericList(c10::AnyType::get())));
        return;
      case ')':  // EMPTY_TUPLE
        stack_.push_back(Item::tuple({}));
        return;
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        size_t n = op - 0x84;
        if (stack_.size() < n) fail("TUPLE with too few items");
        Items items(std::make_move_iterator(stack_.end() - n),
                    std::make_move_iterator(stack_.end()));
        stack_.resize(stack_.size() - n);
        push_tuple(std::move(items));
        return;
      }
      case 't':  // TUPLE
        push_tuple(pop_to_mark());
        return;
      case 'l': {  // LIST
        c10::impl::GenericList list(c10::AnyType::get());
        for (const auto& item : pop_to_mark()) list.push_back(to_ivalue(item, "a list element"));
        stack_.push_back(Item::of(list));
        return;
      }
      case 'd': {  // DICT
        Items items = pop_to_mark();
        if (items.size() % 2 != 0) fail("DICT with an odd number of items");
        c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
        for (size_t i = 0; i < items.size(); i += 2) set_item(dict, items[i], items[i + 1]);
        stack_.push_back(Item::of(dict));
        return;
      }
      case 'a': {  // APPEND
        Item value = pop();
        list_on_top().push_back(to_ivalue(value, "a list element"));
        return;
      }
      case 'e': {  // APPENDS
        Items items = pop_to_mark();
        auto list = list_on_top();
        for (const auto& item : items) list.push_back(to_ivalue(item, "a list element"));
        return;
      }
      case 's': {  // SETITEM
        Item value = pop();
        Item key = pop();
        auto dict = dict_on_top();
        set_item(dict, key, value);
        return;
      }
      case 'u': {  // SETITEMS
        Items items = pop_to_mark();
        if (items.size() % 2 != 0) fail("SETITEMS with an odd number of items");
        auto dict = dict_on_top();
        for (size_t i = 0; i < items.size(); i += 2) set_item(dict, items[i], items[i + 1]);
        return;
      }
      case 'q':  // BINPUT
        memo_put(read_le<uint8_t>());
        return;
      case 'r':  // LONG_BINPUT
        memo_put(read_le<uint32_t>());
        return;
      case 'p':  // PUT
        memo_put(std::stoull(read_line()));
        return;
      case 0x94:  // MEMOIZE
        memo_put(memo_.size());
        return;
      case 'h':  // BINGET
        memo_get(read_le<uint8_t>());
        return;
      case 'j':  // LONG_BINGET
        memo_get(read_le<uint32_t>());
        return;
      case 'g':  // GET
        memo_get(std::stoull(read_line()));
        return;
      case 'c': {  // GLOBAL
        std::string module = read_line();
        std::string name = read_line();
        push_global(std::move(module), name);
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        Item name = pop();
        Item module = pop();
        push_global(string_of(module, "a global's module"), string_of(name, "a global's name"));
        return;
      }
      case 'R': {  // REDUCE
        Item args = pop();
        Item callable = pop();
        stack_.push_back(call(callable, args));
        return;
      }
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
        Item args = pop();
        Item cls = pop();
        stack_.push_back(call(cls, args));
        return;
      }
      case 0x92: {  // NEWOBJ_EX
        pop();      // kwargs
        Item args = pop();
        Item cls = pop();
        stack_.push_back(call(cls, args));
        return;
      }
      case 'b': {  // BUILD: state for the object below; attributes of dicts and tensors are dropped
        pop();
        Item& target = top();
        if (target.kind != Kind::kValue ||
            !(target.value.isGenericDict() || target.value.isTensor())) {
          fail("BUILD sets the state of an object zoobench does not rebuild");
        }
        return;
      }
      case 'Q': {  // BINPERSID
        Item pid = pop();
        stack_.push_back(persistent_load(pid));
        return;
      }
      default:
        fail(fmt::format("unsupported pickle opcode 0x{:02x} ('{}'); {}", op,
                         op >= 32 && op < 127 ? std::string(1, static_cast<char>(op)) : "?",
                         kWhatWeRead));
    }
  }

  void push_long(uint64_t n) {
    if (n > 8) fail("an integer beyond the int64 range");
    std::string_view bytes = read_bytes(n);
    uint64_t bits = 0;
    for (size_t i = 0; i < n; ++i)
      bits |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(bytes[n - 1]) & 0x80)) {
      bits |= ~uint64_t{0} << (8 * n);  // sign-extend
    }
    stack_.push_back(Item::of(static_cast<int64_t>(bits)));
  }

  void push_string(uint64_t n) { stack_.push_back(Item::of(std::string(read_bytes(n)))); }

  std::string_view data_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  const StorageResolver& resolve_;
  const std::string& source_;
  Items stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Item> memo_;
  // Tuples converted to IValues, by their elements (kept alive here, so no address is reused).
  std::unordered_map<const Items*, std::pair<std::shared_ptr<const Items>, c10::IValue>>
      converted_tuples_;
};

}  // namespace

c10::IValue unpickle(std::string_view data, const StorageResolver& resolve,
                     const std::string& source) {
  Unpickler unpickler(data, resolve, source);
  try {
    return unpickler.run();
  } catch (...) {
    unpickler.dismantle();
    throw;
  }
}

}  // namespace zoobench::serialization::detail
