#!/usr/bin/env python3
"""llm --serve against OpenAI's API as clients speak it, over real sockets: the structure of replies and stream
chunks, stream == non-stream for one seed, usage against the tokens, the cache kept between turns, every bad
request answered with a 4xx and OpenAI's error object, waiting requests, a client that leaves mid-stream, random
bytes; the chat page in headless Chromium and OpenAI's own JavaScript client (npm's openai) where they can be had;
llm --chat. The model: tools/gguf_models.py's ChatML test model (random weights).

  test_server.py LLM TOOLS_DIR WORK_DIR      (exits 77, skipped, where llm was built without the HTTP server)
"""
import html
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

LLM, TOOLS, WORK = sys.argv[1:4]
MODEL = os.path.join(WORK, "chat.gguf")
NAME = "chat.gguf"
failures = []


T0 = time.time()


def lap(what):  # where the time goes (printed; ctest shows it on failure)
  print(f"{time.time() - T0:7.1f} s  {what}", flush=True)


def check(cond, what):
  if not cond:
    failures.append(what)
    print("FAIL:", what)


def start(*extra):
  p = subprocess.Popen([LLM, "--model", MODEL, "--serve", "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
  line = p.stdout.readline()
  if "no HTTP server" in line or "libcpp-httplib" in line:
    print("skipped:", line.strip())
    sys.exit(77)
  assert "http://127.0.0.1:" in line, line
  return p, int(line.split("http://127.0.0.1:")[1].split()[0])


def request(port, method, path, body=None, raw=None, timeout=60):
  c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
  data = raw if raw is not None else (json.dumps(body) if body is not None else None)
  c.request(method, path, body=data, headers={"Content-Type": "application/json"})
  r = c.getresponse()
  text = r.read().decode()
  c.close()
  return r.status, r.getheader("Content-Type") or "", text


def events(text):
  """the JSON of each server-sent event, and whether the stream ended with [DONE]"""
  out, done = [], False
  for block in text.split("\n\n"):
    if not block.strip(): continue
    assert block.startswith("data: "), block
    if block == "data: [DONE]": done = True
    else: out.append(json.loads(block[6:]))
  return out, done


def chat(port, messages, **kw):
  return request(port, "POST", "/v1/chat/completions", dict(model=NAME, messages=messages, **kw))


if not os.path.exists(MODEL):
  os.makedirs(WORK, exist_ok=True)
  rc = subprocess.call(["/usr/bin/python3", os.path.join(TOOLS, "gguf_models.py"), "chat", MODEL,
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "text", "tiny_llama3", "tokenizer.json")])
  if rc == 77: sys.exit(77)  # no PyTorch to write the model
  assert rc == 0, f"gguf_models.py chat failed ({rc})"
server, port = start("--max-context", "64")
try:
  # the model list and the page
  s, ct, t = request(port, "GET", "/v1/models")
  j = json.loads(t)
  check(s == 200 and ct.startswith("application/json") and j["object"] == "list" and j["data"][0]["id"] == NAME, "GET /v1/models")
  s, ct, t = request(port, "GET", "/")
  check(s == 200 and "text/html" in ct and "/v1/chat/completions" in t, "GET / serves the chat page")

  lap('a whole reply: its structure and usage')
  # a whole reply: its structure and usage
  hello = [{"role": "user", "content": "hello there"}]
  s, ct, t = chat(port, hello, max_tokens=6, temperature=0)
  r = json.loads(t)
  check(s == 200 and r["object"] == "chat.completion" and r["model"] == NAME and r["id"].startswith("chatcmpl-"), "chat reply head")
  ch = r["choices"][0]
  check(ch["index"] == 0 and ch["message"]["role"] == "assistant" and isinstance(ch["message"]["content"], str), "chat choice")
  u = r["usage"]
  check(ch["finish_reason"] == "length" and u["completion_tokens"] == 6, "max_tokens ends the reply with 'length'")
  check(u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"], "usage adds up")
  # the chat's prompt is ChatML's text (written here from the format): the same tokens as that text given as a prompt
  chatml = "<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n"
  s, _, t = request(port, "POST", "/v1/completions", dict(model=NAME, prompt=chatml, max_tokens=6, temperature=0))
  c = json.loads(t)
  check(s == 200 and c["object"] == "text_completion" and c["usage"]["prompt_tokens"] == u["prompt_tokens"], "chat prompt is ChatML's text")
  check(c["choices"][0]["text"] == ch["message"]["content"], "greedy text equals through both endpoints")

  lap("streamed: chunks in OpenAI's format")
  # streamed: chunks in OpenAI's format, [DONE] last, the same text as unstreamed for the same seed
  for temperature, seed in ((0, 0), (1.0, 1234), (0.8, 7)):
    s, _, whole = chat(port, hello, max_tokens=8, temperature=temperature, seed=seed)
    s2, ct, t = chat(port, hello, max_tokens=8, temperature=temperature, seed=seed, stream=True, stream_options={"include_usage": True})
    ev, done = events(t)
    check(s2 == 200 and ct.startswith("text/event-stream") and done, "stream ends with data: [DONE]")
    check(all(e["object"] == "chat.completion.chunk" and e["id"] == ev[0]["id"] for e in ev), "one id, chunk objects")
    check(ev[0]["choices"][0]["delta"].get("role") == "assistant", "the first chunk names the role")
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in ev if e["choices"])
    finish = [e["choices"][0]["finish_reason"] for e in ev if e["choices"] and e["choices"][0]["finish_reason"]]
    check(text == json.loads(whole)["choices"][0]["message"]["content"], f"stream == non-stream at temperature {temperature}")
    check(finish == ["length"] and ev[-1]["choices"] == [] and ev[-1]["usage"]["completion_tokens"] == 8, "finish and usage chunks")
  s, _, t = request(port, "POST", "/v1/completions", dict(model=NAME, prompt="once upon", max_tokens=5, stream=True, seed=3))
  ev, done = events(t)
  check(done and all(e["object"] == "text_completion" for e in ev) and ev[-1]["choices"][0]["finish_reason"] == "length", "streamed completions")

  lap('the chat page in a real browser')
  # the chat page in a real browser (headless Chromium, where installed): /#say=... sends a message, and the reply
  # streamed into the page is the API's reply to that message (the page sends no temperature or seed: the defaults)
  chromium = shutil.which("chromium") or shutil.which("chromium-browser")
  if chromium:
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={WORK}/chromium",
                        "--virtual-time-budget=60000", "--dump-dom", f"http://127.0.0.1:{port}/#say=hello%20there"],
                       capture_output=True, text=True, timeout=300)
    shown = re.findall(r'<div class="(user|assistant|error)">(.*?)</div>', p.stdout, re.S)
    s, _, t = chat(port, hello)
    want = json.loads(t)["choices"][0]["message"]["content"]
    check([k for k, _ in shown] == ["user", "assistant"] and html.unescape(shown[0][1]) == "hello there", f"the page shows the chat: {shown}")
    check(len(shown) == 2 and html.unescape(shown[1][1]) == want, f"the page's streamed reply is the API's: {shown} vs {want!r}")
  else:
    print("chat page in Chromium: skipped (Debian: apt-get install chromium)")

  lap('the OpenAI client')
  # OpenAI's own JavaScript client (npm's openai), where npm can install it: the same replies, its errors typed
  modules = os.path.join(WORK, "npm", "node_modules")
  if not os.path.isdir(os.path.join(modules, "openai")) and shutil.which("npm") and shutil.which("node"):
    if subprocess.call(["timeout", "60", "npm", "view", "--fetch-retries=0", "openai", "version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
      subprocess.call(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", os.path.join(WORK, "npm"), "openai"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
  if os.path.isdir(os.path.join(modules, "openai")):
    p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "openai_client.mjs"), modules, str(port), NAME],
                       capture_output=True, text=True, timeout=300)
    try:
      o = json.loads(p.stdout)
      check(o["models"] == [NAME], "openai client: models.list")
      check(o["whole"]["text"] == o["streamed"]["text"] and o["whole"]["finish"] == o["streamed"]["finish"] == "length",
            "openai client: stream == non-stream")
      check(o["streamed"]["usage"]["completion_tokens"] == 8 and o["whole"]["usage"]["total_tokens"] == o["whole"]["usage"]["prompt_tokens"] + 8,
            "openai client: usage")
      check(o["completion"]["finish"] == "length", "openai client: completions")
      check(o["unknown_model"]["status"] == 404 and o["unknown_model"]["code"] == "model_not_found", "openai client: unknown model")
      check(o["bad_temperature"] == {"status": 400, "param": "temperature"}, "openai client: a bad value")
    except (json.JSONDecodeError, KeyError, TypeError) as e:
      check(False, f"openai client: {e!r} {p.stdout!r} {p.stderr[-2000:]!r}")
  else:
    print("OpenAI's JavaScript client: skipped (npm could not install openai)")

  lap('the next turn of a conversation')
  # the next turn of a conversation reads only what is new: the cache holds the first turn
  s, _, t = chat(port, hello, max_tokens=4, temperature=0)
  first = json.loads(t)
  turn2 = hello + [{"role": "assistant", "content": first["choices"][0]["message"]["content"]}, {"role": "user", "content": "and?"}]
  s, _, t = chat(port, turn2, max_tokens=4, temperature=0)
  u2 = json.loads(t)["usage"]
  check(s == 200 and u2["prompt_tokens_details"]["cached_tokens"] >= first["usage"]["prompt_tokens"], f"second turn reuses the cache {u2}")
  # and the same answer as a server that never saw the first turn (the cache changes nothing but time)
  fresh, fport = start("--max-context", "64")
  try:
    s, _, t = chat(fport, turn2, max_tokens=4, temperature=0)
    check(json.loads(t)["choices"][0]["message"]["content"] == json.loads(request(port, "POST", "/v1/chat/completions",
          dict(model=NAME, messages=turn2, max_tokens=4, temperature=0))[2])["choices"][0]["message"]["content"], "cache reuse gives the same text")
  finally:
    fresh.kill()

  lap('stop texts:')
  # stop texts: the reply ends where one begins
  s, _, t = chat(port, hello, max_tokens=8, temperature=0)
  full = json.loads(t)["choices"][0]["message"]["content"]
  if len(full) > 3:
    stop = full[2:4]
    s, _, t = chat(port, hello, max_tokens=8, temperature=0, stop=[stop])
    r = json.loads(t)
    check(r["choices"][0]["message"]["content"] == full[:full.find(stop)] and r["choices"][0]["finish_reason"] == "stop", "stop text")

  lap('bad requests:')
  # bad requests: a 4xx with OpenAI's error object, and the server goes on
  bad = [
      ("malformed JSON", "/v1/chat/completions", '{"model": "chat.gguf", "messages": [', 400, None),
      ("not an object", "/v1/chat/completions", "[1, 2]", 400, None),
      ("invalid UTF-8", "/v1/chat/completions", b'{"model": "chat.gguf", "messages": [{"role": "user", "content": "\xff"}]}', 400, None),
      ("no model", "/v1/chat/completions", {"messages": hello}, 400, "model"),
      ("unknown model", "/v1/chat/completions", {"model": "gpt-4", "messages": hello}, 404, "model"),
      ("no messages", "/v1/chat/completions", {"model": NAME}, 400, "messages"),
      ("empty messages", "/v1/chat/completions", {"model": NAME, "messages": []}, 400, "messages"),
      ("bad role", "/v1/chat/completions", {"model": NAME, "messages": [{"role": "robot", "content": "x"}]}, 400, "messages[0].role"),
      ("content a number", "/v1/chat/completions", {"model": NAME, "messages": [{"role": "user", "content": 5}]}, 400, "messages[0].content"),
      ("image part", "/v1/chat/completions", {"model": NAME, "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400, "messages[0].content"),
      ("temperature a string", "/v1/chat/completions", {"model": NAME, "messages": hello, "temperature": "hot"}, 400, "temperature"),
      ("temperature too high", "/v1/chat/completions", {"model": NAME, "messages": hello, "temperature": 5}, 400, "temperature"),
      ("top_p above 1", "/v1/chat/completions", {"model": NAME, "messages": hello, "top_p": 1.5}, 400, "top_p"),
      ("max_tokens 0", "/v1/chat/completions", {"model": NAME, "messages": hello, "max_tokens": 0}, 400, "max_tokens"),
      ("max_tokens a float", "/v1/chat/completions", {"model": NAME, "messages": hello, "max_tokens": 2.5}, 400, "max_tokens"),
      ("n = 2", "/v1/chat/completions", {"model": NAME, "messages": hello, "n": 2}, 400, "n"),
      ("five stops", "/v1/chat/completions", {"model": NAME, "messages": hello, "stop": ["a", "b", "c", "d", "e"]}, 400, "stop"),
      ("stream a string", "/v1/chat/completions", {"model": NAME, "messages": hello, "stream": "yes"}, 400, "stream"),
      ("prompt too long", "/v1/chat/completions", {"model": NAME, "messages": [{"role": "user", "content": "word " * 80}]}, 400, "messages"),
      ("completion without prompt", "/v1/completions", {"model": NAME}, 400, "prompt"),
      ("body over the limit", "/v1/chat/completions", "x" * (5 << 20), 413, None),
      ("unknown path", "/v1/embeddings", {"model": NAME}, 404, None),
  ]
  for what, path, body, status, param in bad:
    raw = body if isinstance(body, (str, bytes)) else json.dumps(body)
    try:
      s, ct, t = request(port, "POST", path, raw=raw)
      e = json.loads(t)["error"]
      check(s == status and ct.startswith("application/json") and isinstance(e["message"], str) and e["message"] and "type" in e,
            f"{what}: {s} {t[:200]}")
      if param: check(e["param"] == param, f"{what}: param {e['param']} != {param}")
    except (ConnectionError, json.JSONDecodeError, KeyError) as ex:
      check(False, f"{what}: {ex!r}")
    s, _, t = chat(port, hello, max_tokens=2, temperature=0)
    check(s == 200, f"the server answers after '{what}'")

  lap('requests wait their turn')
  # requests wait their turn: four at once, each answered in full
  results = []
  def worker(i):
    results.append(chat(port, hello, max_tokens=5, temperature=0.7, seed=i, stream=bool(i % 2)))
  threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
  [t.start() for t in threads]
  [t.join(120) for t in threads]
  check(len(results) == 4 and all(r[0] == 200 for r in results), "four requests at once")
  check(all(events(r[2])[1] for r in results if r[1].startswith("text/event-stream")), "concurrent streams complete")

  lap('a client that leaves mid-stream')
  # a client that leaves mid-stream: the server stops that generation and goes on
  sock = socket.create_connection(("127.0.0.1", port), timeout=30)
  body = json.dumps(dict(model=NAME, messages=hello, max_tokens=50, stream=True)).encode()
  sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
               str(len(body)).encode() + b"\r\n\r\n" + body)
  sock.recv(200)
  sock.close()
  t0 = time.time()
  s, _, t = chat(port, hello, max_tokens=2, temperature=0)
  check(s == 200, "the server answers after a client left mid-stream")
  lap('cut and slow connections')
  # cut and slow connections, headers and bodies of random bytes: never a crash or a hang
  rng = random.Random(0)
  for i in range(60):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    kind = i % 4
    if kind == 0: data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    elif kind == 1: data = b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{\"model\""  # cut short
    elif kind == 2: data = b"POST /v1/completions HTTP/1.1\r\n" + bytes(rng.randrange(32, 127) for _ in range(200)) + b"\r\n\r\n"
    else:
      j = json.dumps(dict(model=NAME, prompt="hi", max_tokens=2)).encode()
      cut = rng.randrange(len(j))
      data = b"POST /v1/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " + str(cut).encode() + b"\r\n\r\n" + j[:cut]
    try:
      sock.sendall(data)
      if i < 2:  # slow: the rest never comes, and the server's read timeout ends it
        sock.recv(4096)
      elif kind in (0, 2):  # whole, if wrong: the server reads to the end and answers
        sock.shutdown(socket.SHUT_WR)
        sock.recv(4096)
    except OSError:
      pass
    sock.close()  # else cut: the client leaves mid-request
  check(server.poll() is None, "the server survives random bytes")
  s, _, t = chat(port, hello, max_tokens=2, temperature=0)
  check(s == 200, "and still answers")
finally:
  server.kill()
  out = server.stdout.read()

lap('the terminal chat')
# the terminal chat: two turns, the cache kept between them
p = subprocess.run([LLM, "--model", MODEL, "--chat", "--max-new", "4", "--temperature", "0"], input="hello there\nand?\n",
                   capture_output=True, text=True, timeout=300)
check(p.returncode == 0 and p.stdout.count("> ") == 3, f"llm --chat: {p.returncode} {p.stdout!r} {p.stderr!r}")

if failures:
  print(f"{len(failures)} checks failed")
  sys.exit(1)
print("all server checks passed")
