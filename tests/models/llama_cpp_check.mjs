// llama.cpp (npm's node-llama-cpp) on the GGUF files of ctest llm.gguf.*, fed the prompt and then the reference's
// greedy tokens (which ours equal exactly: ctest llm.gguf.*). At every step its logits are compared with two
// PyTorch references on the weights the file holds (tools/gguf_models.py): llama_cpp_logits.npy, where activations
// are rounded as llama.cpp's CPU backend rounds them for each weight's type (8-bit blocks for quantized weights,
// float16 for float16 ones), which it must match closely; and greedy_logits.npy, exact arithmetic (ours), from which
// that rounding moves it. Errors are fractions of the logits' range: a wrong architecture or a weight read
// differently moves them by much of it at every step. Where 8-bit roundings are involved, float differences of one
// part in a million in what is rounded flip a few of them, which moves these small random models' logits by up to
// about 2% at some steps (the same happens to the reference when its activations are perturbed by 1e-6), so a
// quantized file has a tolerance of its own. llama.cpp's choice must be ours at every step whose two best logits are
// further apart than twice its error, and its own greedy continuation is reported against ours.
// Usage: node llama_cpp_check.mjs FLOAT_TOLERANCE QUANTIZED_TOLERANCE DIR...
//        (each DIR: model.gguf, types.json, reference.json and the two .npy files)
import fs from "node:fs";
import path from "node:path";
import {getLlama} from "node-llama-cpp";

// a float32 .npy file: its shape and values
function readNpy(file) {
  const b = fs.readFileSync(file);
  const headerLength = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + headerLength).toString("latin1");
  if (!header.includes("'<f4'")) throw new Error(`${file}: not little-endian float32: ${header}`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter(s => s.trim()).map(Number);
  const data = b.subarray(10 + headerLength);
  return {shape, values: new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))};
}

// how far llama.cpp's logits (known up to a constant, as log-probabilities) are from the reference's, as a fraction
// of the reference's range: over the tokens whose probability float32 holds in both
function logitError(probabilities, want) {
  const d = [];
  for (let t = 0; t < want.length; t++) {
    const p = probabilities.get(t) ?? 0;
    if (p > 1e-30) d.push([t, Math.log(p) - want[t]]);
  }
  const shift = d.reduce((a, [, x]) => a + x, 0) / d.length;
  const range = Math.max(...want) - Math.min(...want);
  return Math.max(...d.map(([, x]) => Math.abs(x - shift))) / range;
}

const [floatTolerance, quantizedTolerance, ...dirs] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const pkg = JSON.parse(fs.readFileSync(new URL("./node_modules/node-llama-cpp/package.json", import.meta.url)));
console.log(`node-llama-cpp ${pkg.version}, ${llama.buildType} build of ${llama.llamaCppRelease.repo} ${llama.llamaCppRelease.release}`);
// float32 key/value caches, as ours: llama.cpp's default float16 cache would add its own rounding
const contextOptions = {contextSize: 256, batchSize: 256, threads: 2, flashAttention: false,
                        experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"};
let failed = false;
for (const dir of dirs) {
  const ref = JSON.parse(fs.readFileSync(path.join(dir, "reference.json")));
  const quantized = Object.values(JSON.parse(fs.readFileSync(path.join(dir, "types.json")))).some(t => t.startsWith("Q"));
  const tolerance = Number(quantized ? quantizedTolerance : floatTolerance);
  const logits = readNpy(path.join(dir, "greedy_logits.npy")), rounded = readNpy(path.join(dir, "llama_cpp_logits.npy"));
  const [steps, vocab] = logits.shape;
  const model = await llama.loadModel({modelPath: path.join(dir, "model.gguf")});
  // teacher-forced: the reference's token goes in at each step, whatever llama.cpp would pick
  let context = await model.createContext(contextOptions);
  let worst = 0, exact = 0, clearSteps = 0;
  const differs = [];
  const gen = context.getSequence().evaluateWithMetadata(ref.prompt, {probabilities: true}, {temperature: 0});
  let r = await gen.next();
  for (let i = 0; i < steps; i++) {
    const want = Array.from(logits.values.subarray(i * vocab, (i + 1) * vocab));
    const err = logitError(r.value.probabilities, want);
    worst = Math.max(worst, logitError(r.value.probabilities, Array.from(rounded.values.subarray(i * vocab, (i + 1) * vocab))));
    exact = Math.max(exact, err);
    const [best, second] = [...want].sort((a, b) => b - a);
    if ((best - second) / (Math.max(...want) - Math.min(...want)) > 2 * err) {
      clearSteps++;
      if (r.value.token !== ref.greedy[i]) differs.push(i);
    }
    if (i + 1 < steps) r = await gen.next(ref.greedy[i]);
  }
  await gen.return();
  await context.dispose();
  // free-running: llama.cpp's own greedy tokens, and how many of the first lead the same way as ours
  context = await model.createContext(contextOptions);
  const own = [];
  for await (const t of context.getSequence().evaluate(ref.prompt, {temperature: 0})) {
    own.push(t);
    if (own.length >= steps) break;
  }
  let same = 0;
  while (same < steps && own[same] === ref.greedy[same]) same++;
  await context.dispose();
  await model.dispose();
  const ok = worst <= tolerance && differs.length === 0;
  failed ||= !ok;
  console.log(`${path.basename(dir)}: logits within ${(100 * worst).toFixed(3)}% of their range of llama.cpp's rounding ` +
              `(tolerance ${100 * tolerance}%), ${(100 * exact).toFixed(2)}% of exact arithmetic's; ` +
              (differs.length ? `a different token at clear steps ${differs}` : `the same token at all ${clearSteps} clear steps`) +
              `; its own greedy continuation equals ours for ${same} of ${steps} tokens${ok ? "" : "  FAILED"}`);
}
process.exit(failed ? 1 : 0);
