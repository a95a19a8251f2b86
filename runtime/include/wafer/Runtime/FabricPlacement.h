//===- FabricPlacement.h - A grid placed around fabric defects --*- C++ -*-===//
//
// Real wafers have dead cores and links (WaferLLM section 8). A program's
// H x W grid is placed on the fabric by choosing H fabric rows and W fabric
// columns, in order: grid core (x, y) runs on the fabric core at row
// rows[y], column cols[x]. A message between neighbouring grid cores
// crosses the skipped rows or columns between them, through the routers of
// cores that run nothing, and pays hop_cycles per fabric hop. The fabric
// cores a placement uses are the grid's cores and those on the straight
// paths between them: every core of a chosen row or column within the
// placement's span. A placement is valid when none of them is dead and no
// link between two used neighbours on such a path is dead.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_FABRICPLACEMENT_H
#define WAFER_RUNTIME_FABRICPLACEMENT_H

#include "wafer/Runtime/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace wafer::rt {

struct FabricPlacement {
  /// The fabric row of each grid row and the fabric column of each grid
  /// column, increasing. Empty: the identity (the grid in the fabric's
  /// north-west corner), which is what a target without defects gets.
  std::vector<int64_t> rows, cols;

  bool isIdentity() const { return rows.empty() && cols.empty(); }
  int64_t row(int64_t y) const { return rows.empty() ? y : rows[y]; }
  int64_t col(int64_t x) const { return cols.empty() ? x : cols[x]; }
};

/// Places an H x W grid from the fabric's north-west corner, skipping every
/// fabric row and column a defect within the placement's span makes
/// unusable: a dead core takes its row and its column (nothing may pass
/// through it), a dead east-west link its row, a dead north-south link its
/// column. The identity when the target has no defects. An error, naming
/// the defects and the span needed, when the grid does not fit the fabric
/// around them.
llvm::Expected<FabricPlacement> placeAroundDefects(const Target &target,
                                                   int64_t height,
                                                   int64_t width);

/// Checks that a placement (rows/cols empty: the identity) has one
/// increasing entry per grid row and column on the fabric and uses no dead
/// core or link; the error names the grid core or path and the defect.
llvm::Error checkFabricPlacement(const Target &target, int64_t height,
                                 int64_t width, llvm::ArrayRef<int64_t> rows,
                                 llvm::ArrayRef<int64_t> cols);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_FABRICPLACEMENT_H
