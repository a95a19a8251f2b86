//===- CoreDialect.td - Per-core programs ------------------*- tablegen -*-===//
#ifndef WAFER_CORE_DIALECT
#define WAFER_CORE_DIALECT

include "mlir/IR/OpBase.td"

def Core_Dialect : Dialect {
  let name = "core";
  let summary = "Per-core programs grouped by role";
  let description = [{
    The last level before the program bundle. A `core.program` holds SRAM
    buffers, routing channels and role programs. A role's instructions run
    on every core its predicate selects and may read the core's coordinates
    through small integer expressions (`x`, `y` physical; `lx`, `ly` on the
    logical ring; `W`, `H`), so the size of a program does not grow with
    the number of cores.
  }];
  let cppNamespace = "::wafer::core";
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::wafer::mesh::MeshDialect"];
}

class Core_Op<string mnemonic, list<Trait> traits = []>
    : Op<Core_Dialect, mnemonic, traits>;

#endif // WAFER_CORE_DIALECT
