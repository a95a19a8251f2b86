//===- OnnxChecker.h - ONNX checker wrapper (private) -----------*- C++ -*-===//
#ifndef WAFER_LIB_IMPORT_ONNXCHECKER_H
#define WAFER_LIB_IMPORT_ONNXCHECKER_H

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace wafer::onnx_import {
/// Runs onnx::checker::check_model; returns its message when it fails.
std::optional<std::string> checkModel(const onnx::ModelProto &model);
} // namespace wafer::onnx_import

#endif // WAFER_LIB_IMPORT_ONNXCHECKER_H
