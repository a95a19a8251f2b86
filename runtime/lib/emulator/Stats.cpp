//===- Stats.cpp - The run statistics as JSON -----------------------------===//
#include "wafer/Runtime/Emulator.h"

using namespace llvm;

namespace wafer::rt {

/// A per-core map as rows of the grid.
static json::Array gridRows(const std::vector<int64_t> &values, int64_t width) {
  json::Array rows;
  for (size_t lo = 0; lo < values.size(); lo += size_t(width)) {
    json::Array row;
    for (size_t i = lo; i < lo + size_t(width); ++i)
      row.push_back(values[i]);
    rows.push_back(std::move(row));
  }
  return rows;
}

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
  json::Object result{{"cycles", stats.cycles},
                      {"seconds", stats.seconds},
                      {"max_sram_bytes_per_core", stats.maxSramBytesPerCore},
                      {"max_routes_per_core", stats.maxRoutesPerCore},
                      {"weight_bytes_per_core",
                       json::Object{{"max", stats.weightBytesPerCoreMax},
                                    {"mean", stats.weightBytesPerCoreMean}}},
                      {"kv_capacity_tokens",
                       stats.kvCapacityTokens < 0
                           ? json::Value(nullptr)
                           : json::Value(stats.kvCapacityTokens)},
                      {"messages", stats.messages},
                      {"link_words", stats.linkWords},
                      {"ops", std::move(ops)}};
  if (stats.fabricRowsSpanned)
    result["fabric_placement"] =
        json::Object{{"rows", stats.fabricRowsSpanned},
                     {"columns", stats.fabricColsSpanned},
                     {"dead_cores", stats.deadCores},
                     {"dead_links", stats.deadLinks}};
  if (const std::optional<PerCoreStats> &m = stats.perCore) {
    static const char *const kDirections[] = {"north", "east", "south",
                                              "west"};
    json::Object out, in;
    for (int d = 0; d < 4; ++d) {
      out[kDirections[d]] = gridRows(m->wordsOut[d], stats.gridWidth);
      in[kDirections[d]] = gridRows(m->wordsIn[d], stats.gridWidth);
    }
    result["per_core"] = json::Object{
        {"height", stats.gridHeight},
        {"width", stats.gridWidth},
        {"compute_cycles", gridRows(m->computeCycles, stats.gridWidth)},
        {"busy_cycles", gridRows(m->busyCycles, stats.gridWidth)},
        {"link_words_out", std::move(out)},
        {"link_words_in", std::move(in)}};
  }
  return result;
}

} // namespace wafer::rt
