//===- GenerateSupport.h - Sampling and the host check of generate -*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_GENERATESUPPORT_H
#define WAFER_TOOLS_WAFER_RUN_GENERATESUPPORT_H

#include "GenerateCommand.h"
#include "GenerateModel.h"

#include "wafer/Import/WeightStore.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace wafer {

/// The next token: the most likely one, or a draw from the temperature-
/// scaled, top-k and top-p restricted distribution. The draw uses the raw
/// 64-bit Mersenne Twister (specified by the standard), so a seed gives the
/// same tokens on every platform.
class Sampler {
public:
  explicit Sampler(const GenerateOptions &options)
      : options(options), rng(options.seed) {}

  int64_t next(llvm::ArrayRef<float> logits) {
    int64_t best = std::max_element(logits.begin(), logits.end()) -
                   logits.begin();
    if (options.temperature == 0)
      return best;
    std::vector<int64_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return logits[a] > logits[b];
    });
    if (options.topK > 0 && options.topK < int64_t(order.size()))
      order.resize(options.topK);
    std::vector<double> weights;
    double total = 0;
    for (int64_t id : order) {
      weights.push_back(
          std::exp((double(logits[id]) - logits[best]) / options.temperature));
      total += weights.back();
    }
    // The smallest prefix whose probability reaches top-p.
    double kept = 0;
    size_t keep = 0;
    while (keep < weights.size() && kept < options.topP * total)
      kept += weights[keep++];
    double u = double(rng() >> 11) * 0x1.0p-53 * kept;
    for (size_t i = 0; i < keep; ++i) {
      if (u < weights[i])
        return order[i];
      u -= weights[i];
    }
    return order[keep - 1];
  }

private:
  const GenerateOptions &options;
  std::mt19937_64 rng;
};

/// The host evaluator's logits for a token sequence: the model's prefill
/// graph of the whole sequence, evaluated on the same weights.
class HostReference {
public:
  /// The logits of the sequence's last position.
  llvm::Expected<std::vector<float>> logits(GenerateModel &model,
                                            llvm::ArrayRef<int64_t> tokens);

private:
  WeightStore store;
};

int64_t argmax(llvm::ArrayRef<float> values);

/// Token ids "1,2,3", each below `vocabSize`.
llvm::Expected<std::vector<int64_t>> parseTokenList(llvm::StringRef text,
                                                    int64_t vocabSize);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_GENERATESUPPORT_H
