#!/usr/bin/env bash
# The offline demo: validate, freeze with a demo key, verify and launch the
# metrics-digest Flight Plan (local SDK drivers: a metrics store in a bundled
# SQLite database and an issue tracker writing to a local SQLite store).
#
# Everything it writes goes under $DEMO_HOME (default: a new temp folder):
# the flightdeck home (store, keyring, journal, audit), the demo key, the
# tracker's store and the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."

FD=${FLIGHTDECK:-.venv/bin/flightdeck}
PLAN=examples/flightplans/metrics-digest
DEMO=${DEMO_HOME:-$(mktemp -d -t flightdeck-demo.XXXXXX)}
mkdir -p "$DEMO"
DEMO=$(cd "$DEMO" && pwd)
export FLIGHTDECK_HOME="$DEMO/home"
export LOCAL_TRACKER_DB="$DEMO/tracker.sqlite3"
# The tracker's API token, bound by the plan's credential (api-key, digest-bot).
export FLIGHTDECK_SECRET_TRACKER="demo-tracker-token"
PUBLISHER=github://flightdeck/examples

step() { printf '\n== %s\n' "$*"; }

step "validate $PLAN"
"$FD" validate "$PLAN"

step "demo signing key -> $DEMO/keys"
"$FD" keys generate --out "$DEMO/keys" --name demo
"$FD" keyring trust "$PUBLISHER" --key "$DEMO/keys/demo.pub"

step "freeze metrics-digest@1.0.0"
"$FD" freeze "$PLAN/SKILL.md" --workspace "$PLAN" --signing-key "$DEMO/keys/demo.key" \
  --publisher "$PUBLISHER" --version 1.0.0

step "verify metrics-digest@1.0.0"
"$FD" verify metrics-digest@1.0.0

step "launch metrics-digest@1.0.0"
"$FD" launch metrics-digest@1.0.0 --workspace "$PLAN" --approve file_issue \
  --verify-credentials --out-dir "$DEMO/out"

step "outputs"
for file in "$DEMO"/out/*; do
  printf -- '--- %s\n' "$file"
  cat "$file"
  echo
done
echo
echo "demo home: $DEMO  (FLIGHTDECK_HOME=$FLIGHTDECK_HOME $FD runs list)"
