//===- TfmDialect.td - Transformer graph dialect -----------*- tablegen -*-===//
#ifndef WAFER_TFM_DIALECT
#define WAFER_TFM_DIALECT

include "mlir/IR/OpBase.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let summary = "Tensor-level transformer graphs with static shapes";
  let description = [{
    The level an imported model lands on. Ops follow ONNX semantics,
    numpy-style broadcasting included. Large weights are never attributes:
    `tfm.weight` refers to a tensor in a weight store (an ONNX file's
    initializers), so a module stays small whatever the model's size.
  }];
  let cppNamespace = "::wafer::tfm";
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, traits>;

#endif // WAFER_TFM_DIALECT
