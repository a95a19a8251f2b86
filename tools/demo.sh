#!/usr/bin/env bash
# The main job at small size. Builds wafer, then:
#  1. compiles and runs a GEMM (MatMul 37x50 by 50x29 on a 5x7 grid) and a
#     GEMV (1x300 by 300x200 on a 6x6 grid) on the emulated wse2 with every
#     algorithm (MeshGEMM, Cannon; K-tree, pipeline, ring) and checks each
#     against ONNX Runtime;
#  2. compares the algorithms at a larger size in f16 (GEMM 512 on 64x64,
#     GEMV 4096 on 128x128): modeled cycles side by side;
#  3. exports the tiny LLaMA (prefill and decode), imports it, raises it to
#     transformer ops and evaluates it on the host against ONNX Runtime;
#  4. compiles the tiny LLaMA's prefill and decode graphs onto emulated
#     grids (WaferLLM plans: MeshGEMM + shift attention for prefill, K-tree
#     GEMVs + shift KV cache for decode, and the baselines) and runs them:
#     the check against ONNX Runtime, the per-op cycles, the SRAM and route
#     high-water, the KV capacity (shift vs concat) and tokens/s per request;
#  5. checkpoint in, text out: trains a SentencePiece vocabulary (spm_train)
#     and the exporter's tiny model (torch, 200 steps) on a generated text,
#     writes it as a GGUF (f16) and a sharded bf16 safetensors checkpoint
#     with the vocabulary, and generates from a prompt on
#     emulated grids (prefill 4x6, decode 4x5, the KV caches kept in SRAM
#     between decode steps) with every step checked against the host
#     evaluator, and the tokens against ONNX Runtime's greedy generation;
#     then from the exported ONNX directory of the same weights on one
#     grid, the prefill handing its KV caches to decode on chip.
#  Between 4 and 5: the tiny decode on a fabric with dead cores, and a
#  Chrome trace and heatmaps of a run, kept in build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
cmake --build build -j2 --target wafer-run wafer-translate wafer-opt >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
status=0

# kind grid label "sizes" "option sets" [dtype]: one wafer-run per option set
# (';'-separated), each checked against ONNX Runtime.
run_case() {
  local kind=$1 grid=$2 label=$3 sizes=$4 variants=$5 dtype=${6:-f32}
  # shellcheck disable=SC2086
  "$py" python/wafer/testing.py "$kind" "$work" "$kind" $sizes
  node test/reference/run_ort.mjs "$work/$kind.onnx" "$work/$kind.in.npz" \
    "$work/$kind.ref.npz" >/dev/null
  echo "== $label on a ${grid} grid (target wse2, $dtype)"
  IFS=';' read -ra sets <<<"$variants"
  for options in "${sets[@]}"; do
    # shellcheck disable=SC2086
    build/bin/wafer-run run "$work/$kind.onnx" --grid "$grid" --dtype "$dtype" \
      --threads 2 --inputs "$work/$kind.in.npz" --outputs "$work/$kind.out.npz" \
      --stats "$work/$kind.stats.json" $options | sed 's/^/    /'
    "$py" - "$work/$kind.out.npz" "$work/$kind.ref.npz" "$dtype" <<'PY' || status=1
import sys
sys.path.insert(0, "python")
from wafer import testing
if sys.argv[3] == "f16":
    cos = testing.cosine(sys.argv[1], sys.argv[2])
    ok = cos >= 0.999
    print(f"    check vs ONNX Runtime: cosine {cos:.7f} (>= 0.999): "
          f"{'PASS' if ok else 'FAIL'}")
else:
    err = testing.compare(sys.argv[1], sys.argv[2])
    ok = err <= 1e-4
    print(f"    check vs ONNX Runtime: max error / max |reference| = "
          f"{err:.2e} (tolerance 1e-4): {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
  done
  echo
}

run_case matmul 5x7 "GEMM 37x50 x 50x29" "37 50 29" \
  "--gemm meshgemm;--gemm cannon"
run_case gemv 6x6 "GEMV 1x300 x 300x200" "300 200" \
  "--allreduce ktree --ktree-k 2;--allreduce pipeline;--allreduce ring"
run_case matmul 64x64 "GEMM 512x512 x 512x512" "512 512 512" \
  "--gemm meshgemm;--gemm cannon;--gemm summa;--gemm allgather" f16
run_case gemv 128x128 "GEMV 1x4096 x 4096x4096" "4096 4096" \
  "--allreduce ktree --ktree-k 2;--allreduce ktree --ktree-k 3;--allreduce pipeline" f16

echo "== tiny LLaMA: export (torch), import, fold, raise, host evaluation vs ONNX Runtime"
"$py" python/wafer/export_llama.py tiny --out-dir "$work/tiny" >/dev/null
for graph in prefill decode; do
  "$py" test/e2e/run_llama.py build/bin "$work/tiny" "$graph" "$work/tiny.work" \
    || status=1
done
echo
# graph grid label "options": one whole-model run checked against ORT.
run_llama() {
  local graph=$1 grid=$2 label=$3 options=$4
  echo "== tiny LLaMA $graph on a $grid grid, $label"
  # shellcheck disable=SC2086
  build/bin/wafer-run run "$work/tiny/$graph.onnx" --grid "$grid" \
    --phase "$graph" --threads 2 --inputs "$work/tiny/inputs_$graph.npz" \
    --outputs "$work/tiny.$graph.out.npz" $options | sed 's/^/    /'
  "$py" - "$work/tiny.$graph.out.npz" "$work/tiny.work/$graph.ort.npz" <<'PY' || status=1
import sys
sys.path.insert(0, "python")
from wafer import testing
err = testing.compare(sys.argv[1], sys.argv[2])
ok = err <= 1e-4
print(f"    check vs ONNX Runtime (logits and present KV, each output on its "
      f"own scale): max error / max |reference| = {err:.2e} (tolerance "
      f"1e-4): {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
  echo
}
run_llama prefill 8x8 "WaferLLM prefill (MeshGEMM, shift attention)" "--gemm meshgemm"
run_llama prefill 8x8 "baseline (SUMMA)" "--gemm summa"
run_llama prefill 6x10 "non-square grid (MeshGEMM with lcm relayouts)" "--gemm meshgemm"
run_llama decode 8x8 "WaferLLM decode (K-tree GEMV, shift KV cache)" \
  "--allreduce ktree --ktree-k 2 --kv shift"
run_llama decode 8x8 "baselines (pipeline allreduce, concat KV cache)" \
  "--allreduce pipeline --kv concat"
printf '{"base": "wse2", "dead_cores": [[1, 2], [5, 6]], "dead_links": [[3, 0, "east"]]}\n' \
  >"$work/dead.json"
run_llama decode 8x8 "on a fabric with 2 dead cores and a dead link (placed around them: the same numbers, the extra hops cost cycles)" \
  "--target $work/dead.json"

echo "== see what the mesh did: a trace and heatmaps of the tiny decode on 8x8"
look=build/demo
mkdir -p "$look"
build/bin/wafer-run run "$work/tiny/decode.onnx" --grid 8x8 --threads 2 \
  --inputs "$work/tiny/inputs_decode.npz" --stats "$look/decode.stats.json" \
  --stats-detail --trace "$look/decode.trace.json" >/dev/null
PYTHONPATH=python "$py" -m wafer.plot "$look/decode.stats.json" \
  --out "$look/plots" >/dev/null
echo "    trace: $look/decode.trace.json (open it at https://ui.perfetto.dev)"
echo "    heatmaps: $(ls "$look"/plots/*.png | tr '\n' ' ')"
echo

echo "== checkpoint in, text out: wafer-run generate"
gen="$work/gen"
mkdir -p "$gen"
"$py" test/e2e/generate_reference.py corpus "$gen/corpus.txt"
spm_train --input="$gen/corpus.txt" --model_prefix="$gen/spm" --vocab_size=600 \
  --model_type=bpe --byte_fallback=true --character_coverage=1.0 >/dev/null 2>&1
"$py" test/e2e/generate_reference.py config 600 "$gen/cfg.json"
for format in gguf safetensors; do
  if [ $format = gguf ]; then
    out=(--dtype f16 --out "$gen/model.gguf" --onnx-dir "$gen/gguf-onnx")
  else
    out=(--dtype bf16 --shards 2 --out "$gen/hf" --onnx-dir "$gen/hf-onnx")
  fi
  PYTHONPATH=python "$py" -W ignore -m wafer.checkpoints --config "$gen/cfg.json" \
    --seed 5 --format $format --tokenizer "$gen/spm.model" \
    --train "$gen/corpus.txt" "${out[@]}" | sed 's/^/    /'
done
prompt="The wafer holds many"
for model in model.gguf hf; do
  onnx=$([ "$model" = hf ] && echo hf-onnx || echo gguf-onnx)
  echo "-- $model: prefill on 4x6, decode on 4x5 (wse2, f32), greedy, --check"
  build/bin/wafer-run generate "$gen/$model" --prompt "$prompt" \
    --max-new-tokens 24 --prefill-grid 4x6 --decode-grid 4x5 --check --json \
    --threads 2 >"$gen/$model.out" 2>"$gen/$model.err" || status=1
  echo "    text: $(head -n -1 "$gen/$model.out")"
  sed 's/^/    /' "$gen/$model.err"
  "$py" test/e2e/generate_reference.py check "$gen/$model.out" "$gen/spm.model" \
    "$gen/$onnx" "$prompt" 24 | sed 's/^/    vs ONNX Runtime: /' || status=1
done
echo "-- the exported ONNX directory (prefill.onnx, decode.onnx with the hf weights) on one 8x8 grid (the KV caches handed over on chip), greedy, --check"
build/bin/wafer-run generate "$gen/hf-onnx" --tokenizer "$gen/spm.model" \
  --prompt "$prompt" --max-new-tokens 24 --grid 8x8 --check --json \
  --threads 2 >"$gen/onnx.out" 2>"$gen/onnx.err" || status=1
echo "    text: $(head -n -1 "$gen/onnx.out")"
sed 's/^/    /' "$gen/onnx.err"
"$py" test/e2e/generate_reference.py check "$gen/onnx.out" "$gen/spm.model" \
  "$gen/hf-onnx" "$prompt" 24 | sed 's/^/    vs ONNX Runtime: /' || status=1
echo "-- model.gguf sampled (temperature 0.8, top-k 20, seed 3), f16 on one 4x6 grid (KV hand-off on chip)"
build/bin/wafer-run generate "$gen/model.gguf" --prompt "$prompt" \
  --max-new-tokens 32 --grid 4x6 --dtype f16 --temperature 0.8 --top-k 20 \
  --seed 3 --check --check-tolerance 5e-2 --threads 2 2>"$gen/sampled.err" |
  sed 's/^/    text: /' || status=1
sed 's/^/    /' "$gen/sampled.err"
exit $status
