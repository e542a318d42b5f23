// Ops decided on the host: the shape of their output depends on the input's values (NonMaxSuppression, Unique) or
// they are dictionary lookups (TfIdfVectorizer). The inputs they decide on are realized and read back; the outputs
// are tensors on the op's device again (Unique's values are gathered from the input there).
#include <algorithm>
#include <map>
#include <numeric>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

int64_t len(size_t v) { return static_cast<int64_t>(v); }

// NonMaxSuppression's overlap test: IoU of two boxes above the threshold. Boxes are (y1, x1, y2, x2) with the corners
// in either order, or (x_center, y_center, width, height).
bool overlaps(const double* a, const double* b, bool center, double threshold) {
  auto span = [&](const double* box, int lo, int hi) {
    if (center) return std::pair<double, double>{box[lo] - box[hi] / 2, box[lo] + box[hi] / 2};
    return std::pair<double, double>{std::min(box[lo], box[hi]), std::max(box[lo], box[hi])};
  };
  auto [ax0, ax1] = center ? span(a, 0, 2) : span(a, 1, 3);
  auto [ay0, ay1] = center ? span(a, 1, 3) : span(a, 0, 2);
  auto [bx0, bx1] = center ? span(b, 0, 2) : span(b, 1, 3);
  auto [by0, by1] = center ? span(b, 1, 3) : span(b, 0, 2);
  double iw = std::min(ax1, bx1) - std::max(ax0, bx0), ih = std::min(ay1, by1) - std::max(ay0, by0);
  if (iw <= 0 || ih <= 0) return false;
  double inter = iw * ih, area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// Unique over rows of `cols` values each: the first occurrence of each distinct row (in sorted row order or in order
// of appearance), each row's distinct-row number, and the counts.
template <typename T>
void unique_rows(const std::vector<T>& v, int64_t rows, int64_t cols, bool sorted, std::vector<int64_t>& first,
                 std::vector<int64_t>& inverse, std::vector<int64_t>& counts) {
  auto less = [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(v.begin() + a * cols, v.begin() + (a + 1) * cols, v.begin() + b * cols, v.begin() + (b + 1) * cols);
  };
  std::vector<int64_t> order(u(rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);  // equal rows keep their order: the first comes first
  std::vector<int64_t> group(u(rows));                  // row -> its group's first row
  for (size_t k = 0; k < order.size(); k++)
    group[u(order[k])] = k > 0 && !less(order[k - 1], order[k]) ? group[u(order[k - 1])] : order[k];
  std::vector<int64_t> heads;
  if (sorted) {
    for (size_t k = 0; k < order.size(); k++) if (group[u(order[k])] == order[k]) heads.push_back(order[k]);
  } else {
    for (int64_t r = 0; r < rows; r++) if (group[u(r)] == r) heads.push_back(r);
  }
  std::map<int64_t, int64_t> number;
  for (size_t k = 0; k < heads.size(); k++) number[heads[k]] = len(k);
  first = heads;
  counts.assign(heads.size(), 0);
  inverse.resize(u(rows));
  for (int64_t r = 0; r < rows; r++) inverse[u(r)] = number[group[u(r)]], counts[u(inverse[u(r)])]++;
}

}  // namespace

void register_host_ops(OpTable& t) {
  t["NonMaxSuppression"] = [](OpContext& c) {
    const Tensor &boxes = c.in(0), &scores = c.in(1);
    if (boxes.ndim() != 3 || boxes.shape()[2] != 4) c.fail_shape("boxes must be (batches, boxes, 4), it is " + tensor::shape_str(boxes.shape()));
    int64_t nb = boxes.shape()[0], nbox = boxes.shape()[1];
    if (scores.ndim() != 3 || scores.shape()[0] != nb || scores.shape()[2] != nbox)
      c.fail_shape("scores must be (" + std::to_string(nb) + ", classes, " + std::to_string(nbox) + "), it is " + tensor::shape_str(scores.shape()));
    int64_t ncls = scores.shape()[1];
    bool center = c.attr_int("center_point_box", 0) != 0;
    int64_t max_out = c.has(2) && c.in(2).numel() ? std::max<int64_t>(c.int_scalar(2), 0) : 0;
    double iou = c.has(3) && c.in(3).numel() ? c.float_scalar(3) : 0.0;
    std::optional<double> score_min;
    if (c.has(4) && c.in(4).numel()) score_min = c.float_scalar(4);
    std::vector<double> b = c.floats(0), s = c.floats(1);
    std::vector<int64_t> out;
    for (int64_t bi = 0; bi < nb; bi++)
      for (int64_t ci = 0; ci < ncls; ci++) {
        const double* sc = s.data() + (bi * ncls + ci) * nbox;
        std::vector<int64_t> cand;
        for (int64_t k = 0; k < nbox; k++) if (!score_min || sc[k] > *score_min) cand.push_back(k);
        // highest score first; ties by the lower index
        std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
        std::vector<int64_t> kept;
        for (int64_t k : cand) {
          if (len(kept.size()) >= max_out) break;
          const double* box = b.data() + (bi * nbox + k) * 4;
          bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t j) { return overlaps(box, b.data() + (bi * nbox + j) * 4, center, iou); });
          if (suppressed) continue;
          kept.push_back(k);
          out.insert(out.end(), {bi, ci, k});
        }
      }
    return std::vector<Value>{host_tensor(out, dtypes::int64, {len(out.size()) / 3, 3}, c.device)};
  };
  t["Unique"] = [](OpContext& c) {
    Tensor x = c.in(0);
    bool sorted = c.attr_int("sorted", 1) != 0;
    int64_t axis = 0;
    if (c.has_attr("axis")) axis = c.axis(c.attr_int("axis"), x.ndim());
    else x = x.flatten();
    if (x.ndim() == 0) x = x.reshape({1});
    // rows: the slices along the axis, each flattened
    Tensor rows = x.ndim() > 1 ? x.transpose(0, axis).flatten(1) : x.reshape({-1, 1});
    int64_t n = rows.shape()[0], m = rows.shape()[1];
    std::vector<int64_t> first, inverse, counts;
    if (x.dtype().is_float()) unique_rows(rows.cast(dtypes::float64).to_vector<double>(), n, m, sorted, first, inverse, counts);
    else unique_rows(rows.cast(dtypes::int64).to_vector<int64_t>(), n, m, sorted, first, inverse, counts);
    int64_t k = len(first.size());
    Tensor idx = host_tensor(first, dtypes::int64, {k}, c.device);
    std::vector<Index> ix = full_slices(axis);
    ix.push_back(Index(idx));
    return std::vector<Value>{x.getitem(ix), idx, host_tensor(inverse, dtypes::int64, {n}, c.device), host_tensor(counts, dtypes::int64, {k}, c.device)};
  };
  t["TfIdfVectorizer"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.dtype() != dtypes::int32 && x.dtype() != dtypes::int64) c.fail_dtype("X must be int32 or int64 (strings are not supported), it is " + x.dtype().name());
    if (x.ndim() > 2) c.fail_shape("X must be (C) or (N, C), it is " + tensor::shape_str(x.shape()));
    int64_t min_n = c.attr_int("min_gram_length"), max_n = c.attr_int("max_gram_length"), max_skip = c.attr_int("max_skip_count");
    std::string mode = c.attr_string("mode");
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF") c.fail("mode must be TF, IDF or TFIDF, it is '" + mode + "'");
    if (min_n < 1 || max_n < min_n || max_skip < 0) c.fail("needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
    std::vector<int64_t> counts = c.attr_ints("ngram_counts"), indexes = c.attr_ints("ngram_indexes");
    std::vector<int64_t> pool = c.attr_ints("pool_int64s", std::vector<int64_t>{});
    if (c.has_attr("pool_strings")) c.fail("pool_strings is not supported (tinygrad.cpp has no string tensors)");
    std::vector<double> weights = c.attr_floats("weights", std::vector<double>{});
    // the pool holds the 1-grams from counts[0], the 2-grams from counts[1], ...; the k-th n-gram of the whole pool
    // counts into output indexes[k]
    std::map<std::vector<int64_t>, int64_t> grams;
    size_t gram = 0;
    for (size_t g = 0; g < counts.size(); g++) {
      int64_t size = len(g) + 1, lo = counts[g], hi = g + 1 < counts.size() ? counts[g + 1] : len(pool.size());
      if (lo < 0 || hi < lo || hi > len(pool.size()) || (hi - lo) % size) c.fail("ngram_counts does not split pool_int64s into whole n-grams");
      for (int64_t p = lo; p < hi; p += size, gram++) {
        if (gram >= indexes.size()) c.fail("ngram_indexes has fewer entries than the pool has n-grams");
        if (size >= min_n && size <= max_n) grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + size)] = indexes[gram];
      }
    }
    int64_t width = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (!indexes.empty() && *std::min_element(indexes.begin(), indexes.end()) < 0) c.fail("ngram_indexes must not be negative");
    if (!weights.empty() && len(weights.size()) < width) c.fail("weights needs " + std::to_string(width) + " values");
    int64_t rows = x.ndim() == 2 ? x.shape()[0] : 1, cols = x.ndim() == 0 ? 1 : x.shape().back();
    std::vector<int64_t> v = c.ints(0);
    std::vector<double> freq(u(rows * width), 0);
    std::vector<int64_t> key;
    for (int64_t r = 0; r < rows; r++) {
      const int64_t* row = v.data() + r * cols;
      int64_t start_n = min_n;
      for (int64_t d = 1; d <= max_skip + 1 && start_n <= max_n; d++) {
        for (int64_t i = 0; i + d * (start_n - 1) < cols; i++) {
          key.clear();
          for (int64_t n = 1, at = i; n <= max_n && at < cols; n++, at += d) {
            key.push_back(row[at]);
            if (n < start_n) continue;
            if (auto it = grams.find(key); it != grams.end()) freq[u(r * width + it->second)]++;
          }
        }
        if (start_n == 1) start_n = 2;  // 1-grams are counted once, not once per skip distance
      }
    }
    for (size_t k = 0; k < freq.size(); k++) {
      double w = weights.empty() ? 1.0 : weights[k % u(width)];
      freq[k] = mode == "TF" ? freq[k] : mode == "IDF" ? (freq[k] > 0 ? w : 0.0) : freq[k] * w;
    }
    Shape out = x.ndim() == 2 ? Shape{rows, width} : Shape{width};
    return std::vector<Value>{host_tensor(freq, dtypes::float32, out, c.device)};
  };
}

}  // namespace tg::onnx
