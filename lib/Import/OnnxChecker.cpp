//===- OnnxChecker.cpp - The ONNX checker without exceptions leaking ------===//
//
// libonnx reports checker failures by throwing; LLVM code is built without
// exceptions, so this one file is compiled with them and turns the throw
// into an error message.
//
//===----------------------------------------------------------------------===//
#include "OnnxChecker.h"

#include "onnx/checker.h"

std::optional<std::string>
wafer::onnx_import::checkModel(const std::string &path) {
  try {
    onnx::checker::check_model(path);
  } catch (const std::exception &e) {
    std::string message = e.what();
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
