#!/bin/sh
# Every program answers -h and --help with its usage on stdout and exit status 0, and an option it does not take
# with the problem and the usage on stderr, nothing on stdout, and exit status 2.
fail=0
for exe in "$@"; do
  name=$(basename "$exe")
  for flag in -h --help; do
    out=$("$exe" $flag 2>/dev/null); rc=$?
    case "$out" in *usage:*) ;; *) echo "$name $flag: no usage on stdout"; fail=1 ;; esac
    [ $rc -eq 0 ] || { echo "$name $flag: exit $rc, not 0"; fail=1; }
  done
  out=$("$exe" --no-such-option 2>err.txt); rc=$?
  [ $rc -eq 2 ] || { echo "$name --no-such-option: exit $rc, not 2"; fail=1; }
  [ -z "$out" ] || { echo "$name --no-such-option: wrote to stdout: $out"; fail=1; }
  grep -q "usage:" err.txt || { echo "$name --no-such-option: no usage on stderr"; fail=1; }
  [ $fail -eq 0 ] && echo "$name: ok"
done
exit $fail
