//===- TestSupport.h - Helpers and small programs for the unit tests -----===//
#ifndef WAFER_TEST_UNIT_TESTSUPPORT_H
#define WAFER_TEST_UNIT_TESTSUPPORT_H

#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

namespace wafer::rt::test {

/// The message of a failed result, or "" on success (consumes the error).
template <typename T> std::string errorOf(llvm::Expected<T> result) {
  return result ? std::string() : llvm::toString(result.takeError());
}
inline std::string errorOf(llvm::Error err) {
  return llvm::toString(std::move(err));
}

inline Target testTarget() { return llvm::cantFail(getPresetTarget("wse2")); }

inline CoreSet wholeGrid(int64_t h, int64_t w) {
  return {{0, w - 1, 1}, {0, h - 1, 1}};
}

inline Instr instr(Opcode op, std::vector<int32_t> bufs, int32_t channel = -1) {
  Instr i;
  i.op = op;
  i.bufs = std::move(bufs);
  i.channel = channel;
  return i;
}

inline Instr repeat(std::string count, std::vector<Instr> body) {
  Instr i;
  i.op = Opcode::Repeat;
  i.expr = std::move(count);
  i.body = std::move(body);
  return i;
}

inline Instr mark(int64_t op) {
  Instr i;
  i.op = Opcode::Mark;
  i.mark = op;
  return i;
}

/// A one-dimensional host tensor of `size` values in buffer `buffer`,
/// laid out as `layout` (split along x, or held whole by every core).
inline HostTensor vectorTensor(std::string name, int64_t size, int32_t buffer,
                               LayoutDim layout) {
  HostTensor t;
  t.name = std::move(name);
  t.shape = t.sourceShape = {size};
  t.buffer = buffer;
  t.layout = {layout};
  return t;
}

/// A channel whose routes carry a logical ring shift (l -> l - 1) along
/// `axis` on every row or column of the grid.
inline Channel ringShiftChannel(std::string name, Axis axis, int64_t h,
                                int64_t w, bool interleave, int32_t baseColor) {
  int64_t n = axis == Axis::X ? w : h;
  std::vector<LinePath> paths = ringShiftPaths(n, interleave);
  int32_t numColors = 0;
  std::vector<int32_t> colors = colorLinePaths(paths, numColors);
  return {std::move(name), buildRoutes(paths, colors, axis, h, w, baseColor)};
}

/// Each core holds one element x[ly][lx] of an h x w input, shifts it one
/// logical position along x and then along y, so out[i][j] ==
/// x[(i + 1) % h][(j + 1) % w]. Buffers: 0 a, 1 b, 2 c.
inline Program ringShiftProgram(int64_t h, int64_t w, bool interleave) {
  Program p;
  p.target = testTarget();
  p.gridHeight = h;
  p.gridWidth = w;
  p.interleave = interleave;
  p.buffers = {{"a", 1, DType::F32, 0},
               {"b", 1, DType::F32, 4},
               {"c", 1, DType::F32, 8}};
  p.channels.push_back(ringShiftChannel("shift_x", Axis::X, h, w, interleave,
                                        /*baseColor=*/0));
  p.channels.push_back(ringShiftChannel("shift_y", Axis::Y, h, w, interleave,
                                        /*baseColor=*/4));
  p.roles.push_back(
      {"all",
       wholeGrid(h, w),
       {instr(Opcode::Send, {0}, 0), instr(Opcode::Recv, {1}, 0), mark(0),
        instr(Opcode::Send, {1}, 1), instr(Opcode::Recv, {2}, 1), mark(1)}});
  std::vector<LayoutDim> layout = {{Axis::Y, h}, {Axis::X, w}};
  HostTensor in;
  in.name = "x";
  in.shape = {h, w};
  in.sourceShape = {h, w};
  in.buffer = 0;
  in.layout = layout;
  p.inputs.push_back(in);
  HostTensor out;
  out.name = "out";
  out.shape = {h, w};
  out.buffer = 2;
  out.layout = layout;
  p.outputs.push_back(out);
  p.ops = {{"shift_x", "shift", "ring"}, {"shift_y", "shift", "ring"}};
  return p;
}

} // namespace wafer::rt::test

#endif // WAFER_TEST_UNIT_TESTSUPPORT_H
