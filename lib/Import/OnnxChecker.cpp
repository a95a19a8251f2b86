//===- OnnxChecker.cpp - The ONNX checker without exceptions leaking ------===//
//
// libonnx reports checker failures by throwing; LLVM code is built without
// exceptions, so this one file is compiled with them and turns the throw
// into an error message.
//
//===----------------------------------------------------------------------===//
#include "OnnxChecker.h"

#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

#include <fstream>

std::optional<std::string>
wafer::onnx_import::checkModel(const std::string &path) {
  const char *stage = "the ONNX checker";
  try {
    onnx::checker::check_model(path);
    stage = "ONNX type inference";
    onnx::ModelProto model;
    std::ifstream in(path, std::ios::binary);
    if (!model.ParseFromIstream(&in))
      return std::string(stage) + " cannot read the model";
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
  } catch (const std::exception &e) {
    std::string message =
        std::string(stage) + " rejects the model: " + e.what();
    // The checker's messages span lines; errors here are one line.
    for (char &c : message)
      if (c == '\n')
        c = ' ';
    while (!message.empty() && message.back() == ' ')
      message.pop_back();
    return message;
  }
  return std::nullopt;
}
