//===- GenerateCommand.h - wafer-run generate -------------------*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_GENERATECOMMAND_H
#define WAFER_TOOLS_WAFER_RUN_GENERATECOMMAND_H

#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Emulator.h"

#include <cstdint>
#include <optional>
#include <string>

namespace wafer {

struct GenerateOptions {
  /// A GGUF file, a safetensors file / index / directory, or an exported
  /// ONNX directory.
  std::string model;
  /// The tokenizer, when not the checkpoint's own.
  std::string tokenizer;
  std::optional<std::string> prompt;
  /// Prompt token ids, "1,2,3" (instead of a prompt).
  std::optional<std::string> tokens;
  int64_t maxNewTokens = 32;
  /// Compile options of the two programs; they differ in the grid.
  CompileOptions prefill, decode;
  /// Hand the prefill's keys and values to the decode caches on chip (both
  /// programs on the same cores); otherwise through the host.
  bool handoffOnChip = false;
  /// 0: greedy. Otherwise sampling from softmax(logits / temperature),
  /// restricted to the topK most likely (0: all) and to the smallest set
  /// whose probability reaches topP.
  double temperature = 0;
  int64_t topK = 0;
  double topP = 1;
  uint64_t seed = 0;
  /// Compare every step's logits with the host evaluator.
  bool check = false;
  double tolerance = 1e-3;
  std::string statsPath;
  /// A Chrome trace of the prefill and every decode step (needs
  /// emulator.trace).
  std::string tracePath;
  /// Print a last line of JSON with the tokens, text and stats.
  bool json = false;
  rt::EmulatorOptions emulator;
};

/// Runs `wafer-run generate`: the prompt's prefill on the prefill grid, then
/// one run of the decode program per new token on the decode grid with the
/// KV caches kept in the cores' SRAM. Text streams to stdout, the report to
/// stderr. Returns the exit code (errors printed as one line).
int runGenerateCommand(const GenerateOptions &options);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_GENERATECOMMAND_H
