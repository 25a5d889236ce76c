#!/usr/bin/env sh
# Print the path of a Python >= 3.12, preferring the version pinned in .python-version.
want=$(cat "$(dirname "$0")/../.python-version" 2>/dev/null || echo 3.13)
for candidate in "$(pyenv which "python$want" 2>/dev/null)" "$HOME/.pyenv/versions/$want/bin/python" \
    "$(command -v "python$want")" "$(command -v python3.13)" "$(command -v python3.12)" "$(command -v python3)"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    echo "$candidate"
    exit 0
  fi
done
echo "error: Python >= 3.12 is required (3.13 preferred, see .python-version); none was found on PATH" >&2
exit 1
