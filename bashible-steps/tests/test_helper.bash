# Common setup of the bashible step tests: an unprivileged temp dir for the disable file, fakes on PATH only when a
# test installs them, fast polling.
bats_require_minimum_version 1.5.0

STEPS_DIR="$(cd -- "$BATS_TEST_DIRNAME/.." && pwd)"
DISARM="$STEPS_DIR/002_fencing_disarm_before_disruption.sh.tpl"
REARM="$STEPS_DIR/999_fencing_rearm_after_disruption.sh.tpl"
FORMAT='^reason=[^ ]+ by=[^ ]+ at=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

setup() {
  FAKE_DIR="$BATS_TEST_TMPDIR/fakes"
  FAKE_BIN="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$FAKE_DIR" "$FAKE_BIN"
  export FAKE_DIR
  export PATH="$FAKE_BIN:$PATH"
  export FENCING_DISABLE_FILE="$BATS_TEST_TMPDIR/run/fencing-agent/disable"
  export FENCING_AGENT_CLI="fencing-agent"
  export FENCING_DISARM_POLL_INTERVAL=0.05
  export FENCING_DISARM_TIMEOUT=10
  export FENCING_HEALTH_TIMEOUT=10
  export FENCING_HEALTH_POLL_INTERVAL=0.05
  export FENCING_HEALTH_URL="http://127.0.0.1:10248/healthz"
  unset FENCING_AGENT_METRICS_URL FENCING_AGENT_SOCKET FENCING_DISABLE_REASON FENCING_DISABLE_BY
}

# fake NAME LINE... : put the fake NAME on PATH, answering LINE by LINE (the last one repeats).
fake() {
  local name="$1"
  shift
  printf '%s\n' "$@" >"$FAKE_DIR/$name.seq"
  : >"$FAKE_DIR/$name.calls"
  ln -sf "$BATS_TEST_DIRNAME/fakes/$name" "$FAKE_BIN/$name"
}

# calls NAME: how many times the fake NAME ran.
calls() {
  if [[ -f "$FAKE_DIR/$1.calls" ]]; then
    wc -l <"$FAKE_DIR/$1.calls" | tr -d ' '
  else
    echo 0
  fi
}

# The commands the steps and the fakes use; path_without offers exactly these, minus the ones named.
STEP_COMMANDS=(bash env cat dirname mkdir mktemp date chmod mv head rm tr sleep awk sed wc grep readlink stat jq curl)

# A PATH with the commands of STEP_COMMANDS except the ones named: the test runs "without" them.
path_without() {
  local dir="$BATS_TEST_TMPDIR/path-without" cmd excluded
  mkdir -p "$dir"
  for cmd in "${STEP_COMMANDS[@]}"; do
    for excluded in "$@"; do
      [[ "$cmd" == "$excluded" ]] && continue 2
    done
    ln -s "$(command -v "$cmd")" "$dir/$cmd"
  done
  echo "$FAKE_BIN:$dir"
}
