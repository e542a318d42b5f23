#include "uop/arg.h"

#include "uop/sint.h"

#include <algorithm>

namespace tg::uop {

namespace {
uint64_t hash_string(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: the same in every run, unlike a seeded hash
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
}  // namespace

Arg::Arg(std::vector<Dim> xs) {
  if (std::any_of(xs.begin(), xs.end(), [](const Dim& d) { return d.is_symbolic(); })) {
    v_ = std::move(xs);
    return;
  }
  std::vector<int64_t> ints;
  for (const Dim& d : xs) ints.push_back(d.min());
  v_ = std::move(ints);
}

uint64_t Arg::hash() const {
  uint64_t h = hash_mix(0, v_.index());
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, ConstValue>) {
          h = hash_mix(hash_mix(h, x.index()), const_to_bits(x));
        } else if constexpr (std::is_same_v<T, int64_t>) {
          h = hash_mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = hash_mix(h, hash_string(x));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t i : x) h = hash_mix(h, static_cast<uint64_t>(i));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          h = hash_mix(hash_mix(h, hash_string(x.name)), static_cast<uint64_t>(x.min));
          h = hash_mix(h, static_cast<uint64_t>(x.max));
        } else if constexpr (std::is_same_v<T, Ops>) {
          h = hash_mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, std::vector<Dim>>) {
          for (const Dim& d : x) h = hash_mix(h, d.hash());
        } else {
          h = hash_mix(h, x ? x->hash() : 0);
        }
      },
      v_);
  return h;
}

bool Arg::operator==(const Arg& o) const {
  if (v_.index() != o.v_.index()) return false;
  if (auto* a = std::get_if<ConstValue>(&v_)) {
    const ConstValue& b = std::get<ConstValue>(o.v_);
    return a->index() == b.index() && const_to_bits(*a) == const_to_bits(b);
  }
  if (auto* a = std::get_if<std::shared_ptr<const ArgExt>>(&v_)) {
    const auto& b = std::get<std::shared_ptr<const ArgExt>>(o.v_);
    return *a == b || (*a && b && (*a)->equals(*b));
  }
  return v_ == o.v_;
}

std::string Arg::repr() const {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, ConstValue>) {
          return const_repr(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); i++) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + (x.size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, VarArg>) {
          return "('" + x.name + "', " + std::to_string(x.min) + ", " + std::to_string(x.max) + ")";
        } else if constexpr (std::is_same_v<T, Ops>) {
          return "Ops." + std::string(op_name(x));
        } else if constexpr (std::is_same_v<T, std::vector<Dim>>) {
          return dims_str(x);
        } else {
          return x ? x->repr() : "None";
        }
      },
      v_);
}

}  // namespace tg::uop
