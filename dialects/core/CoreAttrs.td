//===- CoreAttrs.td - Core sets and directions -------------*- tablegen -*-===//
#ifndef WAFER_CORE_ATTRS
#define WAFER_CORE_ATTRS

include "CoreDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Core_CoreSetAttr : AttrDef<Core_Dialect, "CoreSet"> {
  let mnemonic = "cores";
  let summary = "A set of cores: an arithmetic progression on each axis";
  let description = [{
    `x = lo:hi:step` selects lo, lo+step, ... up to hi (inclusive); the set
    is the product of the x and y progressions. Rectangles, rows, columns
    and modulo classes are all of this form.

    ```mlir
    #core.cores<x = 0:6:2, y = 0:4:1>   // even columns of a 5x7 grid
    ```
  }];
  let parameters = (ins "int64_t":$x_lo, "int64_t":$x_hi, "int64_t":$x_step,
                        "int64_t":$y_lo, "int64_t":$y_hi, "int64_t":$y_step);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::wafer::rt::CoreSet toRuntime() const;
    static CoreSetAttr get(mlir::MLIRContext *context,
                           const ::wafer::rt::CoreSet &set);
  }];
}

def Core_Dir : I32EnumAttr<"Dir", "router port", [
      I32EnumAttrCase<"ramp", 0>, I32EnumAttrCase<"north", 1>,
      I32EnumAttrCase<"east", 2>, I32EnumAttrCase<"south", 3>,
      I32EnumAttrCase<"west", 4>
    ]> {
  let cppNamespace = "::wafer::core";
  let genSpecializedAttr = 0;
}
def Core_DirAttr : EnumAttr<Core_Dialect, Core_Dir, "dir"> {
  let assemblyFormat = "`<` $value `>`";
}

def Core_ElementwiseKind : I32EnumAttr<"ElementwiseKind",
    "element-wise kernel", [
      I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"mul", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"swiglu", 3>
    ]> {
  let cppNamespace = "::wafer::core";
  let genSpecializedAttr = 0;
}
def Core_ElementwiseKindAttr : EnumAttr<Core_Dialect, Core_ElementwiseKind,
                                        "elementwise"> {
  let assemblyFormat = "`<` $value `>`";
}

def Core_RowKernel : I32EnumAttr<"RowKernel", "row kernel", [
      I32EnumAttrCase<"reduce_sum", 0>, I32EnumAttrCase<"reduce_sumsq", 1>,
      I32EnumAttrCase<"reduce_max", 2>, I32EnumAttrCase<"rms_scale", 3>,
      I32EnumAttrCase<"rope", 4>, I32EnumAttrCase<"attn_scores", 5>,
      I32EnumAttrCase<"softmax_exp", 6>, I32EnumAttrCase<"attn_values", 7>,
      I32EnumAttrCase<"div_rows", 8>, I32EnumAttrCase<"regrid", 9>,
      I32EnumAttrCase<"flash_step", 10>, I32EnumAttrCase<"lane_scores", 11>,
      I32EnumAttrCase<"lane_values", 12>,
      I32EnumAttrCase<"lane_flash_scores", 13>,
      I32EnumAttrCase<"flash_stats", 14>,
      I32EnumAttrCase<"lane_flash_values", 15>,
      I32EnumAttrCase<"lane_div_rows", 16>
    ]> {
  let cppNamespace = "::wafer::core";
  let genSpecializedAttr = 0;
}
def Core_RowKernelAttr : EnumAttr<Core_Dialect, Core_RowKernel, "row_kernel"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // WAFER_CORE_ATTRS
