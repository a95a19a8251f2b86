//===- HostIO.cpp - What the host places on the grid and reads back -------===//
#include "HostIO.h"

#include "wafer/Runtime/Layout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <cmath>
#include <cstring>

using namespace llvm;

namespace wafer::rt::emulator {

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The embedding rows the token ids of input `in.gatherIds` select from
/// the table in `in.data`, row-major in in.sourceShape.
static Expected<std::vector<float>> gatherRows(const HostTensor &in,
                                               const NDArrayMap &inputs) {
  auto it = inputs.find(in.gatherIds);
  if (it == inputs.end())
    return err("input '" + in.gatherIds + "' missing from the inputs");
  const NDArray &ids = it->second;
  if (ids.dtype != "int64" && ids.dtype != "int32")
    return err(formatv("input '{0}' has dtype {1}, expected int64 or int32 "
                       "token ids",
                       in.gatherIds, ids.dtype));
  int64_t dim = in.sourceShape.back(), rowsWanted = 1;
  for (size_t d = 0; d + 1 < in.sourceShape.size(); ++d)
    rowsWanted *= in.sourceShape[d];
  if (ids.elements() != rowsWanted)
    return err(formatv("input '{0}' has shape {1}, expected {2} token ids",
                       in.gatherIds, shapeText(ids.shape), rowsWanted));
  int64_t rows = in.data.size() / dim;
  std::vector<float> out(ids.data.size() * dim);
  for (auto [i, id] : llvm::enumerate(ids.data)) {
    if (!(id >= 0 && id < float(rows)) || id != std::floor(id))
      return err(formatv("input '{0}': token id {1} is outside the "
                         "embedding table of {2} rows",
                         in.gatherIds, int64_t(id), rows));
    in.data.read(int64_t(id) * dim, dim, out.data() + i * dim);
  }
  return out;
}

/// The placed tensor of `in` (`count` elements) from its source values;
/// padding is zero (whose bits are zero in f32 and f16 alike).
template <typename T>
static std::vector<T> gatherPlaced(const HostTensor &in, const T *from,
                                   int64_t count) {
  std::vector<T> placed(count);
  forEachSourceRun(
      in, [&](int64_t at, int64_t length, int64_t index, int64_t stride) {
        if (index >= 0)
          for (int64_t i = 0; i < length; ++i)
            placed[at + i] = from[index + i * stride];
      });
  return placed;
}

/// Writes one input into its buffer on every core, from `source` (the
/// values in in.sourceShape).
static void placeInput(const Program &p, const HostTensor &in,
                       const TensorValues &source, const GridPositions &grid,
                       DataPath &data, SlotOf slotOf) {
  const int64_t W = p.gridWidth, H = p.gridHeight;
  // Placed as the source is: no transpose, broadcast or gather.
  bool direct = in.permutation.empty() && in.indexDim < 0 && in.view.empty() &&
                in.sourceView.empty() && in.shape == in.sourceShape;
  DType dtype = p.buffers[in.buffer].dtype;
  int64_t size = bytesOf(dtype);
  // Otherwise the placed tensor is made once, in the buffer's type, and
  // every core copies its tiles from it as from a direct one.
  TensorValues values = source;
  if (!direct) {
    int64_t count = 1;
    for (int64_t extent : in.shape)
      count *= std::max<int64_t>(extent, 0);
    // In the source's type: f16 weights are gathered, not converted.
    if (source.f16())
      values = TensorValues::halves(gatherPlaced(in, source.f16(), count));
    else
      values = TensorValues(gatherPlaced(in, source.f32(), count));
  }
  if (dtype == DType::F16 && values.dtype() != DType::F16)
    values = TensorValues::halves(values.toHalves());
  // Replicas copy the tiles of the first core of their row or column.
  bool alongX = splitAlong(in.layout, Axis::X),
       alongY = splitAlong(in.layout, Axis::Y);
  int64_t bytes = p.buffers[in.buffer].elements * size;
  for (int64_t id = 0; id < W * H; ++id) {
    std::byte *dst = data.storage(int32_t(id), slotOf(int32_t(id), in.buffer));
    int64_t replicaOf = (alongY ? id / W : 0) * W + (alongX ? id % W : 0);
    if (replicaOf != id) {
      std::memcpy(dst,
                  data.storage(int32_t(replicaOf),
                               slotOf(int32_t(replicaOf), in.buffer)),
                  size_t(bytes));
      continue;
    }
    forEachLocalRun(
        in.shape, in.layout, H, W, grid.posX[id % W], grid.posY[id / W],
        [&](int64_t local, int64_t global, int64_t length) {
          std::byte *to = dst + local * size;
          if (global < 0)
            std::memset(to, 0, size_t(length * size));
          else if (dtype == DType::F16)
            std::memcpy(to, values.f16() + global, size_t(length * size));
          else
            values.read(global, length, reinterpret_cast<float *>(to));
        });
  }
}

Error checkBoundInputs(const Program &p, const NDArrayMap &inputs,
                       int64_t position) {
  for (const BoundInput &bound : p.boundInputs) {
    auto it = inputs.find(bound.name);
    if (it == inputs.end())
      continue;
    const NDArray &a = it->second;
    for (auto [i, value] : llvm::enumerate(a.data)) {
      if (double(value) == double(bound.valueAt(position, int64_t(i))))
        continue;
      if (bound.positions)
        return err(formatv("input '{0}' holds {1} at index {2}; the program "
                           "runs positions {3} to {4} (it was compiled with "
                           "them bound, for one sequence without gaps)",
                           bound.name, int64_t(value), i, position,
                           position + int64_t(a.data.size()) - 1));
      return err(formatv("input '{0}' holds {1} at index {2}; the program "
                         "attends to every token (it was compiled with the "
                         "mask bound to ones: padding is not supported)",
                         bound.name, int64_t(value), i));
    }
  }
  return Error::success();
}

Error placeInputs(const Program &p, const NDArrayMap &inputs,
                  const GridPositions &grid, DataPath &data, SlotOf slotOf,
                  bool onlyGiven, const std::vector<bool> &resident,
                  unsigned threads) {
  // First every check, in the inputs' order, then the writes.
  struct Placement {
    const HostTensor *in;
    TensorValues source;
  };
  std::vector<Placement> placements;
  for (const auto &[index, in] : llvm::enumerate(p.inputs)) {
    if (index < resident.size() && resident[index])
      continue;
    if (onlyGiven && !inputs.count(in.gatherIds.empty() ? in.name
                                                         : in.gatherIds))
      continue;
    TensorValues source = in.data;
    if (!in.gatherIds.empty()) {
      Expected<std::vector<float>> rows = gatherRows(in, inputs);
      if (!rows)
        return rows.takeError();
      source = TensorValues(std::move(*rows));
    } else if (in.data.empty()) {
      auto it = inputs.find(in.name);
      if (it == inputs.end())
        return err("input '" + in.name + "' missing from the inputs");
      const NDArray &a = it->second;
      if (a.shape != in.sourceShape)
        return err(formatv("input '{0}' has shape {1}, expected {2}", in.name,
                           shapeText(a.shape), shapeText(in.sourceShape)));
      // float16 arrays (an f16 ONNX model's inputs) are read exactly.
      if (a.dtype != "float32" && a.dtype != "float16")
        return err(formatv("input '{0}' has dtype {1}, expected float32 or "
                           "float16",
                           in.name, a.dtype));
      if (int64_t(a.data.size()) != a.elements())
        return err(formatv("input '{0}' has {1} values for shape {2}", in.name,
                           a.data.size(), shapeText(a.shape)));
      source = TensorValues::view(a.data.data(), int64_t(a.data.size()),
                                  DType::F32, nullptr);
    }
    placements.push_back({&in, std::move(source)});
  }
  // Inputs are live together, so their SRAM never overlaps and they can be
  // written in parallel; checked rather than assumed, since two writers of
  // one byte would race.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Placement &pl : placements) {
    const Buffer &b = p.buffers[pl.in->buffer];
    ranges.push_back(
        {b.offsetBytes, b.offsetBytes + b.elements * bytesOf(b.dtype)});
  }
  llvm::sort(ranges);
  bool disjoint = true;
  for (size_t i = 1; i < ranges.size(); ++i)
    disjoint &= ranges[i].first >= ranges[i - 1].second;
  // A weight in a mapped bundle is read once: its pages go back after.
  auto place = [&](const Placement &pl) {
    placeInput(p, *pl.in, pl.source, grid, data, slotOf);
    pl.source.releasePages();
  };
  if (threads > 1 && disjoint && placements.size() > 1) {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (const Placement &pl : placements)
      pool.async([&, &pl = pl] { place(pl); });
    pool.wait();
  } else {
    for (const Placement &pl : placements)
      place(pl);
  }
  return Error::success();
}

NDArrayMap readOutputs(const Program &p, const GridPositions &grid,
                       DataPath &data, SlotOf slotOf,
                       ArrayRef<std::string> names) {
  const int64_t W = p.gridWidth, H = p.gridHeight;
  NDArrayMap outputs;
  for (const HostTensor &out : p.outputs) {
    if (!names.empty() && !llvm::is_contained(names, out.name))
      continue;
    NDArray a;
    a.shape = out.shape;
    a.data.assign(a.elements(), 0.0f);
    std::vector<float> values(size_t(p.buffers[out.buffer].elements));
    // Replicated axes are read from their logical position 0.
    bool usesX = false, usesY = false;
    for (const LayoutDim &d : out.layout) {
      usesX |= d.axis == Axis::X;
      usesY |= d.axis == Axis::Y;
    }
    for (int64_t ly = 0; ly < (usesY ? H : 1); ++ly)
      for (int64_t lx = 0; lx < (usesX ? W : 1); ++lx) {
        int32_t id = int32_t(grid.orderY[ly] * W + grid.orderX[lx]);
        loadValues(p.buffers[out.buffer].dtype,
                   data.storage(id, slotOf(id, out.buffer)), values.data(),
                   int64_t(values.size()));
        forEachLocalRun(out.shape, out.layout, H, W, lx, ly,
                        [&](int64_t local, int64_t global, int64_t length) {
                          if (global >= 0)
                            std::copy_n(values.begin() + local, length,
                                        a.data.begin() + global);
                        });
      }
    // The view is a row-major reshape: only the shape changes.
    a.shape = out.viewShape();
    if (out.indexDim >= 0) {
      // Host-side gather along one dimension.
      NDArray gathered;
      gathered.shape = a.shape;
      int64_t d = out.indexDim, extent = a.shape[d];
      gathered.shape[d] = int64_t(out.indexMap.size());
      int64_t inner = 1, outer = 1;
      for (size_t i = d + 1; i < a.shape.size(); ++i)
        inner *= a.shape[i];
      for (int64_t i = 0; i < d; ++i)
        outer *= a.shape[i];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t index : out.indexMap)
          gathered.data.insert(gathered.data.end(),
                               a.data.begin() + (o * extent + index) * inner,
                               a.data.begin() + (o * extent + index + 1) *
                                                    inner);
      a = std::move(gathered);
    }
    if (!out.permutation.empty()) {
      // Host-side transpose: element at placed coordinates c goes to
      // coordinates c permuted.
      NDArray permuted;
      for (int64_t p : out.permutation)
        permuted.shape.push_back(a.shape[p]);
      permuted.data.resize(a.data.size());
      size_t rank = a.shape.size();
      std::vector<int64_t> stride(rank, 1);
      for (size_t d = rank; d-- > 1;)
        stride[d - 1] = stride[d] * permuted.shape[d];
      for (int64_t index = 0; index < int64_t(a.data.size()); ++index) {
        int64_t rest = index, target = 0;
        std::vector<int64_t> coord(rank);
        for (size_t d = rank; d-- > 0;) {
          coord[d] = rest % a.shape[d];
          rest /= a.shape[d];
        }
        for (size_t d = 0; d < rank; ++d)
          target += coord[out.permutation[d]] * stride[d];
        permuted.data[target] = a.data[index];
      }
      a = std::move(permuted);
    }
    if (!out.sourceShape.empty())
      a.shape = out.sourceShape;
    outputs[out.name] = std::move(a);
  }
  return outputs;
}

} // namespace wafer::rt::emulator
