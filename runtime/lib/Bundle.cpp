//===- Bundle.cpp - Program bundle file (FlatBuffers) ---------------------===//
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/RowKernels.h"
#include "wafer/Runtime/bundle_generated.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <numeric>

using namespace llvm;
namespace fb = wafer::fb;

namespace wafer::rt {

StringRef opcodeName(Opcode op) {
  switch (op) {
  case Opcode::GemmTile:
    return "gemm_tile";
  case Opcode::GemvTile:
    return "gemv_tile";
  case Opcode::Add:
    return "add";
  case Opcode::Mul:
    return "mul";
  case Opcode::Zero:
    return "zero";
  case Opcode::Swap:
    return "swap";
  case Opcode::RotateSlots:
    return "rotate_slots";
  case Opcode::Send:
    return "send";
  case Opcode::Recv:
    return "recv";
  case Opcode::Relay:
    return "relay";
  case Opcode::Repeat:
    return "repeat";
  case Opcode::When:
    return "when";
  case Opcode::Mark:
    return "mark";
  case Opcode::Copy:
    return "copy";
  case Opcode::Max:
    return "max";
  case Opcode::Swiglu:
    return "swiglu";
  case Opcode::Reduce:
    return "reduce";
  case Opcode::RmsScale:
    return "rms_scale";
  case Opcode::Rope:
    return "rope";
  case Opcode::AttnScores:
    return "attn_scores";
  case Opcode::SoftmaxExp:
    return "softmax_exp";
  case Opcode::AttnValues:
    return "attn_values";
  case Opcode::DivRows:
    return "div_rows";
  case Opcode::Regrid:
    return "regrid";
  case Opcode::FlashStep:
    return "flash_step";
  }
  return "unknown";
}

namespace {

Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

fb::CoreSet toFb(const CoreSet &c) {
  return fb::CoreSet(fb::Range(c.x.lo, c.x.hi, c.x.step),
                     fb::Range(c.y.lo, c.y.hi, c.y.step));
}

class Writer {
public:
  std::vector<uint8_t> write(const Program &p) {
    const Target &t = p.target;
    auto macs = fb::CreateMacsPerCycle(b, t.macsPerCycleF32, t.macsPerCycleF16,
                                       t.macsPerCycleF16AccF32);
    auto target = fb::CreateTarget(b, b.CreateString(t.name), t.fabricWidth,
                                   t.fabricHeight, t.clockHz, t.sramBytes,
                                   t.routesPerCore, t.hopCycles, t.rampCycles,
                                   t.relayCycles, t.linkWordsPerCycle, macs);

    std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
    for (const Buffer &buf : p.buffers)
      buffers.push_back(fb::CreateBuffer(b, b.CreateString(buf.name),
                                         buf.elements, fb::DType(buf.dtype),
                                         buf.offsetBytes));
    std::vector<flatbuffers::Offset<fb::Channel>> channels;
    for (const Channel &ch : p.channels) {
      std::vector<fb::Route> routes;
      for (const Route &r : ch.routes)
        routes.emplace_back(r.color, fb::Dir(r.in), r.outMask, toFb(r.cores));
      channels.push_back(fb::CreateChannel(b, b.CreateString(ch.name),
                                           b.CreateVectorOfStructs(routes)));
    }
    std::vector<flatbuffers::Offset<fb::Role>> roles;
    for (const Role &role : p.roles) {
      fb::CoreSet cores = toFb(role.cores);
      auto body = instrs(role.body);
      roles.push_back(
          fb::CreateRole(b, b.CreateString(role.name), &cores, body));
    }
    auto inputs = tensors(p.inputs);
    auto outputs = tensors(p.outputs);
    std::vector<flatbuffers::Offset<fb::OpInfo>> ops;
    for (const OpInfo &op : p.ops)
      ops.push_back(fb::CreateOpInfo(b, b.CreateString(op.name),
                                     b.CreateString(op.kind),
                                     b.CreateString(op.algorithm)));
    auto root = fb::CreateBundle(
        b, p.version, target, p.gridHeight, p.gridWidth, p.interleave,
        b.CreateVector(buffers), b.CreateVector(channels),
        b.CreateVector(roles), inputs, outputs, b.CreateVector(ops),
        p.kvCapacityTokens);
    fb::FinishBundleBuffer(b, root);
    return std::vector<uint8_t>(b.GetBufferPointer(),
                                b.GetBufferPointer() + b.GetSize());
  }

private:
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Instr>>>
  instrs(const std::vector<Instr> &list) {
    std::vector<flatbuffers::Offset<fb::Instr>> out;
    for (const Instr &in : list) {
      auto body = instrs(in.body);
      out.push_back(fb::CreateInstr(b, fb::Opcode(in.op),
                                    b.CreateVector(in.bufs), in.channel,
                                    in.channel2, in.m, in.k, in.n,
                                    b.CreateString(in.expr), in.mark, body,
                                    b.CreateString(in.expr2), in.groups,
                                    in.scalar));
    }
    return b.CreateVector(out);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::HostTensor>>>
  tensors(const std::vector<HostTensor> &list) {
    std::vector<flatbuffers::Offset<fb::HostTensor>> out;
    for (const HostTensor &t : list) {
      std::vector<fb::LayoutDim> layout;
      for (const LayoutDim &d : t.layout)
        layout.emplace_back(fb::Axis(d.axis), d.blocks);
      out.push_back(fb::CreateHostTensor(
          b, b.CreateString(t.name), b.CreateVector(t.shape),
          fb::DType(t.dtype), t.buffer, b.CreateVectorOfStructs(layout),
          b.CreateVector(t.sourceShape), b.CreateVector(t.permutation),
          b.CreateVector(t.data), b.CreateString(t.gatherIds),
          int32_t(t.indexDim), b.CreateVector(t.indexMap)));
    }
    return b.CreateVector(out);
  }

  flatbuffers::FlatBufferBuilder b{1 << 16};
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

std::string str(const flatbuffers::String *s) {
  return s ? s->str() : std::string();
}

template <typename T> std::vector<T> vec(const flatbuffers::Vector<T> *v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

Range fromFb(const fb::Range &r) { return {r.lo(), r.hi(), r.step()}; }
CoreSet fromFb(const fb::CoreSet &c) { return {fromFb(c.x()), fromFb(c.y())}; }

/// Converts the verified FlatBuffers tables; enum values the schema does not
/// define (the verifier does not check them) are errors.
class Reader {
public:
  explicit Reader(StringRef origin) : origin(origin) {}

  Expected<Program> read(const fb::Bundle &in) {
    Program p;
    p.version = in.version();
    if (p.version != kBundleVersion)
      return err(formatv("{0}: bundle version {1}, this runtime reads "
                         "version {2}",
                         origin, p.version, kBundleVersion));
    if (const fb::Target *t = in.target()) {
      p.target.name = str(t->name());
      p.target.fabricWidth = t->fabric_width();
      p.target.fabricHeight = t->fabric_height();
      p.target.clockHz = t->clock_hz();
      p.target.sramBytes = t->sram_bytes();
      p.target.routesPerCore = t->routes_per_core();
      p.target.hopCycles = t->hop_cycles();
      p.target.rampCycles = t->ramp_cycles();
      p.target.relayCycles = t->relay_cycles();
      p.target.linkWordsPerCycle = t->link_words_per_cycle();
      if (const fb::MacsPerCycle *m = t->macs_per_cycle()) {
        p.target.macsPerCycleF32 = m->f32();
        p.target.macsPerCycleF16 = m->f16();
        p.target.macsPerCycleF16AccF32 = m->f16_f32();
      }
    }
    p.gridHeight = in.grid_height();
    p.gridWidth = in.grid_width();
    p.interleave = in.interleave();
    p.kvCapacityTokens = in.kv_capacity_tokens();
    if (in.buffers())
      for (const fb::Buffer *buf : *in.buffers()) {
        if (buf->dtype() != fb::DType::F32 && buf->dtype() != fb::DType::F16)
          return bad("buffer dtype");
        p.buffers.push_back({str(buf->name()), buf->elements(),
                             DType(buf->dtype()), buf->offset_bytes()});
      }
    if (in.channels())
      for (const fb::Channel *ch : *in.channels()) {
        Channel c{str(ch->name()), {}};
        if (ch->routes())
          for (const fb::Route *r : *ch->routes()) {
            if (uint8_t(r->in_dir()) > uint8_t(Dir::West))
              return bad("route direction");
            c.routes.push_back({r->color(), fromFb(r->cores()),
                                Dir(r->in_dir()), r->out_mask()});
          }
        p.channels.push_back(std::move(c));
      }
    if (in.roles())
      for (const fb::Role *r : *in.roles()) {
        Role role{str(r->name()), {}, {}};
        if (r->cores())
          role.cores = fromFb(*r->cores());
        if (Error e = instrs(r->body(), role.body))
          return std::move(e);
        p.roles.push_back(std::move(role));
      }
    if (Error e = tensors(in.inputs(), p.inputs))
      return std::move(e);
    if (Error e = tensors(in.outputs(), p.outputs))
      return std::move(e);
    if (in.ops())
      for (const fb::OpInfo *op : *in.ops())
        p.ops.push_back(
            {str(op->name()), str(op->kind()), str(op->algorithm())});
    return p;
  }

private:
  Error bad(StringRef what) {
    return err(origin + ": corrupt bundle (undefined " + what + " value)");
  }

  Error instrs(const flatbuffers::Vector<flatbuffers::Offset<fb::Instr>> *list,
               std::vector<Instr> &out) {
    if (!list)
      return Error::success();
    for (const fb::Instr *in : *list) {
      if (uint8_t(in->op()) > uint8_t(Opcode::FlashStep))
        return bad("opcode");
      Instr i;
      i.op = Opcode(in->op());
      i.bufs = vec(in->bufs());
      i.channel = in->channel();
      i.channel2 = in->channel2();
      i.m = in->m();
      i.k = in->k();
      i.n = in->n();
      i.expr = str(in->expr());
      i.expr2 = str(in->expr2());
      i.mark = in->mark();
      i.groups = in->groups();
      i.scalar = in->scalar();
      if (Error e = instrs(in->body(), i.body))
        return e;
      out.push_back(std::move(i));
    }
    return Error::success();
  }

  Error
  tensors(const flatbuffers::Vector<flatbuffers::Offset<fb::HostTensor>> *list,
          std::vector<HostTensor> &out) {
    if (!list)
      return Error::success();
    for (const fb::HostTensor *in : *list) {
      if (in->dtype() != fb::DType::F32)
        return bad("tensor dtype");
      HostTensor t;
      t.name = str(in->name());
      t.shape = vec(in->shape());
      t.buffer = in->buffer();
      if (in->layout())
        for (const fb::LayoutDim *d : *in->layout()) {
          if (uint8_t(d->axis()) > uint8_t(Axis::Y))
            return bad("layout axis");
          t.layout.push_back({Axis(d->axis()), d->blocks()});
        }
      t.sourceShape = vec(in->source_shape());
      t.permutation = vec(in->permutation());
      t.data = vec(in->data());
      t.gatherIds = str(in->gather_ids());
      t.indexDim = in->index_dim();
      t.indexMap = vec(in->index_map());
      out.push_back(std::move(t));
    }
    return Error::success();
  }

  StringRef origin;
};

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

bool validRange(const Range &r, int64_t extent) {
  return r.step >= 1 && (r.lo > r.hi || (r.lo >= 0 && r.hi < extent));
}

std::string rangeText(const Range &r) {
  return formatv("{0}..{1}:{2}", r.lo, r.hi, r.step).str();
}

std::string coreSetText(const CoreSet &c) {
  return "x" + rangeText(c.x) + " y" + rangeText(c.y);
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
                        in.op == Opcode::Relay;
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
    if (Error e = IndexChecker(p).check())
      return e;
    if (Error e = channels())
      return e;
    if (Error e = roles())
      return e;
    for (const HostTensor &t : p.inputs)
      if (Error e = tensor(t, /*isInput=*/true))
        return e;
    for (const HostTensor &t : p.outputs)
      if (Error e = tensor(t, /*isInput=*/false))
        return e;
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

  Error body(const Role &role, const std::vector<Instr> &list,
             const std::string &prefix) {
    for (size_t i = 0; i < list.size(); ++i) {
      const Instr &in = list[i];
      std::string where = formatv("role '{0}' instruction {1}{2} ({3})",
                                  role.name, prefix, i, opcodeName(in.op));
      auto fail = [&](const Twine &what) { return err(where + ": " + what); };
      size_t wantBufs = 0;
      switch (in.op) {
      case Opcode::GemmTile:
      case Opcode::GemvTile:
      case Opcode::Add:
      case Opcode::Mul:
      case Opcode::Max:
      case Opcode::Swiglu:
      case Opcode::AttnScores:
      case Opcode::AttnValues:
        wantBufs = 3;
        break;
      case Opcode::RmsScale:
      case Opcode::Rope:
      case Opcode::FlashStep:
        wantBufs = 4;
        break;
      case Opcode::Swap:
      case Opcode::Copy:
      case Opcode::Reduce:
      case Opcode::SoftmaxExp:
      case Opcode::DivRows:
      case Opcode::Regrid:
        wantBufs = 2;
        break;
      case Opcode::Repeat:
      case Opcode::When:
      case Opcode::Mark:
        break;
      default:
        wantBufs = 1;
        break;
      }
      if (in.bufs.size() != wantBufs)
        return fail(
            formatv("needs {0} buffers, has {1}", wantBufs, in.bufs.size()));
      bool hasBody = in.op == Opcode::Repeat || in.op == Opcode::When;
      if (!hasBody && !in.body.empty())
        return fail("only repeat and when have a body");
      switch (in.op) {
      case Opcode::GemmTile:
      case Opcode::GemvTile: {
        int64_t m = in.op == Opcode::GemmTile ? in.m : 1;
        if (m < 0 || in.k < 0 || in.n < 0)
          return fail("negative tile size");
        if (!fits(m, in.n, elems(in.bufs[0])) ||
            !fits(m, in.k, elems(in.bufs[1])) ||
            !fits(in.k, in.n, elems(in.bufs[2])))
          return fail(formatv("tile m={0} k={1} n={2} exceeds its buffers", m,
                              in.k, in.n));
        if (in.bufs[0] == in.bufs[1] || in.bufs[0] == in.bufs[2])
          return fail("the accumulator must not alias an operand");
        break;
      }
      case Opcode::Reduce:
      case Opcode::RmsScale:
      case Opcode::Rope:
      case Opcode::AttnScores:
      case Opcode::SoftmaxExp:
      case Opcode::AttnValues:
      case Opcode::DivRows:
      case Opcode::Regrid:
      case Opcode::FlashStep:
        if (Error e = checkRowKernel(in))
          return fail(toString(std::move(e)));
        break;
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
        kernels::rowKernelExtents(in.op, in.m, in.groups, in.k, in.n);
    if (!extents)
      return extents.takeError();
    for (auto [buf, need] : llvm::zip(in.bufs, *extents))
      if (need > elems(buf))
        return err(formatv("needs {0} elements of buffer '{1}', which has {2}",
                           need, p.buffers[buf].name, elems(buf)));
    if (in.op == Opcode::Regrid &&
        (elems(in.bufs[0]) % (*extents)[0] != 0 ||
         elems(in.bufs[1]) % (*extents)[1] != 0))
      return err("regrid buffers must hold whole slots of rows x width");
    if (in.op == Opcode::AttnScores || in.op == Opcode::Regrid ||
        in.op == Opcode::FlashStep)
      if (Expected<Expr> e = Expr::parse(in.expr); !e)
        return e.takeError();
    if (in.op == Opcode::Regrid || in.op == Opcode::FlashStep)
      if (Expected<Expr> e = Expr::parse(in.expr2); !e)
        return e.takeError();
    if ((in.op == Opcode::AttnScores || in.op == Opcode::AttnValues ||
         in.op == Opcode::FlashStep || in.op == Opcode::Regrid) &&
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
    if (!isInput) {
      if (!t.permutation.empty()) {
        std::vector<int64_t> sorted = t.permutation;
        llvm::sort(sorted);
        for (size_t i = 0; i < sorted.size(); ++i)
          if (sorted.size() != t.shape.size() || sorted[i] != int64_t(i))
            return fail("permutation is not a permutation of the "
                        "dimensions");
      }
      int64_t elements = 1, returned = 1;
      for (int64_t d : t.shape)
        elements *= d;
      if (t.indexDim >= 0) {
        if (t.indexDim >= int64_t(t.shape.size()))
          return fail("index map dimension out of range");
        for (int64_t index : t.indexMap)
          if (index < 0 || index >= t.shape[t.indexDim])
            return fail("index map entry outside the tensor");
        elements = elements / std::max<int64_t>(t.shape[t.indexDim], 1) *
                   int64_t(t.indexMap.size());
      }
      for (int64_t d : t.sourceShape)
        if (d < 0 || !fits(returned, d, kMaxSize))
          return fail("returned shape too large");
        else
          returned *= d;
      if (!t.sourceShape.empty() && returned != elements)
        return fail("returned shape does not hold the tensor's elements");
      return Error::success();
    }

    size_t srcRank = t.sourceShape.size();
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
    if (srcRank > t.shape.size())
      return fail("source has more dimensions than the placed tensor");
    size_t lead = t.shape.size() - srcRank;
    bool mapped = t.indexDim >= 0;
    if (mapped && (lead != 0 || t.indexDim >= int64_t(srcRank) ||
                   int64_t(t.indexMap.size()) != t.shape[t.indexDim]))
      return fail("index map does not fit the placed tensor");
    int64_t count = 1;
    for (size_t j = 0; j < srcRank; ++j) {
      int64_t dim = t.sourceShape[t.permutation.empty() ? j : t.permutation[j]];
      if (mapped && int64_t(j) == t.indexDim) {
        for (int64_t index : t.indexMap)
          if (index < -1 || index >= dim)
            return fail("index map entry outside the source");
      } else if (dim < 0 || (dim != 1 && dim != t.shape[lead + j])) {
        return fail("source does not broadcast to the placed shape");
      }
      count *= t.sourceShape[j];
    }
    if (!t.gatherIds.empty()) {
      // data is the table; sourceShape the gathered rows.
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

std::vector<uint8_t> serializeBundle(const Program &program) {
  return Writer().write(program);
}

bool looksLikeBundle(StringRef bytes) {
  return bytes.size() >= 8 &&
         flatbuffers::BufferHasIdentifier(bytes.data(), kBundleIdentifier);
}

Expected<Program> deserializeBundle(StringRef bytes, StringRef origin) {
  if (!looksLikeBundle(bytes))
    return err(formatv("{0}: not a wafer bundle (no '{1}' identifier)", origin,
                       kBundleIdentifier));
  // FlatBuffers reads scalars in place; give it 8-byte aligned storage.
  std::vector<uint64_t> aligned;
  const uint8_t *data = reinterpret_cast<const uint8_t *>(bytes.data());
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize(divideCeil(bytes.size(), sizeof(uint64_t)));
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t *>(aligned.data());
  }
  // Instruction bodies nest, so allow deep trees and many tables.
  flatbuffers::Verifier verifier(data, bytes.size(), /*max_depth=*/256,
                                 /*max_tables=*/1u << 30);
  if (!fb::VerifyBundleBuffer(verifier))
    return err(origin + ": corrupt bundle (FlatBuffers verification failed)");
  Expected<Program> program = Reader(origin).read(*fb::GetBundle(data));
  if (!program)
    return program.takeError();
  if (Error e = IndexChecker(*program).check())
    return err(origin + ": " + toString(std::move(e)));
  return program;
}

Expected<Program> readBundleFile(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return err(formatv("cannot read bundle '{0}': {1}", path,
                       file.getError().message()));
  return deserializeBundle((*file)->getBuffer(), path);
}

Error writeBundleFile(const Program &program, StringRef path) {
  std::vector<uint8_t> bytes = serializeBundle(program);
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return err(formatv("cannot write bundle '{0}': {1}", path, ec.message()));
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  os.close();
  if (os.has_error()) {
    std::string msg = os.error().message();
    os.clear_error();
    return err(formatv("cannot write bundle '{0}': {1}", path, msg));
  }
  return Error::success();
}

Error validateProgram(const Program &program) {
  return Validator(program).check();
}

//===----------------------------------------------------------------------===//
// Dumping
//===----------------------------------------------------------------------===//

namespace {


std::string maskText(uint8_t mask) {
  std::vector<std::string> parts;
  for (Dir d : {Dir::Ramp, Dir::North, Dir::East, Dir::South, Dir::West})
    if (mask & dirBit(d))
      parts.push_back(std::string(dirName(d)));
  return parts.empty() ? "none" : join(parts, "|");
}

template <typename T> std::string listText(const std::vector<T> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// FNV-1a over the values' bit patterns: enough to tell weights apart.
uint32_t checksum(const std::vector<float> &values) {
  uint32_t h = 2166136261u;
  for (float f : values) {
    uint32_t bits = bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i) {
      h ^= (bits >> (8 * i)) & 0xff;
      h *= 16777619u;
    }
  }
  return h;
}

class Dumper {
public:
  Dumper(const Program &p, raw_ostream &os) : p(p), os(os) {}

  void dump() {
    os << "bundle version " << p.version << "\n";
    os << "target " << formatv("{0}", targetToJSON(p.target)) << "\n";
    os << "grid " << p.gridHeight << "x" << p.gridWidth << " (HxW) interleave "
       << (p.interleave ? "true" : "false") << "\n";
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer &b = p.buffers[i];
      os << "buffer " << i << " '" << b.name << "' "
         << (b.dtype == DType::F16 ? "f16" : "f32") << " elements " << b.elements
         << " offset " << b.offsetBytes << "\n";
    }
    for (size_t i = 0; i < p.channels.size(); ++i) {
      os << "channel " << i << " '" << p.channels[i].name << "'\n";
      for (const Route &r : p.channels[i].routes)
        os << "  route color " << r.color << " cores " << coreSetText(r.cores)
           << " in " << dirName(r.in) << " out " << maskText(r.outMask) << "\n";
    }
    for (size_t i = 0; i < p.roles.size(); ++i) {
      os << "role " << i << " '" << p.roles[i].name << "' cores "
         << coreSetText(p.roles[i].cores) << "\n";
      instrs(p.roles[i].body, 1);
    }
    for (size_t i = 0; i < p.inputs.size(); ++i)
      tensor("input", i, p.inputs[i]);
    for (size_t i = 0; i < p.outputs.size(); ++i)
      tensor("output", i, p.outputs[i]);
    for (size_t i = 0; i < p.ops.size(); ++i)
      os << "op " << i << " '" << p.ops[i].name << "' kind " << p.ops[i].kind
         << " algorithm " << p.ops[i].algorithm << "\n";
  }

private:
  std::string bufName(int32_t b) const {
    return b >= 0 && size_t(b) < p.buffers.size() ? p.buffers[b].name
                                                  : "#" + std::to_string(b);
  }
  std::string chName(int32_t c) const {
    return c >= 0 && size_t(c) < p.channels.size() ? p.channels[c].name
                                                   : "#" + std::to_string(c);
  }

  void instrs(const std::vector<Instr> &list, unsigned depth) {
    for (const Instr &in : list) {
      os.indent(2 * depth) << opcodeName(in.op);
      for (int32_t b : in.bufs)
        os << " " << bufName(b);
      switch (in.op) {
      case Opcode::GemmTile:
        os << " m " << in.m << " k " << in.k << " n " << in.n;
        break;
      case Opcode::GemvTile:
        os << " k " << in.k << " n " << in.n;
        break;
      case Opcode::RotateSlots:
        os << " slot " << in.n;
        break;
      case Opcode::Send:
      case Opcode::Recv:
        os << " on " << chName(in.channel);
        break;
      case Opcode::Relay:
        os << " from " << chName(in.channel) << " to " << chName(in.channel2);
        break;
      case Opcode::Repeat:
      case Opcode::When:
        os << " '" << in.expr << "'";
        break;
      case Opcode::Mark:
        os << " " << in.mark;
        break;
      case Opcode::Copy:
        os << " slot size " << in.n << " to '" << in.expr << "' from '"
           << in.expr2 << "'";
        break;
      case Opcode::Reduce:
      case Opcode::RmsScale:
      case Opcode::Rope:
      case Opcode::AttnScores:
      case Opcode::SoftmaxExp:
      case Opcode::AttnValues:
      case Opcode::DivRows:
      case Opcode::Regrid:
      case Opcode::FlashStep:
        os << " m " << in.m << " groups " << in.groups << " k " << in.k
           << " n " << in.n;
        if (in.scalar != 0)
          os << " scalar " << in.scalar;
        if (!in.expr.empty())
          os << " '" << in.expr << "'";
        if (!in.expr2.empty())
          os << " '" << in.expr2 << "'";
        break;
      default:
        break;
      }
      os << "\n";
      instrs(in.body, depth + 1);
    }
  }

  void tensor(StringRef kind, size_t i, const HostTensor &t) {
    os << kind << " " << i << " '" << t.name << "' f32 shape "
       << listText(t.shape) << " buffer " << bufName(t.buffer) << " layout [";
    for (size_t d = 0; d < t.layout.size(); ++d) {
      const LayoutDim &ld = t.layout[d];
      os << (d ? "," : "")
         << (ld.axis == Axis::X   ? "x"
             : ld.axis == Axis::Y ? "y"
                                  : "none");
      if (ld.axis != Axis::None)
        os << "/" << ld.blocks;
    }
    os << "]";
    if (kind == "input") {
      os << " source " << listText(t.sourceShape) << " permutation "
         << listText(t.permutation);
      if (t.data.empty())
        os << " user";
      else
        os << " weights " << t.data.size() << " values checksum "
           << format_hex_no_prefix(checksum(t.data), 8);
    }
    os << "\n";
  }

  const Program &p;
  raw_ostream &os;
};

} // namespace

void dumpProgram(const Program &program, raw_ostream &os) {
  Dumper(program, os).dump();
}

} // namespace wafer::rt
