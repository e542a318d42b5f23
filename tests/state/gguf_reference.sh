#!/bin/sh
# ctest gguf.reference_goldens: tools/gguf_reference.py still writes exactly the committed goldens under
# tests/golden/gguf (which tg_gguf_tests compares our dequantization with), and its quantizers (used by the GGUF
# writer of the tests) round-trip within their error bounds. Exits 77 (skipped) where numpy is missing.
# Usage: gguf_reference.sh TOOLS_DIR GOLDEN_DIR
tools=$1 golden=$2
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c "import numpy" 2>/dev/null || { echo "skipped: numpy is missing (apt-get install python3-numpy)"; exit 77; }
exec "$py" "$tools/gguf_reference.py" check "$golden"
