//===- Stats.cpp - The run statistics as JSON -----------------------------===//
#include "wafer/Runtime/Emulator.h"

using namespace llvm;

namespace wafer::rt {

json::Value statsToJSON(const RunStats &stats) {
  json::Array ops;
  for (const OpStats &op : stats.ops)
    ops.push_back(json::Object{{"name", op.name},
                               {"kind", op.kind},
                               {"algorithm", op.algorithm},
                               {"cycles", op.cycles},
                               {"compute_cycles", op.computeCycles},
                               {"words_sent", op.wordsSent},
                               {"messages", op.messages}});
  return json::Object{{"cycles", stats.cycles},
                      {"seconds", stats.seconds},
                      {"max_sram_bytes_per_core", stats.maxSramBytesPerCore},
                      {"max_routes_per_core", stats.maxRoutesPerCore},
                      {"kv_capacity_tokens",
                       stats.kvCapacityTokens < 0
                           ? json::Value(nullptr)
                           : json::Value(stats.kvCapacityTokens)},
                      {"messages", stats.messages},
                      {"link_words", stats.linkWords},
                      {"ops", std::move(ops)}};
}

} // namespace wafer::rt
