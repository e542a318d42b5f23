#include "support/shapetracker_check.h"

#include <algorithm>
#include <numeric>

namespace tg::testing {

using Shape = IntShape;
using Ranges = IntRanges;
using shape::ShapeTracker;

namespace {

// row-major positions of a shape, in order
bool next_position(std::vector<int64_t>& pos, const Shape& shape) {
  for (size_t i = shape.size(); i-- > 0;) {
    if (++pos[i] < shape[i]) return true;
    pos[i] = 0;
  }
  return false;
}

int64_t flat_of(const std::vector<int64_t>& pos, const Shape& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); i++) f = f * shape[i] + pos[i];
  return f;
}

std::string vec_str(const std::vector<int64_t>& v) { return shape::shape_str(v); }
shape::Ranges dim_ranges(const Ranges& r) { return shape::Ranges(r.begin(), r.end()); }

}  // namespace

RefArray RefArray::arange(const Shape& s) {
  RefArray r{s, std::vector<int64_t>(shape::prod(s))};
  std::iota(r.ids.begin(), r.ids.end(), 0);
  return r;
}

RefArray RefArray::gather(const Shape& s,
                          const std::function<std::optional<std::vector<int64_t>>(const std::vector<int64_t>&)>& old_pos) const {
  RefArray out{s, {}};
  if (shape::prod(s) == 0) return out;
  std::vector<int64_t> pos(s.size(), 0);
  do {
    std::optional<std::vector<int64_t>> o = old_pos(pos);
    out.ids.push_back(o ? ids[flat_of(*o, shape)] : -1);
  } while (next_position(pos, s));
  return out;
}

RefArray RefArray::permute(const std::vector<int64_t>& order) const {
  Shape s;
  for (int64_t a : order) s.push_back(shape[a]);
  return gather(s, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> o(p.size());
    for (size_t i = 0; i < order.size(); i++) o[order[i]] = p[i];
    return std::optional(o);
  });
}

RefArray RefArray::expand(const Shape& s) const {
  return gather(s, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> o(p);
    for (size_t i = 0; i < p.size(); i++)
      if (shape[i] == 1) o[i] = 0;
    return std::optional(o);
  });
}

RefArray RefArray::pad(const Ranges& before_after) const {
  Shape s;
  for (size_t i = 0; i < shape.size(); i++) s.push_back(shape[i] + before_after[i].first + before_after[i].second);
  return gather(s, [&](const std::vector<int64_t>& p) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> o(p);
    for (size_t i = 0; i < p.size(); i++) {
      o[i] = p[i] - before_after[i].first;
      if (o[i] < 0 || o[i] >= shape[i]) return std::nullopt;
    }
    return o;
  });
}

RefArray RefArray::shrink(const Ranges& ranges) const {
  Shape s;
  for (const auto& [b, e] : ranges) s.push_back(e - b);
  return gather(s, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> o(p);
    for (size_t i = 0; i < p.size(); i++) o[i] = p[i] + ranges[i].first;
    return std::optional(o);
  });
}

RefArray RefArray::stride(const std::vector<int64_t>& steps) const {
  Shape s;
  for (size_t i = 0; i < shape.size(); i++) {
    int64_t k = std::abs(steps[i]);
    s.push_back((shape[i] + k - 1) / k);
  }
  return gather(s, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> o(p);
    for (size_t i = 0; i < p.size(); i++) o[i] = steps[i] > 0 ? p[i] * steps[i] : shape[i] - 1 + p[i] * steps[i];
    return std::optional(o);
  });
}

RefArray RefArray::flip(const std::vector<bool>& axes) const {
  std::vector<int64_t> steps;
  for (bool f : axes) steps.push_back(f ? -1 : 1);
  return stride(steps);
}

IndexProgram::IndexProgram(const uop::UOp& root) {
  using uop::Ops;
  std::vector<uop::UOp> nodes = root.toposort();
  auto slot = [&](const uop::UOp& u) {
    return static_cast<int>(std::find(nodes.begin(), nodes.end(), u) - nodes.begin());
  };
  for (const uop::UOp& u : nodes) {
    Step s{u.op(), -1, -1, -1, 0};
    if (u.op() == Ops::CONST) s.value = const_to_int(u.const_value());
    if (u.op() == Ops::DEFINE_VAR) s.value = std::stoll(u.arg().get<uop::VarArg>().name.substr(3));  // "idxN"
    if (u.src().size() > 0) s.a = slot(u.src(0));
    if (u.src().size() > 1) s.b = slot(u.src(1));
    if (u.src().size() > 2) s.c = slot(u.src(2));
    steps_.push_back(s);
  }
  regs_.resize(steps_.size());
}

int64_t IndexProgram::operator()(const std::vector<int64_t>& idx) const {
  using uop::Ops;
  for (size_t i = 0; i < steps_.size(); i++) {
    const Step& s = steps_[i];
    int64_t a = s.a >= 0 ? regs_[s.a] : 0, b = s.b >= 0 ? regs_[s.b] : 0;
    int64_t& r = regs_[i];
    switch (s.op) {
      case Ops::CONST: r = s.value; break;
      case Ops::DEFINE_VAR: r = idx.at(s.value); break;
      case Ops::ADD: r = a + b; break;
      case Ops::MUL: r = a * b; break;
      case Ops::NEG: r = -a; break;
      case Ops::IDIV: r = b == 0 ? 0 : a / b; break;
      case Ops::MOD: r = b == 0 ? 0 : a % b; break;
      case Ops::MAX: r = std::max(a, b); break;
      case Ops::CMPLT: r = a < b; break;
      case Ops::CMPNE: r = a != b; break;
      case Ops::AND: r = a & b; break;
      case Ops::OR: r = a | b; break;
      case Ops::XOR: r = a ^ b; break;
      case Ops::WHERE: r = a ? b : regs_[s.c]; break;
      case Ops::CAST: r = a; break;
      default: throw std::runtime_error(std::string("IndexProgram: unexpected op ") + std::string(uop::op_name(s.op)));
    }
  }
  return regs_.back();
}

Shape MovementFuzzer::random_shape(int max_dims, int64_t max_size) {
  Shape s(rand_int(0, max_dims));
  for (auto& d : s) d = rand_int(0, 15) == 0 ? 0 : rand_int(1, max_size);
  return s;
}

namespace {

// a random shape with `total` elements: prime factors dealt into dimensions, ones sprinkled in
Shape random_factoring(MovementFuzzer& f, int64_t total, int max_dims) {
  if (total == 0) {
    Shape s = f.random_shape(max_dims - 1);
    s.insert(s.begin() + f.rand_int(0, s.size()), 0);
    return s;
  }
  std::vector<int64_t> primes;
  for (int64_t p = 2, n = total; n > 1; p++)
    while (n % p == 0) primes.push_back(p), n /= p;
  int dims = static_cast<int>(f.rand_int(std::min<int64_t>(1, primes.size()), max_dims));
  Shape s(dims, 1);
  for (int64_t p : primes) s[f.rand_int(0, dims - 1)] *= p;
  return s;
}

}  // namespace

std::string MovementFuzzer::step(ShapeTracker& st, RefArray& ref) {
  const Shape sh = shape::ints(st.shape(), "fuzz");
  const size_t n = sh.size();
  constexpr int64_t kMaxElements = 6000;
  for (;;) {
    switch (rand_int(0, 7)) {
      case 0: case 1: {  // reshape: a random factoring, or splitting / merging neighbours (the absorbable kind)
        Shape s;
        if (rand_int(0, 1) == 0 || n == 0) {
          s = random_factoring(*this, st.size().concrete("fuzz"), 5);
        } else {
          s = sh;
          size_t i = rand_int(0, n - 1);
          if (i + 1 < n && rand_int(0, 1)) {
            s[i] *= s[i + 1];
            s.erase(s.begin() + i + 1);
          } else if (s.size() < 5) {
            Shape parts = random_factoring(*this, s[i], 2);
            while (parts.size() < 2) parts.push_back(1);
            s[i] = parts[0];
            s.insert(s.begin() + i + 1, parts[1]);
          }
        }
        st = st.reshape(shape::dims(s)), ref = ref.reshape(s);
        return "reshape" + shape::shape_str(s);
      }
      case 2: {
        std::vector<int64_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        st = st.permute(order), ref = ref.permute(order);
        return "permute" + vec_str(order);
      }
      case 3: {
        Shape s = sh;
        bool any = false;
        for (auto& d : s)
          if (d == 1 && rand_int(0, 2)) d = rand_int(0, 4), any = true;
        if (!any || shape::prod(s) > kMaxElements) continue;
        st = st.expand(shape::dims(s)), ref = ref.expand(s);
        return "expand" + shape::shape_str(s);
      }
      case 4: {
        Ranges r;
        Shape s;
        for (size_t i = 0; i < n; i++) {
          r.emplace_back(rand_int(0, 2) ? 0 : rand_int(1, 2), rand_int(0, 2) ? 0 : rand_int(1, 2));
          s.push_back(sh[i] + r.back().first + r.back().second);
        }
        if (shape::prod(s) > kMaxElements) continue;
        st = st.pad(dim_ranges(r)), ref = ref.pad(r);
        return "pad" + shape::ranges_str(dim_ranges(r));
      }
      case 5: {
        Ranges r;
        for (size_t i = 0; i < n; i++) {
          int64_t b = rand_int(0, sh[i]), e = rand_int(b, sh[i]);
          if (rand_int(0, 2) == 0) b = 0, e = sh[i];
          r.emplace_back(b, e);
        }
        st = st.shrink(dim_ranges(r)), ref = ref.shrink(r);
        return "shrink" + shape::ranges_str(dim_ranges(r));
      }
      case 6: {
        std::vector<int64_t> steps;
        for (size_t i = 0; i < n; i++) {
          int64_t k = rand_int(1, 3) * (rand_int(0, 1) ? 1 : -1);
          steps.push_back(rand_int(0, 1) ? k : 1);
        }
        st = st.stride(steps), ref = ref.stride(steps);
        return "stride" + vec_str(steps);
      }
      default: {
        std::vector<bool> axes;
        std::string desc = "flip(";
        for (size_t i = 0; i < n; i++) {
          axes.push_back(rand_int(0, 1) == 1);
          desc += axes.back() ? "T" : "F";
        }
        st = st.flip(axes), ref = ref.flip(axes);
        return desc + ")";
      }
    }
  }
}

std::string compare_with_reference(const ShapeTracker& st, const RefArray& ref) {
  if (st.shape() != shape::dims(ref.shape)) return "shape " + shape::shape_str(st.shape()) + " != reference " + shape::shape_str(ref.shape);
  if (st.size() == Dim(0)) return "";
  auto [idx, valid] = st.to_indexed();
  IndexProgram index(idx), is_valid(valid);
  std::vector<int64_t> pos(ref.shape.size(), 0);
  size_t flat = 0;
  do {
    int64_t want = ref.ids[flat++];
    bool v = is_valid(pos) != 0;
    int64_t got = v ? index(pos) : -1;
    bool in_bounds = got < st.real_size() && got >= -1;
    if (got != want || !in_bounds)
      return "at " + vec_str(pos) + ": index " + std::to_string(got) + (in_bounds ? "" : " (outside real_size)") +
             ", reference " + std::to_string(want) + "; index " + idx.render() + ", valid " + valid.render() + "; " +
             st.repr();
  } while (next_position(pos, ref.shape));
  return "";
}

std::string fuzz_movement_chains(uint64_t seed, int chains, int max_ops) {
  MovementFuzzer f(seed);
  for (int c = 0; c < chains; c++) {
    Shape s = f.random_shape();
    ShapeTracker st = ShapeTracker::from_shape(shape::dims(s));
    RefArray ref = RefArray::arange(s);
    std::string chain = "from_shape" + shape::shape_str(s);
    int ops = static_cast<int>(f.rand_int(1, max_ops));
    for (int k = 0; k < ops; k++) {
      try {
        chain += "." + f.step(st, ref);
        std::string err = compare_with_reference(st, ref);
        if (err.empty()) err = compare_with_reference(st.simplify(), ref);
        if (!err.empty()) return "chain " + std::to_string(c) + ": " + chain + "\n  " + err;
      } catch (const std::exception& e) {
        return "chain " + std::to_string(c) + ": " + chain + "\n  exception: " + e.what();
      }
    }
  }
  return "";
}

}  // namespace tg::testing
