#!/usr/bin/env bash
# Bashible step: disarm this node's fencing agent before disruptive work.
#
# Creates the disable file (default /var/run/fencing-agent/disable) atomically, then waits, bounded in time, until
# the local fencing agent reports that its watchdog is disarmed, so the work that follows (container runtime or
# kubelet restarts, kernel updates, reboots) cannot be mistaken for a lost quorum and reset the node. No agent on
# the node ⇒ nothing to disarm ⇒ the step succeeds at once. Idempotent: bashible may run it every minute.
#
# The file's content is informational only ("reason=... by=... at=<RFC3339>"); the agent disarms because the file
# exists. 999_fencing_rearm_after_disruption removes it once the node is healthy again, and only if "by=" names us.
#
# Environment (all optional; defaults are for a node):
#   FENCING_DISABLE_FILE          the disable file                         (/var/run/fencing-agent/disable)
#   FENCING_DISABLE_REASON        why, written into the file               (node-configuration-update)
#   FENCING_DISABLE_BY            who, written into the file               (bashible)
#   FENCING_AGENT_CLI             the agent's CLI                          (fencing-agent, looked up on PATH)
#   FENCING_AGENT_SOCKET          the agent's local API socket             (the CLI's default)
#   FENCING_AGENT_METRICS_URL     agent /metrics, used when the CLI is absent (unset: not used)
#   FENCING_DISARM_TIMEOUT        seconds to wait for "disarmed"           (60)
#   FENCING_DISARM_POLL_INTERVAL  seconds between two polls                (1)
#   FENCING_AGENT_NOTICE_SECONDS  the agent notices the file within this   (2)
set -Eeuo pipefail

disable_file="${FENCING_DISABLE_FILE:-/var/run/fencing-agent/disable}"
reason="${FENCING_DISABLE_REASON:-node-configuration-update}"
by="${FENCING_DISABLE_BY:-bashible}"
agent_cli="${FENCING_AGENT_CLI:-fencing-agent}"
agent_socket="${FENCING_AGENT_SOCKET:-}"
metrics_url="${FENCING_AGENT_METRICS_URL:-}"
timeout="${FENCING_DISARM_TIMEOUT:-60}"
poll_interval="${FENCING_DISARM_POLL_INTERVAL:-1}"
notice_seconds="${FENCING_AGENT_NOTICE_SECONDS:-2}"

log() {
  echo "fencing-disarm: $*" >&2
}

fail() {
  log "ERROR: $*"
  exit 1
}

for n in timeout notice_seconds; do
  [[ "${!n}" =~ ^[0-9]+$ ]] || fail "${n} must be a whole number of seconds, got '${!n}'"
done
[[ "$poll_interval" =~ ^[0-9]+([.][0-9]+)?$ ]] || fail "poll interval must be a number of seconds, got '$poll_interval'"
# One line, no '=' soup: the agent shows the first line as the disarm reason.
[[ "$reason$by" != *$'\n'* ]] || fail "FENCING_DISABLE_REASON and FENCING_DISABLE_BY must be single lines"
[[ "$by" =~ ^[^[:space:]]+$ ]] || fail "FENCING_DISABLE_BY must be one word (it marks files this step may remove), got '$by'"

tmp=""
cleanup() {
  if [[ -n "$tmp" ]]; then
    rm -f -- "$tmp"
  fi
}
trap cleanup EXIT

# Writes the file through a temporary file in the same directory and a rename, so a reader (the agent) sees either
# no file or the complete file, never a partial one.
create_disable_file() {
  local dir
  dir="$(dirname -- "$disable_file")"
  mkdir -p -- "$dir"
  tmp="$(mktemp -- "$dir/.disable.XXXXXX")"
  printf 'reason=%s by=%s at=%s\n' "$reason" "$by" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$tmp"
  chmod 0644 -- "$tmp"
  mv -f -- "$tmp" "$disable_file"
  tmp=""
}

if [[ -e "$disable_file" ]]; then
  # Already disarmed by an earlier run or by someone else: keep their reason and timestamp.
  log "disable file $disable_file already present ($(head -n 1 -- "$disable_file" 2>/dev/null || true))"
else
  create_disable_file
  log "created $disable_file: $(head -n 1 -- "$disable_file")"
fi
created_at=$SECONDS

# Prints the agent's status JSON; returns the CLI's exit code (3 = no agent at the socket).
agent_status_json() {
  local args=(status --json)
  if [[ -n "$agent_socket" ]]; then
    args+=(--socket "$agent_socket")
  fi
  "$agent_cli" "${args[@]}" 2>/dev/null
}

# 0 when the status JSON says the watchdog is not armed. Uses jq when present, a whitespace-insensitive match
# otherwise (the status has exactly one top-level "armed" field).
status_disarmed() {
  local json="$1"
  if command -v jq >/dev/null 2>&1; then
    [[ "$(jq -r '.armed' <<<"$json" 2>/dev/null)" == "false" ]]
  else
    [[ "$(tr -d ' \t\r\n' <<<"$json")" == *'"armed":false'* ]]
  fi
}

# 0 when the disarm reasons include the disable file, i.e. the agent has seen it.
status_names_disable_file() {
  local json="$1"
  [[ "$(tr -d ' \t\r\n' <<<"$json")" == *'"KIND_DISABLE_FILE"'* ]]
}

# The agent notices the file within notice_seconds; "not armed" seen before that may predate the file (an agent
# still in its arming delay could arm a moment later), so without the explicit reason it only counts afterwards.
noticed() {
  ((SECONDS - created_at >= notice_seconds))
}

# One poll. Prints a line describing the state; returns 0 disarmed, 1 not yet, 2 no agent running.
poll_cli() {
  local json rc=0
  json="$(agent_status_json)" || rc=$?
  case "$rc" in
    0)
      if status_disarmed "$json"; then
        if status_names_disable_file "$json" || noticed; then
          echo "agent reports disarmed"
          return 0
        fi
        echo "agent is not armed but has not reported the disable file yet"
        return 1
      fi
      echo "agent still reports armed"
      return 1
      ;;
    3)
      echo "no agent answers on its socket"
      return 2
      ;;
    *)
      echo "'$agent_cli status' failed with exit code $rc"
      return 1
      ;;
  esac
}

poll_metrics() {
  local body rc=0 value
  body="$(curl -fsS --max-time 2 -- "$metrics_url" 2>/dev/null)" || rc=$?
  if ((rc == 7)); then
    echo "nothing listens on $metrics_url"
    return 2
  fi
  if ((rc != 0)); then
    echo "cannot read $metrics_url (curl exit code $rc)"
    return 1
  fi
  value="$(awk '$1 == "fencing_armed" || index($1, "fencing_armed{") == 1 { v = $NF } END { print v }' <<<"$body")"
  case "$value" in
    "")
      echo "$metrics_url has no fencing_armed metric"
      return 1
      ;;
    0 | 0.0)
      if noticed; then
        echo "agent metrics report fencing_armed $value"
        return 0
      fi
      echo "agent metrics report fencing_armed $value, waiting until the agent has noticed the file"
      return 1
      ;;
    *)
      echo "agent metrics report fencing_armed $value"
      return 1
      ;;
  esac
}

if command -v "$agent_cli" >/dev/null 2>&1; then
  poll=poll_cli
  source_desc="'$agent_cli status'"
elif [[ -n "$metrics_url" ]]; then
  command -v curl >/dev/null 2>&1 || fail "FENCING_AGENT_METRICS_URL is set but curl is not installed"
  poll=poll_metrics
  source_desc="$metrics_url"
else
  log "no fencing agent CLI ($agent_cli) and no metrics URL on this node: no agent to wait for, proceeding"
  exit 0
fi

started=$SECONDS
while true; do
  rc=0
  state="$($poll)" || rc=$?
  case "$rc" in
    0)
      log "$state after $((SECONDS - started))s; disruptive work may proceed"
      exit 0
      ;;
    2)
      log "$state: no running agent to disarm, proceeding"
      exit 0
      ;;
  esac
  if ((SECONDS - started > timeout)); then
    fail "the fencing agent did not report disarmed within ${timeout}s (last: $state; asked $source_desc)." \
      "Refusing to start disruptive work with an armed watchdog; $disable_file stays in place and bashible will retry." \
      "Check the agent with '$agent_cli status'."
  fi
  sleep "$poll_interval"
done
