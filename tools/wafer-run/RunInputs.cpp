//===- RunInputs.cpp - run --init and --check -----------------------------===//
#include "RunInputs.h"
#include "EvalCommand.h"
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace llvm;
using namespace wafer;

rt::NDArrayMap wafer::makeInputs(const rt::Program &program,
                                 mlir::ModuleOp imported, bool random,
                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  // Rows of the table each token-id input selects from.
  StringMap<int64_t> tableRows;
  for (const rt::HostTensor &in : program.inputs)
    if (!in.gatherIds.empty() && !in.sourceShape.empty() &&
        in.sourceShape.back() > 0)
      tableRows[in.gatherIds] = int64_t(in.data.size()) / in.sourceShape.back();
  auto fill = [&](rt::NDArray &array, bool ids, int64_t rows) {
    array.data.resize(array.elements());
    for (float &v : array.data)
      v = !random ? 0.0f
          : ids   ? float(int64_t(uniform() * double(std::max<int64_t>(rows, 1))))
                  : float(2 * uniform() - 1);
  };
  rt::NDArrayMap inputs;
  if (imported) {
    auto main = imported.lookupSymbol<mlir::func::FuncOp>("main");
    for (mlir::BlockArgument arg : main.getArguments()) {
      std::string name = wafer::tfm::inputName(main, arg.getArgNumber());
      auto type = cast<mlir::RankedTensorType>(arg.getType());
      rt::NDArray array;
      array.shape.assign(type.getShape().begin(), type.getShape().end());
      bool ids = type.getElementType().isInteger(64);
      if (ids)
        array.dtype = "int64";
      fill(array, ids, tableRows.lookup(name));
      // What the program was compiled for, so that the host evaluator
      // (--check) computes the same.
      for (const rt::BoundInput &bound : program.boundInputs)
        if (bound.name == name)
          for (auto [i, v] : llvm::enumerate(array.data))
            v = float(bound.valueAt(program.position, int64_t(i)));
      inputs[name] = std::move(array);
    }
    return inputs;
  }
  for (const rt::HostTensor &in : program.inputs) {
    rt::NDArray array;
    if (!in.gatherIds.empty()) {
      array.dtype = "int64";
      array.shape.assign(in.sourceShape.begin(),
                         in.sourceShape.end() - (in.sourceShape.empty() ? 0 : 1));
      fill(array, true, tableRows.lookup(in.gatherIds));
      inputs[in.gatherIds] = std::move(array);
    } else if (in.data.empty()) {
      array.shape = in.sourceShape;
      fill(array, false, 0);
      inputs[in.name] = std::move(array);
    }
  }
  return inputs;
}

Error wafer::checkOutputs(mlir::ModuleOp imported, StringRef modelPath,
                          const rt::NDArrayMap &inputs,
                          const rt::NDArrayMap &outputs, double tolerance) {
  Expected<rt::NDArrayMap> reference =
      evaluateOnHost(imported, modelPath, inputs);
  if (!reference)
    return createStringError(inconvertibleErrorCode(),
                             "--check: host evaluator: " +
                                 toString(reference.takeError()));
  for (const auto &[name, got] : outputs) {
    auto it = reference->find(name);
    if (it == reference->end() || it->second.data.size() != got.data.size())
      return createStringError(inconvertibleErrorCode(),
                               "--check: the host evaluator gives no output '" +
                                   name + "' of the same size");
    rt::Deviation deviation =
        rt::deviationFrom(got.data, it->second.data, /*minScale=*/1e-30);
    double relative = deviation.relative;
    if (std::isinf(relative))
      return createStringError(
          inconvertibleErrorCode(),
          formatv("--check: output '{0}' holds {1:e3} at element {2}, where "
                  "the host evaluator's holds {3:e3}{4}",
                  name, got.data[deviation.index], deviation.index,
                  it->second.data[deviation.index],
                  std::isnan(it->second.data[deviation.index])
                      ? " (a NaN checks nothing)"
                      : ""));
    if (!(relative <= tolerance))
      return createStringError(
          inconvertibleErrorCode(),
          formatv("--check: output '{0}' differs from the host evaluator's "
                  "by {1:e2} relative to its largest magnitude, above the "
                  "tolerance {2:e2}",
                  name, relative, tolerance));
    outs() << formatv("check '{0}' vs host evaluator: max error / max "
                      "|reference| = {1:e2} (tolerance {2:e2}): PASS\n",
                      name, relative, tolerance);
  }
  return Error::success();
}

