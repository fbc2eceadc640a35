#!/usr/bin/env bash
# Bashible step: disarm this node's fencing agent before disruptive work.
#
# Creates the disable file (default /var/run/fencing-agent/disable) atomically, then waits, bounded in time, until
# the agent's host-visible status file (default /var/run/fencing-agent/status) confirms the disarm, so the work that
# follows (container runtime or kubelet restarts, kernel updates, reboots) cannot be mistaken for a lost quorum and
# reset the node. Needs no JVM and no agent CLI on the host. Idempotent: bashible may run it every minute.
#
# Confirmed means one read of the status file says armed=false AND disable_file=present AND updated_unix >= the
# second this step created the disable file (or found it already in place: then the agent's periodic refresh, at
# least every 5 s, confirms). A status file that is absent, or whose updated_unix is older than
# FENCING_AGENT_STALE_SECONDS, means no agent runs on the node: the step proceeds (an agent that starts later sees
# the disable file before it could arm). A fresh status file that does not confirm within FENCING_DISARM_TIMEOUT
# fails the step (exit 1) and leaves the disable file in place: bashible retries and the disruptive steps never run
# with an armed watchdog. Malformed content never confirms anything.
#
# The disable file's content is informational only: one line per owner ("reason=... by=... at=<RFC3339>"); the agent
# disarms because the file exists. Several owners may hold it at once (bashible, an operator with
# fencing-maintenance, a unit): a step that finds the file without its own line adds one, so that another owner's
# re-arm cannot re-arm the node under its work. 999_fencing_rearm_after_disruption removes only the line whose "by="
# names it, and the file with its last line. A file without any "by=" (made by hand, e.g. touch) counts as an owner
# no step removes. Changes hold an flock on a lock file next to the disable file. The scripts contain no Go template
# actions: bashible renders them to themselves.
#
# Environment (all optional; defaults are for a node):
#   FENCING_DISABLE_FILE          the disable file                         (/var/run/fencing-agent/disable)
#   FENCING_DISABLE_REASON        why, written into the file               (node-configuration-update)
#   FENCING_DISABLE_BY            who, written into the file               (bashible)
#   FENCING_AGENT_STATUS_FILE     the agent's status file                  (/var/run/fencing-agent/status)
#   FENCING_AGENT_STALE_SECONDS   a status older than this: no agent runs  (30)
#   FENCING_DISARM_TIMEOUT        seconds to wait for the confirmation     (60)
#   FENCING_DISARM_POLL_INTERVAL  seconds between two reads                (1)
set -Eeuo pipefail

disable_file="${FENCING_DISABLE_FILE:-/var/run/fencing-agent/disable}"
reason="${FENCING_DISABLE_REASON:-node-configuration-update}"
by="${FENCING_DISABLE_BY:-bashible}"
status_file="${FENCING_AGENT_STATUS_FILE:-/var/run/fencing-agent/status}"
stale_seconds="${FENCING_AGENT_STALE_SECONDS:-30}"
timeout="${FENCING_DISARM_TIMEOUT:-60}"
poll_interval="${FENCING_DISARM_POLL_INTERVAL:-1}"

log() {
  echo "fencing-disarm: $*" >&2
}

fail() {
  log "ERROR: $*"
  exit 1
}

[[ "$timeout" =~ ^[0-9]{1,6}$ ]] || fail "FENCING_DISARM_TIMEOUT must be a whole number of seconds, got '$timeout'"
[[ "$stale_seconds" =~ ^[0-9]{1,6}$ ]] ||
  fail "FENCING_AGENT_STALE_SECONDS must be a whole number of seconds, got '$stale_seconds'"
[[ "$poll_interval" =~ ^[0-9]+([.][0-9]+)?$ ]] ||
  fail "FENCING_DISARM_POLL_INTERVAL must be a number of seconds, got '$poll_interval'"
# One line, no '=' soup: the agent shows the first line as the disarm reason.
[[ "$reason$by" != *$'\n'* ]] || fail "FENCING_DISABLE_REASON and FENCING_DISABLE_BY must be single lines"
[[ "$by" =~ ^[^[:space:]]+$ ]] || fail "FENCING_DISABLE_BY must be one word (it marks files this step may remove), got '$by'"

# Unix seconds without a fork (bash >= 4.2).
now() {
  printf '%(%s)T' -1
}

tmp=""
cleanup() {
  if [[ -n "$tmp" ]]; then
    rm -f -- "$tmp"
  fi
}
trap cleanup EXIT

dir="$(dirname -- "$disable_file")"
mkdir -p -- "$dir"
# Owners change the file one at a time (this step, 999 and fencing-maintenance take the same lock); without flock
# (util-linux) the change still happens, unserialised.
lock_fd=""
if command -v flock >/dev/null 2>&1; then
  exec {lock_fd}>"$dir/.disable.lock"
  flock -w 30 "$lock_fd" || fail "cannot lock $dir/.disable.lock within 30s (another owner holds it)"
else
  log "flock not found: changing $disable_file without the lock"
fi

# Writes $1 through a temporary file in the same directory and a rename, so a reader (the agent) sees either no file
# or a complete one, never a partial one. Sets since= to the second of the rename's start: a status the agent wrote
# at or after it can only describe this file.
write_disable_file() {
  tmp="$(mktemp -- "$dir/.disable.XXXXXX")"
  since="$(now)"
  printf '%s' "$1" >"$tmp"
  chmod 0644 -- "$tmp"
  mv -f -- "$tmp" "$disable_file"
  tmp=""
}

line_of_ours() {
  printf 'reason=%s by=%s at=%s\n' "$reason" "$by" "$(TZ=UTC printf '%(%Y-%m-%dT%H:%M:%SZ)T' "$(now)")"
}

if [[ -e "$disable_file" ]]; then
  existing="$(cat -- "$disable_file" 2>/dev/null || true)"
  ours=false
  owned=false
  while IFS= read -r line || [[ -n "$line" ]]; do
    [[ " $line " == *" by=$by "* ]] && ours=true
    [[ " $line" == *" by="* || "$line" == "by="* ]] && owned=true
  done <<<"$existing"
  if [[ "$ours" == true ]]; then
    # Already disarmed by an earlier run of ours: keep the file as it is.
    since="$(now)"
    log "disable file $disable_file already present with our line ($(head -n 1 -- "$disable_file" 2>/dev/null || true))"
  else
    # Someone else's: add our line, so their re-arm leaves the node disarmed for our work. A file that names no owner
    # (made by hand) keeps an owner line no step removes.
    content=""
    if [[ "$owned" == false ]]; then
      content="reason=disable-file-without-owner by=unknown at=$(TZ=UTC printf '%(%Y-%m-%dT%H:%M:%SZ)T' \
        "$(stat -c %Y -- "$disable_file" 2>/dev/null || now)")"$'\n'
    fi
    while IFS= read -r line || [[ -n "$line" ]]; do
      [[ -n "$line" ]] && content+="$line"$'\n'
    done <<<"$existing"
    write_disable_file "$content$(line_of_ours)"$'\n'
    log "disable file $disable_file already present; added our line (owners now: $(grep -o 'by=[^ ]*' -- \
      "$disable_file" | tr '\n' ' '))"
  fi
else
  write_disable_file "$(line_of_ours)"$'\n'
  log "created $disable_file: $(head -n 1 -- "$disable_file")"
fi
# The file is in place: other owners may change it while this step waits for the agent.
if [[ -n "$lock_fd" ]]; then
  exec {lock_fd}>&-
fi

# One poll: reads the status file ONCE (the agent replaces it by rename, so one open sees one complete version;
# several reads could mix two versions), then judges that snapshot. Prints one line describing the state; returns
# 0 confirmed, 1 not (yet) confirmed, 2 no agent runs (no file, or a stale one).
poll() {
  local content rc=0 line key value armed="" disable="" updated="" seen="" missing="" age
  content="$(cat -- "$status_file" 2>&1)" || rc=$?
  if ((rc != 0)); then
    if [[ ! -e "$status_file" ]]; then
      echo "no status file at $status_file: no fencing agent runs on this node"
      return 2
    fi
    echo "cannot read $status_file: $content"
    return 1
  fi
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line%$'\r'}"
    [[ -z "$line" || "$line" == "#"* ]] && continue
    if [[ "$line" != *=* ]]; then
      echo "malformed status file $status_file: line '$line' is not key=value; not a confirmation"
      return 1
    fi
    key="${line%%=*}"
    value="${line#*=}"
    case "$key" in
      armed | disable_file | updated_unix)
        if [[ " $seen " == *" $key "* ]]; then
          echo "malformed status file $status_file: '$key' appears twice; not a confirmation"
          return 1
        fi
        seen+=" $key"
        ;;
      *) continue ;; # unknown keys are ignored, as the format says
    esac
    case "$key" in
      armed) armed="$value" ;;
      disable_file) disable="$value" ;;
      updated_unix) updated="$value" ;;
    esac
  done <<<"$content"
  for key in armed disable_file updated_unix; do
    [[ " $seen " == *" $key "* ]] || missing+=" $key"
  done
  if [[ -n "$missing" ]]; then
    echo "malformed status file $status_file: missing${missing}; not a confirmation"
    return 1
  fi
  if [[ ! "$updated" =~ ^[0-9]{1,12}$ ]]; then
    echo "malformed status file $status_file: updated_unix '$updated' is not unix seconds; not a confirmation"
    return 1
  fi
  if [[ "$armed" != true && "$armed" != false ]]; then
    echo "malformed status file $status_file: armed '$armed' is neither true nor false; not a confirmation"
    return 1
  fi
  if [[ "$disable" != present && "$disable" != absent ]]; then
    echo "malformed status file $status_file: disable_file '$disable' is neither present nor absent; not a confirmation"
    return 1
  fi
  age=$(($(now) - 10#$updated))
  if ((age > stale_seconds)); then
    echo "status file $status_file is stale (updated ${age}s ago, more than ${stale_seconds}s): no fencing agent runs"
    return 2
  fi
  if ((10#$updated < since)); then
    echo "the agent's last status (armed=$armed disable_file=$disable) predates the disable file; waiting for a newer one"
    return 1
  fi
  if [[ "$armed" == false && "$disable" == present ]]; then
    echo "the agent confirms: armed=false disable_file=present (updated_unix=$updated)"
    return 0
  fi
  echo "the agent reports armed=$armed disable_file=$disable (updated_unix=$updated)"
  return 1
}

started=$SECONDS
last=""
while true; do
  rc=0
  state="$(poll)" || rc=$?
  case "$rc" in
    0)
      log "$state after $((SECONDS - started))s; disruptive work may proceed"
      exit 0
      ;;
    2)
      log "$state; proceeding (an agent that starts later sees $disable_file before it could arm)"
      exit 0
      ;;
  esac
  # One log line per change of state, not one per poll.
  if [[ "$state" != "$last" ]]; then
    log "$state"
    last="$state"
  fi
  # ">": SECONDS counts whole seconds, so this waits at least the full timeout.
  if ((SECONDS - started > timeout)); then
    fail "the fencing agent did not confirm the disarm within ${timeout}s (last: $state)." \
      "Refusing to start disruptive work with a possibly armed watchdog; $disable_file stays in place and" \
      "bashible will retry. Check the agent: 'kubectl -n <namespace> exec <agent pod> -c agent --" \
      "/opt/java/bin/java -jar /app/fencing-agent.jar status' (docs/runbook.md), and $status_file here."
  fi
  sleep "$poll_interval"
done
