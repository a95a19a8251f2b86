//===- wafer-opt.cpp - wafer's pass driver --------------------------------===//
#include "wafer/Passes/Passes.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  wafer::registerTfmPasses();
  wafer::registerMeshPasses();
  wafer::registerConversionPasses();
  wafer::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<wafer::tfm::TfmDialect, wafer::mesh::MeshDialect,
                  wafer::core::CoreDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "wafer pass driver\n", registry));
}
