//===- PlanWeightParts.cpp - Parts of fused weights read by the host ------===//
//
// A fused projection's part (Phi-3's qkv_proj, gate_up_proj) is the linear
// of a range of its weight's output dimension (tfm-raise-transformer), so
// the planner places a tfm.slice of a weight like any weight, viewed the
// way its plan needs. Here each such placement reads the whole stored
// weight instead and picks the range with the distribute's index map: the
// host reads the part from the one stored weight, and the IR holds no copy.
//
//===----------------------------------------------------------------------===//
#include "TfmToMeshPlanner.h"

using namespace mlir;
using namespace wafer;

namespace {

/// The dimensions [first, last) of `view` whose product is `part[axis]`
/// and that start where the product of part's leading dimensions ends;
/// nullopt when the view merges the axis with another.
std::optional<std::pair<size_t, size_t>>
axisGroup(ArrayRef<int64_t> view, ArrayRef<int64_t> part, int64_t axis) {
  int64_t before = 1, product = 1;
  for (int64_t d = 0; d < axis; ++d)
    before *= part[d];
  size_t first = 0;
  while (first < view.size() && product < before)
    product *= view[first++];
  // Unit dimensions at the group's start belong to it or not alike.
  while (part[axis] > 1 && first < view.size() && view[first] == 1)
    ++first;
  if (product != before || first == view.size())
    return std::nullopt;
  size_t last = first;
  product = 1;
  do
    product *= view[last++];
  while (last < view.size() && product < part[axis]);
  if (product != part[axis])
    return std::nullopt;
  return std::make_pair(first, last);
}

/// Makes `distribute`, whose source is `slice` of a host value viewed as
/// `view`, read the whole value: the group of view dimensions the range
/// splits into keeps its inner dimensions and its first is index-mapped
/// into the whole axis.
LogicalResult readWholeValue(mesh::DistributeOp distribute, tfm::SliceOp slice,
                             ArrayRef<int64_t> view) {
  tfm::AxisRange range = *tfm::axisRangeOf(slice);
  ArrayRef<int64_t> part = slice.getType().getShape();
  ArrayRef<int64_t> whole = slice.getInput().getType().getShape();
  auto fail = [&](const Twine &why) {
    return distribute.emitError("convert-tfm-to-mesh: elements [")
           << range.start << ", " << range.end << ") of axis " << range.axis
           << " of a weight (a fused projection's part) cannot be placed "
           << "as its plan views them: " << why;
  };
  ArrayRef<int64_t> target = distribute.getView()
                                 ? *distribute.getView()
                                 : distribute.getResult().getType().getShape();
  if (distribute.getIndexDim())
    return fail("the placement already gathers another dimension");
  // An index map needs a source of the result's rank: a broadcast one
  // (a bias over the rows) gains leading unit dimensions.
  SmallVector<int64_t> padded(view);
  if (padded.size() < target.size() && !distribute.getPermutation())
    padded.insert(padded.begin(), target.size() - padded.size(), 1);
  if (padded.size() != target.size())
    return fail("the placement permutes and broadcasts it");
  view = padded;
  std::optional<std::pair<size_t, size_t>> group =
      axisGroup(view, part, range.axis);
  if (!group)
    return fail("the plan's view merges that axis with another");
  auto [first, last] = *group;
  int64_t inner = 1;
  for (size_t d = first + 1; d < last; ++d)
    inner *= view[d];
  if (range.start % inner || whole[range.axis] % inner)
    return fail(llvm::formatv("the view splits it into blocks of {0} "
                              "elements, which do not tile the whole axis "
                              "of {1} from {2}",
                              inner, whole[range.axis], range.start)
                    .str());
  SmallVector<int64_t> wholeView(view);
  wholeView[first] = whole[range.axis] / inner;
  int64_t mapped = int64_t(first);
  if (std::optional<ArrayRef<int64_t>> permutation =
          distribute.getPermutation())
    mapped = llvm::find(*permutation, int64_t(first)) - permutation->begin();
  SmallVector<int64_t> indexMap;
  for (int64_t j = 0; j < view[first]; ++j)
    indexMap.push_back(range.start / inner + j);
  Value source = slice.getInput();
  if (ArrayRef<int64_t>(wholeView) != whole) {
    OpBuilder builder(distribute);
    source = builder.create<tfm::ReshapeOp>(
        distribute.getLoc(), slice.getType().clone(wholeView), source);
  }
  distribute.getSourceMutable().assign(source);
  distribute.setIndexDim(mapped);
  distribute.setIndexMap(indexMap);
  return success();
}

} // namespace

LogicalResult planning::readWeightParts(func::FuncOp func) {
  SmallVector<mesh::DistributeOp> distributes;
  func.walk([&](mesh::DistributeOp op) { distributes.push_back(op); });
  for (mesh::DistributeOp distribute : distributes) {
    Value source = distribute.getSource();
    ArrayRef<int64_t> view =
        cast<RankedTensorType>(source.getType()).getShape();
    while (auto reshape = source.getDefiningOp<tfm::ReshapeOp>())
      source = reshape.getInput();
    auto slice = source.getDefiningOp<tfm::SliceOp>();
    if (slice && failed(readWholeValue(distribute, slice, view)))
      return failure();
  }
  return success();
}
