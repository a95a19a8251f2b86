//===- OnnxChecker.h - ONNX checker wrapper (private) -----------*- C++ -*-===//
#ifndef WAFER_LIB_IMPORT_ONNXCHECKER_H
#define WAFER_LIB_IMPORT_ONNXCHECKER_H

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace wafer::onnx_import {
/// Runs onnx::checker::check_model on the file (so external data resolves
/// next to it), then ONNX's shape inference with its type checks (which
/// ONNX Runtime applies and the checker does not: an Add of float16 and
/// float); returns what failed and its message.
std::optional<std::string> checkModel(const std::string &path);
} // namespace wafer::onnx_import

#endif // WAFER_LIB_IMPORT_ONNXCHECKER_H
