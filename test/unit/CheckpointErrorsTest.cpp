//===- CheckpointErrorsTest.cpp - Bad GGUF and safetensors input ----------===//
//
// Files built byte by byte with one thing wrong; each must give one line
// "<file>: <what>" and never read outside the file.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/LlamaCheckpoint.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>

using namespace wafer;

namespace {

/// Little-endian GGUF bytes.
struct Gguf {
  std::string bytes;
  void u32(uint32_t v) { bytes.append(reinterpret_cast<char *>(&v), 4); }
  void u64(uint64_t v) { bytes.append(reinterpret_cast<char *>(&v), 8); }
  void str(llvm::StringRef s) { u64(s.size()), bytes += s.str(); }
  Gguf(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    bytes = "GGUF";
    u32(version), u64(tensors), u64(kvs);
  }
  void kvString(llvm::StringRef key, llvm::StringRef value) {
    str(key), u32(8), str(value);
  }
  void kvU32(llvm::StringRef key, uint32_t value) {
    str(key), u32(4), u32(value);
  }
  /// dims innermost first, as GGUF stores them.
  void tensor(llvm::StringRef name, std::vector<uint64_t> dims, uint32_t type,
              uint64_t offset) {
    str(name), u32(dims.size());
    for (uint64_t d : dims)
      u64(d);
    u32(type), u64(offset);
  }
  /// Pads to 32 and appends `data` zero bytes.
  std::string withData(size_t data) const {
    std::string out = bytes;
    out.resize((out.size() + 31) / 32 * 32 + data, '\0');
    return out;
  }
};

class CheckpointErrors : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wafer-ckpt-err", path));
    dir = path.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string write(llvm::StringRef name, llvm::StringRef bytes) {
    std::string path = dir + "/" + name.str();
    std::ofstream(path, std::ios::binary) << bytes.str();
    return path;
  }
  /// The error of opening `path` as a LLaMA checkpoint ("" if it opened).
  std::string error(const std::string &path) {
    auto ckpt = LlamaCheckpoint::open(path);
    return ckpt ? std::string() : llvm::toString(ckpt.takeError());
  }
  void expectError(const std::string &path, llvm::StringRef what) {
    std::string message = error(path);
    EXPECT_EQ(message, path + ": " + what.str());
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  std::string dir;
};

/// A llama GGUF with one F32 tensor [2, 32] (dims 32, 2), and the
/// `extraKvs` metadata entries `extra` writes first.
Gguf llamaGguf(llvm::StringRef arch = "llama", int extraKvs = 0,
               llvm::function_ref<void(Gguf &)> extra = nullptr) {
  Gguf g(1, 6 + extraKvs);
  if (extra)
    extra(g);
  g.kvString("general.architecture", arch);
  g.kvU32("llama.embedding_length", 32);
  g.kvU32("llama.block_count", 1);
  g.kvU32("llama.attention.head_count", 2);
  g.kvU32("llama.feed_forward_length", 64);
  g.kvU32("llama.vocab_size", 2);
  g.tensor("token_embd.weight", {32, 2}, 0, 0);
  return g;
}

TEST_F(CheckpointErrors, GgufTruncatedAnywhere) {
  std::string whole = llamaGguf().withData(256);
  // Every cut inside the header or the data is an error, never a crash.
  for (size_t cut = 0; cut < whole.size(); cut += 3) {
    std::string path =
        write("cut.gguf", llvm::StringRef(whole).take_front(cut));
    auto ckpt = Checkpoint::openGguf(path);
    ASSERT_FALSE(bool(ckpt)) << cut;
    std::string message = llvm::toString(ckpt.takeError());
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  }
  std::string path = write("short.gguf", whole.substr(0, whole.size() - 1));
  auto ckpt = Checkpoint::openGguf(path);
  EXPECT_NE(llvm::toString(ckpt.takeError()).find("tensor data short"),
            std::string::npos);
}

TEST_F(CheckpointErrors, GgufStructure) {
  expectError(write("magic.gguf", "GGUX\3\0\0\0"),
              "neither GGUF (no 'GGUF' magic) nor safetensors (no JSON header "
              "after 8 bytes)");
  expectError(write("v1.gguf", Gguf(0, 0, 1).withData(0)),
              "GGUF version 1 is not supported (2 or 3)");
  Gguf huge(0, 1);
  huge.str("tokenizer.ggml.tokens"), huge.u32(9), huge.u32(8),
      huge.u64(uint64_t(1) << 62);
  expectError(write("huge.gguf", huge.bytes),
              "truncated: metadata 'tokenizer.ggml.tokens' elements at byte "
              "69 runs past the end of the file (69 bytes)");
  Gguf dims(1, 0);
  dims.tensor("t", {1, 1, 1, 1, 1}, 0, 0);
  expectError(write("dims.gguf", dims.withData(4)),
              "tensor 't' has 5 dimensions (1 to 4 allowed)");
  Gguf bad(2, 0);
  bad.tensor("w\x01", {32}, 0, 0);
  bad.tensor("w\x01", {32}, 0, 128);
  expectError(write("dup.gguf", bad.withData(256)),
              "tensor 'w\\01' appears twice");
}

TEST_F(CheckpointErrors, GgufTensorTypesAndOffsets) {
  Gguf q6(1, 0);
  q6.tensor("blk.0.attn_q.weight", {256, 4}, 14, 0);
  expectError(write("q6.gguf", q6.withData(4096)),
              "tensor 'blk.0.attn_q.weight' has type Q6_K, which is not "
              "supported (F32, F16, BF16, Q8_0, Q4_0)");
  Gguf unknown(1, 0);
  unknown.tensor("w", {32}, 99, 0);
  expectError(write("unknown.gguf", unknown.withData(128)),
              "tensor 'w' has unknown ggml type 99");
  Gguf rows(1, 0);
  rows.tensor("w", {48, 2}, 8, 0);
  expectError(write("rows.gguf", rows.withData(128)),
              "tensor 'w' of type Q8_0 has rows of 48 values, not a multiple "
              "of 32");
  Gguf far(1, 0);
  far.tensor("w", {8}, 0, uint64_t(-32));
  expectError(write("far.gguf", far.withData(32)),
              "tensor 'w' data (offset 18446744073709551584, 32 bytes) lies "
              "past the end of the file (96 bytes): tensor data short");
  Gguf overlap(2, 0);
  overlap.tensor("a", {16}, 0, 0);
  overlap.tensor("b", {16}, 0, 32);
  expectError(write("overlap.gguf", overlap.withData(128)),
              "tensor 'b' overlaps tensor 'a'");
  Gguf misaligned(1, 0);
  misaligned.tensor("a", {4}, 0, 4);
  expectError(write("misaligned.gguf", misaligned.withData(64)),
              "tensor 'a' offset 4 is not a multiple of the alignment 32");
}

TEST_F(CheckpointErrors, GgufNotALlama) {
  expectError(write("gpt2.gguf", llamaGguf("gpt2").withData(256)),
              "general.architecture is 'gpt2', not 'llama'");
  // Metadata of the right key but an unusable value.
  auto withKv = [&](llvm::StringRef name, llvm::function_ref<void(Gguf &)> kv) {
    return write(name, llamaGguf("llama", 1, kv).withData(256));
  };
  expectError(
      withKv("context.gguf",
             [](Gguf &g) { g.kvString("llama.context_length", "4096"); }),
      "llama.context_length is not an integer");
  expectError(withKv("rope.gguf",
                     [](Gguf &g) { g.kvU32("llama.rope.dimension_count", 0); }),
              "metadata 'llama.rope.dimension_count' is 0");
  expectError(withKv("eps.gguf",
                     [](Gguf &g) {
                       g.str("llama.attention.layer_norm_rms_epsilon");
                       g.u32(6); // f32
                       float inf = std::numeric_limits<float>::infinity();
                       g.bytes.append(reinterpret_cast<char *>(&inf), 4);
                     }),
              "rms epsilon and rope theta must be positive and finite");
  expectError(withKv("vocab.gguf",
                     [](Gguf &g) {
                       g.str("tokenizer.ggml.tokens");
                       g.u32(9); // array
                       g.u32(8); // of strings
                       g.u64(3);
                       for (const char *token : {"a", "b", "c"})
                         g.str(token);
                     }),
              "metadata 'llama.vocab_size' (2) differs from the 3 tokens of "
              "tokenizer.ggml.tokens");
  Gguf noArch(0, 0);
  expectError(write("noarch.gguf", noArch.withData(0)),
              "has no general.architecture string");
  // A llama with only an embedding: the first missing tensor is named.
  std::string path = write("partial.gguf", llamaGguf().withData(256));
  expectError(path, "missing tensor 'blk.0.attn_norm.weight' "
                    "(layers.0.attn_norm)");
}

/// A safetensors file: length, header, `data` bytes.
std::string safetensors(llvm::StringRef header, size_t data) {
  uint64_t n = header.size();
  std::string out(reinterpret_cast<char *>(&n), 8);
  out += header.str();
  out.resize(out.size() + data, '\0');
  return out;
}

TEST_F(CheckpointErrors, SafetensorsHeader) {
  expectError(write("tiny.safetensors", std::string("\1\0\0", 3)),
              "truncated: 3 bytes, less than the 8-byte header length");
  std::string past = safetensors("{}", 0);
  past[0] = 100;
  expectError(write("past.safetensors", past),
              "header length 100 runs past the end of the file (10 bytes)");
  std::string path = write("json.safetensors", safetensors("{\"a\":", 0));
  EXPECT_EQ(error(path).rfind(path + ": header is not valid JSON: ", 0), 0u);
  expectError(write("dtype.safetensors",
                    safetensors(R"({"w":{"dtype":"I64","shape":[2],)"
                                R"("data_offsets":[0,16]}})",
                                16)),
              "tensor 'w' has dtype 'I64', which is not supported (F32, F16, "
              "BF16)");
  expectError(write("range.safetensors",
                    safetensors(R"({"w":{"dtype":"F32","shape":[4],)"
                                R"("data_offsets":[0,16]}})",
                                8)),
              "tensor 'w' data_offsets [0, 16) lie past the end of the data "
              "(8 bytes): tensor data short");
  expectError(write("size.safetensors",
                    safetensors(R"({"w":{"dtype":"F16","shape":[4],)"
                                R"("data_offsets":[0,16]}})",
                                16)),
              "tensor 'w' data_offsets [0, 16) hold 16 bytes, but shape [4] "
              "of F16 needs 8");
  expectError(write("overlap.safetensors",
                    safetensors(R"({"a":{"dtype":"F32","shape":[2],)"
                                R"("data_offsets":[0,8]},"b":{"dtype":"F32",)"
                                R"("shape":[2],"data_offsets":[4,12]}})",
                                12)),
              "tensor 'b' overlaps tensor 'a'");
  expectError(write("noconfig.safetensors", safetensors("{}", 0)),
              "has no config.json next to the weights (needed for the "
              "hyperparameters)");
}

TEST_F(CheckpointErrors, SafetensorsIndexAndConfig) {
  std::string index = write("model.safetensors.index.json",
                            R"({"weight_map":{"w":"model-2.safetensors"}})");
  expectError(index, "shard 'model-2.safetensors' named in weight_map is "
                     "missing");
  expectError(
      write("escape.json", R"({"weight_map":{"w":"../x.safetensors"}})"),
      "shard '../x.safetensors' must be a file name in the index's "
      "directory");
  std::string shard = dir + "/model-2.safetensors";
  ASSERT_FALSE(llvm::sys::fs::create_directory(shard));
  EXPECT_EQ(error(index), shard + ": is a directory, not a checkpoint file");
  llvm::sys::fs::remove_directories(shard);

  // A shard whose embedding disagrees with config.json.
  write("model-2.safetensors",
        safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                    R"("model.embed_tokens.weight":{"dtype":"F32",)"
                    R"("shape":[4,3],"data_offsets":[4,52]}})",
                    52));
  write("model.safetensors.index.json",
        R"({"weight_map":{"w":"model-2.safetensors",)"
        R"("model.embed_tokens.weight":"model-2.safetensors"}})");
  std::string config = dir + "/config.json";
  write("config.json", R"({"model_type":"gpt2","hidden_size":4})");
  EXPECT_EQ(error(index), config +
                              ": model_type is 'gpt2' and architectures "
                              "has no LlamaForCausalLM: not a llama model");
  write("config.json", R"({"model_type":"llama","hidden_size":4,)"
                       R"("num_hidden_layers":1,"num_attention_heads":2,)"
                       R"("intermediate_size":8,"vocab_size":3})");
  // A tensor no LLaMA has might change the maths if ignored.
  EXPECT_EQ(error(dir), shard + ": tensor 'w' is not one of a LLaMA model's");
  write("model-2.safetensors",
        safetensors(R"({"model.embed_tokens.weight":{"dtype":"F32",)"
                    R"("shape":[4,3],"data_offsets":[0,48]}})",
                    48));
  write(
      "model.safetensors.index.json",
      R"({"weight_map":{"model.embed_tokens.weight":"model-2.safetensors"}})");
  EXPECT_EQ(error(dir), shard +
                            ": tensor 'model.embed_tokens.weight' has "
                            "shape [4, 3], but " +
                            config + " implies [3, 4]");
  // Fields that keep LLaMA's maths are accepted (the checkpoint then fails
  // on its tensor, as above).
  for (const char *field :
       {R"("hidden_act":"silu")", R"("hidden_act":"swish")",
        R"("sliding_window":null)",
        R"("sliding_window":4096,"use_sliding_window":false)",
        R"("sliding_window":16,"max_position_embeddings":16)"}) {
    write("config.json",
          std::string(R"({"model_type":"llama","hidden_size":4,)"
                      R"("num_hidden_layers":1,"num_attention_heads":2,)"
                      R"("intermediate_size":8,"vocab_size":3,)") +
              field + "}");
    EXPECT_EQ(error(dir), shard +
                              ": tensor 'model.embed_tokens.weight' has "
                              "shape [4, 3], but " +
                              config + " implies [3, 4]")
        << field;
  }
  // Values of the right type that no model has.
  for (auto [field, why] :
       {std::pair{R"("head_dim":0)", "head_dim is 0"},
        std::pair{R"("rope_theta":1e999)",
                  "rms epsilon and rope theta must be positive and finite"},
        std::pair{R"("hidden_act":"gelu")",
                  "hidden_act is neither \"silu\" nor \"swish\"; LLaMA's "
                  "SwiGLU MLP is the only one supported"},
        std::pair{R"("sliding_window":2)",
                  "sliding_window is shorter than the context; only "
                  "attention over the whole context is supported"},
        std::pair{R"("sliding_window":8,"max_position_embeddings":16)",
                  "sliding_window is shorter than the context; only "
                  "attention over the whole context is supported"}}) {
    write("config.json",
          std::string(R"({"model_type":"llama","hidden_size":4,)"
                      R"("num_hidden_layers":1,"num_attention_heads":2,)"
                      R"("intermediate_size":8,"vocab_size":3,)") +
              field + "}");
    EXPECT_EQ(error(dir), config + ": " + why) << field;
  }
  // A context length that is not a positive count would lift the limit.
  for (const char *value : {"1.5", "\"abc\"", "0", "-5"}) {
    write("config.json",
          std::string(R"({"model_type":"llama","hidden_size":4,)"
                      R"("num_hidden_layers":1,"num_attention_heads":2,)"
                      R"("intermediate_size":8,"vocab_size":3,)"
                      R"("max_position_embeddings":)") +
              value + "}");
    std::string why =
        value[0] == '0' || value[0] == '-'
            ? std::string("context length ") + value + " must be positive"
            : "max_position_embeddings is not an integer";
    EXPECT_EQ(error(dir), config + ": " + why) << value;
  }
}

TEST_F(CheckpointErrors, NotRegularFiles) {
  std::string fifo = dir + "/pipe.gguf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectError(fifo, "is a named pipe, not a regular file");
  auto gguf = Checkpoint::openGguf(dir);
  EXPECT_EQ(llvm::toString(gguf.takeError()),
            dir + ": is a directory, not a checkpoint file");
  expectError(dir, "a directory with neither model.safetensors.index.json "
                   "nor model.safetensors");
  expectError("/dev/null", "is not a regular file (a device, socket or other "
                           "special file)");
  // remove_directories leaves a FIFO, and so the whole directory, behind.
  llvm::sys::fs::remove(fifo);
}

} // namespace
