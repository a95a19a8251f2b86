//===- MeshInterfaces.td - What communicating mesh ops tell ---*- tablegen -*-===//
#ifndef WAFER_MESH_INTERFACES
#define WAFER_MESH_INTERFACES

include "mlir/IR/OpBase.td"

def Mesh_CommunicatingOpInterface : OpInterface<"CommunicatingOpInterface"> {
  let description = [{
    A mesh op whose algorithm moves data between cores. The passes that
    need to know what it moves and keeps ask the op, not a list of op
    types: `mesh-allocate-routes` colors its channel families,
    `mesh-check-memory` and `convert-mesh-to-core` allocate its working
    buffers, and `mesh-choose-ktree` sizes its allreduce. A new
    communicating op implements the methods that apply to it; the others
    default to none.
  }];
  let cppNamespace = "::wafer::mesh";
  let methods = [
    InterfaceMethod<[{
        The message-path families of the op on `grid` (one routing channel
        each), under INTERLEAVE when `interleave`.
      }], "std::vector<::wafer::ChannelFamily>", "getChannelFamilies",
      (ins "::wafer::mesh::GridAttr":$grid, "bool":$interleave), "",
      "return {};">,
    InterfaceMethod<[{
        The working buffers each core allocates during the op, in
        allocation order.
      }], "std::vector<::wafer::ScratchBuffer>", "getScratchBuffers",
      (ins "::wafer::mesh::GridAttr":$grid), "", "return {};">,
    InterfaceMethod<[{
        How the op combines values across a grid axis with an allreduce,
        if it does.
      }], "std::optional<::wafer::AllreduceUse>", "getAllreduceUse",
      (ins "::wafer::mesh::GridAttr":$grid), "", "return std::nullopt;">,
  ];
}

def Mesh_CostedOpInterface : OpInterface<"CostedOpInterface"> {
  let description = [{
    A mesh op the cores run, with a closed-form estimate of its cycles: the
    critical path of its algorithm priced with the target's timing model
    (`rt::TimingModel`, the prices the emulator charges event by event),
    from the op's sizes, grid and placement alone. `wafer-run run --mode
    analytic` runs them one after another on a per-core clock
    (`advanceClock`) instead of running the program; the estimates ignore
    some of the link contention and skew between cores that the emulator
    models, so they approximate its cycles (docs/benchmarks.md says how
    well).
  }];
  let cppNamespace = "::wafer::mesh";
  let methods = [
    InterfaceMethod<[{
        Cycles from the op's start on every core to its end on the last,
        under INTERLEAVE when `interleave`.
      }], "int64_t", "estimateCycles",
      (ins "::wafer::mesh::GridAttr":$grid,
           "const ::wafer::rt::TimingModel &":$timing, "bool":$interleave)>,
    InterfaceMethod<[{
        Moves the analytic mode's clock over the op: each core's time
        becomes when it is done with the op, starting from when it was done
        with the op before. By default every core waits for the last one
        (a barrier) and the op takes estimateCycles; ops whose cores wait
        for fewer (none, or their grid row or column) say so.
      }], "void", "advanceClock",
      (ins "::wafer::cost::CoreClock &":$clock,
           "::wafer::mesh::GridAttr":$grid,
           "const ::wafer::rt::TimingModel &":$timing, "bool":$interleave),
      "", [{
        clock.barrier($_op.estimateCycles(grid, timing, interleave));
      }]>,
  ];
}

#endif // WAFER_MESH_INTERFACES
