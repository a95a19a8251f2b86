//===- WeightStore.cpp - Weights by (file, name) from any checkpoint ------===//
#include "wafer/Import/WeightStore.h"
#include "wafer/Import/LlamaCheckpoint.h"
#include "wafer/Import/OnnxImporter.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace wafer;

struct WeightStore::Impl {
  OnnxWeightStore onnx;
  llvm::StringMap<std::unique_ptr<Checkpoint>> checkpoints;
  llvm::StringMap<std::unique_ptr<LlamaCheckpoint>> models;

  /// The checkpoint (opened once) and, for a canonical name that is not a
  /// stored one, its LLaMA role, read through the LLaMA view.
  struct Found {
    Checkpoint *checkpoint = nullptr;
    LlamaCheckpoint *model = nullptr;
    std::optional<LlamaTensorName> role;
  };
  llvm::Expected<Found> find(llvm::StringRef file, llvm::StringRef name);
};

std::string wafer::absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path);
  (void)llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return absolute.str().str();
}

std::string wafer::resolveWeightSource(llvm::StringRef source,
                                       llvm::StringRef modulePath) {
  if (llvm::sys::path::is_absolute(source))
    return source.str();
  llvm::StringRef dir = llvm::sys::path::parent_path(modulePath);
  llvm::SmallString<256> relative(dir), beside(dir);
  llvm::sys::path::append(relative, source);
  llvm::sys::path::append(beside, llvm::sys::path::filename(source));
  return !llvm::sys::fs::exists(relative) && llvm::sys::fs::exists(beside)
             ? beside.str().str()
             : relative.str().str();
}

WeightStore::WeightStore() : impl(std::make_unique<Impl>()) {}
WeightStore::~WeightStore() = default;

/// Whether `file` is a checkpoint rather than an ONNX model: decided by
/// what the file is, not trusted from its name alone.
static bool isCheckpoint(llvm::StringRef file) {
  if (llvm::sys::fs::is_directory(file) || file.ends_with(".json") ||
      file.ends_with(".safetensors") || file.ends_with(".gguf"))
    return true;
  if (!llvm::sys::fs::is_regular_file(file))
    return false; // ONNX's reader reports it
  char magic[4] = {};
  int fd;
  if (llvm::sys::fs::openFileForRead(file, fd))
    return false;
  auto read = llvm::sys::fs::readNativeFileSlice(
      llvm::sys::fs::convertFDToNativeFile(fd), llvm::MutableArrayRef(magic),
      0);
  llvm::sys::fs::closeFile(fd);
  return read && *read == 4 && llvm::StringRef(magic, 4) == "GGUF";
}

llvm::Expected<WeightStore::Impl::Found>
WeightStore::Impl::find(llvm::StringRef file, llvm::StringRef name) {
  std::unique_ptr<Checkpoint> &ckpt = checkpoints[file];
  if (!ckpt) {
    auto opened = Checkpoint::open(file);
    if (!opened)
      return opened.takeError();
    ckpt = std::move(*opened);
  }
  Found found{ckpt.get(), nullptr, parseCanonicalName(name)};
  if (!found.role || ckpt->find(name)) {
    found.role.reset();
    return found;
  }
  std::unique_ptr<LlamaCheckpoint> &model = models[file];
  if (!model) {
    auto opened = LlamaCheckpoint::open(file);
    if (!opened)
      return opened.takeError();
    model = std::make_unique<LlamaCheckpoint>(std::move(*opened));
  }
  found.model = model.get();
  return found;
}

llvm::Expected<WeightData> WeightStore::load(llvm::StringRef file,
                                             llvm::StringRef name) {
  if (!isCheckpoint(file))
    return impl->onnx.load(file, name);
  llvm::Expected<Impl::Found> found = impl->find(file, name);
  if (!found)
    return found.takeError();
  if (!found->role)
    return found->checkpoint->read(name);
  return found->model->read(*found->role, RopeOrder::RotateHalf);
}

llvm::Expected<std::vector<int64_t>> WeightStore::shape(llvm::StringRef file,
                                                        llvm::StringRef name) {
  if (!isCheckpoint(file))
    return impl->onnx.shape(file, name);
  llvm::Expected<Impl::Found> found = impl->find(file, name);
  if (!found)
    return found.takeError();
  const TensorInfo *info = nullptr;
  if (!found->role)
    info = found->checkpoint->find(name);
  else if (const LlamaCheckpoint::Tensor *t = found->model->find(*found->role))
    info = t->info;
  if (info)
    return info->shape;
  // The reader's own error for a name it does not have (read for that
  // alone: its values are not needed).
  llvm::Expected<WeightData> missing = load(file, name);
  if (!missing)
    return missing.takeError();
  return missing->shape;
}
