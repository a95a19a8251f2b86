//===- RowKernels.cpp - The emulator's vector kernels ---------------------===//
#include "wafer/Runtime/RowKernels.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "llvm/Support/FormatVariadic.h"

namespace wafer::rt::kernels {

void elementwise(Opcode op, const float *a, const float *b, float *out,
                 int64_t count) {
  // One loop per opcode, not a switch per element: the loops vectorise.
  auto apply = [&](auto f) {
    for (int64_t i = 0; i < count; ++i)
      out[i] = f(a[i], b[i]);
  };
  switch (op) {
  case Opcode::Add:
    return apply([](float x, float y) { return x + y; });
  case Opcode::Mul:
    return apply([](float x, float y) { return x * y; });
  case Opcode::Max:
    return apply([](float x, float y) { return std::max(x, y); });
  case Opcode::Swiglu:
    return apply(
        [](float x, float y) { return x / (1.0f + std::exp(-x)) * y; });
  default:
    return apply([](float, float) { return 0.0f; });
  }
}

/// The head of local lane j when the first is `first`, n lanes a head; -1
/// before lane 0. Lane indices are clamped (a malformed bundle's expression
/// may be anything), so the sum cannot overflow.
static int64_t laneHead(int64_t first, int64_t j, int64_t n) {
  int64_t lane =
      std::clamp<int64_t>(first, -(int64_t(1) << 50), int64_t(1) << 50) + j;
  return lane < 0 ? -1 : lane / n;
}

/// A global position clamped far beyond any sequence.
static int64_t clampPosition(int64_t p) {
  return std::clamp<int64_t>(p, -(int64_t(1) << 50), int64_t(1) << 50);
}

/// Calls f(j, head, qi, q) for every local lane j of one of `heads` KV
/// heads, query row qi < k and query head q < groups of the prefill lane
/// kernels (lanes outside the heads hold padding and are skipped).
template <typename F>
static void forEachLaneQuery(const RowArgs &r, int64_t heads, F f) {
  for (int64_t j = 0; j < r.m; ++j) {
    int64_t head = laneHead(r.expr, j, r.n);
    if (head < 0 || head >= heads)
      continue;
    for (int64_t qi = 0; qi < r.k; ++qi)
      for (int64_t q = 0; q < r.groups; ++q)
        f(j, head, qi, q);
  }
}

RowResult rowKernel(Opcode op, const RowArgs &r) {
  const int64_t m = r.m, g = r.groups, k = r.k, n = r.n;
  float *out = r.out;
  switch (op) {
  case Opcode::Reduce: {
    auto kind = ReduceKind(k);
    for (int64_t i = 0; i < m; ++i) {
      const float *row = r.a + i * n;
      float acc = kind == ReduceKind::Max
                      ? -std::numeric_limits<float>::infinity()
                      : 0.0f;
      for (int64_t j = 0; j < n; ++j)
        acc = kind == ReduceKind::Max        ? std::max(acc, row[j])
              : kind == ReduceKind::SumSquares ? acc + row[j] * row[j]
                                               : acc + row[j];
      out[i] = acc;
    }
    break;
  }
  case Opcode::RmsScale: {
    for (int64_t i = 0; i < m; ++i) {
      float scale =
          1.0f / std::sqrt(r.b[i] / float(k) + float(r.scalar));
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] = r.a[i * n + j] * scale * r.c[j];
    }
    break;
  }
  case Opcode::Rope: {
    // out may alias in: rotate a copy of each head.
    int64_t half = n / 2;
    std::vector<float> head(n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t h = 0; h < k; ++h) {
        const float *x = r.a + (i * k + h) * n;
        std::copy_n(x, n, head.begin());
        const float *cos = r.b + i * n, *sin = r.c + i * n;
        float *y = out + (i * k + h) * n;
        for (int64_t d = 0; d < n; ++d) {
          float rotated = d < half ? -head[d + half] : head[d - half];
          y[d] = head[d] * cos[d] + rotated * sin[d];
        }
      }
    break;
  }
  case Opcode::AttnScores: {
    float scale = float(r.scalar);
    for (int64_t h = 0; h < m; ++h)
      for (int64_t q = 0; q < g; ++q) {
        const float *query = r.a + (h * g + q) * n;
        float *scores = out + (h * g + q) * k;
        for (int64_t key = 0; key < k; ++key) {
          if (key >= r.expr) {
            scores[key] = -std::numeric_limits<float>::infinity();
            continue;
          }
          const float *keys = r.b + (h * k + key) * n;
          float dot = 0.0f;
          for (int64_t d = 0; d < n; ++d)
            dot += query[d] * keys[d];
          scores[key] = scale * dot;
        }
      }
    break;
  }
  case Opcode::SoftmaxExp: {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float &v = out[i * n + j];
        // A row with no visible key here (max -inf) contributes nothing.
        v = std::isinf(r.a[i]) && r.a[i] < 0 ? 0.0f : std::exp(v - r.a[i]);
      }
    break;
  }
  case Opcode::AttnValues: {
    for (int64_t h = 0; h < m; ++h)
      for (int64_t q = 0; q < g; ++q) {
        const float *p = r.a + (h * g + q) * k;
        float *acc = out + (h * g + q) * n;
        for (int64_t key = 0; key < k; ++key) {
          const float *values = r.b + (h * k + key) * n;
          for (int64_t d = 0; d < n; ++d)
            acc[d] += p[key] * values[d];
        }
      }
    break;
  }
  case Opcode::LaneScores: {
    int64_t heads = k == 0 ? 0 : r.outElements / (g * k);
    float scale = float(r.scalar);
    for (int64_t q = 0; q < heads * g; ++q)
      for (int64_t key = 0; key < k; ++key)
        out[q * k + key] =
            key < r.expr ? 0.0f : -std::numeric_limits<float>::infinity();
    int64_t valid = std::clamp<int64_t>(r.expr, 0, k);
    for (int64_t j = 0; j < m; ++j) {
      int64_t head = laneHead(r.expr2, j, n);
      if (head < 0 || head >= heads)
        continue;
      const float *keys = r.b + j * k * 2;
      for (int64_t q = 0; q < g; ++q) {
        const float *query = r.a + (j * g + q) * 2;
        float *scores = out + (head * g + q) * k;
        for (int64_t key = 0; key < valid; ++key)
          scores[key] += scale * (query[0] * keys[key * 2] +
                                  query[1] * keys[key * 2 + 1]);
      }
    }
    break;
  }
  case Opcode::LaneValues: {
    int64_t heads = k == 0 ? 0 : r.aElements / (g * k);
    for (int64_t j = 0; j < m; ++j) {
      int64_t head = laneHead(r.expr, j, n);
      const float *values = r.b + j * k * 2;
      for (int64_t q = 0; q < g; ++q) {
        float *acc = out + (j * g + q) * 2;
        acc[0] = acc[1] = 0.0f;
        if (head < 0 || head >= heads)
          continue;
        const float *p = r.a + (head * g + q) * k;
        for (int64_t key = 0; key < k; ++key) {
          acc[0] += p[key] * values[key * 2];
          acc[1] += p[key] * values[key * 2 + 1];
        }
      }
    }
    break;
  }
  case Opcode::DivRows: {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] /= r.a[i];
    break;
  }
  case Opcode::Regrid: {
    forEachRegridOverlap(r, [&](int64_t t, int64_t s, int64_t dLo,
                                int64_t sLo, int64_t lo, int64_t hi) {
      for (int64_t row = 0; row < m; ++row)
        std::copy(r.a + (s * m + row) * k + (lo - sLo),
                  r.a + (s * m + row) * k + (hi - sLo),
                  out + (t * m + row) * n + (lo - dLo));
    });
    break;
  }
  case Opcode::FlashStep: {
    // Rows of queries and keys, k kv heads, g query heads per kv head.
    // ml is read and written: the emulator passes it as the first operand.
    float *ml = const_cast<float *>(r.a);
    const float *q = r.b, *keys = r.c, *values = r.c + m * k * n;
    int64_t queries = m * k * g;
    if (queries == 0)
      break;
    float scale = float(r.scalar);
    std::vector<float> scores(m);
    for (int64_t qi = 0; qi < m; ++qi)
      for (int64_t h = 0; h < k; ++h)
        for (int64_t j = 0; j < g; ++j) {
          int64_t row = (qi * k + h) * g + j;
          const float *query = q + (qi * k + h) * g * n + j * n;
          float *acc = out + (qi * k + h) * g * n + j * n;
          float blockMax = -std::numeric_limits<float>::infinity();
          for (int64_t kj = 0; kj < m; ++kj) {
            if (clampPosition(r.expr) + kj > clampPosition(r.expr2) + qi) {
              scores[kj] = -std::numeric_limits<float>::infinity();
              continue;
            }
            const float *key = keys + (kj * k + h) * n;
            float dot = 0.0f;
            for (int64_t d = 0; d < n; ++d)
              dot += query[d] * key[d];
            scores[kj] = scale * dot;
            blockMax = std::max(blockMax, scores[kj]);
          }
          if (std::isinf(blockMax))
            continue; // every key of this block is masked
          float &runSum = ml[row], &runMax = ml[queries + row];
          float newMax = runSum == 0.0f ? blockMax : std::max(runMax, blockMax);
          float correction = runSum == 0.0f ? 0.0f : std::exp(runMax - newMax);
          for (int64_t d = 0; d < n; ++d)
            acc[d] *= correction;
          runSum *= correction;
          for (int64_t kj = 0; kj < m; ++kj) {
            if (std::isinf(scores[kj]))
              continue;
            float p = std::exp(scores[kj] - newMax);
            runSum += p;
            const float *value = values + (kj * k + h) * n;
            for (int64_t d = 0; d < n; ++d)
              acc[d] += p * value[d];
          }
          runMax = newMax;
        }
    break;
  }
  case Opcode::LaneFlashScores: {
    // q [k, m, g, 2], keys [k, m, 2], out [k, heads, g, k].
    int64_t heads = k == 0 ? 0 : r.outElements / (g * k * k);
    float scale = float(r.scalar);
    std::fill_n(out, k * heads * g * k, 0.0f);
    forEachLaneQuery(
        r, heads, [&](int64_t j, int64_t head, int64_t qi, int64_t q) {
          const float *query = r.a + ((qi * m + j) * g + q) * 2;
          float *scores = out + ((qi * heads + head) * g + q) * k;
          for (int64_t key = 0; key < k; ++key) {
            const float *kj = r.b + (key * m + j) * 2;
            scores[key] += scale * (query[0] * kj[0] + query[1] * kj[1]);
          }
        });
    break;
  }
  case Opcode::FlashStats: {
    // p [k, m, k] in place; ml [3, k, m]: sum, max, this step's factor.
    float *ml = const_cast<float *>(r.a);
    int64_t rows = k * m;
    for (int64_t qi = 0; qi < k; ++qi)
      for (int64_t row = 0; row < m; ++row) {
        int64_t at = qi * m + row;
        float *p = out + at * k;
        float &runSum = ml[at], &runMax = ml[rows + at],
              &factor = ml[2 * rows + at];
        // Positions are clamped (a malformed bundle's may be anything), so
        // the difference cannot overflow.
        int64_t visible = std::clamp<int64_t>(
            clampPosition(r.expr2) + qi - clampPosition(r.expr) + 1, 0, k);
        factor = 1.0f;
        if (visible == 0) {
          std::fill_n(p, k, 0.0f);
          continue; // every key of this block is after the query
        }
        float blockMax = *std::max_element(p, p + visible);
        float newMax = runSum == 0.0f ? blockMax : std::max(runMax, blockMax);
        factor = runSum == 0.0f ? 0.0f : std::exp(runMax - newMax);
        float sum = runSum * factor;
        for (int64_t key = 0; key < k; ++key) {
          p[key] = key < visible ? std::exp(p[key] - newMax) : 0.0f;
          sum += p[key];
        }
        runSum = sum;
        runMax = newMax;
      }
    break;
  }
  case Opcode::LaneFlashValues: {
    // out [k, m, g, 2], p [k, heads, g, k], values [k, m, 2] after the
    // keys, factors [k, heads, g] after ml's sums and maxima.
    int64_t heads = k == 0 ? 0 : r.aElements / (g * k * k);
    const float *values = r.b + k * m * 2;
    const float *factors = r.c + 2 * k * heads * g;
    forEachLaneQuery(
        r, heads, [&](int64_t j, int64_t head, int64_t qi, int64_t q) {
          int64_t row = (qi * heads + head) * g + q;
          const float *p = r.a + row * k;
          float *acc = out + ((qi * m + j) * g + q) * 2;
          float a0 = acc[0] * factors[row], a1 = acc[1] * factors[row];
          for (int64_t key = 0; key < k; ++key) {
            a0 += p[key] * values[(key * m + j) * 2];
            a1 += p[key] * values[(key * m + j) * 2 + 1];
          }
          acc[0] = a0, acc[1] = a1;
        });
    break;
  }
  case Opcode::LaneDivRows: {
    int64_t heads = k == 0 ? 0 : r.aElements / (3 * k * g);
    forEachLaneQuery(r, heads,
                     [&](int64_t j, int64_t head, int64_t qi, int64_t q) {
                       float sum = r.a[(qi * heads + head) * g + q];
                       float *acc = out + ((qi * m + j) * g + q) * 2;
                       if (sum != 0.0f)
                         acc[0] /= sum, acc[1] /= sum;
                     });
    break;
  }
  default:
    break;
  }
  return rowKernelCounts(op, r);
}

} // namespace wafer::rt::kernels
