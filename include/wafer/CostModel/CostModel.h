//===- CostModel.h - Closed-form cycles of the mesh algorithms --*- C++ -*-===//
//
// The one cost model: what the emulator charges event by event
// (runtime/lib/emulator), added up along an algorithm's critical path.
// The analytic mode's per-op cycles (CostedOpInterface, each op's
// estimateCycles) are built from these prices, and so are the planner's
// choices: K of the K-tree (mesh-choose-ktree) and whole heads against
// lanes (convert-tfm-to-mesh compares the estimates).
// No MLIR: the prices take sizes, grid extents and a TimingModel.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_COSTMODEL_COSTMODEL_H
#define WAFER_COSTMODEL_COSTMODEL_H

#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/Program.h"
#include "wafer/Runtime/TimingModel.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

namespace wafer::cost {

//===----------------------------------------------------------------------===//
// The analytic mode's clock (CoreClock.cpp)
//===----------------------------------------------------------------------===//

/// The local tiles of a mesh.gemm: A [aSlots][mt][kt], B [bSlots][kt][nt]
/// and C [mt][nt], K cut into `blocks` = lcm(H, W) blocks of which a core
/// holds aSlots = blocks / W of A and bSlots = blocks / H of B.
struct GemmTiling {
  int64_t blocks = 1, aSlots = 1, bSlots = 1;
  int64_t mt = 0, kt = 0, nt = 0;
};

/// A MeshGEMM (or Cannon's GEMM, without INTERLEAVE) as the clock runs
/// it: each core works `before` cycles (zeroing C, copying operands that
/// other ops read too), then runs the alignment and compute-shift steps,
/// multiplying for `multiply` cycles a step.
struct MeshGemm {
  GemmTiling tiling;
  bool interleave = false;
  rt::DType dtype = rt::DType::F32;
  int64_t before = 0, multiply = 0;
};

/// A mesh.relayout as the clock runs it: each core works `before` cycles
/// (zeroing the result, copying its tile to pass) and keeps its columns of
/// its own tile, then every tile moves once around the ring of one axis,
/// each core keeping its columns of each tile that arrives.
struct RingRelayout {
  bool alongX = true, interleave = false;
  rt::DType dtype = rt::DType::F32;
  int64_t tileElements = 0, before = 0;
  /// Cycles of keeping, at ring position `position`, its columns of the
  /// tile of ring position `source`.
  std::function<int64_t(int64_t position, int64_t source)> keep;
};

/// Work every core does from its own time (CoreClock::local).
struct LocalWork {
  int64_t cycles = 0;
};

/// An allreduce along every grid row (alongX) or column with the K-tree's
/// (or the pipeline's) trees, as ktreeAllreduceCycles runs one: each core
/// works `before` cycles, each position adds the sums of its groups, sends
/// its own to the previous member (streaming it on when a next member's
/// comes through it), and the root multicasts the sum; then each core
/// works `after` cycles. In a run with ring ops, the ring op after it can
/// hold up its last messages on the ramps they share, and it the last
/// tiles of the ring op before.
struct LineAllreduce {
  /// One tree: the physical positions along the line it spans, in tree
  /// order, rooted at tree position `root` with `levels`.
  struct Tree {
    std::vector<int64_t> positions;
    int64_t root = 0;
    std::vector<rt::KTreeLevel> levels;
  };
  bool alongX = true;
  /// One over the whole line, or one per lane segment (the positions past
  /// the segments take no part).
  std::vector<Tree> trees;
  int64_t words = 0, add = 0, before = 0, after = 0;
};

/// Prefill attention as the clock runs it: each core works `before` cycles
/// (copying its keys and values, zeroing the output and the statistics),
/// then once per grid row: works `score` cycles, sums the scores along x
/// with `scores` (over lanes; none: whole heads), works `update` cycles
/// and, but for the last time, passes its keys and values (`tileElements`)
/// to the previous position of the y ring; then works `after` cycles.
struct RingAttention {
  bool interleave = false;
  rt::DType dtype = rt::DType::F32;
  int64_t tileElements = 0, before = 0, score = 0, update = 0, after = 0;
  std::optional<LineAllreduce> scores;
};

/// A run's simulation, paused (RingRuns.cpp).
struct RunState;

/// An op the clock simulates together with the ops around it.
using RunOp = std::variant<LocalWork, MeshGemm, RingRelayout, LineAllreduce,
                           RingAttention>;

/// When each core of an h x w grid is done with the ops estimated so far.
/// An op starts on a core when the core is done with the op before, as in
/// the emulator, so cores that finish early begin the next op early (a
/// GEMM's skewed steps leave them far apart). It holds one time while
/// every core agrees, as beyond the GEMM simulation's budget, and a time
/// per column plus one per row while the times are their sums, as after
/// row and column allreduces: a large grid costs O(1) or O(h + w) per op
/// there, not O(h * w).
class CoreClock {
public:
  CoreClock(int64_t h, int64_t w) : h(h), w(w) {}
  int64_t height() const { return h; }
  int64_t width() const { return w; }
  /// When the last core is done.
  int64_t latest() const { return last; }
  /// Whether every core is done at latest().
  bool uniform() const { return form == Form::Uniform; }
  /// Core (x, y)'s time is perCore()[y * w + x]; empty while uniform().
  std::vector<int64_t> perCore() const;
  /// Every core waits for the last one, then works `cycles`.
  void barrier(int64_t cycles);
  /// Every core works `cycles` from its own time (one more op of a run).
  void local(int64_t cycles);
  /// The cores of each grid row (alongX) or column wait for the line's
  /// last one, then work `cycles`: an allreduce or ring along that axis.
  void lines(bool alongX, int64_t cycles);
  /// The cores of each grid row (alongX) or column run `op`, which turns
  /// their times (in order along the line) into their ends. The same
  /// function of every line's times: a line that starts as another, only
  /// later, ends so much later.
  void lines(bool alongX,
             const std::function<void(std::vector<int64_t> &)> &op);
  /// Sets every core's time (h * w of them, row-major).
  void set(std::vector<int64_t> perCoreTimes);
  /// The last core's time after each op of the run the last op was
  /// simulated in, the last being latest(). Consecutive run ops (RunOp:
  /// MeshGEMMs, relayouts, line allreduces, prefill attention and the
  /// local work between them) are simulated together: a core already in
  /// the next op holds up the last messages of the one before on the
  /// ramps they share, so an op can end the ones before it in its run
  /// later. Each op of a run advances the clock once. One entry after an
  /// op of any other kind.
  std::vector<int64_t> runLatests() const;

private:
  friend bool advanceRun(const rt::TimingModel &timing, RunOp op,
                         CoreClock &clock, bool orAlone);
  friend void
  advanceLineAllreduce(const rt::TimingModel &timing, LineAllreduce allreduce,
                       const std::function<void(std::vector<int64_t> &)> &line,
                       CoreClock &clock);
  /// The run ops since an op of another kind, each core's time before
  /// them (none: every core at `start`), the last core's time after each,
  /// and the simulation paused where an op appended to it starts to
  /// matter (none: simulate it from the start).
  struct Run {
    std::vector<int64_t> starts;
    int64_t start = 0;
    std::vector<RunOp> ops;
    std::vector<int64_t> latests;
    std::shared_ptr<RunState> paused;
  };

  enum class Form { Uniform, Separable, General };
  void generalLines(bool alongX,
                    const std::function<void(std::vector<int64_t> &)> &op);
  /// A general clock whose times are sums of a column's and a row's part
  /// becomes separable, so that the line ops after it cost O(h + w).
  void becomeSeparableIfSo();
  /// Separable with these parts (uniform if both are constant).
  void setSeparable(std::vector<int64_t> columnPart,
                    std::vector<int64_t> rowPart);

  int64_t h, w, last = 0;
  Form form = Form::Uniform;
  /// Separable: core (x, y) is done at columns[x] + rows[y].
  std::vector<int64_t> columns, rows;
  /// General: core (x, y) is done at times[y * w + x].
  std::vector<int64_t> times;
  /// Set by the ring ops, ended by every other op.
  std::optional<Run> run;
};

//===----------------------------------------------------------------------===//
// Prices (Prices.cpp)
//===----------------------------------------------------------------------===//

/// Cycles of a row instruction of these sizes (RowArgs' meaning).
int64_t rowCycles(const rt::TimingModel &timing, rt::Opcode op, int64_t m,
                  int64_t n, int64_t k, int64_t groups, rt::DType dtype);

/// Cycles from the issue of a send of `elements` values to their arrival
/// `hops` hops away: both ramps, the hops and the words on the link.
int64_t messageCycles(const rt::TimingModel &timing, int64_t elements,
                      rt::DType dtype, int64_t hops);

/// Hops from one ring position to the next: the usual step, and the
/// longest (the identity placement's wrap-around crosses the axis).
struct RingHops {
  int64_t step = 0, longest = 0;
};
RingHops ringHops(int64_t n, bool interleave);

// A ring shift in which every core sends, works, receives from the next
// position and works again is a max-plus system: after k steps a core's
// time is its longest path of k steps, either a core's own sequence k
// times, or a message's way from position to position (its latency and the
// receivers' work), which crosses the ring's longest link once every n
// steps.

/// Cycles of `steps` such steps: `own` per step on a core, or `round` per
/// step for the message plus `wrap` extra cycles each time it crosses the
/// longest link of a ring of n positions.
double ringSteps(int64_t steps, double own, double round, double wrap,
                 int64_t n);

/// Cycles of `steps` steps of a ring shift of `elements` values in which
/// every core runs `before` cycles before its send, `overlapped` cycles
/// between its send and its receive and `after` cycles after it.
int64_t ringShiftCycles(const rt::TimingModel &timing, int64_t steps,
                        int64_t elements, rt::DType dtype, int64_t n,
                        bool interleave, int64_t before, int64_t overlapped,
                        int64_t after);

//===----------------------------------------------------------------------===//
// The K-tree allreduce (KTree.cpp)
//===----------------------------------------------------------------------===//

/// The cost model `--ktree-k 0` chooses K with: modeled cycles of a K-tree
/// allreduce of `values` values per core, `words` link words, over n
/// positions, rooted as ktreeRoot says. Each group's chain runs from its
/// last member to its root; a member streams the message on once its own
/// group (a level below) is done and the message's first word has arrived
/// (the root: its last word), paying a send (words on the ramp and link,
/// the ramps at both ends, the physical hops to the previous member), the
/// receive's software cost (relay cycles) and the add. Then the join and
/// one multicast to the farther end. `relayed` (mesh-allocate-routes'
/// fallback, never centered): every message and the broadcast move one
/// ring position at a time, each position in between receiving and sending
/// it on. Not relayed, the messages contend for links and ramps as in the
/// emulator (Network::inject), taking them in the order they are sent
/// (then by position); relayed, it ignores contention. Positions
/// `hopsPerPosition` hops apart (not relayed): a tree over every other
/// column, as a lane segment's under INTERLEAVE is. With `times` (n of
/// them, in physical order), position p's own value is in at times[p], not
/// at 0; they become when each position holds the sum (the root once it
/// has sent the broadcast, the others when it has reached them; relayed,
/// all when it reaches the last), and it returns the last of them.
int64_t ktreeAllreduceCycles(int64_t n, int64_t k, int64_t values,
                             int64_t words, double macsPerCycle,
                             const rt::Target &target, bool centered,
                             bool interleaved, bool relayed = false,
                             int64_t hopsPerPosition = 1,
                             std::vector<int64_t> *times = nullptr);

/// The K-tree allreduce of ktreeAllreduceCycles (not relayed) along every
/// grid row (alongX) or column, each core working `before` cycles before it
/// and `after` after it: one tree over the line's n physical positions, or
/// (segmentColumns > 0) one per segment of that many ring positions of the
/// first `used`, `order` giving each ring position's physical one.
LineAllreduce ktreeLine(bool alongX, int64_t n, int64_t k, int64_t values,
                        int64_t words, double macsPerCycle, bool centered,
                        int64_t before, int64_t after,
                        int64_t segmentColumns = 0, int64_t used = 0,
                        const std::vector<int64_t> &order = {});

//===----------------------------------------------------------------------===//
// GEMM and relayout schedules (GemmSchedules.cpp, RingRuns.cpp)
//===----------------------------------------------------------------------===//

/// SUMMA's steps, each core multiplying for `multiply` cycles a step, and
/// a MeshGEMM's work, on the clock's grid: each core starts at its time on
/// `clock`, which they advance to each core's end. Simulated core by core
/// as the lowered programs run, a MeshGEMM together with the ring ops
/// right before it (CoreClock::runLatests); beyond a budget of core-steps
/// every core waits for the last one and takes the closed form (SUMMA's
/// steady state, MeshGEMM's rings).
void advanceSumma(const rt::TimingModel &timing, const GemmTiling &t,
                  rt::DType dtype, int64_t multiply, CoreClock &clock);
void advanceMeshGemm(const rt::TimingModel &timing, const MeshGemm &gemm,
                     CoreClock &clock);

/// Prefill attention on the clock's grid, simulated with the ring ops
/// before it (CoreClock::runLatests); beyond the budget of core-steps every
/// core waits for the last one and takes `closedForm` cycles.
void advanceRingAttention(const rt::TimingModel &timing,
                          const RingAttention &attention, int64_t closedForm,
                          CoreClock &clock);

/// A relayout on the clock's grid, simulated with the ring ops before it
/// (CoreClock::runLatests); beyond the budget of core-steps the cores of
/// each ring wait for the ring's last one and take `closedForm` cycles.
void advanceRelayout(const rt::TimingModel &timing,
                     const RingRelayout &relayout, int64_t closedForm,
                     CoreClock &clock);

/// An allreduce along the clock's lines: simulated with the clock's run if
/// that holds a ring op (CoreClock::runLatests) and the budget allows;
/// else every core works `allreduce.before`, `line` turns each line's
/// times into its ends (ktreeAllreduceCycles'), every core then works
/// `allreduce.after`, and within the budget a run starts with it, so that
/// a ring op right after it is simulated with it.
void advanceLineAllreduce(
    const rt::TimingModel &timing, LineAllreduce allreduce,
    const std::function<void(std::vector<int64_t> &)> &line, CoreClock &clock);

} // namespace wafer::cost

#endif // WAFER_COSTMODEL_COSTMODEL_H
