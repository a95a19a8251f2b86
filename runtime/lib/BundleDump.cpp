//===- BundleDump.cpp - A program as text ---------------------------------===//
#include "BundleInternal.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/RowShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace llvm;

namespace wafer::rt {

using detail::coreSetText;

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

/// A gather's source coordinates: `from a to b` when they run up by one
/// (a weight's part), else their count (a KV cache's slots).
std::string indexMapText(const std::vector<int64_t> &map) {
  for (size_t i = 1; i < map.size(); ++i)
    if (map[i] != map[0] + int64_t(i))
      return std::to_string(map.size()) + " coordinates";
  if (map.empty())
    return "no coordinates";
  return "from " + std::to_string(map.front()) + " to " +
         std::to_string(map.back());
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

static std::string toStr(int64_t v) { return std::to_string(v); }

class Dumper {
public:
  Dumper(const Program &p, raw_ostream &os) : p(p), os(os) {}

  void dump() {
    os << "bundle version " << p.version << "\n";
    os << "target " << formatv("{0}", targetToJSON(p.target)) << "\n";
    os << "grid " << p.gridHeight << "x" << p.gridWidth << " (HxW) interleave "
       << (p.interleave ? "true" : "false") << "\n";
    if (p.position)
      os << "position " << p.position << "\n";
    if (!p.fabricRows.empty() || !p.fabricCols.empty())
      os << "fabric rows [" << join(map_range(p.fabricRows, toStr), ", ")
         << "] columns [" << join(map_range(p.fabricCols, toStr), ", ")
         << "]\n";
    for (const BoundInput &bound : p.boundInputs)
      os << "bound input '" << bound.name << "' "
         << (bound.positions ? "positions" : "ones") << "\n";
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
         << " algorithm " << p.ops[i].algorithm
         << (p.ops[i].estimatedCycles < 0
                 ? std::string()
                 : " estimate " + std::to_string(p.ops[i].estimatedCycles))
         << "\n";
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
      case Opcode::CombineRelay:
        os << " " << opcodeName(Opcode(in.k)) << " on " << chName(in.channel);
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
      default:
        if (rowKernelOperands(in.op) == 0)
          break;
        os << " m " << in.m << " groups " << in.groups << " k " << in.k
           << " n " << in.n;
        if (in.scalar != 0)
          os << " scalar " << in.scalar;
        if (in.length != 0)
          os << " length " << in.length;
        if (in.parts != 1)
          os << " parts " << in.parts;
        if (!in.expr.empty())
          os << " '" << in.expr << "'";
        if (!in.expr2.empty())
          os << " '" << in.expr2 << "'";
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
      if (ld.axis != Axis::None) {
        os << "/" << ld.blocks << (ld.balanced ? " balanced" : "");
        if (ld.parts != 1)
          os << " in " << ld.parts;
      }
    }
    os << "]";
    if (!t.view.empty())
      os << " view " << listText(t.view);
    if (kind == "input") {
      os << " source " << listText(t.sourceShape);
      if (!t.sourceView.empty())
        os << " as " << listText(t.sourceView);
      os << " permutation " << listText(t.permutation);
      if (t.indexDim >= 0)
        os << " gathers dim " << t.indexDim << " " << indexMapText(t.indexMap);
      if (t.data.empty())
        os << " user";
      else
        os << " weights " << t.data.size()
           << (t.data.dtype() == DType::F16 ? " f16" : "")
           << " values checksum "
           << format_hex_no_prefix(checksum(t.data.toFloats()), 8);
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
