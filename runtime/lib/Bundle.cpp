//===- Bundle.cpp - Program bundle file (FlatBuffers) ---------------------===//
// The verifier then records how far into the buffer the bundle reaches, so
// that trailing bytes can be refused.
#define FLATBUFFERS_TRACK_VERIFIER_BUFFER_SIZE
#include "wafer/Runtime/Bundle.h"
#include "BundleInternal.h"
#include "wafer/Runtime/bundle_generated.h"
#include "wafer/Support/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <numeric>

using namespace llvm;
namespace fb = wafer::fb;

namespace wafer::rt {

/// Whether a bundle stores the tensor's values as f16: those of a weight
/// that lands in an f16 buffer, which placement rounds to f16 anyway.
static bool storedAsHalves(const Program &p, const HostTensor &t) {
  return !t.data.empty() && t.buffer >= 0 &&
         size_t(t.buffer) < p.buffers.size() &&
         p.buffers[t.buffer].dtype == DType::F16;
}

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
  case Opcode::LaneScores:
    return "lane_scores";
  case Opcode::LaneValues:
    return "lane_values";
  case Opcode::CombineRelay:
    return "combine_relay";
  case Opcode::LaneFlashScores:
    return "lane_flash_scores";
  case Opcode::FlashStats:
    return "flash_stats";
  case Opcode::LaneFlashValues:
    return "lane_flash_values";
  case Opcode::LaneDivRows:
    return "lane_div_rows";
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
    // Absent rather than empty, so programs without defects keep their
    // bytes.
    FlatDefects defects = flattenDefects(t);
    auto target = fb::CreateTarget(
        b, b.CreateString(t.name), t.fabricWidth, t.fabricHeight, t.clockHz,
        t.sramBytes, t.routesPerCore, t.hopCycles, t.rampCycles, t.relayCycles,
        t.linkWordsPerCycle, macs, t.sendIssueCycles,
        optionalVector(defects.cores), optionalVector(defects.links),
        t.memoryCyclesPerOp);

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
    auto inputs = tensors(p, p.inputs);
    auto outputs = tensors(p, p.outputs);
    std::vector<flatbuffers::Offset<fb::OpInfo>> ops;
    for (const OpInfo &op : p.ops)
      ops.push_back(fb::CreateOpInfo(b, b.CreateString(op.name),
                                     b.CreateString(op.kind),
                                     b.CreateString(op.algorithm),
                                     op.estimatedCycles));
    std::vector<flatbuffers::Offset<fb::BoundInput>> bound;
    for (const BoundInput &in : p.boundInputs)
      bound.push_back(
          fb::CreateBoundInput(b, b.CreateString(in.name), in.positions));
    auto root = fb::CreateBundle(
        b, p.version, target, p.gridHeight, p.gridWidth, p.interleave,
        b.CreateVector(buffers), b.CreateVector(channels),
        b.CreateVector(roles), inputs, outputs, b.CreateVector(ops),
        p.kvCapacityTokens, p.position, optionalVector(p.fabricRows),
        optionalVector(p.fabricCols),
        bound.empty() ? 0 : b.CreateVector(bound));
    fb::FinishBundleBuffer(b, root);
    return std::vector<uint8_t>(b.GetBufferPointer(),
                                b.GetBufferPointer() + b.GetSize());
  }

private:
  flatbuffers::Offset<flatbuffers::Vector<int64_t>>
  optionalVector(const std::vector<int64_t> &values) {
    return values.empty() ? 0 : b.CreateVector(values);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Instr>>>
  instrs(const std::vector<Instr> &list) {
    std::vector<flatbuffers::Offset<fb::Instr>> out;
    for (const Instr &in : list) {
      auto body = instrs(in.body);
      out.push_back(fb::CreateInstr(
          b, fb::Opcode(in.op), b.CreateVector(in.bufs), in.channel,
          in.channel2, in.m, in.k, in.n, b.CreateString(in.expr), in.mark, body,
          b.CreateString(in.expr2), in.groups, in.scalar, in.length, in.parts));
    }
    return b.CreateVector(out);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::HostTensor>>>
  tensors(const Program &p, const std::vector<HostTensor> &list) {
    std::vector<flatbuffers::Offset<fb::HostTensor>> out;
    for (const HostTensor &t : list) {
      std::vector<fb::LayoutDim> layout;
      std::vector<uint8_t> balanced;
      std::vector<int64_t> parts;
      for (const LayoutDim &d : t.layout) {
        layout.emplace_back(fb::Axis(d.axis), d.blocks);
        balanced.push_back(d.balanced);
        parts.push_back(d.parts);
      }
      if (llvm::none_of(balanced, [](uint8_t b) { return b; }))
        balanced.clear();
      if (llvm::all_of(parts, [](int64_t n) { return n == 1; }))
        parts.clear();
      flatbuffers::Offset<flatbuffers::Vector<float>> data = 0;
      flatbuffers::Offset<flatbuffers::Vector<uint16_t>> dataF16 = 0;
      // A weight placed more than once (a tied embedding, each part of a
      // fused projection) is stored once: the tensors share the vector.
      bool halves = storedAsHalves(p, t);
      const void *values = t.data.f32()
                               ? static_cast<const void *>(t.data.f32())
                               : static_cast<const void *>(t.data.f16());
      auto &written = writtenData[{values, t.data.size(), halves}];
      if (values && written.o) {
        (halves ? dataF16.o : data.o) = written.o;
      } else if (halves) {
        dataF16 = t.data.f16() ? b.CreateVector(t.data.f16(), t.data.size())
                               : b.CreateVector(t.data.toHalves());
        written.o = dataF16.o;
      } else if (!t.data.empty()) {
        data = t.data.f32() ? b.CreateVector(t.data.f32(), t.data.size())
                            : b.CreateVector(t.data.toFloats());
        written.o = data.o;
      }
      out.push_back(fb::CreateHostTensor(
          b, b.CreateString(t.name), b.CreateVector(t.shape),
          fb::DType(t.dtype), t.buffer, b.CreateVectorOfStructs(layout),
          b.CreateVector(t.sourceShape), b.CreateVector(t.permutation), data,
          b.CreateString(t.gatherIds), int32_t(t.indexDim),
          b.CreateVector(t.indexMap), t.weight, b.CreateVector(t.view),
          b.CreateVector(t.sourceView), dataF16,
          balanced.empty() ? 0 : b.CreateVector(balanced),
          parts.empty() ? 0 : b.CreateVector(parts)));
    }
    return b.CreateVector(out);
  }

  flatbuffers::FlatBufferBuilder b{1 << 16};
  /// The data vectors written so far, by the values they hold.
  std::map<std::tuple<const void *, size_t, bool>, flatbuffers::Offset<void>>
      writtenData;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

std::string str(const flatbuffers::String *s) {
  return s ? s->str() : std::string();
}

Range fromFb(const fb::Range &r) { return {r.lo(), r.hi(), r.step()}; }
CoreSet fromFb(const fb::CoreSet &c) { return {fromFb(c.x()), fromFb(c.y())}; }

/// Converts the verified FlatBuffers tables; enum values the schema does not
/// define (the verifier does not check them) are errors.
class Reader {
public:
  /// With an owner, weights are viewed in place and `owner` keeps the
  /// bytes alive (`inMappedFile`: in a read-only file mapping); without,
  /// they are copied.
  Reader(StringRef origin, bool withWeights, std::shared_ptr<const void> owner,
         bool inMappedFile)
      : origin(origin), withWeights(withWeights), owner(std::move(owner)),
        inMappedFile(inMappedFile) {}

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
      p.target.sendIssueCycles = t->send_issue_cycles();
      p.target.memoryCyclesPerOp = t->memory_cycles_per_op();
      if (const fb::MacsPerCycle *m = t->macs_per_cycle()) {
        p.target.macsPerCycleF32 = m->f32();
        p.target.macsPerCycleF16 = m->f16();
        p.target.macsPerCycleF16AccF32 = m->f16_f32();
      }
      const auto *cores = t->dead_cores();
      const auto *links = t->dead_links();
      auto values = [](const flatbuffers::Vector<int64_t> *v) {
        return v ? ArrayRef<int64_t>(v->data(), v->size())
                 : ArrayRef<int64_t>();
      };
      if (!aligned(cores, alignof(int64_t)) ||
          !aligned(links, alignof(int64_t)) ||
          !unflattenDefects(values(cores), values(links), p.target))
        return bad("fabric defect");
    }
    p.gridHeight = in.grid_height();
    p.gridWidth = in.grid_width();
    p.interleave = in.interleave();
    p.kvCapacityTokens = in.kv_capacity_tokens();
    p.position = in.position();
    for (auto [list, into] : {std::pair{in.fabric_rows(), &p.fabricRows},
                              std::pair{in.fabric_cols(), &p.fabricCols}})
      if (list) {
        if (!aligned(list, alignof(int64_t)))
          return bad("fabric placement");
        into->assign(list->begin(), list->end());
      }
    if (in.bound_inputs())
      for (const fb::BoundInput *bound : *in.bound_inputs())
        p.boundInputs.push_back({str(bound->name()), bound->positions()});
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
        if (ch->routes() && aligned(ch->routes(), alignof(fb::Route)))
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
        p.ops.push_back({str(op->name()), str(op->kind()),
                         str(op->algorithm()), op->estimated_cycles()});
    if (misaligned)
      return err(origin + ": corrupt bundle (a vector's elements are not "
                          "aligned)");
    return p;
  }

private:
  /// The verifier checks a vector's length word but not that its elements
  /// sit on their own alignment; the writer aligns every non-empty one, so a
  /// misaligned vector is corruption (and reading it is undefined behaviour).
  template <typename V> bool aligned(const V *v, size_t alignment) {
    if (!v || v->size() == 0 ||
        reinterpret_cast<uintptr_t>(v->Data()) % alignment == 0)
      return true;
    misaligned = true;
    return false;
  }

  template <typename T> std::vector<T> vec(const flatbuffers::Vector<T> *v) {
    if (!v || !aligned(v, alignof(T)))
      return {};
    return std::vector<T>(v->begin(), v->end());
  }

  template <typename T>
  TensorValues values(const flatbuffers::Vector<T> *v, DType dtype) {
    if (!v || v->size() == 0 || !aligned(v, alignof(T)))
      return {};
    if (owner)
      return TensorValues::view(v->Data(), v->size(), dtype, owner,
                                inMappedFile);
    // Tensors that share a vector (one weight placed twice) share the copy.
    TensorValues &copy = copies[v->Data()];
    if (copy.empty()) {
      if constexpr (std::is_same_v<T, uint16_t>)
        copy = TensorValues::halves(vec(v));
      else
        copy = TensorValues(vec(v));
    }
    return copy;
  }

  Error bad(StringRef what) {
    return err(origin + ": corrupt bundle (undefined " + what + " value)");
  }

  Error instrs(const flatbuffers::Vector<flatbuffers::Offset<fb::Instr>> *list,
               std::vector<Instr> &out) {
    if (!list)
      return Error::success();
    for (const fb::Instr *in : *list) {
      if (uint8_t(in->op()) > uint8_t(kLastOpcode))
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
      i.length = in->length();
      i.parts = in->parts();
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
      if (in->layout() && aligned(in->layout(), alignof(fb::LayoutDim)))
        for (const fb::LayoutDim *d : *in->layout()) {
          if (uint8_t(d->axis()) > uint8_t(Axis::Y))
            return bad("layout axis");
          t.layout.push_back({Axis(d->axis()), d->blocks()});
        }
      if (const auto *balanced = in->balanced()) {
        if (balanced->size() != t.layout.size())
          return bad("balanced flags");
        for (auto [d, flag] : llvm::zip(t.layout, *balanced))
          d.balanced = flag;
      }
      if (in->parts()) {
        std::vector<int64_t> parts = vec(in->parts());
        if (parts.size() != t.layout.size())
          return bad("layout parts");
        for (auto [d, count] : llvm::zip(t.layout, parts))
          d.parts = count;
      }
      t.sourceShape = vec(in->source_shape());
      t.permutation = vec(in->permutation());
      // The timing mode needs a weight's shape, not its values.
      if (in->data() && in->data_f16())
        return err(origin + ": corrupt bundle (tensor '" + t.name +
                   "' has both f32 and f16 values)");
      if (withWeights || !in->weight())
        t.data = in->data_f16() ? values(in->data_f16(), DType::F16)
                                : values(in->data(), DType::F32);
      else
        omittedWeights |= (in->data() && in->data()->size() > 0) ||
                          (in->data_f16() && in->data_f16()->size() > 0);
      t.gatherIds = str(in->gather_ids());
      t.indexDim = in->index_dim();
      t.indexMap = vec(in->index_map());
      t.weight = in->weight();
      t.view = vec(in->view());
      t.sourceView = vec(in->source_view());
      out.push_back(std::move(t));
    }
    return Error::success();
  }

  StringRef origin;
  bool withWeights;
  std::shared_ptr<const void> owner;
  bool inMappedFile;
  bool misaligned = false;
  std::map<const void *, TensorValues> copies;

public:
  /// Whether withWeights = false left out any weight's values.
  bool omittedWeights = false;
};

} // namespace

static uint64_t checksumOf(ArrayRef<uint8_t> flatbuffer) {
  return xxh3_64bits(flatbuffer);
}

void sealBundle(std::vector<uint8_t> &flatbuffer) {
  uint64_t sum = checksumOf(flatbuffer);
  flatbuffer.insert(flatbuffer.end(), kBundleChecksumTag,
                    kBundleChecksumTag + 4);
  for (int i = 0; i < 8; ++i)
    flatbuffer.push_back(uint8_t(sum >> (8 * i)));
}

Expected<std::vector<uint8_t>> serializeBundle(const Program &program,
                                               uint64_t maxBytes) {
  // FlatBuffers offsets are 32-bit: past 2 GiB the builder writes a buffer
  // no reader accepts. The tensors' values are nearly all of a bundle; the
  // margin stands for the code, names and tables.
  uint64_t values = 0;
  for (const std::vector<HostTensor> *list :
       {&program.inputs, &program.outputs})
    for (const HostTensor &t : *list)
      values += t.data.size() * (storedAsHalves(program, t) ? 2 : 4) +
                t.indexMap.size() * sizeof(int64_t);
  static_assert(kMaxBundleBytes <= FLATBUFFERS_MAX_BUFFER_SIZE);
  uint64_t margin = std::min<uint64_t>(uint64_t(64) << 20, maxBytes / 32);
  if (values + margin > std::min(maxBytes, kMaxBundleBytes))
    return err(formatv("the bundle would hold {0} bytes of tensor values, "
                       "more than a bundle can ({1} bytes, FlatBuffers' "
                       "limit)",
                       values, maxBytes));
  std::vector<uint8_t> bytes = Writer().write(program);
  sealBundle(bytes);
  return bytes;
}

bool looksLikeBundle(StringRef bytes) {
  return bytes.size() >= 8 &&
         flatbuffers::BufferHasIdentifier(bytes.data(), kBundleIdentifier);
}

Expected<Program> deserializeBundle(StringRef bytes, StringRef origin,
                                    bool withWeights,
                                    std::shared_ptr<const MemoryBuffer> file) {
  if (!looksLikeBundle(bytes))
    return err(formatv("{0}: not a wafer bundle (no '{1}' identifier)", origin,
                       kBundleIdentifier));
  if (bytes.size() < kBundleTrailerBytes ||
      bytes.substr(bytes.size() - kBundleTrailerBytes, 4) != kBundleChecksumTag)
    return err(origin + ": corrupt bundle (no checksum trailer at its end: "
                        "cut short, or bytes appended)");
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i)
    stored |= uint64_t(uint8_t(bytes[bytes.size() - 8 + i])) << (8 * i);
  bytes = bytes.drop_back(kBundleTrailerBytes);
  if (checksumOf(arrayRefFromStringRef(bytes)) != stored)
    return err(origin + ": corrupt bundle (checksum mismatch: its bytes "
                        "changed after it was written)");
  // FlatBuffers reads scalars in place; give it 8-byte aligned storage.
  const uint8_t *data = reinterpret_cast<const uint8_t *>(bytes.data());
  std::shared_ptr<const void> owner = file;
  bool inMappedFile =
      file && file->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap;
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    auto aligned = std::make_shared<std::vector<uint64_t>>(
        divideCeil(bytes.size(), sizeof(uint64_t)));
    std::memcpy(aligned->data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t *>(aligned->data());
    // Weights viewed in place then live in the copy.
    if (owner)
      owner = std::move(aligned);
    inMappedFile = false;
  }
  // Instruction bodies nest, so allow deep trees and many tables.
  flatbuffers::Verifier verifier(data, bytes.size(), /*max_depth=*/256,
                                 /*max_tables=*/1u << 30);
  if (!fb::VerifyBundleBuffer(verifier))
    return err(origin + ": corrupt bundle (FlatBuffers verification failed)");
  // The writer's buffer ends exactly where its data does.
  size_t used = verifier.GetComputedSize();
  if (used == 0 || used != bytes.size())
    return err(formatv("{0}: corrupt bundle ({1} bytes after its end at byte "
                       "{2})",
                       origin, bytes.size() - used, used));
  Reader reader(origin, withWeights, std::move(owner), inMappedFile);
  Expected<Program> program = reader.read(*fb::GetBundle(data));
  // The checksum read every page; the weights' pages come back one tensor
  // at a time as they are placed (and given back again after).
  if (inMappedFile)
    releaseMappedPages(data, int64_t(bytes.size()));
  if (!program)
    return program.takeError();
  program->weightsOmitted |= reader.omittedWeights;
  if (Error e = detail::checkIndices(*program))
    return err(origin + ": " + toString(std::move(e)));
  return program;
}

Expected<Program> readBundleFile(StringRef path) {
  if (Error special = refuseSpecialFile(path))
    return std::move(special);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return err(formatv("cannot read bundle '{0}': {1}", path,
                       file.getError().message()));
  std::shared_ptr<const MemoryBuffer> mapped = std::move(*file);
  return deserializeBundle(mapped->getBuffer(), path, /*withWeights=*/true,
                           mapped);
}

Error writeBundleFile(const Program &program, StringRef path) {
  Expected<std::vector<uint8_t>> serialized = serializeBundle(program);
  if (!serialized)
    return err(formatv("cannot write bundle '{0}': {1}", path,
                       toString(serialized.takeError())));
  std::vector<uint8_t> &bytes = *serialized;
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


} // namespace wafer::rt
