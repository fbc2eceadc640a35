# Common setup of the bashible step tests: an unprivileged temp dir for the disable and status files, fakes on PATH
# only when a test installs them, fast polling.
bats_require_minimum_version 1.5.0

STEPS_DIR="$(cd -- "$BATS_TEST_DIRNAME/.." && pwd)"
SOFTDOG="$STEPS_DIR/001_fencing_softdog.sh.tpl"
DISARM="$STEPS_DIR/002_fencing_disarm_before_disruption.sh.tpl"
REARM="$STEPS_DIR/999_fencing_rearm_after_disruption.sh.tpl"
MAINTENANCE="$STEPS_DIR/fencing-maintenance"
RENDER="$STEPS_DIR/render-manifests"
FORMAT='^reason=[^ ]+ by=[^ ]+ at=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

setup() {
  FAKE_DIR="$BATS_TEST_TMPDIR/fakes"
  FAKE_BIN="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$FAKE_DIR" "$FAKE_BIN"
  export FAKE_DIR
  export PATH="$FAKE_BIN:$PATH"
  export FENCING_DISABLE_FILE="$BATS_TEST_TMPDIR/run/fencing-agent/disable"
  export FENCING_AGENT_STATUS_FILE="$BATS_TEST_TMPDIR/run/fencing-agent/status"
  export FENCING_DISARM_POLL_INTERVAL=0.05
  export FENCING_DISARM_TIMEOUT=10
  export FENCING_HEALTH_TIMEOUT=10
  export FENCING_HEALTH_POLL_INTERVAL=0.05
  export FENCING_HEALTH_URL="http://127.0.0.1:10248/healthz"
  unset FENCING_AGENT_STALE_SECONDS FENCING_DISABLE_REASON FENCING_DISABLE_BY FENCING_HOST_ROOT \
    FENCING_SOFTDOG_MARGIN FENCING_PANIC_REBOOT_SECONDS FENCING_STEPS_DIR
  AGENT_PID=""
}

teardown() {
  stop_agent
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

# start_agent MODE [ARG]: a fake agent replacing the status file in the background (see fakes/agent-status); waits
# until it has written once.
start_agent() {
  rm -f "$FAKE_DIR/stop"
  "$BATS_TEST_DIRNAME/fakes/agent-status" "$@" 3>&- &
  AGENT_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -e "$FENCING_AGENT_STATUS_FILE" ]] && return 0
    sleep 0.05
  done
  echo "the fake agent wrote no status file" >&2
  return 1
}

stop_agent() {
  if [[ -n "$AGENT_PID" ]]; then
    touch "$FAKE_DIR/stop"
    wait "$AGENT_PID" || true
    AGENT_PID=""
  fi
}

# status_file LINE...: writes the status file with exactly these lines (atomically, like the agent).
status_file() {
  mkdir -p "$(dirname "$FENCING_AGENT_STATUS_FILE")"
  printf '%s\n' "$@" >"$FENCING_AGENT_STATUS_FILE.tmp"
  mv -f "$FENCING_AGENT_STATUS_FILE.tmp" "$FENCING_AGENT_STATUS_FILE"
}

# status ARMED DISABLE_FILE UPDATED_UNIX: a well-formed status file as the agent writes it.
status() {
  status_file "# fencing-agent status (informational; replaced atomically)" version=1 node=node-1 group=workers \
    pid=4242 "armed=$1" "reasons=$([[ $1 == true ]] && echo none || echo DISABLE_FILE)" "disable_file=$2" \
    quorum=held revision=7 "updated_unix=$3"
}

now() {
  date +%s
}

# The commands the steps and the fakes use; path_without offers exactly these, minus the ones named.
STEP_COMMANDS=(bash env cat dirname basename mkdir mktemp date chmod chown mv head rm tr sleep awk sed wc grep readlink stat
  curl cmp ln)

# A PATH with the commands of STEP_COMMANDS except the ones named: the test runs "without" them.
path_without() {
  local dir="$BATS_TEST_TMPDIR/path-without" cmd excluded
  mkdir -p "$dir"
  for cmd in "${STEP_COMMANDS[@]}"; do
    for excluded in "$@"; do
      [[ "$cmd" == "$excluded" ]] && continue 2
    done
    ln -sf "$(command -v "$cmd")" "$dir/$cmd"
  done
  echo "$FAKE_BIN:$dir"
}
