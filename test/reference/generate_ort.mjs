// Greedy generation with ONNX Runtime, the reference of `wafer-run generate`.
//
//   node generate_ort.mjs DIR IDS N [EOS]
//
// DIR holds the exporter's prefill.onnx and decode.onnx; IDS the prompt's
// token ids (1,2,3). Runs the prefill on the prompt (or, for a one-token
// prompt, the decode graph on an empty past), then the decode graph once
// per token with the presents fed back as the past, picking the most likely
// token (the lowest id on ties) until N tokens or EOS. Graphs that take
// Hugging Face's attention_mask and position_ids get all ones and the
// tokens' positions. Prints the generated
// ids as one line of JSON. Failures print one line `error: ...`, exit 1.

import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

function argmaxLast(logits) {
  const vocab = logits.dims[logits.dims.length - 1];
  const data = logits.data;
  const start = data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; i++)
    if (data[start + i] > data[start + best]) best = i;
  return best;
}

async function main(argv) {
  if (argv.length < 3 || argv.length > 4)
    throw new Error('usage: node generate_ort.mjs DIR IDS N [EOS]');
  const [dir, idsText, countText, eosText] = argv;
  const prompt = idsText.split(',').map((s) => Number.parseInt(s, 10));
  const count = Number.parseInt(countText, 10);
  const eos = eosText === undefined ? -1 : Number.parseInt(eosText, 10);
  const ort = require('onnxruntime-node');
  const options = { executionProviders: ['cpu'], graphOptimizationLevel: 'disabled' };
  const prefill = await ort.InferenceSession.create(path.join(dir, 'prefill.onnx'), options);
  const decode = await ort.InferenceSession.create(path.join(dir, 'decode.onnx'), options);
  const ids = (list) => new ort.Tensor('int64', BigInt64Array.from(list.map(BigInt)),
                                      [1, list.length]);
  // attention_mask and position_ids, for graphs that take them: `count`
  // tokens after `past`.
  const positionInputs = (session, past, count) => {
    const feeds = {};
    if (session.inputNames.includes('attention_mask'))
      feeds.attention_mask = new ort.Tensor(
        'int64', new BigInt64Array(past + count).fill(1n), [1, past + count]);
    if (session.inputNames.includes('position_ids'))
      feeds.position_ids = new ort.Tensor(
        'int64', BigInt64Array.from({ length: count }, (_, i) => BigInt(past + i)),
        [1, count]);
    return feeds;
  };
  // Past caches of the decode graph, from the presents of the last run.
  const pastOf = (results) => {
    const past = {};
    for (const name of Object.keys(results))
      if (name.startsWith('present.'))
        past['past.' + name.slice('present.'.length)] = results[name];
    return past;
  };
  let results, past;
  if (prompt.length > 1) {
    results = await prefill.run({ input_ids: ids(prompt),
                                  ...positionInputs(prefill, 0, prompt.length) });
  } else {
    // An empty past: every past input with its position axis 0.
    past = {};
    for (const name of decode.inputNames)
      if (name.startsWith('past.')) {
        const meta = decode.inputMetadata?.find?.((m) => m.name === name);
        const dims = meta?.shape?.map((d) => (typeof d === 'number' ? d : 0));
        past[name] = new ort.Tensor('float32', new Float32Array(0), dims);
      }
    results = await decode.run({ input_ids: ids(prompt), ...past,
                                 ...positionInputs(decode, 0, 1) });
  }
  const generated = [];
  for (;;) {
    const token = argmaxLast(results.logits);
    generated.push(token);
    if (token === eos || generated.length >= count) break;
    past = pastOf(results);
    const length = prompt.length + generated.length - 1;
    results = await decode.run({ input_ids: ids([token]), ...past,
                                 ...positionInputs(decode, length, 1) });
  }
  process.stdout.write(JSON.stringify(generated) + '\n');
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`error: ${String(e.message || e).split('\n')[0]}\n`);
    process.exit(1);
  });
