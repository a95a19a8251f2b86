//===- Pipelines.cpp - Named end-to-end pipelines -------------------------===//
#include "wafer/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void wafer::buildCompilePipeline(OpPassManager &pm,
                                 const CompileOptions &options) {
  // Shape computation and transformer patterns first, so that the planner
  // sees rms_norm, attention, linear, ... rather than their ONNX pieces.
  pm.addNestedPass<func::FuncOp>(createTfmFoldShapes());
  pm.addNestedPass<func::FuncOp>(createTfmRaiseTransformer());
  if (options.layers > 0)
    pm.addPass(createTfmKeepLayers(TfmKeepLayersOptions{options.layers}));
  ConvertTfmToMeshOptions convert;
  convert.grid = options.grid;
  convert.target = options.target;
  convert.gemm = options.gemm;
  convert.allreduce = options.allreduce;
  convert.ktreeK = options.ktreeK;
  convert.dtype = options.dtype;
  convert.kvCapacity = options.kvCapacity;
  convert.kv = options.kv;
  pm.addPass(createConvertTfmToMesh(convert));
  if (options.kv == "shift")
    pm.addNestedPass<func::FuncOp>(createMeshShiftKvCache());
  pm.addPass(createMeshPlaceInterleave());
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
      llvm::cl::desc("GEMM algorithm: meshgemm, cannon, summa or allgather"),
      llvm::cl::init("meshgemm")};
  Option<std::string> allreduce{
      *this, "allreduce",
      llvm::cl::desc("GEMV allreduce: ktree, pipeline or ring"),
      llvm::cl::init("ktree")};
  Option<int64_t> ktreeK{*this, "ktree-k",
                         llvm::cl::desc("K of the K-tree allreduce"),
                         llvm::cl::init(2)};
  Option<std::string> dtype{
      *this, "dtype", llvm::cl::desc("Element type on the grid: f32 or f16"),
      llvm::cl::init("f32")};
  Option<wafer::mesh::KvPolicy> kv{
      *this, "kv", llvm::cl::desc("KV cache policy"),
      llvm::cl::init(wafer::mesh::KvPolicy::shift),
      llvm::cl::values(
          clEnumValN(wafer::mesh::KvPolicy::shift, "shift",
                     "balanced upward shift (mesh-shift-kv-cache)"),
          clEnumValN(wafer::mesh::KvPolicy::concat, "concat",
                     "append to the bottom row (baseline)"))};
  Option<int64_t> layers{
      *this, "layers",
      llvm::cl::desc("Decoder layers to keep (0: all; tfm-keep-layers)"),
      llvm::cl::init(0)};
  Option<int64_t> kvCapacity{
      *this, "kv-capacity",
      llvm::cl::desc("Tokens a decode program's KV caches have room for "
                     "(0: its own step's)"),
      llvm::cl::init(0)};
};
} // namespace

void wafer::registerPipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "wafer-compile",
      "tfm to core: fold shapes, raise, plan onto the grid, interleave, allocate routes, check memory, lower",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildCompilePipeline(pm, {options.grid, options.target, options.gemm,
                                  options.allreduce, options.ktreeK,
                                  options.dtype,
                                  mesh::stringifyKvPolicy(options.kv).str(),
                                  options.layers, options.kvCapacity});
      });
}
