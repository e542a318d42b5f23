// The server through OpenAI's own JavaScript client (npm's openai): node openai_client.mjs NODE_MODULES PORT MODEL
// prints one JSON object of what the client saw, for test_server.py to check.
import { createRequire } from "module";
const [modules, port, model] = process.argv.slice(2);
const OpenAI = createRequire(modules + "/")("openai").default;
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "none", maxRetries: 0 });
const messages = [{ role: "user", content: "hello there" }];
const out = {};
out.models = (await client.models.list()).data.map(m => m.id);
const whole = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0.9, seed: 5 });
out.whole = { text: whole.choices[0].message.content, finish: whole.choices[0].finish_reason, usage: whole.usage };
const stream = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0.9, seed: 5, stream: true,
                                                       stream_options: { include_usage: true } });
let text = "", finish = null, usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  if (chunk.choices.length) { text += chunk.choices[0].delta.content ?? ""; finish = chunk.choices[0].finish_reason ?? finish; }
}
out.streamed = { text, finish, usage };
const c = await client.completions.create({ model, prompt: "once upon a time", max_tokens: 4, temperature: 0 });
out.completion = { text: c.choices[0].text, finish: c.choices[0].finish_reason };
try {
  await client.chat.completions.create({ model: "gpt-4o", messages });
  out.unknown_model = "no error";
} catch (e) {
  out.unknown_model = { status: e.status, code: e.code, message: e.message };
}
try {
  await client.chat.completions.create({ model, messages, temperature: 9 });
  out.bad_temperature = "no error";
} catch (e) {
  out.bad_temperature = { status: e.status, param: e.param };
}
console.log(JSON.stringify(out));
