//===- Checkpoint.h - GGUF and safetensors checkpoints ----------*- C++ -*-===//
//
// Memory-mapped readers for the checkpoint formats LLaMA models ship in.
// Only LLVM Support is needed (library WaferCheckpoint), so the emulator side
// can read weights without MLIR. Nothing is copied until a tensor is read;
// reading dequantises it to float. Every error is one line starting with the
// file it is about.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_IMPORT_CHECKPOINT_H
#define WAFER_IMPORT_CHECKPOINT_H

#include "wafer/Support/Printable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace wafer {

/// A weight read from its store: row-major shape and float values.
struct WeightData {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// Element encodings the readers decode. Q8_0 and Q4_0 are ggml's blocks of
/// 32 values along the innermost dimension with one f16 scale each.
enum class TensorType { F32, F16, BF16, Q8_0, Q4_0 };
llvm::StringRef typeName(TensorType type);

/// Where a tensor lives: a byte range of one mapped file.
struct TensorInfo {
  std::string name;
  /// Row-major (numpy) order; GGUF's innermost-first dims are reversed.
  std::vector<int64_t> shape;
  TensorType type;
  /// Index into Checkpoint::files.
  unsigned file = 0;
  uint64_t offset = 0, bytes = 0;
  int64_t elements() const;
};

/// The GGUF metadata value types (the numbering is the format's).
enum class GgufType : uint32_t {
  U8 = 0,
  I8,
  U16,
  I16,
  U32,
  I32,
  F32,
  Bool,
  String,
  Array,
  U64,
  I64,
  F64
};
llvm::StringRef typeName(GgufType type);

/// One metadata value. Strings point into the mapped file.
struct GgufValue {
  GgufType type = GgufType::U8;
  std::variant<uint64_t, int64_t, double, bool, llvm::StringRef,
               std::vector<GgufValue>>
      value;
  /// The element type of an array (arrays may be empty).
  GgufType elementType = GgufType::U8;

  std::optional<int64_t> asInt() const;
  std::optional<double> asFloat() const;
  std::optional<llvm::StringRef> asString() const;
  const std::vector<GgufValue> *asArray() const;
};

enum class CheckpointFormat { Gguf, Safetensors };

/// Which row order the q and k projections use within each head. Hugging
/// Face stores rotate-half order (rows 0..D/2-1 rotate with D/2..D-1);
/// GGUF stores Meta's adjacent pairs (rows 2i and 2i+1 rotate together),
/// because llama.cpp's converter permutes Hugging Face weights.
enum class RopeOrder { RotateHalf, AdjacentPairs };
llvm::StringRef ropeOrderName(RopeOrder order);

class Checkpoint {
public:
  /// A .gguf file (v2 or v3).
  static llvm::Expected<std::unique_ptr<Checkpoint>>
  openGguf(llvm::StringRef path);
  /// A .safetensors file, a model.safetensors.index.json, or a Hugging Face
  /// directory holding either (the index wins). config.json, when next to
  /// the weights, is kept for the hyperparameters.
  static llvm::Expected<std::unique_ptr<Checkpoint>>
  openSafetensors(llvm::StringRef path);
  /// Either, by magic bytes (GGUF) or by being a directory / .json /
  /// safetensors header.
  static llvm::Expected<std::unique_ptr<Checkpoint>> open(llvm::StringRef path);

  CheckpointFormat format() const { return fmt; }
  llvm::StringRef path() const { return filePath; }
  RopeOrder ropeOrder() const {
    return fmt == CheckpointFormat::Gguf ? RopeOrder::AdjacentPairs
                                         : RopeOrder::RotateHalf;
  }
  const std::vector<TensorInfo> &tensors() const { return infos; }
  const TensorInfo *find(llvm::StringRef name) const;
  /// Decodes a tensor to float; the error names the tensor.
  llvm::Expected<WeightData> read(llvm::StringRef name) const;

  /// GGUF only: metadata in file order, and lookup by key.
  const std::vector<std::pair<llvm::StringRef, GgufValue>> &metadata() const {
    return meta;
  }
  const GgufValue *metadataValue(llvm::StringRef key) const;
  /// safetensors only: the text of config.json ("" when there is none) and
  /// its path.
  llvm::StringRef hfConfigText() const { return configText; }
  llvm::StringRef hfConfigPath() const { return configPath; }

  /// Mapped files (one, or one per shard), and their paths for messages.
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> files;
  std::vector<std::string> filePaths;

private:
  friend class GgufParser;
  friend class SafetensorsParser;
  /// Index and name checks shared by both formats; fails on duplicates.
  llvm::Error addTensor(TensorInfo info);

  CheckpointFormat fmt = CheckpointFormat::Gguf;
  std::string filePath;
  std::vector<TensorInfo> infos;
  llvm::StringMap<size_t> index;
  std::vector<std::pair<llvm::StringRef, GgufValue>> meta;
  llvm::StringMap<size_t> metaIndex;
  std::string configText, configPath;
};

/// Maps a regular file read-only. Directories, pipes and devices are refused
/// by name rather than opened (a pipe would block).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mapRegularFile(llvm::StringRef path);

/// The IEEE binary16 value of `bits` (GGUF, safetensors and ONNX float16).
float halfToFloat(uint16_t bits);

/// A one-line error "<path>: <message>".
llvm::Error checkpointError(llvm::StringRef path, const llvm::Twine &message);

} // namespace wafer

#endif // WAFER_IMPORT_CHECKPOINT_H
