//===- NDArray.h - Host tensors and .npz files ------------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_NDARRAY_H
#define WAFER_RUNTIME_NDARRAY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wafer::rt {

/// A host tensor. Values are held as float; `dtype` records the numpy
/// element type it was read as or will be written as ("float32", "float16",
/// "float64", "int64", "int32").
struct NDArray {
  std::string dtype = "float32";
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t elements() const;
};

using NDArrayMap = std::map<std::string, NDArray>;

/// Reads a .npz as numpy writes it (np.savez: stored; np.savez_compressed:
/// deflated). Keys are the member names without ".npy". Errors name the file
/// and the member.
llvm::Expected<NDArrayMap> readNpz(llvm::StringRef path);

/// Writes arrays as float32 .npy members of an uncompressed .npz.
llvm::Error writeNpz(llvm::StringRef path, const NDArrayMap &arrays);

/// How far values are from a reference: the largest absolute difference
/// over the reference's largest finite magnitude (at least `minScale`,
/// which must be positive), and the element where it is. A NaN, or an
/// infinity where the reference has another value, is an infinite deviation
/// (so it fails every tolerance): a NaN against the reference's NaN checks
/// nothing. An infinity against the same infinity agrees.
struct Deviation {
  double relative = 0;
  int64_t index = -1; // -1 when every value agrees exactly
};
Deviation deviationFrom(llvm::ArrayRef<float> got, llvm::ArrayRef<float> want,
                        double minScale);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_NDARRAY_H
