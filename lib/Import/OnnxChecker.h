//===- OnnxChecker.h - ONNX checker wrapper (private) -----------*- C++ -*-===//
#ifndef WAFER_LIB_IMPORT_ONNXCHECKER_H
#define WAFER_LIB_IMPORT_ONNXCHECKER_H

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace wafer::onnx_import {
/// Runs onnx::checker::check_model on the file (so external data resolves
/// next to it); returns its message when it fails.
std::optional<std::string> checkModel(const std::string &path);
} // namespace wafer::onnx_import

#endif // WAFER_LIB_IMPORT_ONNXCHECKER_H
