//===- FabricPlacementTest.cpp - Grids placed around dead cores and links -===//
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Emulator.h"
#include "wafer/Runtime/FabricPlacement.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace wafer::rt;
using namespace wafer::rt::test;

namespace {

Target targetWith(std::vector<DeadCore> cores, std::vector<DeadLink> links) {
  Target t = testTarget();
  t.deadCores = std::move(cores);
  t.deadLinks = std::move(links);
  return t;
}

/// An independent statement of what a placement must avoid: walks every
/// fabric core and link the grid and its straight paths use.
bool usesADefect(const Target &t, const FabricPlacement &p, int64_t h,
                 int64_t w) {
  std::set<std::pair<int64_t, int64_t>> dead;
  for (const DeadCore &c : t.deadCores)
    dead.insert({c.y, c.x});
  std::set<std::tuple<int64_t, int64_t, bool>> deadLinks;
  for (const DeadLink &l : t.deadLinks)
    deadLinks.insert({l.y, l.x, l.south});
  for (int64_t y = 0; y < h; ++y)
    for (int64_t c = p.col(0); c <= p.col(w - 1); ++c)
      if (dead.count({p.row(y), c}) ||
          (c < p.col(w - 1) && deadLinks.count({p.row(y), c, false})))
        return true;
  for (int64_t x = 0; x < w; ++x)
    for (int64_t r = p.row(0); r <= p.row(h - 1); ++r)
      if (dead.count({r, p.col(x)}) ||
          (r < p.row(h - 1) && deadLinks.count({r, p.col(x), true})))
        return true;
  return false;
}

TEST(FabricPlacement, IdentityWithoutDefects) {
  llvm::Expected<FabricPlacement> p = placeAroundDefects(testTarget(), 8, 9);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_TRUE(p->isIdentity());
}

TEST(FabricPlacement, DeadCoreTakesItsRowAndColumn) {
  Target t = targetWith({{2, 3}}, {});
  FabricPlacement p = llvm::cantFail(placeAroundDefects(t, 4, 5));
  EXPECT_EQ(p.rows, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(p.cols, (std::vector<int64_t>{0, 1, 2, 4, 5}));
  EXPECT_FALSE(usesADefect(t, p, 4, 5));
}

TEST(FabricPlacement, DeadLinksTakeOnlyTheirRowOrColumn) {
  // An east-west link is on a row's path; a north-south one on a column's.
  Target t = targetWith({}, {{1, 0, false}, {0, 2, true}});
  FabricPlacement p = llvm::cantFail(placeAroundDefects(t, 3, 3));
  EXPECT_EQ(p.rows, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(p.cols, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_FALSE(usesADefect(t, p, 3, 3));
}

TEST(FabricPlacement, DefectsOutsideTheSpanCostNothing) {
  Target t = targetWith({{50, 60}}, {{70, 10, true}});
  FabricPlacement p = llvm::cantFail(placeAroundDefects(t, 6, 6));
  EXPECT_EQ(p.rows, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(p.cols, p.rows);
}

TEST(FabricPlacement, GrowingSpanPicksUpFurtherDefects) {
  // (3, 1) pushes the rows past row 3, which brings (4, 4) into the span.
  Target t = targetWith({{3, 1}, {4, 4}}, {});
  FabricPlacement p = llvm::cantFail(placeAroundDefects(t, 4, 4));
  EXPECT_FALSE(usesADefect(t, p, 4, 4));
  EXPECT_EQ(p.rows, (std::vector<int64_t>{0, 1, 2, 5}));
  EXPECT_EQ(p.cols, (std::vector<int64_t>{0, 2, 3, 5}));
}

TEST(FabricPlacement, RandomDefectsAreAlwaysAvoided) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t h = 1 + rng() % 20, w = 1 + rng() % 20;
    std::set<DeadCore> cores;
    std::set<DeadLink> links;
    for (int i = 0, n = int(rng() % 8); i < n; ++i)
      cores.insert({int64_t(rng() % 30), int64_t(rng() % 30)});
    for (int i = 0, n = int(rng() % 4); i < n; ++i)
      links.insert({int64_t(rng() % 30), int64_t(rng() % 30), bool(rng() % 2)});
    Target t = targetWith({cores.begin(), cores.end()},
                          {links.begin(), links.end()});
    FabricPlacement p = llvm::cantFail(placeAroundDefects(t, h, w));
    EXPECT_FALSE(usesADefect(t, p, h, w)) << "trial " << trial;
    EXPECT_EQ(errorOf(checkFabricPlacement(t, h, w, p.rows, p.cols)), "");
  }
}

TEST(FabricPlacement, TooManyDefectsIsAnErrorNamingTheNeed) {
  Target t = testTarget();
  t.fabricHeight = t.fabricWidth = 6;
  t.deadCores = {{1, 1}, {2, 2}};
  EXPECT_EQ(errorOf(placeAroundDefects(t, 5, 4)),
            "grid 5x4 (HxW) does not fit the wse2 fabric of 6x6 (HxW) around "
            "its 2 dead cores and 0 dead links: skipping the rows and columns "
            "they take, it needs 7x6 fabric cores");
}

TEST(FabricPlacement, CheckNamesTheDefectAPlacementUses) {
  Target t = targetWith({{2, 3}}, {{4, 0, false}});
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 4, 5, {}, {})),
            "grid core x=3 y=2 is placed on the dead core at fabric row 2, "
            "column 3");
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 4, 5, {}, {0, 1, 2, 4, 5})),
            "the messages along grid row 2 cross the dead core at fabric row "
            "2, column 3");
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 4, 5, {0, 1, 3, 4}, {})),
            "the messages along grid column 3 cross the dead core at fabric "
            "row 2, column 3");
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 4, 5, {0, 1, 3, 4},
                                         {0, 1, 2, 4, 5})),
            "the messages along grid row 3 cross the dead link between fabric "
            "row 4, column 0 and row 4, column 1");
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 4, 5, {0, 1, 3}, {})),
            "the fabric placement lists 3 rows for 4 grid rows");
  EXPECT_EQ(errorOf(checkFabricPlacement(t, 2, 1, {1, 1}, {})),
            "the fabric placement's rows must increase within [0, 994); grid "
            "row 1 is on fabric row 1");
}

TEST(FabricPlacement, TargetJsonReadsAndWritesDefects) {
  llvm::Expected<Target> t = parseTarget(
      R"({"base": "wse2", "dead_cores": [[5, 1], [2, 3]],
          "dead_links": [[4, 4, "west"], [1, 2, "north"], [0, 0, "south"]]})",
      "t.json");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->deadCores, (std::vector<DeadCore>{{2, 3}, {5, 1}}));
  EXPECT_EQ(t->deadLinks,
            (std::vector<DeadLink>{{0, 0, true}, {0, 2, true}, {4, 3, false}}));
  std::string json;
  llvm::raw_string_ostream os(json);
  os << targetToJSON(*t);
  Target back = llvm::cantFail(parseTarget(json, "back"));
  EXPECT_EQ(back.deadCores, t->deadCores);
  EXPECT_EQ(back.deadLinks, t->deadLinks);
}

TEST(FabricPlacement, TargetJsonDefectErrors) {
  auto error = [](const char *json) {
    return errorOf(parseTarget(json, "t.json"));
  };
  EXPECT_EQ(error(R"({"base": "wse2", "dead_cores": [[1, 2, 3]]})"),
            "t.json: target field 'dead_cores' must be a list of [y, x] pairs "
            "of integers");
  EXPECT_EQ(error(R"({"base": "wse2", "dead_cores": [[994, 0]]})"),
            "t.json: target field 'dead_cores': [994, 0] is off the 994x750 "
            "(HxW) fabric");
  EXPECT_EQ(error(R"({"base": "wse2", "dead_cores": [[1, 1], [1, 1]]})"),
            "t.json: target field 'dead_cores': [1, 1] is listed twice");
  EXPECT_EQ(error(R"({"base": "wse2", "dead_links": [[0, 749, "east"]]})"),
            "t.json: target field 'dead_links': the link between [0, 749] "
            "and [0, 750] is off the 994x750 (HxW) fabric");
  EXPECT_EQ(error(R"({"base": "wse2", "dead_links": [[0, 0, "up"]]})"),
            "t.json: target field 'dead_links' must be a list of [y, x, "
            "\"east\" | \"south\" | \"west\" | \"north\"]");
}

/// A ring shift along x on a 3x4 grid, placed with a skipped column.
Program shiftWithDeadColumn() {
  Program p = ringShiftProgram(3, 4, false);
  p.target.deadCores = {{1, 2}};
  p.fabricRows = {0, 2, 3};
  p.fabricCols = {0, 1, 3, 4};
  return p;
}

TEST(FabricPlacement, BundleKeepsDefectsAndPlacement) {
  Program p = shiftWithDeadColumn();
  p.target.deadLinks = {{7, 7, true}};
  std::vector<uint8_t> bytes = llvm::cantFail(serializeBundle(p));
  Program back = llvm::cantFail(deserializeBundle(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                      bytes.size()),
      "b"));
  EXPECT_EQ(back.target.deadCores, p.target.deadCores);
  EXPECT_EQ(back.target.deadLinks, p.target.deadLinks);
  EXPECT_EQ(back.fabricRows, p.fabricRows);
  EXPECT_EQ(back.fabricCols, p.fabricCols);
}

TEST(FabricPlacement, EmulatorRefusesWorkOnADeadCore) {
  Program p = shiftWithDeadColumn();
  p.fabricRows.clear(); // the identity puts grid core (2, 1) on the dead core
  p.fabricCols.clear();
  EXPECT_EQ(errorOf(runProgram(p, {}, {})),
            "fabric placement: grid core x=2 y=1 is placed on the dead core "
            "at fabric row 1, column 2");
  p.target.deadCores.clear();
  p.target.deadLinks = {{0, 1, false}};
  EXPECT_EQ(errorOf(runProgram(p, {}, {})),
            "fabric placement: the messages along grid row 0 cross the dead "
            "link between fabric row 0, column 1 and row 0, column 2");
}

TEST(FabricPlacement, ColorCrossingSkippedFabricBothWaysIsAnError) {
  // Grid cores (1, 0) and (2, 0) send to each other on one color across the
  // skipped fabric column: its routers would need two routes for it.
  Program p = shiftWithDeadColumn();
  Route east, west;
  east.color = west.color = 9;
  east.cores = {{1, 1, 1}, {0, 0, 1}};
  west.cores = {{2, 2, 1}, {0, 0, 1}};
  east.in = west.in = Dir::Ramp;
  east.outMask = dirBit(Dir::East);
  west.outMask = dirBit(Dir::West);
  p.channels.push_back({"pair", {east, west}});
  EXPECT_EQ(errorOf(runProgram(p, {}, {})),
            "color 9 crosses the skipped fabric between grid cores (1,0) and "
            "(2,0) both ways; the routers in between hold one route per "
            "color");
}

TEST(FabricPlacement, SkippedFabricCostsHopsNotResults) {
  Program clean = ringShiftProgram(3, 4, false);
  Program placed = shiftWithDeadColumn();
  NDArray x;
  x.shape = {3, 4};
  for (int i = 0; i < 12; ++i)
    x.data.push_back(float(i));
  llvm::Expected<RunResult> a = runProgram(clean, {{"x", x}}, {});
  llvm::Expected<RunResult> b = runProgram(placed, {{"x", x}}, {});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->outputs.at("out").data, b->outputs.at("out").data);
  // The wrap-around of each row's shift crosses the skipped column: its
  // head arrives hop_cycles later, and its words cross one more link.
  EXPECT_GT(b->stats.cycles, a->stats.cycles);
  EXPECT_GT(b->stats.linkWords, a->stats.linkWords);
  EXPECT_EQ(b->stats.fabricRowsSpanned, 4);
  EXPECT_EQ(b->stats.fabricColsSpanned, 5);
  EXPECT_EQ(b->stats.deadCores, 1);
}

} // namespace
