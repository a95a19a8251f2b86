//===- CompileOptions.h - The typed options of the compile flow -*- C++ -*-===//
//
// One struct of typed options (enums, not strings) for the whole flow from
// tfm to core: wafer-run fills it from its command line, wafer-opt's
// `wafer-compile` pipeline from its options, and buildCompilePipeline hands
// its fields to the passes, whose options have the same types. The value
// lists below are the one place each spelling is written.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_COMPILEOPTIONS_H
#define WAFER_PASSES_COMPILEOPTIONS_H

#include "wafer/Dialect/Mesh/MeshOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wafer {

/// The element type of the values on the grid (host I/O stays f32).
enum class GridDType { f32, f16 };

inline llvm::StringRef stringifyGridDType(GridDType dtype) {
  return dtype == GridDType::f16 ? "f16" : "f32";
}

/// mesh.gemm's algorithms in the order `--gemm auto` tries them (MeshGEMM,
/// the paper's, first: the first of the cheapest wins).
inline llvm::SmallVector<mesh::GemmAlgorithm, 4> gemmAlgorithms() {
  llvm::SmallVector<mesh::GemmAlgorithm, 4> all;
  for (uint32_t v = 0; v <= mesh::getMaxEnumValForGemmAlgorithm(); ++v)
    if (std::optional<mesh::GemmAlgorithm> algorithm =
            mesh::symbolizeGemmAlgorithm(v))
      all.push_back(*algorithm);
  return all;
}
/// Their spellings, comma-separated: `--gemm`'s values besides auto.
inline std::string gemmAlgorithmNames() {
  std::string names;
  for (mesh::GemmAlgorithm algorithm : gemmAlgorithms())
    names += (names.empty() ? "" : ", ") +
             mesh::stringifyGemmAlgorithm(algorithm).str();
  return names;
}

/// The spellings of each option's values, for llvm::cl options and pass
/// options (`--allreduce ring`, `allreduce=ring`).
inline llvm::cl::ValuesClass allreduceAlgorithmValues() {
  return llvm::cl::values(
      clEnumValN(mesh::AllreduceAlgorithm::ktree, "ktree",
                 "K-tree allreduce (the paper's MeshGEMV)"),
      clEnumValN(mesh::AllreduceAlgorithm::pipeline, "pipeline",
                 "one chain (the K-tree with K = 1)"),
      clEnumValN(mesh::AllreduceAlgorithm::ring, "ring",
                 "ring allreduce"));
}
inline llvm::cl::ValuesClass gridDTypeValues() {
  return llvm::cl::values(clEnumValN(GridDType::f32, "f32", "32-bit floats"),
                          clEnumValN(GridDType::f16, "f16", "half precision"));
}
inline llvm::cl::ValuesClass kvPolicyValues() {
  return llvm::cl::values(
      clEnumValN(mesh::KvPolicy::shift, "shift",
                 "balanced upward shift (paper section 4.3)"),
      clEnumValN(mesh::KvPolicy::concat, "concat",
                 "append to the bottom row (baseline)"));
}

/// Options of the whole compile flow, from tfm to core.
struct CompileOptions {
  /// The core grid, "HxW" (rows x columns).
  std::string grid;
  /// A target preset or a target JSON file.
  std::string target = "wse2";
  /// The GEMM algorithm of every multi-row matmul (meshgemm, cannon, summa,
  /// allgather), or auto: the one whose plan the cost model prices lowest
  /// (convert-tfm-to-mesh's `gemm`).
  std::string gemm = "meshgemm";
  mesh::AllreduceAlgorithm allreduce = mesh::AllreduceAlgorithm::ktree;
  /// K of the K-tree allreduces; 0: one K for all, chosen by
  /// mesh-choose-ktree.
  int64_t ktreeK = 2;
  GridDType dtype = GridDType::f32;
  /// KV cache policy (mesh-plan-kv-cache): shift or concat.
  mesh::KvPolicy kv = mesh::KvPolicy::shift;
  /// Prefill attention on a grid wider than the KV heads: auto, lanes or
  /// whole (convert-tfm-to-mesh's `prefill-heads`).
  std::string prefillHeads = "auto";
  /// Decoder layers to keep (tfm-keep-layers); 0 keeps the whole model.
  int64_t layers = 0;
  /// Tokens a decode program's KV caches have room for (0: its own step's;
  /// mesh-plan-kv-cache).
  int64_t kvCapacity = 0;
  /// A prefill for a decode program on the same cores: hand its keys and
  /// values to caches of room for this many tokens (mesh-relayout-phases;
  /// 0: no hand-off).
  int64_t handoffCapacity = 0;
  /// A decode program's past caches a hand-off left in SRAM, as
  /// "NAME=BYTE_OFFSET" (mesh-plan-kv-cache's `resident`).
  std::vector<std::string> residentCaches;
  /// Place on INTERLEAVE without a MeshGEMM too (mesh-place-interleave's
  /// `always`): the placement of the prefill whose caches it takes over.
  bool interleave = false;
  /// False stops after mesh-check-memory (to ask whether a plan fits).
  bool lower = true;
};

/// Sets the field a command-line option names ("gemm", "allreduce",
/// "dtype", "kv" or "prefill-heads") from its text; the error names the value
/// and those known, as "unknown gemm algorithm 'foo' (known: meshgemm, ...)".
llvm::Error parseCompileOption(CompileOptions &options, llvm::StringRef option,
                               llvm::StringRef value);

/// Checks `--ktree-k`'s value: 0 (one K for all, chosen by the cost model)
/// to 64.
llvm::Error checkKtreeK(int64_t k);

/// The text of such a field, as parseCompileOption reads it.
std::string compileOptionText(const CompileOptions &options,
                              llvm::StringRef option);

} // namespace wafer

#endif // WAFER_PASSES_COMPILEOPTIONS_H
