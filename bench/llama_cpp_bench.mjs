// llama.cpp's prefill and decode speed on a GGUF file, through node-llama-cpp (npm; its prebuilt CPU libraries
// from @node-llama-cpp/linux-x64), for bench/gguf.sh:
//   NODE_LLAMA_CPP=/path/to/node_modules/node-llama-cpp node bench/llama_cpp_bench.mjs MODEL.gguf PROMPT NEW THREADS
// prints "prefill N tok/s, decode N tok/s" (greedy; the same token ids as llm --bench's prompt)
import path from "node:path";
import {pathToFileURL} from "node:url";

// ES modules ignore NODE_PATH: the package is imported from where bench/gguf.sh installed it
const pkg = process.env.NODE_LLAMA_CPP ?? "node-llama-cpp";
const {getLlama} = await import(pkg.startsWith("/") ? pathToFileURL(path.join(pkg, "dist/index.js")).href : pkg);

const [modelPath, promptLen, newTokens, threads] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const context = await model.createContext({contextSize: Number(promptLen) + Number(newTokens) + 8, threads: Number(threads),
                                           batchSize: Math.max(Number(promptLen), 8)});
const vocab = 32000;
const prompt = Array.from({length: Number(promptLen)}, (_, i) => (i * 7919) % vocab);
let best = null;
for (let round = 0; round < 2; round++) {  // a warm-up, then the measured run
  const sequence = context.getSequence();
  const t0 = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(prompt);
  const t1 = performance.now();
  let n = 0;
  for await (const token of sequence.evaluate([prompt[prompt.length - 1]], {temperature: 0})) {
    if (++n >= Number(newTokens)) break;
  }
  const t2 = performance.now();
  best = {prefill: Number(promptLen) / ((t1 - t0) / 1000), decode: n / ((t2 - t1) / 1000)};
  sequence.dispose();
}
console.log(`prefill ${best.prefill.toFixed(1)} tok/s, decode ${best.decode.toFixed(1)} tok/s`);
await context.dispose();
await model.dispose();
