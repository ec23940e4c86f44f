#!/usr/bin/env bash
# Records NAME.out for every regression program without an `# error:` header by running it on tinygrad.
# usage: tests/regress/make_expected.sh TINYGRAD_CHECKOUT [NAME.py ...]
set -euo pipefail
ref="$1"; shift
cd "$(dirname "$0")"
files=("$@"); [ ${#files[@]} -eq 0 ] && files=(*.py)
for f in "${files[@]}"; do
  grep -q '^# error:' "$f" && continue
  (cd "$ref" && PYTHONPATH=. DEBUG=0 python3 "$OLDPWD/$f") > "${f%.py}.out"
  echo "recorded ${f%.py}.out"
done
