//===- Trace.cpp - Runs as Chrome trace-event JSON ------------------------===//
//
// The format of chrome://tracing and Perfetto: complete events ("ph": "X")
// with a start and a duration in microseconds, one thread per track, and
// metadata events naming the threads. Streamed with json::OStream, so a big
// trace is never held as one JSON value.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Emulator.h"

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
  double microsPerCycle = 1e6 / program.target.clockHz;
  json::OStream j(os);
  auto event = [&](StringRef name, StringRef category, int64_t tid,
                   int64_t start, int64_t cycles, StringRef op) {
    j.object([&] {
      j.attribute("name", name);
      j.attribute("cat", category);
      j.attribute("ph", "X");
      j.attribute("pid", 0);
      j.attribute("tid", tid);
      j.attribute("ts", double(start) * microsPerCycle);
      j.attribute("dur", double(cycles) * microsPerCycle);
      j.attributeObject("args", [&] {
        j.attribute("start_cycle", start);
        j.attribute("cycles", cycles);
        if (!op.empty())
          j.attribute("op", op);
      });
    });
  };
  auto threadName = [&](int64_t tid, StringRef name) {
    j.object([&] {
      j.attribute("name", "thread_name");
      j.attribute("ph", "M");
      j.attribute("pid", 0);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] { j.attribute("name", name); });
    });
  };
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      threadName(0, "ops");
      for (size_t t = 0; t < result.trace.tracks.size(); ++t)
        threadName(int64_t(t) + 1, result.trace.tracks[t]);
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
    });
  });
}

} // namespace wafer::rt
