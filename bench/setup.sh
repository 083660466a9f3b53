# Sourced by bench/run and bench/index: the pinned Python peers in bench/.venv, GNU time,
# and a function that builds neardup. Sets BENCH, ROOT, PYTHON and VENV.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"   # venv and GNU time, at once
#   neardup_binary                                     # sets NEARDUP (builds it unless given)

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"
VENV="$BENCH/.venv"

# The venv is rebuilt whenever requirements.txt changes, so its pins are what runs.
if ! cmp -s "$BENCH/requirements.txt" "$VENV/.requirements.txt" 2>/dev/null; then
  echo "[bench] creating $VENV with $("$PYTHON" --version 2>&1)" >&2
  "$PYTHON" -m venv --clear "$VENV"
  PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all:)
  if "${PIP[@]}" -r "$BENCH/requirements.txt" 2>"$VENV/install.log"; then
    cp "$BENCH/requirements.txt" "$VENV/.requirements.txt"
  else
    # One package without a wheel for this platform must not stop the others: each is
    # installed alone, and the benchmark reports a peer that is missing (the venv is
    # retried on the next run).
    echo "[bench] not every pinned package installs here; see $VENV/install.log" >&2
    grep -v '^\s*\(#\|$\)' "$BENCH/requirements.txt" | while read -r req; do
      "${PIP[@]}" "$req" 2>>"$VENV/install.log" || echo "[bench] could not install $req" >&2
    done
  fi
fi

# GNU time measures each tool's CPU time and peak RSS (Debian's package "time").
if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[bench] installing GNU time (apt-get install time)" >&2
    apt-get update -qq && apt-get install -y -qq time >/dev/null
  else
    echo "bench: /usr/bin/time (GNU time) is missing; install Debian's package 'time'" >&2
    exit 1
  fi
fi

# NEARDUP=/path/to/neardup, or neardup built in release mode from this checkout.
neardup_binary() {
  if [ -z "${NEARDUP:-}" ]; then
    echo "[bench] building neardup (cargo build --release -p neardup-cli)" >&2
    (cd "$ROOT" && cargo build --quiet --release -p neardup-cli)
    # cargo metadata knows where the binary went (CARGO_TARGET_DIR, config files, ...).
    local target_dir
    target_dir="$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps \
      | "$VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    NEARDUP="$target_dir/release/neardup"
  fi
  [ -x "$NEARDUP" ] || { echo "bench: no neardup binary at $NEARDUP" >&2; exit 1; }
}
