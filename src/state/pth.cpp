// PyTorch checkpoints (torch.save since 1.6, and Hugging Face's pytorch_model.bin): a ZIP archive, stored
// uncompressed, of <name>/data.pkl (a pickle of the state dict) and <name>/data/<key> (one file per storage).
// The pickle is run by a small virtual machine that knows only the opcodes torch.save writes and only the
// callables a state dict needs (OrderedDict, the tensor and parameter rebuilders, the storage types): any other
// global (os.system, eval, an unknown class) is refused before anything is called, so loading a checkpoint never
// executes its code. Every offset and length of the archive and of the pickle is bounds-checked.
#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "runtime/buffer_uop.h"
#include "state/file_io.h"
#include "tensor/helpers.h"
#include "tg/state.h"

namespace tg {

static_assert(std::endian::native == std::endian::little, "this reader assumes a little-endian host");

namespace {

const char* kOp = "torch_load";

struct Bad {  // the error of one file
  std::string path;
  SourceLocation where;
  ArgumentError operator()(const std::string& msg) const { return ArgumentError(kOp, path + ": " + msg, where); }
};

// ---- the ZIP archive: the central directory, then each entry's local header ----

template <class T> T le(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

struct ZipEntry {
  uint64_t offset, size;  // of the entry's data in the file
};

std::map<std::string, ZipEntry> read_zip(const unsigned char* f, size_t size, const Bad& bad) {
  // the end of central directory record: its signature within the last 64 KiB + 22 bytes (the comment's limit)
  if (size < 22) throw bad("too short for a ZIP archive (torch.save's format)");
  size_t eocd = std::string::npos;
  for (size_t at = size - 22 + 1; at-- > 0 && size - at <= 22 + 65535;)
    if (le<uint32_t>(f + at) == 0x06054b50) { eocd = at; break; }
  if (eocd == std::string::npos) throw bad("not a ZIP archive (no end of central directory; the legacy pre-1.6 format is not supported)");
  uint64_t count = le<uint16_t>(f + eocd + 10), dir_size = le<uint32_t>(f + eocd + 12), dir_at = le<uint32_t>(f + eocd + 16);
  if (count == 0xffff || dir_at == 0xffffffff || dir_size == 0xffffffff) {  // ZIP64: its locator sits just before
    if (eocd < 20 || le<uint32_t>(f + eocd - 20) != 0x07064b50) throw bad("ZIP64 sizes without a ZIP64 locator");
    uint64_t z = le<uint64_t>(f + eocd - 20 + 8);
    if (z > size - 56 || size < 56 || le<uint32_t>(f + z) != 0x06064b50) throw bad("a ZIP64 end record outside the file");
    count = le<uint64_t>(f + z + 32), dir_size = le<uint64_t>(f + z + 40), dir_at = le<uint64_t>(f + z + 48);
  }
  if (dir_at > size || dir_size > size - dir_at || count > dir_size / 46) throw bad("the central directory lies outside the file");
  std::map<std::string, ZipEntry> out;
  for (uint64_t k = 0, at = dir_at; k < count; k++) {
    if (dir_at + dir_size - at < 46 || le<uint32_t>(f + at) != 0x02014b50) throw bad("a damaged central directory entry");
    uint16_t method = le<uint16_t>(f + at + 10), name_len = le<uint16_t>(f + at + 28), extra_len = le<uint16_t>(f + at + 30);
    uint16_t comment_len = le<uint16_t>(f + at + 32);
    uint64_t csize = le<uint32_t>(f + at + 20), usize = le<uint32_t>(f + at + 24), local = le<uint32_t>(f + at + 42);
    uint64_t next = at + 46 + uint64_t{name_len} + extra_len + comment_len;
    if (next > dir_at + dir_size) throw bad("a central directory entry runs past the directory");
    std::string name(reinterpret_cast<const char*>(f + at + 46), name_len);
    for (uint64_t e = at + 46 + name_len; e + 4 <= at + 46 + name_len + extra_len;) {  // ZIP64 extra: the 0xffffffff fields
      uint16_t id = le<uint16_t>(f + e), len = le<uint16_t>(f + e + 2);
      if (e + 4 + len > at + 46 + name_len + extra_len) throw bad(name + ": a damaged extra field");
      if (id == 1) {
        uint64_t p = e + 4;
        auto take = [&](uint64_t& v) {
          if (v != 0xffffffff) return;
          if (p + 8 > e + 4 + len) throw bad(name + ": a short ZIP64 extra field");
          v = le<uint64_t>(f + p), p += 8;
        };
        take(usize), take(csize), take(local);
      }
      e += 4 + uint64_t{len};
    }
    if (method != 0) throw bad(name + " is compressed (method " + std::to_string(method) + "); torch.save stores its entries");
    if (csize != usize) throw bad(name + ": stored sizes differ");
    if (local > size || size - local < 30 || le<uint32_t>(f + local) != 0x04034b50) throw bad(name + ": no local header at its offset");
    uint64_t data = local + 30 + uint64_t{le<uint16_t>(f + local + 26)} + le<uint16_t>(f + local + 28);
    if (data > size || usize > size - data) throw bad(name + ": its data lies past the end of the file");
    if (!out.emplace(name, ZipEntry{data, usize}).second) throw bad(name + " appears twice");
    at = next;
  }
  return out;
}

// ---- the pickle machine ----

struct Obj;
using Ref = std::shared_ptr<Obj>;
struct Storage {
  DType dtype = dtypes::float32;
  std::string key;
  int64_t numel = 0;
};
struct Obj {
  enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor } kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  std::string s;              // Str; Global: "module.name"
  std::vector<Ref> items;     // Tuple, List
  std::vector<std::pair<Ref, Ref>> dict;
  Storage storage;
  Tensor tensor;
};
Ref make(Obj::Kind k) {
  auto r = std::make_shared<Obj>();
  r->kind = k;
  return r;
}

const std::pair<const char*, DType> kStorages[] = {
    {"FloatStorage", dtypes::float32}, {"DoubleStorage", dtypes::float64}, {"HalfStorage", dtypes::float16},
    {"BFloat16Storage", dtypes::bfloat16}, {"LongStorage", dtypes::int64}, {"IntStorage", dtypes::int32},
    {"ShortStorage", dtypes::int16}, {"CharStorage", dtypes::int8}, {"ByteStorage", dtypes::uint8},
    {"BoolStorage", dtypes::bool_},
};
// the callables a state dict's pickle names; anything else is refused
const char* const kAllowed[] = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor",
                                "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state"};

class Unpickler {
 public:
  Unpickler(const unsigned char* p, size_t n, const Bad& bad, std::function<Tensor(const Storage&)> storage_tensor)
      : p_(p), n_(n), bad_(bad), storage_tensor_(std::move(storage_tensor)) {}

  Ref run() {
    for (;;) {
      uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;                        // PROTO
        case 0x95: take(8); break;                       // FRAME (protocol 4): its length, nothing to do
        case '}': push(make(Obj::Kind::Dict)); break;    // EMPTY_DICT
        case ']': push(make(Obj::Kind::List)); break;    // EMPTY_LIST
        case ')': push(make(Obj::Kind::Tuple)); break;   // EMPTY_TUPLE
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case 'N': push(make(Obj::Kind::None)); break;
        case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
          Ref b = make(Obj::Kind::Bool);
          b->i = op == 0x88;
          push(b);
          break;
        }
        case 'J': push_int(le<int32_t>(take(4))); break;   // BININT
        case 'K': push_int(byte()); break;                 // BININT1
        case 'M': push_int(le<uint16_t>(take(2))); break;  // BININT2
        case 0x8a: {  // LONG1: a little-endian two's complement integer of n bytes (n <= 8 here)
          uint8_t n = byte();
          if (n > 8) throw bad_("an integer of " + std::to_string(n) + " bytes in the pickle");
          const unsigned char* d = take(n);
          uint64_t v = 0;
          for (uint8_t k = 0; k < n; k++) v |= uint64_t{d[k]} << (8 * k);
          if (n && n < 8 && (d[n - 1] & 0x80)) v |= ~uint64_t{0} << (8 * n);
          push_int(static_cast<int64_t>(v));
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          const unsigned char* d = take(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; k++) bits = bits << 8 | d[k];
          Ref x = make(Obj::Kind::Float);
          x->f = std::bit_cast<double>(bits);
          push(x);
          break;
        }
        case 'X': push_str(le<uint32_t>(take(4))); break;    // BINUNICODE
        case 0x8c: push_str(byte()); break;                  // SHORT_BINUNICODE
        case 0x8d: push_str(le<uint64_t>(take(8))); break;   // BINUNICODE8
        case 'B': push_str(le<uint32_t>(take(4))); break;    // BINBYTES (bytes kept as a string)
        case 'C': push_str(byte()); break;                   // SHORT_BINBYTES
        case 'q': memo_put(byte()); break;                   // BINPUT
        case 'r': memo_put(le<uint32_t>(take(4))); break;    // LONG_BINPUT
        case 0x94: memo_put(memo_.size()); break;            // MEMOIZE
        case 'h': memo_get(byte()); break;                   // BINGET
        case 'j': memo_get(le<uint32_t>(take(4))); break;    // LONG_BINGET
        case 'c': {  // GLOBAL "module\nname\n"
          std::string module = line(), name = line();
          push_global(module, name);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Ref name = pop(), module = pop();
          if (module->kind != Obj::Kind::Str || name->kind != Obj::Kind::Str) throw bad_("STACK_GLOBAL of non-strings");
          push_global(module->s, name->s);
          break;
        }
        case 't': push(tuple(pop_mark())); break;  // TUPLE
        case 0x85: case 0x86: case 0x87: {         // TUPLE1..3
          std::vector<Ref> items(op - 0x84);
          for (size_t k = items.size(); k-- > 0;) items[k] = pop();
          push(tuple(std::move(items)));
          break;
        }
        case 'l': {  // LIST
          Ref l = make(Obj::Kind::List);
          l->items = pop_mark();
          push(l);
          break;
        }
        case 'a': {  // APPEND
          Ref v = pop();
          list_of(top())->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Ref> items = pop_mark();
          Ref l = list_of(top());
          l->items.insert(l->items.end(), items.begin(), items.end());
          break;
        }
        case 'd': {  // DICT
          Ref d = make(Obj::Kind::Dict);
          set_items(d, pop_mark());
          push(d);
          break;
        }
        case 's': {  // SETITEM
          Ref v = pop(), k = pop();
          set_items(top(), {k, v});
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Ref> kv = pop_mark();
          set_items(top(), kv);
          break;
        }
        case 'Q': push(persistent(pop())); break;  // BINPERSID: a storage
        case 'R': {                                // REDUCE: callable(*args)
          Ref args = pop(), fn = pop();
          push(call(fn, args));
          break;
        }
        case 0x81: {  // NEWOBJ: cls.__new__(cls, *args): only an OrderedDict
          Ref args = pop(), cls = pop();
          push(call(cls, args));
          break;
        }
        case 'b': pop(); break;  // BUILD: an object's state (OrderedDict's _metadata): not needed
        case '.': return pop();  // STOP
        default: throw bad_("pickle opcode 0x" + hex(op) + " at byte " + std::to_string(at_ - 1) + " is not one torch.save writes");
      }
    }
  }

 private:
  uint8_t byte() { return *take(1); }
  const unsigned char* take(uint64_t n) {
    if (n > n_ - at_) throw bad_("the pickle ends in the middle of an opcode (byte " + std::to_string(at_) + ")");
    const unsigned char* r = p_ + at_;
    at_ += n;
    return r;
  }
  std::string line() {
    const unsigned char* end = static_cast<const unsigned char*>(std::memchr(p_ + at_, '\n', n_ - at_));
    if (!end) throw bad_("a GLOBAL without its newline");
    std::string s(reinterpret_cast<const char*>(p_ + at_), end - (p_ + at_));
    at_ = end - p_ + 1;
    return s;
  }
  static std::string hex(uint8_t b) {
    const char* d = "0123456789abcdef";
    return {d[b >> 4], d[b & 15]};
  }
  void push(Ref r) {
    if (stack_.size() > n_) throw bad_("the pickle's stack grows past its size");  // each push reads a byte
    stack_.push_back(std::move(r));
  }
  Ref pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) throw bad_("the pickle pops an empty stack");
    Ref r = stack_.back();
    stack_.pop_back();
    return r;
  }
  Ref top() {
    if (stack_.empty()) throw bad_("the pickle reads an empty stack");
    return stack_.back();
  }
  std::vector<Ref> pop_mark() {
    if (marks_.empty()) throw bad_("the pickle pops to a MARK it never set");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  void push_int(int64_t v) {
    Ref x = make(Obj::Kind::Int);
    x->i = v;
    push(x);
  }
  void push_str(uint64_t n) {
    Ref x = make(Obj::Kind::Str);
    const unsigned char* d = take(n);
    x->s.assign(reinterpret_cast<const char*>(d), n);
    push(x);
  }
  void memo_put(uint64_t k) {
    if (k > n_) throw bad_("a memo index of " + std::to_string(k) + " in a pickle of " + std::to_string(n_) + " bytes");
    if (k >= memo_.size()) memo_.resize(k + 1);
    memo_[k] = top();
  }
  void memo_get(uint64_t k) {
    if (k >= memo_.size() || !memo_[k]) throw bad_("the pickle reads memo entry " + std::to_string(k) + ", never stored");
    push(memo_[k]);
  }
  void push_global(const std::string& module, const std::string& name) {
    std::string full = module + "." + name;
    bool ok = module == "torch" && std::any_of(std::begin(kStorages), std::end(kStorages), [&](auto& s) { return name == s.first; });
    for (const char* a : kAllowed) ok = ok || full == a;
    if (!ok) throw bad_("the pickle names " + full + ", which a checkpoint of tensors does not need: refused, nothing was run");
    Ref g = make(Obj::Kind::Global);
    g->s = full;
    push(g);
  }
  static Ref tuple(std::vector<Ref> items) {
    Ref t = make(Obj::Kind::Tuple);
    t->items = std::move(items);
    return t;
  }
  Ref list_of(const Ref& r) {
    if (r->kind != Obj::Kind::List) throw bad_("APPEND to something that is not a list");
    return r;
  }
  void set_items(const Ref& d, const std::vector<Ref>& kv) {
    if (d->kind != Obj::Kind::Dict || kv.size() % 2) throw bad_("SETITEMS on something that is not a dict");
    for (size_t k = 0; k < kv.size(); k += 2) d->dict.emplace_back(kv[k], kv[k + 1]);
  }
  int64_t int_of(const Ref& r, const char* what) {
    if (r->kind != Obj::Kind::Int) throw bad_(std::string(what) + " is not an integer");
    return r->i;
  }
  Shape ints_of(const Ref& r, const char* what) {
    if (r->kind != Obj::Kind::Tuple) throw bad_(std::string(what) + " is not a tuple");
    Shape out;
    for (const Ref& x : r->items) out.push_back(int_of(x, what));
    return out;
  }
  // ('storage', torch.FloatStorage, key, location, numel)
  Ref persistent(const Ref& pid) {
    if (pid->kind != Obj::Kind::Tuple || pid->items.size() != 5 || pid->items[0]->kind != Obj::Kind::Str ||
        pid->items[0]->s != "storage" || pid->items[1]->kind != Obj::Kind::Global || pid->items[2]->kind != Obj::Kind::Str)
      throw bad_("a persistent id that is not ('storage', type, key, location, numel)");
    Ref s = make(Obj::Kind::Storage);
    const std::string& type = pid->items[1]->s;
    auto it = std::find_if(std::begin(kStorages), std::end(kStorages), [&](auto& k) { return type == std::string("torch.") + k.first; });
    if (it == std::end(kStorages)) throw bad_("storage type " + type + " is not supported");
    s->storage = {it->second, pid->items[2]->s, int_of(pid->items[4], "a storage's size")};
    if (s->storage.numel < 0) throw bad_("a storage of negative size");
    if (!storages_.count(s->storage.key)) storages_[s->storage.key] = storage_tensor_(s->storage);
    return s;
  }
  Ref call(const Ref& fn, const Ref& args) {
    if (fn->kind != Obj::Kind::Global || args->kind != Obj::Kind::Tuple) throw bad_("REDUCE of something that is not a known callable");
    const std::string& name = fn->s;
    const std::vector<Ref>& a = args->items;
    if (name == "collections.OrderedDict") return make(Obj::Kind::Dict);
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
      if (a.size() < 4 || a[0]->kind != Obj::Kind::Storage) throw bad_(name + " without (storage, offset, size, stride)");
      Ref t = make(Obj::Kind::Tensor);
      t->tensor = view(storages_.at(a[0]->storage.key), int_of(a[1], "a storage offset"), ints_of(a[2], "a tensor size"),
                       ints_of(a[3], "a tensor stride"));
      return t;
    }
    if (name.starts_with("torch._utils._rebuild_parameter")) {
      if (a.empty() || a[0]->kind != Obj::Kind::Tensor) throw bad_(name + " without a tensor");
      return a[0];
    }
    throw bad_("the pickle calls " + name + ", which is not a callable here");
  }
  // the tensor of `size` and `stride` from `offset` in a flat storage: a reshape where it is contiguous, else a
  // gather of the positions (which the scheduler turns into direct reads)
  Tensor view(const Tensor& flat, int64_t offset, const Shape& size, const Shape& stride) {
    if (size.size() != stride.size()) throw bad_("a tensor's size and stride differ in length");
    // the offset is in the storage before any arithmetic on it (the storage holds at most 2^60 elements)
    if (offset < 0 || offset > flat.numel())
      throw bad_("a tensor's storage offset " + std::to_string(offset) + " is outside its storage of " + std::to_string(flat.numel()) +
                 " elements");
    int64_t numel = 1, last = offset;
    for (size_t d = 0; d < size.size(); d++) {
      if (size[d] < 0 || stride[d] < 0) throw bad_("a negative size or stride");
      if (size[d] && numel > (int64_t{1} << 60) / size[d]) throw bad_("a tensor of more than 2^60 elements");
      numel *= size[d];
      if (size[d] > 0 && stride[d] > ((int64_t{1} << 60) - last) / size[d]) throw bad_("a tensor's strides reach past 2^60");
      if (size[d] > 0) last += (size[d] - 1) * stride[d];
    }
    if (numel == 0) return Tensor::empty(size, flat.dtype(), flat.device());
    if (last >= flat.numel())
      throw bad_("a tensor reads elements up to " + std::to_string(last) + " of a storage of " + std::to_string(flat.numel()));
    bool contiguous = true;
    for (int64_t d = static_cast<int64_t>(size.size()) - 1, s = 1; d >= 0; d--) {
      if (size[d] != 1 && stride[d] != s) contiguous = false;
      s *= size[d];
    }
    if (contiguous) return flat.shrink({{offset, offset + numel}}).reshape(size);
    Tensor index = Tensor::full({}, static_cast<double>(offset), dtypes::int64, flat.device());
    for (size_t d = 0; d < size.size(); d++) {
      Shape at(size.size(), 1);
      at[d] = size[d];
      index = index + Tensor::arange(0, static_cast<double>(size[d]), 1, dtypes::int64, flat.device()).reshape(at) * stride[d];
    }
    return flat[{index}];
  }

  const unsigned char* p_;
  size_t n_, at_ = 0;
  Bad bad_;
  std::function<Tensor(const Storage&)> storage_tensor_;
  std::vector<Ref> stack_, memo_;
  std::vector<size_t> marks_;
  std::map<std::string, Tensor> storages_;
};

// a dict's tensors under their keys (nested dicts as "outer.inner"); other values are skipped
void collect(const Ref& d, const std::string& prefix, StateDict& out, const Bad& bad, int depth) {
  if (depth > 16) throw bad("dicts nested deeper than 16");
  for (const auto& [k, v] : d->dict) {
    std::string key = k->kind == Obj::Kind::Str ? k->s : k->kind == Obj::Kind::Int ? std::to_string(k->i) : "";
    if (key.empty()) continue;
    if (v->kind == Obj::Kind::Tensor) out[prefix + key] = v->tensor;
    else if (v->kind == Obj::Kind::Dict) collect(v, prefix + key + ".", out, bad, depth + 1);
  }
}

}  // namespace

StateDict torch_load(const std::string& path, const std::string& device, SourceLocation where) {
  Bad bad{path, where};
  size_t size = 0;
  std::shared_ptr<const unsigned char> map = state::map_file(path, size, kOp, where);
  std::map<std::string, ZipEntry> entries = read_zip(map.get(), size, bad);
  std::string pkl;  // "<archive name>/data.pkl"
  for (const auto& [name, e] : entries)
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) pkl = name;
  if (pkl.empty()) throw bad("no <name>/data.pkl in the archive: not a torch.save file");
  std::string prefix = pkl.substr(0, pkl.size() - 8);
  if (auto bo = entries.find(prefix + "byteorder"); bo != entries.end() &&
      std::string(reinterpret_cast<const char*>(map.get() + bo->second.offset), bo->second.size) != "little")
    throw bad("a big-endian checkpoint is not supported");
  std::string dev = tensor::resolve_device(device);
  auto storage_tensor = [&](const Storage& s) {
    auto it = entries.find(prefix + "data/" + s.key);
    if (it == entries.end()) throw bad("storage " + s.key + " is not in the archive");
    uint64_t bytes = static_cast<uint64_t>(s.numel) * static_cast<uint64_t>(s.dtype.itemsize());
    if (s.numel > (int64_t{1} << 60) || it->second.size < bytes)
      throw bad("storage " + s.key + " holds " + std::to_string(it->second.size) + " bytes, not the " + std::to_string(s.numel) +
                " elements of " + s.dtype.name() + " its tensors need");
    uop::UOp buf = runtime::new_buffer(dev, s.dtype, s.numel);
    // its bytes in place, or copied on first use (Buffer::fill_lazily)
    if (s.numel) runtime::buffer_of(buf).fill_lazily(map.get() + it->second.offset, map);
    return Tensor(buf);
  };
  const ZipEntry& p = entries.at(pkl);
  Ref root = Unpickler(map.get() + p.offset, p.size, bad, storage_tensor).run();
  if (root->kind != Obj::Kind::Dict) throw bad("the checkpoint is not a dict of tensors");
  StateDict out;
  collect(root, "", out, bad, 0);
  return out;
}

}  // namespace tg
