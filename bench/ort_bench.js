// ONNX Runtime's median latency on a model (bench/onnx_models.sh): node ort_bench.js MODEL.onnx SHAPE RUNS THREADS
// SHAPE is the input's, comma-separated; the input is random. Needs npm's onnxruntime-node (NODE_PATH to find it).
const ort = require("onnxruntime-node");
(async () => {
  const [model, shapeArg, runsArg, threadsArg] = process.argv.slice(2);
  const shape = shapeArg.split(",").map(Number), runs = Number(runsArg);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: Number(threadsArg), interOpNumThreads: 1});
  const data = Float32Array.from({length: shape.reduce((a, b) => a * b, 1)}, () => Math.random());
  const feeds = {[session.inputNames[0]]: new ort.Tensor("float32", data, shape)};
  const times = [];
  for (let r = 0; r < runs + 2; r++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    if (r >= 2) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(times[Math.floor(times.length / 2)].toFixed(3));
})().catch((e) => { console.error(e.message); process.exit(1); });
