//===- Pipelines.cpp - Named end-to-end pipelines -------------------------===//
#include "wafer/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace wafer;
using llvm::Error;
using llvm::StringRef;

void wafer::buildCompilePipeline(OpPassManager &pm,
                                 const CompileOptions &options) {
  buildRaisePipeline(pm, options);
  buildPlanPipeline(pm, options);
}

void wafer::buildRaisePipeline(OpPassManager &pm,
                               const CompileOptions &options) {
  // Shape computation and transformer patterns first, so that the planner
  // sees rms_norm, attention, linear, ... rather than their ONNX pieces.
  pm.addPass(createTfmBindPositionInputs());
  pm.addNestedPass<func::FuncOp>(createTfmFoldShapes());
  pm.addNestedPass<func::FuncOp>(createTfmRaiseTransformer());
  // Anything but 0 (all layers) goes to the pass, which rejects what is not
  // a layer count.
  if (options.layers != 0)
    pm.addPass(createTfmKeepLayers(TfmKeepLayersOptions{options.layers}));
}

void wafer::buildPlanPipeline(OpPassManager &pm,
                              const CompileOptions &options) {
  ConvertTfmToMeshOptions convert;
  convert.grid = options.grid;
  convert.target = options.target;
  convert.gemm = options.gemm;
  convert.allreduce = options.allreduce;
  convert.ktreeK = options.ktreeK;
  convert.dtype = options.dtype;
  convert.prefillHeads = options.prefillHeads;
  convert.interleave = options.interleave;
  pm.addPass(createConvertTfmToMesh(convert));
  MeshPlanKvCacheOptions kvCache;
  kvCache.policy = options.kv;
  kvCache.capacity = options.kvCapacity;
  kvCache.resident = options.residentCaches;
  pm.addNestedPass<func::FuncOp>(createMeshPlanKvCache(kvCache));
  if (options.handoffCapacity != 0)
    pm.addNestedPass<func::FuncOp>(createMeshRelayoutPhases(
        MeshRelayoutPhasesOptions{options.kv, options.handoffCapacity}));
  pm.addPass(createMeshPlaceInterleave(
      MeshPlaceInterleaveOptions{options.interleave}));
  pm.addPass(createMeshChooseKtree());
  pm.addPass(createMeshAllocateRoutes());
  pm.addPass(createMeshCheckMemory());
  if (options.lower)
    pm.addPass(createConvertMeshToCore());
}

namespace {
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> grid{*this, "grid",
                           llvm::cl::desc("Core grid as HxW (rows x columns)")};
  Option<std::string> target{
      *this, "target", llvm::cl::desc("Target preset or target JSON file"),
      llvm::cl::init("wse2")};
  Option<std::string> gemm{
      *this, "gemm",
      llvm::cl::desc("GEMM algorithm: meshgemm, cannon, summa, allgather or "
                     "auto (convert-tfm-to-mesh)"),
      llvm::cl::init("meshgemm")};
  Option<mesh::AllreduceAlgorithm> allreduce{
      *this, "allreduce", llvm::cl::desc("GEMV allreduce"),
      llvm::cl::init(mesh::AllreduceAlgorithm::ktree),
      allreduceAlgorithmValues()};
  Option<int64_t> ktreeK{
      *this, "ktree-k",
      llvm::cl::desc("K of the K-tree allreduces (0: one K for all, chosen by "
                     "mesh-choose-ktree)"),
      llvm::cl::init(2)};
  Option<GridDType> dtype{*this, "dtype",
                          llvm::cl::desc("Element type on the grid"),
                          llvm::cl::init(GridDType::f32), gridDTypeValues()};
  Option<mesh::KvPolicy> kv{*this, "kv", llvm::cl::desc("KV cache policy"),
                            llvm::cl::init(mesh::KvPolicy::shift),
                            kvPolicyValues()};
  Option<int64_t> layers{
      *this, "layers",
      llvm::cl::desc("Decoder layers to keep (0: all; tfm-keep-layers)"),
      llvm::cl::init(0)};
  Option<int64_t> kvCapacity{
      *this, "kv-capacity",
      llvm::cl::desc("Tokens a decode program's KV caches have room for "
                     "(0: its own step's)"),
      llvm::cl::init(0)};
  Option<int64_t> handoffCapacity{
      *this, "handoff-capacity",
      llvm::cl::desc("A prefill's on-chip KV hand-off to decode caches of "
                     "room for this many tokens (0: none; "
                     "mesh-relayout-phases)"),
      llvm::cl::init(0)};
  ListOption<std::string> resident{
      *this, "resident",
      llvm::cl::desc("Past caches a hand-off left in SRAM, NAME=BYTE_OFFSET "
                     "(mesh-plan-kv-cache)")};
  Option<std::string> prefillHeads{
      *this, "prefill-heads",
      llvm::cl::desc("Prefill attention on a grid wider than the KV heads: "
                     "auto, lanes or whole (convert-tfm-to-mesh)"),
      llvm::cl::init("auto")};
  Option<bool> interleave{*this, "interleave",
                          llvm::cl::desc("INTERLEAVE without a meshgemm too "
                                         "(mesh-place-interleave's always)"),
                          llvm::cl::init(false)};
};
} // namespace

void wafer::registerPipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "wafer-compile",
      "tfm to core: fold shapes, raise, plan onto the grid, interleave, allocate routes, check memory, lower",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        CompileOptions compile;
        compile.grid = options.grid;
        compile.target = options.target;
        compile.gemm = options.gemm;
        compile.allreduce = options.allreduce;
        compile.ktreeK = options.ktreeK;
        compile.dtype = options.dtype;
        compile.kv = options.kv;
        compile.prefillHeads = options.prefillHeads;
        compile.layers = options.layers;
        compile.kvCapacity = options.kvCapacity;
        compile.handoffCapacity = options.handoffCapacity;
        compile.residentCaches.assign(options.resident.begin(),
                                      options.resident.end());
        compile.interleave = options.interleave;
        buildCompilePipeline(pm, compile);
      });
}

Error wafer::parseCompileOption(CompileOptions &options, StringRef option,
                                StringRef value) {
  auto unknown = [&](StringRef what, StringRef known) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown " + what + " '" + value + "' (known: " +
                                       known + ")");
  };
  if (option == "gemm") {
    if (value != "auto" && !mesh::symbolizeGemmAlgorithm(value))
      return unknown("gemm algorithm", gemmAlgorithmNames() + ", auto");
    options.gemm = value.str();
  } else if (option == "allreduce") {
    std::optional<mesh::AllreduceAlgorithm> v =
        mesh::symbolizeAllreduceAlgorithm(value);
    if (!v)
      return unknown("allreduce algorithm", "ktree, pipeline, ring");
    options.allreduce = *v;
  } else if (option == "dtype") {
    if (value != "f32" && value != "f16")
      return unknown("dtype", "f32, f16");
    options.dtype = value == "f16" ? GridDType::f16 : GridDType::f32;
  } else if (option == "kv") {
    std::optional<mesh::KvPolicy> v = mesh::symbolizeKvPolicy(value);
    if (!v)
      return unknown("kv cache policy", "shift, concat");
    options.kv = *v;
  } else if (option == "prefill-heads") {
    if (value != "auto" && value != "lanes" && value != "whole")
      return unknown("prefill heads", "auto, lanes, whole");
    options.prefillHeads = value.str();
  } else {
    llvm_unreachable("not a compile option with named values");
  }
  return Error::success();
}

Error wafer::checkKtreeK(int64_t k) {
  if (k >= 0 && k <= 64)
    return Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "--ktree-k must be between 0 (one K for all, chosen by the cost model) "
      "and 64, got " +
          llvm::Twine(k));
}

std::string wafer::compileOptionText(const CompileOptions &options,
                                     StringRef option) {
  if (option == "gemm")
    return options.gemm;
  if (option == "allreduce")
    return mesh::stringifyAllreduceAlgorithm(options.allreduce).str();
  if (option == "dtype")
    return stringifyGridDType(options.dtype).str();
  if (option == "kv")
    return mesh::stringifyKvPolicy(options.kv).str();
  if (option == "prefill-heads")
    return options.prefillHeads;
  llvm_unreachable("not a compile option with named values");
}
