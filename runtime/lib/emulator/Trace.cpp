//===- Trace.cpp - Runs as Chrome trace-event JSON ------------------------===//
//
// The format of chrome://tracing and Perfetto: complete events ("ph": "X")
// with a start and a duration in microseconds, one thread per track, and
// metadata events naming the threads. Streamed with json::OStream, so a big
// trace is never held as one JSON value.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Emulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

using namespace llvm;

namespace wafer::rt {

static StringRef phaseName(TracePhase phase) {
  switch (phase) {
  case TracePhase::Compute:
    return "compute";
  case TracePhase::Send:
    return "send";
  case TracePhase::Receive:
    return "receive";
  case TracePhase::Wait:
    return "wait";
  }
  return "?";
}

void writeChromeTrace(const Program &program, const RunResult &result,
                      raw_ostream &os) {
  writeChromeTrace(TracedRun{"", &program, &result, 0}, os);
}

void writeChromeTrace(ArrayRef<TracedRun> runs, raw_ostream &os) {
  json::OStream j(os);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      for (auto [pid, run] : llvm::enumerate(runs)) {
        const Program &program = *run.program;
        const RunResult &result = *run.result;
        double microsPerCycle = 1e6 / program.target.clockHz;
        auto event = [&](StringRef name, StringRef category, int64_t tid,
                         int64_t start, int64_t cycles, StringRef op) {
          j.object([&] {
            j.attribute("name", name);
            j.attribute("cat", category);
            j.attribute("ph", "X");
            j.attribute("pid", int64_t(pid));
            j.attribute("tid", tid);
            j.attribute("ts", double(run.startCycle + start) * microsPerCycle);
            j.attribute("dur", double(cycles) * microsPerCycle);
            j.attributeObject("args", [&] {
              j.attribute("start_cycle", start);
              j.attribute("cycles", cycles);
              if (!op.empty())
                j.attribute("op", op);
            });
          });
        };
        auto metadata = [&](StringRef kind, int64_t tid, StringRef name) {
          j.object([&] {
            j.attribute("name", kind);
            j.attribute("ph", "M");
            j.attribute("pid", int64_t(pid));
            j.attribute("tid", tid);
            j.attributeObject("args", [&] { j.attribute("name", name); });
          });
        };
        if (!run.label.empty())
          metadata("process_name", 0, run.label);
        metadata("thread_name", 0, "ops");
        for (size_t t = 0; t < result.trace.tracks.size(); ++t)
          metadata("thread_name", int64_t(t) + 1, result.trace.tracks[t]);
        // The ops back to back, as the stats count them.
        int64_t start = 0;
        for (const OpStats &op : result.stats.ops) {
          event(op.name, op.kind, 0, start, op.cycles, "");
          start += op.cycles;
        }
        for (const TraceSpan &s : result.trace.spans) {
          StringRef op = size_t(s.op) < program.ops.size()
                             ? StringRef(program.ops[s.op].name)
                             : StringRef();
          event(phaseName(s.phase), phaseName(s.phase), int64_t(s.track) + 1,
                s.start, s.end - s.start, op);
        }
      }
    });
  });
}

} // namespace wafer::rt
