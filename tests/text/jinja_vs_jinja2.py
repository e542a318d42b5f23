#!/usr/bin/env python3
"""Our chat-template interpreter (src/text/jinja.cpp) against jinja2 set up as Hugging Face's apply_chat_template sets
it up (a sandbox with trim_blocks, lstrip_blocks and loop controls; raise_exception, strftime_now, and tojson as
json.dumps with ensure_ascii=False), on each case of tests/text/jinja/cases.json. Exits 77 (skipped) without jinja2.
  jinja_vs_jinja2.py JINJA_RENDER_BINARY"""
import datetime, json, os, subprocess, sys, tempfile
try:
  import jinja2, jinja2.ext, jinja2.sandbox
except ImportError:
  print("python3-jinja2 is not installed: skipped")
  sys.exit(77)

def reference(source, variables):
  def raise_exception(message): raise jinja2.exceptions.TemplateError(message)
  def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
  env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
  env.filters["tojson"] = tojson
  env.globals["raise_exception"] = raise_exception
  env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
  return env.from_string(source).render(**variables)

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jinja")
failures = 0
cases = json.load(open(os.path.join(here, "cases.json")))["cases"]
for i, case in enumerate(cases):
  path = os.path.join(here, case["template"])
  try:
    want = reference(open(path, encoding="utf-8").read(), case["vars"])
  except jinja2.exceptions.TemplateError as e:  # the template's raise_exception: ours must raise the same message
    want = "ERROR: " + str(e)
  with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(case["vars"], f)
  got = subprocess.run([sys.argv[1], path, f.name], capture_output=True).stdout.decode("utf-8")
  os.unlink(f.name)
  if got.startswith("ERROR: ") and want.startswith("ERROR: ") and want[7:] in got: got = want
  if got != want:
    failures += 1
    print(f"case {i} ({case['template']}): differs from jinja2\n--- ours\n{got}\n--- jinja2\n{want}")
  else:
    print(f"case {i} ({case['template']}): {len(want)} characters, as jinja2's")
sys.exit(1 if failures else 0)
