// Reference runner for wafer's end-to-end tests.
//
//   node run_ort.mjs MODEL.onnx IN.npz OUT.npz
//
// Runs MODEL.onnx with ONNX Runtime (CPU execution provider) on the arrays of
// IN.npz (member `<input>.npy` feeds graph input `<input>`) and writes every
// graph output to OUT.npz as float32, member `<output>.npy`, in an
// uncompressed zip, the layout numpy's np.savez writes.
//
// Install once with `npm install --ignore-scripts` in this directory: the
// install script only fetches optional GPU libraries; the CPU library ships
// inside the package (bin/napi-v*/linux/x64).
//
// Failures print one line `error: ...` and exit with code 1.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);

class UserError extends Error {}
const fail = (message) => { throw new UserError(message); };

// ------------------------------------------------------------ zip reading ---

/// Returns [{name, data: Buffer}] for the members of a zip archive (adm-zip:
/// stored and deflated members, zip64, CRCs checked).
function readZip(AdmZip, buf, where) {
  let zip;
  try { zip = new AdmZip(buf); }
  catch (e) { fail(`${where}: not a zip archive (.npz): ${e.message ?? e}`); }
  const members = [];
  for (const entry of zip.getEntries()) {
    if (entry.isDirectory) continue;
    let data;
    try { data = entry.getData(); }
    catch (e) { fail(`${where}: ${entry.entryName}: ${e.message ?? e}`); }
    if (data.length !== entry.header.size)
      fail(`${where}: ${entry.entryName}: size ${data.length}, expected ` +
           `${entry.header.size}`);
    members.push({ name: entry.entryName, data });
  }
  return members;
}

// ------------------------------------------------------------- npy format ---

const DTYPES = {
  // descr (without byte order) -> [onnxruntime type, TypedArray]
  f4: ['float32', Float32Array],
  f8: ['float64', Float64Array],
  i1: ['int8', Int8Array],
  u1: ['uint8', Uint8Array],
  i2: ['int16', Int16Array],
  u2: ['uint16', Uint16Array],
  i4: ['int32', Int32Array],
  u4: ['uint32', Uint32Array],
  i8: ['int64', BigInt64Array],
  u8: ['uint64', BigUint64Array],
  b1: ['bool', Uint8Array],
};

/// Parses one .npy file: {type, dims, data (TypedArray, C order)}.
function parseNpy(bytes, where) {
  const magic = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY
  if (bytes.length < 10 || !bytes.subarray(0, 6).equals(magic))
    fail(`${where}: not a .npy array`);
  const major = bytes[6];
  let headerLen, headerStart;
  if (major === 1) { headerLen = bytes.readUInt16LE(8); headerStart = 10; }
  else if (major === 2 || major === 3) {
    headerLen = bytes.readUInt32LE(8); headerStart = 12;
  } else fail(`${where}: unsupported .npy version ${major}`);
  const header = bytes.toString('latin1', headerStart, headerStart + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(`${where}: bad .npy header ${header.trim()}`);
  const m = /^([<>|=]?)([a-z]\d+)$/.exec(descr[1]);
  if (!m || !DTYPES[m[2]]) fail(`${where}: unsupported dtype '${descr[1]}'`);
  if (m[1] === '>' && m[2] !== 'i1' && m[2] !== 'u1' && m[2] !== 'b1')
    fail(`${where}: big-endian dtype '${descr[1]}' is not supported`);
  const [type, Typed] = DTYPES[m[2]];
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '')
    .map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const start = headerStart + headerLen;
  const nbytes = count * Typed.BYTES_PER_ELEMENT;
  if (start + nbytes > bytes.length)
    fail(`${where}: has ${bytes.length - start} data bytes, shape [${dims}] needs ${nbytes}`);
  // Copy so that the data is aligned for the TypedArray.
  const copy = new Uint8Array(nbytes);
  copy.set(bytes.subarray(start, start + nbytes));
  let data = new Typed(copy.buffer);
  if (fortran[1] === 'True' && dims.length > 1) data = fortranToC(data, dims, Typed);
  return { type: type === 'bool' ? 'bool' : type, dims, data };
}

function fortranToC(data, dims, Typed) {
  const out = new Typed(data.length);
  const n = dims.length;
  const idx = new Array(n).fill(0);
  for (let c = 0; c < data.length; c++) {
    // idx is the C-order multi-index of c; its Fortran offset:
    let f = 0, stride = 1;
    for (let d = 0; d < n; d++) { f += idx[d] * stride; stride *= dims[d]; }
    out[c] = data[f];
    for (let d = n - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/// A .npy v1 file holding `values` (Float32Array) with shape `dims`.
function makeNpy(values, dims) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad with spaces so that magic + header ends on a multiple of 64, '\n' last.
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'),
                        Buffer.from(values.buffer, values.byteOffset,
                                    values.byteLength)]);
}

// ------------------------------------------------------------ zip writing ---

/// An uncompressed zip archive of [{name, data: Buffer}], as np.savez
/// writes.
function makeZip(AdmZip, members) {
  const zip = new AdmZip();
  for (const { name, data } of members) {
    zip.addFile(name, data);
    zip.getEntry(name).header.method = 0; // stored
  }
  return zip.toBuffer();
}

// ------------------------------------------------------------------- main ---

async function main(argv) {
  if (argv.length !== 3)
    fail('usage: node run_ort.mjs MODEL.onnx IN.npz OUT.npz');
  const [modelPath, inPath, outPath] = argv;

  let ort, AdmZip;
  try {
    ort = require('onnxruntime-node');
    AdmZip = require('adm-zip');
  } catch (e) {
    fail(`cannot load onnxruntime-node (run 'npm install --ignore-scripts' in ` +
         `${path.dirname(new URL(import.meta.url).pathname)}): ` +
         String(e.message).split('\n')[0]);
  }

  let inBytes;
  try { inBytes = fs.readFileSync(inPath); }
  catch (e) { fail(`${inPath}: cannot open: ${e.message}`); }
  const arrays = new Map();
  for (const { name, data } of readZip(AdmZip, inBytes, inPath)) {
    const key = name.endsWith('.npy') ? name.slice(0, -4) : name;
    arrays.set(key, parseNpy(data, `${inPath}: ${name}`));
  }

  let session;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled',
    });
  } catch (e) {
    fail(`${modelPath}: ${String(e.message).split('\n')[0]}`);
  }

  const feeds = {};
  for (const name of session.inputNames) {
    const a = arrays.get(name);
    if (!a) fail(`${inPath}: no array for input '${name}'`);
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  }
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    fail(`${modelPath}: ${String(e.message).split('\n')[0]}`);
  }

  const members = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const values = t.data instanceof Float32Array ? t.data
      : Float32Array.from(t.data, (v) => Number(v));
    members.push({ name: `${name}.npy`, data: makeNpy(values, t.dims) });
  }
  try { fs.writeFileSync(outPath, makeZip(AdmZip, members)); }
  catch (e) { fail(`${outPath}: cannot write: ${e.message}`); }
  await session.release?.();
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`error: ${e instanceof UserError ? e.message
                                                           : e.stack || e}\n`);
    process.exit(1);
  });
