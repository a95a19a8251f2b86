//===- FabricPlacement.cpp - A grid placed around fabric defects ----------===//
#include "wafer/Runtime/FabricPlacement.h"

#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace llvm;

namespace wafer::rt {

static Error error(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

static std::string defectCount(const Target &t) {
  return formatv("{0} dead core{1} and {2} dead link{3}", t.deadCores.size(),
                 t.deadCores.size() == 1 ? "" : "s", t.deadLinks.size(),
                 t.deadLinks.size() == 1 ? "" : "s")
      .str();
}

/// The first `count` indices whose `bad` flag is clear.
static std::vector<int64_t> firstUsable(const std::vector<char> &bad,
                                        int64_t count) {
  std::vector<int64_t> chosen;
  for (int64_t i = 0; int64_t(chosen.size()) < count; ++i)
    if (i >= int64_t(bad.size()) || !bad[i])
      chosen.push_back(i);
  return chosen;
}

Expected<FabricPlacement> placeAroundDefects(const Target &t, int64_t height,
                                             int64_t width) {
  if (!t.hasDefects())
    return FabricPlacement{};
  FabricPlacement p;
  p.rows.resize(height);
  p.cols.resize(width);
  std::iota(p.rows.begin(), p.rows.end(), 0);
  std::iota(p.cols.begin(), p.cols.end(), 0);
  // Defects lie on the fabric, so the flags cover every index that can be
  // bad; the span only grows from one round to the next, and so do the
  // flags, until the rows and columns they leave stop changing.
  std::vector<char> badRow(t.fabricHeight, 0), badCol(t.fabricWidth, 0);
  while (true) {
    int64_t lastRow = p.rows.back(), lastCol = p.cols.back();
    for (const DeadCore &c : t.deadCores)
      if (c.y <= lastRow && c.x <= lastCol)
        badRow[c.y] = badCol[c.x] = 1;
    for (const DeadLink &l : t.deadLinks) {
      if (!l.south && l.y <= lastRow && l.x + 1 <= lastCol)
        badRow[l.y] = 1;
      if (l.south && l.x <= lastCol && l.y + 1 <= lastRow)
        badCol[l.x] = 1;
    }
    std::vector<int64_t> rows = firstUsable(badRow, height);
    std::vector<int64_t> cols = firstUsable(badCol, width);
    if (rows == p.rows && cols == p.cols)
      break;
    p.rows = std::move(rows);
    p.cols = std::move(cols);
  }
  if (p.rows.back() >= t.fabricHeight || p.cols.back() >= t.fabricWidth)
    return error(formatv(
        "grid {0}x{1} (HxW) does not fit the {2} fabric of {3}x{4} (HxW) "
        "around its {5}: skipping the rows and columns they take, it needs "
        "{6}x{7} fabric cores",
        height, width, t.name, t.fabricHeight, t.fabricWidth, defectCount(t),
        p.rows.back() + 1, p.cols.back() + 1));
  return p;
}

static Error checkAxis(ArrayRef<int64_t> indices, int64_t count,
                       int64_t extent, StringRef what) {
  if (indices.empty())
    return count <= extent
               ? Error::success()
               : error(formatv("{0} grid {1}s do not fit the fabric's {2}",
                               count, what, extent));
  if (int64_t(indices.size()) != count)
    return error(formatv("the fabric placement lists {0} {1}s for {2} grid "
                         "{1}s",
                         indices.size(), what, count));
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= extent ||
        (i && indices[i] <= indices[i - 1]))
      return error(formatv("the fabric placement's {0}s must increase "
                           "within [0, {1}); grid {0} {2} is on fabric {0} "
                           "{3}",
                           what, extent, i, indices[i]));
  return Error::success();
}

Error checkFabricPlacement(const Target &t, int64_t height, int64_t width,
                           ArrayRef<int64_t> rows, ArrayRef<int64_t> cols) {
  if (Error e = checkAxis(rows, height, t.fabricHeight, "row"))
    return e;
  if (Error e = checkAxis(cols, width, t.fabricWidth, "column"))
    return e;
  if (!t.hasDefects())
    return Error::success();
  FabricPlacement p{rows.vec(), cols.vec()};
  // gridRow[r] is the grid row on fabric row r (-1: none); likewise columns.
  std::vector<int64_t> gridRow(t.fabricHeight, -1), gridCol(t.fabricWidth, -1);
  for (int64_t y = 0; y < height; ++y)
    gridRow[p.row(y)] = y;
  for (int64_t x = 0; x < width; ++x)
    gridCol[p.col(x)] = x;
  int64_t firstRow = p.row(0), lastRow = p.row(height - 1);
  int64_t firstCol = p.col(0), lastCol = p.col(width - 1);
  auto inRows = [&](int64_t r) { return r >= firstRow && r <= lastRow; };
  auto inCols = [&](int64_t c) { return c >= firstCol && c <= lastCol; };
  for (const DeadCore &c : t.deadCores) {
    std::string where =
        formatv("the dead core at fabric row {0}, column {1}", c.y, c.x);
    if (gridRow[c.y] >= 0 && gridCol[c.x] >= 0)
      return error(formatv("grid core x={0} y={1} is placed on {2}",
                           gridCol[c.x], gridRow[c.y], where));
    if (gridRow[c.y] >= 0 && inCols(c.x))
      return error(formatv("the messages along grid row {0} cross {1}",
                           gridRow[c.y], where));
    if (gridCol[c.x] >= 0 && inRows(c.y))
      return error(formatv("the messages along grid column {0} cross {1}",
                           gridCol[c.x], where));
  }
  for (const DeadLink &l : t.deadLinks) {
    std::string where = formatv(
        "the dead link between fabric row {0}, column {1} and row {2}, "
        "column {3}",
        l.y, l.x, l.y + l.south, l.x + !l.south);
    if (!l.south && gridRow[l.y] >= 0 && l.x >= firstCol && l.x < lastCol)
      return error(formatv("the messages along grid row {0} cross {1}",
                           gridRow[l.y], where));
    if (l.south && gridCol[l.x] >= 0 && l.y >= firstRow && l.y < lastRow)
      return error(formatv("the messages along grid column {0} cross {1}",
                           gridCol[l.x], where));
  }
  return Error::success();
}

} // namespace wafer::rt
