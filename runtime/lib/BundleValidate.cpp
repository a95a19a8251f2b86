//===- BundleValidate.cpp - Checks a program before the emulator runs it -===//
#include "BundleInternal.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/FabricPlacement.h"
#include "wafer/Runtime/RowShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace llvm;

namespace wafer::rt {

using detail::coreSetText;

namespace {

Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

bool validRange(const Range &r, int64_t extent) {
  return r.step >= 1 && (r.lo > r.hi || (r.lo >= 0 && r.hi < extent));
}

std::string rangeText(const Range &r) {
  return formatv("{0}..{1}:{2}", r.lo, r.hi, r.step).str();
}


/// Whether two progressions share a value: a common value, if any, appears
/// within lcm(step_a, step_b) of the larger start.
bool rangesIntersect(const Range &a, const Range &b) {
  int64_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
  if (a.count() == 0 || b.count() == 0 || lo > hi)
    return false;
  int64_t v = a.lo + divideCeil(uint64_t(lo - a.lo), uint64_t(a.step)) * a.step;
  int64_t candidates = b.step / std::gcd(a.step, b.step);
  for (int64_t i = 0; i < candidates && v <= hi; ++i, v += a.step)
    if (b.contains(v))
      return true;
  return false;
}

/// Checks the indices a reader must trust before touching the program.
class IndexChecker {
public:
  explicit IndexChecker(const Program &p) : p(p) {}

  Error check() {
    for (const Role &role : p.roles)
      if (Error e = body(role, role.body, ""))
        return e;
    for (const auto *list : {&p.inputs, &p.outputs})
      for (const HostTensor &t : *list)
        if (t.buffer < 0 || size_t(t.buffer) >= p.buffers.size())
          return err(formatv("tensor '{0}': buffer index {1} out of range "
                             "({2} buffers)",
                             t.name, t.buffer, p.buffers.size()));
    return Error::success();
  }

private:
  Error body(const Role &role, const std::vector<Instr> &list,
             const std::string &prefix) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Instr &in = list[i];
      std::string where = formatv("role '{0}' instruction {1}{2} ({3})",
                                  role.name, prefix, i, opcodeName(in.op));
      for (int32_t b : in.bufs)
        if (b < 0 || size_t(b) >= p.buffers.size())
          return err(formatv("{0}: buffer index {1} out of range ({2} "
                             "buffers)",
                             where, b, p.buffers.size()));
      // -1 means "no channel", which only instructions that use none may say.
      bool needsFirst = in.op == Opcode::Send || in.op == Opcode::Recv ||
                        in.op == Opcode::Relay || in.op == Opcode::CombineRelay;
      bool needsSecond = in.op == Opcode::Relay;
      for (auto [ch, needed] : {std::pair(in.channel, needsFirst),
                                std::pair(in.channel2, needsSecond)})
        if ((ch != -1 || needed) && (ch < 0 || size_t(ch) >= p.channels.size()))
          return err(formatv("{0}: channel index {1} out of range ({2} "
                             "channels)",
                             where, ch, p.channels.size()));
      if (in.op == Opcode::Mark &&
          (in.mark < 0 || uint64_t(in.mark) >= p.ops.size()))
        return err(formatv("{0}: op index {1} out of range ({2} ops)", where,
                           in.mark, p.ops.size()));
      if (Error e = body(role, in.body, prefix + std::to_string(i) + "."))
        return e;
    }
    return Error::success();
  }

  const Program &p;
};

class Validator {
public:
  explicit Validator(const Program &p) : p(p) {}

  Error check() {
    if (p.version != kBundleVersion)
      return err(formatv("program version {0}, expected {1}", p.version,
                         kBundleVersion));
    if (Error e = validateTarget(p.target))
      return err("program target: " + toString(std::move(e)));
    if (p.position < 0)
      return err(formatv("position {0} is negative", p.position));
    if (p.gridWidth < 1 || p.gridHeight < 1 ||
        p.gridWidth > p.target.fabricWidth ||
        p.gridHeight > p.target.fabricHeight)
      return err(formatv("grid {0}x{1} (HxW) does not fit the {2} fabric of "
                         "{3}x{4} (HxW)",
                         p.gridHeight, p.gridWidth, p.target.name,
                         p.target.fabricHeight, p.target.fabricWidth));
    for (const Buffer &b : p.buffers)
      if (b.elements < 0 || b.offsetBytes < 0 || b.offsetBytes % 4 != 0 ||
          b.elements > kMaxSize || b.offsetBytes > kMaxSize)
        return err(formatv("buffer '{0}': {1} elements at offset {2} (sizes "
                           "and offsets must be in [0, 2^40], offsets "
                           "4-byte aligned)",
                           b.name, b.elements, b.offsetBytes));
    // Work on a dead core or messages over a dead link are refused here,
    // before the emulator places anything.
    if (Error e = checkFabricPlacement(p.target, p.gridHeight, p.gridWidth,
                                       p.fabricRows, p.fabricCols))
      return err("fabric placement: " + toString(std::move(e)));
    if (Error e = IndexChecker(p).check())
      return e;
    if (Error e = channels())
      return e;
    if (Error e = roles())
      return e;
    StringSet<> inputNames;
    for (const HostTensor &t : p.inputs) {
      if (Error e = tensor(t, /*isInput=*/true))
        return e;
      inputNames.insert(t.name);
    }
    // A bound input's check would otherwise judge an input the program
    // reads.
    for (const BoundInput &bound : p.boundInputs)
      if (bound.name.empty() || !inputNames.insert(bound.name).second)
        return err("bound input '" + bound.name +
                   "' is empty, repeated or read by the program");
    StringSet<> outputNames;
    for (const HostTensor &t : p.outputs) {
      if (Error e = tensor(t, /*isInput=*/false))
        return e;
      // Outputs are arrays of one .npz: the later would replace the other.
      if (!outputNames.insert(t.name).second)
        return err("two outputs are named '" + t.name + "'");
    }
    return Error::success();
  }

private:
  bool inGrid(const CoreSet &c) const {
    return validRange(c.x, p.gridWidth) && validRange(c.y, p.gridHeight);
  }

  Error channels() {
    for (const Channel &ch : p.channels)
      for (size_t i = 0; i < ch.routes.size(); ++i) {
        const Route &r = ch.routes[i];
        std::string where = formatv("channel '{0}' route {1}", ch.name, i);
        if (r.color < 0 || r.color >= p.target.routesPerCore)
          return err(formatv("{0}: color {1} outside the {2} routable "
                             "colors of target {3}",
                             where, r.color, p.target.routesPerCore,
                             p.target.name));
        if (r.in > Dir::West)
          return err(formatv("{0}: invalid input direction {1}", where,
                             unsigned(r.in)));
        if (r.outMask == 0 || r.outMask >= (1u << 5))
          return err(formatv("{0}: invalid output mask {1}", where, r.outMask));
        if (!inGrid(r.cores))
          return err(formatv("{0}: cores {1} outside the {2}x{3} (HxW) grid",
                             where, coreSetText(r.cores), p.gridHeight,
                             p.gridWidth));
      }
    return Error::success();
  }

  Error roles() {
    int64_t covered = 0;
    for (size_t i = 0; i < p.roles.size(); ++i) {
      const Role &r = p.roles[i];
      if (!inGrid(r.cores))
        return err(formatv("role '{0}': cores {1} outside the {2}x{3} (HxW) "
                           "grid",
                           r.name, coreSetText(r.cores), p.gridHeight,
                           p.gridWidth));
      for (size_t j = 0; j < i; ++j)
        if (rangesIntersect(r.cores.x, p.roles[j].cores.x) &&
            rangesIntersect(r.cores.y, p.roles[j].cores.y))
          return err(formatv("roles '{0}' and '{1}' overlap", p.roles[j].name,
                             r.name));
      covered += r.cores.x.count() * r.cores.y.count();
      if (Error e = body(r, r.body, ""))
        return e;
    }
    if (covered != p.gridWidth * p.gridHeight)
      return err(formatv("roles cover {0} of the {1} cores of the grid",
                         covered, p.gridWidth * p.gridHeight));
    return Error::success();
  }

  /// Bound on sizes, so that products of two sizes cannot overflow.
  static constexpr int64_t kMaxSize = int64_t(1) << 40;

  int64_t elems(int32_t buf) const { return p.buffers[buf].elements; }

  /// a * b <= limit, without overflow.
  static bool fits(int64_t a, int64_t b, int64_t limit) {
    int64_t product;
    return !MulOverflow(a, b, product) && product <= limit;
  }

  /// The element count of a shape from a file: none for a negative size or
  /// a count above kMaxSize.
  static std::optional<int64_t> boundedCount(const std::vector<int64_t> &dims) {
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0 || !fits(count, d, kMaxSize))
        return std::nullopt;
      count *= d;
    }
    return count;
  }

  Error body(const Role &role, const std::vector<Instr> &list,
             const std::string &prefix) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Instr &in = list[i];
      std::string where = formatv("role '{0}' instruction {1}{2} ({3})",
                                  role.name, prefix, i, opcodeName(in.op));
      auto fail = [&](const Twine &what) { return err(where + ": " + what); };
      bool rowKernel = rowKernelOperands(in.op) > 0;
      size_t wantBufs = rowKernelOperands(in.op);
      switch (in.op) {
      case Opcode::GemmTile:
      case Opcode::GemvTile:
      case Opcode::Add:
      case Opcode::Mul:
      case Opcode::Max:
      case Opcode::Swiglu:
        wantBufs = 3;
        break;
      case Opcode::Swap:
      case Opcode::Copy:
      case Opcode::CombineRelay:
        wantBufs = 2;
        break;
      case Opcode::Repeat:
      case Opcode::When:
      case Opcode::Mark:
        break;
      default:
        if (!rowKernel)
          wantBufs = 1;
        break;
      }
      if (in.bufs.size() != wantBufs)
        return fail(
            formatv("needs {0} buffers, has {1}", wantBufs, in.bufs.size()));
      bool hasBody = in.op == Opcode::Repeat || in.op == Opcode::When;
      if (!hasBody && !in.body.empty())
        return fail("only repeat and when have a body");
      if (in.op != Opcode::Regrid && (in.length != 0 || in.parts != 1))
        return fail("only a regrid has a length and parts");
      if (rowKernel)
        if (Error e = checkRowKernel(in))
          return fail(toString(std::move(e)));
      switch (in.op) {
      case Opcode::GemmTile:
      case Opcode::GemvTile: {
        int64_t m = in.op == Opcode::GemmTile ? in.m : 1;
        // At least 1 each, so the buffers bound every dimension (a zero k
        // or n would leave m free, and the kernel loops over m; found by
        // fuzz-bundle).
        if (m < 1 || in.k < 1 || in.n < 1)
          return fail(formatv("tile m={0} k={1} n={2}: every size must be at "
                              "least 1",
                              m, in.k, in.n));
        if (!fits(m, in.n, elems(in.bufs[0])) ||
            !fits(m, in.k, elems(in.bufs[1])) ||
            !fits(in.k, in.n, elems(in.bufs[2])))
          return fail(formatv("tile m={0} k={1} n={2} exceeds its buffers", m,
                              in.k, in.n));
        if (in.bufs[0] == in.bufs[1] || in.bufs[0] == in.bufs[2])
          return fail("the accumulator must not alias an operand");
        break;
      }
      case Opcode::Add:
      case Opcode::Mul:
      case Opcode::Max:
      case Opcode::Swiglu:
        if (elems(in.bufs[1]) < elems(in.bufs[0]) ||
            elems(in.bufs[2]) < elems(in.bufs[0]))
          return fail("operands are smaller than the output");
        break;
      case Opcode::Swap:
        if (in.bufs[0] == in.bufs[1] || elems(in.bufs[0]) != elems(in.bufs[1]))
          return fail("needs two distinct buffers of the same size");
        break;
      case Opcode::CombineRelay:
        if (in.k != int64_t(Opcode::Add) && in.k != int64_t(Opcode::Mul) &&
            in.k != int64_t(Opcode::Max))
          return fail(formatv("combine {0} is not add, mul or max", in.k));
        if (in.bufs[0] == in.bufs[1] || elems(in.bufs[0]) != elems(in.bufs[1]))
          return fail("needs two distinct buffers of the same size");
        break;
      case Opcode::RotateSlots:
        if (in.n <= 0 || elems(in.bufs[0]) % in.n != 0)
          return fail(formatv("slot size {0} does not divide {1} elements",
                              in.n, elems(in.bufs[0])));
        break;
      case Opcode::Copy:
        for (int32_t buf : in.bufs)
          if (in.n <= 0 || elems(buf) % in.n != 0)
            return fail(formatv("slot size {0} does not divide {1} elements",
                                in.n, elems(buf)));
        for (const std::string &text : {in.expr, in.expr2})
          if (Expected<Expr> e = Expr::parse(text); !e)
            return fail(toString(e.takeError()));
        break;
      case Opcode::Repeat:
      case Opcode::When:
        if (Expected<Expr> e = Expr::parse(in.expr); !e)
          return fail(toString(e.takeError()));
        if (Error e = body(role, in.body, prefix + std::to_string(i) + "."))
          return e;
        break;
      default:
        break;
      }
    }
    return Error::success();
  }

  /// The sizes of a row instruction against its buffers.
  Error checkRowKernel(const Instr &in) {
    Expected<std::vector<int64_t>> extents =
        rowKernelExtents(in.op, in.m, in.groups, in.k, in.n);
    if (!extents)
      return extents.takeError();
    std::vector<int64_t> sizes;
    for (int32_t buf : in.bufs)
      sizes.push_back(elems(buf));
    raiseToBufferHeads(in.op, in.groups, in.k, sizes, *extents);
    for (auto [buf, need] : llvm::zip(in.bufs, *extents))
      if (need > elems(buf))
        return err(formatv("needs {0} elements of buffer '{1}', which has {2}",
                           need, p.buffers[buf].name, elems(buf)));
    if (in.op == Opcode::Regrid &&
        (elems(in.bufs[0]) % (*extents)[0] != 0 ||
         elems(in.bufs[1]) % (*extents)[1] != 0))
      return err("regrid buffers must hold whole slots of rows x width");
    if (in.op == Opcode::Regrid)
      if (Error e =
              checkRegridLength(in.m, in.groups, in.k, in.n, in.length,
                                in.parts, elems(in.bufs[0]), elems(in.bufs[1])))
        return e;
    int expressions = rowKernelExpressions(in.op);
    if (expressions >= 1)
      if (Expected<Expr> e = Expr::parse(in.expr); !e)
        return e.takeError();
    if (expressions == 2)
      if (Expected<Expr> e = Expr::parse(in.expr2); !e)
        return e.takeError();
    if ((rowKernelOperands(in.op) == 3 || in.op == Opcode::FlashStep ||
         in.op == Opcode::Regrid || in.op == Opcode::FlashStats ||
         in.op == Opcode::LaneFlashValues || in.op == Opcode::LaneDivRows) &&
        llvm::is_contained(ArrayRef(in.bufs).drop_front(), in.bufs[0]))
      return err("the output must not alias an operand");
    return Error::success();
  }

  Error tensor(const HostTensor &t, bool isInput) {
    auto fail = [&](const Twine &what) {
      return err((isInput ? "input '" : "output '") + t.name + "': " + what);
    };
    if (t.layout.size() != t.shape.size())
      return fail(formatv("layout has {0} dimensions, shape has {1}",
                          t.layout.size(), t.shape.size()));
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const LayoutDim &ld = t.layout[d];
      int64_t extent = ld.axis == Axis::X   ? p.gridWidth
                       : ld.axis == Axis::Y ? p.gridHeight
                                            : 1;
      if (t.shape[d] < 0 || ld.blocks < 1 || ld.blocks % extent != 0)
        return fail(formatv("dimension {0}: size {1} in {2} blocks on an "
                            "axis of extent {3}",
                            d, t.shape[d], ld.blocks, extent));
      if (ld.axis == Axis::None && ld.blocks != 1)
        return fail(formatv("dimension {0} is kept whole but has {1} blocks", d,
                            ld.blocks));
      if (ld.parts < 1 || (ld.parts > 1 && !ld.balanced) ||
          ld.blocks % ld.parts != 0 || t.shape[d] % ld.parts != 0)
        return fail(formatv("dimension {0}: {1} parts do not divide its size "
                            "{2} and {3} balanced blocks",
                            d, ld.parts, t.shape[d], ld.blocks));
    }
    // Sizes from a file may be anything: multiply with overflow checks
    // before trusting localElements and the element counts.
    int64_t placed = 1, need = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      int64_t extent = t.layout[d].axis == Axis::X   ? p.gridWidth
                       : t.layout[d].axis == Axis::Y ? p.gridHeight
                                                     : 1;
      int64_t tile =
          divideCeil(uint64_t(t.shape[d]), uint64_t(t.layout[d].blocks));
      if (MulOverflow(placed, t.shape[d], placed) ||
          MulOverflow(need, t.layout[d].blocks / extent, need) ||
          MulOverflow(need, tile, need) || placed > kMaxSize)
        return fail("shape too large");
    }
    if (need > p.buffers[t.buffer].elements)
      return fail(formatv("needs {0} elements per core, buffer '{1}' has {2}",
                          need, p.buffers[t.buffer].name,
                          p.buffers[t.buffer].elements));
    if (!t.view.empty()) {
      std::optional<int64_t> viewed = boundedCount(t.view);
      if (!viewed)
        return fail("view too large");
      if (*viewed != placed)
        return fail("view does not hold the placed tensor's elements");
    }
    const std::vector<int64_t> &shape = t.viewShape();
    if (!isInput) {
      if (!t.permutation.empty()) {
        std::vector<int64_t> sorted = t.permutation;
        llvm::sort(sorted);
        for (size_t i = 0; i < sorted.size(); ++i)
          if (sorted.size() != shape.size() || sorted[i] != int64_t(i))
            return fail("permutation is not a permutation of the "
                        "dimensions");
      }
      int64_t elements = 1;
      for (int64_t d : shape)
        elements *= d;
      if (t.indexDim >= 0) {
        if (t.indexDim >= int64_t(shape.size()))
          return fail("index map dimension out of range");
        for (int64_t index : t.indexMap)
          if (index < 0 || index >= shape[t.indexDim])
            return fail("index map entry outside the tensor");
        elements = elements / std::max<int64_t>(shape[t.indexDim], 1) *
                   int64_t(t.indexMap.size());
      }
      std::optional<int64_t> returned = boundedCount(t.sourceShape);
      if (!returned)
        return fail("returned shape too large");
      if (!t.sourceShape.empty() && *returned != elements)
        return fail("returned shape does not hold the tensor's elements");
      return Error::success();
    }

    const std::vector<int64_t> &source = t.permutedSource();
    if (!t.sourceView.empty()) {
      std::optional<int64_t> supplied = boundedCount(t.sourceShape),
                             viewed = boundedCount(t.sourceView);
      if (!supplied)
        return fail("source shape too large");
      if (!viewed)
        return fail("source view too large");
      if (*supplied != *viewed)
        return fail("source view does not hold the source's elements");
    }
    size_t srcRank = source.size();
    if (!t.permutation.empty()) {
      std::vector<int64_t> sorted = t.permutation;
      llvm::sort(sorted);
      bool isPermutation = sorted.size() == srcRank;
      for (size_t i = 0; i < sorted.size() && isPermutation; ++i)
        isPermutation = sorted[i] == int64_t(i);
      if (!isPermutation)
        return fail("permutation is not a permutation of the source "
                    "dimensions");
    }
    if (srcRank > shape.size())
      return fail("source has more dimensions than the placed tensor");
    size_t lead = shape.size() - srcRank;
    bool mapped = t.indexDim >= 0;
    if (mapped && (lead != 0 || t.indexDim >= int64_t(srcRank) ||
                   int64_t(t.indexMap.size()) != shape[t.indexDim]))
      return fail("index map does not fit the placed tensor");
    int64_t count = 1;
    for (size_t j = 0; j < srcRank; ++j) {
      int64_t dim = source[t.permutation.empty() ? j : t.permutation[j]];
      if (mapped && int64_t(j) == t.indexDim) {
        for (int64_t index : t.indexMap)
          if (index < -1 || index >= dim)
            return fail("index map entry outside the source");
      } else if (dim < 0 || (dim != 1 && dim != shape[lead + j])) {
        return fail("source does not broadcast to the placed shape");
      }
      count *= source[j];
    }
    if (!t.gatherIds.empty()) {
      // data is the table; sourceShape the gathered rows.
      if (p.weightsOmitted && t.data.empty())
        return Error::success();
      if (srcRank == 0 || t.data.empty() || t.sourceShape.back() <= 0 ||
          t.data.size() % size_t(t.sourceShape.back()) != 0)
        return fail("embedding table does not match the row size");
      return Error::success();
    }
    if (!t.data.empty() && int64_t(t.data.size()) != count)
      return fail(formatv("embedded data has {0} values, the source shape "
                          "{1}",
                          t.data.size(), count));
    return Error::success();
  }

  const Program &p;
};

} // namespace

std::string detail::coreSetText(const CoreSet &c) {
  return "x" + rangeText(c.x) + " y" + rangeText(c.y);
}

Error detail::checkIndices(const Program &program) {
  return IndexChecker(program).check();
}

Error validateProgram(const Program &program) {
  return Validator(program).check();
}

} // namespace wafer::rt
