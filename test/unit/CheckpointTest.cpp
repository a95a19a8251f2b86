//===- CheckpointTest.cpp - GGUF and safetensors readers ------------------===//
//
// The checkpoints come from python/wafer/checkpoints.py (through
// make_checkpoints.py, once per run): the readers must reproduce exactly the
// values that module's independent numpy decoder reads back from the same
// files. Corrupt inputs are built byte by byte here.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/LlamaCheckpoint.h"
#include "wafer/Runtime/NDArray.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace wafer;

namespace {

std::string dir; // the checkpoints of this run

std::string at(llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return p.str().str();
}

class CheckpointTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wafer-ckpt", path));
    dir = path.str().str();
    std::string command = "PYTHONPATH=" WAFER_SOURCE_DIR
                          "/python /usr/bin/python3 " WAFER_SOURCE_DIR
                          "/test/unit/make_checkpoints.py " +
                          dir;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static void TearDownTestSuite() { llvm::sys::fs::remove_directories(dir); }
};

/// Every tensor of `path` equals the numpy read-back in `reference`.
void expectMatchesReference(const std::string &path,
                            const std::string &reference) {
  auto ckpt = Checkpoint::open(path);
  ASSERT_TRUE(bool(ckpt)) << llvm::toString(ckpt.takeError());
  auto ref = rt::readNpz(reference);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  ASSERT_EQ((*ckpt)->tensors().size(), ref->size());
  for (const auto &[name, array] : *ref) {
    auto data = (*ckpt)->read(name);
    ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
    EXPECT_EQ(data->shape, array.shape) << name;
    ASSERT_EQ(data->values.size(), array.data.size()) << name;
    // Both decoders compute d * q in float: identical results expected.
    for (size_t i = 0; i < array.data.size(); ++i)
      ASSERT_EQ(data->values[i], array.data[i]) << name << " element " << i;
  }
}

TEST_F(CheckpointTest, GgufDecodesEveryTypeLikeNumpy) {
  for (const char *type : {"f32", "f16", "bf16", "q8_0", "q4_0"}) {
    SCOPED_TRACE(type);
    expectMatchesReference(at(std::string("tiny_") + type + ".gguf"),
                           at(std::string("tiny_") + type + ".npz"));
  }
  auto q4 = Checkpoint::openGguf(at("tiny_q4_0.gguf"));
  ASSERT_TRUE(bool(q4));
  EXPECT_EQ((*q4)->find("blk.0.attn_q.weight")->type, TensorType::Q4_0);
  // Rows of 172 are not whole blocks: the writer fell back to F16.
  EXPECT_EQ((*q4)->find("blk.0.ffn_down.weight")->type, TensorType::F16);
  EXPECT_EQ((*q4)->find("blk.0.attn_norm.weight")->type, TensorType::F32);
  // GGUF lists dims innermost first; shapes are row-major.
  EXPECT_EQ((*q4)->find("blk.1.ffn_down.weight")->shape,
            (std::vector<int64_t>{64, 172}));
}

TEST_F(CheckpointTest, GgufVersion2) {
  // v2 has v3's layout (v3 only marks the byte order): patch the version.
  auto v3 = llvm::MemoryBuffer::getFile(at("tiny_q4_0.gguf"));
  ASSERT_TRUE(bool(v3));
  std::string bytes = (*v3)->getBuffer().str();
  ASSERT_EQ(bytes[4], 3);
  bytes[4] = 2;
  std::ofstream(at("v2.gguf"), std::ios::binary) << bytes;
  expectMatchesReference(at("v2.gguf"), at("tiny_q4_0.npz"));
}

TEST_F(CheckpointTest, QuantisationErrorWithinBlockBounds) {
  auto exact = Checkpoint::openGguf(at("tiny_f32.gguf"));
  ASSERT_TRUE(bool(exact));
  // Q8_0 rounds to d / 2 with d = amax / 127; Q4_0 to d = amax / 8.
  for (auto [type, bound] : {std::pair<const char *, float>{"q8_0", 1.0f / 127},
                             {"q4_0", 1.0f / 7.9f}}) {
    auto quant =
        Checkpoint::openGguf(at(std::string("tiny_") + type + ".gguf"));
    ASSERT_TRUE(bool(quant));
    for (const TensorInfo &info : (*exact)->tensors()) {
      WeightData a = llvm::cantFail((*exact)->read(info.name));
      WeightData b = llvm::cantFail((*quant)->read(info.name));
      float amax = 0, err = 0;
      for (size_t i = 0; i < a.values.size(); ++i) {
        amax = std::max(amax, std::fabs(a.values[i]));
        err = std::max(err, std::fabs(a.values[i] - b.values[i]));
      }
      EXPECT_LE(err, bound * amax) << type << " " << info.name;
    }
  }
}

TEST_F(CheckpointTest, GgufMetadataAndVocabulary) {
  auto ckpt = Checkpoint::openGguf(at("vocab.gguf"));
  ASSERT_TRUE(bool(ckpt)) << llvm::toString(ckpt.takeError());
  EXPECT_EQ((*ckpt)->metadataValue("general.architecture")->asString(),
            std::optional<llvm::StringRef>("llama"));
  const GgufValue *layers = (*ckpt)->metadataValue("llama.block_count");
  EXPECT_EQ(layers->type, GgufType::U32);
  EXPECT_EQ(layers->asInt(), std::optional<int64_t>(2));
  EXPECT_EQ((*ckpt)->metadataValue("general.alignment")->asInt(),
            std::optional<int64_t>(64));
  EXPECT_EQ((*ckpt)->metadataValue("tokenizer.ggml.model")->asString(),
            std::optional<llvm::StringRef>("llama"));
  const auto *tokens =
      (*ckpt)->metadataValue("tokenizer.ggml.tokens")->asArray();
  const auto *scores =
      (*ckpt)->metadataValue("tokenizer.ggml.scores")->asArray();
  const auto *types =
      (*ckpt)->metadataValue("tokenizer.ggml.token_type")->asArray();
  ASSERT_TRUE(tokens && scores && types);
  // The pieces as python3-sentencepiece lists them.
  std::ifstream pieces(at("spm_pieces.txt"));
  std::string line;
  size_t i = 0;
  for (; std::getline(pieces, line); ++i) {
    auto [piece, rest] = llvm::StringRef(line).split('\t');
    auto [score, kind] = rest.split('\t');
    ASSERT_LT(i, tokens->size());
    EXPECT_EQ((*tokens)[i].asString(), std::optional<llvm::StringRef>(piece));
    EXPECT_EQ((*scores)[i].type, GgufType::F32);
    EXPECT_EQ(*(*scores)[i].asFloat(), std::stod(score.str())) << i;
    EXPECT_EQ((*types)[i].asInt(),
              std::optional<int64_t>(std::stoi(kind.str())));
  }
  EXPECT_EQ(i, 256u);
  EXPECT_EQ(tokens->size(), 256u);
  // Tensors start at 64-byte offsets and still decode.
  expectMatchesReference(at("vocab.gguf"), at("tiny_f32.npz"));
}

TEST_F(CheckpointTest, SafetensorsSingleAndSharded) {
  expectMatchesReference(at("hf"), at("hf.npz"));
  expectMatchesReference(at("hf/model.safetensors"), at("hf.npz"));
  expectMatchesReference(at("hf3"), at("hf3.npz"));
  auto sharded =
      Checkpoint::openSafetensors(at("hf3/model.safetensors.index.json"));
  ASSERT_TRUE(bool(sharded));
  EXPECT_EQ((*sharded)->files.size(), 3u);
  EXPECT_EQ((*sharded)->find("lm_head.weight")->type, TensorType::BF16);
}

TEST_F(CheckpointTest, ConfigFromGgufAndHuggingFace) {
  for (const char *path : {"tiny_q8_0.gguf", "hf3"}) {
    SCOPED_TRACE(path);
    auto model = LlamaCheckpoint::open(at(path));
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    const LlamaConfig &c = model->config();
    EXPECT_EQ(c.hiddenSize, 64);
    EXPECT_EQ(c.numLayers, 2);
    EXPECT_EQ(c.numHeads, 4);
    EXPECT_EQ(c.numKVHeads, 2);
    EXPECT_EQ(c.headDim, 16);
    EXPECT_EQ(c.intermediateSize, 172);
    EXPECT_EQ(c.vocabSize, 256);
    EXPECT_FLOAT_EQ(c.rmsEps, 1e-5);
    EXPECT_EQ(c.ropeTheta, 10000.0);
    EXPECT_FALSE(c.tiedEmbeddings);
    EXPECT_EQ(c.bosId, std::optional<int64_t>(1));
    EXPECT_EQ(c.eosIds, std::vector<int64_t>{2});
    EXPECT_EQ(c.maxContext, std::optional<int64_t>(2048));
    EXPECT_EQ(model->tensors().size(), 1 + 9 * 2 + 2u);
  }
  auto vocab = LlamaCheckpoint::open(at("vocab.gguf"));
  ASSERT_TRUE(bool(vocab));
  EXPECT_EQ(vocab->config().vocabSize, 256);
  // Tied embeddings: no output tensor, the output reads the embedding.
  for (const char *path : {"tied.gguf", "tied_hf"}) {
    auto tied = LlamaCheckpoint::open(at(path));
    ASSERT_TRUE(bool(tied)) << llvm::toString(tied.takeError());
    EXPECT_TRUE(tied->config().tiedEmbeddings);
    EXPECT_EQ(tied->tensors().size(), 1 + 9 + 1u);
    WeightData out = llvm::cantFail(tied->read({LlamaRole::Output}));
    WeightData embd = llvm::cantFail(tied->read({LlamaRole::TokenEmbd}));
    EXPECT_EQ(out.values, embd.values);
  }
}

TEST_F(CheckpointTest, RopeRowOrderAgreesAcrossFormats) {
  auto gguf = LlamaCheckpoint::open(at("tiny_f32.gguf"));
  auto hf = LlamaCheckpoint::open(at("hf"));
  ASSERT_TRUE(gguf && hf);
  EXPECT_EQ(gguf->ropeOrder(), RopeOrder::AdjacentPairs);
  EXPECT_EQ(hf->ropeOrder(), RopeOrder::RotateHalf);
  for (const LlamaCheckpoint::Tensor &t : hf->tensors()) {
    SCOPED_TRACE(canonicalName(t.name));
    bool rotates =
        t.name.role == LlamaRole::AttnQ || t.name.role == LlamaRole::AttnK;
    // Same torch weights: equal after the pair -> rotate-half permutation,
    // different before it (q and k only).
    WeightData a = llvm::cantFail(gguf->read(t.name, RopeOrder::RotateHalf));
    WeightData b = llvm::cantFail(hf->read(t.name, RopeOrder::RotateHalf));
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.values, b.values);
    WeightData rawPairs =
        llvm::cantFail(gguf->read(t.name, RopeOrder::AdjacentPairs));
    EXPECT_EQ(rawPairs.values == b.values, !rotates);
    WeightData hfPairs =
        llvm::cantFail(hf->read(t.name, RopeOrder::AdjacentPairs));
    EXPECT_EQ(hfPairs.values, rawPairs.values);
  }
}

TEST(CheckpointNames, BothSchemesMapToOneRole) {
  for (CheckpointFormat format :
       {CheckpointFormat::Gguf, CheckpointFormat::Safetensors})
    for (int r = 0; r <= int(LlamaRole::Output); ++r) {
      LlamaRole role = LlamaRole(r);
      bool perLayer = role != LlamaRole::TokenEmbd &&
                      role != LlamaRole::OutputNorm &&
                      role != LlamaRole::Output;
      LlamaTensorName name{role, perLayer ? 7 : -1};
      auto parsed = parseTensorName(format, storedName(format, name));
      ASSERT_TRUE(parsed.has_value());
      EXPECT_TRUE(*parsed == name);
    }
  using F = CheckpointFormat;
  EXPECT_EQ(storedName(F::Gguf, {LlamaRole::AttnQ, 3}), "blk.3.attn_q.weight");
  EXPECT_EQ(storedName(F::Safetensors, {LlamaRole::AttnQ, 3}),
            "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(storedName(F::Safetensors, {LlamaRole::FfnNorm, 0}),
            "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(storedName(F::Safetensors, {LlamaRole::Output}), "lm_head.weight");
  EXPECT_EQ(canonicalName({LlamaRole::FfnDown, 2}), "layers.2.ffn_down");
  EXPECT_FALSE(parseTensorName(F::Gguf, "rope_freqs.weight"));
  EXPECT_FALSE(parseTensorName(F::Gguf, "blk.x.attn_q.weight"));
  EXPECT_FALSE(parseTensorName(F::Safetensors,
                               "model.layers.0.self_attn.rotary_emb.inv_freq"));
  EXPECT_FALSE(parseTensorName(F::Safetensors, "blk.0.attn_q.weight"));
}

TEST(CheckpointNames, PermutationMatchesLlamaCpp) {
  // llama.cpp: w.reshape(heads, 2, D/2, cols).swapaxes(1, 2): pair row
  // (h, i, s) holds rotate-half row (h, s, i). Heads 2, D 4, one column.
  std::vector<float> half = {0, 1, 2, 3, 10, 11, 12, 13};
  std::vector<float> pairs = half;
  permuteRotateHalfToPairs(pairs, 2, 4, 1);
  EXPECT_EQ(pairs, (std::vector<float>{0, 2, 1, 3, 10, 12, 11, 13}));
  permutePairsToRotateHalf(pairs, 2, 4, 1);
  EXPECT_EQ(pairs, half);
}

} // namespace
