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
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);

class UserError extends Error {}
const fail = (message) => { throw new UserError(message); };

// ---------------------------------------------------------------- CRC-32 ---

const crcTable = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes) {
  if (typeof zlib.crc32 === 'function') return zlib.crc32(bytes) >>> 0;
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++)
    c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// ------------------------------------------------------------ zip reading ---

/// Returns [{name, data: Buffer}] for the members of a zip archive.
function readZip(buf, where) {
  // End of central directory: 22 bytes plus a comment of up to 65535 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) fail(`${where}: not a zip archive (.npz)`);
  let count = buf.readUInt16LE(eocd + 10);
  let cdOffset = buf.readUInt32LE(eocd + 16);
  // Zip64 end of central directory, through its locator just before.
  if ((count === 0xffff || cdOffset === 0xffffffff) && eocd >= 20 &&
      buf.readUInt32LE(eocd - 20) === 0x07064b50) {
    const z64 = Number(buf.readBigUInt64LE(eocd - 20 + 8));
    if (buf.readUInt32LE(z64) !== 0x06064b50)
      fail(`${where}: bad zip64 end of central directory`);
    count = Number(buf.readBigUInt64LE(z64 + 32));
    cdOffset = Number(buf.readBigUInt64LE(z64 + 48));
  }
  const members = [];
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50)
      fail(`${where}: corrupt zip central directory`);
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    let compSize = buf.readUInt32LE(p + 20);
    let size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    let localOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString(flags & 0x800 ? 'utf8' : 'latin1', p + 46,
                              p + 46 + nameLen);
    // Zip64 extended information: only the fields that overflowed, in order.
    let e = p + 46 + nameLen;
    const extraEnd = e + extraLen;
    while (e + 4 <= extraEnd) {
      const id = buf.readUInt16LE(e), len = buf.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        if (size === 0xffffffff) { size = Number(buf.readBigUInt64LE(q)); q += 8; }
        if (compSize === 0xffffffff) { compSize = Number(buf.readBigUInt64LE(q)); q += 8; }
        if (localOffset === 0xffffffff) { localOffset = Number(buf.readBigUInt64LE(q)); q += 8; }
      }
      e += 4 + len;
    }
    p = extraEnd + commentLen;

    if (buf.readUInt32LE(localOffset) !== 0x04034b50)
      fail(`${where}: ${name}: corrupt zip local header`);
    const start = localOffset + 30 + buf.readUInt16LE(localOffset + 26) +
                  buf.readUInt16LE(localOffset + 28);
    if (start + compSize > buf.length) fail(`${where}: ${name}: truncated`);
    const raw = buf.subarray(start, start + compSize);
    let data;
    if (method === 0) data = raw;
    else if (method === 8) data = zlib.inflateRawSync(raw);
    else fail(`${where}: ${name}: unsupported zip compression method ${method}`);
    if (data.length !== size)
      fail(`${where}: ${name}: size ${data.length}, expected ${size}`);
    if (crc32(data) !== crc) fail(`${where}: ${name}: CRC mismatch`);
    members.push({ name, data });
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

/// An uncompressed zip archive of [{name, data: Buffer}].
function makeZip(members) {
  const locals = [], centrals = [];
  let offset = 0;
  for (const { name, data } of members) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);          // version needed
    local.writeUInt16LE(0x800, 6);       // UTF-8 names
    local.writeUInt16LE(0, 8);           // stored
    local.writeUInt16LE(0, 10);          // time
    local.writeUInt16LE(0x21, 12);       // date 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);        // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// ------------------------------------------------------------------- main ---

async function main(argv) {
  if (argv.length !== 3)
    fail('usage: node run_ort.mjs MODEL.onnx IN.npz OUT.npz');
  const [modelPath, inPath, outPath] = argv;

  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`cannot load onnxruntime-node (run 'npm install --ignore-scripts' in ` +
         `${path.dirname(new URL(import.meta.url).pathname)}): ` +
         String(e.message).split('\n')[0]);
  }

  let inBytes;
  try { inBytes = fs.readFileSync(inPath); }
  catch (e) { fail(`${inPath}: cannot open: ${e.message}`); }
  const arrays = new Map();
  for (const { name, data } of readZip(inBytes, inPath)) {
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
  try { fs.writeFileSync(outPath, makeZip(members)); }
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
